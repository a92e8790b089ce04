/*-------------------------------------------------------------------------
 *
 * kept_task.c
 *	  The next task of a chain's run, kept in hand instead of written.
 *
 * An executor runs a SQL workflow's consecutive tasks in one transaction (a
 * chain: sqlwf/executor.c): each task it runs queues the next one of the
 * same run, which the chain claims at once.  Written to durable.ready_tasks
 * and claimed, that task is a heap row and three index entries inserted, an
 * index probe, a row lock and a delete, all in one transaction that no other
 * session sees the middle of: 10 to 15 % of the executors' CPU.
 *
 * So while a chain runs, the first executor task of priority 3 and no
 * concurrency key queued for its run (armed here by the chain) is kept in
 * hand: it takes its task id from the sequence
 * and notes the claims' marks as a written task does (direct.c), but no row
 * is written.  The chain's next claim of the run (DirectClaimRunTask) takes
 * it when the run has no other task on the queue and its queue is neither
 * paused nor limited; otherwise, and when the chain ends without claiming
 * it, the row is written then (DirectWriteKeptTask), so that at commit the
 * tables hold exactly what they would have held.
 *
 * The task belongs to the subtransaction that queued it: when that one (or
 * one it is inside of) rolls back, so does the task, as its row would have.
 * A transaction must not commit with a task in hand; one that tries fails
 * instead of losing it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "utils/memutils.h"

#include "store/kept_task.h"

static bool armed = false;
static pg_uuid_t armed_run;
static SubTransactionId armed_subid = InvalidSubTransactionId;

static KeptTask *kept = NULL;
static SubTransactionId kept_subid = InvalidSubTransactionId;

static bool callbacks_registered = false;

static void
kept_reset(void)
{
	armed = false;
	armed_subid = InvalidSubTransactionId;
	kept = NULL;				/* in TopTransactionContext */
	kept_subid = InvalidSubTransactionId;
}

static void
kept_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			if (kept != NULL)
				ereport(ERROR,
						(errcode(ERRCODE_INTERNAL_ERROR),
						 errmsg("durable kept task %lld in hand at commit",
								(long long) kept->task_id),
						 errdetail("The transaction is rolled back so that the task is not lost.")));
			kept_reset();
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			kept_reset();
			break;
		default:
			break;
	}
}

/*
 * A subtransaction that rolls back takes with it the task kept since it
 * began (subtransaction ids grow: one kept in it or in one inside it has an
 * id no lower), and the arming of a chain that ran in it.
 */
static void
kept_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					  SubTransactionId parentSubid, void *arg)
{
	if (event != SUBXACT_EVENT_ABORT_SUB)
		return;
	if (kept != NULL && kept_subid >= mySubid)
	{
		kept = NULL;
		kept_subid = InvalidSubTransactionId;
	}
	if (armed && armed_subid >= mySubid)
	{
		armed = false;
		armed_subid = InvalidSubTransactionId;
	}
}

/*
 * Keep the next executor task queued for run_id in hand (a chain begins).
 * False, and nothing done, when a chain that encloses this one (user code
 * of its that ran durable.run_tasks()) keeps tasks already: the inner chain
 * then keeps none of its own, and leaves the outer one's to it.
 */
bool
KeptTaskArm(const pg_uuid_t *run_id)
{
	if (!callbacks_registered)
	{
		RegisterXactCallback(kept_xact_callback, NULL);
		RegisterSubXactCallback(kept_subxact_callback, NULL);
		callbacks_registered = true;
	}
	if (armed || kept != NULL)
		return false;
	armed = true;
	armed_run = *run_id;
	armed_subid = GetCurrentSubTransactionId();
	return true;
}

/* Keep no more (the chain ends; the caller wrote the task in hand first). */
void
KeptTaskDisarm(void)
{
	Assert(kept == NULL);
	armed = false;
	armed_subid = InvalidSubTransactionId;
}

/* Whether a task of run_id and kind about to be queued is to be kept. */
bool
KeptTaskWanted(const pg_uuid_t *run_id, char kind)
{
	return armed && kept == NULL && (kind == 'w' || kind == 'x') &&
		memcmp(run_id, &armed_run, sizeof(pg_uuid_t)) == 0;
}

/* Keep a task that KeptTaskWanted (copied, in the transaction's memory). */
void
KeptTaskKeep(const KeptTask *task)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(TopTransactionContext);
	KeptTask   *t = palloc(sizeof(KeptTask));

	*t = *task;
	t->namespace = pstrdup(task->namespace);
	t->task_queue = pstrdup(task->task_queue);
	t->concurrency_key = pstrdup(task->concurrency_key);
	MemoryContextSwitchTo(oldcxt);
	kept = t;
	kept_subid = GetCurrentSubTransactionId();
}

/* The task in hand if it is of run_id, else NULL. */
KeptTask *
KeptTaskOfRun(const pg_uuid_t *run_id)
{
	if (kept == NULL || memcmp(run_id, &kept->run_id, sizeof(pg_uuid_t)) != 0)
		return NULL;
	return kept;
}

/* The task in hand, of whichever run, or NULL. */
KeptTask *
KeptTaskAny(void)
{
	return kept;
}

/* The task in hand was claimed or written: forget it. */
void
KeptTaskForget(void)
{
	if (kept != NULL)
		pfree(kept);
	kept = NULL;
	kept_subid = InvalidSubTransactionId;
}

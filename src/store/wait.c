/*-------------------------------------------------------------------------
 *
 * wait.c
 *	  Long polls and wait_workflow, woken at commit.
 *
 * A poller waits in the list of its queue's bucket (a hash of database,
 * namespace, task queue and kind), under the queue's exact key (a 64-bit
 * hash of the same).  A backend that enqueues tasks counts them per queue and,
 * from a commit callback once they are visible, wakes that many of the
 * queue's waiters, the longest waiting first: one task wakes one poller, not
 * every poller of the queue, which would each run a claim query that finds
 * nothing (with N workers polling, N - 1 wasted claims a task).  Each bucket
 * also has a generation counter, bumped by every such commit: a poller reads
 * it before its claim query and sleeps only if it did not move since, so that
 * no task is missed between the query and the sleep.
 *
 * A poller that was woken runs its claim query before it returns or sleeps
 * again.  If it finds nothing, another poller that was awake took the task,
 * and nobody else needs waking.  If it leaves without a claim (an error, a
 * cancel), it hands its wakeup to the next waiter of its queue, so that a
 * task never waits for a poll's timeout while a poller of its queue sleeps.
 *
 * A transaction that makes a task for which a poll is waiting may start it
 * for that poll instead of queuing it: it reserves the poll
 * (ReserveWaitingPoller: the poll leaves the list, as a woken one does),
 * starts the task with the poll's identity, and hands it over at commit
 * (OfferToReservedPoller; the poll is woken with the task's run and secret).
 * The task's start is then written and flushed with the transaction that
 * made it, and the poll only reads it: one commit, and no flush, fewer
 * between a start and its worker (Temporal's "sync match").  A transaction
 * that rolls back, or starts no task after all, lets its poll go back to its
 * claims (CancelPollerReservation).  A poll takes handoffs only under READ
 * COMMITTED, where its reads see the commit that woke it, and only with
 * names of fewer than HANDOFF_NAME_LEN bytes, which the reserving
 * transaction compares, all of them, with its own.  A reserved poll waits
 * for the outcome until its wait ends; one that leaves first (its wait ended,
 * a cancel) abandons the task, which its timeout gives back, as it does a
 * task whose worker died.  The callers: start_workflow (api/client.c),
 * complete_activity and complete_decision_task (api/worker.c,
 * engine/activities.c), in a statement that is its own transaction
 * (MayHandOverTasks).
 *
 * Executor tasks (kinds 'w' and 'x') have no poller: their commit wakes the
 * executor workers of the database instead (store/worker_slots.c), which sleep in
 * WaitForExecutorTask with the same generation counter rule.
 *
 * durable.wait_workflow() waits the same way on the bucket of its workflow
 * (a hash of database, namespace and workflow id, in a second array): every
 * run that closes broadcasts its workflow's bucket at commit (CloseRun), and
 * the waiter reads the chain again.
 *
 * A waiter does not hold back the vacuum horizon while it sleeps when that
 * is safe (see may_release_xmin below): its xmin is cleared before each sleep
 * and the next check takes a fresh snapshot.
 *
 * Without shared_preload_libraries there is no shared memory, and on a hot
 * standby no commit of this server closes a run: waits then re-check every
 * 100 ms until they end.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/twophase.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_proc.h"
#include "commands/async.h"
#include "common/hashfn.h"
#include "executor/execdesc.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "nodes/plannodes.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "tcop/pquery.h"
#include "utils/guc.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/wait_event.h"

#include "base/util.h"
#include "store/wait.h"
#include "store/worker_slots.h"

#define QUEUE_BUCKETS			256
#define WORKFLOW_BUCKETS		1024
#define ALL_BUCKETS				(QUEUE_BUCKETS + WORKFLOW_BUCKETS)
#define UNSHARED_POLL_MS		100
/* How long past its wait a reserved poll waits for its task (await_handoff) */
#define HANDOFF_GRACE_MS		1000

/*
 * Longest payload NOTIFY takes: async.c refuses one of NOTIFY_PAYLOAD_MAX_LENGTH
 * (BLCKSZ - NAMEDATALEN - 128, 8000 bytes by default) or more.
 */
#define CLOSED_PAYLOAD_MAX		(BLCKSZ - NAMEDATALEN - 128 - 1)

/*
 * Where a waiting poll stands with a task handed over to it (the header
 * above; ReserveWaitingPoller).  Read and written under its bucket's mutex.
 */
typedef enum HandoffState
{
	HANDOFF_NONE,				/* takes no handoff */
	HANDOFF_OPEN,				/* listed, and would take one */
	HANDOFF_RESERVED,			/* a transaction starts a task for it */
	HANDOFF_DELIVERED,			/* that transaction committed: offer is set */
	HANDOFF_CANCELED,			/* it rolled back, or started no task */
	HANDOFF_ABANDONED			/* the poll left while reserved */
} HandoffState;

typedef struct WaitBucket
{
	ConditionVariable cv;		/* wait_workflow's */
	pg_atomic_uint32 waiters;
	pg_atomic_uint64 generation;
	/* A queue bucket's pollers, the longest waiting first (QueueWaiter) */
	slock_t		mutex;
	int			head;
	int			tail;
} WaitBucket;

/*
 * A polling backend in its bucket's list, at its PGPROC's number.  key,
 * next, prev and woken are read and written under the bucket's mutex.
 */
typedef struct QueueWaiter
{
	uint64		key;			/* the exact queue (queue_key) */
	int			next;			/* in the bucket's list, -1 at its end */
	int			prev;
	bool		listed;
	bool		woken;			/* a commit chose it for a task */
	/* Handing a started task over (ReserveWaitingPoller): */
	HandoffState handoff;
	TaskHandoff offer;			/* set by the reserving transaction */
	Oid			dboid;			/* the poll's exact queue, and its identity */
	char		namespace[HANDOFF_NAME_LEN];
	char		task_queue[HANDOFF_NAME_LEN];
	char		identity[HANDOFF_NAME_LEN];
} QueueWaiter;

/* QUEUE_BUCKETS for the task queues, then WORKFLOW_BUCKETS for workflows */
static WaitBucket *wait_buckets = NULL;

/* One per PGPROC (queue_waiter_count of them) */
static QueueWaiter *queue_waiters = NULL;
static int	queue_waiter_count = 0;

/*
 * Workflow buckets this transaction closed runs of, broadcast at commit, and
 * queue buckets to wake every waiter of (more queues than pending_tasks
 * holds).
 */
static bool pending_wake[ALL_BUCKETS];
static bool any_pending_wake = false;

/* Tasks this transaction enqueued, per queue: that many waiters woken at commit */
typedef struct PendingTasks
{
	uint64		key;
	int			bucket;
	int			count;
} PendingTasks;

#define MAX_PENDING_QUEUES		16
static PendingTasks pending_tasks[MAX_PENDING_QUEUES];
static int	n_pending_tasks = 0;
static bool xact_callback_registered = false;

/* durable.notify_workflow_closed: NOTIFY DURABLE_CLOSED_CHANNEL when a run closes */
bool		durable_notify_workflow_closed = false;

/*
 * NOTIFY payloads of the runs this transaction closed, sent at pre-commit
 * (in TopTransactionContext).  Sent there, not at CloseRun, so that a
 * transaction that closes a run can still be PREPAREd (PostgreSQL refuses to
 * prepare one that ran NOTIFY); each carries the subtransaction level it was
 * made at, so that a rolled-back subtransaction sends nothing.
 */
typedef struct PendingClose
{
	int			level;
	char	   *payload;
} PendingClose;
static List *pending_closes = NIL;

/* The poll this transaction reserved (ReserveWaitingPoller), -1: none */
static int	reserved_waiter = -1;
static int	reserved_bucket = -1;
static int	reserved_level = 0; /* the transaction nest level it was made at */
static bool reserved_offered = false;

/* When a claim held back by a limit may try again (ClaimRetryAfter) */
static long claim_retry_ms = 0;

/* The PGPROCs there can be: backends, auxiliary processes, prepared xacts */
static int
total_procs(void)
{
	return MaxBackends + NUM_AUXILIARY_PROCS + max_prepared_xacts;
}

Size
WaitShmemSize(void)
{
	return add_size(MAXALIGN(sizeof(WaitBucket) * ALL_BUCKETS),
					mul_size(sizeof(QueueWaiter), total_procs()));
}

/* Set up the wait buckets (the caller holds AddinShmemInitLock). */
void
WaitShmemInit(void)
{
	bool		found;
	int			i;

	queue_waiter_count = total_procs();
	wait_buckets = ShmemInitStruct("durable wait buckets",
								   MAXALIGN(sizeof(WaitBucket) * ALL_BUCKETS) +
								   sizeof(QueueWaiter) * queue_waiter_count,
								   &found);
	queue_waiters = (QueueWaiter *) ((char *) wait_buckets +
									 MAXALIGN(sizeof(WaitBucket) * ALL_BUCKETS));
	if (!found)
	{
		for (i = 0; i < ALL_BUCKETS; i++)
		{
			ConditionVariableInit(&wait_buckets[i].cv);
			pg_atomic_init_u32(&wait_buckets[i].waiters, 0);
			pg_atomic_init_u64(&wait_buckets[i].generation, 0);
			SpinLockInit(&wait_buckets[i].mutex);
			wait_buckets[i].head = -1;
			wait_buckets[i].tail = -1;
		}
		for (i = 0; i < queue_waiter_count; i++)
		{
			queue_waiters[i].listed = false;
			queue_waiters[i].woken = false;
			queue_waiters[i].handoff = HANDOFF_NONE;
			queue_waiters[i].next = -1;
			queue_waiters[i].prev = -1;
		}
	}
}

/*
 * The key of a queue in this database: a 64-bit hash of the database,
 * namespace, task queue and kind, which tells queues apart (two of them
 * would have to meet by a chance of 2^-64 to share one).
 */
static uint64
queue_key(const char *namespace, const char *task_queue, char kind)
{
	uint64		h = QueueNameHash(namespace, task_queue);

	h = hash_combine64(h, (uint64) (unsigned char) kind);
	h = hash_combine64(h, (uint64) MyDatabaseId);
	return h;
}

/* The bucket of a queue's key. */
static int
queue_bucket(uint64 key)
{
	return (int) (key % QUEUE_BUCKETS);
}

/* The bucket of a workflow id in this database (after the queues'). */
static int
workflow_bucket(const char *namespace, const char *workflow_id)
{
	uint32		h;

	h = hash_bytes((const unsigned char *) namespace, strlen(namespace));
	h = hash_combine(h, hash_bytes((const unsigned char *) workflow_id,
								   strlen(workflow_id)));
	h = hash_combine(h, (uint32) MyDatabaseId);
	return QUEUE_BUCKETS + (int) (h % WORKFLOW_BUCKETS);
}

/* Forget what this transaction was to wake and notify. */
static void
reset_pending(void)
{
	if (any_pending_wake)
		memset(pending_wake, 0, sizeof(pending_wake));
	any_pending_wake = false;
	n_pending_tasks = 0;
	pending_closes = NIL;		/* freed with TopTransactionContext */
}

/* Take a waiter out of its bucket's list (the caller holds the mutex). */
static void
unlink_waiter(WaitBucket *bucket, int i)
{
	QueueWaiter *w = &queue_waiters[i];

	if (w->prev >= 0)
		queue_waiters[w->prev].next = w->next;
	else
		bucket->head = w->next;
	if (w->next >= 0)
		queue_waiters[w->next].prev = w->prev;
	else
		bucket->tail = w->prev;
	w->next = w->prev = -1;
	w->listed = false;
}

/*
 * Wake up to count waiters of the queue key in a bucket (every waiter of the
 * bucket when all), the longest waiting first.  Latches are set outside the
 * mutex, a few at a time.
 */
static void
wake_queue_waiters(WaitBucket *bucket, uint64 key, int count, bool all)
{
	int			chosen[16];

	while (all || count > 0)
	{
		int			n = 0;
		int			i;

		SpinLockAcquire(&bucket->mutex);
		i = bucket->head;
		while (i >= 0 && n < lengthof(chosen) && (all || count > 0))
		{
			int			next = queue_waiters[i].next;

			if (all || queue_waiters[i].key == key)
			{
				unlink_waiter(bucket, i);
				queue_waiters[i].woken = true;
				chosen[n++] = i;
				count--;
			}
			i = next;
		}
		SpinLockRelease(&bucket->mutex);
		for (i = 0; i < n; i++)
			SetLatch(&GetPGProcByNumber(chosen[i])->procLatch);
		if (n < lengthof(chosen))
			break;				/* no more waiters of the key */
	}
}

/*
 * End this transaction's reservation of a poll: hand the poll its task when
 * the transaction committed having offered one, else let it go back to its
 * claims; in both cases wake it.  A poll that left meanwhile (abandoned)
 * gets nothing: its slot is free again.
 */
static void
resolve_reservation(bool committed)
{
	QueueWaiter *w;
	WaitBucket *bucket;
	bool		wake = false;
	int			i = reserved_waiter;

	if (i < 0)
		return;
	reserved_waiter = -1;
	w = &queue_waiters[i];
	bucket = &wait_buckets[reserved_bucket];
	SpinLockAcquire(&bucket->mutex);
	if (w->handoff == HANDOFF_RESERVED)
	{
		w->handoff = committed && reserved_offered ?
			HANDOFF_DELIVERED : HANDOFF_CANCELED;
		wake = true;
	}
	else if (w->handoff == HANDOFF_ABANDONED)
		w->handoff = HANDOFF_NONE;
	SpinLockRelease(&bucket->mutex);
	reserved_offered = false;
	if (wake)
		SetLatch(&GetPGProcByNumber(i)->procLatch);
}

/*
 * Send the NOTIFYs of the closes (before commit, where PostgreSQL's own
 * NOTIFYs are queued), and broadcast the buckets this transaction enqueued
 * for or closed runs of, once it committed.
 */
static void
durable_xact_callback(XactEvent event, void *arg)
{
	int			i;
	ListCell   *lc;

	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			foreach(lc, pending_closes)
				Async_Notify(DURABLE_CLOSED_CHANNEL,
							 ((PendingClose *) lfirst(lc))->payload);
			pending_closes = NIL;
			break;
		case XACT_EVENT_COMMIT:
			resolve_reservation(true);
			if (wait_buckets == NULL)
			{
				reset_pending();
				break;
			}
			/*
			 * The generation first, then the waiters: a poller adds itself
			 * to the list, then reads the generation (WaitForTask), so it
			 * either sees this commit's bump or is in the list read here.
			 */
			for (i = 0; i < n_pending_tasks; i++)
			{
				WaitBucket *bucket = &wait_buckets[pending_tasks[i].bucket];

				pg_atomic_fetch_add_u64(&bucket->generation, 1);
				if (pg_atomic_read_u32(&bucket->waiters) > 0)
					wake_queue_waiters(bucket, pending_tasks[i].key,
									   pending_tasks[i].count, false);
			}
			if (any_pending_wake)
			{
				for (i = 0; i < ALL_BUCKETS; i++)
				{
					if (!pending_wake[i])
						continue;
					pg_atomic_fetch_add_u64(&wait_buckets[i].generation, 1);
					if (pg_atomic_read_u32(&wait_buckets[i].waiters) == 0)
						continue;
					if (i < QUEUE_BUCKETS)
						wake_queue_waiters(&wait_buckets[i], 0, 0, true);
					else
						ConditionVariableBroadcast(&wait_buckets[i].cv);
				}
			}
			reset_pending();
			break;
		case XACT_EVENT_PREPARE:

			/*
			 * The tasks become visible when the prepared transaction commits,
			 * which a coordinator of two-phase commit (Citus) does next in
			 * the same session: COMMIT PREPARED, itself a transaction.  Keep
			 * the wakeups for the commit of this backend's next transaction,
			 * as launcher_xact_callback (worker_slots.c) keeps its own; if
			 * that one is something else, they come early and the waiters
			 * sleep again (a wakeup is a hint, as before).  The closes'
			 * NOTIFYs are not sent for a prepared transaction.  A poll it
			 * reserved goes back to its claims; the task started for it, once
			 * the transaction commits, times out and is retried, as one
			 * whose worker died.
			 */
			pending_closes = NIL;	/* freed with TopTransactionContext */
			resolve_reservation(false);
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
			resolve_reservation(false);
			reset_pending();
			break;
		default:
			break;
	}
}

/*
 * A subtransaction that rolls back takes its closes' NOTIFYs with it, and
 * the task it started for a poll (the poll goes back to its claims); one
 * that commits hands them to its parent.
 */
static void
durable_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						 SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();
	ListCell   *lc;

	if (reserved_waiter >= 0 && reserved_level >= level)
	{
		if (event == SUBXACT_EVENT_ABORT_SUB)
			resolve_reservation(false);
		else if (event == SUBXACT_EVENT_COMMIT_SUB)
			reserved_level = level - 1;
	}
	if (pending_closes == NIL)
		return;
	if (event == SUBXACT_EVENT_ABORT_SUB)
	{
		foreach(lc, pending_closes)
		{
			if (((PendingClose *) lfirst(lc))->level >= level)
				pending_closes = foreach_delete_current(pending_closes, lc);
		}
	}
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
	{
		foreach(lc, pending_closes)
		{
			PendingClose *pc = (PendingClose *) lfirst(lc);

			if (pc->level >= level)
				pc->level = level - 1;
		}
	}
}

/* Register the transaction callbacks once per backend. */
static void
register_callbacks(void)
{
	if (xact_callback_registered)
		return;
	RegisterXactCallback(durable_xact_callback, NULL);
	RegisterSubXactCallback(durable_subxact_callback, NULL);
	xact_callback_registered = true;
}

/*
 * ntasks tasks were queued: when this transaction commits, wake as many
 * more of the queue's pollers, or for executor tasks the executors of this
 * database.
 */
void
WakeQueueAtCommit(const char *namespace, const char *task_queue, char kind,
				  uint64 ntasks)
{
	uint64		key;
	int			i;

	if (wait_buckets == NULL)
		return;
	if (kind == 'w' || kind == 'x')
	{
		WakeExecutorsAtCommit();
		return;
	}
	register_callbacks();
	key = queue_key(namespace, task_queue, kind);
	for (i = 0; i < n_pending_tasks; i++)
	{
		if (pending_tasks[i].key == key)
		{
			pending_tasks[i].count = (int) Min((uint64) INT_MAX,
											   (uint64) pending_tasks[i].count + ntasks);
			return;
		}
	}
	if (n_pending_tasks < MAX_PENDING_QUEUES)
	{
		pending_tasks[n_pending_tasks].key = key;
		pending_tasks[n_pending_tasks].bucket = queue_bucket(key);
		pending_tasks[n_pending_tasks].count = (int) Min((uint64) INT_MAX, ntasks);
		n_pending_tasks++;
		return;
	}
	/* Tasks for more queues than that: wake every waiter of the bucket. */
	pending_wake[queue_bucket(key)] = true;
	any_pending_wake = true;
}

/*
 * A queue was resumed (queue_pause.c): when this transaction commits, wake
 * every poll waiting on it, for decision and activity tasks, and the
 * executors of this database.
 */
void
WakeWholeQueueAtCommit(const char *namespace, const char *task_queue)
{
	if (wait_buckets == NULL)
		return;
	WakeExecutorsAtCommit();
	register_callbacks();
	pending_wake[queue_bucket(queue_key(namespace, task_queue, 'd'))] = true;
	pending_wake[queue_bucket(queue_key(namespace, task_queue, 'a'))] = true;
	any_pending_wake = true;
}

/*
 * The bucket of a queue whose polls could take a handoff, with the queue's
 * key, or -1 when none of its polls waits (a read of one counter).
 */
static int
handoff_bucket(const char *namespace, const char *task_queue, char kind,
			   uint64 *key)
{
	int			b;

	if (wait_buckets == NULL || strlen(namespace) >= HANDOFF_NAME_LEN ||
		strlen(task_queue) >= HANDOFF_NAME_LEN)
		return -1;
	*key = queue_key(namespace, task_queue, kind);
	b = queue_bucket(*key);
	return pg_atomic_read_u32(&wait_buckets[b].waiters) > 0 ? b : -1;
}

/*
 * Whether a poll that could take a handoff may be waiting on the queue: for
 * callers to ask before they check what a handoff needs
 * (ReserveWaitingPoller then tells for sure).
 */
bool
PollMayBeWaiting(const char *namespace, const char *task_queue, char kind)
{
	uint64		key;

	return handoff_bucket(namespace, task_queue, kind, &key) >= 0;
}

/*
 * Reserve a poll that waits on the queue and takes handoffs, the longest
 * waiting first, for a task this transaction is about to make: it leaves the
 * queue's list, and its identity (HANDOFF_NAME_LEN bytes) is copied to
 * identity.  False when no poll waits so, or this transaction holds a
 * reservation already.  The caller starts the task with that identity and
 * offers it (OfferToReservedPoller), or lets the poll go
 * (CancelPollerReservation); the poll gets the task when the transaction
 * commits.
 */
bool
ReserveWaitingPoller(const char *namespace, const char *task_queue,
					 char kind, char *identity)
{
	uint64		key;
	int			b;
	WaitBucket *bucket;
	int			i;

	if (reserved_waiter >= 0 || RecoveryInProgress())
		return false;
	b = handoff_bucket(namespace, task_queue, kind, &key);
	if (b < 0)
		return false;
	bucket = &wait_buckets[b];

	SpinLockAcquire(&bucket->mutex);
	for (i = bucket->head; i >= 0; i = queue_waiters[i].next)
	{
		QueueWaiter *w = &queue_waiters[i];

		/* The key tells queues apart; the names make sure of the tenant. */
		if (w->key == key && w->handoff == HANDOFF_OPEN &&
			w->dboid == MyDatabaseId &&
			strcmp(w->namespace, namespace) == 0 &&
			strcmp(w->task_queue, task_queue) == 0)
		{
			unlink_waiter(bucket, i);
			w->handoff = HANDOFF_RESERVED;
			memset(&w->offer, 0, sizeof(w->offer));
			strlcpy(identity, w->identity, HANDOFF_NAME_LEN);
			break;
		}
	}
	SpinLockRelease(&bucket->mutex);
	if (i < 0)
		return false;
	register_callbacks();
	reserved_waiter = i;
	reserved_bucket = b;
	reserved_level = GetCurrentTransactionNestLevel();
	reserved_offered = false;
	return true;
}

/* The task started for the reserved poll: it gets it at commit. */
void
OfferToReservedPoller(const TaskHandoff *offer)
{
	QueueWaiter *w;
	WaitBucket *bucket;

	if (reserved_waiter < 0)
		elog(ERROR, "durable: a task was offered with no poll reserved");
	w = &queue_waiters[reserved_waiter];
	bucket = &wait_buckets[reserved_bucket];
	SpinLockAcquire(&bucket->mutex);
	if (w->handoff == HANDOFF_RESERVED)
		w->offer = *offer;
	SpinLockRelease(&bucket->mutex);
	reserved_offered = true;
}

/* No task for the reserved poll after all: it goes back to its claims. */
void
CancelPollerReservation(void)
{
	resolve_reservation(false);
}

/*
 * Whether this transaction may hand the tasks it makes to waiting polls: a
 * client's statement that is its own transaction, whose commit follows at
 * once.  In a transaction block the poll would wait for the block's end (and
 * a prepared transaction's tasks are seen only at COMMIT PREPARED); a
 * database without task secrets could not tell the handed-over task from
 * another attempt of it.
 */
bool
MayHandOverTasks(void)
{
	return wait_buckets != NULL && MyBackendType == B_BACKEND &&
		!IsTransactionBlock() && TaskSecretsStored();
}

/*
 * The NOTIFY payload of a close: {namespace, workflowId, runId, status}.  A
 * namespace and workflow id of up to 1000 bytes each may need six times that
 * in JSON (\u0001): when the whole does not fit NOTIFY's limit, the ids are
 * left out and "truncated": true says so (runId names the run in
 * durable.workflows).
 */
static char *
close_payload(const char *namespace, const char *workflow_id,
			  const pg_uuid_t *run_id, const char *status)
{
	StringInfoData buf;
	char	   *tail = psprintf("\"runId\":\"%s\",\"status\":\"%s\"",
								UuidToCString(run_id), status);

	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"namespace\":");
	escape_json(&buf, namespace);
	appendStringInfoString(&buf, ",\"workflowId\":");
	escape_json(&buf, workflow_id);
	appendStringInfo(&buf, ",%s}", tail);
	if (buf.len <= CLOSED_PAYLOAD_MAX)
		return buf.data;
	return psprintf("{%s,\"truncated\":true}", tail);
}

/*
 * A run closed (CloseRun): when this transaction commits, wake the
 * wait_workflow calls waiting on its workflow, and NOTIFY its close when
 * durable.notify_workflow_closed is on.
 */
void
WorkflowClosedAtCommit(const char *namespace, const char *workflow_id,
					   const pg_uuid_t *run_id, const char *status)
{
	if (wait_buckets != NULL)
	{
		register_callbacks();
		pending_wake[workflow_bucket(namespace, workflow_id)] = true;
		any_pending_wake = true;
	}
	if (durable_notify_workflow_closed)
	{
		MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
		PendingClose *pc = palloc(sizeof(PendingClose));

		register_callbacks();
		pc->level = GetCurrentTransactionNestLevel();
		pc->payload = close_payload(namespace, workflow_id, run_id, status);
		pending_closes = lappend(pending_closes, pc);
		MemoryContextSwitchTo(old);
	}
}

/* ----------------
 * Dropping the xmin while a wait sleeps
 *
 * A waiting call sleeps inside the statement that called it, whose snapshot
 * the executor registered: PostgreSQL keeps the backend's xmin at that
 * snapshot's until the statement ends, so a fleet of waiting pollers holds
 * the vacuum horizon back for as long as they wait.  The waits need no old
 * snapshot: every check after a sleep takes a fresh one (SPI and direct.c
 * call GetTransactionSnapshot, which in READ COMMITTED is new).  So before a
 * sleep the xmin is cleared, as SnapshotResetXmin does when a backend holds
 * no snapshot, where nothing will read with an older snapshot afterwards:
 *
 * 1. READ COMMITTED: in REPEATABLE READ and SERIALIZABLE the transaction
 *    snapshot must stay valid to the end of the transaction;
 * 2. the call is the statement the backend runs (the active portal's, with
 *    its snapshot active), not a statement of a function, procedure, DO
 *    block or trigger whose caller goes on with its own snapshot;
 * 3. that statement reads nothing after the call: its plan is a Result, a
 *    ProjectSet over one, or a FunctionScan of the call, with no subplan, and
 *    besides this one call only constants, parameters and built-in immutable
 *    functions and operators (SELECT durable.poll_decision_task(...)->>'x' is
 *    fine; SELECT durable.poll_decision_task(...) FROM t is not, since the
 *    scan of t goes on with the statement's snapshot);
 * 3a. the waiting call is that one call of the plan (its FmgrInfo's fn_expr
 *    is the plan's node), and each of its arguments is a constant or a
 *    parameter of the statement.  An argument that calls a function is
 *    evaluated before the call, but it may itself wait (a STABLE function
 *    that calls wait_workflow, whose own call is not the plan's) and then go
 *    on reading with the statement's snapshot, whose rows VACUUM could have
 *    removed meanwhile;
 * 4. the statement's snapshot is the only one registered once the catalog
 *    snapshot is dropped: no cursor or other portal of the transaction, no
 *    exported snapshot, holds one (checked before each sleep, as COPY FREEZE
 *    checks it).
 *
 * Otherwise the xmin is kept and the wait holds the horizon as before.  An
 * xid the transaction has (it wrote before it waited) holds it regardless.
 * ----------------
 */

typedef struct XminWalk
{
	Oid			fn_oid;			/* the waiting function */
	Node	   *fn_expr;		/* the waiting call's node in the plan */
	int			calls;			/* its calls found */
} XminWalk;

/*
 * An argument of the waiting call that runs nothing: a constant or a
 * parameter of the statement (a bind parameter, EXECUTE's), maybe relabeled.
 */
static bool
argument_is_value(Node *arg)
{
	while (arg != NULL && IsA(arg, RelabelType))
		arg = (Node *) ((RelabelType *) arg)->arg;
	if (arg == NULL)
		return false;
	if (IsA(arg, Const))
		return true;
	return IsA(arg, Param) && ((Param *) arg)->paramkind == PARAM_EXTERN;
}

/* A built-in function that reads no table: immutable, made by initdb. */
static bool
builtin_immutable(Oid funcid)
{
	return OidIsValid(funcid) && funcid < FirstNormalObjectId &&
		func_volatile(funcid) == PROVOLATILE_IMMUTABLE;
}

/*
 * expression_tree_walker callback: true when an expression may read a table
 * after the waiting call returns, or runs anything besides the waiting call
 * in its arguments (rule 3a: constants and parameters only).
 */
static bool
reads_after_call(Node *node, XminWalk *xw)
{
	if (node == NULL)
		return false;
	switch (nodeTag(node))
	{
		case T_Const:
		case T_Param:
		case T_Var:
		case T_RelabelType:
		case T_List:
		case T_TargetEntry:
		case T_RangeTblFunction:
		case T_BoolExpr:
		case T_NullTest:
			break;
		case T_FuncExpr:
			{
				FuncExpr   *f = (FuncExpr *) node;

				if (f->funcid == xw->fn_oid)
				{
					ListCell   *lc;

					if ((Node *) f != xw->fn_expr)
						return true;
					foreach(lc, f->args)
					{
						if (!argument_is_value((Node *) lfirst(lc)))
							return true;
					}
					xw->calls++;
					return false;
				}
				if (!builtin_immutable(f->funcid))
					return true;
				break;
			}
		case T_OpExpr:
		case T_DistinctExpr:
		case T_NullIfExpr:
			{
				OpExpr	   *o = (OpExpr *) node;

				set_opfuncid(o);
				if (!builtin_immutable(o->opfuncid))
					return true;
				break;
			}
		case T_CoerceViaIO:
			{
				CoerceViaIO *c = (CoerceViaIO *) node;

				if (c->resulttype >= FirstNormalObjectId ||
					exprType((Node *) c->arg) >= FirstNormalObjectId)
					return true;
				break;
			}
		default:
			return true;
	}
	return expression_tree_walker(node, reads_after_call, xw);
}

/* Rules 3 and 3a above: the plan reads nothing but the one call. */
static bool
plan_is_the_call(PlannedStmt *ps, Oid fn_oid, Node *fn_expr)
{
	XminWalk	xw;
	Plan	   *p = ps->planTree;

	xw.fn_oid = fn_oid;
	xw.fn_expr = fn_expr;
	xw.calls = 0;
	if (ps->commandType != CMD_SELECT || ps->subplans != NIL ||
		ps->rowMarks != NIL || ps->hasModifyingCTE || p == NULL)
		return false;
	for (;;)
	{
		if (p->initPlan != NIL || p->righttree != NULL ||
			reads_after_call((Node *) p->targetlist, &xw) ||
			reads_after_call((Node *) p->qual, &xw))
			return false;
		if (IsA(p, ProjectSet))
		{
			p = p->lefttree;
			if (p == NULL || !IsA(p, Result))
				return false;
			continue;
		}
		if (p->lefttree != NULL)
			return false;
		if (IsA(p, Result))
		{
			if (reads_after_call(((Result *) p)->resconstantqual, &xw))
				return false;
			break;
		}
		if (IsA(p, FunctionScan))
		{
			if (reads_after_call((Node *) ((FunctionScan *) p)->functions, &xw))
				return false;
			break;
		}
		return false;
	}
	return xw.calls == 1;
}

/*
 * Rules 1 to 3a above, decided once per wait: whether the call flinfo
 * describes (the waiting SQL function's) may sleep without an xmin.
 */
static bool
may_release_xmin(FmgrInfo *flinfo)
{
	QueryDesc  *qd;

	if (IsolationUsesXactSnapshot() || flinfo == NULL ||
		!OidIsValid(flinfo->fn_oid) || flinfo->fn_expr == NULL)
		return false;
	if (ActivePortal == NULL || ActivePortal->queryDesc == NULL)
		return false;
	qd = ActivePortal->queryDesc;
	if (!ActiveSnapshotSet() || GetActiveSnapshot() != qd->snapshot ||
		qd->snapshot == NULL || qd->snapshot->regd_count == 0)
		return false;
	return plan_is_the_call(qd->plannedstmt, flinfo->fn_oid, flinfo->fn_expr);
}

/* Before a sleep: rule 4, then clear the xmin. */
static void
release_xmin(void)
{
	InvalidateCatalogSnapshot();
	if (!ThereAreNoPriorRegisteredSnapshots())
		return;
	/* As SnapshotResetXmin does: others read it under ProcArrayLock. */
	MyProc->xmin = InvalidTransactionId;
}

/*
 * Wait on a bucket: call check until it returns non-NULL or wait_ms pass,
 * sleeping on the bucket's condition variable between tries, without an
 * xmin when may_release_xmin allows.
 */
static void *
wait_on_bucket(WaitBucket *shared, double wait_ms, FmgrInfo *flinfo,
			   void *(*check) (void *), void *arg)
{
	TimestampTz deadline = TimestampPlusSeconds(GetCurrentTimestamp(),
												wait_ms / 1000.0);
	bool		drop_xmin = wait_ms > 0 && may_release_xmin(flinfo);
	/* On a standby no commit of this server wakes the bucket. */
	WaitBucket *volatile bucket = RecoveryInProgress() ? NULL : shared;
	void	   *volatile result = NULL;

	if (bucket != NULL)
		pg_atomic_fetch_add_u32(&bucket->waiters, 1);

	PG_TRY();
	{
		for (;;)
		{
			uint64		generation = 0;
			long		remaining;

			if (bucket != NULL)
				generation = pg_atomic_read_u64(&bucket->generation);
			result = check(arg);
			if (result != NULL)
				break;
			remaining = (long) ((deadline - GetCurrentTimestamp()) / 1000);
			if (remaining <= 0)
				break;
			if (drop_xmin)
				release_xmin();
			if (bucket != NULL)
			{
				ConditionVariablePrepareToSleep(&bucket->cv);
				if (pg_atomic_read_u64(&bucket->generation) == generation)
					(void) ConditionVariableTimedSleep(&bucket->cv, remaining,
													   PG_WAIT_EXTENSION);
				ConditionVariableCancelSleep();
			}
			else
			{
				(void) WaitLatch(MyLatch,
								 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
								 Min(remaining, UNSHARED_POLL_MS),
								 PG_WAIT_EXTENSION);
				ResetLatch(MyLatch);
			}
			CHECK_FOR_INTERRUPTS();
		}
	}
	PG_FINALLY();
	{
		if (bucket != NULL)
			pg_atomic_fetch_sub_u32(&bucket->waiters, 1);
	}
	PG_END_TRY();
	return result;
}

/*
 * Wait for a task on a queue: call claim until it returns non-NULL or
 * wait_ms pass.  flinfo is the polling SQL function's call (the xmin rule
 * above).
 */
/*
 * Leave the queue's list, if still in it, and hand a wakeup not used by a
 * claim to the next poller of the queue (an error, a cancel, the end of the
 * backend between the wakeup and the claim).
 */
static void
leave_queue(void)
{
	int			me = MyProc != NULL ? MyProc->pgprocno : -1;
	QueueWaiter *w;
	WaitBucket *bucket;
	bool		listed;
	bool		woken;

	if (queue_waiters == NULL || me < 0 || me >= queue_waiter_count)
		return;
	w = &queue_waiters[me];
	bucket = &wait_buckets[queue_bucket(w->key)];
	SpinLockAcquire(&bucket->mutex);
	listed = w->listed;
	if (listed)
		unlink_waiter(bucket, me);
	woken = w->woken;
	w->woken = false;
	/* A task started for this poll meanwhile is abandoned: a timeout ends it. */
	if (w->handoff == HANDOFF_RESERVED)
		w->handoff = HANDOFF_ABANDONED;
	else if (w->handoff != HANDOFF_ABANDONED)
		w->handoff = HANDOFF_NONE;
	SpinLockRelease(&bucket->mutex);
	if (listed)
		pg_atomic_fetch_sub_u32(&bucket->waiters, 1);
	if (woken)
		wake_queue_waiters(bucket, w->key, 1, false);
}

static void
leave_queue_at_exit(int code, Datum arg)
{
	leave_queue();
}

/*
 * Wait, reserved, for the transaction that reserved this poll to end, or
 * the poll's wait and HANDOFF_GRACE_MS to: true, with *offer, when that
 * transaction committed a task for it.  A poll not reserved returns at once.
 */
static bool
await_handoff(WaitBucket *bucket, QueueWaiter *w, TimestampTz deadline,
			  TaskHandoff *offer)
{
	bool		delivered = false;

	/* Its transaction is one statement: it ends within the grace. */
	deadline = TimestampTzPlusMilliseconds(deadline, HANDOFF_GRACE_MS);
	for (;;)
	{
		long		left = (long) ((deadline - GetCurrentTimestamp()) / 1000);

		SpinLockAcquire(&bucket->mutex);
		if (w->handoff != HANDOFF_RESERVED)
		{
			delivered = w->handoff == HANDOFF_DELIVERED;
			if (delivered)
				*offer = w->offer;
			if (w->handoff != HANDOFF_ABANDONED)
				w->handoff = HANDOFF_NONE;
			break;
		}
		if (left <= 0)
		{
			w->handoff = HANDOFF_ABANDONED;
			break;
		}
		SpinLockRelease(&bucket->mutex);
		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 left, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		/* A cancel leaves through leave_queue, which abandons the task. */
		CHECK_FOR_INTERRUPTS();
	}
	SpinLockRelease(&bucket->mutex);
	return delivered;
}

/*
 * Wait for a task on a queue: call claim until it returns non-NULL or
 * wait_ms pass.  flinfo is the polling SQL function's call (the xmin rule
 * above).  With take, the poll also takes tasks started for it by the
 * transaction that made them (ReserveWaitingPoller), with this identity:
 * take reads the handed-over task and returns it, or NULL when it is stale.
 */
void *
WaitForTask(const char *namespace, const char *task_queue, char kind,
			const char *identity, double wait_ms, FmgrInfo *flinfo,
			void *(*claim) (void *),
			void *(*take) (const TaskHandoff *, void *), void *arg)
{
	static bool exit_callback = false;
	TimestampTz deadline = TimestampPlusSeconds(GetCurrentTimestamp(),
												wait_ms / 1000.0);
	bool		drop_xmin = wait_ms > 0 && may_release_xmin(flinfo);
	uint64		key = queue_key(namespace, task_queue, kind);
	int			me = MyProc != NULL ? MyProc->pgprocno : -1;
	QueueWaiter *w;
	WaitBucket *bucket;
	bool		takes_handoff;
	void	   *volatile result = NULL;

	/* On a standby no commit of this server queues a task. */
	if (wait_buckets == NULL || RecoveryInProgress() ||
		me < 0 || me >= queue_waiter_count)
		return wait_on_bucket(NULL, wait_ms, flinfo, claim, arg);
	w = &queue_waiters[me];
	bucket = &wait_buckets[queue_bucket(key)];
	if (!exit_callback)
	{
		on_shmem_exit(leave_queue_at_exit, (Datum) 0);
		exit_callback = true;
	}

	/*
	 * Its names are read by reserving transactions once it is open, under
	 * the mutex; only this backend writes them, while it is not.
	 */
	takes_handoff = take != NULL && identity != NULL &&
		!IsolationUsesXactSnapshot() &&
		strlen(namespace) < HANDOFF_NAME_LEN &&
		strlen(task_queue) < HANDOFF_NAME_LEN &&
		strlen(identity) < HANDOFF_NAME_LEN;
	if (takes_handoff)
	{
		w->dboid = MyDatabaseId;
		strlcpy(w->namespace, namespace, HANDOFF_NAME_LEN);
		strlcpy(w->task_queue, task_queue, HANDOFF_NAME_LEN);
		strlcpy(w->identity, identity, HANDOFF_NAME_LEN);
	}

	PG_TRY();
	{
		for (;;)
		{
			uint64		generation = pg_atomic_read_u64(&bucket->generation);
			long		remaining;
			TaskHandoff offer;
			bool		delivered;

			claim_retry_ms = 0;
			result = claim(arg);
			/* Taken, or taken by a poller that was awake: the wakeup is used. */
			w->woken = false;	/* out of the list: no commit writes it */
			if (result != NULL)
				break;
			remaining = (long) ((deadline - GetCurrentTimestamp()) / 1000);
			if (remaining <= 0)
				break;
			/* A limit may admit a claim then: no commit wakes the poll. */
			if (claim_retry_ms > 0 && claim_retry_ms < remaining)
				remaining = claim_retry_ms;
			if (drop_xmin)
				release_xmin();

			SpinLockAcquire(&bucket->mutex);
			w->key = key;
			w->listed = true;
			w->next = -1;
			w->prev = bucket->tail;
			if (bucket->tail >= 0)
				queue_waiters[bucket->tail].next = me;
			else
				bucket->head = me;
			bucket->tail = me;
			/* Not while a task it abandoned may still be started for it */
			if (takes_handoff && w->handoff == HANDOFF_NONE)
				w->handoff = HANDOFF_OPEN;
			SpinLockRelease(&bucket->mutex);
			pg_atomic_fetch_add_u32(&bucket->waiters, 1);	/* a full barrier */

			if (pg_atomic_read_u64(&bucket->generation) == generation)
				(void) WaitLatch(MyLatch,
								 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
								 remaining, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);

			/*
			 * Out of the list; w->woken stays until the claim above.  A
			 * reserved poll waits for its task's transaction to end.
			 */
			SpinLockAcquire(&bucket->mutex);
			if (w->listed)
				unlink_waiter(bucket, me);
			SpinLockRelease(&bucket->mutex);
			pg_atomic_fetch_sub_u32(&bucket->waiters, 1);
			CHECK_FOR_INTERRUPTS();
			delivered = takes_handoff &&
				await_handoff(bucket, w, deadline, &offer);
			if (delivered)
			{
				result = take(&offer, arg);
				if (result != NULL)
					break;
			}
		}
	}
	PG_CATCH();
	{
		leave_queue();
		PG_RE_THROW();
	}
	PG_END_TRY();
	return result;
}

/*
 * Called by a claim of WaitForTask that found nothing because a limit held
 * it back (store/task_limits.c): try again after ms even if no commit wakes
 * the poll.
 */
void
ClaimRetryAfter(long ms)
{
	claim_retry_ms = ms;
}

/*
 * Wait for a run of a workflow to close: call check until it returns
 * non-NULL or wait_ms pass (wait_workflow).
 */
void *
WaitForWorkflowClose(const char *namespace, const char *workflow_id,
					 double wait_ms, FmgrInfo *flinfo, void *(*check) (void *),
					 void *arg)
{
	WaitBucket *bucket = NULL;

	if (wait_buckets != NULL)
		bucket = &wait_buckets[workflow_bucket(namespace, workflow_id)];
	return wait_on_bucket(bucket, wait_ms, flinfo, check, arg);
}

/*
 * Sleep (an executor worker, outside any transaction) until an executor
 * task may be ready, at most timeout_ms; return early when the latch is set
 * (a wakeup, SIGHUP, SIGTERM).  A commit that queued a task since the last
 * return bumped the database's generation: then return at once, since the
 * caller's last claim may have run before that commit and the latch may
 * have been consumed by a wait inside the task code.
 */
void
WaitForExecutorTask(long timeout_ms)
{
	static bool seen_valid = false;
	static uint64 seen_generation = 0;
	uint64		generation = ExecutorWakeGeneration();

	if (!seen_valid || generation != seen_generation)
	{
		seen_generation = generation;
		seen_valid = true;
		return;
	}
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 timeout_ms, PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	/* Read after the reset: a commit after this read sets the latch again. */
	seen_generation = ExecutorWakeGeneration();
}

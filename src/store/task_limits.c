/*-------------------------------------------------------------------------
 *
 * task_limits.c
 *	  Concurrency and rate limits of a task queue: durable.set_task_queue_limits()
 *	  and the admission a poll's claim asks for.
 *
 * durable.task_queue_limits holds one row a (namespace, task queue, kind)
 * with limits: at most max_concurrent tasks started and not finished, and
 * at most rate starts a second with a burst, a token bucket whose state
 * (tokens at refilled_at) is kept in the row.  A queue without a row costs
 * a claim one probe of the table's primary key (TaskQueueLimited).
 *
 * A claim of a limited queue (TaskLimitAdmit) opens a subtransaction and
 * locks the queue's row: claimers of the queue take turns, so that what one
 * counts is what the one before it left.  It counts the rows of
 * durable.task_starts of the queue, one a task started under the limit, with
 * a snapshot taken after the lock (each SPI statement's, in READ COMMITTED).
 * A row whose task has ended is dropped when the attempt ends
 * (TaskLimitEnded, from the engine's paths that end a task), and otherwise
 * by the first claim that finds the queue full: it deletes the rows whose
 * task is no longer started (a closed run, a terminated or reset one) before
 * it decides.  So a row left behind never holds a slot for long, and the
 * count never misses a started task: the row is written in the transaction
 * that starts the task.
 *
 * When the limit holds the claim back, the subtransaction is rolled back,
 * which releases the row: a poll that waits holds no lock.  When a task is
 * started, its row is written, the bucket loses a token, and the lock is
 * kept until the poll's transaction ends.  Every admitted claim updates the
 * queue's row, so a claim in a REPEATABLE READ transaction that raced
 * another fails with a serialization error instead of over-admitting.
 *
 * Limits apply to the tasks handed to workers: polls, and eager dispatch,
 * which a limited queue does not do (engine/runs.c, engine/activities.c).
 * The executors, which run SQL workflows and SQL activities inside the
 * server, are bounded by their namespace's max_executors instead
 * (executor_share.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "base/caller.h"
#include "base/clock.h"
#include "base/util.h"
#include "store/direct.h"
#include "store/namespaces.h"
#include "store/spi.h"
#include "store/task_limits.h"
#include "store/wait.h"

#define ARG_TEXT(n)		(PG_ARGISNULL(n) ? NULL : PG_GETARG_TEXT_PP(n))

/* A started task of the queue still holds its slot: its attempt is running. */
#define STILL_STARTED \
	" CASE WHEN s.kind OPERATOR(pg_catalog.=) 'activity'" \
	"   THEN EXISTS (SELECT 1 FROM durable.activities a" \
	"     WHERE a.run_id OPERATOR(pg_catalog.=) s.run_id" \
	"       AND a.scheduled_event_id OPERATOR(pg_catalog.=) s.scheduled_event_id" \
	"       AND a.attempt OPERATOR(pg_catalog.=) s.attempt" \
	"       AND a.started_time IS NOT NULL)" \
	"   ELSE EXISTS (SELECT 1 FROM durable.runs r" \
	"     WHERE r.run_id OPERATOR(pg_catalog.=) s.run_id" \
	"       AND r.status OPERATOR(pg_catalog.=) 'running'" \
	"       AND r.decision_scheduled_id OPERATOR(pg_catalog.=) s.scheduled_event_id" \
	"       AND r.decision_started_id OPERATOR(pg_catalog.<>) 0) END"

static KeptPlan lock_limits = {
	NULL, "SELECT max_concurrent, rate, burst, tokens, refilled_at"
	" FROM durable.task_queue_limits"
	" WHERE namespace OPERATOR(pg_catalog.=) $1"
	" AND task_queue OPERATOR(pg_catalog.=) $2 AND kind OPERATOR(pg_catalog.=) $3"
	" FOR NO KEY UPDATE",
	3, {TEXTOID, TEXTOID, TEXTOID}
};
static KeptPlan count_starts = {
	NULL, "SELECT pg_catalog.count(*) FROM durable.task_starts"
	" WHERE namespace OPERATOR(pg_catalog.=) $1"
	" AND task_queue OPERATOR(pg_catalog.=) $2 AND kind OPERATOR(pg_catalog.=) $3",
	3, {TEXTOID, TEXTOID, TEXTOID}
};
static KeptPlan sweep_starts = {
	NULL, "DELETE FROM durable.task_starts s"
	" WHERE s.namespace OPERATOR(pg_catalog.=) $1"
	" AND s.task_queue OPERATOR(pg_catalog.=) $2 AND s.kind OPERATOR(pg_catalog.=) $3"
	" AND NOT" STILL_STARTED,
	3, {TEXTOID, TEXTOID, TEXTOID}
};
static KeptPlan insert_start = {
	NULL, "INSERT INTO durable.task_starts (namespace, task_queue, kind, run_id,"
	" scheduled_event_id, attempt, started_at) VALUES ($1, $2, $3, $4, $5, $6, $7)"
	" ON CONFLICT (namespace, task_queue, kind, run_id, scheduled_event_id)"
	" DO UPDATE SET attempt = EXCLUDED.attempt, started_at = EXCLUDED.started_at",
	7, {TEXTOID, TEXTOID, TEXTOID, UUIDOID, INT8OID, INT4OID, TIMESTAMPTZOID}
};
static KeptPlan update_bucket = {
	NULL, "UPDATE durable.task_queue_limits"
	" SET tokens = $4, refilled_at = $5, started = started + 1"
	" WHERE namespace OPERATOR(pg_catalog.=) $1"
	" AND task_queue OPERATOR(pg_catalog.=) $2 AND kind OPERATOR(pg_catalog.=) $3",
	5, {TEXTOID, TEXTOID, TEXTOID, FLOAT8OID, TIMESTAMPTZOID}
};
static KeptPlan delete_start = {
	NULL, "DELETE FROM durable.task_starts"
	" WHERE namespace OPERATOR(pg_catalog.=) $1"
	" AND task_queue OPERATOR(pg_catalog.=) $2 AND kind OPERATOR(pg_catalog.=) $3"
	" AND run_id OPERATOR(pg_catalog.=) $4"
	" AND scheduled_event_id OPERATOR(pg_catalog.=) $5",
	5, {TEXTOID, TEXTOID, TEXTOID, UUIDOID, INT8OID}
};
static KeptPlan delete_stale_task = {
	NULL, "DELETE FROM durable.ready_tasks"
	" WHERE run_id OPERATOR(pg_catalog.=) $1"
	" AND scheduled_event_id OPERATOR(pg_catalog.=) $2"
	" AND attempt OPERATOR(pg_catalog.=) $3 AND kind OPERATOR(pg_catalog.=) $4",
	4, {UUIDOID, INT8OID, INT4OID, CHAROID}
};
static KeptPlan upsert_limits = {
	NULL, "INSERT INTO durable.task_queue_limits AS l (namespace, task_queue, kind,"
	" max_concurrent, rate, burst, tokens, refilled_at, set_at, set_by)"
	" VALUES ($1, $2, $3, $4, $5, $6, $6, NULL, $7, $8)"
	" ON CONFLICT (namespace, task_queue, kind) DO UPDATE"
	" SET max_concurrent = EXCLUDED.max_concurrent, rate = EXCLUDED.rate,"
	" burst = EXCLUDED.burst,"
	" tokens = CASE WHEN EXCLUDED.rate IS NULL THEN NULL"
	"   ELSE LEAST(COALESCE(l.tokens, EXCLUDED.burst), EXCLUDED.burst) END,"
	" refilled_at = CASE WHEN EXCLUDED.rate IS NULL THEN NULL ELSE l.refilled_at END,"
	" set_at = EXCLUDED.set_at, set_by = EXCLUDED.set_by"
	" WHERE (l.max_concurrent, l.rate, l.burst)"
	"   IS DISTINCT FROM (EXCLUDED.max_concurrent, EXCLUDED.rate, EXCLUDED.burst)",
	8, {TEXTOID, TEXTOID, TEXTOID, INT4OID, FLOAT8OID, INT4OID, TIMESTAMPTZOID,
	TEXTOID}
};
static KeptPlan delete_limits = {
	NULL, "DELETE FROM durable.task_queue_limits"
	" WHERE namespace OPERATOR(pg_catalog.=) $1"
	" AND task_queue OPERATOR(pg_catalog.=) $2 AND kind OPERATOR(pg_catalog.=) $3",
	3, {TEXTOID, TEXTOID, TEXTOID}
};
static KeptPlan delete_queue_starts = {
	NULL, "DELETE FROM durable.task_starts"
	" WHERE namespace OPERATOR(pg_catalog.=) $1"
	" AND task_queue OPERATOR(pg_catalog.=) $2 AND kind OPERATOR(pg_catalog.=) $3",
	3, {TEXTOID, TEXTOID, TEXTOID}
};

static const char *
kind_name(char kind)
{
	return kind == 'd' ? "decision" : "activity";
}

/* The OID of durable.task_queue_limits, or InvalidOid before 0.8.0. */
static Oid
limits_relid(void)
{
	Oid			nsp = get_namespace_oid("durable", true);

	return OidIsValid(nsp) ? get_relname_relid("task_queue_limits", nsp) :
		InvalidOid;
}

/* Whether the schema has durable.task_queue_limits (0.8.0). */
bool
TaskLimitsStored(void)
{
	return OidIsValid(limits_relid());
}

/*
 * Whether a queue and kind ('d' or 'a') has limits, as the transaction's
 * current snapshot sees durable.task_queue_limits: a probe of its primary
 * key.  Never before 0.8.0.
 */
bool
TaskQueueLimited(const char *namespace, const char *task_queue, char kind)
{
	Oid			relid = limits_relid();
	Relation	rel;
	Relation	index;
	Oid			indexid;
	TupleDesc	desc;
	ScanKeyData keys[3];
	IndexScanDesc scan;
	TupleTableSlot *slot;
	Snapshot	snapshot;
	bool		found;

	/* A table dropped with the extension since the lookup limits nothing. */
	rel = OidIsValid(relid) ? try_table_open(relid, AccessShareLock) : NULL;
	if (rel == NULL)
		return false;
	indexid = RelationGetPrimaryKeyIndex(rel);
	if (!OidIsValid(indexid))
		elog(ERROR, "durable.task_queue_limits has no primary key");
	desc = RelationGetDescr(rel);
	index = index_open(indexid, AccessShareLock);
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	ScanKeyEntryInitialize(&keys[0], 0, 1, BTEqualStrategyNumber,
						   InvalidOid, TupleDescAttr(desc, 0)->attcollation,
						   F_TEXTEQ, CStringGetTextDatum(namespace));
	ScanKeyEntryInitialize(&keys[1], 0, 2, BTEqualStrategyNumber,
						   InvalidOid, TupleDescAttr(desc, 1)->attcollation,
						   F_TEXTEQ, CStringGetTextDatum(task_queue));
	ScanKeyEntryInitialize(&keys[2], 0, 3, BTEqualStrategyNumber,
						   InvalidOid, TupleDescAttr(desc, 2)->attcollation,
						   F_TEXTEQ, CStringGetTextDatum(kind_name(kind)));
	slot = table_slot_create(rel, NULL);
	scan = index_beginscan(rel, index, snapshot, 3, 0);
	index_rescan(scan, keys, 3, NULL, 0);
	found = index_getnext_slot(scan, ForwardScanDirection, slot);
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	UnregisterSnapshot(snapshot);
	index_close(index, AccessShareLock);
	table_close(rel, AccessShareLock);
	return found;
}

/* The three key values of a queue's row. */
static void
queue_key(Datum *values, const char *namespace, const char *task_queue,
		  const char *kind)
{
	values[0] = CStringGetTextDatum(namespace);
	values[1] = CStringGetTextDatum(task_queue);
	values[2] = CStringGetTextDatum(kind);
}

/* Roll the claim's subtransaction back: the queue's row is free again. */
static void
close_claim(TaskLimitClaim *tc, bool keep)
{
	if (!tc->open)
		return;
	if (keep)
		ReleaseCurrentSubTransaction();
	else
		RollbackAndReleaseCurrentSubTransaction();
	MemoryContextSwitchTo(tc->cxt);
	CurrentResourceOwner = tc->owner;
	tc->open = false;
}

/*
 * Ask the limits of a queue and kind for one more task start (SPI
 * connected).  True when a task may be claimed: the queue has no limits, or
 * they admit one; then the claim's subtransaction holds the queue's row
 * until TaskLimitStarted or TaskLimitAbandon.  False when a limit holds the
 * claim back: *retry_ms is when the rate limit has a token again (0 when
 * the concurrency limit is what holds it: a task that ends wakes the poll).
 */
bool
TaskLimitAdmit(TaskLimitClaim *tc, const char *namespace,
			   const char *task_queue, char kind, TimestampTz now,
			   long *retry_ms)
{
	Datum		values[3];
	bool		isnull;
	int32		max_concurrent = 0;
	double		rate = 0;
	double		burst = 0;

	memset(tc, 0, sizeof(*tc));
	*retry_ms = 0;
	if (!TaskQueueLimited(namespace, task_queue, kind))
		return true;

	tc->namespace = namespace;
	tc->task_queue = task_queue;
	tc->kind = kind_name(kind);
	tc->now = now;
	tc->cxt = CurrentMemoryContext;
	tc->owner = CurrentResourceOwner;
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(tc->cxt);
	tc->open = true;

	queue_key(values, namespace, task_queue, tc->kind);
	if (RunPlan(&lock_limits, values, NULL, false, 1) == 0)
		return true;			/* the limits were removed meanwhile */
	max_concurrent = DatumGetInt32(SPIGetDatum(0, 1, &isnull));
	tc->has_concurrency = !isnull;
	rate = DatumGetFloat8(SPIGetDatum(0, 2, &isnull));
	tc->has_rate = !isnull;
	if (tc->has_rate)
	{
		Datum		d;
		double		elapsed = 0;

		burst = (double) DatumGetInt32(SPIGetDatum(0, 3, &isnull));
		d = SPIGetDatum(0, 4, &isnull);
		tc->tokens = isnull ? burst : DatumGetFloat8(d);
		d = SPIGetDatum(0, 5, &isnull);
		if (!isnull && now > DatumGetTimestampTz(d))
			elapsed = (double) (now - DatumGetTimestampTz(d)) / USECS_PER_SEC;
		tc->tokens = Min(burst, tc->tokens + rate * elapsed);
		if (tc->tokens < 1.0)
		{
			double		wait = (1.0 - tc->tokens) / rate * 1000.0;

			*retry_ms = (long) Min(ceil(wait), 60000.0);
			if (*retry_ms < 1)
				*retry_ms = 1;
			close_claim(tc, false);
			return false;
		}
	}
	if (tc->has_concurrency)
	{
		int64		started;

		RunPlan(&count_starts, values, NULL, false, 1);
		started = DatumGetInt64(SPIGetDatum(0, 1, &isnull));
		if (started >= max_concurrent)
		{
			/* Full: drop the rows of tasks that have ended, then decide. */
			RunPlan(&sweep_starts, values, NULL, false, 0);
			started -= (int64) SPI_processed;
			if (started >= max_concurrent)
			{
				close_claim(tc, false);
				return false;
			}
		}
	}
	return true;
}

/*
 * A task was started under the claim's limits: keep its slot and take its
 * token, and end the claim (its lock is kept until the transaction ends).
 */
void
TaskLimitStarted(TaskLimitClaim *tc, pg_uuid_t *run_id,
				 int64 scheduled_event_id, int32 attempt)
{
	Datum		values[7];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};

	if (!tc->open)
		return;
	queue_key(values, tc->namespace, tc->task_queue, tc->kind);
	if (tc->has_concurrency)
	{
		values[3] = UUIDPGetDatum(run_id);
		values[4] = Int64GetDatum(scheduled_event_id);
		values[5] = Int32GetDatum(attempt);
		values[6] = TimestampTzGetDatum(tc->now);
		RunPlan(&insert_start, values, NULL, false, 0);
	}
	if (tc->has_rate)
		values[3] = Float8GetDatum(tc->tokens - 1.0);
	else
		nulls[3] = 'n';
	values[4] = TimestampTzGetDatum(tc->now);
	if (!tc->has_rate)
		nulls[4] = 'n';
	RunPlan(&update_bucket, values, nulls, false, 0);
	close_claim(tc, true);
}

/* A ready task claimed under the limits whose task had moved on */
typedef struct StaleTask
{
	pg_uuid_t	run_id;
	int64		scheduled_event_id;
	int32		attempt;
} StaleTask;

/*
 * The task just claimed was stale (its run moved on): its ready task is
 * dropped, as an unlimited claim drops it, even if the claim ends with
 * nothing (TaskLimitAbandon).
 */
void
TaskLimitStale(TaskLimitClaim *tc, pg_uuid_t *run_id,
			   int64 scheduled_event_id, int32 attempt)
{
	StaleTask  *st;

	if (!tc->open)
		return;
	st = palloc(sizeof(StaleTask));
	memcpy(&st->run_id, run_id, sizeof(pg_uuid_t));
	st->scheduled_event_id = scheduled_event_id;
	st->attempt = attempt;
	tc->stale = lappend(tc->stale, st);
}

/*
 * Nothing was claimed: free the queue's row, take no token.  The stale
 * tasks the claim passed, back with the rollback, are dropped again.
 */
void
TaskLimitAbandon(TaskLimitClaim *tc)
{
	ListCell   *lc;

	if (!tc->open)
		return;
	close_claim(tc, false);
	foreach(lc, tc->stale)
	{
		StaleTask  *st = (StaleTask *) lfirst(lc);
		Datum		values[4];

		values[0] = UUIDPGetDatum(&st->run_id);
		values[1] = Int64GetDatum(st->scheduled_event_id);
		values[2] = Int32GetDatum(st->attempt);
		values[3] = CharGetDatum(tc->kind[0] == 'd' ? 'd' : 'a');
		RunPlan(&delete_stale_task, values, NULL, false, 0);
	}
	list_free_deep(tc->stale);
	tc->stale = NIL;
}

/*
 * A task's attempt ended (completed, failed, timed out, canceled): its slot
 * is free at commit, and a poll waiting on the full queue is woken then.
 * Nothing for a queue without limits.
 */
void
TaskLimitEnded(const char *namespace, const char *task_queue, char kind,
			   pg_uuid_t *run_id, int64 scheduled_event_id)
{
	Datum		values[5];

	if (!TaskQueueLimited(namespace, task_queue, kind))
		return;
	queue_key(values, namespace, task_queue, kind_name(kind));
	values[3] = UUIDPGetDatum(run_id);
	values[4] = Int64GetDatum(scheduled_event_id);
	RunPlan(&delete_start, values, NULL, false, 0);
	if (SPI_processed > 0)
		WakeQueueAtCommit(namespace, task_queue, kind, 1);
}

/* The kind argument: 'decision' or 'activity'. */
static const char *
kind_argument(text *arg)
{
	char	   *kind = CheckName(arg, "kind");

	if (strcmp(kind, "decision") != 0 && strcmp(kind, "activity") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("kind must be \"decision\" or \"activity\""),
				 errdetail("It is \"%s\".", kind)));
	return kind;
}

PG_FUNCTION_INFO_V1(durable_set_task_queue_limits);
/*
 * durable.set_task_queue_limits(task_queue, kind, max_concurrent, rate,
 * burst, namespace): the limits of a queue and kind, replacing those it had;
 * all NULL removes them.  True when something changed.  For the namespace's
 * owner and durable_admin members.
 */
Datum
durable_set_task_queue_limits(PG_FUNCTION_ARGS)
{
	char	   *task_queue = CheckName(ARG_TEXT(0), "task_queue");
	const char *kind = kind_argument(ARG_TEXT(1));
	char	   *namespace = CheckName(ARG_TEXT(5), "namespace");
	bool		has_max = !PG_ARGISNULL(2);
	bool		has_rate = !PG_ARGISNULL(3);
	int32		max_concurrent = has_max ? PG_GETARG_INT32(2) : 0;
	double		rate = has_rate ? PG_GETARG_FLOAT8(3) : 0;
	int32		burst = 0;
	Datum		values[8];
	char		nulls[8] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
	const char *who;
	bool		changed;

	RequireWritableTransaction("durable.set_task_queue_limits()");
	if (has_max && max_concurrent < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_concurrent must be at least 1"),
				 errdetail("It is %d.", max_concurrent),
				 errhint("Pause the queue to hand out none of its tasks: durable.pause_task_queue().")));
	if (has_rate && (isnan(rate) || rate <= 0 || rate > 1e6))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("rate must be more than 0 and at most 1000000 task starts a second"),
				 errdetail("It is %g.", rate)));
	if (!PG_ARGISNULL(4))
	{
		burst = PG_GETARG_INT32(4);
		if (!has_rate)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("burst needs a rate"),
					 errhint("Give rate too, or leave burst NULL.")));
		if (burst < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("burst must be at least 1"),
					 errdetail("It is %d.", burst)));
	}
	else if (has_rate)
		burst = (int32) Max(1.0, ceil(rate));	/* a second's worth */

	DurableSPIConnect();
	if (!TaskLimitsStored())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("durable.set_task_queue_limits() needs durable 0.8.0"),
				 errhint("Run ALTER EXTENSION durable UPDATE.")));
	CheckNamespaceOwner(namespace, "set the limits of a task queue of");
	queue_key(values, namespace, task_queue, kind);
	if (!has_max && !has_rate)
	{
		RunPlan(&delete_limits, values, NULL, false, 0);
		changed = (SPI_processed > 0);
		RunPlan(&delete_queue_starts, values, NULL, false, 0);
	}
	else
	{
		who = CallerIdentity();
		values[3] = Int32GetDatum(max_concurrent);
		nulls[3] = has_max ? ' ' : 'n';
		values[4] = Float8GetDatum(rate);
		nulls[4] = has_rate ? ' ' : 'n';
		values[5] = Int32GetDatum(burst);
		nulls[5] = has_rate ? ' ' : 'n';
		values[6] = TimestampTzGetDatum(DurableNow());
		values[7] = CStringGetTextDatum(who != NULL ? who : "");
		RunPlan(&upsert_limits, values, nulls, false, 0);
		changed = (SPI_processed > 0);
	}
	/* Looser limits may admit tasks now: wake the queue's polls at commit. */
	if (changed)
		WakeWholeQueueAtCommit(namespace, task_queue);
	DurableSPIFinish();
	PG_RETURN_BOOL(changed);
}

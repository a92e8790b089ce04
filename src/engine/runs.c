/*-------------------------------------------------------------------------
 *
 * runs.c
 *	  The run row, its history and its decision task.
 *
 * A caller loads a run with its row locked (LoadRun ... for_update), appends
 * events, and writes the changed counters back with SaveRun or CloseRun.
 * Event ids come from the run row, which is locked, so they are dense and
 * never collide.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "utils/builtins.h"

#include "durable.h"
#include "base/json.h"
#include "base/util.h"
#include "store/direct.h"
#include "store/metrics.h"
#include "store/namespaces.h"
#include "store/registry.h"
#include "store/spi.h"
#include "store/task_limits.h"
#include "store/timer_rows.h"
#include "store/wait.h"
#include "engine/runs.h"

/* The limits of a run (docs/configuration.md) */
int			durable_max_history_events = 51200;
int			durable_max_buffered_events = 100;
int			durable_max_attempts_per_run = 1000;

#define RUN_COLUMNS \
	"run_id, namespace, workflow_id, workflow_type, task_queue, status, " \
	"attempt, cancel_requested, decision_timeout, last_event_id, " \
	"decision_scheduled_id, decision_started_id, decision_attempt, " \
	"decision_started_time, previous_started_id, activity_attempts, " \
	"execution_deadline, " \
	"has_buffered, retry_policy IS NOT NULL OR cron_schedule IS NOT NULL, " \
	"parent_run_id, parent_initiated_id, first_run_id, start_time, run_timeout"

/*
 * The loads of a run.  A database not yet updated to 0.4.0 has no
 * run_deadline: the _v3 forms read a NULL in its place.
 */
#define RUN_COLUMNS_V4 RUN_COLUMNS ", run_deadline"
#define RUN_COLUMNS_V3 RUN_COLUMNS ", NULL::timestamptz"
/* From 0.8.0 the pause too (RunIsPaused) */
#define RUN_COLUMNS_V8 RUN_COLUMNS_V4 ", paused_at IS NOT NULL"
/* From 0.9.0 its priority and concurrency key, for its tasks */
#define RUN_COLUMNS_V9 RUN_COLUMNS_V8 ", priority, concurrency_key"

/* Events appended to a run and not yet written */
struct EventBatch
{
	int			n;
	int			size;
	int64	   *ids;
	TimestampTz *times;
	char	  **types;
	Datum	   *attrs;
};

/* Tasks a call queued for a run and not yet written */
struct ReadyBatch
{
	int			n;
	char	   *queues[64];
	char		kinds[64];
	int64		scheduled[64];
	int32		attempts[64];
	int16		priorities[64];
	char	   *keys[64];
};

static KeptPlan load_latest = {
	NULL, "SELECT " RUN_COLUMNS_V4 " FROM durable.runs"
	" WHERE namespace = $1 AND workflow_id = $2"
	" ORDER BY run_seq DESC LIMIT 1",
	2, {TEXTOID, TEXTOID}
};
static KeptPlan load_latest_locked = {
	NULL, "SELECT " RUN_COLUMNS_V4 " FROM durable.runs"
	" WHERE namespace = $1 AND workflow_id = $2"
	" ORDER BY run_seq DESC LIMIT 1 FOR UPDATE",
	2, {TEXTOID, TEXTOID}
};
static KeptPlan load_given = {
	NULL, "SELECT " RUN_COLUMNS_V4 " FROM durable.runs"
	" WHERE run_id = $3 AND namespace = $1 AND workflow_id = $2",
	3, {TEXTOID, TEXTOID, UUIDOID}
};
static KeptPlan load_given_locked = {
	NULL, "SELECT " RUN_COLUMNS_V4 " FROM durable.runs"
	" WHERE run_id = $3 AND namespace = $1 AND workflow_id = $2 FOR UPDATE",
	3, {TEXTOID, TEXTOID, UUIDOID}
};
static KeptPlan load_latest_v8 = {
	NULL, "SELECT " RUN_COLUMNS_V8 " FROM durable.runs"
	" WHERE namespace = $1 AND workflow_id = $2"
	" ORDER BY run_seq DESC LIMIT 1",
	2, {TEXTOID, TEXTOID}
};
static KeptPlan load_latest_locked_v8 = {
	NULL, "SELECT " RUN_COLUMNS_V8 " FROM durable.runs"
	" WHERE namespace = $1 AND workflow_id = $2"
	" ORDER BY run_seq DESC LIMIT 1 FOR UPDATE",
	2, {TEXTOID, TEXTOID}
};
static KeptPlan load_given_v8 = {
	NULL, "SELECT " RUN_COLUMNS_V8 " FROM durable.runs"
	" WHERE run_id = $3 AND namespace = $1 AND workflow_id = $2",
	3, {TEXTOID, TEXTOID, UUIDOID}
};
static KeptPlan load_given_locked_v8 = {
	NULL, "SELECT " RUN_COLUMNS_V8 " FROM durable.runs"
	" WHERE run_id = $3 AND namespace = $1 AND workflow_id = $2 FOR UPDATE",
	3, {TEXTOID, TEXTOID, UUIDOID}
};
static KeptPlan load_latest_v9 = {
	NULL, "SELECT " RUN_COLUMNS_V9 " FROM durable.runs"
	" WHERE namespace = $1 AND workflow_id = $2"
	" ORDER BY run_seq DESC LIMIT 1",
	2, {TEXTOID, TEXTOID}
};
static KeptPlan load_latest_locked_v9 = {
	NULL, "SELECT " RUN_COLUMNS_V9 " FROM durable.runs"
	" WHERE namespace = $1 AND workflow_id = $2"
	" ORDER BY run_seq DESC LIMIT 1 FOR UPDATE",
	2, {TEXTOID, TEXTOID}
};
/*
 * From 0.12.0 the latest run is the first in runs_of_workflow_id's order
 * (RUNS_CHAIN_KEY_SQL): the running run, else the latest closed one.
 */
static KeptPlan load_latest_v12 = {
	NULL, "SELECT " RUN_COLUMNS_V9 " FROM durable.runs"
	" WHERE namespace = $1 AND workflow_id = $2"
	" ORDER BY " RUNS_CHAIN_KEY_SQL " DESC LIMIT 1",
	2, {TEXTOID, TEXTOID}
};
static KeptPlan load_latest_locked_v12 = {
	NULL, "SELECT " RUN_COLUMNS_V9 " FROM durable.runs"
	" WHERE namespace = $1 AND workflow_id = $2"
	" ORDER BY " RUNS_CHAIN_KEY_SQL " DESC LIMIT 1 FOR UPDATE",
	2, {TEXTOID, TEXTOID}
};
static KeptPlan load_given_v9 = {
	NULL, "SELECT " RUN_COLUMNS_V9 " FROM durable.runs"
	" WHERE run_id = $3 AND namespace = $1 AND workflow_id = $2",
	3, {TEXTOID, TEXTOID, UUIDOID}
};
static KeptPlan load_given_locked_v9 = {
	NULL, "SELECT " RUN_COLUMNS_V9 " FROM durable.runs"
	" WHERE run_id = $3 AND namespace = $1 AND workflow_id = $2 FOR UPDATE",
	3, {TEXTOID, TEXTOID, UUIDOID}
};
static KeptPlan load_latest_v3 = {
	NULL, "SELECT " RUN_COLUMNS_V3 " FROM durable.runs"
	" WHERE namespace = $1 AND workflow_id = $2"
	" ORDER BY run_seq DESC LIMIT 1",
	2, {TEXTOID, TEXTOID}
};
static KeptPlan load_latest_locked_v3 = {
	NULL, "SELECT " RUN_COLUMNS_V3 " FROM durable.runs"
	" WHERE namespace = $1 AND workflow_id = $2"
	" ORDER BY run_seq DESC LIMIT 1 FOR UPDATE",
	2, {TEXTOID, TEXTOID}
};
static KeptPlan load_given_v3 = {
	NULL, "SELECT " RUN_COLUMNS_V3 " FROM durable.runs"
	" WHERE run_id = $3 AND namespace = $1 AND workflow_id = $2",
	3, {TEXTOID, TEXTOID, UUIDOID}
};
static KeptPlan load_given_locked_v3 = {
	NULL, "SELECT " RUN_COLUMNS_V3 " FROM durable.runs"
	" WHERE run_id = $3 AND namespace = $1 AND workflow_id = $2 FOR UPDATE",
	3, {TEXTOID, TEXTOID, UUIDOID}
};
/* Whether a run is paused (0.8.0), for a run LoadRun read */
static KeptPlan run_paused = {
	NULL, "SELECT paused_at IS NOT NULL FROM durable.runs WHERE run_id = $1",
	1, {UUIDOID}
};
/* A closing run is no longer paused */
static const char *const unpause_columns[] = {
	"paused_at", "paused_by", "pause_reason"
};
static KeptPlan set_run_deadline = {
	NULL, "UPDATE durable.runs SET run_deadline = $2 WHERE run_id = $1",
	2, {UUIDOID, TIMESTAMPTZOID}
};
/* The columns CloseRun writes */
static const char *const close_run_columns[] = {
	"status", "close_time", "result", "failure", "last_event_id",
	"cancel_requested", "decision_scheduled_id", "decision_started_id",
	"decision_attempt", "decision_started_time", "has_buffered"
};

/* The statuses durable.runs' CHECK constraint allows a closed run */
static const char *const closed_statuses[] = {
	"completed", "failed", "canceled", "terminated", "continued_as_new",
	"timed_out"
};

static KeptPlan buffer_event = {
	NULL, "INSERT INTO durable.buffered_events"
	" (run_id, event_time, event_type, attributes) VALUES ($1, $2, $3, $4)",
	4, {UUIDOID, TIMESTAMPTZOID, TEXTOID, JSONBOID}
};
static KeptPlan count_buffered = {
	NULL, "SELECT count(*) FROM (SELECT FROM durable.buffered_events"
	" WHERE run_id = $1 LIMIT $2) b",
	2, {UUIDOID, INT8OID}
};
static KeptPlan event_type_at = {
	NULL, "SELECT event_type FROM durable.history"
	" WHERE run_id = $1 AND event_id = $2",
	2, {UUIDOID, INT8OID}
};
static KeptPlan set_child_started_id = {
	NULL, "UPDATE durable.children SET started_event_id = $3"
	" WHERE parent_run_id = $1 AND initiated_event_id = $2"
	" AND started_event_id = 0",
	3, {UUIDOID, INT8OID, INT8OID}
};
static KeptPlan take_buffered = {
	NULL, "WITH taken AS (DELETE FROM durable.buffered_events WHERE run_id = $1"
	" RETURNING seq, event_time, event_type, attributes)"
	" SELECT event_time, event_type, attributes FROM taken ORDER BY seq",
	1, {UUIDOID}
};
/*
 * Drop a closing run's activities; attempts still running end with it
 * (logged as canceled).  Returns how many were waiting on a queue.
 */
static KeptPlan drop_run_activities = {
	NULL, "WITH gone AS (DELETE FROM durable.activities WHERE run_id = $1"
	"   RETURNING *),"
	" logged AS (INSERT INTO durable.activity_attempt_log (run_id,"
	"   scheduled_event_id, attempt, activity_id, activity_type, worker_identity,"
	"   scheduled_time, started_time, end_time, outcome, failure_reason)"
	"   SELECT run_id, scheduled_event_id, attempt, activity_id, activity_type,"
	"   last_worker_identity, scheduled_time, started_time, $2, 'canceled',"
	"   'durable:WorkflowClosed' FROM gone WHERE state <> 'SCHEDULED'"
	"   ON CONFLICT DO NOTHING)"
	" SELECT count(*) FILTER (WHERE state = 'SCHEDULED' AND next_attempt_time IS NULL)"
	" FROM gone",
	2, {UUIDOID, TIMESTAMPTZOID}
};
static KeptPlan delete_run_user_timers = {
	NULL, "DELETE FROM durable.user_timers WHERE run_id = $1",
	1, {UUIDOID}
};
static KeptPlan delete_run_ready_tasks = {
	NULL, "DELETE FROM durable.ready_tasks WHERE ctid = ANY (ARRAY"
	" (SELECT ctid FROM durable.ready_tasks WHERE run_id = $1"
	"  FOR UPDATE SKIP LOCKED))",
	1, {UUIDOID}
};

/* Write the run's pending events (direct.c). */
static void
write_events(RunState *rs)
{
	EventBatch *b = rs->events;

	if (b != NULL && b->n > 0)
	{
		DirectInsertEvents(&rs->run_id, b->n, b->ids, b->times, b->types,
						   b->attrs);
		/* Counted at commit: durable.metrics (metrics.c) */
		MetricsCountEvents(rs->namespace, rs->task_queue, b->n, b->types);
	}
}

/* Write the run's queued tasks (direct.c). */
static void
write_ready(RunState *rs)
{
	ReadyBatch *b = rs->ready;

	if (b != NULL && b->n > 0)
		DirectInsertReadyTasks(rs->namespace, &rs->run_id, b->n, b->queues,
							   b->kinds, b->scheduled, b->attempts,
							   b->priorities, b->keys);
}

/* The run's pending events and tasks are written (or dropped): forget them. */
static void
events_written(RunState *rs)
{
	if (rs->events != NULL)
	{
		DurableSPIOweWrites(-rs->events->n);
		rs->events->n = 0;
	}
	if (rs->ready != NULL)
	{
		DurableSPIOweWrites(-rs->ready->n);
		rs->ready->n = 0;
	}
}

/* Write the run's pending events and tasks now (without touching its row). */
void
FlushEvents(RunState *rs)
{
	write_ready(rs);
	write_events(rs);
	events_written(rs);
}

/*
 * The run's deadline: the earlier of its execution deadline and its run
 * deadline, DT_NOEND for none.  The run deadline is run_deadline when stored
 * (a run whose first decision task waited: RunDeadline), else start_time +
 * run_timeout.  Computed in C with saturating arithmetic, not in SQL: a
 * run_timeout stored by an older version (up to 1e15 seconds) would make
 * "start_time + run_timeout * interval '1 second'" raise "interval out of
 * range" at every load of the run, and so at every poll of its queue.
 */
static TimestampTz
run_deadline(bool exec_null, TimestampTz exec_deadline,
			 TimestampTz start_time, bool timeout_null, double run_timeout,
			 bool stored_null, TimestampTz stored)
{
	TimestampTz deadline = exec_null ? DT_NOEND : exec_deadline;

	if (!stored_null)
		deadline = Min(deadline, stored);
	else if (!timeout_null)
		deadline = Min(deadline, TimestampPlusSeconds(start_time, run_timeout));
	return deadline;
}

/*
 * The deadline of a run's timeout, counted as Cadence counts it from the
 * first decision task: start + backoff (a delay, the wait for a cron fire
 * time, a retry's backoff) + run timeout.
 */
TimestampTz
RunDeadline(TimestampTz start_time, double backoff, double run_timeout)
{
	return TimestampPlusSeconds(TimestampPlusSeconds(start_time, backoff),
								run_timeout);
}

/*
 * Keep the run deadline of a new run whose first decision task waits: the
 * loads read it back (a database not yet updated to 0.4.0 has no column, and
 * its runs count from their start, as before the update).
 */
void
StoreRunDeadline(pg_uuid_t *run_id, TimestampTz deadline)
{
	Datum		values[2];

	if (!DurableColumnExists("runs", "run_deadline"))
		return;
	values[0] = UUIDPGetDatum(run_id);
	values[1] = TimestampTzGetDatum(deadline);
	RunPlan(&set_run_deadline, values, NULL, false, 0);
}

/*
 * What a call has done to a run it just loaded: nothing yet (no events or
 * tasks made, no decision task deferred, taken or wanted, no eager
 * activities).
 */
static void
reset_call_state(RunState *rs)
{
	rs->events = NULL;
	rs->ready = NULL;
	rs->pending_started_id = 0;
	rs->new_event = false;
	rs->defer_decision = false;
	rs->decision_wanted = false;
	rs->take_decision = false;
	rs->decision_taken = false;
	rs->eager_activities = 0;
	rs->n_eager = 0;
	rs->eager_ids = NULL;
	rs->may_hand_over = false;
	rs->handoff_activity = 0;
	rs->handoff_identity = NULL;
}

/* Fill rs from row 0 of the last SPI result (RUN_COLUMNS_V8, _V4 or _V3). */
static void
read_run_row(RunState *rs)
{
	bool		isnull;
	Datum		d;

	memcpy(&rs->run_id, DatumGetUUIDP(SPIGetDatum(0, 1, &isnull)),
		   sizeof(pg_uuid_t));
	rs->namespace = SPIGetText(0, 2);
	rs->workflow_id = SPIGetText(0, 3);
	rs->workflow_type = SPIGetText(0, 4);
	rs->task_queue = SPIGetText(0, 5);
	rs->status = SPIGetText(0, 6);
	rs->attempt = DatumGetInt32(SPIGetDatum(0, 7, &isnull));
	rs->cancel_requested = DatumGetBool(SPIGetDatum(0, 8, &isnull));
	rs->decision_timeout = DatumGetFloat8(SPIGetDatum(0, 9, &isnull));
	rs->last_event_id = DatumGetInt64(SPIGetDatum(0, 10, &isnull));
	rs->decision_scheduled_id = DatumGetInt64(SPIGetDatum(0, 11, &isnull));
	rs->decision_started_id = DatumGetInt64(SPIGetDatum(0, 12, &isnull));
	rs->decision_attempt = DatumGetInt32(SPIGetDatum(0, 13, &isnull));
	rs->decision_started_time = DatumGetTimestampTz(SPIGetDatum(0, 14,
																&rs->decision_started_time_null));
	rs->previous_started_id = DatumGetInt64(SPIGetDatum(0, 15, &isnull));
	rs->activity_attempts = DatumGetInt32(SPIGetDatum(0, 16, &isnull));
	{
		bool		exec_null;
		bool		timeout_null;
		TimestampTz exec_deadline = DatumGetTimestampTz(SPIGetDatum(0, 17, &exec_null));
		TimestampTz start_time = DatumGetTimestampTz(SPIGetDatum(0, 23, &isnull));
		double		run_timeout = DatumGetFloat8(SPIGetDatum(0, 24, &timeout_null));
		bool		stored_null;
		TimestampTz stored = DatumGetTimestampTz(SPIGetDatum(0, 25, &stored_null));

		rs->workflow_deadline = run_deadline(exec_null, exec_deadline, start_time,
											 timeout_null, run_timeout,
											 stored_null, stored);
	}
	rs->has_buffered = DatumGetBool(SPIGetDatum(0, 18, &isnull));
	rs->may_continue = DatumGetBool(SPIGetDatum(0, 19, &isnull));
	reset_call_state(rs);
	d = SPIGetDatum(0, 20, &isnull);
	rs->has_parent = !isnull;
	if (!isnull)
		memcpy(&rs->parent_run_id, DatumGetUUIDP(d), sizeof(pg_uuid_t));
	d = SPIGetDatum(0, 21, &isnull);
	rs->parent_initiated_id = isnull ? 0 : DatumGetInt64(d);
	memcpy(&rs->first_run_id, DatumGetUUIDP(SPIGetDatum(0, 22, &isnull)),
		   sizeof(pg_uuid_t));
	/* Not read here: only runs locked by LoadRunById start decision tasks. */
	rs->pinned_function = InvalidOid;
	/* From 0.8.0 read with the row, else looked up if needed (RunIsPaused) */
	rs->paused_known = SPI_tuptable->tupdesc->natts >= 26;
	rs->paused = rs->paused_known &&
		DatumGetBool(SPIGetDatum(0, 26, &isnull)) && !isnull;
	/* From 0.9.0 (NULL: 3, and no key) */
	rs->priority = 3;
	rs->concurrency_key = NULL;
	if (SPI_tuptable->tupdesc->natts >= 28)
	{
		d = SPIGetDatum(0, 27, &isnull);
		if (!isnull)
			rs->priority = DatumGetInt16(d);
		d = SPIGetDatum(0, 28, &isnull);
		if (!isnull)
			rs->concurrency_key = TextDatumGetCString(d);
	}
	rs->secret_stored = false;
	rs->task_secret_null = true;
	rs->task_secret = 0;
	rs->task_secret_changed = false;
	SPI_freetuptable(SPI_tuptable);
}

/*
 * Whether the run row has an input column: a schema before 0.11.0, which
 * kept a copy of the input there as well as in WorkflowExecutionStarted.
 * From 0.11.0 the event is the one place (RUN_INPUT_FROM_HISTORY_SQL): an
 * open workflow takes a third less space.
 */
bool
RunRowHasInput(void)
{
	return DurableColumnExists("runs", "input");
}

/*
 * Whether durable.runs has the one index of the runs of a workflow id
 * (0.12.0, runs_of_workflow_id; runs.h explains), or still the two before
 * it: which plans a start and a lookup of the latest run use.  A syscache
 * lookup, as DurableColumnExists is: ALTER EXTENSION durable UPDATE's
 * invalidation reaches every backend, whose next call sees the new schema.
 */
bool
RunsOfWorkflowIdIndexed(void)
{
	return OidIsValid(DurableRelationOid("runs_of_workflow_id"));
}

/*
 * Load a run: the given run_id of (namespace, workflow_id), or the latest run
 * when run_id is NULL.  Returns false when there is none.
 */
bool
LoadRun(const char *namespace, const char *workflow_id, pg_uuid_t *run_id,
		bool for_update, bool skip_locked, RunState *rs)
{
	Datum		values[3];
	KeptPlan   *kp;
	bool		v4 = DurableColumnExists("runs", "run_deadline");
	bool		v8 = DurableColumnExists("runs", "paused_at");
	bool		v9 = DurableColumnExists("runs", "concurrency_key");

	values[0] = CStringGetTextDatum(namespace);
	values[1] = CStringGetTextDatum(workflow_id);
	if (run_id != NULL)
	{
		values[2] = UUIDPGetDatum(run_id);
		if (v9)
			kp = for_update ? &load_given_locked_v9 : &load_given_v9;
		else if (v8)
			kp = for_update ? &load_given_locked_v8 : &load_given_v8;
		else if (v4)
			kp = for_update ? &load_given_locked : &load_given;
		else
			kp = for_update ? &load_given_locked_v3 : &load_given_v3;
	}
	else if (RunsOfWorkflowIdIndexed())
		kp = for_update ? &load_latest_locked_v12 : &load_latest_v12;
	else if (v9)
		kp = for_update ? &load_latest_locked_v9 : &load_latest_v9;
	else if (v8)
		kp = for_update ? &load_latest_locked_v8 : &load_latest_v8;
	else if (v4)
		kp = for_update ? &load_latest_locked : &load_latest;
	else
		kp = for_update ? &load_latest_locked_v3 : &load_latest_v3;

	if (RunPlan(kp, values, NULL, false, 1) == 0)
		return false;
	read_run_row(rs);
	return true;
}

/* LoadRun, raising WF002 when the workflow or run does not exist. */
void
LoadRunOrError(const char *namespace, const char *workflow_id,
			   pg_uuid_t *run_id, bool for_update, RunState *rs)
{
	if (LoadRun(namespace, workflow_id, run_id, for_update, false, rs))
		return;
	if (run_id != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DURABLE_NOT_FOUND),
				 errmsg("workflow \"%s\" has no run %s in namespace \"%s\"",
						workflow_id, UuidToCString(run_id), namespace)));
	CheckNamespaceExists(namespace);
	ereport(ERROR,
			(errcode(ERRCODE_DURABLE_NOT_FOUND),
			 errmsg("workflow \"%s\" not found in namespace \"%s\"",
					workflow_id, namespace)));
}

/* The columns read_run_slot reads, by name */
enum
{
	RC_RUN_ID, RC_NAMESPACE, RC_WORKFLOW_ID, RC_WORKFLOW_TYPE, RC_TASK_QUEUE,
	RC_STATUS, RC_ATTEMPT, RC_CANCEL_REQUESTED, RC_DECISION_TIMEOUT,
	RC_LAST_EVENT_ID, RC_DECISION_SCHEDULED_ID, RC_DECISION_STARTED_ID,
	RC_DECISION_ATTEMPT, RC_DECISION_STARTED_TIME, RC_PREVIOUS_STARTED_ID,
	RC_ACTIVITY_ATTEMPTS, RC_EXECUTION_DEADLINE, RC_START_TIME, RC_RUN_TIMEOUT,
	RC_HAS_BUFFERED, RC_RETRY_POLICY, RC_CRON_SCHEDULE, RC_PARENT_RUN_ID,
	RC_PARENT_INITIATED_ID, RC_FIRST_RUN_ID, RC_TASK_SECRET, RC_RUN_DEADLINE,
	RC_PINNED_FUNCTION, RC_PAUSED_AT, RC_PRIORITY, RC_CONCURRENCY_KEY, RC_COUNT
};
static const char *const run_column_names[RC_COUNT] = {
	"run_id", "namespace", "workflow_id", "workflow_type", "task_queue",
	"status", "attempt", "cancel_requested", "decision_timeout",
	"last_event_id", "decision_scheduled_id", "decision_started_id",
	"decision_attempt", "decision_started_time", "previous_started_id",
	"activity_attempts", "execution_deadline", "start_time", "run_timeout",
	"has_buffered", "retry_policy", "cron_schedule", "parent_run_id",
	"parent_initiated_id", "first_run_id", "task_secret", "run_deadline",
	"pinned_function", "paused_at", "priority", "concurrency_key"
};

/* Attribute numbers of those columns, for the runs table they were read of */
static Oid	run_columns_relid = InvalidOid;
static int	run_columns_natts = 0;
static int	run_columns[RC_COUNT];	/* 0-based */

/*
 * Fill rs from a row of durable.runs, as read_run_row does from RUN_COLUMNS
 * (the deadline by run_deadline).
 */
static void
read_run_slot(RunState *rs, TupleTableSlot *slot)
{
	TupleDesc	desc = slot->tts_tupleDescriptor;
	Datum	   *v;
	bool	   *n;
	int			i;

	if (run_columns_relid != slot->tts_tableOid ||
		run_columns_natts != desc->natts)
	{
		for (i = 0; i < RC_COUNT; i++)
		{
			int			j;

			run_columns[i] = -1;
			for (j = 0; j < desc->natts; j++)
				if (!TupleDescAttr(desc, j)->attisdropped &&
					strcmp(NameStr(TupleDescAttr(desc, j)->attname),
						   run_column_names[i]) == 0)
					run_columns[i] = j;
			/*
			 * task_secret is new in 0.3.0, run_deadline in 0.4.0,
			 * pinned_function in 0.7.0, paused_at in 0.8.0: a database not
			 * yet updated lacks them
			 */
			if (run_columns[i] < 0 && i != RC_TASK_SECRET &&
				i != RC_RUN_DEADLINE && i != RC_PINNED_FUNCTION &&
				i != RC_PAUSED_AT && i != RC_PRIORITY &&
				i != RC_CONCURRENCY_KEY)
				elog(ERROR, "durable.runs lacks column \"%s\"",
					 run_column_names[i]);
		}
		run_columns_relid = slot->tts_tableOid;
		run_columns_natts = desc->natts;
	}
	slot_getallattrs(slot);
	v = slot->tts_values;
	n = slot->tts_isnull;
#define RV(c) v[run_columns[c]]
#define RN(c) n[run_columns[c]]

	memcpy(&rs->run_id, DatumGetUUIDP(RV(RC_RUN_ID)), sizeof(pg_uuid_t));
	rs->namespace = TextDatumGetCString(RV(RC_NAMESPACE));
	rs->workflow_id = TextDatumGetCString(RV(RC_WORKFLOW_ID));
	rs->workflow_type = TextDatumGetCString(RV(RC_WORKFLOW_TYPE));
	rs->task_queue = TextDatumGetCString(RV(RC_TASK_QUEUE));
	rs->status = TextDatumGetCString(RV(RC_STATUS));
	rs->attempt = DatumGetInt32(RV(RC_ATTEMPT));
	rs->cancel_requested = DatumGetBool(RV(RC_CANCEL_REQUESTED));
	rs->decision_timeout = DatumGetFloat8(RV(RC_DECISION_TIMEOUT));
	rs->last_event_id = DatumGetInt64(RV(RC_LAST_EVENT_ID));
	rs->decision_scheduled_id = DatumGetInt64(RV(RC_DECISION_SCHEDULED_ID));
	rs->decision_started_id = DatumGetInt64(RV(RC_DECISION_STARTED_ID));
	rs->decision_attempt = DatumGetInt32(RV(RC_DECISION_ATTEMPT));
	rs->decision_started_time_null = RN(RC_DECISION_STARTED_TIME);
	rs->decision_started_time = rs->decision_started_time_null ? 0 :
		DatumGetTimestampTz(RV(RC_DECISION_STARTED_TIME));
	rs->previous_started_id = DatumGetInt64(RV(RC_PREVIOUS_STARTED_ID));
	rs->activity_attempts = DatumGetInt32(RV(RC_ACTIVITY_ATTEMPTS));

	rs->workflow_deadline =
		run_deadline(RN(RC_EXECUTION_DEADLINE),
					 RN(RC_EXECUTION_DEADLINE) ? 0 :
					 DatumGetTimestampTz(RV(RC_EXECUTION_DEADLINE)),
					 DatumGetTimestampTz(RV(RC_START_TIME)),
					 RN(RC_RUN_TIMEOUT),
					 RN(RC_RUN_TIMEOUT) ? 0 : DatumGetFloat8(RV(RC_RUN_TIMEOUT)),
					 run_columns[RC_RUN_DEADLINE] < 0 || RN(RC_RUN_DEADLINE),
					 run_columns[RC_RUN_DEADLINE] < 0 || RN(RC_RUN_DEADLINE) ? 0 :
					 DatumGetTimestampTz(RV(RC_RUN_DEADLINE)));
	rs->has_buffered = DatumGetBool(RV(RC_HAS_BUFFERED));
	rs->may_continue = !RN(RC_RETRY_POLICY) || !RN(RC_CRON_SCHEDULE);
	reset_call_state(rs);
	rs->has_parent = !RN(RC_PARENT_RUN_ID);
	if (rs->has_parent)
		memcpy(&rs->parent_run_id, DatumGetUUIDP(RV(RC_PARENT_RUN_ID)),
			   sizeof(pg_uuid_t));
	rs->parent_initiated_id = RN(RC_PARENT_INITIATED_ID) ? 0 :
		DatumGetInt64(RV(RC_PARENT_INITIATED_ID));
	memcpy(&rs->first_run_id, DatumGetUUIDP(RV(RC_FIRST_RUN_ID)),
		   sizeof(pg_uuid_t));
	rs->secret_stored = run_columns[RC_TASK_SECRET] >= 0;
	rs->task_secret_null = !rs->secret_stored || RN(RC_TASK_SECRET);
	rs->task_secret = rs->task_secret_null ? 0 :
		DatumGetInt64(RV(RC_TASK_SECRET));
	rs->task_secret_changed = false;
	rs->pinned_function =
		run_columns[RC_PINNED_FUNCTION] < 0 || RN(RC_PINNED_FUNCTION) ?
		InvalidOid : DatumGetObjectId(RV(RC_PINNED_FUNCTION));
	rs->paused_known = true;
	rs->paused = run_columns[RC_PAUSED_AT] >= 0 && !RN(RC_PAUSED_AT);
	rs->priority = run_columns[RC_PRIORITY] < 0 || RN(RC_PRIORITY) ? 3 :
		DatumGetInt16(RV(RC_PRIORITY));
	rs->concurrency_key =
		run_columns[RC_CONCURRENCY_KEY] < 0 || RN(RC_CONCURRENCY_KEY) ? NULL :
		TextDatumGetCString(RV(RC_CONCURRENCY_KEY));
#undef RV
#undef RN
}

/* Fill rs from a run's row in a slot, if one was found, and drop the slot. */
static bool
read_run_found(RunState *rs, TupleTableSlot *slot)
{
	if (slot == NULL)
		return false;
	read_run_slot(rs, slot);
	ExecDropSingleTupleTableSlot(slot);
	return true;
}

/*
 * Lock and load a run by run_id alone.  With skip_locked, a run whose row is
 * locked by someone else is passed over (false), as is a missing run.  The
 * row is locked as SELECT ... FOR UPDATE locks it, without a statement
 * (direct.c).
 */
bool
LoadRunById(pg_uuid_t *run_id, bool skip_locked, RunState *rs)
{
	return read_run_found(rs, DirectLockRun(run_id, skip_locked));
}

/*
 * Load a run by run_id, unlocked, as a fresh snapshot sees it: for reading
 * only (a poll handed a task it did not claim, api/worker.c), never saved.
 */
bool
ReadRunById(pg_uuid_t *run_id, RunState *rs)
{
	return read_run_found(rs, DirectFetchRun(run_id));
}

/*
 * Whether an event of this call takes the open run's history into the room
 * kept for closing it (docs/api.md "Limits of a run"): durable.max_history_events
 * less DURABLE_CLOSE_ROOM.  A decision task's own events (scheduled,
 * started, completed, failed, timed out) may use the room: they follow the
 * events that call for them, at most a few after the last such event, so
 * they never keep a run open at its limit.
 */
static bool
history_reached_limit(RunState *rs)
{
	EventBatch *b = rs->events;
	int64		limit = (int64) durable_max_history_events - DURABLE_CLOSE_ROOM;
	int			i;

	if (b == NULL || !RunIsOpen(rs) || rs->last_event_id < limit)
		return false;
	for (i = b->n - 1; i >= 0 && b->ids[i] >= limit; i--)
		if (strncmp(b->types[i], "DecisionTask", 12) != 0)
			return true;
	return false;
}

/*
 * Terminate a run whose history reached its limit, at the time of its last
 * event, as Temporal terminates a workflow at the event that passes its
 * history count limit (its workflow context's history size checks): the
 * call's events are written, then WorkflowExecutionTerminated.  The caller
 * (a signal, an activity outcome, a timer) gets a WARNING, not an error,
 * since an error would undo the termination with its own event.
 */
static void
terminate_full_run(RunState *rs)
{
	JsonBuilder jb;
	int64		events = rs->last_event_id;

	JsonBegin(&jb);
	JsonAddInt(&jb, "historyEvents", events);
	JsonAddInt(&jb, "maxHistoryEvents", durable_max_history_events);
	TerminateRunForLimit(rs, rs->events->times[rs->events->n - 1],
						 "durable:HistoryCountExceedsLimit", JsonFinish(&jb));
	ereport(WARNING,
			(errcode(ERRCODE_DURABLE_LIMIT_EXCEEDED),
			 errmsg("workflow \"%s\" run %s was terminated: its history reached its limit",
					rs->workflow_id, UuidToCString(&rs->run_id)),
			 errdetail("It had %lld events; durable.max_history_events is %d, of which the last %d are kept for the events that close a run.",
					   (long long) events, durable_max_history_events,
					   DURABLE_CLOSE_ROOM),
			 errhint("Continue the workflow as a new run before its history fills up.")));
}

/*
 * Terminate a run that reached one of its limits (the history's length, a
 * decision's payload): WorkflowExecutionTerminated with the limit as reason
 * and identity "durable".  Closing events are never refused, so this always
 * succeeds on an open run.
 */
void
TerminateRunForLimit(RunState *rs, TimestampTz now, const char *reason,
					 Jsonb *details)
{
	JsonBuilder jb;

	JsonBegin(&jb);
	JsonAddText(&jb, "reason", reason);
	JsonAddJsonb(&jb, "details", details);
	JsonAddText(&jb, "identity", "durable");
	CloseRun(rs, now, "terminated", "WorkflowExecutionTerminated",
			 JsonFinish(&jb), NULL, NULL);
}

/*
 * The columns SaveRun writes; the last, task_secret, only when a decision
 * task was started (it is absent from a database at 0.2.0).
 */
static const char *const save_run_columns[] = {
	"cancel_requested", "last_event_id", "decision_scheduled_id",
	"decision_started_id", "decision_attempt", "decision_started_time",
	"previous_started_id", "activity_attempts", "has_buffered", "task_secret"
};

/*
 * Write back the counters and flags a caller may have changed, after the
 * call's events and tasks.  None of these columns is indexed or checked, so
 * the row is updated in place of an UPDATE statement (direct.c).
 */
void
SaveRun(RunState *rs)
{
	Datum		values[lengthof(save_run_columns)];
	bool		isnull[lengthof(save_run_columns)];

	if (history_reached_limit(rs))
	{
		terminate_full_run(rs);
		return;
	}
	write_ready(rs);
	write_events(rs);
	memset(isnull, false, sizeof(isnull));
	values[0] = BoolGetDatum(rs->cancel_requested);
	values[1] = Int64GetDatum(rs->last_event_id);
	values[2] = Int64GetDatum(rs->decision_scheduled_id);
	values[3] = Int64GetDatum(rs->decision_started_id);
	values[4] = Int32GetDatum(rs->decision_attempt);
	values[5] = TimestampTzGetDatum(rs->decision_started_time);
	isnull[5] = rs->decision_started_time_null;
	values[6] = Int64GetDatum(rs->previous_started_id);
	values[7] = Int32GetDatum(rs->activity_attempts);
	values[8] = BoolGetDatum(rs->has_buffered);
	values[9] = Int64GetDatum(rs->task_secret);
	isnull[9] = rs->task_secret_null;
	DirectUpdateRun(&rs->run_id,
					lengthof(save_run_columns) - (rs->task_secret_changed ? 0 : 1),
					save_run_columns, values, isnull);
	rs->task_secret_changed = false;
	events_written(rs);
}

bool
RunIsOpen(RunState *rs)
{
	return strcmp(rs->status, "running") == 0;
}

/* WF003 unless the run is open. */
void
RequireRunOpen(RunState *rs)
{
	if (!RunIsOpen(rs))
		ereport(ERROR,
				(errcode(ERRCODE_DURABLE_NOT_RUNNING),
				 errmsg("workflow \"%s\" run %s is not running",
						rs->workflow_id, UuidToCString(&rs->run_id)),
				 errdetail("Its status is %s.", rs->status)));
}

/* Whether an event closes an activity (and so follows ActivityTaskStarted). */
bool
IsActivityOutcome(const char *event_type)
{
	return strcmp(event_type, "ActivityTaskCompleted") == 0 ||
		strcmp(event_type, "ActivityTaskFailed") == 0 ||
		strcmp(event_type, "ActivityTaskTimedOut") == 0 ||
		strcmp(event_type, "ActivityTaskCanceled") == 0;
}

/*
 * Append one event to the run's history; returns its event id.  The event is
 * written by the next SaveRun, CloseRun or FlushEvents of the run.
 */
int64
AppendEvent(RunState *rs, TimestampTz now, const char *event_type,
			Jsonb *attributes)
{
	EventBatch *b;

	/*
	 * No limit is checked here: a call's events are all written, and a run
	 * whose history reached its limit is terminated when the call saves it
	 * (SaveRun), so that the events closing a run always fit.
	 */
	/*
	 * ActivityTaskStarted is written just before the activity's outcome (rule
	 * 6), here or when buffered events are flushed; the outcome names it.
	 */
	if (rs->pending_started_id != 0 && IsActivityOutcome(event_type))
		attributes = JsonbSetInt(attributes, "startedEventId",
								 rs->pending_started_id);
	rs->pending_started_id = 0;

	rs->last_event_id++;
	if (strcmp(event_type, "ActivityTaskStarted") == 0)
		rs->pending_started_id = rs->last_event_id;

	if (rs->events == NULL)
		rs->events = palloc0(sizeof(EventBatch));
	b = rs->events;
	if (b->n == b->size)
	{
		b->size = b->size ? b->size * 2 : 8;
		b->ids = b->ids ? repalloc(b->ids, sizeof(int64) * b->size) :
			palloc(sizeof(int64) * b->size);
		b->times = b->times ? repalloc(b->times, sizeof(TimestampTz) * b->size) :
			palloc(sizeof(TimestampTz) * b->size);
		b->types = b->types ? repalloc(b->types, sizeof(char *) * b->size) :
			palloc(sizeof(char *) * b->size);
		b->attrs = b->attrs ? repalloc(b->attrs, sizeof(Datum) * b->size) :
			palloc(sizeof(Datum) * b->size);
	}
	b->ids[b->n] = rs->last_event_id;
	b->times[b->n] = now;
	b->types[b->n] = pstrdup(event_type);
	b->attrs[b->n] = JsonbPGetDatum(attributes);
	b->n++;
	DurableSPIOweWrites(1);
	return rs->last_event_id;
}

/* Whether the run has durable.max_buffered_events events buffered. */
static bool
buffered_events_at_limit(RunState *rs)
{
	Datum		values[2];
	bool		isnull;
	int64		n;

	values[0] = UUIDPGetDatum(&rs->run_id);
	values[1] = Int64GetDatum(durable_max_buffered_events);
	RunPlan(&count_buffered, values, NULL, false, 1);
	n = DatumGetInt64(SPIGetDatum(0, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	return n >= durable_max_buffered_events;
}

/*
 * Fail the started decision task of a run that has too many events buffered,
 * as Cadence's and Temporal's closeTransactionHandleBufferedEventsLimit do:
 * DecisionTaskFailed with cause ForceCloseDecision (none for a transient
 * task), the buffered events written, and a new first attempt scheduled, so
 * that the worker starts over with the whole history; the started task's
 * token is stale (WF005).  The caller saves the run.
 */
static void
force_close_decision(RunState *rs, TimestampTz now)
{
	if (!DecisionIsTransient(rs))
	{
		JsonBuilder jb;

		JsonBegin(&jb);
		JsonAddInt(&jb, "scheduledEventId", rs->decision_scheduled_id);
		JsonAddInt(&jb, "startedEventId", rs->decision_started_id);
		JsonAddText(&jb, "cause", "ForceCloseDecision");
		JsonAddText(&jb, "identity", "durable");
		(void) AppendEvent(rs, now, "DecisionTaskFailed", JsonFinish(&jb));
	}
	rs->decision_scheduled_id = 0;
	rs->decision_started_id = 0;
	rs->decision_started_time_null = true;
	ScheduleNextDecisionAttempt(rs, now);
}

/*
 * Append an event from outside the workflow (signal, cancel request, activity
 * outcome).  While a decision task is started it is buffered and appended
 * after that task's DecisionTaskCompleted and the events of its decisions
 * (engine rule 12).  An event appended now is new to the workflow: the next decision
 * task starts again from attempt 1 (ScheduleDecisionTask).
 */
void
AppendEventOrBuffer(RunState *rs, TimestampTz now, const char *event_type,
					Jsonb *attributes)
{
	Datum		values[4];

	if (rs->decision_started_id == 0)
	{
		(void) AppendEvent(rs, now, event_type, attributes);
		rs->new_event = true;
		return;
	}
	values[0] = UUIDPGetDatum(&rs->run_id);
	values[1] = TimestampTzGetDatum(now);
	values[2] = CStringGetTextDatum(event_type);
	values[3] = JsonbPGetDatum(attributes);
	RunPlan(&buffer_event, values, NULL, false, 0);
	rs->has_buffered = true;
	if (buffered_events_at_limit(rs))
		force_close_decision(rs, now);
}

/*
 * Move the run's buffered events into its history; returns how many.
 * AppendEvent keeps the attributes by reference until the run is saved, so
 * each is copied out of the SPI result before that is freed: an inline jsonb
 * would otherwise point into freed memory (a truncated or invalid event).
 *
 * A ChildWorkflowExecutionStarted gets its event id here (a child started
 * on another node while the parent's decision task was started,
 * engine/children.c): the parent's row of the child in durable.children
 * takes it, as Cadence's mutable state takes a buffered started event's id
 * when it flushes.
 */
int
FlushBufferedEvents(RunState *rs)
{
	Datum		values[1];
	SPITupleTable *tt;
	int			n;
	int			i;
	int64		event_id;

	if (!rs->has_buffered)
		return 0;
	rs->has_buffered = false;
	values[0] = UUIDPGetDatum(&rs->run_id);
	n = RunPlan(&take_buffered, values, NULL, false, 0);
	tt = SPI_tuptable;
	for (i = 0; i < n; i++)
	{
		bool		isnull;
		TimestampTz t;
		char	   *type;
		Datum		d;
		Jsonb	   *attrs;

		t = DatumGetTimestampTz(SPI_getbinval(tt->vals[i], tt->tupdesc, 1, &isnull));
		type = TextDatumGetCString(SPI_getbinval(tt->vals[i], tt->tupdesc, 2, &isnull));
		d = SPI_getbinval(tt->vals[i], tt->tupdesc, 3, &isnull);
		attrs = isnull ? NULL : DatumGetJsonbPCopy(d);
		event_id = AppendEvent(rs, t, type, attrs);
		if (strcmp(type, "ChildWorkflowExecutionStarted") == 0 && attrs != NULL)
		{
			JsonbValue *initiated = JsonGetField(attrs, "initiatedEventId");

			if (initiated != NULL && initiated->type == jbvNumeric)
			{
				Datum		cv[3];

				cv[0] = UUIDPGetDatum(&rs->run_id);
				cv[1] = DirectFunctionCall1(numeric_int8,
											NumericGetDatum(initiated->val.numeric));
				cv[2] = Int64GetDatum(event_id);
				RunPlan(&set_child_started_id, cv, NULL, false, 0);
			}
		}
	}
	SPI_freetuptable(tt);
	return n;
}

/*
 * Whether the run is paused (engine/pause.c): from its row when LoadRunById
 * read it, otherwise looked up once, under the run's lock, which pausing
 * and resuming take too.  Never before 0.8.0.
 */
bool
RunIsPaused(RunState *rs)
{
	Datum		values[1];
	bool		isnull;

	if (rs->paused_known)
		return rs->paused;
	rs->paused = false;
	if (DurableColumnExists("runs", "paused_at"))
	{
		values[0] = UUIDPGetDatum(&rs->run_id);
		if (RunPlan(&run_paused, values, NULL, false, 1) == 1)
		{
			rs->paused = DatumGetBool(SPIGetDatum(0, 1, &isnull)) && !isnull;
			SPI_freetuptable(SPI_tuptable);
		}
	}
	rs->paused_known = true;
	return rs->paused;
}

/*
 * The kind a task of a paused run is held under: the upper-case letter of
 * its kind, which no claim reads (durable.ready_tasks' kinds).  Resuming
 * gives the kind back (engine/pause.c).
 */
char
HeldTaskKind(char kind)
{
	switch (kind)
	{
		case 'd':
			return 'D';
		case 'a':
			return 'A';
		case 'w':
			return 'W';
		case 'x':
			return 'X';
	}
	return kind;
}

/*
 * The kind of ready task a task of the run is queued as: a decision ('d') or
 * activity ('a') task of a type registered to a SQL function goes to the
 * executors instead ('w', 'x': registry.c).
 */
char
ReadyTaskKind(RunState *rs, const char *task_queue, char kind,
			  const char *type_name)
{
	Registration reg;

	if (kind == 'd' &&
		LookupRegistration('w', rs->namespace, type_name, task_queue, &reg))
		return 'w';
	if (kind == 'a' &&
		LookupRegistration('x', rs->namespace, type_name, task_queue, &reg))
		return 'x';
	return kind;
}

/*
 * Put a task of the run on its queue's ready list, with its priority and
 * concurrency key (NULL: none) in the claim order.  It is written with the
 * run's row (SaveRun, FlushEvents) and wakes the queue's pollers at commit.
 */
void
EnqueueReadyTask(RunState *rs, const char *task_queue, char kind,
				 const char *type_name, int64 scheduled_event_id,
				 int32 attempt, int priority, const char *concurrency_key)
{
	ReadyBatch *b;
	bool		held = RunIsPaused(rs);

	kind = ReadyTaskKind(rs, task_queue, kind, type_name);
	/* A paused run's task waits, held, for its resume (engine/pause.c). */
	if (held)
		kind = HeldTaskKind(kind);

	if (rs->ready == NULL)
		rs->ready = palloc0(sizeof(ReadyBatch));
	b = rs->ready;
	if (b->n == lengthof(b->queues))
		elog(ERROR, "too many tasks queued by one call");
	b->queues[b->n] = pstrdup(task_queue);
	b->kinds[b->n] = kind;
	b->scheduled[b->n] = scheduled_event_id;
	b->attempts[b->n] = attempt;
	/* A run built by hand without one (0) has the default. */
	b->priorities[b->n] = (int16) (priority >= 1 && priority <= 5 ? priority : 3);
	b->keys[b->n] = concurrency_key != NULL ? pstrdup(concurrency_key) : NULL;
	b->n++;
	DurableSPIOweWrites(1);
	if (!held)
		WakeQueueAtCommit(rs->namespace, task_queue, kind, 1);
}

/*
 * Whether the run's decision task is transient (Cadence's term): a retry of a
 * failed or timed-out task whose DecisionTaskScheduled and DecisionTaskStarted
 * are not in history.  Its ids are the next ones after the end of history,
 * where CompleteDecisionTask writes its two events; nothing else is appended
 * while it is started (events are buffered), so while it is started, or
 * scheduled and not overtaken (TransientDecisionOvertaken), its scheduled id
 * is past the end of history, and a written task's never is.
 */
bool
DecisionIsTransient(RunState *rs)
{
	return rs->decision_scheduled_id > rs->last_event_id;
}

/*
 * Whether the scheduled (not started) decision task of a run is a transient
 * one that events appended since it was scheduled have overtaken: its
 * scheduled id is now the id of one of them.  A task scheduled before 0.4.0
 * wrote its DecisionTaskScheduled whatever its attempt: that event is at its
 * id.  Looked up only for a retry whose id is inside history.
 */
bool
TransientDecisionOvertaken(RunState *rs)
{
	Datum		values[2];
	bool		overtaken = false;

	if (rs->decision_attempt <= 1 || rs->decision_started_id != 0 ||
		rs->decision_scheduled_id == 0 || DecisionIsTransient(rs))
		return false;
	values[0] = UUIDPGetDatum(&rs->run_id);
	values[1] = Int64GetDatum(rs->decision_scheduled_id);
	if (RunPlan(&event_type_at, values, NULL, false, 1) > 0)
	{
		char	   *type = SPIGetText(0, 1);

		overtaken = strcmp(type, "DecisionTaskScheduled") != 0;
		SPI_freetuptable(SPI_tuptable);
	}
	return overtaken;
}

/* The attributes of the run's DecisionTaskScheduled. */
Jsonb *
DecisionScheduledAttributes(RunState *rs)
{
	JsonBuilder jb;

	JsonBegin(&jb);
	JsonAddText(&jb, "taskQueue", rs->task_queue);
	JsonAddFloat(&jb, "startToCloseTimeoutSeconds", rs->decision_timeout);
	JsonAddInt(&jb, "attempt", rs->decision_attempt);
	return JsonFinish(&jb);
}

/* The attributes of a DecisionTaskStarted. */
Jsonb *
DecisionStartedAttributes(int64 scheduled_id, const char *identity)
{
	JsonBuilder jb;

	JsonBegin(&jb);
	JsonAddInt(&jb, "scheduledEventId", scheduled_id);
	JsonAddText(&jb, "identity", identity);
	return JsonFinish(&jb);
}

/*
 * Schedule the run's decision task, with its current attempt.  A first
 * attempt writes DecisionTaskScheduled; a retry (attempt > 1) is transient
 * and writes nothing: its id is the next event id (DecisionIsTransient).  A
 * database at 0.2.0 keeps writing every attempt: its task tokens have no
 * secret, and two attempts of a transient task have the same ids.
 */
static void
schedule_decision(RunState *rs, TimestampTz now)
{
	rs->decision_attempt = Max(rs->decision_attempt, 1);
	if (rs->decision_attempt > 1 && TaskSecretsStored())
		rs->decision_scheduled_id = rs->last_event_id + 1;
	else
		rs->decision_scheduled_id = AppendEvent(rs, now, "DecisionTaskScheduled",
												DecisionScheduledAttributes(rs));

	/*
	 * Eager dispatch: a worker that answers a task of the run and asked for
	 * the next decision task starts it in the same transaction
	 * (StartTakenDecisionTask, engine/decision_task.c), as Cadence's
	 * ReturnNewDecisionTask does; it is not queued for another poller.  A
	 * SQL workflow's task still goes to the executors, and a task of a
	 * paused queue, or of a queue with limits, is queued
	 * (store/queue_pause.c, store/task_limits.c), as is one of a paused
	 * run, held (engine/pause.c).
	 */
	if (rs->take_decision &&
		ReadyTaskKind(rs, rs->task_queue, 'd', rs->workflow_type) == 'd' &&
		!RunIsPaused(rs) &&
		!TaskQueuePaused(rs->namespace, rs->task_queue, NULL) &&
		!TaskQueueLimited(rs->namespace, rs->task_queue, 'd'))
	{
		rs->decision_taken = true;
		return;
	}
	EnqueueReadyTask(rs, rs->task_queue, 'd', rs->workflow_type,
					 rs->decision_scheduled_id, rs->decision_attempt,
					 rs->priority, rs->concurrency_key);
}

/*
 * Schedule a decision task unless one is already scheduled or started (a
 * started one is followed by another when events were buffered meanwhile).
 * A new event (AppendEventOrBuffer) starts the attempts again from 1, as
 * Cadence resets its decision attempt; a retry's backoff timer keeps it.
 * While a decision task completes (CompleteDecisionTask), the task is
 * scheduled after its decisions and the buffered events.
 */
void
ScheduleDecisionTask(RunState *rs, TimestampTz now)
{
	if (rs->decision_scheduled_id != 0)
		return;
	if (rs->defer_decision)
	{
		rs->decision_wanted = true;
		return;
	}
	if (rs->new_event)
		rs->decision_attempt = 1;
	schedule_decision(rs, now);
}

/*
 * Schedule the next attempt of a decision task that failed or timed out
 * (ended, its failure written or not): events buffered meanwhile go to
 * history first and make it a first attempt again, as in Cadence; otherwise
 * its attempt goes up and it is transient.
 */
void
ScheduleNextDecisionAttempt(RunState *rs, TimestampTz now)
{
	if (FlushBufferedEvents(rs) > 0)
		rs->decision_attempt = 1;
	else
		rs->decision_attempt++;
	schedule_decision(rs, now);
}

/*
 * Whether the run has had no decision task yet: its first one waits for a
 * timer (TIMER_FIRST_DECISION: a delay, a cron fire time, a retry backoff).
 * Cadence's !HasProcessedOrPendingDecision.
 */
bool
RunAwaitsFirstDecision(RunState *rs)
{
	return rs->decision_scheduled_id == 0 && rs->decision_started_id == 0 &&
		rs->previous_started_id == 0 && rs->decision_attempt == 0;
}

/* Called at the end of CloseRun (SetRunClosedHook) */
static void run_closed_unset(RunState *rs, TimestampTz now, const char *status,
							 Jsonb *attributes);
static RunClosedHook run_closed_hook = run_closed_unset;

static void
run_closed_unset(RunState *rs, TimestampTz now, const char *status,
				 Jsonb *attributes)
{
	elog(ERROR, "durable: the workflow lifecycle did not set the run-closed hook");
}

/*
 * Close a run: fail a started decision task, flush buffered events, append
 * the closing event and drop everything pending.  Ready tasks that a poller
 * has claimed meanwhile are skipped (SKIP LOCKED), so that this never waits
 * on a poller; the poller finds them stale.
 *
 * Then the run's pending children get their parent close policy, and, when
 * the chain ends here (any status but continued_as_new), its parent hears of
 * it: run_closed_hook, which the workflow lifecycle sets (SetRunClosedHook;
 * engine/children.c, where neither waits on another run's lock).
 */
void
CloseRun(RunState *rs, TimestampTz now, const char *status,
		 const char *event_type, Jsonb *attributes, Jsonb *result,
		 Jsonb *failure)
{
	Datum		values[lengthof(close_run_columns) + lengthof(unpause_columns)];
	bool		isnull[lengthof(close_run_columns) + lengthof(unpause_columns)];
	const char *columns[lengthof(close_run_columns) + lengthof(unpause_columns)];
	int			ncolumns;
	bool		queued = rs->decision_scheduled_id != 0 &&
		rs->decision_started_id == 0;
	bool		null;
	int			i;

	/* A transient task ends without an event (Cadence's ForceCloseDecision). */
	if (rs->decision_started_id != 0 && !DecisionIsTransient(rs))
	{
		JsonBuilder jb;

		JsonBegin(&jb);
		JsonAddInt(&jb, "scheduledEventId", rs->decision_scheduled_id);
		JsonAddInt(&jb, "startedEventId", rs->decision_started_id);
		JsonAddText(&jb, "cause", "ForceCloseDecision");
		(void) AppendEvent(rs, now, "DecisionTaskFailed", JsonFinish(&jb));
	}
	rs->decision_started_id = 0;
	(void) FlushBufferedEvents(rs);
	(void) AppendEvent(rs, now, event_type, attributes);

	rs->status = pstrdup(status);
	rs->decision_scheduled_id = 0;
	rs->decision_attempt = 0;
	for (i = 0; i < lengthof(closed_statuses); i++)
		if (strcmp(status, closed_statuses[i]) == 0)
			break;
	if (i == lengthof(closed_statuses))
		elog(ERROR, "invalid closed run status \"%s\"", status);

	/*
	 * The row is rewritten without a statement (direct.c); status and
	 * close_time are indexed, so the new version gets its index entries as
	 * an UPDATE's would.
	 */
	memset(isnull, false, sizeof(isnull));
	values[0] = CStringGetTextDatum(status);
	values[1] = TimestampTzGetDatum(now);
	values[2] = result ? JsonbPGetDatum(result) : (Datum) 0;
	isnull[2] = (result == NULL);
	values[3] = failure ? JsonbPGetDatum(failure) : (Datum) 0;
	isnull[3] = (failure == NULL);
	values[4] = Int64GetDatum(rs->last_event_id);
	values[5] = BoolGetDatum(rs->cancel_requested);
	values[6] = Int64GetDatum(0);
	values[7] = Int64GetDatum(0);
	values[8] = Int32GetDatum(0);
	values[9] = (Datum) 0;
	isnull[9] = true;
	values[10] = BoolGetDatum(false);
	memcpy(columns, close_run_columns, sizeof(close_run_columns));
	/* Only an open run is paused (engine/pause.c): the pause ends too. */
	ncolumns = lengthof(close_run_columns);
	if (RunIsPaused(rs))
	{
		for (i = 0; i < lengthof(unpause_columns); i++)
		{
			columns[ncolumns] = unpause_columns[i];
			values[ncolumns] = (Datum) 0;
			isnull[ncolumns++] = true;
		}
		rs->paused = false;
	}
	write_events(rs);
	DirectUpdateRun(&rs->run_id, ncolumns, columns, values, isnull);
	events_written(rs);			/* tasks it queued are moot: dropped */
	WorkflowClosedAtCommit(rs->namespace, rs->workflow_id, &rs->run_id, status);

	/*
	 * Lock order: run, activities, timers.  Activities and user timers are
	 * added only under the run's lock, which we hold: an index probe that
	 * finds none saves the statement (direct.c).
	 */
	values[0] = UUIDPGetDatum(&rs->run_id);
	values[1] = TimestampTzGetDatum(now);
	if (DirectRunHasRows("activities", &rs->run_id))
	{
		RunPlan(&drop_run_activities, values, NULL, false, 1);
		if (DatumGetInt64(SPIGetDatum(0, 1, &null)) > 0)
			queued = true;
		SPI_freetuptable(SPI_tuptable);
	}
	/* Only a task nobody has claimed yet can still be on a queue. */
	if (queued)
		RunPlan(&delete_run_ready_tasks, values, NULL, false, 0);
	if (DirectRunHasRows("user_timers", &rs->run_id))
		RunPlan(&delete_run_user_timers, values, NULL, false, 0);
	DeleteRunTimers(&rs->run_id);

	run_closed_hook(rs, now, status, attributes);
}

/*
 * Set the function CloseRun calls last, once the run is closed: the
 * workflow lifecycle (engine/workflow.c) applies the run's parent close
 * policies there and tells its parent, which are above this module.
 */
void
SetRunClosedHook(RunClosedHook hook)
{
	run_closed_hook = hook;
}

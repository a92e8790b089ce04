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
#include "utils/array.h"
#include "utils/builtins.h"

#include "durable.h"

#define RUN_COLUMNS \
	"run_id, namespace, workflow_id, workflow_type, task_queue, status, " \
	"attempt, cancel_requested, decision_timeout, last_event_id, " \
	"decision_scheduled_id, decision_started_id, decision_attempt, " \
	"decision_started_time, previous_started_id, activity_attempts, " \
	"LEAST(execution_deadline, start_time + run_timeout * interval '1 second'), " \
	"has_buffered, retry_policy IS NOT NULL OR cron_schedule IS NOT NULL, " \
	"parent_run_id, parent_initiated_id, first_run_id"

static KeptPlan load_latest = {
	NULL, "SELECT " RUN_COLUMNS " FROM durable.runs"
	" WHERE namespace = $1 AND workflow_id = $2"
	" ORDER BY run_seq DESC LIMIT 1",
	2, {TEXTOID, TEXTOID}
};
static KeptPlan load_latest_locked = {
	NULL, "SELECT " RUN_COLUMNS " FROM durable.runs"
	" WHERE namespace = $1 AND workflow_id = $2"
	" ORDER BY run_seq DESC LIMIT 1 FOR UPDATE",
	2, {TEXTOID, TEXTOID}
};
static KeptPlan load_given = {
	NULL, "SELECT " RUN_COLUMNS " FROM durable.runs"
	" WHERE run_id = $3 AND namespace = $1 AND workflow_id = $2",
	3, {TEXTOID, TEXTOID, UUIDOID}
};
static KeptPlan load_given_locked = {
	NULL, "SELECT " RUN_COLUMNS " FROM durable.runs"
	" WHERE run_id = $3 AND namespace = $1 AND workflow_id = $2 FOR UPDATE",
	3, {TEXTOID, TEXTOID, UUIDOID}
};
static KeptPlan load_by_id_locked = {
	NULL, "SELECT " RUN_COLUMNS " FROM durable.runs WHERE run_id = $1 FOR UPDATE",
	1, {UUIDOID}
};
static KeptPlan load_by_id_skip_locked = {
	NULL, "SELECT " RUN_COLUMNS " FROM durable.runs"
	" WHERE run_id = $1 FOR UPDATE SKIP LOCKED",
	1, {UUIDOID}
};
/*
 * The events a call appended are written with the run's row, in one
 * statement: a data-modifying CTE inserts them from four arrays.
 */
#define INSERT_EVENTS(ids, times, types, attrs) \
	"INSERT INTO durable.history (run_id, event_id, event_time, event_type," \
	" attributes) SELECT $1, e.i, e.t, e.y, e.a FROM ROWS FROM" \
	" (pg_catalog.unnest(" ids "), pg_catalog.unnest(" times ")," \
	" pg_catalog.unnest(" types "), pg_catalog.unnest(" attrs "))" \
	" AS e(i, t, y, a)"

/* ... and the tasks it queued, from four more arrays */
#define INSERT_READY(queues, kinds, scheduled, attempts) \
	"INSERT INTO durable.ready_tasks (namespace, task_queue, kind, run_id," \
	" scheduled_event_id, attempt) SELECT $2, r.q, r.k::\"char\", $1, r.s, r.a" \
	" FROM ROWS FROM (pg_catalog.unnest(" queues "), pg_catalog.unnest(" kinds ")," \
	" pg_catalog.unnest(" scheduled "), pg_catalog.unnest(" attempts "))" \
	" AS r(q, k, s, a)"

static KeptPlan save_run = {
	NULL, "WITH ev AS (" INSERT_EVENTS("$12", "$13", "$14", "$15") "),"
	" rt AS (" INSERT_READY("$16", "$17", "$18", "$19") ")"
	" UPDATE durable.runs SET cancel_requested = $3, last_event_id = $4,"
	" decision_scheduled_id = $5, decision_started_id = $6,"
	" decision_attempt = $7, decision_started_time = $8,"
	" previous_started_id = $9, activity_attempts = $10, has_buffered = $11"
	" WHERE run_id = $1",
	19, {UUIDOID, TEXTOID, BOOLOID, INT8OID, INT8OID, INT8OID, INT4OID,
		TIMESTAMPTZOID, INT8OID, INT4OID, BOOLOID, INT8ARRAYOID,
		TIMESTAMPTZARRAYOID, TEXTARRAYOID, JSONBARRAYOID, TEXTARRAYOID,
	TEXTARRAYOID, INT8ARRAYOID, INT4ARRAYOID}
};
static KeptPlan close_run = {
	NULL, "WITH ev AS (" INSERT_EVENTS("$8", "$9", "$10", "$11") ")"
	" UPDATE durable.runs SET status = $2, close_time = $3, result = $4,"
	" failure = $5, last_event_id = $6, cancel_requested = $7,"
	" decision_scheduled_id = 0, decision_started_id = 0,"
	" decision_attempt = 0, decision_started_time = NULL, has_buffered = false"
	" WHERE run_id = $1",
	11, {UUIDOID, TEXTOID, TIMESTAMPTZOID, JSONBOID, JSONBOID, INT8OID, BOOLOID,
	INT8ARRAYOID, TIMESTAMPTZARRAYOID, TEXTARRAYOID, JSONBARRAYOID}
};
static KeptPlan insert_events = {
	NULL, "WITH rt AS (" INSERT_READY("$7", "$8", "$9", "$10") ") "
	INSERT_EVENTS("$3", "$4", "$5", "$6"),
	10, {UUIDOID, TEXTOID, INT8ARRAYOID, TIMESTAMPTZARRAYOID, TEXTARRAYOID,
		JSONBARRAYOID, TEXTARRAYOID, TEXTARRAYOID, INT8ARRAYOID,
	INT4ARRAYOID}
};
static KeptPlan buffer_event = {
	NULL, "INSERT INTO durable.buffered_events"
	" (run_id, event_time, event_type, attributes) VALUES ($1, $2, $3, $4)",
	4, {UUIDOID, TIMESTAMPTZOID, TEXTOID, JSONBOID}
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

/* Events appended but not yet written, across every RunState of this call */
static int	unwritten_events = 0;

/* Forget unwritten events: a new API call starts (an error dropped them). */
void
ResetEventBatches(void)
{
	unwritten_events = 0;
}

/* An API call must end with every appended event written. */
void
CheckEventsWritten(void)
{
	if (unwritten_events != 0)
	{
		int			n = unwritten_events;

		unwritten_events = 0;
		elog(ERROR, "durable: %d history events were appended but not written", n);
	}
}

/* The run's pending events as four array datums (ids, times, types, attrs). */
static void
event_arrays(RunState *rs, Datum *values)
{
	EventBatch *b = rs->events;
	int			n = b ? b->n : 0;
	Datum	   *ids = palloc(sizeof(Datum) * (n + 1));
	Datum	   *times = palloc(sizeof(Datum) * (n + 1));
	Datum	   *types = palloc(sizeof(Datum) * (n + 1));
	int			i;

	for (i = 0; i < n; i++)
	{
		ids[i] = Int64GetDatum(b->ids[i]);
		times[i] = TimestampTzGetDatum(b->times[i]);
		types[i] = CStringGetTextDatum(b->types[i]);
	}
	values[0] = PointerGetDatum(construct_array(ids, n, INT8OID, 8,
												FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[1] = PointerGetDatum(construct_array(times, n, TIMESTAMPTZOID, 8,
												FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[2] = PointerGetDatum(construct_array(types, n, TEXTOID, -1, false,
												TYPALIGN_INT));
	values[3] = PointerGetDatum(construct_array(b ? b->attrs : NULL, n, JSONBOID,
												-1, false, TYPALIGN_INT));
}

/* The run's queued tasks as four array datums (queues, kinds, ids, attempts). */
static void
ready_arrays(RunState *rs, Datum *values)
{
	ReadyBatch *b = rs->ready;
	int			n = b ? b->n : 0;
	Datum	   *queues = palloc(sizeof(Datum) * (n + 1));
	Datum	   *kinds = palloc(sizeof(Datum) * (n + 1));
	Datum	   *ids = palloc(sizeof(Datum) * (n + 1));
	Datum	   *attempts = palloc(sizeof(Datum) * (n + 1));
	int			i;

	for (i = 0; i < n; i++)
	{
		char		kind[2] = {b->kinds[i], '\0'};

		queues[i] = CStringGetTextDatum(b->queues[i]);
		kinds[i] = CStringGetTextDatum(kind);
		ids[i] = Int64GetDatum(b->scheduled[i]);
		attempts[i] = Int32GetDatum(b->attempts[i]);
	}
	values[0] = PointerGetDatum(construct_array(queues, n, TEXTOID, -1, false,
												TYPALIGN_INT));
	values[1] = PointerGetDatum(construct_array(kinds, n, TEXTOID, -1, false,
												TYPALIGN_INT));
	values[2] = PointerGetDatum(construct_array(ids, n, INT8OID, 8,
												FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[3] = PointerGetDatum(construct_array(attempts, n, INT4OID, 4, true,
												TYPALIGN_INT));
}

/* The run's pending events and tasks are written (or dropped): forget them. */
static void
events_written(RunState *rs)
{
	if (rs->events != NULL)
	{
		unwritten_events -= rs->events->n;
		rs->events->n = 0;
	}
	if (rs->ready != NULL)
	{
		unwritten_events -= rs->ready->n;
		rs->ready->n = 0;
	}
}

/* Write the run's pending events and tasks now (without touching its row). */
void
FlushEvents(RunState *rs)
{
	Datum		values[10];

	if ((rs->events == NULL || rs->events->n == 0) &&
		(rs->ready == NULL || rs->ready->n == 0))
		return;
	values[0] = UUIDPGetDatum(&rs->run_id);
	values[1] = CStringGetTextDatum(rs->namespace);
	event_arrays(rs, &values[2]);
	ready_arrays(rs, &values[6]);
	RunPlan(&insert_events, values, NULL, false, 0);
	events_written(rs);
}

/* Fill rs from row 0 of the last SPI result (columns RUN_COLUMNS). */
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
	rs->workflow_deadline = DatumGetTimestampTz(SPIGetDatum(0, 17, &isnull));
	if (isnull)
		rs->workflow_deadline = DT_NOEND;
	rs->has_buffered = DatumGetBool(SPIGetDatum(0, 18, &isnull));
	rs->may_continue = DatumGetBool(SPIGetDatum(0, 19, &isnull));
	rs->events = NULL;
	rs->ready = NULL;
	rs->pending_started_id = 0;
	d = SPIGetDatum(0, 20, &isnull);
	rs->has_parent = !isnull;
	if (!isnull)
		memcpy(&rs->parent_run_id, DatumGetUUIDP(d), sizeof(pg_uuid_t));
	d = SPIGetDatum(0, 21, &isnull);
	rs->parent_initiated_id = isnull ? 0 : DatumGetInt64(d);
	memcpy(&rs->first_run_id, DatumGetUUIDP(SPIGetDatum(0, 22, &isnull)),
		   sizeof(pg_uuid_t));
	SPI_freetuptable(SPI_tuptable);
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

	values[0] = CStringGetTextDatum(namespace);
	values[1] = CStringGetTextDatum(workflow_id);
	if (run_id != NULL)
	{
		values[2] = UUIDPGetDatum(run_id);
		kp = for_update ? &load_given_locked : &load_given;
	}
	else
		kp = for_update ? &load_latest_locked : &load_latest;

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

/*
 * Lock and load a run by run_id alone.  With skip_locked, a run whose row is
 * locked by someone else is passed over (false), as is a missing run.
 */
bool
LoadRunById(pg_uuid_t *run_id, bool skip_locked, RunState *rs)
{
	Datum		values[1];

	values[0] = UUIDPGetDatum(run_id);
	if (RunPlan(skip_locked ? &load_by_id_skip_locked : &load_by_id_locked,
				values, NULL, false, 1) == 0)
		return false;
	read_run_row(rs);
	return true;
}

/* Write back the counters and flags a caller may have changed. */
void
SaveRun(RunState *rs)
{
	Datum		values[19];
	char		nulls[19];

	memset(nulls, ' ', sizeof(nulls));
	values[0] = UUIDPGetDatum(&rs->run_id);
	values[1] = CStringGetTextDatum(rs->namespace);
	values[2] = BoolGetDatum(rs->cancel_requested);
	values[3] = Int64GetDatum(rs->last_event_id);
	values[4] = Int64GetDatum(rs->decision_scheduled_id);
	values[5] = Int64GetDatum(rs->decision_started_id);
	values[6] = Int32GetDatum(rs->decision_attempt);
	values[7] = TimestampTzGetDatum(rs->decision_started_time);
	if (rs->decision_started_time_null)
		nulls[7] = 'n';
	values[8] = Int64GetDatum(rs->previous_started_id);
	values[9] = Int32GetDatum(rs->activity_attempts);
	values[10] = BoolGetDatum(rs->has_buffered);
	event_arrays(rs, &values[11]);
	ready_arrays(rs, &values[15]);
	RunPlan(&save_run, values, nulls, false, 0);
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

	if (rs->last_event_id >= durable_max_history_events)
		ereport(ERROR,
				(errcode(ERRCODE_DURABLE_LIMIT_EXCEEDED),
				 errmsg("history of workflow \"%s\" run %s is full",
						rs->workflow_id, UuidToCString(&rs->run_id)),
				 errdetail("It has %lld events; durable.max_history_events is %d.",
						   (long long) rs->last_event_id,
						   durable_max_history_events),
				 errhint("Continue the workflow as a new run before its history fills up.")));

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
	unwritten_events++;
	return rs->last_event_id;
}

/*
 * Append an event from outside the workflow (signal, cancel request, activity
 * outcome).  While a decision task is started it is buffered and appended
 * after that task's DecisionTaskCompleted (rule 12).
 */
void
AppendEventOrBuffer(RunState *rs, TimestampTz now, const char *event_type,
					Jsonb *attributes)
{
	Datum		values[4];

	if (rs->decision_started_id == 0)
	{
		(void) AppendEvent(rs, now, event_type, attributes);
		return;
	}
	values[0] = UUIDPGetDatum(&rs->run_id);
	values[1] = TimestampTzGetDatum(now);
	values[2] = CStringGetTextDatum(event_type);
	values[3] = JsonbPGetDatum(attributes);
	RunPlan(&buffer_event, values, NULL, false, 0);
	rs->has_buffered = true;
}

/* Move the run's buffered events into its history; returns how many. */
int
FlushBufferedEvents(RunState *rs)
{
	Datum		values[1];
	SPITupleTable *tt;
	int			n;
	int			i;

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
		Jsonb	   *attrs;

		t = DatumGetTimestampTz(SPI_getbinval(tt->vals[i], tt->tupdesc, 1, &isnull));
		type = TextDatumGetCString(SPI_getbinval(tt->vals[i], tt->tupdesc, 2, &isnull));
		attrs = DatumGetJsonbP(SPI_getbinval(tt->vals[i], tt->tupdesc, 3, &isnull));
		(void) AppendEvent(rs, t, type, attrs);
	}
	SPI_freetuptable(tt);
	return n;
}

/*
 * Put a task of the run on its queue's ready list.  It is written with the
 * run's row (SaveRun, FlushEvents) and wakes the queue's pollers at commit.
 */
void
EnqueueReadyTask(RunState *rs, const char *task_queue, char kind,
				 const char *type_name, int64 scheduled_event_id,
				 int32 attempt)
{
	ReadyBatch *b;
	Registration reg;

	/* Types registered to SQL functions go to the executors (registry.c). */
	if (kind == 'd' &&
		LookupRegistration('w', rs->namespace, type_name, task_queue, &reg))
		kind = 'w';
	else if (kind == 'a' &&
			 LookupRegistration('x', rs->namespace, type_name, task_queue, &reg))
		kind = 'x';

	if (rs->ready == NULL)
		rs->ready = palloc0(sizeof(ReadyBatch));
	b = rs->ready;
	if (b->n == lengthof(b->queues))
		elog(ERROR, "too many tasks queued by one call");
	b->queues[b->n] = pstrdup(task_queue);
	b->kinds[b->n] = kind;
	b->scheduled[b->n] = scheduled_event_id;
	b->attempts[b->n] = attempt;
	b->n++;
	unwritten_events++;
	WakeQueueAtCommit(rs->namespace, task_queue, kind);
}

/*
 * Schedule a decision task unless one is already scheduled or started (a
 * started one is followed by another when events were buffered meanwhile).
 */
void
ScheduleDecisionTask(RunState *rs, TimestampTz now)
{
	JsonBuilder jb;

	if (rs->decision_scheduled_id != 0)
		return;
	rs->decision_attempt = rs->decision_attempt > 0 ? rs->decision_attempt : 1;

	JsonBegin(&jb);
	JsonAddText(&jb, "taskQueue", rs->task_queue);
	JsonAddFloat(&jb, "startToCloseTimeoutSeconds", rs->decision_timeout);
	JsonAddInt(&jb, "attempt", rs->decision_attempt);
	rs->decision_scheduled_id = AppendEvent(rs, now, "DecisionTaskScheduled",
											JsonFinish(&jb));
	EnqueueReadyTask(rs, rs->task_queue, 'd', rs->workflow_type,
					 rs->decision_scheduled_id, rs->decision_attempt);
}

/*
 * Close a run: fail a started decision task, flush buffered events, append
 * the closing event and drop everything pending.  Ready tasks that a poller
 * has claimed meanwhile are skipped (SKIP LOCKED), so that this never waits
 * on a poller; the poller finds them stale.
 *
 * Then the run's pending children get their parent close policy, and, when
 * the chain ends here (any status but continued_as_new), its parent hears of
 * it (children.c; neither waits on another run's lock).
 */
void
CloseRun(RunState *rs, TimestampTz now, const char *status,
		 const char *event_type, Jsonb *attributes, Jsonb *result,
		 Jsonb *failure)
{
	Datum		values[11];
	char		nulls[11] = "           ";
	bool		queued = rs->decision_scheduled_id != 0 &&
		rs->decision_started_id == 0;
	bool		isnull;

	if (rs->decision_started_id != 0)
	{
		JsonBuilder jb;

		JsonBegin(&jb);
		JsonAddInt(&jb, "scheduledEventId", rs->decision_scheduled_id);
		JsonAddInt(&jb, "startedEventId", rs->decision_started_id);
		JsonAddText(&jb, "cause", "ForceCloseDecision");
		(void) AppendEvent(rs, now, "DecisionTaskFailed", JsonFinish(&jb));
		rs->decision_started_id = 0;
	}
	(void) FlushBufferedEvents(rs);
	(void) AppendEvent(rs, now, event_type, attributes);

	rs->status = pstrdup(status);
	rs->decision_scheduled_id = 0;
	rs->decision_attempt = 0;
	values[0] = UUIDPGetDatum(&rs->run_id);
	values[1] = CStringGetTextDatum(status);
	values[2] = TimestampTzGetDatum(now);
	values[3] = result ? JsonbPGetDatum(result) : (Datum) 0;
	values[4] = failure ? JsonbPGetDatum(failure) : (Datum) 0;
	values[5] = Int64GetDatum(rs->last_event_id);
	values[6] = BoolGetDatum(rs->cancel_requested);
	if (result == NULL)
		nulls[3] = 'n';
	if (failure == NULL)
		nulls[4] = 'n';
	event_arrays(rs, &values[7]);
	RunPlan(&close_run, values, nulls, false, 0);
	events_written(rs);			/* tasks it queued are moot: dropped */

	/* Lock order: run, activities, timers. */
	values[0] = UUIDPGetDatum(&rs->run_id);
	values[1] = TimestampTzGetDatum(now);
	RunPlan(&drop_run_activities, values, NULL, false, 1);
	if (DatumGetInt64(SPIGetDatum(0, 1, &isnull)) > 0)
		queued = true;
	SPI_freetuptable(SPI_tuptable);
	/* Only a task nobody has claimed yet can still be on a queue. */
	if (queued)
		RunPlan(&delete_run_ready_tasks, values, NULL, false, 0);
	RunPlan(&delete_run_user_timers, values, NULL, false, 0);
	DeleteRunTimers(&rs->run_id);

	ApplyParentClosePolicies(rs, now);
	if (rs->has_parent && strcmp(status, "continued_as_new") != 0)
		NotifyParentOfClose(rs, now, status, attributes);
}

/*-------------------------------------------------------------------------
 *
 * reset.c
 *	  Reset and restart: a new run made from an old one by an operator.
 *
 * durable.reset_workflow() is Cadence's ResetWorkflowExecution.  It makes a
 * new run of the same workflow id whose history is the old run's up to the
 * DecisionTaskStarted before a DecisionTaskCompleted (the reset point: the
 * given event, or the run's last one), then:
 *
 *	DecisionTaskFailed {cause ResetWorkflow, reason, baseRunId, newRunId}
 *	WorkflowExecutionSignaled, once for each signal that the old run (and the
 *		runs that continued it) received after the reset point, re-applied
 *	DecisionTaskScheduled (attempt 1)
 *
 * so that the decider decides again from the reset point.  The state the
 * copied history implies is rebuilt: activities scheduled and not ended
 * there are pending again, as a new first attempt queued at the reset (no
 * ActivityTaskStarted is in the copy, since durable writes it only with the
 * activity's outcome, so none of them was started in history, and Cadence
 * re-dispatches those); timers started and not fired or canceled there fire
 * at their original time (at once if it has passed); a cancel request there
 * is kept.  Activities, timers and children started after the point are not
 * carried over.  A point where a child workflow is pending is refused, as
 * Cadence refuses it.  The workflow id's running run, if any, is terminated
 * first, with a reason that names the new run.
 *
 * durable.restart_workflow() starts a new chain of a closed workflow with
 * the old run's type, queue, options and input (or a new input), attempt 1,
 * through StartWorkflowExecution (workflow.c), whose unique index keeps one
 * running run per workflow id.
 *
 * Locks: the workflow id's latest run is locked first (as terminate does),
 * then the run reset from when it is another (closed) one, so that a worker
 * completing a decision of the running run either commits before the reset
 * reads history (and its events are copied or left after the point) or finds
 * its run terminated afterwards (WF005); the isolation spec
 * reset_decision_race shows both orders.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"

#include "durable.h"
#include "base/caller.h"
#include "base/clock.h"
#include "base/json.h"
#include "base/util.h"
#include "store/direct.h"
#include "store/namespaces.h"
#include "store/spi.h"
#include "store/timer_rows.h"
#include "engine/activities.h"
#include "engine/runs.h"
#include "engine/workflow.h"

#define ARG_TEXT(n)		(PG_ARGISNULL(n) ? NULL : PG_GETARG_TEXT_PP(n))
#define ARG_UUID(n)		(PG_ARGISNULL(n) ? NULL : PG_GETARG_UUID_P(n))

/* The events that end a child workflow for its parent */
#define CHILD_END_EVENTS \
	"('StartChildWorkflowExecutionFailed', 'ChildWorkflowExecutionCompleted'," \
	" 'ChildWorkflowExecutionFailed', 'ChildWorkflowExecutionCanceled'," \
	" 'ChildWorkflowExecutionTimedOut', 'ChildWorkflowExecutionTerminated')"

static KeptPlan last_completed = {
	NULL, "SELECT max(event_id) FROM durable.history"
	" WHERE run_id = $1 AND event_type = 'DecisionTaskCompleted'",
	1, {UUIDOID}
};
static KeptPlan get_event = {
	NULL, "SELECT event_type, attributes FROM durable.history"
	" WHERE run_id = $1 AND event_id = $2",
	2, {UUIDOID, INT8OID}
};
static KeptPlan pending_children = {
	NULL, "SELECT count(*) FROM durable.history i"
	" WHERE i.run_id = $1 AND i.event_id < $2"
	" AND i.event_type = 'StartChildWorkflowExecutionInitiated'"
	" AND NOT EXISTS (SELECT 1 FROM durable.history o"
	"   WHERE o.run_id = $1 AND o.event_id < $2"
	"   AND o.event_type IN " CHILD_END_EVENTS
	"   AND (o.attributes->>'initiatedEventId')::int8 = i.event_id)",
	2, {UUIDOID, INT8OID}
};

/*
 * The new run's row, from the old one's: the same workflow, type, queue,
 * input, attempt, options, memo, search attributes and parent; started now
 * (its run and execution timeouts count from the reset); cancel requested if
 * the copied history requested it; history up to the reset point, whose
 * last completed decision task is the poll's previousStartedEventId.
 */
#define INSERT_RESET_RUN_SQL(input_column, input_value, conflict) \
	"INSERT INTO durable.runs (run_id, run_seq, namespace, workflow_id," \
	" workflow_type, task_queue, " input_column "attempt, first_run_id," \
	" chain_start_time, start_time, retry_policy, execution_timeout," \
	" run_timeout, decision_timeout, execution_deadline, cron_schedule, memo," \
	" search_attributes, parent_namespace, parent_workflow_id, parent_run_id," \
	" parent_initiated_id, cancel_requested, last_event_id, activity_attempts," \
	" previous_started_id, reset_from, origin)" \
	" SELECT $2, pg_catalog.nextval('durable.run_seq'), r.namespace," \
	" r.workflow_id, r.workflow_type, r.task_queue, " input_value "r.attempt," \
	" r.first_run_id, $4, $4, r.retry_policy, r.execution_timeout," \
	" r.run_timeout, r.decision_timeout," \
	" CASE WHEN r.execution_timeout IS NOT NULL THEN" \
	"   $4 + pg_catalog.make_interval(secs => LEAST(r.execution_timeout, " \
	DURABLE_MAX_DURATION_SQL ")) END," \
	" r.cron_schedule, r.memo, r.search_attributes, r.parent_namespace," \
	" r.parent_workflow_id, r.parent_run_id, r.parent_initiated_id," \
	" EXISTS (SELECT 1 FROM durable.history h WHERE h.run_id = $1" \
	"   AND h.event_id < $3 AND h.event_type = 'WorkflowExecutionCancelRequested')," \
	" $3 - 1," \
	" (SELECT count(*) FROM durable.history h WHERE h.run_id = $1" \
	"   AND h.event_id < $3 AND h.event_type = 'ActivityTaskScheduled')," \
	" (SELECT COALESCE(max((h.attributes->>'startedEventId')::int8), 0)" \
	"   FROM durable.history h WHERE h.run_id = $1 AND h.event_id < $3" \
	"   AND h.event_type = 'DecisionTaskCompleted')," \
	" $1, $5" \
	" FROM durable.runs r WHERE r.run_id = $1" \
	conflict " RETURNING run_timeout, execution_deadline"
static KeptPlan insert_reset_run = {
	NULL, INSERT_RESET_RUN_SQL("input, ", "r.input, ", RUNS_ONE_RUNNING_CONFLICT),
	5, {UUIDOID, UUIDOID, INT8OID, TIMESTAMPTZOID, JSONBOID}
};
/* From 0.11.0: the input is in the copied WorkflowExecutionStarted only */
static KeptPlan insert_reset_run_v11 = {
	NULL, INSERT_RESET_RUN_SQL("", "", RUNS_ONE_RUNNING_CONFLICT),
	5, {UUIDOID, UUIDOID, INT8OID, TIMESTAMPTZOID, JSONBOID}
};
/* From 0.12.0: on conflict in runs_of_workflow_id (runs.h) */
static KeptPlan insert_reset_run_v12 = {
	NULL, INSERT_RESET_RUN_SQL("", "", RUNS_ONE_RUNNING_CONFLICT_V12),
	5, {UUIDOID, UUIDOID, INT8OID, TIMESTAMPTZOID, JSONBOID}
};
/*
 * The function the old run kept (register_workflow(..., running => 'keep')),
 * which its copied history came from: the new run keeps it too.
 */
static KeptPlan copy_pinned_function = {
	NULL, "UPDATE durable.runs n SET pinned_function = o.pinned_function"
	" FROM durable.runs o WHERE n.run_id = $2 AND o.run_id = $1"
	" AND o.pinned_function IS NOT NULL",
	2, {UUIDOID, UUIDOID}
};
static KeptPlan copy_history = {
	NULL, "INSERT INTO durable.history (run_id, event_id, event_time,"
	" event_type, attributes)"
	" SELECT $2, event_id, event_time, event_type, attributes"
	" FROM durable.history WHERE run_id = $1 AND event_id < $3",
	3, {UUIDOID, UUIDOID, INT8OID}
};

/*
 * The activities pending at the reset point: scheduled in the copied
 * history, with no outcome there.  Their attributes are what
 * ScheduleActivity recorded (timeouts and retry policy resolved).
 */
static KeptPlan rebuild_activities = {
	NULL, "INSERT INTO durable.activities (run_id, scheduled_event_id,"
	" namespace, workflow_id, activity_id, activity_type, task_queue, input,"
	" retry_policy, schedule_to_start_timeout, start_to_close_timeout,"
	" schedule_to_close_timeout, heartbeat_timeout, first_scheduled_time,"
	" scheduled_time, cancel_requested)"
	" SELECT h.run_id, h.event_id, $2, $3, h.attributes->>'activityId',"
	" h.attributes->>'activityType', h.attributes->>'taskQueue',"
	" NULLIF(h.attributes->'input', 'null'::jsonb), h.attributes->'retryPolicy',"
	" (h.attributes->>'scheduleToStartTimeoutSeconds')::float8,"
	" (h.attributes->>'startToCloseTimeoutSeconds')::float8,"
	" (h.attributes->>'scheduleToCloseTimeoutSeconds')::float8,"
	" (h.attributes->>'heartbeatTimeoutSeconds')::float8, $4, $4,"
	" EXISTS (SELECT 1 FROM durable.history c WHERE c.run_id = h.run_id"
	"   AND c.event_id > h.event_id"
	"   AND c.event_type = 'ActivityTaskCancelRequested'"
	"   AND c.attributes->>'activityId' = h.attributes->>'activityId')"
	" FROM durable.history h WHERE h.run_id = $1"
	" AND h.event_type = 'ActivityTaskScheduled'"
	" AND NOT EXISTS (SELECT 1 FROM durable.history o WHERE o.run_id = h.run_id"
	"   AND o.event_type IN ('ActivityTaskCompleted', 'ActivityTaskFailed',"
	"     'ActivityTaskTimedOut', 'ActivityTaskCanceled')"
	"   AND (o.attributes->>'scheduledEventId')::int8 = h.event_id)"
	" RETURNING scheduled_event_id",
	4, {UUIDOID, TEXTOID, TEXTOID, TIMESTAMPTZOID}
};

/* The user timers pending at the reset point, due when they were due. */
static KeptPlan rebuild_timers = {
	NULL, "INSERT INTO durable.user_timers (run_id, timer_id,"
	" started_event_id, fire_time)"
	" SELECT h.run_id, h.attributes->>'timerId', h.event_id,"
	" h.event_time + pg_catalog.make_interval(secs => LEAST("
	"   (h.attributes->>'startToFireTimeoutSeconds')::float8, "
	DURABLE_MAX_DURATION_SQL "))"
	" FROM durable.history h WHERE h.run_id = $1"
	" AND h.event_type = 'TimerStarted'"
	" AND NOT EXISTS (SELECT 1 FROM durable.history o WHERE o.run_id = h.run_id"
	"   AND o.event_type IN ('TimerFired', 'TimerCanceled')"
	"   AND (o.attributes->>'startedEventId')::int8 = h.event_id)"
	" RETURNING started_event_id, fire_time",
	1, {UUIDOID}
};

/*
 * The signals to re-apply: those of the old run from the reset point on,
 * then those of each run that continued it as new, in order (Cadence's
 * resetReapplyType Signal).
 */
static KeptPlan signals_after = {
	NULL, "WITH RECURSIVE chain (run_id, depth) AS ("
	"   SELECT $1::uuid, 0"
	"   UNION ALL"
	"   SELECT r.continued_to, c.depth + 1 FROM durable.runs r"
	"   JOIN chain c ON r.run_id = c.run_id"
	"   WHERE r.continued_to IS NOT NULL AND c.depth < 10000)"
	" SELECT h.attributes->>'signalName', h.attributes->'input',"
	" h.attributes->>'identity'"
	" FROM chain c JOIN durable.history h ON h.run_id = c.run_id"
	" WHERE h.event_type = 'WorkflowExecutionSignaled'"
	" AND (c.depth > 0 OR h.event_id >= $2)"
	" ORDER BY c.depth, h.event_id",
	2, {UUIDOID, INT8OID}
};
static KeptPlan set_reset_to = {
	NULL, "UPDATE durable.runs SET reset_to = $2 WHERE run_id = $1",
	2, {UUIDOID, UUIDOID}
};
#define LOAD_OPTIONS_SQL(input) \
	"SELECT workflow_type, task_queue, " input ", retry_policy," \
	" execution_timeout, run_timeout, decision_timeout, cron_schedule, memo" \
	" FROM durable.runs WHERE run_id = $1"
static KeptPlan load_options = {
	NULL, LOAD_OPTIONS_SQL("input"), 1, {UUIDOID}
};
/* From 0.11.0: the input from WorkflowExecutionStarted */
static KeptPlan load_options_v11 = {
	NULL, LOAD_OPTIONS_SQL(RUN_INPUT_FROM_HISTORY_SQL("$1")), 1, {UUIDOID}
};
static KeptPlan set_restarted = {
	NULL, "WITH o AS (UPDATE durable.runs SET restarted_to = $2"
	"   WHERE run_id = $1)"
	" UPDATE durable.runs SET restarted_from = $1, origin = $3"
	" WHERE run_id = $2",
	3, {UUIDOID, UUIDOID, JSONBOID}
};

/* The reason argument: required, not empty. */
static char *
check_reason(FunctionCallInfo fcinfo, int argno)
{
	char	   *reason;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("reason must not be null"),
				 errhint("Say why, for the history and for whoever reads it later.")));
	reason = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	if (reason[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("reason must not be empty")));
	if (strlen(reason) > DURABLE_MAX_NAME_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("reason must be at most %d bytes", DURABLE_MAX_NAME_LEN)));
	return reason;
}

/*
 * Lock the workflow id's latest run (WF002 when it has none), again until
 * no newer run committed while the lock was awaited: a start, a reset or a
 * ContinueAsNew that committed meanwhile made another run the latest.
 */
static void
lock_latest_run(const char *namespace, const char *workflow_id, RunState *rs)
{
	int			tries;

	for (tries = 0;; tries++)
	{
		RunState	check;

		LoadRunOrError(namespace, workflow_id, NULL, true, rs);
		if (!LoadRun(namespace, workflow_id, NULL, false, false, &check))
			elog(ERROR, "workflow \"%s\" vanished", workflow_id);
		if (memcmp(&check.run_id, &rs->run_id, sizeof(pg_uuid_t)) == 0)
			return;
		if (tries >= 10)
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("workflow \"%s\" keeps getting new runs", workflow_id),
					 errhint("Try again.")));
	}
}

/* Who did it, why, when, from which run (and event): the new run's origin. */
static Jsonb *
origin_object(const char *kind, pg_uuid_t *from, int64 event_id,
			  const char *reason, TimestampTz now)
{
	JsonBuilder jb;

	JsonBegin(&jb);
	JsonAddText(&jb, "kind", kind);
	JsonAddText(&jb, "runId", UuidToCString(from));
	if (event_id > 0)
		JsonAddInt(&jb, "eventId", event_id);
	JsonAddText(&jb, "reason", reason);
	JsonAddText(&jb, "identity", CallerIdentity());
	JsonAddTimestamp(&jb, "time", now);
	return JsonFinish(&jb);
}

/*
 * The reset point of the base run: event_id when given (22023 unless it is
 * one of the run's DecisionTaskCompleted events), else the run's last
 * DecisionTaskCompleted (55000 when it has none).  Returns the id of that
 * event and sets the decision task's scheduled and started ids.
 */
static int64
reset_point(RunState *base, int64 event_id, bool given, int64 *scheduled_id,
			int64 *started_id)
{
	Datum		values[2];
	bool		isnull;
	Datum		d;
	char	   *type;
	Jsonb	   *attrs;
	JsonbValue *v;

	values[0] = UUIDPGetDatum(&base->run_id);
	if (!given)
	{
		RunPlan(&last_completed, values, NULL, false, 1);
		d = SPIGetDatum(0, 1, &isnull);
		event_id = isnull ? 0 : DatumGetInt64(d);
		SPI_freetuptable(SPI_tuptable);
		if (event_id == 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("workflow \"%s\" run %s has no DecisionTaskCompleted to reset to",
							base->workflow_id, UuidToCString(&base->run_id)),
					 errdetail("A reset replays history up to a completed decision task; this run never completed one."),
					 errhint("Use durable.restart_workflow() to run it again from the start.")));
	}
	values[1] = Int64GetDatum(event_id);
	if (RunPlan(&get_event, values, NULL, false, 1) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("event_id %lld is not an event of workflow \"%s\" run %s",
						(long long) event_id, base->workflow_id,
						UuidToCString(&base->run_id)),
				 errdetail("Its history has events 1 to %lld.",
						   (long long) base->last_event_id)));
	type = SPIGetText(0, 1);
	attrs = SPIGetJsonbCopy(0, 2);
	SPI_freetuptable(SPI_tuptable);
	if (strcmp(type, "DecisionTaskCompleted") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("event_id %lld of workflow \"%s\" run %s is not a DecisionTaskCompleted event",
						(long long) event_id, base->workflow_id,
						UuidToCString(&base->run_id)),
				 errdetail("It is %s.", type),
				 errhint("A run is reset to one of its DecisionTaskCompleted events.")));
	v = attrs ? JsonGetField(attrs, "scheduledEventId") : NULL;
	*scheduled_id = (v && v->type == jbvNumeric) ?
		DatumGetInt64(DirectFunctionCall1(numeric_int8, NumericGetDatum(v->val.numeric))) : 0;
	v = attrs ? JsonGetField(attrs, "startedEventId") : NULL;
	*started_id = (v && v->type == jbvNumeric) ?
		DatumGetInt64(DirectFunctionCall1(numeric_int8, NumericGetDatum(v->val.numeric))) : 0;
	if (*started_id != event_id - 1 || *scheduled_id <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("event_id %lld of workflow \"%s\" run %s does not follow its DecisionTaskStarted",
						(long long) event_id, base->workflow_id,
						UuidToCString(&base->run_id)),
				 errdetail("A run can be reset only to a DecisionTaskCompleted that follows its DecisionTaskStarted.")));

	/* Cadence refuses a point where a child is pending, and so do we. */
	RunPlan(&pending_children, values, NULL, false, 1);
	d = SPIGetDatum(0, 1, &isnull);
	if (DatumGetInt64(d) > 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot reset workflow \"%s\" run %s to event_id %lld: child workflows are pending there",
						base->workflow_id, UuidToCString(&base->run_id),
						(long long) event_id),
				 errhint("Reset to a DecisionTaskCompleted before the child was started or after it closed.")));
	SPI_freetuptable(SPI_tuptable);
	return event_id;
}

/*
 * Lock the workflow id's latest run, then load the run named (the latest
 * when run_id is NULL or names it), locked when lock_base: the order both
 * reset and restart take their locks in.
 */
static void
lock_runs(const char *namespace, const char *workflow_id, pg_uuid_t *run_id,
		  bool lock_base, RunState *latest, RunState *base)
{
	lock_latest_run(namespace, workflow_id, latest);
	if (run_id == NULL ||
		memcmp(run_id, &latest->run_id, sizeof(pg_uuid_t)) == 0)
		*base = *latest;
	else
		LoadRunOrError(namespace, workflow_id, run_id, lock_base, base);
}

PG_FUNCTION_INFO_V1(durable_reset_workflow);
/*
 * durable.reset_workflow(workflow_id, reason, namespace, run_id, event_id):
 * the new run's id.  See the head of this file.
 */
Datum
durable_reset_workflow(PG_FUNCTION_ARGS)
{
	char	   *workflow_id = CheckName(ARG_TEXT(0), "workflow_id");
	char	   *reason = check_reason(fcinfo, 1);
	char	   *namespace = CheckName(ARG_TEXT(2), "namespace");
	pg_uuid_t  *run_id = ARG_UUID(3);
	bool		event_given = !PG_ARGISNULL(4);
	int64		event_id = event_given ? PG_GETARG_INT64(4) : 0;
	TimestampTz now = DurableNow();
	pg_uuid_t  *new_run_id = NewTimeOrderedUuid();
	pg_uuid_t  *result = palloc(sizeof(pg_uuid_t));
	RunState	latest;
	RunState	base;
	RunState	rs;
	int64		point;
	int64		scheduled_id;
	int64		started_id;
	Datum		values[5];
	char		nulls[5];
	bool		isnull;
	Datum		d;
	double		run_timeout;
	TimestampTz exec_deadline;
	uint64		n;
	uint64		i;
	int64	   *ids;
	TimestampTz *times;
	JsonBuilder jb;

	RequireWritableTransaction("durable.reset_workflow()");
	if (event_given && event_id <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("event_id must be positive")));

	DurableSPIConnect();
	CheckNamespacePrivilege(namespace, NSPRIV_CLIENT);

	/* The running run (if any) first, then the run reset from. */
	lock_runs(namespace, workflow_id, run_id, true, &latest, &base);

	/* A running run ends first: its history is then final. */
	if (RunIsOpen(&latest))
	{
		JsonBegin(&jb);
		JsonAddText(&jb, "newRunId", UuidToCString(new_run_id));
		JsonAddText(&jb, "baseRunId", UuidToCString(&base.run_id));
		TerminateRun(&latest,
					 now, psprintf("reset to run %s: %s",
								   UuidToCString(new_run_id), reason),
					 JsonFinish(&jb));
		if (memcmp(&base.run_id, &latest.run_id, sizeof(pg_uuid_t)) == 0)
			base.last_event_id = latest.last_event_id;
	}
	point = reset_point(&base, event_id, event_given, &scheduled_id,
						&started_id);

	/* The new run's row, then its history up to the point. */
	values[0] = UUIDPGetDatum(&base.run_id);
	values[1] = UUIDPGetDatum(new_run_id);
	values[2] = Int64GetDatum(point);
	values[3] = TimestampTzGetDatum(now);
	values[4] = JsonbPGetDatum(origin_object("reset", &base.run_id, point,
											 reason, now));
	if (RunPlan(RunRowHasInput() ? &insert_reset_run :
				RunsOfWorkflowIdIndexed() ? &insert_reset_run_v12 :
				&insert_reset_run_v11, values, NULL, false, 1) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DURABLE_ALREADY_STARTED),
				 errmsg("workflow execution already started: workflow \"%s\" in namespace \"%s\" got a new run while it was reset",
						workflow_id, namespace),
				 errhint("Look at its runs and reset again if needed.")));
	d = SPIGetDatum(0, 1, &isnull);
	run_timeout = isnull ? 0 : DatumGetFloat8(d);
	d = SPIGetDatum(0, 2, &isnull);
	exec_deadline = isnull ? DT_NOEND : DatumGetTimestampTz(d);
	SPI_freetuptable(SPI_tuptable);
	RunPlan(&copy_history, values, NULL, false, 0);
	if (DurableColumnExists("runs", "pinned_function"))
		RunPlan(&copy_pinned_function, values, NULL, false, 0);

	if (!LoadRunById(new_run_id, false, &rs))
		elog(ERROR, "run %s vanished", UuidToCString(new_run_id));

	/* Pending activities and timers as of the point. */
	values[0] = UUIDPGetDatum(new_run_id);
	values[1] = CStringGetTextDatum(namespace);
	values[2] = CStringGetTextDatum(workflow_id);
	values[3] = TimestampTzGetDatum(now);
	n = RunPlan(&rebuild_activities, values, NULL, false, 0);
	ids = palloc(sizeof(int64) * (n + 1));
	for (i = 0; i < n; i++)
		ids[i] = DatumGetInt64(SPIGetDatum(i, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	for (i = 0; i < n; i++)
	{
		RequeueActivity(&rs, ids[i]);
		if (i % 32 == 31)
			FlushEvents(&rs);
	}

	n = RunPlan(&rebuild_timers, values, NULL, false, 0);
	ids = palloc(sizeof(int64) * (n + 1));
	times = palloc(sizeof(TimestampTz) * (n + 1));
	for (i = 0; i < n; i++)
	{
		ids[i] = DatumGetInt64(SPIGetDatum(i, 1, &isnull));
		times[i] = DatumGetTimestampTz(SPIGetDatum(i, 2, &isnull));
	}
	SPI_freetuptable(SPI_tuptable);
	for (i = 0; i < n; i++)
		CreateTimer(new_run_id, TIMER_USER, times[i], ids[i], 0);

	/* The decision task of the point fails, as Cadence records it. */
	JsonBegin(&jb);
	JsonAddInt(&jb, "scheduledEventId", scheduled_id);
	JsonAddInt(&jb, "startedEventId", started_id);
	JsonAddText(&jb, "cause", "ResetWorkflow");
	JsonAddText(&jb, "reason", reason);
	JsonAddText(&jb, "baseRunId", UuidToCString(&base.run_id));
	JsonAddText(&jb, "newRunId", UuidToCString(new_run_id));
	JsonAddText(&jb, "identity", CallerIdentity());
	(void) AppendEvent(&rs, now, "DecisionTaskFailed", JsonFinish(&jb));

	/* Signals received after the point, re-applied. */
	memset(nulls, ' ', sizeof(nulls));
	values[0] = UUIDPGetDatum(&base.run_id);
	values[1] = Int64GetDatum(point);
	n = RunPlan(&signals_after, values, NULL, false, 0);
	if (n > 0)
	{
		Jsonb	  **sigs = palloc(sizeof(Jsonb *) * n);

		for (i = 0; i < n; i++)
		{
			char	   *identity = SPIGetText(i, 3);

			JsonBegin(&jb);
			JsonAddText(&jb, "signalName", SPIGetText(i, 1));
			JsonAddJsonb(&jb, "input", SPIGetJsonbCopy(i, 2));
			if (identity != NULL)
				JsonAddText(&jb, "identity", identity);
			sigs[i] = JsonFinish(&jb);
		}
		SPI_freetuptable(SPI_tuptable);
		for (i = 0; i < n; i++)
		{
			(void) AppendEvent(&rs, now, "WorkflowExecutionSignaled", sigs[i]);
			if (i % 256 == 255)
				FlushEvents(&rs);
		}
	}
	else
		SPI_freetuptable(SPI_tuptable);

	rs.decision_attempt = 0;
	ScheduleDecisionTask(&rs, now);
	SaveRun(&rs);
	if (run_timeout > 0)
		CreateTimer(new_run_id, TIMER_RUN_TIMEOUT,
					TimestampPlusSeconds(now, run_timeout), 0, 0);
	if (exec_deadline != DT_NOEND)
		CreateTimer(new_run_id, TIMER_EXECUTION_TIMEOUT, exec_deadline, 0, 0);

	values[0] = UUIDPGetDatum(&base.run_id);
	values[1] = UUIDPGetDatum(new_run_id);
	RunPlan(&set_reset_to, values, NULL, false, 0);

	memcpy(result, new_run_id, sizeof(pg_uuid_t));
	DurableSPIFinish();
	PG_RETURN_UUID_P(result);
}

PG_FUNCTION_INFO_V1(durable_restart_workflow);
/*
 * durable.restart_workflow(workflow_id, reason, namespace, run_id, input):
 * a new chain of a closed workflow, with the run's type, queue, options and
 * input (or input), attempt 1.  WF001 while the workflow id is running.
 */
Datum
durable_restart_workflow(PG_FUNCTION_ARGS)
{
	char	   *workflow_id = CheckName(ARG_TEXT(0), "workflow_id");
	char	   *reason = check_reason(fcinfo, 1);
	char	   *namespace = CheckName(ARG_TEXT(2), "namespace");
	pg_uuid_t  *run_id = ARG_UUID(3);
	Jsonb	   *input = PG_ARGISNULL(4) ? NULL : PG_GETARG_JSONB_P(4);
	TimestampTz now = DurableNow();
	pg_uuid_t  *result = palloc(sizeof(pg_uuid_t));
	pg_uuid_t  *new_run_id;
	RunState	latest;
	RunState	base;
	StartRequest req;
	Datum		values[3];
	bool		isnull;
	Datum		d;

	RequireWritableTransaction("durable.restart_workflow()");
	CheckPayload(input, "input");

	DurableSPIConnect();
	CheckNamespacePrivilege(namespace, NSPRIV_CLIENT);

	lock_runs(namespace, workflow_id, run_id, false, &latest, &base);
	if (RunIsOpen(&latest))
		ereport(ERROR,
				(errcode(ERRCODE_DURABLE_ALREADY_STARTED),
				 errmsg("workflow execution already started: workflow \"%s\" in namespace \"%s\" is running as run %s",
						workflow_id, namespace, UuidToCString(&latest.run_id)),
				 errdetail("A restart starts a workflow that has closed."),
				 errhint("Terminate it first, or reset it with durable.reset_workflow().")));

	memset(&req, 0, sizeof(req));
	values[0] = UUIDPGetDatum(&base.run_id);
	if (RunPlan(RunRowHasInput() ? &load_options : &load_options_v11,
				values, NULL, false, 1) != 1)
		elog(ERROR, "run %s vanished", UuidToCString(&base.run_id));
	req.namespace = namespace;
	req.workflow_id = workflow_id;
	req.workflow_type = SPIGetText(0, 1);
	req.task_queue = SPIGetText(0, 2);
	req.input = input != NULL ? input : SPIGetJsonbCopy(0, 3);
	req.retry_policy = SPIGetJsonbCopy(0, 4);
	d = SPIGetDatum(0, 5, &isnull);
	req.execution_timeout = isnull ? 0 : DatumGetFloat8(d);
	d = SPIGetDatum(0, 6, &isnull);
	req.run_timeout = isnull ? 0 : DatumGetFloat8(d);
	req.decision_timeout = DatumGetFloat8(SPIGetDatum(0, 7, &isnull));
	req.cron_schedule = SPIGetText(0, 8);
	req.memo = SPIGetJsonbCopy(0, 9);
	SPI_freetuptable(SPI_tuptable);
	req.id_reuse_policy = ID_REUSE_ALLOW_DUPLICATE;
	req.restarted_from = &base.run_id;
	req.restart_reason = reason;
	/* The restarted run keeps its priority and concurrency key. */
	req.priority = base.priority;
	req.concurrency_key = base.concurrency_key;

	new_run_id = StartWorkflowExecution(&req, now);

	values[0] = UUIDPGetDatum(&base.run_id);
	values[1] = UUIDPGetDatum(new_run_id);
	values[2] = JsonbPGetDatum(origin_object("restart", &base.run_id, 0,
											 reason, now));
	RunPlan(&set_restarted, values, NULL, false, 0);

	memcpy(result, new_run_id, sizeof(pg_uuid_t));
	DurableSPIFinish();
	PG_RETURN_UUID_P(result);
}

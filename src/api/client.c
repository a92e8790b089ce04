/*-------------------------------------------------------------------------
 *
 * client.c
 *	  The client API: start, signal, cancel, terminate, describe.
 *
 * Each function checks all its arguments first, then does its work in the
 * caller's transaction: an error anywhere changes nothing.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"

#include "durable.h"
#include "base/backoff.h"
#include "base/caller.h"
#include "base/clock.h"
#include "base/cron.h"
#include "base/json.h"
#include "base/util.h"
#include "store/direct.h"
#include "store/namespaces.h"
#include "store/pollers.h"
#include "store/registry.h"
#include "store/spi.h"
#include "store/wait.h"
#include "engine/children.h"
#include "engine/decision_task.h"
#include "engine/pause.h"
#include "engine/runs.h"
#include "engine/workflow.h"
#include "sqlwf/executor.h"
#include "sqlwf/replay.h"
#include "api/worker.h"

static Jsonb *poller_warnings(RunState *rs);
#define ARG_TEXT(n)		(PG_ARGISNULL(n) ? NULL : PG_GETARG_TEXT_PP(n))
#define ARG_JSONB(n)	(PG_ARGISNULL(n) ? NULL : PG_GETARG_JSONB_P(n))
#define ARG_UUID(n)		(PG_ARGISNULL(n) ? NULL : PG_GETARG_UUID_P(n))

/*
 * The seconds from an activity's first schedule to its expiration, or
 * 'Infinity'; the plan bounds it by DURABLE_MAX_DURATION_SECS, so that a
 * timeout stored by an older version cannot make make_interval overflow.
 */
#define EXPIRATION_SECS \
	"LEAST(COALESCE(a.schedule_to_close_timeout, 'Infinity'::float8)," \
	" COALESCE(NULLIF((a.retry_policy->>'expirationIntervalInSeconds')::float8, 0)," \
	" 'Infinity'::float8))"

/*
 * The deadline of run r, which also ends its activities' retries (docs/api.md
 * "Activities: retries, timeouts, heartbeats"): its execution deadline or
 * its run deadline, whichever is earlier (LEAST skips a NULL).  The run
 * deadline is run_deadline when the database has it (0.4.0) and it is set,
 * else start_time + run_timeout, bounded as every duration is; NULL when
 * the run has neither timeout (LEAST would otherwise take the bound).
 */
#define WORKFLOW_DEADLINE \
	"r.execution_deadline," \
	" COALESCE((pg_catalog.to_jsonb(r) ->> 'run_deadline')::timestamptz," \
	"   CASE WHEN r.run_timeout IS NOT NULL THEN" \
	"   r.start_time + pg_catalog.make_interval(secs => LEAST(r.run_timeout," \
	"   " DURABLE_MAX_DURATION_SQL ")) END)"

/* describe_workflow's object for run r */
#define DESCRIBE_OBJECT \
	"pg_catalog.jsonb_build_object(" \
	" 'namespace', r.namespace, 'workflowId', r.workflow_id," \
	" 'runId', r.run_id, 'workflowType', r.workflow_type," \
	" 'taskQueue', r.task_queue, 'status', r.status, 'attempt', r.attempt," \
	" 'startTime', r.start_time, 'closeTime', r.close_time," \
	" 'result', r.result, 'failure', r.failure," \
	" 'parent', CASE WHEN r.parent_run_id IS NULL THEN NULL ELSE" \
	"   pg_catalog.jsonb_build_object('namespace', r.parent_namespace," \
	"     'workflowId', r.parent_workflow_id, 'runId', r.parent_run_id," \
	"     'initiatedEventId', r.parent_initiated_id) END," \
	" 'memo', r.memo," \
	" 'searchAttributes', r.search_attributes," \
	" 'pendingActivities', COALESCE((SELECT pg_catalog.jsonb_agg(" \
	"   pg_catalog.jsonb_build_object(" \
	"     'activityId', a.activity_id, 'activityType', a.activity_type," \
	"     'state', a.state, 'attempt', a.attempt," \
	"     'maximumAttempts', COALESCE(a.retry_policy->'maximumAttempts', '1')," \
	"     'scheduledTime', a.scheduled_time," \
	"     'lastStartedTime', a.started_time," \
	"     'lastHeartbeatTime', a.last_heartbeat_time," \
	"     'heartbeatDetails', a.heartbeat_details," \
	"     'lastFailureReason', a.last_failure_reason," \
	"     'lastFailureDetails', a.last_failure_details," \
	"     'expirationTime', LEAST(a.first_scheduled_time + pg_catalog.make_interval(" \
	"        secs => CASE WHEN " EXPIRATION_SECS " = 'Infinity' THEN NULL" \
	"          ELSE LEAST(" EXPIRATION_SECS ", " DURABLE_MAX_DURATION_SQL ") END)," \
	"        " WORKFLOW_DEADLINE ")," \
	"     'nextAttemptScheduledTime', a.next_attempt_time," \
	"     'lastWorkerIdentity', a.last_worker_identity)" \
	"   ORDER BY a.scheduled_event_id)" \
	"   FROM durable.activities a WHERE a.run_id = r.run_id), '[]')," \
	" 'pendingChildren', COALESCE((SELECT pg_catalog.jsonb_agg(c.child" \
	"   ORDER BY c.initiated) FROM (" \
	"   SELECT c.initiated_event_id AS initiated," \
	"     pg_catalog.jsonb_build_object('namespace', c.namespace," \
	"     'workflowId', c.workflow_id, 'runId', c.run_id," \
	"     'workflowType', c.workflow_type," \
	"     'initiatedEventId', c.initiated_event_id," \
	"     'startedEventId', c.started_event_id," \
	"     'parentClosePolicy', c.parent_close_policy) AS child" \
	"   FROM durable.children c WHERE c.parent_run_id = r.run_id" \
	/* a start in the outbox, for the node that owns the child's id */ \
	"   UNION ALL SELECT t.ref_id, pg_catalog.jsonb_build_object(" \
	"     'namespace', t.payload ->> 'namespace'," \
	"     'workflowId', t.payload ->> 'workflowId', 'runId', NULL," \
	"     'workflowType', t.payload ->> 'workflowType'," \
	"     'initiatedEventId', t.ref_id, 'startedEventId', NULL," \
	"     'parentClosePolicy', t.payload ->> 'parentClosePolicy')" \
	"   FROM durable.timers t WHERE t.run_id = r.run_id" \
	"   AND t.kind = 'external' AND r.status = 'running'" \
	"   AND t.payload ->> 'kind' = 'start_child') c), '[]')," \
	" 'pendingTimers', COALESCE((SELECT pg_catalog.jsonb_agg(" \
	"   pg_catalog.jsonb_build_object('timerId', t.timer_id," \
	"     'startedEventId', t.started_event_id, 'fireTime', t.fire_time)" \
	"   ORDER BY t.started_event_id)" \
	"   FROM durable.user_timers t WHERE t.run_id = r.run_id), '[]')," \
	" 'cancelRequested', r.cancel_requested," \
	" 'historyLength', r.last_event_id," \
	" 'retryPolicy', r.retry_policy," \
	" 'cronSchedule', r.cron_schedule," \
	" 'executionTimeoutSeconds', r.execution_timeout," \
	" 'runTimeoutSeconds', r.run_timeout," \
	" 'decisionTimeoutSeconds', r.decision_timeout," \
	" 'firstRunId', r.first_run_id," \
	" 'continuedFrom', r.continued_from, 'continuedTo', r.continued_to)"

static KeptPlan describe_plan = {
	NULL, "SELECT " DESCRIBE_OBJECT " FROM durable.runs r WHERE r.run_id = $1",
	1, {UUIDOID}
};
/*
 * From 0.3.0, with taskFailure when a task of the run failed in the engine
 * and is being retried (executor.c).
 */
static KeptPlan describe_plan_v3 = {
	NULL, "SELECT " DESCRIBE_OBJECT " || COALESCE((SELECT"
	"   pg_catalog.jsonb_build_object('taskFailure',"
	"     pg_catalog.jsonb_build_object("
	"       'taskType', CASE t.kind WHEN 'w' THEN 'decision' ELSE 'activity' END,"
	"       'scheduledEventId', t.scheduled_event_id,"
	"       'attempts', t.failures, 'lastError', t.last_error,"
	"       'nextAttemptTime', t.not_before))"
	"   FROM durable.ready_tasks t WHERE t.run_id = r.run_id"
	"   AND t.kind IN ('w', 'x') AND t.failures > 0"
	"   ORDER BY t.task_id LIMIT 1), '{}')"
	" FROM durable.runs r WHERE r.run_id = $1",
	1, {UUIDOID}
};

/*
 * From 0.4.0, describe_workflow's links of reset and restart (reset.c): the
 * run reset or restarted from, the latest run reset or restarted to, and
 * the new run's origin (who, why, when).
 */
static KeptPlan describe_links = {
	NULL, "SELECT $2 || pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object("
	" 'resetFrom', r.reset_from, 'resetTo', r.reset_to,"
	" 'restartedFrom', r.restarted_from, 'restartedTo', r.restarted_to,"
	" 'origin', r.origin))"
	" FROM durable.runs r WHERE r.run_id = $1",
	2, {UUIDOID, JSONBOID}
};

/*
 * The SQL function a run replays with (0.7.0): the one it keeps
 * (register_workflow(..., running => 'keep')), or its registration's; no key
 * for a type no function runs on its queue.  Text as regprocedure prints it
 * with only pg_catalog in the path: schema-qualified.
 */
static KeptPlan describe_function = {
	NULL, "SELECT $2 || CASE WHEN x.f IS NULL THEN '{}'::pg_catalog.jsonb"
	" ELSE pg_catalog.jsonb_build_object('function', x.f::pg_catalog.text,"
	"   'functionPinned', r.pinned_function IS NOT NULL) END"
	" FROM durable.runs r, LATERAL (SELECT COALESCE(r.pinned_function,"
	"   (SELECT g.function FROM durable.registrations g"
	"     WHERE g.namespace = r.namespace AND g.kind = 'workflow'"
	"     AND g.type_name = r.workflow_type AND g.task_queue = r.task_queue))"
	"   AS f) x"
	" WHERE r.run_id = $1",
	2, {UUIDOID, JSONBOID}
};

/*
 * priority and concurrencyKey: those of the run's tasks, when it has either
 * (0.9.0: docs/task-queues.md "Priorities and fairness"): a run with a key
 * shows its priority, 3 by default; both are left out for priority 3 and no
 * key.
 */
static KeptPlan describe_order = {
	NULL, "SELECT $2 || pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object("
	"   'priority', COALESCE(r.priority, 3), 'concurrencyKey', r.concurrency_key))"
	" FROM durable.runs r WHERE r.run_id = $1",
	2, {UUIDOID, JSONBOID}
};

/*
 * taskQueuePaused: true when the run's task queue is paused (0.7.0,
 * store/queue_pause.c): its tasks are queued and not handed out until the
 * queue is resumed.  Left out otherwise, so that the description of a run
 * on a queue that was never paused is what it was before.
 */
static KeptPlan describe_paused = {
	NULL, "SELECT CASE WHEN EXISTS (SELECT 1 FROM durable.paused_task_queues p"
	"   WHERE p.namespace = r.namespace AND p.task_queue = r.task_queue)"
	" THEN $2 || '{\"taskQueuePaused\": true}'::pg_catalog.jsonb ELSE $2 END"
	" FROM durable.runs r WHERE r.run_id = $1",
	2, {UUIDOID, JSONBOID}
};

/*
 * paused: {at, by, reason} while the run is paused (0.8.0, engine/pause.c):
 * its tasks are held until it is resumed.  Left out otherwise, as
 * taskQueuePaused is.
 */
static KeptPlan describe_run_paused = {
	NULL, "SELECT CASE WHEN r.paused_at IS NULL THEN $2"
	" ELSE $2 || pg_catalog.jsonb_build_object('paused',"
	"   pg_catalog.jsonb_build_object('at', r.paused_at, 'by', r.paused_by,"
	"     'reason', r.pause_reason)) END"
	" FROM durable.runs r WHERE r.run_id = $1",
	2, {UUIDOID, JSONBOID}
};

/*
 * The options that start_workflow and signal_with_start share, from argument
 * first on: task_queue, namespace, retry_policy, id_reuse_policy,
 * execution_timeout, run_timeout, decision_timeout, cron_schedule, delay,
 * memo, search_attributes.  search_attributes came in 0.6.0: the functions
 * of an older schema, which the library may serve until the update, have
 * one argument fewer.
 */
static void
read_start_options(FunctionCallInfo fcinfo, int first, StartRequest *req)
{
	req->task_queue = CheckName(ARG_TEXT(first), "task_queue");
	req->namespace = CheckName(ARG_TEXT(first + 1), "namespace");
	if (!PG_ARGISNULL(first + 2))
	{
		RetryPolicy policy;

		ParseRetryPolicy(PG_GETARG_JSONB_P(first + 2), "retry_policy", &policy);
		req->retry_policy = RetryPolicyToJsonb(&policy);
	}
	req->id_reuse_policy = ParseIdReusePolicy(CheckName(ARG_TEXT(first + 3),
														"id_reuse_policy"),
											  "id_reuse_policy");
	if (!PG_ARGISNULL(first + 4))
		req->execution_timeout = IntervalToSeconds(PG_GETARG_INTERVAL_P(first + 4),
												   "execution_timeout", false);
	if (!PG_ARGISNULL(first + 5))
		req->run_timeout = IntervalToSeconds(PG_GETARG_INTERVAL_P(first + 5),
											 "run_timeout", false);
	req->decision_timeout = 10;
	if (!PG_ARGISNULL(first + 6))
		req->decision_timeout = IntervalToSeconds(PG_GETARG_INTERVAL_P(first + 6),
												  "decision_timeout", false);
	if (!PG_ARGISNULL(first + 7))
	{
		CronSchedule sched;

		req->cron_schedule = CheckName(PG_GETARG_TEXT_PP(first + 7), "cron_schedule");
		CronParse(req->cron_schedule, "cron_schedule", &sched);
	}
	if (!PG_ARGISNULL(first + 8))
		req->delay = IntervalToSeconds(PG_GETARG_INTERVAL_P(first + 8), "delay", true);
	if (req->cron_schedule != NULL && req->delay > 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("delay cannot be combined with cron_schedule"),
				 errdetail("A cron workflow's first run waits for the schedule's next fire time.")));
	req->memo = ARG_JSONB(first + 9);
	CheckObject(req->memo, "memo");
	if (PG_NARGS() > first + 10)
	{
		req->search_attributes = ARG_JSONB(first + 10);
		CheckObject(req->search_attributes, "search_attributes");
	}
}

/*
 * The new run's priority and concurrency key, arguments argno and argno + 1
 * (0.9.0: the functions of an older schema have neither).
 */
static void
read_start_order(FunctionCallInfo fcinfo, int argno, StartRequest *req)
{
	if (PG_NARGS() <= argno + 1)
		return;
	if (!PG_ARGISNULL(argno))
		req->priority = CheckPriority(PG_GETARG_INT32(argno), "priority");
	if (!PG_ARGISNULL(argno + 1))
		req->concurrency_key =
			CheckConcurrencyKey(text_to_cstring(PG_GETARG_TEXT_PP(argno + 1)),
								"concurrency_key");
}

/*
 * The arguments start_workflow and start_workflow_eager share:
 * workflow_type, input, workflow_id (a new time-ordered uuid when NULL), then the
 * start options.
 */
static void
read_start_arguments(FunctionCallInfo fcinfo, StartRequest *req)
{
	memset(req, 0, sizeof(*req));
	req->workflow_type = CheckName(ARG_TEXT(0), "workflow_type");
	req->input = ARG_JSONB(1);
	CheckPayload(req->input, "input");
	if (PG_ARGISNULL(2))
		req->workflow_id = UuidToCString(NewTimeOrderedUuid());
	else
		req->workflow_id = CheckName(PG_GETARG_TEXT_PP(2), "workflow_id");
	read_start_options(fcinfo, 3, req);
}

/*
 * Start the first decision task of the run just started for the poll that
 * was reserved for it (HandOverTakenDecision, api/worker.c).  When the start
 * did not schedule it for the caller (a delay, a cron schedule, a SQL
 * workflow's task, a paused or limited queue, a run that existed already) it
 * was queued as usual, and the poll goes back to its claims.
 */
static void
hand_over_first_decision(StartRequest *req, pg_uuid_t *run_id,
						 TimestampTz now, const char *identity)
{
	RunState	rs;

	if (!req->decision_taken)
	{
		CancelPollerReservation();
		return;
	}
	/* The run is ours, inserted just now: its task starts as a poll's. */
	if (!LoadRunById(run_id, false, &rs))
		elog(ERROR, "the run %s just started is missing", UuidToCString(run_id));
	rs.decision_taken = true;
	(void) HandOverTakenDecision(&rs, now, identity);
}

PG_FUNCTION_INFO_V1(durable_start_workflow);
/*
 * durable.start_workflow(workflow_type, input, workflow_id, task_queue,
 *		namespace, retry_policy, id_reuse_policy, execution_timeout,
 *		run_timeout, decision_timeout, cron_schedule, delay, memo,
 *		search_attributes, priority, concurrency_key)
 */
Datum
durable_start_workflow(PG_FUNCTION_ARGS)
{
	StartRequest req;
	pg_uuid_t  *result = palloc(sizeof(pg_uuid_t));
	pg_uuid_t  *run_id;
	TimestampTz now;
	char		poller[HANDOFF_NAME_LEN];

	RequireWritableTransaction("durable.start_workflow()");

	read_start_arguments(fcinfo, &req);
	read_start_order(fcinfo, 14, &req);

	DurableSPIConnect();
	CheckNamespacePrivilege(req.namespace, NSPRIV_CLIENT);
	now = DurableNow();
	/* A poll waiting on the queue gets the first decision task at commit. */
	req.take_decision = MayHandOverTasks() &&
		ReserveWaitingPoller(req.namespace, req.task_queue, 'd', poller);
	run_id = StartWorkflowExecution(&req, now);
	if (req.take_decision)
		hand_over_first_decision(&req, run_id, now, poller);
	memcpy(result, run_id, sizeof(pg_uuid_t));
	DurableSPIFinish();
	PG_RETURN_UUID_P(result);
}

PG_FUNCTION_INFO_V1(durable_start_workflow_eager);
/*
 * durable.start_workflow_eager(<start_workflow's arguments up to
 * search_attributes>, identity, priority, concurrency_key):
 * start_workflow, and the new run's first decision task started for the
 * caller as a poll with that identity would start it, as Temporal's
 * StartWorkflowExecution with request_eager_execution does (docs/api.md,
 * "Eager dispatch").  Returns {"runId": ..., "decisionTask": <as
 * poll_decision_task returns it, or null>}.  The task is null, and queued as
 * usual, when it is not due at once (a delay, a cron schedule) or is a SQL
 * workflow's.  The caller needs the worker privilege on the namespace as
 * well as the client privilege: it receives a task.  A receiver that dies
 * loses nothing: the task times out after decision_timeout and is retried.
 */
Datum
durable_start_workflow_eager(PG_FUNCTION_ARGS)
{
	StartRequest req;
	const char *identity;
	pg_uuid_t  *run_id;
	RunState	rs;
	RunState   *task = NULL;
	TimestampTz now;
	Datum		result;

	RequireWritableTransaction("durable.start_workflow_eager()");

	read_start_arguments(fcinfo, &req);
	identity = PG_ARGISNULL(14) ? CallerIdentity() :
		CheckName(PG_GETARG_TEXT_PP(14), "identity");
	read_start_order(fcinfo, 15, &req);
	req.take_decision = true;

	DurableSPIConnect();
	CheckNamespacePrivilege(req.namespace, NSPRIV_CLIENT);
	CheckNamespacePrivilege(req.namespace, NSPRIV_WORKER);
	now = DurableNow();
	run_id = StartWorkflowExecution(&req, now);
	if (req.decision_taken)
	{
		/* The run is ours, inserted just now: its task starts as a poll's. */
		if (!LoadRunById(run_id, false, &rs) ||
			!StartDecisionTask(&rs, rs.decision_scheduled_id, now, identity,
							   true))
			elog(ERROR, "the first decision task of run %s could not start",
				 UuidToCString(run_id));
		task = &rs;
	}

	result = EagerStartResult(run_id, task, identity);
	DurableSPIFinish();
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(durable_signal_with_start);
/*
 * durable.signal_with_start(workflow_type, workflow_id, signal_name,
 *		signal_input, input, task_queue, namespace, retry_policy,
 *		id_reuse_policy, execution_timeout, run_timeout, decision_timeout,
 *		cron_schedule, delay, memo, search_attributes, priority,
 *		concurrency_key): signal the running
 * execution of workflow_id, or start one whose history begins
 * WorkflowExecutionStarted, WorkflowExecutionSignaled.  Returns the run_id signalled.  Racing calls
 * meet at the unique index of running runs, as starts do: the loser signals
 * the winner's run.
 */
Datum
durable_signal_with_start(PG_FUNCTION_ARGS)
{
	StartRequest req;
	pg_uuid_t  *result = palloc(sizeof(pg_uuid_t));
	pg_uuid_t  *run_id;

	RequireWritableTransaction("durable.signal_with_start()");

	memset(&req, 0, sizeof(req));
	req.workflow_type = CheckName(ARG_TEXT(0), "workflow_type");
	req.workflow_id = CheckName(ARG_TEXT(1), "workflow_id");
	req.signal_name = CheckName(ARG_TEXT(2), "signal_name");
	req.signal_input = ARG_JSONB(3);
	CheckPayload(req.signal_input, "signal_input");
	req.input = ARG_JSONB(4);
	CheckPayload(req.input, "input");
	read_start_options(fcinfo, 5, &req);
	read_start_order(fcinfo, 16, &req);

	DurableSPIConnect();
	CheckNamespacePrivilege(req.namespace, NSPRIV_CLIENT);
	run_id = StartWorkflowExecution(&req, DurableNow());
	memcpy(result, run_id, sizeof(pg_uuid_t));
	DurableSPIFinish();
	PG_RETURN_UUID_P(result);
}

PG_FUNCTION_INFO_V1(durable_signal_workflow);
/* durable.signal_workflow(workflow_id, signal_name, input, namespace, run_id) */
Datum
durable_signal_workflow(PG_FUNCTION_ARGS)
{
	char	   *workflow_id = CheckName(ARG_TEXT(0), "workflow_id");
	char	   *signal_name = CheckName(ARG_TEXT(1), "signal_name");
	Jsonb	   *input = ARG_JSONB(2);
	char	   *namespace = CheckName(ARG_TEXT(3), "namespace");
	pg_uuid_t  *run_id = ARG_UUID(4);
	RunState	rs;

	RequireWritableTransaction("durable.signal_workflow()");

	CheckPayload(input, "input");
	DurableSPIConnect();
	CheckNamespacePrivilege(namespace, NSPRIV_CLIENT);
	LoadRunOrError(namespace, workflow_id, run_id, true, &rs);
	RequireRunOpen(&rs);
	SignalRun(&rs, DurableNow(), signal_name, input, NULL);
	SaveRun(&rs);
	DurableSPIFinish();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(durable_receive_external);
/*
 * durable.receive_external(request): a request of a workflow on another
 * node (a signal or cancel, a child's start, a child's close, a parent close
 * policy), relayed here by that node's router to the node that owns its
 * target (docs/citus.md "Signals and cancels across nodes", "Children across
 * nodes").  Granted to no one: the relay runs it as the extension's owner.
 */
Datum
durable_receive_external(PG_FUNCTION_ARGS)
{
	Jsonb	   *request = ARG_JSONB(0);
	Jsonb	   *answer;

	RequireWritableTransaction("durable.receive_external()");
	if (request == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("request must not be null")));
	DurableSPIConnect();
	answer = ReceiveExternal(request, DurableNow());
	/* Made in SPI's memory, which SPI_finish frees: copied out first */
	answer = DatumGetJsonbP(SPI_datumTransfer(JsonbPGetDatum(answer), false, -1));
	DurableSPIFinish();
	PG_RETURN_JSONB_P(answer);
}

PG_FUNCTION_INFO_V1(durable_cancel_workflow);
/*
 * durable.cancel_workflow(workflow_id, reason, namespace, run_id): set the
 * cancel-requested flag, append WorkflowExecutionCancelRequested and schedule
 * a decision task so that the workflow can clean up.  A second request is a
 * no-op.
 */
Datum
durable_cancel_workflow(PG_FUNCTION_ARGS)
{
	char	   *workflow_id = CheckName(ARG_TEXT(0), "workflow_id");
	char	   *reason = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));
	char	   *namespace = CheckName(ARG_TEXT(2), "namespace");
	pg_uuid_t  *run_id = ARG_UUID(3);
	RunState	rs;

	RequireWritableTransaction("durable.cancel_workflow()");

	DurableSPIConnect();
	CheckNamespacePrivilege(namespace, NSPRIV_CLIENT);
	LoadRunOrError(namespace, workflow_id, run_id, true, &rs);
	RequireRunOpen(&rs);
	if (RequestCancelRun(&rs, DurableNow(), reason, NULL))
		SaveRun(&rs);
	DurableSPIFinish();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(durable_terminate_workflow);
/* durable.terminate_workflow(workflow_id, reason, details, namespace, run_id) */
Datum
durable_terminate_workflow(PG_FUNCTION_ARGS)
{
	char	   *workflow_id = CheckName(ARG_TEXT(0), "workflow_id");
	char	   *reason = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));
	Jsonb	   *details = ARG_JSONB(2);
	char	   *namespace = CheckName(ARG_TEXT(3), "namespace");
	pg_uuid_t  *run_id = ARG_UUID(4);
	RunState	rs;

	RequireWritableTransaction("durable.terminate_workflow()");

	CheckPayload(details, "details");
	DurableSPIConnect();
	CheckNamespacePrivilege(namespace, NSPRIV_CLIENT);
	LoadRunOrError(namespace, workflow_id, run_id, true, &rs);
	RequireRunOpen(&rs);
	TerminateRun(&rs, DurableNow(), reason, details);
	DurableSPIFinish();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(durable_pause_workflow);
/*
 * durable.pause_workflow(workflow_id, run_id, reason, namespace): true when
 * the run was not paused (engine/pause.c).
 */
Datum
durable_pause_workflow(PG_FUNCTION_ARGS)
{
	char	   *workflow_id = CheckName(ARG_TEXT(0), "workflow_id");
	pg_uuid_t  *run_id = ARG_UUID(1);
	char	   *reason = PG_ARGISNULL(2) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(2));
	char	   *namespace = CheckName(ARG_TEXT(3), "namespace");
	RunState	rs;
	bool		paused;

	RequireWritableTransaction("durable.pause_workflow()");

	DurableSPIConnect();
	CheckNamespacePrivilege(namespace, NSPRIV_CLIENT);
	LoadRunOrError(namespace, workflow_id, run_id, true, &rs);
	paused = PauseRun(&rs, DurableNow(), CallerIdentity(), reason);
	DurableSPIFinish();
	PG_RETURN_BOOL(paused);
}

PG_FUNCTION_INFO_V1(durable_resume_workflow);
/*
 * durable.resume_workflow(workflow_id, run_id, namespace): true when the run
 * was paused.  Its held tasks are queued again and their polls or the
 * executors woken at commit.
 */
Datum
durable_resume_workflow(PG_FUNCTION_ARGS)
{
	char	   *workflow_id = CheckName(ARG_TEXT(0), "workflow_id");
	pg_uuid_t  *run_id = ARG_UUID(1);
	char	   *namespace = CheckName(ARG_TEXT(2), "namespace");
	RunState	rs;
	bool		resumed;

	RequireWritableTransaction("durable.resume_workflow()");

	DurableSPIConnect();
	CheckNamespacePrivilege(namespace, NSPRIV_CLIENT);
	LoadRunOrError(namespace, workflow_id, run_id, true, &rs);
	resumed = ResumeRun(&rs);
	DurableSPIFinish();
	PG_RETURN_BOOL(resumed);
}

PG_FUNCTION_INFO_V1(durable_resolve_run_id);
/* durable.resolve_run_id(workflow_id, namespace, run_id): the run, or the latest. */
Datum
durable_resolve_run_id(PG_FUNCTION_ARGS)
{
	char	   *workflow_id = CheckName(ARG_TEXT(0), "workflow_id");
	char	   *namespace = CheckName(ARG_TEXT(1), "namespace");
	pg_uuid_t  *run_id = ARG_UUID(2);
	pg_uuid_t  *result = palloc(sizeof(pg_uuid_t));
	RunState	rs;

	DurableSPIConnect();
	CheckNamespacePrivilege(namespace, NSPRIV_CLIENT);
	LoadRunOrError(namespace, workflow_id, run_id, false, &rs);
	memcpy(result, &rs.run_id, sizeof(pg_uuid_t));
	DurableSPIFinish();
	PG_RETURN_UUID_P(result);
}

PG_FUNCTION_INFO_V1(durable_describe_workflow);
/* durable.describe_workflow(workflow_id, namespace, run_id) */
Datum
durable_describe_workflow(PG_FUNCTION_ARGS)
{
	char	   *workflow_id = CheckName(ARG_TEXT(0), "workflow_id");
	char	   *namespace = CheckName(ARG_TEXT(1), "namespace");
	pg_uuid_t  *run_id = ARG_UUID(2);
	RunState	rs;
	Datum		values[1];
	bool		isnull;
	Datum		result;

	DurableSPIConnect();
	CheckNamespacePrivilege(namespace, NSPRIV_CLIENT);
	LoadRunOrError(namespace, workflow_id, run_id, false, &rs);
	values[0] = UUIDPGetDatum(&rs.run_id);
	if (RunPlan(TasksCanBePutOff() ? &describe_plan_v3 : &describe_plan,
				values, NULL, true, 1) != 1)
		elog(ERROR, "run %s vanished", UuidToCString(&rs.run_id));
	result = SPIGetDatum(0, 1, &isnull);
	if (DurableColumnExists("runs", "origin"))
	{
		Datum		args[2];

		args[0] = UUIDPGetDatum(&rs.run_id);
		args[1] = result;
		if (RunPlan(&describe_links, args, NULL, true, 1) != 1)
			elog(ERROR, "run %s vanished", UuidToCString(&rs.run_id));
		result = SPIGetDatum(0, 1, &isnull);
	}
	if (DurableColumnExists("runs", "pinned_function"))
	{
		Datum		args[2];

		args[0] = UUIDPGetDatum(&rs.run_id);
		args[1] = result;
		if (RunPlan(&describe_function, args, NULL, true, 1) != 1)
			elog(ERROR, "run %s vanished", UuidToCString(&rs.run_id));
		result = SPIGetDatum(0, 1, &isnull);
	}
	if (TaskQueuePausesStored())
	{
		Datum		args[2];

		args[0] = UUIDPGetDatum(&rs.run_id);
		args[1] = result;
		if (RunPlan(&describe_paused, args, NULL, true, 1) != 1)
			elog(ERROR, "run %s vanished", UuidToCString(&rs.run_id));
		result = SPIGetDatum(0, 1, &isnull);
	}
	if (DurableColumnExists("runs", "paused_at"))
	{
		Datum		args[2];

		args[0] = UUIDPGetDatum(&rs.run_id);
		args[1] = result;
		if (RunPlan(&describe_run_paused, args, NULL, true, 1) != 1)
			elog(ERROR, "run %s vanished", UuidToCString(&rs.run_id));
		result = SPIGetDatum(0, 1, &isnull);
	}
	if (rs.priority != 3 || rs.concurrency_key != NULL)
	{
		Datum		args[2];

		args[0] = UUIDPGetDatum(&rs.run_id);
		args[1] = result;
		if (RunPlan(&describe_order, args, NULL, true, 1) != 1)
			elog(ERROR, "run %s vanished", UuidToCString(&rs.run_id));
		result = SPIGetDatum(0, 1, &isnull);
	}
	{
		/* Whether anybody polls its queues (pollers.c) */
		Jsonb	   *warnings = poller_warnings(&rs);

		if (warnings != NULL)
			result = DirectFunctionCall2(jsonb_concat, result,
										 JsonbPGetDatum(warnings));
	}
	result = SPI_datumTransfer(result, false, -1);
	DurableSPIFinish();
	PG_RETURN_DATUM(result);
}

/*
 * wait_workflow: a run of the chain, with its close when it closed.  A run
 * closed by ContinueAsNew (a retry, a cron fire, a ContinueAsNew decision)
 * names the next run of its chain in continued_to, set in the same
 * transaction.
 */
static KeptPlan wait_run_plan = {
	NULL,
	"SELECT r.status, r.continued_to, pg_catalog.jsonb_build_object("
	" 'runId', r.run_id, 'status', r.status, 'result', r.result,"
	" 'failure', r.failure, 'closeTime', r.close_time)"
	" FROM durable.runs r WHERE r.run_id OPERATOR(pg_catalog.=) $1",
	1, {UUIDOID}
};

/* What wait_workflow waits for: the chain from run_id on */
typedef struct WorkflowWait
{
	char	   *namespace;
	char	   *workflow_id;
	pg_uuid_t	run_id;			/* the first run not yet seen closed */
} WorkflowWait;

/*
 * Follow the chain from ww->run_id to its last run: its close object, or
 * NULL while that run is open (ww->run_id is then that run).  Each read
 * takes a fresh snapshot (read_only = false), so that a close committed
 * while the caller slept is seen.
 */
static void *
check_chain_closed(void *arg)
{
	WorkflowWait *ww = (WorkflowWait *) arg;

	for (;;)
	{
		Datum		values[1];
		char	   *status;
		Datum		next;
		bool		next_null;

		CHECK_FOR_INTERRUPTS();
		values[0] = UUIDPGetDatum(&ww->run_id);
		if (RunPlan(&wait_run_plan, values, NULL, false, 1) != 1)
			ereport(ERROR,
					(errcode(ERRCODE_DURABLE_NOT_FOUND),
					 errmsg("workflow \"%s\" has no run %s in namespace \"%s\"",
							ww->workflow_id, UuidToCString(&ww->run_id),
							ww->namespace),
					 errdetail("The run was purged after its retention.")));
		status = SPIGetText(0, 1);
		next = SPIGetDatum(0, 2, &next_null);
		if (strcmp(status, "running") == 0)
		{
			pfree(status);
			SPI_freetuptable(SPI_tuptable);
			return NULL;
		}
		if (strcmp(status, "continued_as_new") == 0 && !next_null)
		{
			memcpy(&ww->run_id, DatumGetUUIDP(next), sizeof(pg_uuid_t));
			SPI_freetuptable(SPI_tuptable);
			continue;
		}
		return SPIGetJsonbCopy(0, 3);
	}
}

PG_FUNCTION_INFO_V1(durable_wait_workflow);
/*
 * durable.wait_workflow(workflow_id, namespace, run_id, wait): the close of
 * the workflow's chain, {runId, status, result, failure, closeTime} of its
 * last run, as soon as it closes; NULL when wait passes first.  Like
 * Temporal's handle.result() it follows retries, ContinueAsNew and cron runs
 * from the given run (or the latest) to the last.  It sleeps on the
 * workflow's bucket (store/wait.c), woken by the commit of a close.
 */
Datum
durable_wait_workflow(PG_FUNCTION_ARGS)
{
	char	   *workflow_id = CheckName(ARG_TEXT(0), "workflow_id");
	char	   *namespace = CheckName(ARG_TEXT(1), "namespace");
	pg_uuid_t  *run_id = ARG_UUID(2);
	double		wait_ms = PG_ARGISNULL(3) ? 0 :
		IntervalToSeconds(PG_GETARG_INTERVAL_P(3), "wait", true) * 1000.0;
	WorkflowWait ww;
	RunState	rs;
	Jsonb	   *closed;
	Datum		result = (Datum) 0;

	DurableSPIConnect();
	CheckNamespacePrivilege(namespace, NSPRIV_CLIENT);
	LoadRunOrError(namespace, workflow_id, run_id, false, &rs);
	ww.namespace = namespace;
	ww.workflow_id = workflow_id;
	memcpy(&ww.run_id, &rs.run_id, sizeof(pg_uuid_t));

	/*
	 * In REPEATABLE READ or SERIALIZABLE every read sees the transaction's
	 * snapshot: a close committed later would never be seen, so refuse to
	 * wait for one rather than sleep for nothing.
	 */
	closed = check_chain_closed(&ww);
	if (closed == NULL && wait_ms > 0 && IsolationUsesXactSnapshot())
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TRANSACTION_STATE),
				 errmsg("durable.wait_workflow() cannot wait in a REPEATABLE READ or SERIALIZABLE transaction"),
				 errdetail("Its snapshot would never see the workflow close."),
				 errhint("Call it in READ COMMITTED, or with wait => '0'.")));
	if (closed == NULL && wait_ms > 0)
		closed = WaitForWorkflowClose(namespace, workflow_id, wait_ms,
									  fcinfo->flinfo,
									  check_chain_closed, &ww);
	if (closed != NULL)
		result = SPI_datumTransfer(JsonbPGetDatum(closed), false, -1);
	DurableSPIFinish();
	if (closed == NULL)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(result);
}

/*
 * Whether nobody has polled a queue for DURABLE_NO_POLLER_SECONDS, as far
 * as shared memory tells (*known false: it cannot tell).
 */
static bool
queue_without_pollers(const char *namespace, const char *task_queue,
					  char kind, TimestampTz now, bool *known)
{
	TimestampTz seen;

	if (!QueueLastPolled(namespace, task_queue, kind, &seen, known))
		return *known;
	return seen < TimestampPlusSeconds(now, -DURABLE_NO_POLLER_SECONDS);
}

static KeptPlan pending_activity_queues = {
	NULL, "SELECT DISTINCT activity_type, task_queue FROM durable.activities"
	" WHERE run_id = $1 ORDER BY task_queue, activity_type",
	1, {UUIDOID}
};

/*
 * describe_workflow's fields on the pollers of a running run's queues:
 * taskQueueWithoutPollers (its decision tasks' queue has had no poller for
 * a minute) and activityTaskQueuesWithoutPollers (the same for the queues
 * of its pending activities).  A type the executors run needs no poller.
 * NULL when nothing can be told (no shared memory, a closed run).  Called
 * with SPI connected.
 */
static Jsonb *
poller_warnings(RunState *rs)
{
	TimestampTz now = DurableNow();
	Registration reg;
	JsonBuilder jb;
	bool		known;
	bool		without;
	int			n;
	int			i;
	char	  **queues;
	char	  **types;
	char	  **all;
	int			nqueues = 0;

	if (!PollersRecorded() || !RunIsOpen(rs))
		return NULL;
	JsonBegin(&jb);
	if (LookupRegistration('w', rs->namespace, rs->workflow_type,
						   rs->task_queue, &reg))
		JsonAddBool(&jb, "taskQueueWithoutPollers", false);
	else
	{
		without = queue_without_pollers(rs->namespace, rs->task_queue, 'd',
										now, &known);
		if (known)
			JsonAddBool(&jb, "taskQueueWithoutPollers", without);
		else
			JsonAddNull(&jb, "taskQueueWithoutPollers");
	}

	{
		Datum		values[1];

		values[0] = UUIDPGetDatum(&rs->run_id);
		n = RunPlan(&pending_activity_queues, values, NULL, true, 0);
	}
	/* Copied first: LookupRegistration runs statements of its own. */
	queues = palloc(sizeof(char *) * (n + 1));
	types = palloc(sizeof(char *) * (n + 1));
	all = palloc(sizeof(char *) * (n + 1));
	for (i = 0; i < n; i++)
	{
		types[i] = SPIGetText(i, 1);
		all[i] = SPIGetText(i, 2);
	}
	for (i = 0; i < n; i++)
	{
		char	   *queue = all[i];

		if (nqueues > 0 && strcmp(queues[nqueues - 1], queue) == 0)
			continue;
		if (LookupRegistration('x', rs->namespace, types[i], queue, &reg))
			continue;
		if (queue_without_pollers(rs->namespace, queue, 'a', now, &known) &&
			known)
			queues[nqueues++] = queue;
	}
	JsonBeginArray(&jb, "activityTaskQueuesWithoutPollers");
	for (i = 0; i < nqueues; i++)
		JsonAddText(&jb, NULL, queues[i]);
	JsonEndArray(&jb);
	return JsonFinish(&jb);
}

PG_FUNCTION_INFO_V1(durable_now);
/*
 * durable.now(): the engine's clock; inside a workflow function, the time of
 * the decision task the calling line first ran in (replay.c).
 */
Datum
durable_now(PG_FUNCTION_ARGS)
{
	if (ReplayActive())
		PG_RETURN_TIMESTAMPTZ(ReplayNow());
	PG_RETURN_TIMESTAMPTZ(DurableNow());
}

PG_FUNCTION_INFO_V1(durable_preloaded);
/* durable.preloaded(): whether the library came from shared_preload_libraries. */
Datum
durable_preloaded(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(durable_library_preloaded);
}

/*-------------------------------------------------------------------------
 *
 * workflow.c
 *	  Runs: starting, continuing as new (ContinueAsNew, retry, cron),
 *	  completing, failing and terminating.
 *
 * At most one run of a (namespace, workflow_id) is running: the unique
 * index runs_of_workflow_id enforces it (runs.h; runs_one_running before
 * 0.12.0), and a start inserts with ON CONFLICT DO NOTHING on it, so that of
 * two racing starts exactly one wins and the other sees the winner and
 * reports it (WF001).
 *
 * Every run is created by create_run: a first run by a start, the next run
 * of a chain by ContinueRun (initiator Decider, RetryPolicy or
 * CronSchedule), which closes the current run with
 * WorkflowExecutionContinuedAsNew in the same transaction (engine rule 7).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"

#include "durable.h"
#include "base/backoff.h"
#include "base/caller.h"
#include "base/cron.h"
#include "base/json.h"
#include "base/util.h"
#include "store/direct.h"
#include "store/metrics.h"
#include "store/namespaces.h"
#include "store/spi.h"
#include "store/timer_rows.h"
#include "engine/lifecycle.h"
#include "engine/runs.h"
#include "engine/workflow.h"

#define NEW_RUN_ARGS 25

static KeptPlan insert_run = {
	NULL, "INSERT INTO durable.runs (run_id, run_seq, namespace, workflow_id,"
	" workflow_type, task_queue, input, attempt, first_run_id,"
	" chain_start_time, start_time, retry_policy, execution_timeout,"
	" run_timeout, decision_timeout, execution_deadline, cron_schedule, memo,"
	" last_event_id, decision_scheduled_id, decision_attempt,"
	" parent_namespace, parent_workflow_id, parent_run_id,"
	" parent_initiated_id, continued_from)"
	" VALUES ($1, pg_catalog.nextval('durable.run_seq'), $2, $3, $4, $5, $6,"
	" $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21,"
	" $22, $23, $24, $25)"
	RUNS_ONE_RUNNING_CONFLICT
	" RETURNING run_id",
	NEW_RUN_ARGS, {UUIDOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID,
		INT4OID, UUIDOID, TIMESTAMPTZOID, TIMESTAMPTZOID, JSONBOID, FLOAT8OID,
		FLOAT8OID, FLOAT8OID, TIMESTAMPTZOID, TEXTOID, JSONBOID, INT8OID,
		INT8OID, INT4OID, TEXTOID, TEXTOID, UUIDOID, INT8OID, UUIDOID}
};
/*
 * The same from 0.9.0, with the run's priority and concurrency key; from
 * 0.11.0 without the input, which only WorkflowExecutionStarted keeps; from
 * 0.12.0 on conflict in runs_of_workflow_id.  All take the same arguments
 * ($6, the input, unused without the input column).
 */
#define INSERT_RUN_V9_SQL(input_column, input_value, conflict) \
	"INSERT INTO durable.runs (run_id, run_seq, namespace, workflow_id," \
	" workflow_type, task_queue, " input_column "attempt, first_run_id," \
	" chain_start_time, start_time, retry_policy, execution_timeout," \
	" run_timeout, decision_timeout, execution_deadline, cron_schedule, memo," \
	" last_event_id, decision_scheduled_id, decision_attempt," \
	" parent_namespace, parent_workflow_id, parent_run_id," \
	" parent_initiated_id, continued_from, priority, concurrency_key)" \
	" VALUES ($1, pg_catalog.nextval('durable.run_seq'), $2, $3, $4, $5, " \
	input_value "$7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18," \
	" $19, $20, $21, $22, $23, $24, $25, $26, $27)" \
	conflict " RETURNING run_id"
#define INSERT_RUN_V9_TYPES \
	{UUIDOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID, \
	INT4OID, UUIDOID, TIMESTAMPTZOID, TIMESTAMPTZOID, JSONBOID, FLOAT8OID, \
	FLOAT8OID, FLOAT8OID, TIMESTAMPTZOID, TEXTOID, JSONBOID, INT8OID, \
	INT8OID, INT4OID, TEXTOID, TEXTOID, UUIDOID, INT8OID, UUIDOID, INT2OID, \
	TEXTOID}
static KeptPlan insert_run_v9 = {
	NULL, INSERT_RUN_V9_SQL("input, ", "$6, ", RUNS_ONE_RUNNING_CONFLICT),
	NEW_RUN_ARGS + 2, INSERT_RUN_V9_TYPES
};
static KeptPlan insert_run_v11 = {
	NULL, INSERT_RUN_V9_SQL("", "", RUNS_ONE_RUNNING_CONFLICT),
	NEW_RUN_ARGS + 2, INSERT_RUN_V9_TYPES
};
static KeptPlan insert_run_v12 = {
	NULL, INSERT_RUN_V9_SQL("", "", RUNS_ONE_RUNNING_CONFLICT_V12),
	NEW_RUN_ARGS + 2, INSERT_RUN_V9_TYPES
};
/*
 * The same insert when no run of the workflow_id exists yet: a start's
 * usual case, checked in the statement instead of by a LoadRun before it.
 */
static KeptPlan insert_first_run = {
	NULL, "INSERT INTO durable.runs (run_id, run_seq, namespace, workflow_id,"
	" workflow_type, task_queue, input, attempt, first_run_id,"
	" chain_start_time, start_time, retry_policy, execution_timeout,"
	" run_timeout, decision_timeout, execution_deadline, cron_schedule, memo,"
	" last_event_id, decision_scheduled_id, decision_attempt,"
	" parent_namespace, parent_workflow_id, parent_run_id,"
	" parent_initiated_id, continued_from)"
	" SELECT $1, pg_catalog.nextval('durable.run_seq'), $2, $3, $4, $5, $6,"
	" $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21,"
	" $22, $23, $24, $25"
	" WHERE NOT EXISTS (SELECT 1 FROM durable.runs"
	"   WHERE namespace = $2 AND workflow_id = $3)"
	RUNS_ONE_RUNNING_CONFLICT
	" RETURNING run_id",
	NEW_RUN_ARGS, {UUIDOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID,
		INT4OID, UUIDOID, TIMESTAMPTZOID, TIMESTAMPTZOID, JSONBOID, FLOAT8OID,
		FLOAT8OID, FLOAT8OID, TIMESTAMPTZOID, TEXTOID, JSONBOID, INT8OID,
		INT8OID, INT4OID, TEXTOID, TEXTOID, UUIDOID, INT8OID, UUIDOID}
};
#define LOAD_CHAIN_SQL(input) \
	"SELECT first_run_id, chain_start_time, execution_timeout," \
	" execution_deadline, " input ", retry_policy, cron_schedule, memo," \
	" run_timeout, parent_namespace, parent_workflow_id, parent_run_id," \
	" parent_initiated_id, search_attributes FROM durable.runs WHERE run_id = $1"
static KeptPlan load_chain = {
	NULL, LOAD_CHAIN_SQL("input"), 1, {UUIDOID}
};
/* From 0.11.0: the input from WorkflowExecutionStarted */
static KeptPlan load_chain_v11 = {
	NULL, LOAD_CHAIN_SQL(RUN_INPUT_FROM_HISTORY_SQL("$1")), 1, {UUIDOID}
};
static KeptPlan set_continued_to = {
	NULL, "UPDATE durable.runs SET continued_to = $2 WHERE run_id = $1",
	2, {UUIDOID, UUIDOID}
};
static KeptPlan load_last_completion_result = {
	NULL, "SELECT attributes -> 'lastCompletionResult'"
	" FROM durable.history WHERE run_id = $1 AND event_id = 1",
	1, {UUIDOID}
};
static KeptPlan set_search_attributes = {
	NULL, "UPDATE durable.runs SET search_attributes ="
	" COALESCE(search_attributes, '{}') || $2 WHERE run_id = $1",
	2, {UUIDOID, JSONBOID}
};

/* Everything a new run is made of */
typedef struct NewRun
{
	pg_uuid_t  *run_id;
	const char *namespace;
	const char *workflow_id;
	const char *workflow_type;
	const char *task_queue;
	Jsonb	   *input;
	int32		attempt;
	pg_uuid_t  *first_run_id;
	TimestampTz chain_start_time;
	Jsonb	   *retry_policy;
	double		execution_timeout;
	double		run_timeout;
	double		decision_timeout;
	TimestampTz execution_deadline; /* DT_NOEND: none */
	const char *cron_schedule;
	Jsonb	   *memo;
	Jsonb	   *search_attributes;	/* NULL: none */
	double		backoff;		/* before the first decision task */
	const char *parent_namespace;
	const char *parent_workflow_id;
	pg_uuid_t  *parent_run_id;
	int64		parent_initiated_id;
	pg_uuid_t  *continued_from;
	const char *initiator;
	Jsonb	   *continued_failure;
	Jsonb	   *last_completion_result;
	const char *signal_name;	/* signal_with_start: the first signal */
	Jsonb	   *signal_input;
	pg_uuid_t  *restarted_from; /* restart_workflow */
	const char *restart_reason;
	bool		take_decision;	/* start_workflow_eager: not queued */
	bool		decision_taken; /* out: scheduled for the caller */
	int			priority;		/* 1 to 5 */
	const char *concurrency_key;	/* NULL: none */
} NewRun;

static const char *const id_reuse_policy_names[] = {
	"allow_duplicate_failed_only",
	"allow_duplicate",
	"reject_duplicate",
	"terminate_if_running"
};

/* An id_reuse_policy name (engine rule 8). */
IdReusePolicy
ParseIdReusePolicy(const char *name, const char *argname)
{
	int			i;

	for (i = 0; i < lengthof(id_reuse_policy_names); i++)
		if (strcmp(name, id_reuse_policy_names[i]) == 0)
			return (IdReusePolicy) i;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid %s \"%s\"", argname, name),
			 errhint("Use allow_duplicate_failed_only, allow_duplicate, reject_duplicate or terminate_if_running.")));
	pg_unreachable();
}

/* The name of an id reuse policy. */
const char *
IdReusePolicyName(IdReusePolicy policy)
{
	return id_reuse_policy_names[policy];
}

/* Whether a closed run with this status lets a new run start. */
static bool
reuse_allowed(IdReusePolicy policy, const char *status)
{
	switch (policy)
	{
		case ID_REUSE_ALLOW_DUPLICATE:
		case ID_REUSE_TERMINATE_IF_RUNNING:
			return true;
		case ID_REUSE_REJECT_DUPLICATE:
			return false;
		case ID_REUSE_ALLOW_DUPLICATE_FAILED_ONLY:
			return strcmp(status, "failed") == 0 ||
				strcmp(status, "timed_out") == 0 ||
				strcmp(status, "canceled") == 0 ||
				strcmp(status, "terminated") == 0;
	}
	return false;
}

/* The WorkflowExecutionStarted attributes of a new run. */
static Jsonb *
started_attributes(NewRun *nr)
{
	JsonBuilder jb;

	JsonBegin(&jb);
	JsonAddText(&jb, "workflowType", nr->workflow_type);
	JsonAddText(&jb, "taskQueue", nr->task_queue);
	JsonAddJsonb(&jb, "input", nr->input);
	if (nr->execution_timeout > 0)
		JsonAddFloat(&jb, "workflowExecutionTimeoutSeconds", nr->execution_timeout);
	if (nr->run_timeout > 0)
		JsonAddFloat(&jb, "workflowRunTimeoutSeconds", nr->run_timeout);
	JsonAddFloat(&jb, "taskStartToCloseTimeoutSeconds", nr->decision_timeout);
	JsonAddInt(&jb, "attempt", nr->attempt);
	JsonAddText(&jb, "firstExecutionRunId", UuidToCString(nr->first_run_id));
	if (nr->continued_from != NULL)
	{
		JsonAddText(&jb, "continuedExecutionRunId", UuidToCString(nr->continued_from));
		JsonAddText(&jb, "initiator", nr->initiator);
	}
	if (nr->restarted_from != NULL)
	{
		JsonAddText(&jb, "initiator", "Restart");
		JsonAddText(&jb, "restartedFromRunId", UuidToCString(nr->restarted_from));
		JsonAddText(&jb, "restartReason", nr->restart_reason);
	}
	if (nr->continued_failure != NULL)
		JsonAddJsonb(&jb, "continuedFailure", nr->continued_failure);
	if (nr->last_completion_result != NULL)
		JsonAddJsonb(&jb, "lastCompletionResult", nr->last_completion_result);
	if (nr->backoff > 0)
		JsonAddFloat(&jb, "firstDecisionTaskBackoffSeconds", nr->backoff);
	if (nr->retry_policy != NULL)
		JsonAddJsonb(&jb, "retryPolicy", nr->retry_policy);
	if (nr->cron_schedule != NULL)
		JsonAddText(&jb, "cronSchedule", nr->cron_schedule);
	if (nr->memo != NULL)
		JsonAddJsonb(&jb, "memo", nr->memo);
	if (nr->search_attributes != NULL)
		JsonAddJsonb(&jb, "searchAttributes", nr->search_attributes);
	if (nr->priority != 3)
		JsonAddInt(&jb, "priority", nr->priority);
	if (nr->concurrency_key != NULL)
		JsonAddText(&jb, "concurrencyKey", nr->concurrency_key);
	if (nr->parent_run_id != NULL)
	{
		JsonBeginObject(&jb, "parentWorkflowExecution");
		JsonAddText(&jb, "namespace", nr->parent_namespace);
		JsonAddText(&jb, "workflowId", nr->parent_workflow_id);
		JsonAddText(&jb, "runId", UuidToCString(nr->parent_run_id));
		JsonAddInt(&jb, "initiatedEventId", nr->parent_initiated_id);
		JsonEndObject(&jb);
	}
	JsonAddText(&jb, "identity", CallerIdentity());
	return JsonFinish(&jb);
}

/*
 * The run's row of insert_run_v12 (values and nulls of its 27 arguments, the
 * input unused), written by DirectInsertRun: false when a run of the
 * workflow id is running (runs_of_workflow_id, engine/runs.h).  none_seen:
 * the caller has just found the workflow id without runs.
 */
static bool
insert_run_direct(const Datum *values, const char *nulls, bool none_seen)
{
	/* Argument i + 1 of insert_run_v12 is column names[i]; NULL: unused */
	static const char *const names[NEW_RUN_ARGS + 2] = {
		"run_id", "namespace", "workflow_id", "workflow_type", "task_queue",
		NULL, "attempt", "first_run_id", "chain_start_time", "start_time",
		"retry_policy", "execution_timeout", "run_timeout",
		"decision_timeout", "execution_deadline", "cron_schedule", "memo",
		"last_event_id", "decision_scheduled_id", "decision_attempt",
		"parent_namespace", "parent_workflow_id", "parent_run_id",
		"parent_initiated_id", "continued_from", "priority",
		"concurrency_key"
	};
	/* ... and the columns an INSERT leaves to their defaults */
	static const char *const fixed[] = {
		"status", "cancel_requested", "decision_started_id",
		"previous_started_id", "activity_attempts", "has_buffered"
	};
	const char *cols[NEW_RUN_ARGS + 2 + lengthof(fixed)];
	Datum		vals[lengthof(cols)];
	bool		isnull[lengthof(cols)];
	int			n = 0;

	for (int i = 0; i < lengthof(names); i++)
	{
		if (names[i] == NULL)
			continue;
		cols[n] = names[i];
		vals[n] = values[i];
		isnull[n] = nulls[i] == 'n';
		n++;
	}
	for (int i = 0; i < lengthof(fixed); i++)
	{
		cols[n] = fixed[i];
		vals[n] = i == 0 ? CStringGetTextDatum("running") :
			i == 1 || i == 5 ? BoolGetDatum(false) :
			i == 4 ? Int32GetDatum(0) : Int64GetDatum(0);
		isnull[n] = false;
		n++;
	}
	return DirectInsertRun(n, cols, vals, isnull, "runs_of_workflow_id",
						   none_seen);
}

#define OPT_DATUM(i, cond, datum) \
	do { values[i] = (cond) ? (datum) : (Datum) 0; nulls[i] = (cond) ? ' ' : 'n'; } while (0)

/*
 * Insert the run row and write its first events and timers.  Returns false,
 * writing nothing, when another run of the workflow_id is running, or with
 * only_first, when the workflow_id has any run.
 */
static bool
create_run(NewRun *nr, TimestampTz now, bool only_first)
{
	Datum		values[NEW_RUN_ARGS + 2];
	char		nulls[NEW_RUN_ARGS + 2];
	bool		ordered = DurableColumnExists("runs", "concurrency_key");
	KeptPlan   *plan;
	bool		none_seen = false;
	int			first = nr->signal_name != NULL ? 2 : 1;	/* before the task */
	int			events = nr->backoff > 0 ? first : first + 1;
	RunState	rs;

	memset(nulls, ' ', sizeof(nulls));
	values[0] = UUIDPGetDatum(nr->run_id);
	values[1] = CStringGetTextDatum(nr->namespace);
	values[2] = CStringGetTextDatum(nr->workflow_id);
	values[3] = CStringGetTextDatum(nr->workflow_type);
	values[4] = CStringGetTextDatum(nr->task_queue);
	OPT_DATUM(5, nr->input, JsonbPGetDatum(nr->input));
	values[6] = Int32GetDatum(nr->attempt);
	values[7] = UUIDPGetDatum(nr->first_run_id);
	values[8] = TimestampTzGetDatum(nr->chain_start_time);
	values[9] = TimestampTzGetDatum(now);
	OPT_DATUM(10, nr->retry_policy, JsonbPGetDatum(nr->retry_policy));
	OPT_DATUM(11, nr->execution_timeout > 0, Float8GetDatum(nr->execution_timeout));
	OPT_DATUM(12, nr->run_timeout > 0, Float8GetDatum(nr->run_timeout));
	values[13] = Float8GetDatum(nr->decision_timeout);
	OPT_DATUM(14, nr->execution_deadline != DT_NOEND,
			  TimestampTzGetDatum(nr->execution_deadline));
	OPT_DATUM(15, nr->cron_schedule, CStringGetTextDatum(nr->cron_schedule));
	OPT_DATUM(16, nr->memo, JsonbPGetDatum(nr->memo));
	values[17] = Int64GetDatum(events);
	values[18] = Int64GetDatum(events > first ? events : 0);
	values[19] = Int32GetDatum(events > first ? 1 : 0);
	OPT_DATUM(20, nr->parent_namespace, CStringGetTextDatum(nr->parent_namespace));
	OPT_DATUM(21, nr->parent_workflow_id, CStringGetTextDatum(nr->parent_workflow_id));
	OPT_DATUM(22, nr->parent_run_id, UUIDPGetDatum(nr->parent_run_id));
	OPT_DATUM(23, nr->parent_run_id, Int64GetDatum(nr->parent_initiated_id));
	OPT_DATUM(24, nr->continued_from, UUIDPGetDatum(nr->continued_from));
	/*
	 * "The workflow_id has no run yet" is one probe of the index of its runs
	 * (direct.c), then a plain insert.  In the statement itself the NOT
	 * EXISTS was planned once a session: a session that planned it while
	 * durable.runs was small kept a sequential scan as the table grew, and
	 * each start cost a scan of every run until the next ANALYZE.  The
	 * statement stays for a schema without that index.
	 */
	if (only_first)
	{
		int			has_runs = DirectWorkflowHasRuns(nr->namespace,
													 nr->workflow_id);

		if (has_runs > 0)
			return false;
		if (has_runs == 0)
		{
			only_first = false;
			none_seen = true;
		}
	}
	/* From 0.9.0 the row has the run's priority (NULL: 3) and key */
	OPT_DATUM(25, nr->priority != 3, Int16GetDatum((int16) nr->priority));
	OPT_DATUM(26, nr->concurrency_key, CStringGetTextDatum(nr->concurrency_key));
	if ((nr->priority != 3 || nr->concurrency_key != NULL) && !ordered)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("a priority or a concurrency key needs durable 0.9.0"),
				 errhint("Run ALTER EXTENSION durable UPDATE.")));
	plan = only_first ? &insert_first_run :
		!ordered ? &insert_run :
		RunRowHasInput() ? &insert_run_v9 :
		RunsOfWorkflowIdIndexed() ? &insert_run_v12 : &insert_run_v11;
	if (plan == &insert_run_v12)
	{
		/* The same insert without the executor (direct.c) */
		if (!insert_run_direct(values, nulls, none_seen))
			return false;
	}
	else
	{
		if (RunPlan(plan, values, nulls, false, 1) == 0)
			return false;
		SPI_freetuptable(SPI_tuptable);
	}

	/*
	 * Search attributes given to a child or a continued run, as Cadence's and
	 * Temporal's StartChildWorkflowExecution and ContinueAsNew attributes
	 * carry them: list_workflows finds the run by them.
	 */
	if (nr->search_attributes != NULL)
	{
		Datum		sa[2];

		sa[0] = UUIDPGetDatum(nr->run_id);
		sa[1] = JsonbPGetDatum(nr->search_attributes);
		RunPlan(&set_search_attributes, sa, NULL, false, 0);
	}

	/* The run row is ours; its counters already count these events. */
	memset(&rs, 0, sizeof(rs));
	memcpy(&rs.run_id, nr->run_id, sizeof(pg_uuid_t));
	rs.namespace = (char *) nr->namespace;
	rs.workflow_id = (char *) nr->workflow_id;
	rs.workflow_type = (char *) nr->workflow_type;
	rs.task_queue = (char *) nr->task_queue;
	rs.status = "running";
	rs.attempt = nr->attempt;
	rs.decision_timeout = nr->decision_timeout;
	rs.decision_started_time_null = true;
	/* A new run is not paused (engine/pause.c): nothing to look up. */
	rs.paused_known = true;
	rs.priority = nr->priority;
	rs.concurrency_key = (char *) nr->concurrency_key;

	(void) AppendEvent(&rs, now, "WorkflowExecutionStarted", started_attributes(nr));
	if (nr->signal_name != NULL)
	{
		JsonBuilder jb;

		JsonBegin(&jb);
		JsonAddText(&jb, "signalName", nr->signal_name);
		JsonAddJsonb(&jb, "input", nr->signal_input);
		JsonAddText(&jb, "identity", CallerIdentity());
		(void) AppendEvent(&rs, now, "WorkflowExecutionSignaled", JsonFinish(&jb));
	}
	if (nr->backoff > 0)
		CreateTimer(nr->run_id, TIMER_FIRST_DECISION,
					TimestampPlusSeconds(now, nr->backoff), 0, 0);
	else
	{
		/*
		 * Eager start: the first decision task is scheduled for the caller
		 * (schedule_decision, engine/runs.c), who starts it once the run is
		 * written; a SQL workflow's still goes to the executors.
		 */
		rs.take_decision = nr->take_decision;
		ScheduleDecisionTask(&rs, now);
		nr->decision_taken = rs.decision_taken;
	}
	Assert(rs.last_event_id == events);

	/*
	 * The run timeout counts from the first decision task, as Cadence's
	 * does: a delay, a cron fire time or a retry backoff is not part of it.
	 */
	if (nr->run_timeout > 0)
	{
		TimestampTz deadline = RunDeadline(now, nr->backoff, nr->run_timeout);

		CreateTimer(nr->run_id, TIMER_RUN_TIMEOUT, deadline, 0, 0);
		if (nr->backoff > 0)
			StoreRunDeadline(nr->run_id, deadline);
	}
	if (nr->execution_deadline != DT_NOEND)
		CreateTimer(nr->run_id, TIMER_EXECUTION_TIMEOUT,
					nr->execution_deadline, 0, 0);
	/* The row was inserted with its counters: write the events alone. */
	FlushEvents(&rs);
	return true;
}

/* WF001 naming the running run. */
static void
report_already_started(StartRequest *req, RunState *running)
{
	ereport(ERROR,
			(errcode(ERRCODE_DURABLE_ALREADY_STARTED),
			 errmsg("workflow execution already started: workflow \"%s\" in namespace \"%s\" is running as run %s",
					req->workflow_id, req->namespace,
					UuidToCString(&running->run_id)),
			 errhint("Signal or cancel the running execution, or start with id_reuse_policy terminate_if_running.")));
}

#define TERMINATE_IF_RUNNING_REASON \
	"terminated by a new start (id_reuse_policy terminate_if_running)"

/*
 * The details of a run terminated by terminate_if_running: the run that
 * replaces it, as Cadence's "New runID: ..." says.
 */
static Jsonb *
replaced_by(pg_uuid_t *new_run_id)
{
	JsonBuilder jb;

	JsonBegin(&jb);
	JsonAddText(&jb, "newRunId", UuidToCString(new_run_id));
	return JsonFinish(&jb);
}

/* Terminate a running run (terminate_workflow, terminate_if_running). */
void
TerminateRun(RunState *rs, TimestampTz now, const char *reason,
			 Jsonb *details)
{
	JsonBuilder jb;

	JsonBegin(&jb);
	JsonAddText(&jb, "reason", reason);
	JsonAddJsonb(&jb, "details", details);
	JsonAddText(&jb, "identity", CallerIdentity());
	CloseRun(rs, now, "terminated", "WorkflowExecutionTerminated",
			 JsonFinish(&jb), NULL, NULL);
}

/*
 * Append WorkflowExecutionSignaled (buffered during a decision task) and
 * schedule a decision task.  external names the signalling workflow.  The
 * caller saves the run.
 *
 * A run whose first decision task waits (a cron schedule's first fire time,
 * a delay, a retry's backoff) records the signal and still waits: its body
 * starts when the wait ends and sees the signal then.  Cadence does so for a
 * cron run ("the cron has not been started yet"); durable does it for every
 * wait, so that a delay means what it says
 * (docs/cadence-differences.md).
 */
void
SignalRun(RunState *rs, TimestampTz now, const char *signal_name,
		  Jsonb *input, Jsonb *external)
{
	JsonBuilder jb;

	JsonBegin(&jb);
	JsonAddText(&jb, "signalName", signal_name);
	JsonAddJsonb(&jb, "input", input);
	JsonAddText(&jb, "identity", CallerIdentity());
	if (external != NULL)
		JsonAddJsonb(&jb, "externalWorkflowExecution", external);
	AppendEventOrBuffer(rs, now, "WorkflowExecutionSignaled", JsonFinish(&jb));
	if (!RunAwaitsFirstDecision(rs))
		ScheduleDecisionTask(rs, now);
}

/*
 * Request cancellation (engine rule 11): the flag, WorkflowExecutionCancelRequested
 * and a decision task.  Returns false, changing nothing, when it was already
 * requested.  The caller saves the run.
 */
bool
RequestCancelRun(RunState *rs, TimestampTz now, const char *cause,
				 Jsonb *external)
{
	JsonBuilder jb;

	if (rs->cancel_requested)
		return false;
	JsonBegin(&jb);
	JsonAddText(&jb, "cause", cause);
	JsonAddText(&jb, "identity", CallerIdentity());
	if (external != NULL)
		JsonAddJsonb(&jb, "externalWorkflowExecution", external);
	rs->cancel_requested = true;
	AppendEventOrBuffer(rs, now, "WorkflowExecutionCancelRequested",
						JsonFinish(&jb));
	ScheduleDecisionTask(rs, now);
	return true;
}

/*
 * Start the first run of a workflow execution, applying the id reuse policy.
 * Returns the new run_id.  The caller is connected to SPI.
 *
 * With req->signal_name (signal_with_start), a running execution is
 * signalled instead and its run_id returned; a new run starts with the
 * signal as its second event.
 *
 * With req->parent (a StartChildWorkflowExecution decision, the parent's row
 * locked), a refusal is not an error: req->refused is set and NULL returned.
 * A child start never waits on another run's lock: terminate_if_running
 * takes the running run's lock with SKIP LOCKED and refuses when it is busy
 * (children.c explains the lock order).
 *
 * With req->take_decision (start_workflow_eager), a new run's first decision
 * task, when it is due at once and is not a SQL workflow's, is scheduled but
 * not queued: req->decision_taken says so, and the caller must start it in
 * the same transaction (StartDecisionTask), or it would never run.
 */
pg_uuid_t *
StartWorkflowExecution(StartRequest *req, TimestampTz now)
{
	NewRun		nr;
	int			tries;

	CheckNamespaceExists(req->namespace);

	memset(&nr, 0, sizeof(nr));
	nr.run_id = NewTimeOrderedUuid();
	nr.namespace = req->namespace;
	nr.workflow_id = req->workflow_id;
	nr.workflow_type = req->workflow_type;
	nr.task_queue = req->task_queue;
	nr.input = req->input;
	nr.attempt = 1;
	nr.first_run_id = nr.run_id;
	nr.chain_start_time = now;
	nr.retry_policy = req->retry_policy;
	nr.execution_timeout = req->execution_timeout;
	nr.run_timeout = req->run_timeout;
	nr.decision_timeout = req->decision_timeout;
	nr.execution_deadline = req->execution_timeout > 0 ?
		TimestampPlusSeconds(now, req->execution_timeout) : DT_NOEND;
	nr.cron_schedule = req->cron_schedule;
	nr.memo = req->memo;
	nr.search_attributes = req->search_attributes;
	nr.backoff = req->delay;
	nr.signal_name = req->signal_name;
	nr.signal_input = req->signal_input;
	nr.restarted_from = req->restarted_from;
	nr.restart_reason = req->restart_reason;
	nr.take_decision = req->take_decision;
	req->decision_taken = false;
	/* A child takes its parent's priority and key unless given its own. */
	nr.priority = req->priority > 0 ? req->priority :
		req->parent != NULL ? req->parent->priority : 3;
	nr.concurrency_key = req->concurrency_key != NULL ? req->concurrency_key :
		req->parent != NULL ? req->parent->concurrency_key : NULL;
	if (req->parent != NULL)
	{
		nr.parent_namespace = req->parent->namespace;
		nr.parent_workflow_id = req->parent->workflow_id;
		nr.parent_run_id = &req->parent->run_id;
		nr.parent_initiated_id = req->parent_initiated_id;
	}
	if (req->cron_schedule != NULL)
	{
		CronSchedule sched;

		CronParse(req->cron_schedule, "cron_schedule", &sched);
		nr.backoff = TimestampDiffSeconds(CronNextFire(&sched, now), now);
	}

	/*
	 * With no run of the workflow_id yet, every policy starts it: try that
	 * first, in one statement.  Otherwise the policies below decide.
	 */
	if (create_run(&nr, now, true))
	{
		req->decision_taken = nr.decision_taken;
		return nr.run_id;
	}

	for (tries = 0;; tries++)
	{
		RunState	prev;
		bool		terminate = req->id_reuse_policy == ID_REUSE_TERMINATE_IF_RUNNING;
		bool		lock = (terminate || req->signal_name != NULL) &&
			req->parent == NULL;

		if (LoadRun(req->namespace, req->workflow_id, NULL, lock, false,
					&prev))
		{
			if (RunIsOpen(&prev) && req->signal_name != NULL)
			{
				pg_uuid_t  *running = palloc(sizeof(pg_uuid_t));

				SignalRun(&prev, now, req->signal_name, req->signal_input, NULL);
				SaveRun(&prev);
				memcpy(running, &prev.run_id, sizeof(pg_uuid_t));
				return running;
			}
			if (RunIsOpen(&prev) && req->parent != NULL)
			{
				/* The parent itself, or a run busy elsewhere: refused. */
				if (!terminate ||
					memcmp(&prev.run_id, &req->parent->run_id, sizeof(pg_uuid_t)) == 0 ||
					!LoadRunById(&prev.run_id, true, &prev) || !RunIsOpen(&prev) ||
					tries >= 3)
				{
					req->refused = true;
					return NULL;
				}
				TerminateRun(&prev, now, TERMINATE_IF_RUNNING_REASON,
							 replaced_by(nr.run_id));
			}
			else if (RunIsOpen(&prev))
			{
				if (!terminate || tries >= 3)
					report_already_started(req, &prev);
				TerminateRun(&prev, now, TERMINATE_IF_RUNNING_REASON,
							 replaced_by(nr.run_id));
			}
			else if (!reuse_allowed(req->id_reuse_policy, prev.status))
			{
				if (req->parent != NULL)
				{
					req->refused = true;
					return NULL;
				}
				ereport(ERROR,
						(errcode(ERRCODE_DURABLE_ALREADY_STARTED),
						 errmsg("workflow execution already started: workflow \"%s\" in namespace \"%s\" ran as run %s, which is %s",
								req->workflow_id, req->namespace,
								UuidToCString(&prev.run_id), prev.status),
						 errdetail("id_reuse_policy %s does not allow a new run after a run that is %s.",
								   id_reuse_policy_names[req->id_reuse_policy],
								   prev.status),
						 errhint("Start with id_reuse_policy allow_duplicate to run it again.")));
			}
		}
		if (create_run(&nr, now, false))
		{
			req->decision_taken = nr.decision_taken;
			break;
		}
		/* A concurrent start won; the next round reports, signals or terminates it. */
		if (req->parent != NULL && !terminate)
		{
			req->refused = true;
			return NULL;
		}
	}
	return nr.run_id;
}

/* The chain columns of a run, for the run that continues it */
typedef struct RunChain
{
	pg_uuid_t	first_run_id;
	TimestampTz chain_start_time;
	double		execution_timeout;
	TimestampTz execution_deadline;
	Jsonb	   *input;
	Jsonb	   *retry_policy;
	char	   *cron_schedule;
	Jsonb	   *memo;
	double		run_timeout;
	Jsonb	   *search_attributes;
	char	   *parent_namespace;
	char	   *parent_workflow_id;
	pg_uuid_t	parent_run_id;
	bool		has_parent;
	int64		parent_initiated_id;
} RunChain;

static void
read_chain(RunState *rs, RunChain *c)
{
	Datum		values[1];
	bool		isnull;
	Datum		d;

	values[0] = UUIDPGetDatum(&rs->run_id);
	if (RunPlan(RunRowHasInput() ? &load_chain : &load_chain_v11,
				values, NULL, false, 1) != 1)
		elog(ERROR, "run %s vanished", UuidToCString(&rs->run_id));
	memcpy(&c->first_run_id, DatumGetUUIDP(SPIGetDatum(0, 1, &isnull)),
		   sizeof(pg_uuid_t));
	c->chain_start_time = DatumGetTimestampTz(SPIGetDatum(0, 2, &isnull));
	d = SPIGetDatum(0, 3, &isnull);
	c->execution_timeout = isnull ? 0 : DatumGetFloat8(d);
	d = SPIGetDatum(0, 4, &isnull);
	c->execution_deadline = isnull ? DT_NOEND : DatumGetTimestampTz(d);
	c->input = SPIGetJsonbCopy(0, 5);
	c->retry_policy = SPIGetJsonbCopy(0, 6);
	c->cron_schedule = SPIGetText(0, 7);
	c->memo = SPIGetJsonbCopy(0, 8);
	d = SPIGetDatum(0, 9, &isnull);
	c->run_timeout = isnull ? 0 : DatumGetFloat8(d);
	c->parent_namespace = SPIGetText(0, 10);
	c->parent_workflow_id = SPIGetText(0, 11);
	d = SPIGetDatum(0, 12, &isnull);
	c->has_parent = !isnull;
	if (!isnull)
		memcpy(&c->parent_run_id, DatumGetUUIDP(d), sizeof(pg_uuid_t));
	d = SPIGetDatum(0, 13, &isnull);
	c->parent_initiated_id = isnull ? 0 : DatumGetInt64(d);
	c->search_attributes = SPIGetJsonbCopy(0, 14);
	SPI_freetuptable(SPI_tuptable);
}

/*
 * Close the run with WorkflowExecutionContinuedAsNew and start the next run
 * of its chain: same workflow_id, a new run_id, WorkflowExecutionStarted with
 * continuedExecutionRunId and initiator, the first decision task after the
 * backoff.  Chain-wide settings (execution deadline, parent, first run) carry
 * over; the request may replace the rest.
 */
pg_uuid_t *
ContinueRun(RunState *rs, TimestampTz now, ContinueRequest *cr,
			int64 completed_id)
{
	RunChain	chain;
	NewRun		nr;
	JsonBuilder jb;
	Datum		values[2];
	pg_uuid_t	old_run_id;

	read_chain(rs, &chain);
	memcpy(&old_run_id, &rs->run_id, sizeof(pg_uuid_t));

	memset(&nr, 0, sizeof(nr));
	nr.run_id = NewTimeOrderedUuid();
	nr.namespace = rs->namespace;
	nr.workflow_id = rs->workflow_id;
	nr.workflow_type = cr->workflow_type ? cr->workflow_type : rs->workflow_type;
	nr.task_queue = cr->task_queue ? cr->task_queue : rs->task_queue;
	nr.input = cr->inherit_input ? chain.input : cr->input;
	nr.attempt = cr->attempt;
	nr.first_run_id = &chain.first_run_id;
	nr.chain_start_time = chain.chain_start_time;
	nr.retry_policy = cr->retry_policy ? cr->retry_policy : chain.retry_policy;
	nr.execution_timeout = chain.execution_timeout;
	nr.run_timeout = cr->run_timeout > 0 ? cr->run_timeout : chain.run_timeout;
	nr.decision_timeout = cr->decision_timeout > 0 ? cr->decision_timeout :
		rs->decision_timeout;
	nr.execution_deadline = chain.execution_deadline;
	nr.cron_schedule = cr->cron_schedule ? cr->cron_schedule : chain.cron_schedule;
	nr.memo = cr->memo ? cr->memo : chain.memo;

	/*
	 * The run's search attributes carry over unless the request gives its
	 * own, as Cadence's and Temporal's ContinueAsNew keep the current ones
	 * when its attributes have none (retries and cron runs too).
	 */
	nr.search_attributes = cr->search_attributes ? cr->search_attributes :
		chain.search_attributes;
	nr.backoff = cr->backoff;
	if (chain.has_parent)
	{
		nr.parent_namespace = chain.parent_namespace;
		nr.parent_workflow_id = chain.parent_workflow_id;
		nr.parent_run_id = &chain.parent_run_id;
		nr.parent_initiated_id = chain.parent_initiated_id;
	}
	nr.continued_from = &old_run_id;
	nr.initiator = cr->initiator;
	/* The next run of the chain keeps the run's priority and key. */
	nr.priority = rs->priority;
	nr.concurrency_key = rs->concurrency_key;
	nr.continued_failure = cr->failure;
	nr.last_completion_result = cr->last_completion_result;

	JsonBegin(&jb);
	JsonAddText(&jb, "newExecutionRunId", UuidToCString(nr.run_id));
	JsonAddText(&jb, "workflowType", nr.workflow_type);
	JsonAddText(&jb, "taskQueue", nr.task_queue);
	JsonAddJsonb(&jb, "input", nr.input);
	if (nr.run_timeout > 0)
		JsonAddFloat(&jb, "workflowRunTimeoutSeconds", nr.run_timeout);
	JsonAddFloat(&jb, "taskStartToCloseTimeoutSeconds", nr.decision_timeout);
	JsonAddFloat(&jb, "backoffStartIntervalInSeconds", nr.backoff);
	JsonAddText(&jb, "initiator", nr.initiator);
	if (cr->search_attributes != NULL)
		JsonAddJsonb(&jb, "searchAttributes", cr->search_attributes);
	if (cr->failure != NULL)
		JsonAddJsonb(&jb, "failure", cr->failure);
	if (cr->last_completion_result != NULL)
		JsonAddJsonb(&jb, "lastCompletionResult", cr->last_completion_result);
	if (completed_id > 0)
		JsonAddInt(&jb, "decisionTaskCompletedEventId", completed_id);
	/* The run's own result: not one it passes on after a failure. */
	CloseRun(rs, now, "continued_as_new", "WorkflowExecutionContinuedAsNew",
			 JsonFinish(&jb),
			 cr->failure == NULL ? cr->last_completion_result : NULL,
			 cr->failure);

	values[0] = UUIDPGetDatum(&old_run_id);
	values[1] = UUIDPGetDatum(nr.run_id);
	RunPlan(&set_continued_to, values, NULL, false, 0);

	if (!create_run(&nr, now, false))
		elog(ERROR, "workflow \"%s\" is running twice", rs->workflow_id);
	return nr.run_id;
}

/* The failure object of a closed run: {reason, details}. */
static Jsonb *
failure_object(const char *reason, Jsonb *details)
{
	JsonBuilder jb;

	JsonBegin(&jb);
	JsonAddText(&jb, "reason", reason);
	JsonAddJsonb(&jb, "details", details);
	return JsonFinish(&jb);
}

/* The next cron fire time after now, as a backoff in seconds. */
static double
cron_backoff(const char *schedule, TimestampTz now)
{
	CronSchedule sched;

	CronParse(schedule, "cron_schedule", &sched);
	return TimestampDiffSeconds(CronNextFire(&sched, now), now);
}

/*
 * The lastCompletionResult the run was started with (its
 * WorkflowExecutionStarted), or NULL: what a run that does not complete
 * passes on to the next run of its chain.
 */
static Jsonb *
inherited_completion_result(RunState *rs)
{
	Datum		values[1];
	Jsonb	   *result = NULL;

	values[0] = UUIDPGetDatum(&rs->run_id);
	if (RunPlan(&load_last_completion_result, values, NULL, false, 1) == 1)
		result = SPIGetJsonbCopy(0, 1);
	SPI_freetuptable(SPI_tuptable);
	return result;
}

/*
 * Retry a failed or timed-out run per its retry policy (engine rule 7), or continue
 * its cron schedule; returns false when neither applies.  The next run gets
 * the last completion result this run got, as in Cadence: a cron run that
 * fails or times out passes on the result of the last one that completed.
 */
static bool
retry_or_continue_cron(RunState *rs, TimestampTz now, const char *reason,
					   Jsonb *failure, int64 completed_id)
{
	RunChain	chain;
	ContinueRequest cr;

	if (!rs->may_continue)
		return false;
	read_chain(rs, &chain);
	memset(&cr, 0, sizeof(cr));
	cr.inherit_input = true;
	cr.failure = failure;
	cr.last_completion_result = inherited_completion_result(rs);

	if (chain.retry_policy != NULL)
	{
		RetryPolicy policy;
		double		delay;

		ReadStoredRetryPolicy(chain.retry_policy, &policy);
		if (DecideRetry(&policy, rs->attempt, reason, now,
						chain.chain_start_time, chain.execution_deadline, -1,
						&delay) == RETRY_YES)
		{
			cr.initiator = "RetryPolicy";
			MetricsAdd(rs->namespace, rs->task_queue, MV_RETRIES_WORKFLOW, 1);
			cr.attempt = rs->attempt + 1;
			cr.backoff = delay;
			(void) ContinueRun(rs, now, &cr, completed_id);
			return true;
		}
	}
	if (chain.cron_schedule != NULL)
	{
		cr.initiator = "CronSchedule";
		cr.attempt = 1;
		cr.backoff = cron_backoff(chain.cron_schedule, now);
		(void) ContinueRun(rs, now, &cr, completed_id);
		return true;
	}
	return false;
}

/* CompleteWorkflowExecution: close completed, or continue a cron schedule. */
void
CompleteRun(RunState *rs, TimestampTz now, Jsonb *attributes, Jsonb *result)
{
	RunChain	chain;

	if (rs->may_continue)
		read_chain(rs, &chain);
	if (rs->may_continue && chain.cron_schedule != NULL)
	{
		ContinueRequest cr;

		memset(&cr, 0, sizeof(cr));
		cr.inherit_input = true;
		cr.initiator = "CronSchedule";
		cr.attempt = 1;
		cr.backoff = cron_backoff(chain.cron_schedule, now);
		cr.last_completion_result = result;
		(void) ContinueRun(rs, now, &cr, 0);
		return;
	}
	CloseRun(rs, now, "completed", "WorkflowExecutionCompleted", attributes,
			 result, NULL);
}

/*
 * FailWorkflowExecution: retry per the run's policy (engine rule 7), continue its
 * cron schedule, or close it failed.
 */
void
FailRun(RunState *rs, TimestampTz now, const char *reason, Jsonb *details,
		int64 completed_id)
{
	Jsonb	   *failure = failure_object(reason, details);
	JsonBuilder jb;

	if (retry_or_continue_cron(rs, now, reason, failure, completed_id))
		return;
	JsonBegin(&jb);
	JsonAddText(&jb, "reason", reason);
	JsonAddJsonb(&jb, "details", details);
	if (completed_id > 0)
		JsonAddInt(&jb, "decisionTaskCompletedEventId", completed_id);
	CloseRun(rs, now, "failed", "WorkflowExecutionFailed", JsonFinish(&jb),
			 NULL, failure);
}

/*
 * A run or execution timeout: the run timeout is retried per policy (rule
 * 7); the execution timeout ends the chain.
 */
void
TimeOutRun(RunState *rs, TimestampTz now, bool execution)
{
	const char *timeout_type = execution ? "EXECUTION" : "START_TO_CLOSE";
	char	   *reason = psprintf("durable:Timeout %s", timeout_type);
	JsonBuilder jb;

	if (!execution &&
		retry_or_continue_cron(rs, now, reason, failure_object(reason, NULL), 0))
		return;
	JsonBegin(&jb);
	JsonAddText(&jb, "timeoutType", timeout_type);
	CloseRun(rs, now, "timed_out", "WorkflowExecutionTimedOut", JsonFinish(&jb),
			 NULL, failure_object(reason, NULL));
}

/* Engine rule 9: a run that used up its activity attempts fails, without retry. */
void
FailRunForAttemptCap(RunState *rs, TimestampTz now)
{
	JsonBuilder jb;
	JsonBuilder db;
	Jsonb	   *details;

	JsonBegin(&db);
	JsonAddInt(&db, "activityAttempts", rs->activity_attempts);
	JsonAddInt(&db, "maxAttemptsPerRun", durable_max_attempts_per_run);
	details = JsonFinish(&db);
	JsonBegin(&jb);
	JsonAddText(&jb, "reason", "durable:MaxAttemptsPerRun");
	JsonAddJsonb(&jb, "details", details);
	CloseRun(rs, now, "failed", "WorkflowExecutionFailed", JsonFinish(&jb),
			 NULL, failure_object("durable:MaxAttemptsPerRun", details));
}

/* Merge search attributes into the run's (UpsertWorkflowSearchAttributes). */
void
UpsertSearchAttributes(RunState *rs, Jsonb *attributes)
{
	Datum		values[2];

	values[0] = UUIDPGetDatum(&rs->run_id);
	values[1] = JsonbPGetDatum(attributes);
	RunPlan(&set_search_attributes, values, NULL, false, 0);
}

/*
 * A run was closed (engine/runs.c, CloseRun): its pending children get their
 * parent close policy, and, when the chain ends here (any status but
 * continued_as_new), its parent hears of it (engine/children.c).
 */
static void
run_closed(RunState *rs, TimestampTz now, const char *status,
		   Jsonb *attributes)
{
	ApplyParentClosePolicies(rs, now);
	if (rs->has_parent && strcmp(status, "continued_as_new") != 0)
		NotifyParentOfClose(rs, now, status, attributes);
}

/* Set up the workflow lifecycle: CloseRun ends in run_closed. */
void
WorkflowLifecycleInit(void)
{
	SetRunClosedHook(run_closed);
}

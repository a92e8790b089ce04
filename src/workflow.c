/*-------------------------------------------------------------------------
 *
 * workflow.c
 *	  Starting and terminating workflow runs.
 *
 * At most one run of a (namespace, workflow_id) is running: the partial
 * unique index runs_one_running enforces it, and a start inserts with ON
 * CONFLICT DO NOTHING, so that of two racing starts exactly one wins and the
 * other sees the winner and reports it (WF001).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"

#include "cron.h"
#include "durable.h"

static KeptPlan insert_run = {
	NULL, "INSERT INTO durable.runs (run_id, run_seq, namespace, workflow_id,"
	" workflow_type, task_queue, input, attempt, first_run_id,"
	" chain_start_time, start_time, retry_policy, execution_timeout,"
	" run_timeout, decision_timeout, execution_deadline, cron_schedule, memo,"
	" last_event_id, decision_scheduled_id, decision_attempt)"
	" VALUES ($1, pg_catalog.nextval('durable.run_seq'), $2, $3, $4, $5, $6,"
	" 1, $1, $7, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)"
	" ON CONFLICT (namespace, workflow_id) WHERE status = 'running' DO NOTHING"
	" RETURNING run_id",
	17, {UUIDOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID, TIMESTAMPTZOID,
		JSONBOID, FLOAT8OID, FLOAT8OID, FLOAT8OID, TIMESTAMPTZOID, TEXTOID,
	JSONBOID, INT8OID, INT8OID, INT4OID}
};

static const char *const id_reuse_policy_names[] = {
	"allow_duplicate_failed_only",
	"allow_duplicate",
	"reject_duplicate",
	"terminate_if_running"
};

/* An id_reuse_policy name (DESIGN.md rule 8). */
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

/* The WorkflowExecutionStarted attributes of a first run. */
static Jsonb *
started_attributes(StartRequest *req, pg_uuid_t *run_id, double backoff)
{
	JsonBuilder jb;

	JsonBegin(&jb);
	JsonAddText(&jb, "workflowType", req->workflow_type);
	JsonAddText(&jb, "taskQueue", req->task_queue);
	JsonAddJsonb(&jb, "input", req->input);
	if (req->execution_timeout > 0)
		JsonAddFloat(&jb, "workflowExecutionTimeoutSeconds", req->execution_timeout);
	if (req->run_timeout > 0)
		JsonAddFloat(&jb, "workflowRunTimeoutSeconds", req->run_timeout);
	JsonAddFloat(&jb, "taskStartToCloseTimeoutSeconds", req->decision_timeout);
	JsonAddInt(&jb, "attempt", 1);
	JsonAddText(&jb, "firstExecutionRunId", UuidToCString(run_id));
	if (backoff > 0)
		JsonAddFloat(&jb, "firstDecisionTaskBackoffSeconds", backoff);
	if (req->retry_policy != NULL)
		JsonAddJsonb(&jb, "retryPolicy", req->retry_policy);
	if (req->cron_schedule != NULL)
		JsonAddText(&jb, "cronSchedule", req->cron_schedule);
	if (req->memo != NULL)
		JsonAddJsonb(&jb, "memo", req->memo);
	JsonAddText(&jb, "identity", CallerIdentity());
	return JsonFinish(&jb);
}

/*
 * Start the first run of a workflow execution, applying the id reuse policy.
 * Returns the new run_id.  The caller is connected to SPI.
 */
pg_uuid_t *
StartWorkflowExecution(StartRequest *req, TimestampTz now)
{
	pg_uuid_t  *run_id = NewRandomUuid();
	double		backoff = req->delay;
	TimestampTz deadline = DT_NOEND;
	int			events;
	int			tries;
	RunState	rs;

	CheckNamespaceExists(req->namespace);

	if (req->cron_schedule != NULL)
	{
		CronSchedule sched;

		CronParse(req->cron_schedule, "cron_schedule", &sched);
		backoff = TimestampDiffSeconds(CronNextFire(&sched, now), now);
	}
	if (req->execution_timeout > 0)
		deadline = TimestampPlusSeconds(now, req->execution_timeout);
	/* WorkflowExecutionStarted, and DecisionTaskScheduled unless delayed */
	events = backoff > 0 ? 1 : 2;

	for (tries = 0;; tries++)
	{
		RunState	prev;
		bool		terminate = req->id_reuse_policy == ID_REUSE_TERMINATE_IF_RUNNING;
		Datum		values[17];
		char		nulls[17];

		if (LoadRun(req->namespace, req->workflow_id, NULL, terminate, false,
					&prev))
		{
			if (RunIsOpen(&prev))
			{
				if (!terminate || tries >= 3)
					report_already_started(req, &prev);
				TerminateRun(&prev, now,
							 "terminated by a new start (id_reuse_policy terminate_if_running)",
							 NULL);
			}
			else if (!reuse_allowed(req->id_reuse_policy, prev.status))
				ereport(ERROR,
						(errcode(ERRCODE_DURABLE_ALREADY_STARTED),
						 errmsg("workflow execution already started: workflow \"%s\" in namespace \"%s\" ran as run %s, which %s",
								req->workflow_id, req->namespace,
								UuidToCString(&prev.run_id),
								strcmp(prev.status, "completed") == 0 ?
								"completed" : prev.status),
						 errdetail("id_reuse_policy %s does not allow a new run after a run that is %s.",
								   id_reuse_policy_names[req->id_reuse_policy],
								   prev.status),
						 errhint("Start with id_reuse_policy allow_duplicate to run it again.")));
		}

		memset(nulls, ' ', sizeof(nulls));
		values[0] = UUIDPGetDatum(run_id);
		values[1] = CStringGetTextDatum(req->namespace);
		values[2] = CStringGetTextDatum(req->workflow_id);
		values[3] = CStringGetTextDatum(req->workflow_type);
		values[4] = CStringGetTextDatum(req->task_queue);
		values[5] = req->input ? JsonbPGetDatum(req->input) : (Datum) 0;
		nulls[5] = req->input ? ' ' : 'n';
		values[6] = TimestampTzGetDatum(now);
		values[7] = req->retry_policy ? JsonbPGetDatum(req->retry_policy) : (Datum) 0;
		nulls[7] = req->retry_policy ? ' ' : 'n';
		values[8] = Float8GetDatum(req->execution_timeout);
		nulls[8] = req->execution_timeout > 0 ? ' ' : 'n';
		values[9] = Float8GetDatum(req->run_timeout);
		nulls[9] = req->run_timeout > 0 ? ' ' : 'n';
		values[10] = Float8GetDatum(req->decision_timeout);
		values[11] = TimestampTzGetDatum(deadline);
		nulls[11] = deadline != DT_NOEND ? ' ' : 'n';
		values[12] = req->cron_schedule ? CStringGetTextDatum(req->cron_schedule) : (Datum) 0;
		nulls[12] = req->cron_schedule ? ' ' : 'n';
		values[13] = req->memo ? JsonbPGetDatum(req->memo) : (Datum) 0;
		nulls[13] = req->memo ? ' ' : 'n';
		values[14] = Int64GetDatum(events);
		values[15] = Int64GetDatum(events == 2 ? 2 : 0);
		values[16] = Int32GetDatum(events == 2 ? 1 : 0);
		if (RunPlan(&insert_run, values, nulls, false, 1) > 0)
			break;
		/* A concurrent start won; the next round reports or terminates it. */
	}

	/* The run row is ours; write its first events. */
	memset(&rs, 0, sizeof(rs));
	memcpy(&rs.run_id, run_id, sizeof(pg_uuid_t));
	rs.namespace = req->namespace;
	rs.workflow_id = req->workflow_id;
	rs.workflow_type = req->workflow_type;
	rs.task_queue = req->task_queue;
	rs.status = "running";
	rs.attempt = 1;
	rs.decision_timeout = req->decision_timeout;
	rs.decision_started_time_null = true;

	(void) AppendEvent(&rs, now, "WorkflowExecutionStarted",
					   started_attributes(req, run_id, backoff));
	if (backoff > 0)
		CreateTimer(run_id, TIMER_FIRST_DECISION,
					TimestampPlusSeconds(now, backoff), 0, 0);
	else
		ScheduleDecisionTask(&rs, now);
	Assert(rs.last_event_id == events);

	if (req->run_timeout > 0)
		CreateTimer(run_id, TIMER_RUN_TIMEOUT,
					TimestampPlusSeconds(now, req->run_timeout), 0, 0);
	if (deadline != DT_NOEND)
		CreateTimer(run_id, TIMER_EXECUTION_TIMEOUT, deadline, 0, 0);
	return run_id;
}

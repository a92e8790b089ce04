/*-------------------------------------------------------------------------
 *
 * decision_task.c
 *	  The decision task of a run: started, completed, failed, timed out, and
 *	  the task a poll returns.
 *
 * A run has at most one decision task scheduled or started at a time
 * (RunState's decision_* fields, engine/runs.c).  A worker's poll starts it
 * (StartDecisionTask) and gets it with the run's history
 * (DecisionTaskJson); its answer completes it with decisions
 * (CompleteDecisionTask) or fails it (FailDecisionTask); its timer times it
 * out (DecisionTaskTimedOut).  A failed or timed out task is retried as a
 * transient task, which has no events until it completes, as in Cadence.
 * The SQL-callable functions that drive this are api/worker.c's, and the
 * executor's for SQL workflows (sqlwf/executor.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/json.h"
#include "utils/jsonb.h"

#include "durable.h"
#include "base/json.h"
#include "base/util.h"
#include "store/direct.h"
#include "store/metrics.h"
#include "store/task_limits.h"
#include "store/timer_rows.h"
#include "engine/decision_task.h"
#include "engine/decisions.h"
#include "engine/runs.h"

/*
 * Start the scheduled decision task of a locked run: DecisionTaskStarted.
 * False when the task is stale (the run closed or moved on).  An external
 * worker's task gets a timeout timer and is written at once; the executor
 * (save = false) completes the task in the same transaction, so it needs
 * neither.
 *
 * A transient task (a retry, DecisionIsTransient) starts without an event:
 * its started id is the one after its scheduled id.  One that events have
 * overtaken since it was scheduled (a signal) is a first attempt again, as in
 * Cadence: DecisionTaskScheduled and DecisionTaskStarted are written after
 * those events, and the task's scheduled id is the new one.
 */
bool
StartDecisionTask(RunState *rs, int64 scheduled_id, TimestampTz now,
				  const char *identity, bool save)
{
	if (!RunIsOpen(rs) || rs->decision_scheduled_id != scheduled_id ||
		rs->decision_started_id != 0)
		return false;

	/*
	 * A task claimed before its run was paused, whose claimer got the run's
	 * lock after the pause committed: it has not started, and waits held for
	 * the resume (engine/pause.c), under a new task id.
	 */
	if (RunIsPaused(rs))
	{
		EnqueueReadyTask(rs, rs->task_queue, 'd', rs->workflow_type,
						 scheduled_id, rs->decision_attempt, rs->priority,
						 rs->concurrency_key);
		FlushEvents(rs);
		return false;
	}

	/*
	 * An external worker's task gets the secret of its token, kept in the
	 * run's row (written by SaveRun below) when the database has the column.
	 * Two attempts of a transient task have the same ids: only the secret
	 * tells their tokens apart.
	 */
	if (save && rs->secret_stored)
	{
		rs->task_secret = NewTaskSecret();
		rs->task_secret_null = false;
		rs->task_secret_changed = true;
	}
	if (TransientDecisionOvertaken(rs))
	{
		rs->decision_attempt = 1;
		rs->decision_scheduled_id =
			AppendEvent(rs, now, "DecisionTaskScheduled",
						DecisionScheduledAttributes(rs));
	}
	if (DecisionIsTransient(rs))
		rs->decision_started_id = rs->decision_scheduled_id + 1;
	else
		rs->decision_started_id =
			AppendEvent(rs, now, "DecisionTaskStarted",
						DecisionStartedAttributes(rs->decision_scheduled_id,
												  identity));
	rs->decision_started_time = now;
	rs->decision_started_time_null = false;
	if (!save)
		return true;
	SaveRun(rs);

	/*
	 * One decision timeout timer per run.  A completed task leaves it in
	 * place, and one due no later than this task's timeout stays as it is:
	 * when it fires for an earlier task, it is set again for this one
	 * (DecisionTimeoutFired).  Cheaper than moving it at every start and
	 * deleting it at every completion.
	 */
	TimerDueBy(&rs->run_id, TIMER_DECISION_TIMEOUT,
			   TimestampPlusSeconds(now, rs->decision_timeout),
			   0, (int32) rs->decision_started_id);
	return true;
}

/*
 * Eager dispatch: start the decision task that was scheduled for the caller
 * of a locked run (take_decision, schedule_decision in engine/runs.c) instead
 * of being queued, as a poll would start it (DecisionTaskStarted with the
 * caller's identity, its timeout timer, the secret of its token), and write
 * the run.  False, and nothing written, when no task was so scheduled or the
 * run closed; the caller then saves the run itself.
 */
bool
StartTakenDecisionTask(RunState *rs, TimestampTz now, const char *identity)
{
	bool		taken = rs->decision_taken;

	rs->take_decision = false;
	rs->decision_taken = false;
	if (!taken || !RunIsOpen(rs))
		return false;
	if (!StartDecisionTask(rs, rs->decision_scheduled_id, now, identity, true))
		elog(ERROR, "decision task %lld of run %s scheduled for its caller could not start",
			 (long long) rs->decision_scheduled_id, UuidToCString(&rs->run_id));
	/* SaveRun may have closed it: a history at its limit (runs.c) */
	return RunIsOpen(rs);
}

/* End the started decision task (its timeout timer becomes a no-op). */
static void
end_decision_task(RunState *rs)
{
	/* Its slot under the queue's concurrency limit is free (task_limits.c). */
	if (rs->decision_started_id != 0)
		TaskLimitEnded(rs->namespace, rs->task_queue, 'd', &rs->run_id,
					   rs->decision_scheduled_id);
	rs->decision_scheduled_id = 0;
	rs->decision_started_id = 0;
	rs->decision_started_time_null = true;
}

/*
 * A decision task failed or timed out: the failure event (only for a first
 * attempt: a transient task ends without one, as in Cadence), the events
 * that arrived meanwhile, and the next attempt (after a backoff for
 * UnknownWorkflowType, engine rule 10).
 */
static void
retry_decision_task(RunState *rs, TimestampTz now, const char *event_type,
					Jsonb *attributes, bool backoff)
{
	if (!DecisionIsTransient(rs))
		(void) AppendEvent(rs, now, event_type, attributes);
	end_decision_task(rs);
	if (backoff)
	{
		double		delay;

		if (FlushBufferedEvents(rs) > 0)
			rs->decision_attempt = 1;
		else
			rs->decision_attempt++;
		delay = 5.0 * pow(2.0, Min(rs->decision_attempt - 2, 10));
		CreateTimer(&rs->run_id, TIMER_DECISION_RETRY,
					TimestampPlusSeconds(now, Min(delay, 300.0)), 0, 0);
	}
	else
		ScheduleNextDecisionAttempt(rs, now);
	SaveRun(rs);
}

/*
 * The decision timeout timer fired (run locked): time out the decision task
 * it was set for, unless that one ended meanwhile.
 */
bool
DecisionTaskTimedOut(RunState *rs, TimestampTz now, int64 started_id)
{
	JsonBuilder jb;

	if (rs->decision_started_id != started_id || started_id == 0)
		return false;
	JsonBegin(&jb);
	JsonAddInt(&jb, "scheduledEventId", rs->decision_scheduled_id);
	JsonAddInt(&jb, "startedEventId", started_id);
	JsonAddText(&jb, "timeoutType", "START_TO_CLOSE");
	retry_decision_task(rs, now, "DecisionTaskTimedOut", JsonFinish(&jb), false);
	return true;
}

/*
 * The decision timeout timer of a locked run fired.  It may have been set
 * for an earlier task, or an earlier attempt of a transient one (which has
 * the same event ids), and kept when this one started (TimerDueBy in
 * StartDecisionTask): the task started now times out when its own start plus
 * the decision timeout has passed, and otherwise gets the timer again at
 * that time.  Every start sets the start time it counts from (a row
 * without one times out at once, as its own timer would).  Returns whether
 * a task timed out.
 */
bool
DecisionTimeoutFired(RunState *rs, TimestampTz now)
{
	TimestampTz due;

	if (rs->decision_started_id == 0)
		return false;
	due = rs->decision_started_time_null ? now :
		TimestampPlusSeconds(rs->decision_started_time, rs->decision_timeout);
	if (due > now)
	{
		CreateTimer(&rs->run_id, TIMER_DECISION_TIMEOUT, due, 0,
					(int32) rs->decision_started_id);
		return false;
	}
	return DecisionTaskTimedOut(rs, now, rs->decision_started_id);
}

/*
 * A transient decision task being answered: its DecisionTaskScheduled and
 * DecisionTaskStarted, at the ids its poll response gave.
 */
static void
write_transient_decision(RunState *rs, TimestampTz now, const char *identity)
{
	int64		scheduled_id = rs->decision_scheduled_id;
	int64		started_id = rs->decision_started_id;
	TimestampTz started = rs->decision_started_time_null ? now :
		rs->decision_started_time;

	if (!DecisionIsTransient(rs))
		return;
	/* The scheduled time of a retry is not kept: its start's is used. */
	if (AppendEvent(rs, started, "DecisionTaskScheduled",
					DecisionScheduledAttributes(rs)) != scheduled_id ||
		AppendEvent(rs, started, "DecisionTaskStarted",
					DecisionStartedAttributes(scheduled_id, identity)) != started_id)
		elog(ERROR, "transient decision task %lld of run %s is not at the end of its history",
			 (long long) scheduled_id, UuidToCString(&rs->run_id));
}

/*
 * A worker answered the started decision task of a locked run with a
 * decision whose payload is over durable.max_payload_size.  As Temporal's
 * workflow task handler does (sizeLimitChecker, then terminateWorkflow):
 * DecisionTaskFailed with the decision's bad-attributes cause, the events
 * buffered meanwhile, then WorkflowExecutionTerminated (reason
 * durable:PayloadSizeExceedsLimit).  Failing the task alone would have the
 * worker send the same decision again.  The worker gets a WARNING: an error
 * would undo the termination.
 */
void
TerminateForOversizedDecision(RunState *rs, TimestampTz now,
							  const char *identity, DecisionOverLimit *over)
{
	JsonBuilder jb;
	Jsonb	   *details;

	JsonBegin(&jb);
	JsonAddText(&jb, "message", over->message);
	details = JsonFinish(&jb);

	write_transient_decision(rs, now, identity);
	JsonBegin(&jb);
	JsonAddInt(&jb, "scheduledEventId", rs->decision_scheduled_id);
	JsonAddInt(&jb, "startedEventId", rs->decision_started_id);
	JsonAddText(&jb, "cause", over->cause);
	JsonAddJsonb(&jb, "details", details);
	JsonAddText(&jb, "identity", identity);
	(void) AppendEvent(rs, now, "DecisionTaskFailed", JsonFinish(&jb));
	end_decision_task(rs);
	TerminateRunForLimit(rs, now, "durable:PayloadSizeExceedsLimit", details);
	ereport(WARNING,
			(errcode(ERRCODE_DURABLE_LIMIT_EXCEEDED),
			 errmsg("workflow \"%s\" run %s was terminated: a decision's payload is over its limit",
					rs->workflow_id, UuidToCString(&rs->run_id)),
			 errdetail("%s.", over->message)));
}

/*
 * Complete the started decision task of a locked run with a parsed list of
 * decisions, and write the run.  As Cadence writes it: a transient task's
 * DecisionTaskScheduled and DecisionTaskStarted (at the ids its poll
 * response gave), DecisionTaskCompleted, the events of the decisions, then
 * the events buffered while the task was started (engine rule 12), then the next
 * decision task if one is needed.  Returns true when that task was started
 * for the caller, who asked for it (take_decision: StartTakenDecisionTask).
 */
bool
CompleteDecisionTask(RunState *rs, TimestampTz now, Decision *list, int n,
					 const char *identity)
{
	int64		scheduled_id = rs->decision_scheduled_id;
	int64		started_id = rs->decision_started_id;
	int64		completed_id;
	int			flushed;
	JsonBuilder jb;

	/*
	 * A decision that closes the workflow while events wait unseen would lose
	 * them: fail the task instead, as Cadence does, and decide again.
	 */
	if (DecisionsCloseRun(list, n) && DecisionsLeaveUnhandledEvents(rs, list, n))
	{
		JsonBegin(&jb);
		JsonAddInt(&jb, "scheduledEventId", scheduled_id);
		JsonAddInt(&jb, "startedEventId", started_id);
		JsonAddText(&jb, "cause", "UnhandledDecision");
		JsonAddText(&jb, "identity", identity);
		retry_decision_task(rs, now, "DecisionTaskFailed", JsonFinish(&jb),
							false);
		return StartTakenDecisionTask(rs, now, identity);
	}

	write_transient_decision(rs, now, identity);
	JsonBegin(&jb);
	JsonAddInt(&jb, "scheduledEventId", scheduled_id);
	JsonAddInt(&jb, "startedEventId", started_id);
	JsonAddText(&jb, "identity", identity);
	completed_id = AppendEvent(rs, now, "DecisionTaskCompleted", JsonFinish(&jb));
	rs->previous_started_id = started_id;
	rs->decision_attempt = 0;
	end_decision_task(rs);

	/*
	 * Engine rule 12: the decisions' events, then what arrived meanwhile (a
	 * CancelTimer decision may drop a buffered TimerFired), then a decision
	 * task the decisions or those events call for.
	 */
	rs->defer_decision = true;
	ApplyDecisions(rs, now, list, n, completed_id);
	rs->defer_decision = false;
	if (RunIsOpen(rs))
	{
		flushed = FlushBufferedEvents(rs);
		if (flushed > 0 || rs->decision_wanted)
		{
			rs->decision_wanted = false;
			ScheduleDecisionTask(rs, now);
		}
		/* The task started for the caller is written with the run. */
		if (StartTakenDecisionTask(rs, now, identity))
			return true;
		if (RunIsOpen(rs))
			SaveRun(rs);
	}
	return false;
}

/*
 * Fail the started decision task of a locked run (DecisionTaskFailed) and
 * schedule the next attempt, after a backoff when backoff is true (engine rule 10).
 */
void
FailDecisionTask(RunState *rs, TimestampTz now, const char *cause,
				 Jsonb *details, const char *identity, bool backoff)
{
	JsonBuilder jb;

	JsonBegin(&jb);
	JsonAddInt(&jb, "scheduledEventId", rs->decision_scheduled_id);
	JsonAddInt(&jb, "startedEventId", rs->decision_started_id);
	JsonAddText(&jb, "cause", cause);
	JsonAddJsonb(&jb, "details", details);
	JsonAddText(&jb, "identity", identity);
	retry_decision_task(rs, now, "DecisionTaskFailed", JsonFinish(&jb),
						backoff);
}

/* Push one history event {eventId, eventTime, eventType, attributes}. */
static void
push_event(JsonbParseState **st, int64 event_id, TimestampTz event_time,
		   const char *event_type, Jsonb *attributes)
{
	char		buf[MAXDATELEN + 1];
	JsonbValue	v;

	(void) pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
	JsonbPushInt(st, "eventId", event_id);
	JsonEncodeDateTime(buf, TimestampTzGetDatum(event_time),
					   TIMESTAMPTZOID, NULL);
	JsonbPushString(st, "eventTime", pstrdup(buf));
	JsonbPushString(st, "eventType", event_type);
	JsonbPushKey(st, "attributes");
	if (attributes == NULL)
	{
		v.type = jbvNull;
		(void) pushJsonbValue(st, WJB_VALUE, &v);
	}
	else
	{
		v.type = jbvBinary;
		v.val.binary.data = &attributes->root;
		v.val.binary.len = VARSIZE(attributes) - VARHDRSZ;
		(void) pushJsonbValue(st, WJB_VALUE, &v);
	}
	(void) pushJsonbValue(st, WJB_END_OBJECT, NULL);
}

/*
 * A run's stored history as the "history" array of DecisionTaskJson:
 * [{eventId, eventTime, eventType, attributes}, ...] in event order; NULL
 * when it has no event (purged).  What replay_histories() exports.
 */
Jsonb *
HistoryJson(pg_uuid_t *run_id)
{
	JsonbParseState *st = NULL;
	JsonbValue *res;
	HistoryScan hs;
	HistoryEvent ev;
	int64		n = 0;

	(void) pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	BeginHistoryScan(&hs, run_id);
	while (HistoryScanNext(&hs, &ev))
	{
		push_event(&st, ev.event_id, ev.event_time, ev.event_type,
				   ev.attributes);
		n++;
	}
	EndHistoryScan(&hs);
	res = pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	return n == 0 ? NULL : JsonbValueToJsonb(res);
}

/*
 * The task a decision poll returns for the run rs (whose row was just
 * saved), with its history after the event history_after (0: the whole
 * history), read through the history's primary key.
 * The same value the statement
 *   jsonb_build_object('taskToken', ..., 'history', jsonb_agg(...))
 * built from the run row and its events.  A transient task (a retry, not in
 * history: DecisionIsTransient) ends the history with its
 * DecisionTaskScheduled and DecisionTaskStarted, as Cadence's poll response
 * does; they are written with these ids when the task completes.
 */
Jsonb *
DecisionTaskJson(RunState *rs, const char *token, int64 history_after,
				 const char *identity)
{
	JsonbParseState *st = NULL;

	return JsonbValueToJsonb(DecisionTaskPush(&st, rs, token, history_after,
											  identity));
}

/*
 * DecisionTaskJson's object pushed into *st, as a value where one is due
 * (after a key, in an array) or as the whole value when *st is NULL; returns
 * what the object's end returns (the whole value then).  An answer that
 * returns the task inside its own object builds it in place: a task made
 * jsonb first would be taken apart again to go into it.
 */
JsonbValue *
DecisionTaskPush(JsonbParseState **st, RunState *rs, const char *token,
				 int64 history_after, const char *identity)
{
	HistoryScan hs;
	HistoryEvent ev;

	(void) pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
	JsonbPushString(st, "taskToken", token);
	JsonbPushString(st, "namespace", rs->namespace);
	JsonbPushString(st, "workflowId", rs->workflow_id);
	JsonbPushString(st, "runId", UuidToCString(&rs->run_id));
	JsonbPushString(st, "workflowType", rs->workflow_type);
	JsonbPushString(st, "taskQueue", rs->task_queue);
	JsonbPushInt(st, "attempt", rs->decision_attempt);
	JsonbPushInt(st, "previousStartedEventId", rs->previous_started_id);
	JsonbPushInt(st, "startedEventId", rs->decision_started_id);
	JsonbPushKey(st, "history");
	(void) pushJsonbValue(st, WJB_BEGIN_ARRAY, NULL);

	BeginHistoryScanAfter(&hs, &rs->run_id, history_after);
	while (HistoryScanNext(&hs, &ev))
	{
		/* Read here anyway: the task's schedule-to-start (metrics.c) */
		if (ev.event_id == rs->decision_scheduled_id &&
			!rs->decision_started_time_null)
			MetricsObserve(rs->namespace, rs->task_queue,
						   MH_DECISION_SCHEDULE_TO_START,
						   TimestampDiffSeconds(rs->decision_started_time,
												ev.event_time));
		push_event(st, ev.event_id, ev.event_time, ev.event_type,
				   ev.attributes);
	}
	EndHistoryScan(&hs);
	if (DecisionIsTransient(rs))
	{
		push_event(st, rs->decision_scheduled_id, rs->decision_started_time,
				   "DecisionTaskScheduled", DecisionScheduledAttributes(rs));
		push_event(st, rs->decision_started_id, rs->decision_started_time,
				   "DecisionTaskStarted",
				   DecisionStartedAttributes(rs->decision_scheduled_id,
											 identity));
	}

	(void) pushJsonbValue(st, WJB_END_ARRAY, NULL);
	return pushJsonbValue(st, WJB_END_OBJECT, NULL);
}

/*-------------------------------------------------------------------------
 *
 * user_timers.c
 *	  The workflow's own timers: StartTimer and CancelTimer decisions, and
 *	  TimerFired when one is due.
 *
 * A started timer is a row of durable.user_timers (timer id to started
 * event) and a durable timer of kind user_timer (store/timer_rows.c) that
 * fires it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "base/json.h"
#include "base/util.h"
#include "store/spi.h"
#include "store/timer_rows.h"
#include "engine/runs.h"
#include "engine/user_timers.h"

static KeptPlan insert_user_timer = {
	NULL, "INSERT INTO durable.user_timers (run_id, timer_id, started_event_id,"
	" fire_time) VALUES ($1, $2, $3, $4)"
	" ON CONFLICT (run_id, timer_id) DO NOTHING",
	4, {UUIDOID, TEXTOID, INT8OID, TIMESTAMPTZOID}
};
static KeptPlan take_user_timer = {
	NULL, "DELETE FROM durable.user_timers WHERE run_id = $1 AND timer_id = $2"
	" RETURNING started_event_id",
	2, {UUIDOID, TEXTOID}
};
static KeptPlan take_user_timer_by_event = {
	NULL, "DELETE FROM durable.user_timers"
	" WHERE run_id = $1 AND started_event_id = $2 RETURNING timer_id",
	2, {UUIDOID, INT8OID}
};
/*
 * The TimerFired of a timer that fired while the decision task now completing
 * was started, dropped from the buffered events (the task cancels it); and
 * whether any buffered event is left.
 */
static KeptPlan take_buffered_fire = {
	NULL, "DELETE FROM durable.buffered_events WHERE run_id = $1 AND seq ="
	" (SELECT seq FROM durable.buffered_events WHERE run_id = $1"
	"  AND event_type = 'TimerFired' AND attributes->>'timerId' = $2"
	"  ORDER BY seq LIMIT 1)"
	" RETURNING (attributes->>'startedEventId')::bigint",
	2, {UUIDOID, TEXTOID}
};
static KeptPlan any_buffered = {
	NULL, "SELECT EXISTS (SELECT 1 FROM durable.buffered_events"
	" WHERE run_id = $1)",
	1, {UUIDOID}
};
/* StartTimer decision: TimerStarted, and a timer that fires TimerFired. */
void
StartUserTimer(RunState *rs, TimestampTz now, const char *timer_id,
			   double seconds, int64 completed_id, int index)
{
	JsonBuilder jb;
	Datum		values[4];
	int64		started_id;
	TimestampTz fire = TimestampPlusSeconds(now, seconds);

	JsonBegin(&jb);
	JsonAddText(&jb, "timerId", timer_id);
	JsonAddFloat(&jb, "startToFireTimeoutSeconds", seconds);
	JsonAddInt(&jb, "decisionTaskCompletedEventId", completed_id);
	started_id = AppendEvent(rs, now, "TimerStarted", JsonFinish(&jb));

	values[0] = UUIDPGetDatum(&rs->run_id);
	values[1] = CStringGetTextDatum(timer_id);
	values[2] = Int64GetDatum(started_id);
	values[3] = TimestampTzGetDatum(fire);
	if (RunPlan(&insert_user_timer, values, NULL, false, 0) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("decisions[%d].timerId \"%s\" is already started",
						index, timer_id)));
	CreateTimer(&rs->run_id, TIMER_USER, fire, started_id, 0);
}

/*
 * Take the TimerFired of timer_id from the run's buffered events: the timer
 * fired while the decision task that cancels it was started.  Returns its
 * started event id, 0 when there is none.
 */
static int64
take_buffered_fire_event(RunState *rs, Datum *values)
{
	bool		isnull;
	int64		started_id;

	if (!rs->has_buffered ||
		RunPlan(&take_buffered_fire, values, NULL, false, 1) == 0)
		return 0;
	started_id = DatumGetInt64(SPIGetDatum(0, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	RunPlan(&any_buffered, values, NULL, false, 1);
	rs->has_buffered = DatumGetBool(SPIGetDatum(0, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	return started_id;
}

/*
 * CancelTimer decision: TimerCanceled, or CancelTimerFailed if unknown.  A
 * timer whose TimerFired is still buffered (it fired while this decision
 * task was started, so the workflow has not seen it) is canceled as in
 * Cadence: TimerCanceled, and the TimerFired is dropped.
 */
void
CancelUserTimer(RunState *rs, TimestampTz now, const char *timer_id,
				int64 completed_id)
{
	JsonBuilder jb;
	Datum		values[2];
	bool		isnull;
	int64		started_id;

	values[0] = UUIDPGetDatum(&rs->run_id);
	values[1] = CStringGetTextDatum(timer_id);
	JsonBegin(&jb);
	JsonAddText(&jb, "timerId", timer_id);
	if (RunPlan(&take_user_timer, values, NULL, false, 1) > 0)
	{
		started_id = DatumGetInt64(SPIGetDatum(0, 1, &isnull));
		SPI_freetuptable(SPI_tuptable);
		DeleteTimer(&rs->run_id, TIMER_USER, started_id);
	}
	else if ((started_id = take_buffered_fire_event(rs, values)) == 0)
	{
		JsonAddText(&jb, "cause", "TIMER_ID_UNKNOWN");
		JsonAddInt(&jb, "decisionTaskCompletedEventId", completed_id);
		(void) AppendEvent(rs, now, "CancelTimerFailed", JsonFinish(&jb));
		return;
	}
	JsonAddInt(&jb, "startedEventId", started_id);
	JsonAddInt(&jb, "decisionTaskCompletedEventId", completed_id);
	(void) AppendEvent(rs, now, "TimerCanceled", JsonFinish(&jb));
}

/* A user timer fired: TimerFired (buffered during a decision task). */
bool
FireUserTimer(RunState *rs, int64 started_id, TimestampTz now)
{
	JsonBuilder jb;
	Datum		values[2];
	char	   *timer_id;

	values[0] = UUIDPGetDatum(&rs->run_id);
	values[1] = Int64GetDatum(started_id);
	if (RunPlan(&take_user_timer_by_event, values, NULL, false, 1) == 0)
		return false;
	timer_id = SPIGetText(0, 1);
	SPI_freetuptable(SPI_tuptable);
	JsonBegin(&jb);
	JsonAddText(&jb, "timerId", timer_id);
	JsonAddInt(&jb, "startedEventId", started_id);
	AppendEventOrBuffer(rs, now, "TimerFired", JsonFinish(&jb));
	ScheduleDecisionTask(rs, now);
	SaveRun(rs);
	return true;
}

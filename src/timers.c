/*-------------------------------------------------------------------------
 *
 * timers.c
 *	  Durable timers and durable.tick().
 *
 * A timer row names a run and what to do to it at due_at.  Firing takes the
 * run's row lock first (SKIP LOCKED: a run busy elsewhere is tried on the
 * next tick), then deletes the timer row in the same transaction as its
 * effect, so that a crash fires it again rather than losing it, and two
 * tickers never fire it twice.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "durable.h"

static KeptPlan insert_timer_payload = {
	NULL, "INSERT INTO durable.timers (due_at, kind, run_id, ref_id, payload)"
	" VALUES ($1, $2, $3, $4, $5) ON CONFLICT (run_id, kind, ref_id)"
	" DO UPDATE SET due_at = EXCLUDED.due_at, payload = EXCLUDED.payload",
	5, {TIMESTAMPTZOID, TEXTOID, UUIDOID, INT8OID, JSONBOID}
};
static KeptPlan due_timers = {
	NULL, "SELECT kind, run_id, ref_id, attempt, payload, due_at FROM durable.timers"
	" WHERE due_at >= $3 AND due_at <= $1 ORDER BY due_at LIMIT $2",
	3, {TIMESTAMPTZOID, INT4OID, TIMESTAMPTZOID}
};
static KeptPlan claim_timer = {
	NULL, "SELECT 1 FROM durable.timers"
	" WHERE run_id = $1 AND kind = $2 AND ref_id = $3 FOR UPDATE SKIP LOCKED",
	3, {UUIDOID, TEXTOID, INT8OID}
};
static KeptPlan take_timer = {
	NULL, "DELETE FROM durable.timers WHERE run_id = $1 AND kind = $2 AND ref_id = $3",
	3, {UUIDOID, TEXTOID, INT8OID}
};
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
static KeptPlan postpone_plan = {
	NULL, "UPDATE durable.timers SET due_at = $4"
	" WHERE run_id = $1 AND kind = $2 AND ref_id = $3",
	4, {UUIDOID, TEXTOID, INT8OID, TIMESTAMPTZOID}
};
static KeptPlan run_exists = {
	NULL, "SELECT 1 FROM durable.runs WHERE run_id = $1",
	1, {UUIDOID}
};

/* How long a timer whose effect failed is put off */
#define TIMER_RETRY_SECONDS 60

/* A due timer, copied out of the SPI result */
typedef struct DueTimer
{
	char	   *kind;
	pg_uuid_t	run_id;
	int64		ref_id;
	int32		attempt;
	Jsonb	   *payload;
	TimestampTz due_at;
} DueTimer;

/*
 * Add a timer, or move it (and set its attempt) if it exists; its effect
 * happens when it is due and a tick runs.  Written without a statement
 * (direct.c) under the run's lock, which every caller holds.
 */
void
CreateTimer(pg_uuid_t *run_id, const char *kind, TimestampTz due_at,
			int64 ref_id, int32 attempt)
{
	NoteTimerDue(due_at);
	DirectSetTimer(run_id, kind, ref_id, due_at, true, attempt);
}

/* Add a timer that carries a payload for its handler (children.c). */
void
CreateTimerWithPayload(pg_uuid_t *run_id, const char *kind,
					   TimestampTz due_at, int64 ref_id, Jsonb *payload)
{
	Datum		values[5];

	values[0] = TimestampTzGetDatum(due_at);
	values[1] = CStringGetTextDatum(kind);
	values[2] = UUIDPGetDatum(run_id);
	values[3] = Int64GetDatum(ref_id);
	values[4] = JsonbPGetDatum(payload);
	NoteTimerDue(due_at);
	RunPlan(&insert_timer_payload, values, NULL, false, 0);
}

/*
 * Lock a timer row without waiting: false when it is gone or another ticker
 * holds it.  For the timers whose handler takes no lock on their run.
 */
bool
ClaimTimer(pg_uuid_t *run_id, const char *kind, int64 ref_id)
{
	Datum		values[3];
	int			n;

	values[0] = UUIDPGetDatum(run_id);
	values[1] = CStringGetTextDatum(kind);
	values[2] = Int64GetDatum(ref_id);
	n = RunPlan(&claim_timer, values, NULL, false, 1);
	if (n > 0)
		SPI_freetuptable(SPI_tuptable);
	return n > 0;
}

/* Delete a timer; false when it is already gone (fired or dropped). */
bool
TakeTimer(pg_uuid_t *run_id, const char *kind, int64 ref_id)
{
	Datum		values[3];

	values[0] = UUIDPGetDatum(run_id);
	values[1] = CStringGetTextDatum(kind);
	values[2] = Int64GetDatum(ref_id);
	return RunPlan(&take_timer, values, NULL, false, 0) > 0;
}

/* Drop one timer of a run (the caller holds the run's lock). */
void
DeleteTimer(pg_uuid_t *run_id, const char *kind, int64 ref_id)
{
	(void) TakeTimer(run_id, kind, ref_id);
}

/*
 * A timer due at due_at is about to be written (inserted or moved there):
 * keep the due scans' low-water mark at or below it (due_mark.c), and wake
 * the background worker at commit if it is earlier than its next wakeup
 * (launcher.c).  Call it before the row is written.
 */
void
NoteTimerDue(TimestampTz due_at)
{
	DueMarkNoteWrite(due_at);
	WakeTimerWorkerAtCommit(due_at);
}

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
static bool
fire_user_timer(RunState *rs, int64 started_id, TimestampTz now)
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

/*
 * Drop every timer of a run but its outgoing signals and cancels (kind
 * external, children.c), without a statement (direct.c).  The caller holds
 * the run's lock.
 */
void
DeleteRunTimers(pg_uuid_t *run_id)
{
	(void) DirectDeleteRunTimers(run_id, TIMER_EXTERNAL);
}

/* Apply one timer to its locked run; returns whether it changed anything. */
static bool
fire_timer(DueTimer *t, RunState *rs, TimestampTz now)
{
	if (!RunIsOpen(rs))
		return false;

	if (strcmp(t->kind, TIMER_DECISION_TIMEOUT) == 0)
		return DecisionTaskTimedOut(rs, now, t->attempt);
	else if (strcmp(t->kind, TIMER_USER) == 0)
		return fire_user_timer(rs, t->ref_id, now);
	else if (strcmp(t->kind, TIMER_FIRST_DECISION) == 0 ||
			 strcmp(t->kind, TIMER_DECISION_RETRY) == 0)
	{
		ScheduleDecisionTask(rs, now);
		SaveRun(rs);
	}
	else if (strcmp(t->kind, TIMER_RUN_TIMEOUT) == 0)
		TimeOutRun(rs, now, false);
	else if (strcmp(t->kind, TIMER_EXECUTION_TIMEOUT) == 0)
		TimeOutRun(rs, now, true);
	else if (strcmp(t->kind, TIMER_DELIVER) == 0)
		return FireDeliverTimer(rs, t->ref_id, t->payload, now);
	else
		elog(ERROR, "unknown durable timer kind \"%s\"", t->kind);
	return true;
}

/*
 * Fire one due timer: lock its run (SKIP LOCKED: a run busy elsewhere waits
 * for the next tick), take the timer row, apply it.  Returns whether it had
 * an effect (a stale timer is only deleted).
 */
static bool
fire_due_timer(DueTimer *t, TimestampTz now)
{
	RunState	rs;
	Datum		tv[1];

	CHECK_FOR_INTERRUPTS();

	/*
	 * A signal or cancel to deliver, or a parent close policy to apply, acts
	 * on another run: its handler locks that run alone (children.c).
	 */
	if (strcmp(t->kind, TIMER_EXTERNAL) == 0)
		return FireExternalTimer(&t->run_id, t->ref_id, t->payload, now);
	if (strcmp(t->kind, TIMER_CLOSE_POLICY) == 0)
		return FireClosePolicyTimer(&t->run_id, t->ref_id, t->payload, now);
	/* A put-off executor task, whose run may be what the engine fails on */
	if (strcmp(t->kind, TIMER_TASK_RETRY) == 0)
		return FireTaskRetryTimer(&t->run_id, t->ref_id);

	if (!LoadRunById(&t->run_id, true, &rs))
	{
		/* Busy elsewhere: next tick.  Gone (purged): drop the timer. */
		tv[0] = UUIDPGetDatum(&t->run_id);
		if (RunPlan(&run_exists, tv, NULL, false, 1) > 0)
		{
			SPI_freetuptable(SPI_tuptable);
			return false;
		}
		return TakeTimer(&t->run_id, t->kind, t->ref_id);
	}

	/*
	 * An activity timer also needs the activity's lock, taken before the
	 * timer's (lock order run, activity, timer).
	 */
	if (strcmp(t->kind, TIMER_ACTIVITY) == 0)
	{
		if (!FireActivityTimer(&rs, t->ref_id, now))
			return false;
		if (RunIsOpen(&rs))
			SaveRun(&rs);
		return true;
	}
	/* Under the run's lock, the timer is ours unless already fired. */
	if (!TakeTimer(&t->run_id, t->kind, t->ref_id))
		return false;
	return fire_timer(t, &rs, now);
}

/* One due timer to fire, and whether it had an effect */
typedef struct FireOne
{
	DueTimer   *timer;
	TimestampTz now;
	bool		effect;
} FireOne;

static void
fire_one(void *arg)
{
	FireOne    *fo = (FireOne *) arg;

	fo->effect = fire_due_timer(fo->timer, fo->now);
}

/* A timer had its effect: counted, with how late it fired (metrics.c). */
static void
count_fired(DueTimer *t, TimestampTz now, int *fired)
{
	(*fired)++;
	MetricsAdd(NULL, NULL, MV_TIMERS_FIRED, 1);
	MetricsObserve(NULL, NULL, MH_TIMER_LATENESS,
				   TimestampDiffSeconds(now, t->due_at));
}

/* Put off a timer whose effect fails, so that the others go on. */
static void
postpone_timer(DueTimer *t, TimestampTz now)
{
	Datum		values[4];

	values[0] = UUIDPGetDatum(&t->run_id);
	values[1] = CStringGetTextDatum(t->kind);
	values[2] = Int64GetDatum(t->ref_id);
	values[3] = TimestampTzGetDatum(TimestampPlusSeconds(now, TIMER_RETRY_SECONDS));
	NoteTimerDue(DatumGetTimestampTz(values[3]));
	RunPlan(&postpone_plan, values, NULL, false, 0);
}

/*
 * Fire up to max_items timers due at now, walking timers_due from start (a
 * low-water mark, due_mark.c); returns how many fired, and sets *first_seen
 * (when not NULL) to the due time of the first timer found, or to now when
 * none was.  Runs in the caller's transaction and SPI connection.  With
 * careful, each timer runs in a subtransaction: one that fails is logged and
 * put off.
 */
int
FireDueTimersCarefully(TimestampTz start, TimestampTz now, int max_items,
					   bool careful, TimestampTz *first_seen)
{
	Datum		values[3];
	SPITupleTable *tt;
	DueTimer   *timers;
	int			n;
	int			i;
	int			fired = 0;

	values[0] = TimestampTzGetDatum(now);
	values[1] = Int32GetDatum(max_items);
	values[2] = TimestampTzGetDatum(start);
	n = RunPlan(&due_timers, values, NULL, false, 0);
	tt = SPI_tuptable;
	timers = palloc(sizeof(DueTimer) * (n + 1));
	for (i = 0; i < n; i++)
	{
		bool		isnull;
		HeapTuple	tup = tt->vals[i];

		timers[i].kind = TextDatumGetCString(SPI_getbinval(tup, tt->tupdesc, 1, &isnull));
		memcpy(&timers[i].run_id,
			   DatumGetUUIDP(SPI_getbinval(tup, tt->tupdesc, 2, &isnull)),
			   sizeof(pg_uuid_t));
		timers[i].ref_id = DatumGetInt64(SPI_getbinval(tup, tt->tupdesc, 3, &isnull));
		timers[i].attempt = DatumGetInt32(SPI_getbinval(tup, tt->tupdesc, 4, &isnull));
		timers[i].payload = SPIGetJsonbCopy(i, 5);
		timers[i].due_at = DatumGetTimestampTz(SPI_getbinval(tup, tt->tupdesc, 6, &isnull));
	}
	SPI_freetuptable(tt);
	if (first_seen != NULL)
		*first_seen = n > 0 ? timers[0].due_at : now;

	for (i = 0; i < n; i++)
	{
		FireOne	fo;
		ErrorData  *edata;

		fo.timer = &timers[i];
		fo.now = now;
		fo.effect = false;
		if (!careful)
			fire_one(&fo);
		else if ((edata = RunInSubtransaction(fire_one, &fo)) != NULL)
		{
			/* Its events went with the subtransaction. */
			ResetEventBatches();
			/* A cancel request is for the whole batch, not this timer's. */
			if (ErrorIsCancel(edata))
				ReThrowError(edata);
			ereport(WARNING,
					(errmsg("durable timer %s/%lld of run %s failed: %s",
							timers[i].kind, (long long) timers[i].ref_id,
							UuidToCString(&timers[i].run_id), edata->message),
					 errdetail("It is put off by %d seconds.", TIMER_RETRY_SECONDS)));
			FreeErrorData(edata);
			postpone_timer(&timers[i], now);
			continue;
		}
		if (fo.effect)
			count_fired(&timers[i], now, &fired);
	}
	return fired;
}

/*
 * Fire up to max_items due timers in the caller's transaction.  From the
 * beginning of durable.timers, not from the background worker's low-water
 * mark: durable.tick() also fires timers that durable did not write (a
 * restored dump) at once.
 */
int
FireDueTimers(TimestampTz now, int max_items)
{
	return FireDueTimersCarefully(DT_NOBEGIN, now, max_items, false, NULL);
}

PG_FUNCTION_INFO_V1(durable_tick);
/* durable.tick(max_items): fire the timers that are due now. */
Datum
durable_tick(PG_FUNCTION_ARGS)
{
	int32		max_items = PG_GETARG_INT32(0);
	int			fired;

	RequireWritableTransaction("durable.tick()");

	if (max_items <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_items must be greater than zero")));
	DurableSPIConnect();
	fired = FireDueTimers(DurableNow(), max_items);
	DurableSPIFinish();
	PG_RETURN_INT32(fired);
}

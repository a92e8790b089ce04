/*-------------------------------------------------------------------------
 *
 * timer_fire.c
 *	  Firing due durable timers, and durable.tick().
 *
 * Firing takes the run's row lock first (SKIP LOCKED: a run busy elsewhere
 * is tried on the next tick), then deletes the timer row in the same
 * transaction as its effect, so that a crash fires it again rather than
 * losing it, and two tickers never fire it twice.
 *
 * What each kind of timer does, and which lock it takes first, is one row of
 * timer_kinds below, as PostgreSQL keeps its resource managers in one table.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "base/clock.h"
#include "base/util.h"
#include "store/direct.h"
#include "store/metrics.h"
#include "store/spi.h"
#include "store/timer_rows.h"
#include "engine/activities.h"
#include "engine/children.h"
#include "engine/decision_task.h"
#include "engine/runs.h"
#include "engine/user_timers.h"
#include "engine/workflow.h"
#include "sqlwf/executor.h"
#include "api/timer_fire.h"

static KeptPlan due_timers = {
	NULL, "SELECT kind, run_id, ref_id, attempt, payload, due_at FROM durable.timers"
	" WHERE due_at >= $3 AND due_at <= $1 ORDER BY due_at LIMIT $2",
	3, {TIMESTAMPTZOID, INT4OID, TIMESTAMPTZOID}
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
 * What a due timer of a kind does, and the locks taken before it, in order:
 *
 *	TIMER_LOCKS_OWN		the handler locks what it acts on itself: another
 *						run (children.c), or an executor task's run, which
 *						may be what the engine fails on (executor.c)
 *	TIMER_LOCKS_RUN		the run (SKIP LOCKED), then the timer row; the
 *						handler runs only while the run is open
 *	TIMER_LOCKS_RUN_FIRST	the run, then the handler, which takes the
 *						locks between the run's and the timer's (an
 *						activity's: lock order run, activity, timer)
 */
typedef enum TimerLockRule
{
	TIMER_LOCKS_OWN,
	TIMER_LOCKS_RUN,
	TIMER_LOCKS_RUN_FIRST
} TimerLockRule;

typedef struct TimerKind
{
	const char *name;
	TimerLockRule locks;
	/* TIMER_LOCKS_OWN: fire the timer; returns whether it had an effect */
	bool		(*fire) (DueTimer *t, TimestampTz now);
	/* Otherwise: apply the timer to its locked run */
	bool		(*fire_locked) (RunState *rs, DueTimer *t, TimestampTz now);
} TimerKind;

static bool
fire_decision_timeout(RunState *rs, DueTimer *t, TimestampTz now)
{
	return DecisionTimeoutFired(rs, now);
}

static bool
fire_user_timer(RunState *rs, DueTimer *t, TimestampTz now)
{
	return FireUserTimer(rs, t->ref_id, now);
}

/* A delayed first decision task, or the retry of a failed one */
static bool
fire_schedule_decision(RunState *rs, DueTimer *t, TimestampTz now)
{
	ScheduleDecisionTask(rs, now);
	SaveRun(rs);
	return true;
}

static bool
fire_run_timeout(RunState *rs, DueTimer *t, TimestampTz now)
{
	TimeOutRun(rs, now, false);
	return true;
}

static bool
fire_execution_timeout(RunState *rs, DueTimer *t, TimestampTz now)
{
	TimeOutRun(rs, now, true);
	return true;
}

static bool
fire_deliver(RunState *rs, DueTimer *t, TimestampTz now)
{
	return FireDeliverTimer(rs, t->ref_id, t->payload, now);
}

static bool
fire_activity(RunState *rs, DueTimer *t, TimestampTz now)
{
	if (!FireActivityTimer(rs, t->ref_id, now))
		return false;
	if (RunIsOpen(rs))
		SaveRun(rs);
	return true;
}

static bool
fire_external(DueTimer *t, TimestampTz now)
{
	return FireExternalTimer(&t->run_id, t->ref_id, t->payload, now);
}

static bool
fire_close_policy(DueTimer *t, TimestampTz now)
{
	return FireClosePolicyTimer(&t->run_id, t->ref_id, t->payload, now);
}

static bool
fire_task_retry(DueTimer *t, TimestampTz now)
{
	return FireTaskRetryTimer(&t->run_id, t->ref_id);
}

static const TimerKind timer_kinds[] = {
	{TIMER_FIRST_DECISION, TIMER_LOCKS_RUN, NULL, fire_schedule_decision},
	{TIMER_DECISION_RETRY, TIMER_LOCKS_RUN, NULL, fire_schedule_decision},
	{TIMER_DECISION_TIMEOUT, TIMER_LOCKS_RUN, NULL, fire_decision_timeout},
	{TIMER_RUN_TIMEOUT, TIMER_LOCKS_RUN, NULL, fire_run_timeout},
	{TIMER_EXECUTION_TIMEOUT, TIMER_LOCKS_RUN, NULL, fire_execution_timeout},
	{TIMER_USER, TIMER_LOCKS_RUN, NULL, fire_user_timer},
	{TIMER_DELIVER, TIMER_LOCKS_RUN, NULL, fire_deliver},
	{TIMER_ACTIVITY, TIMER_LOCKS_RUN_FIRST, NULL, fire_activity},
	{TIMER_EXTERNAL, TIMER_LOCKS_OWN, fire_external, NULL},
	{TIMER_CLOSE_POLICY, TIMER_LOCKS_OWN, fire_close_policy, NULL},
	{TIMER_TASK_RETRY, TIMER_LOCKS_OWN, fire_task_retry, NULL},
};

/* The row of timer_kinds of a kind, or NULL for a kind durable does not know */
static const TimerKind *
timer_kind(const char *name)
{
	int			i;

	for (i = 0; i < lengthof(timer_kinds); i++)
		if (strcmp(timer_kinds[i].name, name) == 0)
			return &timer_kinds[i];
	return NULL;
}

/*
 * Fire one due timer with the locks its kind takes (timer_kinds).  A timer
 * whose run is busy elsewhere waits for the next tick.  Returns whether it
 * had an effect (a stale timer is only deleted).
 */
static bool
fire_due_timer(DueTimer *t, TimestampTz now)
{
	const TimerKind *kind = timer_kind(t->kind);
	RunState	rs;
	Datum		tv[1];

	CHECK_FOR_INTERRUPTS();

	if (kind != NULL && kind->locks == TIMER_LOCKS_OWN)
		return kind->fire(t, now);

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
	if (kind != NULL && kind->locks == TIMER_LOCKS_RUN_FIRST)
		return kind->fire_locked(&rs, t, now);

	/* Under the run's lock, the timer is ours unless already fired. */
	if (!TakeTimer(&t->run_id, t->kind, t->ref_id))
		return false;
	if (!RunIsOpen(&rs))
		return false;
	if (kind == NULL)
		elog(ERROR, "unknown durable timer kind \"%s\"", t->kind);
	return kind->fire_locked(&rs, t, now);
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
			DurableSPIForgetWrites();
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

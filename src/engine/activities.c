/*-------------------------------------------------------------------------
 *
 * activities.c
 *	  The life of an activity: scheduling, attempts, retries, timeouts,
 *	  heartbeats and cancellation (engine rules 1-6, 9, 11).
 *
 * An activity is one row of durable.activities from ActivityTaskScheduled
 * until its outcome.  Each activity has at most one timer (kind "activity",
 * ref_id its scheduled event id), due at the earliest of its deadlines: the
 * attempt's ScheduleToStart, StartToClose and Heartbeat deadlines, the
 * activity's ScheduleToClose deadline, and the end of a retry backoff.  When
 * the timer fires the handler works out which deadline passed.
 *
 * Attempts are not history: ActivityTaskStarted is written only with the
 * activity's final outcome (engine rule 6); each attempt is a row of
 * durable.activity_attempt_log instead.
 *
 * Lock order: run, activity, timer.  A poller that starts an attempt locks
 * only the activity (and its timer), never the run.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"

#include "durable.h"
#include "base/backoff.h"
#include "base/json.h"
#include "base/util.h"
#include "store/direct.h"
#include "store/metrics.h"
#include "store/namespaces.h"
#include "store/spi.h"
#include "store/task_limits.h"
#include "store/timer_rows.h"
#include "store/wait.h"
#include "engine/activities.h"
#include "engine/runs.h"
#include "engine/workflow.h"

/* durable.max_pending_activities and durable.default_activity_timeout */
int			durable_max_pending_activities = 2000;
int			durable_default_activity_timeout = 600;

#define ACTIVITY_COLUMNS \
	"run_id, scheduled_event_id, namespace, workflow_id, activity_id, " \
	"activity_type, task_queue, input, state, attempt, retry_policy, " \
	"schedule_to_start_timeout, start_to_close_timeout, " \
	"schedule_to_close_timeout, heartbeat_timeout, first_scheduled_time, " \
	"scheduled_time, started_time, last_heartbeat_time, heartbeat_details, " \
	"last_failure_reason, last_failure_details, next_attempt_time, " \
	"last_worker_identity, cancel_requested"

static KeptPlan load_activity_by_id = {
	NULL, "SELECT " ACTIVITY_COLUMNS " FROM durable.activities"
	" WHERE run_id = $1 AND activity_id = $2 FOR UPDATE",
	2, {UUIDOID, TEXTOID}
};
static KeptPlan get_activity_order = {
	NULL, "SELECT priority, concurrency_key FROM durable.activities"
	" WHERE run_id = $1 AND scheduled_event_id = $2",
	2, {UUIDOID, INT8OID}
};
static KeptPlan count_pending = {
	NULL, "SELECT count(*) FROM durable.activities WHERE run_id = $1",
	1, {UUIDOID}
};

#define TS_NONE DT_NOEND

/* The columns of ACTIVITY_COLUMNS, by name, in that order */
#define N_ACTIVITY_COLUMNS DIRECT_ACTIVITY_NCOLUMNS
static const char *const activity_column_names[N_ACTIVITY_COLUMNS] = {
	"run_id", "scheduled_event_id", "namespace", "workflow_id", "activity_id",
	"activity_type", "task_queue", "input", "state", "attempt", "retry_policy",
	"schedule_to_start_timeout", "start_to_close_timeout",
	"schedule_to_close_timeout", "heartbeat_timeout", "first_scheduled_time",
	"scheduled_time", "started_time", "last_heartbeat_time",
	"heartbeat_details", "last_failure_reason", "last_failure_details",
	"next_attempt_time", "last_worker_identity", "cancel_requested"
};

/* A row being read: a tuple and where each of ACTIVITY_COLUMNS is in it */
typedef struct ActivityRow
{
	HeapTuple	tuple;
	TupleDesc	desc;
	const int  *attnums;		/* 1-based, N_ACTIVITY_COLUMNS of them */
} ActivityRow;

static Datum
get_datum(ActivityRow *r, int col, bool *isnull)
{
	return heap_getattr(r->tuple, r->attnums[col - 1], r->desc, isnull);
}

/* A nullable timestamp column; NULL is TS_NONE. */
static TimestampTz
get_ts(ActivityRow *r, int col)
{
	bool		isnull;
	Datum		d = get_datum(r, col, &isnull);

	return isnull ? TS_NONE : DatumGetTimestampTz(d);
}

static double
get_seconds(ActivityRow *r, int col)
{
	bool		isnull;
	Datum		d = get_datum(r, col, &isnull);

	return isnull ? 0 : DatumGetFloat8(d);
}

static char *
get_text(ActivityRow *r, int col)
{
	bool		isnull;
	Datum		d = get_datum(r, col, &isnull);

	return isnull ? NULL : TextDatumGetCString(d);
}

static Jsonb *
get_jsonb(ActivityRow *r, int col)
{
	bool		isnull;
	Datum		d = get_datum(r, col, &isnull);

	return isnull ? NULL : DatumGetJsonbPCopy(d);
}

static TimestampTz next_deadline(ActivityState *a);

/*
 * Whether a new activity's task may be started by the call that schedules
 * it rather than queued (eager dispatch, a waiting poll): not a SQL
 * activity, which goes to the executors; not one of a paused queue or of a
 * queue with limits (store/queue_pause.c, store/task_limits.c: the limits
 * are decided where a poll claims); not one of a paused run, which is held
 * (engine/pause.c).
 */
static bool
may_skip_queue(RunState *rs, ActivityRequest *req)
{
	return ReadyTaskKind(rs, req->task_queue, 'a', req->activity_type) == 'a' &&
		!RunIsPaused(rs) &&
		!TaskQueuePaused(rs->namespace, req->task_queue, NULL) &&
		!TaskQueueLimited(rs->namespace, req->task_queue, 'a');
}

/* Fill a from a row (columns ACTIVITY_COLUMNS), copying what it keeps. */
static void
read_activity(ActivityState *a, ActivityRow *r)
{
	bool		isnull;

	memcpy(&a->run_id, DatumGetUUIDP(get_datum(r, 1, &isnull)),
		   sizeof(pg_uuid_t));
	a->scheduled_event_id = DatumGetInt64(get_datum(r, 2, &isnull));
	a->namespace = get_text(r, 3);
	a->workflow_id = get_text(r, 4);
	a->activity_id = get_text(r, 5);
	a->activity_type = get_text(r, 6);
	a->task_queue = get_text(r, 7);
	a->input = get_jsonb(r, 8);
	a->state = get_text(r, 9);
	a->attempt = DatumGetInt32(get_datum(r, 10, &isnull));
	a->retry_policy_json = get_jsonb(r, 11);
	a->schedule_to_start = get_seconds(r, 12);
	a->start_to_close = get_seconds(r, 13);
	a->schedule_to_close = get_seconds(r, 14);
	a->heartbeat_timeout = get_seconds(r, 15);
	a->first_scheduled_time = get_ts(r, 16);
	a->scheduled_time = get_ts(r, 17);
	a->started_time = get_ts(r, 18);
	a->last_heartbeat_time = get_ts(r, 19);
	a->heartbeat_details = get_jsonb(r, 20);
	a->last_failure_reason = get_text(r, 21);
	a->last_failure_details = get_jsonb(r, 22);
	a->next_attempt_time = get_ts(r, 23);
	a->last_worker_identity = get_text(r, 24);
	a->cancel_requested = DatumGetBool(get_datum(r, 25, &isnull));
	a->task_secret_null = true;
	a->task_secret = 0;
	a->deleted = false;
	a->finished_in_db = false;
	a->may_have_timer = next_deadline(a) != TS_NONE;
}

/*
 * Fill a from row 0 of the last result (columns ACTIVITY_COLUMNS, then
 * task_secret if the statement read it).
 */
static void
read_activity_row(ActivityState *a)
{
	static const int spi_columns[N_ACTIVITY_COLUMNS] = {
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
		20, 21, 22, 23, 24, 25
	};
	ActivityRow r;

	r.tuple = SPI_tuptable->vals[0];
	r.desc = SPI_tuptable->tupdesc;
	r.attnums = spi_columns;
	read_activity(a, &r);
	if (r.desc->natts > N_ACTIVITY_COLUMNS)
	{
		Datum		d = heap_getattr(r.tuple, N_ACTIVITY_COLUMNS + 1, r.desc,
									 &a->task_secret_null);

		a->task_secret = a->task_secret_null ? 0 : DatumGetInt64(d);
	}
	SPI_freetuptable(SPI_tuptable);
}

/*
 * Fill a from a row of durable.activities read directly (direct.c), of the
 * table's descriptor desc, with its task_secret if the table has the column
 * (0.3.0).
 */
static void
read_activity_tuple(ActivityState *a, HeapTuple tuple, TupleDesc desc)
{
	int			attnums[N_ACTIVITY_COLUMNS];
	ActivityRow r;
	int			i;

	for (i = 0; i < N_ACTIVITY_COLUMNS; i++)
	{
		attnums[i] = TupleDescColumnIndex(desc, activity_column_names[i]) + 1;
		if (attnums[i] == 0)
			elog(ERROR, "durable.activities lacks column \"%s\"",
				 activity_column_names[i]);
	}
	r.tuple = tuple;
	r.desc = desc;
	r.attnums = attnums;
	read_activity(a, &r);
	i = TupleDescColumnIndex(desc, "task_secret");
	if (i >= 0)
	{
		Datum		d = heap_getattr(tuple, i + 1, desc, &a->task_secret_null);

		a->task_secret = a->task_secret_null ? 0 : DatumGetInt64(d);
	}
}

/* Fill a from a row read directly, if one was found (false if not). */
static bool
read_activity_found(ActivityState *a, HeapTuple tuple, TupleDesc desc)
{
	if (tuple == NULL)
		return false;
	read_activity_tuple(a, tuple, desc);
	return true;
}

/*
 * Lock (FOR UPDATE) and load a pending activity by scheduled event id, by
 * primary key without a statement (direct.c); false if none.
 */
bool
LoadActivity(pg_uuid_t *run_id, int64 scheduled_event_id, ActivityState *a)
{
	TupleDesc	desc = NULL;
	HeapTuple	tuple = DirectFetchActivity(run_id, scheduled_event_id, &desc);

	return read_activity_found(a, tuple, desc);
}

/*
 * Load a pending activity by scheduled event id, unlocked, as a fresh
 * snapshot sees it: for reading only (a poll handed an attempt it did not
 * claim, api/worker.c); false if none.
 */
bool
ReadActivity(pg_uuid_t *run_id, int64 scheduled_event_id, ActivityState *a)
{
	TupleDesc	desc = NULL;
	HeapTuple	tuple = DirectReadActivity(run_id, scheduled_event_id, &desc);

	return read_activity_found(a, tuple, desc);
}

/* A nullable value of a direct write (direct.c) */
#define TS_VALUE(i, t) \
	do { values[i] = TimestampTzGetDatum(t); isnull[i] = (t) == TS_NONE; } while (0)
#define JSONB_VALUE(i, j) \
	do { values[i] = (j) ? JsonbPGetDatum(j) : (Datum) 0; isnull[i] = (j) == NULL; } while (0)
#define TEXT_VALUE(i, s) \
	do { values[i] = (s) ? CStringGetTextDatum(s) : (Datum) 0; isnull[i] = (s) == NULL; } while (0)

/*
 * Insert the row of an ended attempt into durable.activity_attempt_log,
 * without a statement (direct.c).
 */
static void
write_attempt_log(ActivityState *a, TimestampTz now, const char *outcome,
				  const char *reason, Jsonb *details, TimestampTz next_retry)
{
	Datum		values[DIRECT_ATTEMPT_LOG_NCOLUMNS];
	bool		isnull[DIRECT_ATTEMPT_LOG_NCOLUMNS];

	memset(isnull, false, sizeof(isnull));
	values[0] = UUIDPGetDatum(&a->run_id);
	values[1] = Int64GetDatum(a->scheduled_event_id);
	values[2] = Int32GetDatum(a->attempt);
	values[3] = CStringGetTextDatum(a->activity_id);
	values[4] = CStringGetTextDatum(a->activity_type);
	TEXT_VALUE(5, a->last_worker_identity);
	TS_VALUE(6, a->scheduled_time);
	TS_VALUE(7, a->started_time);
	values[8] = TimestampTzGetDatum(now);
	values[9] = CStringGetTextDatum(outcome);
	TEXT_VALUE(10, reason);
	JSONB_VALUE(11, details);
	TS_VALUE(12, next_retry);
	DirectLogActivityAttempt(values, isnull);
}

/*
 * Delete a pending activity and return it, for an outcome that ends it
 * (completed, canceled): a DELETE ... RETURNING instead of a lock and a
 * delete, without a statement (direct.c).
 */
bool
TakeActivity(pg_uuid_t *run_id, int64 scheduled_event_id, ActivityState *a)
{
	TupleDesc	desc;
	HeapTuple	tuple;

	if (!DirectDeleteActivity(run_id, scheduled_event_id, false, 0, &tuple,
							  &desc))
		return false;
	read_activity_tuple(a, tuple, desc);
	a->deleted = true;
	return true;
}

/*
 * Take the started attempt of an activity that completed: the row deleted
 * (if that attempt is the current one, started), the attempt logged as
 * completed and the timer dropped, in that order (activity, then timer),
 * without a statement (direct.c).  False when that attempt is not the
 * current one (stale): nothing is written.
 */
bool
TakeCompletedActivity(pg_uuid_t *run_id, int64 scheduled_event_id,
					  int32 attempt, TimestampTz now, ActivityState *a)
{
	TupleDesc	desc;
	HeapTuple	tuple;

	if (!DirectDeleteActivity(run_id, scheduled_event_id, true, attempt,
							  &tuple, &desc))
		return false;
	read_activity_tuple(a, tuple, desc);
	write_attempt_log(a, now, "completed", NULL, NULL, TS_NONE);
	(void) DirectDeleteTimer(run_id, TIMER_ACTIVITY, scheduled_event_id);
	a->deleted = true;
	a->finished_in_db = true;
	return true;
}

/* Lock and load a pending activity by its activityId; false if none. */
bool
LoadActivityById(pg_uuid_t *run_id, const char *activity_id, ActivityState *a)
{
	Datum		values[2];

	values[0] = UUIDPGetDatum(run_id);
	values[1] = CStringGetTextDatum(activity_id);
	if (RunPlan(&load_activity_by_id, values, NULL, false, 1) == 0)
		return false;
	read_activity_row(a);
	return true;
}

/* Write back the mutable columns of an activity. */
static void
save_activity_row(ActivityState *a)
{
	static const char *const names[10] = {
		"state", "attempt", "scheduled_time", "started_time",
		"last_heartbeat_time", "heartbeat_details", "last_failure_reason",
		"last_failure_details", "next_attempt_time", "cancel_requested"
	};
	Datum		values[10];
	bool		isnull[10];

	memset(isnull, false, sizeof(isnull));
	values[0] = CStringGetTextDatum(a->state);
	values[1] = Int32GetDatum(a->attempt);
	TS_VALUE(2, a->scheduled_time);
	TS_VALUE(3, a->started_time);
	TS_VALUE(4, a->last_heartbeat_time);
	JSONB_VALUE(5, a->heartbeat_details);
	TEXT_VALUE(6, a->last_failure_reason);
	JSONB_VALUE(7, a->last_failure_details);
	TS_VALUE(8, a->next_attempt_time);
	values[9] = BoolGetDatum(a->cancel_requested);
	/* The UPDATE by primary key, without a statement (direct.c) */
	DirectUpdateActivity(&a->run_id, a->scheduled_event_id, lengthof(names),
						 names, values, isnull);
}

/* The activity's ScheduleToClose deadline, TS_NONE if it has none. */
static TimestampTz
schedule_to_close_deadline(ActivityState *a)
{
	if (a->schedule_to_close <= 0)
		return TS_NONE;
	return TimestampPlusSeconds(a->first_scheduled_time, a->schedule_to_close);
}

/*
 * The attempt's heartbeat deadline, TS_NONE if it has none: its heartbeat
 * timeout after its start or its last heartbeat, whichever is later.  The
 * last heartbeat time is kept across attempts (describe_workflow shows it,
 * as Cadence's PendingActivityInfo does), so an earlier attempt's is older
 * than this attempt's start.
 */
static TimestampTz
heartbeat_deadline(ActivityState *a)
{
	TimestampTz last;

	if (a->heartbeat_timeout <= 0 || a->started_time == TS_NONE)
		return TS_NONE;
	last = a->started_time;
	if (a->last_heartbeat_time != TS_NONE && a->last_heartbeat_time > last)
		last = a->last_heartbeat_time;
	return TimestampPlusSeconds(last, a->heartbeat_timeout);
}

/* The deadline by which the current attempt must end (task "deadline"). */
TimestampTz
ActivityAttemptDeadline(ActivityState *a)
{
	TimestampTz d = TS_NONE;

	if (a->started_time != TS_NONE)
		d = TimestampPlusSeconds(a->started_time, a->start_to_close);
	return Min(d, schedule_to_close_deadline(a));
}

/* The earliest deadline of the activity in its current state. */
static TimestampTz
next_deadline(ActivityState *a)
{
	TimestampTz d = schedule_to_close_deadline(a);

	if (a->next_attempt_time != TS_NONE)
		d = Min(d, a->next_attempt_time);
	else if (strcmp(a->state, "SCHEDULED") == 0)
	{
		if (a->schedule_to_start > 0)
			d = Min(d, TimestampPlusSeconds(a->scheduled_time, a->schedule_to_start));
	}
	else
	{
		d = Min(d, TimestampPlusSeconds(a->started_time, a->start_to_close));
		d = Min(d, heartbeat_deadline(a));
	}
	return d;
}

/* Set the activity's timer to its next deadline (or drop it). */
static void
arm_activity_timer(ActivityState *a)
{
	TimestampTz due = next_deadline(a);

	a->may_have_timer = due != TS_NONE;
	if (due == TS_NONE)
	{
		(void) DirectDeleteTimer(&a->run_id, TIMER_ACTIVITY,
								 a->scheduled_event_id);
		return;
	}
	/* Under the activity's lock (direct.c); its attempt is left as it is. */
	NoteTimerDue(due);
	DirectSetTimer(&a->run_id, TIMER_ACTIVITY, a->scheduled_event_id, due,
				   false, 0, false);
}

/* Record an ended attempt in durable.activity_attempt_log. */
static void
log_activity_attempt(ActivityState *a, TimestampTz now, const char *outcome,
					 const char *reason, Jsonb *details, TimestampTz next_retry)
{
	write_attempt_log(a, now, outcome, reason, details, next_retry);
	/* Its slot under the queue's concurrency limit is free (task_limits.c). */
	TaskLimitEnded(a->namespace, a->task_queue, 'a', &a->run_id,
				   a->scheduled_event_id);
}

/*
 * Schedule an activity from a validated ScheduleActivityTask decision:
 * ActivityTaskScheduled, the activity row, its ready task and its timer.
 * Timeouts are completed as engine rule 5 says and extended as engine rule 6 says.
 */
void
ScheduleActivity(RunState *rs, TimestampTz now, ActivityRequest *req,
				 int64 completed_event_id)
{
	Jsonb	   *policy_json = req->retry_policy;
	RetryPolicy policy;
	double		s2s = req->schedule_to_start;
	double		stc = req->start_to_close;
	double		s2c = req->schedule_to_close;
	double		extend = 0;
	Datum		values[1];
	Datum		row[N_ACTIVITY_COLUMNS];
	bool		row_null[N_ACTIVITY_COLUMNS];
	JsonBuilder jb;
	ActivityState a;
	int			priority;
	char	   *key;
	int64		pending;
	bool		isnull;

	/*
	 * Limits first: nothing is written for a run that is over them.  A run
	 * has at most as many pending activities as it made attempts, so the
	 * count is needed only past that many.
	 */
	pending = 0;
	if (rs->activity_attempts >= durable_max_pending_activities)
	{
		values[0] = UUIDPGetDatum(&rs->run_id);
		RunPlan(&count_pending, values, NULL, false, 1);
		pending = DatumGetInt64(SPIGetDatum(0, 1, &isnull));
		SPI_freetuptable(SPI_tuptable);
	}
	if (pending >= durable_max_pending_activities)
		ereport(ERROR,
				(errcode(ERRCODE_DURABLE_LIMIT_EXCEEDED),
				 errmsg("workflow \"%s\" has too many pending activities",
						rs->workflow_id),
				 errdetail("It has %lld; durable.max_pending_activities is %d.",
						   (long long) pending, durable_max_pending_activities)));

	if (policy_json == NULL)
		policy_json = NamespaceActivityPolicy(rs->namespace);
	/* validated when given; recorded normalised */
	policy_json = ReadStoredRetryPolicyNormalized(policy_json, &policy);

	/* Engine rule 5: StartToClose defaults to ScheduleToClose, then to the GUC. */
	if (stc <= 0)
		stc = s2c > 0 ? s2c : durable_default_activity_timeout;
	if (s2c > 0)
	{
		stc = Min(stc, s2c);
		if (s2s > 0)
			s2s = Min(s2s, s2c);
	}
	/* Engine rule 6: a retried activity's queue and overall timeouts extend. */
	if (policy.maximum_attempts != 1)
	{
		if (policy.expiration_interval > 0)
			extend = policy.expiration_interval;
		else if (rs->workflow_deadline != DT_NOEND)
			extend = TimestampDiffSeconds(rs->workflow_deadline, now);
		if (extend > 0)
		{
			if (s2s > 0 && extend > s2s)
				s2s = extend;
			if (s2c > 0 && extend > s2c)
				s2c = extend;
		}
	}

	JsonBegin(&jb);
	JsonAddText(&jb, "activityId", req->activity_id);
	JsonAddText(&jb, "activityType", req->activity_type);
	JsonAddText(&jb, "taskQueue", req->task_queue);
	JsonAddJsonb(&jb, "input", req->input);
	if (s2s > 0)
		JsonAddFloat(&jb, "scheduleToStartTimeoutSeconds", s2s);
	if (s2c > 0)
		JsonAddFloat(&jb, "scheduleToCloseTimeoutSeconds", s2c);
	JsonAddFloat(&jb, "startToCloseTimeoutSeconds", stc);
	if (req->heartbeat_timeout > 0)
		JsonAddFloat(&jb, "heartbeatTimeoutSeconds", req->heartbeat_timeout);
	JsonAddJsonb(&jb, "retryPolicy", policy_json);
	JsonAddInt(&jb, "decisionTaskCompletedEventId", completed_event_id);
	/* Recorded as the decision gave them; otherwise the run's apply. */
	if (req->priority > 0)
		JsonAddInt(&jb, "priority", req->priority);
	if (req->concurrency_key != NULL)
		JsonAddText(&jb, "concurrencyKey", req->concurrency_key);

	memset(&a, 0, sizeof(a));
	a.scheduled_event_id = AppendEvent(rs, now, "ActivityTaskScheduled",
									   JsonFinish(&jb));

	/*
	 * The row, as an INSERT ... ON CONFLICT (run_id, activity_id) DO NOTHING
	 * of the columns below (the others get their defaults: SCHEDULED,
	 * attempt 1, not cancel_requested) would make it, without a statement
	 * (direct.c).  Its own priority and concurrency key (0.9.0), for its
	 * retries, are written with it when they are not the defaults.
	 */
	priority = req->priority > 0 ? req->priority : rs->priority;
	key = req->concurrency_key != NULL ? req->concurrency_key :
		rs->concurrency_key;
	memset(row_null, true, sizeof(row_null));
	row[0] = UUIDPGetDatum(&rs->run_id);
	row[1] = Int64GetDatum(a.scheduled_event_id);
	row[2] = CStringGetTextDatum(rs->namespace);
	row[3] = CStringGetTextDatum(rs->workflow_id);
	row[4] = CStringGetTextDatum(req->activity_id);
	row[5] = CStringGetTextDatum(req->activity_type);
	row[6] = CStringGetTextDatum(req->task_queue);
	row[7] = req->input != NULL ? JsonbPGetDatum(req->input) : (Datum) 0;
	row[8] = CStringGetTextDatum("SCHEDULED");
	row[9] = Int32GetDatum(1);
	row[10] = JsonbPGetDatum(policy_json);
	row[11] = Float8GetDatum(s2s);
	row[12] = Float8GetDatum(stc);
	row[13] = Float8GetDatum(s2c);
	row[14] = Float8GetDatum(req->heartbeat_timeout);
	row[15] = TimestampTzGetDatum(now);
	row[16] = TimestampTzGetDatum(now);
	row[24] = BoolGetDatum(false);
	row_null[0] = row_null[1] = row_null[2] = row_null[3] = false;
	row_null[4] = row_null[5] = row_null[6] = false;
	row_null[7] = req->input == NULL;
	row_null[8] = row_null[9] = row_null[10] = false;
	row_null[11] = !(s2s > 0);
	row_null[12] = false;
	row_null[13] = !(s2c > 0);
	row_null[14] = !(req->heartbeat_timeout > 0);
	row_null[15] = row_null[16] = row_null[24] = false;
	if (!DirectInsertActivity(row, row_null, priority != 3 || key != NULL,
							  (int16) priority, key))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("decisions[%d].activityId \"%s\" is already pending",
						req->index, req->activity_id)));

	/* One attempt more for the run's cap (engine rule 9). */
	rs->activity_attempts++;

	memcpy(&a.run_id, &rs->run_id, sizeof(pg_uuid_t));
	a.state = "SCHEDULED";
	a.attempt = 1;
	a.schedule_to_start = s2s;
	a.start_to_close = stc;
	a.schedule_to_close = s2c;
	a.heartbeat_timeout = req->heartbeat_timeout;
	a.first_scheduled_time = now;
	a.scheduled_time = now;
	a.started_time = TS_NONE;
	a.last_heartbeat_time = TS_NONE;
	a.next_attempt_time = TS_NONE;
	if (next_deadline(&a) != TS_NONE)
		arm_activity_timer(&a);

	/*
	 * Eager dispatch, as Temporal's request_eager_execution: the worker
	 * completing the decision task starts the activity itself when it asked
	 * for activities and the activity is on the decision task's own queue
	 * (StartActivityAttempt, api/worker.c) and may skip it
	 * (may_skip_queue); it is not queued.
	 */
	if (req->eager && rs->n_eager < rs->eager_activities &&
		strcmp(req->task_queue, rs->task_queue) == 0 &&
		may_skip_queue(rs, req))
	{
		if (rs->eager_ids == NULL)
			rs->eager_ids = palloc(sizeof(int64) * rs->eager_activities);
		rs->eager_ids[rs->n_eager++] = a.scheduled_event_id;
		return;
	}

	/*
	 * Under the same rules, one activity of the call may go to a poll of its
	 * queue that waits for a task (Temporal's "sync match"): the caller
	 * starts it for that poll (api/worker.c, store/wait.c
	 * "ReserveWaitingPoller"); it is not queued.
	 */
	if (rs->may_hand_over && rs->handoff_activity == 0 &&
		PollMayBeWaiting(rs->namespace, req->task_queue, 'a') &&
		may_skip_queue(rs, req))
	{
		char		identity[HANDOFF_NAME_LEN];

		if (ReserveWaitingPoller(rs->namespace, req->task_queue, 'a',
								 identity))
		{
			rs->handoff_activity = a.scheduled_event_id;
			rs->handoff_identity = pstrdup(identity);
			return;
		}
	}
	EnqueueReadyTask(rs, req->task_queue, 'a', req->activity_type,
					 a.scheduled_event_id, 1, priority, key);
}

/*
 * The priority and concurrency key of an activity's tasks: those it was
 * scheduled with, else its run's (before 0.9.0: 3 and none).
 */
void
ActivityTaskOrder(pg_uuid_t *run_id, int64 scheduled_event_id,
				  int *priority, char **concurrency_key)
{
	Datum		values[2];
	bool		isnull;
	Datum		d;

	*priority = 3;
	*concurrency_key = NULL;
	if (!DurableColumnExists("activities", "concurrency_key"))
		return;
	values[0] = UUIDPGetDatum(run_id);
	values[1] = Int64GetDatum(scheduled_event_id);
	if (RunPlan(&get_activity_order, values, NULL, true, 1) == 0)
		return;
	d = SPIGetDatum(0, 1, &isnull);
	if (!isnull)
		*priority = DatumGetInt16(d);
	d = SPIGetDatum(0, 2, &isnull);
	if (!isnull)
		*concurrency_key = TextDatumGetCString(d);
	SPI_freetuptable(SPI_tuptable);
}

/* Queue an attempt of a loaded activity, in its own claim order. */
static void
enqueue_attempt(RunState *rs, ActivityState *a)
{
	int			priority;
	char	   *key;

	ActivityTaskOrder(&a->run_id, a->scheduled_event_id, &priority, &key);
	EnqueueReadyTask(rs, a->task_queue, 'a', a->activity_type,
					 a->scheduled_event_id, a->attempt, priority, key);
}

/*
 * Start the claimed attempt of an activity (poll): mark it started and set
 * its timer.  Returns false when the task is stale.
 */
bool
StartActivityAttempt(pg_uuid_t *run_id, int64 scheduled_event_id,
					 int32 attempt, TimestampTz now, const char *identity,
					 ActivityState *a)
{
	TupleDesc	desc;
	HeapTuple	tuple;

	/*
	 * The UPDATE of the attempt, without a statement (direct.c); it keeps
	 * the secret of the attempt's token, drawn now.
	 */
	tuple = DirectStartActivityAttempt(run_id, scheduled_event_id, attempt,
									   now, identity, NewTaskSecret(), &desc);
	if (tuple == NULL)
		return false;
	/* with the secret just kept, if the table has the column (0.3.0) */
	read_activity_tuple(a, tuple, desc);
	arm_activity_timer(a);
	MetricsAdd(a->namespace, a->task_queue, MV_ACTIVITY_STARTED, 1);
	MetricsObserve(a->namespace, a->task_queue, MH_ACTIVITY_SCHEDULE_TO_START,
				   TimestampDiffSeconds(now, a->scheduled_time));
	return true;
}

/*
 * End the activity for good: ActivityTaskStarted (with the final attempt and
 * the last failure) then the outcome event, both buffered while a decision
 * task is started; drop the activity and its timer; schedule a decision.
 */
static void
finish_activity(RunState *rs, ActivityState *a, TimestampTz now,
				const char *outcome_event, Jsonb *outcome_attrs)
{
	if (a->started_time != TS_NONE)
	{
		JsonBuilder jb;

		JsonBegin(&jb);
		JsonAddInt(&jb, "scheduledEventId", a->scheduled_event_id);
		JsonAddText(&jb, "identity", a->last_worker_identity);
		JsonAddInt(&jb, "attempt", a->attempt);
		if (a->last_failure_reason != NULL)
		{
			JsonAddText(&jb, "lastFailureReason", a->last_failure_reason);
			JsonAddJsonb(&jb, "lastFailureDetails", a->last_failure_details);
		}
		AppendEventOrBuffer(rs, a->started_time, "ActivityTaskStarted",
							JsonFinish(&jb));
	}
	AppendEventOrBuffer(rs, now, outcome_event, outcome_attrs);

	/*
	 * The DELETEs by primary key, without a statement (direct.c).  The timer
	 * only if the activity's stored state had a deadline: every write of that
	 * state arms its timer (arm_activity_timer), and one with no deadline has
	 * none, such as an executor's SQL activity, started and ended in the
	 * transaction that read it.  A timer left by a path that broke this rule
	 * would fire on no activity and do nothing, and goes with its run's.
	 */
	if (!a->deleted)
		(void) DirectDeleteActivity(&a->run_id, a->scheduled_event_id, false,
									0, NULL, NULL);
	if (!a->finished_in_db && a->may_have_timer)
		(void) DirectDeleteTimer(&a->run_id, TIMER_ACTIVITY,
								 a->scheduled_event_id);
	ScheduleDecisionTask(rs, now);
}

/* The activity completed: ActivityTaskCompleted. */
void
CompleteActivity(RunState *rs, ActivityState *a, TimestampTz now,
				 Jsonb *result, const char *identity)
{
	JsonBuilder jb;

	MetricsAdd(a->namespace, a->task_queue, MV_ACTIVITY_COMPLETED, 1);
	if (!a->finished_in_db)
		log_activity_attempt(a, now, "completed", NULL, NULL, TS_NONE);
	else
		TaskLimitEnded(a->namespace, a->task_queue, 'a', &a->run_id,
					   a->scheduled_event_id);
	JsonBegin(&jb);
	JsonAddInt(&jb, "scheduledEventId", a->scheduled_event_id);
	JsonAddJsonb(&jb, "result", result);
	JsonAddText(&jb, "identity", identity);
	finish_activity(rs, a, now, "ActivityTaskCompleted", JsonFinish(&jb));
}

/* The worker reported the activity canceled: ActivityTaskCanceled. */
void
CancelActivity(RunState *rs, ActivityState *a, TimestampTz now,
			   Jsonb *details, const char *identity,
			   int64 cancel_requested_event_id)
{
	JsonBuilder jb;

	MetricsAdd(a->namespace, a->task_queue, MV_ACTIVITY_CANCELED, 1);
	if (a->started_time != TS_NONE)
		log_activity_attempt(a, now, "canceled", NULL, details, TS_NONE);
	JsonBegin(&jb);
	JsonAddInt(&jb, "scheduledEventId", a->scheduled_event_id);
	if (cancel_requested_event_id > 0)
		JsonAddInt(&jb, "latestCancelRequestedEventId", cancel_requested_event_id);
	JsonAddJsonb(&jb, "details", details);
	JsonAddText(&jb, "identity", identity);
	finish_activity(rs, a, now, "ActivityTaskCanceled", JsonFinish(&jb));
}

/*
 * An attempt failed (fail_activity, or a StartToClose or Heartbeat timeout):
 * retry after the backoff of engine rules 1-2, or end the activity for good.
 * timeout_type is NULL for a failure reported by the worker.
 */
void
FailActivityAttempt(RunState *rs, ActivityState *a, TimestampTz now,
					const char *reason, Jsonb *details,
					double override_delay, const char *timeout_type)
{
	RetryPolicy policy;
	RetryVerdict verdict;
	double		delay;
	TimestampTz deadline;
	const char *outcome = timeout_type ? "timed_out" : "failed";
	JsonBuilder jb;

	MetricsAdd(a->namespace, a->task_queue,
			   timeout_type ? MV_ACTIVITY_TIMED_OUT : MV_ACTIVITY_FAILED, 1);

	/* Engine rule 9: a run out of attempts fails at once, without retry. */
	if (rs->activity_attempts >= durable_max_attempts_per_run)
	{
		log_activity_attempt(a, now, outcome, reason, details, TS_NONE);
		FailRunForAttemptCap(rs, now);
		return;
	}

	/*
	 * Once its cancellation is requested an activity is not retried: the
	 * failure or timeout is recorded and the workflow decides, as in
	 * Cadence's and Temporal's RetryActivity (no retry when the activity
	 * info has CancelRequested; Temporal's retry state CANCEL_REQUESTED).
	 */
	ReadStoredRetryPolicy(a->retry_policy_json, &policy);
	deadline = Min(schedule_to_close_deadline(a), rs->workflow_deadline);
	if (a->cancel_requested)
		verdict = RETRY_CANCEL_REQUESTED;
	else
		verdict = DecideRetry(&policy, a->attempt, reason, now,
							  a->first_scheduled_time, deadline,
							  override_delay, &delay);
	if (verdict == RETRY_YES)
	{
		TimestampTz next = TimestampPlusSeconds(now, delay);

		log_activity_attempt(a, now, outcome, reason, details, next);
		MetricsAdd(a->namespace, a->task_queue, MV_RETRIES_ACTIVITY, 1);
		a->attempt++;
		a->state = "SCHEDULED";
		a->last_failure_reason = (char *) reason;
		a->last_failure_details = details;
		a->started_time = TS_NONE;
		a->cancel_requested = false;
		rs->activity_attempts++;
		if (delay > 0)
		{
			a->next_attempt_time = next;
			a->scheduled_time = next;
		}
		else
		{
			a->next_attempt_time = TS_NONE;
			a->scheduled_time = now;
			enqueue_attempt(rs, a);
		}
		save_activity_row(a);
		arm_activity_timer(a);
		return;
	}

	/* For good. */
	log_activity_attempt(a, now, outcome, reason, details, TS_NONE);
	JsonBegin(&jb);
	JsonAddInt(&jb, "scheduledEventId", a->scheduled_event_id);
	if (timeout_type != NULL)
	{
		JsonAddText(&jb, "timeoutType", timeout_type);
		JsonAddJsonb(&jb, "details", a->heartbeat_details);
		JsonAddText(&jb, "lastFailureReason", reason);
	}
	else
	{
		JsonAddText(&jb, "reason", reason);
		JsonAddJsonb(&jb, "details", details);
		JsonAddText(&jb, "identity", a->last_worker_identity);
	}
	JsonAddText(&jb, "retryState", RetryVerdictName(verdict));
	/* ActivityTaskStarted keeps the previous attempt's failure (Cadence). */
	finish_activity(rs, a, now,
					timeout_type ? "ActivityTaskTimedOut" : "ActivityTaskFailed",
					JsonFinish(&jb));
}

/* A final timeout (ScheduleToStart, ScheduleToClose): never retried. */
static void
time_out_activity(RunState *rs, ActivityState *a, TimestampTz now,
				  const char *timeout_type)
{
	JsonBuilder jb;

	MetricsAdd(a->namespace, a->task_queue, MV_ACTIVITY_TIMED_OUT, 1);
	if (a->started_time != TS_NONE)
		log_activity_attempt(a, now, "timed_out",
							 psprintf("durable:Timeout %s", timeout_type),
							 NULL, TS_NONE);
	JsonBegin(&jb);
	JsonAddInt(&jb, "scheduledEventId", a->scheduled_event_id);
	JsonAddText(&jb, "timeoutType", timeout_type);
	JsonAddJsonb(&jb, "details", a->heartbeat_details);
	if (a->last_failure_reason != NULL)
		JsonAddText(&jb, "lastFailureReason", a->last_failure_reason);
	finish_activity(rs, a, now, "ActivityTaskTimedOut", JsonFinish(&jb));
}

/*
 * The activity's timer fired (run locked): lock the activity, take the
 * timer, apply whichever deadline has passed and re-arm for the next one.
 * Returns false when another ticker took the timer first.
 */
bool
FireActivityTimer(RunState *rs, int64 scheduled_event_id, TimestampTz now)
{
	ActivityState a;
	TimestampTz hb;
	bool		found;

	found = LoadActivity(&rs->run_id, scheduled_event_id, &a);
	if (!TakeTimer(&rs->run_id, TIMER_ACTIVITY, scheduled_event_id))
		return false;
	if (!found || !RunIsOpen(rs))
		return false;

	if (schedule_to_close_deadline(&a) <= now)
	{
		time_out_activity(rs, &a, now, "SCHEDULE_TO_CLOSE");
		return true;
	}
	if (a.next_attempt_time != TS_NONE)
	{
		if (a.next_attempt_time <= now)
		{
			/* The backoff is over: the next attempt goes on its queue. */
			a.next_attempt_time = TS_NONE;
			a.scheduled_time = now;
			save_activity_row(&a);
			enqueue_attempt(rs, &a);
			arm_activity_timer(&a);
			return true;
		}
		arm_activity_timer(&a);
		return false;
	}
	if (strcmp(a.state, "SCHEDULED") == 0)
	{
		if (a.schedule_to_start > 0 &&
			TimestampPlusSeconds(a.scheduled_time, a.schedule_to_start) <= now)
		{
			time_out_activity(rs, &a, now, "SCHEDULE_TO_START");
			return true;
		}
		arm_activity_timer(&a);
		return false;
	}
	/* Started: StartToClose, then Heartbeat; both are retried (engine rule 3). */
	if (TimestampPlusSeconds(a.started_time, a.start_to_close) <= now)
	{
		FailActivityAttempt(rs, &a, now, "durable:Timeout START_TO_CLOSE",
							NULL, -1, "START_TO_CLOSE");
		return true;
	}
	hb = heartbeat_deadline(&a);
	if (hb != TS_NONE && hb <= now)
	{
		FailActivityAttempt(rs, &a, now, "durable:Timeout HEARTBEAT",
							NULL, -1, "HEARTBEAT");
		return true;
	}
	arm_activity_timer(&a);
	return false;
}

/*
 * RequestCancelActivityTask: an activity not started is canceled at once; a
 * started one is marked, so that its heartbeats return true, and ends when
 * the worker reports it canceled (or completes or fails).
 */
void
RequestCancelActivity(RunState *rs, ActivityState *a, TimestampTz now,
					  int64 completed_event_id)
{
	JsonBuilder jb;
	int64		requested_id;

	JsonBegin(&jb);
	JsonAddText(&jb, "activityId", a->activity_id);
	JsonAddInt(&jb, "decisionTaskCompletedEventId", completed_event_id);
	requested_id = AppendEvent(rs, now, "ActivityTaskCancelRequested",
							   JsonFinish(&jb));
	if (strcmp(a->state, "SCHEDULED") == 0)
	{
		a->started_time = TS_NONE;
		CancelActivity(rs, a, now, NULL, NULL, requested_id);
		return;
	}
	a->state = "CANCEL_REQUESTED";
	a->cancel_requested = true;
	save_activity_row(a);
}

/*
 * Put a pending activity of a locked run back on its queue as a new first
 * attempt: its row was just rebuilt from history by a reset (reset.c), which
 * has no task or timer for it yet.  Arms its ScheduleToStart and
 * ScheduleToClose timer, as ScheduleActivity does.
 */
void
RequeueActivity(RunState *rs, int64 scheduled_event_id)
{
	ActivityState a;

	if (!LoadActivity(&rs->run_id, scheduled_event_id, &a))
		elog(ERROR, "activity %lld of run %s vanished",
			 (long long) scheduled_event_id, UuidToCString(&rs->run_id));
	if (next_deadline(&a) != TS_NONE)
		arm_activity_timer(&a);
	enqueue_attempt(rs, &a);
}

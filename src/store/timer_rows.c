/*-------------------------------------------------------------------------
 *
 * timer_rows.c
 *	  The rows of durable.timers: written, claimed and taken.
 *
 * A timer row names a run, a kind and a reference, and what is due at
 * due_at.  Every row that depends on a run is written under the run's lock
 * (the lock order is always the run first); what a kind does when it fires
 * is the firing module's (api/timer_fire.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "store/direct.h"
#include "store/due_mark.h"
#include "store/spi.h"
#include "store/timer_rows.h"
#include "store/worker_slots.h"

static KeptPlan insert_timer_payload = {
	NULL, "INSERT INTO durable.timers (due_at, kind, run_id, ref_id, payload)"
	" VALUES ($1, $2, $3, $4, $5) ON CONFLICT (run_id, kind, ref_id)"
	" DO UPDATE SET due_at = EXCLUDED.due_at, payload = EXCLUDED.payload",
	5, {TIMESTAMPTZOID, TEXTOID, UUIDOID, INT8OID, JSONBOID}
};
static KeptPlan claim_timer = {
	NULL, "SELECT 1 FROM durable.timers"
	" WHERE run_id = $1 AND kind = $2 AND ref_id = $3 FOR UPDATE SKIP LOCKED",
	3, {UUIDOID, TEXTOID, INT8OID}
};
static KeptPlan timer_exists = {
	NULL, "SELECT 1 FROM durable.timers"
	" WHERE run_id = $1 AND kind = $2 AND ref_id = $3",
	3, {UUIDOID, TEXTOID, INT8OID}
};
static KeptPlan take_timer = {
	NULL, "DELETE FROM durable.timers WHERE run_id = $1 AND kind = $2 AND ref_id = $3",
	3, {UUIDOID, TEXTOID, INT8OID}
};

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
	DirectSetTimer(run_id, kind, ref_id, due_at, true, attempt, false);
}

/*
 * Make sure a timer (run, kind, ref) fires by due_at: add it, or move it
 * (and set its attempt) unless it is already due no later, as CreateTimer
 * would.  A timer kept so fires early, with the attempt it was set for: its
 * handler must tell that attempt from the current one and set the timer
 * again for the current one's due time (DecisionTimeoutFired in
 * engine/decision_task.c).  A row written for every task would cost a
 * locked update and two index entries, where a probe is enough.
 */
void
TimerDueBy(pg_uuid_t *run_id, const char *kind, TimestampTz due_at,
		   int64 ref_id, int32 attempt)
{
	NoteTimerDue(due_at);
	DirectSetTimer(run_id, kind, ref_id, due_at, true, attempt, true);
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

/* Whether a statement on one timer row (run, kind, ref) returns it. */
static bool
timer_row_found(KeptPlan *kp, bool read_only, pg_uuid_t *run_id,
				const char *kind, int64 ref_id)
{
	Datum		values[3];
	int			n;

	values[0] = UUIDPGetDatum(run_id);
	values[1] = CStringGetTextDatum(kind);
	values[2] = Int64GetDatum(ref_id);
	n = RunPlan(kp, values, NULL, read_only, 1);
	if (n > 0)
		SPI_freetuptable(SPI_tuptable);
	return n > 0;
}

/*
 * Lock a timer row without waiting: false when it is gone or another ticker
 * holds it.  For the timers whose handler takes no lock on their run.
 */
bool
ClaimTimer(pg_uuid_t *run_id, const char *kind, int64 ref_id)
{
	return timer_row_found(&claim_timer, false, run_id, kind, ref_id);
}

/* Whether a timer is there, locked by another transaction or not. */
bool
TimerExists(pg_uuid_t *run_id, const char *kind, int64 ref_id)
{
	return timer_row_found(&timer_exists, true, run_id, kind, ref_id);
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
 * (store/worker_slots.c).  Call it before the row is written.
 */
void
NoteTimerDue(TimestampTz due_at)
{
	DueMarkNoteWrite(due_at);
	WakeTimerWorkerAtCommit(due_at);
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

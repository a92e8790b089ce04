/*-------------------------------------------------------------------------
 *
 * timer_rows.h
 *	  The rows of durable.timers (timer_rows.c); what each kind does is api/timer_fire.c's.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_STORE_TIMER_ROWS_H
#define DURABLE_STORE_TIMER_ROWS_H

#include "utils/jsonb.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#define TIMER_FIRST_DECISION	"first_decision"
#define TIMER_RUN_TIMEOUT		"run_timeout"
#define TIMER_EXECUTION_TIMEOUT	"execution_timeout"
#define TIMER_DECISION_TIMEOUT	"decision_timeout"
#define TIMER_DECISION_RETRY	"decision_retry"
#define TIMER_USER				"user_timer"
#define TIMER_ACTIVITY			"activity"
#define TIMER_DELIVER			"deliver"	/* an event for another run */
#define TIMER_EXTERNAL			"external"	/* a request to another run, or node */
#define TIMER_CLOSE_POLICY		"close_policy"	/* a parent close policy */
#define TIMER_TASK_RETRY		"task_retry"	/* a put-off executor task */

extern void CreateTimer(pg_uuid_t *run_id, const char *kind,
						TimestampTz due_at, int64 ref_id, int32 attempt);
extern void TimerDueBy(pg_uuid_t *run_id, const char *kind,
					   TimestampTz due_at, int64 ref_id, int32 attempt);
extern void CreateTimerWithPayload(pg_uuid_t *run_id, const char *kind,
								   TimestampTz due_at, int64 ref_id,
								   Jsonb *payload);
extern bool TakeTimer(pg_uuid_t *run_id, const char *kind, int64 ref_id);
extern bool TimerExists(pg_uuid_t *run_id, const char *kind, int64 ref_id);
extern bool ClaimTimer(pg_uuid_t *run_id, const char *kind, int64 ref_id);
extern void DeleteTimer(pg_uuid_t *run_id, const char *kind, int64 ref_id);
extern void DeleteRunTimers(pg_uuid_t *run_id);
extern void NoteTimerDue(TimestampTz due_at);

#endif							/* DURABLE_STORE_TIMER_ROWS_H */

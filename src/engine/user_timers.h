/*-------------------------------------------------------------------------
 *
 * user_timers.h
 *	  The workflow's own timers: StartTimer, CancelTimer, TimerFired (user_timers.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_ENGINE_USER_TIMERS_H
#define DURABLE_ENGINE_USER_TIMERS_H

#include "engine/runs.h"

extern void StartUserTimer(RunState *rs, TimestampTz now, const char *timer_id,
						   double seconds, int64 completed_id, int index);
extern void CancelUserTimer(RunState *rs, TimestampTz now,
							const char *timer_id, int64 completed_id);
extern bool FireUserTimer(RunState *rs, int64 started_id, TimestampTz now);

#endif							/* DURABLE_ENGINE_USER_TIMERS_H */

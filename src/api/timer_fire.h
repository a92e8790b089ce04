/*-------------------------------------------------------------------------
 *
 * timer_fire.h
 *	  Firing due durable timers (timer_fire.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_API_TIMER_FIRE_H
#define DURABLE_API_TIMER_FIRE_H

#include "datatype/timestamp.h"

extern int	FireDueTimers(TimestampTz now, int max_items);
extern int	FireDueTimersCarefully(TimestampTz start, TimestampTz now,
								   int max_items, bool careful,
								   TimestampTz *first_seen);

#endif							/* DURABLE_API_TIMER_FIRE_H */

/*-------------------------------------------------------------------------
 *
 * launcher.c
 *	  The background worker that fires durable timers.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "durable.h"

/* Remember that this transaction made a timer due at due_at. */
void
WakeTimerWorkerAtCommit(TimestampTz due_at)
{
	(void) due_at;
}

/*-------------------------------------------------------------------------
 *
 * pollers.h
 *	  The recent pollers of each queue, in shared memory (pollers.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_STORE_POLLERS_H
#define DURABLE_STORE_POLLERS_H

#include "datatype/timestamp.h"

/* Seconds without a poll after which a queue is said to have no poller */
#define DURABLE_NO_POLLER_SECONDS	60

extern int	durable_max_pollers;

extern Size PollersShmemSize(void);
extern void PollersShmemRequest(void);
extern void PollersShmemInit(void);
extern void RecordPoller(const char *namespace, const char *task_queue,
						 char kind, const char *identity, TimestampTz now,
						 double wait_ms);
extern bool QueueLastPolled(const char *namespace, const char *task_queue,
							char kind, TimestampTz *seen, bool *known);
extern bool PollersRecorded(void);

#endif							/* DURABLE_STORE_POLLERS_H */

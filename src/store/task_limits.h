/*-------------------------------------------------------------------------
 *
 * task_limits.h
 *	  Concurrency and rate limits of a task queue, decided where a poll
 *	  claims a task (task_limits.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_STORE_TASK_LIMITS_H
#define DURABLE_STORE_TASK_LIMITS_H

#include "datatype/timestamp.h"
#include "utils/uuid.h"

/* A claim under a queue's limits, between TaskLimitAdmit and its end. */
typedef struct TaskLimitClaim
{
	bool		locked;			/* the queue's admission lock is held */
	uint64		key;			/* the queue's key (admission lock, rate slot) */
	const char *namespace;
	const char *task_queue;
	const char *kind;			/* "decision" or "activity" */
	bool		has_concurrency;
	int32		max_concurrent;
	bool		has_rate;
	double		rate;
	int32		burst;
	TimestampTz now;
	bool		claimed;		/* TaskLimitClaimed wrote this start */
	pg_uuid_t	run_id;
	int64		scheduled_event_id;
} TaskLimitClaim;

extern bool TaskQueueLimited(const char *namespace, const char *task_queue,
							 char kind);
extern bool TaskLimitAdmit(TaskLimitClaim *tc, const char *namespace,
						   const char *task_queue, char kind, TimestampTz now,
						   long *retry_ms);
extern void TaskLimitClaimed(TaskLimitClaim *tc, pg_uuid_t *run_id,
							 int64 scheduled_event_id, int32 attempt);
extern void TaskLimitUnclaim(TaskLimitClaim *tc);
extern void TaskLimitAbandon(TaskLimitClaim *tc);
extern void TaskLimitEnded(const char *namespace, const char *task_queue,
						   char kind, pg_uuid_t *run_id,
						   int64 scheduled_event_id);
extern bool TaskLimitsStored(void);
extern Size TaskLimitsShmemSize(void);
extern void TaskLimitsShmemInit(void);

#endif							/* DURABLE_STORE_TASK_LIMITS_H */

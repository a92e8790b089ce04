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
#include "nodes/pg_list.h"
#include "utils/palloc.h"
#include "utils/resowner.h"
#include "utils/uuid.h"

/* A claim under a queue's limits, between TaskLimitAdmit and its end. */
typedef struct TaskLimitClaim
{
	bool		open;			/* a subtransaction holds the queue's row */
	MemoryContext cxt;			/* the caller's, restored at the end */
	ResourceOwner owner;
	const char *namespace;
	const char *task_queue;
	const char *kind;			/* "decision" or "activity" */
	bool		has_concurrency;
	bool		has_rate;
	double		tokens;			/* the bucket's tokens now, before this start */
	TimestampTz now;
	List	   *stale;			/* StaleTask: claimed, found stale */
} TaskLimitClaim;

extern bool TaskQueueLimited(const char *namespace, const char *task_queue,
							 char kind);
extern bool TaskLimitAdmit(TaskLimitClaim *tc, const char *namespace,
						   const char *task_queue, char kind, TimestampTz now,
						   long *retry_ms);
extern void TaskLimitStarted(TaskLimitClaim *tc, pg_uuid_t *run_id,
							 int64 scheduled_event_id, int32 attempt);
extern void TaskLimitStale(TaskLimitClaim *tc, pg_uuid_t *run_id,
						   int64 scheduled_event_id, int32 attempt);
extern void TaskLimitAbandon(TaskLimitClaim *tc);
extern void TaskLimitEnded(const char *namespace, const char *task_queue,
						   char kind, pg_uuid_t *run_id,
						   int64 scheduled_event_id);
extern bool TaskLimitsStored(void);

#endif							/* DURABLE_STORE_TASK_LIMITS_H */

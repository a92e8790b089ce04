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
#include "store/direct.h"

/* The limits of one concurrency key: its own, else the queue's defaults */
typedef struct KeyLimits
{
	bool		has_concurrency;
	int32		max_concurrent;
	bool		has_rate;
	double		rate;
	int32		burst;
	int32		weight;
} KeyLimits;

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
	bool		ends_in_transaction;	/* set by the caller: an executor's task,
										 * which ends in the claiming transaction */
	bool		executor_started;	/* TaskLimitClaimed took a slot for it */
	bool		claimed;		/* TaskLimitClaimed wrote this start */
	pg_uuid_t	run_id;
	int64		scheduled_event_id;
	/* The limits of concurrency keys (durable.task_key_limits, 0.9.0) */
	int			key_limits;		/* -1: not looked up yet; 0: none; 1: some */
	bool		defaults_read;
	KeyLimits	defaults;		/* of every key of the queue */
	char		key_read[CLAIM_KEY_MAX];	/* the key last read, "" none */
	KeyLimits	key_read_limits;	/* its limits */
	bool		swept;			/* the queue's ended starts were swept */
	bool		refused;		/* a key's limits held a task back */
	long		retry_ms;		/* when those may admit one again, 0: woken */
	bool		engaged;		/* limits of the queue or of a key apply */
	bool		published;		/* the claim is in this backend's slot */
	bool		queue_token;	/* a token of the queue's rate limit taken */
	bool		key_token;		/* a token of a key's rate limit taken: */
	char		key_token_key[CLAIM_KEY_MAX];	/* that key, */
	uint64		key_token_slot; /* its rate slot */
	double		key_token_rate;
} TaskLimitClaim;

extern bool TaskQueueLimited(const char *namespace, const char *task_queue,
							 char kind);
extern bool TaskLimitAdmit(TaskLimitClaim *tc, const char *namespace,
						   const char *task_queue, char kind, TimestampTz now,
						   long *retry_ms);
extern void TaskLimitKeyPolicy(TaskLimitClaim *tc, ClaimKeyPolicy *policy);
extern void TaskLimitClaimed(TaskLimitClaim *tc, ClaimedTask *task);
extern void TaskLimitUnclaim(TaskLimitClaim *tc);
extern void TaskLimitAbandon(TaskLimitClaim *tc);
extern void TaskLimitEnded(const char *namespace, const char *task_queue,
						   char kind, pg_uuid_t *run_id,
						   int64 scheduled_event_id);
extern bool TaskLimitsStored(void);
extern Size TaskLimitsShmemSize(void);
extern void TaskLimitsShmemInit(void);

#endif							/* DURABLE_STORE_TASK_LIMITS_H */

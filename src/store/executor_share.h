/*-------------------------------------------------------------------------
 *
 * executor_share.h
 *	  The executors shared between namespaces, and their claim under the
 *	  limits of task queues (executor_share.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef EXECUTOR_SHARE_H
#define EXECUTOR_SHARE_H

#include "utils/uuid.h"

/* Most queues one claim looks at; the next claim goes on from there */
#define EXECUTOR_SHARE_SCAN_MAX	64

/* An executor task claimed: its row of durable.ready_tasks, deleted */
typedef struct ExecutorClaimedTask
{
	char	   *namespace;
	char	   *task_queue;
	char		kind;			/* 'w' (a SQL workflow's decision task), 'x' */
	pg_uuid_t	run_id;
	int64		scheduled_event_id;
	int32		attempt;
	int64		task_id;
} ExecutorClaimedTask;

/*
 * The columns of a claim statement's RETURNING list, in the order
 * ExecutorTaskFromSPI reads them.
 */
#define EXECUTOR_CLAIM_RETURNING \
	" RETURNING namespace, task_queue, kind, run_id, scheduled_event_id," \
	" attempt, task_id"

extern void ExecutorShareShmemRequest(void);
extern void ExecutorShareShmemInit(void);
extern int	ExecutorShareClaim(ExecutorClaimedTask *task);
extern int	ExecutorClaimRunTask(pg_uuid_t *run_id, ExecutorClaimedTask *task);
extern bool ExecutorClaimsByQueue(void);
extern long ExecutorClaimRetryMs(void);
extern void ExecutorTaskFromSPI(ExecutorClaimedTask *task);
extern double ExecutorTaskTimeout(const char *namespace, double timeout_seconds,
								  bool *capped);

#endif							/* EXECUTOR_SHARE_H */

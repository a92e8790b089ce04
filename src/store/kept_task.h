/*-------------------------------------------------------------------------
 *
 * kept_task.h
 *	  The next task of a chain's run, kept in hand instead of written.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_STORE_KEPT_TASK_H
#define DURABLE_STORE_KEPT_TASK_H

#include "utils/uuid.h"

/* A ready task of the chain's run that was not written to durable.ready_tasks */
typedef struct KeptTask
{
	pg_uuid_t	run_id;
	char	   *namespace;
	char	   *task_queue;
	char		kind;			/* 'w' or 'x' */
	int64		task_id;
	int64		scheduled_event_id;
	int32		attempt;
	int16		priority;
	char	   *concurrency_key;	/* "" for none */
} KeptTask;

extern bool KeptTaskArm(const pg_uuid_t *run_id);
extern void KeptTaskDisarm(void);
extern bool KeptTaskWanted(const pg_uuid_t *run_id, char kind);
extern void KeptTaskKeep(const KeptTask *task);
extern KeptTask *KeptTaskOfRun(const pg_uuid_t *run_id);
extern KeptTask *KeptTaskAny(void);
extern void KeptTaskForget(void);

#endif							/* DURABLE_STORE_KEPT_TASK_H */

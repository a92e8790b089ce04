/*-------------------------------------------------------------------------
 *
 * executor.h
 *	  Tasks of SQL workflows and activities, run inside the server (executor.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_SQLWF_EXECUTOR_H
#define DURABLE_SQLWF_EXECUTOR_H

#include "utils/palloc.h"
#include "utils/uuid.h"

/* Whether this process is an executor worker (bgw/executor_worker.c) */
extern bool DurableIsExecutor;

extern int	ExecuteReadyTasks(int max_tasks, bool own_xact);
extern bool TasksCanBePutOff(void);
extern bool FireTaskRetryTimer(pg_uuid_t *run_id, int64 task_id);
extern void RecoverExecutorTasks(int index, MemoryContext cxt);

#endif							/* DURABLE_SQLWF_EXECUTOR_H */

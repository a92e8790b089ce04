/*-------------------------------------------------------------------------
 *
 * wait.h
 *	  Long polls and wait_workflow, woken at commit (wait.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_STORE_WAIT_H
#define DURABLE_STORE_WAIT_H

#include "fmgr.h"
#include "utils/uuid.h"

/* The channel of the NOTIFY sent when a run closes (durable.notify_workflow_closed) */
#define DURABLE_CLOSED_CHANNEL	"durable_workflow_closed"

extern bool durable_notify_workflow_closed;
extern void WakeQueueAtCommit(const char *namespace, const char *task_queue,
							  char kind, uint64 ntasks);
extern void WakeWholeQueueAtCommit(const char *namespace,
								   const char *task_queue);
extern void WorkflowClosedAtCommit(const char *namespace,
								   const char *workflow_id,
								   const pg_uuid_t *run_id,
								   const char *status);
extern void *WaitForTask(const char *namespace, const char *task_queue,
						 char kind, double wait_ms, FmgrInfo *flinfo,
						 void *(*claim) (void *), void *arg);
extern void ClaimRetryAfter(long ms);
extern void *WaitForWorkflowClose(const char *namespace,
								  const char *workflow_id, double wait_ms,
								  FmgrInfo *flinfo, void *(*check) (void *),
								  void *arg);

extern void WaitForExecutorTask(long timeout_ms);
extern Size WaitShmemSize(void);
extern void WaitShmemInit(void);

#endif							/* DURABLE_STORE_WAIT_H */

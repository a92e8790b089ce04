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

/* Longest namespace, task queue and identity of a poll taking handoffs, + 1 */
#define HANDOFF_NAME_LEN		128

/* A task started for a waiting poll by another transaction (wait.c) */
typedef struct TaskHandoff
{
	pg_uuid_t	run_id;
	int64		event_id;		/* a decision task's DecisionTaskStarted id, an
								 * activity's scheduled id */
	int32		attempt;		/* an activity's attempt */
	int64		secret;			/* the secret of its token */
} TaskHandoff;

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
						 char kind, const char *identity, double wait_ms,
						 FmgrInfo *flinfo, void *(*claim) (void *),
						 void *(*take) (const TaskHandoff *, void *),
						 void *arg);
extern bool PollMayBeWaiting(const char *namespace, const char *task_queue,
							 char kind);
extern bool ReserveWaitingPoller(const char *namespace,
								 const char *task_queue, char kind,
								 char *identity);
extern void OfferToReservedPoller(const TaskHandoff *offer);
extern void CancelPollerReservation(void);
extern bool MayHandOverTasks(void);
extern void ClaimRetryAfter(long ms);
extern void *WaitForWorkflowClose(const char *namespace,
								  const char *workflow_id, double wait_ms,
								  FmgrInfo *flinfo, void *(*check) (void *),
								  void *arg);

extern void WaitForExecutorTask(long timeout_ms);
extern Size WaitShmemSize(void);
extern void WaitShmemInit(void);

#endif							/* DURABLE_STORE_WAIT_H */

/*-------------------------------------------------------------------------
 *
 * queue_controls.h
 *	  Which task queues of a database may be paused or limited, so that the
 *	  schedules and claims of the others skip their probes.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_QUEUE_CONTROLS_H
#define DURABLE_QUEUE_CONTROLS_H

extern Size QueueControlsShmemSize(void);
extern void QueueControlsShmemInit(void);
extern bool QueueControlsMayExist(const char *namespace,
								  const char *task_queue);
extern void QueueControlsEngineWrite(const char *namespace,
									 const char *task_queue);
extern void QueueControlsTableWritten(Oid relid, const char *relname);
extern void QueueControlsDatabaseDropped(Oid dboid);

#endif							/* DURABLE_QUEUE_CONTROLS_H */

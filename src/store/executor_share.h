/*-------------------------------------------------------------------------
 *
 * executor_share.h
 *	  The executors shared between namespaces (executor_share.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef EXECUTOR_SHARE_H
#define EXECUTOR_SHARE_H

/* Most namespaces one claim looks at; the next claim goes on from there */
#define EXECUTOR_SHARE_SCAN_MAX	64

extern void ExecutorShareShmemRequest(void);
extern void ExecutorShareShmemInit(void);
extern int	ExecutorShareClaim(void);
extern double ExecutorTaskTimeout(const char *namespace, double timeout_seconds,
								  bool *capped);

#endif							/* EXECUTOR_SHARE_H */

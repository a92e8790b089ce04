/*-------------------------------------------------------------------------
 *
 * timer_worker.h
 *	  The timer worker of a database (timer_worker.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_BGW_TIMER_WORKER_H
#define DURABLE_BGW_TIMER_WORKER_H

extern int	durable_worker_batch_size;
extern int	durable_timer_full_scan_interval;

extern bool DatabaseWorkersEnabled(void);

#endif							/* DURABLE_BGW_TIMER_WORKER_H */

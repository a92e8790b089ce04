/*-------------------------------------------------------------------------
 *
 * batch.h
 *	  Batch operations over the runs a filter matches (batch.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_API_BATCH_H
#define DURABLE_API_BATCH_H

/* Runs a job works through per transaction of the timer worker */
#define BATCH_SLICE 200

extern int	RunBatchSlice(int max_runs, bool bounded, bool *found);

#endif							/* DURABLE_API_BATCH_H */

/*-------------------------------------------------------------------------
 *
 * retention.h
 *	  Purging closed runs and finished batch jobs past their namespace's
 *	  retention (retention.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_STORE_RETENTION_H
#define DURABLE_STORE_RETENTION_H

#include "datatype/timestamp.h"

extern int	PurgeClosedRuns(TimestampTz now, int max_runs);
extern int	PurgeFinishedBatches(TimestampTz now, int max_jobs);

#endif							/* DURABLE_STORE_RETENTION_H */

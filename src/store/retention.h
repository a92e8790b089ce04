/*-------------------------------------------------------------------------
 *
 * retention.h
 *	  Purging closed runs past their namespace's retention (retention.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_STORE_RETENTION_H
#define DURABLE_STORE_RETENTION_H

#include "datatype/timestamp.h"

extern int	PurgeClosedRuns(TimestampTz now, int max_runs);

#endif							/* DURABLE_STORE_RETENTION_H */

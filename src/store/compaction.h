/*-------------------------------------------------------------------------
 *
 * compaction.h
 *	  The queue tables' indexes rebuilt after a held horizon (compaction.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_STORE_COMPACTION_H
#define DURABLE_STORE_COMPACTION_H

/* durable.compaction_interval, in seconds */
extern int	durable_compaction_interval;

extern int	CompactQueueTables(void);
extern int	RebuildQueueTable(void);

#endif							/* DURABLE_STORE_COMPACTION_H */

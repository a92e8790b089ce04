/*-------------------------------------------------------------------------
 *
 * due_mark.h
 *	  Where a due scan of durable.timers starts its walk (due_mark.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_STORE_DUE_MARK_H
#define DURABLE_STORE_DUE_MARK_H

#include "datatype/timestamp.h"

typedef struct DueMarkScan
{
	bool		valid;
	uint64		scan;
	TimestampTz start;			/* the walk starts at due_at >= start */
	TimestampTz pending;		/* least due time of writers in progress */
} DueMarkScan;

extern Size DueMarkShmemSize(void);
extern void DueMarkShmemInit(void);
extern void DueMarkNoteWrite(TimestampTz due_at);
extern TimestampTz DueMarkBegin(DueMarkScan *dm, bool full);
extern TimestampTz DueMarkEnd(DueMarkScan *dm, TimestampTz first_seen);

#endif							/* DURABLE_STORE_DUE_MARK_H */

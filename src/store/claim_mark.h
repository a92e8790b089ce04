/*-------------------------------------------------------------------------
 *
 * claim_mark.h
 *	  Where a claim of a queue starts its walk (claim_mark.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_STORE_CLAIM_MARK_H
#define DURABLE_STORE_CLAIM_MARK_H

#include "utils/relcache.h"
#include "utils/snapshot.h"

typedef struct ClaimMark
{
	int			slot;			/* -1: no mark, walk from 0 */
	int			keylen;
	uint64		generation;
	int64		start;			/* the walk starts at task_id >= start */
	int64		limit;			/* the mark may move up to here */
	bool		settled;		/* the snapshot is past the fence */
	bool		set_fence;		/* the slot has no fence: record one */
	int64		first_seen;		/* first task the snapshot sees, or -1 */
	int64		max_seen;		/* largest task id passed, or -1 */
} ClaimMark;

/*
 * The kind under which a mark keeps the executors' walk of a queue's tasks
 * of kind 'w' or 'x' in their own index (executor_share.c), priority 3, all
 * keys: not the same tasks as the poll's walk of the primary key covers.
 */
#define CLAIM_MARK_EXECUTOR_KIND(kind)	((kind) == 'w' ? 'W' : 'X')

extern Size ClaimMarkShmemSize(void);
extern void ClaimMarkShmemInit(void);
extern int64 ClaimMarkBegin(ClaimMark *cm, Relation rel,
							const char *namespace, const char *task_queue,
							char kind, Snapshot snapshot);
extern void ClaimMarkSaw(ClaimMark *cm, int64 task_id, bool visible);
extern void ClaimMarkEnd(ClaimMark *cm);
extern void ClaimMarkLower(int64 low_id);
extern void ClaimMarkNoteInsert(const char *namespace, const char *task_queue,
								char kind, int64 task_id);
extern void ClaimMarkTableWritten(Oid relid);
extern void ClaimMarkInstallHooks(void);

#endif							/* DURABLE_STORE_CLAIM_MARK_H */

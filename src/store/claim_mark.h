/*-------------------------------------------------------------------------
 *
 * claim_mark.h
 *	  Where a claim of a queue starts its walk (claim_mark.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_STORE_CLAIM_MARK_H
#define DURABLE_STORE_CLAIM_MARK_H

#include "access/genam.h"
#include "access/skey.h"
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
 * A walk from a mark reads a window of task ids first (claim_mark.c,
 * ClaimWindowKeys): its two keys on the task id, and where the first window
 * ends (0 once the walk goes on past it, or when it has no window).
 */
typedef struct ClaimWindow
{
	int			lower;			/* keys[lower]: task_id >= */
	int			upper;			/* keys[upper]: task_id < end, then <= max */
	AttrNumber	attno;			/* the task id's column in the index */
	int64		end;
} ClaimWindow;

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
extern void ClaimWindowKeys(ClaimWindow *cw, ScanKey keys, int *nkeys,
							AttrNumber attno, int64 start);
extern bool ClaimWindowWiden(ClaimWindow *cw, IndexScanDesc scan,
							 ScanKey keys, int nkeys);
extern void ClaimMarkLower(int64 low_id);
extern void ClaimMarkNoteInsert(const char *namespace, const char *task_queue,
								char kind, int64 task_id);
extern void ClaimMarkTableWritten(Oid relid);
extern void ClaimMarkInstallHooks(void);

#endif							/* DURABLE_STORE_CLAIM_MARK_H */

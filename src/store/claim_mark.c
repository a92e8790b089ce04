/*-------------------------------------------------------------------------
 *
 * claim_mark.c
 *	  Low-water marks of the task queues: where a claim starts its walk.
 *
 * A poll claims the oldest ready task of its queue by walking the primary
 * key of durable.ready_tasks, (namespace, task_queue, kind, task_id), from
 * the start of the queue.  Claimed tasks are deleted.  Normally VACUUM (and
 * the index scans themselves, which mark entries of rows dead to everyone)
 * keep that walk short.  But while anything holds the vacuum horizon back
 * (a long report, a session idle in transaction, a replication slot, a
 * standby's feedback), no dead entry can be removed or even marked, and
 * each claim walks, and visits the heap row of, every task claimed since
 * the horizon stopped: a claim costs O(tasks since then), and the queue
 * slows to a crawl (bench/ measured 6 % of the normal rate after five
 * minutes of a held horizon, docs/performance.md).
 *
 * Task ids only grow, so the dead entries are a prefix of each queue's part
 * of the index.  Each queue gets a mark in shared memory, and a claim starts
 * at task_id >= mark instead of at the start of the queue.  The difficulty is
 * that the mark must never pass a task that is or will become claimable:
 *
 * - Inserts commit out of order: a task id may be taken from the sequence
 *   by a transaction that commits after later ids were claimed, and its
 *   index entry may not even exist yet while a claim walks past its place.
 * - A claim may roll back (the task comes back), a task may be put off and
 *   come back into the executors' index under its old id, and a workflow
 *   type being registered moves queued tasks from one kind to another.
 *
 * The rule: a claim may move the mark only up to a fence (L, X) recorded by
 * an earlier claim: L is the largest task id that claim saw in the index and
 * X the next transaction id after it looked.  Everyone who takes a task id
 * from the sequence has its transaction id first (DirectInsertReadyTasks
 * makes sure), so every id <= L belongs to a transaction older than X.  Once
 * a claim's snapshot has xmin >= X, all of those transactions have ended
 * before the snapshot was taken, so every entry with an id <= L is in the
 * index and its row's fate is decided and visible to that snapshot: an
 * entry the snapshot cannot see there is dead for good (deleted or rolled
 * back).  Such a claim sets the mark to the smaller of the first task it can
 * see (locked by another claimer or not: that claimer may roll back) and
 * L + 1, and records a new fence.  A claim whose snapshot is not past the
 * fence walks from the mark and moves nothing, and so does a claim whose
 * transaction has a transaction id already (its own earlier claims look dead
 * to it but come back if it rolls back).  Every writer that puts an
 * old id back into a claim's order (an UPDATE of durable.ready_tasks) first
 * has its transaction id, then lowers the marks of its database and bumps
 * their generation (ClaimMarkLower): a claim that began before that
 * publishes nothing, and fences recorded after it wait for its transaction.
 *
 * What it cannot help: a transaction that holds a transaction id open (one
 * that wrote and stays idle in transaction, a prepared transaction) keeps
 * every fence from settling, and claims then walk from the mark it left, as
 * before.  A held snapshot, a replication slot or hot_standby_feedback hold
 * only the horizon, not a running transaction id, and do not stop the marks.
 * Rows written by something else than the engine, as a data-only restore
 * into the same database writes them, break "task ids only grow": a COPY or
 * an INSERT into durable.ready_tasks (with old task ids) lowers the marks
 * to 0 (ClaimMarkTableWritten, from launcher.c's ProcessUtility hook and the
 * ExecutorStart hook here), and an engine insert whose new id is below its
 * queue's mark, or covered by a fence that will not wait for it (the
 * sequence was set back by setval), lowers them to that id
 * (ClaimMarkNoteInsert).
 *
 * A server restart empties shared memory: marks start at 0 again (one walk
 * over the dead prefix).  A queue whose slot is taken by another queue
 * (more busy queues than slots) starts at 0 too.  With a sequence cache
 * above 1, ids are no longer handed out in order across backends: no marks.
 *
 * Why not the other designs for a held horizon: rotating queue tables (PgQ) would
 * change every statement on ready_tasks and its on-disk format, and TRUNCATE
 * takes an ACCESS EXCLUSIVE lock a held snapshot of the same table would
 * block; updating tasks in place (HOT) would keep claimed rows around as
 * tombstones in the same index order, so the walk would still grow.  The
 * mark changes nothing on disk and works with a 0.3.0 schema.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/stratnum.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_sequence.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "parser/parsetree.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/fmgroids.h"
#include "utils/snapshot.h"
#include "utils/syscache.h"

#include "base/util.h"
#include "store/claim_mark.h"
#include "store/queue_controls.h"

/* Queues with a mark at a time; a slot goes to the least recently used */
#define CLAIM_MARK_SLOTS		128
#define CLAIM_MARK_PROBES		4
/* Longest "namespace\0task_queue\0kind" with a mark; longer ones walk from 0 */
#define CLAIM_MARK_KEYLEN		160

typedef struct ClaimMarkSlot
{
	slock_t		mutex;
	Oid			dboid;			/* InvalidOid: free */
	Oid			relid;			/* durable.ready_tasks */
	Oid			seqfile;		/* relfilenode of durable.ready_task_seq */
	int			keylen;
	char		key[CLAIM_MARK_KEYLEN];
	uint64		generation;		/* bumped by takeovers and ClaimMarkLower */
	uint64		last_used;
	int64		mark;			/* claims walk task_id >= mark */
	bool		has_fence;
	int64		fence_id;		/* L: largest task id seen */
	FullTransactionId fence_xid;	/* X: next xid after it was seen */
} ClaimMarkSlot;

typedef struct ClaimMarkShared
{
	slock_t		mutex;			/* for use_counter */
	uint64		use_counter;
	ClaimMarkSlot slots[CLAIM_MARK_SLOTS];
} ClaimMarkShared;

static ClaimMarkShared *claim_marks = NULL;

/* Shared memory this module needs. */
Size
ClaimMarkShmemSize(void)
{
	return MAXALIGN(sizeof(ClaimMarkShared));
}

/* Create or attach the marks (under AddinShmemInitLock). */
void
ClaimMarkShmemInit(void)
{
	bool		found;
	int			i;

	claim_marks = ShmemInitStruct("durable claim marks", sizeof(ClaimMarkShared),
								  &found);
	if (!found)
	{
		memset(claim_marks, 0, sizeof(ClaimMarkShared));
		SpinLockInit(&claim_marks->mutex);
		for (i = 0; i < CLAIM_MARK_SLOTS; i++)
			SpinLockInit(&claim_marks->slots[i].mutex);
	}
}

/*
 * Whether durable.ready_task_seq hands out ids in order across backends (a
 * cache of 1, as the extension creates it); sets *seqfile to its
 * relfilenode, which a restart of the sequence (ALTER SEQUENCE RESTART,
 * TRUNCATE ... RESTART IDENTITY) changes, so that marks of the ids handed
 * out before are not used for the ids handed out again.
 */
static bool
sequence_in_order(Oid nsp, Oid *seqfile)
{
	Oid			seq = get_relname_relid("ready_task_seq", nsp);
	HeapTuple	tup;
	bool		ok;

	if (!OidIsValid(seq))
		return false;
	tup = SearchSysCache1(SEQRELID, ObjectIdGetDatum(seq));
	if (!HeapTupleIsValid(tup))
		return false;
	ok = ((Form_pg_sequence) GETSTRUCT(tup))->seqcache == 1;
	ReleaseSysCache(tup);
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(seq));
	if (!HeapTupleIsValid(tup))
		return false;
	*seqfile = ((Form_pg_class) GETSTRUCT(tup))->relfilenode;
	ReleaseSysCache(tup);
	return ok;
}

/*
 * Begin a claim of the queue (namespace, task_queue, kind) with snapshot:
 * fills *cm and returns the task id the walk may start at (0: from the
 * start).  task_queue NULL names the executors' order (all queues).
 */
int64
ClaimMarkBegin(ClaimMark *cm, Relation rel, const char *namespace,
			   const char *task_queue, char kind, Snapshot snapshot)
{
	Oid			relid = RelationGetRelid(rel);
	Oid			seqfile = InvalidOid;
	int			nslen = strlen(namespace);
	int			qlen = task_queue ? strlen(task_queue) : 0;
	char		key[CLAIM_MARK_KEYLEN];
	uint32		h;
	int			i;
	int			victim = -1;
	uint64		oldest = PG_UINT64_MAX;
	uint64		now;
	FullTransactionId next;
	FullTransactionId xmin;
	bool		wrote;

	memset(cm, 0, sizeof(ClaimMark));
	cm->slot = -1;
	cm->first_seen = -1;
	cm->max_seen = -1;
	/*
	 * A slot names the table and the sequence too: a queue of a dropped and
	 * re-created extension starts again from task id 1.
	 */
	if (claim_marks == NULL || nslen + qlen + 3 > CLAIM_MARK_KEYLEN ||
		!sequence_in_order(RelationGetNamespace(rel), &seqfile))
		return 0;
	memcpy(key, namespace, nslen + 1);
	if (task_queue)
		memcpy(key + nslen + 1, task_queue, qlen + 1);
	else
		key[nslen + 1] = '\0';
	key[nslen + qlen + 2] = kind;
	cm->keylen = nslen + qlen + 3;
	h = hash_bytes((const unsigned char *) key, cm->keylen) ^ MyDatabaseId;

	/* The snapshot's xmin as a full id: it is at most 2^31 behind next. */
	next = ReadNextFullTransactionId();
	xmin = FullTransactionIdFromU64(U64FromFullTransactionId(next) -
									(uint32) (XidFromFullTransactionId(next) -
											  snapshot->xmin));

	wrote = TransactionIdIsValid(GetTopTransactionIdIfAny());

	SpinLockAcquire(&claim_marks->mutex);
	now = ++claim_marks->use_counter;
	SpinLockRelease(&claim_marks->mutex);

	for (i = 0; i < CLAIM_MARK_PROBES; i++)
	{
		int			s = (h + i) % CLAIM_MARK_SLOTS;
		ClaimMarkSlot *slot = &claim_marks->slots[s];

		SpinLockAcquire(&slot->mutex);
		if (slot->dboid == MyDatabaseId && slot->relid == relid &&
			slot->seqfile == seqfile && slot->keylen == cm->keylen &&
			memcmp(slot->key, key, cm->keylen) == 0)
		{
			slot->last_used = now;
			cm->slot = s;
			cm->generation = slot->generation;
			cm->start = slot->mark;
			cm->limit = slot->mark;
			/*
			 * The tasks this transaction claimed already look dead to its own
			 * snapshot, but come back if it rolls back (to a savepoint too).
			 * PostgreSQL 15 counts its own transaction id in the snapshot's
			 * xmin, which keeps such a snapshot behind the fence anyway; this
			 * says it here rather than rely on it: only a transaction that
			 * has written nothing yet may move the mark.
			 */
			if (slot->has_fence && !wrote)
			{
				if (FullTransactionIdFollowsOrEquals(xmin, slot->fence_xid))
				{
					cm->settled = true;
					cm->limit = Max(slot->mark, slot->fence_id + 1);
				}
			}
			else
				cm->set_fence = true;
			SpinLockRelease(&slot->mutex);
			return cm->start;
		}
		if (slot->last_used < oldest)
		{
			oldest = slot->last_used;
			victim = s;
		}
		SpinLockRelease(&slot->mutex);
	}

	/* Take the least recently used slot: this queue starts at 0. */
	{
		ClaimMarkSlot *slot = &claim_marks->slots[victim];

		SpinLockAcquire(&slot->mutex);
		slot->dboid = MyDatabaseId;
		slot->relid = relid;
		slot->seqfile = seqfile;
		slot->keylen = cm->keylen;
		memcpy(slot->key, key, cm->keylen);
		slot->generation++;
		slot->last_used = now;
		slot->mark = 0;
		slot->has_fence = false;
		cm->slot = victim;
		cm->generation = slot->generation;
		cm->set_fence = true;
		SpinLockRelease(&slot->mutex);
	}
	return 0;
}

/*
 * The keys of a walk from start (a mark above 0): task_id >= start and, for a
 * first window, task_id < start + CLAIM_WINDOW, appended to keys[*nkeys].
 * A B-tree scan reads every entry of its leaf page that its keys admit
 * before it returns the first, and a queue with a backlog has hundreds of
 * entries past its mark: without an upper bound each claim compared them
 * all, a tenth of a SQL workflow's instructions with 200 started at once
 * (bench/instructions.sh).  The claim wants the first claimable task, which
 * is nearly always among the first few; when the window has none
 * (ClaimWindowWiden), the walk goes on with the rest of the queue.  Each
 * entry the window admits costs every claim a comparison of all its keys;
 * 16 ids leave room past the tasks that other claimers hold locked (eight
 * executors in the bench), and a SQL workflow executes 1.7 % fewer
 * instructions with 16 than with 32 (bench/instructions.sh).  The columns
 * before the task id must all be compared for equality, so that the bound
 * ends the scan.
 */
#define CLAIM_WINDOW	16

void
ClaimWindowKeys(ClaimWindow *cw, ScanKey keys, int *nkeys, AttrNumber attno,
				int64 start)
{
	cw->attno = attno;
	cw->end = 0;
	cw->lower = (*nkeys)++;
	ScanKeyEntryInitialize(&keys[cw->lower], 0, attno,
						   BTGreaterEqualStrategyNumber, InvalidOid,
						   InvalidOid, F_INT8GE, Int64GetDatum(start));
	cw->upper = (*nkeys)++;
	if (start <= PG_INT64_MAX - CLAIM_WINDOW)
	{
		cw->end = start + CLAIM_WINDOW;
		ScanKeyEntryInitialize(&keys[cw->upper], 0, attno,
							   BTLessStrategyNumber, InvalidOid, InvalidOid,
							   F_INT8LT, Int64GetDatum(cw->end));
	}
	else
		ScanKeyEntryInitialize(&keys[cw->upper], 0, attno,
							   BTLessEqualStrategyNumber, InvalidOid,
							   InvalidOid, F_INT8LE,
							   Int64GetDatum(PG_INT64_MAX));
}

/*
 * The first window is walked: rescan from its end to the end of the queue
 * and return true; false when there is nothing more to walk.  The walk's
 * entries keep their order, so ClaimMarkSaw sees what one scan would show.
 */
bool
ClaimWindowWiden(ClaimWindow *cw, IndexScanDesc scan, ScanKey keys, int nkeys)
{
	if (cw->end <= 0)
		return false;
	ScanKeyEntryInitialize(&keys[cw->lower], 0, cw->attno,
						   BTGreaterEqualStrategyNumber, InvalidOid,
						   InvalidOid, F_INT8GE, Int64GetDatum(cw->end));
	ScanKeyEntryInitialize(&keys[cw->upper], 0, cw->attno,
						   BTLessEqualStrategyNumber, InvalidOid, InvalidOid,
						   F_INT8LE, Int64GetDatum(PG_INT64_MAX));
	cw->end = 0;
	index_rescan(scan, keys, nkeys, NULL, 0);
	return true;
}

/*
 * Note an index entry the claim's walk passed: its task id, and whether the
 * claim's snapshot can see its row (a task, claimable or locked by another).
 */
void
ClaimMarkSaw(ClaimMark *cm, int64 task_id, bool visible)
{
	if (task_id > cm->max_seen)
		cm->max_seen = task_id;
	if (visible && cm->first_seen < 0)
		cm->first_seen = task_id;
}

/*
 * End the walk: move the mark as far as is safe (see the head of the file)
 * and record a new fence.  Call it whether or not a task was claimed, after
 * the walk, before the claim's transaction ends.
 */
void
ClaimMarkEnd(ClaimMark *cm)
{
	ClaimMarkSlot *slot;
	FullTransactionId next;

	if (cm->slot < 0 || (!cm->settled && (!cm->set_fence || cm->max_seen < 0)))
		return;
	/* Read after the walk: every id the walk saw was taken before this. */
	next = ReadNextFullTransactionId();
	slot = &claim_marks->slots[cm->slot];
	SpinLockAcquire(&slot->mutex);
	if (slot->generation == cm->generation && slot->dboid == MyDatabaseId &&
		slot->keylen == cm->keylen)
	{
		if (cm->settled)
		{
			int64		mark = cm->limit;

			/* the settled fence is used up: a new one below, or none */
			slot->has_fence = false;

			if (cm->first_seen >= 0 && cm->first_seen < mark)
				mark = cm->first_seen;
			if (mark > slot->mark)
				slot->mark = mark;
		}
		if (cm->max_seen >= 0 && (cm->settled || !slot->has_fence))
		{
			slot->has_fence = true;
			slot->fence_id = cm->max_seen;
			slot->fence_xid = next;
		}
	}
	SpinLockRelease(&slot->mutex);
}

/*
 * A task is about to be put back into a claim's order with an old task id
 * (no lower than low_id): lower the marks of this database to it and void
 * the claims under way and the fences recorded so far.  Gives the
 * transaction its id first, so that later fences wait for it.
 */
void
ClaimMarkLower(int64 low_id)
{
	int			i;

	if (claim_marks == NULL)
		return;
	(void) GetCurrentTransactionId();
	for (i = 0; i < CLAIM_MARK_SLOTS; i++)
	{
		ClaimMarkSlot *slot = &claim_marks->slots[i];

		SpinLockAcquire(&slot->mutex);
		if (slot->dboid == MyDatabaseId)
		{
			slot->generation++;
			if (slot->mark > low_id)
				slot->mark = Max(low_id, 0);
			slot->has_fence = false;
		}
		SpinLockRelease(&slot->mutex);
	}
}

/*
 * A task of a poller's queue (kind 'd' or 'a') is being queued with
 * task_id, taken from durable.ready_task_seq by a transaction that has its
 * id (DirectInsertReadyTasks).  Ids only grow, so the queue's mark is at or
 * below it and no fence that will not wait for this transaction covers it
 * (see the head of the file) -- unless the sequence was set back (setval by
 * a data-only restore, ALTER SEQUENCE without RESTART): then lower the marks
 * of this database to it, as for a task put back.  A probe of the queue's
 * slots under their spinlocks, no more.
 */
void
ClaimMarkNoteInsert(const char *namespace, const char *task_queue, char kind,
					int64 task_id)
{
	int			nslen = strlen(namespace);
	int			qlen = strlen(task_queue);
	int			keylen = nslen + qlen + 3;
	char		key[CLAIM_MARK_KEYLEN];
	uint32		h;
	int			i;
	bool		behind = false;
	FullTransactionId xid;

	if (claim_marks == NULL || keylen > CLAIM_MARK_KEYLEN)
		return;
	memcpy(key, namespace, nslen + 1);
	memcpy(key + nslen + 1, task_queue, qlen + 1);
	key[nslen + qlen + 2] = kind;
	h = hash_bytes((const unsigned char *) key, keylen) ^ MyDatabaseId;
	xid = GetTopFullTransactionId();

	for (i = 0; i < CLAIM_MARK_PROBES; i++)
	{
		ClaimMarkSlot *slot = &claim_marks->slots[(h + i) % CLAIM_MARK_SLOTS];
		bool		found;

		SpinLockAcquire(&slot->mutex);
		found = slot->dboid == MyDatabaseId && slot->keylen == keylen &&
			memcmp(slot->key, key, keylen) == 0;
		if (found)
			behind = slot->mark > task_id ||
				(slot->has_fence && slot->fence_id >= task_id &&
				 FullTransactionIdFollowsOrEquals(xid, slot->fence_xid));
		SpinLockRelease(&slot->mutex);
		if (found)
			break;
	}
	if (behind)
		ClaimMarkLower(task_id);
}

/*
 * Rows written into durable.ready_tasks by something else than the engine
 * (which inserts without the executor): a COPY FROM (launcher.c's
 * ProcessUtility hook) or an INSERT (the ExecutorStart hook below), as a
 * data-only restore into the same database writes them, with their old task
 * ids.  Their ids may be below the marks: claims walk from the start of
 * their queues again, until their marks move past them.
 */
void
ClaimMarkTableWritten(Oid relid)
{
	/* A standby writes nothing (and its statement fails on its own). */
	if (claim_marks != NULL && !RecoveryInProgress() &&
		IsDurableTable(relid, "ready_tasks"))
		ClaimMarkLower(0);
}

static ExecutorStart_hook_type prev_executor_start = NULL;

/*
 * A statement that may insert rows (an INSERT, a MERGE, a data-modifying
 * WITH) into durable.ready_tasks lowers the marks (see above); one that may
 * insert or update rows of a table of queue controls may give any queue
 * controls (queue_controls.c).
 */
static void
claim_mark_executor_start(QueryDesc *queryDesc, int eflags)
{
	PlannedStmt *ps = queryDesc->plannedstmt;

	/* First, so that a statement refused (read only...) lowers nothing. */
	if (prev_executor_start)
		prev_executor_start(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
	/* The rows are written later, when the executor runs. */
	if (ps->resultRelations != NIL &&
		(ps->commandType != CMD_DELETE || ps->hasModifyingCTE) &&
		!(eflags & EXEC_FLAG_EXPLAIN_ONLY))
	{
		bool		inserts = ps->commandType == CMD_INSERT ||
			ps->commandType == CMD_MERGE || ps->hasModifyingCTE;
		ListCell   *lc;

		foreach(lc, ps->resultRelations)
		{
			Index		rti = lfirst_int(lc);
			Oid			relid = rt_fetch(rti, ps->rtable)->relid;
			Relation	rel = NULL;
			const char *relname;

			/* The executor has opened it: its name without a look-up */
			if (queryDesc->estate != NULL &&
				queryDesc->estate->es_relations != NULL)
				rel = queryDesc->estate->es_relations[rti - 1];
			relname = rel != NULL ? RelationGetRelationName(rel) :
				get_rel_name(relid);
			if (relname == NULL)
				continue;
			if (inserts && strcmp(relname, "ready_tasks") == 0)
				ClaimMarkTableWritten(relid);
			QueueControlsTableWritten(relid, relname);
		}
	}
}

/* Install the ExecutorStart hook (from _PG_init, when preloaded). */
void
ClaimMarkInstallHooks(void)
{
	prev_executor_start = ExecutorStart_hook;
	ExecutorStart_hook = claim_mark_executor_start;
}

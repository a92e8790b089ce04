/*-------------------------------------------------------------------------
 *
 * executor_share.c
 *	  The executors shared fairly between namespaces, and the limits an
 *	  admin sets on what one namespace may use of them.
 *
 * The executor workers of a database serve every namespace of it.  Claiming
 * the oldest ready task of any namespace would let a namespace with a
 * backlog of slow tasks hold every executor while another namespace's quick
 * workflow waits behind it.  So a claim (ExecutorShareClaim, for executor.c)
 * first picks a namespace and a task queue of it, then claims that queue's
 * next task:
 *
 * - The queues that have ready executor tasks are found by a loose scan of
 *	 the partial index ready_tasks_executor_queue (namespace, task_queue,
 *	 kind, priority, task_id; for kinds 'w' and 'x' not put off): one
 *	 descent of the index or a few for each queue and kind, which also
 *	 gives its first task in the claim order.  At most
 *	 EXECUTOR_SHARE_SCAN_MAX of them are looked at by one claim; when there
 *	 are more, the backend's next claim goes on after the last one, so that
 *	 every queue comes in turn.
 * - Shared memory holds, for each backend, the namespace of the executor
 *	 task it runs (a 64-bit hash of its name, with the database).  Among the
 *	 queues found, the claim picks one of the namespace with the fewest
 *	 tasks running, the lowest priority then the oldest task breaking ties,
 *	 leaving out a namespace that already runs its max_executors
 *	 (durable.namespaces); it records its pick in its own slot under the
 *	 same lock, so that two claims at once count each other.
 * - It then claims that queue's next task as a poll claims one of its queue
 *	 (direct.c: the lowest priority first, the concurrency keys in turn,
 *	 then the oldest; docs/task-queues.md "Priorities and fairness"), under
 *	 the queue's limits and its keys' (task_limits.c), of kind 'decision'
 *	 for a SQL workflow's decision tasks ('w') and 'activity' for SQL
 *	 activities ('x'), counted together with the tasks external workers
 *	 took from the same queue.  When the limits hold the queue back, or none
 *	 of its tasks is free after all (claimed meanwhile), it tries the next
 *	 queue: a queue held back is passed over whole, not task by task.  A
 *	 rate limit that held every queue back tells the executor when to look
 *	 again (ExecutorClaimRetryMs); a task that ends under a concurrency limit
 *	 wakes the executors.  The next tasks of the claimed task's run, which
 *	 executor.c runs in the same transaction (a chain), pass the same limits
 *	 when their queue has any (ExecutorClaimRunTask).
 *
 * A database updated to 0.5.0 but not to 0.10.0 has the index
 * ready_tasks_executor_namespace, (namespace, task_id) or from 0.9.0
 * (namespace, priority, task_id), instead: the same loose scan goes by
 * namespace, and claims the namespace's first task in that order with one
 * statement; limits are then the polls' alone.
 *
 * The slot is cleared when the transaction (or, in durable.run_tasks(), the
 * subtransaction) that claimed the task ends, however it ends, and when the
 * backend exits (before_shmem_exit): an error, a FATAL or a cancel never
 * leaves a task counted.  A crash of a backend resets shared memory.
 * Without shared memory (the library not preloaded, where only
 * durable.run_tasks() runs executor tasks) nothing is counted: the claim
 * takes the first task of the queues it finds, and max_executors is
 * not enforced.  On a database still at 0.4.0 (no such index, no limits)
 * executor.c claims the oldest task of any namespace, as 0.4.0 did.
 *
 * A namespace's max_task_timeout caps the statement timeout the executors
 * run its workflow functions and SQL activities with (ExecutorTaskTimeout);
 * the timeouts recorded in history stay as given.  The limits are read from
 * durable.namespaces once and kept per backend until that table changes
 * (its trigger sends a relcache invalidation, as namespaces.c relies on).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "access/skey.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "durable.h"
#include "base/clock.h"
#include "base/invalidation.h"
#include "base/util.h"
#include "store/claim_mark.h"
#include "store/direct.h"
#include "store/executor_share.h"
#include "store/spi.h"
#include "store/task_limits.h"

/* The executors' index from 0.10.0, and from 0.5.0 to 0.9.0 */
#define QUEUE_INDEX_NAME		"ready_tasks_executor_queue"
#define NAMESPACE_INDEX_NAME	"ready_tasks_executor_namespace"

/* What one backend runs */
typedef struct ShareSlot
{
	Oid			dboid;			/* InvalidOid: no executor task */
	uint64		ns_hash;		/* the namespace of its task */
} ShareSlot;

typedef struct ShareShared
{
	LWLock	   *lock;
	int			nslots;
	ShareSlot	slots[FLEXIBLE_ARRAY_MEMBER];	/* one a backend (pgprocno) */
} ShareShared;

static ShareShared *share = NULL;

/* This backend's slot counts a task, claimed in subtransaction held_subid */
static bool held = false;
static SubTransactionId held_subid = InvalidSubTransactionId;
static bool callbacks_registered = false;

/*
 * A group found with ready executor tasks: a namespace, or from 0.10.0 a
 * task queue and kind of a namespace
 */
typedef struct Candidate
{
	char	   *namespace;
	char	   *task_queue;		/* NULL before 0.10.0 */
	char		kind;			/* 'w' or 'x'; 0 before 0.10.0 */
	uint64		hash;			/* of the namespace */
	int64		oldest;			/* its first task seen in the claim order */
	int			priority;		/* that task's priority (3 before 0.9.0) */
	int			limit;			/* max_executors, 0: none */
	int			running;
	bool		tried;			/* no task of it could be claimed */
} Candidate;

/* Where this backend's next loose scan goes on (namespace NULL: the start) */
static Candidate scan_cursor;

/* The last claim went by queue (0.10.0), and when to try again if it failed */
static bool claims_by_queue = false;
static long claim_retry_ms = 0;

/* The limits of one namespace (only namespaces that have one) */
typedef struct LimitEntry
{
	char		name[DURABLE_MAX_NAME_LEN + 1]; /* hash key */
	int			max_executors;	/* 0: none */
	double		max_task_timeout;	/* seconds, 0: none */
} LimitEntry;

static HTAB *limits = NULL;
static MemoryContext limits_cxt = NULL;
static bool limits_valid = false;
static bool limits_loading = false;
static bool limits_callback = false;
static Oid	limits_relid = InvalidOid;

/*
 * The claim of one namespace's oldest executor task not put off, from the
 * oldest one the loose scan saw; its RETURNING list is executor.c's
 * (CLAIM_RETURNING), which reads the claimed task by column number.
 */
static KeptPlan claim_namespace_task = {
	NULL, "DELETE FROM durable.ready_tasks WHERE ctid ="
	" (SELECT ctid FROM durable.ready_tasks WHERE namespace = $1"
	"   AND task_id >= $2 AND kind IN ('w', 'x') AND not_before IS NULL"
	"   ORDER BY task_id LIMIT 1 FOR UPDATE SKIP LOCKED)"
	EXECUTOR_CLAIM_RETURNING,
	2, {TEXTOID, INT8OID}
};
/* The same from 0.7.0: no task of a paused queue (queue_pause.c) */
static KeptPlan claim_namespace_task_v7 = {
	NULL, "DELETE FROM durable.ready_tasks WHERE ctid ="
	" (SELECT t.ctid FROM durable.ready_tasks t WHERE t.namespace = $1"
	"   AND t.task_id >= $2 AND t.kind IN ('w', 'x') AND t.not_before IS NULL"
	"   AND NOT EXISTS (SELECT 1 FROM durable.paused_task_queues p"
	"     WHERE p.namespace = t.namespace AND p.task_queue = t.task_queue)"
	"   ORDER BY t.task_id LIMIT 1 FOR UPDATE OF t SKIP LOCKED)"
	EXECUTOR_CLAIM_RETURNING,
	2, {TEXTOID, INT8OID}
};
/*
 * The same from 0.9.0, in the claim order of the index (namespace, priority,
 * task_id): the lowest priority first, then the oldest.
 */
static KeptPlan claim_namespace_task_v9 = {
	NULL, "DELETE FROM durable.ready_tasks WHERE ctid ="
	" (SELECT t.ctid FROM durable.ready_tasks t WHERE t.namespace = $1"
	"   AND (t.priority, t.task_id) >= ($3, $2)"
	"   AND t.kind IN ('w', 'x') AND t.not_before IS NULL"
	"   AND NOT EXISTS (SELECT 1 FROM durable.paused_task_queues p"
	"     WHERE p.namespace = t.namespace AND p.task_queue = t.task_queue)"
	"   ORDER BY t.priority, t.task_id LIMIT 1 FOR UPDATE OF t SKIP LOCKED)"
	EXECUTOR_CLAIM_RETURNING,
	3, {TEXTOID, INT8OID, INT2OID}
};
static KeptPlan load_limits = {
	NULL, "SELECT name, COALESCE(max_executors, 0),"
	" COALESCE(pg_catalog.date_part('epoch', max_task_timeout), 0)::float8"
	" FROM durable.namespaces"
	" WHERE max_executors IS NOT NULL OR max_task_timeout IS NOT NULL",
	0, {InvalidOid}
};

static Size
share_size(void)
{
	return add_size(offsetof(ShareShared, slots),
					mul_size(sizeof(ShareSlot), MaxBackends));
}

/* Ask for the slots and their lock (shmem_request_hook). */
void
ExecutorShareShmemRequest(void)
{
	RequestAddinShmemSpace(share_size());
	RequestNamedLWLockTranche("durable executor share", 1);
}

/* Create or attach the slots (shmem_startup_hook, AddinShmemInitLock held). */
void
ExecutorShareShmemInit(void)
{
	bool		found;

	share = ShmemInitStruct("durable executor share", share_size(), &found);
	if (!found)
	{
		share->lock = &(GetNamedLWLockTranche("durable executor share"))->lock;
		share->nslots = MaxBackends;
		memset(share->slots, 0, sizeof(ShareSlot) * share->nslots);
	}
}

/* This backend's slot, or NULL (no shared memory). */
static ShareSlot *
my_slot(void)
{
	if (share == NULL || MyProc == NULL || MyProc->pgprocno < 0 ||
		MyProc->pgprocno >= share->nslots)
		return NULL;
	return &share->slots[MyProc->pgprocno];
}

/* The slot no longer counts a task. */
static void
release_slot(void)
{
	ShareSlot  *slot = my_slot();

	held = false;
	held_subid = InvalidSubTransactionId;
	if (slot == NULL)
		return;
	LWLockAcquire(share->lock, LW_EXCLUSIVE);
	slot->dboid = InvalidOid;
	slot->ns_hash = 0;
	LWLockRelease(share->lock);
}

/* The transaction that claimed the task ended (commit, abort, prepare). */
static void
share_xact_callback(XactEvent event, void *arg)
{
	if (held && event != XACT_EVENT_PRE_COMMIT &&
		event != XACT_EVENT_PARALLEL_PRE_COMMIT &&
		event != XACT_EVENT_PRE_PREPARE)
		release_slot();
}

/* The subtransaction that claimed it ended (durable.run_tasks()). */
static void
share_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					   SubTransactionId parentSubid, void *arg)
{
	if (held && mySubid == held_subid &&
		(event == SUBXACT_EVENT_COMMIT_SUB || event == SUBXACT_EVENT_ABORT_SUB))
		release_slot();
}

/* before_shmem_exit: an exiting backend runs nothing. */
static void
share_exit_callback(int code, Datum arg)
{
	if (held)
		release_slot();
}

static void
register_callbacks(void)
{
	ShareSlot  *slot;

	if (callbacks_registered)
		return;
	RegisterXactCallback(share_xact_callback, NULL);
	RegisterSubXactCallback(share_subxact_callback, NULL);
	before_shmem_exit(share_exit_callback, (Datum) 0);
	callbacks_registered = true;
	/* Nothing of an earlier process of the same slot counts. */
	slot = my_slot();
	if (slot != NULL && slot->dboid != InvalidOid)
		release_slot();
}

static uint64
namespace_hash(const char *namespace)
{
	return hash_bytes_extended((const unsigned char *) namespace,
							   (int) strlen(namespace), 0);
}

/* Relcache callback: durable.namespaces changed; read the limits again. */
static void
limits_invalidated(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == limits_relid)
		limits_valid = false;
}

/*
 * The limits of a namespace, or NULL when it has none (or the database is
 * still at 0.4.0, which has no such columns).  Reads durable.namespaces
 * when the kept copy is stale (SPI connected here).
 */
static LimitEntry *
lookup_limits(const char *namespace)
{
	if (!limits_callback)
	{
		DurableRegisterRelcacheCallback(limits_invalidated, (Datum) 0);
		limits_callback = true;
	}
	/* Read again when stale, or when the last reading failed half-way */
	if (!limits_valid || limits_loading || limits == NULL)
	{
		HASHCTL		ctl;
		Oid			nsp = get_namespace_oid("durable", true);

		if (limits_cxt == NULL)
			limits_cxt = AllocSetContextCreate(CacheMemoryContext,
											   "durable namespace limits",
											   ALLOCSET_SMALL_SIZES);
		limits = NULL;
		MemoryContextReset(limits_cxt);
		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = DURABLE_MAX_NAME_LEN + 1;
		ctl.entrysize = sizeof(LimitEntry);
		ctl.hcxt = limits_cxt;
		limits = hash_create("durable namespace limits", 8, &ctl,
							 HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
		limits_relid = OidIsValid(nsp) ?
			get_relname_relid("namespaces", nsp) : InvalidOid;
		/* A change while they are read makes them stale again at once. */
		limits_valid = true;
		limits_loading = true;
		if (DurableColumnExists("namespaces", "max_executors"))
		{
			int			n;

			if (SPI_connect() != SPI_OK_CONNECT)
				elog(ERROR, "SPI_connect failed");
			n = RunPlan(&load_limits, NULL, NULL, true, 0);
			for (int i = 0; i < n; i++)
			{
				char	   *name = SPIGetText(i, 1);
				bool		isnull;
				LimitEntry *e;

				if (name == NULL || strlen(name) > DURABLE_MAX_NAME_LEN)
					continue;
				e = hash_search(limits, name, HASH_ENTER, NULL);
				e->max_executors = DatumGetInt32(SPIGetDatum(i, 2, &isnull));
				e->max_task_timeout = DatumGetFloat8(SPIGetDatum(i, 3, &isnull));
			}
			if (SPI_finish() != SPI_OK_FINISH)
				elog(ERROR, "SPI_finish failed");
		}
		limits_loading = false;
	}
	if (strlen(namespace) > DURABLE_MAX_NAME_LEN)
		return NULL;
	return hash_search(limits, namespace, HASH_FIND, NULL);
}

/*
 * The statement timeout the executors run a task of namespace with, whose
 * own timeout (a decision task's, an activity attempt's StartToClose) is
 * timeout_seconds (0: none): at most the namespace's max_task_timeout.
 * *capped (if not NULL) says whether the cap is what applies.  In a
 * transaction.
 */
double
ExecutorTaskTimeout(const char *namespace, double timeout_seconds,
					bool *capped)
{
	LimitEntry *e = lookup_limits(namespace);
	double		cap = e != NULL ? e->max_task_timeout : 0;

	if (capped != NULL)
		*capped = false;
	if (cap > 0 && (timeout_seconds <= 0 || timeout_seconds > cap))
	{
		if (capped != NULL)
			*capped = true;
		return cap;
	}
	return timeout_seconds;
}

/*
 * The shape of the executors' index: its columns by position (1-based), and
 * how many of them make a group of the loose scan (1: namespace; 3:
 * namespace, task queue and kind).
 */
typedef struct ShareIndex
{
	Relation	rel;
	Relation	index;
	int			depth;			/* columns of a group */
	bool		ordered;		/* the index has priority before task_id */
	AttrNumber	c_ns;			/* heap columns */
	AttrNumber	c_queue;
	AttrNumber	c_kind;
	AttrNumber	c_id;
	AttrNumber	c_priority;
	Oid			ns_collation;
	Oid			queue_collation;
} ShareIndex;

/* The heap column of the index's column i (1-based), or 0. */
static AttrNumber
index_column(Relation index, int i)
{
	return i <= index->rd_index->indnkeyatts ?
		index->rd_index->indkey.values[i - 1] : InvalidAttrNumber;
}

/*
 * Read the shape of the index: from 0.10.0 (namespace, task_queue, kind,
 * priority, task_id); from 0.9.0 (namespace, priority, task_id); from 0.5.0
 * (namespace, task_id).
 */
static void
share_index_shape(ShareIndex *si, bool by_queue)
{
	Oid			relid = RelationGetRelid(si->rel);
	TupleDesc	desc = RelationGetDescr(si->rel);
	bool		ok;

	si->c_ns = get_attnum(relid, "namespace");
	si->c_queue = get_attnum(relid, "task_queue");
	si->c_kind = get_attnum(relid, "kind");
	si->c_id = get_attnum(relid, "task_id");
	si->c_priority = get_attnum(relid, "priority");
	si->depth = by_queue ? 3 : 1;
	if (by_queue)
	{
		si->ordered = true;
		ok = (index_column(si->index, 1) == si->c_ns &&
			  index_column(si->index, 2) == si->c_queue &&
			  index_column(si->index, 3) == si->c_kind &&
			  index_column(si->index, 4) == si->c_priority &&
			  index_column(si->index, 5) == si->c_id);
	}
	else
	{
		si->ordered = (si->c_priority != InvalidAttrNumber &&
					   index_column(si->index, 2) == si->c_priority &&
					   index_column(si->index, 3) == si->c_id);
		ok = (index_column(si->index, 1) == si->c_ns &&
			  (si->ordered || index_column(si->index, 2) == si->c_id));
	}
	if (!ok || si->c_ns == InvalidAttrNumber || si->c_id == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the index durable.%s does not have the columns of the executors' claim",
						RelationGetRelationName(si->index)),
				 errhint("durable needs its tables as its extension script made them.")));
	si->ns_collation = TupleDescAttr(desc, si->c_ns - 1)->attcollation;
	si->queue_collation = by_queue ?
		TupleDescAttr(desc, si->c_queue - 1)->attcollation : InvalidOid;
}

/* Column attno of the index entry the scan is on (xs_want_itup), never NULL */
static Datum
entry_column(IndexScanDesc scan, int attno)
{
	bool		isnull;

	return index_getattr(scan->xs_itup, attno, scan->xs_itupdesc, &isnull);
}

/*
 * Position the scan on the first entry of the group after "after" (NULL:
 * the first group): the next kind of the same queue, else the next queue of
 * the same namespace, else the next namespace.  One descent of the index
 * each, the deepest first.  The scan always has one key for each column of
 * a group (index_rescan takes as many as the scan began with): equal to
 * after's before the level, greater at the level, and IS NOT NULL, which
 * each row is, after it.  The group found goes to *found (its names
 * palloc'd), with the priority of its first entry.
 *
 * On the queue index the entry found may be of a task claimed since the
 * last VACUUM: only its key is read (group_first_task then looks for the
 * group's first live task).  On the older namespace index the first entry
 * the snapshot sees is found, as the claim that follows needs its task id.
 */
static bool
next_group(ShareIndex *si, IndexScanDesc scan, TupleTableSlot *slot,
		   const Candidate *after, Candidate *found)
{
	for (int level = after != NULL ? si->depth : 0; level >= 0; level--)
	{
		ScanKeyData keys[3];
		bool		isnull;

		if (after != NULL && level == 0)
			break;				/* after the last namespace */
		for (int i = 1; i <= si->depth; i++)
		{
			ScanKey		key = &keys[i - 1];
			StrategyNumber strategy = i < level ? BTEqualStrategyNumber :
			BTGreaterStrategyNumber;

			if (i > level)
				ScanKeyEntryInitialize(key, SK_ISNULL | SK_SEARCHNOTNULL, i,
									   InvalidStrategy, InvalidOid, InvalidOid,
									   InvalidOid, (Datum) 0);
			else if (i == 1)
				ScanKeyEntryInitialize(key, 0, 1, strategy, InvalidOid,
									   si->ns_collation,
									   i < level ? F_TEXTEQ : F_TEXT_GT,
									   PointerGetDatum(cstring_to_text(after->namespace)));
			else if (i == 2)
				ScanKeyEntryInitialize(key, 0, 2, strategy, InvalidOid,
									   si->queue_collation,
									   i < level ? F_TEXTEQ : F_TEXT_GT,
									   PointerGetDatum(cstring_to_text(after->task_queue)));
			else
				ScanKeyEntryInitialize(key, 0, 3, strategy, InvalidOid,
									   InvalidOid, F_CHARGT,
									   CharGetDatum(after->kind));
		}
		index_rescan(scan, keys, si->depth, NULL, 0);
		memset(found, 0, sizeof(*found));
		if (si->depth == 3)
		{
			if (index_getnext_tid(scan, ForwardScanDirection) == NULL)
				continue;
			found->namespace = TextDatumGetCString(entry_column(scan, 1));
			found->task_queue = TextDatumGetCString(entry_column(scan, 2));
			found->kind = DatumGetChar(entry_column(scan, 3));
			found->priority = DatumGetInt16(entry_column(scan, 4));
			return true;
		}
		if (index_getnext_slot(scan, ForwardScanDirection, slot))
		{
			found->namespace = TextDatumGetCString(slot_getattr(slot, si->c_ns,
																&isnull));
			found->oldest = DatumGetInt64(slot_getattr(slot, si->c_id,
													   &isnull));
			found->priority = si->ordered ?
				DatumGetInt16(slot_getattr(slot, si->c_priority, &isnull)) : 3;
			return true;
		}
	}
	return false;
}

/*
 * Walk the queue index's entries of group c at a priority below, at or
 * above 3 (strategy), for the first task the snapshot sees; with a mark
 * (priority 3), from the group's low-water mark on, telling it what the walk
 * passed.  True when found: its task id and priority go to c.
 */
static bool
group_walk(ShareIndex *si, Snapshot snapshot, TupleTableSlot *slot,
		   Candidate *c, StrategyNumber strategy, bool marked)
{
	ScanKeyData keys[6];
	int			nkeys = 0;
	IndexScanDesc scan;
	ClaimMark	cm;
	ClaimWindow window = {0};
	bool		found = false;

	ScanKeyEntryInitialize(&keys[nkeys++], 0, 1, BTEqualStrategyNumber,
						   InvalidOid, si->ns_collation, F_TEXTEQ,
						   PointerGetDatum(cstring_to_text(c->namespace)));
	ScanKeyEntryInitialize(&keys[nkeys++], 0, 2, BTEqualStrategyNumber,
						   InvalidOid, si->queue_collation, F_TEXTEQ,
						   PointerGetDatum(cstring_to_text(c->task_queue)));
	ScanKeyEntryInitialize(&keys[nkeys++], 0, 3, BTEqualStrategyNumber,
						   InvalidOid, InvalidOid, F_CHAREQ,
						   CharGetDatum(c->kind));
	ScanKeyEntryInitialize(&keys[nkeys++], 0, 4, strategy, InvalidOid,
						   InvalidOid,
						   strategy == BTEqualStrategyNumber ? F_INT2EQ :
						   strategy == BTLessStrategyNumber ? F_INT2LT :
						   F_INT2GT, Int16GetDatum(3));
	if (marked)
	{
		int64		start = ClaimMarkBegin(&cm, si->rel, c->namespace,
										   c->task_queue,
										   CLAIM_MARK_EXECUTOR_KIND(c->kind),
										   snapshot);

		/* The columns before the task id are compared for equality */
		if (start > 0)
			ClaimWindowKeys(&window, keys, &nkeys, 5, start);
	}
	scan = index_beginscan(si->rel, si->index, snapshot, nkeys, 0);
	scan->xs_want_itup = true;	/* the task id of each entry */
	index_rescan(scan, keys, nkeys, NULL, 0);
	while (index_getnext_tid(scan, ForwardScanDirection) != NULL ||
		   (ClaimWindowWiden(&window, scan, keys, nkeys) &&
			index_getnext_tid(scan, ForwardScanDirection) != NULL))
	{
		int64		task_id = DatumGetInt64(entry_column(scan, 5));
		bool		visible = index_fetch_heap(scan, slot);

		if (marked)
			ClaimMarkSaw(&cm, task_id, visible);
		if (visible)
		{
			c->oldest = task_id;
			c->priority = DatumGetInt16(entry_column(scan, 4));
			found = true;
			break;
		}
	}
	index_endscan(scan);
	if (marked)
		ClaimMarkEnd(&cm);
	return found;
}

/*
 * The first task of group c (of the queue index) in the claim order that
 * the snapshot sees, into c; false when it has none.  first_priority: the
 * priority of the group's first entry, live or not, so that the tasks of
 * priorities 1 and 2, which few queues have, are looked for only when there
 * are entries of them.  The tasks of priority 3 are walked from the group's
 * low-water mark (claim_mark.c), as a poll's claim walks its queue: the
 * entries of the tasks claimed since the last VACUUM stay in the index in
 * front of the live ones, and walking them on every claim was most of the
 * claim's cost, and all of it under a held vacuum horizon.
 */
static bool
group_first_task(ShareIndex *si, Snapshot snapshot, TupleTableSlot *slot,
				 Candidate *c, int first_priority)
{
	if (first_priority < 3 &&
		group_walk(si, snapshot, slot, c, BTLessStrategyNumber, false))
		return true;
	if (first_priority <= 3 &&
		group_walk(si, snapshot, slot, c, BTEqualStrategyNumber, true))
		return true;
	return group_walk(si, snapshot, slot, c, BTGreaterStrategyNumber, false);
}

/* The same group: namespace, and for the queue index task queue and kind */
static bool
same_group(const Candidate *a, const Candidate *b)
{
	return strcmp(a->namespace, b->namespace) == 0 &&
		(a->task_queue == NULL ||
		 (strcmp(a->task_queue, b->task_queue) == 0 && a->kind == b->kind));
}

/*
 * The loose scan: up to max groups (namespaces, or queues and kinds of a
 * namespace) that have ready executor tasks, each with its first task in
 * the claim order that the snapshot sees, after the backend's cursor and
 * then from the start up to it.  Returns how many.
 */
static int
scan_groups(ShareIndex *si, Snapshot snapshot, Candidate *out, int max)
{
	TupleTableSlot *slot;
	IndexScanDesc scan;
	Candidate  *cursor = scan_cursor.namespace != NULL ? &scan_cursor : NULL;
	Candidate	skipped;
	int			n = 0;
	int			first_wrapped = -1;

	slot = table_slot_create(si->rel, NULL);
	scan = index_beginscan(si->rel, si->index, snapshot, si->depth, 0);
	scan->xs_want_itup = (si->depth == 3);

	/* After the cursor to the end, then (wrapped) from the start. */
	for (int phase = 0; phase < 2 && n < max; phase++)
	{
		const Candidate *after = phase == 0 ? cursor : NULL;

		if (phase == 1)
		{
			if (cursor == NULL)
				break;			/* the first phase began at the start */
			first_wrapped = n;
		}
		while (n < max && next_group(si, scan, slot, after, &out[n]))
		{
			Candidate  *c = &out[n];

			/* Wrapped round to where the first phase began: all seen. */
			if (phase == 1 && first_wrapped > 0 && same_group(c, &out[0]))
				break;
			/* Only entries of tasks claimed: on to the next group */
			if (si->depth == 3 &&
				!group_first_task(si, snapshot, slot, c, c->priority))
			{
				skipped = *c;
				after = &skipped;
				continue;
			}
			c->hash = namespace_hash(c->namespace);
			n++;
			after = c;
		}
	}
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);

	/* More groups than one claim looks at: the next goes on from here. */
	if (scan_cursor.namespace != NULL)
		pfree(scan_cursor.namespace);
	if (scan_cursor.task_queue != NULL)
		pfree(scan_cursor.task_queue);
	memset(&scan_cursor, 0, sizeof(scan_cursor));
	if (n >= max)
	{
		scan_cursor.namespace = MemoryContextStrdup(TopMemoryContext,
													out[n - 1].namespace);
		if (out[n - 1].task_queue != NULL)
			scan_cursor.task_queue = MemoryContextStrdup(TopMemoryContext,
														 out[n - 1].task_queue);
		scan_cursor.kind = out[n - 1].kind;
	}
	return n;
}

/*
 * Among the candidates not tried, the one to claim from: the fewest tasks
 * of its namespace running, then the lowest priority, then the oldest task,
 * leaving out those whose namespace is at its max_executors.  Its index,
 * recorded in this backend's slot; -1 when none may run more.
 */
static int
pick_candidate(Candidate *c, int n)
{
	ShareSlot  *mine = my_slot();
	int			best = -1;

	if (mine != NULL)
		LWLockAcquire(share->lock, LW_EXCLUSIVE);
	for (int i = 0; i < n; i++)
		c[i].running = 0;
	if (mine != NULL)
	{
		for (int s = 0; s < share->nslots; s++)
		{
			ShareSlot  *slot = &share->slots[s];

			if (slot == mine || slot->dboid != MyDatabaseId)
				continue;
			for (int i = 0; i < n; i++)
				if (c[i].hash == slot->ns_hash)
					c[i].running++;
		}
	}
	for (int i = 0; i < n; i++)
	{
		if (c[i].tried)
			continue;
		if (mine != NULL && c[i].limit > 0 && c[i].running >= c[i].limit)
			continue;
		if (best < 0 || c[i].running < c[best].running ||
			(c[i].running == c[best].running &&
			 (c[i].priority < c[best].priority ||
			  (c[i].priority == c[best].priority &&
			   c[i].oldest < c[best].oldest))))
			best = i;
	}
	if (mine != NULL)
	{
		if (best >= 0)
		{
			mine->dboid = MyDatabaseId;
			mine->ns_hash = c[best].hash;
			held = true;
			held_subid = GetCurrentSubTransactionId();
		}
		LWLockRelease(share->lock);
	}
	return best;
}

/* A limit held a queue back: the soonest it may admit one again. */
static void
note_retry(long retry_ms)
{
	if (retry_ms > 0 && (claim_retry_ms == 0 || retry_ms < claim_retry_ms))
		claim_retry_ms = retry_ms;
}

/*
 * Claim the next task of one queue and kind, as a poll claims (direct.c),
 * under the limits of the queue and of its concurrency keys
 * (task_limits.c): those of its decision tasks for kind 'w', of its
 * activity tasks for 'x', which external workers' tasks of the same queue
 * share.  False when there is none, or the limits hold it back.
 */
static bool
claim_from_queue(const Candidate *c, ExecutorClaimedTask *task)
{
	char		limit_kind = c->kind == 'w' ? 'd' : 'a';
	TaskLimitClaim tc;
	ClaimKeyPolicy policy;
	ClaimedTask claimed;
	long		retry_ms;

	if (!TaskLimitAdmit(&tc, c->namespace, c->task_queue, limit_kind,
						DurableNow(), &retry_ms))
	{
		note_retry(retry_ms);
		return false;
	}
	tc.ends_in_transaction = true;
	TaskLimitKeyPolicy(&tc, &policy);
	if (!DirectClaimReadyTask(c->namespace, c->task_queue, c->kind, &policy,
							  &claimed))
	{
		if (tc.refused)
			note_retry(tc.retry_ms);
		TaskLimitAbandon(&tc);
		return false;
	}
	/* Its start counts from here; the queue's admission lock is let go. */
	TaskLimitClaimed(&tc, &claimed);
	task->namespace = pstrdup(c->namespace);
	task->task_queue = pstrdup(c->task_queue);
	task->kind = c->kind;
	task->run_id = claimed.run_id;
	task->scheduled_event_id = claimed.scheduled_event_id;
	task->attempt = claimed.attempt;
	task->task_id = claimed.task_id;
	return true;
}

/*
 * Read the task a claim statement returned (the last SPI result, with the
 * columns of EXECUTOR_CLAIM_RETURNING) into task, and free the result.
 */
void
ExecutorTaskFromSPI(ExecutorClaimedTask *task)
{
	bool		isnull;

	task->namespace = SPIGetText(0, 1);
	task->task_queue = SPIGetText(0, 2);
	task->kind = DatumGetChar(SPIGetDatum(0, 3, &isnull));
	memcpy(&task->run_id, DatumGetUUIDP(SPIGetDatum(0, 4, &isnull)),
		   sizeof(pg_uuid_t));
	task->scheduled_event_id = DatumGetInt64(SPIGetDatum(0, 5, &isnull));
	task->attempt = DatumGetInt32(SPIGetDatum(0, 6, &isnull));
	task->task_id = DatumGetInt64(SPIGetDatum(0, 7, &isnull));
	SPI_freetuptable(SPI_tuptable);
}

/* Whether a chain takes a task of this queue and kind only through limits */
static bool
queue_limited(const char *namespace, const char *task_queue, char kind)
{
	return TaskQueueLimited(namespace, task_queue, kind == 'w' ? 'd' : 'a');
}

/*
 * Claim the next task of a run's chain (executor.c): its first free task in
 * task id order (DirectClaimRunTask).  After a claim by queue (0.10.0), a
 * task of a queue with limits, of its own or of its concurrency keys, is
 * taken only after the run's other tasks and through those limits, as
 * ExecutorShareClaim would take it.  Returns 1 when one was claimed (in
 * *task), 0 when the run has none or the limits hold it back (the chain
 * ends; the task is claimed later, and its commit wakes the executors).
 */
int
ExecutorClaimRunTask(pg_uuid_t *run_id, ExecutorClaimedTask *task)
{
	RunTask		rt;
	int			r;

	r = DirectClaimRunTask(run_id, claims_by_queue ? queue_limited : NULL, &rt);
	if (r < 0)
	{
		TaskLimitClaim tc;
		ClaimKeyPolicy policy;
		long		retry_ms;

		if (!TaskLimitAdmit(&tc, rt.namespace, rt.task_queue,
							rt.kind == 'w' ? 'd' : 'a', DurableNow(),
							&retry_ms))
			return 0;
		tc.ends_in_transaction = true;
		TaskLimitKeyPolicy(&tc, &policy);
		if (rt.claimed.concurrency_key[0] != '\0' &&
			!policy.admit(rt.claimed.concurrency_key, policy.arg))
		{
			TaskLimitAbandon(&tc);
			return 0;
		}
		DirectDeleteHeldTask(&rt);
		TaskLimitClaimed(&tc, &rt.claimed);
		r = 1;
	}
	if (r == 0)
		return 0;
	task->namespace = rt.namespace;
	task->task_queue = rt.task_queue;
	task->kind = rt.kind;
	task->run_id = rt.claimed.run_id;
	task->scheduled_event_id = rt.claimed.scheduled_event_id;
	task->attempt = rt.claimed.attempt;
	task->task_id = rt.claimed.task_id;
	return 1;
}

/*
 * Whether the last claim went by queue and kind, under their limits (a
 * database at 0.10.0 or later): then the tasks a chain takes after it must
 * leave out the queues that have limits (executor.c).
 */
bool
ExecutorClaimsByQueue(void)
{
	return claims_by_queue;
}

/*
 * When the last claim that found nothing should be tried again, in
 * milliseconds, because a rate limit held a queue back (0: when woken; a
 * task that ends under a concurrency limit wakes the executors).
 */
long
ExecutorClaimRetryMs(void)
{
	return claim_retry_ms;
}

/*
 * Claim a ready executor task as described at the top of this file (SPI
 * connected, in the transaction or subtransaction the task runs in): the
 * number of tasks claimed (0 or 1), the task in *task; -1 when the database
 * has no index for it (0.4.0), for the caller to claim the oldest task
 * instead.
 */
int
ExecutorShareClaim(ExecutorClaimedTask *task)
{
	Oid			nsp;
	Oid			indexid;
	ShareIndex	si;
	Snapshot	snapshot;
	Candidate	cand[EXECUTOR_SHARE_SCAN_MAX];
	int			n;
	int			claimed = 0;
	bool		paused_stored = TaskQueuePausesStored();

	claim_retry_ms = 0;

	/*
	 * The table first, locked and checked to still exist (a DROP EXTENSION
	 * may have run since the names were looked up); with its lock held its
	 * index cannot go away.
	 */
	si.rel = DurableOpenTable("ready_tasks", AccessShareLock);
	nsp = RelationGetNamespace(si.rel);
	indexid = get_relname_relid(QUEUE_INDEX_NAME, nsp);
	claims_by_queue = OidIsValid(indexid);
	if (!claims_by_queue)
		indexid = get_relname_relid(NAMESPACE_INDEX_NAME, nsp);
	if (!OidIsValid(indexid))
	{
		table_close(si.rel, NoLock);
		return -1;
	}

	register_callbacks();
	if (held)
		release_slot();			/* not expected: a claim per chain */

	CommandCounterIncrement();
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	si.index = index_open(indexid, AccessShareLock);
	share_index_shape(&si, claims_by_queue);
	n = scan_groups(&si, snapshot, cand, EXECUTOR_SHARE_SCAN_MAX);
	index_close(si.index, NoLock);
	table_close(si.rel, NoLock);
	UnregisterSnapshot(snapshot);
	if (n == 0)
		return 0;

	for (int i = 0; i < n; i++)
	{
		LimitEntry *e = lookup_limits(cand[i].namespace);

		cand[i].limit = e != NULL ? e->max_executors : 0;
	}

	while (claimed == 0)
	{
		int			best = pick_candidate(cand, n);

		if (best < 0)
			break;
		if (claims_by_queue)
			claimed = claim_from_queue(&cand[best], task) ? 1 : 0;
		else
		{
			Datum		values[3];

			values[0] = CStringGetTextDatum(cand[best].namespace);
			values[1] = Int64GetDatum(cand[best].oldest);
			values[2] = Int16GetDatum((int16) cand[best].priority);
			claimed = RunPlan(si.ordered ? &claim_namespace_task_v9 :
							  paused_stored ? &claim_namespace_task_v7 :
							  &claim_namespace_task, values, NULL, false, 1);
			if (claimed > 0)
				ExecutorTaskFromSPI(task);
		}
		if (claimed == 0)
		{
			/* Nothing of it could be claimed: the next candidate. */
			cand[best].tried = true;
			if (held)
				release_slot();
		}
	}
	return claimed;
}

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
 * first picks a namespace, then claims that namespace's oldest task:
 *
 * - The namespaces that have ready executor tasks are found by a loose scan
 *	 of the partial index ready_tasks_executor_namespace (namespace,
 *	 task_id; from 0.9.0 namespace, priority, task_id; for kinds 'w' and 'x'
 *	 not put off): one descent of the index for each namespace, which also
 *	 gives its first task in the claim order.  At most
 *	 EXECUTOR_SHARE_SCAN_MAX namespaces are looked at by one claim; when
 *	 there are more, the backend's next claim goes on after the last one, so
 *	 that every namespace comes in turn.
 * - Shared memory holds, for each backend, the namespace of the executor
 *	 task it runs (a 64-bit hash of its name, with the database).  Among the
 *	 namespaces found, the claim picks the one with the fewest tasks running,
 *	 the oldest task breaking ties, leaving out a namespace that already runs
 *	 its max_executors (durable.namespaces); it records its pick in its own
 *	 slot under the same lock, so that two claims at once count each other.
 * - It then claims that namespace's oldest task with SKIP LOCKED; when none
 *	 is free after all (claimed meanwhile), it tries the next namespace.
 *	 From 0.9.0 the index is on (namespace, priority, task_id): a namespace's
 *	 tasks are claimed lowest priority first, then oldest (docs/task-queues.md
 *	 "Priorities and fairness"), and between namespaces with as many tasks
 *	 running the lower priority goes first.  Concurrency keys and the
 *	 limits of queues and keys are not the executors' (max_executors is).
 *
 * The slot is cleared when the transaction (or, in durable.run_tasks(), the
 * subtransaction) that claimed the task ends, however it ends, and when the
 * backend exits (before_shmem_exit): an error, a FATAL or a cancel never
 * leaves a task counted.  A crash of a backend resets shared memory.
 * Without shared memory (the library not preloaded, where only
 * durable.run_tasks() runs executor tasks) nothing is counted: the claim
 * takes the oldest task of the namespaces it finds, and max_executors is
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
#include "base/util.h"
#include "store/direct.h"
#include "store/executor_share.h"
#include "store/spi.h"

#define SHARE_INDEX_NAME	"ready_tasks_executor_namespace"

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

/* Where this backend's next loose scan goes on, or NULL: from the start */
static char *scan_cursor = NULL;

/* A namespace found with ready executor tasks */
typedef struct Candidate
{
	char	   *namespace;
	uint64		hash;
	int64		oldest;			/* its first task seen in the claim order */
	int			priority;		/* that task's priority (3 before 0.9.0) */
	int			limit;			/* max_executors, 0: none */
	int			running;
	bool		tried;			/* no task of it could be claimed */
} Candidate;

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
	" RETURNING namespace, task_queue, kind, run_id, scheduled_event_id,"
	" attempt, task_id",
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
	" RETURNING namespace, task_queue, kind, run_id, scheduled_event_id,"
	" attempt, task_id",
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
	" RETURNING namespace, task_queue, kind, run_id, scheduled_event_id,"
	" attempt, task_id",
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
		CacheRegisterRelcacheCallback(limits_invalidated, (Datum) 0);
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
 * The loose scan: up to max namespaces that have ready executor tasks, each
 * with the first task of it in the claim order that the snapshot sees, after
 * scan_cursor and then from the start up to it.  Returns how many.  The
 * index is on (namespace, task_id), or from 0.9.0 on (namespace, priority,
 * task_id): *ordered tells which.
 */
static int
scan_namespaces(Relation rel, Relation index, Snapshot snapshot,
				Candidate *out, int max, bool *ordered)
{
	TupleDesc	desc = RelationGetDescr(rel);
	AttrNumber	c_ns = get_attnum(RelationGetRelid(rel), "namespace");
	AttrNumber	c_id = get_attnum(RelationGetRelid(rel), "task_id");
	AttrNumber	c_priority = get_attnum(RelationGetRelid(rel), "priority");
	Oid			collation;
	TupleTableSlot *slot;
	IndexScanDesc scan;
	char	   *cursor = scan_cursor;
	int			n = 0;
	int			first_wrapped = -1;

	*ordered = (c_priority != InvalidAttrNumber &&
				index->rd_index->indnatts >= 3 &&
				index->rd_index->indkey.values[1] == c_priority &&
				index->rd_index->indkey.values[2] == c_id);
	if (c_ns == InvalidAttrNumber || c_id == InvalidAttrNumber ||
		index->rd_index->indnatts < 2 ||
		index->rd_index->indkey.values[0] != c_ns ||
		(!*ordered && index->rd_index->indkey.values[1] != c_id))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the index durable." SHARE_INDEX_NAME " is not on (namespace, priority, task_id)"),
				 errhint("durable needs its tables as its extension script made them.")));
	collation = TupleDescAttr(desc, c_ns - 1)->attcollation;
	slot = table_slot_create(rel, NULL);
	scan = index_beginscan(rel, index, snapshot, 1, 0);

	/* After the cursor to the end, then (wrapped) from the start. */
	for (int phase = 0; phase < 2 && n < max; phase++)
	{
		char	   *after = phase == 0 ? cursor : NULL;

		if (phase == 1)
		{
			if (cursor == NULL)
				break;			/* the first phase began at the start */
			first_wrapped = n;
		}
		while (n < max)
		{
			ScanKeyData key;
			bool		isnull;
			char	   *ns;

			/* One key each time, as the scan began with: "> after" or any */
			if (after != NULL)
				ScanKeyEntryInitialize(&key, 0, 1, BTGreaterStrategyNumber,
									   InvalidOid, collation, F_TEXT_GT,
									   PointerGetDatum(cstring_to_text(after)));
			else
				ScanKeyEntryInitialize(&key, SK_ISNULL | SK_SEARCHNOTNULL, 1,
									   InvalidStrategy, InvalidOid,
									   InvalidOid, InvalidOid, (Datum) 0);
			index_rescan(scan, &key, 1, NULL, 0);
			if (!index_getnext_slot(scan, ForwardScanDirection, slot))
				break;
			ns = TextDatumGetCString(slot_getattr(slot, c_ns, &isnull));
			/* Wrapped round to where the first phase began: all seen. */
			if (phase == 1 && first_wrapped > 0 &&
				strcmp(ns, out[0].namespace) == 0)
				break;
			out[n].namespace = ns;
			out[n].hash = namespace_hash(ns);
			out[n].oldest = DatumGetInt64(slot_getattr(slot, c_id, &isnull));
			out[n].priority = *ordered ?
				DatumGetInt16(slot_getattr(slot, c_priority, &isnull)) : 3;
			out[n].limit = 0;
			out[n].running = 0;
			out[n].tried = false;
			n++;
			after = ns;
		}
	}
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);

	/* More namespaces than one claim looks at: the next goes on from here. */
	if (scan_cursor != NULL)
		pfree(scan_cursor);
	scan_cursor = n >= max ?
		MemoryContextStrdup(TopMemoryContext, out[n - 1].namespace) : NULL;
	return n;
}

/*
 * Among the candidates not tried, the one to claim from: the fewest tasks
 * running, then the oldest task, leaving out those at their max_executors.
 * Its index, recorded in this backend's slot; -1 when none may run more.
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

/*
 * Claim a ready executor task as described at the top of this file (SPI
 * connected, in the transaction or subtransaction the task runs in): the
 * number of rows claimed (0 or 1), the task being the last SPI result with
 * executor.c's columns; -1 when the database has no index for it (0.4.0),
 * for the caller to claim the oldest task instead.
 */
int
ExecutorShareClaim(void)
{
	Oid			nsp;
	Oid			indexid;
	Relation	rel;
	Relation	index;
	Snapshot	snapshot;
	Candidate	cand[EXECUTOR_SHARE_SCAN_MAX];
	int			n;
	int			claimed = 0;
	bool		paused_stored = TaskQueuePausesStored();
	bool		ordered = false;

	/*
	 * The table first, locked and checked to still exist (a DROP EXTENSION
	 * may have run since the names were looked up); with its lock held its
	 * index cannot go away.
	 */
	rel = DurableOpenTable("ready_tasks", AccessShareLock);
	nsp = RelationGetNamespace(rel);
	indexid = get_relname_relid(SHARE_INDEX_NAME, nsp);
	if (!OidIsValid(indexid))
	{
		table_close(rel, NoLock);
		return -1;
	}

	register_callbacks();
	if (held)
		release_slot();			/* not expected: a claim per chain */

	CommandCounterIncrement();
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	index = index_open(indexid, AccessShareLock);
	n = scan_namespaces(rel, index, snapshot, cand, EXECUTOR_SHARE_SCAN_MAX,
						&ordered);
	index_close(index, NoLock);
	table_close(rel, NoLock);
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
		Datum		values[3];

		if (best < 0)
			break;
		values[0] = CStringGetTextDatum(cand[best].namespace);
		values[1] = Int64GetDatum(cand[best].oldest);
		values[2] = Int16GetDatum((int16) cand[best].priority);
		claimed = RunPlan(ordered ? &claim_namespace_task_v9 :
						  paused_stored ? &claim_namespace_task_v7 :
						  &claim_namespace_task, values, NULL, false, 1);
		if (claimed == 0)
		{
			/* Every task of it was taken meanwhile: the next namespace. */
			cand[best].tried = true;
			if (held)
				release_slot();
		}
	}
	return claimed;
}

/*-------------------------------------------------------------------------
 *
 * task_limits.c
 *	  Concurrency and rate limits of a task queue: durable.set_task_queue_limits()
 *	  and the admission a poll's claim asks for.
 *
 * durable.task_queue_limits holds one row a (namespace, task queue, kind)
 * with limits: at most max_concurrent tasks started and not finished, and
 * at most rate starts a second with a burst.  A queue without a row costs a
 * claim one probe of the table's primary key (TaskQueueLimited), which also
 * reads the limits.
 *
 * Admission.  A claim of a queue with a concurrency limit (TaskLimitAdmit,
 * and for a key's limit the claim's walk asking admit_key) first publishes
 * itself in its backend's slot of shared memory (ClaimSlot: "a claim of
 * this queue and key is being admitted"), then counts the other backends'
 * slots of the queue and then the queue's starts (in that order: a claim
 * records its start before it leaves its slot).  Of two claims at once, each
 * publishes before it counts (with a full memory barrier between), so at
 * least one of them counts the other: together they never take more than
 * the room there was, and neither waits for the other.  The claim stays
 * published until its start is recorded (TaskLimitClaimed) or it gives up
 * (TaskLimitAbandon).  When that count finds no room, the claim counts once
 * more under the queue's admission lock, a heavyweight lock of its own (an
 * advisory lock tag no SQL function makes), unpublished while it waits for
 * it, so that claims racing for the last slots do not keep refusing each
 * other; under the lock it first drops the rows of tasks that have ended.
 * The lock is let go as soon as the start is recorded, not at commit: a lock
 * held to commit would put the queue's every claim behind a WAL flush.
 * Without shared memory every claim of a limited queue takes the lock.
 * What makes the count exact:
 *
 * - Concurrency: the starts are rows of durable.task_starts, written by the
 *   transaction that starts the task.  A claim counts them with a dirty
 *   snapshot, which sees the rows of transactions still in progress (a start
 *   not committed yet counts; so does a start whose end is not committed
 *   yet), so a claim never misses a start that may commit; the row is
 *   written before the claim that made it unpublishes.  A row whose task
 *   has ended is dropped when the attempt ends (TaskLimitEnded, from the
 *   engine's paths that end a task), and otherwise by the first claim that
 *   finds the queue full: it deletes the committed rows whose task is no
 *   longer started (a closed run, a terminated or reset one) before it
 *   decides.  So a row left behind never holds a slot for long.
 * - Rate: a generic cell rate algorithm (a token bucket kept as the time at
 *   which the bucket is full again, "tat") in shared memory, one slot a
 *   queue.  A claim takes its token when it is admitted, checked and taken
 *   in one step under the table's spinlock, and gives it back if it claims
 *   nothing; a start whose transaction rolls back keeps it taken, so the
 *   rate is never exceeded.  The state starts again full after a server
 *   restart.  Without durable in shared_preload_libraries there is no
 *   shared memory for it: a queue with a rate limit then hands nothing out,
 *   and set_task_queue_limits refuses a rate.
 *
 * Executors.  A task an executor claims (executor_share.c) starts and ends
 * in the claiming transaction, so its start needs no row: the claim's slot
 * stays set, as the task's start, until the task ends (TaskLimitEnded),
 * the transaction or the subtransaction that claimed it aborts, or the
 * backend exits.  A slot is cleared at the task's end rather than at
 * commit: the task's code has run by then, and a chain's next task would
 * otherwise count against it.  A crash of a backend resets shared memory.
 * Without shared memory (the library not preloaded) an executor's start is
 * a row as a poll's.
 *
 * Limits apply wherever a task is claimed: polls; the executors, which run
 * SQL workflows' decision tasks under the limits of kind 'decision' and SQL
 * activities under those of kind 'activity' (executor_share.c), shared with
 * the external workers of the same queue; and eager dispatch, which a
 * limited queue does not do (engine/runs.c, engine/activities.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/transam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

#include "base/caller.h"
#include "base/clock.h"
#include "base/util.h"
#include "store/direct.h"
#include "store/namespaces.h"
#include "store/queue_controls.h"
#include "store/spi.h"
#include "store/task_limits.h"
#include "store/wait.h"
#include "store/worker_slots.h"

#define ARG_TEXT(n)		(PG_ARGISNULL(n) ? NULL : PG_GETARG_TEXT_PP(n))

/* The field4 of the advisory lock tags of admission locks (SQL's are 1 and 2) */
#define ADMISSION_LOCK_FIELD4	0x4454

/* How soon a poll held back by a start still in progress looks again */
#define IN_PROGRESS_RETRY_MS	50

/* Rate slots in shared memory, and the slots a queue's key may take */
#define RATE_SLOTS		4096
#define RATE_PROBE		8

typedef struct RateSlot
{
	uint64		key;			/* 0: free */
	int64		tat;			/* when the bucket is full again, microseconds */
} RateSlot;

typedef struct RateTable
{
	slock_t		mutex;
	RateSlot	slots[RATE_SLOTS];
} RateTable;

static RateTable *rate_table = NULL;

/*
 * What a backend is doing under a queue's limits, one slot a backend in
 * shared memory: a claim being admitted (published before it counts), or
 * an executor's task started (see "Admission" and "Executors" at the top
 * of this file).
 */
typedef struct ClaimSlot
{
	uint64		queue;			/* queue_hash of its queue; 0: none */
	uint64		key;			/* key_slot of its concurrency key; 0: none */
	bool		started;		/* an executor's task, not a claim under way */
	pg_uuid_t	run_id;			/* the task, when started */
	int64		start_key;		/* start_key() of the task */
} ClaimSlot;

static ClaimSlot *claim_slots = NULL;

/* This backend's slot is set, in subtransaction slot_subid */
static bool slot_set = false;
static SubTransactionId slot_subid = InvalidSubTransactionId;
static bool slot_callbacks = false;

/* A started task of the queue still holds its slot: its attempt is running. */
#define STILL_STARTED \
	" CASE WHEN s.kind OPERATOR(pg_catalog.=) 'activity'" \
	"   THEN EXISTS (SELECT 1 FROM durable.activities a" \
	"     WHERE a.run_id OPERATOR(pg_catalog.=) s.run_id" \
	"       AND a.scheduled_event_id OPERATOR(pg_catalog.=) s.scheduled_event_id" \
	"       AND a.attempt OPERATOR(pg_catalog.=) s.attempt" \
	"       AND a.started_time IS NOT NULL)" \
	"   ELSE EXISTS (SELECT 1 FROM durable.runs r" \
	"     WHERE r.run_id OPERATOR(pg_catalog.=) s.run_id" \
	"       AND r.status OPERATOR(pg_catalog.=) 'running'" \
	"       AND r.decision_started_id OPERATOR(pg_catalog.<>) 0) END"

static KeptPlan sweep_starts = {
	NULL, "DELETE FROM durable.task_starts s"
	" WHERE s.namespace OPERATOR(pg_catalog.=) $1"
	" AND s.task_queue OPERATOR(pg_catalog.=) $2 AND s.kind OPERATOR(pg_catalog.=) $3"
	" AND NOT" STILL_STARTED,
	3, {TEXTOID, TEXTOID, TEXTOID}
};
static KeptPlan insert_start = {
	NULL, "INSERT INTO durable.task_starts (namespace, task_queue, kind, run_id,"
	" scheduled_event_id, attempt, started_at) VALUES ($1, $2, $3, $4, $5, $6, $7)"
	" ON CONFLICT (namespace, task_queue, kind, run_id, scheduled_event_id)"
	" DO UPDATE SET attempt = EXCLUDED.attempt, started_at = EXCLUDED.started_at",
	7, {TEXTOID, TEXTOID, TEXTOID, UUIDOID, INT8OID, INT4OID, TIMESTAMPTZOID}
};
static KeptPlan insert_key_start = {
	NULL, "INSERT INTO durable.task_starts (namespace, task_queue, kind, run_id,"
	" scheduled_event_id, attempt, started_at, concurrency_key)"
	" VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
	" ON CONFLICT (namespace, task_queue, kind, run_id, scheduled_event_id)"
	" DO UPDATE SET attempt = EXCLUDED.attempt, started_at = EXCLUDED.started_at,"
	" concurrency_key = EXCLUDED.concurrency_key",
	8, {TEXTOID, TEXTOID, TEXTOID, UUIDOID, INT8OID, INT4OID, TIMESTAMPTZOID,
	TEXTOID}
};
static KeptPlan delete_start = {
	NULL, "DELETE FROM durable.task_starts"
	" WHERE namespace OPERATOR(pg_catalog.=) $1"
	" AND task_queue OPERATOR(pg_catalog.=) $2 AND kind OPERATOR(pg_catalog.=) $3"
	" AND run_id OPERATOR(pg_catalog.=) $4"
	" AND scheduled_event_id OPERATOR(pg_catalog.=) $5",
	5, {TEXTOID, TEXTOID, TEXTOID, UUIDOID, INT8OID}
};
static KeptPlan upsert_limits = {
	NULL, "INSERT INTO durable.task_queue_limits AS l (namespace, task_queue, kind,"
	" max_concurrent, rate, burst, set_at, set_by)"
	" VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
	" ON CONFLICT (namespace, task_queue, kind) DO UPDATE"
	" SET max_concurrent = EXCLUDED.max_concurrent, rate = EXCLUDED.rate,"
	" burst = EXCLUDED.burst, set_at = EXCLUDED.set_at, set_by = EXCLUDED.set_by"
	" WHERE (l.max_concurrent, l.rate, l.burst)"
	"   IS DISTINCT FROM (EXCLUDED.max_concurrent, EXCLUDED.rate, EXCLUDED.burst)",
	8, {TEXTOID, TEXTOID, TEXTOID, INT4OID, FLOAT8OID, INT4OID, TIMESTAMPTZOID,
	TEXTOID}
};
static KeptPlan delete_limits = {
	NULL, "DELETE FROM durable.task_queue_limits"
	" WHERE namespace OPERATOR(pg_catalog.=) $1"
	" AND task_queue OPERATOR(pg_catalog.=) $2 AND kind OPERATOR(pg_catalog.=) $3",
	3, {TEXTOID, TEXTOID, TEXTOID}
};
static KeptPlan delete_queue_starts = {
	NULL, "DELETE FROM durable.task_starts"
	" WHERE namespace OPERATOR(pg_catalog.=) $1"
	" AND task_queue OPERATOR(pg_catalog.=) $2 AND kind OPERATOR(pg_catalog.=) $3",
	3, {TEXTOID, TEXTOID, TEXTOID}
};

static KeptPlan upsert_key_limits = {
	NULL, "INSERT INTO durable.task_key_limits AS l (namespace, task_queue, kind,"
	" concurrency_key, max_concurrent, rate, burst, weight, set_at, set_by)"
	" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
	" ON CONFLICT (namespace, task_queue, kind, concurrency_key) DO UPDATE"
	" SET max_concurrent = EXCLUDED.max_concurrent, rate = EXCLUDED.rate,"
	" burst = EXCLUDED.burst, weight = EXCLUDED.weight, set_at = EXCLUDED.set_at,"
	" set_by = EXCLUDED.set_by"
	" WHERE (l.max_concurrent, l.rate, l.burst, l.weight) IS DISTINCT FROM"
	"   (EXCLUDED.max_concurrent, EXCLUDED.rate, EXCLUDED.burst, EXCLUDED.weight)",
	10, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, INT4OID, FLOAT8OID, INT4OID,
	INT4OID, TIMESTAMPTZOID, TEXTOID}
};
static KeptPlan delete_key_limits = {
	NULL, "DELETE FROM durable.task_key_limits"
	" WHERE namespace OPERATOR(pg_catalog.=) $1"
	" AND task_queue OPERATOR(pg_catalog.=) $2 AND kind OPERATOR(pg_catalog.=) $3"
	" AND concurrency_key OPERATOR(pg_catalog.=) $4",
	4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID}
};

static const char *
kind_name(char kind)
{
	return kind == 'd' ? "decision" : "activity";
}

/* ---------------------------------------------------------------- shared memory */

Size
TaskLimitsShmemSize(void)
{
	return add_size(sizeof(RateTable),
					mul_size(sizeof(ClaimSlot), MaxBackends));
}

void
TaskLimitsShmemInit(void)
{
	bool		found;

	rate_table = ShmemInitStruct("durable rate limits", sizeof(RateTable), &found);
	if (!found)
	{
		SpinLockInit(&rate_table->mutex);
		memset(rate_table->slots, 0, sizeof(rate_table->slots));
	}
	claim_slots = ShmemInitStruct("durable claim slots",
								  mul_size(sizeof(ClaimSlot), MaxBackends),
								  &found);
	if (!found)
		memset(claim_slots, 0, sizeof(ClaimSlot) * MaxBackends);
}

/* This backend's slot, or NULL (no shared memory). */
static ClaimSlot *
my_slot(void)
{
	if (claim_slots == NULL || MyProc == NULL || MyProc->pgprocno < 0 ||
		MyProc->pgprocno >= MaxBackends)
		return NULL;
	return &claim_slots[MyProc->pgprocno];
}

/* This backend's slot no longer counts. */
static void
clear_slot(void)
{
	ClaimSlot  *mine = my_slot();

	slot_set = false;
	slot_subid = InvalidSubTransactionId;
	if (mine == NULL)
		return;
	/* Read without a lock: a slot read as still taken only holds back. */
	mine->queue = 0;
	mine->key = 0;
	mine->started = false;
	pg_memory_barrier();
}

static void
slot_xact_callback(XactEvent event, void *arg)
{
	if (slot_set && event != XACT_EVENT_PRE_COMMIT &&
		event != XACT_EVENT_PARALLEL_PRE_COMMIT &&
		event != XACT_EVENT_PRE_PREPARE)
		clear_slot();
}

/*
 * A subtransaction that ends: one that aborts undoes what the slot says if
 * it was set in it or in one of its children (durable.run_tasks() runs each
 * task in a subtransaction; the user code's own subtransactions inside the
 * task end before the task does and leave it counted); one that commits
 * hands the slot on to its parent.
 */
static void
slot_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					  SubTransactionId parentSubid, void *arg)
{
	if (!slot_set)
		return;
	if (event == SUBXACT_EVENT_ABORT_SUB && slot_subid >= mySubid)
		clear_slot();
	else if (event == SUBXACT_EVENT_COMMIT_SUB && slot_subid == mySubid)
		slot_subid = parentSubid;
}

static void
slot_exit_callback(int code, Datum arg)
{
	if (slot_set)
		clear_slot();
}

/*
 * Set this backend's slot: a claim of the queue (and key, 0: none) being
 * admitted, seen by every claim that counts after this returns.
 */
static void
set_slot(uint64 queue, uint64 key)
{
	ClaimSlot  *mine = my_slot();

	if (mine == NULL)
		return;
	if (!slot_callbacks)
	{
		RegisterXactCallback(slot_xact_callback, NULL);
		RegisterSubXactCallback(slot_subxact_callback, NULL);
		before_shmem_exit(slot_exit_callback, (Datum) 0);
		slot_callbacks = true;
	}
	mine->started = false;
	mine->key = key;
	mine->queue = queue;
	/* Published before this backend counts the others' (see "Admission") */
	pg_memory_barrier();
	if (!slot_set)
		slot_subid = GetCurrentSubTransactionId();
	slot_set = true;
}

/*
 * The slots of other backends on a queue (key 0) or on one of its
 * concurrency keys: claims being admitted and executors' tasks started.
 * *in_progress is set when there are any (they end or turn into rows soon).
 */
static int64
count_slots(uint64 queue, uint64 key, bool *in_progress)
{
	ClaimSlot  *mine = my_slot();
	int64		n = 0;

	if (claim_slots == NULL)
		return 0;
	pg_memory_barrier();
	for (int i = 0; i < MaxBackends; i++)
	{
		ClaimSlot  *cs = &claim_slots[i];

		if (cs != mine && cs->queue == queue && (key == 0 || cs->key == key))
			n++;
	}
	if (n > 0)
		*in_progress = true;
	return n;
}

/* The key of a queue: its database, namespace, task queue and kind. */
static uint64
queue_hash(const char *namespace, const char *task_queue, char kind)
{
	uint64		h = hash_bytes_uint32_extended((uint32) MyDatabaseId, 0);

	h = hash_combine64(h, hash_bytes_extended((const unsigned char *) namespace,
											  strlen(namespace), 1));
	h = hash_combine64(h, hash_bytes_extended((const unsigned char *) task_queue,
											  strlen(task_queue), 2));
	h = hash_combine64(h, (uint64) (unsigned char) kind);
	return h == 0 ? 1 : h;
}

/*
 * The slot of a key (rate_table->mutex held): its own, else a free one, else
 * the one among its probes whose bucket has been full the longest (whose
 * state, a tat in the past, is the same as a new slot's), taken over.
 */
static RateSlot *
rate_slot(uint64 key, int64 now)
{
	RateSlot   *best = NULL;
	int			i;

	for (i = 0; i < RATE_PROBE; i++)
	{
		RateSlot   *slot = &rate_table->slots[(key + i) % RATE_SLOTS];

		if (slot->key == key)
			return slot;
		if (best == NULL || (best->key != 0 &&
							 (slot->key == 0 || slot->tat < best->tat)))
			best = slot;
	}
	best->key = key;
	best->tat = now;
	return best;
}

/*
 * Take a token of the rate limit at now (microseconds) if it has one, in one
 * step under the table's lock, so that claimers need no other lock to keep
 * the rate; else *retry_ms is when it will have one.  GCRA: a start is
 * allowed while the bucket's full time is at most (burst - 1) emission
 * intervals ahead of now; taking a token moves it one interval on.  A clock
 * that went back (a test time set earlier) leaves the state no further
 * ahead than a full burst.
 */
static bool
rate_reserve(uint64 key, int64 now, double rate, int32 burst, long *retry_ms)
{
	double		interval = 1e6 / rate;
	double		tolerance = (burst - 1) * interval;
	RateSlot   *slot;
	double		ahead;
	double		tat;

	SpinLockAcquire(&rate_table->mutex);
	slot = rate_slot(key, now);
	ahead = (double) (slot->tat - now);
	if (ahead <= tolerance)
	{
		tat = (double) Max(slot->tat, now) + interval;
		tat = Min(tat, (double) now + burst * interval);
		slot->tat = (int64) tat;
		SpinLockRelease(&rate_table->mutex);
		return true;
	}
	SpinLockRelease(&rate_table->mutex);
	*retry_ms = (long) Min(ceil((ahead - tolerance) / 1000.0), 60000.0);
	if (*retry_ms < 1)
		*retry_ms = 1;
	return false;
}

/* A token taken for a start that did not happen goes back to the bucket. */
static void
rate_give_back(uint64 key, int64 now, double rate)
{
	double		interval = 1e6 / rate;
	RateSlot   *slot;

	SpinLockAcquire(&rate_table->mutex);
	slot = rate_slot(key, now);
	slot->tat = Max(now, (int64) ((double) slot->tat - interval));
	SpinLockRelease(&rate_table->mutex);
}

/* ---------------------------------------------------------------- the probe */

/* The OID of durable.task_queue_limits, or InvalidOid before 0.8.0. */
static Oid
limits_relid(void)
{
	return DurableRelationOid("task_queue_limits");
}

/* Whether the schema has durable.task_queue_limits (0.8.0). */
bool
TaskLimitsStored(void)
{
	return OidIsValid(limits_relid());
}

/* A column's value of the probed row, by name; NULL as *isnull. */
static Datum
limit_column(TupleTableSlot *slot, const char *name, bool *isnull)
{
	int			j = TupleDescColumnIndex(slot->tts_tupleDescriptor, name);

	if (j >= 0)
		return slot_getattr(slot, j + 1, isnull);
	elog(ERROR, "durable.task_queue_limits lacks column \"%s\"", name);
	return (Datum) 0;			/* keep the compiler quiet */
}

/* Read the limits of the row found into the claim (DirectScanTextKey). */
static bool
read_limits_row(TupleTableSlot *slot, Snapshot snapshot, void *arg)
{
	TaskLimitClaim *limits = (TaskLimitClaim *) arg;
	bool		isnull;
	Datum		d;

	d = limit_column(slot, "max_concurrent", &isnull);
	limits->has_concurrency = !isnull;
	limits->max_concurrent = isnull ? 0 : DatumGetInt32(d);
	d = limit_column(slot, "rate", &isnull);
	limits->has_rate = !isnull;
	limits->rate = isnull ? 0 : DatumGetFloat8(d);
	d = limit_column(slot, "burst", &isnull);
	limits->burst = isnull ? 1 : DatumGetInt32(d);
	return false;				/* one row */
}

/*
 * The limits of a queue and kind ('d' or 'a') as the transaction's current
 * snapshot sees durable.task_queue_limits, read with one probe of its
 * primary key; false when it has none (always before 0.8.0).  limits may be
 * NULL.
 */
static bool
read_limits(const char *namespace, const char *task_queue, char kind,
			TaskLimitClaim *limits)
{
	const char *keys[3] = {namespace, task_queue, kind_name(kind)};

	return DirectScanTextKey("task_queue_limits", 3, keys, NULL,
							 limits != NULL ? read_limits_row : NULL,
							 limits) > 0;
}

/*
 * Whether a queue and kind ('d' or 'a') has limits, of its own or of its
 * concurrency keys.
 */
bool
TaskQueueLimited(const char *namespace, const char *task_queue, char kind)
{
	const char *keys[3] = {namespace, task_queue, kind_name(kind)};

	if (!QueueControlsMayExist(namespace, task_queue))
		return false;
	return read_limits(namespace, task_queue, kind, NULL) ||
		DirectScanTextKey("task_key_limits", 3, keys, NULL, NULL, NULL) > 0;
}

/* Note a start of a transaction in progress (the dirty snapshot names it). */
static bool
note_in_progress(TupleTableSlot *slot, Snapshot snapshot, void *arg)
{
	if (TransactionIdIsValid(snapshot->xmin) ||
		TransactionIdIsValid(snapshot->xmax))
		*(bool *) arg = true;
	return true;
}

/*
 * The rows of durable.task_starts of a queue, counted with a dirty snapshot:
 * those of transactions in progress count, inserted or deleted.
 * *in_progress tells whether any of them was.
 */
static int64
count_starts(const char *namespace, const char *task_queue, const char *kind,
			 bool *in_progress)
{
	const char *keys[3] = {namespace, task_queue, kind};
	SnapshotData dirty;

	InitDirtySnapshot(dirty);
	*in_progress = false;
	return DirectScanTextKey("task_starts", 3, keys, &dirty,
							 note_in_progress, in_progress);
}

/*
 * The starts of one concurrency key of a queue, counted as count_starts
 * counts a queue's, through durable.task_starts' index of keys.
 */
static int64
count_key_starts(const char *namespace, const char *task_queue,
				 const char *kind, const char *key, bool *in_progress)
{
	const char *keys[4] = {namespace, task_queue, kind, key};
	SnapshotData dirty;

	InitDirtySnapshot(dirty);
	*in_progress = false;
	return DirectScanTextIndex("task_starts", "task_starts_by_key", 4, keys,
							   &dirty, note_in_progress, in_progress);
}

/* Read a row of durable.task_key_limits over the limits in arg. */
static bool
read_key_row(TupleTableSlot *slot, Snapshot snapshot, void *arg)
{
	KeyLimits  *kl = (KeyLimits *) arg;
	bool		isnull;
	Datum		d;

	d = limit_column(slot, "max_concurrent", &isnull);
	if (!isnull)
	{
		kl->has_concurrency = true;
		kl->max_concurrent = DatumGetInt32(d);
	}
	d = limit_column(slot, "rate", &isnull);
	if (!isnull)
	{
		kl->has_rate = true;
		kl->rate = DatumGetFloat8(d);
		d = limit_column(slot, "burst", &isnull);
		kl->burst = isnull ? 1 : DatumGetInt32(d);
	}
	d = limit_column(slot, "weight", &isnull);
	if (!isnull)
		kl->weight = DatumGetInt32(d);
	return false;				/* one row */
}

/*
 * The limits of a concurrency key of the claim's queue: its own row of
 * durable.task_key_limits over the queue's defaults (the row of key '').
 * Read once a claim for the queue (whether it has any) and its defaults,
 * and once for each key the claim asks about in turn.
 */
static void
key_limits_of(TaskLimitClaim *tc, const char *key, KeyLimits *kl)
{
	const char *keys[4] = {tc->namespace, tc->task_queue, tc->kind, ""};

	if (tc->key_limits < 0)
		tc->key_limits = QueueControlsMayExist(tc->namespace, tc->task_queue) &&
			DirectScanTextKey("task_key_limits", 3, keys, NULL,
							  NULL, NULL) > 0 ? 1 : 0;
	if (tc->key_limits == 0)
	{
		memset(kl, 0, sizeof(*kl));
		kl->weight = 1;
		return;
	}
	if (!tc->defaults_read)
	{
		memset(&tc->defaults, 0, sizeof(tc->defaults));
		tc->defaults.weight = 1;
		(void) DirectScanTextKey("task_key_limits", 4, keys, NULL,
								 read_key_row, &tc->defaults);
		tc->defaults_read = true;
		tc->key_read[0] = '\0';
	}
	if (tc->key_read[0] == '\0' || strcmp(tc->key_read, key) != 0)
	{
		tc->key_read_limits = tc->defaults;
		keys[3] = key;
		(void) DirectScanTextKey("task_key_limits", 4, keys, NULL,
								 read_key_row, &tc->key_read_limits);
		strlcpy(tc->key_read, key, CLAIM_KEY_MAX);
	}
	*kl = tc->key_read_limits;
}

/* The rate slot of a concurrency key of a queue. */
static uint64
key_slot(TaskLimitClaim *tc, const char *key)
{
	uint64		h = hash_combine64(tc->key,
								   hash_bytes_extended((const unsigned char *) key,
													   strlen(key), 3));

	return h == 0 ? 1 : h;
}

/* ---------------------------------------------------------------- admission */

/* The queue's admission lock: an advisory tag of the database. */
static void
admission_tag(LOCKTAG *tag, uint64 key)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, (uint32) (key >> 32),
						 (uint32) key, ADMISSION_LOCK_FIELD4);
}

/* Take the queue's admission lock, if not held yet. */
static void
begin_claim(TaskLimitClaim *tc)
{
	LOCKTAG		tag;

	if (tc->locked)
		return;
	admission_tag(&tag, tc->key);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
	tc->locked = true;
}

/* Let go of the admission lock, if held. */
static void
end_claim(TaskLimitClaim *tc)
{
	LOCKTAG		tag;

	if (!tc->locked)
		return;
	admission_tag(&tag, tc->key);
	LockRelease(&tag, ExclusiveLock, false);
	tc->locked = false;
}

/*
 * Drop the queue's starts whose task has ended, once a claim (the first
 * claim that finds the queue or a key full).
 */
static void
sweep_ended_starts(TaskLimitClaim *tc)
{
	Datum		values[3];

	if (tc->swept)
		return;
	tc->swept = true;
	values[0] = CStringGetTextDatum(tc->namespace);
	values[1] = CStringGetTextDatum(tc->task_queue);
	values[2] = CStringGetTextDatum(tc->kind);
	RunPlan(&sweep_starts, values, NULL, false, 0);
}

/* The timestamp in microseconds of the rate table */
#define RATE_NOW(tc)	((int64) (tc)->now)

/*
 * The claim published for a key's count is no longer: the slot goes back to
 * the queue's admission if that was granted (the queue has a concurrency
 * limit and key is not NULL), else it is cleared.
 */
static void
unpublish_key(TaskLimitClaim *tc, const char *key)
{
	if (!tc->published)
		return;
	if (key != NULL && tc->has_concurrency)
		set_slot(tc->key, 0);
	else
	{
		tc->published = false;
		clear_slot();
	}
}

/*
 * Publish the claim in this backend's slot (if there is shared memory), then
 * count the starts of the queue (key NULL) or of one of its keys, rows and
 * the other backends' slots; *in_progress is set when some of them may yet
 * end or roll back.
 */
static int64
publish_and_count(TaskLimitClaim *tc, const char *key, uint64 kslot,
				  bool *in_progress)
{
	bool		counted_in_progress = false;
	int64		n;

	if (my_slot() != NULL)
	{
		set_slot(tc->key, kslot);
		tc->published = true;
	}

	/*
	 * The slots first, then the rows: a claim writes its row before it
	 * clears its slot, so a slot read as cleared means a row the count that
	 * follows sees.  Rows first, a claim that wrote its row and cleared its
	 * slot between the two would be missed by both.
	 */
	n = count_slots(tc->key, kslot, &counted_in_progress);
	pg_memory_barrier();
	n += (key != NULL ?
		  count_key_starts(tc->namespace, tc->task_queue, tc->kind, key,
						   &counted_in_progress) :
		  count_starts(tc->namespace, tc->task_queue, tc->kind,
					   &counted_in_progress));
	if (counted_in_progress)
		*in_progress = true;
	return n;
}

/*
 * Whether a queue (key NULL) or one of its concurrency keys has room for one
 * more start under its concurrency limit max (see "Admission" at the top of
 * this file): first without a lock, this backend's claim published in its
 * slot before it counts; when that finds no room, or there is no shared
 * memory, again under the queue's admission lock, after dropping the rows of
 * tasks that have ended.  The claim stays published when it has room.
 */
static bool
has_room(TaskLimitClaim *tc, const char *key, int32 max, bool *in_progress)
{
	uint64		kslot = key != NULL ? key_slot(tc, key) : 0;

	if (my_slot() != NULL && !tc->locked)
	{
		if (publish_and_count(tc, key, kslot, in_progress) < max)
			return true;
		/* Not counted while it waits for the lock: claims do not refuse each other */
		unpublish_key(tc, key);
	}
	begin_claim(tc);
	if (publish_and_count(tc, key, kslot, in_progress) < max)
		return true;
	sweep_ended_starts(tc);
	if (publish_and_count(tc, key, kslot, in_progress) < max)
		return true;
	unpublish_key(tc, key);
	return false;
}

/*
 * Ask the limits of a queue and kind for one more task start (SPI
 * connected).  True when a task may be claimed: the queue has no limits, or
 * they admit one (its token of the rate limit taken, its claim published or
 * the queue's admission lock held, until TaskLimitClaimed or
 * TaskLimitAbandon).  The limits of the queue's concurrency keys are asked
 * as the claim meets them (TaskLimitKeyPolicy).  False when a limit holds
 * the claim back: *retry_ms is when the rate limit has a token again, or
 * when to look again at a start still in progress (0 when the concurrency
 * limit is what holds it: a task that ends wakes the poll).
 */
bool
TaskLimitAdmit(TaskLimitClaim *tc, const char *namespace,
			   const char *task_queue, char kind, TimestampTz now,
			   long *retry_ms)
{
	bool		in_progress = false;

	memset(tc, 0, sizeof(*tc));
	*retry_ms = 0;
	tc->namespace = namespace;
	tc->task_queue = task_queue;
	tc->kind = kind_name(kind);
	tc->now = now;
	tc->key = queue_hash(namespace, task_queue, kind);
	tc->key_limits = -1;
	if (!QueueControlsMayExist(namespace, task_queue) ||
		!read_limits(namespace, task_queue, kind, tc))
		return true;

	tc->engaged = true;
	if (tc->has_concurrency &&
		!has_room(tc, NULL, tc->max_concurrent, &in_progress))
	{
		/*
		 * A start still in progress may roll back, which wakes no poll:
		 * look again soon.  (An end wakes a poll at its commit.)
		 */
		if (in_progress)
			*retry_ms = IN_PROGRESS_RETRY_MS;
		TaskLimitAbandon(tc);
		return false;
	}
	if (tc->has_rate)
	{
		/* No shared memory: a rate cannot be kept, so nothing is handed out. */
		if (rate_table == NULL ||
			!rate_reserve(tc->key, RATE_NOW(tc), tc->rate, tc->burst, retry_ms))
		{
			if (rate_table == NULL)
				*retry_ms = 1000;
			TaskLimitAbandon(tc);
			return false;
		}
		tc->queue_token = true;
	}
	return true;
}

/* A key held a task back: note when to look again (0: when woken). */
static bool
refuse_key(TaskLimitClaim *tc, long retry_ms)
{
	if (retry_ms > 0 && (tc->retry_ms == 0 || retry_ms < tc->retry_ms))
		tc->retry_ms = retry_ms;
	tc->refused = true;
	return false;
}

/* The token a key's rate limit gave the claim goes back: no task of it. */
static void
give_back_key_token(TaskLimitClaim *tc)
{
	if (!tc->key_token)
		return;
	rate_give_back(tc->key_token_slot, RATE_NOW(tc), tc->key_token_rate);
	tc->key_token = false;
}

/*
 * Whether the limits of a concurrency key admit one more start of its
 * tasks (ClaimKeyPolicy.admit, asked by the claim's walk), as a queue's
 * limits are decided; a token of its rate limit is taken for it (and that
 * of the key asked before given back).
 */
static bool
admit_key(const char *key, void *arg)
{
	TaskLimitClaim *tc = (TaskLimitClaim *) arg;
	KeyLimits	kl;
	bool		in_progress = false;

	key_limits_of(tc, key, &kl);
	if (!kl.has_concurrency && !kl.has_rate)
		return true;
	tc->engaged = true;
	give_back_key_token(tc);
	if (kl.has_concurrency &&
		!has_room(tc, key, kl.max_concurrent, &in_progress))
		return refuse_key(tc, in_progress ? IN_PROGRESS_RETRY_MS : 0);
	if (kl.has_rate)
	{
		long		retry_ms = 1000;

		if (rate_table == NULL ||
			!rate_reserve(key_slot(tc, key), RATE_NOW(tc), kl.rate, kl.burst,
						  &retry_ms))
		{
			unpublish_key(tc, key);
			return refuse_key(tc, retry_ms);
		}
		tc->key_token = true;
		tc->key_token_slot = key_slot(tc, key);
		tc->key_token_rate = kl.rate;
		strlcpy(tc->key_token_key, key, CLAIM_KEY_MAX);
	}
	return true;
}

/* A key's tasks in a row in the claim's round robin (ClaimKeyPolicy.weight) */
static int32
key_weight(const char *key, void *arg)
{
	KeyLimits	kl;

	key_limits_of((TaskLimitClaim *) arg, key, &kl);
	return kl.weight;
}

/* The policy of the claim's concurrency keys, for DirectClaimReadyTask. */
void
TaskLimitKeyPolicy(TaskLimitClaim *tc, ClaimKeyPolicy *policy)
{
	policy->admit = admit_key;
	policy->weight = key_weight;
	policy->arg = tc;
}

/*
 * The start's key in durable.task_starts: an activity attempt's scheduled
 * event; a decision task's run alone (scheduled_event_id 0), since a run has
 * one decision task started at a time, and a transient one overtaken by
 * events is scheduled again under a new id as it starts.
 */
static int64
start_key(const char *kind, int64 scheduled_event_id)
{
	return kind[0] == 'd' ? 0 : scheduled_event_id;
}

/*
 * A task was claimed under the claim's limits and is about to start: its
 * start is recorded (it holds its slot from now on, for every claim that
 * comes after, in progress or committed): a row of durable.task_starts, or
 * for an executor's task (ends_in_transaction) this backend's slot of
 * shared memory.  The published claim, and the admission lock if it was
 * taken, are let go, so that the start itself (its events, its run's lock)
 * runs outside them.  A key's token taken for another key than the task's
 * goes back.  TaskLimitUnclaim takes it all back if the task turns out
 * stale.
 */
void
TaskLimitClaimed(TaskLimitClaim *tc, ClaimedTask *task)
{
	KeyLimits	kl;
	ClaimSlot  *mine = my_slot();

	if (!tc->engaged)
		return;
	tc->claimed = true;
	memcpy(&tc->run_id, &task->run_id, sizeof(pg_uuid_t));
	tc->scheduled_event_id = start_key(tc->kind, task->scheduled_event_id);
	memset(&kl, 0, sizeof(kl));
	if (task->concurrency_key[0] != '\0')
		key_limits_of(tc, task->concurrency_key, &kl);
	if (tc->key_token && strcmp(tc->key_token_key, task->concurrency_key) != 0)
		give_back_key_token(tc);
	if ((tc->has_concurrency || kl.has_concurrency) && tc->ends_in_transaction &&
		mine != NULL)
	{
		/* An executor's: its slot says so until the task ends */
		set_slot(tc->key, task->concurrency_key[0] != '\0' ?
				 key_slot(tc, task->concurrency_key) : 0);
		memcpy(&mine->run_id, &task->run_id, sizeof(pg_uuid_t));
		mine->start_key = tc->scheduled_event_id;
		mine->started = true;
		tc->published = false;
		tc->executor_started = true;
	}
	else if (tc->has_concurrency || kl.has_concurrency)
	{
		Datum		values[8];

		values[0] = CStringGetTextDatum(tc->namespace);
		values[1] = CStringGetTextDatum(tc->task_queue);
		values[2] = CStringGetTextDatum(tc->kind);
		values[3] = UUIDPGetDatum(&task->run_id);
		values[4] = Int64GetDatum(tc->scheduled_event_id);
		values[5] = Int32GetDatum(task->attempt);
		values[6] = TimestampTzGetDatum(tc->now);
		values[7] = CStringGetTextDatum(task->concurrency_key);
		QueueControlsEngineWrite(tc->namespace, tc->task_queue);
		if (DurableColumnExists("task_starts", "concurrency_key"))
			RunPlan(&insert_key_start, values, NULL, false, 0);
		else
			RunPlan(&insert_start, values, NULL, false, 0);
	}
	/* The row (visible to every count from its insert) replaces the claim */
	if (tc->published)
	{
		tc->published = false;
		clear_slot();
	}
	end_claim(tc);
}

/*
 * The task claimed did not start (its run moved on): its start goes, and
 * its tokens are given back.
 */
void
TaskLimitUnclaim(TaskLimitClaim *tc)
{
	Datum		values[5];

	if (!tc->claimed)
		return;
	tc->claimed = false;
	if (tc->executor_started)
	{
		tc->executor_started = false;
		clear_slot();
	}
	else
	{
		values[0] = CStringGetTextDatum(tc->namespace);
		values[1] = CStringGetTextDatum(tc->task_queue);
		values[2] = CStringGetTextDatum(tc->kind);
		values[3] = UUIDPGetDatum(&tc->run_id);
		values[4] = Int64GetDatum(tc->scheduled_event_id);
		RunPlan(&delete_start, values, NULL, false, 0);
	}
	if (tc->queue_token && rate_table != NULL)
		rate_give_back(tc->key, RATE_NOW(tc), tc->rate);
	tc->queue_token = false;
	give_back_key_token(tc);
	/* The next claim of the loop asks the limits again, from the start. */
	tc->key_limits = -1;
	tc->defaults_read = false;
	tc->swept = false;
}

/*
 * Nothing was claimed: the claim is no longer published, the admission
 * lock goes, the tokens taken go back.  A key's limits that held a task
 * back tell the poll when to look again.
 */
void
TaskLimitAbandon(TaskLimitClaim *tc)
{
	if (tc->queue_token && rate_table != NULL)
		rate_give_back(tc->key, RATE_NOW(tc), tc->rate);
	tc->queue_token = false;
	give_back_key_token(tc);
	if (tc->published)
	{
		tc->published = false;
		clear_slot();
	}
	end_claim(tc);
	if (tc->refused)
		ClaimRetryAfter(tc->retry_ms);
}

/* Whether a queue and kind has starts recorded (durable.task_starts). */
static bool
queue_has_starts(const char *namespace, const char *task_queue,
				 const char *kind)
{
	const char *keys[3] = {namespace, task_queue, kind};

	if (!QueueControlsMayExist(namespace, task_queue))
		return false;
	return DirectScanTextKey("task_starts", 3, keys, NULL, NULL, NULL) > 0;
}

/*
 * A task's attempt ended (completed, failed, timed out, canceled): its slot
 * is free at commit, and a poll waiting on the full queue or key is woken
 * then.  Nothing for a queue without starts recorded (no concurrency limit).
 */
void
TaskLimitEnded(const char *namespace, const char *task_queue, char kind,
			   pg_uuid_t *run_id, int64 scheduled_event_id)
{
	Datum		values[5];
	ClaimSlot  *mine = my_slot();

	/* An executor's task, which holds its slot in shared memory */
	if (slot_set && mine != NULL && mine->started &&
		mine->queue == queue_hash(namespace, task_queue, kind) &&
		mine->start_key == start_key(kind_name(kind), scheduled_event_id) &&
		memcmp(&mine->run_id, run_id, sizeof(pg_uuid_t)) == 0)
	{
		clear_slot();
		WakeQueueAtCommit(namespace, task_queue, kind, 1);
		WakeExecutorsAtCommit();
		return;
	}
	if (!queue_has_starts(namespace, task_queue, kind_name(kind)))
		return;
	values[0] = CStringGetTextDatum(namespace);
	values[1] = CStringGetTextDatum(task_queue);
	values[2] = CStringGetTextDatum(kind_name(kind));
	values[3] = UUIDPGetDatum(run_id);
	values[4] = Int64GetDatum(start_key(kind_name(kind), scheduled_event_id));
	RunPlan(&delete_start, values, NULL, false, 0);
	if (SPI_processed > 0)
	{
		/* The polls of the queue, and the executors, which share its limits */
		WakeQueueAtCommit(namespace, task_queue, kind, 1);
		WakeExecutorsAtCommit();
	}
}

/* The kind argument: 'decision' or 'activity'. */
static const char *
kind_argument(text *arg)
{
	char	   *kind = CheckName(arg, "kind");

	if (strcmp(kind, "decision") != 0 && strcmp(kind, "activity") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("kind must be \"decision\" or \"activity\""),
				 errdetail("It is \"%s\".", kind)));
	return kind;
}

/*
 * Check the limits given to set_task_queue_limits or set_task_key_limits
 * (22023 naming the argument, 55000 for a rate without shared memory);
 * returns the burst, by default a second's worth of the rate.  max_hint is
 * the hint of a max_concurrent below 1, or NULL.
 */
static int32
check_limit_arguments(bool has_max, int32 max_concurrent, bool has_rate,
					  double rate, bool has_burst, int32 burst,
					  const char *max_hint)
{
	if (has_max && max_concurrent < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_concurrent must be at least 1"),
				 errdetail("It is %d.", max_concurrent),
				 max_hint != NULL ? errhint("%s", max_hint) : 0));
	if (has_rate && (isnan(rate) || rate <= 0 || rate > 1e6))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("rate must be more than 0 and at most 1000000 task starts a second"),
				 errdetail("It is %g.", rate)));
	if (has_burst)
	{
		if (!has_rate)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("burst needs a rate"),
					 errhint("Give rate too, or leave burst NULL.")));
		if (burst < 1 || burst > 1000000)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("burst must be between 1 and 1000000"),
					 errdetail("It is %d.", burst)));
	}
	else if (has_rate)
		burst = (int32) Min(Max(1.0, ceil(rate)), 1e6);	/* a second's worth */
	else
		burst = 0;
	if (has_rate && rate_table == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("rate limits need durable in shared_preload_libraries"),
				 errdetail("A rate limit keeps its state in shared memory.")));
	return burst;
}

PG_FUNCTION_INFO_V1(durable_set_task_queue_limits);
/*
 * durable.set_task_queue_limits(task_queue, kind, max_concurrent, rate,
 * burst, namespace): the limits of a queue and kind, replacing those it had;
 * all NULL removes them.  True when something changed.  For the namespace's
 * owner and durable_admin members.
 */
Datum
durable_set_task_queue_limits(PG_FUNCTION_ARGS)
{
	char	   *task_queue = CheckName(ARG_TEXT(0), "task_queue");
	const char *kind = kind_argument(ARG_TEXT(1));
	char	   *namespace = CheckName(ARG_TEXT(5), "namespace");
	bool		has_max = !PG_ARGISNULL(2);
	bool		has_rate = !PG_ARGISNULL(3);
	int32		max_concurrent = has_max ? PG_GETARG_INT32(2) : 0;
	double		rate = has_rate ? PG_GETARG_FLOAT8(3) : 0;
	int32		burst = 0;
	Datum		values[8];
	char		nulls[8] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
	const char *who;
	bool		changed;

	RequireWritableTransaction("durable.set_task_queue_limits()");
	burst = check_limit_arguments(has_max, max_concurrent, has_rate, rate,
								  !PG_ARGISNULL(4),
								  PG_ARGISNULL(4) ? 0 : PG_GETARG_INT32(4),
								  "Pause the queue to hand out none of its tasks: durable.pause_task_queue().");

	DurableSPIConnect();
	if (!TaskLimitsStored())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("durable.set_task_queue_limits() needs durable 0.8.0"),
				 errhint("Run ALTER EXTENSION durable UPDATE.")));
	CheckNamespaceOwner(namespace, "set the limits of a task queue of");
	values[0] = CStringGetTextDatum(namespace);
	values[1] = CStringGetTextDatum(task_queue);
	values[2] = CStringGetTextDatum(kind);
	if (!has_max && !has_rate)
	{
		RunPlan(&delete_limits, values, NULL, false, 0);
		changed = (SPI_processed > 0);
		RunPlan(&delete_queue_starts, values, NULL, false, 0);
	}
	else
	{
		who = CallerIdentity();
		values[3] = Int32GetDatum(max_concurrent);
		nulls[3] = has_max ? ' ' : 'n';
		values[4] = Float8GetDatum(rate);
		nulls[4] = has_rate ? ' ' : 'n';
		values[5] = Int32GetDatum(burst);
		nulls[5] = has_rate ? ' ' : 'n';
		values[6] = TimestampTzGetDatum(DurableNow());
		values[7] = CStringGetTextDatum(who != NULL ? who : "");
		QueueControlsEngineWrite(namespace, task_queue);
		RunPlan(&upsert_limits, values, nulls, false, 0);
		changed = (SPI_processed > 0);
	}
	/* Looser limits may admit tasks now: wake the queue's polls at commit. */
	if (changed)
		WakeWholeQueueAtCommit(namespace, task_queue);
	DurableSPIFinish();
	PG_RETURN_BOOL(changed);
}

PG_FUNCTION_INFO_V1(durable_set_task_key_limits);
/*
 * durable.set_task_key_limits(task_queue, kind, concurrency_key,
 * max_concurrent, rate, burst, weight, namespace): the limits and the weight
 * of one concurrency key of a queue and kind (concurrency_key NULL: the
 * defaults of every key), replacing those it had; all NULL removes them.
 * True when something changed.  For the namespace's owner and durable_admin
 * members.
 */
Datum
durable_set_task_key_limits(PG_FUNCTION_ARGS)
{
	char	   *task_queue = CheckName(ARG_TEXT(0), "task_queue");
	const char *kind = kind_argument(ARG_TEXT(1));
	char	   *key = PG_ARGISNULL(2) ? "" :
		CheckConcurrencyKey(text_to_cstring(PG_GETARG_TEXT_PP(2)),
							"concurrency_key");
	char	   *namespace = CheckName(ARG_TEXT(7), "namespace");
	bool		has_max = !PG_ARGISNULL(3);
	bool		has_rate = !PG_ARGISNULL(4);
	bool		has_weight = !PG_ARGISNULL(6);
	int32		max_concurrent = has_max ? PG_GETARG_INT32(3) : 0;
	double		rate = has_rate ? PG_GETARG_FLOAT8(4) : 0;
	int32		burst = 0;
	int32		weight = has_weight ? PG_GETARG_INT32(6) : 0;
	Datum		values[10];
	char		nulls[10] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
	const char *who;
	bool		changed;

	RequireWritableTransaction("durable.set_task_key_limits()");
	burst = check_limit_arguments(has_max, max_concurrent, has_rate, rate,
								  !PG_ARGISNULL(5),
								  PG_ARGISNULL(5) ? 0 : PG_GETARG_INT32(5), NULL);
	if (has_weight && (weight < 1 || weight > 1000))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("weight must be between 1 and 1000"),
				 errdetail("It is %d.", weight)));

	DurableSPIConnect();
	if (!DurableColumnExists("task_starts", "concurrency_key"))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("durable.set_task_key_limits() needs durable 0.9.0"),
				 errhint("Run ALTER EXTENSION durable UPDATE.")));
	CheckNamespaceOwner(namespace, "set the limits of a task queue of");
	values[0] = CStringGetTextDatum(namespace);
	values[1] = CStringGetTextDatum(task_queue);
	values[2] = CStringGetTextDatum(kind);
	values[3] = CStringGetTextDatum(key);
	if (!has_max && !has_rate && !has_weight)
	{
		RunPlan(&delete_key_limits, values, NULL, false, 0);
		changed = (SPI_processed > 0);
	}
	else
	{
		who = CallerIdentity();
		values[4] = Int32GetDatum(max_concurrent);
		nulls[4] = has_max ? ' ' : 'n';
		values[5] = Float8GetDatum(rate);
		nulls[5] = has_rate ? ' ' : 'n';
		values[6] = Int32GetDatum(burst);
		nulls[6] = has_rate ? ' ' : 'n';
		values[7] = Int32GetDatum(weight);
		nulls[7] = has_weight ? ' ' : 'n';
		values[8] = TimestampTzGetDatum(DurableNow());
		values[9] = CStringGetTextDatum(who != NULL ? who : "");
		QueueControlsEngineWrite(namespace, task_queue);
		RunPlan(&upsert_key_limits, values, nulls, false, 0);
		changed = (SPI_processed > 0);
	}
	/* Looser limits may admit tasks now: wake the queue's polls at commit. */
	if (changed)
		WakeWholeQueueAtCommit(namespace, task_queue);
	DurableSPIFinish();
	PG_RETURN_BOOL(changed);
}

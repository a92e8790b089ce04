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
 * A claim of a limited queue (TaskLimitAdmit) takes the queue's admission
 * lock, a heavyweight lock of its own (an advisory lock tag no SQL function
 * makes), and keeps it only while it decides and claims: it lets go as soon
 * as the start is written (before the task's events and its run's lock),
 * not at commit, so that claimers of a limited queue wait for each other's
 * claim but never for each other's start or commit (a lock held to commit
 * would put the queue's every claim behind a WAL flush, and cap it at one
 * claim a flush).  What makes that exact:
 *
 * - Concurrency: the starts are rows of durable.task_starts, written by the
 *   transaction that starts the task.  A claim counts them with a dirty
 *   snapshot, which sees the rows of transactions still in progress (a start
 *   not committed yet counts; so does a start whose end is not committed
 *   yet), so a claim never misses a start that may commit.  A row whose task
 *   has ended is dropped when the attempt ends (TaskLimitEnded, from the
 *   engine's paths that end a task), and otherwise by the first claim that
 *   finds the queue full: it deletes the committed rows whose task is no
 *   longer started (a closed run, a terminated or reset one) before it
 *   decides.  So a row left behind never holds a slot for long.
 * - Rate: a generic cell rate algorithm (a token bucket kept as the time at
 *   which the bucket is full again, "tat") in shared memory, one slot a
 *   queue.  A start takes its token when it is written; a start whose
 *   transaction rolls back keeps it taken, so the rate is never exceeded.
 *   The state starts again full after a server restart.  Without durable in
 *   shared_preload_libraries there is no shared memory for it: a queue with
 *   a rate limit then hands nothing out, and set_task_queue_limits refuses
 *   a rate.
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
#include "storage/lmgr.h"
#include "storage/lock.h"
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
	return sizeof(RateTable);
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
 * Whether the rate limit has a token at now (microseconds); else *retry_ms
 * is when it will.  GCRA: a start is allowed while the bucket's full time is
 * at most (burst - 1) emission intervals ahead of now.
 */
static bool
rate_allows(uint64 key, int64 now, double rate, int32 burst, long *retry_ms)
{
	double		interval = 1e6 / rate;
	double		tolerance = (burst - 1) * interval;
	int64		tat;
	double		ahead;

	SpinLockAcquire(&rate_table->mutex);
	tat = rate_slot(key, now)->tat;
	SpinLockRelease(&rate_table->mutex);
	ahead = (double) (tat - now);
	if (ahead <= tolerance)
		return true;
	*retry_ms = (long) Min(ceil((ahead - tolerance) / 1000.0), 60000.0);
	if (*retry_ms < 1)
		*retry_ms = 1;
	return false;
}

/*
 * A start takes a token: the bucket is full again one emission interval
 * later.  A clock that went back (a test time set earlier) leaves the state
 * no further ahead than a full burst.
 */
static void
rate_take(uint64 key, int64 now, double rate, int32 burst)
{
	double		interval = 1e6 / rate;
	RateSlot   *slot;
	double		tat;

	SpinLockAcquire(&rate_table->mutex);
	slot = rate_slot(key, now);
	tat = (double) Max(slot->tat, now) + interval;
	tat = Min(tat, (double) now + burst * interval);
	slot->tat = (int64) tat;
	SpinLockRelease(&rate_table->mutex);
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
	Oid			nsp = get_namespace_oid("durable", true);

	return OidIsValid(nsp) ? get_relname_relid("task_queue_limits", nsp) :
		InvalidOid;
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
	TupleDesc	desc = slot->tts_tupleDescriptor;
	int			j;

	for (j = 0; j < desc->natts; j++)
		if (!TupleDescAttr(desc, j)->attisdropped &&
			strcmp(NameStr(TupleDescAttr(desc, j)->attname), name) == 0)
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
		tc->key_limits = DirectScanTextKey("task_key_limits", 3, keys, NULL,
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

/*
 * Ask the limits of a queue and kind for one more task start (SPI
 * connected).  True when a task may be claimed: the queue has no limits, or
 * they admit one; then the queue's admission lock is held, if the queue has
 * limits, until TaskLimitClaimed or TaskLimitAbandon.  The limits of the
 * queue's concurrency keys are asked as the claim meets them
 * (TaskLimitKeyPolicy).  False when a limit holds the claim back: *retry_ms
 * is when the rate limit has a token again, or when to look again at a
 * start still in progress (0 when the concurrency limit is what holds it: a
 * task that ends wakes the poll).
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
	if (!read_limits(namespace, task_queue, kind, tc))
		return true;

	begin_claim(tc);
	if (tc->has_rate)
	{
		/* No shared memory: a rate cannot be kept, so nothing is handed out. */
		if (rate_table == NULL ||
			!rate_allows(tc->key, now, tc->rate, tc->burst, retry_ms))
		{
			if (rate_table == NULL)
				*retry_ms = 1000;
			end_claim(tc);
			return false;
		}
	}
	if (tc->has_concurrency &&
		count_starts(namespace, task_queue, tc->kind,
					 &in_progress) >= tc->max_concurrent)
	{
		/* Full: drop the rows of tasks that have ended, then decide. */
		sweep_ended_starts(tc);
		if (SPI_processed == 0 ||
			count_starts(namespace, task_queue, tc->kind,
						 &in_progress) >= tc->max_concurrent)
		{
			/*
			 * A start still in progress may roll back, which wakes no poll:
			 * look again soon.  (An end wakes a poll at its commit.)
			 */
			if (in_progress)
				*retry_ms = IN_PROGRESS_RETRY_MS;
			end_claim(tc);
			return false;
		}
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

/*
 * Whether the limits of a concurrency key admit one more start of its
 * tasks (ClaimKeyPolicy.admit, asked by the claim's walk): decided under the
 * queue's admission lock, taken here if the queue's own limits did not take
 * it, as a queue's limits are decided.
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
	begin_claim(tc);
	if (kl.has_rate)
	{
		long		retry_ms = 1000;

		if (rate_table == NULL ||
			!rate_allows(key_slot(tc, key), tc->now, kl.rate, kl.burst,
						 &retry_ms))
			return refuse_key(tc, retry_ms);
	}
	if (kl.has_concurrency &&
		count_key_starts(tc->namespace, tc->task_queue, tc->kind, key,
						 &in_progress) >= kl.max_concurrent)
	{
		sweep_ended_starts(tc);
		if (count_key_starts(tc->namespace, tc->task_queue, tc->kind, key,
							 &in_progress) >= kl.max_concurrent)
			return refuse_key(tc, in_progress ? IN_PROGRESS_RETRY_MS : 0);
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
 * start is written (it holds its slot from now on, for every claim that
 * comes after, in progress or committed) and it takes its tokens, of the
 * queue and of its key; the admission lock is let go, so that the start
 * itself (its events, its run's lock) runs outside it.  TaskLimitUnclaim
 * takes them back if the task turns out stale.
 */
void
TaskLimitClaimed(TaskLimitClaim *tc, ClaimedTask *task)
{
	KeyLimits	kl;

	if (!tc->locked)
		return;
	tc->claimed = true;
	memcpy(&tc->run_id, &task->run_id, sizeof(pg_uuid_t));
	tc->scheduled_event_id = start_key(tc->kind, task->scheduled_event_id);
	memset(&kl, 0, sizeof(kl));
	if (task->concurrency_key[0] != '\0')
		key_limits_of(tc, task->concurrency_key, &kl);
	if (tc->has_concurrency || kl.has_concurrency)
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
		if (DurableColumnExists("task_starts", "concurrency_key"))
			RunPlan(&insert_key_start, values, NULL, false, 0);
		else
			RunPlan(&insert_start, values, NULL, false, 0);
	}
	if (tc->has_rate && rate_table != NULL)
		rate_take(tc->key, tc->now, tc->rate, tc->burst);
	if (kl.has_rate && rate_table != NULL)
	{
		tc->key_started = true;
		tc->key_slot = key_slot(tc, task->concurrency_key);
		tc->key_rate = kl.rate;
		rate_take(tc->key_slot, tc->now, kl.rate, kl.burst);
	}
	end_claim(tc);
}

/*
 * The task claimed did not start (its run moved on): its start row goes, and
 * its tokens are given back.
 */
void
TaskLimitUnclaim(TaskLimitClaim *tc)
{
	Datum		values[5];

	if (!tc->claimed)
		return;
	tc->claimed = false;
	values[0] = CStringGetTextDatum(tc->namespace);
	values[1] = CStringGetTextDatum(tc->task_queue);
	values[2] = CStringGetTextDatum(tc->kind);
	values[3] = UUIDPGetDatum(&tc->run_id);
	values[4] = Int64GetDatum(tc->scheduled_event_id);
	RunPlan(&delete_start, values, NULL, false, 0);
	if (tc->has_rate && rate_table != NULL)
		rate_give_back(tc->key, tc->now, tc->rate);
	if (tc->key_started)
		rate_give_back(tc->key_slot, tc->now, tc->key_rate);
	tc->key_started = false;
	/* The next claim of the loop asks the limits again, from the start. */
	tc->key_limits = -1;
	tc->defaults_read = false;
	tc->swept = false;
}

/*
 * Nothing was claimed: let the admission lock go, take no token.  A key's
 * limits that held a task back tell the poll when to look again.
 */
void
TaskLimitAbandon(TaskLimitClaim *tc)
{
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
		RunPlan(&upsert_key_limits, values, nulls, false, 0);
		changed = (SPI_processed > 0);
	}
	/* Looser limits may admit tasks now: wake the queue's polls at commit. */
	if (changed)
		WakeWholeQueueAtCommit(namespace, task_queue);
	DurableSPIFinish();
	PG_RETURN_BOOL(changed);
}

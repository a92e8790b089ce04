/*-------------------------------------------------------------------------
 *
 * metrics.c
 *	  Counters and histograms of the engine, in shared memory since the
 *	  server started (durable.metrics, durable.metrics_text()).
 *
 * Counting is in two steps, so that a transaction that rolls back counts
 * nothing.  While a transaction runs, each count is added to a list of
 * deltas in the backend (merged with a recent one of the same counter and
 * subtransaction level); a subtransaction that aborts drops its deltas, one
 * that commits hands them to its parent.  At commit (or PREPARE
 * TRANSACTION) the deltas are added to shared memory with atomic adds: no
 * lock on that path once the backend knows the slot of a queue, which it
 * remembers with the slot's generation.
 *
 * A slot is freed (its generation bumped) when its database or the
 * extension in it is dropped, and when a new queue of the same database
 * and namespace that may take no free slot takes the place of the
 * namespace's queue idle the longest, idle for longer than
 * durable.metric_idle_timeout: that queue's counts are first added to its
 * database's row, so that no total goes down.  A committing backend adds
 * to a slot only while it is marked as a writer of the slot and the slot
 * has the generation it remembers; whoever frees a slot bumps the
 * generation, then waits for the writers to finish before it moves the
 * counts, so that no count is lost nor added to the slot's next queue.
 *
 * A slot holds the counters of one (database, namespace, task queue): the
 * workflow's queue for workflow and decision task counters, the activity's
 * for activity ones.  Besides, each database has one slot without names:
 * the timers, which belong to the database's timer worker rather than to a
 * queue, and the counters of the queues that get no slot: beyond
 * durable.max_metric_queues, beyond a namespace's share (may_take_slot),
 * whose names are METRIC_NAME_LEN bytes or longer, or beyond the
 * MAX_LOCAL_KEYS - 1 queues a backend keeps apart in one transaction (the
 * last key is kept for the database's row) (docs/metrics.md "Metrics").
 *
 * Two gauges come from tables instead, read when the metrics are: the
 * paused task queues (durable.paused_task_queues, store/queue_pause.c) and
 * the paused workflow runs of each queue (the partial index runs_paused of
 * durable.runs, engine/pause.c).  They are read through their indexes,
 * whatever the caller may SELECT, and shown by the same tenant rules.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_database.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "storage/s_lock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "base/clock.h"
#include "store/metrics.h"
#include "store/namespaces.h"
#include "store/worker_slots.h"

#define METRIC_NAME_LEN		128
#define MERGE_LOOKBACK		16
#define MAX_LOCAL_KEYS		128

/* Upper bounds of the histogram buckets, in seconds; one more is +Inf. */
static const double bucket_bounds[METRIC_BUCKETS] = {
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600
};

/* MetricSlot.used */
#define SLOT_NEVER_USED		0	/* a lookup stops here */
#define SLOT_QUEUE			1
#define SLOT_DATABASE		2	/* the database's row */
#define SLOT_FREED			3	/* free again; a lookup goes on past it */

typedef struct MetricSlot
{
	uint32		hash;
	Oid			dboid;
	uint8		used;			/* SLOT_* */
	pg_atomic_uint32 generation;	/* bumped when the slot is freed */
	pg_atomic_uint32 writers;	/* backends adding to it now */
	pg_atomic_uint64 last_count;	/* durable.now() of its last count */
	char		namespace[METRIC_NAME_LEN];
	char		task_queue[METRIC_NAME_LEN];
	pg_atomic_uint64 v[MV_COUNT];
} MetricSlot;

typedef struct MetricTable
{
	LWLock	   *lock;
	int			nslots;
	int			queue_slots_used;
	MetricSlot	slots[FLEXIBLE_ARRAY_MEMBER];
} MetricTable;

int			durable_max_metric_queues = 256;
int			durable_metric_idle_timeout = 600;
static MetricTable *metrics = NULL;

/* A (namespace, task queue) this backend counted for, and its slot */
typedef struct LocalKey
{
	char	   *namespace;		/* NULL: the database's row */
	char	   *task_queue;
	int			slot;			/* -1 until resolved */
	uint32		generation;		/* of the slot when resolved */
	bool		in_database_row;	/* a queue counting in that row */
	TimestampTz retry_at;		/* then, when to look for a row again */
} LocalKey;

/* How often a queue counting in its database's row looks for one again */
#define RETRY_ROW_USECS		(10 * USECS_PER_SEC)

/* A database whose rows are freed when this transaction commits */
typedef struct PendingForget
{
	Oid			dboid;
	int			level;
} PendingForget;

#define MAX_PENDING_FORGETS 8
static PendingForget pending_forgets[MAX_PENDING_FORGETS];
static int	n_pending_forgets = 0;
static object_access_hook_type prev_object_access_hook = NULL;

typedef struct Delta
{
	int16		key;
	int16		value;
	int			level;
	uint64		delta;
} Delta;

static LocalKey local_keys[MAX_LOCAL_KEYS];
static int	n_local_keys = 0;
static Oid	local_keys_db = InvalidOid;
static Delta *deltas = NULL;
static int	n_deltas = 0;
static int	max_deltas = 0;
static bool callbacks_registered = false;

static int
slot_count(void)
{
	return durable_max_metric_queues + durable_max_databases;
}

/* Bytes of shared memory of the table. */
Size
MetricsShmemSize(void)
{
	return MAXALIGN(add_size(offsetof(MetricTable, slots),
							 mul_size(sizeof(MetricSlot), slot_count())));
}

/* Ask for the table's memory and lock (shmem_request_hook). */
void
MetricsShmemRequest(void)
{
	RequestAddinShmemSpace(MetricsShmemSize());
	RequestNamedLWLockTranche("durable metrics", 1);
}

/* Set up the table (shmem_startup_hook, AddinShmemInitLock held). */
void
MetricsShmemInit(void)
{
	bool		found;
	int			i;
	int			j;

	metrics = ShmemInitStruct("durable metrics", MetricsShmemSize(), &found);
	if (!found)
	{
		metrics->lock = &(GetNamedLWLockTranche("durable metrics"))->lock;
		metrics->nslots = slot_count();
		metrics->queue_slots_used = 0;
		for (i = 0; i < metrics->nslots; i++)
		{
			metrics->slots[i].used = SLOT_NEVER_USED;
			pg_atomic_init_u32(&metrics->slots[i].generation, 0);
			pg_atomic_init_u32(&metrics->slots[i].writers, 0);
			pg_atomic_init_u64(&metrics->slots[i].last_count, 0);
			for (j = 0; j < MV_COUNT; j++)
				pg_atomic_init_u64(&metrics->slots[i].v[j], 0);
		}
	}
}

static uint32
key_hash(const char *namespace, const char *task_queue)
{
	uint32		h = hash_uint32((uint32) MyDatabaseId);

	if (namespace != NULL)
	{
		h = hash_combine(h, hash_bytes((const unsigned char *) namespace,
									   strlen(namespace)));
		h = hash_combine(h, hash_bytes((const unsigned char *) task_queue,
									   strlen(task_queue)));
	}
	return h;
}

static bool
slot_matches(MetricSlot *s, uint32 hash, const char *namespace,
			 const char *task_queue)
{
	if (s->hash != hash || s->dboid != MyDatabaseId)
		return false;
	if (namespace == NULL)
		return s->used == SLOT_DATABASE;
	return s->used == SLOT_QUEUE && strcmp(s->namespace, namespace) == 0 &&
		strcmp(s->task_queue, task_queue) == 0;
}

/*
 * Whether a queue of a namespace of this database may take a free slot
 * (the table's lock held exclusively): while more than a quarter of the
 * durable.max_metric_queues slots (rounded down) are free; after that, the
 * last quarter, only while the namespace holds fewer slots than are still
 * free.  So one namespace with many queues leaves at least a quarter of the
 * slots to the others (of every database), which share it out (a first
 * newcomer takes at most half of it, the next half of the rest...), and the
 * further queues of a namespace count in its database's row.
 */
static bool
may_take_slot(const char *namespace)
{
	int			reserve = durable_max_metric_queues / 4;
	int			free_slots = durable_max_metric_queues - metrics->queue_slots_used;
	int			held = 0;
	int			i;

	if (free_slots > reserve)
		return true;
	for (i = 0; i < metrics->nslots && held < free_slots; i++)
	{
		MetricSlot *s = &metrics->slots[i];

		if (s->used == SLOT_QUEUE && s->dboid == MyDatabaseId &&
			strcmp(s->namespace, namespace) == 0)
			held++;
	}
	return held < free_slots;
}

/*
 * Free slot s (the table's lock held exclusively): bump its generation, so
 * that no backend starts adding to it, and wait for those adding now.  Its
 * counts are then added to into (if not NULL) and cleared.  If keep_if_fresh
 * and it was counted for since idle_before meanwhile, it is kept (the
 * backends that remember it look it up again) and false is returned.
 */
static bool
free_slot(MetricSlot *s, MetricSlot *into, bool keep_if_fresh,
		  TimestampTz idle_before)
{
	SpinDelayStatus delay;
	int			j;

	pg_atomic_fetch_add_u32(&s->generation, 1);
	init_local_spin_delay(&delay);
	while (pg_atomic_read_u32(&s->writers) != 0)
		perform_spin_delay(&delay);
	finish_spin_delay(&delay);
	pg_read_barrier();
	if (keep_if_fresh &&
		(TimestampTz) pg_atomic_read_u64(&s->last_count) >= idle_before)
		return false;
	for (j = 0; j < MV_COUNT; j++)
	{
		uint64		v = pg_atomic_read_u64(&s->v[j]);

		if (v != 0 && into != NULL)
			pg_atomic_fetch_add_u64(&into->v[j], v);
		pg_atomic_write_u64(&s->v[j], 0);
	}
	if (s->used == SLOT_QUEUE)
		metrics->queue_slots_used--;
	s->used = SLOT_FREED;
	return true;
}

/*
 * Look a key up from its place in the table (the lock held): the slot that
 * has it, or NULL; *free_out is the first free slot on the way, or NULL.
 */
static MetricSlot *
lookup_locked(uint32 hash, const char *namespace, const char *task_queue,
			  MetricSlot **free_out)
{
	int			start = (int) (hash % (uint32) metrics->nslots);
	int			i;

	if (free_out)
		*free_out = NULL;
	for (i = 0; i < metrics->nslots; i++)
	{
		MetricSlot *s = &metrics->slots[(start + i) % metrics->nslots];

		if (s->used == SLOT_NEVER_USED || s->used == SLOT_FREED)
		{
			if (free_out && *free_out == NULL)
				*free_out = s;
			if (s->used == SLOT_NEVER_USED)
				break;
			continue;
		}
		if (slot_matches(s, hash, namespace, task_queue))
			return s;
	}
	return NULL;
}

/* Give a free slot to a key (the lock held exclusively). */
static void
take_slot(MetricSlot *s, uint32 hash, const char *namespace,
		  const char *task_queue, TimestampTz now)
{
	s->hash = hash;
	s->dboid = MyDatabaseId;
	pg_atomic_write_u64(&s->last_count, (uint64) now);
	if (namespace != NULL)
	{
		strlcpy(s->namespace, namespace, METRIC_NAME_LEN);
		strlcpy(s->task_queue, task_queue, METRIC_NAME_LEN);
		metrics->queue_slots_used++;
	}
	else
	{
		s->namespace[0] = '\0';
		s->task_queue[0] = '\0';
	}
	/* Names before the mark: readers under the shared lock see both. */
	pg_write_barrier();
	s->used = namespace != NULL ? SLOT_QUEUE : SLOT_DATABASE;
}

/*
 * Free the row of this database's namespace idle the longest, if it has
 * been idle (no count) for longer than durable.metric_idle_timeout, its
 * counts added to the database's row (the lock held exclusively).  Only a
 * namespace's own rows: a tenant pushes out no one else's.  Returns the
 * freed slot, or NULL.
 */
static MetricSlot *
free_idle_row(const char *namespace, TimestampTz now)
{
	TimestampTz idle_before;
	MetricSlot *oldest = NULL;
	MetricSlot *db_row;
	MetricSlot *db_free;
	uint32		db_hash;
	int			i;

	if (durable_metric_idle_timeout <= 0)
		return NULL;
	idle_before = now - (TimestampTz) durable_metric_idle_timeout * USECS_PER_SEC;
	for (i = 0; i < metrics->nslots; i++)
	{
		MetricSlot *s = &metrics->slots[i];

		if (s->used == SLOT_QUEUE && s->dboid == MyDatabaseId &&
			(TimestampTz) pg_atomic_read_u64(&s->last_count) < idle_before &&
			strcmp(s->namespace, namespace) == 0 &&
			(oldest == NULL ||
			 pg_atomic_read_u64(&s->last_count) <
			 pg_atomic_read_u64(&oldest->last_count)))
			oldest = s;
	}
	if (oldest == NULL)
		return NULL;

	/* Its counts go to the database's row: no total goes down. */
	db_hash = key_hash(NULL, NULL);
	db_row = lookup_locked(db_hash, NULL, NULL, &db_free);
	if (db_row == NULL)
	{
		if (db_free == NULL)
			return NULL;
		take_slot(db_free, db_hash, NULL, NULL, now);
		db_row = db_free;
	}
	if (!free_slot(oldest, db_row, true, idle_before))
		return NULL;
	return oldest;
}

/*
 * The slot of a key and its generation, created if missing; *index -1 if
 * the table is full for it (a queue then counts in its database's row; a
 * database's row is lost).  Called at commit: must not fail.
 */
static void
find_slot(const char *namespace, const char *task_queue, TimestampTz now,
		  int *index, uint32 *generation)
{
	uint32		hash;
	MetricSlot *free_one;
	MetricSlot *result;

	if (namespace != NULL &&
		(strlen(namespace) >= METRIC_NAME_LEN ||
		 strlen(task_queue) >= METRIC_NAME_LEN))
	{
		find_slot(NULL, NULL, now, index, generation);
		return;
	}
	hash = key_hash(namespace, task_queue);

	LWLockAcquire(metrics->lock, LW_SHARED);
	result = lookup_locked(hash, namespace, task_queue, NULL);
	if (result != NULL)
		*generation = pg_atomic_read_u32(&result->generation);
	LWLockRelease(metrics->lock);
	if (result != NULL)
	{
		*index = result - metrics->slots;
		return;
	}

	LWLockAcquire(metrics->lock, LW_EXCLUSIVE);
	result = lookup_locked(hash, namespace, task_queue, &free_one);
	if (result == NULL && free_one != NULL &&
		(namespace == NULL ||
		 (metrics->queue_slots_used < durable_max_metric_queues &&
		  may_take_slot(namespace))))
	{
		take_slot(free_one, hash, namespace, task_queue, now);
		result = free_one;
	}
	else if (result == NULL && namespace != NULL)
	{
		/* At its share: the namespace's row idle the longest, if any. */
		MetricSlot *freed = free_idle_row(namespace, now);

		if (freed != NULL)
		{
			/*
			 * The first free slot on the way again (the database's row may
			 * have just taken the one seen): freed if the way was the whole
			 * table.
			 */
			(void) lookup_locked(hash, namespace, task_queue, &free_one);
			result = free_one != NULL ? free_one : freed;
			take_slot(result, hash, namespace, task_queue, now);
		}
	}
	if (result != NULL)
		*generation = pg_atomic_read_u32(&result->generation);
	LWLockRelease(metrics->lock);
	if (result != NULL)
		*index = result - metrics->slots;
	else if (namespace != NULL)
		find_slot(NULL, NULL, now, index, generation);
	else
		*index = -1;
}

/*
 * Mark this backend as a writer of the slot of key k and return the slot,
 * looked up again if it was freed since; NULL if there is none.  After a
 * few slots freed under it, the key counts in the database's row.
 */
static MetricSlot *
pin_key(LocalKey *k, TimestampTz now)
{
	int			attempt;
	int			index;
	uint32		generation;

	/* A queue in its database's row: a row may have been freed since. */
	if (k->slot >= 0 && k->in_database_row && now >= k->retry_at)
		k->slot = -1;
	for (attempt = 0; attempt < 4; attempt++)
	{
		MetricSlot *s;

		if (attempt < 3 && k->slot >= 0)
		{
			index = k->slot;
			generation = k->generation;
		}
		else
		{
			if (attempt < 3)
				find_slot(k->namespace, k->task_queue, now, &index,
						  &generation);
			else
				find_slot(NULL, NULL, now, &index, &generation);
			if (index < 0)
				return NULL;
			if (attempt < 3)
			{
				k->slot = index;
				k->generation = generation;
				k->in_database_row = k->namespace != NULL &&
					metrics->slots[index].used == SLOT_DATABASE;
				k->retry_at = now + RETRY_ROW_USECS;
			}
		}
		s = &metrics->slots[index];
		pg_atomic_fetch_add_u32(&s->writers, 1);
		if (pg_atomic_read_u32(&s->generation) == generation)
		{
			/* Seconds are enough to tell an idle row. */
			if ((TimestampTz) pg_atomic_read_u64(&s->last_count) <
				now - USECS_PER_SEC)
				pg_atomic_write_u64(&s->last_count, (uint64) now);
			return s;
		}
		pg_atomic_fetch_sub_u32(&s->writers, 1);
		k->slot = -1;
	}
	return NULL;
}

/* Add the deltas of the transaction to shared memory. */
static void
apply_deltas(void)
{
	TimestampTz now = DurableNow();
	MetricSlot *pinned = NULL;
	int			pinned_key = -1;
	int			i;

	for (i = 0; i < n_deltas; i++)
	{
		if (deltas[i].key != pinned_key)
		{
			if (pinned != NULL)
				pg_atomic_fetch_sub_u32(&pinned->writers, 1);
			pinned_key = deltas[i].key;
			pinned = pin_key(&local_keys[pinned_key], now);
		}
		if (pinned != NULL)
			pg_atomic_fetch_add_u64(&pinned->v[deltas[i].value],
									deltas[i].delta);
	}
	if (pinned != NULL)
		pg_atomic_fetch_sub_u32(&pinned->writers, 1);
}

/*
 * Free every row of a database (its database or the extension in it was
 * dropped): its counts go with it, and they start from 0 if the extension
 * is created there again, as after a restart.
 */
static void
forget_database(Oid dboid)
{
	int			i;

	if (metrics == NULL || !OidIsValid(dboid))
		return;
	LWLockAcquire(metrics->lock, LW_EXCLUSIVE);
	for (i = 0; i < metrics->nslots; i++)
	{
		MetricSlot *s = &metrics->slots[i];

		if ((s->used == SLOT_QUEUE || s->used == SLOT_DATABASE) &&
			s->dboid == dboid)
			(void) free_slot(s, NULL, false, 0);
	}
	LWLockRelease(metrics->lock);
}

/* Forget the keys (with no deltas pending) when there are many. */
static void
trim_keys(void)
{
	int			i;

	if (n_local_keys < MAX_LOCAL_KEYS / 2 && local_keys_db == MyDatabaseId)
		return;
	for (i = 0; i < n_local_keys; i++)
	{
		if (local_keys[i].namespace)
			pfree(local_keys[i].namespace);
		if (local_keys[i].task_queue)
			pfree(local_keys[i].task_queue);
	}
	n_local_keys = 0;
}

static void
metrics_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PREPARE:
			if (n_deltas > 0 && metrics != NULL)
				apply_deltas();
			n_deltas = 0;
			trim_keys();
			if (event == XACT_EVENT_COMMIT)
			{
				int			i;

				for (i = 0; i < n_pending_forgets; i++)
					forget_database(pending_forgets[i].dboid);
			}
			n_pending_forgets = 0;
			break;
		case XACT_EVENT_ABORT:
			n_deltas = 0;
			n_pending_forgets = 0;
			trim_keys();
			break;
		default:
			break;
	}
}

static void
metrics_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						 SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();

	if (event == SUBXACT_EVENT_ABORT_SUB)
	{
		while (n_deltas > 0 && deltas[n_deltas - 1].level >= level)
			n_deltas--;
		while (n_pending_forgets > 0 &&
			   pending_forgets[n_pending_forgets - 1].level >= level)
			n_pending_forgets--;
	}
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
	{
		int			i;

		for (i = n_deltas - 1; i >= 0 && deltas[i].level >= level; i--)
			deltas[i].level = level - 1;
		for (i = n_pending_forgets - 1;
			 i >= 0 && pending_forgets[i].level >= level; i--)
			pending_forgets[i].level = level - 1;
	}
}

static void
register_callbacks(void)
{
	if (!callbacks_registered)
	{
		RegisterXactCallback(metrics_xact_callback, NULL);
		RegisterSubXactCallback(metrics_subxact_callback, NULL);
		callbacks_registered = true;
	}
}

/*
 * DROP DATABASE, and DROP EXTENSION durable (however it is dropped): the
 * database's rows are freed when the transaction commits, for the queues
 * of other databases and namespaces (docs/metrics.md "Metrics").
 */
static void
metrics_object_access(ObjectAccessType access, Oid classId, Oid objectId,
					  int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access != OAT_DROP || metrics == NULL)
		return;
	if (classId == DatabaseRelationId ||
		(classId == ExtensionRelationId &&
		 objectId == get_extension_oid("durable", true)))
	{
		Oid			dboid = classId == DatabaseRelationId ?
			objectId : MyDatabaseId;

		int			i;

		register_callbacks();

		/*
		 * One entry a database, at the outermost level that dropped it: a
		 * transaction drops at most one database and this one's extension,
		 * so that the list never fills (if it did, the rows would stay).
		 */
		for (i = 0; i < n_pending_forgets; i++)
			if (pending_forgets[i].dboid == dboid)
				return;
		if (n_pending_forgets == MAX_PENDING_FORGETS)
			return;
		pending_forgets[n_pending_forgets].dboid = dboid;
		pending_forgets[n_pending_forgets].level =
			GetCurrentTransactionNestLevel();
		n_pending_forgets++;
	}
}

/* Install the hook that sees databases and the extension dropped. */
void
MetricsInstallHooks(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = metrics_object_access;
}

/* The index of a key in local_keys, added if new; -1 if none is free. */
static int
local_key(const char *namespace, const char *task_queue)
{
	int			i;

	if (local_keys_db != MyDatabaseId)
	{
		n_local_keys = 0;		/* nothing can be pending across databases */
		local_keys_db = MyDatabaseId;
	}
	for (i = n_local_keys - 1; i >= 0; i--)
	{
		LocalKey   *k = &local_keys[i];

		if (namespace == NULL ? k->namespace == NULL :
			(k->namespace != NULL && strcmp(k->namespace, namespace) == 0 &&
			 strcmp(k->task_queue, task_queue) == 0))
			return i;
	}
	/* The last key is kept for the database's row, where the rest count. */
	if (n_local_keys >= MAX_LOCAL_KEYS - 1 &&
		(namespace != NULL || n_local_keys == MAX_LOCAL_KEYS))
		return namespace == NULL ? -1 : local_key(NULL, NULL);
	local_keys[n_local_keys].namespace = namespace ?
		MemoryContextStrdup(TopMemoryContext, namespace) : NULL;
	local_keys[n_local_keys].task_queue = task_queue ?
		MemoryContextStrdup(TopMemoryContext, task_queue) : NULL;
	local_keys[n_local_keys].slot = -1;
	local_keys[n_local_keys].in_database_row = false;
	return n_local_keys++;
}

/*
 * Add delta to counter value of a queue (namespace NULL: the database's
 * row), when this transaction commits.
 */
void
MetricsAdd(const char *namespace, const char *task_queue, MetricValue value,
		   uint64 delta)
{
	int			key;
	int			level;
	int			i;

	if (metrics == NULL || !IsTransactionState())
		return;
	register_callbacks();
	key = local_key(namespace, task_queue);
	if (key < 0)
		return;
	level = GetCurrentTransactionNestLevel();
	for (i = n_deltas - 1; i >= 0 && i >= n_deltas - MERGE_LOOKBACK; i--)
	{
		if (deltas[i].level != level)
			break;
		if (deltas[i].key == key && deltas[i].value == value)
		{
			deltas[i].delta += delta;
			return;
		}
	}
	if (n_deltas == max_deltas)
	{
		int			size = max_deltas ? max_deltas * 2 : 64;

		deltas = deltas ?
			repalloc(deltas, sizeof(Delta) * size) :
			MemoryContextAlloc(TopMemoryContext, sizeof(Delta) * size);
		max_deltas = size;
	}
	deltas[n_deltas].key = (int16) key;
	deltas[n_deltas].value = (int16) value;
	deltas[n_deltas].level = level;
	deltas[n_deltas].delta = delta;
	n_deltas++;
}

/* Observe seconds (negative counts as 0) in histogram hist of a queue. */
void
MetricsObserve(const char *namespace, const char *task_queue, int hist,
			   double seconds)
{
	int			base = MV_HIST_FIRST + hist * MV_HIST_WIDTH;
	int			b;

	if (metrics == NULL)
		return;
	if (!(seconds > 0))
		seconds = 0;
	if (seconds > 1e9)
		seconds = 1e9;
	for (b = 0; b < METRIC_BUCKETS; b++)
		if (seconds <= bucket_bounds[b])
			break;
	MetricsAdd(namespace, task_queue, base + b, 1);
	MetricsAdd(namespace, task_queue, base + METRIC_BUCKETS + 1,
			   (uint64) (seconds * 1000000.0));
}

/*
 * Count the events a run writes: workflow starts and closes, decision task
 * starts and outcomes (runs.c, just before they are written).
 */
void
MetricsCountEvents(const char *namespace, const char *task_queue, int n,
				   char *const *types)
{
	int			i;

	if (metrics == NULL)
		return;
	for (i = 0; i < n; i++)
	{
		const char *t = types[i];
		int			v = -1;

		if (t[0] == 'D' && strncmp(t, "DecisionTask", 12) == 0)
		{
			t += 12;
			if (strcmp(t, "Started") == 0)
				v = MV_DECISION_STARTED;
			else if (strcmp(t, "Completed") == 0)
				v = MV_DECISION_COMPLETED;
			else if (strcmp(t, "Failed") == 0)
				v = MV_DECISION_FAILED;
			else if (strcmp(t, "TimedOut") == 0)
				v = MV_DECISION_TIMED_OUT;
		}
		else if (t[0] == 'W' && strncmp(t, "WorkflowExecution", 17) == 0)
		{
			t += 17;
			if (strcmp(t, "Started") == 0)
				v = MV_WORKFLOWS_STARTED;
			else if (strcmp(t, "Completed") == 0)
				v = MV_CLOSED_COMPLETED;
			else if (strcmp(t, "Failed") == 0)
				v = MV_CLOSED_FAILED;
			else if (strcmp(t, "Canceled") == 0)
				v = MV_CLOSED_CANCELED;
			else if (strcmp(t, "Terminated") == 0)
				v = MV_CLOSED_TERMINATED;
			else if (strcmp(t, "ContinuedAsNew") == 0)
				v = MV_CLOSED_CONTINUED_AS_NEW;
			else if (strcmp(t, "TimedOut") == 0)
				v = MV_CLOSED_TIMED_OUT;
		}
		if (v >= 0)
			MetricsAdd(namespace, task_queue, v, 1);
	}
}

/* One family of the output: its name, type, help and where its values are */
typedef struct MetricFamily
{
	const char *name;
	const char *type;			/* counter or histogram */
	const char *help;
	bool		database_row;	/* only in the database's row */
	const char *label;			/* the extra label, or NULL */
	int			nvalues;
	int			values[7];
	const char *label_values[7];
	int			hist;			/* histograms: which */
} MetricFamily;

static const MetricFamily families[] = {
	{"durable_workflows_started_total", "counter",
		"Workflow runs started (new runs of a chain included).",
		false, NULL, 1, {MV_WORKFLOWS_STARTED}, {NULL}, 0},
	{"durable_workflows_closed_total", "counter",
		"Workflow runs closed, by status.",
		false, "status", 6,
		{MV_CLOSED_COMPLETED, MV_CLOSED_FAILED, MV_CLOSED_CANCELED,
		MV_CLOSED_TERMINATED, MV_CLOSED_CONTINUED_AS_NEW, MV_CLOSED_TIMED_OUT},
		{"completed", "failed", "canceled", "terminated", "continued_as_new",
		"timed_out"}, 0},
	{"durable_decision_tasks_total", "counter",
		"Decision tasks started, and their outcomes.",
		false, "status", 4,
		{MV_DECISION_STARTED, MV_DECISION_COMPLETED, MV_DECISION_FAILED,
		MV_DECISION_TIMED_OUT},
		{"started", "completed", "failed", "timed_out"}, 0},
	{"durable_activity_tasks_total", "counter",
		"Activity task attempts started, and their outcomes.",
		false, "status", 5,
		{MV_ACTIVITY_STARTED, MV_ACTIVITY_COMPLETED, MV_ACTIVITY_FAILED,
		MV_ACTIVITY_TIMED_OUT, MV_ACTIVITY_CANCELED},
		{"started", "completed", "failed", "timed_out", "canceled"}, 0},
	{"durable_retries_scheduled_total", "counter",
		"Retries scheduled by a retry policy: activity attempts and workflow runs.",
		false, "kind", 2,
		{MV_RETRIES_ACTIVITY, MV_RETRIES_WORKFLOW},
		{"activity", "workflow"}, 0},
	{"durable_decision_schedule_to_start_seconds", "histogram",
		"Time from a decision task's scheduling to its start.",
		false, NULL, 0, {0}, {NULL}, MH_DECISION_SCHEDULE_TO_START},
	{"durable_activity_schedule_to_start_seconds", "histogram",
		"Time from an activity attempt's scheduling to its start.",
		false, NULL, 0, {0}, {NULL}, MH_ACTIVITY_SCHEDULE_TO_START},
	{"durable_timers_fired_total", "counter",
		"Durable timers fired (user timers, timeouts, retries, delayed starts).",
		true, NULL, 1, {MV_TIMERS_FIRED}, {NULL}, 0},
	{"durable_timer_lateness_seconds", "histogram",
		"How late durable timers fired after they were due.",
		true, NULL, 0, {0}, {NULL}, MH_TIMER_LATENESS},
};

/* A copy of one slot, read without the lock held */
typedef struct SlotCopy
{
	bool		database_row;
	char		namespace[METRIC_NAME_LEN];
	char		task_queue[METRIC_NAME_LEN];
	uint64		v[MV_COUNT];
} SlotCopy;

/* This database's slots that the caller may read. */
static SlotCopy *
read_slots(int *n_out)
{
	SlotCopy   *copy;
	int			n = 0;
	int			kept = 0;
	int			i;
	int			j;
	bool		sees_all;

	*n_out = 0;
	if (metrics == NULL)
		return NULL;
	copy = palloc(sizeof(SlotCopy) * metrics->nslots);
	LWLockAcquire(metrics->lock, LW_SHARED);
	for (i = 0; i < metrics->nslots; i++)
	{
		MetricSlot *s = &metrics->slots[i];

		if ((s->used != SLOT_QUEUE && s->used != SLOT_DATABASE) ||
			s->dboid != MyDatabaseId)
			continue;
		copy[n].database_row = s->used == SLOT_DATABASE;
		strlcpy(copy[n].namespace, s->namespace, METRIC_NAME_LEN);
		strlcpy(copy[n].task_queue, s->task_queue, METRIC_NAME_LEN);
		for (j = 0; j < MV_COUNT; j++)
			copy[n].v[j] = pg_atomic_read_u64(&s->v[j]);
		n++;
	}
	LWLockRelease(metrics->lock);

	sees_all = MonitorSeesAll();
	for (i = 0; i < n; i++)
	{
		if (copy[i].database_row ? !sees_all :
			!MonitorMayRead(copy[i].namespace, sees_all))
			continue;
		if (kept != i)
			copy[kept] = copy[i];
		kept++;
	}
	*n_out = kept;
	return copy;
}

/* Emit one row of durable.metric_values() or one line of the text. */
typedef void (*EmitFn) (void *arg, const char *metric, const SlotCopy *s,
						const char *label, const char *label_value,
						double le, double value);

/*
 * Whether this backend counts at all: without the library in
 * shared_preload_libraries there is no table in shared memory and no counter
 * ever moves, which a scraper should be told rather than shown nothing
 * (docs/metrics.md "Metrics").  Read by everyone who may read the metrics.
 */
static const MetricFamily enabled_family = {
	"durable_metrics_enabled", "gauge",
	"1 if durable counts (it is in shared_preload_libraries), 0 if nothing is counted.",
	true, NULL, 0, {0}, {NULL}, 0
};
static const SlotCopy no_queue = {true};

/* The paused task queues, and the paused runs of each queue */
static const MetricFamily paused_queue_family = {
	"durable_task_queue_paused", "gauge",
	"1 for a paused task queue: none of its tasks is handed out.",
	false, NULL, 0, {0}, {NULL}, 0
};
static const MetricFamily paused_runs_family = {
	"durable_workflows_paused", "gauge",
	"Open workflow runs paused, by their task queue: none of their tasks is handed out.",
	false, NULL, 0, {0}, {NULL}, 0
};

/*
 * Emit, for each (namespace, task_queue) of the rows of durable.<table> the
 * caller may read, how many rows it has (once for a primary key), walking
 * the index index_name, whose first two columns are those: consecutive rows
 * are of the same queue.  Names of METRIC_NAME_LEN bytes or longer are left
 * out, as they have no row of counters.  Nothing when the schema has no such
 * index (before 0.7.0 and 0.8.0).
 */
static void
walk_paused(const MetricFamily *fam, const char *table, const char *index_name,
			EmitFn emit, void *arg,
			void (*family_begin) (void *, const MetricFamily *))
{
	Oid			nsp = get_namespace_oid("durable", true);
	Oid			relid = OidIsValid(nsp) ? get_relname_relid(table, nsp) :
		InvalidOid;
	Oid			indexid;
	Relation	rel;
	Relation	index;
	Snapshot	snapshot;
	IndexScanDesc scan;
	TupleTableSlot *slot;
	AttrNumber	ns_att;
	AttrNumber	queue_att;
	bool		sees_all = MonitorSeesAll();
	SlotCopy	cur;
	double		count = 0;

	/*
	 * The table locked first and checked to still exist (a DROP EXTENSION
	 * may have committed since its name was looked up); with its lock held
	 * its index cannot go away, so it is looked up after.
	 */
	rel = OidIsValid(relid) ? try_table_open(relid, AccessShareLock) : NULL;
	if (rel == NULL)
		return;
	indexid = get_relname_relid(index_name, nsp);
	if (!OidIsValid(indexid))
	{
		table_close(rel, AccessShareLock);
		return;
	}
	index = index_open(indexid, AccessShareLock);
	if (index->rd_index->indrelid != relid ||
		index->rd_index->indnkeyatts < 2)
		elog(ERROR, "index durable.%s is not one of durable.%s's queues",
			 index_name, table);
	ns_att = index->rd_index->indkey.values[0];
	queue_att = index->rd_index->indkey.values[1];
	if (family_begin)
		family_begin(arg, fam);
	memset(&cur, 0, sizeof(cur));
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	slot = table_slot_create(rel, NULL);
	scan = index_beginscan(rel, index, snapshot, 0, 0);
	index_rescan(scan, NULL, 0, NULL, 0);
	for (;;)
	{
		bool		more = index_getnext_slot(scan, ForwardScanDirection, slot);
		char	   *ns = NULL;
		char	   *queue = NULL;
		bool		isnull;

		if (more)
		{
			ns = TextDatumGetCString(slot_getattr(slot, ns_att, &isnull));
			queue = TextDatumGetCString(slot_getattr(slot, queue_att, &isnull));
			if (count > 0 && strcmp(ns, cur.namespace) == 0 &&
				strcmp(queue, cur.task_queue) == 0)
			{
				count++;
				continue;
			}
		}
		if (count > 0)
			emit(arg, fam->name, &cur, NULL, NULL, NAN, count);
		if (!more)
			break;
		count = 0;
		if (strlen(ns) >= METRIC_NAME_LEN || strlen(queue) >= METRIC_NAME_LEN ||
			!MonitorMayRead(ns, sees_all))
			continue;
		strlcpy(cur.namespace, ns, METRIC_NAME_LEN);
		strlcpy(cur.task_queue, queue, METRIC_NAME_LEN);
		count = 1;
	}
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	UnregisterSnapshot(snapshot);
	index_close(index, AccessShareLock);
	table_close(rel, AccessShareLock);
}

/* Walk every value of the slots the caller may read, family by family. */
static void
walk_metrics(EmitFn emit, void *arg, void (*family_begin) (void *,
														   const MetricFamily *))
{
	SlotCopy   *slots;
	int			n;
	int			f;
	int			i;
	int			j;

	if (family_begin)
		family_begin(arg, &enabled_family);
	emit(arg, enabled_family.name, &no_queue, NULL, NULL, NAN,
		 metrics != NULL ? 1.0 : 0.0);
	slots = read_slots(&n);
	for (f = 0; f < lengthof(families); f++)
	{
		const MetricFamily *fam = &families[f];
		bool		begun = false;

		for (i = 0; i < n; i++)
		{
			const SlotCopy *s = &slots[i];

			if (fam->database_row && !s->database_row)
				continue;
			if (!begun && family_begin)
				family_begin(arg, fam);
			begun = true;
			if (strcmp(fam->type, "counter") == 0)
			{
				for (j = 0; j < fam->nvalues; j++)
					emit(arg, fam->name, s, fam->label, fam->label_values[j],
						 NAN, (double) s->v[fam->values[j]]);
			}
			else
			{
				int			base = MV_HIST_FIRST + fam->hist * MV_HIST_WIDTH;
				uint64		cumulative = 0;
				char		name[128];

				snprintf(name, sizeof(name), "%s_bucket", fam->name);
				for (j = 0; j <= METRIC_BUCKETS; j++)
				{
					cumulative += s->v[base + j];
					emit(arg, name, s, NULL, NULL,
						 j < METRIC_BUCKETS ? bucket_bounds[j] : INFINITY,
						 (double) cumulative);
				}
				snprintf(name, sizeof(name), "%s_sum", fam->name);
				emit(arg, name, s, NULL, NULL, NAN,
					 (double) s->v[base + METRIC_BUCKETS + 1] / 1000000.0);
				snprintf(name, sizeof(name), "%s_count", fam->name);
				emit(arg, name, s, NULL, NULL, NAN, (double) cumulative);
			}
		}
		/* Nothing counted: the families there would be, without samples. */
		if (metrics == NULL && family_begin)
			family_begin(arg, fam);
	}
	walk_paused(&paused_queue_family, "paused_task_queues",
				"paused_task_queues_pkey", emit, arg, family_begin);
	walk_paused(&paused_runs_family, "runs", "runs_paused", emit, arg,
				family_begin);
}

/* A row of durable.metric_values() */
static void
emit_row(void *arg, const char *metric, const SlotCopy *s, const char *label,
		 const char *label_value, double le, double value)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) arg;
	Datum		values[6];
	bool		nulls[6] = {false, false, false, false, false, false};

	values[0] = CStringGetTextDatum(metric);
	if (s->database_row)
		nulls[1] = nulls[2] = true;
	else
	{
		values[1] = CStringGetTextDatum(s->namespace);
		values[2] = CStringGetTextDatum(s->task_queue);
	}
	if (label_value != NULL)
		values[3] = CStringGetTextDatum(label_value);
	else
		nulls[3] = true;
	if (isnan(le))
		nulls[4] = true;
	else
		values[4] = Float8GetDatum(le);
	values[5] = Float8GetDatum(value);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

PG_FUNCTION_INFO_V1(durable_metric_values);
/*
 * durable.metric_values(): the counters of this database that the caller
 * may read, one row a value: metric, namespace, task_queue, label (the
 * value of the family's extra label: status or kind), le, value.
 */
Datum
durable_metric_values(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	walk_metrics(emit_row, rsinfo, NULL);
	return (Datum) 0;
}

/* A label value escaped as the text exposition format wants. */
static void
append_label_value(StringInfo buf, const char *v)
{
	for (; *v; v++)
	{
		if (*v == '\\')
			appendStringInfoString(buf, "\\\\");
		else if (*v == '"')
			appendStringInfoString(buf, "\\\"");
		else if (*v == '\n')
			appendStringInfoString(buf, "\\n");
		else
			appendStringInfoChar(buf, *v);
	}
}

/* A float as the text exposition format wants it. */
static void
append_number(StringInfo buf, double d)
{
	if (isinf(d))
		appendStringInfoString(buf, d > 0 ? "+Inf" : "-Inf");
	else if (d == floor(d) && fabs(d) < 1e15)
		appendStringInfo(buf, "%.0f", d);
	else
		appendStringInfo(buf, "%.15g", d);
}

static void
text_family(void *arg, const MetricFamily *fam)
{
	StringInfo	buf = (StringInfo) arg;

	appendStringInfo(buf, "# HELP %s %s\n# TYPE %s %s\n",
					 fam->name, fam->help, fam->name, fam->type);
}

static void
text_line(void *arg, const char *metric, const SlotCopy *s, const char *label,
		  const char *label_value, double le, double value)
{
	StringInfo	buf = (StringInfo) arg;
	bool		any = false;

	appendStringInfoString(buf, metric);
	if (!s->database_row)
	{
		appendStringInfoString(buf, "{namespace=\"");
		append_label_value(buf, s->namespace);
		appendStringInfoString(buf, "\",task_queue=\"");
		append_label_value(buf, s->task_queue);
		appendStringInfoChar(buf, '"');
		any = true;
	}
	if (label != NULL)
	{
		appendStringInfo(buf, "%s%s=\"", any ? "," : "{", label);
		append_label_value(buf, label_value);
		appendStringInfoChar(buf, '"');
		any = true;
	}
	if (!isnan(le))
	{
		appendStringInfo(buf, "%sle=\"", any ? "," : "{");
		append_number(buf, le);
		appendStringInfoChar(buf, '"');
		any = true;
	}
	if (any)
		appendStringInfoChar(buf, '}');
	appendStringInfoChar(buf, ' ');
	append_number(buf, value);
	appendStringInfoChar(buf, '\n');
}

PG_FUNCTION_INFO_V1(durable_metrics_text);
/* durable.metrics_text(): the same as Prometheus text exposition format. */
Datum
durable_metrics_text(PG_FUNCTION_ARGS)
{
	StringInfoData buf;

	initStringInfo(&buf);
	walk_metrics(text_line, &buf, text_family);
	PG_RETURN_TEXT_P(cstring_to_text_with_len(buf.data, buf.len));
}

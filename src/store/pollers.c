/*-------------------------------------------------------------------------
 *
 * pollers.c
 *	  Recent pollers of each task queue, kept in shared memory.
 *
 * Every poll (poll_decision_task, poll_activity_task, poll_activity_tasks)
 * records its namespace, task queue, kind and identity here, with the time
 * it began and the time its wait ends at the latest, so that
 * durable.task_queues can list who is working on a queue and
 * describe_workflow can say that nobody is.  Nothing is written to a table:
 * a poll costs a lookup under a shared lock and two atomic writes; only a
 * poller not yet in the table takes the lock exclusively.
 *
 * The table has durable.max_pollers entries for the whole server (the key
 * includes the database).  A new poller takes an entry among the PROBE
 * entries near its hash: a free one, else one listed nowhere any more, else
 * the stalest of its own namespace's or of a namespace holding more entries
 * than its own (choose_entry), so that a namespace cannot push out the
 * pollers of one that holds fewer.  A namespace or task queue name longer
 * than POLLER_NAME_LEN - 1 bytes is not recorded (docs/task-queues.md "Task queues"); an
 * identity that long is shown cut on a character boundary.  The table is
 * lost at a restart: pollers show again at their next poll.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_authid.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "catalog/pg_type.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "base/util.h"
#include "store/namespaces.h"
#include "store/pollers.h"

#define POLLER_NAME_LEN		128
#define PROBE				16
/* A poller not seen for this long is listed nowhere (durable.task_queues) */
#define POLLER_FORGET_SECONDS	300

typedef struct PollerEntry
{
	uint64		hash;			/* 0: free */
	Oid			dboid;
	char		kind;			/* 'd' or 'a' */
	pg_atomic_uint64 last_poll; /* TimestampTz the last poll began */
	pg_atomic_uint64 poll_until;	/* TimestampTz its wait ends at latest */
	char		namespace[POLLER_NAME_LEN];
	char		task_queue[POLLER_NAME_LEN];
	char		identity[POLLER_NAME_LEN];
} PollerEntry;

typedef struct PollerTable
{
	LWLock	   *lock;
	PollerEntry entries[FLEXIBLE_ARRAY_MEMBER];
} PollerTable;

int			durable_max_pollers = 1024;
static PollerTable *pollers = NULL;

/* What this backend recorded last (RecordPoller) */
static uint64 last_recorded_hash = 0;
static Oid	last_recorded_db = InvalidOid;
static TimestampTz last_recorded_at = 0;
static TimestampTz last_recorded_until = 0;

/* Bytes of shared memory of the table. */
Size
PollersShmemSize(void)
{
	return MAXALIGN(add_size(offsetof(PollerTable, entries),
							 mul_size(sizeof(PollerEntry), durable_max_pollers)));
}

/* Ask for the table's lock (shmem_request_hook). */
void
PollersShmemRequest(void)
{
	RequestAddinShmemSpace(PollersShmemSize());
	RequestNamedLWLockTranche("durable pollers", 1);
}

/* Set up the table (shmem_startup_hook, AddinShmemInitLock held). */
void
PollersShmemInit(void)
{
	bool		found;
	int			i;

	pollers = ShmemInitStruct("durable pollers", PollersShmemSize(), &found);
	if (!found)
	{
		pollers->lock = &(GetNamedLWLockTranche("durable pollers"))->lock;
		for (i = 0; i < durable_max_pollers; i++)
		{
			pollers->entries[i].hash = 0;
			pg_atomic_init_u64(&pollers->entries[i].last_poll, 0);
			pg_atomic_init_u64(&pollers->entries[i].poll_until, 0);
		}
	}
}

/* The key hash of a poller (never 0, the mark of a free entry). */
static uint64
poller_hash(const char *namespace, const char *task_queue, char kind,
			const char *identity)
{
	uint64		h;

	h = hash_bytes_extended((const unsigned char *) namespace,
							strlen(namespace), MyDatabaseId);
	h = hash_combine64(h, hash_bytes_extended((const unsigned char *) task_queue,
											  strlen(task_queue), kind));
	h = hash_combine64(h, hash_bytes_extended((const unsigned char *) identity,
											  strlen(identity), 0));
	return h == 0 ? 1 : h;
}

/* Whether entry e is the poller of the key (the table's lock held). */
static bool
poller_matches(PollerEntry *e, uint64 hash, const char *namespace,
			   const char *task_queue, char kind)
{
	return e->hash == hash && e->dboid == MyDatabaseId && e->kind == kind &&
		strcmp(e->namespace, namespace) == 0 &&
		strcmp(e->task_queue, task_queue) == 0;
}

/* Whether entry e belongs to the namespace of this database. */
static bool
same_tenant(PollerEntry *e, Oid dboid, const char *namespace)
{
	return e->hash != 0 && e->dboid == dboid &&
		strcmp(e->namespace, namespace) == 0;
}

/* Entries of the table held by a namespace of a database (lock held). */
static int
tenant_entries(Oid dboid, const char *namespace)
{
	int			n = 0;
	int			i;

	for (i = 0; i < durable_max_pollers; i++)
		if (same_tenant(&pollers->entries[i], dboid, namespace))
			n++;
	return n;
}

/* When entry e was seen last: the later of its poll and its wait's end. */
static TimestampTz
entry_seen(PollerEntry *e)
{
	return Max((TimestampTz) pg_atomic_read_u64(&e->last_poll),
			   (TimestampTz) pg_atomic_read_u64(&e->poll_until));
}

/*
 * The entry a new poller of (this database, namespace) takes among the
 * PROBE entries from start, with the table's lock held exclusively: its own
 * if there (another backend recorded it meanwhile), else a free one, else
 * the stalest of those no longer listed anywhere (seen more than
 * POLLER_FORGET_SECONDS ago), else the stalest of those it may evict: its own
 * namespace's, and those of a namespace (of any database) holding more
 * entries than its own will hold; NULL when none (the poll is not
 * recorded).  So a namespace that polls with ever new identities pushes out
 * its own pollers only, never those of a namespace holding fewer entries.
 */
static PollerEntry *
choose_entry(uint32 start, uint64 hash, const char *namespace,
			 const char *task_queue, char kind, TimestampTz now)
{
	PollerEntry *window[PROBE];
	int			counts[PROBE];
	int			n = 0;
	int			own = -1;
	int			i;
	int			j;
	PollerEntry *best = NULL;
	TimestampTz forget = TimestampPlusSeconds(now, -POLLER_FORGET_SECONDS);

	for (i = 0; i < PROBE && i < durable_max_pollers; i++)
	{
		PollerEntry *c = &pollers->entries[(start + i) % durable_max_pollers];

		if (poller_matches(c, hash, namespace, task_queue, kind))
			return c;
		window[n++] = c;
	}
	for (i = 0; i < n; i++)
		if (window[i]->hash == 0)
			return window[i];
	for (i = 0; i < n; i++)
	{
		if (entry_seen(window[i]) < forget &&
			(best == NULL || entry_seen(window[i]) < entry_seen(best)))
			best = window[i];
	}
	if (best != NULL)
		return best;

	/* Every entry here is listed: count the namespaces' holdings. */
	for (i = 0; i < n; i++)
	{
		PollerEntry *c = window[i];

		counts[i] = -1;
		if (same_tenant(c, MyDatabaseId, namespace))
		{
			if (own < 0)
				own = tenant_entries(MyDatabaseId, namespace);
			counts[i] = own;
			continue;
		}
		for (j = 0; j < i; j++)
		{
			if (counts[j] >= 0 && same_tenant(window[j], c->dboid, c->namespace))
			{
				counts[i] = counts[j];
				break;
			}
		}
		if (counts[i] < 0)
			counts[i] = tenant_entries(c->dboid, c->namespace);
	}
	if (own < 0)
		own = tenant_entries(MyDatabaseId, namespace);
	for (i = 0; i < n; i++)
	{
		PollerEntry *c = window[i];

		if (!same_tenant(c, MyDatabaseId, namespace) && counts[i] <= own + 1)
			continue;
		if (best == NULL || entry_seen(c) < entry_seen(best))
			best = c;
	}
	return best;
}

/*
 * Record a poll of a queue that began at now and waits up to wait_ms.  A
 * no-op without shared memory or for names too long to keep.
 */
void
RecordPoller(const char *namespace, const char *task_queue, char kind,
			 const char *identity, TimestampTz now, double wait_ms)
{
	uint64		hash;
	uint32		start;
	TimestampTz until = TimestampPlusSeconds(now, wait_ms / 1000.0);
	PollerEntry *e = NULL;
	int			i;
	int			idlen;

	if (pollers == NULL || durable_max_pollers <= 0 ||
		strlen(namespace) >= POLLER_NAME_LEN ||
		strlen(task_queue) >= POLLER_NAME_LEN)
		return;
	hash = poller_hash(namespace, task_queue, kind, identity);

	/*
	 * A worker polls the same queue again and again: a poll of the poller
	 * this backend recorded less than a second ago, whose wait ends less than
	 * a second after the one recorded, changes nothing anyone reads (a poller
	 * is listed for 5 minutes and "no poller" means none for a minute), so
	 * it does not touch the shared table, whose lock and cache line every
	 * poller of every queue would otherwise share on each poll.
	 */
	if (hash == last_recorded_hash && MyDatabaseId == last_recorded_db &&
		now >= last_recorded_at && now - last_recorded_at < USECS_PER_SEC &&
		until < last_recorded_until + USECS_PER_SEC)
		return;
	last_recorded_hash = hash;
	last_recorded_db = MyDatabaseId;
	last_recorded_at = now;
	last_recorded_until = until;
	start = (uint32) (hash % (uint64) durable_max_pollers);

	LWLockAcquire(pollers->lock, LW_SHARED);
	for (i = 0; i < PROBE && i < durable_max_pollers; i++)
	{
		PollerEntry *c = &pollers->entries[(start + i) % durable_max_pollers];

		if (poller_matches(c, hash, namespace, task_queue, kind))
		{
			e = c;
			break;
		}
	}
	if (e != NULL)
	{
		pg_atomic_write_u64(&e->last_poll, (uint64) now);
		pg_atomic_write_u64(&e->poll_until, (uint64) until);
		LWLockRelease(pollers->lock);
		return;
	}
	LWLockRelease(pollers->lock);

	/* A new poller: an entry near its hash that it may take (see above). */
	LWLockAcquire(pollers->lock, LW_EXCLUSIVE);
	e = choose_entry(start, hash, namespace, task_queue, kind, now);
	if (e == NULL)
	{
		LWLockRelease(pollers->lock);
		return;
	}
	if (!poller_matches(e, hash, namespace, task_queue, kind))
	{
		e->hash = hash;
		e->dboid = MyDatabaseId;
		e->kind = kind;
		strlcpy(e->namespace, namespace, POLLER_NAME_LEN);
		strlcpy(e->task_queue, task_queue, POLLER_NAME_LEN);
		/* cut on a character boundary: the view reads it as text */
		idlen = pg_mbcliplen(identity, strlen(identity), POLLER_NAME_LEN - 1);
		memcpy(e->identity, identity, idlen);
		e->identity[idlen] = '\0';
	}
	pg_atomic_write_u64(&e->last_poll, (uint64) now);
	pg_atomic_write_u64(&e->poll_until, (uint64) until);
	LWLockRelease(pollers->lock);
}

/*
 * The latest time a poller of the queue was seen (the later of its last
 * poll and the end of that poll's wait); false when none is recorded, or
 * when there is no shared memory or the names are too long to be recorded
 * (then nobody can tell: *known is false).
 */
bool
QueueLastPolled(const char *namespace, const char *task_queue, char kind,
				TimestampTz *seen, bool *known)
{
	bool		found = false;
	int			i;

	*known = pollers != NULL && durable_max_pollers > 0 &&
		strlen(namespace) < POLLER_NAME_LEN &&
		strlen(task_queue) < POLLER_NAME_LEN;
	*seen = 0;
	if (!*known)
		return false;
	LWLockAcquire(pollers->lock, LW_SHARED);
	for (i = 0; i < durable_max_pollers; i++)
	{
		PollerEntry *e = &pollers->entries[i];
		TimestampTz t;

		if (e->hash == 0 || e->dboid != MyDatabaseId || e->kind != kind ||
			strcmp(e->namespace, namespace) != 0 ||
			strcmp(e->task_queue, task_queue) != 0)
			continue;
		t = Max((TimestampTz) pg_atomic_read_u64(&e->last_poll),
				(TimestampTz) pg_atomic_read_u64(&e->poll_until));
		if (!found || t > *seen)
			*seen = t;
		found = true;
	}
	LWLockRelease(pollers->lock);
	return found;
}

PG_FUNCTION_INFO_V1(durable_task_queue_pollers);
/*
 * durable.task_queue_pollers(): the recorded pollers of this database's
 * queues in the namespaces the caller may read: namespace, task_queue, kind
 * ('decision' or 'activity'), identity, last_poll_time, poll_until.
 */
Datum
durable_task_queue_pollers(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	PollerEntry *copy;
	int			n = 0;
	int			i;
	bool		sees_all;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	if (pollers == NULL || durable_max_pollers <= 0)
		return (Datum) 0;

	/* Copied out first: the namespace checks may read tables. */
	copy = palloc(sizeof(PollerEntry) * durable_max_pollers);
	LWLockAcquire(pollers->lock, LW_SHARED);
	for (i = 0; i < durable_max_pollers; i++)
	{
		PollerEntry *e = &pollers->entries[i];

		if (e->hash == 0 || e->dboid != MyDatabaseId)
			continue;
		memcpy(&copy[n], e, sizeof(PollerEntry));
		pg_atomic_init_u64(&copy[n].last_poll,
						   pg_atomic_read_u64(&e->last_poll));
		pg_atomic_init_u64(&copy[n].poll_until,
						   pg_atomic_read_u64(&e->poll_until));
		n++;
	}
	LWLockRelease(pollers->lock);

	sees_all = MonitorSeesAll();
	for (i = 0; i < n; i++)
	{
		PollerEntry *e = &copy[i];
		Datum		values[6];
		bool		nulls[6] = {false, false, false, false, false, false};

		if (!MonitorMayRead(e->namespace, sees_all))
			continue;
		values[0] = CStringGetTextDatum(e->namespace);
		values[1] = CStringGetTextDatum(e->task_queue);
		values[2] = CStringGetTextDatum(e->kind == 'd' ? "decision" : "activity");
		values[3] = CStringGetTextDatum(e->identity);
		values[4] = TimestampTzGetDatum((TimestampTz) pg_atomic_read_u64(&e->last_poll));
		values[5] = TimestampTzGetDatum((TimestampTz) pg_atomic_read_u64(&e->poll_until));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* Whether pollers are recorded at all (shared memory, durable.max_pollers). */
bool
PollersRecorded(void)
{
	return pollers != NULL && durable_max_pollers > 0;
}

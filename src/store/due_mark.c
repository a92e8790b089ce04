/*-------------------------------------------------------------------------
 *
 * due_mark.c
 *	  Low-water marks of durable.timers: where a due scan starts its walk.
 *
 * The timer worker finds due timers by walking the index timers_due on
 * (due_at) from its start up to now.  A timer is deleted when it fires, and
 * most are deleted or moved before they are due (an activity's timeout once
 * the activity completes, a run's timers once it closes).  Normally VACUUM
 * and the scans themselves (which mark entries of rows dead to everyone)
 * keep the walk short.  While anything holds the vacuum horizon back (a
 * long report, a session idle in transaction, a replication slot, a
 * standby's feedback), no dead entry can be removed or marked, and each due
 * scan walked, and visited the heap row of, every timer deleted since the
 * horizon stopped whose due time has passed: about 100,000 entries a scan
 * after a few minutes of the activity cycle (docs/performance.md "A held
 * vacuum horizon").
 *
 * So each database has a mark in shared memory, a due time below which no
 * timer is live, and due scans walk due_at >= mark.  Unlike task ids, due
 * times do not grow with the transactions that write them: a transaction may
 * write a timer due at any time (a retry backoff of 0, durable.test_time, a
 * timer put off).  The rule that keeps the mark below every timer that is or
 * will become live:
 *
 * - A writer publishes each due time before it writes the row (NoteTimerDue,
 *   DueMarkNoteWrite): in its own entry of a per-backend array, which it
 *   empties when its transaction ends (after its commit is visible), and as
 *   a lowering of its database's mark and of "lowered", the least due time
 *   published since the last scan began.
 * - A scan that may move the mark (the timer worker's, DueMarkBegin) empties
 *   "lowered" and reads the least due time of the writers in progress
 *   ("pending") before it takes its snapshot.  After the walk it sets the
 *   mark to the least of: the due time of the first timer its snapshot saw
 *   (locked by another transaction or not: that one may roll back), the
 *   walk's end (now) when it saw none, "pending", and "lowered".
 *
 * A timer its snapshot could not see was written by a transaction that was
 * still in progress then: if that transaction published before the scan
 * began, it counts in "pending"; if after, in "lowered"; if it publishes
 * after the scan ended, it lowers the mark itself.  A timer it could see and
 * that is due by now is in the walk, unless it is below the mark the walk
 * started at, which the same rule, one scan earlier, forbids.  A deleted
 * timer that comes back (its deleting transaction rolls back) was visible to
 * every scan until then.
 *
 * A prepared transaction leaves its backend but is still in progress: its
 * least due time moves to the database's "prepared", which counts in
 * "pending" until the database has no prepared transaction any more.  A
 * server restart starts every mark at the beginning of time, and so does a
 * database whose entry was taken by another (more databases than
 * durable.max_databases).  A COPY into durable.timers (a restore) lowers
 * the mark to the beginning of time (launcher.c's ProcessUtility hook).
 * Rows written any other way (an INSERT by hand) publish nothing: the worker
 * walks from the beginning once every durable.timer_full_scan_interval, so
 * that such a timer is late by at most that much.
 *
 * Only the timer worker uses and moves the mark (its due scans and its
 * probe for the next due time); durable.tick() walks from the beginning.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/timestamp.h"

#include "store/due_mark.h"
#include "store/spi.h"
#include "store/worker_slots.h"

typedef struct DueMarkEntry
{
	slock_t		mutex;
	Oid			dboid;			/* InvalidOid: free */
	uint64		last_used;
	uint64		scan;			/* bumped by each DueMarkBegin */
	TimestampTz mark;			/* no live timer is due before it */
	TimestampTz lowered;		/* least due time published since the scan */
	TimestampTz prepared;		/* least due time of prepared transactions */
	uint64		prepared_count; /* bumped by each PREPARE that has one */
} DueMarkEntry;

/* A backend's timers in progress: its database, their least due time */
typedef struct DueMarkBackend
{
	Oid			dboid;
	pg_atomic_uint64 pending;	/* a TimestampTz; DT_NOEND: none */
} DueMarkBackend;

typedef struct DueMarkShared
{
	slock_t		mutex;			/* for use_counter and taking entries */
	uint64		use_counter;
	int			nentries;
	int			nbackends;
	DueMarkEntry entries[FLEXIBLE_ARRAY_MEMBER];
	/* then the DueMarkBackend array */
} DueMarkShared;

static DueMarkShared *due_marks = NULL;
static DueMarkBackend *due_backends = NULL;

/* This backend's entry of due_backends is set (until its transaction ends) */
static bool pending_set = false;
static bool callback_registered = false;
/* The entry of its database this backend found last (a hint) */
static int	entry_hint = -1;

static int
backend_slots(void)
{
	return MaxBackends + NUM_AUXILIARY_PROCS;
}

static Size
entries_size(void)
{
	return MAXALIGN(add_size(offsetof(DueMarkShared, entries),
							 mul_size(sizeof(DueMarkEntry), durable_max_databases)));
}

/* Shared memory this module needs (MaxBackends is known by then). */
Size
DueMarkShmemSize(void)
{
	return add_size(entries_size(),
					mul_size(sizeof(DueMarkBackend), backend_slots()));
}

/* Create or attach the marks (under AddinShmemInitLock). */
void
DueMarkShmemInit(void)
{
	bool		found;
	int			i;

	due_marks = ShmemInitStruct("durable due marks", DueMarkShmemSize(), &found);
	due_backends = (DueMarkBackend *) ((char *) due_marks + entries_size());
	if (!found)
	{
		SpinLockInit(&due_marks->mutex);
		due_marks->use_counter = 0;
		due_marks->nentries = durable_max_databases;
		due_marks->nbackends = backend_slots();
		for (i = 0; i < due_marks->nentries; i++)
		{
			memset(&due_marks->entries[i], 0, sizeof(DueMarkEntry));
			SpinLockInit(&due_marks->entries[i].mutex);
		}
		for (i = 0; i < due_marks->nbackends; i++)
		{
			due_backends[i].dboid = InvalidOid;
			pg_atomic_init_u64(&due_backends[i].pending, (uint64) DT_NOEND);
		}
	}
}

static inline TimestampTz
read_ts(pg_atomic_uint64 *v)
{
	return (TimestampTz) pg_atomic_read_u64(v);
}

/* This backend's entry of due_backends, or NULL. */
static DueMarkBackend *
my_backend(void)
{
	if (due_marks == NULL || MyProc == NULL ||
		MyProc->pgprocno < 0 || MyProc->pgprocno >= due_marks->nbackends)
		return NULL;
	return &due_backends[MyProc->pgprocno];
}

/*
 * The entry of this database, locked, or NULL when it has none.  With
 * create, a database without one takes a free entry or the least recently
 * used one, whose mark starts at the beginning of time.
 */
static DueMarkEntry *
lock_entry(bool create)
{
	DueMarkEntry *e;
	int			i;
	int			victim = -1;
	uint64		oldest = PG_UINT64_MAX;
	uint64		now;

	if (due_marks == NULL || !OidIsValid(MyDatabaseId))
		return NULL;
	if (entry_hint >= 0)
	{
		e = &due_marks->entries[entry_hint];
		SpinLockAcquire(&e->mutex);
		if (e->dboid == MyDatabaseId)
			return e;
		SpinLockRelease(&e->mutex);
		entry_hint = -1;
	}
	for (i = 0; i < due_marks->nentries; i++)
	{
		e = &due_marks->entries[i];
		/* An unlocked look first: most entries are another database's. */
		if (e->dboid != MyDatabaseId && !create)
			continue;
		SpinLockAcquire(&e->mutex);
		if (e->dboid == MyDatabaseId)
		{
			entry_hint = i;
			return e;
		}
		if (e->last_used < oldest)
		{
			oldest = e->last_used;
			victim = i;
		}
		SpinLockRelease(&e->mutex);
	}
	if (!create || victim < 0)
		return NULL;

	SpinLockAcquire(&due_marks->mutex);
	now = ++due_marks->use_counter;
	SpinLockRelease(&due_marks->mutex);
	e = &due_marks->entries[victim];
	SpinLockAcquire(&e->mutex);
	if (e->dboid != MyDatabaseId)
	{
		e->dboid = MyDatabaseId;
		e->mark = DT_NOBEGIN;
		e->lowered = DT_NOEND;
		e->prepared = DT_NOEND;
		e->prepared_count = 0;
		e->scan++;
	}
	e->last_used = now;
	entry_hint = victim;
	return e;
}

/*
 * At the end of a transaction that published a due time: empty this
 * backend's entry (at commit, after the commit is visible to new
 * snapshots).  A prepared transaction hands it to its database's entry.
 */
static void
due_mark_xact_callback(XactEvent event, void *arg)
{
	DueMarkBackend *me;
	TimestampTz pending;
	DueMarkEntry *e;

	if (!pending_set)
		return;
	if (event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT &&
		event != XACT_EVENT_PREPARE &&
		event != XACT_EVENT_PARALLEL_COMMIT && event != XACT_EVENT_PARALLEL_ABORT)
		return;
	me = my_backend();
	if (me == NULL)
		return;
	pending = read_ts(&me->pending);
	if (event == XACT_EVENT_PREPARE)
	{
		/* Kept until no transaction is prepared (DueMarkBegin). */
		e = lock_entry(true);
		if (e != NULL)
		{
			if (pending < e->prepared)
				e->prepared = pending;
			e->prepared_count++;
			SpinLockRelease(&e->mutex);
		}
	}
	pg_atomic_write_u64(&me->pending, (uint64) DT_NOEND);
	pending_set = false;
}

/*
 * A timer due at due_at is about to be written (inserted, or moved there)
 * by this transaction: keep the marks at or below it.  Call it before the
 * row is written.
 */
void
DueMarkNoteWrite(TimestampTz due_at)
{
	DueMarkBackend *me = my_backend();
	DueMarkEntry *e;

	if (me == NULL)
		return;
	if (!callback_registered)
	{
		RegisterXactCallback(due_mark_xact_callback, NULL);
		callback_registered = true;
	}
	if (me->dboid != MyDatabaseId)
		me->dboid = MyDatabaseId;
	if (!pending_set || due_at < read_ts(&me->pending))
	{
		pg_atomic_write_u64(&me->pending, (uint64) due_at);
		pending_set = true;
	}
	/* Published before the lowering below: a scan sees one or the other. */
	pg_memory_barrier();
	e = lock_entry(false);
	if (e == NULL)
		return;					/* no mark: scans start at the beginning */
	if (due_at < e->mark)
		e->mark = due_at;
	if (due_at < e->lowered)
		e->lowered = due_at;
	SpinLockRelease(&e->mutex);
}

static KeptPlan prepared_here = {
	NULL, "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_prepared_xacts"
	" WHERE database = pg_catalog.current_database())",
	0, {InvalidOid}
};

/*
 * Whether some transaction of this database is prepared (it may hold a
 * timer not yet visible).  pg_prepared_xacts reads shared memory, not a
 * snapshot.  Needs an SPI connection.
 */
static bool
any_prepared_here(void)
{
	bool		isnull;
	bool		any;

	RunPlan(&prepared_here, NULL, NULL, true, 1);
	any = DatumGetBool(SPIGetDatum(0, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	return any;
}

/*
 * Begin a due scan that may move the mark: call it before the scan takes
 * its snapshot, with an SPI connection.  Fills *dm and returns the due time the walk starts at;
 * with full, the beginning of time (the periodic walk of everything).
 */
TimestampTz
DueMarkBegin(DueMarkScan *dm, bool full)
{
	DueMarkEntry *e;
	TimestampTz pending = DT_NOEND;
	uint64		prepared_count = 0;
	bool		prepared_any = false;
	int			i;

	dm->valid = false;
	dm->start = DT_NOBEGIN;
	e = lock_entry(true);
	if (e == NULL)
		return DT_NOBEGIN;
	if (e->prepared != DT_NOEND)
	{
		prepared_any = true;
		prepared_count = e->prepared_count;
	}
	SpinLockRelease(&e->mutex);

	/*
	 * Outside the spinlock: a prepared transaction that ended before this
	 * check is committed or gone before the snapshot is taken.
	 */
	if (prepared_any && !any_prepared_here())
	{
		e = lock_entry(true);
		if (e == NULL)
			return DT_NOBEGIN;
		if (e->prepared_count == prepared_count)
			e->prepared = DT_NOEND;
		SpinLockRelease(&e->mutex);
	}

	e = lock_entry(true);
	if (e == NULL)
		return DT_NOBEGIN;
	dm->scan = ++e->scan;
	e->lowered = DT_NOEND;
	dm->start = full ? DT_NOBEGIN : e->mark;
	pending = e->prepared;
	SpinLockRelease(&e->mutex);

	/* After "lowered" was emptied: a writer is in one or the other. */
	pg_memory_barrier();
	for (i = 0; i < due_marks->nbackends; i++)
	{
		TimestampTz t;

		if (due_backends[i].dboid != MyDatabaseId)
			continue;
		t = read_ts(&due_backends[i].pending);
		if (t < pending)
			pending = t;
	}
	dm->pending = pending;
	dm->valid = true;
	return dm->start;
}

/*
 * End the scan begun by DueMarkBegin: first_seen is the due time of the
 * first timer its snapshot saw, or the end of the walk (now) when it saw
 * none.  Moves the mark (see the head of the file); returns it.
 */
TimestampTz
DueMarkEnd(DueMarkScan *dm, TimestampTz first_seen)
{
	DueMarkEntry *e;
	TimestampTz mark;

	if (!dm->valid)
		return DT_NOBEGIN;
	dm->valid = false;
	e = lock_entry(false);
	if (e == NULL)
		return DT_NOBEGIN;
	if (e->scan == dm->scan)
	{
		mark = Min(first_seen, dm->pending);
		mark = Min(mark, e->lowered);
		mark = Min(mark, e->prepared);
		e->mark = mark;
	}
	mark = e->mark;
	SpinLockRelease(&e->mutex);
	return mark;
}

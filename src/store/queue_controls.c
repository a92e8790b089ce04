/*-------------------------------------------------------------------------
 *
 * queue_controls.c
 *	  Which task queues of a database may be paused or limited, so that the
 *	  schedules and claims of the others skip their probes.
 *
 * Every task scheduled asks whether its queue is paused and whether it has
 * limits (TaskQueuePaused in direct.c, TaskQueueLimited in task_limits.c),
 * every claim whether its queue has limits (TaskLimitAdmit), every task
 * that ends whether it holds a start under a concurrency limit
 * (TaskLimitEnded): a probe of an index each, five of them a task, some
 * 3 % of the instructions of an activity cycle done with eager dispatch,
 * on a queue that has never been paused or limited, as most are.
 *
 * So each database has a slot in shared memory that says which of its
 * queues (namespace and name, hashed) may have rows in its four tables of
 * queue controls (durable.paused_task_queues, task_queue_limits,
 * task_key_limits, task_starts): not known yet, the queues listed, or any
 * queue.  The first probe of a database not known yet reads the four tables
 * (every row, live, dead or not yet committed, lists its queue; too many
 * queues make it any) and records the list unless a writer said any
 * meanwhile.  Queues are listed until the server restarts.
 *
 * Every row of those tables is written by a statement, and a writer lists
 * its queue before the statement writes it:
 *
 * - The engine (pause_task_queue, set_task_queue_limits,
 *   set_task_key_limits, a start under a concurrency limit) names its queue
 *   (QueueControlsEngineWrite) just before it runs the statement.
 * - Any other statement that may insert into or update one of the tables
 *   (an INSERT, UPDATE or MERGE, a data-modifying WITH, a COPY FROM, as a
 *   data-only restore runs) makes the database's list any: the ExecutorStart
 *   hook of claim_mark.c and launcher.c's ProcessUtility hook call
 *   QueueControlsTableWritten.  The engine's own statement is told from
 *   those by the name it gave, good for the first statement of its
 *   transaction and subtransaction that writes a table of controls.
 *
 * Why a probe that finds its queue unlisted answers as the tables would: it
 * reads the list after its snapshot was taken (a claim's, or the
 * statement's), and a row of its queue is written only after the queue was
 * listed, so after the probe's snapshot, which would not have seen it (a
 * dirty snapshot, which sees rows in progress, would not have seen a row not
 * yet written either).
 *
 * What it cannot see: rows written without a statement, by logical
 * replication's apply worker into a subscriber where durable runs on the
 * replicated tables.  On a standby (where nothing claims or schedules)
 * every probe is made and nothing is recorded, so that a promoted standby
 * reads its tables first.  More databases than slots: the others probe.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "common/hashfn.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "base/util.h"
#include "store/queue_controls.h"

#define QUEUE_CONTROLS_DATABASES	64
/* Queues listed in a database; more make it any */
#define QUEUE_CONTROLS_QUEUES		32

/* What a database's slot says */
#define STATE_UNKNOWN	0		/* not known yet: probe, and read the tables */
#define STATE_LISTED	1		/* only the queues listed may have controls */
#define STATE_ANY		2		/* any queue may */

typedef struct QueueControlsSlot
{
	slock_t		mutex;			/* taken by writers */
	pg_atomic_uint32 dboid;		/* InvalidOid: free */
	pg_atomic_uint32 state;
	pg_atomic_uint32 nqueues;
	uint64		queues[QUEUE_CONTROLS_QUEUES];	/* hashes of the queues */
} QueueControlsSlot;

typedef struct QueueControlsShared
{
	slock_t		mutex;			/* taken to give a database a slot */
	QueueControlsSlot slots[QUEUE_CONTROLS_DATABASES];
} QueueControlsShared;

static QueueControlsShared *queue_controls = NULL;

/* This backend's database's slot, last found; or none was free */
static int	slot_hint = -1;
static bool no_free_slot = false;

/*
 * The engine's statement about to write a table of controls: the (sub)
 * transaction it runs in, or none.
 */
static LocalTransactionId engine_write_lxid = InvalidLocalTransactionId;
static SubTransactionId engine_write_subxid = InvalidSubTransactionId;

/* The tables of queue controls */
static const char *const control_tables[] = {
	"paused_task_queues", "task_queue_limits", "task_key_limits",
	"task_starts"
};

Size
QueueControlsShmemSize(void)
{
	return MAXALIGN(sizeof(QueueControlsShared));
}

/* Create or attach the slots (under AddinShmemInitLock). */
void
QueueControlsShmemInit(void)
{
	bool		found;

	queue_controls = ShmemInitStruct("durable queue controls",
									 sizeof(QueueControlsShared), &found);
	if (!found)
	{
		SpinLockInit(&queue_controls->mutex);
		for (int i = 0; i < QUEUE_CONTROLS_DATABASES; i++)
		{
			QueueControlsSlot *s = &queue_controls->slots[i];

			SpinLockInit(&s->mutex);
			pg_atomic_init_u32(&s->dboid, InvalidOid);
			pg_atomic_init_u32(&s->state, STATE_UNKNOWN);
			pg_atomic_init_u32(&s->nqueues, 0);
		}
	}
}

/* A queue's hash, never 0 */
static uint64
queue_hash(const char *namespace, const char *task_queue)
{
	uint64		h = QueueNameHash(namespace, task_queue);

	return h == 0 ? 1 : h;
}

/*
 * This database's slot, given one (not known yet) if it has none and one is
 * free; NULL if none.
 */
static QueueControlsSlot *
database_slot(void)
{
	QueueControlsSlot *s;
	int			i;
	int			free = -1;

	if (queue_controls == NULL || !OidIsValid(MyDatabaseId) || no_free_slot)
		return NULL;
	if (slot_hint >= 0 &&
		pg_atomic_read_u32(&queue_controls->slots[slot_hint].dboid) ==
		MyDatabaseId)
		return &queue_controls->slots[slot_hint];
	SpinLockAcquire(&queue_controls->mutex);
	for (i = 0; i < QUEUE_CONTROLS_DATABASES; i++)
	{
		Oid			dboid = pg_atomic_read_u32(&queue_controls->slots[i].dboid);

		if (dboid == MyDatabaseId)
			break;
		if (!OidIsValid(dboid) && free < 0)
			free = i;
	}
	if (i == QUEUE_CONTROLS_DATABASES && free >= 0)
	{
		i = free;
		s = &queue_controls->slots[i];
		pg_atomic_write_u32(&s->state, STATE_UNKNOWN);
		pg_atomic_write_u32(&s->nqueues, 0);
		pg_write_barrier();
		pg_atomic_write_u32(&s->dboid, MyDatabaseId);
	}
	SpinLockRelease(&queue_controls->mutex);
	if (i == QUEUE_CONTROLS_DATABASES)
	{
		/* every probe of this backend is made from now on */
		no_free_slot = true;
		return NULL;
	}
	slot_hint = i;
	return &queue_controls->slots[i];
}

/* List a queue in s (its mutex held): any when the list is full */
static void
list_queue(QueueControlsSlot *s, uint64 hash)
{
	uint32		n = pg_atomic_read_u32(&s->nqueues);

	if (pg_atomic_read_u32(&s->state) == STATE_ANY)
		return;
	for (uint32 i = 0; i < n; i++)
		if (s->queues[i] == hash)
			return;
	if (n == QUEUE_CONTROLS_QUEUES)
	{
		pg_atomic_write_u32(&s->state, STATE_ANY);
		return;
	}
	s->queues[n] = hash;
	pg_write_barrier();
	pg_atomic_write_u32(&s->nqueues, n + 1);
}

/*
 * The queues of the rows of the tables (any version, in any state), at most
 * QUEUE_CONTROLS_QUEUES of them into hashes; false when there are more.
 */
static bool
read_listed_queues(uint64 *hashes, int *n)
{
	*n = 0;
	for (int t = 0; t < lengthof(control_tables); t++)
	{
		Oid			relid = DurableRelationOid(control_tables[t]);
		Relation	rel;
		TableScanDesc scan;
		TupleTableSlot *slot;
		int			ns_att;
		int			q_att;
		bool		fits = true;

		if (!OidIsValid(relid))
			continue;			/* a schema older than the table */
		rel = table_open(relid, AccessShareLock);
		ns_att = TupleDescColumnIndex(RelationGetDescr(rel), "namespace");
		q_att = TupleDescColumnIndex(RelationGetDescr(rel), "task_queue");
		if (ns_att < 0 || q_att < 0)
			elog(ERROR, "durable.%s lacks its namespace or task_queue column",
				 control_tables[t]);
		slot = table_slot_create(rel, NULL);
		scan = table_beginscan(rel, SnapshotAny, 0, NULL);
		while (fits && table_scan_getnextslot(scan, ForwardScanDirection, slot))
		{
			bool		ns_null;
			bool		q_null;
			Datum		ns = slot_getattr(slot, ns_att + 1, &ns_null);
			Datum		q = slot_getattr(slot, q_att + 1, &q_null);
			uint64		h;
			int			i;

			if (ns_null || q_null)
				continue;
			h = queue_hash(TextDatumGetCString(ns), TextDatumGetCString(q));
			for (i = 0; i < *n; i++)
				if (hashes[i] == h)
					break;
			if (i < *n)
				continue;
			if (*n == QUEUE_CONTROLS_QUEUES)
				fits = false;
			else
				hashes[(*n)++] = h;
		}
		table_endscan(scan);
		ExecDropSingleTupleTableSlot(slot);
		table_close(rel, NoLock);
		if (!fits)
			return false;
	}
	return true;
}

/* Read the tables into a slot not known yet. */
static void
learn_queues(QueueControlsSlot *s)
{
	uint64		hashes[QUEUE_CONTROLS_QUEUES];
	int			n;
	bool		fits = read_listed_queues(hashes, &n);

	SpinLockAcquire(&s->mutex);
	if (pg_atomic_read_u32(&s->dboid) == MyDatabaseId &&
		pg_atomic_read_u32(&s->state) == STATE_UNKNOWN)
	{
		/* with the queues writers listed meanwhile */
		for (int i = 0; fits && i < n; i++)
			list_queue(s, hashes[i]);
		if (pg_atomic_read_u32(&s->state) == STATE_UNKNOWN)
			pg_atomic_write_u32(&s->state, fits ? STATE_LISTED : STATE_ANY);
	}
	SpinLockRelease(&s->mutex);
}

/*
 * Whether the queue may be paused, have limits or starts under limits:
 * false only when it is known to have none.  Called after the snapshot of
 * the probe it stands for was taken.
 */
bool
QueueControlsMayExist(const char *namespace, const char *task_queue)
{
	QueueControlsSlot *s;
	uint64		hash;
	uint32		n;

	if (queue_controls == NULL || RecoveryInProgress())
		return true;
	s = database_slot();
	if (s == NULL)
		return true;
	/* after the snapshot: see the file's header */
	pg_memory_barrier();
	if (pg_atomic_read_u32(&s->state) == STATE_UNKNOWN)
		learn_queues(s);
	if (pg_atomic_read_u32(&s->state) != STATE_LISTED)
		return true;
	hash = queue_hash(namespace, task_queue);
	n = pg_atomic_read_u32(&s->nqueues);
	pg_read_barrier();
	for (uint32 i = 0; i < n; i++)
		if (s->queues[i] == hash)
			return true;
	/* the slot still this database's, as it was when read */
	pg_read_barrier();
	return pg_atomic_read_u32(&s->dboid) != MyDatabaseId;
}

/*
 * The engine is about to run a statement that writes a row of a table of
 * controls for this queue: list it, and let the statement through
 * QueueControlsTableWritten.
 */
void
QueueControlsEngineWrite(const char *namespace, const char *task_queue)
{
	QueueControlsSlot *s;

	if (queue_controls == NULL || RecoveryInProgress())
		return;
	s = database_slot();
	if (s != NULL)
	{
		SpinLockAcquire(&s->mutex);
		if (pg_atomic_read_u32(&s->dboid) == MyDatabaseId)
			list_queue(s, queue_hash(namespace, task_queue));
		SpinLockRelease(&s->mutex);
	}
	engine_write_lxid = MyProc->lxid;
	engine_write_subxid = GetCurrentSubTransactionId();
}

/*
 * A statement is about to insert into or update relid (named relname, or
 * NULL: looked up): if it is one of the tables of controls, and not the
 * engine's statement announced, any queue of this database may have
 * controls from now on.
 */
void
QueueControlsTableWritten(Oid relid, const char *relname)
{
	QueueControlsSlot *s;
	const char *control = NULL;

	if (queue_controls == NULL || !OidIsValid(relid) || RecoveryInProgress())
		return;
	if (relname == NULL)
		relname = get_rel_name(relid);
	for (int i = 0; relname != NULL && i < lengthof(control_tables); i++)
		if (strcmp(relname, control_tables[i]) == 0)
			control = control_tables[i];
	if (control == NULL)
		return;
	s = database_slot();
	if (s != NULL && pg_atomic_read_u32(&s->state) == STATE_ANY)
		return;
	if (!IsDurableTable(relid, control))
		return;
	if (engine_write_lxid == MyProc->lxid &&
		engine_write_subxid == GetCurrentSubTransactionId())
	{
		/* the engine's, its queue listed: once */
		engine_write_lxid = InvalidLocalTransactionId;
		return;
	}
	if (s == NULL)
		return;					/* no slot: every probe is made */
	SpinLockAcquire(&s->mutex);
	if (pg_atomic_read_u32(&s->dboid) == MyDatabaseId)
		pg_atomic_write_u32(&s->state, STATE_ANY);
	SpinLockRelease(&s->mutex);
}

/*
 * DROP DATABASE: its slot is free again (a database made later with the
 * same OID starts not known).
 */
void
QueueControlsDatabaseDropped(Oid dboid)
{
	if (queue_controls == NULL || !OidIsValid(dboid))
		return;
	SpinLockAcquire(&queue_controls->mutex);
	for (int i = 0; i < QUEUE_CONTROLS_DATABASES; i++)
		if (pg_atomic_read_u32(&queue_controls->slots[i].dboid) == dboid)
			pg_atomic_write_u32(&queue_controls->slots[i].dboid, InvalidOid);
	SpinLockRelease(&queue_controls->mutex);
}

/*-------------------------------------------------------------------------
 *
 * compaction.c
 *	  Giving back the index space of durable's queue tables after a held
 *	  vacuum horizon.
 *
 * durable's queue tables (ready_tasks, timers, activities, user_timers,
 * buffered_events, children) hold rows for a short while: each is deleted
 * once its task is claimed, its timer fired, its activity or run closed.
 * While something holds the vacuum horizon back (a long report, a session
 * idle in transaction, a replication slot, a standby's feedback), VACUUM
 * removes none of them, and their tables and indexes grow with every row
 * written meanwhile: after ten minutes of the activity cycle, ready_tasks
 * and timers were thirteen times their normal size (docs/performance.md "A held
 * vacuum horizon").  Once the horizon moves again, VACUUM frees that space for
 * reuse, and gives back the end of a table once the rows there are gone,
 * which in a queue table happens within a minute of work.  It never gives
 * back the pages of an index: only a rebuild does.
 *
 * So the timer worker looks at the horizon every durable.compaction_interval
 * (a minute), logs when it is held and when it moves again, and then rebuilds
 * the indexes of the queue tables that grew to more than twice (and 1 MB more
 * than) the size they had before (REINDEX TABLE).  Horizon held: it has not
 * passed the transaction id that was next at the previous look; the normal
 * sizes are the ones of the look before that.  A rebuild indexes only the rows a snapshot may
 * still see, so it is done once the horizon has moved, and only then: a
 * queue whose indexes are large in its normal work is never rebuilt.
 *
 * REINDEX without CONCURRENTLY blocks writes to the table, and reads through
 * its indexes, while it runs: for a queue table of few live rows that is the
 * time to read its heap, milliseconds to tens of them.  It is not done for a
 * table of more than COMPACT_MAX_LIVE_ROWS live rows, each table is rebuilt in
 * a transaction of its own, and waits at most COMPACT_LOCK_TIMEOUT for its
 * locks, so that it never queues the engine behind a long transaction; a
 * table it could not lock is tried again at the next looks, COMPACT_TRIES
 * times.  durable.compaction_interval = 0 turns all this off (for those who
 * rather run pg_repack).  REINDEX CONCURRENTLY blocks nothing, but
 * waits for every older snapshot and cannot run in the worker's
 * transaction; it would need a process of its own and the cleanup of the
 * invalid index an interrupted one leaves.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "access/transam.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/procarray.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "base/util.h"
#include "store/compaction.h"
#include "store/spi.h"

/* durable.compaction_interval, in seconds (0: no rebuilds) */
int			durable_compaction_interval = 60;

/* The queue tables whose rows are deleted when their work is done */
static const char *const queue_tables[] = {
	"ready_tasks", "timers", "activities", "user_timers", "buffered_events",
	"children"
};

#define N_QUEUE_TABLES lengthof(queue_tables)

/* A table is rebuilt above 2x its normal index size and 1 MB more */
#define COMPACT_GROWTH_FACTOR	2
#define COMPACT_MIN_GROWTH		(1024 * 1024)
/* Not above this many live rows: the rebuild would block too long */
#define COMPACT_MAX_LIVE_ROWS	100000
#define COMPACT_LOCK_TIMEOUT	"100ms"
#define COMPACT_TRIES			10

/* What the worker remembers between looks (worker-local) */
static bool looked = false;
static TransactionId next_at_last_look = InvalidTransactionId;
static bool horizon_was_held = false;
static int64 normal_index_bytes[N_QUEUE_TABLES];
static int64 last_index_bytes[N_QUEUE_TABLES];
static int	tries_left[N_QUEUE_TABLES];
static bool rebuild_wanted[N_QUEUE_TABLES];

static KeptPlan table_sizes = {
	NULL, "SELECT pg_catalog.pg_indexes_size(c.oid),"
	" pg_catalog.pg_stat_get_live_tuples(c.oid)"
	" FROM pg_catalog.pg_class c WHERE c.oid = $1",
	1, {OIDOID}
};

/* The index bytes and live rows of durable's table relid. */
static void
index_size(Oid relid, int64 *bytes, int64 *live)
{
	Datum		arg = ObjectIdGetDatum(relid);
	bool		isnull;

	*bytes = 0;
	*live = 0;
	if (RunPlan(&table_sizes, &arg, NULL, true, 1) == 0)
		return;
	*bytes = DatumGetInt64(SPIGetDatum(0, 1, &isnull));
	*live = DatumGetInt64(SPIGetDatum(0, 2, &isnull));
	SPI_freetuptable(SPI_tuptable);
}

static void
run_statement(void *arg)
{
	if (SPI_execute((const char *) arg, false, 0) < 0)
		elog(ERROR, "\"%s\" failed", (const char *) arg);
}

/*
 * Rebuild the indexes of one table, waiting at most COMPACT_LOCK_TIMEOUT
 * for its locks; returns false when it could not get them (or failed), in a
 * subtransaction, so that the failure is logged as what it is (a LOG line,
 * not an ERROR of the worker).
 */
static bool
reindex_table(const char *name)
{
	int			guc_level = NewGUCNestLevel();
	char	   *sql = psprintf("REINDEX TABLE durable.%s", quote_identifier(name));
	ErrorData  *edata;

	(void) set_config_option("lock_timeout", COMPACT_LOCK_TIMEOUT,
							 PGC_SUSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	edata = RunInSubtransaction(run_statement, sql);
	AtEOXact_GUC(edata == NULL, guc_level);
	if (edata == NULL)
		return true;
	if (ErrorIsCancel(edata))
		ReThrowError(edata);
	ereport(LOG,
			(errmsg("durable could not rebuild the indexes of durable.%s: %s",
					name, edata->message),
			 errdetail("It tries again at the next look.")));
	FreeErrorData(edata);
	return false;
}

/*
 * One look (the timer worker's, every durable.compaction_interval, in its
 * own transaction with an SPI connection): note whether the horizon is held,
 * and after a held horizon choose the tables whose indexes grew meanwhile.
 * Returns how many were chosen: RebuildQueueTable rebuilds them, each in a
 * transaction of its own, so that the locks of one are not held while the
 * next one waits for its own (the engine's transactions write several of
 * these tables, and would wait for the first while the second waits for
 * them).
 */
int
CompactQueueTables(void)
{
	Oid			nsp = get_namespace_oid("durable", true);
	Oid			relids[N_QUEUE_TABLES];
	TransactionId next = ReadNextTransactionId();
	TransactionId horizon;
	bool		held;
	int			wanted = 0;
	int			i;
	Relation	rel;

	if (!OidIsValid(nsp))
		return 0;
	for (i = 0; i < N_QUEUE_TABLES; i++)
		relids[i] = get_relname_relid(queue_tables[i], nsp);
	if (!OidIsValid(relids[0]))
		return 0;

	/* The horizon VACUUM would use for durable's tables now */
	rel = try_table_open(relids[0], AccessShareLock);
	if (rel == NULL)
		return 0;				/* DROP EXTENSION committed since the look-up */
	horizon = GetOldestNonRemovableTransactionId(rel);
	table_close(rel, AccessShareLock);
	held = looked && TransactionIdIsNormal(next_at_last_look) &&
		TransactionIdPrecedes(horizon, next_at_last_look);
	next_at_last_look = next;
	if (held && !horizon_was_held)
		ereport(LOG,
				(errmsg("durable: the vacuum horizon of database \"%s\" has not moved for %d s",
						get_database_name(MyDatabaseId), durable_compaction_interval),
				 errdetail("VACUUM removes no row deleted since transaction %u, and durable's queue tables grow until the horizon moves.",
						   horizon),
				 errhint("Look for a long transaction in pg_stat_activity, a prepared transaction, or a replication slot that holds it.")));
	else if (!held && horizon_was_held)
		ereport(LOG,
				(errmsg("durable: the vacuum horizon of database \"%s\" moves again",
						get_database_name(MyDatabaseId))));

	for (i = 0; i < N_QUEUE_TABLES; i++)
	{
		int64		bytes;
		int64		live;

		rebuild_wanted[i] = false;
		if (!OidIsValid(relids[i]))
			continue;
		index_size(relids[i], &bytes, &live);
		if (!looked || (!held && !horizon_was_held && tries_left[i] == 0))
		{
			/*
			 * A normal look.  The size to come back to is the one of the look
			 * before: a horizon found held at the next look may have stopped
			 * just after this one (it has not passed the next transaction id
			 * of this look), but not before the one before.
			 */
			normal_index_bytes[i] = looked ? last_index_bytes[i] : bytes;
			last_index_bytes[i] = bytes;
			continue;
		}
		if (held)
		{
			tries_left[i] = COMPACT_TRIES;
			continue;
		}
		if (tries_left[i] == 0)
			continue;
		/* The horizon has moved since it was held: rebuild what grew. */
		if (bytes <= normal_index_bytes[i] * COMPACT_GROWTH_FACTOR ||
			bytes - normal_index_bytes[i] <= COMPACT_MIN_GROWTH ||
			live > COMPACT_MAX_LIVE_ROWS)
		{
			tries_left[i] = 0;
			continue;
		}
		rebuild_wanted[i] = true;
		wanted++;
	}
	horizon_was_held = held;
	looked = true;
	return wanted;
}

/*
 * Rebuild the indexes of the next table CompactQueueTables chose (in the
 * caller's transaction, which should do nothing else, with an SPI
 * connection).  Returns 1 when it tried one, 0 when none is left.
 */
int
RebuildQueueTable(void)
{
	Oid			nsp = get_namespace_oid("durable", true);
	int			i;

	for (i = 0; i < N_QUEUE_TABLES; i++)
	{
		Oid			relid;
		int64		before;
		int64		after;
		int64		live;

		if (!rebuild_wanted[i])
			continue;
		rebuild_wanted[i] = false;	/* tried once this look, whatever happens */
		relid = OidIsValid(nsp) ? get_relname_relid(queue_tables[i], nsp) : InvalidOid;
		if (!OidIsValid(relid))
			return 1;
		index_size(relid, &before, &live);
		if (!reindex_table(queue_tables[i]))
		{
			if (tries_left[i] > 0)
				tries_left[i]--;
			return 1;
		}
		tries_left[i] = 0;
		index_size(relid, &after, &live);
		ereport(LOG,
				(errmsg("durable rebuilt the indexes of durable.%s after a held vacuum horizon: %lld kB, %lld kB before",
						queue_tables[i], (long long) (after / 1024),
						(long long) (before / 1024))));
		return 1;
	}
	return 0;
}

/*-------------------------------------------------------------------------
 *
 * timer_worker.c
 *	  The timer worker of one database.
 *
 * It fires due timers through the same code as durable.tick(), a batch of
 * durable.worker_batch_size per transaction (SKIP LOCKED, so that it never
 * collides with durable.tick() or another ticker), then sleeps on its latch
 * until the next due time, at most durable.worker_max_sleep.  A backend that
 * commits a timer due before that sets the latch (store/worker_slots.c); while the
 * worker is awake, it only records the due time, which the worker reads
 * before it sleeps (TimerWorkerSleepsUntil): setting the latch then would
 * send a worker whose round is slow round again and again.  Due scans start
 * at a low-water mark (due_mark.c), and once every
 * durable.timer_full_scan_interval at the beginning.  A batch that fails
 * is done again one timer per subtransaction; a timer that fails alone is
 * logged and put off, and the worker lives on.
 *
 * A due timer whose run is locked elsewhere (a SQL activity running past a
 * timeout of its run, a long transaction) is skipped and stays due.  When a
 * round fires nothing while timers are due, the worker does not go round
 * again at once, which would spin at full CPU for as long as the lock is
 * held: it sleeps LOCKED_BACKOFF_MIN_MS, doubling up to LOCKED_BACKOFF_MAX_MS
 * while rounds keep firing nothing, so that the timer still fires within
 * about a second of the lock's release.
 *
 * After each round of timers it works through a slice of a batch operation
 * (BATCH_SLICE runs, api/batch.c) in a transaction of its own, and goes
 * round again at once while a job has runs left, so that timers wait for
 * one slice at most.
 *
 * Once a minute it also purges closed runs and finished batch jobs past
 * their namespace's retention (retention.c), a batch of PURGE_BATCH runs and
 * PURGE_BATCH jobs per transaction, and sooner
 * again while batches come back full, between rounds of timers; and looks
 * at the queue tables, whose indexes it rebuilds after a held vacuum
 * horizon (compaction.c).
 *
 * Once it has found the extension, the launcher starts the database's
 * executor workers (executor_worker.c).  At each wakeup it is also their
 * watchdog (ExecutorWatchdog: it wakes by the earliest time limit of their
 * user code plus durable.executor_grace), and it records the end of the
 * tasks that exited executors left (RecoverExecutorTasks, executor.c).
 *
 * It exits when the extension is not (or no longer) installed, and on
 * SIGTERM (the launcher stops every worker when durable.worker_enabled is
 * turned off in the server's configuration); at once when another process
 * is its database's timer worker already (TimerWorkerAttach).
 *
 * Where durable.worker_enabled is off for its database (ALTER DATABASE ...
 * SET, e.g. a copy restored from a backup, docs/operations.md "Backup"), it idles: it
 * fires no timer, purges nothing and does not have the executors started,
 * and it reads the setting again every durable.worker_max_sleep and on
 * SIGHUP.  It stays, so that the launcher does not start it again and
 * again; the executors idle likewise (executor_worker.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_db_role_setting.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "base/util.h"
#include "store/compaction.h"
#include "store/due_mark.h"
#include "store/retention.h"
#include "store/spi.h"
#include "store/worker_slots.h"
#include "sqlwf/executor.h"
#include "api/batch.h"
#include "api/timer_fire.h"
#include "bgw/launcher.h"
#include "bgw/timer_worker.h"

/* durable.worker_batch_size, durable.timer_full_scan_interval */
int			durable_worker_batch_size = 1000;
int			durable_timer_full_scan_interval = 60;

PGDLLEXPORT void DurableTimerWorkerMain(Datum main_arg);

/*
 * The next due time (from the low-water mark, due_mark.c), and the next one
 * after now, probed only when every due timer was skipped
 */
static KeptPlan next_due = {
	NULL, "SELECT min(due_at) FROM durable.timers WHERE due_at >= $1",
	1, {TIMESTAMPTZOID}
};
static KeptPlan next_due_later = {
	NULL, "SELECT min(due_at) FROM durable.timers WHERE due_at > $1",
	1, {TIMESTAMPTZOID}
};

/* Wait after an unexpected error, so that a broken database is not spun on */
#define ERROR_BACKOFF_MS 1000L

/* Pause while every due timer's run is locked elsewhere: grows to the max */
#define LOCKED_BACKOFF_MIN_MS 10L
#define LOCKED_BACKOFF_MAX_MS 1000L

/* Retention: runs purged per transaction, and how often */
#define PURGE_BATCH 500
#define PURGE_INTERVAL_MS 60000L

/*
 * Whether durable.worker_enabled is on for this database (inside a
 * transaction): its ALTER DATABASE setting, read from pg_db_role_setting
 * each time, since a process sees its database's settings only as they were
 * when it connected.  True without such a setting: the server's value is
 * the launcher's, which stops every worker when it is off.
 */
bool
DatabaseWorkersEnabled(void)
{
	Relation	rel;
	ScanKeyData keys[2];
	SysScanDesc scan;
	HeapTuple	tup;
	bool		enabled = true;

	rel = table_open(DbRoleSettingRelationId, AccessShareLock);
	ScanKeyInit(&keys[0], Anum_pg_db_role_setting_setdatabase,
				BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(MyDatabaseId));
	ScanKeyInit(&keys[1], Anum_pg_db_role_setting_setrole,
				BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(InvalidOid));
	scan = systable_beginscan(rel, DbRoleSettingDatidRolidIndexId, true,
							  NULL, 2, keys);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		bool		isnull;
		Datum		config;
		Datum	   *elems;
		int			nelems;
		int			i;

		config = heap_getattr(tup, Anum_pg_db_role_setting_setconfig,
							  RelationGetDescr(rel), &isnull);
		if (isnull)
			continue;
		deconstruct_array(DatumGetArrayTypeP(config), TEXTOID, -1, false,
						  TYPALIGN_INT, &elems, NULL, &nelems);
		for (i = 0; i < nelems; i++)
		{
			char	   *item = TextDatumGetCString(elems[i]);
			char	   *eq = strchr(item, '=');
			bool		value;

			if (eq == NULL)
				continue;
			*eq = '\0';
			if (pg_strcasecmp(item, "durable.worker_enabled") == 0 &&
				parse_bool(eq + 1, &value))
				enabled = value;
		}
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return enabled;
}

/* Run a probe of timers_due: min(due_at) from "from", DT_NOEND if none. */
static TimestampTz
probe_due(KeptPlan *plan, TimestampTz from)
{
	Datum		d = TimestampTzGetDatum(from);
	bool		isnull;
	TimestampTz due;

	RunPlan(plan, &d, NULL, true, 1);
	d = SPIGetDatum(0, 1, &isnull);
	due = isnull ? DT_NOEND : DatumGetTimestampTz(d);
	SPI_freetuptable(SPI_tuptable);
	return due;
}

/*
 * One batch: fire due timers from the low-water mark (from the beginning of
 * time with full), move the mark, learn the next due time.  Returns the
 * number fired; sets *next, and when nothing fired though timers are due,
 * *next_later to the first due time after the batch began (else DT_NOEND).
 */
static int
run_batch(bool careful, bool full, TimestampTz *next, TimestampTz *next_later)
{
	int			fired;
	DueMarkScan dm;
	TimestampTz start;
	TimestampTz first_seen;
	TimestampTz mark;
	TimestampTz now = GetCurrentTimestamp();

	DurableSPIConnect();
	start = DueMarkBegin(&dm, full);
	fired = FireDueTimersCarefully(start, now, durable_worker_batch_size,
								   careful, &first_seen);
	mark = DueMarkEnd(&dm, first_seen);
	*next = probe_due(&next_due, mark);
	*next_later = DT_NOEND;
	if (fired == 0 && *next != DT_NOEND && *next <= now)
		*next_later = probe_due(&next_due_later, now);
	DurableSPIFinish();
	return fired;
}

/* The maintenance steps of the worker, each in its own transaction */
static int
purge_step(void)
{
	TimestampTz now = GetCurrentTimestamp();
	int			runs = PurgeClosedRuns(now, PURGE_BATCH);
	int			jobs = PurgeFinishedBatches(now, PURGE_BATCH);

	/* the larger: either full brings the next batch sooner */
	return Max(runs, jobs);
}

/*
 * A slice of a batch operation (api/batch.c), where the database has them
 * (updated to 0.8.0).  Returns 0 when there was no job to work on, else at
 * least 1 (a job that had no run left has completed: the next goes on).
 */
static int
batch_step(void)
{
	bool		found;
	int			done;

	if (!OidIsValid(DurableRelationOid("batch_jobs")))
		return 0;
	done = RunBatchSlice(BATCH_SLICE, true, &found);
	return found ? Max(done, 1) : 0;
}

/*
 * Run a maintenance step in its own transaction with an SPI connection;
 * returns its count.  An error is logged and counts 0.
 */
static int
maintenance_step(MemoryContext cxt, int (*step) (void), const char *activity)
{
	volatile int count = 0;

	PG_TRY();
	{
		MemoryContext old = MemoryContextSwitchTo(cxt);

		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		pgstat_report_activity(STATE_RUNNING, activity);
		if (DurableLockExtension())	/* held against DROP EXTENSION */
		{
			SPI_connect();
			count = step();
			SPI_finish();
		}
		PopActiveSnapshot();
		CommitTransactionCommand();
		pgstat_report_activity(STATE_IDLE, NULL);
		MemoryContextSwitchTo(old);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		EmitErrorReport();
		FlushErrorState();
		AbortCurrentTransaction();
		pgstat_report_activity(STATE_IDLE, NULL);
		count = 0;
	}
	PG_END_TRY();
	return count;
}

/*
 * One purge batch, then, every durable.compaction_interval, a look at the
 * queue tables (compaction.c); returns when the next of them is due: at once
 * while purge batches come back full.
 */
static TimestampTz
purge_batch(MemoryContext cxt, TimestampTz *next_compaction)
{
	int			purged = maintenance_step(cxt, purge_step,
										  "purging closed durable runs");
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz next;

	if (durable_compaction_interval > 0 && now >= *next_compaction)
	{
		MemoryContextReset(cxt);
		if (maintenance_step(cxt, CompactQueueTables,
							 "looking at durable's queue tables") > 0)
		{
			/* One table a transaction (compaction.c) */
			do
				MemoryContextReset(cxt);
			while (maintenance_step(cxt, RebuildQueueTable,
									"rebuilding the indexes of a durable queue table") > 0);
		}
		now = GetCurrentTimestamp();
		*next_compaction = now +
			(int64) durable_compaction_interval * USECS_PER_SEC;
	}
	next = purged >= PURGE_BATCH ? now : now + PURGE_INTERVAL_MS * 1000;
	if (durable_compaction_interval > 0)
		next = Min(next, *next_compaction);
	return next;
}

/* Entry point of a database's timer worker; main_arg is the database oid. */
void
DurableTimerWorkerMain(Datum main_arg)
{
	Oid			dboid = DatumGetObjectId(main_arg);
	MemoryContext loop_cxt;
	volatile bool careful = false;
	volatile TimestampTz next_purge = 0;
	volatile TimestampTz next_compaction = 0;
	volatile long locked_backoff_ms = 0;
	volatile bool was_enabled = true;
	volatile TimestampTz last_full_scan = 0;
	static char *dbname = NULL;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);
	pgstat_report_appname("durable timer worker");
	/* Nothing this session runs looks up names in a schema users can write */
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_SUSET,
					PGC_S_SESSION);
	TimerWorkerAttach();
	before_shmem_exit(TimerWorkerDetachCallback, (Datum) 0);

	loop_cxt = AllocSetContextCreate(TopMemoryContext, "durable timer worker",
									 ALLOCSET_DEFAULT_SIZES);

	for (;;)
	{
		volatile TimestampTz next = DT_NOEND;
		volatile TimestampTz next_later = DT_NOEND;
		volatile long sleep_ms = 0;
		volatile int fired = 0;
		TimestampTz watch;
		volatile bool installed = true;
		volatile bool enabled = true;
		bool		full = false;
		uint32		extension_commits;

		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		/* Awake: what commits now is read before the next sleep. */
		(void) TimerWorkerSleepsUntil(0);
		MemoryContextReset(loop_cxt);
		/* Now and then from the beginning (due_mark.c); the interval as set now */
		if (last_full_scan == 0 ||
			GetCurrentTimestamp() >= last_full_scan +
			(int64) durable_timer_full_scan_interval * USECS_PER_SEC)
		{
			full = true;
			last_full_scan = GetCurrentTimestamp();
		}

		/* Before the snapshot that looks for the extension (TimerWorkerDetach) */
		extension_commits = TimerWorkerExtensionCommits();
		PG_TRY();
		{
			MemoryContext old = MemoryContextSwitchTo(loop_cxt);

			SetCurrentStatementStartTimestamp();
			StartTransactionCommand();
			PushActiveSnapshot(GetTransactionSnapshot());
			pgstat_report_activity(STATE_RUNNING, "firing durable timers");
			installed = DurableLockExtension();	/* held, as above */
			enabled = DatabaseWorkersEnabled();
			if (!enabled && dbname == NULL)
			{
				char	   *name = get_database_name(MyDatabaseId);

				if (name != NULL)
					dbname = MemoryContextStrdup(TopMemoryContext, name);
			}
			if (installed && enabled)
			{
				TimerWorkerFoundExtension();	/* the executors may start */
				fired = run_batch(careful, full, (TimestampTz *) &next,
								  (TimestampTz *) &next_later);
			}
			PopActiveSnapshot();
			CommitTransactionCommand();
			pgstat_report_stat(false);
			pgstat_report_activity(STATE_IDLE, NULL);
			MemoryContextSwitchTo(old);
			careful = false;
		}
		PG_CATCH();
		{
			MemoryContextSwitchTo(loop_cxt);
			EmitErrorReport();
			FlushErrorState();
			AbortCurrentTransaction();
			pgstat_report_activity(STATE_IDLE, NULL);
			/* Do the batch again one timer at a time, after a pause. */
			careful = true;
			sleep_ms = ERROR_BACKOFF_MS;
			next = DT_NOEND;
			next_later = DT_NOEND;
		}
		PG_END_TRY();

		if (!installed)
		{
			TimerWorkerDetach(true, extension_commits);
			proc_exit(0);
		}
		if (enabled != was_enabled)
		{
			if (!enabled)
				ereport(LOG,
						(errmsg("durable workers idle in database \"%s\": durable.worker_enabled is off for it",
								dbname ? dbname : "?"),
						 errhint("ALTER DATABASE ... SET durable.worker_enabled = on lets them work.")));
			was_enabled = enabled;
		}
		if (!enabled)
		{
			/* Read the setting again after a while, or on SIGHUP. */
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 (long) durable_worker_max_sleep * 1000L,
							 PG_WAIT_EXTENSION);
			continue;
		}
		/* The executors' time limits, and the tasks of those that exited */
		watch = ExecutorWatchdog();
		if (installed)
			RecoverExecutorTasks(-1, loop_cxt);
		if (GetCurrentTimestamp() >= next_purge)
		{
			MemoryContextReset(loop_cxt);
			next_purge = purge_batch(loop_cxt, (TimestampTz *) &next_compaction);
		}
		/* A slice of a batch operation: bounded, so that timers wait little */
		MemoryContextReset(loop_cxt);
		if (maintenance_step(loop_cxt, batch_step,
							 "running durable batch operations") > 0)
			continue;			/* more to do, after the timers due */
		if (fired >= durable_worker_batch_size)
			continue;			/* more are due */

		if (sleep_ms == 0)
		{
			TimestampTz now = GetCurrentTimestamp();

			sleep_ms = (long) durable_worker_max_sleep * 1000L;
			if (next_purge <= now)
				continue;
			sleep_ms = Min(sleep_ms, (long) ((next_purge - now + 999) / 1000));
			if (next != DT_NOEND && next <= now)
			{
				if (fired > 0)
				{
					locked_backoff_ms = 0;
					continue;	/* what is still due may be free now */
				}
				/*
				 * All that is due was skipped: its runs are locked.  Wait,
				 * but not past the next timer that comes due meanwhile.
				 */
				locked_backoff_ms = locked_backoff_ms == 0 ?
					LOCKED_BACKOFF_MIN_MS :
					Min(locked_backoff_ms * 2, LOCKED_BACKOFF_MAX_MS);
				sleep_ms = Min(sleep_ms, locked_backoff_ms);
				if (next_later != DT_NOEND)
					sleep_ms = Min(sleep_ms,
								   Max((long) ((next_later - now + 999) / 1000), 1L));
			}
			else if (next != DT_NOEND)
			{
				locked_backoff_ms = 0;
				/* round up: waking a little late beats spinning early */
				sleep_ms = Min(sleep_ms, (long) ((next - now + 999) / 1000));
			}
			else
				locked_backoff_ms = 0;
		}
		if (watch != DT_NOEND)
		{
			TimestampTz now = GetCurrentTimestamp();

			sleep_ms = Min(sleep_ms, Max((long) ((watch - now + 999) / 1000), 1L));
		}
		{
			TimestampTz wake_at = GetCurrentTimestamp() + (int64) sleep_ms * 1000;
			TimestampTz committed = TimerWorkerSleepsUntil(wake_at);

			/* A timer committed during the round, due before wake_at */
			if (committed < wake_at)
			{
				TimestampTz now = GetCurrentTimestamp();

				if (committed <= now)
					continue;
				sleep_ms = (long) ((committed - now + 999) / 1000);
			}
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 sleep_ms, PG_WAIT_EXTENSION);
	}
}

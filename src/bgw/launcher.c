/*-------------------------------------------------------------------------
 *
 * launcher.c
 *	  The launcher: one timer worker per database that has the extension,
 *	  and its executor workers.
 *
 * The launcher is a background worker started from shared_preload_libraries
 * once recovery has finished (so nothing runs on a standby).  It connects
 * to no database and reads the shared catalog pg_database; for every
 * database that accepts connections it starts a timer worker (bgw/timer_worker.c),
 * which exits at once where the extension is not installed.  Such databases
 * are checked again every durable.worker_max_sleep, or at once when CREATE
 * EXTENSION durable commits (it wakes the launcher).
 *
 * Each database being served has a slot in shared memory with its workers'
 * pids and latches and the time the timer worker sleeps until; a backend that
 * commits a timer due before that time sets the latch
 * (WakeTimerWorkerAtCommit).  The slot table outlives the launcher: a
 * launcher that was restarted counts a worker whose pid is in its slot as
 * running, though it has no handle of it, and a worker that finds its slot
 * taken by another process leaves at once, so that a slot never has two
 * timer workers or two executors of one index.  Workers wake the launcher
 * when they leave.  A database whose timer worker found no extension gives
 * its slot back: the launcher remembers, in its own memory, when it checked
 * it, and checks it again after NO_EXTENSION_RECHECK_SECS or as soon as
 * CREATE EXTENSION durable takes a slot for it (durable.launcher_wakeup).
 *
 * A worker that cannot be started (no free background worker slot, or no
 * free slot of durable.max_databases) is tried again every START_RETRY_MS;
 * the failure is logged at most once a minute per database, and the scan
 * goes on with the next database.
 *
 * DROP DATABASE, and CREATE DATABASE from a template that has workers, first
 * stop those workers (ProcessUtility hook), since a connected worker would
 * make them fail; only a statement that passes PostgreSQL's own checks of
 * the caller does so, and the workers start again at once if it fails.  The
 * same hook has CREATE OR REPLACE FUNCTION and DROP FUNCTION of a function
 * that running SQL workflows use checked (sqlwf/replace_guard.c).
 *
 * Once a database's timer worker has found the extension, the launcher
 * also starts durable.executor_workers executor workers there
 * (executor_worker.c), which run the tasks of SQL workflows and activities,
 * and stops or adds some when the setting changes.  They are stopped with
 * the timer worker, and idle (not restarted for a while) where the
 * extension is still at 0.1.0, until ALTER EXTENSION durable UPDATE.  A
 * commit that queues an executor task bumps the database's executor
 * generation and sets the executors' latches (WakeExecutors); an executor
 * sleeps only while the generation is the one it last saw (store/wait.c), so
 * that no wakeup is lost between its last claim and its sleep.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "utils/lsyscache.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"

#include "base/util.h"
#include "store/claim_mark.h"
#include "store/direct.h"
#include "store/due_mark.h"
#include "store/queue_controls.h"
#include "store/worker_slots.h"
#include "sqlwf/replace_guard.h"
#include "bgw/launcher.h"

/* durable.worker_enabled, durable.worker_databases, durable.worker_max_sleep */
bool		durable_worker_enabled = true;
char	   *durable_worker_databases = NULL;
int			durable_worker_max_sleep = 10;

PGDLLEXPORT void DurableLauncherMain(Datum main_arg);

/* What the launcher remembers of a database (launcher only) */
typedef struct DatabaseState
{
	Oid			dboid;			/* hash key */
	TimestampTz no_extension_at;	/* its worker found no extension then */
	TimestampTz warned_at;		/* a failure to start a worker was logged */
	uint64		seen_in_scan;	/* the last scan that saw it */
} DatabaseState;

static ProcessUtility_hook_type prev_process_utility = NULL;

/*
 * How often a database without the extension is checked again.  CREATE
 * EXTENSION wakes the launcher itself; this is only the fallback.
 */
#define NO_EXTENSION_RECHECK_SECS	300

/*
 * An executor that exited is started again at once (the launcher hears of
 * its exit), but not sooner than this after its last start, so that one
 * that fails at startup is not spun on.
 */
#define EXECUTOR_RESTART_MS		1000

/* A worker that could not be started is tried again this much later */
#define START_RETRY_MS			5000

/* A database's failures to start workers are logged at most this often */
#define START_WARNING_SECS		60

/* The launcher's handles of the workers it started, by slot */
static BackgroundWorkerHandle **worker_handles = NULL;

/* ... and of the executors, by slot * DURABLE_MAX_EXECUTORS + index */
static BackgroundWorkerHandle **executor_handles = NULL;
static TimestampTz *executor_started_at = NULL;

/* Whether a scan left a worker to start a little later (launcher only) */
static bool rescan_soon = false;

/* Whether a scan failed to start a worker, to be tried again (launcher only) */
static bool retry_start = false;

/* The databases the launcher knows of, and the number of its scans */
static HTAB *database_states = NULL;
static uint64 scan_count = 0;

/* Whether the worker of a handle is running; forgets it if not (launcher only). */
static bool
handle_running(BackgroundWorkerHandle **handle)
{
	pid_t		pid;

	if (*handle == NULL)
		return false;
	if (GetBackgroundWorkerPid(*handle, &pid) == BGWH_STOPPED)
	{
		pfree(*handle);
		*handle = NULL;
		return false;
	}
	return true;
}

/*
 * The pid in slot i of its timer worker (index -1) or of executor index,
 * 0 when none is attached (launcher only).
 */
static pid_t
attached_pid(int i, int index)
{
	pid_t		pid;

	SpinLockAcquire(&WorkerSlotTable->mutex);
	pid = index < 0 ? WorkerSlotTable->slots[i].pid :
		WorkerSlotTable->slots[i].executors[index].pid;
	SpinLockRelease(&WorkerSlotTable->mutex);
	return pid;
}

/*
 * Whether the timer worker of slot i runs: one this launcher started, or one
 * attached to the slot (started by a launcher before a restart).
 */
static bool
timer_worker_running(int i)
{
	if (handle_running(&worker_handles[i]))
		return true;
	return attached_pid(i, -1) != 0;
}

/* Whether executor k of slot i runs, as timer_worker_running says. */
static bool
executor_running(int i, int k)
{
	if (handle_running(&executor_handles[i * DURABLE_MAX_EXECUTORS + k]))
		return true;
	return attached_pid(i, k) != 0;
}

/*
 * Stop a worker: through its handle, or with SIGTERM to the pid attached to
 * its slot when this launcher did not start it.
 */
static void
stop_worker(BackgroundWorkerHandle **handle, int i, int index)
{
	pid_t		pid;

	if (handle_running(handle))
	{
		TerminateBackgroundWorker(*handle);
		return;
	}
	pid = attached_pid(i, index);
	if (pid != 0)
		(void) kill(pid, SIGTERM);
}

/* Stop the timer worker of slot i (launcher only). */
static void
stop_timer_worker(int i)
{
	stop_worker(&worker_handles[i], i, -1);
}

/* Stop executor k of slot i (launcher only). */
static void
stop_executor(int i, int k)
{
	stop_worker(&executor_handles[i * DURABLE_MAX_EXECUTORS + k], i, k);
}

/* Stop every executor of slot i (launcher only). */
static void
stop_executors(int i)
{
	int			k;

	for (k = 0; k < DURABLE_MAX_EXECUTORS; k++)
		stop_executor(i, k);
}

/*
 * Give slot i of dboid back, unless one of its workers still runs or is
 * starting.  Returns whether it did (launcher only).
 */
static bool
free_slot(int i, Oid dboid)
{
	bool		freed = false;
	int			k;

	if (handle_running(&worker_handles[i]))
		return false;
	for (k = 0; k < DURABLE_MAX_EXECUTORS; k++)
		if (handle_running(&executor_handles[i * DURABLE_MAX_EXECUTORS + k]))
			return false;
	SpinLockAcquire(&WorkerSlotTable->mutex);
	if (WorkerSlotTable->slots[i].dboid == dboid && WorkerSlotTable->slots[i].pid == 0)
	{
		freed = true;
		for (k = 0; k < DURABLE_MAX_EXECUTORS; k++)
			if (WorkerSlotTable->slots[i].executors[k].pid != 0)
				freed = false;
		if (freed)
			WorkerSlotTable->slots[i].dboid = InvalidOid;
	}
	SpinLockRelease(&WorkerSlotTable->mutex);
	if (freed)
		for (k = 0; k < DURABLE_MAX_EXECUTORS; k++)
			executor_started_at[i * DURABLE_MAX_EXECUTORS + k] = 0;
	return freed;
}

/*
 * Whether a failure to start a worker of this database may be logged now:
 * once a minute per database (launcher only).
 */
static bool
may_warn(DatabaseState *db, TimestampTz now)
{
	if (db->warned_at != 0 &&
		now - db->warned_at < (int64) START_WARNING_SECS * USECS_PER_SEC)
		return false;
	db->warned_at = now;
	return true;
}

/* Register a dynamic background worker, its handle in TopMemoryContext. */
static bool
start_worker(BackgroundWorker *worker, BackgroundWorkerHandle **handle)
{
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
	bool		ok;

	ok = RegisterDynamicBackgroundWorker(worker, handle);
	if (!ok)
		*handle = NULL;
	MemoryContextSwitchTo(old);
	return ok;
}

/* Log that a worker could not be started, at most once a minute per database. */
static void
report_start_failure(DatabaseState *db, const char *what, const char *dbname,
					 TimestampTz now)
{
	retry_start = true;
	if (!may_warn(db, now))
		return;
	ereport(LOG,
			(errmsg("durable: could not start %s for database \"%s\": no background worker slot is free",
					what, dbname),
			 errdetail("It is tried again every %d seconds; this is logged at most once a minute for each database.",
					   START_RETRY_MS / 1000),
			 errhint("Raise max_worker_processes (now %d): it must cover the durable launcher, a timer worker and durable.executor_workers executors for each database that has the extension, and every other background worker.",
					 max_worker_processes)));
}

/*
 * Start or stop executors of slot i so that durable.executor_workers run,
 * once its timer worker has found the extension and unless it is at 0.1.0.
 */
static void
ensure_executors(int i, DatabaseState *db, const char *dbname, TimestampTz now)
{
	WorkerSlot *slot = &WorkerSlotTable->slots[i];
	bool		wanted;
	int			k;

	SpinLockAcquire(&WorkerSlotTable->mutex);
	wanted = slot->installed &&
		!(slot->executors_idle &&
		  slot->executors_checked_at +
		  (int64) NO_EXTENSION_RECHECK_SECS * USECS_PER_SEC > now);
	SpinLockRelease(&WorkerSlotTable->mutex);

	for (k = 0; k < DURABLE_MAX_EXECUTORS; k++)
	{
		int			h = i * DURABLE_MAX_EXECUTORS + k;
		BackgroundWorker worker;
		char		what[64];

		if (!wanted || k >= durable_executor_workers)
		{
			stop_executor(i, k);
			continue;
		}
		if (executor_running(i, k))
			continue;
		if (now - executor_started_at[h] < EXECUTOR_RESTART_MS * 1000)
		{
			rescan_soon = true;
			continue;
		}

		memset(&worker, 0, sizeof(worker));
		worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
		worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
		worker.bgw_restart_time = BGW_NEVER_RESTART;
		snprintf(worker.bgw_library_name, BGW_MAXLEN, "durable");
		snprintf(worker.bgw_function_name, BGW_MAXLEN, "DurableExecutorMain");
		snprintf(worker.bgw_name, BGW_MAXLEN, "durable executor %d for %s",
				 k + 1, dbname);
		snprintf(worker.bgw_type, BGW_MAXLEN, "durable executor");
		worker.bgw_main_arg = ObjectIdGetDatum(slot->dboid);
		memcpy(worker.bgw_extra, &k, sizeof(k));
		worker.bgw_notify_pid = MyProcPid;
		if (!start_worker(&worker, &executor_handles[h]))
		{
			/* The others would not start either: try them all again later. */
			snprintf(what, sizeof(what), "executor %d", k + 1);
			report_start_failure(db, what, dbname, now);
			return;
		}
		executor_started_at[h] = now;
	}
}

/*
 * The slot of a database, given one if it has none and is not known to lack
 * the extension; -1 when it gets none (launcher only).
 */
static int
database_slot(Oid dboid, DatabaseState *db, const char *dbname, TimestampTz now)
{
	int			i;
	bool		gone = false;
	TimestampTz checked_at = 0;

	SpinLockAcquire(&WorkerSlotTable->mutex);
	i = WorkerSlotFind(dboid);
	if (i >= 0 && WorkerSlotTable->slots[i].no_extension && WorkerSlotTable->slots[i].pid == 0)
	{
		gone = true;
		checked_at = WorkerSlotTable->slots[i].checked_at;
	}
	SpinLockRelease(&WorkerSlotTable->mutex);

	if (i >= 0 && !gone)
	{
		/* e.g. CREATE EXTENSION took it: check the database now */
		db->no_extension_at = 0;
		return i;
	}
	if (i >= 0)
	{
		/* Its worker found no extension: give the slot back if it can. */
		if (!free_slot(i, dboid))
			return -1;
		db->no_extension_at = checked_at;
	}
	if (db->no_extension_at != 0 &&
		db->no_extension_at + (int64) NO_EXTENSION_RECHECK_SECS * USECS_PER_SEC > now)
		return -1;

	SpinLockAcquire(&WorkerSlotTable->mutex);
	i = WorkerSlotFind(dboid);
	if (i < 0)
	{
		i = WorkerSlotFind(InvalidOid);
		if (i >= 0)
			WorkerSlotInit(i, dboid);
	}
	SpinLockRelease(&WorkerSlotTable->mutex);
	if (i < 0)
	{
		retry_start = true;
		if (may_warn(db, now))
			ereport(WARNING,
					(errmsg("durable: no worker slot for database \"%s\"", dbname),
					 errdetail("All %d slots of durable.max_databases serve other databases; this is logged at most once a minute for each database.",
							   durable_max_databases),
					 errhint("Raise durable.max_databases.")));
		return -1;
	}
	db->no_extension_at = 0;
	return i;
}

/*
 * Start the timer worker of a database unless it runs or need not, and its
 * executors.  A worker that cannot be started is logged and tried again
 * later; the scan goes on.
 */
static void
ensure_worker(Oid dboid, const char *dbname, TimestampTz now)
{
	BackgroundWorker worker;
	DatabaseState *db;
	bool		found;
	int			i;
	bool		paused;

	db = hash_search(database_states, &dboid, HASH_ENTER, &found);
	if (!found)
	{
		db->no_extension_at = 0;
		db->warned_at = 0;
	}
	db->seen_in_scan = scan_count;

	i = database_slot(dboid, db, dbname, now);
	if (i < 0)
		return;
	SpinLockAcquire(&WorkerSlotTable->mutex);
	paused = WorkerSlotTable->slots[i].paused_until > now;
	SpinLockRelease(&WorkerSlotTable->mutex);
	if (paused)
	{
		rescan_soon = true;
		return;
	}
	if (timer_worker_running(i))
	{
		ensure_executors(i, db, dbname, now);
		return;
	}

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "durable");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "DurableTimerWorkerMain");
	snprintf(worker.bgw_name, BGW_MAXLEN, "durable timer worker for %s", dbname);
	snprintf(worker.bgw_type, BGW_MAXLEN, "durable timer worker");
	worker.bgw_main_arg = ObjectIdGetDatum(dboid);
	worker.bgw_notify_pid = MyProcPid;

	if (!start_worker(&worker, &worker_handles[i]))
	{
		report_start_failure(db, "a timer worker", dbname, now);
		return;
	}
	ensure_executors(i, db, dbname, now);
}

/*
 * After a scan: give back the slots of databases it did not see (dropped,
 * no longer accepting connections, no longer in durable.worker_databases)
 * once nothing runs there, and forget those databases (launcher only).
 */
static void
forget_unseen_databases(void)
{
	HASH_SEQ_STATUS status;
	DatabaseState *db;
	int			i;

	for (i = 0; i < durable_max_databases; i++)
	{
		Oid			dboid;

		SpinLockAcquire(&WorkerSlotTable->mutex);
		dboid = WorkerSlotTable->slots[i].dboid;
		SpinLockRelease(&WorkerSlotTable->mutex);
		if (!OidIsValid(dboid))
			continue;
		db = hash_search(database_states, &dboid, HASH_FIND, NULL);
		if (db == NULL || db->seen_in_scan != scan_count)
			(void) free_slot(i, dboid);
	}
	hash_seq_init(&status, database_states);
	while ((db = hash_seq_search(&status)) != NULL)
		if (db->seen_in_scan != scan_count)
			(void) hash_search(database_states, &db->dboid, HASH_REMOVE, NULL);
}

/* Whether a database is named in durable.worker_databases (empty: all). */
static bool
database_selected(const char *dbname)
{
	char	   *list;
	List	   *names;
	ListCell   *lc;
	bool		found = false;

	if (durable_worker_databases == NULL || durable_worker_databases[0] == '\0')
		return true;
	list = pstrdup(durable_worker_databases);
	if (!SplitIdentifierString(list, ',', &names))
	{
		ereport(LOG,
				(errmsg("durable.worker_databases is not a list of database names")));
		return false;
	}
	foreach(lc, names)
		if (strcmp((char *) lfirst(lc), dbname) == 0)
			found = true;
	return found;
}

/* Start workers for the databases of pg_database; stop all when disabled. */
static void
scan_databases(void)
{
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;
	TimestampTz now = GetCurrentTimestamp();
	bool		recheck_all;
	int			i;

	rescan_soon = false;
	retry_start = false;
	if (!durable_worker_enabled)
	{
		for (i = 0; i < durable_max_databases; i++)
		{
			stop_timer_worker(i);
			stop_executors(i);
		}
		return;
	}

	/* CREATE EXTENSION found no free slot: check every database again. */
	SpinLockAcquire(&WorkerSlotTable->mutex);
	recheck_all = WorkerSlotTable->recheck_all;
	WorkerSlotTable->recheck_all = false;
	SpinLockRelease(&WorkerSlotTable->mutex);
	if (recheck_all)
	{
		HASH_SEQ_STATUS status;
		DatabaseState *db;

		hash_seq_init(&status, database_states);
		while ((db = hash_seq_search(&status)) != NULL)
			db->no_extension_at = 0;
	}

	scan_count++;
	StartTransactionCommand();
	(void) GetTransactionSnapshot();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tup);

		if (!db->datallowconn || db->datistemplate)
			continue;
		if (!database_selected(NameStr(db->datname)))
			continue;
		ensure_worker(db->oid, NameStr(db->datname), now);
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	forget_unseen_databases();
	CommitTransactionCommand();
}

/* before_shmem_exit callback of the launcher: backends no longer wake it. */
static void
launcher_detach(int code, Datum arg)
{
	SpinLockAcquire(&WorkerSlotTable->mutex);
	if (WorkerSlotTable->launcher_latch == MyLatch)
		WorkerSlotTable->launcher_latch = NULL;
	SpinLockRelease(&WorkerSlotTable->mutex);
}

/* Entry point of the launcher. */
void
DurableLauncherMain(Datum main_arg)
{
	HASHCTL		ctl;
	long		timeout;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname("durable launcher");

	worker_handles = MemoryContextAllocZero(TopMemoryContext,
											sizeof(BackgroundWorkerHandle *) *
											durable_max_databases);
	executor_handles = MemoryContextAllocZero(TopMemoryContext,
											  sizeof(BackgroundWorkerHandle *) *
											  durable_max_databases *
											  DURABLE_MAX_EXECUTORS);
	executor_started_at = MemoryContextAllocZero(TopMemoryContext,
												 sizeof(TimestampTz) *
												 durable_max_databases *
												 DURABLE_MAX_EXECUTORS);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(DatabaseState);
	ctl.hcxt = TopMemoryContext;
	database_states = hash_create("durable launcher databases", 64, &ctl,
								  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

	SpinLockAcquire(&WorkerSlotTable->mutex);
	WorkerSlotTable->launcher_latch = MyLatch;
	SpinLockRelease(&WorkerSlotTable->mutex);
	before_shmem_exit(launcher_detach, (Datum) 0);

	ereport(LOG,
			(errmsg("durable launcher started: durable.worker_enabled = %s, durable.max_databases = %d, durable.executor_workers = %d, durable.worker_databases = '%s', max_worker_processes = %d",
					durable_worker_enabled ? "on" : "off",
					durable_max_databases, durable_executor_workers,
					durable_worker_databases ? durable_worker_databases : "",
					max_worker_processes)));

	for (;;)
	{
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		scan_databases();
		timeout = (long) durable_worker_max_sleep * 1000L;
		if (retry_start)
			timeout = Min(timeout, START_RETRY_MS);
		if (rescan_soon)
			timeout = Min(timeout, EXECUTOR_RESTART_MS);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 timeout, PG_WAIT_EXTENSION);
	}
}

/* Register the launcher (from _PG_init, when preloaded). */
void
RegisterLauncher(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 5;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "durable");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "DurableLauncherMain");
	snprintf(worker.bgw_name, BGW_MAXLEN, "durable launcher");
	snprintf(worker.bgw_type, BGW_MAXLEN, "durable launcher");
	RegisterBackgroundWorker(&worker);
}

/* Whether any of the pids still runs as the timer worker or an executor of slot i. */
static bool
slot_still_runs(int i, const pid_t *pids, int n)
{
	WorkerSlot *slot = &WorkerSlotTable->slots[i];
	bool		found = false;
	int			j;
	int			k;

	SpinLockAcquire(&WorkerSlotTable->mutex);
	for (j = 0; j < n && !found; j++)
	{
		if (slot->pid == pids[j])
			found = true;
		for (k = 0; k < DURABLE_MAX_EXECUTORS && !found; k++)
			if (slot->executors[k].pid == pids[j])
				found = true;
	}
	SpinLockRelease(&WorkerSlotTable->mutex);
	return found;
}

/*
 * Stop the timer worker and the executors of a database and keep them
 * stopped for a while, so that DROP DATABASE or CREATE DATABASE ...
 * TEMPLATE can go ahead.
 */
static void
pause_worker(Oid dboid)
{
	pid_t		pids[1 + DURABLE_MAX_EXECUTORS];
	int			n = 0;
	int			i;
	int			k;
	int			waited;

	if (WorkerSlotTable == NULL || !OidIsValid(dboid))
		return;
	SpinLockAcquire(&WorkerSlotTable->mutex);
	i = WorkerSlotFind(dboid);
	if (i >= 0)
	{
		WorkerSlotTable->slots[i].paused_until = GetCurrentTimestamp() + 30 * USECS_PER_SEC;
		if (WorkerSlotTable->slots[i].pid != 0)
			pids[n++] = WorkerSlotTable->slots[i].pid;
		for (k = 0; k < DURABLE_MAX_EXECUTORS; k++)
			if (WorkerSlotTable->slots[i].executors[k].pid != 0)
				pids[n++] = WorkerSlotTable->slots[i].executors[k].pid;
	}
	SpinLockRelease(&WorkerSlotTable->mutex);
	if (n == 0)
		return;
	for (k = 0; k < n; k++)
		(void) kill(pids[k], SIGTERM);
	for (waited = 0; waited < 500; waited++)
	{
		if (!slot_still_runs(i, pids, n))
			break;
		CHECK_FOR_INTERRUPTS();
		pg_usleep(10000L);
	}
}

/* Whether a DROP names the extension durable. */
static bool
drops_durable(DropStmt *stmt)
{
	ListCell   *lc;

	if (stmt->removeType != OBJECT_EXTENSION)
		return false;
	foreach(lc, stmt->objects)
		if (IsA(lfirst(lc), String) && strcmp(strVal(lfirst(lc)), "durable") == 0)
			return true;
	return false;
}

/*
 * ALTER EXTENSION durable UPDATE: executors that found 0.1.0 may start
 * again once it commits; wake the launcher then.
 */
static void
extension_updated(void)
{
	int			i;

	if (WorkerSlotTable == NULL)
		return;
	SpinLockAcquire(&WorkerSlotTable->mutex);
	i = WorkerSlotFind(MyDatabaseId);
	if (i >= 0)
		WorkerSlotTable->slots[i].executors_idle = false;
	SpinLockRelease(&WorkerSlotTable->mutex);
	WakeLauncherAtCommit();
}

/*
 * The template of CREATE DATABASE was copied: its workers may start again
 * at once.
 */
static void
resume_worker(Oid dboid)
{
	int			i;

	if (WorkerSlotTable == NULL || !OidIsValid(dboid))
		return;
	SpinLockAcquire(&WorkerSlotTable->mutex);
	i = WorkerSlotFind(dboid);
	if (i >= 0)
		WorkerSlotTable->slots[i].paused_until = 0;
	SpinLockRelease(&WorkerSlotTable->mutex);
}

/*
 * A dropped database's slot is free again, unless one of its workers is
 * still there (then a later scan never sees the database again anyway).
 */
static void
forget_database(Oid dboid)
{
	int			i;
	int			k;
	bool		busy = false;

	if (WorkerSlotTable == NULL || !OidIsValid(dboid))
		return;
	SpinLockAcquire(&WorkerSlotTable->mutex);
	i = WorkerSlotFind(dboid);
	if (i >= 0)
	{
		busy = WorkerSlotTable->slots[i].pid != 0;
		for (k = 0; k < DURABLE_MAX_EXECUTORS && !busy; k++)
			busy = WorkerSlotTable->slots[i].executors[k].pid != 0;
		if (!busy)
			WorkerSlotTable->slots[i].dboid = InvalidOid;
	}
	SpinLockRelease(&WorkerSlotTable->mutex);
}

/*
 * Whether DROP DATABASE or CREATE DATABASE ... TEMPLATE may run here at all:
 * not inside a transaction block, a function or a pipeline, where PostgreSQL
 * refuses it before it looks at the database.
 */
static bool
database_command_allowed(bool isTopLevel)
{
	return isTopLevel && !IsTransactionBlock() && !IsSubTransaction() &&
		(MyXactFlags & XACT_FLAGS_PIPELINING) == 0;
}

/*
 * Whether the current user passes the checks that DROP DATABASE makes
 * before it needs the database's workers gone (dropdb in dbcommands.c): it
 * owns the database, which is neither a template nor the current one.
 */
static bool
may_drop_database(Oid dboid, bool isTopLevel)
{
	HeapTuple	tup;
	Form_pg_database db;
	bool		ok;

	if (!OidIsValid(dboid) || dboid == MyDatabaseId ||
		!database_command_allowed(isTopLevel))
		return false;
	tup = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(dboid));
	if (!HeapTupleIsValid(tup))
		return false;
	db = (Form_pg_database) GETSTRUCT(tup);
	ok = !db->datistemplate && has_privs_of_role(GetUserId(), db->datdba);
	ReleaseSysCache(tup);
	return ok;
}

/*
 * Whether the current user passes the checks that CREATE DATABASE makes
 * before it copies its template (createdb in dbcommands.c): it may create
 * databases, and the template is marked as one or is its own.
 */
static bool
may_copy_database(Oid dboid, bool isTopLevel)
{
	HeapTuple	tup;
	Form_pg_database db;
	bool		ok;

	if (!OidIsValid(dboid) || !database_command_allowed(isTopLevel))
		return false;
	if (!superuser())
	{
		tup = SearchSysCache1(AUTHOID, ObjectIdGetDatum(GetUserId()));
		if (!HeapTupleIsValid(tup))
			return false;
		ok = ((Form_pg_authid) GETSTRUCT(tup))->rolcreatedb;
		ReleaseSysCache(tup);
		if (!ok)
			return false;
	}
	tup = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(dboid));
	if (!HeapTupleIsValid(tup))
		return false;
	db = (Form_pg_database) GETSTRUCT(tup);
	ok = db->datistemplate || has_privs_of_role(GetUserId(), db->datdba);
	ReleaseSysCache(tup);
	return ok;
}

/*
 * Run a utility statement through the next hook.  If it fails after the
 * workers of paused_oid were stopped for it, they start again at once.
 */
static void
run_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
			ProcessUtilityContext context, ParamListInfo params,
			QueryEnvironment *queryEnv, DestReceiver *dest,
			QueryCompletion *qc, Oid paused_oid)
{
	ProcessUtility_hook_type next = prev_process_utility ?
		prev_process_utility : standard_ProcessUtility;

	if (!OidIsValid(paused_oid))
	{
		next(pstmt, queryString, readOnlyTree, context, params, queryEnv,
			 dest, qc);
		return;
	}
	PG_TRY();
	{
		next(pstmt, queryString, readOnlyTree, context, params, queryEnv,
			 dest, qc);
	}
	PG_CATCH();
	{
		/* The database is still there: its workers start again now. */
		resume_worker(paused_oid);
		WakeLauncher();
		PG_RE_THROW();
	}
	PG_END_TRY();
}

/* Whether a COPY writes into durable.<name> (as pg_restore does). */
static bool
copies_into(CopyStmt *stmt, const char *name)
{
	if (!stmt->is_from || stmt->relation == NULL)
		return false;
	return IsDurableTable(RangeVarGetRelid(stmt->relation, NoLock, true), name);
}

/*
 * Stop the workers that would block DROP DATABASE or CREATE DATABASE, once
 * the statement has passed the checks of its caller (a refused statement
 * changes nothing); if it fails after that, they start again at once.  Check
 * a replaced or dropped function that running workflows use.
 */
static void
durable_process_utility(PlannedStmt *pstmt, const char *queryString,
						bool readOnlyTree, ProcessUtilityContext context,
						ParamListInfo params, QueryEnvironment *queryEnv,
						DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	bool		isTopLevel = (context == PROCESS_UTILITY_TOPLEVEL);
	bool		updates_durable = false;
	Oid			template_oid = InvalidOid;
	Oid			dropped_oid = InvalidOid;
	Oid			paused_oid = InvalidOid;
	List	   *dropped_functions = NIL;

	/*
	 * The tables durable's direct writes keep open for the transaction are
	 * closed before any utility statement, which may drop or alter them
	 * (store/direct.c).
	 */
	DirectTablesRelease();
	if (IsA(parsetree, DropdbStmt))
	{
		Oid			dboid = get_database_oid(((DropdbStmt *) parsetree)->dbname, true);

		QueueControlsDatabaseDropped(dboid);
		if (WorkerSlotTable != NULL && may_drop_database(dboid, isTopLevel))
		{
			dropped_oid = paused_oid = dboid;
			pause_worker(dboid);
		}
	}
	else if (IsA(parsetree, CreatedbStmt))
	{
		ListCell   *lc;

		foreach(lc, ((CreatedbStmt *) parsetree)->options)
		{
			DefElem    *def = (DefElem *) lfirst(lc);
			Oid			dboid;

			if (strcmp(def->defname, "template") != 0 || def->arg == NULL)
				continue;
			dboid = get_database_oid(defGetString(def), true);
			if (WorkerSlotTable != NULL && may_copy_database(dboid, isTopLevel))
			{
				template_oid = paused_oid = dboid;
				pause_worker(dboid);
			}
		}
		/* The launcher starts the workers of the copy and the template. */
		if (WorkerSlotTable != NULL)
		{
			WakeLauncherAtCommit();
		}
	}
	else if (IsA(parsetree, AlterExtensionStmt))
		updates_durable =
			strcmp(((AlterExtensionStmt *) parsetree)->extname, "durable") == 0;
	else if (IsA(parsetree, CopyStmt) &&
			 copies_into((CopyStmt *) parsetree, "ready_tasks"))
	{
		/* The same for the claims' marks of the queues (claim_mark.c). */
		ClaimMarkTableWritten(RangeVarGetRelid(((CopyStmt *) parsetree)->relation,
											   NoLock, true));
	}
	else if (IsA(parsetree, CopyStmt) &&
			 copies_into((CopyStmt *) parsetree, "timers"))
	{
		/*
		 * A restore writes timers that the due scans' mark knows nothing of
		 * (due_mark.c): have them walk from the beginning, and wake the
		 * worker at commit.
		 */
		DueMarkNoteWrite(DT_NOBEGIN);
		WakeTimerWorkerAtCommit(0);
	}
	else if (IsA(parsetree, DropStmt) && drops_durable((DropStmt *) parsetree))
	{
		/* The workers see it gone and exit at once, not after a sleep. */
		WakeExecutorsAtCommit();
		WakeTimerWorkerAtCommit(0);
	}
	else if (IsA(parsetree, DropStmt))
		dropped_functions = ReplaceGuardBeforeDrop((DropStmt *) parsetree);

	/* A COPY FROM into a table of queue controls (queue_controls.c) */
	if (IsA(parsetree, CopyStmt) && ((CopyStmt *) parsetree)->is_from &&
		((CopyStmt *) parsetree)->relation != NULL)
		QueueControlsTableWritten(RangeVarGetRelid(((CopyStmt *) parsetree)->relation,
												   NoLock, true), NULL);
	run_utility(pstmt, queryString, readOnlyTree, context, params, queryEnv,
				dest, qc, paused_oid);
	if (IsA(parsetree, CreateFunctionStmt))
		ReplaceGuardAfterCreate((CreateFunctionStmt *) parsetree);
	ReplaceGuardAfterDrop(dropped_functions);
	if (updates_durable)
		extension_updated();
	resume_worker(template_oid);
	forget_database(dropped_oid);
}

/* Install the ProcessUtility hook (from _PG_init, when preloaded). */
void
InstallLauncherHooks(void)
{
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = durable_process_utility;
}

PG_FUNCTION_INFO_V1(durable_launcher_wakeup);
/*
 * durable.launcher_wakeup(): called by CREATE EXTENSION durable, so that the
 * launcher starts this database's timer worker as soon as it commits.
 */
Datum
durable_launcher_wakeup(PG_FUNCTION_ARGS)
{
	int			i;

	if (WorkerSlotTable == NULL)
		PG_RETURN_VOID();
	SpinLockAcquire(&WorkerSlotTable->mutex);
	i = WorkerSlotFind(MyDatabaseId);
	if (i < 0)
	{
		/* Taking a slot tells the launcher to check this database now. */
		i = WorkerSlotFind(InvalidOid);
		if (i >= 0)
			WorkerSlotInit(i, MyDatabaseId);
		else
			WorkerSlotTable->recheck_all = true;
	}
	if (i >= 0)
	{
		WorkerSlotTable->slots[i].no_extension = false;
		WorkerSlotTable->slots[i].paused_until = 0;
		WorkerSlotTable->slots[i].executors_idle = false;
	}
	SpinLockRelease(&WorkerSlotTable->mutex);
	WakeLauncherAtCommit();
	/* A timer worker still running (a quick DROP and CREATE) finds it again. */
	WakeTimerWorkerAtCommit(0);
	PG_RETURN_VOID();
}

/*-------------------------------------------------------------------------
 *
 * launcher.c
 *	  The launcher: one timer worker per database that has the extension,
 *	  and its executor workers.
 *
 * The launcher is a background worker started from shared_preload_libraries
 * once recovery has finished (so nothing runs on a standby).  It connects
 * to no database and reads the shared catalog pg_database; for every
 * database that accepts connections it starts a timer worker (worker.c),
 * which exits at once where the extension is not installed.  Such databases
 * are checked again every durable.worker_max_sleep, or at once when CREATE
 * EXTENSION durable commits (it wakes the launcher).
 *
 * Each database has a slot in shared memory with its worker's latch and the
 * time it sleeps until; a backend that commits a timer due before that time
 * sets the latch (WakeTimerWorkerAtCommit).  DROP DATABASE, and CREATE
 * DATABASE from a template that has a worker, first stop that worker
 * (ProcessUtility hook), since a connected worker would make them fail.
 *
 * Once a database's timer worker has found the extension, the launcher
 * also starts durable.executor_workers executor workers there
 * (executor_worker.c), which run the tasks of SQL workflows and activities,
 * and stops or adds some when the setting changes.  They are stopped with
 * the timer worker, and idle (not restarted for a while) where the
 * extension is still at 0.1.0, until ALTER EXTENSION durable UPDATE.  A
 * commit that queues an executor task bumps the database's executor
 * generation and sets the executors' latches (WakeExecutors); an executor
 * sleeps only while the generation is the one it last saw (shmem.c), so
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
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"

#include "durable.h"

PGDLLEXPORT void DurableLauncherMain(Datum main_arg);

/* One executor worker of a database */
typedef struct ExecutorSlot
{
	pid_t		pid;			/* 0 while not running */
	Latch	   *latch;
} ExecutorSlot;

/* A database's timer and executor workers, as the launcher and backends see them */
typedef struct WorkerSlot
{
	Oid			dboid;			/* InvalidOid: free */
	pid_t		pid;			/* 0 while not running */
	Latch	   *latch;
	pg_atomic_uint64 next_wakeup;	/* 0: awake; else the time it sleeps to */
	bool		no_extension;	/* exited: durable is not installed */
	TimestampTz checked_at;		/* when it found that */
	TimestampTz paused_until;	/* DROP/CREATE DATABASE: do not restart */
	bool		installed;		/* the timer worker found the extension */
	bool		executors_idle; /* an executor found the extension at 0.1.0 */
	TimestampTz executors_checked_at;	/* when it found that */
	pg_atomic_uint64 executor_generation;	/* bumped by each wakeup */
	ExecutorSlot executors[DURABLE_MAX_EXECUTORS];
} WorkerSlot;

typedef struct LauncherShared
{
	slock_t		mutex;
	Latch	   *launcher_latch;
	WorkerSlot	slots[FLEXIBLE_ARRAY_MEMBER];
} LauncherShared;

static LauncherShared *launcher = NULL;
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

/* The launcher's handles of the workers it started, by slot */
static BackgroundWorkerHandle **worker_handles = NULL;

/* ... and of the executors, by slot * DURABLE_MAX_EXECUTORS + index */
static BackgroundWorkerHandle **executor_handles = NULL;
static TimestampTz *executor_started_at = NULL;

/* Whether a scan left a worker to start a little later (launcher only) */
static bool rescan_soon = false;

/* Earliest timer this transaction made, and whether to wake the launcher */
static TimestampTz earliest_new_timer = DT_NOEND;
static bool wake_launcher_at_commit = false;
static bool wake_executors_at_commit = false;
static bool xact_callback_registered = false;

/* This executor's slot and index (executors only) */
static int	my_executor_slot = -1;
static int	my_executor_index = -1;

Size
LauncherShmemSize(void)
{
	return MAXALIGN(add_size(offsetof(LauncherShared, slots),
							 mul_size(sizeof(WorkerSlot), durable_max_databases)));
}

void
LauncherShmemInit(void)
{
	bool		found;
	int			i;

	launcher = ShmemInitStruct("durable launcher", LauncherShmemSize(), &found);
	if (!found)
	{
		SpinLockInit(&launcher->mutex);
		launcher->launcher_latch = NULL;
		for (i = 0; i < durable_max_databases; i++)
		{
			memset(&launcher->slots[i], 0, sizeof(WorkerSlot));
			pg_atomic_init_u64(&launcher->slots[i].next_wakeup, 0);
			pg_atomic_init_u64(&launcher->slots[i].executor_generation, 0);
		}
	}
}

/* The slot of a database, or -1 (caller holds the mutex). */
static int
find_slot(Oid dboid)
{
	int			i;

	for (i = 0; i < durable_max_databases; i++)
		if (launcher->slots[i].dboid == dboid)
			return i;
	return -1;
}

/*
 * Wake the timer worker of this database, its executors, or the launcher,
 * at commit.
 */
static void
launcher_xact_callback(XactEvent event, void *arg)
{
	TimestampTz due = earliest_new_timer;
	bool		wake_launcher = wake_launcher_at_commit;
	bool		wake_executors = wake_executors_at_commit;

	if (event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT &&
		event != XACT_EVENT_PARALLEL_COMMIT && event != XACT_EVENT_PARALLEL_ABORT)
		return;
	earliest_new_timer = DT_NOEND;
	wake_launcher_at_commit = false;
	wake_executors_at_commit = false;
	if (event != XACT_EVENT_COMMIT || launcher == NULL)
		return;

	if (wake_executors)
		WakeExecutors(MyDatabaseId);

	if (due != DT_NOEND)
	{
		int			i;

		for (i = 0; i < durable_max_databases; i++)
		{
			WorkerSlot *slot = &launcher->slots[i];
			uint64		sleeps_to;

			if (slot->dboid != MyDatabaseId)
				continue;
			pg_memory_barrier();
			sleeps_to = pg_atomic_read_u64(&slot->next_wakeup);
			/* Awake (0): it may have missed this timer; asleep: too late? */
			if (sleeps_to == 0 || (uint64) due < sleeps_to)
			{
				SpinLockAcquire(&launcher->mutex);
				if (slot->latch != NULL && slot->dboid == MyDatabaseId)
					SetLatch(slot->latch);
				SpinLockRelease(&launcher->mutex);
			}
			break;
		}
	}
	if (wake_launcher)
	{
		SpinLockAcquire(&launcher->mutex);
		if (launcher->launcher_latch != NULL)
			SetLatch(launcher->launcher_latch);
		SpinLockRelease(&launcher->mutex);
	}
}

static void
register_callback(void)
{
	if (!xact_callback_registered)
	{
		RegisterXactCallback(launcher_xact_callback, NULL);
		xact_callback_registered = true;
	}
}

/* A timer due at due_at was made: wake the worker at commit if it is earlier. */
void
WakeTimerWorkerAtCommit(TimestampTz due_at)
{
	if (launcher == NULL)
		return;
	register_callback();
	if (due_at < earliest_new_timer)
		earliest_new_timer = due_at;
}

/* An executor task was queued: wake this database's executors at commit. */
void
WakeExecutorsAtCommit(void)
{
	if (launcher == NULL)
		return;
	register_callback();
	wake_executors_at_commit = true;
}

/*
 * Wake the executors of a database: bump its generation, then set their
 * latches.  The latches are read under the mutex and set after it: one of
 * an executor that just left only wakes some other process for nothing.
 */
void
WakeExecutors(Oid dboid)
{
	Latch	   *latches[DURABLE_MAX_EXECUTORS];
	int			n = 0;
	int			i;
	int			k;

	if (launcher == NULL)
		return;
	for (i = 0; i < durable_max_databases; i++)
		if (launcher->slots[i].dboid == dboid)
			break;
	if (i >= durable_max_databases)
		return;
	pg_atomic_fetch_add_u64(&launcher->slots[i].executor_generation, 1);
	SpinLockAcquire(&launcher->mutex);
	for (k = 0; k < DURABLE_MAX_EXECUTORS; k++)
		if (launcher->slots[i].executors[k].latch != NULL)
			latches[n++] = launcher->slots[i].executors[k].latch;
	SpinLockRelease(&launcher->mutex);
	for (k = 0; k < n; k++)
		SetLatch(latches[k]);
}

/* The wakeup generation of this executor's database (executors only). */
uint64
ExecutorWakeGeneration(void)
{
	Assert(my_executor_slot >= 0);
	return pg_atomic_read_u64(&launcher->slots[my_executor_slot].executor_generation);
}

/* Executor index of MyDatabaseId registers its latch. */
void
ExecutorWorkerAttach(int index)
{
	int			i = -1;
	pid_t		other = 0;

	if (index >= 0 && index < DURABLE_MAX_EXECUTORS)
	{
		SpinLockAcquire(&launcher->mutex);
		i = find_slot(MyDatabaseId);
		if (i >= 0)
		{
			ExecutorSlot *e = &launcher->slots[i].executors[index];

			other = e->pid;
			if (other == 0)
			{
				e->pid = MyProcPid;
				e->latch = MyLatch;
			}
		}
		SpinLockRelease(&launcher->mutex);
	}
	if (i < 0)
		ereport(FATAL,
				(errmsg("durable executor %d for database %u has no slot",
						index, MyDatabaseId)));
	if (other != 0)
		ereport(FATAL,
				(errmsg("durable executor %d for database %u already runs as process %d",
						index, MyDatabaseId, (int) other)));
	my_executor_slot = i;
	my_executor_index = index;
}

/*
 * The executor leaves.  no_extension: durable is not installed (no executor
 * is started until the timer worker finds it again); idle: it is at 0.1.0.
 * Returns whether this made the database's executors idle.
 */
bool
ExecutorWorkerDetach(bool no_extension, bool idle)
{
	WorkerSlot *slot;
	bool		made_idle = false;

	if (my_executor_slot < 0)
		return false;
	slot = &launcher->slots[my_executor_slot];
	SpinLockAcquire(&launcher->mutex);
	if (slot->executors[my_executor_index].pid == MyProcPid)
	{
		slot->executors[my_executor_index].pid = 0;
		slot->executors[my_executor_index].latch = NULL;
	}
	if (no_extension)
		slot->installed = false;
	if (idle)
	{
		made_idle = !slot->executors_idle;
		slot->executors_idle = true;
		slot->executors_checked_at = GetCurrentTimestamp();
	}
	SpinLockRelease(&launcher->mutex);
	my_executor_slot = -1;
	return made_idle;
}

/* Whether executor index should run, after a reload (executors only). */
bool
ExecutorWorkerWanted(int index)
{
	return durable_worker_enabled && index < durable_executor_workers;
}

/*
 * The timer worker found the extension installed: tell the launcher, which
 * then starts the executors, unless the slot says so already.
 */
void
TimerWorkerFoundExtension(void)
{
	int			i;
	Latch	   *wake = NULL;

	for (i = 0; i < durable_max_databases; i++)
		if (launcher->slots[i].dboid == MyDatabaseId)
			break;
	if (i >= durable_max_databases || launcher->slots[i].installed)
		return;
	SpinLockAcquire(&launcher->mutex);
	launcher->slots[i].installed = true;
	wake = launcher->launcher_latch;
	SpinLockRelease(&launcher->mutex);
	if (wake != NULL)
		SetLatch(wake);
}

/* Called by the timer worker before it sleeps until sleeps_to. */
void
TimerWorkerSleepsUntil(TimestampTz sleeps_to)
{
	int			i;

	for (i = 0; i < durable_max_databases; i++)
		if (launcher->slots[i].dboid == MyDatabaseId)
		{
			pg_atomic_write_u64(&launcher->slots[i].next_wakeup, (uint64) sleeps_to);
			pg_memory_barrier();
			return;
		}
}

/* The timer worker of MyDatabaseId registers its latch. */
void
TimerWorkerAttach(void)
{
	int			i;

	SpinLockAcquire(&launcher->mutex);
	i = find_slot(MyDatabaseId);
	if (i >= 0)
	{
		launcher->slots[i].pid = MyProcPid;
		launcher->slots[i].latch = MyLatch;
		launcher->slots[i].no_extension = false;
		pg_atomic_write_u64(&launcher->slots[i].next_wakeup, 0);
	}
	SpinLockRelease(&launcher->mutex);
	if (i < 0)
		ereport(FATAL,
				(errmsg("durable timer worker for database %u has no slot",
						MyDatabaseId)));
}

/* The timer worker leaves; no_extension says why. */
void
TimerWorkerDetach(bool no_extension)
{
	int			i;

	SpinLockAcquire(&launcher->mutex);
	i = find_slot(MyDatabaseId);
	if (i >= 0 && launcher->slots[i].pid == MyProcPid)
	{
		launcher->slots[i].pid = 0;
		launcher->slots[i].latch = NULL;
		launcher->slots[i].no_extension = no_extension;
		launcher->slots[i].checked_at = GetCurrentTimestamp();
		if (no_extension)
			launcher->slots[i].installed = false;
	}
	SpinLockRelease(&launcher->mutex);
}

/* before_shmem_exit callback of the timer worker. */
void
TimerWorkerDetachCallback(int code, Datum arg)
{
	TimerWorkerDetach(false);
}

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

/* Whether the timer worker of this slot is running (launcher only). */
static bool
slot_worker_running(int i)
{
	return handle_running(&worker_handles[i]);
}

/* Stop every executor of slot i (launcher only). */
static void
stop_executors(int i)
{
	int			k;

	for (k = 0; k < DURABLE_MAX_EXECUTORS; k++)
	{
		BackgroundWorkerHandle **h = &executor_handles[i * DURABLE_MAX_EXECUTORS + k];

		if (handle_running(h))
			TerminateBackgroundWorker(*h);
	}
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

/*
 * Start or stop executors of slot i so that durable.executor_workers run,
 * once its timer worker has found the extension and unless it is at 0.1.0.
 * Returns false when no background worker slot is free.
 */
static bool
ensure_executors(int i, const char *dbname, TimestampTz now)
{
	static TimestampTz last_warning = 0;
	WorkerSlot *slot = &launcher->slots[i];
	bool		wanted;
	int			k;

	SpinLockAcquire(&launcher->mutex);
	wanted = slot->installed &&
		!(slot->executors_idle &&
		  slot->executors_checked_at +
		  (int64) NO_EXTENSION_RECHECK_SECS * USECS_PER_SEC > now);
	SpinLockRelease(&launcher->mutex);

	for (k = 0; k < DURABLE_MAX_EXECUTORS; k++)
	{
		int			h = i * DURABLE_MAX_EXECUTORS + k;
		BackgroundWorker worker;

		if (!wanted || k >= durable_executor_workers)
		{
			if (handle_running(&executor_handles[h]))
				TerminateBackgroundWorker(executor_handles[h]);
			continue;
		}
		if (handle_running(&executor_handles[h]))
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
			if (now - last_warning > 60 * USECS_PER_SEC)
				ereport(LOG,
						(errmsg("durable: could not start executor %d for database \"%s\" yet",
								k + 1, dbname),
						 errhint("Raise max_worker_processes.")));
			last_warning = now;
			return false;
		}
		executor_started_at[h] = now;
	}
	return true;
}

/*
 * Start the timer worker of a database unless it runs or need not.  Returns
 * false when no background worker slot is free (the scan stops; workers that
 * exit wake the launcher, which goes on then).
 */
static bool
ensure_worker(Oid dboid, const char *dbname, TimestampTz now)
{
	static TimestampTz last_warning = 0;
	BackgroundWorker worker;
	int			i;
	bool		skip = false;

	SpinLockAcquire(&launcher->mutex);
	i = find_slot(dboid);
	if (i < 0)
	{
		i = find_slot(InvalidOid);
		if (i >= 0)
		{
			memset(&launcher->slots[i], 0, sizeof(WorkerSlot));
			launcher->slots[i].dboid = dboid;
			pg_atomic_init_u64(&launcher->slots[i].next_wakeup, 0);
			pg_atomic_init_u64(&launcher->slots[i].executor_generation, 0);
		}
	}
	else if (launcher->slots[i].paused_until > now)
		skip = rescan_soon = true;
	else if (launcher->slots[i].no_extension &&
			 launcher->slots[i].checked_at +
			 (int64) NO_EXTENSION_RECHECK_SECS * USECS_PER_SEC > now)
		skip = true;
	SpinLockRelease(&launcher->mutex);

	if (i < 0)
	{
		if (now - last_warning > 60 * USECS_PER_SEC)
			ereport(WARNING,
					(errmsg("durable: no worker slot for database \"%s\"", dbname),
					 errhint("Raise durable.max_databases.")));
		last_warning = now;
		return true;
	}
	if (skip)
		return true;
	if (slot_worker_running(i))
		return ensure_executors(i, dbname, now);

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
		if (now - last_warning > 60 * USECS_PER_SEC)
			ereport(LOG,
					(errmsg("durable: could not start a timer worker for database \"%s\" yet",
							dbname),
					 errhint("Raise max_worker_processes.")));
		last_warning = now;
		return false;
	}
	return ensure_executors(i, dbname, now);
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
	int			i;

	rescan_soon = false;
	if (!durable_worker_enabled)
	{
		for (i = 0; i < durable_max_databases; i++)
		{
			if (slot_worker_running(i))
				TerminateBackgroundWorker(worker_handles[i]);
			stop_executors(i);
		}
		return;
	}

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
		if (!ensure_worker(db->oid, NameStr(db->datname), now))
			break;
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();
}

/* Entry point of the launcher. */
void
DurableLauncherMain(Datum main_arg)
{
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
	SpinLockAcquire(&launcher->mutex);
	launcher->launcher_latch = MyLatch;
	SpinLockRelease(&launcher->mutex);

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
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 rescan_soon ? EXECUTOR_RESTART_MS :
						 (long) durable_worker_max_sleep * 1000L,
						 PG_WAIT_EXTENSION);
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
	WorkerSlot *slot = &launcher->slots[i];
	bool		found = false;
	int			j;
	int			k;

	SpinLockAcquire(&launcher->mutex);
	for (j = 0; j < n && !found; j++)
	{
		if (slot->pid == pids[j])
			found = true;
		for (k = 0; k < DURABLE_MAX_EXECUTORS && !found; k++)
			if (slot->executors[k].pid == pids[j])
				found = true;
	}
	SpinLockRelease(&launcher->mutex);
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

	if (launcher == NULL || !OidIsValid(dboid))
		return;
	SpinLockAcquire(&launcher->mutex);
	i = find_slot(dboid);
	if (i >= 0)
	{
		launcher->slots[i].paused_until = GetCurrentTimestamp() + 30 * USECS_PER_SEC;
		if (launcher->slots[i].pid != 0)
			pids[n++] = launcher->slots[i].pid;
		for (k = 0; k < DURABLE_MAX_EXECUTORS; k++)
			if (launcher->slots[i].executors[k].pid != 0)
				pids[n++] = launcher->slots[i].executors[k].pid;
	}
	SpinLockRelease(&launcher->mutex);
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

	if (launcher == NULL)
		return;
	SpinLockAcquire(&launcher->mutex);
	i = find_slot(MyDatabaseId);
	if (i >= 0)
		launcher->slots[i].executors_idle = false;
	SpinLockRelease(&launcher->mutex);
	register_callback();
	wake_launcher_at_commit = true;
}

/*
 * The template of CREATE DATABASE was copied: its workers may start again
 * at once.
 */
static void
resume_worker(Oid dboid)
{
	int			i;

	if (launcher == NULL || !OidIsValid(dboid))
		return;
	SpinLockAcquire(&launcher->mutex);
	i = find_slot(dboid);
	if (i >= 0)
		launcher->slots[i].paused_until = 0;
	SpinLockRelease(&launcher->mutex);
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

	if (launcher == NULL || !OidIsValid(dboid))
		return;
	SpinLockAcquire(&launcher->mutex);
	i = find_slot(dboid);
	if (i >= 0)
	{
		busy = launcher->slots[i].pid != 0;
		for (k = 0; k < DURABLE_MAX_EXECUTORS && !busy; k++)
			busy = launcher->slots[i].executors[k].pid != 0;
		if (!busy)
			launcher->slots[i].dboid = InvalidOid;
	}
	SpinLockRelease(&launcher->mutex);
}

/* Stop the workers that would block DROP DATABASE or CREATE DATABASE. */
static void
durable_process_utility(PlannedStmt *pstmt, const char *queryString,
						bool readOnlyTree, ProcessUtilityContext context,
						ParamListInfo params, QueryEnvironment *queryEnv,
						DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	bool		updates_durable = false;
	Oid			template_oid = InvalidOid;
	Oid			dropped_oid = InvalidOid;

	if (IsA(parsetree, DropdbStmt))
	{
		dropped_oid = get_database_oid(((DropdbStmt *) parsetree)->dbname, true);
		pause_worker(dropped_oid);
	}
	else if (IsA(parsetree, CreatedbStmt))
	{
		ListCell   *lc;

		foreach(lc, ((CreatedbStmt *) parsetree)->options)
		{
			DefElem    *def = (DefElem *) lfirst(lc);

			if (strcmp(def->defname, "template") == 0 && def->arg != NULL)
			{
				template_oid = get_database_oid(defGetString(def), true);
				pause_worker(template_oid);
			}
		}
		/* The launcher starts the workers of the copy and the template. */
		if (launcher != NULL)
		{
			register_callback();
			wake_launcher_at_commit = true;
		}
	}
	else if (IsA(parsetree, AlterExtensionStmt))
		updates_durable =
			strcmp(((AlterExtensionStmt *) parsetree)->extname, "durable") == 0;
	else if (IsA(parsetree, DropStmt) && drops_durable((DropStmt *) parsetree))
	{
		/* The workers see it gone and exit at once, not after a sleep. */
		WakeExecutorsAtCommit();
		WakeTimerWorkerAtCommit(0);
	}

	if (prev_process_utility)
		prev_process_utility(pstmt, queryString, readOnlyTree, context, params,
							 queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
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

	if (launcher == NULL)
		PG_RETURN_VOID();
	SpinLockAcquire(&launcher->mutex);
	i = find_slot(MyDatabaseId);
	if (i >= 0)
	{
		launcher->slots[i].no_extension = false;
		launcher->slots[i].paused_until = 0;
		launcher->slots[i].executors_idle = false;
	}
	SpinLockRelease(&launcher->mutex);
	register_callback();
	wake_launcher_at_commit = true;
	/* A timer worker still running (a quick DROP and CREATE) finds it again. */
	WakeTimerWorkerAtCommit(0);
	PG_RETURN_VOID();
}

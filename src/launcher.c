/*-------------------------------------------------------------------------
 *
 * launcher.c
 *	  The launcher: one timer worker per database that has the extension.
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

/* A database's timer worker, as the launcher and backends see it */
typedef struct WorkerSlot
{
	Oid			dboid;			/* InvalidOid: free */
	pid_t		pid;			/* 0 while not running */
	Latch	   *latch;
	pg_atomic_uint64 next_wakeup;	/* 0: awake; else the time it sleeps to */
	bool		no_extension;	/* exited: durable is not installed */
	TimestampTz checked_at;		/* when it found that */
	TimestampTz paused_until;	/* DROP/CREATE DATABASE: do not restart */
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

/* The launcher's handles of the workers it started, by slot */
static BackgroundWorkerHandle **worker_handles = NULL;

/* Earliest timer this transaction made, and whether to wake the launcher */
static TimestampTz earliest_new_timer = DT_NOEND;
static bool wake_launcher_at_commit = false;
static bool xact_callback_registered = false;

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

/* Wake the timer worker of this database, or the launcher, at commit. */
static void
launcher_xact_callback(XactEvent event, void *arg)
{
	TimestampTz due = earliest_new_timer;
	bool		wake_launcher = wake_launcher_at_commit;

	if (event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT &&
		event != XACT_EVENT_PARALLEL_COMMIT && event != XACT_EVENT_PARALLEL_ABORT)
		return;
	earliest_new_timer = DT_NOEND;
	wake_launcher_at_commit = false;
	if (event != XACT_EVENT_COMMIT || launcher == NULL)
		return;

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
	}
	SpinLockRelease(&launcher->mutex);
}

/* before_shmem_exit callback of the timer worker. */
void
TimerWorkerDetachCallback(int code, Datum arg)
{
	TimerWorkerDetach(false);
}

/* Whether the worker of this slot is running (launcher only). */
static bool
slot_worker_running(int i)
{
	pid_t		pid;

	if (worker_handles[i] == NULL)
		return false;
	if (GetBackgroundWorkerPid(worker_handles[i], &pid) == BGWH_STOPPED)
	{
		pfree(worker_handles[i]);
		worker_handles[i] = NULL;
		return false;
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
		}
	}
	else if (launcher->slots[i].paused_until > now ||
			 (launcher->slots[i].no_extension &&
			  launcher->slots[i].checked_at +
			  (int64) NO_EXTENSION_RECHECK_SECS * USECS_PER_SEC > now))
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
	if (skip || slot_worker_running(i))
		return true;

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

	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		if (!RegisterDynamicBackgroundWorker(&worker, &worker_handles[i]))
		{
			worker_handles[i] = NULL;
			if (now - last_warning > 60 * USECS_PER_SEC)
				ereport(LOG,
						(errmsg("durable: could not start a timer worker for database \"%s\" yet",
								dbname),
						 errhint("Raise max_worker_processes.")));
			last_warning = now;
			MemoryContextSwitchTo(old);
			return false;
		}
		MemoryContextSwitchTo(old);
	}
	return true;
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

	if (!durable_worker_enabled)
	{
		for (i = 0; i < durable_max_databases; i++)
			if (slot_worker_running(i))
				TerminateBackgroundWorker(worker_handles[i]);
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

/*
 * Stop the timer worker of a database and keep it stopped for a while, so
 * that DROP DATABASE or CREATE DATABASE ... TEMPLATE can go ahead.
 */
static void
pause_worker(Oid dboid)
{
	int			i;
	int			waited;
	pid_t		pid = 0;

	if (launcher == NULL || !OidIsValid(dboid))
		return;
	SpinLockAcquire(&launcher->mutex);
	i = find_slot(dboid);
	if (i >= 0)
	{
		launcher->slots[i].paused_until = GetCurrentTimestamp() + 30 * USECS_PER_SEC;
		pid = launcher->slots[i].pid;
	}
	SpinLockRelease(&launcher->mutex);
	if (pid == 0)
		return;
	(void) kill(pid, SIGTERM);
	for (waited = 0; waited < 500; waited++)
	{
		bool		gone;

		SpinLockAcquire(&launcher->mutex);
		gone = launcher->slots[i].pid != pid;
		SpinLockRelease(&launcher->mutex);
		if (gone)
			break;
		CHECK_FOR_INTERRUPTS();
		pg_usleep(10000L);
	}
}

/* Stop timer workers that would block DROP DATABASE or CREATE DATABASE. */
static void
durable_process_utility(PlannedStmt *pstmt, const char *queryString,
						bool readOnlyTree, ProcessUtilityContext context,
						ParamListInfo params, QueryEnvironment *queryEnv,
						DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;

	if (IsA(parsetree, DropdbStmt))
		pause_worker(get_database_oid(((DropdbStmt *) parsetree)->dbname, true));
	else if (IsA(parsetree, CreatedbStmt))
	{
		ListCell   *lc;

		foreach(lc, ((CreatedbStmt *) parsetree)->options)
		{
			DefElem    *def = (DefElem *) lfirst(lc);

			if (strcmp(def->defname, "template") == 0 && def->arg != NULL)
				pause_worker(get_database_oid(defGetString(def), true));
		}
	}

	if (prev_process_utility)
		prev_process_utility(pstmt, queryString, readOnlyTree, context, params,
							 queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
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
	}
	SpinLockRelease(&launcher->mutex);
	register_callback();
	wake_launcher_at_commit = true;
	PG_RETURN_VOID();
}

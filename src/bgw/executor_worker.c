/*-------------------------------------------------------------------------
 *
 * executor_worker.c
 *	  An executor worker: runs the tasks of SQL workflows and activities.
 *
 * The launcher starts durable.executor_workers of them in each database
 * whose timer worker found the extension (launcher.c).  Each runs ready
 * executor tasks (kinds 'w' and 'x'), one transaction per task, through
 * ExecuteReadyTasks (executor.c), as many as are ready; then it sleeps in
 * WaitForExecutorTask until a commit queues another, at most
 * durable.worker_max_sleep, or until a rate limit that held tasks back
 * admits one again (executor_share.c).
 *
 * Before it claims anything, it puts off the task its predecessor in the
 * same slot left when it was terminated (RecoverExecutorTasks, executor.c).
 *
 * After each sleep it checks that the extension is still installed, at
 * 0.2.0 or later: it exits when it is not (the launcher starts executors
 * again after CREATE EXTENSION or ALTER EXTENSION UPDATE).  It exits on
 * SIGTERM (the launcher stops every worker when durable.worker_enabled is
 * turned off in the server's configuration), when durable.executor_workers
 * drops below its number, and at once when another process runs as the
 * same executor of its database (ExecutorWorkerAttach).
 *
 * Where durable.worker_enabled is off for its database (ALTER DATABASE ...
 * SET, docs/operations.md "Backup") it runs nothing and stays, reading the setting again
 * after each sleep; while busy, at least every durable.worker_max_sleep.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "store/executor_share.h"
#include "store/wait.h"
#include "store/worker_slots.h"
#include "sqlwf/executor.h"
#include "bgw/launcher.h"
#include "bgw/timer_worker.h"

PGDLLEXPORT void DurableExecutorMain(Datum main_arg);

/* What an executor finds in its database */
typedef enum ExecutorSchema
{
	SCHEMA_READY,				/* durable 0.2.0 or later */
	SCHEMA_NO_EXTENSION,		/* durable is not installed */
	SCHEMA_OLD_VERSION,			/* durable 0.1.0: nothing to run yet */
	SCHEMA_DISABLED,			/* durable.worker_enabled is off here */
	SCHEMA_UNKNOWN				/* the check failed; try again later */
} ExecutorSchema;

/* The database's name, once an executor found its work turned off */
static char *dbname = NULL;

/* Whether the executor tables exist (in a transaction of its own). */
static ExecutorSchema
check_schema(MemoryContext cxt)
{
	volatile ExecutorSchema result = SCHEMA_UNKNOWN;

	PG_TRY();
	{
		MemoryContext old = MemoryContextSwitchTo(cxt);
		Oid			nsp;

		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		if (!OidIsValid(get_extension_oid("durable", true)))
			result = SCHEMA_NO_EXTENSION;
		else
		{
			nsp = get_namespace_oid("durable", true);
			if (!OidIsValid(nsp) ||
				!OidIsValid(get_relname_relid("registrations", nsp)))
				result = SCHEMA_OLD_VERSION;
			else if (!DatabaseWorkersEnabled())
			{
				result = SCHEMA_DISABLED;
				if (dbname == NULL)
				{
					char	   *name = get_database_name(MyDatabaseId);

					if (name != NULL)
						dbname = MemoryContextStrdup(TopMemoryContext, name);
				}
			}
			else
				result = SCHEMA_READY;
		}
		PopActiveSnapshot();
		CommitTransactionCommand();
		MemoryContextSwitchTo(old);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		EmitErrorReport();
		FlushErrorState();
		AbortCurrentTransaction();
		result = SCHEMA_UNKNOWN;
	}
	PG_END_TRY();
	return result;
}

/*
 * before_shmem_exit callback: leave the executor slot.  An executor that
 * exits in the middle of a task (terminated by the watchdog or an operator)
 * first rolls the task back, which releases its locks, so that the task it
 * leaves in its slot can be put off at once (RecoverExecutorTasks).
 */
static void
executor_detach_callback(int code, Datum arg)
{
	if (ExecutorTaskInHand())
		AbortOutOfAnyTransaction();
	(void) ExecutorWorkerDetach(false, false);
}

/*
 * Entry point of an executor worker; main_arg is the database oid, bgw_extra
 * its index among the database's executors.
 */
void
DurableExecutorMain(Datum main_arg)
{
	Oid			dboid = DatumGetObjectId(main_arg);
	int			index;
	MemoryContext loop_cxt;
	bool		check = true;
	TimestampTz checked_at = 0;
	bool		idle_logged = false;

	memcpy(&index, MyBgworkerEntry->bgw_extra, sizeof(index));
	DurableIsExecutor = true;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);
	pgstat_report_appname("durable executor");
	/* Nothing this session runs looks up names in a schema users can write */
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_SUSET,
					PGC_S_SESSION);
	ExecutorWorkerAttach(index);
	before_shmem_exit(executor_detach_callback, (Datum) 0);

	loop_cxt = AllocSetContextCreate(TopMemoryContext, "durable executor",
									 ALLOCSET_DEFAULT_SIZES);

	for (;;)
	{
		int			n;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (!ExecutorWorkerWanted(index))
			proc_exit(0);
		MemoryContextReset(loop_cxt);

		if (check ||
			TimestampDifferenceExceeds(checked_at, GetCurrentTimestamp(),
									   durable_worker_max_sleep * 1000))
		{
			checked_at = GetCurrentTimestamp();
			switch (check_schema(loop_cxt))
			{
				case SCHEMA_READY:
					idle_logged = false;
					break;
				case SCHEMA_NO_EXTENSION:
					(void) ExecutorWorkerDetach(true, false);
					proc_exit(0);
					break;
				case SCHEMA_OLD_VERSION:
					/* Said once, by the first executor to find it. */
					if (ExecutorWorkerDetach(false, true))
						ereport(LOG,
								(errmsg("durable executors idle: the extension durable is older than 0.2.0"),
								 errhint("Run ALTER EXTENSION durable UPDATE.")));
					proc_exit(0);
					break;
				case SCHEMA_DISABLED:
					if (!idle_logged)
						ereport(LOG,
								(errmsg("durable executor %d idle in database \"%s\": durable.worker_enabled is off for it",
										index, dbname ? dbname : "?")));
					idle_logged = true;
					WaitForExecutorTask((long) durable_worker_max_sleep * 1000L);
					check = true;
					continue;
				case SCHEMA_UNKNOWN:
					WaitForExecutorTask((long) durable_worker_max_sleep * 1000L);
					check = true;
					continue;
			}
		}

		/* A task this executor's predecessor left: put off before any claim */
		RecoverExecutorTasks(index, loop_cxt);
		MemoryContextSwitchTo(loop_cxt);
		pgstat_report_activity(STATE_RUNNING, "running durable executor tasks");
		n = ExecuteReadyTasks(durable_worker_batch_size, true);
		MemoryContextSwitchTo(TopMemoryContext);
		pgstat_report_stat(false);
		pgstat_report_activity(STATE_IDLE, NULL);

		/*
		 * Check the extension again after each sleep, not while busy.  A
		 * rate limit that held tasks back says when it admits one again.
		 */
		check = (n == 0);
		if (n == 0)
		{
			long		sleep_ms = (long) durable_worker_max_sleep * 1000L;
			long		retry_ms = ExecutorClaimRetryMs();

			if (retry_ms > 0 && retry_ms < sleep_ms)
				sleep_ms = retry_ms;
			WaitForExecutorTask(sleep_ms);
		}
	}
}

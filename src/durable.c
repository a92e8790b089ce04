/*-------------------------------------------------------------------------
 *
 * durable.c
 *	  Module entry point: GUCs and the engine's clock.
 *
 * _PG_init only declares: the GUCs of the engine and, when the library is
 * preloaded, the background worker launcher (launcher.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "durable.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

int			durable_max_history_events = 51200;
int			durable_max_payload_size = 2 * 1024 * 1024;
int			durable_max_buffered_events = 100;
int			durable_max_attempts_per_run = 1000;
int			durable_max_pending_activities = 2000;
int			durable_default_activity_timeout = 600;
bool		durable_library_preloaded = false;
bool		durable_worker_enabled = true;
char	   *durable_worker_databases = NULL;
int			durable_worker_batch_size = 1000;
int			durable_worker_max_sleep = 10;
int			durable_timer_full_scan_interval = 60;
int			durable_compaction_interval = 60;
int			durable_max_databases = 64;
int			durable_executor_workers = 2;
int			durable_executor_grace = 5;

/* The range of durable.test_time: [1970-01-01, 10000-01-01) UTC */
#define TEST_TIME_MIN \
	((TimestampTz) (UNIX_EPOCH_JDATE - POSTGRES_EPOCH_JDATE) * USECS_PER_DAY)
#define TEST_TIME_END \
	((TimestampTz) (date2j(10000, 1, 1) - POSTGRES_EPOCH_JDATE) * USECS_PER_DAY)

/* durable.test_time: the string as set, and its parsed value */
static char *durable_test_time_string = NULL;
static bool test_time_set = false;
static TimestampTz test_time_value = 0;

/* Parse a timestamptz without raising errors, for the GUC check hook. */
static bool
parse_timestamptz_quietly(const char *str, TimestampTz *result)
{
	char		workbuf[MAXDATELEN + MAXDATEFIELDS];
	char	   *field[MAXDATEFIELDS];
	int			ftype[MAXDATEFIELDS];
	int			nf;
	int			dtype;
	int			tz;
	struct pg_tm tt;
	fsec_t		fsec;

	if (strlen(str) >= MAXDATELEN)
		return false;
	if (ParseDateTime(str, workbuf, sizeof(workbuf), field, ftype,
					  MAXDATEFIELDS, &nf) != 0)
		return false;
	if (DecodeDateTime(field, ftype, nf, &dtype, &tt, &fsec, &tz) != 0)
		return false;
	if (dtype != DTK_DATE)
		return false;
	if (tm2timestamp(&tt, fsec, &tz, result) != 0)
		return false;
	return IS_VALID_TIMESTAMP(*result);
}

/* Check hook of durable.test_time: empty or a valid timestamptz. */
static bool
check_test_time(char **newval, void **extra, GucSource source)
{
	TimestampTz *parsed;

	if (*newval == NULL || (*newval)[0] == '\0')
	{
		*extra = NULL;
		return true;
	}
	parsed = (TimestampTz *) malloc(sizeof(TimestampTz));
	if (parsed == NULL)
		return false;
	if (!parse_timestamptz_quietly(*newval, parsed))
	{
		free(parsed);
		GUC_check_errdetail("durable.test_time must be empty or a timestamp with time zone.");
		return false;
	}

	/*
	 * Years 1970 to 9999 only: with every duration at most 100 years
	 * (util.c), deadlines computed from the clock then stay far from the
	 * ends of timestamptz, in C and in the engine's SQL alike.
	 */
	if (*parsed < TEST_TIME_MIN || *parsed >= TEST_TIME_END)
	{
		free(parsed);
		GUC_check_errdetail("durable.test_time must be from 1970-01-01 to 9999-12-31.");
		return false;
	}
	*extra = parsed;
	return true;
}

/* Assign hook of durable.test_time: freeze or unfreeze the clock. */
static void
assign_test_time(const char *newval, void *extra)
{
	if (extra == NULL)
		test_time_set = false;
	else
	{
		test_time_set = true;
		test_time_value = *(TimestampTz *) extra;
	}
}

/* The engine's clock: durable.test_time when set, else the wall clock. */
TimestampTz
DurableNow(void)
{
	if (test_time_set)
		return test_time_value;
	return GetCurrentTimestamp();
}

void
_PG_init(void)
{
	durable_library_preloaded = process_shared_preload_libraries_in_progress;

	DefineCustomStringVariable("durable.test_time",
							   "Freezes the engine's clock (durable.now()) at this time, for tests.",
							   "Empty means the wall clock.",
							   &durable_test_time_string,
							   "",
							   PGC_SUSET,
							   0,
							   check_test_time, assign_test_time, NULL);

	DefineCustomIntVariable("durable.max_history_events",
							"Longest history of one run, in events.",
							"A run whose history reaches this many events less the 10 kept for closing it is terminated.",
							&durable_max_history_events,
							51200, 100, INT_MAX,
							PGC_SUSET, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("durable.max_payload_size",
							"Largest payload (input, result, details, memo) accepted.",
							NULL,
							&durable_max_payload_size,
							2 * 1024 * 1024, 1024, (int) MaxAllocSize,
							PGC_SUSET, GUC_UNIT_BYTE,
							NULL, NULL, NULL);

	DefineCustomIntVariable("durable.max_buffered_events",
							"Events buffered during one decision task after which the task is failed (ForceCloseDecision).",
							NULL,
							&durable_max_buffered_events,
							100, 1, INT_MAX,
							PGC_SUSET, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("durable.max_attempts_per_run",
							"Activity attempts after which a run fails without retry.",
							NULL,
							&durable_max_attempts_per_run,
							1000, 1, INT_MAX,
							PGC_SUSET, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("durable.max_pending_activities",
							"Most activities one run may have pending at once.",
							NULL,
							&durable_max_pending_activities,
							2000, 1, INT_MAX,
							PGC_SUSET, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("durable.default_activity_timeout",
							"StartToClose timeout of an activity that sets neither StartToClose nor ScheduleToClose.",
							NULL,
							&durable_default_activity_timeout,
							600, 1, INT_MAX,
							PGC_SUSET, GUC_UNIT_S,
							NULL, NULL, NULL);

	/*
	 * PGC_SUSET, not PGC_SIGHUP, so that ALTER DATABASE ... SET can turn it
	 * off for one database (a restored copy): the launcher reads the
	 * server's value, each database's workers its own (worker.c).
	 */
	DefineCustomBoolVariable("durable.worker_enabled",
							 "Whether the background workers fire durable timers and run SQL workflows and activities.",
							 "Off: timers fire only when durable.tick() is called, executor tasks run only in durable.run_tasks(). Set per database with ALTER DATABASE.",
							 &durable_worker_enabled,
							 true,
							 PGC_SUSET, 0,
							 NULL, NULL, NULL);

	DefineCustomStringVariable("durable.worker_databases",
							   "Databases whose timers the background workers fire.",
							   "A comma-separated list of names; empty means every database that has the extension.",
							   &durable_worker_databases,
							   "",
							   PGC_SIGHUP, 0,
							   NULL, NULL, NULL);

	DefineCustomIntVariable("durable.worker_batch_size",
							"Timers a background worker fires in one transaction.",
							NULL,
							&durable_worker_batch_size,
							1000, 1, 100000,
							PGC_SIGHUP, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("durable.worker_max_sleep",
							"Longest sleep of a background worker, and how often the launcher looks for new databases.",
							NULL,
							&durable_worker_max_sleep,
							10, 1, 3600,
							PGC_SIGHUP, GUC_UNIT_S,
							NULL, NULL, NULL);

	DefineCustomIntVariable("durable.executor_grace",
							"How long past its time limit an executor's task may run before it is canceled, and then terminated.",
							"A task still running its timeout plus this is canceled (as pg_cancel_backend); one still running this much longer has its executor terminated.",
							&durable_executor_grace,
							5, 1, 3600,
							PGC_SIGHUP, GUC_UNIT_S,
							NULL, NULL, NULL);

	DefineCustomIntVariable("durable.timer_full_scan_interval",
							"How often the timer worker looks for due timers from the beginning of durable.timers rather than from its low-water mark.",
							"Timers written by anything but durable (a restore of durable.timers) fire at most this late.",
							&durable_timer_full_scan_interval,
							60, 1, 86400,
							PGC_SIGHUP, GUC_UNIT_S,
							NULL, NULL, NULL);

	DefineCustomIntVariable("durable.compaction_interval",
							"How often the timer worker looks at the vacuum horizon and, after a held one, rebuilds the indexes of the queue tables that grew.",
							"0 turns the rebuilds off.",
							&durable_compaction_interval,
							60, 0, 86400,
							PGC_SIGHUP, GUC_UNIT_S,
							NULL, NULL, NULL);

	DefineCustomIntVariable("durable.executor_workers",
							"Executor background workers per database, which run SQL workflows and activities.",
							"0 means none: tasks of registered types then run only in durable.run_tasks().",
							&durable_executor_workers,
							2, 0, DURABLE_MAX_EXECUTORS,
							PGC_SIGHUP, 0,
							NULL, NULL, NULL);

	/* Sizes shared memory: exists only when preloaded. */
	if (durable_library_preloaded)
		DefineCustomIntVariable("durable.max_databases",
								"Most databases with a timer worker at once.",
								"Each needs 1 + durable.executor_workers slots of max_worker_processes.",
								&durable_max_databases,
								64, 1, 1024,
								PGC_POSTMASTER, 0,
								NULL, NULL, NULL);

	DefineNotifyGuc();
	if (durable_library_preloaded)
	{
		DefineCustomIntVariable("durable.max_pollers",
								"Pollers remembered in shared memory, for durable.task_queues.",
								"The least recently seen is forgotten first; 0 remembers none.",
								&durable_max_pollers,
								1024, 0, 65536,
								PGC_POSTMASTER, 0,
								NULL, NULL, NULL);
		DefineCustomIntVariable("durable.max_metric_queues",
								"Task queues counted apart in durable.metrics.",
								"The counts of further queues go to their database's row without names.",
								&durable_max_metric_queues,
								256, 0, 65536,
								PGC_POSTMASTER, 0,
								NULL, NULL, NULL);
		DefineCustomIntVariable("durable.metric_idle_timeout",
								"How long a task queue counts nothing before a new queue of its namespace may take its row of durable.metrics.",
								"Its counts then go to its database's row; 0 never frees a row for that.",
								&durable_metric_idle_timeout,
								600, 0, INT_MAX / 1000,
								PGC_SIGHUP, GUC_UNIT_S,
								NULL, NULL, NULL);
	}

	MarkGUCPrefixReserved("durable");
	InstallCallerHook();

	if (durable_library_preloaded)
	{
		DurableShmemInit();
		RegisterLauncher();
		InstallLauncherHooks();
		ClaimMarkInstallHooks();
		MetricsInstallHooks();
	}
}

PG_FUNCTION_INFO_V1(durable_now);
/*
 * durable.now(): the engine's clock; inside a workflow function, the time of
 * the decision task the calling line first ran in (replay.c).
 */
Datum
durable_now(PG_FUNCTION_ARGS)
{
	if (ReplayActive())
		PG_RETURN_TIMESTAMPTZ(ReplayNow());
	PG_RETURN_TIMESTAMPTZ(DurableNow());
}

PG_FUNCTION_INFO_V1(durable_preloaded);
/* durable.preloaded(): whether the library came from shared_preload_libraries. */
Datum
durable_preloaded(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(durable_library_preloaded);
}

/*-------------------------------------------------------------------------
 *
 * guc.c
 *	  Every setting of durable (the durable.* GUCs), registered in one place.
 *
 * Each variable belongs to the module that reads it and is declared in that
 * module's header; this file only registers them, with their bounds and
 * descriptions, from _PG_init.  docs/configuration.md lists them for users.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/guc.h"
#include "utils/memutils.h"

#include "base/clock.h"
#include "base/util.h"
#include "store/compaction.h"
#include "store/metrics.h"
#include "store/pollers.h"
#include "store/wait.h"
#include "store/worker_slots.h"
#include "engine/activities.h"
#include "engine/runs.h"
#include "sqlwf/replace_guard.h"
#include "bgw/launcher.h"
#include "bgw/timer_worker.h"
#include "guc.h"

/* durable.replay_check_on_replace */
static const struct config_enum_entry replace_check_options[] = {
	{"off", REPLACE_CHECK_OFF, false},
	{"warning", REPLACE_CHECK_WARNING, false},
	{"error", REPLACE_CHECK_ERROR, false},
	{NULL, 0, false}
};

/*
 * Register the settings.  Those that size shared memory exist only when the
 * library is preloaded.
 */
void
DurableDefineGucs(bool preloaded)
{
	DefineCustomStringVariable("durable.test_time",
							   "Freezes the engine's clock (durable.now()) at this time, for tests.",
							   "Empty means the wall clock.",
							   &durable_test_time_string,
							   "",
							   PGC_SUSET,
							   0,
							   CheckTestTime, AssignTestTime, NULL);

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
	 * server's value, each database's workers its own (bgw/timer_worker.c).
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

	DefineCustomEnumVariable("durable.replay_check_on_replace",
							 "What CREATE OR REPLACE FUNCTION of a function that running SQL workflows use does when the new code does not replay them, and what DROP FUNCTION of one does.",
							 "off: nothing; warning: a WARNING; error: an ERROR, which undoes the statement.",
							 &durable_replay_check_on_replace,
							 REPLACE_CHECK_WARNING, replace_check_options,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);

	/* Sizes shared memory: exists only when preloaded. */
	if (preloaded)
		DefineCustomIntVariable("durable.max_databases",
								"Most databases with a timer worker at once.",
								"Each needs 1 + durable.executor_workers slots of max_worker_processes.",
								&durable_max_databases,
								64, 1, 1024,
								PGC_POSTMASTER, 0,
								NULL, NULL, NULL);

	/*
	 * PGC_SUSET: any role that may connect may LISTEN, and would see the ids
	 * of the closes of every namespace, so only a superuser turns it on
	 * (docs: wait_workflow).
	 */
	DefineCustomBoolVariable("durable.notify_workflow_closed",
							 "Sends a NOTIFY on channel " DURABLE_CLOSED_CHANNEL " when a workflow run closes.",
							 "Every role that may connect to the database can LISTEN to it, whatever its namespace privileges.",
							 &durable_notify_workflow_closed,
							 false,
							 PGC_SUSET, 0,
							 NULL, NULL, NULL);

	if (preloaded)
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
}

/*-------------------------------------------------------------------------
 *
 * queue_pause.c
 *	  Paused task queues: durable.pause_task_queue() and
 *	  durable.resume_task_queue(), and the check a claim makes.
 *
 * A paused queue keeps its tasks: they are queued, timers fire, but no task
 * of the queue is handed out, by a poll (direct.c's claim), eager dispatch
 * (engine/runs.c, engine/activities.c) or the executors (executor_share.c,
 * sqlwf/executor.c).  durable.paused_task_queues holds one row per paused
 * queue, with who paused it, when and why.
 *
 * The check is exact: a poll's claim probes the table's primary key with
 * the snapshot it claims with (TaskQueuePaused, direct.c), and the
 * executors' claim statements carry the same test, so a pause committed
 * before a claim's snapshot holds that claim back.  The probe of an empty
 * index costs an index descent.
 *
 * Resuming wakes, at commit, every poll waiting on the queue and the
 * executors (store/wait.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/builtins.h"

#include "base/caller.h"
#include "base/clock.h"
#include "base/util.h"
#include "store/direct.h"
#include "store/namespaces.h"
#include "store/queue_controls.h"
#include "store/spi.h"
#include "store/wait.h"

#define ARG_TEXT(n)		(PG_ARGISNULL(n) ? NULL : PG_GETARG_TEXT_PP(n))

static KeptPlan pause_plan = {
	NULL, "INSERT INTO durable.paused_task_queues"
	" (namespace, task_queue, paused_at, paused_by, reason)"
	" VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
	5, {TEXTOID, TEXTOID, TIMESTAMPTZOID, TEXTOID, TEXTOID}
};
static KeptPlan resume_plan = {
	NULL, "DELETE FROM durable.paused_task_queues"
	" WHERE namespace = $1 AND task_queue = $2",
	2, {TEXTOID, TEXTOID}
};

PG_FUNCTION_INFO_V1(durable_pause_task_queue);
/*
 * durable.pause_task_queue(task_queue, namespace, reason): true when the
 * queue was not paused.
 */
Datum
durable_pause_task_queue(PG_FUNCTION_ARGS)
{
	char	   *task_queue = CheckName(ARG_TEXT(0), "task_queue");
	char	   *namespace = CheckName(ARG_TEXT(1), "namespace");
	Datum		values[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};
	const char *who;
	bool		paused;

	RequireWritableTransaction("durable.pause_task_queue()");
	DurableSPIConnect();
	CheckNamespacePrivilege(namespace, NSPRIV_CLIENT);
	who = CallerIdentity();
	values[0] = CStringGetTextDatum(namespace);
	values[1] = CStringGetTextDatum(task_queue);
	values[2] = TimestampTzGetDatum(DurableNow());
	values[3] = CStringGetTextDatum(who != NULL ? who : "");
	if (PG_ARGISNULL(2))
		nulls[4] = 'n';
	else
		values[4] = PointerGetDatum(PG_GETARG_TEXT_PP(2));
	QueueControlsEngineWrite(namespace, task_queue);
	RunPlan(&pause_plan, values, nulls, false, 0);
	paused = (SPI_processed == 1);
	DurableSPIFinish();
	PG_RETURN_BOOL(paused);
}

PG_FUNCTION_INFO_V1(durable_resume_task_queue);
/*
 * durable.resume_task_queue(task_queue, namespace): true when the queue was
 * paused.  Its waiting polls and the executors are woken at commit.
 */
Datum
durable_resume_task_queue(PG_FUNCTION_ARGS)
{
	char	   *task_queue = CheckName(ARG_TEXT(0), "task_queue");
	char	   *namespace = CheckName(ARG_TEXT(1), "namespace");
	Datum		values[2];
	bool		resumed;

	RequireWritableTransaction("durable.resume_task_queue()");
	DurableSPIConnect();
	CheckNamespacePrivilege(namespace, NSPRIV_CLIENT);
	values[0] = CStringGetTextDatum(namespace);
	values[1] = CStringGetTextDatum(task_queue);
	RunPlan(&resume_plan, values, NULL, false, 0);
	resumed = (SPI_processed == 1);
	if (resumed)
		WakeWholeQueueAtCommit(namespace, task_queue);
	DurableSPIFinish();
	PG_RETURN_BOOL(resumed);
}

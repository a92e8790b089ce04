/*-------------------------------------------------------------------------
 *
 * pause.c
 *	  Pausing a workflow run: durable.pause_workflow() and
 *	  durable.resume_workflow() (api/client.c).
 *
 * While a run is paused none of its tasks is handed out, by a poll, eager
 * dispatch or the executors, and nothing else changes: signals are
 * recorded, timers fire, tasks are scheduled (they wait), cancel and
 * terminate work.  A task already started is not taken back.
 *
 * The claims are not changed, so that they cost what they cost when
 * nothing is paused: a paused run's ready tasks are held, their kind in
 * durable.ready_tasks changed to its upper-case letter ('d' to 'D', 'a' to
 * 'A', 'w' to 'W', 'x' to 'X'), which is in no claim's order (the primary
 * key's (namespace, task_queue, kind, task_id) for polls, the executors'
 * partial index of kinds 'w' and 'x').  The tasks the run queues while it
 * is paused are written held (EnqueueReadyTask, engine/runs.c), and eager
 * dispatch passes it over (schedule_decision, ScheduleActivity).  Resuming
 * gives them their kind back under their old task ids, in their order, and
 * wakes their polls or the executors at commit.
 *
 * runs.paused_at, paused_by and pause_reason say who paused the run (the
 * calling role), when (durable.now()) and why; CloseRun clears them, so
 * only an open run is paused.  Both functions work under the run's lock,
 * as everything that queues a task of the run does.
 *
 * Claims under way when the pause commits.  A claim whose snapshot sees the
 * pause finds the task's held version and passes it over (DirectClaimReadyTask
 * checks the kind of a newer version; the executors' statements re-check
 * theirs).  A task a claimer had already locked is skipped by the pause
 * (SKIP LOCKED, as CloseRun drops a run's tasks, since the claimer takes
 * the run's lock after the task's): the claimer that then gets the run's
 * lock finds it paused and queues the task again, held, under a new task id
 * (StartDecisionTask, the executor's activities).  Only an activity task a
 * poll had claimed is started anyway, since a poll's activity start does not
 * lock the run: it was claimed before the pause committed.
 *
 * The claim marks (store/claim_mark.c): holding a task takes it out of its
 * claim order, as a claim does, and may be rolled back as a claim may.
 * Resuming puts tasks back under their old ids: ClaimMarkLower first.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"

#include "base/util.h"
#include "store/claim_mark.h"
#include "store/spi.h"
#include "store/wait.h"
#include "engine/pause.h"
#include "engine/runs.h"

static KeptPlan pause_run = {
	NULL, "UPDATE durable.runs SET paused_at = $2, paused_by = $3,"
	" pause_reason = $4 WHERE run_id = $1",
	4, {UUIDOID, TIMESTAMPTZOID, TEXTOID, TEXTOID}
};
static KeptPlan resume_run = {
	NULL, "UPDATE durable.runs SET paused_at = NULL, paused_by = NULL,"
	" pause_reason = NULL WHERE run_id = $1",
	1, {UUIDOID}
};

/*
 * Hold the run's ready tasks; one a claimer has locked is being claimed and
 * skipped (see the head of the file).
 */
static KeptPlan hold_tasks = {
	NULL, "UPDATE durable.ready_tasks SET kind = CASE kind"
	" WHEN 'd' THEN 'D' WHEN 'a' THEN 'A' WHEN 'w' THEN 'W' ELSE 'X' END"
	" WHERE ctid = ANY (ARRAY (SELECT ctid FROM durable.ready_tasks"
	"   WHERE run_id = $1 AND kind IN ('d', 'a', 'w', 'x')"
	"   FOR UPDATE SKIP LOCKED))",
	1, {UUIDOID}
};
static KeptPlan first_held_task = {
	NULL, "SELECT min(task_id) FROM durable.ready_tasks"
	" WHERE run_id = $1 AND kind IN ('D', 'A', 'W', 'X')",
	1, {UUIDOID}
};
static KeptPlan release_tasks = {
	NULL, "UPDATE durable.ready_tasks SET kind = CASE kind"
	" WHEN 'D' THEN 'd' WHEN 'A' THEN 'a' WHEN 'W' THEN 'w' ELSE 'x' END"
	" WHERE run_id = $1 AND kind IN ('D', 'A', 'W', 'X')"
	" RETURNING task_queue, kind",
	1, {UUIDOID}
};

/*
 * Pause the open run, locked by the caller: true when it was not paused.
 * who and reason (NULL: none) are recorded with now.
 */
bool
PauseRun(RunState *rs, TimestampTz now, const char *who, const char *reason)
{
	Datum		values[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};

	RequireRunOpen(rs);
	if (RunIsPaused(rs))
		return false;
	values[0] = UUIDPGetDatum(&rs->run_id);
	values[1] = TimestampTzGetDatum(now);
	values[2] = CStringGetTextDatum(who != NULL ? who : "");
	if (reason != NULL)
		values[3] = CStringGetTextDatum(reason);
	else
		nulls[3] = 'n';
	RunPlan(&pause_run, values, nulls, false, 0);
	RunPlan(&hold_tasks, values, NULL, false, 0);
	rs->paused = true;
	rs->paused_known = true;
	return true;
}

/*
 * Resume the open run, locked by the caller: true when it was paused.  Its
 * held tasks go back to their queues, and their polls or the executors are
 * woken at commit.
 */
bool
ResumeRun(RunState *rs)
{
	Datum		values[1];
	bool		isnull;
	uint64		n;
	uint64		i;

	RequireRunOpen(rs);
	if (!RunIsPaused(rs))
		return false;
	values[0] = UUIDPGetDatum(&rs->run_id);
	RunPlan(&resume_run, values, NULL, false, 0);
	rs->paused = false;

	if (RunPlan(&first_held_task, values, NULL, false, 1) == 1)
	{
		Datum		first = SPIGetDatum(0, 1, &isnull);

		SPI_freetuptable(SPI_tuptable);
		if (isnull)
			return true;
		/* Tasks come back into their claim order under old ids. */
		ClaimMarkLower(DatumGetInt64(first));
	}
	n = RunPlan(&release_tasks, values, NULL, false, 0);
	for (i = 0; i < n; i++)
	{
		char	   *task_queue = SPIGetText(i, 1);
		char		kind = DatumGetChar(SPIGetDatum(i, 2, &isnull));

		WakeQueueAtCommit(rs->namespace, task_queue, kind, 1);
	}
	if (n > 0)
		SPI_freetuptable(SPI_tuptable);
	return true;
}

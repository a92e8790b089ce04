/*-------------------------------------------------------------------------
 *
 * executor.c
 *	  Tasks of SQL workflows and SQL activities, run inside the server.
 *
 * Decision tasks of a registered workflow type and activity tasks of a
 * registered activity type are queued as ready tasks of kinds 'w' and 'x',
 * which no external poll takes.  The executor workers (and durable.
 * run_tasks()) claim them with SKIP LOCKED, the oldest task of the namespace
 * that has the fewest tasks running first (executor_share.c), and run each
 * in one transaction:
 *
 * - a decision task: DecisionTaskStarted, the workflow function replayed
 *	 (replay.c), and the decisions it made, completed at once.  Nothing of a
 *	 task that crashes is left: it is queued again as it was.
 * - an activity task: the activity function, in a subtransaction, then its
 *	 outcome.  Its writes and ActivityTaskCompleted commit together; an
 *	 error rolls the writes back and fails the attempt with the SQLSTATE as
 *	 reason.  The attempt is never marked started in the table, since no
 *	 other session could see it before the outcome anyway; its StartToClose
 *	 timeout is a statement timeout.  Run and activity stay locked (in that
 *	 order) while the function runs, so nothing else ends the attempt
 *	 meanwhile; signals to the run wait for it.
 *
 * A chain: after a task, the executor runs the tasks it made ready for the
 * same run (the next decision task, the activity it scheduled) in the same
 * transaction, up to EXECUTOR_CHAIN_TASKS tasks or EXECUTOR_CHAIN_MS, so that
 * a SQL workflow's quick steps commit together.  A crash undoes the whole
 * chain with its writes, and it runs again: nothing is done twice.
 *
 * User code (a workflow function, a SQL activity) runs as PostgreSQL runs
 * index expressions and maintenance for another role (CallAsRole): as the
 * role it was registered to run as, in a security-restricted operation
 * (no temporary objects, PREPARE, LISTEN, cursors WITH HOLD or SET ROLE,
 * which would outlive it in the session), with that role's own search_path
 * (as a login of the role would get it, pg_temp last), and every setting it
 * changes rolled back after the call, whatever the outcome.  The role must
 * still exist and may still execute the function at each call.  So nothing
 * the code does changes what the engine's statements, which run as the
 * engine's owner, mean afterwards; and those statements do not depend on
 * the search_path anyway (spi.c).  A failure of user code is logged (LOG)
 * besides being recorded in history.
 *
 * A task that fails in the engine (an error that is not the outcome of the
 * user's function: a function whose library cannot be loaded, a run the
 * engine cannot read, a lock timeout, the executor canceled) would be the
 * oldest task again at once, and the executors would retry it in a loop
 * while every other workflow waits.  Since 0.3.0 such a task is put off
 * instead: its row in durable.ready_tasks gets not_before (1 s, doubling up
 * to TASK_BACKOFF_MAX_SECONDS), failures and last_error, one WARNING is
 * logged, and a task_retry timer clears not_before when it is due and wakes
 * the executors.  The claim skips put-off tasks through its partial index
 * (not_before IS NULL), without reading them.  durable.stuck_tasks and
 * describe_workflow's taskFailure show them.  On a database still at 0.2.0
 * (no such columns) a failing task is logged and retried after a second.
 *
 * Time limits.  The executors serve every namespace, so no user code may
 * keep one, even code that catches the cancel of its statement timeout.
 * An executor shows the task it runs in its slot of shared memory
 * (store/worker_slots.c, ExecutorTaskBegin), and CallAsRole the deadline of the user
 * code, from the same timeout it arms as statement timeout.  The timer
 * worker's watchdog (ExecutorWatchdog) cancels code still running
 * durable.executor_grace past it, and terminates its executor a grace
 * later.  The slot outlives the executor: before anything claims the task
 * again, the restarted executor or the timer worker (RecoverExecutorTasks)
 * records the attempt as timed out by the rules of a timeout the executor
 * sees itself, and puts off the task queued again for the same code.
 *
 * Locks.  In an executor the engine's statements wait at most
 * EXECUTOR_LOCK_TIMEOUT for a lock (user code keeps the session's
 * lock_timeout): a run that a client keeps locked has its task given back,
 * put off briefly, and the executor goes on with other runs.  A run that
 * another executor holds (its slot says so: lock_run) is waited for again,
 * since that executor's task is bounded by its time limit: parallel SQL
 * activities of one run then run back to back.
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
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timeout.h"
#include "utils/varlena.h"

#include "base/clock.h"
#include "base/json.h"
#include "base/util.h"
#include "store/claim_mark.h"
#include "store/direct.h"
#include "store/executor_share.h"
#include "store/kept_task.h"
#include "store/metrics.h"
#include "store/registry.h"
#include "store/spi.h"
#include "store/timer_rows.h"
#include "store/worker_slots.h"
#include "engine/activities.h"
#include "engine/decision_task.h"
#include "engine/decisions.h"
#include "engine/runs.h"
#include "sqlwf/executor.h"
#include "sqlwf/replay.h"
#include "sqlwf/usercode.h"

/*
 * How long a chain of one run's tasks may make its transaction.  The time
 * can be set when building, for bench/instructions.sh, whose backend runs
 * under valgrind some 50 times slower.
 */
#define EXECUTOR_CHAIN_TASKS	32
#ifndef EXECUTOR_CHAIN_MS
#define EXECUTOR_CHAIN_MS		20
#endif

/* The longest a task that fails in the engine is put off */
#define TASK_BACKOFF_MAX_SECONDS	300

/*
 * The longest an executor waits for a lock in the engine's own statements
 * (the run's row, the rows it writes before and after user code): a lock
 * held by a client (a transaction left open after signal_workflow()) then
 * stops that run only, whose task is put off for at most
 * TASK_LOCKED_BACKOFF_MAX_SECONDS at a time, and not the executors.
 */
#define EXECUTOR_LOCK_TIMEOUT	"1s"
#define TASK_LOCKED_BACKOFF_MAX_SECONDS	5

/* Wait after a failure that cannot be pinned on a task, or at 0.2.0 */
#define EXECUTOR_ERROR_PAUSE_MS		1000L

/* The columns of a claimed task (executor_share.c claims with the same) */
/* The claims' RETURNING list, read by ExecutorTaskFromSPI */
#define CLAIM_RETURNING EXECUTOR_CLAIM_RETURNING

/*
 * The oldest executor task of any namespace: the claim of a database still
 * at 0.4.0, which has no index for executor_share.c's claim.
 */
static KeptPlan claim_executor_task = {
	NULL, "DELETE FROM durable.ready_tasks WHERE ctid ="
	" (SELECT ctid FROM durable.ready_tasks WHERE kind IN ('w', 'x')"
	"   ORDER BY task_id LIMIT 1 FOR UPDATE SKIP LOCKED)" CLAIM_RETURNING,
	0, {InvalidOid}
};
/* The same from 0.3.0: put-off tasks are not in the partial index */
static KeptPlan claim_executor_task_v3 = {
	NULL, "DELETE FROM durable.ready_tasks WHERE ctid ="
	" (SELECT ctid FROM durable.ready_tasks WHERE kind IN ('w', 'x')"
	"   AND not_before IS NULL"
	"   ORDER BY task_id LIMIT 1 FOR UPDATE SKIP LOCKED)" CLAIM_RETURNING,
	0, {InvalidOid}
};
/*
 * failures counts the put-offs in a row of one cause: engine failures, or
 * waits for a locked run (last_error 55P03).  A put-off of the other cause
 * counts from 0 again, so that waits for a client's lock do not lengthen
 * the backoff of a later failure in the engine, nor the reverse.
 */
#define LOCK_WAIT_BEFORE	"COALESCE(last_error LIKE '55P03:%', false)"
#define FAILURES_BEFORE(locked) \
	"CASE WHEN " LOCK_WAIT_BEFORE " = " locked \
	" THEN COALESCE(failures, 0) ELSE 0 END"

/*
 * Put off a task that failed in the engine: 1 s after the first failure,
 * doubling up to TASK_BACKOFF_MAX_SECONDS.
 */
static KeptPlan put_off_task = {
	NULL, "UPDATE durable.ready_tasks"
	" SET failures = " FAILURES_BEFORE("false") " + 1, last_error = $3,"
	" not_before = $4 + pg_catalog.make_interval(secs => LEAST("
	"   pg_catalog.power(2, LEAST(" FAILURES_BEFORE("false") ", 30)),"
	"   " CppAsString2(TASK_BACKOFF_MAX_SECONDS) "))"
	" WHERE run_id = $1 AND task_id = $2"
	" RETURNING failures, not_before, namespace, task_queue",
	4, {UUIDOID, INT8OID, TEXTOID, TIMESTAMPTZOID}
};
/* The same for a task whose run was locked: a short backoff */
static KeptPlan put_off_locked_task = {
	NULL, "UPDATE durable.ready_tasks"
	" SET failures = " FAILURES_BEFORE("true") " + 1, last_error = $3,"
	" not_before = $4 + pg_catalog.make_interval(secs => LEAST("
	"   pg_catalog.power(2, LEAST(" FAILURES_BEFORE("true") ", 30)),"
	"   " CppAsString2(TASK_LOCKED_BACKOFF_MAX_SECONDS) "))"
	" WHERE run_id = $1 AND task_id = $2"
	" RETURNING failures, not_before, namespace, task_queue",
	4, {UUIDOID, INT8OID, TEXTOID, TIMESTAMPTZOID}
};
/*
 * A task that an executor left in hand when it was terminated past its time
 * limit: taken as a claim takes it, to record its timeout.
 */
static KeptPlan take_left_task = {
	NULL, "DELETE FROM durable.ready_tasks WHERE run_id = $1 AND task_id = $2"
	" RETURNING " FAILURES_BEFORE("false"),
	2, {UUIDOID, INT8OID}
};
/*
 * ... and the task that recording it queued again for the same code (the
 * next decision task, an activity's retry queued at once): put off as the
 * task would have been, failures counted on from the one left.
 */
static KeptPlan put_off_next_task = {
	NULL, "UPDATE durable.ready_tasks"
	" SET failures = $3 + 1, last_error = $5,"
	" not_before = $6 + pg_catalog.make_interval(secs => LEAST("
	"   pg_catalog.power(2, LEAST($3, 30)),"
	"   " CppAsString2(TASK_BACKOFF_MAX_SECONDS) "))"
	" WHERE run_id = $1 AND kind = $2 AND ($2 = 'w' OR scheduled_event_id = $4)"
	" AND not_before IS NULL"
	" RETURNING task_id, not_before",
	6, {UUIDOID, CHAROID, INT4OID, INT8OID, TEXTOID, TIMESTAMPTZOID}
};
/* Its backoff is over: the claim sees it again */
static KeptPlan release_task = {
	NULL, "UPDATE durable.ready_tasks SET not_before = NULL"
	" WHERE run_id = $1 AND task_id = $2 AND not_before IS NOT NULL",
	2, {UUIDOID, INT8OID}
};

/*
 * Whether this process is an executor worker: there a cancel request
 * (pg_cancel_backend) that interrupts a SQL activity ends that attempt, as
 * the activity is the statement being run (bgw/executor_worker.c sets it).
 */
bool		DurableIsExecutor = false;

/*
 * Whether the chain under way has locked its run (lock_run): a lock timeout
 * before that was a wait for the run's lock.
 */
static bool chain_locked_run = false;

/* What executors call themselves in history and attempts */
static const char *
executor_identity(void)
{
	return psprintf("durable-executor:%d", MyProcPid);
}

/*
 * Why the function of a registration cannot be called now, or NULL: it was
 * dropped (*cause unknown_cause), or its run_as role was dropped or may no
 * longer execute it (*cause "PermissionDenied" with prefix).  Checked at
 * each call, since fmgr does not check EXECUTE and a grant may have been
 * revoked since the registration.
 */
static char *
registration_fault(Registration *reg, const char *kind, const char *type_name,
				   const char *unknown_cause, const char *prefix,
				   const char **cause)
{
	char	   *role_name;

	if (!SearchSysCacheExists1(PROCOID, ObjectIdGetDatum(reg->function)))
	{
		*cause = unknown_cause;
		return psprintf("function %u of %s type \"%s\" does not exist",
						reg->function, kind, type_name);
	}
	*cause = psprintf("%sPermissionDenied", prefix);
	role_name = GetUserNameFromId(reg->run_as, true);
	if (role_name == NULL)
		return psprintf("role %u that %s type \"%s\" runs as does not exist",
						reg->run_as, kind, type_name);
	if (pg_proc_aclcheck(reg->function, reg->run_as, ACL_EXECUTE) != ACLCHECK_OK)
		return psprintf("role \"%s\" may not execute function %s of %s type \"%s\"",
						role_name, format_procedure(reg->function), kind,
						type_name);
	return NULL;
}

/*
 * Complete the decision task with the decisions of the workflow function
 * (scheduled_id: the task as claimed, before StartDecisionTask, which may
 * have given it a new id).
 * Decisions the function could not check (a limit reached while applying
 * them) fail the workflow instead of the task, which would fail again.  An
 * error that says nothing of the decisions (a cancel, a deadlock, a lock
 * timeout: ErrorIsTransient) is rethrown instead: the task runs again.
 *
 * PG_TRY is left only through PG_END_TRY: a return from inside it would
 * leave PG_exception_stack pointing at this dead frame, and the next error
 * of the transaction would jump into it.
 */
static void
complete_decisions(RunState *rs, int64 scheduled_id, TimestampTz now,
				   Jsonb *decisions, const char *identity)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	pg_uuid_t	run_id = rs->run_id;
	ErrorData  *volatile edata = NULL;
	JsonBuilder jb;
	Decision   *list;
	int			n;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcxt);
	PG_TRY();
	{
		n = ParseDecisions(rs, decisions, &list);
		CompleteDecisionTask(rs, now, list, n, identity);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
	}
	PG_END_TRY();
	if (edata == NULL)
		return;					/* completed */
	if (ErrorIsTransient(edata))
		ReThrowError(edata);

	/* Start again from the table, where nothing of this task was written. */
	DurableSPIForgetWrites();
	if (!LoadRunById(&run_id, false, rs) ||
		!StartDecisionTask(rs, scheduled_id, now, identity, false))
		return;
	JsonBegin(&jb);
	JsonAddText(&jb, "decisionType", "FailWorkflowExecution");
	JsonAddText(&jb, "reason", unpack_sql_state(edata->sqlerrcode));
	JsonAddJsonb(&jb, "details", ErrorDetailsJson(edata));
	decisions = JsonFinish(&jb);
	decisions = JsonbArray(&decisions, 1);
	n = ParseDecisions(rs, decisions, &list);
	CompleteDecisionTask(rs, now, list, n, identity);
}

/*
 * Lock the run of a claimed task (LoadRunById) and, in an executor, say so
 * in its slot (ExecutorTaskRunLocked): another executor that times out
 * waiting for this lock then waits again instead of giving its task back.
 */
static bool
lock_run(pg_uuid_t *run_id, RunState *rs)
{
	if (!LoadRunById(run_id, false, rs))
		return false;
	chain_locked_run = true;
	ExecutorTaskRunLocked();
	return true;
}

/*
 * Run a claimed decision task of a SQL workflow; history is the run's as
 * the chain's earlier decision tasks read it (ReplayWorkflow).
 */
static void
execute_decision_task(pg_uuid_t *run_id, int64 scheduled_id, int32 attempt,
					  ReplayHistory *history)
{
	RunState	rs;
	Registration reg;
	TimestampTz now = DurableNow();
	const char *identity = executor_identity();
	Jsonb	   *decisions;
	Jsonb	   *failure;
	JsonBuilder jb;
	char	   *fault;
	const char *cause;

	if (!lock_run(run_id, &rs))
		return;
	if (!LookupRegistration('w', rs.namespace, rs.workflow_type, rs.task_queue,
							&reg))
	{
		/* Unregistered since it was queued: back to the external pollers. */
		if (RunIsOpen(&rs) && rs.decision_scheduled_id == scheduled_id &&
			rs.decision_started_id == 0)
		{
			EnqueueReadyTask(&rs, rs.task_queue, 'd', rs.workflow_type,
							 scheduled_id, attempt, rs.priority,
							 rs.concurrency_key);
			SaveRun(&rs);
		}
		return;
	}
	if (!StartDecisionTask(&rs, scheduled_id, now, identity, false))
		return;
	/* A run registered again with running => 'keep' keeps its function. */
	if (OidIsValid(rs.pinned_function))
		reg.function = rs.pinned_function;
	if (IsBackgroundWorker)
		pgstat_report_activity(STATE_RUNNING,
							   psprintf("durable: workflow %s (%s)",
										rs.workflow_id, rs.workflow_type));

	fault = registration_fault(&reg, "workflow", rs.workflow_type,
							   "UnknownWorkflowType", "", &cause);
	if (fault != NULL)
	{
		LogUserCodeFailure("workflow", rs.workflow_type, &rs, "decision task",
						   reg.run_as, cause, fault,
						   "The decision task is retried until this is fixed.");
		JsonBegin(&jb);
		JsonAddText(&jb, "message", fault);
		FailDecisionTask(&rs, now, cause, JsonFinish(&jb), identity, true);
		return;
	}
	switch (ReplayWorkflow(&rs, &reg, now, history, &decisions, &failure))
	{
		case REPLAY_NON_DETERMINISTIC:
			ereport(LOG,
					(errmsg("durable: workflow \"%s\" (%s) is not deterministic",
							rs.workflow_id, rs.workflow_type),
					 errdetail("%s", JsonbToCString(NULL, &failure->root,
													VARSIZE(failure)))));
			FailDecisionTask(&rs, now, "NonDeterministicWorkflow", failure,
							 identity, true);
			break;
		case REPLAY_TIMED_OUT:
			{
				bool		capped;
				double		limit = ExecutorTaskTimeout(rs.namespace,
														rs.decision_timeout,
														&capped);

				LogUserCodeFailure("workflow", rs.workflow_type, &rs,
								   "decision task", reg.run_as,
								   "DecisionTaskTimedOut",
								   psprintf(capped ?
											"its function ran past its namespace's max_task_timeout of %g s" :
											"its function ran past the decision timeout of %g s",
											limit),
								   NULL);
			}
			(void) DecisionTaskTimedOut(&rs, now, rs.decision_started_id);
			break;
		case REPLAY_DECIDED:
			complete_decisions(&rs, scheduled_id, now, decisions, identity);
			break;
	}
}

/* An activity attempt being run by the executor */
typedef struct ActivityRun
{
	pg_uuid_t	run_id;
	int64		scheduled_id;
	int32		attempt;
	RunState	rs;
	ActivityState a;
	bool		current;
} ActivityRun;

/*
 * Lock the run, then the activity, and check that the attempt is still the
 * one claimed.
 */
static bool
lock_current_attempt(ActivityRun *ar)
{
	ar->current = lock_run(&ar->run_id, &ar->rs) &&
		RunIsOpen(&ar->rs) &&
		LoadActivity(&ar->run_id, ar->scheduled_id, &ar->a) &&
		ar->a.attempt == ar->attempt &&
		strcmp(ar->a.state, "SCHEDULED") == 0 &&
		ar->a.next_attempt_time == DT_NOEND;

	/*
	 * Claimed before its run was paused, locked after the pause committed:
	 * the attempt waits, held, for the resume (engine/pause.c).
	 */
	if (ar->current && RunIsPaused(&ar->rs))
	{
		int			priority;
		char	   *key;

		ActivityTaskOrder(&ar->rs.run_id, ar->scheduled_id, &priority, &key);
		EnqueueReadyTask(&ar->rs, ar->a.task_queue, 'a', ar->a.activity_type,
						 ar->scheduled_id, ar->attempt, priority, key);
		FlushEvents(&ar->rs);
		ar->current = false;
	}
	return ar->current;
}

/* Count the start of an executor's activity attempt (durable.metrics). */
static void
count_activity_start(ActivityRun *ar, TimestampTz started)
{
	MetricsAdd(ar->a.namespace, ar->a.task_queue, MV_ACTIVITY_STARTED, 1);
	MetricsObserve(ar->a.namespace, ar->a.task_queue,
				   MH_ACTIVITY_SCHEDULE_TO_START,
				   TimestampDiffSeconds(started, ar->a.scheduled_time));
}

/*
 * A successful activity's writes are kept if its result fits in
 * durable.max_payload_size; otherwise WF006 fails the attempt and undoes
 * them, as complete_activity() would refuse the result.
 */
static bool
keep_writes(void *arg)
{
	CheckPayload(*(Jsonb **) arg, "result");
	return true;
}

/* Run a claimed activity task of a SQL activity. */
static void
execute_activity_task(pg_uuid_t *run_id, int64 scheduled_id, int32 attempt,
					  const char *namespace, const char *task_queue)
{
	ActivityRun ar;
	Registration reg;
	char	   *activity_type;
	Jsonb	   *input;
	double		timeout;
	double		schedule_to_close;
	TimestampTz started = DurableNow();
	const char *identity = executor_identity();
	FmgrInfo	flinfo;
	Jsonb	   *result;
	ErrorData  *error;
	bool		timed_out;
	bool		capped;
	char	   *fault;
	const char *cause;

	/*
	 * Run and activity are locked first, in this order, so that no other
	 * outcome (a timeout, a cancel) can race the attempt; the activity is
	 * read by its primary key, never by a plan (a plan made while autovacuum
	 * had emptied the table would scan all of it once it refilled).  An
	 * attempt retried, timed out or canceled since its task was queued is
	 * stale: nothing to do.  Locking them only after the function ran, from
	 * its subtransaction, would turn the row locks of a chain into
	 * multixacts.
	 */
	memset(&ar, 0, sizeof(ar));
	ar.run_id = *run_id;
	ar.scheduled_id = scheduled_id;
	ar.attempt = attempt;
	if (!lock_current_attempt(&ar))
		return;
	activity_type = ar.a.activity_type;
	input = ar.a.input;
	timeout = ar.a.start_to_close;
	schedule_to_close = ar.a.schedule_to_close;
	if (schedule_to_close > 0)
	{
		double		left = schedule_to_close -
			TimestampDiffSeconds(started, ar.a.first_scheduled_time);

		timeout = Min(timeout, Max(left, 0.001));
	}
	/* At most the namespace's max_task_timeout (executor_share.c) */
	timeout = ExecutorTaskTimeout(namespace, timeout, &capped);

	if (!LookupRegistration('x', namespace, activity_type, task_queue, &reg))
	{
		/* Unregistered since it was queued: back to the external pollers. */
		int			priority;
		char	   *key;

		ActivityTaskOrder(&ar.rs.run_id, scheduled_id, &priority, &key);
		EnqueueReadyTask(&ar.rs, task_queue, 'a', activity_type,
						 scheduled_id, attempt, priority, key);
		SaveRun(&ar.rs);
		return;
	}
	if (IsBackgroundWorker)
		pgstat_report_activity(STATE_RUNNING,
							   psprintf("durable: activity %s", activity_type));

	fault = registration_fault(&reg, "activity", activity_type,
							   "durable:UnknownActivityType", "durable:",
							   &cause);
	if (fault != NULL)
	{
		JsonBuilder jb;

		count_activity_start(&ar, started);
		LogUserCodeFailure("activity", activity_type, &ar.rs,
						   psprintf("attempt %d of activity %lld", attempt,
									(long long) scheduled_id),
						   reg.run_as, cause, fault, NULL);
		JsonBegin(&jb);
		JsonAddText(&jb, "message", fault);
		ar.a.started_time = started;
		ar.a.last_worker_identity = (char *) identity;
		FailActivityAttempt(&ar.rs, &ar.a, DurableNow(), cause,
							JsonFinish(&jb), -1, NULL);
		if (RunIsOpen(&ar.rs))
			SaveRun(&ar.rs);
		return;
	}

	count_activity_start(&ar, started);
	fmgr_info(reg.function, &flinfo);
	CallAsRole(reg.run_as, &flinfo, input, timeout, keep_writes, &result,
			   &result, &error, &timed_out);
	if (error == NULL)
	{
		ar.a.started_time = started;
		ar.a.last_worker_identity = (char *) identity;
		CompleteActivity(&ar.rs, &ar.a, DurableNow(), result, identity);
		SaveRun(&ar.rs);
		return;
	}

	/*
	 * A cancel request, or the caller's statement timeout, cancels the
	 * statement running: in a session that is the caller's (run_tasks), which
	 * must end with it, and the attempt is not an outcome; in an executor
	 * worker it is this activity, whose attempt it fails (57014), retried by
	 * its policy.  query_canceled raised by the function itself is an error
	 * like any other.
	 */
	if (ErrorIsCancel(error) && !timed_out && !DurableIsExecutor)
		ReThrowError(error);
	ar.a.started_time = started;
	ar.a.last_worker_identity = (char *) identity;
	LogUserCodeFailure("activity", activity_type, &ar.rs,
					   psprintf("attempt %d of activity %lld", attempt,
								(long long) scheduled_id),
					   reg.run_as,
					   timed_out ? "durable:Timeout START_TO_CLOSE" :
					   unpack_sql_state(error->sqlerrcode),
					   timed_out ?
					   psprintf(capped ?
								"it ran past its namespace's max_task_timeout of %g s" :
								"it ran past its StartToClose timeout of %g s",
								timeout) : error->message,
					   timed_out ? NULL : error->detail);
	if (timed_out)
		FailActivityAttempt(&ar.rs, &ar.a, DurableNow(),
							"durable:Timeout START_TO_CLOSE", NULL, -1,
							"START_TO_CLOSE");
	else
		FailActivityAttempt(&ar.rs, &ar.a, DurableNow(),
							unpack_sql_state(error->sqlerrcode),
							ErrorDetailsJson(error), -1, NULL);
	if (RunIsOpen(&ar.rs))
		SaveRun(&ar.rs);
}

/* The task a chain began with, kept for when the chain fails */
typedef struct TaskInHand
{
	bool		claimed;		/* a task was claimed */
	bool		can_put_off;	/* ready_tasks has not_before (0.3.0) */
	int			position;		/* of the task running in its chain */
	pg_uuid_t	run_id;			/* the first task of the chain: */
	int64		task_id;
	char		kind;
	int64		scheduled_id;
} TaskInHand;

/*
 * Whether durable.ready_tasks has the columns of a put-off task: false on a
 * database still at 0.2.0, until ALTER EXTENSION durable UPDATE.
 */
bool
TasksCanBePutOff(void)
{
	return DurableColumnExists("ready_tasks", "not_before");
}

/*
 * Run the task just claimed, task number position of its chain; its run id
 * goes to *run_id, and the first task of a chain to hand.  history: the
 * chain's (ReplayWorkflow).
 */
static void
execute_claimed_task(const ExecutorClaimedTask *claimed, pg_uuid_t *run_id,
					 TaskInHand *hand, int position, ReplayHistory *history)
{
	*run_id = claimed->run_id;
	if (position == 0)
	{
		ExecutorTask task;

		hand->claimed = true;
		hand->run_id = claimed->run_id;
		hand->task_id = claimed->task_id;
		hand->kind = claimed->kind;
		hand->scheduled_id = claimed->scheduled_event_id;
		memset(&task, 0, sizeof(task));
		task.run_id = claimed->run_id;
		task.task_id = claimed->task_id;
		task.kind = claimed->kind;
		task.scheduled_id = claimed->scheduled_event_id;
		task.attempt = claimed->attempt;
		task.started = DurableNow();
		ExecutorTaskBegin(&task);
	}
	else
		ExecutorTaskSetPosition(position);
	hand->position = position;

	if (claimed->kind == 'w')
		execute_decision_task(run_id, claimed->scheduled_event_id,
							  claimed->attempt, history);
	else
		execute_activity_task(run_id, claimed->scheduled_event_id,
							  claimed->attempt, claimed->namespace,
							  claimed->task_queue);
}

/*
 * Claim and run a ready executor task in the current transaction,
 * then (chain) the tasks it made ready for the same run, as long as the
 * transaction is young, at most chain_limit in all: a SQL workflow's
 * consecutive steps commit together.  Nothing is lost by that: a crash
 * undoes the steps of the chain together with their writes, and they run
 * again.  Returns how many tasks ran (0: none was ready); hand says which
 * task runs, for the caller to blame if this fails.
 *
 * The run's history, as the chain's decision tasks index it, is kept from
 * one to the next (ReplayWorkflow), so that each reads and parses only the
 * events appended since the last, not the whole history again.  It lives in
 * the chain's SPI context, freed by the chain's end, its commit or its
 * abort: an abort of the chain undoes the events it read.
 */
static int
execute_tasks(int max_tasks, int chain_limit, TaskInHand *hand)
{
	pg_uuid_t	run_id;
	TimestampTz began = GetCurrentTimestamp();
	int			n = 0;
	int			claimed;
	ExecutorClaimedTask task;
	ReplayHistory *history;
	bool		keeping;
	bool		keeping_tables;

	hand->can_put_off = TasksCanBePutOff();
	chain_locked_run = false;
	DurableSPIConnect();
	history = ReplayHistoryCreate(CurrentMemoryContext);
	/* The namespace with the fewest tasks running first (executor_share.c) */
	claimed = ExecutorShareClaim(&task);
	if (claimed < 0)
	{
		claimed = RunPlan(hand->can_put_off ? &claim_executor_task_v3 :
						  &claim_executor_task, NULL, NULL, false, 1);
		if (claimed > 0)
			ExecutorTaskFromSPI(&task);
	}
	if (claimed > 0)
	{
		/* The tables the chain writes stay open to its end (store/direct.c) */
		keeping_tables = DirectTablesKeep();

		/*
		 * The run's next task is kept in hand for the chain's next claim
		 * instead of written (store/kept_task.c); written if the chain ends
		 * first.
		 */
		keeping = Min(max_tasks, chain_limit) > 1 &&
			KeptTaskArm(&task.run_id);
		execute_claimed_task(&task, &run_id, hand, 0, history);
		n++;
		/* A chain of this run brought an executor down: no chain */
		if (DurableIsExecutor && ExecutorRunAlone(&run_id, false))
			chain_limit = 1;
		while (n < Min(max_tasks, chain_limit) &&
			   !TimestampDifferenceExceeds(began, GetCurrentTimestamp(),
										   EXECUTOR_CHAIN_MS) &&
			   ExecutorClaimRunTask(&run_id, &task) > 0)
		{
			execute_claimed_task(&task, &run_id, hand, n, history);
			n++;
		}
		if (keeping)
		{
			DirectWriteKeptTask();
			KeptTaskDisarm();
		}
		if (keeping_tables)
			DirectTablesKeepEnd();
	}
	ReplayHistoryFree(history);
	DurableSPIFinish();
	return n;
}

/*
 * In an executor's transaction, the engine's lock waits last at most
 * EXECUTOR_LOCK_TIMEOUT (SET LOCAL); the session's own lock_timeout is kept
 * for the user code (CallAsRole).
 */
static void
bound_engine_lock_waits(void)
{
	const char *session = GetConfigOption("lock_timeout", false, false);

	SetUserCodeLockTimeout(session);
	(void) set_config_option("lock_timeout", EXECUTOR_LOCK_TIMEOUT,
							 PGC_SUSET, PGC_S_SESSION, GUC_ACTION_LOCAL,
							 true, 0, false);
}

/*
 * execute_tasks in a transaction of its own (own_xact: a background worker,
 * outside any transaction) or in a subtransaction of the caller's.  An
 * error rolls back all the chain did (its first task is queued again as it
 * was) and comes back copied in *error.  Returns how many tasks ran.
 */
static int
run_chain(int max_tasks, int chain_limit, bool own_xact,
		  MemoryContext task_cxt, TaskInHand *hand, ErrorData **error)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	volatile int ran = 0;

	*error = NULL;
	if (own_xact)
	{
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
	}
	else
		BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(task_cxt);
	PG_TRY();
	{
		/*
		 * A background worker's chain holds the extension against DROP
		 * EXTENSION (waiting for one in progress, without the bound on its
		 * lock waits); none runs once it is gone, and the executor then
		 * finds it missing and exits.
		 */
		if (!own_xact || DurableLockExtension())
		{
			if (own_xact && DurableIsExecutor)
				bound_engine_lock_waits();
			ran = execute_tasks(max_tasks, chain_limit, hand);
		}
		MemoryContextSwitchTo(oldcxt);
		if (own_xact)
		{
			PopActiveSnapshot();
			CommitTransactionCommand();
		}
		else
		{
			ReleaseCurrentSubTransaction();
			CurrentResourceOwner = oldowner;
		}
		MemoryContextSwitchTo(oldcxt);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(oldcxt);
		*error = CopyErrorData();
		FlushErrorState();
		if (own_xact)
			AbortCurrentTransaction();
		else
		{
			RollbackAndReleaseCurrentSubTransaction();
			CurrentResourceOwner = oldowner;
		}
		MemoryContextSwitchTo(oldcxt);
		ran = 0;
	}
	PG_END_TRY();
	MemoryContextReset(task_cxt);
	return ran;
}

/*
 * Put off the task in hand, which failed in the engine with error: count
 * the failure, keep the error, hide the task from the claim until its
 * backoff is over and set the timer that ends it; log it once.  In the
 * caller's transaction.  The row lock taken by the update on the task is
 * what makes the timer safe to set without its run's lock: no one else
 * sets the same timer meanwhile.
 */
static void
put_off_failed_task(TaskInHand *hand, ErrorData *error)
{
	bool		locked = error->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE;
	Datum		values[4];
	bool		isnull;
	int32		failures;
	TimestampTz not_before;
	char	   *namespace;
	char	   *task_queue;
	char	   *message;

	message = psprintf("%s: %s", unpack_sql_state(error->sqlerrcode),
					   error->message ? error->message : "");
	DurableSPIConnect();
	values[0] = UUIDPGetDatum(&hand->run_id);
	values[1] = Int64GetDatum(hand->task_id);
	values[2] = CStringGetTextDatum(message);
	values[3] = TimestampTzGetDatum(DurableNow());
	/* The UPDATE puts the task back into index order: see claim_mark.c */
	ClaimMarkLower(hand->task_id);
	if (RunPlan(locked ? &put_off_locked_task : &put_off_task, values, NULL,
				false, 1) == 0)
	{
		/* Gone meanwhile (its run closed): nothing to retry. */
		DurableSPIFinish();
		return;
	}
	failures = DatumGetInt32(SPIGetDatum(0, 1, &isnull));
	not_before = DatumGetTimestampTz(SPIGetDatum(0, 2, &isnull));
	namespace = SPIGetText(0, 3);
	task_queue = SPIGetText(0, 4);
	SPI_freetuptable(SPI_tuptable);
	CreateTimer(&hand->run_id, TIMER_TASK_RETRY, not_before, hand->task_id, 0);
	DurableSPIFinish();

	/*
	 * A lock that the engine could not take in time is held by someone else,
	 * often a client's open transaction: not an engine failure.  Said once
	 * at LOG, then at DEBUG1 while it lasts.
	 */
	if (locked)
	{
		ereport(failures == 1 ? LOG : DEBUG1,
				(errmsg("durable %s task %lld of run %s waits: its run is locked",
						hand->kind == 'w' ? "decision" : "activity",
						(long long) hand->task_id, UuidToCString(&hand->run_id)),
				 errdetail("%s (namespace \"%s\", task queue \"%s\", try %d); it is tried again at %s.",
						   message, namespace, task_queue, failures,
						   timestamptz_to_str(not_before)),
				 errhint("Look in pg_locks and pg_stat_activity for a transaction left open on the run.")));
		return;
	}
	ereport(WARNING,
			(errmsg("durable %s task %lld of run %s failed in the engine: %s",
					hand->kind == 'w' ? "decision" : "activity",
					(long long) hand->task_id, UuidToCString(&hand->run_id),
					message),
			 errdetail("Failure %d of the task (namespace \"%s\", task queue \"%s\", scheduled event %lld); it is retried at %s.",
					   failures, namespace, task_queue,
					   (long long) hand->scheduled_id,
					   timestamptz_to_str(not_before)),
			 errhint("The view durable.stuck_tasks lists the tasks being retried.")));
}

/*
 * put_off_failed_task in a transaction of its own; false (logged) if that
 * fails too.
 */
static bool
put_off_in_own_xact(TaskInHand *hand, ErrorData *error, MemoryContext cxt)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	volatile bool done = false;

	PG_TRY();
	{
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		MemoryContextSwitchTo(cxt);
		put_off_failed_task(hand, error);
		MemoryContextSwitchTo(oldcxt);
		PopActiveSnapshot();
		CommitTransactionCommand();
		MemoryContextSwitchTo(oldcxt);
		done = true;
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(oldcxt);
		EmitErrorReport();
		FlushErrorState();
		AbortCurrentTransaction();
		MemoryContextSwitchTo(oldcxt);
	}
	PG_END_TRY();
	MemoryContextReset(cxt);
	return done;
}

/*
 * Run at most max_tasks ready executor tasks; returns how many were taken,
 * those put off included.  With own_xact (a background worker, outside any
 * transaction) each chain is a transaction of its own; otherwise a
 * subtransaction of the caller's.  A task that fails in the engine is put
 * off (from 0.3.0) and the others go on; a cancel of the caller's
 * statement (not own_xact) is raised.
 */
int
ExecuteReadyTasks(int max_tasks, bool own_xact)
{
	MemoryContext task_cxt;
	int			n = 0;
	int			chain_limit = EXECUTOR_CHAIN_TASKS;

	task_cxt = AllocSetContextCreate(CurrentMemoryContext, "durable executor task",
									 ALLOCSET_DEFAULT_SIZES);
	while (n < max_tasks)
	{
		TaskInHand	hand;
		ErrorData  *error;
		int			ran;

		CHECK_FOR_INTERRUPTS();
		memset(&hand, 0, sizeof(hand));
		ran = run_chain(max_tasks - n, chain_limit, own_xact, task_cxt,
						&hand, &error);
		ExecutorTaskEnd();
		if (own_xact)
			pgstat_report_activity(STATE_IDLE, NULL);
		if (error == NULL)
		{
			if (ran == 0)
				break;
			n += ran;
			chain_limit = EXECUTOR_CHAIN_TASKS;
			continue;
		}
		if (!own_xact && ErrorIsCancel(error))
			ReThrowError(error);	/* the caller's statement was canceled */
		if (hand.claimed && hand.position > 0)
		{
			/*
			 * A later task of the chain failed, and the chain was undone:
			 * run its first task alone, so that the failing one comes next
			 * on its own and is the one put off.
			 */
			FreeErrorData(error);
			chain_limit = 1;
			continue;
		}
		if (hand.claimed && own_xact && !chain_locked_run &&
			error->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE &&
			ExecutorHoldsRun(&hand.run_id))
		{
			/*
			 * The wait for the run's lock timed out, and another executor
			 * holds it (parallel activities of one run): it ends with that
			 * executor's task, by its time limit at worst, so wait for it
			 * again instead of putting the task off.  Claimed again as any
			 * task, it is likely the oldest.
			 */
			FreeErrorData(error);
			n++;
			continue;
		}
		if (hand.claimed && hand.can_put_off)
		{
			bool		done = true;

			if (own_xact)
				done = put_off_in_own_xact(&hand, error, task_cxt);
			else
				put_off_failed_task(&hand, error);
			FreeErrorData(error);
			if (done)
			{
				n++;
				continue;
			}
		}
		else
		{
			/* Nothing to put off (the claim failed, or 0.2.0): as in 0.2.0 */
			if (!own_xact)
				ReThrowError(error);
			error->elevel = WARNING;
			ThrowErrorData(error);
			FreeErrorData(error);
		}
		/* Do not spin on what fails: wait a little. */
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 EXECUTOR_ERROR_PAUSE_MS, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		break;
	}
	MemoryContextDelete(task_cxt);
	return n;
}

/*
 * Record the timeout of a task whose executor was terminated past its time
 * limit, by the rules of a timeout that the executor sees itself: a
 * decision task gets DecisionTaskStarted and DecisionTaskTimedOut, and the
 * next decision task is scheduled (execute_decision_task's
 * REPLAY_TIMED_OUT); an activity attempt fails with START_TO_CLOSE and is
 * retried by its policy (execute_activity_task).  Nothing of the task was
 * left by the terminated transaction.  Then the task queued again for the
 * same code is put off, its failures counted on from the task's.  In the
 * caller's transaction, connected to SPI.
 */
static void
record_left_timeout(ExecutorTask *t)
{
	TimestampTz now = DurableNow();
	const char *identity = psprintf("durable-executor:%d", (int) t->pid);
	Datum		values[6];
	bool		isnull;
	int32		failures;
	char	   *message;
	RunState	rs;

	values[0] = UUIDPGetDatum(&t->run_id);
	values[1] = Int64GetDatum(t->task_id);
	if (RunPlan(&take_left_task, values, NULL, false, 1) == 0)
		return;					/* gone meanwhile: its run closed */
	failures = DatumGetInt32(SPIGetDatum(0, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	message = psprintf("its executor was terminated %d s past the time limit of %g s",
					   2 * durable_executor_grace, t->timeout);

	if (!LoadRunById(&t->run_id, false, &rs) || !RunIsOpen(&rs))
		return;
	if (t->kind == 'w')
	{
		Registration reg;

		if (!StartDecisionTask(&rs, t->scheduled_id, now, identity, false))
			return;
		if (!LookupRegistration('w', rs.namespace, rs.workflow_type,
								rs.task_queue, &reg))
			reg.run_as = InvalidOid;
		LogUserCodeFailure("workflow", rs.workflow_type, &rs, "decision task",
						   reg.run_as, "DecisionTaskTimedOut", message,
						   "The next decision task is put off.");
		(void) DecisionTaskTimedOut(&rs, now, rs.decision_started_id);
	}
	else
	{
		ActivityState a;
		Registration reg;

		if (!LoadActivity(&t->run_id, t->scheduled_id, &a) ||
			a.attempt != t->attempt || strcmp(a.state, "SCHEDULED") != 0 ||
			a.next_attempt_time != DT_NOEND)
			return;
		if (!LookupRegistration('x', a.namespace, a.activity_type,
								a.task_queue, &reg))
			reg.run_as = InvalidOid;
		LogUserCodeFailure("activity", a.activity_type, &rs,
						   psprintf("attempt %d of activity %lld", t->attempt,
									(long long) t->scheduled_id),
						   reg.run_as, "durable:Timeout START_TO_CLOSE",
						   message, NULL);
		a.started_time = t->started;
		a.last_worker_identity = (char *) identity;
		FailActivityAttempt(&rs, &a, now, "durable:Timeout START_TO_CLOSE",
							NULL, -1, "START_TO_CLOSE");
		if (RunIsOpen(&rs))
			SaveRun(&rs);
	}

	values[1] = CharGetDatum(t->kind);
	values[2] = Int32GetDatum(failures);
	values[3] = Int64GetDatum(t->scheduled_id);
	values[4] = CStringGetTextDatum(psprintf("57P01: %s", message));
	values[5] = TimestampTzGetDatum(DurableNow());
	if (RunPlan(&put_off_next_task, values, NULL, false, 0) > 0)
	{
		uint64		n = SPI_processed;
		int64	   *ids = palloc(sizeof(int64) * n);
		TimestampTz *times = palloc(sizeof(TimestampTz) * n);

		for (uint64 r = 0; r < n; r++)
		{
			ids[r] = DatumGetInt64(SPIGetDatum(r, 1, &isnull));
			times[r] = DatumGetTimestampTz(SPIGetDatum(r, 2, &isnull));
		}
		SPI_freetuptable(SPI_tuptable);
		for (uint64 r = 0; r < n; r++)
		{
			ClaimMarkLower(ids[r]);
			CreateTimer(&t->run_id, TIMER_TASK_RETRY, times[r], ids[r], 0);
		}
	}
}

/*
 * Put off the task that an executor left in hand when it exited (see
 * ExecutorTaskTakeLeftover): terminated by the watchdog past its time limit
 * while the chain's first task ran, its timeout is recorded
 * (record_left_timeout); otherwise (an operator's pg_terminate_backend, a
 * later task of a chain) the chain's first task is put off as a task that
 * failed in the engine.  In a transaction of its own; if that fails (the
 * run locked meanwhile), the task is only put off.
 */
static void
recover_left_task(ExecutorTask *t, MemoryContext cxt)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ErrorData  *volatile failed = NULL;
	ErrorData	terminated;
	TaskInHand	hand;
	bool		timed_out = t->stage == TASK_STAGE_TERMINATED &&
		t->position == 0;

	memset(&terminated, 0, sizeof(terminated));
	terminated.sqlerrcode = ERRCODE_ADMIN_SHUTDOWN;
	if (t->position > 0)
	{
		/* Its tasks run alone from now on: the culprit is then recorded */
		ExecutorRunAlone(&t->run_id, true);
		terminated.message =
			psprintf("the executor process %d running task %d of its chain was terminated",
					 (int) t->pid, t->position + 1);
	}
	else
		terminated.message = psprintf("the executor process %d running it was terminated",
									  (int) t->pid);
	memset(&hand, 0, sizeof(hand));
	hand.claimed = true;
	hand.can_put_off = true;
	hand.run_id = t->run_id;
	hand.task_id = t->task_id;
	hand.kind = t->kind;
	hand.scheduled_id = t->scheduled_id;

	PG_TRY();
	{
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		MemoryContextSwitchTo(cxt);
		if (TasksCanBePutOff())
		{
			(void) set_config_option("lock_timeout", EXECUTOR_LOCK_TIMEOUT,
									 PGC_SUSET, PGC_S_SESSION,
									 GUC_ACTION_LOCAL, true, 0, false);
			DurableSPIConnect();
			if (timed_out)
				record_left_timeout(t);
			else
				put_off_failed_task(&hand, &terminated);
			DurableSPIFinish();
		}
		MemoryContextSwitchTo(oldcxt);
		PopActiveSnapshot();
		CommitTransactionCommand();
		MemoryContextSwitchTo(oldcxt);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(oldcxt);
		failed = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		MemoryContextSwitchTo(oldcxt);
	}
	PG_END_TRY();
	MemoryContextReset(cxt);
	if (failed != NULL)
	{
		ereport(LOG,
				(errmsg("durable: could not record the end of %s task %lld of run %s: %s",
						t->kind == 'w' ? "decision" : "activity",
						(long long) t->task_id, UuidToCString(&t->run_id),
						failed->message ? failed->message : "")));
		(void) put_off_in_own_xact(&hand, &terminated, cxt);
		FreeErrorData(failed);
	}
}

/*
 * Put off the tasks that executors of this database left in hand when they
 * exited: index's (an executor, before it claims anything), or any
 * executor's (index -1: the timer worker).  Outside any transaction.  A
 * server crash empties shared memory: its tasks just run again.
 */
void
RecoverExecutorTasks(int index, MemoryContext cxt)
{
	ExecutorTask t;

	while (ExecutorTaskTakeLeftover(index, &t))
		recover_left_task(&t, cxt);
}

/*
 * A task_retry timer: the backoff of a put-off task is over.  Show it to
 * the claim again and wake the executors at commit.  The timer and the
 * task are locked without the run's lock, which the engine may be unable
 * to take or the task may hold.  Returns whether the task was still there.
 */
bool
FireTaskRetryTimer(pg_uuid_t *run_id, int64 task_id)
{
	Datum		values[2];
	bool		released;

	if (!ClaimTimer(run_id, TIMER_TASK_RETRY, task_id))
		return false;
	values[0] = UUIDPGetDatum(run_id);
	values[1] = Int64GetDatum(task_id);
	/* It comes back into the claims' order under its old id: claim_mark.c */
	ClaimMarkLower(task_id);
	released = RunPlan(&release_task, values, NULL, false, 0) > 0;
	(void) TakeTimer(run_id, TIMER_TASK_RETRY, task_id);
	if (released)
		WakeExecutorsAtCommit();
	return released;
}

PG_FUNCTION_INFO_V1(durable_run_tasks);
/* durable.run_tasks(max_tasks): run ready executor tasks in this session */
Datum
durable_run_tasks(PG_FUNCTION_ARGS)
{
	int32		max_tasks = PG_GETARG_INT32(0);

	RequireWritableTransaction("durable.run_tasks()");

	if (max_tasks <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_tasks must be greater than zero")));
	if (ReplayActive())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("durable.run_tasks() cannot be called inside a workflow function")));
	PG_RETURN_INT32(ExecuteReadyTasks(max_tasks, false));
}

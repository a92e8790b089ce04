/*-------------------------------------------------------------------------
 *
 * executor.c
 *	  Tasks of SQL workflows and SQL activities, run inside the server.
 *
 * Decision tasks of a registered workflow type and activity tasks of a
 * registered activity type are queued as ready tasks of kinds 'w' and 'x',
 * which no external poll takes.  The executor workers (and durable.
 * run_tasks()) claim them oldest first with SKIP LOCKED and run each in one
 * transaction:
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
 * Functions run as the role they were registered with, with the database's
 * default search_path.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timeout.h"

#include "durable.h"

/* How long a chain of one run's tasks may make its transaction */
#define EXECUTOR_CHAIN_TASKS	32
#define EXECUTOR_CHAIN_MS		20

static KeptPlan claim_executor_task = {
	NULL, "DELETE FROM durable.ready_tasks WHERE ctid ="
	" (SELECT ctid FROM durable.ready_tasks WHERE kind IN ('w', 'x')"
	"   ORDER BY task_id LIMIT 1 FOR UPDATE SKIP LOCKED)"
	" RETURNING namespace, task_queue, kind, run_id, scheduled_event_id, attempt",
	0, {InvalidOid}
};
/*
 * The next executor task of one run, for a chain (see execute_tasks).  The
 * kinds are a parameter so that the plan cannot use the partial index of
 * all executor tasks (a bitmap AND with it costs a scan of every queued
 * task); the run's few tasks are found by ready_tasks_by_run.
 */
static KeptPlan claim_run_task = {
	NULL, "DELETE FROM durable.ready_tasks WHERE ctid ="
	" (SELECT ctid FROM durable.ready_tasks WHERE run_id = $1"
	"   AND kind = ANY ($2) ORDER BY task_id LIMIT 1 FOR UPDATE SKIP LOCKED)"
	" RETURNING namespace, task_queue, kind, run_id, scheduled_event_id, attempt",
	2, {UUIDOID, CHARARRAYOID}
};
static KeptPlan peek_activity = {
	NULL, "SELECT activity_type, input, attempt, state = 'SCHEDULED'"
	" AND next_attempt_time IS NULL, start_to_close_timeout,"
	" schedule_to_close_timeout, first_scheduled_time"
	" FROM durable.activities WHERE run_id = $1 AND scheduled_event_id = $2",
	2, {UUIDOID, INT8OID}
};

/* What executors call themselves in history and attempts */
static const char *
executor_identity(void)
{
	return psprintf("durable-executor:%d", MyProcPid);
}

/*
 * Call a function f(jsonb) RETURNS jsonb as role, in a subtransaction, with
 * a statement timeout (0: none) and the database's default search_path.
 * Without keep, or when keep(keep_arg) returns false after the call, the
 * function's writes are rolled back.  Its result or error (copied out)
 * comes back in *result or *error; *timed_out when the timeout cut it.
 */
void
CallAsRole(Oid role, FmgrInfo *flinfo, Jsonb *input, double timeout_seconds,
		   bool (*keep) (void *), void *keep_arg, Jsonb **result,
		   ErrorData **error, bool *timed_out)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	Oid			save_userid;
	int			save_sec_context;
	volatile int timeout_ms = 0;
	volatile TimestampTz outer_timeout = 0;
	TimestampTz started = GetCurrentTimestamp();

	*result = NULL;
	*error = NULL;
	*timed_out = false;
	if (timeout_seconds > 0)
		timeout_ms = (int) Min(Max(timeout_seconds * 1000.0, 1.0), (double) INT_MAX);
	if (timeout_ms > 0 && get_timeout_active(STATEMENT_TIMEOUT))
		outer_timeout = get_timeout_finish_time(STATEMENT_TIMEOUT);

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcxt);
	PG_TRY();
	{
		LOCAL_FCINFO(fcinfo, 1);
		Datum		value = (Datum) 0;
		int			nestlevel;
		bool		keep_it;

		nestlevel = NewGUCNestLevel();
		(void) set_config_option("search_path",
								 GetConfigOptionResetString("search_path"),
								 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
								 true, 0, false);
		SetUserIdAndSecContext(role, save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
		if (timeout_ms > 0)
			enable_timeout_after(STATEMENT_TIMEOUT, timeout_ms);

		InitFunctionCallInfoData(*fcinfo, flinfo, 1, InvalidOid, NULL, NULL);
		fcinfo->args[0].value = input ? JsonbPGetDatum(input) : (Datum) 0;
		fcinfo->args[0].isnull = input == NULL;
		if (flinfo->fn_strict && input == NULL)
			fcinfo->isnull = true;
		else
		{
			/*
			 * The error context of a failure is the function's own: not that
			 * of whoever called durable.run_tasks(), which the executor
			 * workers do not have.
			 */
			ErrorContextCallback *save_context = error_context_stack;

			error_context_stack = NULL;
			value = FunctionCallInvoke(fcinfo);
			error_context_stack = save_context;
		}

		if (timeout_ms > 0)
			disable_timeout(STATEMENT_TIMEOUT, false);
		SetUserIdAndSecContext(save_userid, save_sec_context);
		AtEOXact_GUC(true, nestlevel);
		MemoryContextSwitchTo(oldcxt);
		if (!fcinfo->isnull)
			*result = DatumGetJsonbPCopy(value);

		keep_it = keep != NULL && keep(keep_arg);
		if (keep_it)
			ReleaseCurrentSubTransaction();
		else
			RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
	}
	PG_CATCH();
	{
		if (timeout_ms > 0)
			disable_timeout(STATEMENT_TIMEOUT, false);
		MemoryContextSwitchTo(oldcxt);
		*error = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
		SetUserIdAndSecContext(save_userid, save_sec_context);
		*timed_out = timeout_ms > 0 &&
			(*error)->sqlerrcode == ERRCODE_QUERY_CANCELED &&
			TimestampDifferenceExceeds(started, GetCurrentTimestamp(),
									   timeout_ms - 1);
	}
	PG_END_TRY();
	if (outer_timeout != 0)
		enable_timeout_at(STATEMENT_TIMEOUT, outer_timeout);
}

/* Whether the function of a registration still exists. */
static bool
function_exists(Oid function)
{
	return SearchSysCacheExists1(PROCOID, ObjectIdGetDatum(function));
}

/*
 * Complete the decision task with the decisions of the workflow function.
 * Decisions the function could not check (a limit reached while applying
 * them) fail the workflow instead of the task, which would fail again.
 */
static void
complete_decisions(RunState *rs, TimestampTz now, Jsonb *decisions,
				   const char *identity)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	pg_uuid_t	run_id = rs->run_id;
	int64		scheduled_id = rs->decision_scheduled_id;
	ErrorData  *edata;
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
		return;
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

	/* Start again from the table, where nothing of this task was written. */
	ResetEventBatches();
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

/* Run a claimed decision task of a SQL workflow. */
static void
execute_decision_task(pg_uuid_t *run_id, int64 scheduled_id, int32 attempt)
{
	RunState	rs;
	Registration reg;
	TimestampTz now = DurableNow();
	const char *identity = executor_identity();
	Jsonb	   *decisions;
	Jsonb	   *failure;
	JsonBuilder jb;

	if (!LoadRunById(run_id, false, &rs))
		return;
	if (!LookupRegistration('w', rs.namespace, rs.workflow_type, rs.task_queue,
							&reg))
	{
		/* Unregistered since it was queued: back to the external pollers. */
		if (RunIsOpen(&rs) && rs.decision_scheduled_id == scheduled_id &&
			rs.decision_started_id == 0)
		{
			EnqueueReadyTask(&rs, rs.task_queue, 'd', rs.workflow_type,
							 scheduled_id, attempt);
			SaveRun(&rs);
		}
		return;
	}
	if (!StartDecisionTask(&rs, scheduled_id, now, identity, false))
		return;
	if (IsBackgroundWorker)
		pgstat_report_activity(STATE_RUNNING,
							   psprintf("durable: workflow %s (%s)",
										rs.workflow_id, rs.workflow_type));

	if (!function_exists(reg.function))
	{
		JsonBegin(&jb);
		JsonAddText(&jb, "message",
					psprintf("function %u of workflow type \"%s\" does not exist",
							 reg.function, rs.workflow_type));
		FailDecisionTask(&rs, now, "UnknownWorkflowType", JsonFinish(&jb),
						 identity, true);
		return;
	}
	switch (ReplayWorkflow(&rs, &reg, now, &decisions, &failure))
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
			(void) DecisionTaskTimedOut(&rs, now, rs.decision_started_id);
			break;
		case REPLAY_DECIDED:
			complete_decisions(&rs, now, decisions, identity);
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
	ar->current = LoadRunById(&ar->run_id, false, &ar->rs) &&
		RunIsOpen(&ar->rs) &&
		LoadActivity(&ar->run_id, ar->scheduled_id, &ar->a) &&
		ar->a.attempt == ar->attempt &&
		strcmp(ar->a.state, "SCHEDULED") == 0 &&
		ar->a.next_attempt_time == DT_NOEND;
	return ar->current;
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
	Datum		values[2];
	bool		isnull;
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

	values[0] = UUIDPGetDatum(run_id);
	values[1] = Int64GetDatum(scheduled_id);
	if (RunPlan(&peek_activity, values, NULL, false, 1) == 0)
		return;
	activity_type = SPIGetText(0, 1);
	input = SPIGetJsonbCopy(0, 2);
	if (DatumGetInt32(SPIGetDatum(0, 3, &isnull)) != attempt ||
		!DatumGetBool(SPIGetDatum(0, 4, &isnull)))
		return;					/* stale: retried, timed out or canceled */
	timeout = DatumGetFloat8(SPIGetDatum(0, 5, &isnull));
	schedule_to_close = DatumGetFloat8(SPIGetDatum(0, 6, &isnull));
	if (!isnull && schedule_to_close > 0)
	{
		TimestampTz first = DatumGetTimestampTz(SPIGetDatum(0, 7, &isnull));
		double		left = schedule_to_close - TimestampDiffSeconds(started, first);

		timeout = Min(timeout, Max(left, 0.001));
	}
	SPI_freetuptable(SPI_tuptable);

	memset(&ar, 0, sizeof(ar));
	ar.run_id = *run_id;
	ar.scheduled_id = scheduled_id;
	ar.attempt = attempt;

	if (!LookupRegistration('x', namespace, activity_type, task_queue, &reg))
	{
		/* Unregistered since it was queued: back to the external pollers. */
		if (lock_current_attempt(&ar))
		{
			EnqueueReadyTask(&ar.rs, task_queue, 'a', activity_type,
							 scheduled_id, attempt);
			SaveRun(&ar.rs);
		}
		return;
	}
	if (IsBackgroundWorker)
		pgstat_report_activity(STATE_RUNNING,
							   psprintf("durable: activity %s", activity_type));

	if (!function_exists(reg.function))
	{
		JsonBuilder jb;

		if (!lock_current_attempt(&ar))
			return;
		JsonBegin(&jb);
		JsonAddText(&jb, "message",
					psprintf("function %u of activity type \"%s\" does not exist",
							 reg.function, activity_type));
		ar.a.started_time = started;
		ar.a.last_worker_identity = (char *) identity;
		FailActivityAttempt(&ar.rs, &ar.a, DurableNow(),
							"durable:UnknownActivityType", JsonFinish(&jb),
							-1, NULL);
		if (RunIsOpen(&ar.rs))
			SaveRun(&ar.rs);
		return;
	}

	/*
	 * Run and activity are locked before the function runs, in this order,
	 * so that no other outcome (a timeout, a cancel) can race it.  Locking
	 * them only afterwards, from the function's subtransaction, would turn
	 * the row locks of a chain into multixacts.
	 */
	if (!lock_current_attempt(&ar))
		return;
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
	if (error->sqlerrcode == ERRCODE_QUERY_CANCELED && !timed_out)
		ReThrowError(error);	/* the executor was canceled: not an outcome */
	ar.a.started_time = started;
	ar.a.last_worker_identity = (char *) identity;
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

/*
 * Run the task just claimed (the last SPI result); its run id goes to
 * *run_id.
 */
static void
execute_claimed_task(pg_uuid_t *run_id)
{
	int64		scheduled_id;
	int32		attempt;
	char	   *namespace;
	char	   *task_queue;
	char		kind;
	bool		isnull;

	namespace = SPIGetText(0, 1);
	task_queue = SPIGetText(0, 2);
	kind = DatumGetChar(SPIGetDatum(0, 3, &isnull));
	memcpy(run_id, DatumGetUUIDP(SPIGetDatum(0, 4, &isnull)), sizeof(pg_uuid_t));
	scheduled_id = DatumGetInt64(SPIGetDatum(0, 5, &isnull));
	attempt = DatumGetInt32(SPIGetDatum(0, 6, &isnull));
	SPI_freetuptable(SPI_tuptable);

	if (kind == 'w')
		execute_decision_task(run_id, scheduled_id, attempt);
	else
		execute_activity_task(run_id, scheduled_id, attempt, namespace,
							  task_queue);
}

/* '{w,x}' as a "char"[] */
static Datum
executor_kinds(void)
{
	Datum		kinds[2] = {CharGetDatum('w'), CharGetDatum('x')};

	return PointerGetDatum(construct_array(kinds, 2, CHAROID, 1, true,
										   TYPALIGN_CHAR));
}

/*
 * Claim and run the oldest ready executor task in the current transaction,
 * then (chain) the tasks it made ready for the same run, as long as the
 * transaction is young: a SQL workflow's consecutive steps commit together.
 * Nothing is lost by that: a crash undoes the steps of the chain together
 * with their writes, and they run again.  Returns how many tasks ran (0:
 * none was ready).
 */
static int
execute_tasks(int max_tasks)
{
	pg_uuid_t	run_id;
	TimestampTz began = GetCurrentTimestamp();
	int			n = 0;

	DurableSPIConnect();
	if (RunPlan(&claim_executor_task, NULL, NULL, false, 1) > 0)
	{
		execute_claimed_task(&run_id);
		n++;
		while (n < Min(max_tasks, EXECUTOR_CHAIN_TASKS) &&
			   !TimestampDifferenceExceeds(began, GetCurrentTimestamp(),
										   EXECUTOR_CHAIN_MS))
		{
			Datum		values[2];

			values[0] = UUIDPGetDatum(&run_id);
			values[1] = executor_kinds();
			if (RunPlan(&claim_run_task, values, NULL, false, 1) == 0)
				break;
			execute_claimed_task(&run_id);
			n++;
		}
	}
	DurableSPIFinish();
	return n;
}

/*
 * Run at most max_tasks ready executor tasks; returns how many ran.  With
 * own_xact (a background worker, outside any transaction) each task is a
 * transaction of its own, and a task that fails is logged and left queued;
 * otherwise they run in the caller's transaction.
 */
int
ExecuteReadyTasks(int max_tasks, bool own_xact)
{
	MemoryContext task_cxt;
	MemoryContext oldcxt = CurrentMemoryContext;
	volatile int n = 0;

	task_cxt = AllocSetContextCreate(CurrentMemoryContext, "durable executor task",
									 ALLOCSET_DEFAULT_SIZES);
	while (n < max_tasks)
	{
		volatile int ran = 0;

		CHECK_FOR_INTERRUPTS();
		if (!own_xact)
		{
			MemoryContextSwitchTo(task_cxt);
			ran = execute_tasks(max_tasks - n);
			MemoryContextSwitchTo(oldcxt);
			MemoryContextReset(task_cxt);
			if (ran == 0)
				break;
			n += ran;
			continue;
		}

		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		PG_TRY();
		{
			MemoryContextSwitchTo(task_cxt);
			ran = execute_tasks(max_tasks - n);
			MemoryContextSwitchTo(oldcxt);
			PopActiveSnapshot();
			CommitTransactionCommand();
		}
		PG_CATCH();
		{
			MemoryContextSwitchTo(oldcxt);
			EmitErrorReport();
			FlushErrorState();
			AbortCurrentTransaction();
			MemoryContextReset(task_cxt);
			pgstat_report_activity(STATE_IDLE, NULL);
			/* Do not spin on a task that fails: wait a little. */
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 1000L, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			break;
		}
		PG_END_TRY();
		MemoryContextReset(task_cxt);
		pgstat_report_activity(STATE_IDLE, NULL);
		if (ran == 0)
			break;
		n += ran;
	}
	MemoryContextDelete(task_cxt);
	return n;
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

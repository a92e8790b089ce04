/*-------------------------------------------------------------------------
 *
 * batch.c
 *	  Batch operations: terminate, cancel, signal, reset, restart, pause or
 *	  resume every run a filter of list_workflows matches (docs/operations.md "Batch
 *	  operations").
 *
 * durable.start_batch (SQL, sql/durable--0.7.0--0.8.0.sql) records a job in
 * durable.batch_jobs with its condition (durable.workflow_filter's), the
 * role that started it, and the last run_seq then, so that the runs a reset
 * or restart makes are not reached again.  RunBatchSlice works through the
 * runs of the oldest running job after its position, in the order
 * (start_time, run_id) (durable.batch_page), and calls the operation's API
 * function on each run as that role: current user and durable_user_code_role
 * switched to it, in a security-restricted operation, as the executors run
 * user code (sqlwf/usercode.c), so that the function's hook
 * (base/caller.c) notes it as the caller, checks its EXECUTE privilege and
 * its namespace privileges, and records it as identity.  Each run is one
 * subtransaction: an error is the run's own (counted as failed, the first
 * BATCH_MAX_ERRORS kept in durable.batch_job_errors) and the job goes on; a
 * run no longer running (WF003) is skipped.  The counts and the position are
 * written with the runs' changes, in the same transaction: after a crash
 * the job goes on from the last slice committed, and touches each run once.
 *
 * The timer worker (bgw/timer_worker.c) runs a slice of BATCH_SLICE runs per
 * transaction after its timers, bounded in time and in lock waits
 * (BATCH_SLICE_MS, BATCH_LOCK_TIMEOUT) so that timers wait little; durable.run_batches() runs one in the
 * caller's transaction, for tests and for an operator without workers.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/uuid.h"

#include "durable.h"
#include "base/caller.h"
#include "base/clock.h"
#include "store/direct.h"
#include "store/spi.h"
#include "store/worker_slots.h"
#include "api/batch.h"

/* The errors a job keeps, one per run; the others are only counted */
#define BATCH_MAX_ERRORS 1000

/*
 * In the timer worker, a slice stops after BATCH_SLICE_MS, and each call
 * waits at most BATCH_LOCK_TIMEOUT for a lock: a run that a client or an
 * executor keeps locked fails (55P03, kept in batch_job_errors) instead of
 * holding up the timers.
 */
#define BATCH_SLICE_MS 1000
#define BATCH_LOCK_TIMEOUT "1s"

/* The oldest running job not being worked on elsewhere */
static KeptPlan pick_job = {
	NULL, "SELECT batch_id, operation, run_as, reason, signal_name, input,"
	" reset_to, namespace, failed FROM durable.batch_jobs"
	" WHERE state = 'running' ORDER BY start_time, batch_id LIMIT 1"
	" FOR UPDATE SKIP LOCKED",
	0, {InvalidOid}
};

static KeptPlan next_page = {
	NULL, "SELECT run_id, workflow_id, start_time FROM durable.batch_page($1, $2)",
	2, {UUIDOID, INT4OID}
};

static KeptPlan save_progress = {
	NULL, "UPDATE durable.batch_jobs SET touched = touched + $2,"
	" skipped = skipped + $3, failed = failed + $4,"
	" after_time = COALESCE($5, after_time), after_run = COALESCE($6, after_run),"
	" update_time = $7,"
	" state = CASE WHEN $8 THEN 'completed' ELSE state END,"
	" close_time = CASE WHEN $8 THEN $7 ELSE close_time END"
	" WHERE batch_id = $1",
	8, {UUIDOID, INT8OID, INT8OID, INT8OID, TIMESTAMPTZOID, UUIDOID,
	TIMESTAMPTZOID, BOOLOID}
};

static KeptPlan save_error = {
	NULL, "INSERT INTO durable.batch_job_errors (batch_id, run_id, workflow_id,"
	" sqlstate, message, error_time) VALUES ($1, $2, $3, $4, $5, $6)"
	" ON CONFLICT DO NOTHING",
	6, {UUIDOID, UUIDOID, TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID}
};

/* The first DecisionTaskCompleted of a run: a reset to first_decision */
static KeptPlan first_decision = {
	NULL, "SELECT min(event_id) FROM durable.history"
	" WHERE run_id = $1 AND event_type = 'DecisionTaskCompleted'",
	1, {UUIDOID}
};

/* The calls of the API, one per operation */
static KeptPlan op_terminate = {
	NULL, "SELECT durable.terminate_workflow($1, $2, NULL, $3, $4)",
	4, {TEXTOID, TEXTOID, TEXTOID, UUIDOID}
};
static KeptPlan op_cancel = {
	NULL, "SELECT durable.cancel_workflow($1, $2, $3, $4)",
	4, {TEXTOID, TEXTOID, TEXTOID, UUIDOID}
};
static KeptPlan op_signal = {
	NULL, "SELECT durable.signal_workflow($1, $2, $3, $4, $5)",
	5, {TEXTOID, TEXTOID, JSONBOID, TEXTOID, UUIDOID}
};
static KeptPlan op_reset = {
	NULL, "SELECT durable.reset_workflow($1, $2, $3, $4, $5)",
	5, {TEXTOID, TEXTOID, TEXTOID, UUIDOID, INT8OID}
};
static KeptPlan op_restart = {
	NULL, "SELECT durable.restart_workflow($1, $2, $3, $4, $5)",
	5, {TEXTOID, TEXTOID, TEXTOID, UUIDOID, JSONBOID}
};

static KeptPlan op_pause = {
	NULL, "SELECT durable.pause_workflow($1, $2, $3, $4)",
	4, {TEXTOID, UUIDOID, TEXTOID, TEXTOID}
};
static KeptPlan op_resume = {
	NULL, "SELECT durable.resume_workflow($1, $2, $3)",
	3, {TEXTOID, UUIDOID, TEXTOID}
};

/* A job, as RunBatchSlice reads it */
typedef struct BatchJob
{
	Datum		batch_id;		/* uuid */
	char	   *operation;
	Oid			run_as;
	Datum		reason;			/* text */
	Datum		signal_name;	/* text, or null */
	bool		signal_name_null;
	Datum		input;			/* jsonb, or null */
	bool		input_null;
	bool		reset_first;
	Datum		namespace;		/* text */
	int64		failed;
} BatchJob;

typedef enum BatchOutcome
{
	BATCH_TOUCHED,
	BATCH_SKIPPED,
	BATCH_FAILED
} BatchOutcome;

/* The API call of job's operation on one run (as the job's role). */
static void
call_operation(BatchJob *job, Datum run_id, Datum workflow_id, int64 event_id)
{
	Datum		values[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};
	KeptPlan   *plan;

	values[0] = workflow_id;
	if (strcmp(job->operation, "terminate") == 0 ||
		strcmp(job->operation, "cancel") == 0)
	{
		plan = job->operation[0] == 't' ? &op_terminate : &op_cancel;
		values[1] = job->reason;
		values[2] = job->namespace;
		values[3] = run_id;
	}
	else if (strcmp(job->operation, "signal") == 0)
	{
		plan = &op_signal;
		values[1] = job->signal_name;
		nulls[1] = job->signal_name_null ? 'n' : ' ';
		values[2] = job->input;
		nulls[2] = job->input_null ? 'n' : ' ';
		values[3] = job->namespace;
		values[4] = run_id;
	}
	else if (strcmp(job->operation, "reset") == 0)
	{
		plan = &op_reset;
		values[1] = job->reason;
		values[2] = job->namespace;
		values[3] = run_id;
		values[4] = (Datum) 0;
		nulls[4] = 'n';
	}
	else if (strcmp(job->operation, "restart") == 0)
	{
		plan = &op_restart;
		values[1] = job->reason;
		values[2] = job->namespace;
		values[3] = run_id;
		values[4] = job->input;
		nulls[4] = job->input_null ? 'n' : ' ';
	}
	else if (strcmp(job->operation, "pause") == 0)
	{
		/* A run paused already stays as it is: touched, as a second pause. */
		plan = &op_pause;
		values[1] = run_id;
		values[2] = job->reason;
		values[3] = job->namespace;
	}
	else if (strcmp(job->operation, "resume") == 0)
	{
		plan = &op_resume;
		values[1] = run_id;
		values[2] = job->namespace;
	}
	else
		elog(ERROR, "unknown batch operation \"%s\"", job->operation);

	/*
	 * A reset to the first DecisionTaskCompleted; without one, the default
	 * point, which reset_workflow refuses as it should (55000).
	 */
	if (plan == &op_reset && job->reset_first && event_id > 0)
	{
		values[4] = Int64GetDatum(event_id);
		nulls[4] = ' ';
	}
	RunPlan(plan, values, nulls, false, 0);
}

/*
 * Do job's operation on one run, as its role, in a subtransaction.  An
 * error is caught: *error is set to a copy of it (in the caller's context).
 */
static BatchOutcome
do_one(BatchJob *job, Datum run_id, Datum workflow_id, int64 event_id,
	   ErrorData **error)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	Oid			save_userid;
	int			save_sec_context;
	Oid			save_user_code_role;
	volatile BatchOutcome outcome = BATCH_TOUCHED;

	*error = NULL;
	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	save_user_code_role = durable_user_code_role;
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcxt);
	PG_TRY();
	{
		durable_user_code_role = job->run_as;
		SetUserIdAndSecContext(job->run_as, save_sec_context |
							   SECURITY_LOCAL_USERID_CHANGE |
							   SECURITY_RESTRICTED_OPERATION);
		call_operation(job, run_id, workflow_id, event_id);
		SetUserIdAndSecContext(save_userid, save_sec_context);
		durable_user_code_role = save_user_code_role;
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		SetUserIdAndSecContext(save_userid, save_sec_context);
		durable_user_code_role = save_user_code_role;
		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
		DurableSPIForgetWrites();
		/* Query cancel and the like are not the run's: they end the slice */
		if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED ||
			edata->sqlerrcode == ERRCODE_ADMIN_SHUTDOWN)
			ReThrowError(edata);
		if (edata->sqlerrcode == ERRCODE_DURABLE_NOT_RUNNING)
			outcome = BATCH_SKIPPED;
		else
		{
			outcome = BATCH_FAILED;
			*error = edata;
		}
	}
	PG_END_TRY();
	return outcome;
}

/*
 * Work through the oldest running job that no other session is working on:
 * at most max_runs of its runs, in the current transaction, under an SPI
 * connection.  Returns the number of runs done, and sets *found when there
 * was a job to work on; the job is completed when its runs run out.  bounded: the timer worker's
 * slice, which stops after BATCH_SLICE_MS and waits BATCH_LOCK_TIMEOUT at
 * most for a lock.
 */
int
RunBatchSlice(int max_runs, bool bounded, bool *found)
{
	BatchJob	job;
	bool		isnull;
	Datum		args[2];
	int			n;
	int			i;
	Datum	   *run_ids;
	Datum	   *workflow_ids;
	TimestampTz *start_times;
	int64		touched = 0;
	int64		skipped = 0;
	int64		failed = 0;
	char	   *reset_to;
	Datum		values[8];
	char		nulls[8] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
	int			done;
	TimestampTz began = GetCurrentTimestamp();

	*found = false;
	if (RunPlan(&pick_job, NULL, NULL, false, 1) == 0)
		return 0;
	*found = true;
	if (bounded)
		(void) set_config_option("lock_timeout", BATCH_LOCK_TIMEOUT,
								 PGC_SUSET, PGC_S_SESSION, GUC_ACTION_LOCAL,
								 true, 0, false);
	job.batch_id = datumCopy(SPIGetDatum(0, 1, &isnull), false, UUID_LEN);
	job.operation = SPIGetText(0, 2);
	job.run_as = DatumGetObjectId(SPIGetDatum(0, 3, &isnull));
	job.reason = PointerGetDatum(cstring_to_text(SPIGetText(0, 4)));
	job.signal_name = SPIGetDatum(0, 5, &job.signal_name_null);
	if (!job.signal_name_null)
		job.signal_name = PointerGetDatum(cstring_to_text(SPIGetText(0, 5)));
	job.input = SPIGetDatum(0, 6, &job.input_null);
	if (!job.input_null)
		job.input = PointerGetDatum(SPIGetJsonbCopy(0, 6));
	reset_to = SPIGetText(0, 7);
	job.reset_first = reset_to != NULL && strcmp(reset_to, "first_decision") == 0;
	job.namespace = PointerGetDatum(cstring_to_text(SPIGetText(0, 8)));
	job.failed = DatumGetInt64(SPIGetDatum(0, 9, &isnull));
	SPI_freetuptable(SPI_tuptable);

	/* The page, copied: the calls below run statements of their own */
	args[0] = job.batch_id;
	args[1] = Int32GetDatum(max_runs);
	n = RunPlan(&next_page, args, NULL, true, 0);
	run_ids = palloc(sizeof(Datum) * Max(n, 1));
	workflow_ids = palloc(sizeof(Datum) * Max(n, 1));
	start_times = palloc(sizeof(TimestampTz) * Max(n, 1));
	for (i = 0; i < n; i++)
	{
		run_ids[i] = datumCopy(SPIGetDatum(i, 1, &isnull), false, UUID_LEN);
		workflow_ids[i] = PointerGetDatum(cstring_to_text(SPIGetText(i, 2)));
		start_times[i] = DatumGetTimestampTz(SPIGetDatum(i, 3, &isnull));
	}
	SPI_freetuptable(SPI_tuptable);

	for (done = 0; done < n; done++)
	{
		ErrorData  *error;
		int64		event_id = 0;

		CHECK_FOR_INTERRUPTS();
		i = done;
		if (bounded && done > 0 &&
			TimestampDifferenceExceeds(began, GetCurrentTimestamp(),
									   BATCH_SLICE_MS))
			break;
		if (job.reset_first)
		{
			Datum		d;

			RunPlan(&first_decision, &run_ids[i], NULL, true, 1);
			d = SPIGetDatum(0, 1, &isnull);
			if (!isnull)
				event_id = DatumGetInt64(d);
			SPI_freetuptable(SPI_tuptable);
		}
		switch (do_one(&job, run_ids[i], workflow_ids[i], event_id, &error))
		{
			case BATCH_TOUCHED:
				touched++;
				break;
			case BATCH_SKIPPED:
				skipped++;
				break;
			case BATCH_FAILED:
				failed++;
				if (job.failed + failed <= BATCH_MAX_ERRORS)
				{
					Datum		ev[6];

					ev[0] = job.batch_id;
					ev[1] = run_ids[i];
					ev[2] = workflow_ids[i];
					ev[3] = CStringGetTextDatum(unpack_sql_state(error->sqlerrcode));
					ev[4] = CStringGetTextDatum(error->message ? error->message : "");
					ev[5] = TimestampTzGetDatum(DurableNow());
					RunPlan(&save_error, ev, NULL, false, 0);
				}
				FreeErrorData(error);
				break;
		}
	}

	values[0] = job.batch_id;
	values[1] = Int64GetDatum(touched);
	values[2] = Int64GetDatum(skipped);
	values[3] = Int64GetDatum(failed);
	if (done > 0)
	{
		values[4] = TimestampTzGetDatum(start_times[done - 1]);
		values[5] = run_ids[done - 1];
	}
	else
	{
		values[4] = values[5] = (Datum) 0;
		nulls[4] = nulls[5] = 'n';
	}
	values[6] = TimestampTzGetDatum(DurableNow());
	values[7] = BoolGetDatum(done == n && n < max_runs);
	RunPlan(&save_progress, values, nulls, false, 0);
	return done;
}

PG_FUNCTION_INFO_V1(durable_run_batches);
/*
 * durable.run_batches(max_runs): work through running jobs in the caller's
 * transaction, at most max_runs runs in all.
 */
Datum
durable_run_batches(PG_FUNCTION_ARGS)
{
	int32		max_runs = PG_GETARG_INT32(0);
	int			done = 0;

	RequireWritableTransaction("durable.run_batches()");
	if (max_runs <= 0 || max_runs > 100000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_runs must be between 1 and 100000"),
				 errdetail("It is %d.", max_runs)));
	DurableSPIConnect();
	while (done < max_runs)
	{
		bool		found;

		done += RunBatchSlice(Min(max_runs - done, BATCH_SLICE), false, &found);
		if (!found)
			break;
	}
	DurableSPIFinish();
	PG_RETURN_INT32(done);
}

PG_FUNCTION_INFO_V1(durable_batch_caller);
/*
 * durable.batch_caller(): the caller of the API call under way (the role a
 * job runs as), and a wake-up of the timer worker when the transaction
 * commits, for the job it starts.
 */
Datum
durable_batch_caller(PG_FUNCTION_ARGS)
{
	WakeTimerWorkerAtCommit(GetCurrentTimestamp());
	PG_RETURN_OID(DurableCaller());
}

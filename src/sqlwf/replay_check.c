/*-------------------------------------------------------------------------
 *
 * replay_check.c
 *	  durable.replay_check(): new code of a workflow type replayed against
 *	  the histories of its runs, before it is deployed
 *	  (docs/sql-workflows.md "Checking new code against running workflows");
 *	  durable.replay_histories(): those histories, for the replay tests of
 *	  an SDK's workers.
 *
 * Each run's history is replayed against the given function by the same
 * path as the executor's (sqlwf/replay.c, then sqlwf/usercode.c): as the
 * run_as role of the run's registration, in a security-restricted
 * operation, under the decision timeout.  Each run is checked in a
 * subtransaction that is rolled back, so nothing of the function or of the
 * engine is written; the function may be one created in the caller's own
 * transaction, not yet committed.
 *
 * Who may call it: whoever may read the namespace's workflows (the client
 * privilege, as describe_workflow), execute the function, and act as the
 * registration's run_as role (as register_workflow requires of run_as):
 * the code runs with that role's rights, and its errors come back.
 * replay_histories() runs no code: it needs only what get_history() needs.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/resowner.h"
#include "utils/tuplestore.h"

#include "durable.h"
#include "base/caller.h"
#include "base/clock.h"
#include "base/util.h"
#include "store/namespaces.h"
#include "store/registry.h"
#include "store/spi.h"
#include "engine/decision_task.h"
#include "engine/runs.h"
#include "sqlwf/replay.h"
#include "sqlwf/replay_check.h"

/* The most runs one call checks */
#define REPLAY_CHECK_MAX_RUNS	100000

/* The runs of a type in a namespace, the latest first */
static KeptPlan list_runs = {
	NULL, "SELECT run_id, workflow_id FROM durable.runs"
	" WHERE namespace OPERATOR(pg_catalog.=) $1"
	" AND workflow_type OPERATOR(pg_catalog.=) $2"
	" AND (NOT $3 OR status OPERATOR(pg_catalog.=) 'running')"
	" ORDER BY start_time DESC, run_id DESC LIMIT $4",
	4, {TEXTOID, TEXTOID, BOOLOID, INT4OID}
};

/* A row of the result */
static void
put_row(ReturnSetInfo *rsinfo, const char *workflow_id, pg_uuid_t *run_id,
		bool checked, ReplayCheckResult *r)
{
	Datum		values[7];
	bool		nulls[7];

	memset(nulls, 0, sizeof(nulls));
	values[0] = CStringGetTextDatum(workflow_id);
	values[1] = UUIDPGetDatum(run_id);
	values[2] = BoolGetDatum(r->ok);
	nulls[2] = !checked;
	values[3] = Int64GetDatum(r->event_id);
	nulls[3] = r->event_id == 0;
	nulls[4] = r->history == NULL;
	if (r->history)
		values[4] = CStringGetTextDatum(r->history);
	nulls[5] = r->code == NULL;
	if (r->code)
		values[5] = CStringGetTextDatum(r->code);
	nulls[6] = r->message == NULL;
	if (r->message)
		values[6] = CStringGetTextDatum(r->message);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * Check one run in a subtransaction that is rolled back; the result's
 * strings in outcxt, which is current on return.  Returns false when it
 * could not be replayed (*r says why), *gone when it was purged meanwhile.
 * 42501 unless caller has the privileges of the role the run's registration
 * runs as.  Also the check of CREATE OR REPLACE FUNCTION (replace_guard.c).
 */
bool
ReplayCheckRun(const char *namespace, const char *type_name, const char *workflow_id,
		  pg_uuid_t *run_id, Oid function, Oid caller, TimestampTz now,
		  MemoryContext outcxt, ReplayCheckResult *r, bool *gone)
{
	MemoryContext runcxt = AllocSetContextCreate(outcxt, "durable replay_check",
												 ALLOCSET_DEFAULT_SIZES);
	ResourceOwner oldowner = CurrentResourceOwner;
	volatile bool checked = false;

	memset(r, 0, sizeof(*r));
	*gone = false;
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(runcxt);
	PG_TRY();
	{
		RunState	rs;
		Registration reg;
		ReplayCheckResult found;

		memset(&found, 0, sizeof(found));
		if (!LoadRun(namespace, workflow_id, run_id, false, false, &rs))
			*gone = true;
		else if (!LookupRegistration('w', namespace, type_name, rs.task_queue,
									 &reg))
			found.message = psprintf("workflow type \"%s\" is not registered on task queue \"%s\": no SQL function runs it",
									 type_name, rs.task_queue);
		else
		{
			char	   *role_name = GetUserNameFromId(reg.run_as, true);

			if (role_name == NULL ||
				!has_privs_of_role(caller, reg.run_as))
				ereport(ERROR,
						(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						 errmsg("permission denied to run code as role \"%s\"",
								role_name ? role_name : "?"),
						 errdetail("Workflow type \"%s\" on task queue \"%s\" runs as that role; replay_check runs the function as it.",
								   type_name, rs.task_queue),
						 errhint("Call replay_check as a role that has the privileges of \"%s\".",
								 role_name ? role_name : "?")));
			if (pg_proc_aclcheck(function, reg.run_as, ACL_EXECUTE) != ACLCHECK_OK)
				found.message = psprintf("role \"%s\" may not execute function %s",
										 role_name, format_procedure(function));
			else
			{
				ReplayCheck(&rs, function, reg.run_as, now, &found);
				checked = true;
			}
		}
		MemoryContextSwitchTo(outcxt);
		r->ok = found.ok;
		r->event_id = found.event_id;
		r->history = found.history ? pstrdup(found.history) : NULL;
		r->code = found.code ? pstrdup(found.code) : NULL;
		r->message = found.message ? pstrdup(found.message) : NULL;
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(outcxt);
		CurrentResourceOwner = oldowner;
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(outcxt);
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(outcxt);
		CurrentResourceOwner = oldowner;
		PG_RE_THROW();
	}
	PG_END_TRY();
	MemoryContextDelete(runcxt);
	return checked;
}

PG_FUNCTION_INFO_V1(durable_replay_check);
/*
 * durable.replay_check(workflow_type, function, namespace, only_running,
 * max_runs): a row per run of the type, the latest first: ok, or where the
 * function parts from its history.
 */
Datum
durable_replay_check(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *type_name = CheckName(PG_ARGISNULL(0) ? NULL : PG_GETARG_TEXT_PP(0),
									  "workflow_type");
	char	   *namespace = CheckName(PG_ARGISNULL(2) ? NULL : PG_GETARG_TEXT_PP(2),
									  "namespace");
	Oid			function;
	bool		only_running;
	int32		max_runs;
	Oid			caller = DurableCaller();
	TimestampTz now = DurableNow();
	MemoryContext outcxt;
	Datum		values[4];
	int			n;
	int			i;
	pg_uuid_t  *run_ids;
	char	  **workflow_ids;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("function must not be null")));
	if (PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("only_running must not be null")));
	if (PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("max_runs must not be null")));
	function = PG_GETARG_OID(1);
	only_running = PG_GETARG_BOOL(3);
	max_runs = PG_GETARG_INT32(4);
	if (max_runs < 1 || max_runs > REPLAY_CHECK_MAX_RUNS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_runs must be between 1 and %d", REPLAY_CHECK_MAX_RUNS)));
	if (ReplayActive())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("durable.replay_check() cannot be called inside a workflow function")));
	CheckFunctionSignature(function);
	if (pg_proc_aclcheck(function, caller, ACL_EXECUTE) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for function %s",
						format_procedure(function))));

	InitMaterializedSRF(fcinfo, 0);
	DurableSPIConnect();
	CheckNamespacePrivilege(namespace, NSPRIV_CLIENT);
	values[0] = CStringGetTextDatum(namespace);
	values[1] = CStringGetTextDatum(type_name);
	values[2] = BoolGetDatum(only_running);
	values[3] = Int32GetDatum(max_runs);
	n = RunPlan(&list_runs, values, NULL, true, 0);
	outcxt = CurrentMemoryContext;
	run_ids = palloc(sizeof(pg_uuid_t) * Max(n, 1));
	workflow_ids = palloc(sizeof(char *) * Max(n, 1));
	for (i = 0; i < n; i++)
	{
		bool		isnull;

		memcpy(&run_ids[i], DatumGetUUIDP(SPIGetDatum(i, 1, &isnull)),
			   sizeof(pg_uuid_t));
		workflow_ids[i] = SPIGetText(i, 2);
	}
	SPI_freetuptable(SPI_tuptable);

	for (i = 0; i < n; i++)
	{
		ReplayCheckResult r;
		bool		checked;
		bool		gone;

		CHECK_FOR_INTERRUPTS();
		checked = ReplayCheckRun(namespace, type_name, workflow_ids[i], &run_ids[i],
							function, caller, now, outcxt, &r, &gone);
		if (!gone)
			put_row(rsinfo, workflow_ids[i], &run_ids[i], checked, &r);
	}
	DurableSPIFinish();
	return (Datum) 0;
}

/* 22004 when argument argno is NULL. */
static void
require_arg(FunctionCallInfo fcinfo, int argno, const char *argname)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", argname)));
}

PG_FUNCTION_INFO_V1(durable_replay_histories);
/*
 * durable.replay_histories(workflow_type, namespace, only_running, max_runs):
 * a row per run of the type, the latest first, with its history as the
 * "history" array of a decision task (HistoryJson).
 */
Datum
durable_replay_histories(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *type_name = CheckName(PG_ARGISNULL(0) ? NULL : PG_GETARG_TEXT_PP(0),
									  "workflow_type");
	char	   *namespace = CheckName(PG_ARGISNULL(1) ? NULL : PG_GETARG_TEXT_PP(1),
									  "namespace");
	int32		max_runs;
	MemoryContext rowcxt;
	MemoryContext oldcxt;
	Datum		values[4];
	int			n;
	int			i;
	pg_uuid_t  *run_ids;
	char	  **workflow_ids;

	require_arg(fcinfo, 2, "only_running");
	require_arg(fcinfo, 3, "max_runs");
	max_runs = PG_GETARG_INT32(3);
	if (max_runs < 1 || max_runs > REPLAY_CHECK_MAX_RUNS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_runs must be between 1 and %d", REPLAY_CHECK_MAX_RUNS)));

	InitMaterializedSRF(fcinfo, 0);
	DurableSPIConnect();
	CheckNamespacePrivilege(namespace, NSPRIV_CLIENT);
	values[0] = CStringGetTextDatum(namespace);
	values[1] = CStringGetTextDatum(type_name);
	values[2] = PG_GETARG_DATUM(2);
	values[3] = Int32GetDatum(max_runs);
	n = RunPlan(&list_runs, values, NULL, true, 0);
	run_ids = palloc(sizeof(pg_uuid_t) * Max(n, 1));
	workflow_ids = palloc(sizeof(char *) * Max(n, 1));
	for (i = 0; i < n; i++)
	{
		bool		isnull;

		memcpy(&run_ids[i], DatumGetUUIDP(SPIGetDatum(i, 1, &isnull)),
			   sizeof(pg_uuid_t));
		workflow_ids[i] = SPIGetText(i, 2);
	}
	SPI_freetuptable(SPI_tuptable);

	rowcxt = AllocSetContextCreate(CurrentMemoryContext,
								   "durable replay_histories",
								   ALLOCSET_DEFAULT_SIZES);
	for (i = 0; i < n; i++)
	{
		Datum		row[3];
		bool		nulls[3] = {false, false, false};
		Jsonb	   *history;

		CHECK_FOR_INTERRUPTS();
		oldcxt = MemoryContextSwitchTo(rowcxt);
		history = HistoryJson(&run_ids[i]);
		/* Purged meanwhile */
		if (history != NULL)
		{
			row[0] = CStringGetTextDatum(workflow_ids[i]);
			row[1] = UUIDPGetDatum(&run_ids[i]);
			row[2] = JsonbPGetDatum(history);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, row, nulls);
		}
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(rowcxt);
	}
	DurableSPIFinish();
	return (Datum) 0;
}

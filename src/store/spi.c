/*-------------------------------------------------------------------------
 *
 * spi.c
 *	  SPI plans prepared once per backend and kept, and result accessors.
 *
 * Each caller declares a static KeptPlan with its SQL and argument types;
 * GetPlan prepares it on first use.  Every table is schema-qualified, and
 * every plan is prepared and run with pg_catalog as the whole search path
 * (RunPlan): an operator, function or type named without a schema is
 * pg_catalog's, whatever search_path the session, or user code run before
 * in it, has set.  The plan cache replans a kept plan when the search path
 * in force differs from the one it was made under, so the path must be the
 * same at every execution, not only at the first.
 *
 * A kept plan is planned again after its 64th execution in the backend,
 * then after twice as many each time, and at least every 1,024 executions
 * (REPLAN_EXECUTIONS_MAX).  Every statement is a lookup or a walk
 * by key, but the plan the planner picks for it depends on the table's size
 * when it plans: a plan made while a table was small (a new database, a
 * test, the first calls after an ANALYZE of a nearly empty schema) scans it
 * whole, and would be kept at every call of the session as the table grows,
 * until an ANALYZE or a change of the schema invalidated it.  Planning again is what an invalidation does (the plan is marked invalid,
 * and the plan cache replans it at its next use), for one statement: a
 * planning of a lookup by key every 1,024 executions costs nothing
 * measurable.  1,000 signals after 20,000 starts in one session took 4.3 s
 * with plans kept until an invalidation, 0.95 s with intervals growing
 * fourfold, and 0.16 s so (0.12 s in a new session).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "executor/spi.h"
#include "nodes/parsenodes.h"
#include "utils/builtins.h"
#include "utils/plancache.h"

#include "store/spi.h"

/* pg_catalog alone: the search path of every engine statement */
static OverrideSearchPath engine_search_path = {
	.schemas = NIL,
	.addCatalog = true,
	.addTemp = false
};

/*
 * The kept plan of kp, prepared on first use (under the engine's search
 * path: called by RunPlan).  Every statement of the engine
 * is a lookup by key whose best plan does not depend on the values, so the
 * plans are generic from the start: no planning per call.
 */
SPIPlanPtr
GetPlan(KeptPlan *kp)
{
	if (kp->plan == NULL)
	{
		SPIPlanPtr	plan = SPI_prepare_cursor(kp->sql, kp->nargs, kp->argtypes,
											  CURSOR_OPT_GENERIC_PLAN);

		if (plan == NULL)
			elog(ERROR, "SPI_prepare failed for \"%s\": %s",
				 kp->sql, SPI_result_code_string(SPI_result));
		if (SPI_keepplan(plan) != 0)
			elog(ERROR, "SPI_keepplan failed");
		kp->plan = plan;
	}
	return kp->plan;
}

/* The first replanning of a kept plan, and the longest interval between two */
#define REPLAN_EXECUTIONS_FIRST	64
#define REPLAN_EXECUTIONS_MAX	1024

/*
 * Count an execution of a kept plan, and when it is due (see the top of
 * this file) mark its generic plan invalid, as an invalidation of its
 * tables would: the plan cache plans it again, with the tables' sizes of
 * now, when it is next executed (a plan being executed by an outer call is
 * not freed: its executor holds a reference).
 */
static void
count_execution(KeptPlan *kp)
{
	ListCell   *lc;

	if (kp->replan_at == 0)
		kp->replan_at = REPLAN_EXECUTIONS_FIRST;
	if (++kp->executions < kp->replan_at)
		return;
	kp->replan_at = kp->executions +
		Min(kp->executions, (uint64) REPLAN_EXECUTIONS_MAX);
	foreach(lc, SPI_plan_get_plan_sources(kp->plan))
	{
		CachedPlanSource *source = (CachedPlanSource *) lfirst(lc);

		if (source->gplan != NULL)
			source->gplan->is_valid = false;
	}
}

/*
 * Execute a kept plan; returns the number of rows processed.  It is planned
 * and run with pg_catalog as the only schema searched (not even pg_temp).
 * An error leaves the override pushed: the abort of the (sub)transaction,
 * which every caller that catches errors does, pops it.
 */
int
RunPlan(KeptPlan *kp, Datum *values, const char *nulls, bool read_only,
		long count)
{
	int			rc;

	PushOverrideSearchPath(&engine_search_path);
	(void) GetPlan(kp);
	count_execution(kp);
	rc = SPI_execute_plan(kp->plan, values, nulls, read_only, count);
	PopOverrideSearchPath();
	if (rc < 0)
		elog(ERROR, "SPI_execute_plan failed for \"%s\": %s",
			 kp->sql, SPI_result_code_string(rc));
	return (int) SPI_processed;
}

/*
 * Rows an API call has made (events appended to a run, tasks queued) and not
 * yet written, across every run it changed (engine/runs.c counts them).
 */
static int	owed_writes = 0;

/* Count rows made (delta > 0) or written or dropped (delta < 0). */
void
DurableSPIOweWrites(int delta)
{
	owed_writes += delta;
}

/* Forget the rows owed: an error dropped them with their subtransaction. */
void
DurableSPIForgetWrites(void)
{
	owed_writes = 0;
}

/* Start an API call: connect to SPI; no row is owed yet. */
void
DurableSPIConnect(void)
{
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	owed_writes = 0;
}

/* End an API call: every row it made must have been written. */
void
DurableSPIFinish(void)
{
	if (owed_writes != 0)
	{
		int			n = owed_writes;

		owed_writes = 0;
		elog(ERROR, "durable: %d history events were appended but not written", n);
	}
	if (SPI_finish() != SPI_OK_FINISH)
		elog(ERROR, "SPI_finish failed");
}

/*
 * Column col (1-based) of row of the last result, not copied: a value passed
 * by reference points into the result, which SPI_freetuptable and SPI_finish
 * free, and SPI_tuptable names another result after the next statement (an
 * engine call such as LookupRegistration may run one).  Read by-value columns
 * with it, and copy others (SPIGetText, SPIGetJsonbCopy) before either.
 */
Datum
SPIGetDatum(int row, int col, bool *isnull)
{
	return SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col,
						 isnull);
}

/*
 * A text column as a C string in the current context, or NULL.  Under SPI
 * the current context is the connection's, freed by SPI_finish.
 */
char *
SPIGetText(int row, int col)
{
	bool		isnull;
	Datum		d = SPIGetDatum(row, col, &isnull);

	return isnull ? NULL : TextDatumGetCString(d);
}

/* A jsonb column copied into the current context, or NULL. */
Jsonb *
SPIGetJsonbCopy(int row, int col)
{
	bool		isnull;
	Datum		d = SPIGetDatum(row, col, &isnull);

	return isnull ? NULL : DatumGetJsonbPCopy(d);
}

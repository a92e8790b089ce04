/*-------------------------------------------------------------------------
 *
 * router.c
 *	  The router of a node that shares its workflows with other nodes (a
 *	  Citus cluster with durable_citus, docs/citus.md), and the signal and
 *	  cancel requests received from them.
 *
 * On a single server every workflow is here.  Where several nodes each run
 * durable and each workflow id is owned by one of them, an extension that
 * knows the map (durable_citus) registers a router: the one row of
 * durable.router names two functions,
 *
 *	owned_elsewhere(namespace text, workflow_id text) RETURNS boolean
 *		whether another node owns that workflow id;
 *	relay(request jsonb) RETURNS jsonb
 *		deliver a request to the node that owns its target, which answers
 *		with durable.receive_external() there.
 *
 * The engine (engine/children.c) asks owned_elsewhere before it starts a
 * child, and when it finds no running workflow of the target's id on this
 * node for a signal, a cancel, a parent close policy or a child's close
 * (a workflow started here before children were started on their owner is
 * found here), and relays the request when another node owns it.  Only a
 * superuser can write durable.router
 * (its owner's table, granted to no one), and both functions must be owned
 * by a superuser: the engine calls them as the extension's owner.
 *
 * Each backend keeps the row in memory: a statement trigger on the table
 * (durable.cached_table_changed) sends a relcache invalidation that empties
 * every backend's copy, and any change to a function (pg_proc) does too, so
 * that a dropped or replaced function is looked up again.  Without a row
 * (a single server, or a database still at 0.10.0 that has no table) the
 * cost of a request is one test of a cached flag.  A row whose functions no
 * longer exist (the extension that wrote it was dropped) is ignored.
 *
 * durable.received_requests is the receiving side: one row for each
 * request delivered here from another node, keyed by its initiator's run id
 * and initiated event id (a child's close: the child's run and close
 * event), so that a relay tried again after a failure between the two
 * nodes' commits finds it done and does nothing twice.
 * Its rows go with the run they reached (retention.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "base/invalidation.h"
#include "base/util.h"
#include "store/router.h"
#include "store/spi.h"

/* The row of durable.router, as this backend last read it */
static bool router_valid = false;
static bool router_present = false;
static Oid	router_owned_elsewhere = InvalidOid;
static Oid	router_relay = InvalidOid;
static Oid	router_relid = InvalidOid;
static bool callbacks_registered = false;

static KeptPlan load_router = {
	NULL, "SELECT owned_elsewhere::pg_catalog.oid, relay::pg_catalog.oid"
	" FROM durable.router",
	0, {InvalidOid}
};
static KeptPlan find_received = {
	NULL, "SELECT target_run_id FROM durable.received_requests"
	" WHERE initiator_run_id = $1 AND initiated_event_id = $2",
	2, {UUIDOID, INT8OID}
};
static KeptPlan insert_received = {
	NULL, "INSERT INTO durable.received_requests (initiator_run_id,"
	" initiated_event_id, target_run_id, received_at) VALUES ($1, $2, $3, $4)",
	4, {UUIDOID, INT8OID, UUIDOID, TIMESTAMPTZOID}
};

/* Relcache callback: a change to durable.router empties the copy. */
static void
router_relcache_changed(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == router_relid ||
		router_relid == InvalidOid)
		router_valid = false;
}

/* Syscache callback on pg_proc: a function dropped or replaced. */
static void
router_function_changed(Datum arg, int cacheid, uint32 hashvalue)
{
	router_valid = false;
}

bool
ReceivedRequestsTableExists(void)
{
	return OidIsValid(DurableRelationOid("received_requests"));
}

/*
 * 55000 unless a router function has the signature it must have and a
 * superuser owns it; false when it does not exist.
 */
static bool
check_router_function(Oid fn, int nargs, Oid arg0, Oid arg1, Oid rettype,
					  const char *column)
{
	HeapTuple	tup;
	Form_pg_proc proc;
	bool		ok;
	Oid			owner;

	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fn));
	if (!HeapTupleIsValid(tup))
		return false;
	proc = (Form_pg_proc) GETSTRUCT(tup);
	ok = proc->prokind == PROKIND_FUNCTION && !proc->proretset &&
		proc->pronargs == nargs && proc->prorettype == rettype &&
		proc->proargtypes.values[0] == arg0 &&
		(nargs < 2 || proc->proargtypes.values[1] == arg1);
	owner = proc->proowner;
	ReleaseSysCache(tup);
	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("durable.router.%s names %s, which does not have the signature of a router function",
						column, format_procedure(fn)),
				 errhint("owned_elsewhere is f(text, text) RETURNS boolean, relay is f(jsonb) RETURNS jsonb (docs/citus.md).")));
	if (!superuser_arg(owner))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("durable.router.%s names %s, which is not owned by a superuser",
						column, format_procedure(fn))));
	return true;
}

/* Read the row of durable.router, if any (SPI connected). */
static void
read_router(void)
{
	bool		isnull;
	Oid			owned_elsewhere;
	Oid			relay;

	router_present = false;
	router_relid = DurableRelationOid("router");
	if (!OidIsValid(router_relid))
		return;
	if (RunPlan(&load_router, NULL, NULL, true, 1) == 0)
		return;
	owned_elsewhere = DatumGetObjectId(SPIGetDatum(0, 1, &isnull));
	relay = DatumGetObjectId(SPIGetDatum(0, 2, &isnull));
	SPI_freetuptable(SPI_tuptable);
	if (!check_router_function(owned_elsewhere, 2, TEXTOID, TEXTOID, BOOLOID,
							   "owned_elsewhere") ||
		!check_router_function(relay, 1, JSONBOID, InvalidOid, JSONBOID,
							   "relay"))
		return;
	router_owned_elsewhere = owned_elsewhere;
	router_relay = relay;
	router_present = true;
}

/*
 * The copy of durable.router, read again when invalidated.  Marked valid
 * before the read, so that an invalidation during it is not lost; a read
 * that fails leaves it invalid.
 */
static bool
have_router(void)
{
	if (router_valid)
		return router_present;
	if (!callbacks_registered)
	{
		DurableRegisterRelcacheCallback(router_relcache_changed, (Datum) 0);
		CacheRegisterSyscacheCallback(PROCOID, router_function_changed, (Datum) 0);
		callbacks_registered = true;
	}
	router_valid = true;
	PG_TRY();
	{
		read_router();
	}
	PG_CATCH();
	{
		router_valid = false;
		router_present = false;
		PG_RE_THROW();
	}
	PG_END_TRY();
	return router_present;
}

/* Whether a router is registered (SPI connected). */
bool
RouterPresent(void)
{
	return have_router();
}

/*
 * Whether another node owns a workflow id: false without a router (SPI
 * connected).
 */
bool
RouterOwnedElsewhere(const char *namespace, const char *workflow_id)
{
	LOCAL_FCINFO(fcinfo, 2);
	FmgrInfo	flinfo;
	Datum		result;

	if (!have_router())
		return false;
	fmgr_info(router_owned_elsewhere, &flinfo);
	InitFunctionCallInfoData(*fcinfo, &flinfo, 2, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = CStringGetTextDatum(namespace);
	fcinfo->args[0].isnull = false;
	fcinfo->args[1].value = CStringGetTextDatum(workflow_id);
	fcinfo->args[1].isnull = false;
	result = FunctionCallInvoke(fcinfo);
	return !fcinfo->isnull && DatumGetBool(result);
}

/*
 * Relay a request to the node that owns its target; returns the answer of
 * durable.receive_external() there (SPI connected).  Run as a statement, so
 * that what the relay function does on another node belongs to this
 * transaction as a statement's would.
 */
Jsonb *
RouterRelay(Jsonb *request)
{
	char	   *sql;
	char	   *nspname;
	char	   *fname;
	Oid			argtypes[1] = {JSONBOID};
	Datum		values[1];
	int			rc;
	Jsonb	   *answer = NULL;

	if (!have_router())
		elog(ERROR, "durable: no router to relay a request with");
	fname = get_func_name(router_relay);
	nspname = fname != NULL ? get_namespace_name(get_func_namespace(router_relay)) : NULL;
	if (fname == NULL || nspname == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the relay function of durable.router was dropped")));
	sql = psprintf("SELECT %s($1)", quote_qualified_identifier(nspname, fname));
	values[0] = JsonbPGetDatum(request);
	rc = SPI_execute_with_args(sql, 1, argtypes, values, NULL, false, 1);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "durable: the router's relay failed: %s", SPI_result_code_string(rc));
	if (SPI_processed == 1)
	{
		bool		isnull;

		(void) SPIGetDatum(0, 1, &isnull);
		if (!isnull)
			answer = SPIGetJsonbCopy(0, 1);
	}
	SPI_freetuptable(SPI_tuptable);
	return answer;
}

/*
 * The run a request from another node reached, if it was delivered here
 * already.
 */
bool
ReceivedRequestTarget(pg_uuid_t *initiator_run_id, int64 initiated_event_id,
					  pg_uuid_t *target_run_id)
{
	Datum		values[2];
	bool		isnull;

	values[0] = UUIDPGetDatum(initiator_run_id);
	values[1] = Int64GetDatum(initiated_event_id);
	if (RunPlan(&find_received, values, NULL, false, 1) == 0)
		return false;
	memcpy(target_run_id, DatumGetUUIDP(SPIGetDatum(0, 1, &isnull)),
		   sizeof(pg_uuid_t));
	SPI_freetuptable(SPI_tuptable);
	return true;
}

/* A request from another node delivered to a run here. */
void
NoteReceivedRequest(pg_uuid_t *initiator_run_id, int64 initiated_event_id,
					pg_uuid_t *target_run_id, TimestampTz now)
{
	Datum		values[4];

	values[0] = UUIDPGetDatum(initiator_run_id);
	values[1] = Int64GetDatum(initiated_event_id);
	values[2] = UUIDPGetDatum(target_run_id);
	values[3] = TimestampTzGetDatum(now);
	RunPlan(&insert_received, values, NULL, false, 0);
}

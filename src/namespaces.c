/*-------------------------------------------------------------------------
 *
 * namespaces.c
 *	  Namespaces, cached per backend.
 *
 * Every start and poll checks its namespace, and every scheduled activity
 * without a policy takes its namespace's default: a backend keeps what it
 * read in a hash table.  A statement trigger on durable.namespaces sends a
 * relcache invalidation of that table, which every backend receives (its
 * own at once, the others when the change commits) and which empties the
 * cache.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "durable.h"

/* The default activity retry policy (rule 4), as the table's default says */
#define DEFAULT_ACTIVITY_POLICY \
	"{\"initialIntervalInSeconds\": 1, \"backoffCoefficient\": 2.0, " \
	"\"maximumIntervalInSeconds\": 100, \"expirationIntervalInSeconds\": 0, " \
	"\"maximumAttempts\": 10, \"nonRetriableErrorReasons\": []}"

typedef struct NamespaceEntry
{
	char		name[DURABLE_MAX_NAME_LEN + 1]; /* hash key */
	Jsonb	   *activity_retry_policy;
} NamespaceEntry;

static HTAB *namespace_cache = NULL;
static MemoryContext namespace_cxt = NULL;	/* the cache and its policies */
static bool namespace_cache_valid = false;
static bool callback_registered = false;
static Oid	namespaces_relid = InvalidOid;

static KeptPlan insert_namespace = {
	NULL, "INSERT INTO durable.namespaces (name, retention, activity_retry_policy,"
	" description) VALUES ($1, $2, COALESCE($3, '" DEFAULT_ACTIVITY_POLICY "'), $4)"
	" ON CONFLICT (name) DO NOTHING",
	4, {TEXTOID, INTERVALOID, JSONBOID, TEXTOID}
};
static KeptPlan update_namespace = {
	NULL, "UPDATE durable.namespaces SET retention = COALESCE($2, retention),"
	" activity_retry_policy = COALESCE($3, activity_retry_policy),"
	" description = COALESCE($4, description) WHERE name = $1",
	4, {TEXTOID, INTERVALOID, JSONBOID, TEXTOID}
};
static KeptPlan lock_namespace = {
	NULL, "SELECT 1 FROM durable.namespaces WHERE name = $1 FOR UPDATE",
	1, {TEXTOID}
};
static KeptPlan namespace_has_runs = {
	NULL, "SELECT 1 FROM durable.runs WHERE namespace = $1"
	" ORDER BY namespace, workflow_id LIMIT 1",
	1, {TEXTOID}
};
static KeptPlan delete_namespace = {
	NULL, "DELETE FROM durable.namespaces WHERE name = $1",
	1, {TEXTOID}
};
static KeptPlan load_namespace = {
	NULL, "SELECT activity_retry_policy FROM durable.namespaces WHERE name = $1",
	1, {TEXTOID}
};

/* Relcache callback: a change to durable.namespaces empties the cache. */
static void
namespaces_invalidated(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == namespaces_relid)
		namespace_cache_valid = false;
}

/* The cache entry of a namespace, read from the table if need be; or NULL. */
static NamespaceEntry *
lookup_namespace(const char *namespace)
{
	NamespaceEntry *entry;
	bool		found;
	Datum		values[1];
	Jsonb	   *policy;
	Jsonb	   *policy_copy;

	if (!callback_registered)
	{
		CacheRegisterRelcacheCallback(namespaces_invalidated, (Datum) 0);
		callback_registered = true;
	}
	if (!namespace_cache_valid || namespace_cache == NULL)
	{
		HASHCTL		ctl;

		/* The policies of the old cache go with it (callers hold copies). */
		if (namespace_cxt == NULL)
			namespace_cxt = AllocSetContextCreate(CacheMemoryContext,
												  "durable namespaces",
												  ALLOCSET_SMALL_SIZES);
		namespace_cache = NULL;
		MemoryContextReset(namespace_cxt);
		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = DURABLE_MAX_NAME_LEN + 1;
		ctl.entrysize = sizeof(NamespaceEntry);
		ctl.hcxt = namespace_cxt;
		namespace_cache = hash_create("durable namespaces", 16, &ctl,
									  HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
		namespaces_relid = get_relname_relid("namespaces",
											 get_namespace_oid("durable", false));
		namespace_cache_valid = true;
	}

	entry = hash_search(namespace_cache, namespace, HASH_FIND, NULL);
	if (entry != NULL)
		return entry;

	values[0] = CStringGetTextDatum(namespace);
	if (RunPlan(&load_namespace, values, NULL, false, 1) == 0)
		return NULL;
	/* Copied into the cache's context before the SPI result is freed. */
	policy = DatumGetJsonbP(SPIGetDatum(0, 1, &found));
	policy_copy = (Jsonb *) MemoryContextAlloc(namespace_cxt, VARSIZE(policy));
	memcpy(policy_copy, policy, VARSIZE(policy));
	SPI_freetuptable(SPI_tuptable);
	entry = hash_search(namespace_cache, namespace, HASH_ENTER, &found);
	entry->activity_retry_policy = policy_copy;
	return entry;
}

/* Whether the namespace exists. */
bool
NamespaceExists(const char *namespace)
{
	return lookup_namespace(namespace) != NULL;
}

/* WF002 unless the namespace exists. */
void
CheckNamespaceExists(const char *namespace)
{
	if (lookup_namespace(namespace) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DURABLE_NOT_FOUND),
				 errmsg("namespace \"%s\" does not exist", namespace)));
}

/*
 * The namespace's default activity retry policy (rule 4), copied into the
 * current context: the cache may be rebuilt, and its memory reset, by any
 * later lookup.
 */
Jsonb *
NamespaceActivityPolicy(const char *namespace)
{
	NamespaceEntry *entry = lookup_namespace(namespace);

	if (entry == NULL)
		elog(ERROR, "namespace \"%s\" vanished", namespace);
	return DatumGetJsonbPCopy(JsonbPGetDatum(entry->activity_retry_policy));
}

PG_FUNCTION_INFO_V1(durable_namespaces_changed);
/*
 * Statement trigger on a table that backends cache (durable.namespaces,
 * durable.registrations; SQL name durable.cached_table_changed since 0.2.0):
 * invalidate every backend's cache of it.
 */
Datum
durable_namespaces_changed(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "durable_namespaces_changed: not called as a trigger");
	CacheInvalidateRelcacheByRelid(RelationGetRelid(trigdata->tg_relation));
	return PointerGetDatum(NULL);
}

/*
 * The checked arguments of create_namespace and alter_namespace; NULL (a
 * null Datum flagged in nulls) where the caller gave none.
 */
static void
namespace_arguments(FunctionCallInfo fcinfo, Datum *values, char *nulls)
{
	values[0] = CStringGetTextDatum(CheckName(PG_ARGISNULL(0) ? NULL :
											  PG_GETARG_TEXT_PP(0), "name"));
	nulls[0] = ' ';
	if (PG_ARGISNULL(1))
		nulls[1] = 'n';
	else
	{
		(void) IntervalToSeconds(PG_GETARG_INTERVAL_P(1), "retention", true);
		values[1] = PG_GETARG_DATUM(1);
		nulls[1] = ' ';
	}
	if (PG_ARGISNULL(2))
		nulls[2] = 'n';
	else
	{
		RetryPolicy policy;

		ParseRetryPolicy(PG_GETARG_JSONB_P(2), "activity_retry_policy", &policy);
		values[2] = JsonbPGetDatum(RetryPolicyToJsonb(&policy));
		nulls[2] = ' ';
	}
	if (PG_ARGISNULL(3))
		nulls[3] = 'n';
	else
	{
		values[3] = PG_GETARG_DATUM(3);
		nulls[3] = ' ';
	}
}

PG_FUNCTION_INFO_V1(durable_create_namespace);
/*
 * durable.create_namespace(name, retention, activity_retry_policy,
 * description): 42710 when it exists.
 */
Datum
durable_create_namespace(PG_FUNCTION_ARGS)
{
	Datum		values[4];
	char		nulls[5] = "    ";
	char	   *name;

	RequireWritableTransaction("durable.create_namespace()");

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("retention must not be null")));
	namespace_arguments(fcinfo, values, nulls);
	if (nulls[3] == 'n')
	{
		values[3] = CStringGetTextDatum("");
		nulls[3] = ' ';
	}
	name = TextDatumGetCString(values[0]);
	DurableSPIConnect();
	if (RunPlan(&insert_namespace, values, nulls, false, 0) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("namespace \"%s\" already exists", name)));
	DurableSPIFinish();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(durable_alter_namespace);
/*
 * durable.alter_namespace(name, retention, activity_retry_policy,
 * description): NULL keeps a setting; WF002 for an unknown namespace.
 */
Datum
durable_alter_namespace(PG_FUNCTION_ARGS)
{
	Datum		values[4];
	char		nulls[5] = "    ";
	char	   *name;

	RequireWritableTransaction("durable.alter_namespace()");

	namespace_arguments(fcinfo, values, nulls);
	name = TextDatumGetCString(values[0]);
	DurableSPIConnect();
	if (RunPlan(&update_namespace, values, nulls, false, 0) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DURABLE_NOT_FOUND),
				 errmsg("namespace \"%s\" does not exist", name)));
	DurableSPIFinish();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(durable_drop_namespace);
/*
 * durable.drop_namespace(name): WF002 when unknown; 55006 object_in_use for
 * the default namespace and for one that still has runs (running or closed
 * and not yet purged).
 */
Datum
durable_drop_namespace(PG_FUNCTION_ARGS)
{
	char	   *name = CheckName(PG_ARGISNULL(0) ? NULL : PG_GETARG_TEXT_PP(0),
								 "name");
	Datum		values[1];

	RequireWritableTransaction("durable.drop_namespace()");

	if (strcmp(name, "default") == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("namespace \"default\" cannot be dropped"),
				 errdetail("Every function of durable uses it by default.")));
	values[0] = CStringGetTextDatum(name);
	DurableSPIConnect();
	if (RunPlan(&lock_namespace, values, NULL, false, 1) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DURABLE_NOT_FOUND),
				 errmsg("namespace \"%s\" does not exist", name)));
	if (RunPlan(&namespace_has_runs, values, NULL, false, 1) > 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("namespace \"%s\" has workflow runs", name),
				 errdetail("A namespace can be dropped once its runs are closed and purged."),
				 errhint("Terminate its running workflows; closed runs are purged after the namespace's retention (durable.purge()).")));
	RunPlan(&delete_namespace, values, NULL, false, 0);
	DurableSPIFinish();
	PG_RETURN_VOID();
}

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

typedef struct NamespaceEntry
{
	char		name[DURABLE_MAX_NAME_LEN + 1]; /* hash key */
	Jsonb	   *activity_retry_policy;
} NamespaceEntry;

static HTAB *namespace_cache = NULL;
static bool namespace_cache_valid = false;
static bool callback_registered = false;
static Oid	namespaces_relid = InvalidOid;

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

	if (!callback_registered)
	{
		CacheRegisterRelcacheCallback(namespaces_invalidated, (Datum) 0);
		callback_registered = true;
	}
	if (!namespace_cache_valid || namespace_cache == NULL)
	{
		HASHCTL		ctl;

		if (namespace_cache != NULL)
			hash_destroy(namespace_cache);
		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = DURABLE_MAX_NAME_LEN + 1;
		ctl.entrysize = sizeof(NamespaceEntry);
		ctl.hcxt = CacheMemoryContext;
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
	policy = DatumGetJsonbP(SPIGetDatum(0, 1, &found));
	entry = hash_search(namespace_cache, namespace, HASH_ENTER, &found);
	entry->activity_retry_policy = (Jsonb *)
		MemoryContextAlloc(CacheMemoryContext, VARSIZE(policy));
	memcpy(entry->activity_retry_policy, policy, VARSIZE(policy));
	SPI_freetuptable(SPI_tuptable);
	return entry;
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

/* The namespace's default activity retry policy (rule 4). */
Jsonb *
NamespaceActivityPolicy(const char *namespace)
{
	NamespaceEntry *entry = lookup_namespace(namespace);

	if (entry == NULL)
		elog(ERROR, "namespace \"%s\" vanished", namespace);
	return entry->activity_retry_policy;
}

PG_FUNCTION_INFO_V1(durable_namespaces_changed);
/* Statement trigger on durable.namespaces: invalidate every backend's cache. */
Datum
durable_namespaces_changed(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "durable_namespaces_changed: not called as a trigger");
	CacheInvalidateRelcacheByRelid(RelationGetRelid(trigdata->tg_relation));
	return PointerGetDatum(NULL);
}

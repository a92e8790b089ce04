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
 * The cache also holds each namespace's owner and grants (since 0.3.0,
 * durable.namespace_grants, invalidated the same way), and for the last role
 * checked the privileges it has there: a check on a hot path (a poll, a
 * completion, a row of a view) is a hash lookup.  Role memberships are
 * PostgreSQL's own (has_privs_of_role, cached by the server); a change to
 * pg_auth_members or pg_authid forgets the remembered results.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "durable.h"
#include "base/backoff.h"
#include "base/caller.h"
#include "base/invalidation.h"
#include "base/util.h"
#include "store/direct.h"
#include "store/namespaces.h"
#include "store/spi.h"

/* The default activity retry policy (engine rule 4), as the table's default says */
#define DEFAULT_ACTIVITY_POLICY \
	"{\"initialIntervalInSeconds\": 1, \"backoffCoefficient\": 2.0, " \
	"\"maximumIntervalInSeconds\": 100, \"expirationIntervalInSeconds\": 0, " \
	"\"maximumAttempts\": 10, \"nonRetriableErrorReasons\": []}"

typedef struct NamespaceGrant
{
	Oid			grantee;		/* InvalidOid: PUBLIC */
	int			privileges;		/* NSPRIV_* bits */
} NamespaceGrant;

typedef struct NamespaceEntry
{
	char		name[DURABLE_MAX_NAME_LEN + 1]; /* hash key */
	Jsonb	   *activity_retry_policy;
	Oid			owner;			/* InvalidOid before 0.3.0 */
	int			ngrants;
	NamespaceGrant *grants;
	Oid			checked_role;	/* the last role checked here, */
	uint64		checked_epoch;	/* under these memberships, */
	int			checked_privileges; /* has these privileges */
} NamespaceEntry;

static HTAB *namespace_cache = NULL;
static MemoryContext namespace_cxt = NULL;	/* the cache and its policies */
static bool namespace_cache_valid = false;
static bool callback_registered = false;
static Oid	namespaces_relid = InvalidOid;
static Oid	grants_relid = InvalidOid;	/* InvalidOid before 0.3.0 */
static Oid	admin_role = InvalidOid;	/* durable_admin */
/* Counts changes of roles and memberships: remembered results older are void */
static uint64 role_epoch = 1;

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
/* Since 0.3.0: the owner and the grants too, one row a grant (or none) */
static KeptPlan load_namespace_v3 = {
	NULL, "SELECT n.activity_retry_policy, n.owner::pg_catalog.oid,"
	" g.grantee::pg_catalog.oid, g.privilege"
	" FROM durable.namespaces n LEFT JOIN durable.namespace_grants g"
	" ON g.namespace OPERATOR(pg_catalog.=) n.name"
	" WHERE n.name OPERATOR(pg_catalog.=) $1",
	1, {TEXTOID}
};
static KeptPlan insert_namespace_v3 = {
	NULL, "INSERT INTO durable.namespaces (name, retention, activity_retry_policy,"
	" description, owner) VALUES ($1, $2, COALESCE($3, '" DEFAULT_ACTIVITY_POLICY "'),"
	" $4, $5) ON CONFLICT (name) DO NOTHING",
	5, {TEXTOID, INTERVALOID, JSONBOID, TEXTOID, REGROLEOID}
};
/*
 * Since 0.5.0: the executors' limits too (executor_share.c reads them).
 * alter_namespace: NULL keeps a limit, 0 (or '0') clears it.
 */
static KeptPlan insert_namespace_v5 = {
	NULL, "INSERT INTO durable.namespaces (name, retention, activity_retry_policy,"
	" description, owner, max_executors, max_task_timeout)"
	" VALUES ($1, $2, COALESCE($3, '" DEFAULT_ACTIVITY_POLICY "'), $4, $5,"
	" NULLIF($6, 0), NULLIF($7, interval '0')) ON CONFLICT (name) DO NOTHING",
	7, {TEXTOID, INTERVALOID, JSONBOID, TEXTOID, REGROLEOID, INT4OID, INTERVALOID}
};
static KeptPlan update_namespace_v5 = {
	NULL, "UPDATE durable.namespaces SET retention = COALESCE($2, retention),"
	" activity_retry_policy = COALESCE($3, activity_retry_policy),"
	" description = COALESCE($4, description),"
	" max_executors = CASE WHEN $5 IS NULL THEN max_executors"
	"   ELSE NULLIF($5, 0) END,"
	" max_task_timeout = CASE WHEN $6 IS NULL THEN max_task_timeout"
	"   ELSE NULLIF($6, interval '0') END"
	" WHERE name = $1",
	6, {TEXTOID, INTERVALOID, JSONBOID, TEXTOID, INT4OID, INTERVALOID}
};
static KeptPlan delete_namespace_grants = {
	NULL, "DELETE FROM durable.namespace_grants WHERE namespace OPERATOR(pg_catalog.=) $1",
	1, {TEXTOID}
};
/* Its paused queues (0.7.0, queue_pause.c) go with it. */
static KeptPlan delete_namespace_pauses = {
	NULL, "DELETE FROM durable.paused_task_queues"
	" WHERE namespace OPERATOR(pg_catalog.=) $1",
	1, {TEXTOID}
};
/* And its queues' limits (0.8.0, task_limits.c): a table namespaces.c
 * knows by name only, as task_limits.c calls CheckNamespaceOwner. */
static KeptPlan delete_namespace_limits = {
	NULL, "DELETE FROM durable.task_queue_limits"
	" WHERE namespace OPERATOR(pg_catalog.=) $1",
	1, {TEXTOID}
};
static KeptPlan delete_namespace_starts = {
	NULL, "DELETE FROM durable.task_starts"
	" WHERE namespace OPERATOR(pg_catalog.=) $1",
	1, {TEXTOID}
};
static KeptPlan namespace_owner = {
	NULL, "SELECT owner::pg_catalog.oid FROM durable.namespaces"
	" WHERE name OPERATOR(pg_catalog.=) $1 FOR UPDATE",
	1, {TEXTOID}
};
static KeptPlan insert_grant = {
	NULL, "INSERT INTO durable.namespace_grants (namespace, grantee, privilege,"
	" granted_by) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
	4, {TEXTOID, REGROLEOID, TEXTOID, REGROLEOID}
};
static KeptPlan delete_grant = {
	NULL, "DELETE FROM durable.namespace_grants WHERE namespace OPERATOR(pg_catalog.=) $1"
	" AND grantee OPERATOR(pg_catalog.=) $2 AND privilege OPERATOR(pg_catalog.=) $3",
	3, {TEXTOID, REGROLEOID, TEXTOID}
};

/*
 * Relcache callback: a change to durable.namespaces or
 * durable.namespace_grants empties the cache.
 */
static void
namespaces_invalidated(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == namespaces_relid ||
		(relid == grants_relid && OidIsValid(relid)))
		namespace_cache_valid = false;
}

/* Syscache callback: roles or memberships changed; checks are redone. */
static void
roles_invalidated(Datum arg, int cacheid, uint32 hashvalue)
{
	role_epoch++;
	admin_role = InvalidOid;
}

/* The privilege bit of a privilege's name; 0 for an unknown name. */
static int
privilege_bit(const char *name)
{
	if (strcmp(name, "client") == 0)
		return NSPRIV_CLIENT;
	if (strcmp(name, "worker") == 0)
		return NSPRIV_WORKER;
	return 0;
}

/* The owner of a table of the extension (the role its functions run as). */
static Oid
table_owner(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

/*
 * Read a namespace, its owner and grants into a new cache entry (SPI
 * connected); NULL when it does not exist.  Read as the tables' owner: the
 * caller may be a role that cannot read them (durable.may_read_namespace()
 * in a view runs as the querying role).
 */
static NamespaceEntry *
load_namespace_entry(const char *namespace)
{
	NamespaceEntry *entry;
	bool		found;
	bool		isnull;
	Datum		values[1];
	Jsonb	   *policy;
	Jsonb	   *policy_copy;
	Oid			save_userid;
	int			save_sec_context;
	int			n;
	int			i;

	values[0] = CStringGetTextDatum(namespace);
	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(table_owner(namespaces_relid),
						   save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
	n = RunPlan(OidIsValid(grants_relid) ? &load_namespace_v3 : &load_namespace,
				values, NULL, false, 0);
	SetUserIdAndSecContext(save_userid, save_sec_context);
	if (n == 0)
	{
		SPI_freetuptable(SPI_tuptable);
		return NULL;
	}
	/* Copied into the cache's context before the SPI result is freed. */
	policy = DatumGetJsonbP(SPIGetDatum(0, 1, &found));
	policy_copy = (Jsonb *) MemoryContextAlloc(namespace_cxt, VARSIZE(policy));
	memcpy(policy_copy, policy, VARSIZE(policy));
	entry = hash_search(namespace_cache, namespace, HASH_ENTER, &found);
	entry->activity_retry_policy = policy_copy;
	entry->owner = InvalidOid;
	entry->ngrants = 0;
	entry->grants = NULL;
	entry->checked_role = InvalidOid;
	entry->checked_epoch = 0;
	entry->checked_privileges = 0;
	if (OidIsValid(grants_relid))
	{
		Datum		owner = SPIGetDatum(0, 2, &isnull);

		entry->owner = isnull ? InvalidOid : DatumGetObjectId(owner);
		entry->grants = MemoryContextAllocZero(namespace_cxt,
											   sizeof(NamespaceGrant) * n);
		for (i = 0; i < n; i++)
		{
			Datum		grantee = SPIGetDatum(i, 3, &isnull);
			char	   *privilege;

			if (isnull)
				continue;		/* no grant: the outer join's row */
			privilege = SPIGetText(i, 4);
			entry->grants[entry->ngrants].grantee = DatumGetObjectId(grantee);
			entry->grants[entry->ngrants].privileges =
				privilege ? privilege_bit(privilege) : 0;
			entry->ngrants++;
		}
	}
	SPI_freetuptable(SPI_tuptable);
	return entry;
}

/* The cache entry of a namespace, read from the table if need be; or NULL. */
static NamespaceEntry *
lookup_namespace(const char *namespace)
{
	NamespaceEntry *entry;

	if (!callback_registered)
	{
		DurableRegisterRelcacheCallback(namespaces_invalidated, (Datum) 0);
		CacheRegisterSyscacheCallback(AUTHMEMROLEMEM, roles_invalidated, (Datum) 0);
		CacheRegisterSyscacheCallback(AUTHOID, roles_invalidated, (Datum) 0);
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
		grants_relid = get_relname_relid("namespace_grants",
										 get_namespace_oid("durable", false));
		namespace_cache_valid = true;
	}

	entry = hash_search(namespace_cache, namespace, HASH_FIND, NULL);
	if (entry != NULL)
		return entry;
	return load_namespace_entry(namespace);
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
 * The namespace's default activity retry policy (engine rule 4), copied into the
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

/*
 * Whether namespace privileges are enforced: the database has
 * durable.namespace_grants (0.3.0).  A database still at 0.2.0 behaves as
 * then: every member of a group role may act in every namespace.
 */
bool
NamespacePrivilegesEnforced(void)
{
	Oid			nsp = get_namespace_oid("durable", true);

	return OidIsValid(nsp) &&
		OidIsValid(get_relname_relid("namespace_grants", nsp));
}

/* The privileges (NSPRIV_* bits) role has in a cached namespace. */
static int
privileges_of(NamespaceEntry *entry, Oid role)
{
	int			privileges = 0;
	int			i;

	if (entry->checked_role == role && entry->checked_epoch == role_epoch)
		return entry->checked_privileges;
	if (!OidIsValid(admin_role))
		admin_role = get_role_oid("durable_admin", true);
	if (!OidIsValid(grants_relid) || superuser_arg(role) ||
		(OidIsValid(admin_role) && has_privs_of_role(role, admin_role)) ||
		(OidIsValid(entry->owner) && has_privs_of_role(role, entry->owner)))
		privileges = NSPRIV_CLIENT | NSPRIV_WORKER;
	else
	{
		for (i = 0; i < entry->ngrants; i++)
		{
			NamespaceGrant *g = &entry->grants[i];

			if ((privileges & g->privileges) == g->privileges)
				continue;		/* nothing new */
			if (!OidIsValid(g->grantee) || has_privs_of_role(role, g->grantee))
				privileges |= g->privileges;
		}
	}
	entry->checked_role = role;
	entry->checked_epoch = role_epoch;
	entry->checked_privileges = privileges;
	return privileges;
}

/*
 * WF002 unless the namespace exists; 42501 unless role has the privilege
 * (NSPRIV_CLIENT or NSPRIV_WORKER) there.  SPI connected; nothing changed.
 */
void
CheckNamespacePrivilegeOf(Oid role, const char *namespace, int privilege)
{
	NamespaceEntry *entry = lookup_namespace(namespace);

	if (entry == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DURABLE_NOT_FOUND),
				 errmsg("namespace \"%s\" does not exist", namespace)));
	if ((privileges_of(entry, role) & privilege) != privilege)
	{
		const char *name = privilege == NSPRIV_CLIENT ? "client" : "worker";
		char	   *rolename = GetUserNameFromId(role, true);

		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for namespace \"%s\": privilege %s required",
						namespace, name),
				 errdetail("Role \"%s\" has no %s privilege on namespace \"%s\".",
						   rolename ? rolename : "?", name, namespace),
				 errhint("The namespace's owner or a durable_admin member can run SELECT durable.grant_namespace('%s', '%s', '%s').",
						 namespace, rolename ? rolename : "?", name)));
	}
}

/*
 * Whether role has the privilege (NSPRIV_* bits) on the namespace; false for
 * a namespace that does not exist.  SPI connected.
 */
bool
HasNamespacePrivilege(Oid role, const char *namespace, int privilege)
{
	NamespaceEntry *entry = lookup_namespace(namespace);

	return entry != NULL &&
		(privileges_of(entry, role) & privilege) == privilege;
}

/* CheckNamespacePrivilegeOf for the caller of the API (DurableCaller). */
void
CheckNamespacePrivilege(const char *namespace, int privilege)
{
	CheckNamespacePrivilegeOf(DurableCaller(), namespace, privilege);
}

PG_FUNCTION_INFO_V1(durable_may_read_namespace);
/*
 * durable.may_read_namespace(namespace): whether the current user has the
 * client privilege there (false for an unknown namespace).  The views'
 * filter: a hash lookup a row, the membership checked once per namespace.
 * The current user, as for the API (caller.c): a view is read with its
 * owner's table privileges, but its functions run as the user querying it,
 * inside a SECURITY DEFINER function that function's owner.
 */
Datum
durable_may_read_namespace(PG_FUNCTION_ARGS)
{
	char	   *namespace = text_to_cstring(PG_GETARG_TEXT_PP(0));
	NamespaceEntry *entry;
	bool		connected = false;
	bool		result;

	if (strlen(namespace) > DURABLE_MAX_NAME_LEN)
		PG_RETURN_BOOL(false);
	if (namespace_cache_valid && namespace_cache != NULL)
		entry = hash_search(namespace_cache, namespace, HASH_FIND, NULL);
	else
		entry = NULL;
	if (entry == NULL)
	{
		/* Not DurableSPIConnect: an engine call may be under way. */
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		connected = true;
		entry = lookup_namespace(namespace);
	}
	result = entry != NULL &&
		(privileges_of(entry, GetUserId()) & NSPRIV_CLIENT) != 0;
	if (connected && SPI_finish() != SPI_OK_FINISH)
		elog(ERROR, "SPI_finish failed");
	PG_RETURN_BOOL(result);
}

PG_FUNCTION_INFO_V1(durable_check_namespace_read);
/*
 * durable.check_namespace_read(namespace): the checks of describe_workflow
 * for a namespace (22004/22023 for a bad name, WF002 when it does not exist,
 * 42501 unless the API's caller has the client privilege there), for the
 * list and count functions, which are written in PL/pgSQL and, running as
 * the extension's owner (caller.c), could not ask may_read_namespace()
 * about their caller.  Internal: granted to no one, called by those
 * functions as the extension's owner.
 */
Datum
durable_check_namespace_read(PG_FUNCTION_ARGS)
{
	char	   *namespace = CheckName(PG_ARGISNULL(0) ? NULL : PG_GETARG_TEXT_PP(0),
									  "namespace");

	DurableSPIConnect();
	CheckNamespacePrivilege(namespace, NSPRIV_CLIENT);
	DurableSPIFinish();
	PG_RETURN_VOID();
}

/*
 * The role argument of grant_namespace and revoke_namespace: 'PUBLIC' (in
 * any case: no role may be named so) is InvalidOid, every role.
 */
static Oid
grantee_argument(FunctionCallInfo fcinfo, int argno)
{
	char	   *name;
	Oid			role;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("role must not be null")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	if (pg_strcasecmp(name, "public") == 0)
		return InvalidOid;
	role = get_role_oid(name, true);
	if (!OidIsValid(role))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("role \"%s\" does not exist", name),
				 errhint("Give the role's name as it is stored (no quotes), or 'PUBLIC' for every role.")));
	return role;
}

/*
 * The caller must be the namespace's owner (or a member of it), a
 * durable_admin member or a superuser, to do what action says ("set the
 * limits of a task queue of"); SPI connected.  The namespace's row stays
 * locked until the transaction ends.  WF002 if it does not exist.
 */
void
CheckNamespaceOwner(const char *namespace, const char *action)
{
	Oid			caller = DurableCaller();
	Oid			owner;
	Oid			admin = get_role_oid("durable_admin", true);
	Datum		values[1];
	bool		isnull;

	values[0] = CStringGetTextDatum(namespace);
	if (RunPlan(&namespace_owner, values, NULL, false, 1) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DURABLE_NOT_FOUND),
				 errmsg("namespace \"%s\" does not exist", namespace)));
	owner = DatumGetObjectId(SPIGetDatum(0, 1, &isnull));
	if (isnull)
		owner = InvalidOid;
	if (!superuser_arg(caller) &&
		!(OidIsValid(admin) && has_privs_of_role(caller, admin)) &&
		!(OidIsValid(owner) && has_privs_of_role(caller, owner)))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to %s namespace \"%s\"",
						action, namespace),
				 errdetail("Only the namespace's owner and durable_admin members may."),
				 errhint("Ask a durable_admin member.")));
}

/* grant_namespace and revoke_namespace */
static void
change_grant(FunctionCallInfo fcinfo, bool grant)
{
	char	   *namespace = CheckName(PG_ARGISNULL(0) ? NULL : PG_GETARG_TEXT_PP(0),
									  "namespace");
	Oid			grantee = grantee_argument(fcinfo, 1);
	char	   *privilege = CheckName(PG_ARGISNULL(2) ? NULL : PG_GETARG_TEXT_PP(2),
									  "privilege");
	Oid			caller = DurableCaller();
	Datum		values[4];

	if (privilege_bit(privilege) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("privilege must be \"client\" or \"worker\""),
				 errdetail("It is \"%s\".", privilege)));
	DurableSPIConnect();
	CheckNamespaceOwner(namespace, grant ? "grant privileges on" :
						"revoke privileges on");
	values[0] = CStringGetTextDatum(namespace);
	values[1] = ObjectIdGetDatum(grantee);
	values[2] = CStringGetTextDatum(privilege);
	values[3] = ObjectIdGetDatum(caller);
	RunPlan(grant ? &insert_grant : &delete_grant, values, NULL, false, 0);
	DurableSPIFinish();
}

PG_FUNCTION_INFO_V1(durable_grant_namespace);
/* durable.grant_namespace(namespace, role, privilege) */
Datum
durable_grant_namespace(PG_FUNCTION_ARGS)
{
	RequireWritableTransaction("durable.grant_namespace()");
	change_grant(fcinfo, true);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(durable_revoke_namespace);
/* durable.revoke_namespace(namespace, role, privilege) */
Datum
durable_revoke_namespace(PG_FUNCTION_ARGS)
{
	RequireWritableTransaction("durable.revoke_namespace()");
	change_grant(fcinfo, false);
	PG_RETURN_VOID();
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

/*
 * The limits of create_namespace and alter_namespace since 0.5.0
 * (max_executors, max_task_timeout: arguments 4 and 5) into values and
 * nulls at first; false when the function has no such arguments (a database
 * still at 0.4.0).  0 and '0' mean no limit.
 */
static bool
namespace_limits(FunctionCallInfo fcinfo, Datum *values, char *nulls,
				 int first)
{
	if (PG_NARGS() < 6)
		return false;
	if (PG_ARGISNULL(4))
		nulls[first] = 'n';
	else
	{
		int32		max_executors = PG_GETARG_INT32(4);

		if (max_executors < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("max_executors must not be negative"),
					 errhint("0 means no limit.")));
		values[first] = Int32GetDatum(max_executors);
		nulls[first] = ' ';
	}
	if (PG_ARGISNULL(5))
		nulls[first + 1] = 'n';
	else
	{
		(void) IntervalToSeconds(PG_GETARG_INTERVAL_P(5), "max_task_timeout",
								 true);
		values[first + 1] = PG_GETARG_DATUM(5);
		nulls[first + 1] = ' ';
	}
	return true;
}

PG_FUNCTION_INFO_V1(durable_create_namespace);
/*
 * durable.create_namespace(name, retention, activity_retry_policy,
 * description, max_executors, max_task_timeout): 42710 when it exists.
 */
Datum
durable_create_namespace(PG_FUNCTION_ARGS)
{
	Datum		values[7];
	char		nulls[8] = "       ";
	char	   *name;
	bool		with_limits;

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
	values[4] = ObjectIdGetDatum(DurableCaller());
	nulls[4] = ' ';
	with_limits = namespace_limits(fcinfo, values, nulls, 5);
	DurableSPIConnect();
	if (RunPlan(with_limits ? &insert_namespace_v5 :
				NamespacePrivilegesEnforced() ? &insert_namespace_v3 :
				&insert_namespace, values, nulls, false, 0) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("namespace \"%s\" already exists", name)));
	DurableSPIFinish();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(durable_alter_namespace);
/*
 * durable.alter_namespace(name, retention, activity_retry_policy,
 * description, max_executors, max_task_timeout): NULL keeps a setting, 0
 * clears a limit; WF002 for an unknown namespace.
 */
Datum
durable_alter_namespace(PG_FUNCTION_ARGS)
{
	Datum		values[6];
	char		nulls[7] = "      ";
	char	   *name;
	bool		with_limits;

	RequireWritableTransaction("durable.alter_namespace()");

	namespace_arguments(fcinfo, values, nulls);
	with_limits = namespace_limits(fcinfo, values, nulls, 4);
	name = TextDatumGetCString(values[0]);
	DurableSPIConnect();
	if (RunPlan(with_limits ? &update_namespace_v5 : &update_namespace,
				values, nulls, false, 0) == 0)
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
	if (NamespacePrivilegesEnforced())
		RunPlan(&delete_namespace_grants, values, NULL, false, 0);
	if (TaskQueuePausesStored())
		RunPlan(&delete_namespace_pauses, values, NULL, false, 0);
	if (DurableColumnExists("task_queue_limits", "max_concurrent"))
	{
		RunPlan(&delete_namespace_limits, values, NULL, false, 0);
		RunPlan(&delete_namespace_starts, values, NULL, false, 0);
	}
	DurableSPIFinish();
	PG_RETURN_VOID();
}

/*
 * Whether the current role sees every namespace's counters and pollers:
 * superusers, members of pg_monitor and of durable_admin (docs/metrics.md
 * "Metrics").
 */
bool
MonitorSeesAll(void)
{
	Oid			admin = get_role_oid("durable_admin", true);

	return superuser() ||
		has_privs_of_role(GetUserId(), ROLE_PG_MONITOR) ||
		(OidIsValid(admin) && has_privs_of_role(GetUserId(), admin));
}

/* Whether the current role may see the rows of a namespace (as above). */
bool
MonitorMayRead(const char *namespace, bool sees_all)
{
	if (sees_all)
		return true;
	return DatumGetBool(DirectFunctionCall1(durable_may_read_namespace,
											CStringGetTextDatum(namespace)));
}

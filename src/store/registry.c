/*-------------------------------------------------------------------------
 *
 * registry.c
 *	  Workflow and activity types bound to SQL functions, which the executor
 *	  workers run (durable.register_workflow, durable.register_activity).
 *
 * A binding is a row of durable.registrations: (namespace, kind, type,
 * task queue) -> function, and the role the function runs as.  Every task
 * the engine queues is routed through LookupRegistration, so each backend
 * keeps the whole (small) table in a hash; a statement trigger on the table
 * (durable.cached_table_changed, namespaces.c) sends a relcache invalidation
 * that empties every backend's copy, as for namespaces.  A database still at version 0.1.0 has no such table: nothing
 * is registered there.
 *
 * The registration functions check their caller (DurableCaller: the current
 * user at the call), whose role the functions will run as; they write the
 * table as its owner.  A binding belongs to the role that made it
 * (registered_by; replacing it keeps the owner): only that role, its members
 * and durable_admin may replace or drop it.
 *
 * A workflow type registered again with running => 'keep' leaves its
 * running workflows on the function they ran with: durable.runs'
 * pinned_function (0.7.0) names it, and the executor calls it instead of the
 * registration's until the run closes or durable.move_runs() moves it
 * (docs/sql-workflows.md "Keeping running workflows on their function").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "durable.h"
#include "base/caller.h"
#include "base/invalidation.h"
#include "base/util.h"
#include "store/claim_mark.h"
#include "store/direct.h"
#include "store/namespaces.h"
#include "store/registry.h"
#include "store/spi.h"
#include "store/wait.h"

/* Key: kind ('w' or 'x'), then namespace, type and queue, separated by \x1f */
#define REGISTRY_KEY_LEN	(3 * (DURABLE_MAX_NAME_LEN + 1) + 2)

typedef struct RegistryEntry
{
	char		key[REGISTRY_KEY_LEN];
	Registration reg;
} RegistryEntry;

static HTAB *registry_cache = NULL;
static bool registry_valid = false;
static bool callback_registered = false;
static Oid	registrations_relid = InvalidOid;

static KeptPlan load_registrations = {
	NULL, "SELECT namespace, kind, type_name, task_queue, function::oid,"
	" run_as::oid FROM durable.registrations",
	0, {InvalidOid}
};
static KeptPlan upsert_registration = {
	NULL, "INSERT INTO durable.registrations (namespace, kind, type_name,"
	" task_queue, function, run_as, registered_by)"
	" VALUES ($1, $2, $3, $4, $5, $6, $7)"
	" ON CONFLICT (namespace, kind, type_name, task_queue) DO UPDATE SET"
	" function = EXCLUDED.function, run_as = EXCLUDED.run_as,"
	" registered_at = EXCLUDED.registered_at",
	7, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, REGPROCEDUREOID, REGROLEOID,
	REGROLEOID}
};
/*
 * The role a binding belongs to, with the table locked against concurrent
 * registrations, so that no binding appears between this check and the
 * write that follows it.
 */
static KeptPlan lock_registrations = {
	NULL, "LOCK TABLE durable.registrations IN SHARE ROW EXCLUSIVE MODE",
	0, {InvalidOid}
};
static KeptPlan registration_owner = {
	NULL, "SELECT registered_by::oid, function::oid FROM durable.registrations"
	" WHERE namespace OPERATOR(pg_catalog.=) $1"
	" AND kind OPERATOR(pg_catalog.=) $2"
	" AND type_name OPERATOR(pg_catalog.=) $3"
	" AND task_queue OPERATOR(pg_catalog.=) $4",
	4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID}
};
static KeptPlan delete_registration = {
	NULL, "DELETE FROM durable.registrations WHERE namespace = $1"
	" AND kind = $2 AND type_name = $3 AND task_queue = $4",
	4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID}
};
/*
 * Running workflows of a type on a queue that follow its registration: kept
 * on the function they ran with (register_workflow(..., running => 'keep')).
 */
static KeptPlan pin_runs = {
	NULL, "UPDATE durable.runs SET pinned_function = $4"
	" WHERE namespace = $1 AND workflow_type = $2 AND task_queue = $3"
	" AND status = 'running' AND pinned_function IS NULL",
	4, {TEXTOID, TEXTOID, TEXTOID, REGPROCEDUREOID}
};
/* Pinned running workflows moved to their registration's function */
static KeptPlan unpin_runs = {
	NULL, "UPDATE durable.runs SET pinned_function = NULL"
	" WHERE namespace = $1 AND workflow_type = $2"
	" AND status = 'running' AND pinned_function IS NOT NULL"
	" AND ($3::pg_catalog.oid IS NULL OR pinned_function = $3::pg_catalog.oid)"
	" AND ($4::pg_catalog.text IS NULL OR workflow_id = $4)",
	4, {TEXTOID, TEXTOID, OIDOID, TEXTOID}
};
/* Queued decision tasks of a workflow type, from one kind to the other */
static KeptPlan move_decision_tasks = {
	NULL, "UPDATE durable.ready_tasks t SET kind = $4 FROM durable.runs r"
	" WHERE t.namespace = $1 AND t.task_queue = $2 AND t.kind = $5"
	" AND r.run_id = t.run_id AND r.workflow_type = $3",
	5, {TEXTOID, TEXTOID, TEXTOID, CHAROID, CHAROID}
};
/* Queued activity tasks of an activity type, from one kind to the other */
static KeptPlan move_activity_tasks = {
	NULL, "UPDATE durable.ready_tasks t SET kind = $4 FROM durable.activities a"
	" WHERE t.namespace = $1 AND t.task_queue = $2 AND t.kind = $5"
	" AND a.run_id = t.run_id AND a.scheduled_event_id = t.scheduled_event_id"
	" AND a.activity_type = $3",
	5, {TEXTOID, TEXTOID, TEXTOID, CHAROID, CHAROID}
};

/* Relcache callback: a change to durable.registrations empties the cache. */
static void
registrations_invalidated(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == registrations_relid ||
		registrations_relid == InvalidOid)
		registry_valid = false;
}

static void
make_key(char *key, char kind, const char *namespace, const char *type_name,
		 const char *task_queue)
{
	snprintf(key, REGISTRY_KEY_LEN, "%c%s\x1f%s\x1f%s", kind, namespace,
			 type_name, task_queue);
}

/* The oid of durable.registrations, InvalidOid at version 0.1.0. */
static Oid
registrations_table(void)
{
	Oid			nsp = get_namespace_oid("durable", true);

	return OidIsValid(nsp) ? get_relname_relid("registrations", nsp) : InvalidOid;
}

/* Read the whole table into the cache (SPI connected). */
static void
fill_registry(void)
{
	uint64		i;

	registrations_relid = registrations_table();
	if (!OidIsValid(registrations_relid))
		return;

	RunPlan(&load_registrations, NULL, NULL, false, 0);
	for (i = 0; i < SPI_processed; i++)
	{
		char		key[REGISTRY_KEY_LEN];
		char	   *kind = SPIGetText(i, 2);
		RegistryEntry *entry;
		bool		isnull;

		make_key(key, strcmp(kind, "workflow") == 0 ? 'w' : 'x',
				 SPIGetText(i, 1), SPIGetText(i, 3), SPIGetText(i, 4));
		entry = hash_search(registry_cache, key, HASH_ENTER, NULL);
		entry->reg.function = DatumGetObjectId(SPIGetDatum(i, 5, &isnull));
		entry->reg.run_as = DatumGetObjectId(SPIGetDatum(i, 6, &isnull));
	}
	SPI_freetuptable(SPI_tuptable);
}

/*
 * Read the whole table into a fresh cache (SPI connected).  The cache is
 * marked valid before the read, so that an invalidation that arrives during
 * it is not lost; a read that fails (a lock timeout, a cancel) leaves it
 * invalid, or every later lookup of this backend would find nothing and
 * send registered types to external pollers.
 */
static void
load_registry(void)
{
	HASHCTL		ctl;

	if (!callback_registered)
	{
		DurableRegisterRelcacheCallback(registrations_invalidated, (Datum) 0);
		callback_registered = true;
	}
	if (registry_cache != NULL)
		hash_destroy(registry_cache);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = REGISTRY_KEY_LEN;
	ctl.entrysize = sizeof(RegistryEntry);
	ctl.hcxt = CacheMemoryContext;
	registry_cache = hash_create("durable registrations", 16, &ctl,
								 HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	registry_valid = true;
	PG_TRY();
	{
		fill_registry();
	}
	PG_CATCH();
	{
		registry_valid = false;
		PG_RE_THROW();
	}
	PG_END_TRY();
}

/*
 * The function bound to a workflow type (kind 'w') or activity type (kind
 * 'x') on a task queue; false when the type is not registered.  Called with
 * SPI connected.
 */
bool
LookupRegistration(char kind, const char *namespace, const char *type_name,
				   const char *task_queue, Registration *out)
{
	char		key[REGISTRY_KEY_LEN];
	RegistryEntry *entry;

	if (!registry_valid || registry_cache == NULL)
		load_registry();
	if (hash_get_num_entries(registry_cache) == 0)
		return false;
	make_key(key, kind, namespace, type_name, task_queue);
	entry = hash_search(registry_cache, key, HASH_FIND, NULL);
	if (entry == NULL)
		return false;
	*out = entry->reg;
	return true;
}

static int
compare_registered(const ListCell *a, const ListCell *b)
{
	RegisteredWorkflow *x = lfirst(a);
	RegisteredWorkflow *y = lfirst(b);
	int			c = strcmp(x->namespace, y->namespace);

	if (c == 0)
		c = strcmp(x->type_name, y->type_name);
	if (c == 0)
		c = strcmp(x->task_queue, y->task_queue);
	return c;
}

/*
 * The registrations of workflow types to a function (RegisteredWorkflow),
 * sorted by namespace, type and queue; NIL when it runs none.  A walk of the
 * cached table, which is read first if need be (SPI connected).
 */
List *
WorkflowRegistrationsOf(Oid function)
{
	HASH_SEQ_STATUS status;
	RegistryEntry *entry;
	List	   *result = NIL;

	if (!registry_valid || registry_cache == NULL)
		load_registry();
	if (hash_get_num_entries(registry_cache) == 0)
		return NIL;
	hash_seq_init(&status, registry_cache);
	while ((entry = hash_seq_search(&status)) != NULL)
	{
		RegisteredWorkflow *r;
		char	   *parts;
		char	   *sep;

		if (entry->key[0] != 'w' || entry->reg.function != function)
			continue;
		r = palloc(sizeof(RegisteredWorkflow));
		parts = pstrdup(entry->key + 1);
		r->namespace = parts;
		sep = strchr(parts, '\x1f');
		*sep = '\0';
		r->type_name = sep + 1;
		sep = strchr(r->type_name, '\x1f');
		*sep = '\0';
		r->task_queue = sep + 1;
		r->run_as = entry->reg.run_as;
		result = lappend(result, r);
	}
	list_sort(result, compare_registered);
	return result;
}

/* The owner of durable.registrations, who writes it for every caller. */
static Oid
registrations_owner(void)
{
	Oid			relid = registrations_table();
	HeapTuple	tup;
	Oid			owner;

	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "durable.registrations does not exist");
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

/*
 * Whether a function could be a workflow or activity function: f(jsonb)
 * RETURNS jsonb, an ordinary function that returns no set.  False for one
 * that does not exist.
 */
bool
IsWorkflowSignature(Oid function)
{
	HeapTuple	tup;
	Form_pg_proc proc;
	bool		ok;

	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(function));
	if (!HeapTupleIsValid(tup))
		return false;
	proc = (Form_pg_proc) GETSTRUCT(tup);
	ok = proc->prokind == PROKIND_FUNCTION && !proc->proretset &&
		proc->pronargs == 1 && proc->proargtypes.values[0] == JSONBOID &&
		proc->prorettype == JSONBOID;
	ReleaseSysCache(tup);
	return ok;
}

/* 22023 unless the function is f(jsonb) RETURNS jsonb. */
void
CheckFunctionSignature(Oid function)
{
	if (!SearchSysCacheExists1(PROCOID, ObjectIdGetDatum(function)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("function %u does not exist", function)));
	if (!IsWorkflowSignature(function))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("function %s must take one jsonb argument and return jsonb",
						format_procedure(function)),
				 errhint("Declare it as FUNCTION name(input jsonb) RETURNS jsonb.")));
}

/*
 * The role a registration runs as: run_as, or the caller.  Never a superuser
 * unless asked for by name, and only a role whose privileges the caller has
 * and which may execute the function.
 */
static Oid
check_run_as(FunctionCallInfo fcinfo, int argno, Oid function, Oid caller)
{
	Oid			run_as;

	if (PG_ARGISNULL(argno))
	{
		run_as = caller;
		if (superuser_arg(run_as))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("durable functions must not run as a superuser"),
					 errdetail("The function would run as the caller, \"%s\", which is a superuser.",
							   GetUserNameFromId(caller, false)),
					 errhint("Register from an ordinary role, or pass run_as to name the role explicitly.")));
	}
	else
	{
		run_as = PG_GETARG_OID(argno);
		if (!has_privs_of_role(caller, run_as))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied to register a function to run as role \"%s\"",
							GetUserNameFromId(run_as, false)),
					 errdetail("run_as must be a role whose privileges the caller has.")));
	}
	if (pg_proc_aclcheck(function, run_as, ACL_EXECUTE) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("role \"%s\" may not execute function %s",
						GetUserNameFromId(run_as, false),
						format_procedure(function)),
				 errhint("GRANT EXECUTE ON FUNCTION to that role first.")));
	return run_as;
}

/*
 * 42501 unless the caller may replace or drop the binding whose key values[0..3]
 * hold (SPI connected, as the table's owner): a binding belongs to the role
 * that made it (registered_by), and only that role, its members and
 * durable_admin may change it.  Otherwise a member of durable_worker could
 * bind another team's workflow type to its own code, which would then run
 * for that team's workflows.  Returns whether the binding exists, and sets
 * *function (unless NULL) to its function.
 */
static bool
check_binding_owner(Oid caller, Datum *values, bool workflow,
					const char *namespace, const char *type_name,
					const char *task_queue, Oid *function)
{
	Oid			owner;
	Oid			admin;
	bool		isnull;
	char	   *owner_name;

	RunPlan(&lock_registrations, NULL, NULL, false, 0);
	/* Not read-only: a fresh snapshot, taken after the lock */
	if (RunPlan(&registration_owner, values, NULL, false, 1) == 0)
		return false;
	owner = DatumGetObjectId(SPIGetDatum(0, 1, &isnull));
	if (function != NULL)
		*function = DatumGetObjectId(SPIGetDatum(0, 2, &isnull));
	SPI_freetuptable(SPI_tuptable);
	if (has_privs_of_role(caller, owner))
		return true;
	admin = get_role_oid("durable_admin", true);
	if (OidIsValid(admin) && has_privs_of_role(caller, admin))
		return true;
	owner_name = GetUserNameFromId(owner, true);
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied to change the binding of %s type \"%s\" on task queue \"%s\" in namespace \"%s\"",
					workflow ? "workflow" : "activity", type_name, task_queue,
					namespace),
			 errdetail("The binding belongs to role \"%s\", which made it.",
					   owner_name ? owner_name : "?"),
			 errhint("Only that role, its members and durable_admin may replace or unregister it.")));
	return true;					/* not reached */
}

/* Move queued tasks of a type between external pollers and executors. */
static void
move_tasks(bool workflow, const char *namespace, const char *type_name,
		   const char *task_queue, char from, char to)
{
	Datum		values[5];
	uint64		moved;

	values[0] = CStringGetTextDatum(namespace);
	values[1] = CStringGetTextDatum(task_queue);
	values[2] = CStringGetTextDatum(type_name);
	values[3] = CharGetDatum(to);
	values[4] = CharGetDatum(from);
	/* Tasks move to another queue under their old ids: claim_mark.c */
	ClaimMarkLower(0);
	moved = RunPlan(workflow ? &move_decision_tasks : &move_activity_tasks,
					values, NULL, false, 0);
	if (moved > 0)
		WakeQueueAtCommit(namespace, task_queue, to, moved);
	/*
	 * And the tasks of paused runs, held under the upper-case kinds
	 * (engine/pause.c), which wait for their resume: nobody to wake.
	 */
	values[3] = CharGetDatum(pg_ascii_toupper((unsigned char) to));
	values[4] = CharGetDatum(pg_ascii_toupper((unsigned char) from));
	(void) RunPlan(workflow ? &move_decision_tasks : &move_activity_tasks,
				   values, NULL, false, 0);
}

/*
 * register_workflow(..., running => 'keep'): the running workflows that
 * follow the binding (of old_function) keep it (SPI connected, as the
 * table's owner).
 */
static void
keep_running(const char *namespace, const char *type_name,
			 const char *task_queue, Oid old_function, Oid run_as)
{
	Datum		values[4];

	if (!DurableColumnExists("runs", "pinned_function"))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("durable must be updated to keep running workflows on their function"),
				 errhint("Run ALTER EXTENSION durable UPDATE.")));
	if (!SearchSysCacheExists1(PROCOID, ObjectIdGetDatum(old_function)))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot keep the running workflows of type \"%s\" on function %u: it does not exist",
						type_name, old_function),
				 errhint("Register with running => 'move'.")));
	/* The registration's role runs the function they keep. */
	if (pg_proc_aclcheck(old_function, run_as, ACL_EXECUTE) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("role \"%s\" may not execute function %s, which running workflows of type \"%s\" would keep",
						GetUserNameFromId(run_as, false),
						format_procedure(old_function), type_name),
				 errhint("GRANT EXECUTE ON FUNCTION to that role first, or register with running => 'move'.")));
	values[0] = CStringGetTextDatum(namespace);
	values[1] = CStringGetTextDatum(type_name);
	values[2] = CStringGetTextDatum(task_queue);
	values[3] = ObjectIdGetDatum(old_function);
	RunPlan(&pin_runs, values, NULL, false, 0);
}

/* register_workflow's running: true for 'keep', false for 'move'. */
static bool
check_running(FunctionCallInfo fcinfo, int argno)
{
	char	   *running;

	if (PG_NARGS() <= argno)
		return false;			/* the function of an older schema */
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("running must not be null")));
	running = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	if (strcmp(running, "keep") == 0)
		return true;
	if (strcmp(running, "move") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("running must be \"keep\" or \"move\""),
				 errdetail("It is \"%s\".", running)));
	return false;
}

/* register_workflow and register_activity */
static Datum
register_type(FunctionCallInfo fcinfo, bool workflow)
{
	const char *argname = workflow ? "workflow_type" : "activity_type";
	char	   *type_name = CheckName(PG_ARGISNULL(0) ? NULL : PG_GETARG_TEXT_PP(0),
									  argname);
	char	   *task_queue = CheckName(PG_ARGISNULL(2) ? NULL : PG_GETARG_TEXT_PP(2),
									   "task_queue");
	char	   *namespace = CheckName(PG_ARGISNULL(3) ? NULL : PG_GETARG_TEXT_PP(3),
									  "namespace");
	Oid			caller = DurableCaller();
	Oid			function;
	Oid			old_function = InvalidOid;
	Oid			run_as;
	bool		keep = workflow && check_running(fcinfo, 5);
	Oid			save_userid;
	int			save_sec_context;
	Datum		values[7];

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("function must not be null")));
	function = PG_GETARG_OID(1);
	CheckFunctionSignature(function);
	run_as = check_run_as(fcinfo, 4, function, caller);
	if (!OidIsValid(registrations_table()))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("durable must be updated to register functions"),
				 errhint("Run ALTER EXTENSION durable UPDATE.")));

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(registrations_owner(),
						   save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
	DurableSPIConnect();
	CheckNamespacePrivilegeOf(caller, namespace, NSPRIV_WORKER);
	values[0] = CStringGetTextDatum(namespace);
	values[1] = CStringGetTextDatum(workflow ? "workflow" : "activity");
	values[2] = CStringGetTextDatum(type_name);
	values[3] = CStringGetTextDatum(task_queue);
	values[4] = ObjectIdGetDatum(function);
	values[5] = ObjectIdGetDatum(run_as);
	values[6] = ObjectIdGetDatum(caller);
	if (check_binding_owner(caller, values, workflow, namespace, type_name,
							task_queue, &old_function) &&
		keep && old_function != function)
		keep_running(namespace, type_name, task_queue, old_function, run_as);
	RunPlan(&upsert_registration, values, NULL, false, 0);
	move_tasks(workflow, namespace, type_name, task_queue,
			   workflow ? 'd' : 'a', workflow ? 'w' : 'x');
	DurableSPIFinish();
	SetUserIdAndSecContext(save_userid, save_sec_context);
	PG_RETURN_VOID();
}

/* unregister_workflow and unregister_activity */
static Datum
unregister_type(FunctionCallInfo fcinfo, bool workflow)
{
	const char *argname = workflow ? "workflow_type" : "activity_type";
	char	   *type_name = CheckName(PG_ARGISNULL(0) ? NULL : PG_GETARG_TEXT_PP(0),
									  argname);
	char	   *task_queue = CheckName(PG_ARGISNULL(1) ? NULL : PG_GETARG_TEXT_PP(1),
									   "task_queue");
	char	   *namespace = CheckName(PG_ARGISNULL(2) ? NULL : PG_GETARG_TEXT_PP(2),
									  "namespace");
	Oid			caller = DurableCaller();
	Oid			save_userid;
	int			save_sec_context;
	Datum		values[4];
	bool		found;

	if (!OidIsValid(registrations_table()))
		PG_RETURN_BOOL(false);
	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(registrations_owner(),
						   save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
	DurableSPIConnect();
	if (NamespaceExists(namespace))
		CheckNamespacePrivilegeOf(caller, namespace, NSPRIV_WORKER);
	values[0] = CStringGetTextDatum(namespace);
	values[1] = CStringGetTextDatum(workflow ? "workflow" : "activity");
	values[2] = CStringGetTextDatum(type_name);
	values[3] = CStringGetTextDatum(task_queue);
	if (!check_binding_owner(caller, values, workflow, namespace,
							 type_name, task_queue, NULL))
	{
		DurableSPIFinish();
		SetUserIdAndSecContext(save_userid, save_sec_context);
		PG_RETURN_BOOL(false);
	}
	found = RunPlan(&delete_registration, values, NULL, false, 0) > 0;
	if (found)
		move_tasks(workflow, namespace, type_name, task_queue,
				   workflow ? 'w' : 'x', workflow ? 'd' : 'a');
	DurableSPIFinish();
	SetUserIdAndSecContext(save_userid, save_sec_context);
	PG_RETURN_BOOL(found);
}

PG_FUNCTION_INFO_V1(durable_register_workflow);
/*
 * durable.register_workflow(workflow_type, function, task_queue, namespace,
 * run_as, running)
 */
Datum
durable_register_workflow(PG_FUNCTION_ARGS)
{
	RequireWritableTransaction("durable.register_workflow()");
	return register_type(fcinfo, true);
}

PG_FUNCTION_INFO_V1(durable_register_activity);
/* durable.register_activity(activity_type, function, task_queue, namespace, run_as) */
Datum
durable_register_activity(PG_FUNCTION_ARGS)
{
	RequireWritableTransaction("durable.register_activity()");
	return register_type(fcinfo, false);
}

PG_FUNCTION_INFO_V1(durable_unregister_workflow);
/* durable.unregister_workflow(workflow_type, task_queue, namespace) */
Datum
durable_unregister_workflow(PG_FUNCTION_ARGS)
{
	RequireWritableTransaction("durable.unregister_workflow()");
	return unregister_type(fcinfo, true);
}

PG_FUNCTION_INFO_V1(durable_unregister_activity);
/* durable.unregister_activity(activity_type, task_queue, namespace) */
Datum
durable_unregister_activity(PG_FUNCTION_ARGS)
{
	RequireWritableTransaction("durable.unregister_activity()");
	return unregister_type(fcinfo, false);
}

PG_FUNCTION_INFO_V1(durable_move_runs);
/*
 * durable.move_runs(workflow_type, from_function, workflow_id, namespace):
 * running workflows of the type kept on a function by register_workflow(...,
 * running => 'keep') (those kept on from_function, or the workflow's, or all)
 * go on with their registration's function; how many.
 */
Datum
durable_move_runs(PG_FUNCTION_ARGS)
{
	char	   *type_name = CheckName(PG_ARGISNULL(0) ? NULL : PG_GETARG_TEXT_PP(0),
									  "workflow_type");
	char	   *workflow_id = CheckOptionalName(PG_ARGISNULL(2) ? NULL :
												PG_GETARG_TEXT_PP(2),
												"workflow_id");
	char	   *namespace = CheckName(PG_ARGISNULL(3) ? NULL : PG_GETARG_TEXT_PP(3),
									  "namespace");
	Datum		values[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};
	int64		moved;

	RequireWritableTransaction("durable.move_runs()");
	DurableSPIConnect();
	CheckNamespacePrivilege(namespace, NSPRIV_CLIENT);
	values[0] = CStringGetTextDatum(namespace);
	values[1] = CStringGetTextDatum(type_name);
	values[2] = PG_ARGISNULL(1) ? (Datum) 0 : PG_GETARG_DATUM(1);
	nulls[2] = PG_ARGISNULL(1) ? 'n' : ' ';
	values[3] = workflow_id ? CStringGetTextDatum(workflow_id) : (Datum) 0;
	nulls[3] = workflow_id ? ' ' : 'n';
	moved = RunPlan(&unpin_runs, values, nulls, false, 0);
	DurableSPIFinish();
	PG_RETURN_INT64(moved);
}

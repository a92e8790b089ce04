/*-------------------------------------------------------------------------
 *
 * usercode.c
 *	  Running user code (a workflow function, a SQL activity) as its role,
 *	  and logging its failures.
 *
 * PostgreSQL runs an index expression or a maintenance command for a
 * table's owner in a security-restricted operation; CallAsRole runs a
 * registered function the same way, as the role it was registered to run
 * as, with that role's own search_path (as a login of the role would get
 * it, pg_temp last), under a time limit, and with every setting it changes
 * rolled back after the call.  So nothing the code does changes what the
 * engine's statements, which run as the engine's owner, mean afterwards.
 * Both the replayer (sqlwf/replay.c) and the executor (sqlwf/executor.c)
 * call user code through here.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_db_role_setting.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timeout.h"
#include "utils/varlena.h"

#include "base/caller.h"
#include "base/util.h"
#include "store/worker_slots.h"
#include "engine/runs.h"
#include "sqlwf/usercode.h"

/*
 * The lock_timeout of the executor's session, which user code runs with;
 * the engine's statements of an executor run with EXECUTOR_LOCK_TIMEOUT
 * (sqlwf/executor.c).  NULL outside an executor.
 */
static char *user_lock_timeout = NULL;

/* Set the lock_timeout user code runs with (NULL: the session's own). */
void
SetUserCodeLockTimeout(const char *value)
{
	if (user_lock_timeout != NULL &&
		(value == NULL || strcmp(user_lock_timeout, value) != 0))
	{
		pfree(user_lock_timeout);
		user_lock_timeout = NULL;
	}
	if (value != NULL && user_lock_timeout == NULL)
		user_lock_timeout = MemoryContextStrdup(TopMemoryContext, value);
}

/* The search_path of a setconfig array of pg_db_role_setting, or NULL. */
static char *
setting_search_path(Datum setconfig)
{
	ArrayType  *array = DatumGetArrayTypeP(setconfig);
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	char	   *found = NULL;

	deconstruct_array(array, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls,
					  &n);
	for (int i = 0; i < n && found == NULL; i++)
	{
		char	   *item;

		if (nulls[i])
			continue;
		item = TextDatumGetCString(elems[i]);
		if (pg_strncasecmp(item, "search_path=", 12) == 0)
			found = pstrdup(item + 12);
		pfree(item);
	}
	return found;
}

/*
 * The search_path the server gives a session before any per-database or
 * per-role setting: postgresql.conf's or the command line's, else the
 * built-in default.
 */
static const char *
server_search_path(void)
{
	static struct config_string *record = NULL;

	if (record == NULL)
	{
		struct config_generic **vars = get_guc_variables();
		int			n = GetNumConfigOptions();

		for (int i = 0; i < n; i++)
			if (strcmp(vars[i]->name, "search_path") == 0)
				record = (struct config_string *) vars[i];
		if (record == NULL)
			elog(ERROR, "search_path is not a setting");
	}
	if (record->gen.reset_source <= PGC_S_ARGV && record->reset_val != NULL)
		return record->reset_val;
	return record->boot_val;
}

/*
 * The search_path a login of role to this database would get: from
 * ALTER ROLE role IN DATABASE, ALTER ROLE role, ALTER DATABASE, ALTER ROLE
 * ALL (in PostgreSQL's order of precedence), else the server's.  pg_temp
 * goes last unless the setting places it, as in a SECURITY DEFINER
 * function: a temporary table of the session (durable.run_tasks()) does
 * not capture the code's unqualified names.  Read once per transaction
 * for each role in turn (the catalog has no cache to invalidate).
 */
static const char *
role_search_path(Oid role)
{
	static Oid	cached_role = InvalidOid;
	static LocalTransactionId cached_lxid = InvalidLocalTransactionId;
	static char *cached = NULL;
	Relation	rel;
	SysScanDesc scan;
	HeapTuple	tup;
	int			best = 4;
	char	   *path = NULL;
	char	   *copy;
	List	   *names;
	bool		has_temp = false;
	ListCell   *lc;

	if (cached != NULL && cached_role == role && cached_lxid == MyProc->lxid)
		return cached;

	rel = table_open(DbRoleSettingRelationId, AccessShareLock);
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	while ((tup = systable_getnext(scan)) != NULL)
	{
		Form_pg_db_role_setting setting = (Form_pg_db_role_setting) GETSTRUCT(tup);
		int			rank;
		bool		isnull;
		Datum		config;
		char	   *value;

		if ((setting->setdatabase != MyDatabaseId &&
			 OidIsValid(setting->setdatabase)) ||
			(setting->setrole != role && OidIsValid(setting->setrole)))
			continue;
		/* 0: role in database, 1: role, 2: database, 3: every role */
		rank = (OidIsValid(setting->setrole) ? 0 : 2) +
			(OidIsValid(setting->setdatabase) ? 0 : 1);
		if (rank >= best)
			continue;
		config = heap_getattr(tup, Anum_pg_db_role_setting_setconfig,
							  RelationGetDescr(rel), &isnull);
		if (isnull || (value = setting_search_path(config)) == NULL)
			continue;
		best = rank;
		path = value;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	if (path == NULL)
		path = pstrdup(server_search_path());

	copy = pstrdup(path);
	if (SplitIdentifierString(copy, ',', &names))
	{
		foreach(lc, names)
			if (strncmp((char *) lfirst(lc), "pg_temp", 7) == 0)
				has_temp = true;
		if (names == NIL)
			path = "pg_temp";
		else if (!has_temp)
			path = psprintf("%s, pg_temp", path);
	}

	if (cached != NULL)
		pfree(cached);
	cached = MemoryContextStrdup(TopMemoryContext, path);
	cached_role = role;
	cached_lxid = MyProc->lxid;
	return cached;
}

/*
 * Call a function f(jsonb) RETURNS jsonb as role, in a subtransaction, as
 * PostgreSQL runs an index expression for a table's owner: a security-
 * restricted operation, with role's own search_path (role_search_path) and
 * a statement timeout (0: none); every setting the function changes, with
 * SET or set_config(), is rolled back when it returns or fails.  Without
 * keep, or when keep(keep_arg) returns false after the call, the function's
 * writes are rolled back.  Its result or error (copied out) comes back in
 * *result or *error; *timed_out when the timeout cut it.
 *
 * The caller's own statement timeout (durable.run_tasks() in a session) still
 * applies when it comes first: its cancel comes back as an error that is not
 * *timed_out, for the caller to rethrow.  Whatever the outcome, the caller's
 * user, security context, settings, memory context and resource owner are
 * restored (the subtransaction's abort restores the first three).
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
	Oid			save_user_code_role;
	volatile int timeout_ms = 0;
	volatile TimestampTz outer_timeout = 0;
	volatile bool own_timeout = false;
	TimestampTz started = GetCurrentTimestamp();

	*result = NULL;
	*error = NULL;
	*timed_out = false;
	if (timeout_seconds > 0)
		timeout_ms = (int) Min(Max(timeout_seconds * 1000.0, 1.0), (double) INT_MAX);
	if (timeout_ms > 0 && get_timeout_active(STATEMENT_TIMEOUT))
		outer_timeout = get_timeout_finish_time(STATEMENT_TIMEOUT);
	own_timeout = timeout_ms > 0 &&
		(outer_timeout == 0 ||
		 TimestampTzPlusMilliseconds(started, timeout_ms) < outer_timeout);

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	save_user_code_role = durable_user_code_role;
	durable_user_code_role = role;
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcxt);
	PG_TRY();
	{
		LOCAL_FCINFO(fcinfo, 1);
		Datum		value = (Datum) 0;
		int			nestlevel;
		bool		keep_it;

		nestlevel = NewGUCNestLevel();
		(void) set_config_option("search_path", role_search_path(role),
								 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
								 true, 0, false);
		/* Its lock waits are bounded by its time limit, not the engine's */
		if (user_lock_timeout != NULL)
			(void) set_config_option("lock_timeout", user_lock_timeout,
									 PGC_USERSET, PGC_S_SESSION,
									 GUC_ACTION_SAVE, true, 0, false);
		SetUserIdAndSecContext(role, save_sec_context |
							   SECURITY_LOCAL_USERID_CHANGE |
							   SECURITY_RESTRICTED_OPERATION);
		if (own_timeout)
		{
			enable_timeout_after(STATEMENT_TIMEOUT, timeout_ms);
			/* The watchdog enforces it whatever the code does */
			ExecutorTaskSetDeadline(timeout_ms / 1000.0,
									TimestampTzPlusMilliseconds(started,
																timeout_ms));
		}

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
		ExecutorTaskSetDeadline(0, 0);
		SetUserIdAndSecContext(save_userid, save_sec_context);
		durable_user_code_role = save_user_code_role;
		/* What the function set (SET, set_config) ends with it. */
		AtEOXact_GUC(false, nestlevel);
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
		ExecutorTaskSetDeadline(0, 0);
		MemoryContextSwitchTo(oldcxt);
		*error = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
		SetUserIdAndSecContext(save_userid, save_sec_context);
		durable_user_code_role = save_user_code_role;
		*timed_out = own_timeout && ErrorIsCancel(*error) &&
			TimestampDifferenceExceeds(started, GetCurrentTimestamp(),
									   timeout_ms - 1);
	}
	PG_END_TRY();

	/*
	 * The caller's timeout again, unless it is what cut the function (or a
	 * cancel request did): that cancel ends the caller's statement already.
	 */
	if (outer_timeout != 0 &&
		!(*error != NULL && ErrorIsCancel(*error) && !*timed_out))
		enable_timeout_at(STATEMENT_TIMEOUT, outer_timeout);
}

/* The name of role for a message, or its oid if it was dropped. */
static char *
role_name_for_log(Oid role)
{
	char	   *name = GetUserNameFromId(role, true);

	return name ? name : psprintf("%u", role);
}

/*
 * Log the failure of user code (or the reason it could not run), of what
 * ("workflow" or "activity") type_name in where: one LOG
 * line and its DETAIL, as pg_cron logs a failed job; the server log is where
 * an operator looks, the history only says it to whoever asks.  LOG is not
 * sent to the client of durable.run_tasks().
 */
void
LogUserCodeFailure(const char *what, const char *type_name, RunState *rs,
				   const char *where, Oid run_as, const char *reason,
				   const char *message, const char *detail)
{
	ereport(LOG,
			(errmsg("durable %s \"%s\" of workflow \"%s\" failed: %s",
					what, type_name, rs->workflow_id,
					message ? message : "(no message)"),
			 errdetail("Reason %s; %s of run %s, namespace \"%s\", task queue \"%s\", run as role \"%s\".%s%s",
					   reason, where, UuidToCString(&rs->run_id),
					   rs->namespace, rs->task_queue,
					   role_name_for_log(run_as), detail ? " " : "",
					   detail ? detail : "")));
}

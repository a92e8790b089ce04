/*-------------------------------------------------------------------------
 *
 * replace_guard.c
 *	  CREATE OR REPLACE FUNCTION and DROP FUNCTION of a function that running
 *	  SQL workflows use (docs/sql-workflows.md "The check of CREATE OR
 *	  REPLACE"), as durable.replay_check_on_replace says: the new code is
 *	  replayed against the latest of their histories, and a divergence, or a
 *	  drop, is a WARNING ('warning', the default) or an ERROR ('error') that
 *	  undoes the statement.
 *
 * bgw/launcher.c's ProcessUtility hook calls ReplaceGuardAfterCreate once
 * the function is replaced, in the same transaction, and
 * ReplaceGuardBeforeDrop/AfterDrop around a DROP FUNCTION.  The running
 * workflows that use a function are those of the registrations of the
 * function that follow them (runs.pinned_function NULL), and those kept on it
 * by a registration of another function with running => 'keep'
 * (pinned_function).  A statement about any other function costs a look at
 * its parse tree (one jsonb argument) and, for a function f(jsonb), a
 * syscache lookup, a walk of the backend's cached registrations and a probe
 * of the partial index runs_pinned_function.  Skipped: in the extension's own
 * scripts (creating_extension), in code that the engine runs (a workflow
 * function's replay, an activity), in a database without durable or with
 * durable older than 0.7.0.
 *
 * The runs are replayed as replay_check() replays them (replay_check.c):
 * each in a subtransaction rolled back, the code run as the registration's
 * run_as role, security-restricted, under the run's decision timeout.  So
 * that no code runs with more rights than the replacing role has, and no
 * role learns of runs of a namespace it may not read, the runs of a
 * registration are replayed only if the replacing role may call
 * replay_check() for them: a member of durable_client (or durable_admin)
 * with the client privilege on the namespace and the privileges of the
 * run_as role (of the registration of the run's type and queue, which runs
 * a kept function too).  Otherwise a WARNING says they were not checked.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "parser/parse_func.h"
#include "parser/parse_type.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "durable.h"
#include "base/caller.h"
#include "base/clock.h"
#include "base/util.h"
#include "store/namespaces.h"
#include "store/registry.h"
#include "store/spi.h"
#include "sqlwf/replay.h"
#include "sqlwf/replay_check.h"
#include "sqlwf/replace_guard.h"

/* durable.replay_check_on_replace */
int			durable_replay_check_on_replace = REPLACE_CHECK_WARNING;

/* The latest running workflows of a registration replayed */
#define REPLACE_CHECK_SAMPLE	20

/* The first version whose databases are checked */
#define REPLACE_CHECK_SINCE		700

/* The latest running workflows that follow a registration */
static KeptPlan sample_runs = {
	NULL, "SELECT run_id, workflow_id FROM durable.runs"
	" WHERE namespace = $1 AND status = 'running'"
	" AND workflow_type = $2 AND task_queue = $3 AND pinned_function IS NULL"
	" ORDER BY start_time DESC, run_id DESC LIMIT $4",
	4, {TEXTOID, TEXTOID, TEXTOID, INT4OID}
};

/* How many there are */
static KeptPlan count_runs = {
	NULL, "SELECT count(*) FROM durable.runs"
	" WHERE namespace = $1 AND status = 'running'"
	" AND workflow_type = $2 AND task_queue = $3 AND pinned_function IS NULL",
	3, {TEXTOID, TEXTOID, TEXTOID}
};

/* The types and queues of the running workflows kept on a function */
static KeptPlan kept_groups = {
	NULL, "SELECT namespace, workflow_type, task_queue, count(*)"
	" FROM durable.runs WHERE pinned_function = $1 AND status = 'running'"
	" GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
	1, {REGPROCEDUREOID}
};

/* The latest of them on a type and queue */
static KeptPlan sample_kept = {
	NULL, "SELECT run_id, workflow_id FROM durable.runs"
	" WHERE namespace = $1 AND status = 'running'"
	" AND workflow_type = $2 AND task_queue = $3 AND pinned_function = $5"
	" ORDER BY start_time DESC, run_id DESC LIMIT $4",
	5, {TEXTOID, TEXTOID, TEXTOID, INT4OID, REGPROCEDUREOID}
};

/*
 * Running workflows of a type on a queue that use the function: those that
 * follow its registration there (kept false), or those kept on it.
 */
typedef struct RunGroup
{
	RegisteredWorkflow reg;		/* run_as: the registration's there */
	bool		kept;
	int64		runs;			/* how many (kept) */
} RunGroup;

/* What the check found for a group, reported once SPI is done */
typedef struct Finding
{
	RunGroup		group;
	bool		checked;		/* else the role may not check it: why */
	char	   *why;
	char	   *workflow_id;	/* the run that parts from its history */
	char	   *run_id;
	int64		event_id;
	char	   *message;
	int64		runs;			/* running workflows (a drop) */
	char	   *function;		/* the function dropped, and its oid */
	Oid			function_oid;
} Finding;

/* Whether the guard looks at statements here and now. */
static bool
guard_active(void)
{
	return durable_replay_check_on_replace != REPLACE_CHECK_OFF &&
		!creating_extension && !ReplayActive() &&
		!OidIsValid(durable_user_code_role) && IsTransactionState();
}

/*
 * Whether the database's durable is one the guard checks for, and its
 * owner: 0.7.0 or later (with runs.pinned_function).
 */
static bool
guarded_database(Oid *owner)
{
	return DurableExtensionVersion(owner) >= REPLACE_CHECK_SINCE &&
		DurableColumnExists("runs", "pinned_function");
}

/*
 * The function that CREATE OR REPLACE FUNCTION replaced, when it may be a
 * workflow function (one jsonb argument, returning jsonb): InvalidOid
 * otherwise.  Called after the statement, which found the schema and the
 * types.
 */
static Oid
replaced_function(CreateFunctionStmt *stmt)
{
	ListCell   *lc;
	int			ninputs = 0;
	Oid			argtype = InvalidOid;
	char	   *name;
	Oid			nsp;
	Oid			function;

	if (!stmt->replace || stmt->is_procedure)
		return InvalidOid;
	foreach(lc, stmt->parameters)
	{
		FunctionParameter *fp = lfirst_node(FunctionParameter, lc);

		if (fp->mode == FUNC_PARAM_OUT || fp->mode == FUNC_PARAM_TABLE)
			continue;
		if (++ninputs > 1 || fp->mode == FUNC_PARAM_VARIADIC)
			return InvalidOid;
		argtype = LookupTypeNameOid(NULL, fp->argType, true);
	}
	if (ninputs != 1 || argtype != JSONBOID)
		return InvalidOid;
	nsp = QualifiedNameGetCreationNamespace(stmt->funcname, &name);
	function = GetSysCacheOid3(PROCNAMEARGSNSP, Anum_pg_proc_oid,
							   CStringGetDatum(name),
							   PointerGetDatum(buildoidvector(&argtype, 1)),
							   ObjectIdGetDatum(nsp));
	return OidIsValid(function) && IsWorkflowSignature(function) ?
		function : InvalidOid;
}

/* Whether role may call replay_check(): a client or admin member. */
static bool
may_replay_check(Oid role)
{
	Oid			client = get_role_oid("durable_client", true);
	Oid			admin = get_role_oid("durable_admin", true);

	return (OidIsValid(client) && has_privs_of_role(role, client)) ||
		(OidIsValid(admin) && has_privs_of_role(role, admin));
}

/*
 * Why role may not replay the runs of a group, or NULL: as replay_check()
 * requires of its caller.
 */
static char *
why_not_checked(Oid role, RegisteredWorkflow *reg)
{
	char	   *role_name = GetUserNameFromId(role, true);
	char	   *run_as_name = GetUserNameFromId(reg->run_as, true);

	if (!may_replay_check(role))
		return psprintf("Role \"%s\" is not a member of durable_client.",
						role_name ? role_name : "?");
	if (!HasNamespacePrivilege(role, reg->namespace, NSPRIV_CLIENT))
		return psprintf("Role \"%s\" has no client privilege on namespace \"%s\".",
						role_name ? role_name : "?", reg->namespace);
	if (run_as_name == NULL || !has_privs_of_role(role, reg->run_as))
		return psprintf("Role \"%s\" has not the privileges of role \"%s\", which the type runs as.",
						role_name ? role_name : "?",
						run_as_name ? run_as_name : "?");
	return NULL;
}

/* A new finding of a group, in the current context */
static Finding *
new_finding(RunGroup *g)
{
	Finding    *f = palloc0(sizeof(Finding));

	f->group.reg.namespace = pstrdup(g->reg.namespace);
	f->group.reg.type_name = pstrdup(g->reg.type_name);
	f->group.reg.task_queue = pstrdup(g->reg.task_queue);
	f->group.reg.run_as = g->reg.run_as;
	f->group.kept = g->kept;
	f->group.runs = g->runs;
	return f;
}

/*
 * The groups of running workflows that use function (SPI connected, as the
 * extension's owner): those that follow each of its registrations (their
 * number counted if count, else left 0: they are sampled), then those kept
 * on it whose type and queue still have a registration, which runs them.
 */
static List *
groups_of(Oid function, bool count)
{
	List	   *groups = NIL;
	ListCell   *lc;
	Datum		values[3];
	int			n;
	int			i;

	foreach(lc, WorkflowRegistrationsOf(function))
	{
		RegisteredWorkflow *reg = lfirst(lc);
		RunGroup	   *g = palloc0(sizeof(RunGroup));

		g->reg = *reg;
		if (count)
		{
			bool		isnull;

			values[0] = CStringGetTextDatum(reg->namespace);
			values[1] = CStringGetTextDatum(reg->type_name);
			values[2] = CStringGetTextDatum(reg->task_queue);
			RunPlan(&count_runs, values, NULL, true, 0);
			g->runs = DatumGetInt64(SPIGetDatum(0, 1, &isnull));
			SPI_freetuptable(SPI_tuptable);
			if (g->runs == 0)
				continue;
		}
		groups = lappend(groups, g);
	}

	values[0] = ObjectIdGetDatum(function);
	n = RunPlan(&kept_groups, values, NULL, true, 0);
	if (n > 0)
	{
		SPITupleTable *tt = SPI_tuptable;
		List	   *kept = NIL;

		for (i = 0; i < n; i++)
		{
			RunGroup	   *g = palloc0(sizeof(RunGroup));
			bool		isnull;

			g->reg.namespace = SPIGetText(i, 1);
			g->reg.type_name = SPIGetText(i, 2);
			g->reg.task_queue = SPIGetText(i, 3);
			g->runs = DatumGetInt64(SPIGetDatum(i, 4, &isnull));
			g->kept = true;
			kept = lappend(kept, g);
		}
		SPI_freetuptable(tt);
		foreach(lc, kept)
		{
			RunGroup	   *g = lfirst(lc);
			Registration reg;

			/* Nothing of the engine runs them on a queue without one */
			if (!LookupRegistration('w', g->reg.namespace, g->reg.type_name,
									g->reg.task_queue, &reg))
				continue;
			g->reg.run_as = reg.run_as;
			groups = lappend(groups, g);
		}
	}
	return groups;
}

/*
 * Replay the latest running workflows of each group that uses function
 * against it, until one parts from its history; the findings, in outcxt.
 * SPI connected, as the extension's owner.
 */
static List *
check_groups(Oid function, Oid role, MemoryContext outcxt)
{
	List	   *findings = NIL;
	TimestampTz now = DurableNow();
	ListCell   *lc;

	foreach(lc, groups_of(function, false))
	{
		RunGroup	   *g = lfirst(lc);
		MemoryContext spicxt = CurrentMemoryContext;
		Finding    *f = NULL;
		char	   *why;
		Datum		values[5];
		int			n;
		int			i;
		pg_uuid_t  *run_ids;
		char	  **workflow_ids;

		values[0] = CStringGetTextDatum(g->reg.namespace);
		values[1] = CStringGetTextDatum(g->reg.type_name);
		values[2] = CStringGetTextDatum(g->reg.task_queue);
		values[3] = Int32GetDatum(REPLACE_CHECK_SAMPLE);
		values[4] = ObjectIdGetDatum(function);
		n = RunPlan(g->kept ? &sample_kept : &sample_runs, values, NULL, true,
					0);
		if (n == 0)
			continue;
		run_ids = palloc(sizeof(pg_uuid_t) * n);
		workflow_ids = palloc(sizeof(char *) * n);
		for (i = 0; i < n; i++)
		{
			bool		isnull;

			memcpy(&run_ids[i], DatumGetUUIDP(SPIGetDatum(i, 1, &isnull)),
				   sizeof(pg_uuid_t));
			workflow_ids[i] = SPIGetText(i, 2);
		}
		SPI_freetuptable(SPI_tuptable);

		why = why_not_checked(role, &g->reg);
		if (why != NULL)
		{
			MemoryContextSwitchTo(outcxt);
			f = new_finding(g);
			f->why = pstrdup(why);
			findings = lappend(findings, f);
			MemoryContextSwitchTo(spicxt);
			continue;
		}
		for (i = 0; i < n && f == NULL; i++)
		{
			ReplayCheckResult r;
			bool		gone;

			CHECK_FOR_INTERRUPTS();
			if (!ReplayCheckRun(g->reg.namespace, g->reg.type_name,
								workflow_ids[i], &run_ids[i], function, role,
								now, spicxt, &r, &gone) || r.ok)
				continue;
			MemoryContextSwitchTo(outcxt);
			f = new_finding(g);
			f->checked = true;
			f->workflow_id = pstrdup(workflow_ids[i]);
			f->run_id = UuidToCString(&run_ids[i]);
			f->event_id = r.event_id;
			f->message = pstrdup(r.message ? r.message :
								 r.code ? r.code : "it does not replay");
			findings = lappend(findings, f);
			MemoryContextSwitchTo(spicxt);
		}
		/* The first divergence is enough to refuse the change */
		if (f != NULL && f->checked &&
			durable_replay_check_on_replace == REPLACE_CHECK_ERROR)
			break;
	}
	return findings;
}

/* The groups of running workflows that use function, counted, in outcxt. */
static List *
count_groups(Oid function, Oid role, MemoryContext outcxt)
{
	List	   *groups = groups_of(function, true);
	List	   *findings = NIL;
	ListCell   *lc;
	MemoryContext spicxt = MemoryContextSwitchTo(outcxt);

	foreach(lc, groups)
		findings = lappend(findings, new_finding(lfirst(lc)));
	MemoryContextSwitchTo(spicxt);
	return findings;
}

/*
 * Do fn(function, role, outcxt) as the extension's owner, with SPI
 * connected; back as the role with its findings.
 */
static List *
as_owner(List *(*fn) (Oid, Oid, MemoryContext), Oid function, Oid owner)
{
	MemoryContext outcxt = CurrentMemoryContext;
	Oid			save_userid;
	int			save_sec_context;
	List	   *findings;

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(owner,
						   save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
	/* Not DurableSPIConnect: no API call is under way to count writes for. */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	findings = fn(function, save_userid, outcxt);
	if (SPI_finish() != SPI_OK_FINISH)
		elog(ERROR, "SPI_finish failed");
	MemoryContextSwitchTo(outcxt);
	SetUserIdAndSecContext(save_userid, save_sec_context);
	return findings;
}

/* " They are kept on it (...)." for a group kept on the function */
static const char *
kept_note(Finding *f)
{
	return f->group.kept ?
		" They are kept on it by a registration of the type to another function with running => 'keep'." :
		"";
}

/* The WARNING that the runs of a group were not checked */
static void
report_not_checked(Finding *f, const char *function_name)
{
	ereport(WARNING,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("running workflows of type \"%s\" on task queue \"%s\" in namespace \"%s\" were not checked against the new %s",
					f->group.reg.type_name, f->group.reg.task_queue,
					f->group.reg.namespace, function_name),
			 errdetail("%s%s", f->why, kept_note(f)),
			 errhint("Check them with durable.replay_check() as a role that may, before the change commits.")));
}

/*
 * After CREATE OR REPLACE FUNCTION: replay the running workflows that use
 * the function against its new code.
 */
void
ReplaceGuardAfterCreate(CreateFunctionStmt *stmt)
{
	Oid			function;
	Oid			owner;
	List	   *findings;
	ListCell   *lc;
	char	   *name;

	if (!guard_active())
		return;
	function = replaced_function(stmt);
	if (!OidIsValid(function) || !guarded_database(&owner))
		return;
	/* The new code, as the next statement would see it */
	CommandCounterIncrement();
	findings = as_owner(check_groups, function, owner);
	if (findings == NIL)
		return;
	name = format_procedure(function);
	foreach(lc, findings)
	{
		Finding    *f = lfirst(lc);
		bool		refuse = durable_replay_check_on_replace == REPLACE_CHECK_ERROR;

		if (!f->checked)
		{
			report_not_checked(f, name);
			continue;
		}
		ereport(refuse ? ERROR : WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the new %s does not replay workflow \"%s\" of type \"%s\"",
						name, f->workflow_id, f->group.reg.type_name),
				 f->event_id > 0 ?
				 errdetail("Run %s (namespace \"%s\", task queue \"%s\") parts from its history at event %lld: %s.%s",
						   f->run_id, f->group.reg.namespace,
						   f->group.reg.task_queue, (long long) f->event_id,
						   f->message, kept_note(f)) :
				 errdetail("Run %s (namespace \"%s\", task queue \"%s\"): %s.%s",
						   f->run_id, f->group.reg.namespace,
						   f->group.reg.task_queue, f->message, kept_note(f)),
				 errhint("SELECT * FROM durable.replay_check(%s, %s, %s) shows every run; keep the old code for the running workflows with durable.get_version()%s.",
						 quote_literal_cstr(f->group.reg.type_name),
						 quote_literal_cstr(name),
						 quote_literal_cstr(f->group.reg.namespace),
						 refuse ? "" : ", or roll the change back")));
	}
}

/*
 * Before DROP FUNCTION (or DROP ROUTINE): the functions dropped that running
 * workflows use.  Under 'error', an ERROR; else what AfterDrop warns of once
 * the drop is done.
 */
List *
ReplaceGuardBeforeDrop(DropStmt *stmt)
{
	List	   *pending = NIL;
	ListCell   *lc;
	Oid			owner = InvalidOid;
	int			guarded = -1;

	if ((stmt->removeType != OBJECT_FUNCTION &&
		 stmt->removeType != OBJECT_ROUTINE) || !guard_active())
		return NIL;
	foreach(lc, stmt->objects)
	{
		ObjectWithArgs *owa = lfirst_node(ObjectWithArgs, lc);
		Oid			function = LookupFuncWithArgs(stmt->removeType, owa, true);
		List	   *findings;
		ListCell   *fc;
		char	   *name;

		if (!OidIsValid(function) || !IsWorkflowSignature(function))
			continue;
		if (guarded < 0)
			guarded = guarded_database(&owner) ? 1 : 0;
		if (!guarded)
			return NIL;
		findings = as_owner(count_groups, function, owner);
		name = format_procedure(function);
		foreach(fc, findings)
		{
			Finding    *f = lfirst(fc);

			if (durable_replay_check_on_replace != REPLACE_CHECK_ERROR)
			{
				f->function = name;
				f->function_oid = function;
				pending = lappend(pending, f);
			}
			else if (!f->group.kept)
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("cannot drop function %s: running workflows of type \"%s\" use it",
								name, f->group.reg.type_name),
						 errdetail("%lld running workflows of type \"%s\" on task queue \"%s\" in namespace \"%s\" run with it.",
								   (long long) f->group.runs,
								   f->group.reg.type_name,
								   f->group.reg.task_queue,
								   f->group.reg.namespace),
						 errhint("Register the type to another function with durable.register_workflow() first; durable.replay_check_on_replace = 'error' refused the drop.")));
			else
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("cannot drop function %s: running workflows of type \"%s\" use it",
								name, f->group.reg.type_name),
						 errdetail("%lld running workflows of type \"%s\" on task queue \"%s\" in namespace \"%s\" are kept on it by a registration of the type to another function with running => 'keep'.",
								   (long long) f->group.runs,
								   f->group.reg.type_name,
								   f->group.reg.task_queue,
								   f->group.reg.namespace),
						 errhint("Move them to the type's registered function first with SELECT durable.move_runs(%s, %s, namespace => %s), or let them close; durable.replay_check_on_replace = 'error' refused the drop.",
								 quote_literal_cstr(f->group.reg.type_name),
								 quote_literal_cstr(name),
								 quote_literal_cstr(f->group.reg.namespace))));
		}
	}
	return pending;
}

/* After the drop: the WARNINGs of ReplaceGuardBeforeDrop. */
void
ReplaceGuardAfterDrop(List *pending)
{
	ListCell   *lc;

	foreach(lc, pending)
	{
		Finding    *f = lfirst(lc);

		if (!f->group.kept)
			ereport(WARNING,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("dropped function %s, which running workflows of type \"%s\" use",
							f->function, f->group.reg.type_name),
					 errdetail("%lld running workflows of type \"%s\" on task queue \"%s\" in namespace \"%s\" run with it: their decision tasks fail until the type is registered to another function.",
							   (long long) f->group.runs,
							   f->group.reg.type_name,
							   f->group.reg.task_queue,
							   f->group.reg.namespace),
					 errhint("Register the type to another function with durable.register_workflow(), or roll the drop back.")));
		else
			ereport(WARNING,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("dropped function %s, which running workflows of type \"%s\" use",
							f->function, f->group.reg.type_name),
					 errdetail("%lld running workflows of type \"%s\" on task queue \"%s\" in namespace \"%s\" are kept on it by a registration of the type to another function with running => 'keep': their decision tasks fail until they are moved.",
							   (long long) f->group.runs,
							   f->group.reg.type_name,
							   f->group.reg.task_queue,
							   f->group.reg.namespace),
					 errhint("Move them to the type's registered function with SELECT durable.move_runs(%s, '%u', namespace => %s), or roll the drop back.",
							 quote_literal_cstr(f->group.reg.type_name),
							 f->function_oid,
							 quote_literal_cstr(f->group.reg.namespace))));
	}
}

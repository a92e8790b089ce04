/*-------------------------------------------------------------------------
 *
 * caller.c
 *	  Who calls the API: the current user at the call, as PostgreSQL checks
 *	  privileges.
 *
 * The API functions must run as the extension's owner, who owns the tables,
 * and must know who called them, whose namespace privileges they check and
 * whose name they record as identity.  As SECURITY DEFINER functions (up to
 * 0.4.0) they could not: fmgr_security_definer switches to the owner before
 * the function starts and keeps the user it replaced to itself, so the
 * engine took the session's role (GetOuterUserId) instead, and a SECURITY
 * DEFINER function of another role that called the API acted with the
 * rights of whoever called that function.
 *
 * Since 0.5.0 the API functions are SECURITY INVOKER, still with their SET
 * search_path, so that fmgr_security_definer runs them and calls fmgr_hook
 * at their start and end.  This module's hook switches to the function's
 * owner there, as SECURITY DEFINER did (security context
 * SECURITY_LOCAL_USERID_CHANGE), after noting the current user: the caller.
 * Inside a SECURITY DEFINER function of a user that is its owner; inside user
 * code run by the executors (CallAsRole), its run_as role.  A call of the API
 * by the engine itself (get_history calling resolve_run_id, as the owner,
 * with no user code run since) keeps the caller of the outer call.
 *
 * The functions so run are named in engine_functions below, and only in
 * schema durable and not SECURITY DEFINER: in a database still at 0.4.0 they
 * are, and there the caller is the session's role, as before.
 * The SQL and PL/pgSQL ones (get_history, list_workflows, count_workflows,
 * count_workflows_by_status) have durable.engine_support() as their planner
 * support function, so that the planning of a query that calls one loads
 * this library, and its hook, before the call starts, in a session that did
 * not preload it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_proc.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "base/caller.h"

/*
 * The role whose user code the executor runs (CallAsRole, sqlwf/usercode.c),
 * InvalidOid otherwise: the caller of what it calls (DurableCaller).
 */
Oid			durable_user_code_role = InvalidOid;

/* The functions that run as their owner (sorted, for bsearch). */
static const char *const engine_functions[] = {
	"alter_namespace",
	"cancel_batch",
	"cancel_workflow",
	"complete_activity",
	"complete_decision_task",
	"count_workflows",
	"count_workflows_by_status",
	"create_namespace",
	"describe_workflow",
	"drop_namespace",
	"fail_activity",
	"fail_decision_task",
	"get_history",
	"grant_namespace",
	"heartbeat_activity",
	"list_workflows",
	"move_runs",
	"pause_task_queue",
	"pause_workflow",
	"poll_activity_task",
	"poll_activity_tasks",
	"poll_decision_task",
	"preview_batch",
	"purge",
	"receive_external",
	"register_activity",
	"register_workflow",
	"replay_check",
	"replay_histories",
	"report_activity_canceled",
	"reset_workflow",
	"resolve_run_id",
	"restart_workflow",
	"resume_task_queue",
	"resume_workflow",
	"revoke_namespace",
	"run_batches",
	"run_tasks",
	"set_task_key_limits",
	"set_task_queue_limits",
	"signal_with_start",
	"signal_workflow",
	"start_batch",
	"start_workflow",
	"start_workflow_eager",
	"terminate_workflow",
	"tick",
	"unregister_activity",
	"unregister_workflow",
	"wait_workflow",
};

/* A call of one of them under way */
typedef struct EngineFrame
{
	FmgrInfo   *flinfo;			/* fmgr_security_definer's, to pair the events */
	Oid			caller;			/* the current user at the call */
	Oid			owner;			/* the user it runs as */
	Oid			user_code_role; /* durable_user_code_role at the call */
	Oid			save_userid;	/* restored at its end */
	int			save_sec_context;
} EngineFrame;

static EngineFrame *frames = NULL;
static int	nframes = 0;
static int	maxframes = 0;

static fmgr_hook_type prev_fmgr_hook = NULL;
static bool callbacks_registered = false;

static int
compare_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* Whether a function runs as its owner with its caller noted; and who that is. */
static bool
is_engine_function(Oid fn_oid, Oid *owner)
{
	HeapTuple	tup;
	Form_pg_proc proc;
	bool		result = false;
	const char *name;

	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fn_oid));
	if (!HeapTupleIsValid(tup))
		return false;
	proc = (Form_pg_proc) GETSTRUCT(tup);
	name = NameStr(proc->proname);
	if (!proc->prosecdef &&
		bsearch(&name, engine_functions, lengthof(engine_functions),
				sizeof(const char *), compare_names) != NULL &&
		proc->pronamespace == get_namespace_oid("durable", true))
	{
		*owner = proc->proowner;
		result = true;
	}
	ReleaseSysCache(tup);
	return result;
}

/* The start of a call: switch to the owner, noting the caller. */
static void
engine_call_start(FmgrInfo *flinfo)
{
	EngineFrame *frame;
	Oid			owner;
	Oid			userid;
	int			sec_context;

	if (!is_engine_function(flinfo->fn_oid, &owner))
		return;
	if (nframes >= maxframes)
	{
		int			newmax = maxframes == 0 ? 8 : maxframes * 2;

		if (frames == NULL)
			frames = MemoryContextAlloc(TopMemoryContext,
										sizeof(EngineFrame) * newmax);
		else
			frames = repalloc(frames, sizeof(EngineFrame) * newmax);
		maxframes = newmax;
	}
	GetUserIdAndSecContext(&userid, &sec_context);
	frame = &frames[nframes];
	frame->flinfo = flinfo;
	frame->caller = userid;
	/* The engine calling its own API: the outer call's caller. */
	if (nframes > 0 && frames[nframes - 1].owner == userid &&
		frames[nframes - 1].user_code_role == durable_user_code_role)
		frame->caller = frames[nframes - 1].caller;
	frame->owner = owner;
	frame->user_code_role = durable_user_code_role;
	frame->save_userid = userid;
	frame->save_sec_context = sec_context;
	nframes++;
	SetUserIdAndSecContext(owner, sec_context | SECURITY_LOCAL_USERID_CHANGE);
}

/* Its end, or its error: back to the user and context of the call. */
static void
engine_call_end(FmgrInfo *flinfo)
{
	EngineFrame *frame;

	if (nframes == 0 || frames[nframes - 1].flinfo != flinfo)
		return;
	frame = &frames[--nframes];
	SetUserIdAndSecContext(frame->save_userid, frame->save_sec_context);
}

static void
durable_fmgr_hook(FmgrHookEventType event, FmgrInfo *flinfo, Datum *private)
{
	if (prev_fmgr_hook)
		prev_fmgr_hook(event, flinfo, private);
	if (event == FHET_START)
		engine_call_start(flinfo);
	else
		engine_call_end(flinfo);
}

/*
 * Every call ends with an event of the hook (fmgr_security_definer calls it
 * on an error too); a transaction's end forgets any frame left all the same.
 */
static void
caller_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PREPARE)
		nframes = 0;
}

/* _PG_init: install the hook (in every backend that loads the library). */
void
InstallCallerHook(void)
{
	prev_fmgr_hook = fmgr_hook;
	fmgr_hook = durable_fmgr_hook;
	if (!callbacks_registered)
	{
		RegisterXactCallback(caller_xact_callback, NULL);
		callbacks_registered = true;
	}
}

/*
 * The role an API call is checked for and recorded as: the current user at
 * the call of the API function (in a SECURITY DEFINER function, its owner;
 * in user code run by the executors, its run_as role).  Where no call of
 * the hook is under way (a database still at 0.4.0, whose API functions are
 * SECURITY DEFINER, or the engine's own work in a background worker): the
 * role of the user code running, or else the session's role.
 */
Oid
DurableCaller(void)
{
	if (nframes > 0)
	{
		EngineFrame *frame = &frames[nframes - 1];

		/* User code entered since: an API call of it without a frame (0.4.0) */
		if (frame->user_code_role == durable_user_code_role)
			return frame->caller;
	}
	if (OidIsValid(durable_user_code_role))
		return durable_user_code_role;
	return GetOuterUserId();
}

PG_FUNCTION_INFO_V1(durable_engine_support);
/*
 * durable.engine_support(internal): the planner support function of the
 * engine's SQL and PL/pgSQL functions.  It simplifies nothing: that the
 * planner calls it loads the library, and its hook, before the call.
 */
Datum
durable_engine_support(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(NULL);
}

/*
 * The name of the role that called the API, recorded as identity: the
 * current user at the call (DurableCaller), not the extension's
 * owner that the API function runs as.
 */
const char *
CallerIdentity(void)
{
	return GetUserNameFromId(DurableCaller(), true);
}

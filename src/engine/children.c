/*-------------------------------------------------------------------------
 *
 * children.c
 *	  Child workflows, signals and cancel requests to other workflows, and
 *	  parent close policies.
 *
 * Here two runs meet, and each must be changed under its own row lock:
 *
 *	- a parent's decision starts a child (the parent locked; the child is a
 *	  new row, so no second lock);
 *	- a child's chain ends (the child locked) and its parent must hear of it;
 *	- a parent closes (the parent locked) and each pending child gets its
 *	  parentClosePolicy;
 *	- a workflow signals or cancels another one (the initiator locked), or
 *	  itself.
 *
 * Lock order.  Waiting for the second run's lock while holding the first
 * would deadlock as soon as two runs do it to each other at once: a child
 * completing (child, then parent) while its parent closes and terminates it
 * (parent, then child), or two workflows signalling each other.  No fixed
 * order fits every case (signals go both ways), so none of these paths ever
 * waits for a second run: each takes the other run's lock with SKIP LOCKED,
 * and when that run is busy (locked by another transaction) it leaves the
 * work to a timer due at once, with the work in the timer's payload.  The
 * timer fires after this transaction commits (background worker or
 * durable.tick()), and its handler again holds one run and tries the other
 * without waiting, so it can never take part in a deadlock either:
 *
 *	deliver       run_id = the recipient: append an event (a child's outcome,
 *				  ExternalWorkflowExecutionSignaled...); fired like any timer,
 *				  under the recipient's lock.
 *	external      run_id = the initiator: a signal or cancel request still to
 *				  deliver to its target; kept when the initiator closes.  Also
 *				  the outbox of a request whose target another node owns
 *				  (see "Across nodes" below).
 *	close_policy  run_id = the closed parent: TERMINATE or REQUEST_CANCEL of
 *				  one child still to apply.
 *
 * So in the common case (the other run idle) everything happens in the same
 * transaction, and the isolation spec parent_closes_child_completes shows the
 * busy case: a parent that closes while its child completes gets no child
 * event (it is closed), and the child, completed, is left alone.
 *
 * A run whose state a caller holds in memory, unsaved (the parent whose
 * decisions are being applied), is "held": work aimed at it uses that state
 * (or, for a close policy, is left to a timer) rather than loading a stale
 * copy of its row, which its own transaction's lock would not keep us from.
 *
 * Across nodes.  Where a router is registered (store/router.c: a Citus
 * cluster with durable_citus, docs/citus.md), a signal or cancel request
 * that finds no open run of its target here, and whose target another node
 * owns, is not answered "not found": the decision's transaction writes it to
 * an external timer, as for a busy target, and when the timer fires the
 * router relays it to the owner, where durable.receive_external()
 * (ReceiveExternal) delivers it as perform_external does here, and notes it
 * in durable.received_requests.
 * The answer is written to the initiator's history and the timer deleted
 * in the relay's transaction; a relay tried again after a failure between
 * the two nodes' commits finds the request noted there and delivers
 * nothing twice.  A target that is busy on its node is tried again, as
 * here.  The target is looked for here first because a child workflow is
 * started on its parent's node whatever node owns its id (docs/citus.md,
 * "Not routed yet"): its parent reaches it here as before.  Without a
 * router, or for a target found here, nothing of this costs anything.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "base/json.h"
#include "base/util.h"
#include "store/direct.h"
#include "store/router.h"
#include "store/spi.h"
#include "store/timer_rows.h"
#include "engine/children.h"
#include "engine/lifecycle.h"
#include "engine/runs.h"
#include "engine/workflow.h"

static KeptPlan insert_child = {
	NULL, "INSERT INTO durable.children (parent_run_id, initiated_event_id,"
	" namespace, workflow_id, run_id, workflow_type, parent_close_policy,"
	" started_event_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
	8, {UUIDOID, INT8OID, TEXTOID, TEXTOID, UUIDOID, TEXTOID, TEXTOID, INT8OID}
};
static KeptPlan take_child = {
	NULL, "DELETE FROM durable.children"
	" WHERE parent_run_id = $1 AND initiated_event_id = $2"
	" RETURNING started_event_id",
	2, {UUIDOID, INT8OID}
};
static KeptPlan take_children = {
	NULL, "DELETE FROM durable.children WHERE parent_run_id = $1"
	" RETURNING initiated_event_id, namespace, workflow_id, run_id,"
	" parent_close_policy",
	1, {UUIDOID}
};
static KeptPlan run_exists = {
	NULL, "SELECT 1 FROM durable.runs WHERE run_id = $1",
	1, {UUIDOID}
};

static const char *const close_policy_names[] = {
	"TERMINATE", "REQUEST_CANCEL", "ABANDON"
};

/* The run whose state the caller holds in memory, unsaved (see above) */
static RunState *held_run = NULL;

/* How many times a chain that moves on under us is followed */
#define MAX_CHAIN_FOLLOW 3

static bool
same_uuid(const pg_uuid_t *a, const pg_uuid_t *b)
{
	return memcmp(a, b, sizeof(pg_uuid_t)) == 0;
}

/* A parentClosePolicy name. */
ParentClosePolicy
ParseParentClosePolicy(const char *name, const char *argname)
{
	int			i;

	for (i = 0; i < lengthof(close_policy_names); i++)
		if (strcmp(name, close_policy_names[i]) == 0)
			return (ParentClosePolicy) i;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid %s \"%s\"", argname, name),
			 errhint("Use TERMINATE, REQUEST_CANCEL or ABANDON.")));
	pg_unreachable();
}

const char *
ParentClosePolicyName(ParentClosePolicy p)
{
	return close_policy_names[p];
}

/* A text field of a payload, or NULL. */
static char *
payload_text(Jsonb *payload, const char *key)
{
	JsonbValue *v = JsonGetField(payload, key);

	if (v == NULL || v->type != jbvString)
		return NULL;
	return pnstrdup(v->val.string.val, v->val.string.len);
}

/* A jsonb field of a payload (any type but null), or NULL. */
static Jsonb *
payload_jsonb(Jsonb *payload, const char *key)
{
	JsonbValue *v = JsonGetField(payload, key);

	if (v == NULL || v->type == jbvNull)
		return NULL;
	return JsonbValueToJsonb(v);
}

static bool
payload_bool(Jsonb *payload, const char *key)
{
	JsonbValue *v = JsonGetField(payload, key);

	return v != NULL && v->type == jbvBool && v->val.boolean;
}

static int64
payload_int(Jsonb *payload, const char *key)
{
	JsonbValue *v = JsonGetField(payload, key);

	if (v == NULL || v->type != jbvNumeric)
		return 0;
	return DatumGetInt64(DirectFunctionCall1(numeric_int8,
											 NumericGetDatum(v->val.numeric)));
}

static pg_uuid_t *
text_to_uuid(const char *s)
{
	return s == NULL ? NULL :
		DatumGetUUIDP(DirectFunctionCall1(uuid_in, CStringGetDatum(s)));
}

static bool
exists(pg_uuid_t *run_id)
{
	Datum		values[1];
	int			n;

	values[0] = UUIDPGetDatum(run_id);
	n = RunPlan(&run_exists, values, NULL, false, 1);
	if (n > 0)
		SPI_freetuptable(SPI_tuptable);
	return n > 0;
}

/*
 * Write an event delivered to a locked run and schedule a decision task; a
 * child's outcome (child_initiated_id > 0) only while the child is pending,
 * naming its initiated and started events.  Returns whether it wrote.
 */
static bool
deliver_to_locked(RunState *rs, TimestampTz now, const char *event_type,
				  Jsonb *attributes, int64 child_initiated_id)
{
	if (!RunIsOpen(rs))
		return false;			/* closed meanwhile: nothing is written */
	if (child_initiated_id > 0)
	{
		Datum		values[2];
		bool		isnull;
		int64		started_id;
		JsonBuilder jb;

		values[0] = UUIDPGetDatum(&rs->run_id);
		values[1] = Int64GetDatum(child_initiated_id);
		if (RunPlan(&take_child, values, NULL, false, 1) == 0)
			return false;
		started_id = DatumGetInt64(SPIGetDatum(0, 1, &isnull));
		SPI_freetuptable(SPI_tuptable);
		JsonBegin(&jb);
		JsonAddInt(&jb, "initiatedEventId", child_initiated_id);
		JsonAddInt(&jb, "startedEventId", started_id);
		attributes = DatumGetJsonbP(DirectFunctionCall2(jsonb_concat,
														JsonbPGetDatum(JsonFinish(&jb)),
														JsonbPGetDatum(attributes)));
	}
	AppendEventOrBuffer(rs, now, event_type, attributes);
	ScheduleDecisionTask(rs, now);
	return true;
}

/*
 * Deliver an event to a run: at once when it is the held run or its lock is
 * free, else by a deliver timer keyed ref_id (unique among the recipient's
 * deliveries: the id of the event it answers).  Never waits.
 */
static void
deliver(pg_uuid_t *run_id, TimestampTz now, const char *event_type,
		Jsonb *attributes, int64 ref_id, bool child)
{
	RunState	rs;
	JsonBuilder jb;

	if (held_run != NULL && same_uuid(&held_run->run_id, run_id))
	{
		(void) deliver_to_locked(held_run, now, event_type, attributes,
								 child ? ref_id : 0);
		return;
	}
	if (LoadRunById(run_id, true, &rs))
	{
		if (deliver_to_locked(&rs, now, event_type, attributes,
							  child ? ref_id : 0))
			SaveRun(&rs);
		return;
	}
	if (!exists(run_id))
		return;					/* purged */
	JsonBegin(&jb);
	JsonAddText(&jb, "eventType", event_type);
	JsonAddJsonb(&jb, "attributes", attributes);
	JsonAddBool(&jb, "child", child);
	CreateTimerWithPayload(run_id, TIMER_DELIVER, now, ref_id, JsonFinish(&jb));
}

/* A deliver timer fired, its recipient locked. */
bool
FireDeliverTimer(RunState *rs, int64 ref_id, Jsonb *payload, TimestampTz now)
{
	bool		child = payload_bool(payload, "child");

	if (!deliver_to_locked(rs, now, payload_text(payload, "eventType"),
						   payload_jsonb(payload, "attributes"),
						   child ? ref_id : 0))
		return false;
	SaveRun(rs);
	return true;
}

/*
 * StartChildWorkflowExecution: StartChildWorkflowExecutionInitiated, then at
 * once the child's first run and ChildWorkflowExecutionStarted, or
 * StartChildWorkflowExecutionFailed when its workflow id is taken (running,
 * or refused by the child's id reuse policy).  Either way a decision task
 * follows.  rs is locked; req is validated.
 */
void
StartChildWorkflow(RunState *rs, TimestampTz now, StartRequest *req,
				   ParentClosePolicy policy, Jsonb *control, int64 completed_id)
{
	JsonBuilder jb;
	int64		initiated_id;
	pg_uuid_t  *child_run_id = NULL;

	JsonBegin(&jb);
	JsonAddText(&jb, "namespace", req->namespace);
	JsonAddText(&jb, "workflowId", req->workflow_id);
	JsonAddText(&jb, "workflowType", req->workflow_type);
	JsonAddText(&jb, "taskQueue", req->task_queue);
	JsonAddJsonb(&jb, "input", req->input);
	if (req->execution_timeout > 0)
		JsonAddFloat(&jb, "workflowExecutionTimeoutSeconds", req->execution_timeout);
	if (req->run_timeout > 0)
		JsonAddFloat(&jb, "workflowRunTimeoutSeconds", req->run_timeout);
	JsonAddFloat(&jb, "taskStartToCloseTimeoutSeconds", req->decision_timeout);
	JsonAddText(&jb, "parentClosePolicy", ParentClosePolicyName(policy));
	JsonAddText(&jb, "workflowIdReusePolicy", IdReusePolicyName(req->id_reuse_policy));
	if (req->retry_policy != NULL)
		JsonAddJsonb(&jb, "retryPolicy", req->retry_policy);
	if (req->cron_schedule != NULL)
		JsonAddText(&jb, "cronSchedule", req->cron_schedule);
	if (req->memo != NULL)
		JsonAddJsonb(&jb, "memo", req->memo);
	if (req->search_attributes != NULL)
		JsonAddJsonb(&jb, "searchAttributes", req->search_attributes);
	if (control != NULL)
		JsonAddJsonb(&jb, "control", control);
	JsonAddInt(&jb, "decisionTaskCompletedEventId", completed_id);
	initiated_id = AppendEvent(rs, now, "StartChildWorkflowExecutionInitiated",
							   JsonFinish(&jb));

	req->parent = rs;
	req->parent_initiated_id = initiated_id;
	req->refused = false;
	held_run = rs;
	PG_TRY();
	{
		child_run_id = StartWorkflowExecution(req, now);
	}
	PG_FINALLY();
	{
		held_run = NULL;
	}
	PG_END_TRY();

	JsonBegin(&jb);
	JsonAddInt(&jb, "initiatedEventId", initiated_id);
	JsonAddText(&jb, "namespace", req->namespace);
	JsonAddText(&jb, "workflowId", req->workflow_id);
	JsonAddText(&jb, "workflowType", req->workflow_type);
	if (req->refused)
	{
		JsonAddText(&jb, "cause", "WORKFLOW_ALREADY_RUNNING");
		if (control != NULL)
			JsonAddJsonb(&jb, "control", control);
		JsonAddInt(&jb, "decisionTaskCompletedEventId", completed_id);
		(void) AppendEvent(rs, now, "StartChildWorkflowExecutionFailed",
						   JsonFinish(&jb));
	}
	else
	{
		Datum		values[8];
		int64		started_id;

		JsonAddText(&jb, "runId", UuidToCString(child_run_id));
		started_id = AppendEvent(rs, now, "ChildWorkflowExecutionStarted",
								 JsonFinish(&jb));
		values[0] = UUIDPGetDatum(&rs->run_id);
		values[1] = Int64GetDatum(initiated_id);
		values[2] = CStringGetTextDatum(req->namespace);
		values[3] = CStringGetTextDatum(req->workflow_id);
		values[4] = UUIDPGetDatum(child_run_id);
		values[5] = CStringGetTextDatum(req->workflow_type);
		values[6] = CStringGetTextDatum(ParentClosePolicyName(policy));
		values[7] = Int64GetDatum(started_id);
		RunPlan(&insert_child, values, NULL, false, 0);
	}
	ScheduleDecisionTask(rs, now);
}

/*
 * A child's chain ended with rs (locked, just closed): tell its parent with
 * ChildWorkflowExecutionCompleted, Failed, Canceled, TimedOut or Terminated.
 */
void
NotifyParentOfClose(RunState *rs, TimestampTz now, const char *status,
					Jsonb *attributes)
{
	JsonBuilder jb;
	const char *event_type;
	static const char *const outcome_fields[] = {"result", "reason", "details",
	"timeoutType"};
	int			i;

	if (strcmp(status, "completed") == 0)
		event_type = "ChildWorkflowExecutionCompleted";
	else if (strcmp(status, "failed") == 0)
		event_type = "ChildWorkflowExecutionFailed";
	else if (strcmp(status, "canceled") == 0)
		event_type = "ChildWorkflowExecutionCanceled";
	else if (strcmp(status, "timed_out") == 0)
		event_type = "ChildWorkflowExecutionTimedOut";
	else if (strcmp(status, "terminated") == 0)
		event_type = "ChildWorkflowExecutionTerminated";
	else
		return;

	JsonBegin(&jb);
	JsonAddText(&jb, "namespace", rs->namespace);
	JsonAddText(&jb, "workflowId", rs->workflow_id);
	JsonAddText(&jb, "runId", UuidToCString(&rs->run_id));
	JsonAddText(&jb, "workflowType", rs->workflow_type);
	for (i = 0; i < lengthof(outcome_fields); i++)
	{
		JsonbValue *v = JsonGetField(attributes, outcome_fields[i]);

		/* Cadence's Terminated event carries no reason of its own */
		if (v == NULL || strcmp(event_type, "ChildWorkflowExecutionTerminated") == 0)
			continue;
		JsonAddJsonb(&jb, outcome_fields[i], JsonbValueToJsonb(v));
	}
	deliver(&rs->parent_run_id, now, event_type, JsonFinish(&jb),
			rs->parent_initiated_id, true);
}

/*
 * Apply a close policy to the running run of a child's chain (first run
 * first_run_id).  Returns false when that run is busy (or held): try later.
 */
static bool
apply_close_policy(const char *namespace, const char *workflow_id,
				   pg_uuid_t *first_run_id, ParentClosePolicy policy,
				   Jsonb *parent, TimestampTz now)
{
	int			i;

	for (i = 0; i < MAX_CHAIN_FOLLOW; i++)
	{
		RunState	c;

		if (!LoadRun(namespace, workflow_id, NULL, false, false, &c) ||
			!RunIsOpen(&c) || !same_uuid(&c.first_run_id, first_run_id))
			return true;		/* the chain is over */
		if (held_run != NULL && same_uuid(&held_run->run_id, &c.run_id))
			return false;
		if (!LoadRunById(&c.run_id, true, &c))
			return false;
		if (!RunIsOpen(&c))
			continue;			/* it closed or continued meanwhile */
		if (policy == PARENT_CLOSE_TERMINATE)
			TerminateRun(&c, now, "by parent close policy", parent);
		else if (RequestCancelRun(&c, now, "by parent close policy", parent))
			SaveRun(&c);
		return true;
	}
	return true;
}

/*
 * The parent rs (locked, just closed: its row says so) applies each pending
 * child's parentClosePolicy, whatever the reason it closed (continued as
 * new included, as Cadence does).  A busy child gets it from a timer.
 */
void
ApplyParentClosePolicies(RunState *rs, TimestampTz now)
{
	Datum		values[1];
	SPITupleTable *tt;
	int			n;
	int			i;
	JsonBuilder jb;
	Jsonb	   *parent;
	struct
	{
		int64		initiated_id;
		char	   *namespace;
		char	   *workflow_id;
		pg_uuid_t	run_id;
		ParentClosePolicy policy;
	}		   *kids;

	/* Children are added only under the parent's lock, which we hold. */
	if (!DirectRunHasRows("children", &rs->run_id))
		return;
	values[0] = UUIDPGetDatum(&rs->run_id);
	n = RunPlan(&take_children, values, NULL, false, 0);
	if (n == 0)
		return;
	tt = SPI_tuptable;
	kids = palloc(sizeof(*kids) * n);
	for (i = 0; i < n; i++)
	{
		bool		isnull;
		char	   *policy;

		kids[i].initiated_id = DatumGetInt64(SPI_getbinval(tt->vals[i], tt->tupdesc, 1, &isnull));
		kids[i].namespace = SPIGetText(i, 2);
		kids[i].workflow_id = SPIGetText(i, 3);
		memcpy(&kids[i].run_id, DatumGetUUIDP(SPI_getbinval(tt->vals[i], tt->tupdesc, 4, &isnull)),
			   sizeof(pg_uuid_t));
		policy = SPIGetText(i, 5);
		kids[i].policy = ParseParentClosePolicy(policy, "parent_close_policy");
	}
	SPI_freetuptable(tt);

	JsonBegin(&jb);
	JsonAddText(&jb, "namespace", rs->namespace);
	JsonAddText(&jb, "workflowId", rs->workflow_id);
	JsonAddText(&jb, "runId", UuidToCString(&rs->run_id));
	parent = JsonFinish(&jb);

	for (i = 0; i < n; i++)
	{
		if (kids[i].policy == PARENT_CLOSE_ABANDON)
			continue;
		if (!apply_close_policy(kids[i].namespace, kids[i].workflow_id,
								&kids[i].run_id, kids[i].policy, parent, now))
		{
			JsonBegin(&jb);
			JsonAddText(&jb, "namespace", kids[i].namespace);
			JsonAddText(&jb, "workflowId", kids[i].workflow_id);
			JsonAddText(&jb, "runId", UuidToCString(&kids[i].run_id));
			JsonAddText(&jb, "policy", ParentClosePolicyName(kids[i].policy));
			JsonAddJsonb(&jb, "parent", parent);
			CreateTimerWithPayload(&rs->run_id, TIMER_CLOSE_POLICY, now,
								   kids[i].initiated_id, JsonFinish(&jb));
		}
	}
}

/* A close_policy timer: apply it unless the child is still busy. */
bool
FireClosePolicyTimer(pg_uuid_t *run_id, int64 ref_id, Jsonb *payload,
					 TimestampTz now)
{
	if (!ClaimTimer(run_id, TIMER_CLOSE_POLICY, ref_id))
		return false;
	if (!apply_close_policy(payload_text(payload, "namespace"),
							payload_text(payload, "workflowId"),
							text_to_uuid(payload_text(payload, "runId")),
							ParseParentClosePolicy(payload_text(payload, "policy"),
												   "policy"),
							payload_jsonb(payload, "parent"), now))
		return false;
	return TakeTimer(run_id, TIMER_CLOSE_POLICY, ref_id);
}

typedef enum ExternalOutcome
{
	EXTERNAL_DONE,
	EXTERNAL_NOT_FOUND,
	EXTERNAL_BUSY				/* or owned by another node: left to a timer */
} ExternalOutcome;

/* The names of the outcomes in the answers of durable.receive_external() */
static const char *const external_outcome_names[] = {
	"done", "not_found", "busy"
};

/*
 * Signal or cancel the target of req for the initiator (initiator_run,
 * initiated_id; external names it for the target's event).  The held run is
 * used in place; any other target is locked without waiting.  Sets
 * target_run_id when done.
 */
static ExternalOutcome
perform_external(ExternalRequest *req, pg_uuid_t *initiator_run,
				 Jsonb *external, TimestampTz now, pg_uuid_t *target_run_id)
{
	int			i;

	for (i = 0; i < MAX_CHAIN_FOLLOW; i++)
	{
		RunState	t;
		RunState   *tp = &t;

		if (!LoadRun(req->namespace, req->workflow_id, req->run_id, false,
					 false, &t) || !RunIsOpen(&t))
			return EXTERNAL_NOT_FOUND;
		if (held_run != NULL && same_uuid(&held_run->run_id, &t.run_id))
			tp = held_run;
		else
		{
			if (!LoadRunById(&t.run_id, true, &t))
				return EXTERNAL_BUSY;
			if (!RunIsOpen(&t))
				continue;		/* closed or continued meanwhile */
		}
		if (req->child_workflow_only &&
			!(tp->has_parent && same_uuid(&tp->parent_run_id, initiator_run)))
			return EXTERNAL_NOT_FOUND;
		if (req->cancel)
			(void) RequestCancelRun(tp, now, NULL, external);
		else
			SignalRun(tp, now, req->signal_name, req->input, external);
		if (tp != held_run)
			SaveRun(tp);
		memcpy(target_run_id, &tp->run_id, sizeof(pg_uuid_t));
		return EXTERNAL_DONE;
	}
	return EXTERNAL_NOT_FOUND;
}

/* The initiator's answer to a signal or cancel request, delivered to it. */
static void
deliver_external_outcome(ExternalRequest *req, pg_uuid_t *initiator_run,
						 int64 initiated_id, int64 completed_id,
						 ExternalOutcome outcome, pg_uuid_t *target_run_id,
						 TimestampTz now)
{
	JsonBuilder jb;
	const char *event_type;

	JsonBegin(&jb);
	JsonAddInt(&jb, "initiatedEventId", initiated_id);
	JsonAddText(&jb, "namespace", req->namespace);
	JsonAddText(&jb, "workflowId", req->workflow_id);
	if (outcome == EXTERNAL_DONE)
	{
		/*
		 * The run id the decision gave, empty when it gave none (the target's
		 * latest run got it), as Cadence's and Temporal's transfer task
		 * records its TargetRunID in AddExternalWorkflowExecutionSignaled and
		 * ...CancelRequested.
		 */
		JsonAddText(&jb, "runId",
					req->run_id != NULL ? UuidToCString(req->run_id) : "");
		event_type = req->cancel ? "ExternalWorkflowExecutionCancelRequested" :
			"ExternalWorkflowExecutionSignaled";
	}
	else
	{
		if (req->run_id != NULL)
			JsonAddText(&jb, "runId", UuidToCString(req->run_id));
		JsonAddText(&jb, "cause", "EXTERNAL_WORKFLOW_EXECUTION_NOT_FOUND");
		JsonAddInt(&jb, "decisionTaskCompletedEventId", completed_id);
		event_type = req->cancel ? "RequestCancelExternalWorkflowExecutionFailed" :
			"SignalExternalWorkflowExecutionFailed";
	}
	if (req->control != NULL)
		JsonAddJsonb(&jb, "control", req->control);
	deliver(initiator_run, now, event_type, JsonFinish(&jb), initiated_id, false);
}

/* Who sends a signal or cancel request, as the target's event names it. */
static Jsonb *
external_of(const char *namespace, const char *workflow_id, pg_uuid_t *run_id,
			int64 initiated_id)
{
	JsonBuilder jb;

	JsonBegin(&jb);
	JsonAddText(&jb, "namespace", namespace);
	JsonAddText(&jb, "workflowId", workflow_id);
	JsonAddText(&jb, "runId", UuidToCString(run_id));
	JsonAddInt(&jb, "initiatedEventId", initiated_id);
	return JsonFinish(&jb);
}

/*
 * SignalExternalWorkflowExecution or RequestCancelExternalWorkflowExecution
 * (rs locked): the Initiated event, then, at once unless the target is busy,
 * the target's WorkflowExecutionSignaled or WorkflowExecutionCancelRequested
 * and the initiator's answer.  A workflow may signal itself.
 */
void
RequestExternal(RunState *rs, TimestampTz now, ExternalRequest *req,
				int64 completed_id)
{
	JsonBuilder jb;
	int64		initiated_id;
	ExternalOutcome outcome = EXTERNAL_NOT_FOUND;
	pg_uuid_t	target;

	JsonBegin(&jb);
	JsonAddText(&jb, "namespace", req->namespace);
	JsonAddText(&jb, "workflowId", req->workflow_id);
	if (req->run_id != NULL)
		JsonAddText(&jb, "runId", UuidToCString(req->run_id));
	if (!req->cancel)
	{
		JsonAddText(&jb, "signalName", req->signal_name);
		JsonAddJsonb(&jb, "input", req->input);
	}
	if (req->control != NULL)
		JsonAddJsonb(&jb, "control", req->control);
	JsonAddBool(&jb, "childWorkflowOnly", req->child_workflow_only);
	JsonAddInt(&jb, "decisionTaskCompletedEventId", completed_id);
	initiated_id = AppendEvent(rs, now,
							   req->cancel ? "RequestCancelExternalWorkflowExecutionInitiated" :
							   "SignalExternalWorkflowExecutionInitiated",
							   JsonFinish(&jb));

	held_run = rs;
	PG_TRY();
	{
		outcome = perform_external(req, &rs->run_id,
								   external_of(rs->namespace, rs->workflow_id,
											   &rs->run_id, initiated_id),
								   now, &target);
		/* Owned by another node: to the outbox, relayed when the timer fires. */
		if (outcome == EXTERNAL_NOT_FOUND &&
			RouterOwnedElsewhere(req->namespace, req->workflow_id))
			outcome = EXTERNAL_BUSY;
		if (outcome != EXTERNAL_BUSY)
			deliver_external_outcome(req, &rs->run_id, initiated_id,
									 completed_id, outcome, &target, now);
	}
	PG_FINALLY();
	{
		held_run = NULL;
	}
	PG_END_TRY();

	if (outcome == EXTERNAL_BUSY)
	{
		JsonBegin(&jb);
		JsonAddBool(&jb, "cancel", req->cancel);
		JsonAddText(&jb, "namespace", req->namespace);
		JsonAddText(&jb, "workflowId", req->workflow_id);
		JsonAddText(&jb, "runId", req->run_id ? UuidToCString(req->run_id) : NULL);
		JsonAddText(&jb, "signalName", req->signal_name);
		JsonAddJsonb(&jb, "input", req->input);
		JsonAddJsonb(&jb, "control", req->control);
		JsonAddBool(&jb, "childWorkflowOnly", req->child_workflow_only);
		JsonAddJsonb(&jb, "initiator", external_of(rs->namespace, rs->workflow_id,
												   &rs->run_id, initiated_id));
		JsonAddInt(&jb, "decisionTaskCompletedEventId", completed_id);
		CreateTimerWithPayload(&rs->run_id, TIMER_EXTERNAL, now, initiated_id,
							   JsonFinish(&jb));
	}
}

/* The request an external timer's payload carries. */
static void
external_request_of(Jsonb *payload, ExternalRequest *req)
{
	memset(req, 0, sizeof(*req));
	req->cancel = payload_bool(payload, "cancel");
	req->namespace = payload_text(payload, "namespace");
	req->workflow_id = payload_text(payload, "workflowId");
	req->run_id = text_to_uuid(payload_text(payload, "runId"));
	req->signal_name = payload_text(payload, "signalName");
	req->input = payload_jsonb(payload, "input");
	req->control = payload_jsonb(payload, "control");
	req->child_workflow_only = payload_bool(payload, "childWorkflowOnly");
}

/*
 * Relay an external timer's request to the node that owns its target, and
 * read its answer (durable.receive_external() there).
 */
static ExternalOutcome
relay_external(Jsonb *payload)
{
	Jsonb	   *answer = RouterRelay(payload);
	char	   *name = answer != NULL ? payload_text(answer, "outcome") : NULL;
	int			i;

	for (i = 0; name != NULL && i < lengthof(external_outcome_names); i++)
		if (strcmp(name, external_outcome_names[i]) == 0)
			return (ExternalOutcome) i;
	ereport(ERROR,
			(errcode(ERRCODE_DATA_EXCEPTION),
			 errmsg("the router's relay answered %s, not an outcome of durable.receive_external()",
					answer != NULL ? JsonbToCString(NULL, &answer->root, VARSIZE(answer)) : "NULL")));
	pg_unreachable();
}

/* An external timer: deliver the signal or cancel request now if we can. */
bool
FireExternalTimer(pg_uuid_t *run_id, int64 ref_id, Jsonb *payload,
				  TimestampTz now)
{
	ExternalRequest req;
	ExternalOutcome outcome;
	pg_uuid_t	target;

	if (!ClaimTimer(run_id, TIMER_EXTERNAL, ref_id))
		return false;
	external_request_of(payload, &req);

	outcome = perform_external(&req, run_id, payload_jsonb(payload, "initiator"),
							   now, &target);
	if (outcome == EXTERNAL_NOT_FOUND &&
		RouterOwnedElsewhere(req.namespace, req.workflow_id))
		outcome = relay_external(payload);
	if (outcome == EXTERNAL_BUSY)
		return false;
	(void) TakeTimer(run_id, TIMER_EXTERNAL, ref_id);
	deliver_external_outcome(&req, run_id, ref_id,
							 payload_int(payload, "decisionTaskCompletedEventId"),
							 outcome, &target, now);
	return true;
}

/*
 * A signal or cancel request relayed from another node (an external timer's
 * payload, see "Across nodes" above), for a target this node owns: deliver
 * it as perform_external does, unless it was delivered already.  Returns
 * the answer {"outcome": "done" | "not_found" | "busy", "runId": the run
 * it reached}; "duplicate": true when it had been delivered before.
 */
Jsonb *
ReceiveExternal(Jsonb *request, TimestampTz now)
{
	ExternalRequest req;
	Jsonb	   *initiator = payload_jsonb(request, "initiator");
	char	   *initiator_run_text = initiator != NULL ? payload_text(initiator, "runId") : NULL;
	pg_uuid_t  *initiator_run;
	int64		initiated_id = initiator != NULL ? payload_int(initiator, "initiatedEventId") : 0;
	ExternalOutcome outcome;
	pg_uuid_t	target;
	bool		duplicate = false;
	JsonBuilder jb;

	external_request_of(request, &req);
	if (req.namespace == NULL || req.workflow_id == NULL ||
		initiator_run_text == NULL || initiated_id <= 0 ||
		(!req.cancel && req.signal_name == NULL))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("request is not a signal or cancel request"),
				 errdetail("It needs namespace, workflowId, initiator.runId, initiator.initiatedEventId, and signalName unless cancel is true.")));
	initiator_run = text_to_uuid(initiator_run_text);

	if (ReceivedRequestTarget(initiator_run, initiated_id, &target))
	{
		outcome = EXTERNAL_DONE;
		duplicate = true;
	}
	else
	{
		outcome = perform_external(&req, initiator_run, initiator, now, &target);
		if (outcome == EXTERNAL_DONE)
			NoteReceivedRequest(initiator_run, initiated_id, &target, now);
	}

	JsonBegin(&jb);
	JsonAddText(&jb, "outcome", external_outcome_names[outcome]);
	if (outcome == EXTERNAL_DONE)
		JsonAddText(&jb, "runId", UuidToCString(&target));
	if (duplicate)
		JsonAddBool(&jb, "duplicate", true);
	return JsonFinish(&jb);
}

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
 * cluster with durable_citus, docs/citus.md), each workflow id is owned by
 * one node, and what a run does to a run on another node goes through an
 * outbox: an external timer of the sender, written in its transaction,
 * which the router relays to the owner when it fires; durable.receive_external()
 * (ReceiveExternal) carries it out there and answers, and the answer is
 * written to the sender and the timer deleted in the relay's transaction.
 * A relay tried again after a failure between the two nodes' commits finds
 * the request noted in the owner's durable.received_requests and does
 * nothing twice; a target busy on its node is tried again, as here.  The
 * requests ("kind" of the payload):
 *
 *	(none)        a signal or cancel whose target is not here and another
 *				  node owns: perform_external there.
 *	start_child   a child whose id another node owns, keyed by the
 *				  initiated event: started there with its parent's
 *				  identity; the answer is the parent's
 *				  ChildWorkflowExecutionStarted (and its row in
 *				  durable.children) or StartChildWorkflowExecutionFailed.
 *	child_closed  the close of a child whose parent is on another node,
 *				  keyed by the child's close event: written to the parent
 *				  there once its Started is (until then the answer is
 *				  busy).
 *	close_policy  a close_policy timer whose child is on another node.
 *
 * A target is looked for here first: a child started by a version that
 * started children on their parent's node is here.  Without a router
 * nothing of this costs more than a test of a cached flag.
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

#include "base/backoff.h"
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

/*
 * The kinds of request an external timer relays to the node that owns its
 * target ("kind" of its payload; none: a signal or cancel request), which
 * durable.receive_external() there takes (ReceiveExternal).
 */
#define REQUEST_START_CHILD		"start_child"
#define REQUEST_CHILD_CLOSED	"child_closed"
#define REQUEST_CLOSE_POLICY	"close_policy"

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
static KeptPlan child_started_id = {
	NULL, "SELECT started_event_id FROM durable.children"
	" WHERE parent_run_id = $1 AND initiated_event_id = $2",
	2, {UUIDOID, INT8OID}
};
static KeptPlan parent_of_run = {
	NULL, "SELECT parent_namespace, parent_workflow_id FROM durable.runs"
	" WHERE run_id = $1",
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

/* An integer field of a payload, or 0: 22023 naming it past bigint's range. */
static int64
payload_int(Jsonb *payload, const char *key)
{
	JsonbValue *v = JsonGetField(payload, key);
	Datum		n;

	if (v == NULL || v->type != jbvNumeric)
		return 0;
	n = NumericGetDatum(v->val.numeric);
	if (DatumGetBool(DirectFunctionCall2(numeric_lt, n,
										 NumericGetDatum(int64_to_numeric(PG_INT64_MIN)))) ||
		DatumGetBool(DirectFunctionCall2(numeric_gt, n,
										 NumericGetDatum(int64_to_numeric(PG_INT64_MAX)))))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is out of range", key),
				 errdetail("It must be an integer of bigint's range.")));
	return DatumGetInt64(DirectFunctionCall1(numeric_int8, n));
}

static double
payload_float(Jsonb *payload, const char *key)
{
	JsonbValue *v = JsonGetField(payload, key);

	if (v == NULL || v->type != jbvNumeric)
		return 0;
	return NumericToDouble(v->val.numeric);
}

/* A uuid of a payload's field, or NULL: 22023 naming the field if it is not one. */
static pg_uuid_t *
text_to_uuid(const char *s, const char *field)
{
	pg_uuid_t  *u;

	if (s == NULL)
		return NULL;
	u = palloc(sizeof(pg_uuid_t));
	if (!ParseCanonicalUuid(s, u))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is not a uuid: \"%s\"", field, s)));
	return u;
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

typedef enum ExternalOutcome
{
	EXTERNAL_DONE,
	EXTERNAL_NOT_FOUND,
	EXTERNAL_BUSY				/* or owned by another node: left to a timer */
} ExternalOutcome;

/*
 * The outcomes in the answers of durable.receive_external(): of a signal,
 * a cancel, a child's close or a close policy (ExternalOutcome), and of a
 * child's start (start_outcome_names).
 */
static const char *const external_outcome_names[] = {
	"done", "not_found", "busy"
};

typedef enum StartOutcome
{
	START_STARTED,
	START_REFUSED,				/* its id is taken */
	START_NOT_STARTED,			/* the parent closed before it was */
	START_BUSY
} StartOutcome;

static const char *const start_outcome_names[] = {
	"started", "refused", "not_started", "busy"
};

/*
 * Relay a request to the node that owns its target (an external timer's
 * payload), and read the outcome of durable.receive_external()'s answer
 * there: its index in names.  The answer is returned in *answer.
 */
static int
relay_request(Jsonb *request, const char *const *names, int nnames,
			  Jsonb **answer)
{
	char	   *name;
	int			i;

	*answer = RouterRelay(request);
	name = *answer != NULL ? payload_text(*answer, "outcome") : NULL;
	for (i = 0; name != NULL && i < nnames; i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	ereport(ERROR,
			(errcode(ERRCODE_DATA_EXCEPTION),
			 errmsg("the router's relay answered %s, not an outcome of durable.receive_external()",
					*answer != NULL ? JsonbToCString(NULL, &(*answer)->root, VARSIZE(*answer)) : "NULL")));
	pg_unreachable();
}

/* The answer of durable.receive_external(): an outcome, and the run reached */
static Jsonb *
receive_answer(const char *outcome, pg_uuid_t *run_id, bool duplicate)
{
	JsonBuilder jb;

	JsonBegin(&jb);
	JsonAddText(&jb, "outcome", outcome);
	if (run_id != NULL)
		JsonAddText(&jb, "runId", UuidToCString(run_id));
	if (duplicate)
		JsonAddBool(&jb, "duplicate", true);
	return JsonFinish(&jb);
}

/* 22023 for a relayed request without what its kind needs */
static void
bad_request(const char *kind, const char *needs)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("request is not a %s request", kind),
			 errdetail("It needs %s.", needs)));
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
		attributes = JsonbMerge(JsonFinish(&jb), attributes);
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
 * A child started: the parent (locked) waits for it from now on, until its
 * chain closes or the parent's does (started_id 0: its
 * ChildWorkflowExecutionStarted is buffered, FlushBufferedEvents sets it).
 */
static void
note_child(RunState *parent, int64 initiated_id, const char *namespace,
		   const char *workflow_id, pg_uuid_t *child_run_id,
		   const char *workflow_type, const char *policy, int64 started_id)
{
	Datum		values[8];

	values[0] = UUIDPGetDatum(&parent->run_id);
	values[1] = Int64GetDatum(initiated_id);
	values[2] = CStringGetTextDatum(namespace);
	values[3] = CStringGetTextDatum(workflow_id);
	values[4] = UUIDPGetDatum(child_run_id);
	values[5] = CStringGetTextDatum(workflow_type);
	values[6] = CStringGetTextDatum(policy);
	values[7] = Int64GetDatum(started_id);
	RunPlan(&insert_child, values, NULL, false, 0);
}

/* Who sends a request to another run, as the recipient's event names it. */
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
 * The outcome of a child's start, in its parent rs (locked):
 * ChildWorkflowExecutionStarted (child_run_id, noted in durable.children) or
 * StartChildWorkflowExecutionFailed (NULL: its id is taken), and a decision
 * task.  In the decision's transaction, or from outside it (the answer of
 * the node that owns the child's id: buffered while a decision task is
 * started).
 */
static void
write_child_start(RunState *rs, TimestampTz now, bool from_outside,
				  int64 initiated_id, const char *namespace,
				  const char *workflow_id, const char *workflow_type,
				  ParentClosePolicy policy, Jsonb *control,
				  int64 completed_id, pg_uuid_t *child_run_id)
{
	JsonBuilder jb;
	const char *event_type;
	int64		event_id = 0;

	JsonBegin(&jb);
	JsonAddInt(&jb, "initiatedEventId", initiated_id);
	JsonAddText(&jb, "namespace", namespace);
	JsonAddText(&jb, "workflowId", workflow_id);
	JsonAddText(&jb, "workflowType", workflow_type);
	if (child_run_id == NULL)
	{
		JsonAddText(&jb, "cause", "WORKFLOW_ALREADY_RUNNING");
		if (control != NULL)
			JsonAddJsonb(&jb, "control", control);
		JsonAddInt(&jb, "decisionTaskCompletedEventId", completed_id);
		event_type = "StartChildWorkflowExecutionFailed";
	}
	else
	{
		JsonAddText(&jb, "runId", UuidToCString(child_run_id));
		event_type = "ChildWorkflowExecutionStarted";
	}
	if (!from_outside)
		event_id = AppendEvent(rs, now, event_type, JsonFinish(&jb));
	else
	{
		bool		buffered = rs->decision_started_id != 0;

		AppendEventOrBuffer(rs, now, event_type, JsonFinish(&jb));
		if (!buffered)
			event_id = rs->last_event_id;
	}
	if (child_run_id != NULL)
		note_child(rs, initiated_id, namespace, workflow_id, child_run_id,
				   workflow_type, ParentClosePolicyName(policy), event_id);
	ScheduleDecisionTask(rs, now);
}

/*
 * A child whose id another node owns: the start goes to the parent's outbox
 * (an external timer keyed by the initiated event): the request is the
 * StartChildWorkflowExecutionInitiated attributes, with the parent (the
 * initiator) and its priority and key applied as a local start applies them.
 * No decision task is scheduled: the owner's answer,
 * ChildWorkflowExecutionStarted or StartChildWorkflowExecutionFailed,
 * brings one.
 */
static void
queue_remote_child(RunState *rs, TimestampTz now, StartRequest *req,
				   Jsonb *initiated, int64 initiated_id)
{
	JsonBuilder jb;

	JsonBegin(&jb);
	JsonAddText(&jb, "kind", REQUEST_START_CHILD);
	JsonAddInt(&jb, "priority", req->priority > 0 ? req->priority : rs->priority);
	if (req->concurrency_key != NULL || rs->concurrency_key != NULL)
		JsonAddText(&jb, "concurrencyKey", req->concurrency_key != NULL ?
					req->concurrency_key : rs->concurrency_key);
	JsonAddJsonb(&jb, "initiator", external_of(rs->namespace, rs->workflow_id,
											   &rs->run_id, initiated_id));
	CreateTimerWithPayload(&rs->run_id, TIMER_EXTERNAL, now, initiated_id,
						   JsonbMerge(initiated, JsonFinish(&jb)));
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
	Jsonb	   *initiated;
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
	initiated = JsonFinish(&jb);
	initiated_id = AppendEvent(rs, now, "StartChildWorkflowExecutionInitiated",
							   initiated);

	if (RouterOwnedElsewhere(req->namespace, req->workflow_id))
	{
		queue_remote_child(rs, now, req, initiated, initiated_id);
		return;
	}

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

	write_child_start(rs, now, false, initiated_id, req->namespace,
					  req->workflow_id, req->workflow_type, policy, control,
					  completed_id, req->refused ? NULL : child_run_id);
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
	Jsonb	   *outcome;

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
	outcome = JsonFinish(&jb);

	/*
	 * A parent on another node (it started this child there): to the
	 * outbox, keyed by the close event, relayed to the node that owns the
	 * parent's id.
	 */
	if (RouterPresent() && !exists(&rs->parent_run_id))
	{
		Datum		values[1];

		values[0] = UUIDPGetDatum(&rs->run_id);
		if (RunPlan(&parent_of_run, values, NULL, true, 1) == 1)
		{
			char	   *parent_namespace = SPIGetText(0, 1);
			char	   *parent_workflow_id = SPIGetText(0, 2);

			SPI_freetuptable(SPI_tuptable);
			if (parent_namespace != NULL && parent_workflow_id != NULL &&
				RouterOwnedElsewhere(parent_namespace, parent_workflow_id))
			{
				JsonBegin(&jb);
				JsonAddText(&jb, "kind", REQUEST_CHILD_CLOSED);
				JsonAddText(&jb, "namespace", parent_namespace);
				JsonAddText(&jb, "workflowId", parent_workflow_id);
				JsonAddText(&jb, "parentRunId", UuidToCString(&rs->parent_run_id));
				JsonAddInt(&jb, "parentInitiatedEventId", rs->parent_initiated_id);
				JsonAddText(&jb, "eventType", event_type);
				JsonAddJsonb(&jb, "attributes", outcome);
				JsonAddJsonb(&jb, "initiator",
							 external_of(rs->namespace, rs->workflow_id,
										 &rs->run_id, rs->last_event_id));
				CreateTimerWithPayload(&rs->run_id, TIMER_EXTERNAL, now,
									   rs->last_event_id, JsonFinish(&jb));
				return;
			}
		}
	}
	deliver(&rs->parent_run_id, now, event_type, outcome,
			rs->parent_initiated_id, true);
}

typedef enum PolicyOutcome
{
	POLICY_APPLIED,				/* or the chain is over */
	POLICY_BUSY,				/* the child's run is busy (or held) */
	POLICY_ELSEWHERE			/* the child is on the node that owns its id */
} PolicyOutcome;

/*
 * Apply a close policy to the running run of a child's chain (first run
 * first_run_id), if it is here.
 */
static PolicyOutcome
apply_close_policy(const char *namespace, const char *workflow_id,
				   pg_uuid_t *first_run_id, ParentClosePolicy policy,
				   Jsonb *parent, TimestampTz now)
{
	int			i;

	for (i = 0; i < MAX_CHAIN_FOLLOW; i++)
	{
		RunState	c;

		if (!LoadRun(namespace, workflow_id, NULL, false, false, &c))
			return RouterOwnedElsewhere(namespace, workflow_id) ?
				POLICY_ELSEWHERE : POLICY_APPLIED;
		if (!RunIsOpen(&c) || !same_uuid(&c.first_run_id, first_run_id))
			return POLICY_APPLIED;	/* the chain is over */
		if (held_run != NULL && same_uuid(&held_run->run_id, &c.run_id))
			return POLICY_BUSY;
		if (!LoadRunById(&c.run_id, true, &c))
			return POLICY_BUSY;
		if (!RunIsOpen(&c))
			continue;			/* it closed or continued meanwhile */
		if (policy == PARENT_CLOSE_TERMINATE)
			TerminateRun(&c, now, "by parent close policy", parent);
		else if (RequestCancelRun(&c, now, "by parent close policy", parent))
			SaveRun(&c);
		return POLICY_APPLIED;
	}
	return POLICY_APPLIED;
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
		if (apply_close_policy(kids[i].namespace, kids[i].workflow_id,
							   &kids[i].run_id, kids[i].policy, parent,
							   now) != POLICY_APPLIED)
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

/*
 * A close_policy timer: apply it unless the child is still busy, here or,
 * relayed, on the node that owns its id.
 */
bool
FireClosePolicyTimer(pg_uuid_t *run_id, int64 ref_id, Jsonb *payload,
					 TimestampTz now)
{
	PolicyOutcome outcome;

	if (!ClaimTimer(run_id, TIMER_CLOSE_POLICY, ref_id))
		return false;
	outcome = apply_close_policy(payload_text(payload, "namespace"),
								 payload_text(payload, "workflowId"),
								 text_to_uuid(payload_text(payload, "runId"), "runId"),
								 ParseParentClosePolicy(payload_text(payload, "policy"),
														"policy"),
								 payload_jsonb(payload, "parent"), now);
	if (outcome == POLICY_ELSEWHERE)
	{
		Jsonb	   *request;
		Jsonb	   *answer;
		JsonBuilder jb;

		JsonBegin(&jb);
		JsonAddText(&jb, "kind", REQUEST_CLOSE_POLICY);
		request = JsonbMerge(payload, JsonFinish(&jb));
		if (relay_request(request, external_outcome_names,
						  lengthof(external_outcome_names), &answer) == EXTERNAL_BUSY)
			outcome = POLICY_BUSY;
	}
	if (outcome == POLICY_BUSY)
		return false;
	return TakeTimer(run_id, TIMER_CLOSE_POLICY, ref_id);
}

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
	req->run_id = text_to_uuid(payload_text(payload, "runId"), "runId");
	req->signal_name = payload_text(payload, "signalName");
	req->input = payload_jsonb(payload, "input");
	req->control = payload_jsonb(payload, "control");
	req->child_workflow_only = payload_bool(payload, "childWorkflowOnly");
}

/*
 * The start of a child whose id another node owns, from its parent's
 * outbox (the timer of run_id, the parent, keyed by the initiated event):
 * relayed under the parent's lock, so that the parent cannot close between
 * the owner's answer and its own record of it, and the answer written to
 * the parent.  A parent closed meanwhile is said to be: the owner then
 * starts nothing, or, if it started the child already (a relay whose
 * answer was lost with this node's commit), applies the parent close policy
 * to it.
 */
static bool
fire_start_child(pg_uuid_t *run_id, int64 initiated_id, Jsonb *payload,
				 TimestampTz now)
{
	RunState	parent;
	bool		open;
	Jsonb	   *request = payload;
	Jsonb	   *answer;
	StartOutcome outcome;

	if (LoadRunById(run_id, true, &parent))
		open = RunIsOpen(&parent);
	else if (exists(run_id))
		return false;			/* busy: the next tick */
	else
		open = false;			/* purged */
	if (!open)
	{
		JsonBuilder jb;

		JsonBegin(&jb);
		JsonAddBool(&jb, "parentClosed", true);
		request = JsonbMerge(payload, JsonFinish(&jb));
	}
	outcome = (StartOutcome) relay_request(request, start_outcome_names,
										   lengthof(start_outcome_names),
										   &answer);
	if (outcome == START_BUSY)
		return false;
	if (outcome == START_STARTED && payload_text(answer, "runId") == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("the router's relay answered a child's start without its runId")));
	(void) TakeTimer(run_id, TIMER_EXTERNAL, initiated_id);
	if (!open || outcome == START_NOT_STARTED)
		return true;
	write_child_start(&parent, now, true, initiated_id,
					  payload_text(payload, "namespace"),
					  payload_text(payload, "workflowId"),
					  payload_text(payload, "workflowType"),
					  ParseParentClosePolicy(payload_text(payload, "parentClosePolicy"),
											 "parentClosePolicy"),
					  payload_jsonb(payload, "control"),
					  payload_int(payload, "decisionTaskCompletedEventId"),
					  outcome == START_STARTED ?
					  text_to_uuid(payload_text(answer, "runId"), "runId") : NULL);
	SaveRun(&parent);
	return true;
}

/*
 * An external timer: deliver the request now if we can, here or, relayed,
 * on the node that owns its target.
 */
bool
FireExternalTimer(pg_uuid_t *run_id, int64 ref_id, Jsonb *payload,
				  TimestampTz now)
{
	ExternalRequest req;
	ExternalOutcome outcome;
	pg_uuid_t	target;
	char	   *kind = payload_text(payload, "kind");

	if (!ClaimTimer(run_id, TIMER_EXTERNAL, ref_id))
		return false;
	if (kind != NULL && strcmp(kind, REQUEST_START_CHILD) == 0)
		return fire_start_child(run_id, ref_id, payload, now);
	if (kind != NULL && strcmp(kind, REQUEST_CHILD_CLOSED) == 0)
	{
		Jsonb	   *answer;

		/* A child's close (run_id, closed) for its parent on another node */
		if (relay_request(payload, external_outcome_names,
						  lengthof(external_outcome_names), &answer) == EXTERNAL_BUSY)
			return false;
		return TakeTimer(run_id, TIMER_EXTERNAL, ref_id);
	}
	external_request_of(payload, &req);

	outcome = perform_external(&req, run_id, payload_jsonb(payload, "initiator"),
							   now, &target);
	if (outcome == EXTERNAL_NOT_FOUND &&
		RouterOwnedElsewhere(req.namespace, req.workflow_id))
	{
		Jsonb	   *answer;

		outcome = (ExternalOutcome) relay_request(payload, external_outcome_names,
												  lengthof(external_outcome_names),
												  &answer);
	}
	if (outcome == EXTERNAL_BUSY)
		return false;
	(void) TakeTimer(run_id, TIMER_EXTERNAL, ref_id);
	deliver_external_outcome(&req, run_id, ref_id,
							 payload_int(payload, "decisionTaskCompletedEventId"),
							 outcome, &target, now);
	return true;
}

/*
 * The start of a child relayed by its parent's node to this one, which owns
 * the child's id: start it with the parent's request, unless it was started
 * already (noted in durable.received_requests, keyed by the parent's run and
 * initiated event).  A parent that closed first ("parentClosed") gets no
 * new child; a child started already gets the parent's close policy.
 */
static Jsonb *
receive_start_child(Jsonb *request, TimestampTz now)
{
	Jsonb	   *initiator = payload_jsonb(request, "initiator");
	char	   *parent_run_text = initiator != NULL ? payload_text(initiator, "runId") : NULL;
	int64		initiated_id = initiator != NULL ? payload_int(initiator, "initiatedEventId") : 0;
	char	   *policy_name = payload_text(request, "parentClosePolicy");
	char	   *reuse_name = payload_text(request, "workflowIdReusePolicy");
	StartRequest req;
	RunState	parent;
	pg_uuid_t  *parent_run;
	pg_uuid_t	child_run;
	pg_uuid_t  *started;
	ParentClosePolicy policy;
	JsonBuilder jb;

	memset(&req, 0, sizeof(req));
	req.namespace = payload_text(request, "namespace");
	req.workflow_id = payload_text(request, "workflowId");
	req.workflow_type = payload_text(request, "workflowType");
	req.task_queue = payload_text(request, "taskQueue");
	if (req.namespace == NULL || req.workflow_id == NULL ||
		req.workflow_type == NULL || req.task_queue == NULL ||
		policy_name == NULL || reuse_name == NULL || initiator == NULL ||
		parent_run_text == NULL || initiated_id <= 0 ||
		payload_text(initiator, "namespace") == NULL ||
		payload_text(initiator, "workflowId") == NULL)
		bad_request(REQUEST_START_CHILD,
					"namespace, workflowId, workflowType, taskQueue, parentClosePolicy, workflowIdReusePolicy and initiator's namespace, workflowId, runId and initiatedEventId");
	policy = ParseParentClosePolicy(policy_name, "parentClosePolicy");
	parent_run = text_to_uuid(parent_run_text, "initiator.runId");
	req.namespace = CheckName(cstring_to_text(req.namespace), "namespace");
	req.workflow_id = CheckName(cstring_to_text(req.workflow_id), "workflowId");
	req.workflow_type = CheckName(cstring_to_text(req.workflow_type), "workflowType");
	req.task_queue = CheckName(cstring_to_text(req.task_queue), "taskQueue");

	if (ReceivedRequestTarget(parent_run, initiated_id, &child_run))
	{
		if (payload_bool(request, "parentClosed") &&
			policy != PARENT_CLOSE_ABANDON)
		{
			JsonBegin(&jb);
			JsonAddText(&jb, "namespace", payload_text(initiator, "namespace"));
			JsonAddText(&jb, "workflowId", payload_text(initiator, "workflowId"));
			JsonAddText(&jb, "runId", parent_run_text);
			if (apply_close_policy(req.namespace, req.workflow_id, &child_run,
								   policy, JsonFinish(&jb), now) == POLICY_BUSY)
				return receive_answer(start_outcome_names[START_BUSY], NULL, false);
		}
		return receive_answer(start_outcome_names[START_STARTED], &child_run, true);
	}
	if (payload_bool(request, "parentClosed"))
		return receive_answer(start_outcome_names[START_NOT_STARTED], NULL, false);

	/* Checked as the parent's node checked the decision: nothing unbounded */
	req.input = payload_jsonb(request, "input");
	if (req.input != NULL)
		CheckPayload(req.input, "input");
	req.retry_policy = payload_jsonb(request, "retryPolicy");
	if (req.retry_policy != NULL)
	{
		RetryPolicy p;

		ParseRetryPolicy(req.retry_policy, "retryPolicy", &p);
		req.retry_policy = RetryPolicyToJsonb(&p);
	}
	req.id_reuse_policy = ParseIdReusePolicy(reuse_name, "workflowIdReusePolicy");
	req.execution_timeout = CheckSeconds(payload_float(request, "workflowExecutionTimeoutSeconds"),
										 "workflowExecutionTimeoutSeconds", true);
	req.run_timeout = CheckSeconds(payload_float(request, "workflowRunTimeoutSeconds"),
								   "workflowRunTimeoutSeconds", true);
	req.decision_timeout = CheckSeconds(payload_float(request, "taskStartToCloseTimeoutSeconds"),
										"taskStartToCloseTimeoutSeconds", true);
	if (req.decision_timeout == 0)
		req.decision_timeout = 10;
	req.cron_schedule = payload_text(request, "cronSchedule");
	req.memo = payload_jsonb(request, "memo");
	if (req.memo != NULL)
		CheckObject(req.memo, "memo");
	req.search_attributes = payload_jsonb(request, "searchAttributes");
	if (req.search_attributes != NULL)
		CheckObject(req.search_attributes, "searchAttributes");
	req.priority = JsonGetField(request, "priority") == NULL ? 3 :
		CheckPriority(payload_int(request, "priority"), "priority");
	req.concurrency_key = payload_text(request, "concurrencyKey");
	if (req.concurrency_key != NULL)
		req.concurrency_key = CheckConcurrencyKey(req.concurrency_key, "concurrencyKey");

	/* The parent, as much of it as a start reads: it is on another node. */
	memset(&parent, 0, sizeof(parent));
	memcpy(&parent.run_id, parent_run, sizeof(pg_uuid_t));
	parent.namespace = payload_text(initiator, "namespace");
	parent.workflow_id = payload_text(initiator, "workflowId");
	parent.priority = req.priority;
	parent.concurrency_key = req.concurrency_key;
	req.parent = &parent;
	req.parent_initiated_id = initiated_id;

	started = StartWorkflowExecution(&req, now);
	if (req.refused)
		return receive_answer(start_outcome_names[START_REFUSED], NULL, false);
	NoteReceivedRequest(parent_run, initiated_id, started, now);
	return receive_answer(start_outcome_names[START_STARTED], started, false);
}

/* The child events a child's close is told to its parent with */
static const char *const child_close_events[] = {
	"ChildWorkflowExecutionCompleted", "ChildWorkflowExecutionFailed",
	"ChildWorkflowExecutionCanceled", "ChildWorkflowExecutionTimedOut",
	"ChildWorkflowExecutionTerminated"
};

/*
 * A child's close relayed by its node to this one, which holds its parent:
 * written to the parent (locked without waiting) while the parent waits for
 * that child, once (noted in durable.received_requests, keyed by the
 * child's run and close event).  Until the parent has the child's
 * ChildWorkflowExecutionStarted in its history (the start's answer not
 * written yet, or buffered), the answer is busy: the child's node tries
 * again.
 */
static Jsonb *
receive_child_closed(Jsonb *request, TimestampTz now)
{
	Jsonb	   *child = payload_jsonb(request, "initiator");
	char	   *child_run_text = child != NULL ? payload_text(child, "runId") : NULL;
	int64		close_id = child != NULL ? payload_int(child, "initiatedEventId") : 0;
	char	   *parent_run_text = payload_text(request, "parentRunId");
	int64		initiated_id = payload_int(request, "parentInitiatedEventId");
	char	   *event_type = payload_text(request, "eventType");
	Jsonb	   *attributes = payload_jsonb(request, "attributes");
	pg_uuid_t  *child_run;
	pg_uuid_t  *parent_run;
	pg_uuid_t	target;
	RunState	parent;
	Datum		values[2];
	int64		started_id;
	bool		isnull;
	int			i;

	for (i = 0; event_type != NULL && i < lengthof(child_close_events); i++)
		if (strcmp(event_type, child_close_events[i]) == 0)
			break;
	if (child_run_text == NULL || close_id <= 0 || parent_run_text == NULL ||
		initiated_id <= 0 || event_type == NULL ||
		i == lengthof(child_close_events) || attributes == NULL ||
		!JB_ROOT_IS_OBJECT(attributes))
		bad_request(REQUEST_CHILD_CLOSED,
					"parentRunId, parentInitiatedEventId, an eventType of a child's close, its attributes (an object), and initiator's runId and initiatedEventId");
	CheckPayload(attributes, "attributes");
	child_run = text_to_uuid(child_run_text, "initiator.runId");
	parent_run = text_to_uuid(parent_run_text, "parentRunId");

	if (ReceivedRequestTarget(child_run, close_id, &target))
		return receive_answer(external_outcome_names[EXTERNAL_DONE], &target, true);
	if (!LoadRunById(parent_run, true, &parent))
		return receive_answer(external_outcome_names[exists(parent_run) ?
													 EXTERNAL_BUSY : EXTERNAL_NOT_FOUND],
							  NULL, false);
	if (!RunIsOpen(&parent))
		return receive_answer(external_outcome_names[EXTERNAL_NOT_FOUND], NULL, false);
	values[0] = UUIDPGetDatum(parent_run);
	values[1] = Int64GetDatum(initiated_id);
	if (RunPlan(&child_started_id, values, NULL, true, 1) == 0)
	{
		/* The start's answer still in the parent's outbox, or not waited for */
		if (TimerExists(parent_run, TIMER_EXTERNAL, initiated_id))
			return receive_answer(external_outcome_names[EXTERNAL_BUSY], NULL, false);
		return receive_answer(external_outcome_names[EXTERNAL_NOT_FOUND], NULL, false);
	}
	started_id = DatumGetInt64(SPIGetDatum(0, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	if (started_id == 0)
		return receive_answer(external_outcome_names[EXTERNAL_BUSY], NULL, false);
	if (deliver_to_locked(&parent, now, event_type, attributes, initiated_id))
		SaveRun(&parent);
	NoteReceivedRequest(child_run, close_id, parent_run, now);
	return receive_answer(external_outcome_names[EXTERNAL_DONE], parent_run, false);
}

/*
 * A parent close policy relayed by the parent's node to this one, which
 * owns the child's id (a close_policy timer's payload).
 */
static Jsonb *
receive_close_policy(Jsonb *request, TimestampTz now)
{
	char	   *namespace = payload_text(request, "namespace");
	char	   *workflow_id = payload_text(request, "workflowId");
	char	   *first_run = payload_text(request, "runId");
	char	   *policy = payload_text(request, "policy");
	Jsonb	   *parent = payload_jsonb(request, "parent");

	if (namespace == NULL || workflow_id == NULL || first_run == NULL ||
		policy == NULL || parent == NULL || !JB_ROOT_IS_OBJECT(parent))
		bad_request(REQUEST_CLOSE_POLICY,
					"namespace, workflowId, runId, policy and parent (an object)");
	switch (apply_close_policy(namespace, workflow_id, text_to_uuid(first_run, "runId"),
							   ParseParentClosePolicy(policy, "policy"),
							   parent, now))
	{
		case POLICY_APPLIED:
			return receive_answer(external_outcome_names[EXTERNAL_DONE], NULL, false);
		case POLICY_BUSY:
			return receive_answer(external_outcome_names[EXTERNAL_BUSY], NULL, false);
		case POLICY_ELSEWHERE:
			break;
	}
	return receive_answer(external_outcome_names[EXTERNAL_NOT_FOUND], NULL, false);
}

/*
 * A request relayed from another node (an external or close_policy timer's
 * payload, see "Across nodes" above), for a target this node owns: a
 * child's start, a child's close for its parent here, a parent close
 * policy, or (no "kind") a signal or cancel request, delivered as
 * perform_external does unless it was delivered already.  Returns the
 * answer {"outcome": ..., "runId": the run it reached}; "duplicate": true
 * when it had been delivered before.
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

	char	   *kind = payload_text(request, "kind");

	if (!JB_ROOT_IS_OBJECT(request))
		bad_request("relayed", "to be an object");
	if (kind != NULL && strcmp(kind, REQUEST_START_CHILD) == 0)
		return receive_start_child(request, now);
	if (kind != NULL && strcmp(kind, REQUEST_CHILD_CLOSED) == 0)
		return receive_child_closed(request, now);
	if (kind != NULL && strcmp(kind, REQUEST_CLOSE_POLICY) == 0)
		return receive_close_policy(request, now);
	if (kind != NULL || JsonGetField(request, "kind") != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("request has an unknown kind"),
				 errhint("A relayed request is a signal or cancel request (no kind), or of kind start_child, child_closed or close_policy.")));

	external_request_of(request, &req);
	if (req.namespace == NULL || req.workflow_id == NULL ||
		initiator_run_text == NULL || initiated_id <= 0 ||
		(!req.cancel && req.signal_name == NULL))
		bad_request("signal or cancel",
					"namespace, workflowId, initiator.runId, initiator.initiatedEventId, and signalName unless cancel is true");
	initiator_run = text_to_uuid(initiator_run_text, "initiator.runId");

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

	return receive_answer(external_outcome_names[outcome],
						  outcome == EXTERNAL_DONE ? &target : NULL, duplicate);
}

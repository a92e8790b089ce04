/*-------------------------------------------------------------------------
 *
 * decisions.c
 *	  Decisions of a completed decision task: validation, then application.
 *
 * The whole list is parsed and checked before anything is written, so a
 * completion with one malformed decision fails with an error that names it
 * (decisions[i].field) and changes nothing.  Application then writes the
 * events Cadence writes for each decision.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>
#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "durable.h"
#include "base/backoff.h"
#include "base/cron.h"
#include "base/json.h"
#include "base/util.h"
#include "store/namespaces.h"
#include "store/spi.h"
#include "engine/activities.h"
#include "engine/children.h"
#include "engine/decisions.h"
#include "engine/runs.h"
#include "engine/user_timers.h"
#include "engine/workflow.h"

typedef enum DecisionType
{
	D_SCHEDULE_ACTIVITY,
	D_REQUEST_CANCEL_ACTIVITY,
	D_START_TIMER,
	D_CANCEL_TIMER,
	D_COMPLETE_WORKFLOW,
	D_FAIL_WORKFLOW,
	D_CANCEL_WORKFLOW,
	D_CONTINUE_AS_NEW,
	D_RECORD_MARKER,
	D_UPSERT_SEARCH_ATTRIBUTES,
	D_START_CHILD,
	D_SIGNAL_EXTERNAL,
	D_CANCEL_EXTERNAL
} DecisionType;

typedef struct DecisionSpec
{
	const char *name;
	DecisionType type;
	const char *fields[20];		/* allowed attribute keys */
} DecisionSpec;

static const DecisionSpec decision_specs[] = {
	{"ScheduleActivityTask", D_SCHEDULE_ACTIVITY,
		{"activityId", "activityType", "taskQueue", "input",
			"scheduleToStartTimeoutSeconds", "startToCloseTimeoutSeconds",
		"scheduleToCloseTimeoutSeconds", "heartbeatTimeoutSeconds", "retryPolicy",
		"requestEagerExecution", "priority", "concurrencyKey"}},
	{"RequestCancelActivityTask", D_REQUEST_CANCEL_ACTIVITY, {"activityId"}},
	{"StartTimer", D_START_TIMER, {"timerId", "startToFireTimeoutSeconds"}},
	{"CancelTimer", D_CANCEL_TIMER, {"timerId"}},
	{"CompleteWorkflowExecution", D_COMPLETE_WORKFLOW, {"result"}},
	{"FailWorkflowExecution", D_FAIL_WORKFLOW, {"reason", "details"}},
	{"CancelWorkflowExecution", D_CANCEL_WORKFLOW, {"details"}},
	{"ContinueAsNewWorkflowExecution", D_CONTINUE_AS_NEW,
		{"workflowType", "taskQueue", "input", "workflowRunTimeoutSeconds",
			"taskStartToCloseTimeoutSeconds", "backoffStartIntervalInSeconds",
		"retryPolicy", "cronSchedule", "memo", "searchAttributes"}},
	{"RecordMarker", D_RECORD_MARKER, {"markerName", "details", "header"}},
	{"UpsertWorkflowSearchAttributes", D_UPSERT_SEARCH_ATTRIBUTES,
	{"searchAttributes"}},
	{"StartChildWorkflowExecution", D_START_CHILD,
		{"namespace", "workflowId", "workflowType", "taskQueue", "input",
			"retryPolicy", "workflowExecutionTimeoutSeconds",
			"workflowRunTimeoutSeconds", "taskStartToCloseTimeoutSeconds",
			"parentClosePolicy", "workflowIdReusePolicy", "cronSchedule", "memo",
		"searchAttributes", "control", "priority", "concurrencyKey"}},
	{"SignalExternalWorkflowExecution", D_SIGNAL_EXTERNAL,
		{"namespace", "workflowId", "runId", "signalName", "input", "control",
		"childWorkflowOnly"}},
	{"RequestCancelExternalWorkflowExecution", D_CANCEL_EXTERNAL,
		{"namespace", "workflowId", "runId", "control", "childWorkflowOnly"}},
};

/* Cadence's names of the id reuse policies, beside durable's own */
static const struct
{
	const char *cadence;
	IdReusePolicy policy;
}			cadence_reuse_names[] = {
	{"AllowDuplicateFailedOnly", ID_REUSE_ALLOW_DUPLICATE_FAILED_ONLY},
	{"AllowDuplicate", ID_REUSE_ALLOW_DUPLICATE},
	{"RejectDuplicate", ID_REUSE_REJECT_DUPLICATE},
	{"TerminateIfRunning", ID_REUSE_TERMINATE_IF_RUNNING},
};

typedef struct Decision
{
	DecisionType type;
	const char *name;
	int			index;
	ActivityRequest activity;	/* ScheduleActivityTask */
	char	   *id;				/* activityId / timerId / markerName */
	double		seconds;		/* startToFireTimeoutSeconds */
	Jsonb	   *payload;		/* result / details / searchAttributes */
	char	   *reason;
	Jsonb	   *header;
	ContinueRequest cont;
	StartRequest child;			/* StartChildWorkflowExecution */
	ParentClosePolicy close_policy;
	Jsonb	   *control;
	ExternalRequest external;	/* Signal/RequestCancelExternal... */
} Decision;

/* What errors call the decision being parsed, when not decisions[i] */
static const char *label_override = NULL;

/*
 * Name the decision being parsed "label" in errors instead of "decisions[i]"
 * (workflow functions check their options as one decision); NULL resets.
 */
void
SetDecisionLabel(const char *label)
{
	label_override = label;
}

/* "decisions[i].field" */
static char *
label(int i, const char *field)
{
	if (label_override != NULL)
		return psprintf("%s.%s", label_override, field);
	return psprintf("decisions[%d].%s", i, field);
}

/* The value of key in a decision object, NULL when absent or null. */
static JsonbValue *
field(Jsonb *obj, const char *key)
{
	JsonbValue *v = JsonGetField(obj, key);

	return (v == NULL || v->type == jbvNull) ? NULL : v;
}

/* A jsonb value of a field (any type), or NULL. */
static Jsonb *
field_jsonb(Jsonb *obj, const char *key)
{
	JsonbValue *v = field(obj, key);

	return v ? JsonbValueToJsonb(v) : NULL;
}

/* A string field; required ones must be non-empty. */
static char *
field_string(Jsonb *obj, int i, const char *key, bool required)
{
	JsonbValue *v = field(obj, key);
	char	   *s;

	if (v == NULL)
	{
		if (required)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s is required", label(i, key))));
		return NULL;
	}
	if (v->type != jbvString)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a string", label(i, key))));
	s = pnstrdup(v->val.string.val, v->val.string.len);
	if (s[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be empty", label(i, key))));
	if (strlen(s) > DURABLE_MAX_NAME_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is too long", label(i, key))));
	return s;
}

/* A number of seconds, >= 0 (> 0 when required), bounded by CheckSeconds; 0 when absent. */
static double
field_seconds(Jsonb *obj, int i, const char *key, bool required)
{
	JsonbValue *v = field(obj, key);
	double		d;

	if (v == NULL)
	{
		if (required)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s is required", label(i, key))));
		return 0;
	}
	if (v->type != jbvNumeric)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a number of seconds", label(i, key))));
	d = NumericToDouble(v->val.numeric);
	return CheckSeconds(d, label(i, key), !required);
}

/* An object field, or NULL. */
static Jsonb *
field_object(Jsonb *obj, int i, const char *key, bool required)
{
	Jsonb	   *j = field_jsonb(obj, key);

	if (j == NULL && required)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is required", label(i, key))));
	if (j != NULL && !JB_ROOT_IS_OBJECT(j))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a JSON object", label(i, key))));
	return j;
}

/*
 * While ParseDecisionsOverLimit parses: the first payload over
 * durable.max_payload_size, kept instead of raised (index -1: none).
 */
static bool keep_oversized = false;
static int	oversized_index = -1;
static char *oversized_message = NULL;

/* A payload field, checked against durable.max_payload_size. */
static Jsonb *
field_payload(Jsonb *obj, int i, const char *key)
{
	Jsonb	   *j = field_jsonb(obj, key);

	if (j != NULL && keep_oversized &&
		VARSIZE(j) > (Size) durable_max_payload_size)
	{
		if (oversized_index < 0)
		{
			oversized_index = i;
			oversized_message =
				psprintf("%s is too large: it is %u bytes; durable.max_payload_size is %d bytes",
						 label(i, key), (unsigned int) VARSIZE(j),
						 durable_max_payload_size);
		}
		return j;
	}
	if (j != NULL)
		CheckPayload(j, label(i, key));
	return j;
}

/* A boolean field; false when absent. */
static bool
field_bool(Jsonb *obj, int i, const char *key)
{
	JsonbValue *v = field(obj, key);

	if (v == NULL)
		return false;
	if (v->type != jbvBool)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a boolean", label(i, key))));
	return v->val.boolean;
}

/* A priority field, 1 to 5; 0 when absent. */
static int
field_priority(Jsonb *obj, int i, const char *key)
{
	JsonbValue *v = field(obj, key);
	double		d;

	if (v == NULL)
		return 0;
	if (v->type != jbvNumeric)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a number from 1 to 5", label(i, key))));
	d = NumericToDouble(v->val.numeric);
	if (isnan(d) || d != floor(d) || d < 1 || d > 5)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be between 1 and 5", label(i, key)),
				 errhint("1 is claimed first; the default is 3.")));
	return (int) d;
}

/* A concurrency key field, or NULL. */
static char *
field_key(Jsonb *obj, int i, const char *key)
{
	char	   *s = field_string(obj, i, key, false);

	return CheckConcurrencyKey(s, label(i, key));
}

/* A run id field (a UUID in its text form), or NULL. */
static pg_uuid_t *
field_uuid(Jsonb *obj, int i, const char *key)
{
	char	   *s = field_string(obj, i, key, false);
	pg_uuid_t  *uuid;

	if (s == NULL)
		return NULL;
	uuid = palloc(sizeof(pg_uuid_t));
	if (!ParseCanonicalUuid(s, uuid))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a UUID", label(i, key))));
	return uuid;
}

/* A namespace field that must exist; the default when absent. */
static char *
field_namespace(Jsonb *obj, int i, const char *key, const char *dflt)
{
	char	   *ns = field_string(obj, i, key, false);

	if (ns == NULL)
		return (char *) dflt;
	if (!NamespaceExists(ns))
		ereport(ERROR,
				(errcode(ERRCODE_DURABLE_NOT_FOUND),
				 errmsg("%s: namespace \"%s\" does not exist", label(i, key), ns)));
	/* Acting in another namespace takes the client privilege there. */
	if (strcmp(ns, dflt) != 0)
		CheckNamespacePrivilege(ns, NSPRIV_CLIENT);
	return ns;
}

/* workflowIdReusePolicy: Cadence's names or durable's. */
static IdReusePolicy
field_reuse_policy(Jsonb *obj, int i, const char *key)
{
	char	   *name = field_string(obj, i, key, false);
	int			k;

	if (name == NULL)
		return ID_REUSE_ALLOW_DUPLICATE_FAILED_ONLY;
	for (k = 0; k < lengthof(cadence_reuse_names); k++)
		if (strcmp(name, cadence_reuse_names[k].cadence) == 0)
			return cadence_reuse_names[k].policy;
	return ParseIdReusePolicy(name, label(i, key));
}

/* Reject keys the decision type does not have. */
static void
check_keys(Jsonb *obj, int i, const DecisionSpec *spec)
{
	JsonbIterator *it = JsonbIteratorInit(&obj->root);
	JsonbValue	v;
	JsonbIteratorToken tok;

	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		char	   *key;
		int			k;
		bool		known = false;

		if (tok != WJB_KEY)
			continue;
		key = pnstrdup(v.val.string.val, v.val.string.len);
		if (strcmp(key, "decisionType") == 0)
			continue;
		for (k = 0; k < lengthof(spec->fields) && spec->fields[k]; k++)
			if (strcmp(key, spec->fields[k]) == 0)
				known = true;
		if (!known)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("decisions[%d] has an unknown field \"%s\" for %s",
							i, key, spec->name)));
	}
}

/* Parse and validate one decision. */
static void
parse_decision(RunState *rs, Jsonb *obj, int i, Decision *d)
{
	char	   *type;
	const DecisionSpec *spec = NULL;
	int			k;

	if (!JB_ROOT_IS_OBJECT(obj))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("decisions[%d] must be a JSON object", i)));
	type = field_string(obj, i, "decisionType", true);
	for (k = 0; k < lengthof(decision_specs); k++)
		if (strcmp(type, decision_specs[k].name) == 0)
			spec = &decision_specs[k];
	if (spec == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("decisions[%d].decisionType \"%s\" is not a decision", i, type)));
	check_keys(obj, i, spec);

	memset(d, 0, sizeof(Decision));
	d->type = spec->type;
	d->name = spec->name;
	d->index = i;
	switch (d->type)
	{
		case D_SCHEDULE_ACTIVITY:
			{
				ActivityRequest *a = &d->activity;
				Jsonb	   *policy;

				a->activity_id = field_string(obj, i, "activityId", true);
				a->activity_type = field_string(obj, i, "activityType", true);
				a->task_queue = field_string(obj, i, "taskQueue", false);
				if (a->task_queue == NULL)
					a->task_queue = rs->task_queue;
				a->input = field_payload(obj, i, "input");
				a->schedule_to_start = field_seconds(obj, i, "scheduleToStartTimeoutSeconds", false);
				a->start_to_close = field_seconds(obj, i, "startToCloseTimeoutSeconds", false);
				a->schedule_to_close = field_seconds(obj, i, "scheduleToCloseTimeoutSeconds", false);
				a->heartbeat_timeout = field_seconds(obj, i, "heartbeatTimeoutSeconds", false);
				policy = field_jsonb(obj, "retryPolicy");
				if (policy != NULL)
				{
					RetryPolicy p;

					ParseRetryPolicy(policy, label(i, "retryPolicy"), &p);
					a->retry_policy = RetryPolicyToJsonb(&p);
				}
				a->eager = field_bool(obj, i, "requestEagerExecution");
				a->priority = field_priority(obj, i, "priority");
				a->concurrency_key = field_key(obj, i, "concurrencyKey");
				d->id = a->activity_id;
				a->index = i;
				break;
			}
		case D_REQUEST_CANCEL_ACTIVITY:
			d->id = field_string(obj, i, "activityId", true);
			break;
		case D_START_TIMER:
			d->id = field_string(obj, i, "timerId", true);
			d->seconds = field_seconds(obj, i, "startToFireTimeoutSeconds", true);
			break;
		case D_CANCEL_TIMER:
			d->id = field_string(obj, i, "timerId", true);
			break;
		case D_COMPLETE_WORKFLOW:
			d->payload = field_payload(obj, i, "result");
			break;
		case D_FAIL_WORKFLOW:
			d->reason = field_string(obj, i, "reason", false);
			if (d->reason == NULL)
				d->reason = "durable:Generic";
			d->payload = field_payload(obj, i, "details");
			break;
		case D_CANCEL_WORKFLOW:
			d->payload = field_payload(obj, i, "details");
			break;
		case D_CONTINUE_AS_NEW:
			{
				ContinueRequest *c = &d->cont;
				Jsonb	   *policy;

				c->initiator = "Decider";
				c->workflow_type = field_string(obj, i, "workflowType", false);
				c->task_queue = field_string(obj, i, "taskQueue", false);
				c->input = field_payload(obj, i, "input");
				c->run_timeout = field_seconds(obj, i, "workflowRunTimeoutSeconds", false);
				c->decision_timeout = field_seconds(obj, i, "taskStartToCloseTimeoutSeconds", false);
				c->backoff = field_seconds(obj, i, "backoffStartIntervalInSeconds", false);
				policy = field_jsonb(obj, "retryPolicy");
				if (policy != NULL)
				{
					RetryPolicy p;

					ParseRetryPolicy(policy, label(i, "retryPolicy"), &p);
					c->retry_policy = RetryPolicyToJsonb(&p);
				}
				c->cron_schedule = field_string(obj, i, "cronSchedule", false);
				if (c->cron_schedule != NULL)
				{
					CronSchedule sched;

					CronParse(c->cron_schedule, label(i, "cronSchedule"), &sched);
				}
				c->memo = field_object(obj, i, "memo", false);
				c->search_attributes = field_object(obj, i, "searchAttributes", false);
				c->attempt = 1;
				break;
			}
		case D_RECORD_MARKER:
			d->id = field_string(obj, i, "markerName", true);
			d->payload = field_payload(obj, i, "details");
			d->header = field_object(obj, i, "header", false);
			break;
		case D_UPSERT_SEARCH_ATTRIBUTES:
			d->payload = field_object(obj, i, "searchAttributes", true);
			break;
		case D_START_CHILD:
			{
				StartRequest *c = &d->child;
				Jsonb	   *policy;
				char	   *close_policy;

				c->namespace = field_namespace(obj, i, "namespace", rs->namespace);
				c->workflow_id = field_string(obj, i, "workflowId", false);
				if (c->workflow_id == NULL)
					c->workflow_id = UuidToCString(NewTimeOrderedUuid());
				c->workflow_type = field_string(obj, i, "workflowType", true);
				c->task_queue = field_string(obj, i, "taskQueue", false);
				if (c->task_queue == NULL)
					c->task_queue = rs->task_queue;
				c->input = field_payload(obj, i, "input");
				policy = field_jsonb(obj, "retryPolicy");
				if (policy != NULL)
				{
					RetryPolicy p;

					ParseRetryPolicy(policy, label(i, "retryPolicy"), &p);
					c->retry_policy = RetryPolicyToJsonb(&p);
				}
				c->execution_timeout = field_seconds(obj, i, "workflowExecutionTimeoutSeconds", false);
				c->run_timeout = field_seconds(obj, i, "workflowRunTimeoutSeconds", false);
				c->decision_timeout = field_seconds(obj, i, "taskStartToCloseTimeoutSeconds", false);
				if (c->decision_timeout == 0)
					c->decision_timeout = 10;
				close_policy = field_string(obj, i, "parentClosePolicy", false);
				d->close_policy = close_policy == NULL ? PARENT_CLOSE_TERMINATE :
					ParseParentClosePolicy(close_policy, label(i, "parentClosePolicy"));
				c->id_reuse_policy = field_reuse_policy(obj, i, "workflowIdReusePolicy");
				c->cron_schedule = field_string(obj, i, "cronSchedule", false);
				if (c->cron_schedule != NULL)
				{
					CronSchedule sched;

					CronParse(c->cron_schedule, label(i, "cronSchedule"), &sched);
				}
				c->memo = field_object(obj, i, "memo", false);
				c->search_attributes = field_object(obj, i, "searchAttributes", false);
				c->priority = field_priority(obj, i, "priority");
				c->concurrency_key = field_key(obj, i, "concurrencyKey");
				d->control = field_payload(obj, i, "control");
				d->id = c->workflow_id;
				break;
			}
		case D_SIGNAL_EXTERNAL:
		case D_CANCEL_EXTERNAL:
			{
				ExternalRequest *e = &d->external;

				e->cancel = d->type == D_CANCEL_EXTERNAL;
				e->namespace = field_namespace(obj, i, "namespace", rs->namespace);
				e->workflow_id = field_string(obj, i, "workflowId", true);
				e->run_id = field_uuid(obj, i, "runId");
				if (!e->cancel)
				{
					e->signal_name = field_string(obj, i, "signalName", true);
					e->input = field_payload(obj, i, "input");
				}
				e->control = field_payload(obj, i, "control");
				e->child_workflow_only = field_bool(obj, i, "childWorkflowOnly");
				break;
			}
	}
}

static bool
is_close_decision(DecisionType t)
{
	return t == D_COMPLETE_WORKFLOW || t == D_FAIL_WORKFLOW ||
		t == D_CANCEL_WORKFLOW || t == D_CONTINUE_AS_NEW;
}

/*
 * Parse and check the whole list; returns the number of decisions.  Errors
 * name the decision; nothing has been written yet.
 */
int
ParseDecisions(RunState *rs, Jsonb *decisions, Decision **out)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	int			n = 0;
	int			i;
	Decision   *list;

	if (decisions == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("decisions must not be null"),
				 errhint("Pass an empty array for no decisions.")));
	if (!JB_ROOT_IS_ARRAY(decisions) || JB_ROOT_IS_SCALAR(decisions))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("decisions must be a JSON array")));

	list = palloc0(sizeof(Decision) * (JB_ROOT_COUNT(decisions) + 1));
	it = JsonbIteratorInit(&decisions->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok != WJB_ELEM)
			continue;
		if (v.type != jbvBinary)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("decisions[%d] must be a JSON object", n)));
		parse_decision(rs, JsonbValueToJsonb(&v), n, &list[n]);
		n++;
	}

	for (i = 0; i < n; i++)
	{
		int			j;

		if (is_close_decision(list[i].type) && i != n - 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("decisions[%d]: %s must be the last decision",
							i, list[i].name)));
		for (j = 0; j < i; j++)
		{
			if (list[i].type == D_SCHEDULE_ACTIVITY &&
				list[j].type == D_SCHEDULE_ACTIVITY &&
				strcmp(list[i].id, list[j].id) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("decisions[%d].activityId \"%s\" is scheduled twice",
								i, list[i].id)));
			if (list[i].type == D_START_TIMER && list[j].type == D_START_TIMER &&
				strcmp(list[i].id, list[j].id) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("decisions[%d].timerId \"%s\" is started twice",
								i, list[i].id)));
		}
	}
	*out = list;
	return n;
}

/*
 * Cadence's DecisionTaskFailedCause for bad attributes of a decision type
 * (BAD_RECORD_MARKER_ATTRIBUTES ...), in the CamelCase form durable writes
 * its decision task causes in.
 */
static const char *
bad_attributes_cause(DecisionType type)
{
	switch (type)
	{
		case D_SCHEDULE_ACTIVITY:
			return "BadScheduleActivityAttributes";
		case D_REQUEST_CANCEL_ACTIVITY:
			return "BadRequestCancelActivityAttributes";
		case D_START_TIMER:
			return "BadStartTimerAttributes";
		case D_CANCEL_TIMER:
			return "BadCancelTimerAttributes";
		case D_COMPLETE_WORKFLOW:
			return "BadCompleteWorkflowExecutionAttributes";
		case D_FAIL_WORKFLOW:
			return "BadFailWorkflowExecutionAttributes";
		case D_CANCEL_WORKFLOW:
			return "BadCancelWorkflowExecutionAttributes";
		case D_CONTINUE_AS_NEW:
			return "BadContinueAsNewAttributes";
		case D_RECORD_MARKER:
			return "BadRecordMarkerAttributes";
		case D_UPSERT_SEARCH_ATTRIBUTES:
			return "BadSearchAttributes";
		case D_START_CHILD:
			return "BadStartChildExecutionAttributes";
		case D_SIGNAL_EXTERNAL:
			return "BadSignalWorkflowExecutionAttributes";
		case D_CANCEL_EXTERNAL:
			return "BadRequestCancelExternalWorkflowExecutionAttributes";
	}
	return "BadDecisionAttributes";
}

/*
 * ParseDecisions for a worker's completion: a payload over
 * durable.max_payload_size is not an error of the call but ends the
 * workflow (api/worker.c), as Temporal's workflow task handler terminates
 * a workflow whose command carries a payload over its size limit (its
 * sizeLimitChecker).  over->message is NULL when every payload fits; else it
 * names the first one that does not, and over->cause is the decision task
 * failure cause of its decision.  Every other error is raised as usual.
 */
int
ParseDecisionsOverLimit(RunState *rs, Jsonb *decisions, Decision **out,
						DecisionOverLimit *over)
{
	int			n = 0;

	keep_oversized = true;
	oversized_index = -1;
	oversized_message = NULL;
	PG_TRY();
	{
		n = ParseDecisions(rs, decisions, out);
	}
	PG_FINALLY();
	{
		keep_oversized = false;
	}
	PG_END_TRY();
	over->message = oversized_message;
	over->cause = oversized_index < 0 ? NULL :
		bad_attributes_cause((*out)[oversized_index].type);
	oversized_index = -1;
	oversized_message = NULL;
	return n;
}

/* Whether the decision list closes the workflow. */
bool
DecisionsCloseRun(Decision *list, int n)
{
	return n > 0 && is_close_decision(list[n - 1].type);
}

/* Whether a run has buffered events other than the TimerFired of timers $2 */
static KeptPlan unhandled_buffered = {
	NULL, "SELECT EXISTS (SELECT 1 FROM durable.buffered_events"
	" WHERE run_id = $1 AND NOT (event_type = 'TimerFired'"
	"   AND (attributes->>'timerId') = ANY ($2)))",
	2, {UUIDOID, TEXTARRAYOID}
};

/*
 * Whether a buffered event is left that the decisions do not account for:
 * one other than the TimerFired of a timer that a CancelTimer of the list
 * cancels (CancelUserTimer drops it).  Cadence's handler recomputes its
 * "unhandled events" after each such TimerCanceled, so that [CancelTimer,
 * CompleteWorkflowExecution] completes when that TimerFired is all that was
 * buffered.
 */
bool
DecisionsLeaveUnhandledEvents(RunState *rs, Decision *list, int n)
{
	Datum	   *ids = palloc(sizeof(Datum) * Max(n, 1));
	int			nids = 0;
	Datum		values[2];
	bool		isnull;
	bool		left;
	int			i;

	if (!rs->has_buffered)
		return false;
	for (i = 0; i < n; i++)
		if (list[i].type == D_CANCEL_TIMER)
			ids[nids++] = CStringGetTextDatum(list[i].id);
	if (nids == 0)
		return true;
	values[0] = UUIDPGetDatum(&rs->run_id);
	values[1] = PointerGetDatum(construct_array(ids, nids, TEXTOID, -1, false,
												TYPALIGN_INT));
	RunPlan(&unhandled_buffered, values, NULL, false, 1);
	left = DatumGetBool(SPIGetDatum(0, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	return left;
}

/* Apply one decision; the run stays locked throughout. */
static void
apply_decision(RunState *rs, TimestampTz now, Decision *d, int64 completed_id)
{
	JsonBuilder jb;
	ActivityState a;

	switch (d->type)
	{
		case D_SCHEDULE_ACTIVITY:
			/* A duplicate activityId is caught by the unique index. */
			if (rs->activity_attempts >= durable_max_attempts_per_run)
			{
				FailRunForAttemptCap(rs, now);
				return;
			}
			ScheduleActivity(rs, now, &d->activity, completed_id);
			break;

		case D_REQUEST_CANCEL_ACTIVITY:
			if (LoadActivityById(&rs->run_id, d->id, &a))
				RequestCancelActivity(rs, &a, now, completed_id);
			else
			{
				JsonBegin(&jb);
				JsonAddText(&jb, "activityId", d->id);
				JsonAddText(&jb, "cause", "ACTIVITY_ID_UNKNOWN");
				JsonAddInt(&jb, "decisionTaskCompletedEventId", completed_id);
				(void) AppendEvent(rs, now, "RequestCancelActivityTaskFailed",
								   JsonFinish(&jb));
			}
			break;

		case D_START_TIMER:
			StartUserTimer(rs, now, d->id, d->seconds, completed_id, d->index);
			break;

		case D_CANCEL_TIMER:
			CancelUserTimer(rs, now, d->id, completed_id);
			break;

		case D_COMPLETE_WORKFLOW:
			JsonBegin(&jb);
			JsonAddJsonb(&jb, "result", d->payload);
			JsonAddInt(&jb, "decisionTaskCompletedEventId", completed_id);
			CompleteRun(rs, now, JsonFinish(&jb), d->payload);
			break;

		case D_FAIL_WORKFLOW:
			FailRun(rs, now, d->reason, d->payload, completed_id);
			break;

		case D_CANCEL_WORKFLOW:
			JsonBegin(&jb);
			JsonAddJsonb(&jb, "details", d->payload);
			JsonAddInt(&jb, "decisionTaskCompletedEventId", completed_id);
			CloseRun(rs, now, "canceled", "WorkflowExecutionCanceled",
					 JsonFinish(&jb), NULL, NULL);
			break;

		case D_CONTINUE_AS_NEW:
			(void) ContinueRun(rs, now, &d->cont, completed_id);
			break;

		case D_RECORD_MARKER:
			JsonBegin(&jb);
			JsonAddText(&jb, "markerName", d->id);
			JsonAddJsonb(&jb, "details", d->payload);
			if (d->header != NULL)
				JsonAddJsonb(&jb, "header", d->header);
			JsonAddInt(&jb, "decisionTaskCompletedEventId", completed_id);
			(void) AppendEvent(rs, now, "MarkerRecorded", JsonFinish(&jb));
			break;

		case D_UPSERT_SEARCH_ATTRIBUTES:
			JsonBegin(&jb);
			JsonAddJsonb(&jb, "searchAttributes", d->payload);
			JsonAddInt(&jb, "decisionTaskCompletedEventId", completed_id);
			(void) AppendEvent(rs, now, "UpsertWorkflowSearchAttributes",
							   JsonFinish(&jb));
			UpsertSearchAttributes(rs, d->payload);
			break;

		case D_START_CHILD:
			StartChildWorkflow(rs, now, &d->child, d->close_policy, d->control,
							   completed_id);
			break;

		case D_SIGNAL_EXTERNAL:
		case D_CANCEL_EXTERNAL:
			RequestExternal(rs, now, &d->external, completed_id);
			break;
	}
}

/* Apply a validated list in order, stopping if a decision closed the run. */
void
ApplyDecisions(RunState *rs, TimestampTz now, Decision *list, int n,
			   int64 completed_id)
{
	int			i;

	for (i = 0; i < n && RunIsOpen(rs); i++)
		apply_decision(rs, now, &list[i], completed_id);
}

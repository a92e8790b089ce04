/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  The worker API: polling and answering decision and activity tasks.
 *
 * A poll claims a ready task with FOR UPDATE SKIP LOCKED and deletes it, so
 * that two workers never get the same task; a claimed task whose run or
 * activity moved on meanwhile is stale and skipped.  With a wait, a poll
 * sleeps on its queue's condition variable (store/wait.c) and is woken by the
 * commit that makes a task.
 *
 * Task tokens name one attempt and carry a secret drawn when it was claimed
 * (64 random bits, kept in durable.runs.task_secret for a decision task and
 * durable.activities.task_secret for an activity attempt):
 *
 *   D1:<ns len>:<namespace>:<wid len>:<workflow id>:<run_id>:<scheduled>:<started>:<secret>
 *   A1:<ns len>:<namespace>:<wid len>:<workflow id>:<run_id>:<scheduled>:<attempt>:<secret>
 *
 * lengths in bytes, the secret in 16 lowercase hex digits.  The namespace
 * and workflow id let a router in front of several databases send an answer
 * to the one that owns the workflow (docs/api.md "Task tokens").  A token whose
 * attempt is no longer the current one, or whose secret, namespace or
 * workflow id is not its attempt's, is stale (WF005) and changes nothing.
 *
 * The format of 0.2.0, "D:<run_id>:<scheduled>:<started>" and
 * "A:<run_id>:<scheduled>:<attempt>", names a task without a secret: it is
 * still issued while the database is not updated (no task_secret columns)
 * and accepted only for a task that has no secret (claimed before
 * ALTER EXTENSION durable UPDATE).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "durable.h"
#include "base/caller.h"
#include "base/clock.h"
#include "base/json.h"
#include "base/util.h"
#include "store/direct.h"
#include "store/namespaces.h"
#include "store/pollers.h"
#include "store/spi.h"
#include "store/task_limits.h"
#include "store/wait.h"
#include "engine/activities.h"
#include "engine/decision_task.h"
#include "engine/decisions.h"
#include "engine/runs.h"
#include "api/worker.h"

#define ARG_TEXT(n)		(PG_ARGISNULL(n) ? NULL : PG_GETARG_TEXT_PP(n))
#define ARG_JSONB(n)	(PG_ARGISNULL(n) ? NULL : PG_GETARG_JSONB_P(n))

/*
 * A heartbeat: one statement, which also returns what the token is checked
 * against (a mismatch raises WF005, which undoes the update).  The second
 * form is for a database at 0.2.0, which has no task_secret column.
 */
#define HEARTBEAT(secret) \
	"UPDATE durable.activities a SET last_heartbeat_time = $4," \
	" heartbeat_details = COALESCE($5, a.heartbeat_details)" \
	" WHERE a.run_id = $1 AND a.scheduled_event_id = $2 AND a.attempt = $3" \
	" AND a.state IN ('STARTED', 'CANCEL_REQUESTED')" \
	" RETURNING a.cancel_requested OR (SELECT r.cancel_requested" \
	"   FROM durable.runs r WHERE r.run_id = a.run_id)," \
	" a.namespace, a.workflow_id, " secret
static KeptPlan heartbeat_plan[2] = {
	{NULL, HEARTBEAT("NULL::bigint"), 5,
	{UUIDOID, INT8OID, INT4OID, TIMESTAMPTZOID, JSONBOID}},
	{NULL, HEARTBEAT("a.task_secret"), 5,
	{UUIDOID, INT8OID, INT4OID, TIMESTAMPTZOID, JSONBOID}}
};

/* What a poll looks for */
typedef struct PollRequest
{
	char	   *namespace;
	char	   *task_queue;
	const char *identity;
	TimestampTz now;
} PollRequest;

/* A parsed task token */
typedef struct TaskToken
{
	char		kind;			/* 'D' or 'A' */
	int			version;		/* 1; 0 for the format of 0.2.0 */
	char	   *namespace;		/* version 1 only */
	char	   *workflow_id;	/* version 1 only */
	pg_uuid_t	run_id;
	int64		scheduled_id;
	int64		third;			/* started event id, or attempt */
	uint64		secret;			/* version 1 only */
} TaskToken;

/*
 * Read a positive decimal number at *p, without sign or leading zero and at
 * most max, and move *p past it; false when there is none.
 */
static bool
token_number(const char **p, int64 max, int64 *out)
{
	const char *s = *p;
	int64		v = 0;

	if (*s < '1' || *s > '9')
		return false;
	while (*s >= '0' && *s <= '9')
	{
		if (v > (max - (*s - '0')) / 10)
			return false;
		v = v * 10 + (*s - '0');
		s++;
	}
	*p = s;
	*out = v;
	return true;
}

/*
 * Read "<length>:<bytes>:" at *p (a name of 1 to DURABLE_MAX_NAME_LEN bytes,
 * valid in the database encoding) into *out, and move *p past it.
 */
static bool
token_name(const char **p, const char *end, char **out)
{
	const char *s = *p;
	int64		len;

	if (!token_number(&s, DURABLE_MAX_NAME_LEN, &len) || *s++ != ':' ||
		end - s < len + 1 || s[len] != ':' ||
		!pg_verify_mbstr(GetDatabaseEncoding(), s, (int) len, true))
		return false;
	*out = pnstrdup(s, (Size) len);
	*p = s + len + 1;
	return true;
}

/* Parse the text after "D1:" or "A1:" (the format above); false if malformed. */
static bool
parse_token_v1(const char *p, TaskToken *t)
{
	const char *end = p + strlen(p);
	char		uuid_buf[37];
	int			i;

	if (!token_name(&p, end, &t->namespace) ||
		!token_name(&p, end, &t->workflow_id) ||
		end - p < 37 || p[36] != ':')
		return false;
	memcpy(uuid_buf, p, 36);
	uuid_buf[36] = '\0';
	p += 37;
	if (!ParseCanonicalUuid(uuid_buf, &t->run_id) ||
		!token_number(&p, PG_INT64_MAX, &t->scheduled_id) || *p++ != ':' ||
		!token_number(&p, t->kind == 'A' ? PG_INT32_MAX : PG_INT64_MAX,
					  &t->third) || *p++ != ':' ||
		end - p != 16)
		return false;
	t->secret = 0;
	for (i = 0; i < 16; i++)
	{
		char		c = p[i];

		if (c >= '0' && c <= '9')
			t->secret = (t->secret << 4) | (uint64) (c - '0');
		else if (c >= 'a' && c <= 'f')
			t->secret = (t->secret << 4) | (uint64) (c - 'a' + 10);
		else
			return false;
	}
	return true;
}

/* Parse the format of 0.2.0, "K:<uuid>:<n>:<n>"; false if malformed. */
static bool
parse_token_v0(const char *token, TaskToken *t)
{
	char		uuid_buf[37];
	long long	a;
	long long	b;
	int			consumed = 0;

	if (strlen(token) < 40 || token[1] != ':' || token[38] != ':')
		return false;
	strlcpy(uuid_buf, token + 2, sizeof(uuid_buf));
	if (!ParseCanonicalUuid(uuid_buf, &t->run_id) ||
		sscanf(token + 39, "%lld:%lld%n", &a, &b, &consumed) != 2 ||
		token[39 + consumed] != '\0' || a <= 0 || b <= 0)
		return false;
	t->scheduled_id = a;
	t->third = b;
	return true;
}

/*
 * Parse a task token of the given kind ('D' or 'A'; '\0' for either);
 * malformed tokens are 22023.
 */
static void
parse_token(text *token_text, char kind, TaskToken *t)
{
	char	   *token;
	bool		ok;

	if (token_text == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("task_token must not be null")));
	token = text_to_cstring(token_text);
	memset(t, 0, sizeof(TaskToken));
	t->kind = token[0];
	if ((kind != '\0' && token[0] != kind) ||
		(token[0] != 'D' && token[0] != 'A'))
		ok = false;
	else if (token[1] == '1' && token[2] == ':')
	{
		t->version = 1;
		ok = parse_token_v1(token + 3, t);
	}
	else
		ok = parse_token_v0(token, t);
	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("task_token \"%s\" is not %s task token", token,
						kind == 'D' ? "a decision" :
						kind == 'A' ? "an activity" : "a")));
}

/*
 * The token of a task just claimed: with its secret, or in the format of
 * 0.2.0 when the database has nowhere to keep one (not yet updated).
 */
static char *
make_token(char kind, const char *namespace, const char *workflow_id,
		   pg_uuid_t *run_id, int64 scheduled_id, int64 third,
		   bool secret_null, int64 secret)
{
	if (secret_null)
		return psprintf("%c:%s:%lld:%lld", kind, UuidToCString(run_id),
						(long long) scheduled_id, (long long) third);
	return psprintf("%c1:%d:%s:%d:%s:%s:%lld:%lld:%016llx", kind,
					(int) strlen(namespace), namespace,
					(int) strlen(workflow_id), workflow_id,
					UuidToCString(run_id), (long long) scheduled_id,
					(long long) third, (unsigned long long) secret);
}

/* The token of the decision task started in a loaded run. */
static char *
decision_token(RunState *rs)
{
	return make_token('D', rs->namespace, rs->workflow_id, &rs->run_id,
					  rs->decision_scheduled_id, rs->decision_started_id,
					  rs->task_secret_null, rs->task_secret);
}

/*
 * The decision task this backend last started and returned, and the
 * identity its DecisionTaskStarted records (NULL: none), so that its answer
 * from the same session, with no identity of its own, is recorded with that
 * identity without reading the event back (decision_identity).  The task's
 * secret tells it from every other start of the same ids.  Not for a
 * transient attempt, whose DecisionTaskStarted is written only with its
 * answer.
 */
static struct
{
	bool		valid;
	pg_uuid_t	run_id;
	int64		started_id;
	int64		secret;
	char	   *identity;		/* in TopMemoryContext, or NULL */
}			last_started;

/* The token of the decision task started in rs with identity, remembered */
static char *
started_decision_token(RunState *rs, const char *identity)
{
	if (last_started.identity != NULL)
		pfree(last_started.identity);
	last_started.identity = NULL;
	last_started.valid = !rs->task_secret_null && !DecisionIsTransient(rs);
	if (last_started.valid)
	{
		last_started.run_id = rs->run_id;
		last_started.started_id = rs->decision_started_id;
		last_started.secret = rs->task_secret;
		if (identity != NULL)
			last_started.identity = MemoryContextStrdup(TopMemoryContext,
														identity);
	}
	return decision_token(rs);
}

/*
 * Whether a token was issued for the task it names, whose namespace,
 * workflow id and secret are given: a token with a secret must carry the
 * task's; one without (0.2.0's format) passes only for a task that has none.
 */
static bool
token_matches(TaskToken *t, const char *namespace, const char *workflow_id,
			  bool secret_null, int64 secret)
{
	if (t->version == 0)
		return secret_null;
	return !secret_null && (uint64) secret == t->secret &&
		strcmp(t->namespace, namespace) == 0 &&
		strcmp(t->workflow_id, workflow_id) == 0;
}

/* WF005 for a token whose attempt is over, or that was not issued for it. */
static void
report_stale(text *token, const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_DURABLE_STALE_TOKEN),
			 errmsg("task token \"%s\" is stale", text_to_cstring(token)),
			 errdetail("%s", why)));
}

/* Milliseconds of a poll's wait argument. */
static double
poll_wait_ms(FunctionCallInfo fcinfo, int argno)
{
	if (PG_ARGISNULL(argno))
		return 0;
	return IntervalToSeconds(PG_GETARG_INTERVAL_P(argno), "wait", true) * 1000.0;
}

/*
 * Claim one ready task of the poll's queue (FOR UPDATE SKIP LOCKED, in the
 * claim order, deleted: direct.c), under the limits of its concurrency keys;
 * false when there is none.
 */
static bool
claim_one(PollRequest *pr, char kind, TaskLimitClaim *tc, ClaimedTask *task)
{
	ClaimKeyPolicy policy;

	TaskLimitKeyPolicy(tc, &policy);
	return DirectClaimReadyTask(pr->namespace, pr->task_queue, kind, &policy,
								task);
}

/*
 * Ask the queue's limits (store/task_limits.c) for one more task start;
 * false when they hold the poll back.
 */
static bool
admit_one(PollRequest *pr, char kind, TaskLimitClaim *tc)
{
	long		retry_ms;

	pr->now = DurableNow();
	if (TaskLimitAdmit(tc, pr->namespace, pr->task_queue, kind, pr->now,
					   &retry_ms))
		return true;
	ClaimRetryAfter(retry_ms);
	return false;
}

/* Claim and start a decision task: DecisionTaskStarted and its timeout. */
static void *
claim_decision_task(void *arg)
{
	PollRequest *pr = (PollRequest *) arg;

	for (;;)
	{
		ClaimedTask task;
		RunState	rs;
		TaskLimitClaim tc;

		/* A poll may have waited: its task starts now, not when it began. */
		if (!admit_one(pr, 'd', &tc))
			return NULL;
		if (!claim_one(pr, 'd', &tc, &task))
		{
			TaskLimitAbandon(&tc);
			return NULL;
		}
		/* Its start counts from here; the queue's admission lock is let go. */
		TaskLimitClaimed(&tc, &task);
		if (!LoadRunById(&task.run_id, false, &rs) ||
			!StartDecisionTask(&rs, task.scheduled_event_id, pr->now,
							   pr->identity, true))
		{
			TaskLimitUnclaim(&tc);
			continue;			/* stale: the run moved on */
		}

		return DecisionTaskJson(&rs, started_decision_token(&rs, pr->identity),
								0, pr->identity);
	}
}

/*
 * A decision task that the transaction which made it started for this poll
 * (ReserveWaitingPoller, store/wait.c; start_workflow, api/client.c): read,
 * not claimed, so that the poll writes nothing.  NULL when it is not the
 * task handed over any more (the run closed, or moved on).
 */
static void *
take_decision_task(const TaskHandoff *offer, void *arg)
{
	PollRequest *pr = (PollRequest *) arg;
	RunState	rs;

	if (!ReadRunById((pg_uuid_t *) &offer->run_id, &rs) || !RunIsOpen(&rs) ||
		strcmp(rs.namespace, pr->namespace) != 0 ||
		strcmp(rs.task_queue, pr->task_queue) != 0 ||
		rs.decision_started_id != offer->event_id ||
		rs.task_secret_null || rs.task_secret != offer->secret)
		return NULL;
	return DecisionTaskJson(&rs, decision_token(&rs), 0, pr->identity);
}

/* The JSON of a started activity task. */
static Jsonb *
activity_task_json(ActivityState *a)
{
	JsonBuilder jb;
	TimestampTz deadline = ActivityAttemptDeadline(a);

	JsonBegin(&jb);
	JsonAddText(&jb, "taskToken",
				make_token('A', a->namespace, a->workflow_id, &a->run_id,
						   a->scheduled_event_id, a->attempt,
						   a->task_secret_null, a->task_secret));
	JsonAddText(&jb, "namespace", a->namespace);
	JsonAddText(&jb, "workflowId", a->workflow_id);
	JsonAddText(&jb, "runId", UuidToCString(&a->run_id));
	JsonAddText(&jb, "activityId", a->activity_id);
	JsonAddText(&jb, "activityType", a->activity_type);
	JsonAddJsonb(&jb, "input", a->input);
	JsonAddInt(&jb, "attempt", a->attempt);
	JsonAddTimestamp(&jb, "scheduledTime", a->scheduled_time);
	JsonAddTimestamp(&jb, "startedTime", a->started_time);
	JsonAddJsonb(&jb, "heartbeatDetails", a->heartbeat_details);
	if (a->heartbeat_timeout > 0)
		JsonAddFloat(&jb, "heartbeatTimeout", a->heartbeat_timeout);
	else
		JsonAddNull(&jb, "heartbeatTimeout");
	JsonAddTimestamp(&jb, "deadline", deadline);
	return JsonFinish(&jb);
}

/* Claim and start an activity task. */
static void *
claim_activity_task(void *arg)
{
	PollRequest *pr = (PollRequest *) arg;

	for (;;)
	{
		ClaimedTask task;
		ActivityState a;
		TaskLimitClaim tc;

		/* A poll may have waited: its task starts now, not when it began. */
		if (!admit_one(pr, 'a', &tc))
			return NULL;
		if (!claim_one(pr, 'a', &tc, &task))
		{
			TaskLimitAbandon(&tc);
			return NULL;
		}
		/* Its start counts from here; the queue's admission lock is let go. */
		TaskLimitClaimed(&tc, &task);
		if (!StartActivityAttempt(&task.run_id, task.scheduled_event_id,
								  task.attempt, pr->now, pr->identity, &a))
		{
			TaskLimitUnclaim(&tc);
			continue;			/* stale: canceled, timed out or run closed */
		}
		return activity_task_json(&a);
	}
}

/*
 * An activity attempt that the transaction which scheduled it started for
 * this poll (hand_over_activity): read, not claimed.  NULL when it is not
 * the attempt handed over any more (canceled, timed out, its run closed).
 */
static void *
take_activity_task(const TaskHandoff *offer, void *arg)
{
	PollRequest *pr = (PollRequest *) arg;
	ActivityState a;

	if (!ReadActivity((pg_uuid_t *) &offer->run_id, offer->event_id, &a) ||
		strcmp(a.namespace, pr->namespace) != 0 ||
		strcmp(a.task_queue, pr->task_queue) != 0 ||
		strcmp(a.state, "STARTED") != 0 || a.attempt != offer->attempt ||
		a.task_secret_null || a.task_secret != offer->secret)
		return NULL;
	return activity_task_json(&a);
}

/* The common arguments of the poll functions. */
static void
read_poll_args(FunctionCallInfo fcinfo, PollRequest *pr)
{
	pr->task_queue = CheckName(ARG_TEXT(0), "task_queue");
	pr->identity = PG_ARGISNULL(1) ? CallerIdentity() :
		CheckName(PG_GETARG_TEXT_PP(1), "identity");
	pr->namespace = CheckName(ARG_TEXT(2), "namespace");
	pr->now = DurableNow();
}

/* Claim with an optional wait; the result is copied out of SPI. */
static Datum
poll_for(FunctionCallInfo fcinfo, char kind, void *(*claim) (void *),
		 bool *isnull)
{
	PollRequest pr;
	double		wait_ms;
	Jsonb	   *task;
	Datum		result = (Datum) 0;

	RequireWritableTransaction(kind == 'd' ? "durable.poll_decision_task()" :
							   "durable.poll_activity_task()");

	read_poll_args(fcinfo, &pr);
	wait_ms = poll_wait_ms(fcinfo, 3);
	DurableSPIConnect();
	CheckNamespacePrivilege(pr.namespace, NSPRIV_WORKER);
	RecordPoller(pr.namespace, pr.task_queue, kind, pr.identity, pr.now,
				 wait_ms);
	task = WaitForTask(pr.namespace, pr.task_queue, kind, pr.identity,
					   wait_ms, fcinfo->flinfo, claim,
					   kind == 'd' ? take_decision_task : take_activity_task,
					   &pr);
	if (task != NULL)
		result = SPI_datumTransfer(JsonbPGetDatum(task), false, -1);
	DurableSPIFinish();
	*isnull = (task == NULL);
	return result;
}

PG_FUNCTION_INFO_V1(durable_poll_decision_task);
/* durable.poll_decision_task(task_queue, identity, namespace, wait) */
Datum
durable_poll_decision_task(PG_FUNCTION_ARGS)
{
	bool		isnull;
	Datum		result = poll_for(fcinfo, 'd', claim_decision_task, &isnull);

	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(durable_poll_activity_task);
/* durable.poll_activity_task(task_queue, identity, namespace, wait) */
Datum
durable_poll_activity_task(PG_FUNCTION_ARGS)
{
	bool		isnull;
	Datum		result = poll_for(fcinfo, 'a', claim_activity_task, &isnull);

	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(durable_poll_activity_tasks);
/*
 * durable.poll_activity_tasks(task_queue, identity, namespace, wait,
 * max_tasks): up to max_tasks activity tasks, waiting only for the first.
 */
Datum
durable_poll_activity_tasks(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	PollRequest pr;
	double		wait_ms;
	int32		max_tasks;
	Jsonb	   *task;
	int			n = 0;

	RequireWritableTransaction("durable.poll_activity_tasks()");

	read_poll_args(fcinfo, &pr);
	wait_ms = poll_wait_ms(fcinfo, 3);
	if (PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("max_tasks must not be null")));
	max_tasks = PG_GETARG_INT32(4);
	if (max_tasks < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_tasks must be at least 1")));

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	DurableSPIConnect();
	CheckNamespacePrivilege(pr.namespace, NSPRIV_WORKER);
	RecordPoller(pr.namespace, pr.task_queue, 'a', pr.identity, pr.now,
				 wait_ms);
	task = WaitForTask(pr.namespace, pr.task_queue, 'a', pr.identity,
					   wait_ms, fcinfo->flinfo, claim_activity_task,
					   take_activity_task, &pr);
	while (task != NULL)
	{
		Datum		value = JsonbPGetDatum(task);
		bool		null = false;

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &null);
		if (++n >= max_tasks)
			break;
		task = claim_activity_task(&pr);
	}
	DurableSPIFinish();
	return (Datum) 0;
}

/* Lock the run of a decision token and check that its task is current. */
static void
load_decision(text *token_text, TaskToken *t, RunState *rs)
{
	parse_token(token_text, 'D', t);
	if (!LoadRunById(&t->run_id, false, rs))
		report_stale(token_text, "Its workflow run does not exist.");
	CheckNamespacePrivilege(rs->namespace, NSPRIV_WORKER);
	if (!RunIsOpen(rs))
		report_stale(token_text, "Its workflow run is closed.");
	if (rs->decision_scheduled_id != t->scheduled_id ||
		rs->decision_started_id != t->third)
		report_stale(token_text, "The decision task timed out or was answered already.");
	if (!token_matches(t, rs->namespace, rs->workflow_id, rs->task_secret_null,
					   rs->task_secret))
		report_stale(token_text, "It was not issued for the current attempt of its task.");
}

/*
 * The identity a decision task's answer is recorded with: the one the worker
 * passes, else the one it polled with (DecisionTaskStarted's), as a Cadence
 * worker sends the same identity to both; the session's role only when
 * neither is known.  DecisionTaskStarted is read by one probe of the
 * history's primary key, unless this session started the task
 * (started_decision_token).
 */
static const char *
decision_identity(const char *passed, RunState *rs)
{
	HistoryScan hs;
	HistoryEvent ev;
	char	   *identity = NULL;

	if (passed != NULL)
		return passed;
	if (last_started.valid && !rs->task_secret_null &&
		last_started.secret == rs->task_secret &&
		last_started.started_id == rs->decision_started_id &&
		memcmp(&last_started.run_id, &rs->run_id, sizeof(pg_uuid_t)) == 0)
		return last_started.identity != NULL ?
			pstrdup(last_started.identity) : CallerIdentity();
	BeginHistoryScanAfter(&hs, &rs->run_id, rs->decision_started_id - 1);
	if (HistoryScanNext(&hs, &ev) && ev.event_id == rs->decision_started_id &&
		ev.attributes != NULL)
	{
		JsonbValue *v = JsonGetField(ev.attributes, "identity");

		if (v != NULL && v->type == jbvString)
			identity = pnstrdup(v->val.string.val, v->val.string.len);
	}
	EndHistoryScan(&hs);
	return identity != NULL ? identity : CallerIdentity();
}

/* Push a jsonb value, or null, as the value of the key just pushed. */
static void
push_jsonb_value(JsonbParseState **st, Jsonb *value, JsonbIteratorToken tok)
{
	JsonbValue	v;

	if (value == NULL)
		v.type = jbvNull;
	else
	{
		v.type = jbvBinary;
		v.val.binary.data = &value->root;
		v.val.binary.len = VARSIZE(value) - VARHDRSZ;
	}
	(void) pushJsonbValue(st, tok, &v);
}

/*
 * Push, as the value of the key just pushed, the decision task started for
 * the caller of an answer or of an eager start (eager dispatch:
 * StartTakenDecisionTask, start_workflow_eager in api/client.c) as a poll
 * returns it, with its history after the event history_after (0: the whole
 * history); null when rs is NULL, no task having been started.
 */
static void
push_taken_decision(JsonbParseState **st, RunState *rs, int64 history_after,
					const char *identity)
{
	if (rs == NULL)
		push_jsonb_value(st, NULL, WJB_VALUE);
	else
		(void) DecisionTaskPush(st, rs, started_decision_token(rs, identity),
								history_after,
								identity);
}

/*
 * What an answer returns to a worker that asked for tasks at once (eager
 * dispatch, docs/api.md "Eager dispatch"): NULL when there is none, else
 *   {"decisionTask": <as poll_decision_task returns it, or null>,
 *    "activityTasks": [<as poll_activity_task returns each>]}
 * copied out of SPI.  The decision task is the one started for the caller
 * in decision_rs (NULL: none; push_taken_decision).  Built as jsonb values,
 * not text: a decision task carries its run's whole history.
 */
static Datum
eager_result(RunState *decision_rs, int64 history_after, const char *identity,
			 Jsonb **activities, int n, bool *isnull)
{
	JsonbParseState *st = NULL;
	JsonbValue *res;
	int			i;

	*isnull = (decision_rs == NULL && n == 0);
	if (*isnull)
		return (Datum) 0;
	(void) pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	JsonbPushKey(&st, "decisionTask");
	push_taken_decision(&st, decision_rs, history_after, identity);
	JsonbPushKey(&st, "activityTasks");
	(void) pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	for (i = 0; i < n; i++)
		push_jsonb_value(&st, activities[i], WJB_ELEM);
	(void) pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	res = pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	return SPI_datumTransfer(JsonbPGetDatum(JsonbValueToJsonb(res)), false, -1);
}

/*
 * What start_workflow_eager (api/client.c) returns, copied out of SPI:
 *   {"runId": ..., "decisionTask": <as poll_decision_task returns it, or null>}
 * the decision task being the one started for the caller in decision_rs
 * (NULL: none), with its whole history.
 */
Datum
EagerStartResult(pg_uuid_t *run_id, RunState *decision_rs,
				 const char *identity)
{
	JsonbParseState *st = NULL;
	JsonbValue *res;

	(void) pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	JsonbPushString(&st, "runId", UuidToCString(run_id));
	JsonbPushKey(&st, "decisionTask");
	push_taken_decision(&st, decision_rs, 0, identity);
	res = pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	return SPI_datumTransfer(JsonbPGetDatum(JsonbValueToJsonb(res)), false, -1);
}

/*
 * The history_after argument of an answer (argno; 0 when absent or NULL):
 * the caller keeps the run's history through that event, and the decision
 * task returned to it carries only the events after it.  It cannot be past
 * the run's last event.
 */
static int64
arg_history_after(FunctionCallInfo fcinfo, int argno, RunState *rs)
{
	int64		after;

	if (PG_NARGS() <= argno || PG_ARGISNULL(argno))
		return 0;
	after = PG_GETARG_INT64(argno);
	if (after < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("history_after must not be negative")));
	if (after > rs->last_event_id)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("history_after %lld is past the last event of the run, %lld",
						(long long) after, (long long) rs->last_event_id),
				 errhint("Pass the id of the last event the worker has, or NULL for the whole history.")));
	return after;
}

/* A boolean argument that must not be null. */
static bool
arg_flag(FunctionCallInfo fcinfo, int argno, const char *name)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", name)));
	return PG_GETARG_BOOL(argno);
}

/*
 * Start the decision task scheduled for the caller of a locked run
 * (take_decision) for the waiting poll reserved for it instead
 * (ReserveWaitingPoller, store/wait.c), as its claim would start it
 * (DecisionTaskStarted with the poll's identity, its timeout, its token's
 * secret), and offer it to the poll, which gets it when this transaction
 * commits.  Returns what StartTakenDecisionTask returns (false: the caller
 * saves the run); when no task was so scheduled the poll goes back to its
 * claims.
 */
bool
HandOverTakenDecision(RunState *rs, TimestampTz now, const char *identity)
{
	TaskHandoff offer;
	bool		taken = rs->decision_taken;
	bool		written = StartTakenDecisionTask(rs, now, identity);

	/* Not scheduled for the caller: queued, or one was started already. */
	if (!taken || !RunIsOpen(rs) || rs->task_secret_null)
	{
		CancelPollerReservation();
		return written;
	}
	memset(&offer, 0, sizeof(offer));
	memcpy(&offer.run_id, &rs->run_id, sizeof(pg_uuid_t));
	offer.event_id = rs->decision_started_id;
	offer.secret = rs->task_secret;
	OfferToReservedPoller(&offer);
	return written;
}

/*
 * Start the activity that ScheduleActivity kept for a waiting poll of its
 * queue (engine/activities.c, ReserveWaitingPoller in store/wait.c) with the
 * poll's identity, as the poll's claim would start it, and offer it to the
 * poll, which gets it when this transaction commits.  One dropped meanwhile
 * (canceled by a later decision of the same list, or its run closed) is not:
 * the poll goes back to its claims.
 */
static void
hand_over_activity(RunState *rs, TimestampTz now)
{
	ActivityState a;
	TaskHandoff offer;

	if (!StartActivityAttempt(&rs->run_id, rs->handoff_activity, 1, now,
							  rs->handoff_identity, &a) ||
		a.task_secret_null)
	{
		CancelPollerReservation();
		return;
	}
	memset(&offer, 0, sizeof(offer));
	memcpy(&offer.run_id, &rs->run_id, sizeof(pg_uuid_t));
	offer.event_id = a.scheduled_event_id;
	offer.attempt = a.attempt;
	offer.secret = a.task_secret;
	OfferToReservedPoller(&offer);
}

/*
 * Start the activities that ScheduleActivity kept for the caller of a
 * decision task's completion (requestEagerExecution, engine/activities.c),
 * as a poll starts an attempt; their tasks go in tasks.  Returns how many.
 * One dropped meanwhile (canceled by a later decision of the same list, or
 * its run closed) is left out.
 */
static int
start_eager_activities(RunState *rs, TimestampTz now, const char *identity,
					   Jsonb **tasks)
{
	int			n = 0;
	int			i;

	for (i = 0; i < rs->n_eager; i++)
	{
		ActivityState a;

		if (StartActivityAttempt(&rs->run_id, rs->eager_ids[i], 1, now,
								 identity, &a))
			tasks[n++] = activity_task_json(&a);
	}
	rs->n_eager = 0;
	return n;
}

PG_FUNCTION_INFO_V1(durable_complete_decision_task);
/*
 * durable.complete_decision_task(task_token, decisions, identity,
 * return_new_task, max_eager_activities, history_after): with
 * return_new_task, the decision task the completion leaves scheduled comes
 * back started for the caller (with the history after history_after), and
 * up to max_eager_activities activities it schedules with
 * requestEagerExecution on the decision task's queue come back started
 * (eager_result).
 */
Datum
durable_complete_decision_task(PG_FUNCTION_ARGS)
{
	text	   *token = ARG_TEXT(0);
	Jsonb	   *decisions = ARG_JSONB(1);
	const char *passed = PG_ARGISNULL(2) ? NULL :
		CheckName(PG_GETARG_TEXT_PP(2), "identity");
	bool		return_new = PG_NARGS() > 3 &&
		arg_flag(fcinfo, 3, "return_new_task");
	int32		max_eager = 0;
	int64		history_after;
	const char *identity;
	TimestampTz now = DurableNow();
	TaskToken	t;
	RunState	rs;
	Decision   *list;
	DecisionOverLimit over;
	int			n;
	RunState   *next = NULL;
	Jsonb	  **activities = NULL;
	int			n_activities = 0;
	Datum		result;
	bool		isnull;

	if (PG_NARGS() > 4)
	{
		if (PG_ARGISNULL(4))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("max_eager_activities must not be null")));
		max_eager = PG_GETARG_INT32(4);
		if (max_eager < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("max_eager_activities must not be negative")));
	}

	RequireWritableTransaction("durable.complete_decision_task()");

	DurableSPIConnect();
	load_decision(token, &t, &rs);
	history_after = arg_history_after(fcinfo, 5, &rs);
	identity = decision_identity(passed, &rs);
	n = ParseDecisionsOverLimit(&rs, decisions, &list, &over);
	if (over.message != NULL)
		TerminateForOversizedDecision(&rs, now, identity, &over);
	else
	{
		rs.take_decision = return_new;
		rs.eager_activities = Min(max_eager, n);
		rs.may_hand_over = MayHandOverTasks();
		if (CompleteDecisionTask(&rs, now, list, n, identity))
			next = &rs;
		if (rs.n_eager > 0)
		{
			activities = palloc(sizeof(Jsonb *) * rs.n_eager);
			n_activities = start_eager_activities(&rs, now, identity,
												  activities);
		}
		if (rs.handoff_activity != 0)
			hand_over_activity(&rs, now);
	}
	result = eager_result(next, history_after, identity, activities,
						  n_activities, &isnull);
	DurableSPIFinish();
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(durable_fail_decision_task);
/* durable.fail_decision_task(task_token, cause, details, identity) */
Datum
durable_fail_decision_task(PG_FUNCTION_ARGS)
{
	text	   *token = ARG_TEXT(0);
	char	   *cause = CheckName(ARG_TEXT(1), "cause");
	Jsonb	   *details = ARG_JSONB(2);
	const char *passed = PG_ARGISNULL(3) ? NULL :
		CheckName(PG_GETARG_TEXT_PP(3), "identity");
	const char *identity;
	TimestampTz now = DurableNow();
	TaskToken	t;
	RunState	rs;

	RequireWritableTransaction("durable.fail_decision_task()");

	CheckPayload(details, "details");
	DurableSPIConnect();
	load_decision(token, &t, &rs);
	identity = decision_identity(passed, &rs);
	FailDecisionTask(&rs, now, cause, details, identity,
					 strcmp(cause, "UnknownWorkflowType") == 0);
	DurableSPIFinish();
	PG_RETURN_VOID();
}

/*
 * Lock the run and the activity of an activity token and check that the
 * attempt is the current one; a closed run's activities are gone (WF005).
 */
static void
load_activity_attempt(text *token_text, TaskToken *t, RunState *rs,
					  ActivityState *a, bool take)
{
	parse_token(token_text, 'A', t);
	if (!LoadRunById(&t->run_id, false, rs))
		report_stale(token_text, "Its workflow run does not exist.");
	CheckNamespacePrivilege(rs->namespace, NSPRIV_WORKER);
	if (!RunIsOpen(rs))
		report_stale(token_text, "Its workflow run is closed; the outcome is not recorded.");
	if (!(take ? TakeActivity(&t->run_id, t->scheduled_id, a) :
		  LoadActivity(&t->run_id, t->scheduled_id, a)))
		report_stale(token_text, "The activity is no longer pending.");
	if (a->attempt != t->third || strcmp(a->state, "SCHEDULED") == 0)
		report_stale(token_text, "The attempt timed out and the activity was retried or ended.");
	if (!token_matches(t, a->namespace, a->workflow_id, a->task_secret_null,
					   a->task_secret))
		report_stale(token_text, "It was not issued for the current attempt of its task.");
}

PG_FUNCTION_INFO_V1(durable_complete_activity);
/*
 * durable.complete_activity(task_token, result, return_new_task,
 * history_after): with return_new_task, the decision task the completion
 * schedules comes back started for the caller (eager_result), under the
 * identity the attempt was polled with, with the history after
 * history_after.
 */
Datum
durable_complete_activity(PG_FUNCTION_ARGS)
{
	text	   *token = ARG_TEXT(0);
	Jsonb	   *result = ARG_JSONB(1);
	bool		return_new = PG_NARGS() > 2 &&
		arg_flag(fcinfo, 2, "return_new_task");
	TimestampTz now = DurableNow();
	TaskToken	t;
	RunState	rs;
	ActivityState a;
	const char *identity;
	int64		history_after;
	RunState   *next = NULL;
	Datum		answer;
	bool		isnull;
	bool		handed;
	char		poller[HANDOFF_NAME_LEN];

	RequireWritableTransaction("durable.complete_activity()");

	CheckPayload(result, "result");
	parse_token(token, 'A', &t);
	DurableSPIConnect();
	if (!LoadRunById(&t.run_id, false, &rs))
		report_stale(token, "Its workflow run does not exist.");
	CheckNamespacePrivilege(rs.namespace, NSPRIV_WORKER);
	if (!RunIsOpen(&rs))
		report_stale(token, "Its workflow run is closed; the outcome is not recorded.");
	history_after = arg_history_after(fcinfo, 3, &rs);
	if (!TakeCompletedActivity(&t.run_id, t.scheduled_id, (int32) t.third, now, &a))
		report_stale(token, "The attempt timed out and the activity was retried or ended, or it is no longer pending.");
	if (!token_matches(&t, a.namespace, a.workflow_id, a.task_secret_null,
					   a.task_secret))
		report_stale(token, "It was not issued for the current attempt of its task.");
	identity = a.last_worker_identity != NULL ? a.last_worker_identity :
		CallerIdentity();
	/* Else a poll waiting for the run's queue gets the decision task. */
	handed = !return_new && MayHandOverTasks() &&
		ReserveWaitingPoller(rs.namespace, rs.task_queue, 'd', poller);
	rs.take_decision = return_new || handed;
	CompleteActivity(&rs, &a, now, result, a.last_worker_identity);
	/* The task started for the caller (or the poll) is written with the run. */
	if (handed)
	{
		if (!HandOverTakenDecision(&rs, now, poller))
			SaveRun(&rs);
	}
	else if (StartTakenDecisionTask(&rs, now, identity))
		next = &rs;
	else
		SaveRun(&rs);
	answer = eager_result(next, history_after, identity, NULL, 0, &isnull);
	DurableSPIFinish();
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(answer);
}

PG_FUNCTION_INFO_V1(durable_fail_activity);
/* durable.fail_activity(task_token, reason, details, next_retry_delay) */
Datum
durable_fail_activity(PG_FUNCTION_ARGS)
{
	text	   *token = ARG_TEXT(0);
	char	   *reason = PG_ARGISNULL(1) ? "durable:Generic" :
		CheckName(PG_GETARG_TEXT_PP(1), "reason");
	Jsonb	   *details = ARG_JSONB(2);
	double		delay = -1;
	TaskToken	t;
	RunState	rs;
	ActivityState a;

	RequireWritableTransaction("durable.fail_activity()");

	CheckPayload(details, "details");
	if (!PG_ARGISNULL(3))
		delay = IntervalToSeconds(PG_GETARG_INTERVAL_P(3), "next_retry_delay",
								  true);
	DurableSPIConnect();
	load_activity_attempt(token, &t, &rs, &a, false);
	FailActivityAttempt(&rs, &a, DurableNow(), reason, details, delay, NULL);
	if (RunIsOpen(&rs))
		SaveRun(&rs);
	DurableSPIFinish();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(durable_report_activity_canceled);
/* durable.report_activity_canceled(task_token, details) */
Datum
durable_report_activity_canceled(PG_FUNCTION_ARGS)
{
	text	   *token = ARG_TEXT(0);
	Jsonb	   *details = ARG_JSONB(1);
	TaskToken	t;
	RunState	rs;
	ActivityState a;

	RequireWritableTransaction("durable.report_activity_canceled()");

	CheckPayload(details, "details");
	DurableSPIConnect();
	load_activity_attempt(token, &t, &rs, &a, true);
	CancelActivity(&rs, &a, DurableNow(), details, a.last_worker_identity, 0);
	SaveRun(&rs);
	DurableSPIFinish();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(durable_heartbeat_activity);
/*
 * durable.heartbeat_activity(task_token, details): keeps the attempt alive
 * and returns true once the activity or its workflow has a cancel request.
 * It locks only the activity row.
 */
Datum
durable_heartbeat_activity(PG_FUNCTION_ARGS)
{
	text	   *token = ARG_TEXT(0);
	Jsonb	   *details = ARG_JSONB(1);
	TaskToken	t;
	Datum		values[5];
	char		nulls[5] = "     ";
	bool		isnull;
	bool		cancel;
	bool		secret_null;
	int64		secret;

	RequireWritableTransaction("durable.heartbeat_activity()");

	parse_token(token, 'A', &t);
	CheckPayload(details, "details");
	DurableSPIConnect();
	values[0] = UUIDPGetDatum(&t.run_id);
	values[1] = Int64GetDatum(t.scheduled_id);
	values[2] = Int32GetDatum((int32) t.third);
	values[3] = TimestampTzGetDatum(DurableNow());
	values[4] = details ? JsonbPGetDatum(details) : (Datum) 0;
	if (details == NULL)
		nulls[4] = 'n';
	if (RunPlan(&heartbeat_plan[TaskSecretsStored() ? 1 : 0], values, nulls,
				false, 1) == 0)
		report_stale(token, "The attempt is over, or its workflow run is closed.");
	cancel = DatumGetBool(SPIGetDatum(0, 1, &isnull)) && !isnull;
	secret = DatumGetInt64(SPIGetDatum(0, 4, &secret_null));
	if (!token_matches(&t, SPIGetText(0, 2), SPIGetText(0, 3), secret_null,
					   secret))
		report_stale(token, "It was not issued for the current attempt of its task.");
	/* Checked after the update, which the error then undoes. */
	CheckNamespacePrivilege(SPIGetText(0, 2), NSPRIV_WORKER);
	DurableSPIFinish();
	PG_RETURN_BOOL(cancel);
}

PG_FUNCTION_INFO_V1(durable_task_token_info);
/*
 * durable.task_token_info(task_token): what a token names, without its
 * secret, for a router that sends answers to the database owning the
 * workflow.  It reads no table.
 */
Datum
durable_task_token_info(PG_FUNCTION_ARGS)
{
	TaskToken	t;
	JsonBuilder jb;

	parse_token(PG_GETARG_TEXT_PP(0), '\0', &t);
	JsonBegin(&jb);
	JsonAddText(&jb, "kind", t.kind == 'D' ? "decision" : "activity");
	JsonAddInt(&jb, "version", t.version);
	JsonAddText(&jb, "namespace", t.namespace);
	JsonAddText(&jb, "workflowId", t.workflow_id);
	JsonAddText(&jb, "runId", UuidToCString(&t.run_id));
	JsonAddInt(&jb, "scheduledEventId", t.scheduled_id);
	JsonAddInt(&jb, t.kind == 'D' ? "startedEventId" : "attempt", t.third);
	PG_RETURN_JSONB_P(JsonFinish(&jb));
}

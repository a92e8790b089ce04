/*-------------------------------------------------------------------------
 *
 * backoff.c
 *	  Retry policies: parsing, validation (engine rule 1), the backoff
 *	  delay and the stop rules (engine rule 2).
 *
 * Pure computation: no SPI, no catalog access.  Every place that accepts a
 * policy (start_workflow, decisions, namespaces, durable.retry_policy())
 * goes through ParseRetryPolicy or ValidateRetryPolicy, so the rules and
 * their messages are the same everywhere.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "durable.h"
#include "base/backoff.h"
#include "base/json.h"
#include "base/util.h"

#define F_INITIAL		"initialIntervalInSeconds"
#define F_COEFFICIENT	"backoffCoefficient"
#define F_MAXIMUM		"maximumIntervalInSeconds"
#define F_EXPIRATION	"expirationIntervalInSeconds"
#define F_ATTEMPTS		"maximumAttempts"
#define F_NON_RETRIABLE	"nonRetriableErrorReasons"

/* The names a message uses for each field: JSON keys, or SQL arguments */
typedef struct PolicyFieldNames
{
	const char *initial;
	const char *coefficient;
	const char *maximum;
	const char *expiration;
	const char *attempts;
} PolicyFieldNames;

static const PolicyFieldNames json_names = {
	F_INITIAL, F_COEFFICIENT, F_MAXIMUM, F_EXPIRATION, F_ATTEMPTS
};

static const PolicyFieldNames sql_names = {
	"initial_interval", "backoff_coefficient", "maximum_interval",
	"expiration_interval", "maximum_attempts"
};

/* "argname.field" for JSON policies, "field" for SQL arguments. */
static char *
field_label(const char *argname, const char *field)
{
	if (argname == NULL)
		return pstrdup(field);
	return psprintf("%s.%s", argname, field);
}

/* A numeric field of the policy as a double; absent or null gives false. */
static bool
get_number(Jsonb *policy, const char *argname, const char *field,
		   double *out)
{
	JsonbValue *v = JsonGetField(policy, field);

	if (v == NULL || v->type == jbvNull)
		return false;
	if (v->type != jbvNumeric)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a number", field_label(argname, field))));
	*out = NumericToDouble(v->val.numeric);
	return true;
}

/*
 * Parse a retry policy in Cadence's JSON form into out, without checking
 * the ranges of its numbers.  Unknown keys are rejected, so that a misspelt
 * field does not silently mean "no limit".
 */
static void
parse_policy(Jsonb *policy, const char *argname, RetryPolicy *out)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	JsonbValue *reasons;
	double		d;

	memset(out, 0, sizeof(RetryPolicy));
	out->backoff_coefficient = 2.0;

	if (!JB_ROOT_IS_OBJECT(policy))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a JSON object", argname),
				 errhint("Build one with durable.retry_policy().")));

	/* Reject unknown keys. */
	it = JsonbIteratorInit(&policy->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		char	   *key;

		if (tok != WJB_KEY)
			continue;
		key = pnstrdup(v.val.string.val, v.val.string.len);
		if (strcmp(key, F_INITIAL) != 0 && strcmp(key, F_COEFFICIENT) != 0 &&
			strcmp(key, F_MAXIMUM) != 0 && strcmp(key, F_EXPIRATION) != 0 &&
			strcmp(key, F_ATTEMPTS) != 0 && strcmp(key, F_NON_RETRIABLE) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s has an unknown field \"%s\"", argname, key),
					 errdetail("The fields are %s, %s, %s, %s, %s and %s.",
							   F_INITIAL, F_COEFFICIENT, F_MAXIMUM,
							   F_EXPIRATION, F_ATTEMPTS, F_NON_RETRIABLE)));
	}

	if (!get_number(policy, argname, F_INITIAL, &out->initial_interval))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is required", field_label(argname, F_INITIAL))));
	(void) get_number(policy, argname, F_COEFFICIENT, &out->backoff_coefficient);
	(void) get_number(policy, argname, F_MAXIMUM, &out->maximum_interval);
	(void) get_number(policy, argname, F_EXPIRATION, &out->expiration_interval);
	if (get_number(policy, argname, F_ATTEMPTS, &d))
	{
		if (d != floor(d))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must be a whole number",
							field_label(argname, F_ATTEMPTS))));
		if (d < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must not be negative",
							field_label(argname, F_ATTEMPTS))));
		if (d > PG_INT32_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must be at most %d",
							field_label(argname, F_ATTEMPTS), PG_INT32_MAX)));
		out->maximum_attempts = (int32) d;
	}

	reasons = JsonGetField(policy, F_NON_RETRIABLE);
	if (reasons != NULL && reasons->type != jbvNull)
	{
		JsonbIterator *rit;
		int			n = 0;

		if (reasons->type != jbvBinary ||
			!JsonContainerIsArray(reasons->val.binary.data))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must be an array of strings",
							field_label(argname, F_NON_RETRIABLE))));
		out->non_retriable = palloc(sizeof(char *) *
									(JsonContainerSize(reasons->val.binary.data) + 1));
		rit = JsonbIteratorInit(reasons->val.binary.data);
		while ((tok = JsonbIteratorNext(&rit, &v, true)) != WJB_DONE)
		{
			if (tok != WJB_ELEM)
				continue;
			if (v.type != jbvString)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("%s must be an array of strings",
								field_label(argname, F_NON_RETRIABLE))));
			out->non_retriable[n++] = pnstrdup(v.val.string.val,
											   v.val.string.len);
		}
		out->n_non_retriable = n;
	}
}

/* Parse and validate (ValidateRetryPolicy) a retry policy a user gave. */
void
ParseRetryPolicy(Jsonb *policy, const char *argname, RetryPolicy *out)
{
	parse_policy(policy, argname, out);
	ValidateRetryPolicy(out, argname, false);
}

/*
 * Read a retry policy the engine stored after validating it (activities,
 * runs, namespaces).  One stored by an older version may exceed today's
 * bounds: it is clamped into them instead of refused, so that a run or a
 * namespace from before never makes a later call fail.
 */
void
ReadStoredRetryPolicy(Jsonb *policy, RetryPolicy *out)
{
	parse_policy(policy, "retry_policy", out);
	if (!(out->initial_interval > 0))
		out->initial_interval = 1;
	out->initial_interval = Min(out->initial_interval, DURABLE_MAX_DURATION_SECS);
	if (!(out->backoff_coefficient >= 1))
		out->backoff_coefficient = 1;
	out->backoff_coefficient = Min(out->backoff_coefficient,
								   DURABLE_MAX_BACKOFF_COEFFICIENT);
	if (!(out->maximum_interval > 0))
		out->maximum_interval = 100 * out->initial_interval;
	out->maximum_interval = Max(Min(out->maximum_interval, DURABLE_MAX_DURATION_SECS),
								out->initial_interval);
	if (!(out->expiration_interval > 0))
		out->expiration_interval = 0;
	out->expiration_interval = Min(out->expiration_interval,
								   DURABLE_MAX_DURATION_SECS);
	if (out->maximum_attempts < 0)
		out->maximum_attempts = 0;
}

/*
 * Engine rule 1; fills in the default maximum interval.
 * argname NULL with sql_names set names the SQL arguments of
 * durable.retry_policy() instead of JSON fields.
 */
void
ValidateRetryPolicy(const RetryPolicy *cp, const char *argname,
					bool sql_argument_names)
{
	RetryPolicy *p = (RetryPolicy *) cp;
	const PolicyFieldNames *n = sql_argument_names ? &sql_names : &json_names;
	const char *arg = sql_argument_names ? NULL : argname;

	if (!(p->initial_interval > 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be greater than zero",
						field_label(arg, n->initial))));
	(void) CheckSeconds(p->initial_interval, field_label(arg, n->initial), false);
	if (!(p->backoff_coefficient >= 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be at least 1", field_label(arg, n->coefficient))));
	if (p->backoff_coefficient > DURABLE_MAX_BACKOFF_COEFFICIENT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be at most %g", field_label(arg, n->coefficient),
						DURABLE_MAX_BACKOFF_COEFFICIENT)));
	if (p->maximum_interval == 0)
		p->maximum_interval = Min(100 * p->initial_interval,
								  DURABLE_MAX_DURATION_SECS);
	else if (!(p->maximum_interval >= p->initial_interval))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be less than %s",
						field_label(arg, n->maximum),
						field_label(arg, n->initial))));
	(void) CheckSeconds(p->maximum_interval, field_label(arg, n->maximum), false);
	if (!(p->expiration_interval >= 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be negative",
						field_label(arg, n->expiration))));
	(void) CheckSeconds(p->expiration_interval, field_label(arg, n->expiration),
						true);
	if (p->maximum_attempts < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be negative",
						field_label(arg, n->attempts))));
	if (p->maximum_attempts == 0 && p->expiration_interval == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s needs %s or %s",
						sql_argument_names ? "a retry policy" : argname,
						field_label(arg, n->attempts),
						field_label(arg, n->expiration)),
				 errdetail("A policy with neither would retry forever.")));
}

/* The normalised JSON form of a validated policy. */
Jsonb *
RetryPolicyToJsonb(const RetryPolicy *p)
{
	JsonBuilder jb;
	int			i;

	JsonBegin(&jb);
	JsonAddFloat(&jb, F_INITIAL, p->initial_interval);
	JsonAddFloat(&jb, F_COEFFICIENT, p->backoff_coefficient);
	JsonAddFloat(&jb, F_MAXIMUM, p->maximum_interval);
	JsonAddFloat(&jb, F_EXPIRATION, p->expiration_interval);
	JsonAddInt(&jb, F_ATTEMPTS, p->maximum_attempts);
	JsonBeginArray(&jb, F_NON_RETRIABLE);
	for (i = 0; i < p->n_non_retriable; i++)
		JsonAddText(&jb, NULL, p->non_retriable[i]);
	JsonEndArray(&jb);
	return JsonFinish(&jb);
}

/* A copy of policy src, its reasons too, in the current memory context */
static void
copy_policy(const RetryPolicy *src, RetryPolicy *dst)
{
	*dst = *src;
	dst->non_retriable = palloc(sizeof(char *) * Max(src->n_non_retriable, 1));
	for (int i = 0; i < src->n_non_retriable; i++)
		dst->non_retriable[i] = pstrdup(src->non_retriable[i]);
}

/*
 * ReadStoredRetryPolicy, and the normalised JSON form of what it read
 * (RetryPolicyToJsonb), both allocated in the current memory context: what
 * scheduling an activity records.  Most activities of a backend are
 * scheduled with the same policy (their namespace's, or their worker's), so
 * the last one is remembered, and a policy equal to it byte for byte costs
 * a comparison and two copies instead of a parse and a build (a few percent
 * of a SQL workflow's instructions, bench/instructions.sh).  The result
 * depends on the bytes alone, so nothing has to invalidate it.
 */
Jsonb *
ReadStoredRetryPolicyNormalized(Jsonb *policy, RetryPolicy *out)
{
	static MemoryContext cxt = NULL;
	static Jsonb *last_stored = NULL;
	static Jsonb *last_normalized = NULL;
	static RetryPolicy last_read;
	Jsonb	   *normalized;
	MemoryContext oldcxt;

	if (last_stored != NULL && VARSIZE(policy) == VARSIZE(last_stored) &&
		memcmp(policy, last_stored, VARSIZE(policy)) == 0)
	{
		copy_policy(&last_read, out);
		normalized = palloc(VARSIZE(last_normalized));
		memcpy(normalized, last_normalized, VARSIZE(last_normalized));
		return normalized;
	}

	ReadStoredRetryPolicy(policy, out);
	normalized = RetryPolicyToJsonb(out);

	/* Remembered only once both are made: an error above keeps the old one */
	if (cxt == NULL)
		cxt = AllocSetContextCreate(TopMemoryContext,
									"durable retry policy",
									ALLOCSET_SMALL_SIZES);
	last_stored = NULL;
	MemoryContextReset(cxt);
	oldcxt = MemoryContextSwitchTo(cxt);
	copy_policy(out, &last_read);
	last_normalized = palloc(VARSIZE(normalized));
	memcpy(last_normalized, normalized, VARSIZE(normalized));
	last_stored = palloc(VARSIZE(policy));
	memcpy(last_stored, policy, VARSIZE(policy));
	MemoryContextSwitchTo(oldcxt);
	return normalized;
}

/*
 * The delay after the n-th failed attempt: min(initial * coef^(n-1), max),
 * saturating: whatever the policy and n, the result is a number of seconds
 * from 0 to DURABLE_MAX_DURATION_SECS (pow's overflow to infinity, or a NaN,
 * gives the maximum).
 */
double
RetryDelay(const RetryPolicy *p, int failed_attempt)
{
	double		cap = p->maximum_interval;
	double		delay;

	if (!(cap > 0) || cap > DURABLE_MAX_DURATION_SECS)
		cap = DURABLE_MAX_DURATION_SECS;
	if (failed_attempt < 1)
		failed_attempt = 1;
	delay = p->initial_interval * pow(p->backoff_coefficient, failed_attempt - 1);
	if (isnan(delay) || delay > cap)
		delay = cap;
	if (delay < 0)
		delay = 0;
	return delay;
}

/*
 * Whether the failed_attempt-th attempt, failed with reason at now, is
 * retried (engine rule 2), and after how long.  override_delay >= 0 replaces the
 * computed delay; deadline DT_NOEND means none.
 */
RetryVerdict
DecideRetry(const RetryPolicy *p, int failed_attempt, const char *reason,
			TimestampTz now, TimestampTz first_scheduled, TimestampTz deadline,
			double override_delay, double *delay_out)
{
	double		delay;
	TimestampTz next;
	int			i;

	*delay_out = 0;
	if (p == NULL)
		return RETRY_NO_POLICY;
	for (i = 0; reason != NULL && i < p->n_non_retriable; i++)
		if (strcmp(reason, p->non_retriable[i]) == 0)
			return RETRY_NON_RETRIABLE;
	if (p->maximum_attempts > 0 && failed_attempt >= p->maximum_attempts)
		return RETRY_ATTEMPTS_EXHAUSTED;

	delay = override_delay >= 0 ? override_delay : RetryDelay(p, failed_attempt);
	delay = Min(delay, DURABLE_MAX_DURATION_SECS);
	next = TimestampPlusSeconds(now, delay);
	if (p->expiration_interval > 0 &&
		next > TimestampPlusSeconds(first_scheduled, p->expiration_interval))
		return RETRY_EXPIRED;
	if (deadline != DT_NOEND && next > deadline)
		return RETRY_PAST_DEADLINE;
	*delay_out = delay;
	return RETRY_YES;
}

/* A word for each verdict, for history attributes and messages. */
const char *
RetryVerdictName(RetryVerdict v)
{
	switch (v)
	{
		case RETRY_YES:
			return "RETRY";
		case RETRY_NO_POLICY:
			return "RETRY_POLICY_NOT_SET";
		case RETRY_NON_RETRIABLE:
			return "NON_RETRYABLE_FAILURE";
		case RETRY_ATTEMPTS_EXHAUSTED:
			return "MAXIMUM_ATTEMPTS_REACHED";
		case RETRY_EXPIRED:
			return "EXPIRATION_INTERVAL_EXCEEDED";
		case RETRY_PAST_DEADLINE:
			return "TIMEOUT";
		case RETRY_CANCEL_REQUESTED:
			return "CANCEL_REQUESTED";
	}
	return "UNKNOWN";
}

PG_FUNCTION_INFO_V1(durable_retry_policy);
/*
 * durable.retry_policy(initial_interval, backoff_coefficient, maximum_interval,
 *		expiration_interval, maximum_attempts, non_retryable_error_reasons)
 * returns the validated policy in Cadence's JSON form.
 */
Datum
durable_retry_policy(PG_FUNCTION_ARGS)
{
	RetryPolicy p;

	memset(&p, 0, sizeof(p));
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("initial_interval must not be null")));
	p.initial_interval = IntervalToSeconds(PG_GETARG_INTERVAL_P(0),
										   "initial_interval", false);
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("backoff_coefficient must not be null")));
	p.backoff_coefficient = PG_GETARG_FLOAT8(1);
	if (!PG_ARGISNULL(2))
		p.maximum_interval = IntervalToSeconds(PG_GETARG_INTERVAL_P(2),
											   "maximum_interval", false);
	if (!PG_ARGISNULL(3))
		p.expiration_interval = IntervalToSeconds(PG_GETARG_INTERVAL_P(3),
												  "expiration_interval", true);
	if (PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("maximum_attempts must not be null")));
	p.maximum_attempts = PG_GETARG_INT32(4);
	if (!PG_ARGISNULL(5))
	{
		ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(5);
		Datum	   *elems;
		bool	   *nulls;
		int			n;
		int			i;

		deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT,
						  &elems, &nulls, &n);
		p.non_retriable = palloc(sizeof(char *) * (n + 1));
		for (i = 0; i < n; i++)
		{
			if (nulls[i])
				ereport(ERROR,
						(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						 errmsg("non_retryable_error_reasons must not contain nulls")));
			p.non_retriable[i] = TextDatumGetCString(elems[i]);
		}
		p.n_non_retriable = n;
	}
	ValidateRetryPolicy(&p, NULL, true);
	PG_RETURN_JSONB_P(RetryPolicyToJsonb(&p));
}

PG_FUNCTION_INFO_V1(durable_retry_delay);
/*
 * durable.retry_delay(retry_policy, failed_attempt): the backoff after the
 * failed_attempt-th failure, before any stop rule.
 */
Datum
durable_retry_delay(PG_FUNCTION_ARGS)
{
	RetryPolicy p;
	int32		failed_attempt = PG_GETARG_INT32(1);
	double		delay;
	Interval   *result;

	ParseRetryPolicy(PG_GETARG_JSONB_P(0), "retry_policy", &p);
	if (failed_attempt < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("failed_attempt must be at least 1")));
	delay = RetryDelay(&p, failed_attempt);	/* 0 .. DURABLE_MAX_DURATION_SECS */
	result = palloc0(sizeof(Interval));
	result->time = (TimeOffset) llround(delay * USECS_PER_SEC);
	PG_RETURN_INTERVAL_P(result);
}

/*-------------------------------------------------------------------------
 *
 * backoff.h
 *	  Retry policies and timeout math (backoff.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_BASE_BACKOFF_H
#define DURABLE_BASE_BACKOFF_H

#include "utils/jsonb.h"
#include "utils/timestamp.h"

typedef struct RetryPolicy
{
	double		initial_interval;	/* seconds, > 0 */
	double		backoff_coefficient;	/* >= 1 */
	double		maximum_interval;	/* seconds, >= initial */
	double		expiration_interval;	/* seconds, 0 = none */
	int32		maximum_attempts;	/* 0 = unlimited */
	int			n_non_retriable;
	char	  **non_retriable;
} RetryPolicy;

/* Why a failed attempt is, or is not, retried */
typedef enum RetryVerdict
{
	RETRY_YES,
	RETRY_NO_POLICY,
	RETRY_NON_RETRIABLE,
	RETRY_ATTEMPTS_EXHAUSTED,
	RETRY_EXPIRED,
	RETRY_PAST_DEADLINE,
	RETRY_CANCEL_REQUESTED		/* an activity whose cancel was requested */
} RetryVerdict;

extern void ParseRetryPolicy(Jsonb *policy, const char *argname,
							 RetryPolicy *out);
extern void ReadStoredRetryPolicy(Jsonb *policy, RetryPolicy *out);
extern void ValidateRetryPolicy(const RetryPolicy *p, const char *argname,
								bool sql_argument_names);
extern Jsonb *RetryPolicyToJsonb(const RetryPolicy *p);
extern Jsonb *ReadStoredRetryPolicyNormalized(Jsonb *policy, RetryPolicy *out);
extern double RetryDelay(const RetryPolicy *p, int failed_attempt);
extern RetryVerdict DecideRetry(const RetryPolicy *p, int failed_attempt,
								const char *reason, TimestampTz now,
								TimestampTz first_scheduled,
								TimestampTz deadline,
								double override_delay, double *delay_out);
extern const char *RetryVerdictName(RetryVerdict v);

#endif							/* DURABLE_BASE_BACKOFF_H */

/*-------------------------------------------------------------------------
 *
 * workflow.h
 *	  Starting, continuing and closing runs (workflow.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_ENGINE_WORKFLOW_H
#define DURABLE_ENGINE_WORKFLOW_H

#include "engine/runs.h"

typedef enum IdReusePolicy
{
	ID_REUSE_ALLOW_DUPLICATE_FAILED_ONLY,
	ID_REUSE_ALLOW_DUPLICATE,
	ID_REUSE_REJECT_DUPLICATE,
	ID_REUSE_TERMINATE_IF_RUNNING
} IdReusePolicy;

typedef struct StartRequest
{
	char	   *namespace;
	char	   *workflow_id;
	char	   *workflow_type;
	char	   *task_queue;
	Jsonb	   *input;
	Jsonb	   *retry_policy;	/* normalised, or NULL */
	IdReusePolicy id_reuse_policy;
	double		execution_timeout;	/* seconds, 0 = none */
	double		run_timeout;	/* seconds, 0 = none */
	double		decision_timeout;	/* seconds */
	char	   *cron_schedule;
	double		delay;			/* seconds before the first decision task */
	Jsonb	   *memo;
	Jsonb	   *search_attributes;	/* the new run's, or NULL */
	/* signal_with_start: signal a running run, or start with this signal */
	char	   *signal_name;
	Jsonb	   *signal_input;
	/* StartChildWorkflowExecution */
	RunState   *parent;			/* the parent, locked; NULL for a client start */
	int64		parent_initiated_id;
	bool		refused;		/* out: a child start found the id taken */
	/* restart_workflow (reset.c): the run restarted, and why */
	pg_uuid_t  *restarted_from;
	const char *restart_reason;
	/* start_workflow_eager: the first decision task is the caller's */
	bool		take_decision;	/* in: schedule it for the caller, unqueued */
	bool		decision_taken; /* out: it was (the caller must start it) */
	/* The run's priority (1 to 5; 0: the parent's, else 3) and key */
	int			priority;
	char	   *concurrency_key;	/* NULL: the parent's, else none */
} StartRequest;

/* How the next run of a chain differs from the run it continues */
typedef struct ContinueRequest
{
	const char *initiator;		/* Decider, RetryPolicy, CronSchedule */
	char	   *workflow_type;	/* NULL: the same */
	char	   *task_queue;		/* NULL: the same */
	Jsonb	   *input;
	bool		inherit_input;	/* the chain's input instead of input */
	double		run_timeout;	/* 0: the same */
	double		decision_timeout;	/* 0: the same */
	double		backoff;
	Jsonb	   *retry_policy;	/* NULL: the same */
	char	   *cron_schedule;	/* NULL: the same */
	Jsonb	   *memo;			/* NULL: the same */
	Jsonb	   *search_attributes;	/* NULL: the same */
	int32		attempt;
	Jsonb	   *failure;
	Jsonb	   *last_completion_result;
} ContinueRequest;

extern IdReusePolicy ParseIdReusePolicy(const char *name, const char *argname);
extern const char *IdReusePolicyName(IdReusePolicy policy);
extern pg_uuid_t *StartWorkflowExecution(StartRequest *req, TimestampTz now);
extern void TerminateRun(RunState *rs, TimestampTz now, const char *reason,
						 Jsonb *details);
extern void SignalRun(RunState *rs, TimestampTz now, const char *signal_name,
					  Jsonb *input, Jsonb *external);
extern bool RequestCancelRun(RunState *rs, TimestampTz now, const char *cause,
							 Jsonb *external);
extern pg_uuid_t *ContinueRun(RunState *rs, TimestampTz now,
							  ContinueRequest *cr, int64 completed_id);
extern void CompleteRun(RunState *rs, TimestampTz now, Jsonb *attributes,
						Jsonb *result);
extern void FailRun(RunState *rs, TimestampTz now, const char *reason,
					Jsonb *details, int64 completed_id);
extern void TimeOutRun(RunState *rs, TimestampTz now, bool execution);
extern void FailRunForAttemptCap(RunState *rs, TimestampTz now);
extern void UpsertSearchAttributes(RunState *rs, Jsonb *attributes);

extern void WorkflowLifecycleInit(void);

#endif							/* DURABLE_ENGINE_WORKFLOW_H */

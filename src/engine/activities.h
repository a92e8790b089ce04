/*-------------------------------------------------------------------------
 *
 * activities.h
 *	  The life of an activity (activities.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_ENGINE_ACTIVITIES_H
#define DURABLE_ENGINE_ACTIVITIES_H

#include "engine/runs.h"

/* durable.max_pending_activities, durable.default_activity_timeout */
extern int	durable_max_pending_activities;
extern int	durable_default_activity_timeout;

typedef struct ActivityRequest
{
	char	   *activity_id;
	char	   *activity_type;
	char	   *task_queue;
	Jsonb	   *input;
	double		schedule_to_start;	/* seconds, 0 = none */
	double		start_to_close;
	double		schedule_to_close;
	double		heartbeat_timeout;
	Jsonb	   *retry_policy;	/* normalised, NULL = namespace default */
	int			index;			/* its place in the decision list */
	bool		eager;			/* requestEagerExecution (api/worker.c) */
	int			priority;		/* 1 to 5; 0: its run's */
	char	   *concurrency_key;	/* NULL: its run's */
} ActivityRequest;

typedef struct ActivityState
{
	pg_uuid_t	run_id;
	int64		scheduled_event_id;
	char	   *namespace;
	char	   *workflow_id;
	char	   *activity_id;
	char	   *activity_type;
	char	   *task_queue;
	Jsonb	   *input;
	char	   *state;
	int32		attempt;
	Jsonb	   *retry_policy_json;
	double		schedule_to_start;
	double		start_to_close;
	double		schedule_to_close;
	double		heartbeat_timeout;
	TimestampTz first_scheduled_time;
	TimestampTz scheduled_time;
	TimestampTz started_time;	/* DT_NOEND: none */
	TimestampTz last_heartbeat_time;
	Jsonb	   *heartbeat_details;
	char	   *last_failure_reason;
	Jsonb	   *last_failure_details;
	TimestampTz next_attempt_time;
	char	   *last_worker_identity;
	bool		cancel_requested;
	bool		task_secret_null;	/* the attempt's token has no secret */
	int64		task_secret;	/* of the started attempt's token */
	bool		deleted;		/* taken by TakeActivity */
	bool		finished_in_db; /* also logged and its timer dropped */
	bool		may_have_timer; /* its stored state has a deadline */
} ActivityState;

extern bool LoadActivity(pg_uuid_t *run_id, int64 scheduled_event_id,
						 ActivityState *a);
extern bool ReadActivity(pg_uuid_t *run_id, int64 scheduled_event_id,
						 ActivityState *a);
extern bool LoadActivityById(pg_uuid_t *run_id, const char *activity_id,
							 ActivityState *a);
extern bool TakeActivity(pg_uuid_t *run_id, int64 scheduled_event_id,
						 ActivityState *a);
extern bool TakeCompletedActivity(pg_uuid_t *run_id, int64 scheduled_event_id,
								  int32 attempt, TimestampTz now,
								  ActivityState *a);
extern void ScheduleActivity(RunState *rs, TimestampTz now,
							 ActivityRequest *req, int64 completed_event_id);
extern void ActivityTaskOrder(pg_uuid_t *run_id, int64 scheduled_event_id,
							  int *priority, char **concurrency_key);
extern bool StartActivityAttempt(pg_uuid_t *run_id, int64 scheduled_event_id,
								 int32 attempt, TimestampTz now,
								 const char *identity, ActivityState *a);
extern TimestampTz ActivityAttemptDeadline(ActivityState *a);
extern void CompleteActivity(RunState *rs, ActivityState *a, TimestampTz now,
							 Jsonb *result, const char *identity);
extern void CancelActivity(RunState *rs, ActivityState *a, TimestampTz now,
						   Jsonb *details, const char *identity,
						   int64 cancel_requested_event_id);
extern void FailActivityAttempt(RunState *rs, ActivityState *a,
								TimestampTz now, const char *reason,
								Jsonb *details, double override_delay,
								const char *timeout_type);
extern bool FireActivityTimer(RunState *rs, int64 scheduled_event_id,
							  TimestampTz now);
extern void RequeueActivity(RunState *rs, int64 scheduled_event_id);
extern void RequestCancelActivity(RunState *rs, ActivityState *a,
								  TimestampTz now, int64 completed_event_id);

#endif							/* DURABLE_ENGINE_ACTIVITIES_H */

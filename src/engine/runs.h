/*-------------------------------------------------------------------------
 *
 * runs.h
 *	  The run row, its history and its decision task's fields (runs.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_ENGINE_RUNS_H
#define DURABLE_ENGINE_RUNS_H

#include "utils/jsonb.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"
#include "durable.h"

/* The limits of a run */
extern int	durable_max_history_events;
extern int	durable_max_buffered_events;
extern int	durable_max_attempts_per_run;

/* Events and tasks a call made for a run, not yet written (runs.c) */
typedef struct EventBatch EventBatch;
typedef struct ReadyBatch ReadyBatch;

typedef struct RunState
{
	pg_uuid_t	run_id;
	char	   *namespace;
	char	   *workflow_id;
	char	   *workflow_type;
	char	   *task_queue;
	char	   *status;
	int32		attempt;
	bool		cancel_requested;
	double		decision_timeout;
	int64		last_event_id;
	int64		decision_scheduled_id;
	int64		decision_started_id;
	int32		decision_attempt;
	TimestampTz decision_started_time;
	bool		decision_started_time_null;
	int64		previous_started_id;
	int32		activity_attempts;
	TimestampTz workflow_deadline;	/* run or execution timeout, DT_NOEND */
	bool		has_buffered;	/* events wait in durable.buffered_events */
	bool		new_event;		/* an event from outside was appended (runs.c) */
	bool		defer_decision; /* completing a task: schedule at its end */
	bool		decision_wanted;	/* ScheduleDecisionTask while deferred */
	int64		pending_started_id; /* ActivityTaskStarted just appended */
	bool		may_continue;	/* has a retry policy or a cron schedule */
	bool		has_parent;		/* started by a StartChildWorkflowExecution */
	pg_uuid_t	parent_run_id;
	int64		parent_initiated_id;
	pg_uuid_t	first_run_id;	/* of the run's chain */
	/*
	 * The SQL function the run keeps (runs.pinned_function, 0.7.0: registered
	 * again with running => 'keep'), InvalidOid for its registration's; read
	 * by LoadRunById only.
	 */
	Oid			pinned_function;
	/*
	 * Whether the run is paused (runs.paused_at, 0.8.0: engine/pause.c):
	 * read with the row by LoadRunById, looked up on demand (RunIsPaused)
	 * after LoadRun.
	 */
	bool		paused_known;
	bool		paused;
	/*
	 * The run's priority (1 to 5) and concurrency key (NULL: none), which
	 * its decision tasks take, and its activities and children unless they
	 * are given their own (runs.priority, concurrency_key: 0.9.0).
	 */
	int			priority;
	char	   *concurrency_key;
	/* The secret of the started decision task's token (api/worker.c) */
	bool		secret_stored;	/* durable.runs has task_secret (0.3.0) */
	bool		task_secret_null;	/* none: started before 0.3.0, or none */
	int64		task_secret;
	bool		task_secret_changed;	/* drawn: SaveRun writes it */
	/* Eager dispatch: the caller starts the next decision task (api/worker.c) */
	bool		take_decision;	/* asked for: the next one is not queued */
	bool		decision_taken; /* one was scheduled for the caller */
	int			eager_activities;	/* activities the caller may take */
	int			n_eager;		/* taken, not queued: their scheduled ids */
	int64	   *eager_ids;
	/* An activity started for a waiting poll instead (store/wait.c) */
	bool		may_hand_over;	/* this call may hand one over */
	int64		handoff_activity;	/* its scheduled id, 0: none */
	char	   *handoff_identity;	/* the poll's */
	EventBatch *events;			/* appended, written by SaveRun/CloseRun */
	ReadyBatch *ready;			/* queued, written by SaveRun/FlushEvents */
} RunState;

/*
 * A run's input, as a scalar subquery of a statement on durable.runs: from
 * 0.11.0 it is stored once, in the run's WorkflowExecutionStarted event
 * (event 1); the run row kept a copy before (RunRowHasInput).
 */
#define RUN_INPUT_FROM_HISTORY_SQL(run_id) \
	"(SELECT h.attributes -> 'input' FROM durable.history h" \
	" WHERE h.run_id = " run_id " AND h.event_id = 1)"

/*
 * The runs of a workflow id.  From 0.12.0 one unique index of durable.runs,
 * runs_of_workflow_id, on (namespace, workflow_id text_pattern_ops,
 * RUNS_CHAIN_KEY_SQL DESC) NULLS NOT DISTINCT, does what two did before
 * (runs_one_running, unique on (namespace, workflow_id) of the running run,
 * and runs_by_workflow_id, on (namespace, workflow_id text_pattern_ops,
 * run_seq DESC)): the running run's key is NULL, so there is at most one,
 * and it comes first, then the closed runs, latest first.  A run is always
 * inserted running and only ever leaves that status, and a new run of a
 * workflow id is inserted only while none is running, so the running run is
 * its latest; ordering by the key finds the latest run by the index.  (The
 * insert draws run_seq just before it checks for a running run, so a start
 * that raced with another run's start and close could in principle insert a
 * running run with a smaller run_seq than that closed one: the key still
 * puts the running run first, the run a lookup of "the latest" wants.)
 *
 * A start inserts with RUNS_ONE_RUNNING_CONFLICT_V12 on that schema, or
 * RUNS_ONE_RUNNING_CONFLICT on one not yet updated (RunsOfWorkflowIdIndexed:
 * the library is replaced before ALTER EXTENSION durable UPDATE runs).
 */
#define RUNS_CHAIN_KEY_SQL \
	"(CASE WHEN status = 'running' THEN NULL ELSE run_seq END)"
#define RUNS_ONE_RUNNING_CONFLICT \
	" ON CONFLICT (namespace, workflow_id) WHERE status = 'running' DO NOTHING"
#define RUNS_ONE_RUNNING_CONFLICT_V12 \
	" ON CONFLICT (namespace, workflow_id, " RUNS_CHAIN_KEY_SQL ") DO NOTHING"

extern bool RunRowHasInput(void);
extern bool RunsOfWorkflowIdIndexed(void);
extern bool LoadRun(const char *namespace, const char *workflow_id,
					pg_uuid_t *run_id, bool for_update, bool skip_locked,
					RunState *rs);
extern void LoadRunOrError(const char *namespace, const char *workflow_id,
						   pg_uuid_t *run_id, bool for_update, RunState *rs);
extern bool LoadRunById(pg_uuid_t *run_id, bool skip_locked, RunState *rs);
extern bool ReadRunById(pg_uuid_t *run_id, RunState *rs);
extern TimestampTz RunDeadline(TimestampTz start_time, double backoff,
							   double run_timeout);
extern void StoreRunDeadline(pg_uuid_t *run_id, TimestampTz deadline);
extern bool RunAwaitsFirstDecision(RunState *rs);
extern void SaveRun(RunState *rs);
extern void FlushEvents(RunState *rs);
extern bool RunIsOpen(RunState *rs);
extern void RequireRunOpen(RunState *rs);
extern bool IsActivityOutcome(const char *event_type);
extern int64 AppendEvent(RunState *rs, TimestampTz now, const char *event_type,
						 Jsonb *attributes);
extern void AppendEventOrBuffer(RunState *rs, TimestampTz now,
								const char *event_type, Jsonb *attributes);
extern int	FlushBufferedEvents(RunState *rs);
extern void ScheduleDecisionTask(RunState *rs, TimestampTz now);
extern void ScheduleNextDecisionAttempt(RunState *rs, TimestampTz now);
extern bool DecisionIsTransient(RunState *rs);
extern bool TransientDecisionOvertaken(RunState *rs);
extern Jsonb *DecisionScheduledAttributes(RunState *rs);
extern Jsonb *DecisionStartedAttributes(int64 scheduled_id, const char *identity);
extern bool RunIsPaused(RunState *rs);
extern char HeldTaskKind(char kind);
extern char ReadyTaskKind(RunState *rs, const char *task_queue, char kind,
						  const char *type_name);
extern void EnqueueReadyTask(RunState *rs, const char *task_queue, char kind,
							 const char *type_name, int64 scheduled_event_id,
							 int32 attempt, int priority,
							 const char *concurrency_key);
extern void CloseRun(RunState *rs, TimestampTz now, const char *status,
					 const char *event_type, Jsonb *attributes,
					 Jsonb *result, Jsonb *failure);

/*
 * Events of a run's history kept for the events that close it (docs/api.md
 * "Limits of a run"): a run is terminated once its history reaches
 * durable.max_history_events less these.
 */
#define DURABLE_CLOSE_ROOM	10
extern void TerminateRunForLimit(RunState *rs, TimestampTz now,
								 const char *reason, Jsonb *details);

/*
 * Called at the end of CloseRun, once the run is closed: set by the workflow
 * lifecycle (engine/workflow.c), which is above this module.
 */
typedef void (*RunClosedHook) (RunState *rs, TimestampTz now,
							   const char *status, Jsonb *attributes);
extern void SetRunClosedHook(RunClosedHook hook);

#endif							/* DURABLE_ENGINE_RUNS_H */

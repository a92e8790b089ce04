/*-------------------------------------------------------------------------
 *
 * durable.h
 *	  Shared declarations of the durable workflow engine.
 *
 * The engine keeps each workflow run as a row of durable.runs plus its
 * append-only history in durable.history.  Every change to a run happens
 * while its row is locked (RunState below), and every row that depends on a
 * run (timers, activities, user timers) is changed only under that lock, so
 * that the lock order is always run first, then the rest.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_H
#define DURABLE_H

#include "postgres.h"

#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/jsonb.h"
#include "utils/relcache.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

/* Engine SQLSTATEs (DESIGN.md section 6) */
#define ERRCODE_DURABLE_ALREADY_STARTED		MAKE_SQLSTATE('W','F','0','0','1')
#define ERRCODE_DURABLE_NOT_FOUND			MAKE_SQLSTATE('W','F','0','0','2')
#define ERRCODE_DURABLE_NOT_RUNNING			MAKE_SQLSTATE('W','F','0','0','3')
#define ERRCODE_DURABLE_STALE_TOKEN			MAKE_SQLSTATE('W','F','0','0','5')
#define ERRCODE_DURABLE_LIMIT_EXCEEDED		MAKE_SQLSTATE('W','F','0','0','6')
#define ERRCODE_DURABLE_ACTIVITY_FAILED		MAKE_SQLSTATE('W','F','0','0','7')
#define ERRCODE_DURABLE_CANCELED			MAKE_SQLSTATE('W','F','0','0','8')

/* Longest namespace, workflow id, type, task queue or signal name, in bytes */
#define DURABLE_MAX_NAME_LEN	1000

/*
 * Longest duration a user may give (a timeout, delay, wait, retention, retry
 * interval): 100 years of 365.25 days, 36525 days, in seconds.  With the
 * engine's clock bounded (durable.test_time) it keeps every deadline far
 * from the ends of timestamptz and interval (README "Limits").
 */
#define DURABLE_MAX_DURATION_SECS	3155760000.0
#define DURABLE_MAX_DURATION_TEXT	"100 years (36525 days)"
#define DURABLE_MAX_DURATION_SQL	"3155760000::float8"
/* Largest backoffCoefficient of a retry policy */
#define DURABLE_MAX_BACKOFF_COEFFICIENT	1000.0

/* ----------------
 * durable.c: GUCs and the clock
 * ----------------
 */
extern int	durable_max_history_events;
extern int	durable_max_payload_size;
extern int	durable_max_attempts_per_run;
extern int	durable_max_pending_activities;
extern int	durable_max_buffered_events;
extern int	durable_default_activity_timeout;
extern bool durable_library_preloaded;

extern TimestampTz DurableNow(void);

/* ----------------
 * util.c: argument checks, uuids, intervals, identity
 * ----------------
 */
extern char *CheckName(text *value, const char *argname);
extern char *CheckOptionalName(text *value, const char *argname);
extern void CheckPayload(Jsonb *value, const char *argname);
extern void CheckObject(Jsonb *value, const char *argname);
extern double IntervalToSeconds(Interval *value, const char *argname,
								bool allow_zero);
extern double CheckSeconds(double seconds, const char *argname,
						   bool allow_zero);
extern double NumericToDouble(Numeric value);
extern TimestampTz TimestampPlusSeconds(TimestampTz t, double seconds);
extern double TimestampDiffSeconds(TimestampTz later, TimestampTz earlier);
extern pg_uuid_t *NewRandomUuid(void);
extern pg_uuid_t *NewRunUuid(void);
extern int64 NewTaskSecret(void);
extern bool TaskSecretsStored(void);
extern bool DurableColumnExists(const char *relname, const char *column);
extern char *UuidToCString(const pg_uuid_t *uuid);
extern bool ParseCanonicalUuid(const char *s, pg_uuid_t *out);
extern const char *CallerIdentity(void);
extern bool ErrorIsCancel(ErrorData *edata);
extern bool ErrorIsTransient(ErrorData *edata);
extern ErrorData *RunInSubtransaction(void (*fn) (void *arg), void *arg);

/* ----------------
 * json.c: building jsonb values and reading fields of them
 * ----------------
 */
typedef struct JsonBuilder
{
	StringInfoData buf;
	int			depth;
	bool		need_comma[16];
} JsonBuilder;

extern void JsonBegin(JsonBuilder *jb);
extern void JsonKey(JsonBuilder *jb, const char *key);
extern void JsonAddText(JsonBuilder *jb, const char *key, const char *value);
extern void JsonAddInt(JsonBuilder *jb, const char *key, int64 value);
extern void JsonAddFloat(JsonBuilder *jb, const char *key, double value);
extern void JsonAddBool(JsonBuilder *jb, const char *key, bool value);
extern void JsonAddNull(JsonBuilder *jb, const char *key);
extern void JsonAddJsonb(JsonBuilder *jb, const char *key, Jsonb *value);
extern void JsonAddTimestamp(JsonBuilder *jb, const char *key, TimestampTz value);
extern void JsonBeginObject(JsonBuilder *jb, const char *key);
extern void JsonEndObject(JsonBuilder *jb);
extern void JsonBeginArray(JsonBuilder *jb, const char *key);
extern void JsonEndArray(JsonBuilder *jb);
extern Jsonb *JsonFinish(JsonBuilder *jb);

extern JsonbValue *JsonGetField(Jsonb *obj, const char *key);
extern Jsonb *JsonbSetInt(Jsonb *obj, const char *key, int64 value);
extern Jsonb *JsonbArray(Jsonb **items, int n);

/* ----------------
 * spi.c: kept SPI plans
 * ----------------
 */
typedef struct KeptPlan
{
	SPIPlanPtr	plan;
	const char *sql;
	int			nargs;
	Oid			argtypes[32];
} KeptPlan;

extern SPIPlanPtr GetPlan(KeptPlan *kp);
extern int	RunPlan(KeptPlan *kp, Datum *values, const char *nulls,
					bool read_only, long count);
extern void DurableSPIConnect(void);
extern void DurableSPIFinish(void);
extern Datum SPIGetDatum(int row, int col, bool *isnull);
extern char *SPIGetText(int row, int col);
extern Jsonb *SPIGetJsonbCopy(int row, int col);

/* ----------------
 * direct.c: rows written and read without the executor
 * ----------------
 */
extern void DirectInsertEvents(pg_uuid_t *run_id, int n, const int64 *ids,
							   const TimestampTz *times, char *const *types,
							   const Datum *attrs);
extern void DirectInsertReadyTasks(const char *namespace, pg_uuid_t *run_id,
								   int n, char *const *queues,
								   const char *kinds, const int64 *scheduled,
								   const int32 *attempts);
extern struct TupleTableSlot *DirectLockRun(pg_uuid_t *run_id,
											bool skip_locked);
extern bool DirectClaimReadyTask(const char *namespace, const char *task_queue,
								 char kind, pg_uuid_t *run_id,
								 int64 *scheduled_id, int32 *attempt);
extern bool DirectRunHasRows(const char *relname, pg_uuid_t *run_id);
extern HeapTuple DirectStartActivityAttempt(pg_uuid_t *run_id,
											int64 scheduled_event_id,
											int32 attempt, TimestampTz now,
											const char *identity,
											int64 secret,
											TupleDesc *desc_out);
extern int	DirectDeleteRunTimers(pg_uuid_t *run_id, const char *except_kind);
extern void DirectSetTimer(pg_uuid_t *run_id, const char *kind, int64 ref_id,
						   TimestampTz due_at, bool set_attempt, int32 attempt);
extern void RequireWritableTransaction(const char *funcname);
extern void DirectUpdateRun(pg_uuid_t *run_id, int n,
							const char *const *names, const Datum *values,
							const bool *isnull);

/* A run's history read in event order (direct.c) */
typedef struct HistoryScan
{
	Relation	rel;
	struct SysScanDescData *scan;
	int			att[5];
} HistoryScan;

/* One event, copied out of its buffer page (palloc'd in the caller's context) */
typedef struct HistoryEvent
{
	int64		event_id;
	TimestampTz event_time;
	char	   *event_type;
	Jsonb	   *attributes;		/* NULL for SQL NULL */
} HistoryEvent;

extern void BeginHistoryScan(HistoryScan *hs, pg_uuid_t *run_id);
extern bool HistoryScanNext(HistoryScan *hs, HistoryEvent *ev);
extern void EndHistoryScan(HistoryScan *hs);

/* ----------------
 * backoff.c: retry policies and timeout math (no SPI)
 * ----------------
 */
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
extern double RetryDelay(const RetryPolicy *p, int failed_attempt);
extern RetryVerdict DecideRetry(const RetryPolicy *p, int failed_attempt,
								const char *reason, TimestampTz now,
								TimestampTz first_scheduled,
								TimestampTz deadline,
								double override_delay, double *delay_out);
extern const char *RetryVerdictName(RetryVerdict v);

/* ----------------
 * runs.c: the run row, its history and its decision task
 * ----------------
 */
/* Events appended to a run and not yet written */
typedef struct EventBatch
{
	int			n;
	int			size;
	int64	   *ids;
	TimestampTz *times;
	char	  **types;
	Datum	   *attrs;
} EventBatch;

/* Tasks a call queued for a run and not yet written */
typedef struct ReadyBatch
{
	int			n;
	char	   *queues[64];
	char		kinds[64];
	int64		scheduled[64];
	int32		attempts[64];
} ReadyBatch;

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
	/* The secret of the started decision task's token (api_worker.c) */
	bool		secret_stored;	/* durable.runs has task_secret (0.3.0) */
	bool		task_secret_null;	/* none: started before 0.3.0, or none */
	int64		task_secret;
	bool		task_secret_changed;	/* drawn: SaveRun writes it */
	EventBatch *events;			/* appended, written by SaveRun/CloseRun */
	ReadyBatch *ready;			/* queued, written by SaveRun/FlushEvents */
} RunState;

extern bool LoadRun(const char *namespace, const char *workflow_id,
					pg_uuid_t *run_id, bool for_update, bool skip_locked,
					RunState *rs);
extern void LoadRunOrError(const char *namespace, const char *workflow_id,
						   pg_uuid_t *run_id, bool for_update, RunState *rs);
extern bool LoadRunById(pg_uuid_t *run_id, bool skip_locked, RunState *rs);
extern TimestampTz RunDeadline(TimestampTz start_time, double backoff,
							   double run_timeout);
extern void StoreRunDeadline(pg_uuid_t *run_id, TimestampTz deadline);
extern bool RunAwaitsFirstDecision(RunState *rs);
extern void SaveRun(RunState *rs);
extern void FlushEvents(RunState *rs);
extern void ResetEventBatches(void);
extern void CheckEventsWritten(void);
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
extern void EnqueueReadyTask(RunState *rs, const char *task_queue, char kind,
							 const char *type_name, int64 scheduled_event_id,
							 int32 attempt);
extern void CloseRun(RunState *rs, TimestampTz now, const char *status,
					 const char *event_type, Jsonb *attributes,
					 Jsonb *result, Jsonb *failure);

/*
 * Events of a run's history kept for the events that close it (README
 * "Limits of a run"): a run is terminated once its history reaches
 * durable.max_history_events less these.
 */
#define DURABLE_CLOSE_ROOM	10
extern void TerminateRunForLimit(RunState *rs, TimestampTz now,
								 const char *reason, Jsonb *details);

/* direct.c, reading */
extern Relation DurableOpenTable(const char *relname, LOCKMODE lockmode);
extern Jsonb *DecisionTaskJson(RunState *rs, const char *token,
							   const char *identity);

/* ----------------
 * caller.c: who calls the API (the current user at the call)
 * ----------------
 */
extern void InstallCallerHook(void);
extern Oid	DurableCaller(void);

/* ----------------
 * namespaces.c: namespaces, cached per backend
 * ----------------
 */
extern bool NamespaceExists(const char *namespace);
extern void CheckNamespaceExists(const char *namespace);
extern Jsonb *NamespaceActivityPolicy(const char *namespace);

/* Namespace privileges (README "Privileges"): bits of a grant */
#define NSPRIV_CLIENT	0x01
#define NSPRIV_WORKER	0x02
extern Oid	durable_user_code_role;
extern bool NamespacePrivilegesEnforced(void);
extern void CheckNamespacePrivilege(const char *namespace, int privilege);
extern void CheckNamespacePrivilegeOf(Oid role, const char *namespace,
									  int privilege);

/* ----------------
 * timers.c: durable timers
 * ----------------
 */
#define TIMER_FIRST_DECISION	"first_decision"
#define TIMER_RUN_TIMEOUT		"run_timeout"
#define TIMER_EXECUTION_TIMEOUT	"execution_timeout"
#define TIMER_DECISION_TIMEOUT	"decision_timeout"
#define TIMER_DECISION_RETRY	"decision_retry"
#define TIMER_USER				"user_timer"
#define TIMER_ACTIVITY			"activity"
#define TIMER_DELIVER			"deliver"	/* an event for another run */
#define TIMER_EXTERNAL			"external"	/* a signal or cancel to deliver */
#define TIMER_CLOSE_POLICY		"close_policy"	/* a parent close policy */
#define TIMER_TASK_RETRY		"task_retry"	/* a put-off executor task */

extern void CreateTimer(pg_uuid_t *run_id, const char *kind,
						TimestampTz due_at, int64 ref_id, int32 attempt);
extern void CreateTimerWithPayload(pg_uuid_t *run_id, const char *kind,
								   TimestampTz due_at, int64 ref_id,
								   Jsonb *payload);
extern bool TakeTimer(pg_uuid_t *run_id, const char *kind, int64 ref_id);
extern bool ClaimTimer(pg_uuid_t *run_id, const char *kind, int64 ref_id);
extern void DeleteTimer(pg_uuid_t *run_id, const char *kind, int64 ref_id);
extern void DeleteRunTimers(pg_uuid_t *run_id);
extern void NoteTimerDue(TimestampTz due_at);
extern int	FireDueTimers(TimestampTz now, int max_items);
extern int	FireDueTimersCarefully(TimestampTz start, TimestampTz now,
								   int max_items, bool careful,
								   TimestampTz *first_seen);
extern void StartUserTimer(RunState *rs, TimestampTz now, const char *timer_id,
						   double seconds, int64 completed_id, int index);
extern void CancelUserTimer(RunState *rs, TimestampTz now,
							const char *timer_id, int64 completed_id);

/* ----------------
 * children.c: child workflows, external signals and cancels, close policies
 * ----------------
 */
typedef enum ParentClosePolicy
{
	PARENT_CLOSE_TERMINATE,
	PARENT_CLOSE_REQUEST_CANCEL,
	PARENT_CLOSE_ABANDON
} ParentClosePolicy;

typedef struct ExternalRequest
{
	bool		cancel;			/* RequestCancel..., else Signal... */
	char	   *namespace;
	char	   *workflow_id;
	pg_uuid_t  *run_id;			/* NULL: the latest run */
	char	   *signal_name;
	Jsonb	   *input;
	Jsonb	   *control;
	bool		child_workflow_only;
} ExternalRequest;

struct StartRequest;

extern ParentClosePolicy ParseParentClosePolicy(const char *name,
												const char *argname);
extern const char *ParentClosePolicyName(ParentClosePolicy p);
extern void StartChildWorkflow(RunState *rs, TimestampTz now,
							   struct StartRequest *req,
							   ParentClosePolicy policy, Jsonb *control,
							   int64 completed_id);
extern void RequestExternal(RunState *rs, TimestampTz now,
							ExternalRequest *req, int64 completed_id);
extern void NotifyParentOfClose(RunState *rs, TimestampTz now,
								const char *status, Jsonb *attributes);
extern void ApplyParentClosePolicies(RunState *rs, TimestampTz now);
extern bool FireDeliverTimer(RunState *rs, int64 ref_id, Jsonb *payload,
							 TimestampTz now);
extern bool FireExternalTimer(pg_uuid_t *run_id, int64 ref_id, Jsonb *payload,
							  TimestampTz now);
extern bool FireClosePolicyTimer(pg_uuid_t *run_id, int64 ref_id,
								 Jsonb *payload, TimestampTz now);

/* ----------------
 * retention.c: purging closed runs past their namespace's retention
 * ----------------
 */
extern int	PurgeClosedRuns(TimestampTz now, int max_runs);

/* ----------------
 * compaction.c: the queue tables' indexes rebuilt after a held horizon
 * ----------------
 */
extern int	CompactQueueTables(void);
extern int	RebuildQueueTable(void);

/* ----------------
 * claim_mark.c: where a claim of a queue starts its walk (issue 12)
 * ----------------
 */
typedef struct ClaimMark
{
	int			slot;			/* -1: no mark, walk from 0 */
	int			keylen;
	uint64		generation;
	int64		start;			/* the walk starts at task_id >= start */
	int64		limit;			/* the mark may move up to here */
	bool		settled;		/* the snapshot is past the fence */
	bool		set_fence;		/* the slot has no fence: record one */
	int64		first_seen;		/* first task the snapshot sees, or -1 */
	int64		max_seen;		/* largest task id passed, or -1 */
} ClaimMark;

extern Size ClaimMarkShmemSize(void);
extern void ClaimMarkShmemInit(void);
extern int64 ClaimMarkBegin(ClaimMark *cm, Relation rel,
							const char *namespace, const char *task_queue,
							char kind, Snapshot snapshot);
extern void ClaimMarkSaw(ClaimMark *cm, int64 task_id, bool visible);
extern void ClaimMarkEnd(ClaimMark *cm);
extern void ClaimMarkLower(int64 low_id);
extern void ClaimMarkNoteInsert(const char *namespace, const char *task_queue,
								char kind, int64 task_id);
extern void ClaimMarkTableWritten(Oid relid);
extern void ClaimMarkInstallHooks(void);

/* ----------------
 * due_mark.c: where a due scan of durable.timers starts its walk (issue 12)
 * ----------------
 */
typedef struct DueMarkScan
{
	bool		valid;
	uint64		scan;
	TimestampTz start;			/* the walk starts at due_at >= start */
	TimestampTz pending;		/* least due time of writers in progress */
} DueMarkScan;

extern Size DueMarkShmemSize(void);
extern void DueMarkShmemInit(void);
extern void DueMarkNoteWrite(TimestampTz due_at);
extern TimestampTz DueMarkBegin(DueMarkScan *dm, bool full);
extern TimestampTz DueMarkEnd(DueMarkScan *dm, TimestampTz first_seen);

/* ----------------
 * shmem.c: long polls and wait_workflow woken at commit
 * ----------------
 */
extern bool durable_notify_workflow_closed;
extern void DurableShmemInit(void);
extern void DefineNotifyGuc(void);
extern void WakeQueueAtCommit(const char *namespace, const char *task_queue,
							  char kind);
extern void WorkflowClosedAtCommit(const char *namespace,
								   const char *workflow_id,
								   const pg_uuid_t *run_id,
								   const char *status);
extern void *WaitForTask(const char *namespace, const char *task_queue,
						 char kind, double wait_ms, FmgrInfo *flinfo,
						 void *(*claim) (void *), void *arg);
extern void *WaitForWorkflowClose(const char *namespace,
								  const char *workflow_id, double wait_ms,
								  FmgrInfo *flinfo, void *(*check) (void *),
								  void *arg);

/* ----------------
 * launcher.c and worker.c: the background workers
 * ----------------
 */
extern bool durable_worker_enabled;
extern char *durable_worker_databases;
extern int	durable_worker_batch_size;
extern int	durable_worker_max_sleep;
extern int	durable_timer_full_scan_interval;
extern int	durable_compaction_interval;
extern int	durable_max_databases;

extern Size LauncherShmemSize(void);
extern void LauncherShmemInit(void);
extern void RegisterLauncher(void);
extern void InstallLauncherHooks(void);
extern void WakeTimerWorkerAtCommit(TimestampTz due_at);
extern void TimerWorkerAttach(void);
extern void TimerWorkerDetach(bool no_extension);
extern void TimerWorkerDetachCallback(int code, Datum arg);
extern TimestampTz TimerWorkerSleepsUntil(TimestampTz sleeps_to);
extern void TimerWorkerFoundExtension(void);
extern bool DatabaseWorkersEnabled(void);

/* ----------------
 * launcher.c, shmem.c and executor_worker.c: the executor workers
 * ----------------
 */
/* Most executor workers per database (the maximum of durable.executor_workers) */
#define DURABLE_MAX_EXECUTORS	64

extern void ExecutorWorkerAttach(int index);
extern bool ExecutorWorkerDetach(bool no_extension, bool idle);
extern bool ExecutorWorkerWanted(int index);
extern uint64 ExecutorWakeGeneration(void);
extern void WakeExecutors(Oid dboid);
extern void WakeExecutorsAtCommit(void);
extern bool DurableIsExecutor;
extern int	durable_executor_grace;

/*
 * The task an executor runs, kept in its slot of shared memory (launcher.c)
 * for the watchdog of the timer worker and, after the executor's exit, for
 * whoever puts the task off (executor.c, RecoverExecutorTasks).
 */
typedef enum ExecutorTaskStage
{
	TASK_STAGE_RUNNING,			/* nothing done to it yet */
	TASK_STAGE_CANCELED,		/* past its limit: canceled (SIGINT) */
	TASK_STAGE_TERMINATED		/* still running: terminated (SIGTERM) */
} ExecutorTaskStage;

typedef struct ExecutorTask
{
	bool		active;			/* a chain's transaction is under way */
	pid_t		pid;			/* the executor that runs it */
	pg_uuid_t	run_id;			/* the first task of the chain: */
	int64		task_id;
	char		kind;
	int64		scheduled_id;
	int32		attempt;
	TimestampTz started;		/* DurableNow() when it was claimed */
	int			position;		/* of the task running in the chain */
	double		timeout;		/* the time limit of the user code running */
	TimestampTz deadline;		/* when that limit passes; 0: none runs */
	TimestampTz act_at;			/* when the watchdog acts next */
	ExecutorTaskStage stage;
	bool		run_locked;		/* its transaction holds the run's lock */
} ExecutorTask;

extern void ExecutorTaskBegin(const ExecutorTask *task);
extern void ExecutorTaskSetPosition(int position);
extern void ExecutorTaskSetDeadline(double timeout, TimestampTz deadline);
extern void ExecutorTaskRunLocked(void);
extern bool ExecutorHoldsRun(const pg_uuid_t *run_id);
extern void ExecutorTaskEnd(void);
extern bool ExecutorTaskInHand(void);
extern bool ExecutorTaskTakeLeftover(int index, ExecutorTask *out);
extern TimestampTz ExecutorWatchdog(void);
extern bool ExecutorRunAlone(const pg_uuid_t *run_id, bool mark);
extern void RecoverExecutorTasks(int index, MemoryContext cxt);

/* ----------------
 * activities.c: the life of an activity
 * ----------------
 */
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
} ActivityState;

extern bool LoadActivity(pg_uuid_t *run_id, int64 scheduled_event_id,
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

/* ----------------
 * decisions.c: decisions of a completed decision task
 * ----------------
 */
typedef struct Decision Decision;

extern int	ParseDecisions(RunState *rs, Jsonb *decisions, Decision **out);

/* A decision's payload over durable.max_payload_size (message NULL: none) */
typedef struct DecisionOverLimit
{
	char	   *message;
	const char *cause;			/* DecisionTaskFailed's cause */
} DecisionOverLimit;

extern int	ParseDecisionsOverLimit(RunState *rs, Jsonb *decisions,
									Decision **out, DecisionOverLimit *over);
extern void SetDecisionLabel(const char *label);
extern bool DecisionsCloseRun(Decision *list, int n);
extern bool DecisionsLeaveUnhandledEvents(RunState *rs, Decision *list, int n);
extern void ApplyDecisions(RunState *rs, TimestampTz now, Decision *list,
						   int n, int64 completed_id);

/* ----------------
 * api_worker.c: decision task outcomes driven by timers
 * ----------------
 */
extern bool DecisionTaskTimedOut(RunState *rs, TimestampTz now,
								 int64 started_id);
extern bool StartDecisionTask(RunState *rs, int64 scheduled_id,
							  TimestampTz now, const char *identity,
							  bool save);
extern void CompleteDecisionTask(RunState *rs, TimestampTz now, Decision *list,
								 int n, const char *identity);
extern void FailDecisionTask(RunState *rs, TimestampTz now, const char *cause,
							 Jsonb *details, const char *identity,
							 bool backoff);

/* ----------------
 * registry.c: workflow and activity types run by the executors
 * ----------------
 */
typedef struct Registration
{
	Oid			function;
	Oid			run_as;
} Registration;

extern bool LookupRegistration(char kind, const char *namespace,
							   const char *type_name, const char *task_queue,
							   Registration *out);

/* ----------------
 * executor.c and replay.c: SQL workflows and activities run in the server
 * ----------------
 */
typedef enum ReplayOutcome
{
	REPLAY_DECIDED,				/* decisions made (maybe closing the run) */
	REPLAY_NON_DETERMINISTIC,	/* history disagrees with the code */
	REPLAY_TIMED_OUT			/* the function ran past the decision timeout */
} ReplayOutcome;

extern int	durable_executor_workers;
extern int	ExecuteReadyTasks(int max_tasks, bool own_xact);
extern bool TasksCanBePutOff(void);
extern bool FireTaskRetryTimer(pg_uuid_t *run_id, int64 task_id);
extern void WaitForExecutorTask(long timeout_ms);
extern void CallAsRole(Oid role, FmgrInfo *flinfo, Jsonb *input,
					   double timeout_seconds, bool (*keep) (void *),
					   void *keep_arg, Jsonb **result, ErrorData **error,
					   bool *timed_out);
extern void LogUserCodeFailure(const char *what, const char *type_name,
							   RunState *rs, const char *where, Oid run_as,
							   const char *reason, const char *message,
							   const char *detail);
extern Jsonb *ErrorDetailsJson(ErrorData *edata);
extern ReplayOutcome ReplayWorkflow(RunState *rs, Registration *reg,
									TimestampTz now, Jsonb **decisions,
									Jsonb **failure);
extern bool ReplayActive(void);
extern TimestampTz ReplayNow(void);

/* ----------------
 * workflow.c: starting runs
 * ----------------
 */
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
	Jsonb	   *search_attributes;	/* a child's, or NULL */
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

/* ----------------
 * pollers.c and metrics.c: pollers and counters in shared memory
 * ----------------
 */
extern int	durable_max_pollers;
extern int	durable_max_metric_queues;
extern int	durable_metric_idle_timeout;
extern void MetricsInstallHooks(void);
extern Size PollersShmemSize(void);
extern void PollersShmemRequest(void);
extern void PollersShmemInit(void);
extern void RecordPoller(const char *namespace, const char *task_queue,
						 char kind, const char *identity, TimestampTz now,
						 double wait_ms);
extern bool QueueLastPolled(const char *namespace, const char *task_queue,
							char kind, TimestampTz *seen, bool *known);
extern Jsonb *PollerWarnings(RunState *rs);
extern bool MonitorSeesAll(void);
extern bool MonitorMayRead(const char *namespace, bool sees_all);
extern Datum durable_may_read_namespace(PG_FUNCTION_ARGS);

/* Seconds without a poll after which a queue is said to have no poller */
#define DURABLE_NO_POLLER_SECONDS	60

/* Histogram buckets (metrics.c), besides +Inf */
#define METRIC_BUCKETS	15
#define MV_HIST_WIDTH	(METRIC_BUCKETS + 2)	/* buckets, +Inf, sum */

typedef enum MetricValue
{
	MV_WORKFLOWS_STARTED,
	MV_CLOSED_COMPLETED,
	MV_CLOSED_FAILED,
	MV_CLOSED_CANCELED,
	MV_CLOSED_TERMINATED,
	MV_CLOSED_CONTINUED_AS_NEW,
	MV_CLOSED_TIMED_OUT,
	MV_DECISION_STARTED,
	MV_DECISION_COMPLETED,
	MV_DECISION_FAILED,
	MV_DECISION_TIMED_OUT,
	MV_ACTIVITY_STARTED,
	MV_ACTIVITY_COMPLETED,
	MV_ACTIVITY_FAILED,
	MV_ACTIVITY_TIMED_OUT,
	MV_ACTIVITY_CANCELED,
	MV_RETRIES_ACTIVITY,
	MV_RETRIES_WORKFLOW,
	MV_TIMERS_FIRED,
	MV_HIST_FIRST
} MetricValue;

#define MH_DECISION_SCHEDULE_TO_START	0
#define MH_ACTIVITY_SCHEDULE_TO_START	1
#define MH_TIMER_LATENESS				2
#define MV_COUNT	(MV_HIST_FIRST + 3 * MV_HIST_WIDTH)

extern Size MetricsShmemSize(void);
extern void MetricsShmemRequest(void);
extern void MetricsShmemInit(void);
extern void MetricsAdd(const char *namespace, const char *task_queue,
					   MetricValue value, uint64 delta);
extern void MetricsObserve(const char *namespace, const char *task_queue,
						   int hist, double seconds);
extern void MetricsCountEvents(const char *namespace, const char *task_queue,
							   int n, char *const *types);

#endif							/* DURABLE_H */

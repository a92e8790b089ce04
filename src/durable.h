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
#include "utils/timestamp.h"
#include "utils/uuid.h"

/* Engine SQLSTATEs (DESIGN.md section 6) */
#define ERRCODE_DURABLE_ALREADY_STARTED		MAKE_SQLSTATE('W','F','0','0','1')
#define ERRCODE_DURABLE_NOT_FOUND			MAKE_SQLSTATE('W','F','0','0','2')
#define ERRCODE_DURABLE_NOT_RUNNING			MAKE_SQLSTATE('W','F','0','0','3')
#define ERRCODE_DURABLE_STALE_TOKEN			MAKE_SQLSTATE('W','F','0','0','5')
#define ERRCODE_DURABLE_LIMIT_EXCEEDED		MAKE_SQLSTATE('W','F','0','0','6')

/* Longest namespace, workflow id, type, task queue or signal name, in bytes */
#define DURABLE_MAX_NAME_LEN	1000

/* ----------------
 * durable.c: GUCs and the clock
 * ----------------
 */
extern int	durable_max_history_events;
extern int	durable_max_payload_size;
extern int	durable_max_attempts_per_run;
extern int	durable_max_pending_activities;
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
extern TimestampTz TimestampPlusSeconds(TimestampTz t, double seconds);
extern double TimestampDiffSeconds(TimestampTz later, TimestampTz earlier);
extern pg_uuid_t *NewRandomUuid(void);
extern char *UuidToCString(const pg_uuid_t *uuid);
extern const char *CallerIdentity(void);

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
	RETRY_PAST_DEADLINE
} RetryVerdict;

extern void ParseRetryPolicy(Jsonb *policy, const char *argname,
							 RetryPolicy *out);
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
} RunState;

extern bool LoadRun(const char *namespace, const char *workflow_id,
					pg_uuid_t *run_id, bool for_update, bool skip_locked,
					RunState *rs);
extern void LoadRunOrError(const char *namespace, const char *workflow_id,
						   pg_uuid_t *run_id, bool for_update, RunState *rs);
extern bool LoadRunById(pg_uuid_t *run_id, bool skip_locked, RunState *rs);
extern void SaveRun(RunState *rs);
extern bool RunIsOpen(RunState *rs);
extern void RequireRunOpen(RunState *rs);
extern int64 AppendEvent(RunState *rs, TimestampTz now, const char *event_type,
						 Jsonb *attributes);
extern void AppendEventOrBuffer(RunState *rs, TimestampTz now,
								const char *event_type, Jsonb *attributes);
extern int	FlushBufferedEvents(RunState *rs);
extern void ScheduleDecisionTask(RunState *rs, TimestampTz now);
extern void EnqueueReadyTask(const char *namespace, const char *task_queue,
							 char kind, pg_uuid_t *run_id,
							 int64 scheduled_event_id, int32 attempt);
extern void CloseRun(RunState *rs, TimestampTz now, const char *status,
					 const char *event_type, Jsonb *attributes,
					 Jsonb *result, Jsonb *failure);
extern void CheckNamespaceExists(const char *namespace);

/* ----------------
 * timers.c: durable timers
 * ----------------
 */
#define TIMER_FIRST_DECISION	"first_decision"
#define TIMER_RUN_TIMEOUT		"run_timeout"
#define TIMER_EXECUTION_TIMEOUT	"execution_timeout"

extern void CreateTimer(pg_uuid_t *run_id, const char *kind,
						TimestampTz due_at, int64 ref_id, int32 attempt);
extern void DeleteRunTimers(pg_uuid_t *run_id);
extern int	FireDueTimers(TimestampTz now, int max_items);

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
} StartRequest;

extern IdReusePolicy ParseIdReusePolicy(const char *name, const char *argname);
extern pg_uuid_t *StartWorkflowExecution(StartRequest *req, TimestampTz now);
extern void TerminateRun(RunState *rs, TimestampTz now, const char *reason,
						 Jsonb *details);

#endif							/* DURABLE_H */

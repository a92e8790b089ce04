/*-------------------------------------------------------------------------
 *
 * replay.c
 *	  Workflow functions written in SQL, run by replay (docs/sql-workflows.md).
 *
 * On each decision task of a registered workflow type the executor calls
 * the workflow function again from the start.  The calls it makes
 * (durable.activity, durable.sleep, ...) each take the next command number,
 * 1, 2, 3 ...; a command whose event is in history returns what history
 * recorded, and the first one without a result makes its decision and
 * suspends the function by raising query_canceled, which a PL/pgSQL WHEN
 * OTHERS handler does not catch.  Once suspended, every later call raises
 * again, and whatever the function does afterwards is ignored.  The
 * decisions made go to complete the decision task.
 *
 * Commands are matched to history by number: activityId and timerId are the
 * number, a child's StartChildWorkflowExecutionInitiated carries it as its
 * control, a side effect's marker in its details.  A command whose number
 * history holds for another kind or type, a new command issued at a point
 * that history shows as past, or a command of history that the replay does
 * not issue, is non-determinism: the decision task fails and history stays
 * as it was.
 *
 * Time and visibility follow history, so that a replay sees what the first
 * execution saw.  The code runs "in" a decision task: at first the first
 * one, and after each result it consumes, the first completed decision task
 * that started after that result's event.  durable.now() is that task's
 * start time; signals and the cancel request are visible when their event
 * precedes it.  A blocking call waits for its result or the cancel request,
 * whichever history has first.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "durable.h"
#include "base/json.h"
#include "base/util.h"
#include "store/direct.h"
#include "store/executor_share.h"
#include "store/metrics.h"
#include "store/registry.h"
#include "engine/decisions.h"
#include "engine/runs.h"
#include "sqlwf/replay.h"
#include "sqlwf/usercode.h"

typedef enum CommandKind
{
	CMD_ACTIVITY,
	CMD_TIMER,
	CMD_CHILD,
	CMD_MARKER
} CommandKind;

static const char *const command_kind_names[] = {
	"activity", "timer", "child workflow", "side effect"
};

/* A command as history recorded it, with its outcome if any */
typedef struct HistoryCommand
{
	bool		present;
	CommandKind kind;
	char	   *name;			/* activity type, child type, marker name */
	char	   *child_id;		/* a child's workflowId */
	int64		event_id;		/* the event that recorded the command */
	int64		outcome_id;		/* 0: no outcome yet */
	char	   *outcome_type;
	Jsonb	   *outcome_attrs;
	bool		timer_canceled;
	Jsonb	   *marker_value;
	Jsonb	   *marker_details;
} HistoryCommand;

/* A change id's version in this execution (get_version) */
typedef struct ChangeVersion
{
	char	   *change_id;
	int			version;
} ChangeVersion;

/* get_version's version of a run that passed the change before it existed */
#define DEFAULT_VERSION		(-1)
#define VERSION_MARKER		"Version"

typedef struct HistorySignal
{
	int64		event_id;
	char	   *name;
	Jsonb	   *input;
	bool		consumed;
} HistorySignal;

/*
 * A run's history as replay indexes it (history_read): the commands by
 * number, their outcomes, the signals, the cancel request and the completed
 * decision tasks, from the events before next_event_id.  The executor keeps
 * one across the decision tasks of a chain (ReplayHistoryCreate), so that
 * each task reads and parses only the events appended since the last one.
 */
struct ReplayHistory
{
	MemoryContext cxt;			/* holds all of it */
	bool		valid;			/* false: read again from the first event */
	pg_uuid_t	run_id;
	int64		next_event_id;	/* the events before this one are indexed */

	Jsonb	   *input;
	TimestampTz start_time;

	/* The completed decision tasks, with room for one more (index_history) */
	int			ntasks;
	int			task_capacity;
	int64	   *task_ids;		/* DecisionTaskStarted event ids */
	int64	   *task_completed_ids; /* their DecisionTaskCompleted */
	TimestampTz *task_times;
	int64		pending_started;	/* a DecisionTaskStarted not completed yet */
	TimestampTz pending_time;

	int			ncommands;		/* highest command number in history */
	int			capacity;
	HistoryCommand *commands;	/* by number - 1 */
	int32	   *cmd_of_event;	/* command number of each event id, or 0 */
	int64		cmd_of_event_size;
	int			nsignals;
	int			sig_capacity;
	HistorySignal *signals;
	int64		cancel_event_id;	/* 0: no cancel request */
	char	   *history_error;	/* history this code cannot have made */
	int64		nd_event_id;	/* where */
	char	   *nd_history;		/* what history has there */
};

/*
 * A history the executor keeps past this size (history and parsed
 * payloads) is forgotten after its task: the next task reads it again.
 */
#define REPLAY_HISTORY_MAX_BYTES	(32 * 1024 * 1024)

typedef struct ReplayContext
{
	MemoryContext mcxt;			/* outlives the function's subtransaction */
	RunState   *rs;
	Jsonb	   *input;
	TimestampTz start_time;

	/* The decision tasks the code can run in: completed ones and this one */
	int			ntasks;
	int64	   *task_ids;		/* DecisionTaskStarted event ids */
	int64	   *task_completed_ids; /* their DecisionTaskCompleted (0: now) */
	TimestampTz *task_times;
	int			horizon;		/* index into task_ids */

	int			ncommands;		/* highest command number in history */
	HistoryCommand *commands;	/* by number - 1 */
	int			nsignals;
	HistorySignal *signals;
	int64		cancel_event_id;	/* 0: no cancel request */
	bool		cancel_raised;
	char	   *history_error;	/* history this code cannot have made */

	/* This execution */
	int			issued;			/* commands issued so far */
	int			ndecisions;
	int			maxdecisions;
	Jsonb	  **decisions;
	bool		suspended;
	char	   *nondeterminism;
	int64		nd_event_id;	/* where history and code part (0: unknown) */
	char	   *nd_history;		/* what history has there */
	char	   *nd_code;		/* what the code did */
	List	   *versions;		/* ChangeVersion, in ctx->mcxt */
	bool		checking;		/* replay_check(): nothing observed */
} ReplayContext;

static ReplayContext *replay = NULL;

static ReplayOutcome replay_workflow(RunState *rs, Registration *reg,
									 TimestampTz now, ReplayHistory *history,
									 Jsonb **decisions, Jsonb **failure);

/* ----------------
 * Reading history
 * ----------------
 */

static char *
attr_text(Jsonb *attrs, const char *key)
{
	JsonbValue *v = JsonGetField(attrs, key);

	if (v == NULL || v->type != jbvString)
		return NULL;
	return pnstrdup(v->val.string.val, v->val.string.len);
}

/*
 * A command number that a decision wrote into history (a child's control, a
 * marker's details.id), as command_number() reads one written as text.  An
 * external worker may have written any number there: one out of range
 * numbers no command of this code (0).
 */
static int
numeric_command_number(JsonbValue *v)
{
	bool		error = false;
	int32		n;

	if (v == NULL || v->type != jbvNumeric)
		return 0;
	n = numeric_int4_opt_error(v->val.numeric, &error);
	if (error || n <= 0 || n > 1000000)
		return 0;
	return n;
}

static int64
attr_int(Jsonb *attrs, const char *key)
{
	JsonbValue *v = JsonGetField(attrs, key);

	if (v == NULL || v->type != jbvNumeric)
		return 0;
	return DatumGetInt64(DirectFunctionCall1(numeric_int8,
											 NumericGetDatum(v->val.numeric)));
}

static Jsonb *
attr_jsonb(Jsonb *attrs, const char *key)
{
	JsonbValue *v = JsonGetField(attrs, key);

	if (v == NULL || v->type == jbvNull)
		return NULL;
	return JsonbValueToJsonb(v);
}

/* A command number written as text ("3"), or 0. */
static int
command_number(const char *s)
{
	char	   *end;
	long		n;

	if (s == NULL || s[0] < '1' || s[0] > '9')
		return 0;
	n = strtol(s, &end, 10);
	if (*end != '\0' || n <= 0 || n > 1000000)
		return 0;
	return (int) n;
}

/* The slot of command n, growing the array; NULL for a bad number. */
static HistoryCommand *
command_slot(ReplayHistory *h, int n)
{
	if (n <= 0)
		return NULL;
	if (n > h->capacity)
	{
		int			newcap = Max(n, h->capacity * 2);

		h->commands = repalloc(h->commands, sizeof(HistoryCommand) * newcap);
		memset(&h->commands[h->capacity], 0,
			   sizeof(HistoryCommand) * (newcap - h->capacity));
		h->capacity = newcap;
	}
	if (n > h->ncommands)
		h->ncommands = n;
	return &h->commands[n - 1];
}

/*
 * Record a command event of history; a command that durable's replay cannot
 * have made is remembered as a history error (non-determinism).
 */
static void
note_command(ReplayHistory *h, int n, CommandKind kind, char *name,
			 int64 event_id)
{
	HistoryCommand *c = command_slot(h, n);

	if (c == NULL || c->present)
	{
		if (h->history_error == NULL)
		{
			h->history_error =
				psprintf("history event %lld records a %s that durable's replay did not number",
						 (long long) event_id, command_kind_names[kind]);
			h->nd_event_id = event_id;
			h->nd_history = psprintf("%s not numbered by durable's replay",
									 command_kind_names[kind]);
		}
		return;
	}
	c->present = true;
	c->kind = kind;
	c->name = name;
	c->event_id = event_id;
	h->cmd_of_event[event_id] = n;
}

/* An outcome event of the command that event ref_event_id recorded */
static void
note_outcome(ReplayHistory *h, int64 last_event_id, int64 ref_event_id,
			 int64 event_id, const char *type, Jsonb *attrs)
{
	int			n;

	if (ref_event_id <= 0 || ref_event_id > last_event_id)
		return;
	n = h->cmd_of_event[ref_event_id];
	if (n <= 0 || h->commands[n - 1].outcome_id != 0)
		return;
	h->commands[n - 1].outcome_id = event_id;
	h->commands[n - 1].outcome_type = pstrdup(type);
	/* The event's copy lives only as long as the scan (history_read) */
	h->commands[n - 1].outcome_attrs = attrs == NULL ? NULL :
		(Jsonb *) DatumGetPointer(datumCopy(JsonbPGetDatum(attrs), false, -1));
}

/* An empty history of no run, in cxt */
static void
history_init(ReplayHistory *h, MemoryContext cxt)
{
	memset(h, 0, sizeof(*h));
	h->cxt = cxt;
}

/* Forget all of it: the next read starts at the first event. */
static void
history_reset(ReplayHistory *h)
{
	MemoryContext cxt = h->cxt;

	MemoryContextReset(cxt);
	history_init(h, cxt);
}

/*
 * Bring h up to the run's events before event last (SPI connected): the
 * commands by number, their outcomes, the signals, the cancel request and
 * the completed decision tasks.  Only the events from h->next_event_id on
 * are read, unless h holds another run or a later bound: a run's history is
 * only appended to, and while the executor holds the run locked nobody else
 * appends to it.  Everything kept is allocated in h->cxt; the events are
 * read into a context of the scan's own, deleted after it.
 */
static void
history_read(ReplayHistory *h, RunState *rs, int64 last, bool checking)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	MemoryContext scancxt;
	HistoryScan hs;
	HistoryEvent ev;

	if (!h->valid ||
		memcmp(&h->run_id, &rs->run_id, sizeof(pg_uuid_t)) != 0 ||
		h->next_event_id > last)
	{
		if (h->commands != NULL)
			history_reset(h);
		h->run_id = rs->run_id;
		h->capacity = 16;
		h->commands = MemoryContextAllocZero(h->cxt, sizeof(HistoryCommand) * h->capacity);
		h->sig_capacity = 4;
		h->signals = MemoryContextAllocZero(h->cxt, sizeof(HistorySignal) * h->sig_capacity);
		h->task_capacity = 8;
		h->task_ids = MemoryContextAlloc(h->cxt, sizeof(int64) * h->task_capacity);
		h->task_completed_ids = MemoryContextAlloc(h->cxt, sizeof(int64) * h->task_capacity);
		h->task_times = MemoryContextAlloc(h->cxt, sizeof(TimestampTz) * h->task_capacity);
		h->cmd_of_event_size = last + 1;
		h->cmd_of_event = MemoryContextAllocZero(h->cxt, sizeof(int32) * h->cmd_of_event_size);
	}
	else if (last + 1 > h->cmd_of_event_size)
	{
		int64		size = Max(last + 1, h->cmd_of_event_size * 2);

		h->cmd_of_event = repalloc(h->cmd_of_event, sizeof(int32) * size);
		memset(&h->cmd_of_event[h->cmd_of_event_size], 0,
			   sizeof(int32) * (size - h->cmd_of_event_size));
		h->cmd_of_event_size = size;
	}
	/* Until this read is done, h holds nothing that can be used */
	h->valid = false;
	scancxt = AllocSetContextCreate(CurrentMemoryContext, "durable replay scan",
									ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(scancxt);

	/*
	 * The run's events in order, through the primary key of durable.history:
	 * a kept plan planned on a nearly empty table would scan the whole table
	 * from then on.
	 */
	BeginHistoryScanAfter(&hs, &rs->run_id, Max(h->next_event_id - 1, 0));
	while (HistoryScanNext(&hs, &ev))
	{
		int64		id = ev.event_id;
		TimestampTz time = ev.event_time;
		char	   *type = ev.event_type;
		Jsonb	   *attrs = ev.attributes;	/* a copy (HistoryScanNext) */

		/* Read here anyway: the task's schedule-to-start (metrics.c) */
		if (id == rs->decision_scheduled_id && !rs->decision_started_time_null &&
			!checking)
			MetricsObserve(rs->namespace, rs->task_queue,
						   MH_DECISION_SCHEDULE_TO_START,
						   TimestampDiffSeconds(rs->decision_started_time,
												time));
		if (id >= last)
			break;
		MemoryContextSwitchTo(h->cxt);
		if (strcmp(type, "WorkflowExecutionStarted") == 0)
		{
			h->input = attr_jsonb(attrs, "input");
			h->start_time = time;
		}
		else if (strcmp(type, "DecisionTaskStarted") == 0)
		{
			h->pending_started = id;
			h->pending_time = time;
		}
		else if (strcmp(type, "DecisionTaskCompleted") == 0 && h->pending_started != 0)
		{
			/* Room is kept for one more: the task being run (index_history) */
			if (h->ntasks + 1 >= h->task_capacity)
			{
				h->task_capacity *= 2;
				h->task_ids = repalloc(h->task_ids, sizeof(int64) * h->task_capacity);
				h->task_completed_ids = repalloc(h->task_completed_ids,
												 sizeof(int64) * h->task_capacity);
				h->task_times = repalloc(h->task_times, sizeof(TimestampTz) * h->task_capacity);
			}
			h->task_ids[h->ntasks] = h->pending_started;
			h->task_completed_ids[h->ntasks] = id;
			h->task_times[h->ntasks] = h->pending_time;
			h->ntasks++;
			h->pending_started = 0;
		}
		else if (strcmp(type, "ActivityTaskScheduled") == 0)
			note_command(h, command_number(attr_text(attrs, "activityId")),
						 CMD_ACTIVITY, attr_text(attrs, "activityType"), id);
		else if (strcmp(type, "ActivityTaskCompleted") == 0 ||
				 strcmp(type, "ActivityTaskFailed") == 0 ||
				 strcmp(type, "ActivityTaskTimedOut") == 0 ||
				 strcmp(type, "ActivityTaskCanceled") == 0)
			note_outcome(h, last, attr_int(attrs, "scheduledEventId"), id,
						 type, attrs);
		else if (strcmp(type, "TimerStarted") == 0)
			note_command(h, command_number(attr_text(attrs, "timerId")),
						 CMD_TIMER, NULL, id);
		else if (strcmp(type, "TimerFired") == 0)
			note_outcome(h, last, attr_int(attrs, "startedEventId"), id, type,
						 attrs);
		else if (strcmp(type, "TimerCanceled") == 0)
		{
			int64		ref = attr_int(attrs, "startedEventId");

			if (ref > 0 && ref < last && h->cmd_of_event[ref] > 0)
				h->commands[h->cmd_of_event[ref] - 1].timer_canceled = true;
		}
		else if (strcmp(type, "StartChildWorkflowExecutionInitiated") == 0)
		{
			Jsonb	   *control = attr_jsonb(attrs, "control");
			int			n = 0;

			if (control != NULL && JB_ROOT_IS_SCALAR(control))
			{
				JsonbValue	v;

				if (JsonbExtractScalar(&control->root, &v))
					n = numeric_command_number(&v);
			}
			note_command(h, n, CMD_CHILD, attr_text(attrs, "workflowType"), id);
			if (n > 0 && n <= h->ncommands)
				h->commands[n - 1].child_id = attr_text(attrs, "workflowId");
		}
		else if (strcmp(type, "StartChildWorkflowExecutionFailed") == 0 ||
				 strcmp(type, "ChildWorkflowExecutionCompleted") == 0 ||
				 strcmp(type, "ChildWorkflowExecutionFailed") == 0 ||
				 strcmp(type, "ChildWorkflowExecutionCanceled") == 0 ||
				 strcmp(type, "ChildWorkflowExecutionTimedOut") == 0 ||
				 strcmp(type, "ChildWorkflowExecutionTerminated") == 0)
			note_outcome(h, last, attr_int(attrs, "initiatedEventId"), id,
						 type, attrs);
		else if (strcmp(type, "MarkerRecorded") == 0)
		{
			Jsonb	   *details = attr_jsonb(attrs, "details");
			int			n = details ? numeric_command_number(JsonGetField(details, "id")) : 0;

			note_command(h, n, CMD_MARKER, attr_text(attrs, "markerName"), id);
			if (n > 0 && n <= h->ncommands)
			{
				h->commands[n - 1].marker_value = attr_jsonb(details, "value");
				h->commands[n - 1].marker_details = details;
			}
		}
		else if (strcmp(type, "WorkflowExecutionSignaled") == 0)
		{
			if (h->nsignals == h->sig_capacity)
			{
				h->sig_capacity *= 2;
				h->signals = repalloc(h->signals, sizeof(HistorySignal) * h->sig_capacity);
			}
			h->signals[h->nsignals].event_id = id;
			h->signals[h->nsignals].name = attr_text(attrs, "signalName");
			h->signals[h->nsignals].input = attr_jsonb(attrs, "input");
			h->signals[h->nsignals].consumed = false;
			h->nsignals++;
		}
		else if (strcmp(type, "WorkflowExecutionCancelRequested") == 0 &&
				 h->cancel_event_id == 0)
			h->cancel_event_id = id;
		MemoryContextSwitchTo(scancxt);
	}
	EndHistoryScan(&hs);
	MemoryContextSwitchTo(oldcxt);
	MemoryContextDelete(scancxt);
	h->next_event_id = last;
	h->valid = true;
}

/*
 * Index the run's history before event last into ctx (SPI connected), from
 * h (NULL: a history of this call only, in ctx->mcxt) brought up to last.
 * The current task's DecisionTaskStarted is not written yet: its id is last,
 * its time now.  The replay marks signals consumed and timers canceled, so
 * it gets copies of those; the rest of h it only reads.
 */
static void
index_history(ReplayContext *ctx, ReplayHistory *h, int64 last,
			  TimestampTz now)
{
	ReplayHistory local;

	if (h == NULL)
	{
		history_init(&local, ctx->mcxt);
		h = &local;
	}
	history_read(h, ctx->rs, last, ctx->checking);

	ctx->input = h->input;
	ctx->start_time = h->start_time;
	ctx->ncommands = h->ncommands;
	ctx->commands = palloc(sizeof(HistoryCommand) * Max(h->ncommands, 1));
	memcpy(ctx->commands, h->commands, sizeof(HistoryCommand) * h->ncommands);
	ctx->nsignals = h->nsignals;
	ctx->signals = palloc(sizeof(HistorySignal) * Max(h->nsignals, 1));
	memcpy(ctx->signals, h->signals, sizeof(HistorySignal) * h->nsignals);
	ctx->cancel_event_id = h->cancel_event_id;
	ctx->history_error = h->history_error;
	ctx->nd_event_id = h->nd_event_id;
	ctx->nd_history = h->nd_history;

	/* The decision task being run now, in the room kept for it */
	h->task_ids[h->ntasks] = last;
	h->task_completed_ids[h->ntasks] = 0;
	h->task_times[h->ntasks] = now;
	ctx->task_ids = h->task_ids;
	ctx->task_completed_ids = h->task_completed_ids;
	ctx->task_times = h->task_times;
	ctx->ntasks = h->ntasks + 1;
	ctx->horizon = 0;
}

/* ----------------
 * The calls of a workflow function
 * ----------------
 */

/* The running replay; 55000 outside a workflow function. */
static ReplayContext *
enter(const char *function)
{
	if (replay == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("durable.%s() can only be called inside a workflow function run by durable",
						function),
				 errhint("Register the function with durable.register_workflow().")));
	if (replay->suspended || replay->nondeterminism != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_QUERY_CANCELED),
				 errmsg("durable: the workflow function is suspended until its next decision task"),
				 errhint("Workflow functions must not catch query_canceled.")));
	return replay;
}

/* Suspend the function until its next decision task. */
static void
suspend(ReplayContext *ctx)
{
	ctx->suspended = true;
	ereport(ERROR,
			(errcode(ERRCODE_QUERY_CANCELED),
			 errmsg("durable: the workflow function is suspended until its next decision task"),
			 errhint("Workflow functions must not catch query_canceled.")));
}

/*
 * History disagrees with the code: stop, and fail the decision task.  The
 * event where they part (0: unknown), what history has there and what the
 * code did are kept for replay_check.
 */
static void
nondeterministic(ReplayContext *ctx, int64 event_id, const char *history,
				 const char *code, const char *message)
{
	ctx->nondeterminism = MemoryContextStrdup(ctx->mcxt, message);
	ctx->nd_event_id = event_id;
	ctx->nd_history = history ? MemoryContextStrdup(ctx->mcxt, history) : NULL;
	ctx->nd_code = code ? MemoryContextStrdup(ctx->mcxt, code) : NULL;
	ereport(ERROR,
			(errcode(ERRCODE_QUERY_CANCELED),
			 errmsg("durable: non-deterministic workflow: %s", message)));
}

/* Move the code's time past event_id: the first task started after it. */
static void
advance(ReplayContext *ctx, int64 event_id)
{
	while (ctx->horizon < ctx->ntasks - 1 &&
		   ctx->task_ids[ctx->horizon] < event_id)
		ctx->horizon++;
}

static bool
at_present(ReplayContext *ctx)
{
	return ctx->horizon == ctx->ntasks - 1;
}

/* Add a decision made by this execution (built in the caller's context). */
static void
add_decision(ReplayContext *ctx, Jsonb *decision)
{
	MemoryContext old = MemoryContextSwitchTo(ctx->mcxt);

	if (ctx->ndecisions == ctx->maxdecisions)
	{
		ctx->maxdecisions = Max(8, ctx->maxdecisions * 2);
		ctx->decisions = ctx->decisions == NULL ?
			palloc(sizeof(Jsonb *) * ctx->maxdecisions) :
			repalloc(ctx->decisions, sizeof(Jsonb *) * ctx->maxdecisions);
	}
	ctx->decisions[ctx->ndecisions++] = (Jsonb *) datumCopy(JsonbPGetDatum(decision), false, -1);
	MemoryContextSwitchTo(old);
}

/*
 * Check a decision this code makes the way complete_decision_task would,
 * naming the function's options in errors.
 */
static void
check_decision(ReplayContext *ctx, Jsonb *decision, const char *what)
{
	Decision   *list;
	Jsonb	   *one = JsonbArray(&decision, 1);

	SetDecisionLabel(what);
	PG_TRY();
	{
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		(void) ParseDecisions(ctx->rs, one, &list);
		SPI_finish();
	}
	PG_FINALLY();
	{
		SetDecisionLabel(NULL);
	}
	PG_END_TRY();
}

/* Copy the keys of options into a decision, refusing those not allowed. */
static void
add_options(JsonBuilder *jb, Jsonb *options, const char *const *allowed)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	char	   *key = NULL;

	if (options == NULL)
		return;
	if (!JB_ROOT_IS_OBJECT(options))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options must be a JSON object")));
	it = JsonbIteratorInit(&options->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			int			k;
			bool		known = false;

			key = pnstrdup(v.val.string.val, v.val.string.len);
			for (k = 0; allowed[k] != NULL; k++)
				if (strcmp(key, allowed[k]) == 0)
					known = true;
			if (!known)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("options has an unknown field \"%s\"", key)));
		}
		else if (tok == WJB_VALUE)
			JsonAddJsonb(jb, key, JsonbValueToJsonb(&v));
	}
}

/* A command the code issues, for messages: "activity charge", "timer" */
static char *
command_text(CommandKind kind, const char *name)
{
	if (kind == CMD_MARKER)
		return name == NULL || strcmp(name, "SideEffect") == 0 ?
			pstrdup("side effect") : psprintf("marker %s", name);
	return psprintf("%s%s%s", command_kind_names[kind], name ? " " : "",
					name ? name : "");
}

/* The change id of a version marker of history, or NULL for another command. */
static char *
version_change_id(HistoryCommand *c)
{
	if (c->kind != CMD_MARKER || c->name == NULL ||
		strcmp(c->name, VERSION_MARKER) != 0 || c->marker_details == NULL)
		return NULL;
	return attr_text(c->marker_details, "changeId");
}

/* A command of history, for messages */
static char *
history_command_text(HistoryCommand *c)
{
	char	   *change = version_change_id(c);

	if (change != NULL)
		return psprintf("version marker of change \"%s\"", change);
	return command_text(c->kind, c->name);
}

/*
 * Whether command c of history is a version marker that deprecate_patch()
 * recorded: code that no longer calls it passes over it (Temporal's
 * deprecated patches).
 */
static bool
is_deprecated_marker(HistoryCommand *c)
{
	JsonbValue *v;

	if (version_change_id(c) == NULL)
		return false;
	v = JsonGetField(c->marker_details, "deprecated");
	return v != NULL && v->type == jbvBool && v->val.boolean;
}

/* Pass over the deprecated version markers at the next command numbers. */
static void
skip_deprecated_markers(ReplayContext *ctx)
{
	while (ctx->issued < ctx->ncommands &&
		   ctx->commands[ctx->issued].present &&
		   is_deprecated_marker(&ctx->commands[ctx->issued]))
		ctx->issued++;
}

/* The DecisionTaskCompleted of the task the code runs in (0: this one). */
static int64
horizon_completed_id(ReplayContext *ctx)
{
	return ctx->task_completed_ids[ctx->horizon];
}

/* Take the next command number; its history entry, or NULL if new. */
static HistoryCommand *
next_command(ReplayContext *ctx, CommandKind kind, const char *name, int *n)
{
	HistoryCommand *c;

	skip_deprecated_markers(ctx);
	*n = ++ctx->issued;
	if (*n > ctx->ncommands || !ctx->commands[*n - 1].present)
	{
		if (!at_present(ctx))
			nondeterministic(ctx, horizon_completed_id(ctx),
							 psprintf("no command %d", *n),
							 command_text(kind, name),
							 psprintf("the workflow issued %s as command %d, which history does not have",
									  command_text(kind, name), *n));
		return NULL;
	}
	c = &ctx->commands[*n - 1];
	if (c->kind != kind || version_change_id(c) != NULL ||
		(name != NULL && c->name != NULL && strcmp(name, c->name) != 0))
		nondeterministic(ctx, c->event_id, history_command_text(c),
						 command_text(kind, name),
						 psprintf("command %d is %s in history, but the workflow issued %s",
								  *n, history_command_text(c),
								  command_text(kind, name)));
	return c;
}

/*
 * Before a blocking call returns its result: the cancel request, when
 * history has it before that result (or there is none yet), raises WF008
 * once.
 */
static void
check_cancel(ReplayContext *ctx, int64 outcome_id)
{
	if (ctx->cancel_event_id == 0 || ctx->cancel_raised)
		return;
	if (outcome_id != 0 && outcome_id < ctx->cancel_event_id)
		return;
	ctx->cancel_raised = true;
	advance(ctx, ctx->cancel_event_id);
	ereport(ERROR,
			(errcode(ERRCODE_DURABLE_CANCELED),
			 errmsg("workflow canceled"),
			 errdetail("cancel_workflow was called for workflow \"%s\".",
					   ctx->rs->workflow_id)));
}

/* The details of a failure outcome, as text for DETAIL. */
static char *
failure_detail(Jsonb *attrs)
{
	Jsonb	   *details = attr_jsonb(attrs, "details");

	return details ? JsonbToCString(NULL, &details->root, VARSIZE(details)) : "null";
}

/* The result of an activity command, or WF007; suspends when it has none. */
static Datum
activity_result(ReplayContext *ctx, HistoryCommand *c, int n, bool *isnull)
{
	Jsonb	   *result;
	char	   *reason;

	check_cancel(ctx, c ? c->outcome_id : 0);
	if (c == NULL || c->outcome_id == 0)
		suspend(ctx);
	advance(ctx, c->outcome_id);
	if (strcmp(c->outcome_type, "ActivityTaskCompleted") == 0)
	{
		result = attr_jsonb(c->outcome_attrs, "result");
		*isnull = result == NULL;
		return result ? JsonbPGetDatum(result) : (Datum) 0;
	}
	if (strcmp(c->outcome_type, "ActivityTaskFailed") == 0)
		reason = attr_text(c->outcome_attrs, "reason");
	else if (strcmp(c->outcome_type, "ActivityTaskTimedOut") == 0)
		reason = psprintf("durable:Timeout %s",
						  attr_text(c->outcome_attrs, "timeoutType"));
	else
		reason = "durable:Canceled";
	ereport(ERROR,
			(errcode(ERRCODE_DURABLE_ACTIVITY_FAILED),
			 errmsg("activity %d (%s) failed: %s", n, c->name, reason),
			 errdetail("%s", failure_detail(c->outcome_attrs))));
	return (Datum) 0;
}

static const char *const activity_options[] = {
	"taskQueue", "scheduleToStartTimeoutSeconds", "startToCloseTimeoutSeconds",
	"scheduleToCloseTimeoutSeconds", "heartbeatTimeoutSeconds", "retryPolicy",
	"priority", "concurrencyKey", NULL
};

/* durable.activity and durable.start_activity: schedule or find command n. */
static HistoryCommand *
schedule_activity(ReplayContext *ctx, FunctionCallInfo fcinfo, int *n)
{
	char	   *type = CheckName(PG_ARGISNULL(0) ? NULL : PG_GETARG_TEXT_PP(0),
								 "activity_type");
	Jsonb	   *input = PG_ARGISNULL(1) ? NULL : PG_GETARG_JSONB_P(1);
	Jsonb	   *options = PG_ARGISNULL(2) ? NULL : PG_GETARG_JSONB_P(2);
	HistoryCommand *c;
	JsonBuilder jb;
	Jsonb	   *decision;

	CheckPayload(input, "input");
	c = next_command(ctx, CMD_ACTIVITY, type, n);
	if (c != NULL)
		return c;
	JsonBegin(&jb);
	JsonAddText(&jb, "decisionType", "ScheduleActivityTask");
	JsonAddText(&jb, "activityId", psprintf("%d", *n));
	JsonAddText(&jb, "activityType", type);
	JsonAddJsonb(&jb, "input", input);
	add_options(&jb, options, activity_options);
	decision = JsonFinish(&jb);
	check_decision(ctx, decision, "options");
	add_decision(ctx, decision);
	return NULL;
}

PG_FUNCTION_INFO_V1(durable_activity);
/* durable.activity(activity_type, input, options): run it, return its result */
Datum
durable_activity(PG_FUNCTION_ARGS)
{
	ReplayContext *ctx = enter("activity");
	int			n;
	HistoryCommand *c = schedule_activity(ctx, fcinfo, &n);
	bool		isnull = false;
	Datum		result = activity_result(ctx, c, n, &isnull);

	if (isnull)
		PG_RETURN_NULL();
	return result;
}

PG_FUNCTION_INFO_V1(durable_start_activity);
/* durable.start_activity(activity_type, input, options): a handle to await */
Datum
durable_start_activity(PG_FUNCTION_ARGS)
{
	ReplayContext *ctx = enter("start_activity");
	int			n;

	(void) schedule_activity(ctx, fcinfo, &n);
	PG_RETURN_TEXT_P(cstring_to_text(psprintf("%d", n)));
}

PG_FUNCTION_INFO_V1(durable_await);
/* durable.await(handle): the result of a started activity */
Datum
durable_await(PG_FUNCTION_ARGS)
{
	ReplayContext *ctx = enter("await");
	char	   *handle = CheckName(PG_ARGISNULL(0) ? NULL : PG_GETARG_TEXT_PP(0),
								   "handle");
	int			n = command_number(handle);
	HistoryCommand *c = NULL;
	bool		isnull = false;
	Datum		result;

	if (n == 0 || n > ctx->issued)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("handle \"%s\" is not an activity started by this workflow", handle)));
	if (n <= ctx->ncommands && ctx->commands[n - 1].present)
	{
		c = &ctx->commands[n - 1];
		if (c->kind != CMD_ACTIVITY)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("handle \"%s\" is not an activity started by this workflow", handle)));
	}
	result = activity_result(ctx, c, n, &isnull);
	if (isnull)
		PG_RETURN_NULL();
	return result;
}

/* A StartTimer decision for command n. */
static void
start_timer(ReplayContext *ctx, int n, double seconds)
{
	JsonBuilder jb;

	JsonBegin(&jb);
	JsonAddText(&jb, "decisionType", "StartTimer");
	JsonAddText(&jb, "timerId", psprintf("%d", n));
	JsonAddFloat(&jb, "startToFireTimeoutSeconds", seconds);
	add_decision(ctx, JsonFinish(&jb));
}

PG_FUNCTION_INFO_V1(durable_sleep);
/* durable.sleep(duration): a durable timer */
Datum
durable_sleep(PG_FUNCTION_ARGS)
{
	ReplayContext *ctx = enter("sleep");
	double		seconds;
	HistoryCommand *c;
	int			n;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("duration must not be null")));
	seconds = IntervalToSeconds(PG_GETARG_INTERVAL_P(0), "duration", true);
	if (seconds == 0)
		PG_RETURN_VOID();
	c = next_command(ctx, CMD_TIMER, NULL, &n);
	if (c == NULL)
	{
		start_timer(ctx, n, seconds);
		suspend(ctx);
	}
	check_cancel(ctx, c->outcome_id);
	if (c->outcome_id == 0)
		suspend(ctx);
	advance(ctx, c->outcome_id);
	PG_RETURN_VOID();
}

/* The first signal of that name not yet consumed (before event before, if not 0). */
static HistorySignal *
find_signal(ReplayContext *ctx, const char *name, int64 before)
{
	int			i;

	for (i = 0; i < ctx->nsignals; i++)
	{
		HistorySignal *s = &ctx->signals[i];

		if (!s->consumed && strcmp(s->name, name) == 0 &&
			(before == 0 || s->event_id < before))
			return s;
	}
	return NULL;
}

static Datum
consume_signal(ReplayContext *ctx, HistorySignal *s, FunctionCallInfo fcinfo)
{
	s->consumed = true;
	advance(ctx, s->event_id);
	/* A signal without input is JSON null: SQL NULL means the timeout passed. */
	if (s->input == NULL)
		return DirectFunctionCall1(jsonb_in, CStringGetDatum("null"));
	PG_RETURN_JSONB_P(s->input);
}

PG_FUNCTION_INFO_V1(durable_wait_signal);
/*
 * durable.wait_signal(signal_name, timeout): the input of the next signal of
 * that name, or NULL when the timeout passes first.
 */
Datum
durable_wait_signal(PG_FUNCTION_ARGS)
{
	ReplayContext *ctx = enter("wait_signal");
	char	   *name = CheckName(PG_ARGISNULL(0) ? NULL : PG_GETARG_TEXT_PP(0),
								 "signal_name");
	double		seconds = -1;
	HistorySignal *s;
	HistoryCommand *c;
	int			n;

	if (!PG_ARGISNULL(1))
		seconds = IntervalToSeconds(PG_GETARG_INTERVAL_P(1), "timeout", true);

	/* One that arrived before this line ran is taken at once. */
	s = find_signal(ctx, name, ctx->task_ids[ctx->horizon]);
	if (s != NULL)
		return consume_signal(ctx, s, fcinfo);
	if (seconds == 0)
		PG_RETURN_NULL();

	if (seconds < 0)
	{
		s = find_signal(ctx, name, 0);
		check_cancel(ctx, s ? s->event_id : 0);
		if (s == NULL)
			suspend(ctx);
		return consume_signal(ctx, s, fcinfo);
	}

	/* With a timeout: a timer, and whichever of it and a signal is first. */
	c = next_command(ctx, CMD_TIMER, NULL, &n);
	if (c == NULL)
	{
		start_timer(ctx, n, seconds);
		suspend(ctx);
	}
	s = find_signal(ctx, name, 0);
	if (s != NULL && c->outcome_id != 0 && c->outcome_id < s->event_id)
		s = NULL;
	check_cancel(ctx, s ? s->event_id : c->outcome_id);
	if (s != NULL)
	{
		Datum		result = consume_signal(ctx, s, fcinfo);

		/* The timer is no longer needed. */
		if (c->outcome_id == 0 && !c->timer_canceled && at_present(ctx))
		{
			JsonBuilder jb;

			JsonBegin(&jb);
			JsonAddText(&jb, "decisionType", "CancelTimer");
			JsonAddText(&jb, "timerId", psprintf("%d", n));
			add_decision(ctx, JsonFinish(&jb));
			c->timer_canceled = true;
		}
		return result;
	}
	if (c->outcome_id == 0)
		suspend(ctx);
	advance(ctx, c->outcome_id);
	PG_RETURN_NULL();
}

static const char *const child_options[] = {
	"namespace", "workflowId", "taskQueue", "retryPolicy",
	"workflowExecutionTimeoutSeconds", "workflowRunTimeoutSeconds",
	"taskStartToCloseTimeoutSeconds", "parentClosePolicy",
	"workflowIdReusePolicy", "cronSchedule", "memo", "searchAttributes",
	"priority", "concurrencyKey", NULL
};

PG_FUNCTION_INFO_V1(durable_child_workflow);
/* durable.child_workflow(workflow_type, input, options): its result */
Datum
durable_child_workflow(PG_FUNCTION_ARGS)
{
	ReplayContext *ctx = enter("child_workflow");
	char	   *type = CheckName(PG_ARGISNULL(0) ? NULL : PG_GETARG_TEXT_PP(0),
								 "workflow_type");
	Jsonb	   *input = PG_ARGISNULL(1) ? NULL : PG_GETARG_JSONB_P(1);
	Jsonb	   *options = PG_ARGISNULL(2) ? NULL : PG_GETARG_JSONB_P(2);
	HistoryCommand *c;
	int			n;
	Jsonb	   *result;
	char	   *reason;

	CheckPayload(input, "input");
	c = next_command(ctx, CMD_CHILD, type, &n);
	if (c == NULL)
	{
		JsonBuilder jb;
		Jsonb	   *decision;
		bool		has_id = options != NULL && JB_ROOT_IS_OBJECT(options) &&
			JsonGetField(options, "workflowId") != NULL;

		JsonBegin(&jb);
		JsonAddText(&jb, "decisionType", "StartChildWorkflowExecution");
		JsonAddText(&jb, "workflowType", type);
		JsonAddJsonb(&jb, "input", input);
		if (!has_id)
			JsonAddText(&jb, "workflowId",
						psprintf("%s/%d", ctx->rs->workflow_id, n));
		add_options(&jb, options, child_options);
		JsonAddInt(&jb, "control", n);
		decision = JsonFinish(&jb);
		check_decision(ctx, decision, "options");
		add_decision(ctx, decision);
		suspend(ctx);
	}
	check_cancel(ctx, c->outcome_id);
	if (c->outcome_id == 0)
		suspend(ctx);
	advance(ctx, c->outcome_id);
	if (strcmp(c->outcome_type, "ChildWorkflowExecutionCompleted") == 0)
	{
		result = attr_jsonb(c->outcome_attrs, "result");
		if (result == NULL)
			PG_RETURN_NULL();
		PG_RETURN_JSONB_P(result);
	}
	if (strcmp(c->outcome_type, "StartChildWorkflowExecutionFailed") == 0)
		reason = psprintf("could not start: %s",
						  attr_text(c->outcome_attrs, "cause"));
	else if (strcmp(c->outcome_type, "ChildWorkflowExecutionFailed") == 0)
		reason = attr_text(c->outcome_attrs, "reason");
	else if (strcmp(c->outcome_type, "ChildWorkflowExecutionTimedOut") == 0)
		reason = "durable:Timeout";
	else if (strcmp(c->outcome_type, "ChildWorkflowExecutionCanceled") == 0)
		reason = "durable:Canceled";
	else
		reason = "durable:Terminated";
	ereport(ERROR,
			(errcode(ERRCODE_DURABLE_ACTIVITY_FAILED),
			 errmsg("child workflow \"%s\" (%s) failed: %s",
					c->child_id ? c->child_id : "?", c->name, reason),
			 errdetail("%s", failure_detail(c->outcome_attrs))));
	PG_RETURN_NULL();
}

PG_FUNCTION_INFO_V1(durable_side_effect);
/* durable.side_effect(value): the value recorded the first time */
Datum
durable_side_effect(PG_FUNCTION_ARGS)
{
	ReplayContext *ctx = enter("side_effect");
	Jsonb	   *value = PG_ARGISNULL(0) ? NULL : PG_GETARG_JSONB_P(0);
	HistoryCommand *c;
	int			n;
	JsonBuilder jb;

	c = next_command(ctx, CMD_MARKER, "SideEffect", &n);
	if (c != NULL)
	{
		if (c->marker_value == NULL)
			PG_RETURN_NULL();
		PG_RETURN_JSONB_P(c->marker_value);
	}
	CheckPayload(value, "value");
	JsonBegin(&jb);
	JsonAddText(&jb, "decisionType", "RecordMarker");
	JsonAddText(&jb, "markerName", "SideEffect");
	JsonBeginObject(&jb, "details");
	JsonAddInt(&jb, "id", n);
	JsonAddJsonb(&jb, "value", value);
	JsonEndObject(&jb);
	add_decision(ctx, JsonFinish(&jb));
	if (value == NULL)
		PG_RETURN_NULL();
	PG_RETURN_JSONB_P(value);
}

/* The version this execution gave change_id already, or NULL. */
static ChangeVersion *
known_version(ReplayContext *ctx, const char *change_id)
{
	ListCell   *lc;

	foreach(lc, ctx->versions)
	{
		ChangeVersion *cv = (ChangeVersion *) lfirst(lc);

		if (strcmp(cv->change_id, change_id) == 0)
			return cv;
	}
	return NULL;
}

/* The version a version marker of history records, or fails as non-deterministic. */
static int
marker_version(ReplayContext *ctx, HistoryCommand *c, const char *change_id)
{
	JsonbValue *v = JsonGetField(c->marker_details, "version");
	bool		error = false;
	int32		version = 0;

	if (v != NULL && v->type == jbvNumeric)
		version = numeric_int4_opt_error(v->val.numeric, &error);
	if (v == NULL || v->type != jbvNumeric || error)
		nondeterministic(ctx, c->event_id,
						 psprintf("version marker of change \"%s\" without a version",
								  change_id),
						 NULL,
						 psprintf("history event %lld records a version marker of change \"%s\" without an integer version",
								  (long long) c->event_id, change_id));
	return version;
}

/*
 * The version of change_id in this run (docs/sql-workflows.md "Changing
 * workflow code"), as Cadence's GetVersion: the one recorded by the version
 * marker that history has as the next command; DEFAULT_VERSION (-1), taking
 * no command number, when history has another command there or the code
 * runs in a decision task of the past (the run passed this point before the
 * call existed); otherwise, in the decision task being run, new_version,
 * recorded by a RecordMarker decision.  Later calls with the same change id
 * get the same version.  With check_range, a version outside [min, max] is
 * non-determinism.
 */
static int
change_version(ReplayContext *ctx, const char *change_id, int new_version,
			   bool deprecated, bool check_range, int min_supported,
			   int max_supported)
{
	ChangeVersion *cv = known_version(ctx, change_id);
	int			version;
	int64		event_id = 0;
	bool		recorded = false;

	if (cv != NULL)
		version = cv->version;
	else
	{
		HistoryCommand *c = NULL;
		int			n;

		for (;;)
		{
			char	   *other;

			n = ctx->issued + 1;
			c = n <= ctx->ncommands && ctx->commands[n - 1].present ?
				&ctx->commands[n - 1] : NULL;
			if (c == NULL || !is_deprecated_marker(c))
				break;
			other = version_change_id(c);
			if (strcmp(other, change_id) == 0)
				break;
			ctx->issued++;		/* a deprecated change that code dropped */
		}
		if (c != NULL && version_change_id(c) != NULL &&
			strcmp(version_change_id(c), change_id) == 0)
		{
			version = marker_version(ctx, c, change_id);
			event_id = c->event_id;
			recorded = true;
			ctx->issued = n;
		}
		else if (c != NULL || !at_present(ctx))
		{
			version = DEFAULT_VERSION;
			event_id = c != NULL ? c->event_id : horizon_completed_id(ctx);
		}
		else
		{
			JsonBuilder jb;

			version = new_version;
			recorded = true;
			ctx->issued = n;
			JsonBegin(&jb);
			JsonAddText(&jb, "decisionType", "RecordMarker");
			JsonAddText(&jb, "markerName", VERSION_MARKER);
			JsonBeginObject(&jb, "details");
			JsonAddInt(&jb, "id", n);
			JsonAddText(&jb, "changeId", change_id);
			JsonAddInt(&jb, "version", version);
			if (deprecated)
				JsonAddBool(&jb, "deprecated", true);
			JsonEndObject(&jb);
			add_decision(ctx, JsonFinish(&jb));
		}
		{
			MemoryContext old = MemoryContextSwitchTo(ctx->mcxt);

			cv = palloc(sizeof(ChangeVersion));
			cv->change_id = pstrdup(change_id);
			cv->version = version;
			ctx->versions = lappend(ctx->versions, cv);
			MemoryContextSwitchTo(old);
		}
	}
	if (check_range && (version < min_supported || version > max_supported))
	{
		char	   *has = version == DEFAULT_VERSION && !recorded ?
			psprintf("no version of change \"%s\" (DEFAULT_VERSION -1)", change_id) :
			psprintf("version %d of change \"%s\"", version, change_id);

		nondeterministic(ctx, event_id, has,
						 psprintf("get_version('%s', %d, %d)", change_id,
								  min_supported, max_supported),
						 psprintf("change \"%s\": the run has version %d, but the workflow supports versions %d to %d",
								  change_id, version, min_supported,
								  max_supported));
	}
	return version;
}

/* The change_id argument of the version calls */
static char *
change_id_arg(FunctionCallInfo fcinfo)
{
	return CheckName(PG_ARGISNULL(0) ? NULL : PG_GETARG_TEXT_PP(0),
					 "change_id");
}

PG_FUNCTION_INFO_V1(durable_get_version);
/* durable.get_version(change_id, min_supported, max_supported) */
Datum
durable_get_version(PG_FUNCTION_ARGS)
{
	ReplayContext *ctx = enter("get_version");
	char	   *change_id = change_id_arg(fcinfo);
	int32		min_supported;
	int32		max_supported;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("min_supported must not be null")));
	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("max_supported must not be null")));
	min_supported = PG_GETARG_INT32(1);
	max_supported = PG_GETARG_INT32(2);
	if (min_supported < DEFAULT_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("min_supported must be at least -1 (DEFAULT_VERSION)")));
	if (min_supported > max_supported)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("min_supported (%d) must not be greater than max_supported (%d)",
						min_supported, max_supported)));
	PG_RETURN_INT32(change_version(ctx, change_id, max_supported, false, true,
								   min_supported, max_supported));
}

PG_FUNCTION_INFO_V1(durable_patched);
/* durable.patched(change_id): get_version(change_id, -1, 1) = 1 */
Datum
durable_patched(PG_FUNCTION_ARGS)
{
	ReplayContext *ctx = enter("patched");
	char	   *change_id = change_id_arg(fcinfo);

	PG_RETURN_BOOL(change_version(ctx, change_id, 1, false, true,
								  DEFAULT_VERSION, 1) == 1);
}

PG_FUNCTION_INFO_V1(durable_deprecate_patch);
/*
 * durable.deprecate_patch(change_id): patched() once every run that took the
 * old branch is closed; any version or none is accepted.
 */
Datum
durable_deprecate_patch(PG_FUNCTION_ARGS)
{
	ReplayContext *ctx = enter("deprecate_patch");
	char	   *change_id = change_id_arg(fcinfo);

	(void) change_version(ctx, change_id, 1, true, false, 0, 0);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(durable_workflow_info);
/* durable.workflow_info(): the run the function is running for */
Datum
durable_workflow_info(PG_FUNCTION_ARGS)
{
	ReplayContext *ctx = enter("workflow_info");
	RunState   *rs = ctx->rs;
	JsonBuilder jb;

	JsonBegin(&jb);
	JsonAddText(&jb, "namespace", rs->namespace);
	JsonAddText(&jb, "workflowId", rs->workflow_id);
	JsonAddText(&jb, "runId", UuidToCString(&rs->run_id));
	JsonAddText(&jb, "workflowType", rs->workflow_type);
	JsonAddText(&jb, "taskQueue", rs->task_queue);
	JsonAddInt(&jb, "attempt", rs->attempt);
	JsonAddTimestamp(&jb, "startTime", ctx->start_time);
	JsonAddBool(&jb, "cancelRequested",
				ctx->cancel_event_id != 0 &&
				ctx->cancel_event_id < ctx->task_ids[ctx->horizon]);
	PG_RETURN_JSONB_P(JsonFinish(&jb));
}

/* ----------------
 * Running a decision task
 * ----------------
 */

bool
ReplayActive(void)
{
	return replay != NULL;
}

/* The workflow's time: when the task the code runs in started. */
TimestampTz
ReplayNow(void)
{
	return replay->task_times[replay->horizon];
}

/* {message, detail, hint, context} of an error. */
Jsonb *
ErrorDetailsJson(ErrorData *edata)
{
	JsonBuilder jb;

	JsonBegin(&jb);
	JsonAddText(&jb, "message", edata->message);
	if (edata->detail)
		JsonAddText(&jb, "detail", edata->detail);
	if (edata->hint)
		JsonAddText(&jb, "hint", edata->hint);
	if (edata->context)
		JsonAddText(&jb, "context", edata->context);
	return JsonFinish(&jb);
}

/* The decisions made, then the closing one (if any), as a JSON array. */
static Jsonb *
decision_list(ReplayContext *ctx, Jsonb *closing)
{
	Jsonb	  **items = palloc(sizeof(Jsonb *) * (ctx->ndecisions + 1));

	if (ctx->ndecisions > 0)
		memcpy(items, ctx->decisions, sizeof(Jsonb *) * ctx->ndecisions);
	items[ctx->ndecisions] = closing;
	return JsonbArray(items, ctx->ndecisions + 1);
}

static Jsonb *
message_json(const char *message)
{
	JsonBuilder jb;

	JsonBegin(&jb);
	JsonAddText(&jb, "message", message);
	return JsonFinish(&jb);
}

/*
 * After the function ran (and returned, failed or waits): a command of
 * history that it did not issue is non-determinism.
 */
static void
check_unissued(ReplayContext *ctx, ErrorData *error, bool timed_out)
{
	HistoryCommand *c;

	if (ctx->nondeterminism != NULL || timed_out)
		return;
	skip_deprecated_markers(ctx);
	if (ctx->issued >= ctx->ncommands)
		return;
	c = &ctx->commands[ctx->issued];
	ctx->nondeterminism =
		psprintf("history has %s as command %d, which the workflow did not issue",
				 history_command_text(c), ctx->issued + 1);
	ctx->nd_event_id = c->event_id;
	ctx->nd_history = history_command_text(c);
	ctx->nd_code = ctx->suspended ? "waits before it" :
		error == NULL ? "returned" : psprintf("failed: %s", error->message);
}

/*
 * A history for the decision tasks of one run that an executor runs in one
 * transaction, in a memory context of its own under parent: see
 * ReplayWorkflow.
 */
ReplayHistory *
ReplayHistoryCreate(MemoryContext parent)
{
	ReplayHistory *h = MemoryContextAlloc(parent, sizeof(ReplayHistory));

	history_init(h, AllocSetContextCreate(parent, "durable replay history",
										  ALLOCSET_DEFAULT_SIZES));
	return h;
}

void
ReplayHistoryFree(ReplayHistory *h)
{
	MemoryContextDelete(h->cxt);
	pfree(h);
}

/*
 * Run the workflow function of a started decision task (the run locked,
 * DecisionTaskStarted appended) and return its decisions; or, for
 * non-determinism, the failure details of the decision task.  The
 * function's own writes are always rolled back.
 *
 * history (NULL: none) is the run's history as an earlier decision task of
 * the same transaction indexed it, which the executor keeps from one task
 * of a chain to the next: only the events appended since are read.  Nobody
 * else appends to the run's history meanwhile, since the executor holds the
 * run's lock until the end of the transaction, and the chain's own writes
 * are read back (BeginHistoryScanAfter runs with the current command id).
 * A history of another run or past this task's events is read again from
 * the start, and one that grew past REPLAY_HISTORY_MAX_BYTES is not kept.
 */
ReplayOutcome
ReplayWorkflow(RunState *rs, Registration *reg, TimestampTz now,
			   ReplayHistory *history, Jsonb **decisions, Jsonb **failure)
{
	ReplayOutcome outcome;

	outcome = replay_workflow(rs, reg, now, history, decisions, failure);
	if (history != NULL &&
		MemoryContextMemAllocated(history->cxt, true) > REPLAY_HISTORY_MAX_BYTES)
		history_reset(history);
	return outcome;
}

static ReplayOutcome
replay_workflow(RunState *rs, Registration *reg, TimestampTz now,
				ReplayHistory *history, Jsonb **decisions, Jsonb **failure)
{
	ReplayContext ctx;
	FmgrInfo	flinfo;
	Jsonb	   *result = NULL;
	ErrorData  *error = NULL;
	bool		timed_out = false;
	double		timeout;
	Jsonb	   *closing = NULL;
	JsonBuilder jb;

	memset(&ctx, 0, sizeof(ctx));
	ctx.mcxt = CurrentMemoryContext;
	ctx.rs = rs;
	index_history(&ctx, history, rs->decision_started_id, now);
	*failure = NULL;
	*decisions = NULL;
	if (ctx.history_error != NULL)
	{
		*failure = message_json(ctx.history_error);
		return REPLAY_NON_DETERMINISTIC;
	}

	fmgr_info(reg->function, &flinfo);
	/* At most the namespace's max_task_timeout (executor_share.c) */
	timeout = ExecutorTaskTimeout(rs->namespace, rs->decision_timeout, NULL);
	replay = &ctx;
	PG_TRY();
	{
		CallAsRole(reg->run_as, &flinfo, ctx.input, timeout,
				   NULL, NULL, &result, &error, &timed_out);
	}
	PG_FINALLY();
	{
		replay = NULL;
	}
	PG_END_TRY();

	if (!ctx.suspended)
		check_unissued(&ctx, error, timed_out);
	if (ctx.nondeterminism != NULL)
	{
		*failure = message_json(ctx.nondeterminism);
		return REPLAY_NON_DETERMINISTIC;
	}
	if (ctx.suspended)
	{
		*decisions = decision_list(&ctx, NULL);
		return REPLAY_DECIDED;
	}
	if (timed_out)
		return REPLAY_TIMED_OUT;

	/*
	 * A cancel request or a statement timeout of the caller is not the
	 * workflow's outcome: the task runs again.  query_canceled raised by the
	 * code itself (not a suspension) fails the workflow as any error does.
	 */
	if (error != NULL && ErrorIsCancel(error))
		ReThrowError(error);

	JsonBegin(&jb);
	if (error == NULL)
	{
		JsonAddText(&jb, "decisionType", "CompleteWorkflowExecution");
		JsonAddJsonb(&jb, "result", result);
	}
	else if (error->sqlerrcode == ERRCODE_DURABLE_CANCELED)
	{
		JsonAddText(&jb, "decisionType", "CancelWorkflowExecution");
		JsonAddJsonb(&jb, "details", ErrorDetailsJson(error));
	}
	else
	{
		LogUserCodeFailure("workflow", rs->workflow_type, rs, "decision task",
						   reg->run_as, unpack_sql_state(error->sqlerrcode),
						   error->message, error->detail);
		JsonAddText(&jb, "decisionType", "FailWorkflowExecution");
		JsonAddText(&jb, "reason", unpack_sql_state(error->sqlerrcode));
		JsonAddJsonb(&jb, "details", ErrorDetailsJson(error));
	}
	closing = JsonFinish(&jb);
	*decisions = decision_list(&ctx, closing);
	return REPLAY_DECIDED;
}

/*
 * replay_check(): replay the whole history of a run (not locked) against
 * function, run as run_as as the executor runs it, and say whether and where
 * they part.  Nothing is observed or logged; the function's writes are
 * rolled back (CallAsRole), and the caller runs this in a subtransaction
 * that it rolls back too.  Besides what the executor finds, a function that
 * waits (for a signal) before commands that history has is reported: the
 * executor finds that only at the run's next decision task.
 */
void
ReplayCheck(RunState *rs, Oid function, Oid run_as, TimestampTz now,
			ReplayCheckResult *out)
{
	ReplayContext ctx;
	FmgrInfo	flinfo;
	Jsonb	   *result = NULL;
	ErrorData  *error = NULL;
	bool		timed_out = false;
	double		timeout;

	memset(out, 0, sizeof(*out));
	memset(&ctx, 0, sizeof(ctx));
	ctx.mcxt = CurrentMemoryContext;
	ctx.rs = rs;
	ctx.checking = true;
	index_history(&ctx, NULL, rs->last_event_id + 1, now);
	if (ctx.history_error != NULL)
	{
		out->event_id = ctx.nd_event_id;
		out->history = ctx.nd_history;
		out->message = ctx.history_error;
		return;
	}

	fmgr_info(function, &flinfo);
	timeout = ExecutorTaskTimeout(rs->namespace, rs->decision_timeout, NULL);
	replay = &ctx;
	PG_TRY();
	{
		CallAsRole(run_as, &flinfo, ctx.input, timeout,
				   NULL, NULL, &result, &error, &timed_out);
	}
	PG_FINALLY();
	{
		replay = NULL;
	}
	PG_END_TRY();

	check_unissued(&ctx, error, timed_out);
	if (ctx.nondeterminism != NULL)
	{
		out->event_id = ctx.nd_event_id;
		out->history = ctx.nd_history;
		out->code = ctx.nd_code;
		out->message = ctx.nondeterminism;
		return;
	}
	if (timed_out)
	{
		out->code = "timed out";
		out->message = psprintf("the function ran past the decision timeout of %g s",
								timeout);
		return;
	}
	/* The caller's cancel or statement timeout ends the check. */
	if (!ctx.suspended && error != NULL && ErrorIsCancel(error))
		ReThrowError(error);
	out->ok = true;
}

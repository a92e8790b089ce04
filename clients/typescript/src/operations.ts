/**
 * Flow control and batch operations of the client: pausing a task queue,
 * its concurrency and rate limits and those of its concurrency keys
 * (docs/task-queues.md "Pausing a queue", "Limits", "Priorities and
 * fairness"), and batch jobs over the runs a filter of list() matches
 * (docs/operations.md "Batch operations").  Every argument goes to durable
 * as given: what it refuses comes back as the DurableError of its SQLSTATE.
 */
import type { Client, WorkflowFilter, WorkflowStatus } from './client';
import { WorkflowNotFoundError } from './errors';
import { Duration, JsonObject, JsonValue, jsonParam, toSeconds } from './json';

/** The two kinds of task of a queue: decision tasks (workflows) and activity tasks. */
export type TaskQueueKind = 'decision' | 'activity';

/** A poller of a queue seen in the last 5 minutes. */
export interface TaskQueuePoller {
  identity: string;
  lastPollTime: Date;
}

/** The limits of a queue's kind and the tasks started under them. */
export interface TaskQueueLimits {
  /** At most this many tasks started and not finished; null without a concurrency limit. */
  maxConcurrent: number | null;
  /**
   * The tasks of the kind started and not finished that its limits count
   * (those started since the limits were set).
   */
  startedTasks: number;
  /** Task starts a second; null without a rate limit. */
  rate: number | null;
  /** The rate limit's burst; null without a rate limit. */
  burst: number | null;
}

/** One kind of a queue: a row of durable.task_queues (zeros when it has none). */
export interface TaskQueueKindInfo {
  kind: TaskQueueKind;
  /** Tasks a poll (or an executor) can take now (held back by a pause or a limit too). */
  readyTasks: number;
  /** When the oldest ready task was scheduled; null without ready tasks. */
  oldestReadyTime: Date | null;
  /** How long ago, in milliseconds, by durable.now(); null without ready tasks. */
  oldestReadyAge: number | null;
  /** Tasks that become ready when a timer fires (a delayed start, a retry's backoff). */
  waitingOnTimer: number;
  /** The pollers seen in the last 5 minutes, newest first. */
  pollers: TaskQueuePoller[];
  lastPollTime: Date | null;
  /** Types registered on the queue that the executor workers run (SQL workflows, SQL activities). */
  executorTypes: string[];
  /** Its limits; null without any. */
  limits: TaskQueueLimits | null;
}

/** Who paused a queue, when and why. */
export interface TaskQueuePause {
  pausedAt: Date;
  /** The role that paused it. */
  pausedBy: string;
  reason: string | null;
}

/** A task queue of a namespace, its two kinds together (durable.task_queues). */
export interface TaskQueueDescription {
  namespace: string;
  taskQueue: string;
  /** Its pause; null when its tasks are handed out. */
  paused: TaskQueuePause | null;
  decision: TaskQueueKindInfo;
  activity: TaskQueueKindInfo;
}

/** setLimits' argument: the kind, and its limits (all left out removes them, as clearLimits). */
export interface TaskQueueLimitOptions {
  kind: TaskQueueKind;
  /** At most this many tasks of the kind started and not finished (1 or more). */
  maxConcurrent?: number;
  /** At most this many task starts a second (more than 0, at most 1,000,000). */
  rate?: number;
  /** The rate limit's bucket: starts allowed at once (1 or more; default a second's worth). */
  burst?: number;
}

/**
 * setKeyLimits' argument: the kind, the concurrency key (left out: the
 * defaults of every key of the queue and kind), and its limits and weight
 * (all of maxConcurrent, rate and weight left out removes them, as
 * clearKeyLimits).  A key's own limits replace the defaults value by value.
 */
export interface TaskQueueKeyLimitOptions {
  kind: TaskQueueKind;
  /** The key (1 to 255 bytes); left out, the defaults of every key. */
  concurrencyKey?: string;
  /** At most this many of the key's tasks started and not finished (1 or more). */
  maxConcurrent?: number;
  /** At most this many starts of the key's tasks a second (more than 0, at most 1,000,000). */
  rate?: number;
  /** The rate limit's bucket (1 or more; default a second's worth); needs rate. */
  burst?: number;
  /** Its tasks taken in a row when its turn comes in the round robin of keys (1 to 1000; default 1). */
  weight?: number;
}

/**
 * A concurrency key of a queue's kind (durable.task_queue_keys, durable
 * 0.9.0): one with ready or started tasks, or limits of its own.
 */
export interface TaskQueueKeyInfo {
  kind: TaskQueueKind;
  concurrencyKey: string;
  /** Its tasks a poll could take now (held back by a limit too). */
  readyTasks: number;
  /** The best (lowest) priority among its ready tasks; null without ready tasks. */
  topPriority: number | null;
  /**
   * Its tasks started and not finished that a concurrency limit counts (of
   * the key or of the queue; 0 without one).
   */
  startedTasks: number;
  /** Its concurrency limit (its own, else the queue's default for keys); null without one. */
  maxConcurrent: number | null;
  /** Its rate limit, starts a second; null without one. */
  rate: number | null;
  /** The rate limit's burst; null without a rate limit. */
  burst: number | null;
  /** Its tasks taken in a row in the round robin (1 unless set). */
  weight: number;
}

const queueColumns = `namespace, task_queue, kind, ready_tasks, oldest_ready_time,
    extract(epoch FROM oldest_ready_age) * 1000 AS oldest_ready_age_ms, waiting_on_timer,
    pollers, last_poll_time, executor_types, paused_at, paused_by, pause_reason,
    max_concurrent, started_tasks, rate_limit, rate_burst`;

function numberOrNull(v: unknown): number | null {
  return v === null || v === undefined ? null : Number(v);
}

function kindInfo(kind: TaskQueueKind, r: Record<string, unknown> | undefined): TaskQueueKindInfo {
  if (r === undefined) {
    return {
      kind, readyTasks: 0, oldestReadyTime: null, oldestReadyAge: null, waitingOnTimer: 0, pollers: [],
      lastPollTime: null, executorTypes: [], limits: null,
    };
  }
  const pollers = (r.pollers as Array<{ identity: string; lastPollTime: string }> | null) ?? [];
  const hasLimits = r.max_concurrent !== null || r.rate_limit !== null;
  return {
    kind,
    readyTasks: Number(r.ready_tasks),
    oldestReadyTime: (r.oldest_ready_time as Date | null) ?? null,
    oldestReadyAge: numberOrNull(r.oldest_ready_age_ms),
    waitingOnTimer: Number(r.waiting_on_timer),
    pollers: pollers.map((p) => ({ identity: p.identity, lastPollTime: new Date(p.lastPollTime) })),
    lastPollTime: (r.last_poll_time as Date | null) ?? null,
    executorTypes: (r.executor_types as string[] | null) ?? [],
    limits: hasLimits ? {
      maxConcurrent: numberOrNull(r.max_concurrent),
      startedTasks: Number(r.started_tasks ?? 0),
      rate: numberOrNull(r.rate_limit),
      burst: numberOrNull(r.rate_burst),
    } : null,
  };
}

/** The descriptions of the queues of rows (ordered by namespace and queue). */
function describeQueues(rows: Array<Record<string, unknown>>): TaskQueueDescription[] {
  const byQueue = new Map<string, Array<Record<string, unknown>>>();
  for (const r of rows) {
    const key = JSON.stringify([r.namespace, r.task_queue]);
    const list = byQueue.get(key);
    if (list === undefined) byQueue.set(key, [r]);
    else list.push(r);
  }
  return [...byQueue.values()].map((rs) => queueDescription(rs[0].namespace as string, rs[0].task_queue as string, rs));
}

function queueDescription(namespace: string, taskQueue: string, rows: Array<Record<string, unknown>>): TaskQueueDescription {
  const d = rows.find((r) => r.kind === 'decision');
  const a = rows.find((r) => r.kind === 'activity');
  const p = rows.find((r) => r.paused_at !== null && r.paused_at !== undefined);
  return {
    namespace,
    taskQueue,
    paused: p === undefined ? null : {
      pausedAt: p.paused_at as Date, pausedBy: p.paused_by as string, reason: (p.pause_reason as string | null) ?? null,
    },
    decision: kindInfo('decision', d),
    activity: kindInfo('activity', a),
  };
}

/** The task queues of the client's namespaces: client.taskQueues. */
export class TaskQueueClient {
  constructor(private readonly client: Client) {}

  /** A handle on a task queue (default: the client's) of a namespace (default: the client's). */
  get(name?: string, options: { namespace?: string } = {}): TaskQueueHandle {
    return new TaskQueueHandle(this.client, name ?? this.client.taskQueue, options.namespace ?? this.client.namespace);
  }

  /**
   * The queues of a namespace (default: the client's) that durable.task_queues
   * shows: those with tasks, recent pollers, executor types, a pause or limits.
   */
  async list(options: { namespace?: string } = {}): Promise<TaskQueueDescription[]> {
    const rows = await this.client.connection.query(
      `SELECT ${queueColumns} FROM durable.task_queues WHERE namespace = $1 ORDER BY task_queue, kind`,
      [options.namespace ?? this.client.namespace]);
    return describeQueues(rows);
  }
}

/**
 * A task queue of a namespace: pause and resume it, set its limits, and see
 * its backlog, pollers, pause and limits.
 */
export class TaskQueueHandle {
  readonly client: Client;
  readonly name: string;
  readonly namespace: string;

  constructor(client: Client, name: string, namespace: string) {
    this.client = client;
    this.name = name;
    this.namespace = namespace;
  }

  /**
   * Stops handing out the queue's tasks (polls, eager dispatch, the
   * executors) until resume(); tasks still queue and timers fire
   * (pause_task_queue).  false if it was already paused.
   */
  async pause(reason?: string): Promise<boolean> {
    const rows = await this.client.connection.query(
      'SELECT durable.pause_task_queue(task_queue => $1, namespace => $2, reason => $3) AS changed',
      [this.name, this.namespace, reason ?? null]);
    return rows[0].changed as boolean;
  }

  /** Hands the queue's tasks out again (resume_task_queue).  false if it was not paused. */
  async resume(): Promise<boolean> {
    const rows = await this.client.connection.query(
      'SELECT durable.resume_task_queue(task_queue => $1, namespace => $2) AS changed',
      [this.name, this.namespace]);
    return rows[0].changed as boolean;
  }

  /**
   * Replaces the limits of the queue's kind of task (set_task_queue_limits;
   * for the namespace's owner and durable_admin).  false if they were
   * already these.
   */
  async setLimits(limits: TaskQueueLimitOptions): Promise<boolean> {
    const rows = await this.client.connection.query(
      `SELECT durable.set_task_queue_limits(task_queue => $1, kind => $2, max_concurrent => $3,
          rate => $4, burst => $5, namespace => $6) AS changed`,
      [this.name, limits.kind, limits.maxConcurrent ?? null, limits.rate ?? null, limits.burst ?? null,
        this.namespace]);
    return rows[0].changed as boolean;
  }

  /** Removes the limits of the queue's kind of task.  false if it had none. */
  async clearLimits(kind: TaskQueueKind): Promise<boolean> {
    return this.setLimits({ kind });
  }

  /**
   * Replaces the limits and the weight of one concurrency key of the queue's
   * kind, or with concurrencyKey left out the defaults of every key
   * (set_task_key_limits, durable 0.9.0; for the namespace's owner and
   * durable_admin).  false if they were already these.
   */
  async setKeyLimits(limits: TaskQueueKeyLimitOptions): Promise<boolean> {
    const rows = await this.client.connection.query(
      `SELECT durable.set_task_key_limits(task_queue => $1, kind => $2, concurrency_key => $3,
          max_concurrent => $4, rate => $5, burst => $6, weight => $7, namespace => $8) AS changed`,
      [this.name, limits.kind, limits.concurrencyKey ?? null, limits.maxConcurrent ?? null,
        limits.rate ?? null, limits.burst ?? null, limits.weight ?? null, this.namespace]);
    return rows[0].changed as boolean;
  }

  /**
   * Removes the limits and weight of a concurrency key of the queue's kind
   * (left out: the defaults of every key).  false if it had none.
   */
  async clearKeyLimits(kind: TaskQueueKind, concurrencyKey?: string): Promise<boolean> {
    return this.setKeyLimits({ kind, concurrencyKey });
  }

  /**
   * The queue's concurrency keys with ready or started tasks or limits of
   * their own, by kind then key (durable.task_queue_keys, durable 0.9.0);
   * with kind, those of that kind.
   */
  async keys(options: { kind?: TaskQueueKind } = {}): Promise<TaskQueueKeyInfo[]> {
    const rows = await this.client.connection.query(
      `SELECT kind, concurrency_key, ready_tasks, top_priority, started_tasks, max_concurrent,
          rate_limit, rate_burst, weight
         FROM durable.task_queue_keys
        WHERE namespace = $1 AND task_queue = $2 AND ($3::text IS NULL OR kind = $3)
        ORDER BY kind, concurrency_key`,
      [this.namespace, this.name, options.kind ?? null]);
    return rows.map((r) => ({
      kind: r.kind as TaskQueueKind,
      concurrencyKey: r.concurrency_key as string,
      readyTasks: Number(r.ready_tasks),
      topPriority: numberOrNull(r.top_priority),
      startedTasks: Number(r.started_tasks),
      maxConcurrent: numberOrNull(r.max_concurrent),
      rate: numberOrNull(r.rate_limit),
      burst: numberOrNull(r.rate_burst),
      weight: Number(r.weight),
    }));
  }

  /** The queue's backlog, pollers, pause and limits, by kind (durable.task_queues). */
  async describe(): Promise<TaskQueueDescription> {
    const rows = await this.client.connection.query(
      `SELECT ${queueColumns} FROM durable.task_queues WHERE namespace = $1 AND task_queue = $2`,
      [this.namespace, this.name]);
    return queueDescription(this.namespace, this.name, rows);
  }
}

/** What a batch job does to each run. */
export type BatchOperation = 'terminate' | 'cancel' | 'signal' | 'reset' | 'restart';

/** Where a reset batch resets each run from: its last DecisionTaskCompleted (the default) or its first. */
export type BatchResetPoint = 'last_decision' | 'first_decision';

/** The filter of a batch: list()'s, without pageSize; its namespace is the job's (default: the client's). */
export type BatchFilter = Omit<WorkflowFilter, 'pageSize'>;

/** The operation and its own arguments, with C's fields (filter, reason). */
export type BatchOperationOptions<C> =
  | (C & { operation: 'terminate' | 'cancel' })
  /** signalName is the signal's name; input its input. */
  | (C & { operation: 'signal'; signalName: string; input?: unknown })
  | (C & { operation: 'reset'; resetTo?: BatchResetPoint })
  /** input, if given, replaces each restarted run's input. */
  | (C & { operation: 'restart'; input?: unknown });

/** batch.start()'s argument. */
export type BatchOptions = BatchOperationOptions<{
  /** The runs to touch, as list() finds them (default: every run of the namespace). */
  filter?: BatchFilter;
  /** Given to each call (1 to 1000 bytes). */
  reason: string;
}>;

/** batch.preview()'s argument: start()'s, with the reason optional. */
export type BatchPreviewOptions = BatchOperationOptions<{ filter?: BatchFilter; reason?: string }>;

/** A batch job's state. */
export type BatchState = 'running' | 'completed' | 'canceled';

/** A batch job and its progress (durable.batches). */
export interface BatchDescription {
  batchId: string;
  namespace: string;
  operation: BatchOperation;
  state: BatchState;
  /** The job's filter (its namespace aside). */
  filter: Omit<BatchFilter, 'namespace'>;
  reason: string;
  signalName: string | null;
  input: JsonValue;
  resetTo: BatchResetPoint | null;
  /** The role that started it, as which each run is touched. */
  startedBy: string;
  /** Runs that matched when it started. */
  total: number;
  /** Runs the operation reached. */
  touched: number;
  /** Runs no longer running when reached (WF003). */
  skipped: number;
  /** Runs whose call failed (the first 1000 in errors()). */
  failed: number;
  /** touched + skipped + failed. */
  done: number;
  startTime: Date;
  updateTime: Date;
  closeTime: Date | null;
  /** The role that canceled it. */
  canceledBy: string | null;
}

/** The error of a run that a batch job could not touch (durable.batch_errors). */
export interface BatchError {
  runId: string;
  workflowId: string;
  sqlstate: string;
  message: string;
  errorTime: Date;
}

/** A Date of a timestamp in JSON; undefined when absent. */
function jsonDate(v: JsonValue | undefined): Date | undefined {
  return typeof v === 'string' ? new Date(v) : undefined;
}

function batchFilter(f: JsonObject): Omit<BatchFilter, 'namespace'> {
  const out: Omit<BatchFilter, 'namespace'> = {};
  if (typeof f.status === 'string') out.status = f.status as WorkflowStatus;
  if (typeof f.workflow_type === 'string') out.workflowType = f.workflow_type;
  if (typeof f.task_queue === 'string') out.taskQueue = f.task_queue;
  if (typeof f.workflow_id_prefix === 'string') out.workflowIdPrefix = f.workflow_id_prefix;
  const dates: Array<['startedSince' | 'startedBefore' | 'closedSince' | 'closedBefore', string]> = [
    ['startedSince', 'started_since'], ['startedBefore', 'started_before'],
    ['closedSince', 'closed_since'], ['closedBefore', 'closed_before'],
  ];
  for (const [k, col] of dates) {
    const d = jsonDate(f[col]);
    if (d !== undefined) out[k] = d;
  }
  if (f.search_attributes !== undefined && f.search_attributes !== null) {
    out.searchAttributes = f.search_attributes as JsonObject;
  }
  if (f.memo !== undefined && f.memo !== null) out.memo = f.memo as JsonObject;
  return out;
}

function batchDescription(r: Record<string, unknown>): BatchDescription {
  return {
    batchId: r.batch_id as string,
    namespace: r.namespace as string,
    operation: r.operation as BatchOperation,
    state: r.state as BatchState,
    filter: batchFilter((r.filters as JsonObject | null) ?? {}),
    reason: r.reason as string,
    signalName: (r.signal_name as string | null) ?? null,
    input: (r.input as JsonValue | undefined) ?? null,
    resetTo: (r.reset_to as BatchResetPoint | null) ?? null,
    startedBy: r.started_by as string,
    total: Number(r.total),
    touched: Number(r.touched),
    skipped: Number(r.skipped),
    failed: Number(r.failed),
    done: Number(r.done),
    startTime: r.start_time as Date,
    updateTime: r.update_time as Date,
    closeTime: (r.close_time as Date | null) ?? null,
    canceledBy: (r.canceled_by as string | null) ?? null,
  };
}

const batchColumns = `batch_id, namespace, operation, state, filters, reason, signal_name, input,
    reset_to, started_by, total, touched, skipped, failed, done, start_time, update_time,
    close_time, canceled_by`;

/** The fields of any BatchOperationOptions, for the call's arguments. */
interface AnyBatchOptions {
  operation: string;
  filter?: BatchFilter;
  reason?: string;
  signalName?: string;
  input?: unknown;
  resetTo?: string;
}

/** Batch jobs: client.batch. */
export class BatchClient {
  constructor(private readonly client: Client) {}

  /**
   * How many runs a job of these options would touch now (preview_batch):
   * start()'s checks, and nothing changed.
   */
  async preview(options: BatchPreviewOptions): Promise<number> {
    const rows = await this.client.connection.query(
      `SELECT durable.preview_batch(${this.arguments()}) AS n`, this.params(options));
    return Number(rows[0].n);
  }

  /**
   * Starts a job that applies the operation to every run the filter matches
   * now (start_batch), as this client's role; the timer worker works
   * through it a slice at a time.
   */
  async start(options: BatchOptions): Promise<BatchHandle> {
    const rows = await this.client.connection.query(
      `SELECT durable.start_batch(${this.arguments()}) AS batch_id`, this.params(options));
    return new BatchHandle(this.client, rows[0].batch_id as string);
  }

  /** A handle on a job by its id. */
  getHandle(batchId: string): BatchHandle {
    return new BatchHandle(this.client, batchId);
  }

  /** The jobs of a namespace (default: the client's), newest first; with state, those in it. */
  async list(options: { namespace?: string; state?: BatchState } = {}): Promise<BatchDescription[]> {
    const rows = await this.client.connection.query(
      `SELECT ${batchColumns} FROM durable.batches
        WHERE namespace = $1 AND ($2::text IS NULL OR state = $2)
        ORDER BY start_time DESC, batch_id`,
      [options.namespace ?? this.client.namespace, options.state ?? null]);
    return rows.map(batchDescription);
  }

  private arguments(): string {
    return `operation => $1, namespace => $2, status => $3, workflow_type => $4, task_queue => $5,
        workflow_id_prefix => $6, started_since => $7, started_before => $8, closed_since => $9,
        closed_before => $10, search_attributes => $11::jsonb, memo => $12::jsonb, reason => $13,
        signal_name => $14, input => $15::jsonb, reset_to => $16`;
  }

  private params(options: BatchPreviewOptions): unknown[] {
    const o = options as AnyBatchOptions;
    return [o.operation, ...this.client.workflowFilterParams(o.filter ?? {}), o.reason ?? null,
      o.signalName ?? null, jsonParam(o.input, 'input'), o.resetTo ?? null];
  }
}

/** wait() gave up before the batch job ended (the job goes on). */
export class BatchWaitTimeoutError extends Error {
  readonly batchId: string;
  /** The job as last seen. */
  readonly last: BatchDescription;

  constructor(last: BatchDescription, timeout: Duration) {
    super(`batch ${last.batchId} did not end within ${typeof timeout === 'number' ? `${timeout} ms` : timeout}` +
      ` (${last.done} of ${last.total} runs done)`);
    this.name = 'BatchWaitTimeoutError';
    this.batchId = last.batchId;
    this.last = last;
  }
}

/** A batch job: its progress, its errors, its cancellation. */
export class BatchHandle {
  readonly client: Client;
  readonly batchId: string;

  constructor(client: Client, batchId: string) {
    this.client = client;
    this.batchId = batchId;
  }

  /**
   * The job and its progress (durable.batches).  WorkflowNotFoundError
   * (WF002) for a job that does not exist or that the role may not see.
   */
  async describe(): Promise<BatchDescription> {
    const rows = await this.client.connection.query(
      `SELECT ${batchColumns} FROM durable.batches WHERE batch_id = $1::uuid`, [this.batchId]);
    if (rows.length === 0) {
      throw new WorkflowNotFoundError(`batch "${this.batchId}" not found`, { sqlstate: 'WF002' });
    }
    return batchDescription(rows[0]);
  }

  /** The errors kept of the job's runs (the first 1000), oldest first (durable.batch_errors). */
  async errors(): Promise<BatchError[]> {
    const rows = await this.client.connection.query(
      `SELECT run_id, workflow_id, sqlstate, message, error_time FROM durable.batch_errors
        WHERE batch_id = $1::uuid ORDER BY error_time, workflow_id, run_id`, [this.batchId]);
    return rows.map((r) => ({
      runId: r.run_id as string,
      workflowId: r.workflow_id as string,
      sqlstate: r.sqlstate as string,
      message: r.message as string,
      errorTime: r.error_time as Date,
    }));
  }

  /** Stops the job: it touches no run after this (cancel_batch).  false if it had already ended. */
  async cancel(): Promise<boolean> {
    const rows = await this.client.connection.query('SELECT durable.cancel_batch($1::uuid) AS changed', [this.batchId]);
    return rows[0].changed as boolean;
  }

  /**
   * Polls describe() every pollInterval (1 s) until the job is no longer
   * running, and returns it; with timeout, BatchWaitTimeoutError once it
   * passes (the job goes on).
   */
  async wait(options: { timeout?: Duration; pollInterval?: Duration } = {}): Promise<BatchDescription> {
    const deadline = options.timeout === undefined ? Infinity
      : Date.now() + toSeconds(options.timeout, 'timeout') * 1000;
    const interval = options.pollInterval === undefined ? 1000 : toSeconds(options.pollInterval, 'pollInterval') * 1000;
    for (;;) {
      const d = await this.describe();
      if (d.state !== 'running') return d;
      const left = deadline - Date.now();
      if (left <= 0) throw new BatchWaitTimeoutError(d, options.timeout as Duration);
      await new Promise((r) => setTimeout(r, Math.min(interval, left)));
    }
  }
}

/**
 * The client: start workflows and act on them through durable's client
 * functions (docs/api.md "Client functions", "Finding workflows", "Reset and restart").
 */
import { randomBytes } from 'node:crypto';
import { Connection, ConnectionOptions } from './connection';
import { InvalidArgumentError, WorkflowFailedError } from './errors';
import { BatchClient, TaskQueueClient } from './operations';
import { Duration, JsonObject, JsonValue, RetryPolicy, jsonParam, retryPolicyJson, toInterval, toSeconds } from './json';

export type WorkflowStatus = 'running' | 'completed' | 'failed' | 'canceled' | 'terminated' | 'continued_as_new' | 'timed_out';

/**
 * A new workflow id: a version 7 UUID, whose first 48 bits are the time in
 * milliseconds and the other 74 random, as durable draws one for a start that
 * gives none. A time-ordered id makes a start write at the right edge of the
 * indexes on workflow ids instead of at a random page of each.
 */
export function newWorkflowId(): string {
  const b = randomBytes(16);
  const ms = BigInt(Date.now());
  for (let i = 0; i < 6; i++) b[i] = Number((ms >> BigInt(40 - 8 * i)) & 0xffn);
  b[6] = (b[6] & 0x0f) | 0x70;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export type IdReusePolicy = 'allow_duplicate_failed_only' | 'allow_duplicate' | 'reject_duplicate' | 'terminate_if_running';

/** Options of start() and signalWithStart(), as start_workflow names them. */
export interface StartOptions {
  /** The business id, unique among running executions of the namespace (default: newWorkflowId()). */
  workflowId?: string;
  /** Where its decision tasks go (default: the client's, else 'default'). */
  taskQueue?: string;
  /** Default: the client's, else 'default'. */
  namespace?: string;
  /** Workflow retries (none by default). */
  retryPolicy?: RetryPolicy;
  /** Default allow_duplicate_failed_only. */
  idReusePolicy?: IdReusePolicy;
  /** The whole chain of runs, retries included. */
  executionTimeout?: Duration;
  /** One run, counted from its first decision task. */
  runTimeout?: Duration;
  /** StartToClose of each decision task (10 s). */
  decisionTimeout?: Duration;
  /** Five-field cron, UTC. */
  cronSchedule?: string;
  /** The first decision task is scheduled after it. */
  delay?: Duration;
  /** A JSON object shown by describe. */
  memo?: JsonObject;
  /**
   * The run's search attributes from its start on (a JSON object): list() and
   * count() find it by them; the workflow's upsertSearchAttributes merges into them.
   * Needs durable 0.6.0 (start_workflow's search_attributes).
   */
  searchAttributes?: JsonObject;
  /**
   * The priority of the run's tasks, 1 (claimed first) to 5; default 3.
   * Its decision tasks take it, and so do its activities and children unless
   * given their own (docs/task-queues.md "Priorities and fairness").  Needs
   * durable 0.9.0.
   */
  priority?: number;
  /**
   * The concurrency key of the run's tasks (1 to 255 bytes; default none):
   * within a priority, a queue's claims go round its keys, and
   * TaskQueueHandle.setKeyLimits() limits a key's tasks.  Inherited as
   * priority is.  Needs durable 0.9.0.
   */
  concurrencyKey?: string;
  /**
   * start() only: a Worker (or WorkflowWorker) of this process that takes the
   * first decision task at once when it runs the workflow's task queue and
   * namespace, through durable.start_workflow_eager (docs/api.md "Eager
   * start"), saving its poll; otherwise, or with a delay or a cron schedule,
   * the start is the usual one.  The client's role needs the worker privilege
   * on the namespace too.
   */
  eagerWorker?: EagerStartWorker;
}

/** What start()'s eagerWorker option needs of a worker (Worker and WorkflowWorker have it). */
export interface EagerStartWorker {
  /** @internal Its identity when it would take a task of that queue now, else null. */
  eagerStartIdentity(taskQueue: string, namespace: string): string | null;
  /** @internal Answers a decision task already started for it. */
  takeEager(task: unknown): void;
}

export interface ClientOptions extends ConnectionOptions {
  /** The namespace of calls that name none ('default'). */
  namespace?: string;
  /** The task queue of starts that name none ('default'). */
  taskQueue?: string;
}

/** One event of a run's history, with Cadence's event names. */
export interface HistoryEvent {
  eventId: number;
  eventTime: Date;
  eventType: string;
  attributes: { [key: string]: JsonValue };
}

/** describe_workflow's answer (docs/api.md "Client functions"); fields durable adds later are kept. */
export interface WorkflowDescription {
  namespace: string;
  workflowId: string;
  runId: string;
  workflowType: string;
  taskQueue: string;
  status: WorkflowStatus;
  attempt: number;
  startTime: string;
  closeTime: string | null;
  result: JsonValue;
  failure: { reason: string; details: JsonValue } | null;
  memo: JsonObject | null;
  searchAttributes: JsonObject | null;
  pendingActivities: JsonObject[];
  pendingChildren: JsonObject[];
  pendingTimers: JsonObject[];
  cancelRequested: boolean;
  historyLength: number;
  /**
   * For a run of a type that a SQL function runs on its task queue (durable
   * 0.7.0): that function, as regprocedure text, schema-qualified
   * (`app.remind(jsonb)`): the one the run is kept on, or its registration's.
   * Absent when no function runs the type there (a worker of the SDK does).
   */
  function?: string;
  /**
   * With `function`: whether the run is kept on that function by a later
   * registration with `running => 'keep'` (docs/sql-workflows.md "Keeping
   * running workflows on their function").
   */
  functionPinned?: boolean;
  /**
   * true while the run's task queue is paused (durable 0.7.0,
   * docs/task-queues.md "Pausing a queue"); absent otherwise.
   */
  taskQueuePaused?: boolean;
  /**
   * Who paused the run, when and why, while it is paused (durable 0.8.0,
   * WorkflowHandle.pause, docs/task-queues.md "Pausing a workflow"); absent
   * otherwise.
   */
  paused?: { at: string; by: string; reason: string | null };
  /**
   * The priority of the run's tasks (durable 0.9.0, StartOptions.priority);
   * absent for a run of the default, 3, without a concurrency key.
   */
  priority?: number;
  /** The concurrency key of the run's tasks (durable 0.9.0); absent when it has none. */
  concurrencyKey?: string;
  [field: string]: JsonValue | undefined;
}

/** A row of list(): a run of durable.workflows. */
export interface WorkflowExecutionInfo {
  namespace: string;
  workflowId: string;
  runId: string;
  workflowType: string;
  taskQueue: string;
  status: WorkflowStatus;
  attempt: number;
  startTime: Date;
  closeTime: Date | null;
  input: JsonValue;
  result: JsonValue;
  failure: JsonValue;
  memo: JsonValue;
  searchAttributes: JsonValue;
  parentWorkflowId: string | null;
  parentRunId: string | null;
  /**
   * Who paused the run, when and why, while it is paused (durable 0.9.0's
   * list_workflows; WorkflowHandle.pause); null otherwise, and from an older
   * durable.
   */
  paused: { at: Date; by: string; reason: string | null } | null;
}

/** Filters of list() and count() (docs/api.md "Finding workflows"). */
export interface WorkflowFilter {
  namespace?: string;
  status?: WorkflowStatus;
  workflowType?: string;
  taskQueue?: string;
  workflowIdPrefix?: string;
  startedSince?: Date;
  startedBefore?: Date;
  closedSince?: Date;
  closedBefore?: Date;
  /** Runs whose search attributes contain these. */
  searchAttributes?: JsonObject;
  /** Runs whose memo contains these. */
  memo?: JsonObject;
  /** Rows fetched a page (50; 1 to 1000). */
  pageSize?: number;
}

/** Filters of list(): those of count(), and whether the run is paused. */
export interface ListWorkflowsFilter extends WorkflowFilter {
  /**
   * true: only the runs paused by WorkflowHandle.pause; false: only the
   * others; absent: all (list_workflows' paused, durable 0.9.0).
   */
  paused?: boolean;
}

/** The close of a chain as wait_workflow returns it. */
interface WaitResult {
  runId: string;
  status: WorkflowStatus;
  result: JsonValue;
  failure: { reason?: string; details?: JsonValue } | null;
}

/** The longest single wait_workflow call of result(); it loops over such waits. */
const RESULT_WAIT_SECONDS = 30;

function intervalParam(d: Duration | undefined, what: string): string | null {
  if (d === undefined) return null;
  try {
    return toInterval(d, what);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message, { sqlstate: '22023' }, what);
  }
}

function retryParam(p: RetryPolicy | undefined, what: string): string | null {
  if (p === undefined) return null;
  try {
    return JSON.stringify(retryPolicyJson(p, what));
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message, { sqlstate: '22023' }, what);
  }
}

/**
 * The arguments of a start that are named only when given, from parameter n
 * on: search_attributes (durable 0.6.0), priority and concurrency_key (0.9.0),
 * so that a start without them also works against a durable whose start
 * functions lack them.  The values go to durable as given: what it refuses
 * comes back as the InvalidArgumentError of its SQLSTATE.
 */
function optionalStartParams(o: StartOptions, n: number): { sql: string; params: unknown[] } {
  let sql = '';
  const params: unknown[] = [];
  if (o.searchAttributes !== undefined) {
    const v = o.searchAttributes as unknown;
    if (v === null || typeof v !== 'object' || Array.isArray(v)) {
      throw new InvalidArgumentError('searchAttributes must be a JSON object', { sqlstate: '22023' }, 'searchAttributes');
    }
    params.push(jsonParam(v, 'searchAttributes'));
    sql += `, search_attributes => $${n + params.length - 1}::jsonb`;
  }
  if (o.priority !== undefined) {
    params.push(o.priority);
    sql += `, priority => $${n + params.length - 1}::integer`;
  }
  if (o.concurrencyKey !== undefined) {
    params.push(o.concurrencyKey);
    sql += `, concurrency_key => $${n + params.length - 1}::text`;
  }
  return { sql, params };
}

export class Client {
  readonly connection: Connection;
  readonly namespace: string;
  readonly taskQueue: string;
  /** Task queues: pause and resume them, set their limits, describe them. */
  readonly taskQueues: TaskQueueClient;
  /** Batch jobs: terminate, cancel, signal, reset or restart the runs a filter matches. */
  readonly batch: BatchClient;

  constructor(options: ClientOptions = {}) {
    this.connection = new Connection(options);
    this.namespace = options.namespace ?? 'default';
    this.taskQueue = options.taskQueue ?? 'default';
    this.taskQueues = new TaskQueueClient(this);
    this.batch = new BatchClient(this);
  }

  /** Starts a run of workflowType; the handle's result() waits for the chain's close. */
  async start<R = JsonValue>(workflowType: string, input?: unknown, options: StartOptions = {}): Promise<WorkflowHandle<R>> {
    const ns = options.namespace ?? this.namespace;
    const workflowId = options.workflowId ?? newWorkflowId();
    const p = this.startParams(workflowType, input, { ...options, workflowId }, ns);
    const sa = optionalStartParams(options, p.length + 1);
    const w = options.eagerWorker;
    const identity = w !== undefined && options.delay === undefined && options.cronSchedule === undefined
      ? w.eagerStartIdentity(p[3] as string, ns) : null;
    if (w !== undefined && identity !== null) {
      const er = await this.connection.query(
        `SELECT durable.start_workflow_eager(workflow_type => $1, input => $2::jsonb, workflow_id => $3,
            task_queue => $4, namespace => $5, retry_policy => $6::jsonb,
            id_reuse_policy => $7, execution_timeout => $8::interval, run_timeout => $9::interval,
            decision_timeout => $10::interval, cron_schedule => $11, delay => $12::interval,
            memo => $13::jsonb${sa.sql}, identity => $${p.length + sa.params.length + 1}) AS r`,
        [...p, ...sa.params, identity]);
      const r = er[0].r as { runId: string; decisionTask: unknown };
      if (r.decisionTask !== null && r.decisionTask !== undefined) w.takeEager(r.decisionTask);
      return new WorkflowHandle<R>(this, workflowId, ns, r.runId, false);
    }
    const rows = await this.connection.query(
      `SELECT durable.start_workflow(workflow_type => $1, input => $2::jsonb, workflow_id => $3,
          task_queue => $4, namespace => $5, retry_policy => $6::jsonb,
          id_reuse_policy => $7, execution_timeout => $8::interval, run_timeout => $9::interval,
          decision_timeout => $10::interval, cron_schedule => $11, delay => $12::interval,
          memo => $13::jsonb${sa.sql}) AS run_id`,
      [...p, ...sa.params]);
    return new WorkflowHandle<R>(this, workflowId, ns, rows[0].run_id as string, false);
  }

  private startParams(workflowType: string, input: unknown, o: StartOptions, ns: string): unknown[] {
    if (o.decisionTimeout !== undefined) toSeconds(o.decisionTimeout, 'decisionTimeout');
    return [
      workflowType, jsonParam(input, 'input'), o.workflowId ?? null, o.taskQueue ?? this.taskQueue, ns,
      retryParam(o.retryPolicy, 'retryPolicy'), o.idReusePolicy ?? 'allow_duplicate_failed_only',
      intervalParam(o.executionTimeout, 'executionTimeout'), intervalParam(o.runTimeout, 'runTimeout'),
      intervalParam(o.decisionTimeout ?? 10000, 'decisionTimeout'), o.cronSchedule ?? null,
      intervalParam(o.delay, 'delay'), jsonParam(o.memo, 'memo'),
    ];
  }

  /**
   * Signals the running execution of workflowId, or starts one and signals it
   * (signal_with_start); the handle names the run signalled.
   */
  async signalWithStart<R = JsonValue>(workflowType: string, options: StartOptions & {
    workflowId: string; signal: string; signalInput?: unknown; input?: unknown;
  }): Promise<WorkflowHandle<R>> {
    const ns = options.namespace ?? this.namespace;
    const p = this.startParams(workflowType, options.input, options, ns);
    const sa = optionalStartParams(options, p.length + 3);
    const rows = await this.connection.query(
      `SELECT durable.signal_with_start(workflow_type => $1, input => $2::jsonb, workflow_id => $3,
          task_queue => $4, namespace => $5, retry_policy => $6::jsonb,
          id_reuse_policy => $7, execution_timeout => $8::interval, run_timeout => $9::interval,
          decision_timeout => $10::interval, cron_schedule => $11, delay => $12::interval,
          memo => $13::jsonb, signal_name => $14, signal_input => $15::jsonb${sa.sql}) AS run_id`,
      [...p, options.signal, jsonParam(options.signalInput, 'signalInput'), ...sa.params]);
    return new WorkflowHandle<R>(this, options.workflowId, ns, rows[0].run_id as string, false);
  }

  /**
   * A handle on an existing workflow: with runId, on that run (its result is
   * that of the chain from it); without, on the latest run.
   */
  getHandle<R = JsonValue>(workflowId: string, runId?: string, namespace?: string): WorkflowHandle<R> {
    return new WorkflowHandle<R>(this, workflowId, namespace ?? this.namespace, runId ?? null, runId !== undefined);
  }

  /** The runs that match filter, newest start first, page by page (list_workflows). */
  async *list(filter: ListWorkflowsFilter = {}): AsyncGenerator<WorkflowExecutionInfo, void, undefined> {
    const pageSize = filter.pageSize ?? 50;
    // paused only when given, so that list() without it works with a durable before 0.9.0.
    const paused = filter.paused === undefined ? { sql: '', params: [] as unknown[] }
      : { sql: ', paused => $14::boolean', params: [filter.paused] as unknown[] };
    let after: string | null = null;
    for (;;) {
      const rows = await this.connection.query(
        `SELECT * FROM durable.list_workflows(namespace => $1, status => $2, workflow_type => $3,
            task_queue => $4, workflow_id_prefix => $5, started_since => $6, started_before => $7,
            closed_since => $8, closed_before => $9, search_attributes => $10::jsonb,
            memo => $11::jsonb, page_size => $12, after => $13${paused.sql})`,
        [...this.workflowFilterParams(filter), pageSize, after, ...paused.params]);
      for (const r of rows) {
        yield {
          namespace: r.namespace as string,
          workflowId: r.workflow_id as string,
          runId: r.run_id as string,
          workflowType: r.workflow_type as string,
          taskQueue: r.task_queue as string,
          status: r.status as WorkflowStatus,
          attempt: r.attempt as number,
          startTime: r.start_time as Date,
          closeTime: (r.close_time as Date | null) ?? null,
          input: (r.input as JsonValue) ?? null,
          result: (r.result as JsonValue) ?? null,
          failure: (r.failure as JsonValue) ?? null,
          memo: (r.memo as JsonValue) ?? null,
          searchAttributes: (r.search_attributes as JsonValue) ?? null,
          parentWorkflowId: (r.parent_workflow_id as string | null) ?? null,
          parentRunId: (r.parent_run_id as string | null) ?? null,
          paused: r.paused_at === null || r.paused_at === undefined ? null : {
            at: r.paused_at as Date, by: r.paused_by as string, reason: (r.pause_reason as string | null) ?? null,
          },
        };
      }
      if (rows.length < pageSize) return;
      after = rows[rows.length - 1].cursor as string;
    }
  }

  /** How many runs match filter (count_workflows). */
  async count(filter: Omit<WorkflowFilter, 'pageSize'> = {}): Promise<number> {
    const rows = await this.connection.query(
      `SELECT durable.count_workflows(namespace => $1, status => $2, workflow_type => $3,
          task_queue => $4, workflow_id_prefix => $5, started_since => $6, started_before => $7,
          closed_since => $8, closed_before => $9, search_attributes => $10::jsonb,
          memo => $11::jsonb) AS n`, this.workflowFilterParams(filter));
    return Number(rows[0].n);
  }

  /** @internal The filter arguments of list_workflows, count_workflows and the batch functions ($1 .. $11). */
  workflowFilterParams(f: WorkflowFilter): unknown[] {
    const d = (x: Date | undefined): string | null => (x === undefined ? null : x.toISOString());
    return [f.namespace ?? this.namespace, f.status ?? null, f.workflowType ?? null, f.taskQueue ?? null,
      f.workflowIdPrefix ?? null, d(f.startedSince), d(f.startedBefore), d(f.closedSince), d(f.closedBefore),
      jsonParam(f.searchAttributes, 'searchAttributes'), jsonParam(f.memo, 'memo')];
  }

  /** Ends the pool if the client made it. */
  async close(): Promise<void> {
    await this.connection.close();
  }
}

/** A workflow execution: its id, the run it names, and the calls on it. */
export class WorkflowHandle<R = JsonValue> {
  readonly client: Client;
  readonly workflowId: string;
  readonly namespace: string;
  /** The run started (or named); null for a handle on the latest run. */
  readonly runId: string | null;
  /** Whether signal, cancel, terminate, describe and history go to runId (else the latest run). */
  private readonly pinned: boolean;

  constructor(client: Client, workflowId: string, namespace: string, runId: string | null, pinned: boolean) {
    this.client = client;
    this.workflowId = workflowId;
    this.namespace = namespace;
    this.runId = runId;
    this.pinned = pinned;
  }

  private get target(): string | null {
    return this.pinned ? this.runId : null;
  }

  /**
   * The result of the chain of runs from this handle's run (retries, cron and
   * continue-as-new followed), by bounded waits of wait_workflow until it
   * closes.  A chain that ends otherwise than completed throws
   * WorkflowFailedError; with `timeout`, ResultTimeoutError once it passes
   * (the workflow goes on).
   */
  async result(options: { timeout?: Duration } = {}): Promise<R> {
    const deadline = options.timeout === undefined ? Infinity : Date.now() + toSeconds(options.timeout, 'timeout') * 1000;
    for (;;) {
      const left = deadline - Date.now();
      const wait = Math.max(0, Math.min(RESULT_WAIT_SECONDS, left / 1000));
      const rows = await this.client.connection.query(
        'SELECT durable.wait_workflow($1, $2, $3, $4::interval) AS w',
        [this.workflowId, this.namespace, this.runId, `${wait} seconds`]);
      const w = rows[0].w as WaitResult | null;
      if (w !== null) {
        if (w.status === 'completed') return w.result as R;
        throw new WorkflowFailedError(this.workflowId, w.runId, w.status,
          w.failure?.reason, w.failure?.details ?? null);
      }
      if (Date.now() >= deadline) {
        throw new ResultTimeoutError(this.workflowId, options.timeout as Duration);
      }
    }
  }

  async signal(signalName: string, input?: unknown): Promise<void> {
    await this.client.connection.query(
      'SELECT durable.signal_workflow($1, $2, $3::jsonb, $4, $5)',
      [this.workflowId, signalName, jsonParam(input, 'input'), this.namespace, this.target]);
  }

  /** Requests cancellation: the workflow's code sees a CancelledError and decides. */
  async cancel(reason?: string): Promise<void> {
    await this.client.connection.query(
      'SELECT durable.cancel_workflow($1, $2, $3, $4)',
      [this.workflowId, reason ?? null, this.namespace, this.target]);
  }

  /** Closes the run at once. */
  async terminate(reason?: string, details?: unknown): Promise<void> {
    await this.client.connection.query(
      'SELECT durable.terminate_workflow($1, $2, $3::jsonb, $4, $5)',
      [this.workflowId, reason ?? null, jsonParam(details, 'details'), this.namespace, this.target]);
  }

  /**
   * Holds the run's tasks until resume(): no worker is handed its decision or
   * activity tasks, while signals are still recorded, timers fire and
   * cancel() and terminate() work (durable.pause_workflow, durable 0.8.0).
   * Returns false if it was paused already; a closed run throws
   * WorkflowNotRunningError.
   */
  async pause(reason?: string): Promise<boolean> {
    const rows = await this.client.connection.query(
      'SELECT durable.pause_workflow($1, $2, $3, $4) AS r',
      [this.workflowId, this.target, reason ?? null, this.namespace]);
    return rows[0].r as boolean;
  }

  /** Hands the run's held tasks out again; false if it was not paused. */
  async resume(): Promise<boolean> {
    const rows = await this.client.connection.query(
      'SELECT durable.resume_workflow($1, $2, $3) AS r', [this.workflowId, this.target, this.namespace]);
    return rows[0].r as boolean;
  }

  async describe(): Promise<WorkflowDescription> {
    const rows = await this.client.connection.query(
      'SELECT durable.describe_workflow($1, $2, $3) AS d', [this.workflowId, this.namespace, this.target]);
    return rows[0].d as WorkflowDescription;
  }

  async history(): Promise<HistoryEvent[]> {
    const rows = await this.client.connection.query(
      'SELECT event_id, event_time, event_type, attributes FROM durable.get_history($1, $2, $3)',
      [this.workflowId, this.namespace, this.target]);
    return rows.map((r) => ({
      eventId: Number(r.event_id),
      eventTime: r.event_time as Date,
      eventType: r.event_type as string,
      attributes: (r.attributes as { [key: string]: JsonValue }) ?? {},
    }));
  }

  /** A new run that decides again from a DecisionTaskCompleted event (default: the last). */
  async reset(reason: string, options: { eventId?: number } = {}): Promise<WorkflowHandle<R>> {
    const rows = await this.client.connection.query(
      'SELECT durable.reset_workflow($1, $2, $3, $4, $5) AS run_id',
      [this.workflowId, reason, this.namespace, this.target, options.eventId ?? null]);
    return new WorkflowHandle<R>(this.client, this.workflowId, this.namespace, rows[0].run_id as string, false);
  }

  /** A new chain of a closed workflow with the same options (and input, unless given). */
  async restart(reason: string, options: { input?: unknown } = {}): Promise<WorkflowHandle<R>> {
    const rows = await this.client.connection.query(
      'SELECT durable.restart_workflow($1, $2, $3, $4, $5::jsonb) AS run_id',
      [this.workflowId, reason, this.namespace, this.target, jsonParam(options.input, 'input')]);
    return new WorkflowHandle<R>(this.client, this.workflowId, this.namespace, rows[0].run_id as string, false);
  }
}

/** result({timeout}) gave up before the workflow closed (the workflow goes on). */
export class ResultTimeoutError extends Error {
  readonly workflowId: string;

  constructor(workflowId: string, timeout: Duration) {
    super(`workflow ${workflowId} did not close within ${typeof timeout === 'number' ? `${timeout} ms` : timeout}`);
    this.name = 'ResultTimeoutError';
    this.workflowId = workflowId;
  }
}

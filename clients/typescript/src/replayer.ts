/**
 * The replayer: new workflow code checked against the histories of running
 * (or closed) workflows before it is deployed, as Temporal's
 * Worker.runReplayHistories does.  The histories come from
 * durable.replay_histories() (docs/sql-workflows.md "Histories for the
 * replay test of an SDK"); each one is replayed as a worker would at the
 * run's next decision task, and nothing is written: no decision is sent, no
 * activity runs, no side effect's function is called.
 */
import { Connection, ConnectionOptions } from './connection';
import { NonDeterminismError } from './errors';
import { JsonValue } from './json';
import { RawEvent, WorkflowFunction, WorkflowRun, nonDeterminismMessage } from './workflow';

/** What replayHistories() reads and replays. */
export interface ReplayHistoriesOptions extends ConnectionOptions {
  /** The workflow functions, as a Worker takes them. */
  workflows: Record<string, WorkflowFunction>;
  /** The type whose runs are replayed, with workflows[workflowType]. */
  workflowType: string;
  /** Default 'default'. */
  namespace?: string;
  /** Only the running runs (default true), or all those whose history is kept. */
  onlyRunning?: boolean;
  /** At most this many runs, the latest first (default 1000; 1 to 100000). */
  maxRuns?: number;
}

/** The outcome of one run's replay. */
export interface ReplayResult {
  workflowId: string;
  runId: string;
  /** Whether the code follows the run's history. */
  ok: boolean;
  /**
   * When not ok: a NonDeterminismError whose message is the one a worker's
   * NonDeterministicWorkflow failure of the run's next decision task would
   * carry (`non-deterministic workflow order (order-7): history has ...`), or
   * the Error that stopped the replay (a history the worker cannot read).
   */
  error?: Error;
}

/** An event of a history to replay: as replay_histories() gives it, or as WorkflowHandle.history() does. */
export interface ReplayEvent {
  eventId: number;
  eventTime: string | Date;
  eventType: string;
  attributes: { [key: string]: JsonValue };
}

/** replayHistory()'s: one history, from anywhere (a file, WorkflowHandle.history()). */
export interface ReplayHistoryOptions {
  workflows: Record<string, WorkflowFunction>;
  /** The run's events from WorkflowExecutionStarted on. */
  history: ReplayEvent[];
  /** Default: the type of WorkflowExecutionStarted. */
  workflowType?: string;
  /** For messages and ctx.info (default: the empty string). */
  workflowId?: string;
  /** For ctx.info (default: the empty string). */
  runId?: string;
  /** For ctx.info (default 'default'). */
  namespace?: string;
}

function workflowFor(workflows: Record<string, WorkflowFunction>, workflowType: string): WorkflowFunction<JsonValue> {
  if (typeof workflowType !== 'string' || workflowType === '') {
    throw new TypeError('workflowType must be a workflow type name');
  }
  const fn = Object.prototype.hasOwnProperty.call(workflows, workflowType) ? workflows[workflowType] : undefined;
  if (typeof fn !== 'function') {
    throw new TypeError(`workflowType ${workflowType} is not in workflows (it has: ${Object.keys(workflows).join(', ')})`);
  }
  return fn as WorkflowFunction<JsonValue>;
}

function rawEvents(history: ReplayEvent[]): RawEvent[] {
  return history.map((e) => ({
    eventId: Number(e.eventId),
    eventTime: e.eventTime instanceof Date ? e.eventTime.toISOString() : e.eventTime,
    eventType: e.eventType,
    attributes: e.attributes ?? {},
  }));
}

async function replayOne(fn: WorkflowFunction<JsonValue>, task: {
  namespace: string; workflowId: string; runId: string; workflowType: string;
}, history: RawEvent[]): Promise<ReplayResult> {
  const result: ReplayResult = { workflowId: task.workflowId, runId: task.runId, ok: true };
  try {
    const first = history[0];
    if (first === undefined) throw new Error('the history is empty');
    const taskQueue = typeof first.attributes.taskQueue === 'string' ? first.attributes.taskQueue : '';
    const run = new WorkflowRun(fn, { ...task, taskQueue }, first);
    await run.replayStored(history);
  } catch (e) {
    result.ok = false;
    result.error = e instanceof NonDeterminismError
      ? new NonDeterminismError(nonDeterminismMessage(task.workflowType, task.workflowId, e.message))
      : e instanceof Error ? e : new Error(String(e));
  }
  return result;
}

/**
 * Replays one history against the workflow code and says whether the code
 * follows it.  Nothing is read or written.
 */
export async function replayHistory(options: ReplayHistoryOptions): Promise<ReplayResult> {
  const history = rawEvents(options.history);
  const started = history[0]?.attributes.workflowType;
  const workflowType = options.workflowType ?? (typeof started === 'string' ? started : '');
  const fn = workflowFor(options.workflows, workflowType);
  return replayOne(fn, {
    namespace: options.namespace ?? 'default', workflowId: options.workflowId ?? '', runId: options.runId ?? '',
    workflowType,
  }, history);
}

/**
 * Replays the histories of a workflow type's runs (durable.replay_histories:
 * the running ones by default, the latest first) against the code of
 * workflows[workflowType], and returns a result per run.  The role needs
 * what replay_histories() needs (durable_client and the client privilege on
 * the namespace): otherwise its error (PermissionDeniedError ...) is thrown.
 */
export async function replayHistories(options: ReplayHistoriesOptions): Promise<ReplayResult[]> {
  const { workflows, workflowType, namespace = 'default', onlyRunning = true, maxRuns = 1000, ...conn } = options;
  const fn = workflowFor(workflows, workflowType);
  const connection = new Connection(conn, 1);
  let rows: Array<Record<string, unknown>>;
  try {
    rows = await connection.query(
      'SELECT workflow_id, run_id, history FROM durable.replay_histories($1, $2, $3, $4)',
      [workflowType, namespace, onlyRunning, maxRuns]);
  } finally {
    await connection.close();
  }
  const results: ReplayResult[] = [];
  for (const r of rows) {
    results.push(await replayOne(fn, {
      namespace, workflowId: String(r.workflow_id), runId: String(r.run_id), workflowType,
    }, rawEvents(r.history as ReplayEvent[])));
  }
  return results;
}

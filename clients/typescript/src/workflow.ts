/**
 * Workflow code and its deterministic replay.
 *
 * A decision task carries the run's whole history.  The run's state is
 * rebuilt by replaying it: the workflow function runs from the start, each
 * call that makes a command (an activity, a timer, a child ...) takes the
 * next number (1, 2, 3 ..., as a SQL workflow's calls are numbered,
 * docs/sql-workflows.md: activityId and timerId are that number), and at each past decision task the events the workflow saw are
 * delivered in history order, the code runs until it blocks, and the
 * commands it issues are checked against the events that task's decisions
 * wrote.  A command that does not match (another kind or type at a number, a
 * command that history does not have, an event no command made) is
 * non-determinism: the decision task is failed and history is not touched.
 * At the last DecisionTaskStarted, the current task, the new commands are
 * the answer.
 */
import { createHash } from 'node:crypto';
import {
  ActivityFailure, ApplicationFailure, CancelledError, ChildWorkflowFailure, ExternalWorkflowError,
  InvalidArgumentError, NonDeterminismError,
} from './errors';
import { Duration, JsonObject, JsonValue, RetryPolicy, retryPolicyJson, toJsonText, toSeconds } from './json';
import { NON_RETRYABLE_REASON } from './activity';

/** One event of history as a decision task carries it. */
export interface RawEvent {
  eventId: number;
  eventTime: string;
  eventType: string;
  attributes: { [key: string]: JsonValue };
}

/** What a run knows of itself. */
export interface WorkflowInfo {
  namespace: string;
  workflowId: string;
  runId: string;
  workflowType: string;
  taskQueue: string;
  /** 1 for the first attempt (workflow retries count up). */
  attempt: number;
  /** The time of WorkflowExecutionStarted. */
  startTime: Date;
  firstExecutionRunId: string | null;
  /** The run this one continues (retry, cron, continue-as-new), or null. */
  continuedFromRunId: string | null;
  /** A cron run's last completed result, or null. */
  lastCompletionResult: JsonValue;
}

/** ScheduleActivityTask's options. */
export interface ActivityOptions {
  /** Default: the workflow's task queue. */
  taskQueue?: string;
  scheduleToStartTimeout?: Duration;
  startToCloseTimeout?: Duration;
  scheduleToCloseTimeout?: Duration;
  heartbeatTimeout?: Duration;
  /**
   * The activity's retries.  Fields left out take durable's default policy
   * (1 s, x2, at most 100 s, 10 attempts); the reason of ApplicationFailure's
   * nonRetryable flag is always added to the non-retryable reasons.
   */
  retryPolicy?: RetryPolicy;
  /**
   * The priority of its tasks, an integer from 1 (claimed first) to 5
   * (default: the workflow's, else 3; docs/task-queues.md "Priorities and
   * fairness").  Needs durable 0.9.0.
   */
  priority?: number;
  /**
   * The concurrency key of its tasks, 1 to 255 bytes (default: the
   * workflow's, else none).  Needs durable 0.9.0.
   */
  concurrencyKey?: string;
}

export type ParentClosePolicy = 'TERMINATE' | 'REQUEST_CANCEL' | 'ABANDON';

/** A child workflow started by ctx.startChild(). */
export interface ChildWorkflowHandle<O = JsonValue> {
  readonly workflowId: string;
  /** Its result (the promise child() returns); a failure throws ChildWorkflowFailure. */
  readonly result: Promise<O>;
  /** Signals it (SignalExternalWorkflowExecution with childWorkflowOnly). */
  signal(signalName: string, input?: unknown): Promise<void>;
}

/** StartChildWorkflowExecution's options. */
export interface ChildWorkflowOptions {
  /** Default: `<parent workflow id>/<number of the call>`. */
  workflowId?: string;
  namespace?: string;
  taskQueue?: string;
  retryPolicy?: RetryPolicy;
  executionTimeout?: Duration;
  runTimeout?: Duration;
  decisionTimeout?: Duration;
  /** TERMINATE (default), REQUEST_CANCEL or ABANDON. */
  parentClosePolicy?: ParentClosePolicy;
  idReusePolicy?: 'allow_duplicate_failed_only' | 'allow_duplicate' | 'reject_duplicate' | 'terminate_if_running';
  cronSchedule?: string;
  memo?: JsonObject;
  /**
   * The child's priority, an integer from 1 (claimed first) to 5 (default:
   * this workflow's); its own activities and children inherit it.  Needs
   * durable 0.9.0.
   */
  priority?: number;
  /** The child's concurrency key, 1 to 255 bytes (default: this workflow's).  Needs durable 0.9.0. */
  concurrencyKey?: string;
}

/** ContinueAsNewWorkflowExecution's options (default: this run's type and queue). */
export interface ContinueAsNewOptions {
  workflowType?: string;
  taskQueue?: string;
  runTimeout?: Duration;
  decisionTimeout?: Duration;
  /** The new run's first decision task waits this long. */
  backoff?: Duration;
  retryPolicy?: RetryPolicy;
  cronSchedule?: string;
  memo?: JsonObject;
}

/** Where signalExternal and cancelExternal go. */
export interface ExternalWorkflowOptions {
  namespace?: string;
  /** Default: the latest run. */
  runId?: string;
  /** Only if the target is a child of this workflow. */
  childWorkflowOnly?: boolean;
}

/** What workflow code may do: every call is recorded in history and replayed. */
export interface WorkflowContext {
  readonly info: WorkflowInfo;
  /** Whether the workflow's cancellation was requested. */
  readonly cancelRequested: boolean;
  /** Runs an activity and returns its result; a failure for good throws ActivityFailure. */
  activity<O = JsonValue>(activityType: string, input?: unknown, options?: ActivityOptions): Promise<O>;
  /** A durable timer. */
  sleep(duration: Duration): Promise<void>;
  /**
   * The input of the next signal of that name (null for a signal without
   * input); undefined when the timeout passes first.
   */
  waitSignal<T = JsonValue>(signalName: string, options?: { timeout?: Duration }): Promise<T | undefined>;
  /** Runs a child workflow and returns its result; a failure throws ChildWorkflowFailure. */
  child<O = JsonValue>(workflowType: string, input?: unknown, options?: ChildWorkflowOptions): Promise<O>;
  /**
   * Starts a child workflow (the same command as child()) and returns a handle
   * on it at once: its workflowId, its result, and signals to it.
   */
  startChild<O = JsonValue>(workflowType: string, input?: unknown, options?: ChildWorkflowOptions): ChildWorkflowHandle<O>;
  /** Runs fn once and records its (JSON) value; replays return the recorded value. */
  sideEffect<T>(fn: () => T): Promise<T>;
  /** The time of the current decision task: the same on every replay. */
  now(): Date;
  /** A number in [0, 1) from a generator seeded by the run: the same on every replay. */
  random(): number;
  /** A UUID (version 4 form) from the same generator. */
  uuid(): string;
  /** Closes this run and starts a new one of the chain with input. */
  continueAsNew(input?: unknown, options?: ContinueAsNewOptions): Promise<never>;
  /** Signals another workflow (or this one). */
  signalExternal(workflowId: string, signalName: string, input?: unknown, options?: ExternalWorkflowOptions): Promise<void>;
  /** Requests another workflow's cancellation. */
  cancelExternal(workflowId: string, options?: ExternalWorkflowOptions): Promise<void>;
  /** Merges attributes into the run's search attributes (list() finds runs by them). */
  upsertSearchAttributes(attributes: JsonObject): void;
  /**
   * The version of a change of the code in this run, as Cadence's GetVersion
   * and durable.get_version() of SQL workflows: a run that reaches the call
   * in the decision task being run records maxSupported (a RecordMarker
   * `Version`); a replay gets the recorded version back; a run that passed
   * this point before the call existed gets DEFAULT_VERSION (-1).  The same
   * change id again returns the same version.  A version outside
   * [minSupported, maxSupported] fails the decision task as non-deterministic.
   */
  getVersion(changeId: string, minSupported: number, maxSupported: number): number;
  /** Temporal's shorthand on the same marker: getVersion(changeId, -1, 1) === 1. */
  patched(changeId: string): boolean;
  /**
   * What patched(changeId) becomes once no run that took the old branch is
   * open: accepts the change's marker, or none, and records the marker,
   * marked deprecated, for new runs.  A deprecated marker that the code no
   * longer asks for is passed over on replay, so the call can go later.
   */
  deprecatePatch(changeId: string): void;
}

/** getVersion()'s answer for a run that passed the change before the call existed. */
export const DEFAULT_VERSION = -1;

/** The longest change id, in UTF-8 bytes (durable's names). */
const MAX_NAME_BYTES = 1000;

/**
 * A workflow: a function of its context and input.  It must be
 * deterministic: only the context's calls may wait, read time or randomness.
 * The default input type `never` lets functions of any input be registered.
 */
export type WorkflowFunction<I = never, O = unknown> = (ctx: WorkflowContext, input: I) => Promise<O>;

/** Thrown by continueAsNew() to end the run's code. */
export class ContinueAsNew extends Error {
  constructor(readonly input: unknown, readonly options: ContinueAsNewOptions) {
    super('continue as new');
    this.name = 'ContinueAsNew';
  }
}

type CommandKind = 'activity' | 'timer' | 'child' | 'marker' | 'signalExternal' | 'cancelExternal' | 'upsert' |
  'cancelTimer' | 'cancelActivity' | 'close';

interface Command {
  kind: CommandKind;
  /** The number the call took (null for commands on an earlier number). */
  seq: number | null;
  decision: JsonObject;
  /** Compared with the event's: activityId and type, timerId, workflowId and type ... */
  key: string;
}

type OpKind = 'activity' | 'timer' | 'child' | 'signal' | 'external';

interface Op {
  kind: OpKind;
  seq: number;
  settled: boolean;
  resolve(v: unknown): void;
  reject(e: unknown): void;
  /** What the op is, for messages: the activity type, the child's id ... */
  label: string;
  /** For a child: its workflow id. */
  workflowId?: string;
}

interface SignalWaiter {
  resolve(v: JsonValue | undefined): void;
  reject(e: unknown): void;
  timerSeq: number | null;
  settled: boolean;
}

/** The events that record a command, with the command kind and the key it must have. */
function commandEventKey(e: RawEvent): { kind: CommandKind; key: string } | null {
  const a = e.attributes;
  switch (e.eventType) {
    case 'ActivityTaskScheduled':
      return { kind: 'activity', key: `activityId ${str(a.activityId)} type ${str(a.activityType)}` };
    case 'TimerStarted':
      return { kind: 'timer', key: `timerId ${str(a.timerId)}` };
    case 'StartChildWorkflowExecutionInitiated':
      return { kind: 'child', key: `workflowId ${str(a.workflowId)} type ${str(a.workflowType)}` };
    case 'MarkerRecorded':
      return { kind: 'marker', key: markerKey(str(a.markerName), a.details) };
    case 'SignalExternalWorkflowExecutionInitiated':
      return { kind: 'signalExternal', key: `workflowId ${str(a.workflowId)} signal ${str(a.signalName)}` };
    case 'RequestCancelExternalWorkflowExecutionInitiated':
      return { kind: 'cancelExternal', key: `workflowId ${str(a.workflowId)}` };
    case 'UpsertWorkflowSearchAttributes':
      return { kind: 'upsert', key: 'searchAttributes' };
    case 'TimerCanceled':
    case 'CancelTimerFailed':
      return { kind: 'cancelTimer', key: `timerId ${str(a.timerId)}` };
    case 'ActivityTaskCancelRequested':
    case 'RequestCancelActivityTaskFailed':
      return { kind: 'cancelActivity', key: `activityId ${str(a.activityId)}` };
    default:
      return null;
  }
}

const commandNames: Record<CommandKind, string> = {
  activity: 'ScheduleActivityTask', timer: 'StartTimer', child: 'StartChildWorkflowExecution',
  marker: 'RecordMarker', signalExternal: 'SignalExternalWorkflowExecution',
  cancelExternal: 'RequestCancelExternalWorkflowExecution', upsert: 'UpsertWorkflowSearchAttributes',
  cancelTimer: 'CancelTimer', cancelActivity: 'RequestCancelActivityTask', close: 'a closing decision',
};

function describeCommand(c: Command): string {
  return c.kind === 'close' ? String(c.decision.decisionType) : `${commandNames[c.kind]} ${c.key}`;
}

function str(v: JsonValue | undefined): string {
  return typeof v === 'string' ? v : JSON.stringify(v ?? null);
}

function markerId(details: JsonValue | undefined): string {
  if (details !== null && typeof details === 'object' && !Array.isArray(details)) return `id ${str(details.id)}`;
  return 'id null';
}

/** The marker of getVersion(), patched() and deprecatePatch(). */
const VERSION_MARKER = 'Version';

/** The key of a marker: its name and id, and for a version marker its change. */
function markerKey(name: string, details: JsonValue | undefined): string {
  const key = `marker ${name} ${markerId(details)}`;
  if (name === VERSION_MARKER && details !== null && typeof details === 'object' && !Array.isArray(details)) {
    return `${key} change ${str(details.changeId)}`;
  }
  return key;
}

/** A version marker of history. */
interface VersionMarker {
  changeId: string;
  /** The recorded version (not checked yet: it must be an integer). */
  version: JsonValue;
  deprecated: boolean;
  eventId: number;
}

/** The version marker an event records, with its command number, or null. */
function versionMarkerOf(e: RawEvent): { id: number; marker: VersionMarker } | null {
  const d = e.attributes.details;
  if (e.eventType !== 'MarkerRecorded' || e.attributes.markerName !== VERSION_MARKER || d === null ||
      typeof d !== 'object' || Array.isArray(d) || typeof d.id !== 'number' || typeof d.changeId !== 'string') {
    return null;
  }
  return { id: d.id, marker: { changeId: d.changeId, version: d.version ?? null, deprecated: d.deprecated === true,
    eventId: e.eventId } };
}

/** The bytes of a name as durable counts them (UTF-8). */
function byteLength(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** getVersion()'s change id, or InvalidArgumentError naming the argument (SQLSTATEs of get_version). */
function checkChangeId(changeId: unknown): string {
  if (changeId === null || changeId === undefined) {
    throw new InvalidArgumentError('changeId must not be null', { sqlstate: '22004' }, 'changeId');
  }
  if (typeof changeId !== 'string') {
    throw new InvalidArgumentError(`changeId must be a string, not ${typeof changeId}`, { sqlstate: '22023' }, 'changeId');
  }
  if (changeId === '') throw new InvalidArgumentError('changeId must not be empty', { sqlstate: '22023' }, 'changeId');
  if (byteLength(changeId) > MAX_NAME_BYTES) {
    throw new InvalidArgumentError(`changeId must be at most ${MAX_NAME_BYTES} bytes`, { sqlstate: '22023' }, 'changeId');
  }
  return changeId;
}

/** A bound of getVersion(): an integer (int4, as get_version's). */
function checkBound(v: unknown, what: string): number {
  if (v === null || v === undefined) {
    throw new InvalidArgumentError(`${what} must not be null`, { sqlstate: '22004' }, what);
  }
  if (typeof v !== 'number' || !Number.isInteger(v) || v < -2147483648 || v > 2147483647) {
    throw new InvalidArgumentError(`${what} must be an integer`, { sqlstate: '22023' }, what);
  }
  return v;
}

/** The events that close a run. */
const CLOSING_EVENTS = new Set(['WorkflowExecutionCompleted', 'WorkflowExecutionFailed', 'WorkflowExecutionCanceled',
  'WorkflowExecutionContinuedAsNew', 'WorkflowExecutionTimedOut', 'WorkflowExecutionTerminated']);

/** The message of a NonDeterministicWorkflow failure (the worker's, and the replayer's). */
export function nonDeterminismMessage(workflowType: string, workflowId: string, message: string): string {
  return `non-deterministic workflow ${workflowType} (${workflowId}): ${message}`;
}

/** durable's default activity retry policy (docs/api.md "Activities: retries, timeouts, heartbeats"). */
const DEFAULT_ACTIVITY_RETRY: RetryPolicy = {
  initialInterval: 1000, backoffCoefficient: 2, maximumInterval: 100000, maximumAttempts: 10,
};

/** sfc32, seeded from a hash: a small generator that replays the same. */
function makeRandom(seed: string): () => number {
  const h = createHash('sha256').update(seed).digest();
  let a = h.readUInt32LE(0); let b = h.readUInt32LE(4); let c = h.readUInt32LE(8); let d = h.readUInt32LE(12);
  return () => {
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
    const t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    const r = (t + d) | 0;
    c = (c + r) | 0;
    return (r >>> 0) / 4294967296;
  };
}

function secondsOpt(o: JsonObject, field: string, d: Duration | undefined, what: string): void {
  if (d !== undefined) o[field] = toSeconds(d, what);
}

/**
 * The priority and concurrencyKey of a ScheduleActivityTask or a
 * StartChildWorkflowExecution, checked here as durations are: a value that
 * durable would refuse throws in the workflow's code instead of having its
 * decision task's answer refused.
 */
function orderOpts(o: JsonObject, options: { priority?: number; concurrencyKey?: string }): void {
  const p = options.priority;
  if (p !== undefined) {
    if (typeof p !== 'number' || !Number.isInteger(p) || p < 1 || p > 5) {
      throw new TypeError(`priority must be an integer from 1 to 5 (1 is claimed first; the default is 3), not ${String(p)}`);
    }
    o.priority = p;
  }
  const k = options.concurrencyKey;
  if (k !== undefined) {
    if (typeof k !== 'string' || k === '' || Buffer.byteLength(k, 'utf8') > 255) {
      throw new TypeError('concurrencyKey must be a string of 1 to 255 bytes');
    }
    o.concurrencyKey = k;
  }
}

/**
 * The state of one run, rebuilt from its history.  Events are applied in
 * order with apply(); each activation (a DecisionTaskStarted of a task that
 * completed, or the last one) runs the code until it blocks.
 */
export class WorkflowRun {
  readonly info: WorkflowInfo;
  /** The last event applied. */
  lastEventId = 0;
  /** The DecisionTaskStarted of the last activation. */
  lastStartedEventId = 0;
  /** The run's decision timeout (seconds), from WorkflowExecutionStarted. */
  readonly decisionTimeoutSeconds: number;
  /** Its WorkflowExecutionStarted. */
  readonly startedEvent: RawEvent;

  private seq = 0;
  private newCommands: Command[] = [];
  private awaiting: Command[] = [];
  private awaitingFrom = 0;
  private inbox: RawEvent[] = [];
  private readonly ops = new Map<number, Op>();
  private readonly activityBySchedule = new Map<number, number>();
  private readonly timerById = new Map<string, number>();
  private readonly childByInitiated = new Map<number, number>();
  private readonly externalByInitiated = new Map<number, number>();
  private readonly signalQueues = new Map<string, JsonValue[]>();
  private readonly signalWaiters = new Map<string, SignalWaiter[]>();
  private readonly markers = new Map<number, JsonValue>();
  /** The version markers of history, by command number. */
  private readonly versionMarkers = new Map<number, VersionMarker>();
  /** The deprecated version markers passed over (their command numbers). */
  private readonly passedOver = new Set<number>();
  /** The version of each change id asked for in this run. */
  private readonly versions = new Map<string, number>();
  /** Whether the code runs in a decision task of the past (one that completed). */
  private replaying = false;
  /** The replayer's run: nothing is sent, a side effect's function is never called. */
  private replayOnly = false;
  /** Non-determinism found while the code ran (a version out of range): fails the task. */
  private fatal: NonDeterminismError | null = null;
  private cancelRequestedFlag = false;
  private cancelToRaise = false;
  private closed = false;
  private started = false;
  private currentTime: Date;
  /** The seed of rand(); its generator is made at the first call (most runs never draw). */
  private readonly randSeed: string;
  private randGen: (() => number) | null = null;
  private readonly input: JsonValue;

  constructor(private readonly fn: WorkflowFunction<JsonValue>, task: {
    namespace: string; workflowId: string; runId: string; workflowType: string; taskQueue: string;
  }, first: RawEvent) {
    if (first.eventType !== 'WorkflowExecutionStarted') {
      throw new NonDeterminismError(`history starts with ${first.eventType}, not WorkflowExecutionStarted`);
    }
    const a = first.attributes;
    this.startedEvent = first;
    this.info = {
      namespace: task.namespace, workflowId: task.workflowId, runId: task.runId,
      workflowType: task.workflowType, taskQueue: task.taskQueue,
      attempt: typeof a.attempt === 'number' ? a.attempt : 1,
      startTime: new Date(first.eventTime),
      firstExecutionRunId: typeof a.firstExecutionRunId === 'string' ? a.firstExecutionRunId : null,
      continuedFromRunId: typeof a.continuedExecutionRunId === 'string' ? a.continuedExecutionRunId : null,
      lastCompletionResult: a.lastCompletionResult ?? null,
    };
    this.decisionTimeoutSeconds = typeof a.taskStartToCloseTimeoutSeconds === 'number' ? a.taskStartToCloseTimeoutSeconds : 10;
    this.input = a.input ?? null;
    this.currentTime = new Date(first.eventTime);
    // Seeded by what a reset copies unchanged (the first event), so that a
    // reset run replays the same numbers.
    this.randSeed = JSON.stringify([a.firstExecutionRunId ?? null, a.continuedExecutionRunId ?? null,
      a.attempt ?? null, first.eventTime]);
    this.lastEventId = 1;
  }

  /** The run's deterministic random numbers in [0, 1). */
  rand(): number {
    this.randGen ??= makeRandom(this.randSeed);
    return this.randGen();
  }

  /**
   * Applies history from lastEventId + 1 to the end; returns the decisions of
   * the last activation (the current task).  Throws NonDeterminismError.
   */
  async advance(history: RawEvent[], closedAfter = false): Promise<JsonObject[]> {
    for (const e of history) {
      if (e.eventType === 'MarkerRecorded' && e.eventId > this.lastEventId) {
        const d = e.attributes.details;
        if (e.attributes.markerName === 'SideEffect' && d !== null && typeof d === 'object' && !Array.isArray(d) &&
            typeof d.id === 'number') {
          this.markers.set(d.id, d.value ?? null);
        }
        const v = versionMarkerOf(e);
        if (v !== null) this.versionMarkers.set(v.id, v.marker);
      }
    }
    let decisions: JsonObject[] | null = null;
    for (let i = 0; i < history.length; i++) {
      const e = history[i];
      if (e.eventId <= this.lastEventId) continue;
      if (e.eventId !== this.lastEventId + 1) {
        throw new Error(`history skips from event ${this.lastEventId} to ${e.eventId}`);
      }
      this.lastEventId = e.eventId;
      if (e.eventType === 'DecisionTaskStarted') {
        const next = history[i + 1];
        if (next === undefined && closedAfter) {
          // replayStored: the run closed at the event before.
          this.checkAwaiting(`the run closed at event ${e.eventId - 1}`, true);
          decisions = [];
        } else if (next === undefined) {
          this.replaying = false;
          await this.activate(e);
          // Kept: a cached run matches them against the events they write.
          decisions = this.newCommands.map((c) => c.decision);
        } else if (next.eventType === 'DecisionTaskCompleted') {
          this.replaying = true;
          await this.activate(e);
        }
        // A task that failed or timed out decided nothing: its events go to the next.
        continue;
      }
      if (e.eventType === 'DecisionTaskCompleted') {
        this.awaiting = this.newCommands;
        this.awaitingFrom = e.eventId;
        this.newCommands = [];
        continue;
      }
      const ck = commandEventKey(e);
      if (ck !== null) {
        this.match(e, ck.kind, ck.key);
        continue;
      }
      this.inbox.push(e);
    }
    if (decisions === null) throw new Error('the history of a decision task does not end with DecisionTaskStarted');
    return decisions;
  }

  /**
   * The replayer (replayHistories): replays a stored history to its end, as
   * a worker would at the run's next decision task, and sends nothing.  A
   * running run gets one more activation after its last event, where the
   * code may make new commands (they are dropped) but runs no side effect's
   * function; a closed run's last commands are checked against its history
   * (its closing is not compared).  Throws NonDeterminismError.
   */
  async replayStored(history: RawEvent[]): Promise<void> {
    this.replayOnly = true;
    const last = history[history.length - 1];
    if (last === undefined) throw new Error('the history is empty');
    if (CLOSING_EVENTS.has(last.eventType)) {
      // No decision task after the close: the events are matched, and the
      // commands of the last completed task must have theirs.
      const synthetic = [...history, { eventId: last.eventId + 1, eventTime: last.eventTime,
        eventType: 'DecisionTaskStarted', attributes: {} }];
      await this.advance(synthetic, true);
      return;
    }
    if (last.eventType === 'DecisionTaskStarted') {
      await this.advance(history);
      return;
    }
    await this.advance([...history, { eventId: last.eventId + 1, eventTime: last.eventTime,
      eventType: 'DecisionTaskStarted', attributes: {} }]);
  }

  /**
   * The commands the code issued in the last completed decision task must
   * each have had its event by the time the next one starts (`when` says
   * what comes next); a closing command may lack one only when the run
   * closed.
   */
  private checkAwaiting(when: string, closed: boolean): void {
    const c = this.awaiting.find((x) => !closed || x.kind !== 'close');
    if (c === undefined) return;
    throw new NonDeterminismError(`the code issued ${describeCommand(c)}` +
      (c.seq !== null ? ` at number ${c.seq}` : '') +
      ` in the decision task completed at event ${this.awaitingFrom}, but history has no event for it ` +
      `(${when})`);
  }

  /** Whether the code has returned (the last decisions closed the run). */
  get isClosed(): boolean {
    return this.closed;
  }

  private match(e: RawEvent, kind: CommandKind, key: string): void {
    if (this.passOver(e, key)) return;
    const c = this.awaiting.shift();
    const hist = `history has ${e.eventType} (${key}) at event ${e.eventId}`;
    if (c === undefined) {
      throw new NonDeterminismError(`${hist}, but the code issued no command for it ` +
        `(decision task completed at event ${this.awaitingFrom})`);
    }
    if (c.kind !== kind || c.key !== key) {
      throw new NonDeterminismError(`${hist}, but the code issued ${describeCommand(c)}` +
        (c.seq !== null ? ` at number ${c.seq}` : ''));
    }
    switch (e.eventType) {
      case 'ActivityTaskScheduled':
        this.activityBySchedule.set(e.eventId, c.seq as number);
        break;
      case 'TimerStarted':
        this.timerById.set(String(e.attributes.timerId), c.seq as number);
        break;
      case 'StartChildWorkflowExecutionInitiated':
        this.childByInitiated.set(e.eventId, c.seq as number);
        break;
      case 'SignalExternalWorkflowExecutionInitiated':
      case 'RequestCancelExternalWorkflowExecutionInitiated':
        this.externalByInitiated.set(e.eventId, c.seq as number);
        break;
      default:
        break;
    }
  }

  /**
   * Whether e is a deprecated version marker that the code no longer asks
   * for (docs/sql-workflows.md "Changing workflow code"): one whose number
   * the code passed over, or the next number when the code issued no other
   * command for the event.  Its number is taken, as durable.deprecate_patch()'s
   * SQL replay does.
   */
  private passOver(e: RawEvent, key: string): boolean {
    const v = versionMarkerOf(e);
    if (v === null || !v.marker.deprecated) return false;
    if (this.passedOver.has(v.id)) return true;
    const c = this.awaiting[0];
    if (v.id === this.seq + 1 && (c === undefined || c.kind !== 'marker' || c.key !== key)) {
      this.seq = v.id;
      this.passedOver.add(v.id);
      return true;
    }
    return false;
  }

  /** The deprecated version markers of history at the next command numbers are passed over. */
  private skipDeprecated(): void {
    for (;;) {
      const m = this.versionMarkers.get(this.seq + 1);
      if (m === undefined || !m.deprecated) return;
      this.passedOver.add(++this.seq);
    }
  }

  /** The number of the next command: the next one, after deprecated markers the code no longer asks for. */
  private nextSeq(): number {
    this.skipDeprecated();
    return ++this.seq;
  }

  /** The number the next command will take. */
  private peekSeq(): number {
    this.skipDeprecated();
    return this.seq + 1;
  }

  /**
   * The version of a change in this run (getVersion, patched, deprecatePatch):
   * the one this run gave it already; the one recorded by the version marker
   * that history has as the next command; DEFAULT_VERSION, taking no number,
   * when history has another command there or the code runs in a decision
   * task of the past; else, in the current task, newVersion, recorded by a
   * RecordMarker decision.  With a range, a version outside it is
   * non-determinism (the decision task fails).
   */
  private changeVersion(changeId: string, newVersion: number, deprecated: boolean,
    range: [number, number] | null): number {
    if (this.closed) throw new Error('the workflow has returned');
    if (this.fatal !== null) throw this.fatal;
    let version = this.versions.get(changeId);
    if (version === undefined) {
      // Deprecated markers of other changes, which the code no longer asks for.
      for (;;) {
        const m = this.versionMarkers.get(this.seq + 1);
        if (m === undefined || !m.deprecated || m.changeId === changeId) break;
        this.passedOver.add(++this.seq);
      }
      const n = this.seq + 1;
      const m = this.versionMarkers.get(n);
      if (m !== undefined && m.changeId === changeId) {
        if (typeof m.version !== 'number' || !Number.isInteger(m.version)) {
          this.fail(new NonDeterminismError(`history event ${m.eventId} records a version marker of change ` +
            `"${changeId}" without an integer version`));
        }
        version = m.version as number;
        this.seq = n;
        this.push(versionCommand(n, changeId, version, m.deprecated));
      } else if (m !== undefined || this.replaying) {
        version = DEFAULT_VERSION;
      } else {
        version = newVersion;
        this.seq = n;
        this.push(versionCommand(n, changeId, version, deprecated));
      }
      this.versions.set(changeId, version);
    }
    if (range !== null && (version < range[0] || version > range[1])) {
      this.fail(new NonDeterminismError(`change "${changeId}": the run has version ${version}, ` +
        `but the workflow supports versions ${range[0]} to ${range[1]}`));
    }
    return version;
  }

  /** Non-determinism found by a call of the code: the task fails whatever the code does with the error. */
  private fail(e: NonDeterminismError): never {
    this.fatal ??= e;
    throw this.fatal;
  }

  /** One activation: deliver what arrived, run the code until it blocks. */
  private async activate(started: RawEvent): Promise<void> {
    this.checkAwaiting(`the next decision task started at event ${started.eventId}`, false);
    this.lastStartedEventId = started.eventId;
    this.currentTime = new Date(started.eventTime);
    const inbox = this.inbox;
    this.inbox = [];
    for (const e of inbox) this.deliver(e);
    if (!this.started) {
      this.started = true;
      const ctx = this.context();
      Promise.resolve()
        .then(() => this.fn(ctx, this.input))
        .then((v) => this.close(v, null), (err: unknown) => this.close(undefined, err));
    }
    // Every continuation the deliveries and the code queued runs before the
    // next turn of the event loop: then the code is blocked on the context.
    await new Promise<void>((r) => setImmediate(r));
    if (this.fatal !== null) throw this.fatal;
  }

  private opFor(map: Map<number, number> | Map<string, number>, key: number | string): Op | undefined {
    const seq = (map as Map<number | string, number>).get(key);
    if (seq === undefined) return undefined;
    const op = this.ops.get(seq);
    return op === undefined || op.settled ? undefined : op;
  }

  private settle(op: Op, ok: boolean, v: unknown): void {
    op.settled = true;
    this.ops.delete(op.seq);
    if (ok) op.resolve(v); else op.reject(v);
  }

  private deliver(e: RawEvent): void {
    const a = e.attributes;
    const num = (v: JsonValue | undefined): number => Number(v);
    switch (e.eventType) {
      case 'ActivityTaskCompleted': {
        const op = this.opFor(this.activityBySchedule, num(a.scheduledEventId));
        if (op) this.settle(op, true, a.result ?? null);
        break;
      }
      case 'ActivityTaskFailed':
      case 'ActivityTaskTimedOut':
      case 'ActivityTaskCanceled': {
        const op = this.opFor(this.activityBySchedule, num(a.scheduledEventId));
        if (!op) break;
        let reason: string;
        const details = a.details ?? null;
        if (e.eventType === 'ActivityTaskFailed') {
          reason = str(a.reason ?? 'durable:Generic');
          if (reason === NON_RETRYABLE_REASON && details !== null && typeof details === 'object' &&
              !Array.isArray(details) && typeof details.type === 'string') {
            reason = details.type;
          }
        } else if (e.eventType === 'ActivityTaskTimedOut') {
          reason = `durable:Timeout ${str(a.timeoutType ?? null)}`;
        } else {
          reason = 'canceled';
        }
        this.settle(op, false, new ActivityFailure(op.label, String(op.seq), reason, details));
        break;
      }
      case 'TimerFired': {
        const op = this.opFor(this.timerById, String(a.timerId));
        if (op) this.settle(op, true, undefined);
        break;
      }
      case 'StartChildWorkflowExecutionFailed': {
        const op = this.opFor(this.childByInitiated, num(a.initiatedEventId));
        if (op) {
          this.settle(op, false, new ChildWorkflowFailure(op.label, op.workflowId ?? '', 'start_failed',
            str(a.cause ?? null), null));
        }
        break;
      }
      case 'ChildWorkflowExecutionCompleted':
      case 'ChildWorkflowExecutionFailed':
      case 'ChildWorkflowExecutionCanceled':
      case 'ChildWorkflowExecutionTimedOut':
      case 'ChildWorkflowExecutionTerminated': {
        const op = this.opFor(this.childByInitiated, num(a.initiatedEventId));
        if (!op) break;
        if (e.eventType === 'ChildWorkflowExecutionCompleted') {
          this.settle(op, true, a.result ?? null);
        } else {
          const status = { ChildWorkflowExecutionFailed: 'failed', ChildWorkflowExecutionCanceled: 'canceled',
            ChildWorkflowExecutionTimedOut: 'timed_out', ChildWorkflowExecutionTerminated: 'terminated' }[e.eventType];
          const reason = a.reason !== undefined ? str(a.reason) :
            a.timeoutType !== undefined ? `timeout ${str(a.timeoutType)}` : undefined;
          this.settle(op, false, new ChildWorkflowFailure(op.label, op.workflowId ?? '', status, reason, a.details ?? null));
        }
        break;
      }
      case 'ExternalWorkflowExecutionSignaled':
      case 'ExternalWorkflowExecutionCancelRequested': {
        const op = this.opFor(this.externalByInitiated, num(a.initiatedEventId));
        if (op) this.settle(op, true, undefined);
        break;
      }
      case 'SignalExternalWorkflowExecutionFailed':
      case 'RequestCancelExternalWorkflowExecutionFailed': {
        const op = this.opFor(this.externalByInitiated, num(a.initiatedEventId));
        if (op) {
          this.settle(op, false, new ExternalWorkflowError(
            e.eventType.startsWith('Signal') ? 'signal' : 'cancel request', op.workflowId ?? '', str(a.cause ?? null)));
        }
        break;
      }
      case 'WorkflowExecutionSignaled': {
        const name = str(a.signalName);
        const input = a.input ?? null;
        const waiters = this.signalWaiters.get(name);
        const w = waiters?.shift();
        if (w !== undefined) {
          w.settled = true;
          if (w.timerSeq !== null) this.cancelTimer(w.timerSeq);
          w.resolve(input);
        } else {
          const q = this.signalQueues.get(name) ?? [];
          q.push(input);
          this.signalQueues.set(name, q);
        }
        break;
      }
      case 'WorkflowExecutionCancelRequested':
        this.onCancelRequested();
        break;
      default:
        // ActivityTaskStarted, ChildWorkflowExecutionStarted, DecisionTaskScheduled,
        // DecisionTaskFailed/TimedOut ...: nothing waits for them.
        break;
    }
  }

  /**
   * A cancellation request: every call the code waits on throws CancelledError
   * (timers are canceled, activities asked to cancel); if it waits on none,
   * the next call that would wait throws it.  Once: after that the code may
   * run cleanup activities.
   */
  private onCancelRequested(): void {
    if (this.cancelRequestedFlag) return;
    this.cancelRequestedFlag = true;
    let raised = false;
    for (const op of [...this.ops.values()]) {
      if (op.settled) continue;
      if (op.kind === 'timer') this.cancelTimer(op.seq);
      else if (op.kind === 'activity') {
        this.push({ kind: 'cancelActivity', seq: null, key: `activityId ${op.seq}`,
          decision: { decisionType: 'RequestCancelActivityTask', activityId: String(op.seq) } });
      } else if (op.kind === 'child') continue; // its parentClosePolicy applies when this run closes
      this.settle(op, false, new CancelledError());
      raised = true;
    }
    for (const [, waiters] of this.signalWaiters) {
      for (const w of waiters.splice(0)) {
        if (w.timerSeq !== null) this.cancelTimer(w.timerSeq);
        w.settled = true;
        w.reject(new CancelledError());
        raised = true;
      }
    }
    this.cancelToRaise = !raised;
  }

  /** CancelTimer for a timer still waited on (the op goes; its promise never settles). */
  private cancelTimer(seq: number): void {
    const op = this.ops.get(seq);
    if (op === undefined || op.settled) return;
    op.settled = true;
    this.ops.delete(seq);
    this.push({ kind: 'cancelTimer', seq: null, key: `timerId ${seq}`,
      decision: { decisionType: 'CancelTimer', timerId: String(seq) } });
  }

  private push(c: Command): void {
    if (this.closed) throw new Error('the workflow has returned; no more commands may be issued');
    this.newCommands.push(c);
  }

  /** A pending call that waits for an event; throws CancelledError once after a cancel request. */
  private wait<T>(kind: OpKind, label: string, make: (seq: number) => Command | null, workflowId?: string): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the workflow has returned'));
    if (this.cancelToRaise) {
      this.cancelToRaise = false;
      return Promise.reject(new CancelledError());
    }
    const seq = this.nextSeq();
    const c = make(seq);
    if (c !== null) this.push(c);
    return new Promise<T>((resolve, reject) => {
      this.ops.set(seq, { kind, seq, settled: false, resolve: resolve as (v: unknown) => void, reject, label, workflowId });
    });
  }

  private close(value: unknown, err: unknown): void {
    if (this.closed) return;
    let decision: JsonObject;
    if (err === null) {
      try {
        decision = { decisionType: 'CompleteWorkflowExecution',
          result: JSON.parse(toJsonText(value, `the result of workflow ${this.info.workflowType}`)) as JsonValue };
      } catch (e) {
        decision = failDecision(e);
      }
    } else if (err instanceof ContinueAsNew) {
      try {
        decision = continueAsNewDecision(this.info, err);
      } catch (e) {
        decision = failDecision(e);
      }
    } else if (err instanceof CancelledError && this.cancelRequestedFlag) {
      decision = { decisionType: 'CancelWorkflowExecution', details: err.message };
    } else {
      decision = failDecision(err);
    }
    this.newCommands.push({ kind: 'close', seq: null, key: String(decision.decisionType), decision });
    this.closed = true;
  }

  private context(): WorkflowContext {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const run = this;
    const json = (v: unknown, what: string): JsonValue => JSON.parse(toJsonText(v, what)) as JsonValue;
    const ctx: WorkflowContext = {
      info: run.info,
      get cancelRequested(): boolean {
        return run.cancelRequestedFlag;
      },
      activity<O>(activityType: string, input?: unknown, options: ActivityOptions = {}): Promise<O> {
        const d: JsonObject = { decisionType: 'ScheduleActivityTask', activityType,
          input: json(input, `the input of activity ${activityType}`) };
        if (options.taskQueue !== undefined) d.taskQueue = options.taskQueue;
        secondsOpt(d, 'scheduleToStartTimeoutSeconds', options.scheduleToStartTimeout, 'scheduleToStartTimeout');
        secondsOpt(d, 'startToCloseTimeoutSeconds', options.startToCloseTimeout, 'startToCloseTimeout');
        secondsOpt(d, 'scheduleToCloseTimeoutSeconds', options.scheduleToCloseTimeout, 'scheduleToCloseTimeout');
        secondsOpt(d, 'heartbeatTimeoutSeconds', options.heartbeatTimeout, 'heartbeatTimeout');
        orderOpts(d, options);
        const policy = retryPolicyJson({ ...DEFAULT_ACTIVITY_RETRY, ...(options.retryPolicy ?? {}) }, 'retryPolicy');
        const reasons = Array.isArray(policy.nonRetriableErrorReasons) ? policy.nonRetriableErrorReasons : [];
        policy.nonRetriableErrorReasons = [...reasons, NON_RETRYABLE_REASON];
        d.retryPolicy = policy;
        return run.wait<O>('activity', activityType, (seq) => {
          d.activityId = String(seq);
          return { kind: 'activity', seq, key: `activityId ${seq} type ${activityType}`, decision: d };
        });
      },
      sleep(duration: Duration): Promise<void> {
        const s = toSeconds(duration, 'sleep duration');
        return run.wait<void>('timer', 'timer', (seq) => ({
          kind: 'timer', seq, key: `timerId ${seq}`,
          decision: { decisionType: 'StartTimer', timerId: String(seq), startToFireTimeoutSeconds: s },
        }));
      },
      waitSignal<T>(signalName: string, options: { timeout?: Duration } = {}): Promise<T | undefined> {
        if (run.closed) return Promise.reject(new Error('the workflow has returned'));
        const q = run.signalQueues.get(signalName);
        if (q !== undefined && q.length > 0) return Promise.resolve(q.shift() as T);
        if (run.cancelToRaise) {
          run.cancelToRaise = false;
          return Promise.reject(new CancelledError());
        }
        return new Promise<T | undefined>((resolve, reject) => {
          const w: SignalWaiter = { resolve: resolve as (v: JsonValue | undefined) => void, reject, timerSeq: null, settled: false };
          const list = run.signalWaiters.get(signalName) ?? [];
          list.push(w);
          run.signalWaiters.set(signalName, list);
          if (options.timeout !== undefined) {
            const s = toSeconds(options.timeout, 'waitSignal timeout');
            const timer = run.wait<void>('timer', 'timer', (seq) => {
              w.timerSeq = seq;
              return { kind: 'timer', seq, key: `timerId ${seq}`,
                decision: { decisionType: 'StartTimer', timerId: String(seq), startToFireTimeoutSeconds: s } };
            });
            timer.then(() => {
              if (w.settled) return;
              w.settled = true;
              const l = run.signalWaiters.get(signalName) ?? [];
              l.splice(l.indexOf(w), 1);
              resolve(undefined);
            }, () => undefined);
          }
        });
      },
      child<O>(workflowType: string, input?: unknown, options: ChildWorkflowOptions = {}): Promise<O> {
        const d: JsonObject = { decisionType: 'StartChildWorkflowExecution', workflowType,
          input: json(input, `the input of child workflow ${workflowType}`) };
        if (options.namespace !== undefined) d.namespace = options.namespace;
        if (options.taskQueue !== undefined) d.taskQueue = options.taskQueue;
        if (options.retryPolicy !== undefined) d.retryPolicy = retryPolicyJson(options.retryPolicy, 'retryPolicy');
        secondsOpt(d, 'workflowExecutionTimeoutSeconds', options.executionTimeout, 'executionTimeout');
        secondsOpt(d, 'workflowRunTimeoutSeconds', options.runTimeout, 'runTimeout');
        secondsOpt(d, 'taskStartToCloseTimeoutSeconds', options.decisionTimeout, 'decisionTimeout');
        if (options.parentClosePolicy !== undefined) d.parentClosePolicy = options.parentClosePolicy;
        if (options.idReusePolicy !== undefined) d.workflowIdReusePolicy = options.idReusePolicy;
        if (options.cronSchedule !== undefined) d.cronSchedule = options.cronSchedule;
        if (options.memo !== undefined) d.memo = json(options.memo, 'memo');
        orderOpts(d, options);
        let childId = '';
        return run.wait<O>('child', workflowType, (seq) => {
          childId = options.workflowId ?? `${run.info.workflowId}/${seq}`;
          d.workflowId = childId;
          return { kind: 'child', seq, key: `workflowId ${childId} type ${workflowType}`, decision: d };
        }, options.workflowId ?? `${run.info.workflowId}/${run.peekSeq()}`);
      },
      startChild<O>(workflowType: string, input?: unknown, options: ChildWorkflowOptions = {}): ChildWorkflowHandle<O> {
        const workflowId = options.workflowId ?? `${run.info.workflowId}/${run.peekSeq()}`;
        const result = ctx.child<O>(workflowType, input, { ...options, workflowId });
        result.catch(() => undefined); // a result the code never awaits is no unhandled rejection
        return {
          workflowId,
          result,
          signal: (signalName: string, signalInput?: unknown): Promise<void> => ctx.signalExternal(workflowId,
            signalName, signalInput, { namespace: options.namespace, childWorkflowOnly: true }),
        };
      },
      sideEffect<T>(fn: () => T): Promise<T> {
        if (run.closed) return Promise.reject(new Error('the workflow has returned'));
        const seq = run.nextSeq();
        let value: JsonValue;
        if (run.markers.has(seq)) {
          value = run.markers.get(seq) as JsonValue;
        } else if (run.replayOnly) {
          // The replayer does not run it: the code stops here, as at a new command.
          run.push({ kind: 'marker', seq, key: `marker SideEffect id ${seq}`,
            decision: { decisionType: 'RecordMarker', markerName: 'SideEffect', details: { id: seq } } });
          return new Promise<T>(() => undefined);
        } else {
          try {
            value = json(fn(), 'the value of sideEffect');
          } catch (e) {
            return Promise.reject(e);
          }
        }
        run.push({ kind: 'marker', seq, key: `marker SideEffect id ${seq}`,
          decision: { decisionType: 'RecordMarker', markerName: 'SideEffect', details: { id: seq, value } } });
        return Promise.resolve(value as T);
      },
      now(): Date {
        return new Date(run.currentTime.getTime());
      },
      random(): number {
        return run.rand();
      },
      uuid(): string {
        const b = Buffer.alloc(16);
        for (let i = 0; i < 16; i++) b[i] = Math.floor(run.rand() * 256);
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        const h = b.toString('hex');
        return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
      },
      continueAsNew(input?: unknown, options: ContinueAsNewOptions = {}): Promise<never> {
        return Promise.reject(new ContinueAsNew(input, options));
      },
      signalExternal(workflowId: string, signalName: string, input?: unknown, options: ExternalWorkflowOptions = {}): Promise<void> {
        const d: JsonObject = { decisionType: 'SignalExternalWorkflowExecution', workflowId, signalName,
          input: json(input, `the input of signal ${signalName}`) };
        if (options.namespace !== undefined) d.namespace = options.namespace;
        if (options.runId !== undefined) d.runId = options.runId;
        if (options.childWorkflowOnly !== undefined) d.childWorkflowOnly = options.childWorkflowOnly;
        return run.wait<void>('external', signalName, (seq) => ({
          kind: 'signalExternal', seq, key: `workflowId ${workflowId} signal ${signalName}`, decision: d,
        }), workflowId);
      },
      cancelExternal(workflowId: string, options: ExternalWorkflowOptions = {}): Promise<void> {
        const d: JsonObject = { decisionType: 'RequestCancelExternalWorkflowExecution', workflowId };
        if (options.namespace !== undefined) d.namespace = options.namespace;
        if (options.runId !== undefined) d.runId = options.runId;
        if (options.childWorkflowOnly !== undefined) d.childWorkflowOnly = options.childWorkflowOnly;
        return run.wait<void>('external', 'cancel', (seq) => ({
          kind: 'cancelExternal', seq, key: `workflowId ${workflowId}`, decision: d,
        }), workflowId);
      },
      upsertSearchAttributes(attributes: JsonObject): void {
        const seq = run.nextSeq();
        run.push({ kind: 'upsert', seq, key: 'searchAttributes', decision: {
          decisionType: 'UpsertWorkflowSearchAttributes', searchAttributes: json(attributes, 'searchAttributes') } });
      },
      getVersion(changeId: string, minSupported: number, maxSupported: number): number {
        const id = checkChangeId(changeId);
        const min = checkBound(minSupported, 'minSupported');
        const max = checkBound(maxSupported, 'maxSupported');
        if (min < DEFAULT_VERSION) {
          throw new InvalidArgumentError('minSupported must be at least -1 (DEFAULT_VERSION)', { sqlstate: '22023' },
            'minSupported');
        }
        if (min > max) {
          throw new InvalidArgumentError(`minSupported (${min}) must not be greater than maxSupported (${max})`,
            { sqlstate: '22023' }, 'minSupported');
        }
        return run.changeVersion(id, max, false, [min, max]);
      },
      patched(changeId: string): boolean {
        return run.changeVersion(checkChangeId(changeId), 1, false, [DEFAULT_VERSION, 1]) === 1;
      },
      deprecatePatch(changeId: string): void {
        run.changeVersion(checkChangeId(changeId), 1, true, null);
      },
    };
    return ctx;
  }
}

/** The RecordMarker of a version (the marker of durable.get_version()). */
function versionCommand(n: number, changeId: string, version: number, deprecated: boolean): Command {
  const details: JsonObject = { id: n, changeId, version };
  if (deprecated) details.deprecated = true;
  return { kind: 'marker', seq: n, key: markerKey(VERSION_MARKER, details),
    decision: { decisionType: 'RecordMarker', markerName: VERSION_MARKER, details } };
}

function failDecision(err: unknown): JsonObject {
  if (err instanceof Error) {
    const reason = err instanceof ApplicationFailure ? (err.type ?? err.name) : err.name;
    const details: JsonObject = { message: err.message, stack: err.stack ?? null };
    if (err instanceof ActivityFailure) {
      details.activityType = err.activityType;
      details.activityReason = err.reason;
    }
    return { decisionType: 'FailWorkflowExecution', reason: reason === '' ? 'Error' : reason, details };
  }
  return { decisionType: 'FailWorkflowExecution', reason: 'Error', details: { message: String(err) } };
}

function continueAsNewDecision(info: WorkflowInfo, c: ContinueAsNew): JsonObject {
  const o = c.options;
  const d: JsonObject = { decisionType: 'ContinueAsNewWorkflowExecution',
    input: JSON.parse(toJsonText(c.input, 'the input of continueAsNew')) as JsonValue,
    workflowType: o.workflowType ?? info.workflowType, taskQueue: o.taskQueue ?? info.taskQueue };
  secondsOpt(d, 'workflowRunTimeoutSeconds', o.runTimeout, 'runTimeout');
  secondsOpt(d, 'taskStartToCloseTimeoutSeconds', o.decisionTimeout, 'decisionTimeout');
  secondsOpt(d, 'backoffStartIntervalInSeconds', o.backoff, 'backoff');
  if (o.retryPolicy !== undefined) d.retryPolicy = retryPolicyJson(o.retryPolicy, 'retryPolicy');
  if (o.cronSchedule !== undefined) d.cronSchedule = o.cronSchedule;
  if (o.memo !== undefined) d.memo = JSON.parse(toJsonText(o.memo, 'memo')) as JsonValue;
  return d;
}

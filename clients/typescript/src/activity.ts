/**
 * Activity workers: poll an activity task queue, run the registered
 * functions, and report each attempt's outcome (docs/api.md "Worker functions",
 * "Activities: retries, timeouts, heartbeats").
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Connection, ConnectionOptions } from './connection';
import { ApplicationFailure, CancelledError, StaleTaskTokenError } from './errors';
import { Duration, JsonValue, toJsonText, toSeconds } from './json';
import { Backoff, Logger, consoleLogger, defaultIdentity, sleep } from './backoff';
import { Poller } from './poller';

/** The failure reason of an ApplicationFailure thrown with nonRetryable: true. */

/** What report() returns for a function the server does not have (42883). */
const undefinedFunction: Array<Record<string, unknown>> = [];

export const NON_RETRYABLE_REASON = 'durable-pg:NonRetryable';
/** The failure reason of attempts still running when a worker shut down. */
export const WORKER_SHUTDOWN_REASON = 'durable-pg:WorkerShutdown';
/** The failure reason of a task whose activity type this worker does not have. */
export const UNKNOWN_ACTIVITY_REASON = 'durable-pg:UnknownActivityType';

/** What an attempt knows of itself (poll_activity_task's answer). */
export interface ActivityInfo {
  taskToken: string;
  namespace: string;
  taskQueue: string;
  workflowId: string;
  runId: string;
  activityId: string;
  activityType: string;
  /** 1 for the first attempt. */
  attempt: number;
  scheduledTime: Date;
  startedTime: Date;
  /** The details of the last heartbeat of an earlier attempt (null if none sent any). */
  heartbeatDetails: JsonValue;
  /** Seconds, or null when the activity has no heartbeat timeout. */
  heartbeatTimeoutSeconds: number | null;
  /** When this attempt times out (StartToClose), or null. */
  deadline: Date | null;
}

/** The context an activity runs in; also reachable with activityContext(). */
export interface ActivityContext {
  readonly info: ActivityInfo;
  /**
   * Aborted when the activity's (or its workflow's) cancellation was
   * requested (seen at a heartbeat), when the attempt is no longer current
   * (its token went stale), or when the worker shuts down past its grace.
   */
  readonly signal: AbortSignal;
  /**
   * Keeps the attempt alive and records details that a later attempt gets
   * in info.heartbeatDetails.  It also learns of a cancellation request: then
   * `signal` is aborted (and `cancelled` is true).
   */
  heartbeat(details?: unknown): Promise<void>;
  /** Whether cancellation was requested. */
  readonly cancelled: boolean;
}

/**
 * An activity: any function of its input (JSON) and context.  The default
 * input type `never` lets functions of any input type be registered.
 */
export type ActivityFunction<I = never, O = unknown> = (input: I, ctx: ActivityContext) => Promise<O> | O;

const storage = new AsyncLocalStorage<ActivityContext>();

/** The context of the activity being run (throws outside an activity). */
export function activityContext(): ActivityContext {
  const c = storage.getStore();
  if (c === undefined) throw new Error('activityContext() called outside an activity');
  return c;
}

/** activityContext().info */
export function activityInfo(): ActivityInfo {
  return activityContext().info;
}

/** activityContext().heartbeat(details) */
export function heartbeat(details?: unknown): Promise<void> {
  return activityContext().heartbeat(details);
}

export interface ActivityWorkerOptions extends ConnectionOptions {
  taskQueue: string;
  namespace?: string;
  activities: Record<string, ActivityFunction>;
  /** Recorded in history as the worker's identity (default pid@host). */
  identity?: string;
  /** Most activities run at once (10). */
  maxConcurrentActivities?: number;
  /** How long one poll waits for a task (10 s). */
  pollWait?: Duration;
  /** How long shutdown() lets running activities finish before failing them (10 s). */
  shutdownGrace?: Duration;
  /**
   * Heartbeats are sent at most once per throttle interval: 80 % of the
   * activity's heartbeat timeout, at most this (60 s).
   */
  maxHeartbeatThrottleInterval?: Duration;
  /** The throttle interval of an activity without a heartbeat timeout (30 s). */
  defaultHeartbeatThrottleInterval?: Duration;
  logger?: Logger;
}

interface RawActivityTask {
  taskToken: string; namespace: string; workflowId: string; runId: string; activityId: string;
  activityType: string; input: JsonValue; attempt: number; scheduledTime: string; startedTime: string;
  heartbeatDetails: JsonValue; heartbeatTimeout: number | null; deadline: string | null;
}

class RunningActivity implements ActivityContext {
  readonly controller = new AbortController();
  cancelled = false;
  done: Promise<void> = Promise.resolve();

  /** When the last heartbeat was sent (ms), null before the first. */
  private lastSent: number | null = null;
  /** The details of a throttled heartbeat, sent when the interval has passed. */
  private pending: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private finished = false;

  constructor(readonly info: ActivityInfo, private readonly worker: ActivityWorker,
    private readonly throttleMs: number) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * Sends the first heartbeat at once and then at most one per throttle
   * interval: a heartbeat within the interval only keeps its details, and the
   * latest kept details are sent when the interval has passed (unless the
   * attempt has ended by then).  The call that sends waits for the answer
   * (and so learns of a cancellation); a throttled one returns at once.
   */
  async heartbeat(details?: unknown): Promise<void> {
    if (this.controller.signal.aborted || this.finished) return;
    const text = toJsonText(details, 'heartbeat details');
    const now = Date.now();
    if (this.lastSent !== null && now - this.lastSent < this.throttleMs) {
      this.pending = text;
      this.timer ??= setTimeout(() => this.flush(), this.lastSent + this.throttleMs - now);
      return;
    }
    this.pending = null;
    await this.send(text);
  }

  /** The attempt has ended: a kept heartbeat is not sent any more. */
  finish(): void {
    this.finished = true;
    this.pending = null;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private flush(): void {
    this.timer = null;
    const text = this.pending;
    this.pending = null;
    if (text === null || this.finished || this.controller.signal.aborted) return;
    this.send(text).catch((e: unknown) => this.worker.warn(
      `activity ${this.info.activityType} (${this.info.workflowId}/${this.info.activityId}): a heartbeat failed`, e));
  }

  private async send(text: string): Promise<void> {
    this.lastSent = Date.now();
    try {
      const rows = await this.worker.connection.query(
        'SELECT durable.heartbeat_activity($1, $2::jsonb) AS cancel', [this.info.taskToken, text]);
      if (rows[0].cancel === true) {
        this.cancelled = true;
        this.controller.abort(new CancelledError('the activity was asked to cancel'));
      }
    } catch (e) {
      if (e instanceof StaleTaskTokenError) {
        this.controller.abort(e);
        return;
      }
      throw e;
    }
  }
}

export class ActivityWorker {
  readonly connection: Connection;
  readonly taskQueue: string;
  readonly namespace: string;
  readonly identity: string;
  private readonly activities: Record<string, ActivityFunction>;
  private readonly maxConcurrent: number;
  private readonly pollWaitSeconds: number;
  private readonly graceMs: number;
  private readonly logger: Logger;
  private readonly poller: Poller;
  private readonly running = new Set<RunningActivity>();
  private slotFreed: (() => void) | null = null;
  private runPromise: Promise<void> | null = null;
  private shuttingDown = false;
  private readonly maxThrottleMs: number;
  private readonly defaultThrottleMs: number;
  /**
   * Set by Worker when it runs this queue's workflows too (eager dispatch,
   * docs/api.md "Eager dispatch"): a completion asks for the decision task
   * it schedules and hands it over here instead of its being polled.
   */
  private eagerDecisions: ((task: unknown) => void) | null = null;
  /** The last event of a run whose state the workflow worker keeps (partial history). */
  private cachedThrough: (runId: string) => number | null = () => null;
  /** The server takes history_after (set false when it does not). */
  private partialHistory = true;
  /** Activity tasks received without a poll (eager dispatch). */
  eagerActivities = 0;
  /** Activity tasks received from polls. */
  polledActivities = 0;

  constructor(options: ActivityWorkerOptions) {
    this.maxConcurrent = options.maxConcurrentActivities ?? 10;
    if (!Number.isInteger(this.maxConcurrent) || this.maxConcurrent < 1) {
      throw new TypeError('maxConcurrentActivities must be a positive integer');
    }
    this.connection = new Connection(options, this.maxConcurrent + 2);
    this.taskQueue = options.taskQueue;
    this.namespace = options.namespace ?? 'default';
    this.identity = options.identity ?? defaultIdentity();
    this.activities = { ...options.activities };
    this.pollWaitSeconds = toSeconds(options.pollWait ?? 10000, 'pollWait');
    this.graceMs = toSeconds(options.shutdownGrace ?? 10000, 'shutdownGrace') * 1000;
    this.maxThrottleMs = toSeconds(options.maxHeartbeatThrottleInterval ?? 60000, 'maxHeartbeatThrottleInterval') * 1000;
    this.defaultThrottleMs = toSeconds(options.defaultHeartbeatThrottleInterval ?? 30000,
      'defaultHeartbeatThrottleInterval') * 1000;
    this.logger = options.logger ?? consoleLogger;
    this.poller = new Poller(this.connection, this.logger, `activity worker ${this.taskQueue}`);
  }

  /** Polls and runs activities until shutdown(); resolves when it is done. */
  run(): Promise<void> {
    this.runPromise ??= this.loop();
    return this.runPromise;
  }

  private async loop(): Promise<void> {
    while (!this.poller.stopped) {
      while (this.running.size >= this.maxConcurrent && !this.poller.stopped) {
        await new Promise<void>((r) => { this.slotFreed = r; });
      }
      if (this.poller.stopped) break;
      const rows = await this.poller.poll(
        'SELECT t FROM durable.poll_activity_tasks($1, $2, $3, $4::interval, $5) t',
        [this.taskQueue, this.identity, this.namespace, `${this.pollWaitSeconds} seconds`,
          this.maxConcurrent - this.running.size]);
      if (rows === null) break;
      this.polledActivities += rows.length;
      for (const r of rows) this.start(r.t as RawActivityTask);
    }
  }

  /**
   * @internal Worker: completions take the next decision task for it, with
   * only the events after those it keeps of the run (cachedThrough).
   */
  setEagerDecisions(take: (task: unknown) => void, cachedThrough: (runId: string) => number | null): void {
    this.eagerDecisions = take;
    this.cachedThrough = cachedThrough;
  }

  /** @internal How many more activities it could run now (0 while shutting down). */
  get freeSlots(): number {
    return this.shuttingDown ? 0 : Math.max(0, this.maxConcurrent - this.running.size);
  }

  /**
   * @internal Runs activity tasks a decision task's completion returned
   * already started (eager dispatch), as if polled.
   */
  startEager(tasks: unknown[]): void {
    for (const t of tasks) {
      this.eagerActivities++;
      this.start(t as RawActivityTask);
    }
  }

  private start(t: RawActivityTask): void {
    const info: ActivityInfo = {
      taskToken: t.taskToken, namespace: t.namespace, taskQueue: this.taskQueue,
      workflowId: t.workflowId, runId: t.runId, activityId: t.activityId,
      activityType: t.activityType, attempt: t.attempt,
      scheduledTime: new Date(t.scheduledTime), startedTime: new Date(t.startedTime),
      heartbeatDetails: t.heartbeatDetails ?? null,
      heartbeatTimeoutSeconds: t.heartbeatTimeout ?? null,
      deadline: t.deadline === null || t.deadline === undefined ? null : new Date(t.deadline),
    };
    const throttle = info.heartbeatTimeoutSeconds !== null && info.heartbeatTimeoutSeconds > 0
      ? Math.min(info.heartbeatTimeoutSeconds * 800, this.maxThrottleMs) : this.defaultThrottleMs;
    const a = new RunningActivity(info, this, throttle);
    this.running.add(a);
    a.done = this.execute(a, t.input).finally(() => {
      a.finish();
      this.running.delete(a);
      const r = this.slotFreed;
      this.slotFreed = null;
      r?.();
    });
  }

  private async execute(a: RunningActivity, input: JsonValue): Promise<void> {
    const fn = this.activities[a.info.activityType];
    if (fn === undefined) {
      await this.report(a, 'SELECT durable.fail_activity($1, $2, $3::jsonb)', [a.info.taskToken,
        UNKNOWN_ACTIVITY_REASON, JSON.stringify({
          message: `activity type ${a.info.activityType} is not registered on this worker ` +
            `(task queue ${this.taskQueue}); it has: ${Object.keys(this.activities).join(', ')}`,
        })]);
      return;
    }
    let result: unknown;
    try {
      const call = fn as unknown as (i: JsonValue, c: ActivityContext) => unknown;
      result = await storage.run(a, () => call(input, a));
    } catch (e) {
      a.finish();
      if (a.controller.signal.aborted && this.shuttingDown && !a.cancelled) return; // failed by shutdown
      if (a.cancelled) {
        await this.report(a, 'SELECT durable.report_activity_canceled($1, $2::jsonb)',
          [a.info.taskToken, JSON.stringify(errorDetails(e))]);
        return;
      }
      const { reason, details } = failureOf(e);
      await this.report(a, 'SELECT durable.fail_activity($1, $2, $3::jsonb)', [a.info.taskToken, reason, details]);
      return;
    }
    a.finish();
    if (a.controller.signal.aborted && this.shuttingDown && !a.cancelled) return;
    let text: string;
    try {
      text = toJsonText(result, `the result of activity ${a.info.activityType}`);
    } catch (e) {
      const { reason, details } = failureOf(e);
      await this.report(a, 'SELECT durable.fail_activity($1, $2, $3::jsonb)', [a.info.taskToken, reason, details]);
      return;
    }
    const take = this.eagerDecisions;
    if (take === null) {
      await this.report(a, 'SELECT durable.complete_activity($1, $2::jsonb)', [a.info.taskToken, text]);
      return;
    }
    const after = this.partialHistory ? this.cachedThrough(a.info.runId) : null;
    let rows: Array<Record<string, unknown>> | null;
    if (after !== null) {
      rows = await this.report(a, 'SELECT durable.complete_activity($1, $2::jsonb, true, $3) AS r',
        [a.info.taskToken, text, after], true);
      if (rows === undefinedFunction) {
        this.partialHistory = false;    // durable before 0.7.0: without history_after
        rows = await this.report(a, 'SELECT durable.complete_activity($1, $2::jsonb, true) AS r',
          [a.info.taskToken, text]);
      }
    } else {
      rows = await this.report(a, 'SELECT durable.complete_activity($1, $2::jsonb, true) AS r',
        [a.info.taskToken, text]);
    }
    const r = rows?.[0]?.r as { decisionTask?: unknown } | null | undefined;
    if (r?.decisionTask !== null && r?.decisionTask !== undefined) take(r.decisionTask);
  }

  /**
   * Sends an outcome, retrying while the connection is down; a stale token is
   * dropped.  With newSignature, a server without the statement's function
   * (42883) gives undefinedFunction back, to be called the old way.
   */
  private async report(a: RunningActivity, text: string, values: unknown[],
    newSignature = false): Promise<Array<Record<string, unknown>> | null> {
    const backoff = new Backoff();
    for (let i = 0; ; i++) {
      try {
        return await this.connection.query(text, values);
      } catch (e) {
        if (e instanceof StaleTaskTokenError) return null; // timed out and retried, or the run closed
        if (newSignature && (e as { sqlstate?: string }).sqlstate === '42883') return undefinedFunction;
        if (i >= 5 || (e as { sqlstate?: string }).sqlstate !== undefined) {
          this.logger.warn(`activity ${a.info.activityType} (${a.info.workflowId}/${a.info.activityId}): ` +
            'could not report its outcome; the attempt will time out and be retried', e);
          return null;
        }
        await sleep(backoff.next());
      }
    }
  }

  /** @internal */
  warn(message: string, error: unknown): void {
    this.logger.warn(message, error);
  }

  /** Activities running now. */
  get runningCount(): number {
    return this.running.size;
  }

  /**
   * Stops polling, lets running activities finish within the grace, then
   * aborts the rest and fails their attempts (reason durable-pg:WorkerShutdown)
   * so that their retry policy runs them again elsewhere.
   */
  shutdown(): Promise<void> {
    this.stopping ??= this.stop();
    return this.stopping;
  }

  private stopping: Promise<void> | null = null;

  private async stop(): Promise<void> {
    this.shuttingDown = true;
    await this.poller.stop();
    const r = this.slotFreed;
    this.slotFreed = null;
    r?.();
    await this.runPromise;
    const all = Promise.all([...this.running].map((a) => a.done));
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace'>((r2) => { timer = setTimeout(() => r2('grace'), this.graceMs); });
    const first = await Promise.race([all.then(() => 'done' as const), graceOver]);
    clearTimeout(timer);
    if (first === 'grace') {
      const left = [...this.running];
      for (const a of left) a.controller.abort(new CancelledError('the worker shut down'));
      await Promise.all(left.map((a) => this.report(a, 'SELECT durable.fail_activity($1, $2, $3::jsonb)', [
        a.info.taskToken, WORKER_SHUTDOWN_REASON,
        JSON.stringify({ message: `worker ${this.identity} shut down while the attempt ran` })])));
    }
    await this.connection.close();
  }
}

/** The reason and details (JSON text) of a thrown value. */
export function failureOf(e: unknown): { reason: string; details: string } {
  const d = errorDetails(e);
  if (e instanceof ApplicationFailure) {
    d.type = e.type ?? e.name;
    if (e.details !== undefined) {
      try {
        toJsonText(e.details, 'details');
        d.details = e.details as JsonValue;
      } catch {
        d.details = String(e.details);
      }
    }
    if (e.nonRetryable) {
      d.nonRetryable = true;
      return { reason: NON_RETRYABLE_REASON, details: JSON.stringify(d) };
    }
    return { reason: e.type ?? e.name, details: JSON.stringify(d) };
  }
  return { reason: e instanceof Error ? e.name : 'Error', details: JSON.stringify(d) };
}

function errorDetails(e: unknown): { [k: string]: JsonValue } {
  if (e instanceof Error) {
    return { message: e.message, stack: e.stack ?? null };
  }
  return { message: String(e) };
}

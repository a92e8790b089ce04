/**
 * Workflow workers (decision tasks answered by replay, with a cache of
 * running workflows), and Worker, which runs a workflow worker and an
 * activity worker on one task queue.
 */
import { Connection, ConnectionOptions } from './connection';
import { InvalidArgumentError, LimitExceededError, NonDeterminismError, StaleTaskTokenError } from './errors';
import { Duration, JsonObject, JsonValue, toSeconds } from './json';
import { Logger, consoleLogger, defaultIdentity } from './backoff';
import { Poller } from './poller';
import { RawEvent, WorkflowFunction, WorkflowRun, nonDeterminismMessage } from './workflow';
import { ActivityFunction, ActivityWorker } from './activity';

export interface WorkflowWorkerOptions extends ConnectionOptions {
  taskQueue: string;
  namespace?: string;
  workflows: Record<string, WorkflowFunction>;
  /** Recorded in history as the worker's identity (default pid@host). */
  identity?: string;
  /**
   * Running workflows whose state is kept between decision tasks (100), so
   * that their next task does not replay from the start; 0 turns it off.
   */
  maxCachedWorkflows?: number;
  /** How long one poll waits for a task (10 s). */
  pollWait?: Duration;
  logger?: Logger;
}

interface RawDecisionTask {
  taskToken: string; namespace: string; workflowId: string; runId: string; workflowType: string;
  taskQueue: string; attempt: number; previousStartedEventId: number; startedEventId: number;
  history: RawEvent[];
}

/** What an answer asking for tasks returns (eager dispatch). */
interface EagerAnswer {
  decisionTask?: RawDecisionTask | null;
  activityTasks?: unknown[];
}

/** What a worker did, for tests and metrics. */
export interface WorkflowWorkerStats {
  /** Decision tasks answered (completed or failed). */
  decisionTasks: number;
  /** Of them, those answered from the cache without replaying from the start. */
  cacheHits: number;
  /** Decision tasks failed for non-determinism. */
  nonDeterministic: number;
  /** Decision tasks received from a poll. */
  polledDecisionTasks: number;
  /** Decision tasks received without a poll (eager dispatch). */
  eagerDecisionTasks: number;
  /**
   * Decision tasks received with a partial history (only the events after
   * those the worker kept of the run: eager dispatch with history_after).
   */
  partialHistories: number;
  /**
   * Partial histories completed with get_history: the run's state was
   * evicted from the cache between the answer that asked for the next task
   * and its arrival.
   */
  historyReads: number;
}

/**
 * The activity worker of the same task queue, when a Worker runs both
 * (eager dispatch, docs/api.md "Eager dispatch").
 */
interface EagerActivities {
  readonly freeSlots: number;
  startEager(tasks: unknown[]): void;
}

export class WorkflowWorker {
  readonly connection: Connection;
  readonly taskQueue: string;
  readonly namespace: string;
  readonly identity: string;
  readonly stats: WorkflowWorkerStats = {
    decisionTasks: 0, cacheHits: 0, nonDeterministic: 0, polledDecisionTasks: 0, eagerDecisionTasks: 0,
    partialHistories: 0, historyReads: 0,
  };
  private readonly workflows: Record<string, WorkflowFunction>;
  private readonly maxCached: number;
  private readonly pollWaitSeconds: number;
  private readonly logger: Logger;
  private readonly poller: Poller;
  /** runId -> state, in least recently used order. */
  private readonly cache = new Map<string, WorkflowRun>();
  /** Delayed failures of repeated non-deterministic tasks (see failTask). */
  private readonly delayed = new Map<NodeJS.Timeout, () => Promise<void>>();
  private runPromise: Promise<void> | null = null;
  private eager: EagerActivities | null = null;
  /** Decision tasks handed over by activity completions, being answered. */
  private readonly handingOver = new Set<Promise<void>>();

  constructor(options: WorkflowWorkerOptions) {
    this.connection = new Connection(options, 3);
    this.taskQueue = options.taskQueue;
    this.namespace = options.namespace ?? 'default';
    this.identity = options.identity ?? defaultIdentity();
    this.workflows = { ...options.workflows };
    this.maxCached = options.maxCachedWorkflows ?? 100;
    this.pollWaitSeconds = toSeconds(options.pollWait ?? 10000, 'pollWait');
    this.logger = options.logger ?? consoleLogger;
    this.poller = new Poller(this.connection, this.logger, `workflow worker ${this.taskQueue}`);
  }

  /** Polls and answers decision tasks until shutdown(); resolves when it is done. */
  run(): Promise<void> {
    this.runPromise ??= this.loop();
    return this.runPromise;
  }

  private async loop(): Promise<void> {
    for (;;) {
      const rows = await this.poller.poll(
        'SELECT durable.poll_decision_task($1, $2, $3, $4::interval) AS t',
        [this.taskQueue, this.identity, this.namespace, `${this.pollWaitSeconds} seconds`]);
      if (rows === null) return;
      const t = rows[0]?.t as RawDecisionTask | null | undefined;
      if (t === null || t === undefined) continue;
      this.stats.polledDecisionTasks++;
      await this.handleChain(t);
    }
  }

  /**
   * Answers a decision task, then each one its answer returned (eager
   * dispatch), until an answer returns none.
   */
  private async handleChain(first: RawDecisionTask): Promise<void> {
    let t: RawDecisionTask | null = first;
    while (t !== null) {
      const current: RawDecisionTask = t;
      try {
        t = await this.handle(current);
      } catch (e) {
        this.logger.warn(`workflow ${current.workflowId}: could not answer its decision task; it will time out and be retried`, e);
        this.cache.delete(current.runId);
        t = null;
      }
      if (t !== null) this.stats.eagerDecisionTasks++;
    }
  }

  /**
   * @internal Worker: the activity worker of the same queue, whose free
   * slots answers ask for eager activities, and which runs them.
   */
  setEagerActivities(eager: EagerActivities): void {
    this.eager = eager;
  }

  /** @internal Client.start's eagerWorker: its identity when it runs that queue now. */
  eagerStartIdentity(taskQueue: string, namespace: string): string | null {
    return this.runPromise !== null && !this.poller.stopped && taskQueue === this.taskQueue &&
      namespace === this.namespace ? this.identity : null;
  }

  /**
   * @internal A decision task an activity's completion or an eager start
   * returned already started (eager dispatch): answered as if polled.
   */
  takeEager(task: unknown): void {
    this.stats.eagerDecisionTasks++;
    const p: Promise<void> = this.handleChain(task as RawDecisionTask).finally(() => this.handingOver.delete(p));
    this.handingOver.add(p);
  }

  /**
   * The cached run if the task's history continues it, else null.  A task's
   * history may start after event 1 (partial history, asked for with
   * history_after); it continues the cached run when it has the event after
   * the run's last, a DecisionTaskCompleted of the run's last task.
   */
  private cachedFor(t: RawDecisionTask): WorkflowRun | null {
    const cached = this.cache.get(t.runId);
    if (cached === undefined) return null;
    this.cache.delete(t.runId);
    const offset = t.history[0]?.eventId ?? 1;
    const next = t.history[cached.lastEventId + 1 - offset];
    if (!cached.isClosed && offset <= cached.lastEventId + 1 && next?.eventId === cached.lastEventId + 1 &&
        next.eventType === 'DecisionTaskCompleted' &&
        Number(next.attributes.startedEventId) === cached.lastStartedEventId) {
      this.stats.cacheHits++;
      return cached;
    }
    return null;
  }

  /**
   * The task with its whole history: a partial one (the run's state was
   * evicted since the answer asked for it) completed with the events
   * before it, read with get_history.
   */
  private async withWholeHistory(t: RawDecisionTask): Promise<RawDecisionTask> {
    const from = t.history[0]?.eventId ?? 1;
    this.stats.historyReads++;
    const rows = await this.connection.query(
      `SELECT coalesce(jsonb_agg(jsonb_build_object('eventId', event_id, 'eventTime', event_time,
              'eventType', event_type, 'attributes', attributes) ORDER BY event_id), '[]') AS h
         FROM durable.get_history($1, $2, $3) WHERE event_id < $4`,
      [t.workflowId, t.namespace, t.runId, from]);
    return { ...t, history: [...(rows[0].h as RawEvent[]), ...t.history] };
  }

  /** The last event of a run this worker keeps the state of, or null (eager dispatch). */
  cachedThrough(runId: string): number | null {
    if (!this.partialHistory) return null;
    const cached = this.cache.get(runId);
    return cached === undefined || cached.isClosed ? null : cached.lastEventId;
  }

  /** Answers a decision task; the next one when the answer returned it (eager dispatch). */
  private async handle(t: RawDecisionTask): Promise<RawDecisionTask | null> {
    const fn = this.workflows[t.workflowType];
    if (fn === undefined) {
      this.cache.delete(t.runId);
      await this.answer(t, 'SELECT durable.fail_decision_task($1, $2, $3::jsonb, $4)', [t.taskToken,
        'UnknownWorkflowType', JSON.stringify({
          message: `workflow type ${t.workflowType} is not registered on worker ${this.identity} ` +
            `(task queue ${this.taskQueue}); it has: ${Object.keys(this.workflows).join(', ')}`,
        }), this.identity]);
      return null;
    }
    let decisions: JsonObject[];
    const partial = (t.history[0]?.eventId ?? 1) > 1;
    if (partial) this.stats.partialHistories++;
    let run: WorkflowRun | null = this.cachedFor(t);
    if (run === null && partial) {
      try {
        t = await this.withWholeHistory(t);
      } catch (e) {
        // Without get_history's privilege (durable_client) or its answer:
        // the task fails at once and its retry is queued with the whole
        // history, as Cadence's ResetStickyTaskList does.
        this.logger.warn(`workflow ${t.workflowId}: could not read the history its decision task left out`, e);
        await this.answer(t, 'SELECT durable.fail_decision_task($1, $2, $3::jsonb, $4)', [t.taskToken,
          'ResetStickyTaskList', JSON.stringify({ message: 'the worker no longer has the run\'s state' }),
          this.identity]);
        return null;
      }
    }
    const first = run?.startedEvent ?? t.history[0];
    try {
      run ??= new WorkflowRun(fn as WorkflowFunction<JsonValue>, t, t.history[0]);
      decisions = await run.advance(t.history);
    } catch (e) {
      this.cache.delete(t.runId);
      if (e instanceof NonDeterminismError) {
        this.stats.nonDeterministic++;
        await this.failTask(t, 'NonDeterministicWorkflow', {
          message: nonDeterminismMessage(t.workflowType, t.workflowId, e.message),
          workerIdentity: this.identity,
        }, first);
        return null;
      }
      await this.failTask(t, 'WorkflowWorkerError', {
        message: e instanceof Error ? e.message : String(e),
        stack: e instanceof Error ? (e.stack ?? null) : null,
      }, first);
      return null;
    }
    let ok: boolean;
    let returned: EagerAnswer | null = null;
    try {
      const eager = this.eager;
      if (eager === null) {
        await this.connection.query('SELECT durable.complete_decision_task($1, $2::jsonb, $3)',
          [t.taskToken, JSON.stringify(decisions), this.identity]);
      } else {
        // Eager dispatch: activities on this queue come back started, up to
        // the free slots of its activity worker, and so does the next
        // decision task when the answer leaves one scheduled.
        for (const d of decisions) {
          if (d.decisionType === 'ScheduleActivityTask' &&
              (d.taskQueue === undefined || d.taskQueue === this.taskQueue)) {
            d.requestEagerExecution = true;
          }
        }
        // With a cache, the next task brings only the events after this one's
        // (partial history): the run's state here has the rest.
        const after = this.maxCached > 0 && !run.isClosed ? storedThrough(t, run.lastEventId) : null;
        const rows = await this.completeEager(
          [t.taskToken, JSON.stringify(decisions), this.identity, eager.freeSlots], after);
        returned = (rows[0]?.r ?? null) as EagerAnswer | null;
      }
      this.stats.decisionTasks++;
      ok = true;
    } catch (e) {
      ok = false;
      this.cache.delete(t.runId);
      if (e instanceof InvalidArgumentError || e instanceof LimitExceededError) {
        // The engine refused a decision (a bad option, a payload too large):
        // the code would make it again, so the task fails like a
        // non-deterministic one, with the engine's message, until fixed.
        await this.failTask(t, 'BadDecision', {
          message: `workflow ${t.workflowType} (${t.workflowId}) made a decision durable refused: ${e.message}`,
          sqlstate: e.sqlstate, detail: e.detail ?? null, hint: e.hint ?? null,
        }, first);
      } else if (!(e instanceof StaleTaskTokenError)) {
        this.logger.warn(`workflow ${t.workflowId}: its decision task's answer was refused`, e);
      }
    }
    if (ok && this.maxCached > 0 && !run.isClosed) {
      this.cache.set(t.runId, run);
      while (this.cache.size > this.maxCached) {
        const oldest = this.cache.keys().next().value as string;
        this.cache.delete(oldest);
      }
    }
    const activities = returned?.activityTasks ?? [];
    if (activities.length > 0) this.eager?.startEager(activities);
    return returned?.decisionTask ?? null;
  }

  /**
   * Fails a decision task.  The engine tries it again at once; a worker that
   * fails the same run's task again (attempt 2 on) waits first, 1 s doubling
   * up to half the decision timeout, without holding its poll, so that code
   * waiting for a fix does not spin.
   */
  private async failTask(t: RawDecisionTask, cause: string, details: JsonObject, first: RawEvent | undefined): Promise<void> {
    const send = async (): Promise<void> => {
      await this.answer(t, 'SELECT durable.fail_decision_task($1, $2, $3::jsonb, $4)',
        [t.taskToken, cause, JSON.stringify(details), this.identity]);
    };
    if (t.attempt <= 1) {
      await send();
      return;
    }
    const timeout = Number(first?.attributes.taskStartToCloseTimeoutSeconds ?? 10);
    const delayMs = Math.min(1000 * 2 ** Math.min(t.attempt - 2, 20), (timeout * 1000) / 2);
    const timer = setTimeout(() => {
      this.delayed.delete(timer);
      void send();
    }, delayMs);
    this.delayed.set(timer, send);
  }

  /**
   * complete_decision_task with return_new_task, and history_after when
   * given and the server has it (durable 0.7.0; an older one answers 42883
   * and gets the call without it from then on).
   */
  private async completeEager(values: unknown[], after: number | null): Promise<Array<Record<string, unknown>>> {
    if (after !== null && this.partialHistory) {
      try {
        return await this.connection.query(
          'SELECT durable.complete_decision_task($1, $2::jsonb, $3, true, $4, $5) AS r', [...values, after]);
      } catch (e) {
        if ((e as { sqlstate?: string }).sqlstate !== '42883') throw e;
        this.partialHistory = false;
      }
    }
    return this.connection.query('SELECT durable.complete_decision_task($1, $2::jsonb, $3, true, $4) AS r', values);
  }

  /** @internal The server takes history_after (set false when it does not). */
  partialHistory = true;

  /** Sends an answer; false (logged) if it could not be recorded. */
  private async answer(t: RawDecisionTask, text: string, values: unknown[]): Promise<boolean> {
    try {
      await this.connection.query(text, values);
      this.stats.decisionTasks++;
      return true;
    } catch (e) {
      if (!(e instanceof StaleTaskTokenError)) {
        this.logger.warn(`workflow ${t.workflowId}: its decision task's answer was refused`, e);
      }
      this.cache.delete(t.runId);
      return false;
    }
  }

  /** Runs cached now. */
  get cachedWorkflows(): number {
    return this.cache.size;
  }

  /**
   * Stops polling (a poll under way is cancelled), answers what it holds,
   * drops the cache.  A second call returns the first one's promise.
   */
  shutdown(): Promise<void> {
    this.stopping ??= this.stop();
    return this.stopping;
  }

  private stopping: Promise<void> | null = null;

  private async stop(): Promise<void> {
    await this.poller.stop();
    await this.runPromise;
    while (this.handingOver.size > 0) await Promise.all([...this.handingOver]);
    const pending = [...this.delayed];
    this.delayed.clear();
    for (const [timer, send] of pending) {
      clearTimeout(timer);
      await send();
    }
    this.cache.clear();
    await this.connection.close();
  }
}

/**
 * The last event of the task's history that the run has stored, at most
 * last: history_after must not pass it.  A retried decision task (attempt 2
 * on) is transient: its DecisionTaskScheduled and DecisionTaskStarted are in
 * the task's history but written only when it completes, so the events
 * before them are the stored ones.  The next task's history then starts with
 * them, which the cached run already has (cachedFor skips them).
 */
function storedThrough(t: RawDecisionTask, last: number): number {
  if (t.attempt <= 1) return last;
  for (let i = t.history.length - 1; i >= 0; i--) {
    const e = t.history[i];
    if (e.eventType === 'DecisionTaskScheduled') return Math.min(last, e.eventId - 1);
  }
  return last;
}

export interface WorkerOptions extends ConnectionOptions {
  taskQueue: string;
  namespace?: string;
  workflows?: Record<string, WorkflowFunction>;
  activities?: Record<string, ActivityFunction>;
  identity?: string;
  maxConcurrentActivities?: number;
  maxCachedWorkflows?: number;
  pollWait?: Duration;
  shutdownGrace?: Duration;
  maxHeartbeatThrottleInterval?: Duration;
  defaultHeartbeatThrottleInterval?: Duration;
  logger?: Logger;
}

/** A workflow worker and an activity worker on one task queue, sharing one pool. */
export class Worker {
  readonly connection: Connection;
  readonly workflowWorker: WorkflowWorker | null;
  readonly activityWorker: ActivityWorker | null;
  private runPromise: Promise<void> | null = null;

  constructor(options: WorkerOptions) {
    const { pool, connection, workflows, activities, ...rest } = options;
    this.connection = new Connection({ pool, connection, preparedStatements: options.preparedStatements },
      (options.maxConcurrentActivities ?? 10) + 5);
    const shared = { ...rest, pool: this.connection.pool, preparedStatements: this.connection.prepared };
    this.workflowWorker = workflows !== undefined && Object.keys(workflows).length > 0
      ? new WorkflowWorker({ ...shared, workflows }) : null;
    this.activityWorker = activities !== undefined && Object.keys(activities).length > 0
      ? new ActivityWorker({ ...shared, activities }) : null;
    if (this.workflowWorker === null && this.activityWorker === null) {
      throw new TypeError('a Worker needs workflows or activities');
    }
    // Both on one queue: eager dispatch between them (docs/api.md "Eager
    // dispatch"), which saves a poll for each activity and each decision
    // task that an answer schedules.
    if (this.workflowWorker !== null && this.activityWorker !== null) {
      const ww = this.workflowWorker;
      ww.setEagerActivities(this.activityWorker);
      this.activityWorker.setEagerDecisions((task) => ww.takeEager(task), (runId) => ww.cachedThrough(runId));
    }
  }

  /** @internal Client.start's eagerWorker: its workflow worker's. */
  eagerStartIdentity(taskQueue: string, namespace: string): string | null {
    return this.workflowWorker?.eagerStartIdentity(taskQueue, namespace) ?? null;
  }

  /** @internal */
  takeEager(task: unknown): void {
    if (this.workflowWorker === null) throw new Error('this Worker runs no workflows');
    this.workflowWorker.takeEager(task);
  }

  /** Runs both until shutdown(). */
  run(): Promise<void> {
    this.runPromise ??= Promise.all([this.workflowWorker?.run(), this.activityWorker?.run()]).then(() => undefined);
    return this.runPromise;
  }

  /**
   * Stops both (activities get their grace), then ends the pool if the
   * worker made it.  A second call returns the first one's promise.
   */
  shutdown(): Promise<void> {
    this.stopping ??= this.stop();
    return this.stopping;
  }

  private stopping: Promise<void> | null = null;

  private async stop(): Promise<void> {
    await Promise.all([this.workflowWorker?.shutdown(), this.activityWorker?.shutdown()]);
    await this.runPromise;
    await this.connection.close();
  }
}

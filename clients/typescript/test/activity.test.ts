/**
 * The activity worker: retries by the policy, heartbeat details carried to
 * the next attempt, ApplicationFailure's nonRetryable flag, cancellation seen
 * by a heartbeat (the AbortSignal), the concurrency limit, graceful shutdown
 * and reconnecting.  Activities are scheduled with plain SQL decisions, so
 * that only the activity worker is under test.
 */
import { after, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ActivityWorker, ApplicationFailure, Client, NON_RETRYABLE_REASON, UNKNOWN_ACTIVITY_REASON,
  WORKER_SHUTDOWN_REASON, activityInfo, heartbeat, JsonValue, WorkflowHandle, ActivityContext, PoolLike,
} from '../src/index';
import { MemoryLogger, asPool, makePool, sleep, tickAhead, until, waitEvent } from './helpers';

const pool = makePool();
let client: Client;
let queues = 0;

beforeEach(() => {
  client = new Client({ pool: asPool(pool), taskQueue: `act-q${++queues}` });
});
after(async () => {
  await pool.end();
});

/** Starts a workflow whose first decision schedules these activities (ids 1, 2 ...). */
async function scheduleActivities(workflowId: string, activities: Array<{ type: string; input?: unknown; extra?: object }>): Promise<WorkflowHandle> {
  const h = await client.start('wf', null, { workflowId });
  const r = await pool.query("SELECT durable.poll_decision_task($1, 'test', 'default', '5 seconds') AS t", [client.taskQueue]);
  const decisions = activities.map((a, i) => ({
    decisionType: 'ScheduleActivityTask', activityId: String(i + 1), activityType: a.type, input: a.input ?? null,
    retryPolicy: { initialIntervalInSeconds: 1, maximumAttempts: 5, nonRetriableErrorReasons: [NON_RETRYABLE_REASON] },
    ...(a.extra ?? {}),
  }));
  await pool.query('SELECT durable.complete_decision_task($1, $2::jsonb)', [r.rows[0].t.taskToken, JSON.stringify(decisions)]);
  return h;
}

/** Ticks (5 s ahead, retry backoffs fire) until history has the event. */
async function tickUntil(h: WorkflowHandle, type: string): Promise<void> {
  await until(`${type} in ${h.workflowId}`, async () => {
    await tickAhead(pool, 5);
    return (await h.history()).some((e) => e.eventType === type);
  });
}

class GatewayError extends Error {
  constructor(m: string) {
    super(m);
    this.name = 'GatewayError';
  }
}

test('a thrown error fails the attempt with its name; the retry gets attempt and heartbeat details', async () => {
  const seen: Array<{ attempt: number; details: JsonValue }> = [];
  const worker = new ActivityWorker({
    pool: asPool(pool), taskQueue: client.taskQueue, pollWait: 1000,
    activities: {
      async charge(input: { amount: number }, ctx: ActivityContext) {
        const info = activityInfo();
        assert.equal(info, ctx.info);
        seen.push({ attempt: info.attempt, details: info.heartbeatDetails });
        await heartbeat({ progress: info.attempt });
        if (info.attempt < 3) throw new GatewayError(`declined (attempt ${info.attempt})`);
        return { charged: input.amount };
      },
    },
  });
  const running = worker.run();
  const h = await scheduleActivities('charge-1', [{ type: 'charge', input: { amount: 9.99 } }]);
  await tickUntil(h, 'ActivityTaskCompleted');
  await worker.shutdown();
  await running;
  assert.deepEqual(seen, [
    { attempt: 1, details: null }, { attempt: 2, details: { progress: 1 } }, { attempt: 3, details: { progress: 2 } }]);
  const hist = await h.history();
  const started = hist.find((e) => e.eventType === 'ActivityTaskStarted');
  assert.equal(started?.attributes.attempt, 3);
  assert.equal(started?.attributes.lastFailureReason, 'GatewayError');
  assert.equal((started?.attributes.lastFailureDetails as { message: string }).message, 'declined (attempt 2)');
  assert.deepEqual(hist.find((e) => e.eventType === 'ActivityTaskCompleted')?.attributes.result, { charged: 9.99 });
  const attempts = await pool.query(
    "SELECT attempt, outcome, failure_reason FROM durable.activity_attempts WHERE workflow_id = 'charge-1' ORDER BY attempt");
  assert.deepEqual(attempts.rows, [
    { attempt: 1, outcome: 'failed', failure_reason: 'GatewayError' },
    { attempt: 2, outcome: 'failed', failure_reason: 'GatewayError' },
    { attempt: 3, outcome: 'completed', failure_reason: null }]);
});

test('ApplicationFailure with nonRetryable fails the activity for good at once', async () => {
  let calls = 0;
  const worker = new ActivityWorker({
    pool: asPool(pool), taskQueue: client.taskQueue, pollWait: 1000,
    activities: {
      validate() {
        calls++;
        throw ApplicationFailure.nonRetryable('no such customer', 'BadInput', { customerId: 'c-1' });
      },
      retryable() {
        throw new ApplicationFailure('try again', { type: 'Busy' });
      },
    },
  });
  const running = worker.run();
  const h = await scheduleActivities('validate-1', [{ type: 'validate' }, { type: 'retryable' }]);
  const failed = await waitEvent(h, 'ActivityTaskFailed');
  assert.equal(failed.attributes.reason, NON_RETRYABLE_REASON);
  const details = failed.attributes.details as { type: string; message: string; details: JsonValue; nonRetryable: boolean };
  assert.equal(details.type, 'BadInput');
  assert.equal(details.message, 'no such customer');
  assert.deepEqual(details.details, { customerId: 'c-1' });
  assert.equal(calls, 1);
  // The other one, an ApplicationFailure without the flag, is being retried with its type as reason.
  await until('the retryable attempt failed', async () => {
    const r = await pool.query("SELECT failure_reason FROM durable.activity_attempts WHERE workflow_id = 'validate-1' AND activity_id = '2' AND outcome = 'failed'");
    return r.rows.length > 0 && r.rows[0].failure_reason === 'Busy';
  });
  const d = await h.describe();
  assert.equal(d.pendingActivities.length, 1);
  assert.equal(d.pendingActivities[0].lastFailureReason, 'Busy');
  await worker.shutdown();
  await running;
  await h.terminate('done');
});

test('a cancel request reaches the activity through heartbeat: its signal aborts and it is reported canceled', async () => {
  let aborted = false;
  const worker = new ActivityWorker({
    pool: asPool(pool), taskQueue: client.taskQueue, pollWait: 1000, defaultHeartbeatThrottleInterval: 100,
    activities: {
      async longJob(_input: null, ctx: ActivityContext) {
        while (!ctx.signal.aborted) {
          await ctx.heartbeat({ at: Date.now() });
          await sleep(20);
        }
        aborted = ctx.cancelled;
        throw ctx.signal.reason;
      },
    },
  });
  const running = worker.run();
  const h = await scheduleActivities('long-1', [{ type: 'longJob' }]);
  await until('the activity runs', () => worker.runningCount === 1);
  await h.cancel('stop it');
  // The workflow's decider asks the activity to cancel.
  const r = await pool.query("SELECT durable.poll_decision_task($1, 'test', 'default', '5 seconds') AS t", [client.taskQueue]);
  await pool.query('SELECT durable.complete_decision_task($1, $2::jsonb)', [r.rows[0].t.taskToken,
    JSON.stringify([{ decisionType: 'RequestCancelActivityTask', activityId: '1' }])]);
  await waitEvent(h, 'ActivityTaskCanceled');
  assert.equal(aborted, true);
  await worker.shutdown();
  await running;
  await h.terminate('done');
});

test('heartbeats are throttled: the first at once, then the latest details once per 80 % of the heartbeat timeout', async () => {
  const sent: Array<{ id: string; details: unknown }> = [];
  const counting: PoolLike = {
    query: (text: string, values?: unknown[]) => {
      if (text.includes('heartbeat_activity')) {
        sent.push({ id: String(values?.[0]).slice(-4), details: JSON.parse(String(values?.[1])) });
      }
      return pool.query(text, values);
    },
    connect: () => pool.connect(),
    end: async () => undefined,
  };
  const worker = new ActivityWorker({
    pool: counting, taskQueue: client.taskQueue, pollWait: 1000,
    activities: {
      async chatty(input: { n: number; linger: number }, ctx: ActivityContext) {
        for (let i = 0; i < input.n; i++) {
          await ctx.heartbeat({ i });
          await sleep(2);
        }
        await sleep(input.linger);
        return 'done';
      },
    },
  });
  const running = worker.run();
  // 100 heartbeats within the 800 ms of a 1 s heartbeat timeout, then 1.2 s more:
  // the first is sent, the last is sent when the interval has passed, none between.
  const h = await scheduleActivities('chatty-1', [{ type: 'chatty', input: { n: 100, linger: 1200 },
    extra: { heartbeatTimeoutSeconds: 1 } }]);
  await waitEvent(h, 'ActivityTaskCompleted');
  assert.deepEqual(sent.map((s) => s.details), [{ i: 0 }, { i: 99 }]);
  await h.terminate('done');    // its next decision task must not be the one polled below
  // Within the interval until the activity returns: the kept details are dropped.
  sent.length = 0;
  const h2 = await scheduleActivities('chatty-2', [{ type: 'chatty', input: { n: 10, linger: 0 },
    extra: { heartbeatTimeoutSeconds: 10 } }]);
  await waitEvent(h2, 'ActivityTaskCompleted');
  await sleep(300);
  assert.deepEqual(sent.map((s) => s.details), [{ i: 0 }]);
  await worker.shutdown();
  await running;
  await h2.terminate('done');
});

test('at most maxConcurrentActivities run at once', async () => {
  let now = 0;
  let max = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  const worker = new ActivityWorker({
    pool: asPool(pool), taskQueue: client.taskQueue, pollWait: 1000, maxConcurrentActivities: 2,
    activities: {
      async gated(i: number) {
        now++;
        max = Math.max(max, now);
        await gate;
        now--;
        return i;
      },
    },
  });
  const running = worker.run();
  const h = await scheduleActivities('gated-1', [0, 1, 2, 3, 4].map((i) => ({ type: 'gated', input: i })));
  await until('two activities run', () => now === 2);
  await sleep(300);
  assert.equal(now, 2);
  release();
  await waitEvent(h, 'ActivityTaskCompleted', 5);
  assert.equal(max, 2);
  await worker.shutdown();
  await running;
  await h.terminate('done');
});

test('shutdown lets quick activities finish, fails the slow ones past the grace so that they are retried', async () => {
  let slowAborted = false;
  const activities = {
    async quick() {
      await sleep(100);
      return 'quick done';
    },
    async slow(_input: null, ctx: ActivityContext) {
      if (ctx.info.attempt > 1) return `slow done on attempt ${ctx.info.attempt}`;
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((r) => { ctx.signal.addEventListener('abort', () => r()); timer = setTimeout(r, 10000); });
      clearTimeout(timer);
      slowAborted = ctx.signal.aborted;
      return 'too late';
    },
  };
  const w1 = new ActivityWorker({ pool: asPool(pool), taskQueue: client.taskQueue, pollWait: 1000, shutdownGrace: 300, activities });
  const running = w1.run();
  const h = await scheduleActivities('shutdown-1', [{ type: 'quick' }, { type: 'slow' }]);
  await until('both run', () => w1.runningCount === 2);
  const t0 = Date.now();
  await w1.shutdown();
  await running;
  assert.ok(Date.now() - t0 < 5000, 'shutdown waits for the grace, not for the slow activity (10 s)');
  assert.equal(slowAborted, true);
  const attempts = await pool.query(
    "SELECT activity_id, outcome, failure_reason FROM durable.activity_attempts WHERE workflow_id = 'shutdown-1' AND outcome <> 'scheduled' ORDER BY activity_id, attempt");
  assert.deepEqual(attempts.rows, [
    { activity_id: '1', outcome: 'completed', failure_reason: null },
    { activity_id: '2', outcome: 'failed', failure_reason: WORKER_SHUTDOWN_REASON }]);
  // Another worker takes the retry.
  const w2 = new ActivityWorker({ pool: asPool(pool), taskQueue: client.taskQueue, pollWait: 1000, activities });
  const running2 = w2.run();
  await tickUntil(h, 'ActivityTaskCompleted');
  await waitEvent(h, 'ActivityTaskCompleted', 2);
  const results = (await h.history()).filter((e) => e.eventType === 'ActivityTaskCompleted').map((e) => e.attributes.result);
  assert.deepEqual(results.sort(), ['quick done', 'slow done on attempt 2']);
  await w2.shutdown();
  await running2;
  await h.terminate('done');
});

test('a lost connection: the worker reconnects and goes on; unknown types fail with a clear reason', async () => {
  const logger = new MemoryLogger();
  const worker = new ActivityWorker({
    connection: { application_name: 'durable-pg-reconnect-test' }, taskQueue: client.taskQueue,
    pollWait: 1000, logger, activities: { echo: (x: JsonValue) => x },
  });
  const running = worker.run();
  await until('the poller is connected', async () => (await pool.query(
    "SELECT 1 FROM pg_stat_activity WHERE application_name = 'durable-pg-reconnect-test'")).rows.length > 0);
  await pool.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'durable-pg-reconnect-test'");
  await until('the worker noticed', () => logger.lines.some((l) => /reconnecting/.test(l)));
  const h = await scheduleActivities('echo-1', [{ type: 'echo', input: { hello: 'again' } }, { type: 'nope' }]);
  const done = await waitEvent(h, 'ActivityTaskCompleted');
  assert.deepEqual(done.attributes.result, { hello: 'again' });
  await until('the unknown type failed', async () => (await pool.query(
    "SELECT 1 FROM durable.activity_attempts WHERE workflow_id = 'echo-1' AND failure_reason = $1", [UNKNOWN_ACTIVITY_REASON])).rows.length > 0);
  await worker.shutdown();
  await running;
  await h.terminate('done');
});

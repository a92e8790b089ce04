/**
 * Flow control and batch operations of the client: a paused task queue
 * hands nothing to a worker until resumed; a concurrency limit of 1 keeps
 * one activity started at a time; a batch job terminates (signals, resets)
 * the runs its filter matches, driven here by durable.run_batches() as the
 * superuser, as the timer worker would; the database's errors come back as
 * the SDK's error classes.
 */
import { after, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  ActivityWorker, BatchWaitTimeoutError, Client, InvalidArgumentError, PermissionDeniedError, Worker,
  WorkflowContext, WorkflowFailedError, WorkflowNotFoundError, WorkflowNotRunningError, WorkflowHandle,
} from '../src/index';
import { MemoryLogger, asPool, eventTypes, makePool, sleep, until, waitEvent, withRole } from './helpers';

const pool = makePool();
let client: Client;
let queues = 0;

beforeEach(() => {
  client = new Client({ pool: asPool(pool), taskQueue: `ops-q${++queues}` });
});
after(async () => {
  await pool.end();
});

async function currentUser(): Promise<string> {
  return (await pool.query('SELECT current_user AS u')).rows[0].u as string;
}

/** Drives the batch jobs as the timer worker would (durable.run_batches(), as the superuser). */
async function runBatches(): Promise<number> {
  return Number((await pool.query('SELECT durable.run_batches() AS n')).rows[0].n);
}

test('a paused workflow is handed to no worker until resumed; its signals are recorded', async () => {
  const worker = new Worker({
    pool: asPool(pool), taskQueue: client.taskQueue, pollWait: 1000, logger: new MemoryLogger(),
    workflows: { async waiter(ctx: WorkflowContext) {
      const input = await ctx.waitSignal<string>('go');
      return `got ${input}`;
    } },
  });
  const h = await client.start<string>('waiter', null, { workflowId: `paused-wf-${randomUUID()}` });
  assert.equal(await h.resume(), false, 'not paused');
  assert.equal(await h.pause('checking the order'), true);
  assert.equal(await h.pause('again'), false, 'already paused');
  const d = await h.describe();
  assert.equal(d.paused?.reason, 'checking the order');
  assert.equal(d.paused?.by, await currentUser());
  const running = worker.run();
  try {
    await h.signal('go', 'now');
    await sleep(1500);
    assert.deepEqual(await eventTypes(h),
      ['WorkflowExecutionStarted', 'DecisionTaskScheduled', 'WorkflowExecutionSignaled'],
      'the signal is recorded, no decision task is handed out');
    assert.equal(await h.resume(), true);
    assert.equal(await h.result({ timeout: 15000 }), 'got now');
    assert.equal((await h.describe()).paused, undefined);
    await assert.rejects(h.pause(), (e: unknown) => e instanceof WorkflowNotRunningError,
      'a closed run cannot be paused');
    await assert.rejects(h.resume(), (e: unknown) => e instanceof WorkflowNotRunningError,
      'nor resumed');
  } finally {
    await worker.shutdown();
    await running;
  }
});

test('a paused queue gives the worker nothing until resumed', async () => {
  const tq = client.taskQueues.get();
  assert.equal(tq.name, client.taskQueue);
  assert.equal(tq.namespace, 'default');
  assert.equal(await tq.pause('payment provider down'), true);
  assert.equal(await tq.pause('again'), false, 'already paused');
  let d = await tq.describe();
  assert.equal(d.taskQueue, client.taskQueue);
  assert.equal(d.paused?.reason, 'payment provider down');
  assert.equal(d.paused?.pausedBy, await currentUser());
  assert.ok(d.paused?.pausedAt instanceof Date);

  const worker = new Worker({
    pool: asPool(pool), taskQueue: client.taskQueue, pollWait: 1000, logger: new MemoryLogger(),
    workflows: { async greet(ctx: WorkflowContext, input: { name: string }) {
      return `hello ${input.name}`;
    } },
  });
  const running = worker.run();
  try {
    const h = await client.start<string>('greet', { name: 'ann' }, { workflowId: 'paused-greet' });
    await sleep(1500);
    assert.deepEqual(await eventTypes(h), ['WorkflowExecutionStarted', 'DecisionTaskScheduled'],
      'no decision task was handed out');
    d = await tq.describe();
    assert.equal(d.decision.readyTasks, 1);
    assert.ok(d.decision.oldestReadyTime instanceof Date);
    assert.ok((d.decision.oldestReadyAge ?? -1) >= 0);
    assert.ok(d.decision.pollers.length >= 1, 'the worker polls');
    assert.ok(d.decision.pollers[0].lastPollTime instanceof Date);
    assert.equal((await h.describe()).taskQueuePaused, true);

    assert.equal(await tq.resume(), true);
    assert.equal(await h.result({ timeout: 15000 }), 'hello ann');
    assert.equal(await tq.resume(), false, 'not paused');
    d = await tq.describe();
    assert.equal(d.paused, null);
    assert.equal(d.decision.readyTasks, 0);
    assert.equal((await h.describe()).taskQueuePaused, undefined);
  } finally {
    await worker.shutdown();
    await running;
  }
  // list() shows the queues of the namespace, this one among them.
  const listed = (await client.taskQueues.list()).find((q) => q.taskQueue === client.taskQueue);
  assert.ok(listed);
  assert.equal(listed.paused, null);
});

/** Starts a workflow whose first decision schedules n activities of type (plain SQL). */
async function scheduleActivities(workflowId: string, type: string, n: number): Promise<WorkflowHandle> {
  const h = await client.start('wf', null, { workflowId });
  const r = await pool.query("SELECT durable.poll_decision_task($1, 'test', 'default', '5 seconds') AS t", [client.taskQueue]);
  const decisions = Array.from({ length: n }, (_, i) => ({
    decisionType: 'ScheduleActivityTask', activityId: String(i + 1), activityType: type, input: { i },
  }));
  await pool.query('SELECT durable.complete_decision_task($1, $2::jsonb)', [r.rows[0].t.taskToken, JSON.stringify(decisions)]);
  return h;
}

test('a concurrency limit of 1 keeps at most one activity started', async () => {
  const tq = client.taskQueues.get(client.taskQueue, { namespace: 'default' });
  assert.equal(await tq.setLimits({ kind: 'activity', maxConcurrent: 1 }), true);
  assert.equal(await tq.setLimits({ kind: 'activity', maxConcurrent: 1 }), false, 'the same limits again');
  let d = await tq.describe();
  assert.deepEqual(d.activity.limits, { maxConcurrent: 1, startedTasks: 0, rate: null, burst: null });
  assert.equal(d.decision.limits, null);
  assert.equal(d.paused, null);

  let running = 0;
  let maxRunning = 0;
  let started = 0;
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const worker = new ActivityWorker({
    pool: asPool(pool), taskQueue: client.taskQueue, pollWait: 1000, maxConcurrentActivities: 5,
    logger: new MemoryLogger(),
    activities: {
      async slow(input: { i: number }) {
        running++;
        started++;
        maxRunning = Math.max(maxRunning, running);
        await gate;
        running--;
        return input.i;
      },
    },
  });
  const run = worker.run();
  try {
    const h = await scheduleActivities('limited-1', 'slow', 3);
    await until('one activity started', () => started === 1);
    await sleep(1000);
    assert.equal(started, 1, 'the other two are held back');
    d = await tq.describe();
    assert.equal(d.activity.readyTasks, 2);
    assert.equal(d.activity.limits?.startedTasks, 1);
    release();
    await waitEvent(h, 'ActivityTaskCompleted', 3);
    assert.equal(maxRunning, 1);
    assert.equal(started, 3);
  } finally {
    release();
    await worker.shutdown();
    await run;
  }
  // A rate limit: its burst defaults to a second's worth.
  assert.equal(await tq.setLimits({ kind: 'decision', rate: 5 }), true);
  d = await tq.describe();
  assert.deepEqual(d.decision.limits, { maxConcurrent: null, startedTasks: 0, rate: 5, burst: 5 });
  assert.equal(await tq.clearLimits('decision'), true);
  assert.equal(await tq.clearLimits('activity'), true);
  assert.equal(await tq.clearLimits('activity'), false, 'none left');
  d = await tq.describe();
  assert.equal(d.activity.limits, null);
  assert.equal(d.decision.limits, null);
});

test('task queue errors: the database\'s SQLSTATE through the SDK\'s classes, nothing changed', async () => {
  const tq = client.taskQueues.get();
  await assert.rejects(tq.setLimits({ kind: 'activity', maxConcurrent: 0 }), (e: unknown) => {
    assert.ok(e instanceof InvalidArgumentError);
    assert.equal(e.sqlstate, '22023');
    assert.equal(e.argument, 'max_concurrent');
    assert.match(e.hint ?? '', /pause_task_queue/);
    return true;
  });
  await assert.rejects(tq.setLimits({ kind: 'activity', rate: 0 }), (e: unknown) =>
    e instanceof InvalidArgumentError && e.sqlstate === '22023' && e.argument === 'rate');
  await assert.rejects(tq.setLimits({ kind: 'activity', burst: 3 }), (e: unknown) =>
    e instanceof InvalidArgumentError && e.sqlstate === '22023' && /burst needs a rate/.test(e.message));
  await assert.rejects(tq.setLimits({ kind: 'workflow' as never, maxConcurrent: 2 }), (e: unknown) =>
    e instanceof InvalidArgumentError && e.sqlstate === '22023' && e.argument === 'kind');
  await assert.rejects(tq.setLimits({ kind: 'activity', maxConcurrent: 1.5 }), (e: unknown) =>
    e instanceof InvalidArgumentError && e.sqlstate === '22P02');
  const d = await tq.describe();
  assert.equal(d.activity.limits, null, 'no limit was set');
  assert.equal(d.paused, null);
  await assert.rejects(client.taskQueues.get('q', { namespace: 'no-such-namespace' }).pause(), WorkflowNotFoundError);

  await pool.query("SELECT durable.create_namespace('ops_billing')");
  await withRole(pool, 'ts_ops_client', ['durable_client'], async (p) => {
    const c = new Client({ pool: asPool(p) });
    // A client may pause a queue of a namespace where it has 'client' ...
    assert.equal(await c.taskQueues.get(client.taskQueue).pause('by a client'), true);
    assert.equal((await c.taskQueues.get(client.taskQueue).describe()).paused?.pausedBy, 'ts_ops_client');
    assert.equal(await c.taskQueues.get(client.taskQueue).resume(), true);
    // ... but only the namespace's owner and durable_admin set limits.
    await assert.rejects(c.taskQueues.get(client.taskQueue).setLimits({ kind: 'activity', maxConcurrent: 2 }),
      (e: unknown) => e instanceof PermissionDeniedError && e.sqlstate === '42501');
    await assert.rejects(c.taskQueues.get('q', { namespace: 'ops_billing' }).pause(), PermissionDeniedError);
  });
});

test('a batch terminate: preview counts the matching runs, the job terminates them', async () => {
  const doomed: WorkflowHandle[] = [];
  for (let i = 0; i < 3; i++) doomed.push(await client.start('doomed', { i }, { workflowId: `doomed-${i}` }));
  const kept = await client.start('kept', null, { workflowId: 'kept-1' });
  const filter = { workflowType: 'doomed', status: 'running' as const };
  assert.equal(await client.batch.preview({ operation: 'terminate', filter }), 3);
  assert.equal(await client.batch.preview({ operation: 'terminate', filter: { workflowType: 'nothing' } }), 0);

  const b = await client.batch.start({ operation: 'terminate', filter, reason: 'plan withdrawn' });
  assert.match(b.batchId, /^[0-9a-f-]{36}$/);
  let d = await b.describe();
  assert.equal(d.batchId, b.batchId);
  assert.equal(d.namespace, 'default');
  assert.equal(d.operation, 'terminate');
  assert.equal(d.state, 'running');
  assert.deepEqual(d.filter, filter);
  assert.equal(d.reason, 'plan withdrawn');
  assert.equal(d.startedBy, await currentUser());
  assert.deepEqual([d.total, d.touched, d.skipped, d.failed, d.done], [3, 0, 0, 0, 0]);
  assert.ok(d.startTime instanceof Date);
  assert.equal(d.closeTime, null);
  assert.ok((await client.batch.list({ state: 'running' })).some((x) => x.batchId === b.batchId));

  assert.equal(await runBatches(), 3);
  d = await b.wait({ timeout: 5000, pollInterval: 50 });
  assert.equal(d.state, 'completed');
  assert.deepEqual([d.total, d.touched, d.skipped, d.failed, d.done], [3, 3, 0, 0, 3]);
  assert.ok(d.closeTime instanceof Date);
  assert.deepEqual(await b.errors(), []);
  for (const h of doomed) {
    await assert.rejects(h.result(), (e: unknown) => e instanceof WorkflowFailedError && e.status === 'terminated');
    const last = (await h.history()).at(-1);
    assert.equal(last?.attributes.reason, 'plan withdrawn');
  }
  assert.equal((await kept.describe()).status, 'running');
  assert.equal(await client.batch.preview({ operation: 'terminate', filter }), 0);
  assert.ok((await client.batch.list({ state: 'completed' })).some((x) => x.batchId === b.batchId));
  await kept.terminate('test over');
});

test('signal and reset batches; errors(); cancel(); wait() gives up', async () => {
  const listeners = [await client.start('listener', null, { workflowId: 'listener-1' }),
    await client.start('listener', null, { workflowId: 'listener-2' })];
  const s = await client.batch.start({
    operation: 'signal', filter: { workflowType: 'listener' }, reason: 'new prices',
    signalName: 'price_changed', input: { cents: 1200 },
  });
  await runBatches();
  const sd = await s.wait({ timeout: 5000, pollInterval: 50 });
  assert.deepEqual([sd.touched, sd.failed], [2, 0]);
  assert.equal(sd.signalName, 'price_changed');
  assert.deepEqual(sd.input, { cents: 1200 });
  for (const h of listeners) {
    const sig = (await h.history()).find((e) => e.eventType === 'WorkflowExecutionSignaled');
    assert.equal(sig?.attributes.signalName, 'price_changed');
    assert.deepEqual(sig?.attributes.input, { cents: 1200 });
  }

  // A reset needs a completed decision task: runs that have none fail, one error each.
  const r = await client.batch.start({ operation: 'reset', filter: { workflowType: 'listener' }, reason: 'redo' });
  assert.equal((await r.describe()).resetTo, 'last_decision');
  await runBatches();
  const rd = await r.wait({ timeout: 5000, pollInterval: 50 });
  assert.deepEqual([rd.state, rd.touched, rd.failed, rd.done], ['completed', 0, 2, 2]);
  const errors = await r.errors();
  assert.deepEqual(errors.map((e) => `${e.workflowId}:${e.sqlstate}`).sort(), ['listener-1:55000', 'listener-2:55000']);
  assert.ok(errors.every((e) => e.message !== '' && e.errorTime instanceof Date && e.runId !== ''));

  // A job left running: wait() gives up, cancel() stops it.
  const t = await client.batch.start({ operation: 'terminate', filter: { workflowType: 'listener' }, reason: 'later' });
  await assert.rejects(t.wait({ timeout: 200, pollInterval: 50 }), (e: unknown) => {
    assert.ok(e instanceof BatchWaitTimeoutError);
    assert.equal(e.batchId, t.batchId);
    assert.equal(e.last.state, 'running');
    return true;
  });
  assert.equal(await t.cancel(), true);
  assert.equal(await t.cancel(), false, 'no longer running');
  const td = await client.batch.getHandle(t.batchId).wait({ timeout: 1000 });
  assert.equal(td.state, 'canceled');
  assert.equal(td.canceledBy, await currentUser());
  await runBatches();
  for (const h of listeners) assert.equal((await h.describe()).status, 'running', 'the canceled job touched nothing');
  for (const h of listeners) await h.terminate('test over');
});

test('batch errors: the database\'s SQLSTATE through the SDK\'s classes, no job recorded', async () => {
  const before = (await client.batch.list()).length;
  await assert.rejects(client.batch.start({ operation: 'explode' as never, reason: 'x' }), (e: unknown) =>
    e instanceof InvalidArgumentError && e.sqlstate === '22023' && e.argument === 'operation');
  await assert.rejects(client.batch.start({ operation: 'signal', reason: 'x' } as never), (e: unknown) =>
    e instanceof InvalidArgumentError && e.sqlstate === '22004' && e.argument === 'signal_name');
  await assert.rejects(client.batch.start({ operation: 'terminate', reason: '' }), (e: unknown) =>
    e instanceof InvalidArgumentError && e.sqlstate === '22023' && e.argument === 'reason');
  await assert.rejects(client.batch.start({ operation: 'reset', reason: 'x', resetTo: 'middle' as never }),
    (e: unknown) => e instanceof InvalidArgumentError && e.sqlstate === '22023' && e.argument === 'reset_to');
  await assert.rejects(client.batch.preview({ operation: 'terminate', filter: { status: 'sleeping' as never } }),
    (e: unknown) => e instanceof InvalidArgumentError && e.sqlstate === '22023' && e.argument === 'status');
  await assert.rejects(client.batch.start({ operation: 'restart', reason: 'x', input: 10n }), (e: unknown) =>
    e instanceof InvalidArgumentError && e.argument === 'input');
  assert.equal((await client.batch.list()).length, before, 'no job was recorded');

  const unknown = client.batch.getHandle(randomUUID());
  await assert.rejects(unknown.describe(), (e: unknown) => e instanceof WorkflowNotFoundError && e.sqlstate === 'WF002');
  await assert.rejects(unknown.cancel(), (e: unknown) => e instanceof WorkflowNotFoundError && e.sqlstate === 'WF002');
  await assert.rejects(client.batch.getHandle('nope').describe(), (e: unknown) =>
    e instanceof InvalidArgumentError && e.sqlstate === '22P02');

  await pool.query("SELECT durable.create_namespace('ops_batch')");
  await withRole(pool, 'ts_ops_batch', ['durable_client'], async (p) => {
    const c = new Client({ pool: asPool(p), namespace: 'ops_batch' });
    await assert.rejects(c.batch.start({ operation: 'terminate', reason: 'x' }), (e: unknown) =>
      e instanceof PermissionDeniedError && e.sqlstate === '42501');
  });
});

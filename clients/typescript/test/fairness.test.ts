/**
 * Priorities and concurrency keys (docs/task-queues.md "Priorities and
 * fairness"): a run started with priority 1 is claimed before one of
 * priority 5 started earlier; describe() shows a run's priority and key;
 * activities and children take theirs from their options, the queue's keys
 * show in keys(), and setKeyLimits() holds a key to its concurrency limit.
 * Tasks are polled in plain SQL here, so that the order of the claims is
 * the test's.
 */
import { after, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  Client, InvalidArgumentError, PermissionDeniedError, Worker, WorkflowContext, WorkflowFailedError,
} from '../src/index';
import { MemoryLogger, asPool, makePool, until, waitEvent, withRole } from './helpers';

const pool = makePool();
let client: Client;
let queues = 0;
const workers: Worker[] = [];

beforeEach(() => {
  client = new Client({ pool: asPool(pool), taskQueue: `fair-q${++queues}` });
});
after(async () => {
  for (const w of workers) await w.shutdown().catch(() => undefined);
  await pool.end();
});

type Task = { taskToken: string; workflowId: string };

/** One decision task of the client's queue, or null after `wait`. */
async function pollDecision(wait = '2 seconds'): Promise<Task | null> {
  const r = await pool.query("SELECT durable.poll_decision_task($1, 'test', 'default', $2::interval) AS t",
    [client.taskQueue, wait]);
  return r.rows[0].t as Task | null;
}

/** One activity task of the client's queue, or null after `wait`. */
async function pollActivity(wait = '2 seconds'): Promise<(Task & { activityId: string }) | null> {
  const r = await pool.query("SELECT durable.poll_activity_task($1, 'test', 'default', $2::interval) AS t",
    [client.taskQueue, wait]);
  return r.rows[0].t as (Task & { activityId: string }) | null;
}

test('a run of priority 1 is polled before one of priority 5 started earlier; describe() shows them', async () => {
  const low = await client.start('job', null, { workflowId: `low-${randomUUID()}`, priority: 5 });
  const plain = await client.start('job', null, { workflowId: `plain-${randomUUID()}` });
  const high = await client.start('job', null, {
    workflowId: `high-${randomUUID()}`, priority: 1, concurrencyKey: 'tenant-a',
  });
  const order: string[] = [];
  for (let i = 0; i < 3; i++) {
    const t = await pollDecision();
    assert.ok(t, `decision task ${i + 1}`);
    order.push(t.workflowId);
  }
  assert.deepEqual(order, [high.workflowId, plain.workflowId, low.workflowId], 'priority 1, then 3, then 5');

  const dh = await high.describe();
  assert.equal(dh.priority, 1);
  assert.equal(dh.concurrencyKey, 'tenant-a');
  const dl = await low.describe();
  assert.equal(dl.priority, 5);
  assert.equal(dl.concurrencyKey, undefined, 'no key');
  const dp = await plain.describe();
  assert.equal(dp.priority, undefined, 'the default priority is left out');
  assert.equal(dp.concurrencyKey, undefined);
  for (const h of [low, plain, high]) await h.terminate('test over');
});

test('signalWithStart and an eager start take a priority and a concurrency key too', async () => {
  const s = await client.signalWithStart('job', {
    workflowId: `sws-${randomUUID()}`, signal: 'go', priority: 2, concurrencyKey: 'tenant-b',
  });
  const ds = await s.describe();
  assert.deepEqual([ds.priority, ds.concurrencyKey], [2, 'tenant-b']);
  await s.terminate('test over');

  const w = new Worker({
    pool: asPool(pool), taskQueue: client.taskQueue, pollWait: 1000, logger: new MemoryLogger(),
    workflows: { async quick() { return 'done'; } },
  });
  workers.push(w);
  const running = w.run();
  try {
    const h = await client.start<string>('quick', null, {
      workflowId: `eager-${randomUUID()}`, eagerWorker: w, priority: 4, concurrencyKey: 'tenant-c',
    });
    assert.equal(await h.result({ timeout: 15000 }), 'done');
    assert.equal(w.workflowWorker!.stats.polledDecisionTasks, 0, 'the first decision task came eagerly');
    const d = await h.describe();
    assert.deepEqual([d.priority, d.concurrencyKey], [4, 'tenant-c']);
    const started = (await h.history())[0];
    assert.equal(started.attributes.priority, 4);
    assert.equal(started.attributes.concurrencyKey, 'tenant-c');
  } finally {
    await w.shutdown();
    await running;
  }
});

test('activities and children take their priority and key from their options; keys() shows the keys', async () => {
  const w = new Worker({
    pool: asPool(pool), taskQueue: client.taskQueue, pollWait: 1000, logger: new MemoryLogger(),
    workflows: {
      async parent(ctx: WorkflowContext) {
        ctx.startChild('waiter', null, {
          workflowId: `${ctx.info.workflowId}-child`, priority: 4, concurrencyKey: 'child-k',
        });
        return ctx.activity('charge', null, { priority: 2, concurrencyKey: 'customer-7', startToCloseTimeout: '1m' });
      },
      async waiter(ctx: WorkflowContext) {
        return ctx.waitSignal('never');
      },
    },
  });
  workers.push(w);
  const running = w.run();
  const h = await client.start('parent', null, { workflowId: `parent-${randomUUID()}`, concurrencyKey: 'parent-k' });
  try {
    // No activity worker: the activity stays ready under its key.
    const tq = client.taskQueues.get();
    const keys = await until('the activity under its key', async () => {
      const ks = await tq.keys({ kind: 'activity' });
      return ks.some((k) => k.concurrencyKey === 'customer-7') ? ks : null;
    });
    assert.deepEqual(keys, [{
      kind: 'activity', concurrencyKey: 'customer-7', readyTasks: 1, topPriority: 2, startedTasks: 0,
      maxConcurrent: null, rate: null, burst: null, weight: 1,
    }]);
    const scheduled = await waitEvent(h, 'ActivityTaskScheduled');
    assert.equal(scheduled.attributes.priority, 2);
    assert.equal(scheduled.attributes.concurrencyKey, 'customer-7');
    const child = client.getHandle(`${h.workflowId}-child`);
    await until('the child started', async () => (await client.count({ workflowIdPrefix: child.workflowId })) > 0);
    const dc = await child.describe();
    assert.deepEqual([dc.priority, dc.concurrencyKey], [4, 'child-k']);
    const dp = await h.describe();
    assert.deepEqual([dp.priority, dp.concurrencyKey], [3, 'parent-k'], 'with a key, the priority shows');
    // Without kind, the keys of both kinds.
    assert.ok((await tq.keys()).some((k) => k.kind === 'activity' && k.concurrencyKey === 'customer-7'));
  } finally {
    await h.terminate('test over');
    await w.shutdown();
    await running;
  }
});

/** Starts a workflow whose first decision schedules activities of the given keys (plain SQL). */
async function scheduleKeyed(keys: string[]): Promise<void> {
  await client.start('wf', null, { workflowId: `keyed-${randomUUID()}` });
  const t = await pollDecision();
  assert.ok(t);
  const decisions = keys.map((k, i) => ({
    decisionType: 'ScheduleActivityTask', activityId: String(i + 1), activityType: 'work', input: { i },
    concurrencyKey: k,
  }));
  await pool.query('SELECT durable.complete_decision_task($1, $2::jsonb)', [t.taskToken, JSON.stringify(decisions)]);
}

test('setKeyLimits: a key held to one started task; defaults for every key; clearKeyLimits', async () => {
  const tq = client.taskQueues.get();
  assert.equal(await tq.setKeyLimits({ kind: 'activity', concurrencyKey: 'tenant-a', maxConcurrent: 1 }), true);
  assert.equal(await tq.setKeyLimits({ kind: 'activity', concurrencyKey: 'tenant-a', maxConcurrent: 1 }), false,
    'the same limits again');
  assert.deepEqual(await tq.keys(), [{
    kind: 'activity', concurrencyKey: 'tenant-a', readyTasks: 0, topPriority: null, startedTasks: 0,
    maxConcurrent: 1, rate: null, burst: null, weight: 1,
  }], 'a key with limits of its own shows without tasks');

  await scheduleKeyed(['tenant-a', 'tenant-a']);
  const first = await pollActivity();
  assert.ok(first, 'the first task of tenant-a');
  assert.equal(await pollActivity('300 milliseconds'), null, 'the second is held while the first is started');
  let [a] = await tq.keys({ kind: 'activity' });
  assert.deepEqual([a.concurrencyKey, a.readyTasks, a.startedTasks, a.maxConcurrent], ['tenant-a', 1, 1, 1]);
  await pool.query('SELECT durable.complete_activity($1, $2::jsonb)', [first.taskToken, '1']);
  const second = await pollActivity();
  assert.ok(second, 'the second once the first finished');
  assert.notEqual(second.activityId, first.activityId);
  await pool.query('SELECT durable.complete_activity($1, $2::jsonb)', [second.taskToken, '2']);

  // The defaults of every key (concurrencyKey left out); a key's own values replace them one by one.
  assert.equal(await tq.setKeyLimits({ kind: 'activity', weight: 3, rate: 50 }), true);
  [a] = await tq.keys({ kind: 'activity' });
  assert.deepEqual([a.maxConcurrent, a.rate, a.burst, a.weight], [1, 50, 50, 3]);
  assert.equal(await tq.setKeyLimits({ kind: 'activity', concurrencyKey: 'tenant-a', weight: 7, rate: 2, burst: 4 }), true);
  [a] = await tq.keys({ kind: 'activity' });
  assert.deepEqual([a.maxConcurrent, a.rate, a.burst, a.weight], [null, 2, 4, 7]);

  assert.equal(await tq.clearKeyLimits('activity', 'tenant-a'), true);
  assert.equal(await tq.clearKeyLimits('activity', 'tenant-a'), false, 'none left');
  assert.deepEqual(await tq.keys(), [], 'no key has tasks or limits of its own');
  assert.equal(await tq.clearKeyLimits('activity'), true, 'the defaults');
  assert.equal(await tq.clearKeyLimits('activity'), false);
});

test('priority and key errors: the database\'s SQLSTATE through the SDK\'s classes, nothing changed', async () => {
  const tq = client.taskQueues.get();
  await assert.rejects(tq.setKeyLimits({ kind: 'activity', concurrencyKey: 'k', weight: 0 }), (e: unknown) =>
    e instanceof InvalidArgumentError && e.sqlstate === '22023' && e.argument === 'weight');
  await assert.rejects(tq.setKeyLimits({ kind: 'activity', concurrencyKey: '', maxConcurrent: 1 }), (e: unknown) =>
    e instanceof InvalidArgumentError && e.sqlstate === '22023' && e.argument === 'concurrency_key');
  await assert.rejects(tq.setKeyLimits({ kind: 'activity', concurrencyKey: 'k', maxConcurrent: 0 }), (e: unknown) =>
    e instanceof InvalidArgumentError && e.sqlstate === '22023' && e.argument === 'max_concurrent');
  await assert.rejects(tq.setKeyLimits({ kind: 'activity', concurrencyKey: 'k', burst: 2, weight: 2 }),
    (e: unknown) => e instanceof InvalidArgumentError && e.sqlstate === '22023' && /burst needs a rate/.test(e.message));
  assert.deepEqual(await tq.keys(), [], 'no limit was set');

  await assert.rejects(client.start('job', null, { workflowId: 'bad-priority', priority: 9 }), (e: unknown) =>
    e instanceof InvalidArgumentError && e.sqlstate === '22023' && e.argument === 'priority');
  await assert.rejects(client.start('job', null, { workflowId: 'bad-key', concurrencyKey: 'x'.repeat(256) }),
    (e: unknown) => e instanceof InvalidArgumentError && e.sqlstate === '22023' && e.argument === 'concurrency_key');
  assert.equal(await client.count({ workflowIdPrefix: 'bad-' }), 0, 'no run was started');

  // Only the namespace's owner and durable_admin set a key's limits.
  await withRole(pool, 'ts_fair_client', ['durable_client'], async (p) => {
    const c = new Client({ pool: asPool(p) });
    await assert.rejects(c.taskQueues.get(client.taskQueue).setKeyLimits({ kind: 'activity', concurrencyKey: 'k', weight: 2 }),
      (e: unknown) => e instanceof PermissionDeniedError && e.sqlstate === '42501');
    assert.deepEqual(await c.taskQueues.get(client.taskQueue).keys(), [], 'a client may read the keys');
  });
});

test('a priority or key out of range in workflow code throws there, as a bad duration does', async () => {
  const w = new Worker({
    pool: asPool(pool), taskQueue: client.taskQueue, pollWait: 1000, logger: new MemoryLogger(),
    workflows: {
      async badActivity(ctx: WorkflowContext) {
        return ctx.activity('charge', null, { priority: 7 });
      },
      async badChild(ctx: WorkflowContext) {
        return ctx.child('other', null, { concurrencyKey: '' });
      },
    },
  });
  workers.push(w);
  const running = w.run();
  try {
    const a = await client.start('badActivity', null, { workflowId: `bad-activity-${randomUUID()}` });
    await assert.rejects(a.result({ timeout: 15000 }), (e: unknown) => e instanceof WorkflowFailedError &&
      e.reason === 'TypeError' && /priority must be an integer from 1 to 5/.test(JSON.stringify(e.details)));
    const c = await client.start('badChild', null, { workflowId: `bad-child-${randomUUID()}` });
    await assert.rejects(c.result({ timeout: 15000 }), (e: unknown) => e instanceof WorkflowFailedError &&
      e.reason === 'TypeError' && /concurrencyKey must be a string of 1 to 255 bytes/.test(JSON.stringify(e.details)));
  } finally {
    await w.shutdown();
    await running;
  }
});

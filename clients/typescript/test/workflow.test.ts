/**
 * Workflow workers: code replayed from history.  Two activities, a timer and
 * a signal, with the worker lost mid-way and another finishing it (completed
 * activities kept); the cache; non-determinism; cancellation with cleanup;
 * children; continue-as-new; a result JSON cannot hold; side effects.
 */
import { after, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ActivityFailure, ApplicationFailure, CancelledError, ChildWorkflowFailure, Client, JsonValue, Worker,
  WorkflowContext, WorkflowFailedError, WorkflowFunction, ActivityFunction,
} from '../src/index';
import { MemoryLogger, asPool, eventTypes, makePool, sleep, tickAhead, waitEvent } from './helpers';

const pool = makePool();
let client: Client;
let queues = 0;
const workers: Worker[] = [];

beforeEach(() => {
  client = new Client({ pool: asPool(pool), taskQueue: `wf-q${++queues}` });
});
after(async () => {
  for (const w of workers) await w.shutdown().catch(() => undefined);
  await pool.end();
});

function startWorker(workflows: Record<string, WorkflowFunction>, activities: Record<string, ActivityFunction> = {},
  extra: { maxCachedWorkflows?: number; identity?: string } = {}): Worker {
  const w = new Worker({
    pool: asPool(pool), taskQueue: client.taskQueue, pollWait: 1000, workflows, activities,
    logger: new MemoryLogger(), ...extra,
  });
  workers.push(w);
  void w.run();
  return w;
}

/** Counts the executions of each activity. */
function counting(calls: Record<string, number>): Record<string, ActivityFunction> {
  return {
    async reserve(input: { item: string }) {
      calls.reserve = (calls.reserve ?? 0) + 1;
      return { reserved: input.item };
    },
    async ship(input: { to: string }) {
      calls.ship = (calls.ship ?? 0) + 1;
      return `shipped to ${input.to}`;
    },
  };
}

async function order(ctx: WorkflowContext, input: { item: string }): Promise<JsonValue> {
  const r = await ctx.activity<{ reserved: string }>('reserve', { item: input.item });
  await ctx.sleep('1 minute');
  const paid = await ctx.waitSignal<{ address: string }>('paid');
  const s = await ctx.activity<string>('ship', { to: paid?.address ?? 'nowhere' });
  return { reserved: r.reserved, shipped: s };
}

test('two activities, a timer and a signal; a worker lost mid-way, another finishes with the activities kept', async () => {
  const calls: Record<string, number> = {};
  const w1 = startWorker({ order }, counting(calls), { identity: 'worker-1' });
  const h = await client.start('order', { item: 'book' }, { workflowId: 'order-1' });
  await waitEvent(h, 'TimerStarted');
  await w1.shutdown();     // the first worker goes away with its cached state
  await tickAhead(pool, 61);
  // A worker that dies holding the decision task: it is claimed and never answered.
  const claim = await pool.query("SELECT durable.poll_decision_task($1, 'doomed', 'default', '5 seconds') AS t", [client.taskQueue]);
  assert.ok(claim.rows[0].t, 'the decision task after the timer');
  await tickAhead(pool, 61 + 11);  // past its 10 s decision timeout
  await waitEvent(h, 'DecisionTaskTimedOut');
  await h.signal('paid', { address: '1 Main St' });
  const w2 = startWorker({ order }, counting(calls), { identity: 'worker-2' });
  assert.deepEqual(await h.result({ timeout: 15000 }), { reserved: 'book', shipped: 'shipped to 1 Main St' });
  assert.deepEqual(calls, { reserve: 1, ship: 1 }, 'the completed activity is not run again');
  const types = await eventTypes(h);
  assert.equal(types.filter((t) => t === 'ActivityTaskScheduled').length, 2);
  assert.equal(types.filter((t) => t === 'TimerStarted').length, 1);
  assert.equal(w2.workflowWorker?.stats.nonDeterministic, 0);
});

test('the cache: a worker that keeps the run answers its next tasks without replaying from the start', async () => {
  const calls: Record<string, number> = {};
  let bodyStarts = 0;
  const counted: WorkflowFunction = async (ctx: WorkflowContext, input: { item: string }) => {
    bodyStarts++;
    return order(ctx, input);
  };
  const w = startWorker({ order: counted }, counting(calls));
  const h = await client.start('order', { item: 'pen' }, { workflowId: 'order-cached' });
  await waitEvent(h, 'TimerStarted');
  await tickAhead(pool, 61);
  await waitEvent(h, 'DecisionTaskCompleted', 3);
  await h.signal('paid', { address: 'here' });
  assert.deepEqual(await h.result({ timeout: 15000 }), { reserved: 'pen', shipped: 'shipped to here' });
  const stats = w.workflowWorker?.stats;
  assert.equal(bodyStarts, 1, 'the code ran from the start once');
  assert.ok((stats?.cacheHits ?? 0) >= 3, `cache hits: ${stats?.cacheHits}`);
  // The same without the cache: every task replays from the start, same history.
  const w2 = startWorker({ order: counted }, counting(calls), { maxCachedWorkflows: 0 });
  await w.shutdown();
  bodyStarts = 0;
  const h2 = await client.start('order', { item: 'pen' }, { workflowId: 'order-uncached' });
  await waitEvent(h2, 'TimerStarted');
  await tickAhead(pool, 61);
  await waitEvent(h2, 'DecisionTaskCompleted', 3);
  await h2.signal('paid', { address: 'here' });
  assert.deepEqual(await h2.result({ timeout: 15000 }), { reserved: 'pen', shipped: 'shipped to here' });
  assert.equal(w2.workflowWorker?.stats.cacheHits, 0);
  assert.ok(bodyStarts >= 4, `the code ran from the start at each task (${bodyStarts})`);
  const strip = (types: string[]): string => types.join(',');
  assert.equal(strip(await eventTypes(h2)), strip(await eventTypes(h)));
});

test('non-determinism: the decision task fails naming both sides; fixed code finishes the workflow', async () => {
  const calls: Record<string, number> = {};
  const w1 = startWorker({ order }, counting(calls));
  const h = await client.start('order', { item: 'lamp' }, { workflowId: 'order-nd' });
  await waitEvent(h, 'TimerStarted');
  await w1.shutdown();
  // Changed code: a timer where history has the activity.
  const changed: WorkflowFunction = async (ctx: WorkflowContext) => {
    await ctx.sleep('5 seconds');
    return ctx.activity('reserve', { item: 'lamp' });
  };
  const w2 = startWorker({ order: changed }, counting(calls));
  await tickAhead(pool, 61);
  const failed = await waitEvent(h, 'DecisionTaskFailed');
  assert.equal(failed.attributes.cause, 'NonDeterministicWorkflow');
  const message = String((failed.attributes.details as { message: string }).message);
  assert.match(message, /ActivityTaskScheduled \(activityId 1 type reserve\)/);
  assert.match(message, /StartTimer timerId 1/);
  assert.equal((await h.describe()).status, 'running');
  assert.ok((w2.workflowWorker?.stats.nonDeterministic ?? 0) >= 1);
  // The engine hands the task back at once; the worker waits before failing it again.
  await sleep(500);
  assert.ok((w2.workflowWorker?.stats.nonDeterministic ?? 0) <= 2,
    `failed ${w2.workflowWorker?.stats.nonDeterministic} times in half a second`);
  // Over 3 s the failures come 1 s, then 2 s apart: a handful, not a tight loop.
  await sleep(2700);
  const tries = w2.workflowWorker?.stats.nonDeterministic ?? 0;
  assert.ok(tries >= 2 && tries <= 4, `the task was tried ${tries} times in 3.2 seconds`);
  const lenBefore = (await h.history()).length;
  await w2.shutdown();
  assert.equal((await h.history()).length, lenBefore, 'history is not touched by the retries');
  // The fixed (original) code takes it from there.
  startWorker({ order }, counting(calls));
  await h.signal('paid', { address: 'fixed' });
  assert.deepEqual(await h.result({ timeout: 15000 }), { reserved: 'lamp', shipped: 'shipped to fixed' });
  assert.deepEqual(calls, { reserve: 1, ship: 1 });
});

test('a decision durable refuses fails the decision task with its message, history untouched', async () => {
  const bad: WorkflowFunction = async (ctx: WorkflowContext) =>
    ctx.activity('reserve', null, { retryPolicy: { backoffCoefficient: 5000 } });
  const w = startWorker({ bad });
  const h = await client.start('bad', null, { workflowId: 'bad-1' });
  const failed = await waitEvent(h, 'DecisionTaskFailed');
  assert.equal(failed.attributes.cause, 'BadDecision');
  const details = failed.attributes.details as { message: string; sqlstate: string };
  assert.equal(details.sqlstate, '22023');
  assert.match(details.message, /decisions\[0\]\.retryPolicy\.backoffCoefficient must be at most 1000/);
  assert.equal((await h.describe()).status, 'running');
  await w.shutdown();
  await h.terminate('done');
});

test('cancellation: CancelledError at the await, cleanup activities, then canceled or completed', async () => {
  const cleaned: string[] = [];
  const acts: Record<string, ActivityFunction> = {
    async cleanup(what: string) {
      cleaned.push(what);
      return `cleaned ${what}`;
    },
  };
  const rethrows: WorkflowFunction = async (ctx: WorkflowContext) => {
    try {
      await ctx.sleep('1 hour');
      return 'slept';
    } catch (e) {
      if (!(e instanceof CancelledError)) throw e;
      await ctx.activity('cleanup', 'reservation');
      throw e;
    }
  };
  const swallows: WorkflowFunction = async (ctx: WorkflowContext) => {
    const got = await Promise.all([ctx.waitSignal('never'), ctx.sleep('1 day')]).catch((e: unknown) => e);
    assert.ok(got instanceof CancelledError);
    return ctx.activity('cleanup', 'cart');
  };
  startWorker({ rethrows, swallows }, acts);
  const h1 = await client.start('rethrows', null, { workflowId: 'cancel-1' });
  const h2 = await client.start('swallows', null, { workflowId: 'cancel-2' });
  await waitEvent(h1, 'TimerStarted');
  await waitEvent(h2, 'TimerStarted');
  await h1.cancel('customer left');
  await h2.cancel('customer left');
  await assert.rejects(h1.result({ timeout: 15000 }), (e: unknown) => e instanceof WorkflowFailedError && e.status === 'canceled');
  assert.equal(await h2.result({ timeout: 15000 }), 'cleaned cart');
  assert.deepEqual(cleaned.sort(), ['cart', 'reservation']);
  const types = await eventTypes(h1);
  assert.ok(types.includes('TimerCanceled'), 'the timer was canceled');
  assert.ok(types.indexOf('ActivityTaskCompleted') < types.indexOf('WorkflowExecutionCanceled'));
});

test('children: a result, a failure, and activity failures seen as ActivityFailure', async () => {
  const child: WorkflowFunction = async (ctx: WorkflowContext, n: number) => {
    if (n < 0) throw new ApplicationFailure('negative', { type: 'BadNumber' });
    return n * 2;
  };
  const parent: WorkflowFunction = async (ctx: WorkflowContext) => {
    const a = await ctx.child<number>('child', 21);
    let failure = '';
    try {
      await ctx.child('child', -1, { workflowId: 'the-bad-child' });
    } catch (e) {
      assert.ok(e instanceof ChildWorkflowFailure);
      failure = `${e.status}:${e.reason}:${e.workflowId}`;
    }
    let act = '';
    try {
      await ctx.activity('refuse', null, { retryPolicy: { maximumAttempts: 1 } });
    } catch (e) {
      assert.ok(e instanceof ActivityFailure);
      act = `${e.activityType}:${e.reason}`;
    }
    return { a, failure, act };
  };
  startWorker({ parent, child }, { refuse: () => { throw new RangeError('no'); } });
  const h = await client.start('parent', null, { workflowId: 'parent-1' });
  assert.deepEqual(await h.result({ timeout: 15000 }), { a: 42, failure: 'failed:BadNumber:the-bad-child', act: 'refuse:RangeError' });
  const c1 = client.getHandle('parent-1/1');
  assert.equal(await c1.result({ timeout: 15000 }), 42);
  assert.equal((await c1.describe()).parent !== null, true);
});

test('startChild: a handle with the child id, signals to the child, and its result', async () => {
  const waiter: WorkflowFunction = async (ctx: WorkflowContext, greeting: string) => {
    const s = await ctx.waitSignal<{ name: string }>('name');
    return `${greeting} ${s?.name}`;
  };
  const starter: WorkflowFunction = async (ctx: WorkflowContext) => {
    const h = ctx.startChild<string>('waiter', 'hello');
    const h2 = ctx.startChild<string>('waiter', 'bye', { workflowId: 'named-child' });
    await h.signal('name', { name: 'Ann' });
    await h2.signal('name', { name: 'Bob' });
    return { ids: [h.workflowId, h2.workflowId], results: await Promise.all([h.result, h2.result]) };
  };
  startWorker({ starter, waiter }, {}, { maxCachedWorkflows: 0 });
  const h = await client.start('starter', null, { workflowId: 'starter-1' });
  assert.deepEqual(await h.result({ timeout: 15000 }),
    { ids: ['starter-1/1', 'named-child'], results: ['hello Ann', 'bye Bob'] });
  const signaled = (await h.history()).filter((e) => e.eventType === 'SignalExternalWorkflowExecutionInitiated');
  assert.deepEqual(signaled.map((e) => [e.attributes.workflowId, e.attributes.childWorkflowOnly]),
    [['starter-1/1', true], ['named-child', true]]);
});

test('several activities at once with Promise.all: scheduled by one decision task', async () => {
  const calls: Record<string, number> = {};
  const both: WorkflowFunction = async (ctx: WorkflowContext) => {
    const [r, s] = await Promise.all([
      ctx.activity<{ reserved: string }>('reserve', { item: 'a' }),
      ctx.activity<string>('ship', { to: 'b' }),
    ]);
    return [r.reserved, s];
  };
  startWorker({ both }, counting(calls), { maxCachedWorkflows: 0 });
  const h = await client.start('both', null, { workflowId: 'both-1' });
  assert.deepEqual(await h.result({ timeout: 15000 }), ['a', 'shipped to b']);
  const scheduled = (await h.history()).filter((e) => e.eventType === 'ActivityTaskScheduled');
  assert.deepEqual(scheduled.map((e) => e.attributes.activityId), ['1', '2']);
  assert.equal(scheduled[0].attributes.decisionTaskCompletedEventId, scheduled[1].attributes.decisionTaskCompletedEventId);
  assert.deepEqual(calls, { reserve: 1, ship: 1 });
});

test('continue-as-new: the chain goes on with the new input; result() follows it', async () => {
  const counter: WorkflowFunction = async (ctx: WorkflowContext, n: number) => {
    if (n < 3) return ctx.continueAsNew(n + 1);
    return { final: n, attempt: ctx.info.attempt, continued: ctx.info.continuedFromRunId !== null };
  };
  startWorker({ counter });
  const h = await client.start('counter', 0, { workflowId: 'counter-1' });
  assert.deepEqual(await h.result({ timeout: 15000 }), { final: 3, attempt: 1, continued: true });
  const runs = await pool.query("SELECT status FROM durable.workflows WHERE workflow_id = 'counter-1' ORDER BY start_time, run_id");
  assert.deepEqual(runs.rows.map((r) => r.status).sort(),
    ['completed', 'continued_as_new', 'continued_as_new', 'continued_as_new']);
});

test('a result JSON cannot hold fails the workflow clearly', async () => {
  const big: WorkflowFunction = async () => ({ total: 10n });
  const cyclic: WorkflowFunction = async () => {
    const o: { self?: unknown } = {};
    o.self = o;
    return o;
  };
  startWorker({ big, cyclic });
  const h = await client.start('big', null, { workflowId: 'big-1' });
  await assert.rejects(h.result({ timeout: 15000 }), (e: unknown) => {
    assert.ok(e instanceof WorkflowFailedError);
    assert.equal(e.reason, 'NotJsonError');
    assert.match(String((e.details as { message: string }).message),
      /the result of workflow big is not JSON: .*total.*BigInt 10n has no JSON form/);
    return true;
  });
  const h2 = await client.start('cyclic', null, { workflowId: 'cyclic-1' });
  await assert.rejects(h2.result({ timeout: 15000 }), (e: unknown) => e instanceof WorkflowFailedError && e.reason === 'NotJsonError' &&
    /cycle/.test(String((e.details as { message: string }).message)));
});

test('sideEffect, random, uuid and now replay the same; search attributes and signals to other workflows', async () => {
  const seen: string[] = [];
  const target: WorkflowFunction = async (ctx: WorkflowContext) => ctx.waitSignal('ping');
  const det: WorkflowFunction = async (ctx: WorkflowContext) => {
    const s = await ctx.sideEffect(() => Math.random());
    const r = ctx.random();
    const u = ctx.uuid();
    const t = ctx.now().toISOString();
    ctx.upsertSearchAttributes({ CustomerId: 'c-42' });
    await ctx.sleep(1000);
    seen.push(JSON.stringify([s, r, u, t]));
    await ctx.signalExternal('target-1', 'ping', { from: ctx.info.workflowId });
    let missing = '';
    try {
      await ctx.signalExternal('no-such-target', 'ping');
    } catch (e) {
      missing = (e as Error).name;
    }
    return { s, r, u, t, missing };
  };
  startWorker({ det, target }, {}, { maxCachedWorkflows: 0 });
  const ht = await client.start('target', null, { workflowId: 'target-1' });
  const h = await client.start('det', null, { workflowId: 'det-1' });
  await waitEvent(h, 'TimerStarted');
  await tickAhead(pool, 5);
  const res = await h.result({ timeout: 15000 }) as { s: number; r: number; u: string; t: string; missing: string };
  assert.equal(res.missing, 'ExternalWorkflowError');
  assert.match(res.u, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  // Replayed from the start at every task (no cache): each replay saw the same values.
  assert.ok(seen.length >= 2, `replays: ${seen.length}`);
  assert.equal(new Set(seen).size, 1);
  assert.deepEqual(JSON.parse(seen[0]), [res.s, res.r, res.u, res.t]);
  const marker = (await h.history()).find((e) => e.eventType === 'MarkerRecorded');
  assert.deepEqual(marker?.attributes.details, { id: 1, value: res.s });
  assert.deepEqual(await ht.result({ timeout: 15000 }), { from: 'det-1' });
  const found: string[] = [];
  for await (const w of client.list({ searchAttributes: { CustomerId: 'c-42' } })) found.push(w.workflowId);
  assert.deepEqual(found, ['det-1']);
});

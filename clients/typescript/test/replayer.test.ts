/**
 * The replayer: new code checked against the histories of a type's runs
 * (durable.replay_histories) before it is deployed.  Unchanged code follows
 * them; an activity added before a point the runs passed is reported for
 * each run with the message a worker's NonDeterministicWorkflow failure
 * would carry; getVersion() makes the same change safe; nothing is written
 * and no activity or side effect runs; a role without the privilege gets
 * the engine's error.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Client, DEFAULT_VERSION, InvalidArgumentError, JsonValue, NonDeterminismError, PermissionDeniedError, Worker,
  WorkflowContext, WorkflowFunction, replayHistories, replayHistory, ActivityFunction,
} from '../src/index';
import { MemoryLogger, asPool, makePool, waitEvent, withRole } from './helpers';

const pool = makePool();
const client = new Client({ pool: asPool(pool), taskQueue: 'replay-q' });
let sideEffects = 0;
let activityCalls = 0;

const activities: Record<string, ActivityFunction> = {
  reserve: (input: { item: string }) => { activityCalls++; return `reserved ${input.item}`; },
  ship: () => { activityCalls++; return 'shipped'; },
  audit: () => { activityCalls++; return 'audited'; },
};

// The deployed code: reserve, wait for payment, a side effect, ship.
const v1 = async (ctx: WorkflowContext, input: { item: string }): Promise<JsonValue> => {
  const r = await ctx.activity<string>('reserve', input);
  await ctx.waitSignal('paid');
  const label = await ctx.sideEffect(() => { sideEffects++; return `label-${input.item}`; });
  return { r, label, s: await ctx.activity<string>('ship', null) };
};
// An audit added before the reservation: every run has passed that point.
const addedActivity = async (ctx: WorkflowContext, input: { item: string }): Promise<JsonValue> => {
  await ctx.activity('audit', input);
  return v1(ctx, input);
};
// The same change behind getVersion(): safe.
const versioned = async (ctx: WorkflowContext, input: { item: string }): Promise<JsonValue> => {
  if (ctx.getVersion('audit', DEFAULT_VERSION, 1) === 1) await ctx.activity('audit', input);
  return v1(ctx, input);
};
// The old branch dropped too early.
const tooSoon = async (ctx: WorkflowContext, input: { item: string }): Promise<JsonValue> => {
  ctx.getVersion('audit', 1, 1);
  await ctx.activity('audit', input);
  return v1(ctx, input);
};

const historyLengths = async (): Promise<string[]> => {
  const r = await pool.query(`SELECT workflow_id || ' ' || status || ' ' || history_length AS w
      FROM durable.workflows ORDER BY workflow_id, run_id`);
  return r.rows.map((x: { w: string }) => x.w);
};

before(async () => {
  const worker = new Worker({
    pool: asPool(pool), taskQueue: 'replay-q', pollWait: 1000, workflows: { order: v1 }, activities,
    logger: new MemoryLogger(),
  });
  void worker.run();
  // Closed: paid and shipped.
  const done = await client.start('order', { item: 'book' }, { workflowId: 'order-done' });
  await waitEvent(done, 'DecisionTaskCompleted', 2);
  await done.signal('paid');
  await done.result({ timeout: 15000 });
  // Running: waits for payment.
  const waiting = await client.start('order', { item: 'pen' }, { workflowId: 'order-waiting' });
  await waitEvent(waiting, 'DecisionTaskCompleted', 2);
  // Running, paid, its next decision task not taken yet (no worker).
  const paid = await client.start('order', { item: 'ink' }, { workflowId: 'order-paid' });
  await waitEvent(paid, 'DecisionTaskCompleted', 2);
  await worker.shutdown();
  await paid.signal('paid');
  sideEffects = 0;
  activityCalls = 0;
});

after(async () => {
  await pool.end();
});

function byId(results: Array<{ workflowId: string }>): string[] {
  return results.map((r) => r.workflowId).sort();
}

test('unchanged code follows every history, running and closed; nothing runs, nothing is written', async () => {
  const before = await historyLengths();
  const running = await replayHistories({ pool: asPool(pool), workflows: { order: v1 }, workflowType: 'order' });
  assert.deepEqual(byId(running), ['order-paid', 'order-waiting'], 'the running runs by default');
  for (const r of running) assert.deepEqual(r, { workflowId: r.workflowId, runId: r.runId, ok: true });
  const all = await replayHistories({ pool: asPool(pool), workflows: { order: v1 }, workflowType: 'order', onlyRunning: false });
  assert.deepEqual(byId(all), ['order-done', 'order-paid', 'order-waiting']);
  assert.ok(all.every((r) => r.ok), JSON.stringify(all));
  const one = await replayHistories({ pool: asPool(pool), workflows: { order: v1 }, workflowType: 'order', maxRuns: 1 });
  assert.equal(one.length, 1);
  // order-paid's code went on past the signal: its side effect was not called.
  assert.equal(sideEffects, 0, 'no side effect function ran');
  assert.equal(activityCalls, 0, 'no activity ran');
  assert.deepEqual(await historyLengths(), before, 'no history changed');
  const runIds = (await pool.query(`SELECT run_id::text FROM durable.workflows WHERE workflow_id = 'order-waiting'`)).rows;
  assert.equal(running.find((r) => r.workflowId === 'order-waiting')?.runId, runIds[0].run_id);
});

test('an activity added before a point the runs passed: each run reported, naming both sides', async () => {
  const results = await replayHistories({
    pool: asPool(pool), workflows: { order: addedActivity }, workflowType: 'order', onlyRunning: false,
  });
  assert.deepEqual(byId(results), ['order-done', 'order-paid', 'order-waiting']);
  for (const r of results) {
    assert.equal(r.ok, false);
    assert.ok(r.error instanceof NonDeterminismError, String(r.error));
    assert.equal(r.error.message, `non-deterministic workflow order (${r.workflowId}): history has ` +
      'ActivityTaskScheduled (activityId 1 type reserve) at event 5, but the code issued ' +
      'ScheduleActivityTask activityId 1 type audit at number 1');
    assert.match(r.runId, /^[0-9a-f-]{36}$/);
  }
});

test('the same change behind getVersion() follows them; dropping the old branch too early does not', async () => {
  const ok = await replayHistories({ pool: asPool(pool), workflows: { order: versioned }, workflowType: 'order', onlyRunning: false });
  assert.ok(ok.every((r) => r.ok), JSON.stringify(ok));
  const bad = await replayHistories({ pool: asPool(pool), workflows: { order: tooSoon }, workflowType: 'order' });
  assert.equal(bad.length, 2);
  for (const r of bad) {
    assert.equal(r.ok, false);
    assert.match(r.error?.message ?? '', /^non-deterministic workflow order \(order-(waiting|paid)\): change "audit": the run has version -1, but the workflow supports versions 1 to 1$/);
  }
});

test('a command the code issues where history has none, and a history given directly', async () => {
  const h = client.getHandle('order-done');
  assert.deepEqual(await replayHistory({ workflows: { order: v1 }, history: await h.history(), workflowId: 'order-done' }),
    { workflowId: 'order-done', runId: '', ok: true });
  // One more activity where the closed run returned.
  const auditAtTheEnd = async (ctx: WorkflowContext, input: { item: string }): Promise<JsonValue> => {
    const r = await ctx.activity<string>('reserve', input);
    await ctx.waitSignal('paid');
    const label = await ctx.sideEffect(() => `label-${input.item}`);
    const s = await ctx.activity<string>('ship', null);
    await ctx.activity('audit', null);
    return { r, label, s };
  };
  const r = await replayHistory({ workflows: { order: auditAtTheEnd }, history: await h.history(), workflowId: 'order-done' });
  assert.equal(r.ok, false);
  assert.match(r.error?.message ?? '', /^non-deterministic workflow order \(order-done\): the code issued ScheduleActivityTask activityId 4 type audit at number 4 in the decision task completed at event \d+, but history has no event for it \(the run closed at event \d+\)$/);
});

test('bad options and a role without the privilege: typed errors', async () => {
  await assert.rejects(replayHistories({ pool: asPool(pool), workflows: { order: v1 }, workflowType: 'shipment' }),
    (e: unknown) => e instanceof TypeError && /workflowType shipment is not in workflows/.test(e.message));
  await assert.rejects(replayHistories({ pool: asPool(pool), workflows: { order: v1 }, workflowType: 'order', maxRuns: 0 }),
    (e: unknown) => e instanceof InvalidArgumentError && e.argument === 'max_runs' && e.sqlstate === '22023');
  await withRole(pool, 'replay_nobody', [], async (p) => {
    await assert.rejects(replayHistories({ pool: asPool(p), workflows: { order: v1 }, workflowType: 'order' }),
      (e: unknown) => e instanceof PermissionDeniedError && e.sqlstate === '42501');
  });
});

// Keeps the type of the record that workflows take: WorkflowFunction of any input.
const _typed: Record<string, WorkflowFunction> = { v1, addedActivity, versioned, tooSoon };
void _typed;

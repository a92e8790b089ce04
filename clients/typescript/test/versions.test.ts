/**
 * Changing workflow code under running workflows: ctx.getVersion(),
 * ctx.patched() and ctx.deprecatePatch(), with the marker of SQL workflows'
 * durable.get_version() (docs/sql-workflows.md "Changing workflow code").
 * Each test starts runs on one version of the code, replaces the worker by
 * one with the next version, and lets the runs finish.
 */
import { after, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Client, DEFAULT_VERSION, HistoryEvent, InvalidArgumentError, JsonValue, Worker, WorkflowContext, WorkflowFunction,
  ActivityFunction,
} from '../src/index';
import { MemoryLogger, asPool, makePool, waitEvent } from './helpers';

const pool = makePool();
let client: Client;
let queues = 0;
const workers: Worker[] = [];

beforeEach(() => {
  client = new Client({ pool: asPool(pool), taskQueue: `ver-q${++queues}` });
});
after(async () => {
  for (const w of workers) await w.shutdown().catch(() => undefined);
  await pool.end();
});

const activities: Record<string, ActivityFunction> = {
  echo: (input: JsonValue) => input,
};

function startWorker(workflows: Record<string, WorkflowFunction>, maxCachedWorkflows?: number): Worker {
  const w = new Worker({
    pool: asPool(pool), taskQueue: client.taskQueue, pollWait: 1000, workflows, activities,
    logger: new MemoryLogger(), maxCachedWorkflows,
  });
  workers.push(w);
  void w.run();
  return w;
}

function markers(events: HistoryEvent[]): JsonValue[] {
  return events.filter((e) => e.eventType === 'MarkerRecorded').map((e) => e.attributes.details);
}

function activityIds(events: HistoryEvent[]): JsonValue[] {
  return events.filter((e) => e.eventType === 'ActivityTaskScheduled').map((e) => e.attributes.activityId);
}

/** Waits until the run's decision tasks are done (n of them completed) and it waits for a signal. */
async function blocked(workflowId: string, completed: number): Promise<void> {
  await waitEvent(client.getHandle(workflowId), 'DecisionTaskCompleted', completed);
}

test('a run started before getVersion() existed takes the old branch, a new run the new one', async () => {
  // Version 1: wait for the signal, then one activity.
  const v1 = async (ctx: WorkflowContext): Promise<JsonValue> => {
    await ctx.waitSignal('go');
    return { b: await ctx.activity<string>('echo', 'b') };
  };
  // Version 2 sends a welcome first: the old run has passed that point.
  const v2 = async (ctx: WorkflowContext): Promise<JsonValue> => {
    const version = ctx.getVersion('welcome', DEFAULT_VERSION, 1);
    const welcome = version === 1 ? await ctx.activity<string>('echo', 'welcome') : null;
    await ctx.waitSignal('go');
    // The same change again: the same version, no second marker.
    const again = ctx.getVersion('welcome', DEFAULT_VERSION, 1);
    return { version, welcome, again, b: await ctx.activity<string>('echo', 'b') };
  };
  const w1 = startWorker({ remind: v1 });
  const old = await client.start('remind', null, { workflowId: 'ver-old' });
  await blocked('ver-old', 1);
  await w1.shutdown();

  // Without a cache, each task of the new run replays its marker from history.
  const w2 = startWorker({ remind: v2 }, 0);
  const neu = await client.start('remind', null, { workflowId: 'ver-new' });
  await blocked('ver-new', 2);
  await old.signal('go');
  await neu.signal('go');
  assert.deepEqual(await old.result({ timeout: 15000 }), { version: -1, welcome: null, again: -1, b: 'b' });
  assert.deepEqual(await neu.result({ timeout: 15000 }), { version: 1, welcome: 'welcome', again: 1, b: 'b' });

  const oldEvents = await old.history();
  assert.deepEqual(markers(oldEvents), [], 'DEFAULT_VERSION records nothing');
  assert.deepEqual(activityIds(oldEvents), ['1'], 'and takes no command number');
  const newEvents = await neu.history();
  assert.deepEqual(markers(newEvents), [{ id: 1, changeId: 'welcome', version: 1 }]);
  const marker = newEvents.find((e) => e.eventType === 'MarkerRecorded');
  assert.equal(marker?.attributes.markerName, 'Version');
  assert.deepEqual(activityIds(newEvents), ['2', '3'], 'the marker takes command number 1');
  assert.equal(w2.workflowWorker?.stats.nonDeterministic, 0);
  assert.ok((w2.workflowWorker?.stats.decisionTasks ?? 0) >= 5);
});

test('patched(), then deprecatePatch(), then neither: every run finishes on its branch', async () => {
  const v1 = async (ctx: WorkflowContext): Promise<JsonValue> => {
    await ctx.waitSignal('go');
    return ctx.activity('echo', 'old');
  };
  const v2 = async (ctx: WorkflowContext): Promise<JsonValue> => {
    const p = ctx.patched('fix');
    await ctx.waitSignal('go');
    return ctx.activity('echo', p ? 'new' : 'old');
  };
  const v3 = async (ctx: WorkflowContext): Promise<JsonValue> => {
    ctx.deprecatePatch('fix');
    await ctx.waitSignal('go');
    return ctx.activity('echo', 'new');
  };
  const v4 = async (ctx: WorkflowContext): Promise<JsonValue> => {
    await ctx.waitSignal('go');
    return ctx.activity('echo', 'new');
  };
  const w1 = startWorker({ fix: v1 });
  const p1 = await client.start('fix', null, { workflowId: 'patch-1' });
  await blocked('patch-1', 1);
  await w1.shutdown();

  const w2 = startWorker({ fix: v2 });
  const p2 = await client.start('fix', null, { workflowId: 'patch-2' });
  await blocked('patch-2', 1);
  await p1.signal('go');
  assert.equal(await p1.result({ timeout: 15000 }), 'old', 'patched() is false for a run that passed the point');
  await w2.shutdown();

  const w3 = startWorker({ fix: v3 });
  const p3 = await client.start('fix', null, { workflowId: 'patch-3' });
  await blocked('patch-3', 1);
  await p2.signal('go');
  assert.equal(await p2.result({ timeout: 15000 }), 'new', 'deprecatePatch() accepts the marker of patched()');
  await w3.shutdown();

  const w4 = startWorker({ fix: v4 });
  await p3.signal('go');
  assert.equal(await p3.result({ timeout: 15000 }), 'new', 'a deprecated marker the code no longer asks for is passed over');

  assert.deepEqual(markers(await p1.history()), []);
  assert.deepEqual(markers(await p2.history()), [{ id: 1, changeId: 'fix', version: 1 }]);
  const h3 = await p3.history();
  assert.deepEqual(markers(h3), [{ id: 1, changeId: 'fix', version: 1, deprecated: true }]);
  assert.deepEqual(activityIds(h3), ['2'], 'the passed-over marker keeps its command number');
  for (const w of [w1, w2, w3, w4]) assert.equal(w.workflowWorker?.stats.nonDeterministic, 0);
});

test('a version outside the supported range fails the decision task, naming the change and both versions', async () => {
  const v1 = async (ctx: WorkflowContext): Promise<JsonValue> => {
    await ctx.waitSignal('go');
    return ctx.activity('echo', 'plain');
  };
  // Drops the old branch too early; catching the error does not save the task.
  const tooSoon = async (ctx: WorkflowContext): Promise<JsonValue> => {
    let v: number;
    try {
      v = ctx.getVersion('gift-wrap', 1, 1);
    } catch {
      v = 0;
    }
    await ctx.waitSignal('go');
    return ctx.activity('echo', v === 1 ? 'wrapped' : 'plain');
  };
  const fixed = async (ctx: WorkflowContext): Promise<JsonValue> => {
    const v = ctx.getVersion('gift-wrap', DEFAULT_VERSION, 1);
    await ctx.waitSignal('go');
    return ctx.activity('echo', v === 1 ? 'wrapped' : 'plain');
  };
  const w1 = startWorker({ gift: v1 });
  const h = await client.start('gift', null, { workflowId: 'gift-1' });
  await blocked('gift-1', 1);
  await w1.shutdown();

  const w2 = startWorker({ gift: tooSoon });
  await h.signal('go');
  const failed = await waitEvent(h, 'DecisionTaskFailed');
  assert.equal(failed.attributes.cause, 'NonDeterministicWorkflow');
  const details = failed.attributes.details as { message: string };
  assert.match(details.message, /change "gift-wrap": the run has version -1, but the workflow supports versions 1 to 1/);
  assert.match(details.message, /^non-deterministic workflow gift \(gift-1\): /);
  assert.ok((w2.workflowWorker?.stats.nonDeterministic ?? 0) >= 1);
  assert.equal((await h.describe()).status, 'running', 'the run is not failed, its task is');
  await w2.shutdown();

  // The fix deployed: the task succeeds, on the old branch.
  const w3 = startWorker({ gift: fixed });
  assert.equal(await h.result({ timeout: 20000 }), 'plain');
  assert.equal(w3.workflowWorker?.stats.nonDeterministic, 0);
  assert.deepEqual(markers(await h.history()), []);
});

test('a recorded version that the code no longer supports fails the task too', async () => {
  const v1 = async (ctx: WorkflowContext): Promise<JsonValue> => {
    const v = ctx.getVersion('step', DEFAULT_VERSION, 1);
    await ctx.waitSignal('go');
    return v;
  };
  const v2 = async (ctx: WorkflowContext): Promise<JsonValue> => {
    const v = ctx.getVersion('step', 2, 2);
    await ctx.waitSignal('go');
    return v;
  };
  const w1 = startWorker({ step: v1 });
  const h = await client.start('step', null, { workflowId: 'step-1' });
  await blocked('step-1', 1);
  await w1.shutdown();
  startWorker({ step: v2 });
  await h.signal('go');
  const failed = await waitEvent(h, 'DecisionTaskFailed');
  assert.equal(failed.attributes.cause, 'NonDeterministicWorkflow');
  assert.match((failed.attributes.details as { message: string }).message,
    /change "step": the run has version 1, but the workflow supports versions 2 to 2/);
});

test('bad arguments of getVersion(), patched() and deprecatePatch() are InvalidArgumentError naming the argument', async () => {
  const calls: Array<[string, (ctx: WorkflowContext) => unknown]> = [
    ['empty change id', (ctx) => ctx.getVersion('', DEFAULT_VERSION, 1)],
    ['long change id', (ctx) => ctx.patched('x'.repeat(1001))],
    ['null change id', (ctx) => ctx.deprecatePatch(null as unknown as string)],
    ['min below -1', (ctx) => ctx.getVersion('a', -2, 1)],
    ['min above max', (ctx) => ctx.getVersion('a', 2, 1)],
    ['fractional max', (ctx) => ctx.getVersion('a', 1, 1.5)],
    ['undefined min', (ctx) => ctx.getVersion('a', undefined as unknown as number, 1)],
  ];
  const bad = async (ctx: WorkflowContext): Promise<JsonValue> => {
    const out: JsonValue[] = [];
    for (const [what, call] of calls) {
      try {
        call(ctx);
        out.push([what, 'no error']);
      } catch (e) {
        out.push(e instanceof InvalidArgumentError ? [what, e.argument ?? null, e.sqlstate] : [what, String(e)]);
      }
    }
    // The bad calls recorded nothing: a good one takes number 1.
    out.push(ctx.getVersion('a', DEFAULT_VERSION, 3));
    return out;
  };
  startWorker({ bad });
  const h = await client.start('bad', null, { workflowId: 'bad-args' });
  assert.deepEqual(await h.result({ timeout: 15000 }), [
    ['empty change id', 'changeId', '22023'],
    ['long change id', 'changeId', '22023'],
    ['null change id', 'changeId', '22004'],
    ['min below -1', 'minSupported', '22023'],
    ['min above max', 'minSupported', '22023'],
    ['fractional max', 'maxSupported', '22023'],
    ['undefined min', 'minSupported', '22004'],
    3,
  ]);
  assert.deepEqual(markers(await h.history()), [{ id: 1, changeId: 'a', version: 3 }]);
});

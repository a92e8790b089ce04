/**
 * Eager dispatch (docs/api.md "Eager dispatch"): a Worker that runs a task
 * queue's workflows and activities answers decision tasks asking for the
 * activities they schedule on its queue and for the next decision task, and
 * completes activities asking for the decision task they schedule, so that
 * a workflow of several activities needs one poll.  A worker that dies
 * holding a task it so received loses nothing: the task times out and
 * another worker finishes the workflow.
 */
import { after, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { ActivityFunction, Client, JsonValue, Worker, WorkflowContext, WorkflowFunction } from '../src/index';
import { MemoryLogger, asPool, makePool, tickAhead, until, waitEvent } from './helpers';

const pool = makePool();
let client: Client;
let queues = 0;
const workers: Worker[] = [];

beforeEach(() => {
  client = new Client({ pool: asPool(pool), taskQueue: `eager-q${++queues}` });
});
after(async () => {
  for (const w of workers) await w.shutdown().catch(() => undefined);
  await pool.end();
});

function startWorker(workflows: Record<string, WorkflowFunction>, activities: Record<string, ActivityFunction>,
  extra: { identity?: string; maxConcurrentActivities?: number } = {}): Worker {
  const w = new Worker({
    pool: asPool(pool), taskQueue: client.taskQueue, pollWait: 1000, workflows, activities,
    logger: new MemoryLogger(), ...extra,
  });
  workers.push(w);
  void w.run();
  return w;
}

async function steps(ctx: WorkflowContext, input: { n: number }): Promise<JsonValue> {
  let total = 0;
  for (let i = 0; i < input.n; i++) total += await ctx.activity<number>('add', { i }, { startToCloseTimeout: '10s' });
  const both = await Promise.all([
    ctx.activity<number>('add', { i: 100 }, { startToCloseTimeout: '10s' }),
    ctx.activity<number>('add', { i: 200 }, { startToCloseTimeout: '10s' }),
  ]);
  return total + both[0] + both[1];
}

test('a workflow of several activities runs with one poll: activities and decision tasks come eagerly', async () => {
  const w = startWorker({ steps }, { async add(input: { i: number }) { return input.i; } });
  const h = await client.start('steps', { n: 3 }, { workflowId: 'eager-1' });
  assert.equal(await h.result({ timeout: 15000 }), 0 + 1 + 2 + 100 + 200);
  const ww = w.workflowWorker!.stats;
  const aw = w.activityWorker!;
  assert.equal(ww.polledDecisionTasks, 1, 'only the first decision task was polled');
  assert.equal(aw.polledActivities, 0, 'no activity was polled');
  assert.equal(aw.eagerActivities, 5, 'every activity came with a decision task\'s answer');
  assert.ok(ww.eagerDecisionTasks >= 4, 'every later decision task came with an answer');
  // Started in the scheduling transaction: schedule-to-start 0.
  const hist = await h.history();
  const scheduled = hist.filter((e) => e.eventType === 'ActivityTaskScheduled');
  const started = hist.filter((e) => e.eventType === 'ActivityTaskStarted');
  assert.equal(started.length, 5);
  for (const s of started) {
    const sch = scheduled.find((e) => e.eventId === Number(s.attributes.scheduledEventId));
    assert.ok(sch, 'its ActivityTaskScheduled');
    assert.equal(new Date(s.eventTime).getTime(), new Date(sch.eventTime).getTime(), 'started when scheduled');
  }
});

test('a worker dying with an eager activity: the attempt times out, another worker finishes the workflow', async () => {
  let release: () => void = () => undefined;
  const held = new Promise<void>((r) => { release = r; });
  let received = 0;
  const w1 = startWorker({ steps }, {
    async add() { received++; await held; return -1; },   // never answers in time: as if killed
  }, { identity: 'doomed', maxConcurrentActivities: 1 });
  const h = await client.start('steps', { n: 1 }, { workflowId: 'eager-2' });
  await waitEvent(h, 'ActivityTaskScheduled');
  assert.equal(w1.activityWorker!.eagerActivities, 1, 'the first worker got the activity eagerly');
  assert.equal(received, 1);
  await w1.workflowWorker!.shutdown();   // its workflow side is gone too
  const w2 = startWorker({ steps }, { async add(input: { i: number }) { return input.i; } }, { identity: 'rescuer' });
  // Past the attempt's 10 s start-to-close timeout, then the retry's backoff
  // (a retried attempt's timeout writes no event), until the other worker
  // can poll the retry; no tick after that, which would time its attempt out.
  await until('the retry queued', async () => {
    if (w2.activityWorker!.polledActivities >= 1) return true;
    const q = await pool.query(`SELECT count(*)::int AS n FROM durable.ready_tasks t JOIN durable.runs r
      USING (run_id) WHERE r.workflow_id = 'eager-2' AND t.kind = 'a'`);
    if (Number(q.rows[0].n) > 0) return true;
    await tickAhead(pool, 15);
    return false;
  });
  assert.equal(await h.result({ timeout: 15000 }), 0 + 100 + 200);
  const rescued = (await h.history()).filter((e) => e.eventType === 'ActivityTaskStarted' &&
    e.attributes.identity === 'rescuer');
  assert.ok(rescued.length >= 1, 'the retry ran on the other worker');
  assert.ok(w2.workflowWorker!.stats.decisionTasks >= 1, 'the other worker answered the decision tasks');
  release();
});

test('start with eagerWorker: the first decision task goes to the local worker, without a poll', async () => {
  const w = startWorker({ steps }, { async add(input: { i: number }) { return input.i; } });
  const h = await client.start('steps', { n: 2 }, { workflowId: 'eager-3', eagerWorker: w });
  assert.equal(await h.result({ timeout: 15000 }), 0 + 1 + 100 + 200);
  assert.equal(w.workflowWorker!.stats.polledDecisionTasks, 0, 'no decision task was polled');
  assert.equal(w.activityWorker!.polledActivities, 0, 'no activity was polled');
  const hist = await h.history();
  assert.equal(hist[2].eventType, 'DecisionTaskStarted');
  assert.equal(hist[2].attributes.identity, w.workflowWorker!.identity, 'started by the local worker');
  // Another queue, or a delay: the usual start (queued for a poll).
  const other = new Client({ pool: asPool(pool), taskQueue: 'eager-elsewhere' });
  const h2 = await other.start('steps', { n: 0 }, { workflowId: 'eager-4', eagerWorker: w });
  assert.deepEqual((await h2.history()).map((e) => e.eventType), ['WorkflowExecutionStarted', 'DecisionTaskScheduled']);
  await h2.terminate('test');
});

test('partial history: each decision task after the first brings only the events the worker does not keep', async () => {
  const w = startWorker({ steps }, { async add(input: { i: number }) { return input.i; } });
  const h = await client.start('steps', { n: 3 }, { workflowId: 'eager-partial' });
  assert.equal(await h.result({ timeout: 15000 }), 0 + 1 + 2 + 100 + 200);
  const ww = w.workflowWorker!.stats;
  assert.ok(ww.partialHistories >= 4, `partial histories: ${ww.partialHistories}`);
  assert.equal(ww.cacheHits, ww.partialHistories, 'each answered from the cached state');
  assert.equal(ww.historyReads, 0, 'no history read back');
});

test('a partial history for a run the worker no longer keeps: the events before it are read back', async () => {
  // A decision task returned with history_after, as an answer of another
  // worker that kept the run would get it, handed to a worker without it.
  const w = startWorker({ steps }, { async add(input: { i: number }) { return input.i; } });
  await w.shutdown();
  await w.shutdown();   // a second call: the same promise, resolved
  const q = client.taskQueue;
  await pool.query(`SELECT durable.start_workflow('steps', '{"n": 1}', 'eager-evicted', $1)`, [q]);
  const d = (await pool.query(`SELECT durable.poll_decision_task($1) AS t`, [q])).rows[0].t;
  await pool.query(`SELECT durable.complete_decision_task($1, $2::jsonb)`, [d.taskToken, JSON.stringify([{
    decisionType: 'ScheduleActivityTask', activityId: '1', activityType: 'add', input: { i: 0 },
    startToCloseTimeoutSeconds: 10 }])]);
  const a = (await pool.query(`SELECT durable.poll_activity_task($1) AS t`, [q])).rows[0].t;
  const r = (await pool.query(`SELECT durable.complete_activity($1, '0', true, 4) AS r`, [a.taskToken])).rows[0].r;
  assert.equal(r.decisionTask.history[0].eventId, 5, 'the task brings the events after event 4');
  const w2 = startWorker({ steps }, { async add(input: { i: number }) { return input.i; } });
  w2.workflowWorker!.takeEager(r.decisionTask);
  const h = client.getHandle('eager-evicted');
  assert.equal(await h.result({ timeout: 15000 }), 0 + 100 + 200);
  const ww = w2.workflowWorker!.stats;
  assert.equal(ww.historyReads, 1, 'the events up to 4 read with get_history');
  assert.equal(ww.nonDeterministic, 0);
});

test('partial history after a retried decision task: its transient events are not yet stored', async () => {
  // The first attempt of the first decision task is claimed and failed (as a
  // worker that crashed on it would); the Worker answers the retry, whose
  // DecisionTaskScheduled and DecisionTaskStarted are written only with its
  // answer: history_after must not name them.
  const q = client.taskQueue;
  await pool.query(`SELECT durable.start_workflow('steps', '{"n": 2}', 'eager-retried', $1)`, [q]);
  const d = (await pool.query(`SELECT durable.poll_decision_task($1, 'doomed') AS t`, [q])).rows[0].t;
  await pool.query(`SELECT durable.fail_decision_task($1, 'WorkflowWorkerError', '{"message": "crashed"}', 'doomed')`,
    [d.taskToken]);
  const w = startWorker({ steps }, { async add(input: { i: number }) { return input.i; } });
  const h = client.getHandle('eager-retried');
  assert.equal(await h.result({ timeout: 15000 }), 0 + 1 + 100 + 200);
  const ww = w.workflowWorker!.stats;
  assert.ok(ww.partialHistories >= 3, `partial histories: ${ww.partialHistories}`);
  assert.equal(ww.cacheHits, ww.partialHistories, 'each answered from the cached state');
  assert.equal(ww.nonDeterministic, 0);
  const types = (await h.history()).map((e) => e.eventType);
  assert.equal(types.filter((t) => t === 'DecisionTaskFailed').length, 1);
});

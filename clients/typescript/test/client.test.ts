/**
 * The client: start, result through wait_workflow, signal, cancel,
 * terminate, describe, history, list, count, reset, restart, and errors
 * typed by SQLSTATE.  Decisions are made here with plain SQL, as any worker
 * would, so that only the client is under test.
 */
import { after, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Client, DurableError, InvalidArgumentError, PermissionDeniedError, WorkflowAlreadyStartedError,
  WorkflowFailedError, WorkflowNotFoundError, WorkflowNotRunningError, ResultTimeoutError, StaleTaskTokenError, PoolLike,
  WorkflowExecutionInfo, newWorkflowId,
} from '../src/index';
import { fromDatabaseError } from '../src/errors';
import { asPool, makePool, withRole } from './helpers';

const pool = makePool();
let client: Client;
let queues = 0;

// Each test starts its workflows on a task queue of its own (client.taskQueue),
// so that decide() answers only that test's tasks.
beforeEach(() => {
  client = new Client({ pool: asPool(pool), taskQueue: `client-q${++queues}` });
});
after(async () => {
  await pool.end();
});

/** Answers the next decision task of queue with decisions (plain SQL). */
async function decide(queue: string, decisions: unknown[]): Promise<string> {
  const r = await pool.query("SELECT durable.poll_decision_task($1, 'test', 'default', '5 seconds') AS t", [queue]);
  const t = r.rows[0].t as { taskToken: string; workflowId: string };
  assert.ok(t, `a decision task on ${queue}`);
  await pool.query('SELECT durable.complete_decision_task($1, $2::jsonb)', [t.taskToken, JSON.stringify(decisions)]);
  return t.workflowId;
}

test('start returns a handle; result() waits for the completion', async () => {
  const h = await client.start('order', { orderId: 1 }, { workflowId: 'order-1', memo: { owner: 'ann' } });
  assert.equal(h.workflowId, 'order-1');
  assert.match(h.runId ?? '', /^[0-9a-f-]{36}$/);
  const result = h.result();
  await decide(client.taskQueue, [{ decisionType: 'CompleteWorkflowExecution', result: { total: 42 } }]);
  assert.deepEqual(await result, { total: 42 });
  const d = await h.describe();
  assert.equal(d.status, 'completed');
  assert.equal(d.taskQueue, client.taskQueue);
  assert.deepEqual(d.memo, { owner: 'ann' });
  const types = (await h.history()).map((e) => e.eventType);
  assert.deepEqual(types, ['WorkflowExecutionStarted', 'DecisionTaskScheduled', 'DecisionTaskStarted',
    'DecisionTaskCompleted', 'WorkflowExecutionCompleted']);
  const first = (await h.history())[0];
  assert.deepEqual(first.attributes.input, { orderId: 1 });
  assert.ok(first.eventTime instanceof Date);
});

test('a start without workflowId gets a UUID that the handle knows', async () => {
  const before = Date.now();
  const h = await client.start('anon', null);
  // Version 7: the first 48 bits are the time of the start in milliseconds.
  assert.match(h.workflowId, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  const ms = parseInt(h.workflowId.replace(/-/g, '').slice(0, 12), 16);
  assert.ok(ms >= before && ms <= Date.now(), `its time ${ms} is the start's`);
  assert.equal((await h.describe()).workflowId, h.workflowId);
  await h.terminate('done');
});

test('newWorkflowId() draws a new id every call', () => {
  const ids = new Set(Array.from({ length: 1000 }, () => newWorkflowId()));
  assert.equal(ids.size, 1000);
});

test('result() of a failed workflow throws WorkflowFailedError with reason and details', async () => {
  const h = await client.start('order', null, { workflowId: 'order-fail' });
  await decide(client.taskQueue, [{ decisionType: 'FailWorkflowExecution', reason: 'CardDeclined', details: { code: 51 } }]);
  await assert.rejects(h.result(), (e: unknown) => {
    assert.ok(e instanceof WorkflowFailedError);
    assert.equal(e.status, 'failed');
    assert.equal(e.reason, 'CardDeclined');
    assert.deepEqual(e.details, { code: 51 });
    assert.equal(e.workflowId, 'order-fail');
    return true;
  });
});

test('result() follows retries: the retry\'s result, not the first failure', async () => {
  const h = await client.start('retried', null, {
    workflowId: 'retried-1', retryPolicy: { initialInterval: 1, maximumAttempts: 2 },
  });
  await decide(client.taskQueue, [{ decisionType: 'FailWorkflowExecution', reason: 'Flaky' }]);
  const c = await pool.connect();
  try {
    await c.query("SELECT set_config('durable.test_time', (clock_timestamp() + interval '1 minute')::text, false)");
    await c.query('SELECT durable.tick()');
  } finally {
    c.release();
  }
  await decide(client.taskQueue, [{ decisionType: 'CompleteWorkflowExecution', result: 'second' }]);
  assert.equal(await h.result(), 'second');
});

test('result({timeout}) gives up with ResultTimeoutError and the workflow goes on', async () => {
  const h = await client.start('slow', null, { workflowId: 'slow-1' });
  const t0 = Date.now();
  await assert.rejects(h.result({ timeout: 300 }), ResultTimeoutError);
  assert.ok(Date.now() - t0 < 5000);
  assert.equal((await h.describe()).status, 'running');
  await h.terminate('test over');
});

test('signal, cancel and terminate reach the run', async () => {
  const h = await client.start('order', null, { workflowId: 'order-2' });
  await h.signal('paid', { amount: 42.5 });
  await h.cancel('customer asked');
  await h.cancel('again: a no-op');
  const hist = await h.history();
  const sig = hist.find((e) => e.eventType === 'WorkflowExecutionSignaled');
  assert.deepEqual(sig?.attributes, { input: { amount: 42.5 }, identity: sig?.attributes.identity ?? null, signalName: 'paid' });
  assert.equal(hist.filter((e) => e.eventType === 'WorkflowExecutionCancelRequested').length, 1);
  assert.equal((await h.describe()).cancelRequested, true);
  await h.terminate('enough', { by: 'test' });
  await assert.rejects(h.result(), (e: unknown) => e instanceof WorkflowFailedError && e.status === 'terminated');
  // A closed workflow: WF003.
  await assert.rejects(h.signal('paid'), WorkflowNotRunningError);
  await assert.rejects(h.terminate('twice'), WorkflowNotRunningError);
});

test('typed errors: WF001, WF002, WF003, 22023 with the argument, 42501', async () => {
  const h = await client.start('dup', null, { workflowId: 'dup-1' });
  await assert.rejects(client.start('dup', null, { workflowId: 'dup-1' }), (e: unknown) => {
    assert.ok(e instanceof WorkflowAlreadyStartedError);
    assert.ok(e instanceof DurableError);
    assert.equal(e.sqlstate, 'WF001');
    assert.ok(e.message.includes(h.runId ?? 'x'), 'the message names the running run');
    return true;
  });
  await assert.rejects(client.getHandle('no-such-workflow').describe(), (e: unknown) =>
    e instanceof WorkflowNotFoundError && e.sqlstate === 'WF002');
  await assert.rejects(client.start('x', null, { namespace: 'no-such-namespace' }), WorkflowNotFoundError);
  await assert.rejects(client.start('x', null, { runTimeout: '-5 s' as never }), (e: unknown) =>
    e instanceof InvalidArgumentError && e.argument === 'runTimeout');
  await assert.rejects(client.start('x', null, { runTimeout: 1e15 }), (e: unknown) => {
    assert.ok(e instanceof InvalidArgumentError);
    assert.equal(e.sqlstate, '22023');
    assert.equal(e.argument, 'run_timeout');
    return true;
  });
  await assert.rejects(client.start('x', null, { idReusePolicy: 'sometimes' as never }), (e: unknown) =>
    e instanceof InvalidArgumentError && e.argument === 'id_reuse_policy');
  await assert.rejects(client.start('x', 10n), (e: unknown) =>
    e instanceof InvalidArgumentError && e.argument === 'input' && /BigInt/.test(e.message));
  await assert.rejects(client.start('', null), (e: unknown) =>
    e instanceof InvalidArgumentError && e.argument === 'workflow_type');
  await h.terminate('done');
  await assert.rejects(h.cancel(), WorkflowNotRunningError);
  // A token that was never issued: WF005.
  await assert.rejects(client.connection.query('SELECT durable.complete_activity($1)',
    [`A1:7:default:5:dup-1:${h.runId}:5:1:0123456789abcdef`]), StaleTaskTokenError);
  await withRole(pool, 'ts_no_client', [], async (p) => {
    const c = new Client({ pool: asPool(p) });
    await assert.rejects(c.start('x', null), (e: unknown) => e instanceof PermissionDeniedError && e.sqlstate === '42501');
  });
  await pool.query("SELECT durable.create_namespace('billing')");
  await withRole(pool, 'ts_other_team', ['durable_client'], async (p) => {
    const c = new Client({ pool: asPool(p), namespace: 'billing' });
    await assert.rejects(c.start('x', null), (e: unknown) =>
      e instanceof PermissionDeniedError && /namespace "billing"/.test(e.message));
  });
});

test('22004 and 22P02 are InvalidArgumentError too', () => {
  const pgErr = (code: string, message: string): Error => Object.assign(new Error(message), { code });
  const a = fromDatabaseError(pgErr('22004', 'reason must not be null'));
  assert.ok(a instanceof InvalidArgumentError);
  assert.equal(a.argument, 'reason');
  const b = fromDatabaseError(pgErr('22P02', 'invalid input syntax for type uuid: "nope"'));
  assert.ok(b instanceof InvalidArgumentError);
  const c = fromDatabaseError(pgErr('XX000', 'internal'));
  assert.ok(c instanceof DurableError && !(c instanceof InvalidArgumentError));
  assert.equal(fromDatabaseError('not an error'), 'not an error');
});

test('start and signalWithStart give search attributes that list and count find', async () => {
  const h = await client.start('tagged', null, { workflowId: 'tagged-1', searchAttributes: { Customer: 'ann', Tier: 2 } });
  assert.deepEqual((await h.describe()).searchAttributes, { Customer: 'ann', Tier: 2 });
  assert.deepEqual((await h.history())[0].attributes.searchAttributes, { Customer: 'ann', Tier: 2 });
  const found: string[] = [];
  for await (const w of client.list({ searchAttributes: { Customer: 'ann' } })) found.push(w.workflowId);
  assert.deepEqual(found, ['tagged-1']);
  assert.equal(await client.count({ searchAttributes: { Tier: 2 } }), 1);
  const s = await client.signalWithStart('tagged', { workflowId: 'tagged-2', signal: 'go',
    searchAttributes: { Customer: 'bob' } });
  assert.deepEqual((await s.describe()).searchAttributes, { Customer: 'bob' });
  assert.equal(await client.count({ searchAttributes: { Customer: 'bob' } }), 1);
  // A start without them has none.
  assert.equal((await (await client.start('tagged', null)).describe()).searchAttributes, null);
  // Not an object: refused before anything starts.
  const before = await client.count({ workflowType: 'tagged' });
  for (const bad of [[1], 'ann', null]) {
    await assert.rejects(client.start('tagged', null, { searchAttributes: bad as never }), (e: unknown) =>
      e instanceof InvalidArgumentError && e.argument === 'searchAttributes' && e.sqlstate === '22023');
    await assert.rejects(client.signalWithStart('tagged', { workflowId: 'tagged-3', signal: 'go',
      searchAttributes: bad as never }), InvalidArgumentError);
  }
  assert.equal(await client.count({ workflowType: 'tagged' }), before);
});

test('signalWithStart starts once, then signals the running run', async () => {
  const h1 = await client.signalWithStart('cart', { workflowId: 'cart-1', signal: 'add', signalInput: { sku: 'a' }, input: { user: 'u' } });
  const h2 = await client.signalWithStart('cart', { workflowId: 'cart-1', signal: 'add', signalInput: { sku: 'b' } });
  assert.equal(h1.runId, h2.runId);
  const signals = (await h1.history()).filter((e) => e.eventType === 'WorkflowExecutionSignaled').map((e) => e.attributes.input);
  assert.deepEqual(signals, [{ sku: 'a' }, { sku: 'b' }]);
  await h1.terminate('done');
});

test('list pages through list_workflows; count counts', async () => {
  for (let i = 0; i < 7; i++) await client.start('listed', { i }, { workflowId: `listed-${i}` });
  const seen: string[] = [];
  for await (const w of client.list({ workflowType: 'listed', pageSize: 3 })) {
    assert.equal(w.status, 'running');
    assert.ok(w.startTime instanceof Date);
    seen.push(w.workflowId);
  }
  assert.equal(seen.length, 7);
  assert.equal(new Set(seen).size, 7);
  assert.equal(await client.count({ workflowType: 'listed' }), 7);
  assert.equal(await client.count({ workflowType: 'listed', status: 'completed' }), 0);
  assert.equal(await client.count({ workflowIdPrefix: 'listed-1' }), 1);
  await assert.rejects(client.count({ status: 'sleeping' as never }), (e: unknown) =>
    e instanceof InvalidArgumentError && e.argument === 'status');
  for (let i = 0; i < 7; i++) await client.getHandle(`listed-${i}`).terminate('done');
});

test('list shows who paused a run, and finds the paused runs', async () => {
  const hs = [];
  for (let i = 0; i < 3; i++) hs.push(await client.start('pausable', { i }, { workflowId: `pausable-${i}` }));
  assert.equal(await hs[1].pause('looking at it'), true);
  const all = new Map<string, WorkflowExecutionInfo>();
  for await (const w of client.list({ workflowType: 'pausable' })) all.set(w.workflowId, w);
  assert.equal(all.size, 3);
  const p = all.get('pausable-1')!.paused;
  assert.ok(p !== null, 'the paused run has paused');
  assert.ok(p.at instanceof Date);
  assert.equal(typeof p.by, 'string');
  assert.equal(p.reason, 'looking at it');
  assert.equal(all.get('pausable-0')!.paused, null);
  assert.equal(all.get('pausable-2')!.paused, null);
  const ids = async (paused: boolean): Promise<string[]> => {
    const r: string[] = [];
    for await (const w of client.list({ workflowType: 'pausable', paused, pageSize: 1 })) r.push(w.workflowId);
    return r;
  };
  assert.deepEqual(await ids(true), ['pausable-1']);
  assert.deepEqual(await ids(false), ['pausable-2', 'pausable-0']);
  assert.equal(await hs[1].resume(), true);
  assert.deepEqual(await ids(true), []);
  for (const h of hs) await h.terminate('done');
});

test('reset and restart make new runs that the handles follow', async () => {
  const h = await client.start('invoice', { invoiceId: 7 }, { workflowId: 'invoice-7' });
  await decide(client.taskQueue, [{ decisionType: 'FailWorkflowExecution', reason: 'bug in the decider' }]);
  await assert.rejects(h.result(), WorkflowFailedError);
  const r = await h.reset('decider fixed');
  assert.notEqual(r.runId, h.runId);
  assert.equal((await r.describe()).status, 'running');
  await decide(client.taskQueue, [{ decisionType: 'CompleteWorkflowExecution', result: 'paid' }]);
  assert.equal(await r.result(), 'paid');
  const s = await h.restart('invoice 8 was meant', { input: { invoiceId: 8 } });
  const first = (await s.history())[0];
  assert.deepEqual(first.attributes.input, { invoiceId: 8 });
  assert.equal(first.attributes.initiator, 'Restart');
  // The handle pinned to the first run still names it.
  const pinned = client.getHandle('invoice-7', h.runId ?? undefined);
  assert.equal((await pinned.describe()).status, 'failed');
  await s.terminate('done');
});

test('statements are prepared once a connection with a pg pool, sent as text otherwise', async () => {
  const prepared = async (p: ReturnType<typeof makePool>): Promise<string[]> =>
    (await p.query("SELECT statement FROM pg_prepared_statements WHERE name LIKE 'durable_pg_%' ORDER BY 1"))
      .rows.map((r: { statement: string }) => r.statement);
  const one = makePool(1);
  try {
    const c = new Client({ pool: asPool(one) });
    const h1 = await c.start('prep', null);
    const h2 = await c.start('prep', null);
    assert.notEqual(h1.runId, h2.runId);
    const names = await prepared(one);
    assert.equal(names.filter((t) => t.includes('durable.start_workflow')).length, 1, 'one statement for both starts');
    // A start with searchAttributes is another text, so another statement.
    await c.start('prep', null, { searchAttributes: { K: 1 } });
    assert.equal((await prepared(one)).filter((t) => t.includes('durable.start_workflow')).length, 2);
  } finally {
    await one.end();
  }
  // Turned off, or through a pool that is not pg's: plain text.
  const off = makePool(1);
  try {
    await new Client({ pool: asPool(off), preparedStatements: false }).start('prep', null);
    assert.deepEqual(await prepared(off), []);
    const texts: string[] = [];
    const wrapper: PoolLike = {
      query: (text: string, values?: unknown[]) => {
        texts.push(text);
        return off.query(text, values);
      },
      connect: () => off.connect(),
      end: async () => undefined,
    };
    await new Client({ pool: wrapper }).start('prep', null);
    assert.ok(texts.some((t) => t.includes('durable.start_workflow')));
    assert.deepEqual(await prepared(off), []);
  } finally {
    await off.end();
  }
});

test('describe() has function and functionPinned for a type a SQL function runs', async () => {
  await pool.query(`
    CREATE ROLE describe_app;
    CREATE SCHEMA describe_app AUTHORIZATION describe_app;
    CREATE FUNCTION describe_app.remind(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
    BEGIN
        RETURN durable.wait_signal('go');
    END $$;
    CREATE FUNCTION describe_app.remind_v2(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
    BEGIN
        RETURN durable.wait_signal('go');
    END $$;
    GRANT EXECUTE ON FUNCTION describe_app.remind(jsonb), describe_app.remind_v2(jsonb) TO describe_app;
  `);
  await pool.query("SELECT durable.register_workflow('remind', 'describe_app.remind(jsonb)', $1, run_as => 'describe_app')",
    [client.taskQueue]);
  const kept = await client.start('remind', null, { workflowId: 'describe-kept' });
  await pool.query('SELECT durable.run_tasks()');
  let d = await kept.describe();
  assert.equal(d.function, 'describe_app.remind(jsonb)');
  assert.equal(d.functionPinned, false);
  await pool.query(`SELECT durable.register_workflow('remind', 'describe_app.remind_v2(jsonb)', $1,
    run_as => 'describe_app', running => 'keep')`, [client.taskQueue]);
  d = await kept.describe();
  const fn: string | undefined = d.function;
  const pinned: boolean | undefined = d.functionPinned;
  assert.equal(fn, 'describe_app.remind(jsonb)');
  assert.equal(pinned, true);
  const fresh = await client.start('remind', null, { workflowId: 'describe-new' });
  d = await fresh.describe();
  assert.equal(d.function, 'describe_app.remind_v2(jsonb)');
  assert.equal(d.functionPinned, false);
  // A type no function runs: neither field.
  const other = await client.start('order', null, { workflowId: 'describe-external' });
  d = await other.describe();
  assert.equal(d.function, undefined);
  assert.equal(d.functionPinned, undefined);
  for (const h of [kept, fresh, other]) await h.terminate('test over');
});

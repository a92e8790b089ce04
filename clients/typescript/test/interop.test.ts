/**
 * One engine, one history format: TypeScript code and SQL code call each other.
 * A TypeScript workflow calls a SQL activity and a SQL child workflow (both
 * registered with durable.register_activity / register_workflow, run by
 * durable.run_tasks() in a loop of this test, as the executors would); a SQL
 * workflow (PL/pgSQL, durable.activity(...)) calls a TypeScript activity served
 * by the SDK's activity worker, and catches its failure as WF007; its history
 * is event for event that of the same workflow written in TypeScript.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ApplicationFailure, Client, Worker, WorkflowContext, WorkflowFunction, ActivityFunction, ChildWorkflowFailure,
  ActivityFailure, HistoryEvent,
} from '../src/index';
import { MemoryLogger, asPool, makePool, sleep } from './helpers';

const pool = makePool();
const client = new Client({ pool: asPool(pool), taskQueue: 'interop' });
let worker: Worker | undefined;
let running = true;
let executorLoop: Promise<void> | undefined;
const tsCalls: string[] = [];
const loopErrors: string[] = [];

before(async () => {
  // The SQL side: functions in schema app, run as the ordinary role interop_app.
  await pool.query(`
    CREATE ROLE interop_app;
    CREATE SCHEMA app;
    GRANT USAGE ON SCHEMA app TO interop_app;
    -- A SQL activity: doubles a number; refuses a negative one.
    CREATE FUNCTION app.sql_double(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
    BEGIN
        IF (input->>'n')::int < 0 THEN
            RAISE EXCEPTION 'negative: %', input->>'n' USING ERRCODE = '22003';
        END IF;
        RETURN jsonb_build_object('doubled', (input->>'n')::int * 2, 'by', 'sql');
    END $$;
    -- A SQL child workflow: one SQL activity, then its result with the input.
    CREATE FUNCTION app.sql_child(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
    DECLARE d jsonb;
    BEGIN
        d := durable.activity('sqlDouble', jsonb_build_object('n', input->'n'),
                              '{"retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 1}}');
        RETURN jsonb_build_object('child', durable.workflow_info()->>'workflowId', 'doubled', d->'doubled');
    END $$;
    -- A SQL workflow calling TypeScript activities: tsGreet, then tsRefuse, whose
    -- failure (WF007) it catches.
    CREATE FUNCTION app.sql_greeter(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
    DECLARE g jsonb; refused text;
    BEGIN
        g := durable.activity('tsGreet', jsonb_build_object('name', input->>'name'),
                              '{"startToCloseTimeoutSeconds": 30}');
        IF input ? 'refuse' THEN
            BEGIN
                PERFORM durable.activity('tsRefuse', NULL, '{"retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 1}}');
            EXCEPTION WHEN SQLSTATE 'WF007' THEN
                refused := SQLERRM;
            END;
        END IF;
        RETURN jsonb_build_object('greeting', g, 'refused', refused);
    END $$;
    -- A workflow with a change of its code (durable.get_version), the twin of
    -- tsVersioned below: the two take over each other's runs.
    CREATE FUNCTION app.sql_versioned(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
    DECLARE v int; g jsonb; again int;
    BEGIN
        v := durable.get_version('welcome', -1, 1);
        IF v = 1 THEN
            g := durable.activity('tsGreet', jsonb_build_object('name', input->>'name'),
                                  '{"startToCloseTimeoutSeconds": 30}');
        END IF;
        PERFORM durable.wait_signal('go');
        again := durable.get_version('welcome', -1, 1);
        RETURN jsonb_build_object('version', v, 'again', again, 'greeting', g, 'finishedBy', 'sql');
    END $$;
    GRANT EXECUTE ON FUNCTION app.sql_double(jsonb), app.sql_child(jsonb), app.sql_greeter(jsonb),
        app.sql_versioned(jsonb) TO interop_app;
    SELECT durable.register_activity('sqlDouble', 'app.sql_double(jsonb)', 'interop', run_as => 'interop_app');
    SELECT durable.register_workflow('sqlChild', 'app.sql_child(jsonb)', 'interop', run_as => 'interop_app');
    SELECT durable.register_workflow('sqlGreeter', 'app.sql_greeter(jsonb)', 'interop', run_as => 'interop_app');
  `);
  // The executors' part: run the ready SQL tasks every 20 ms (the test cluster
  // has its background workers off).
  executorLoop = (async () => {
    while (running) {
      await pool.query('SELECT durable.run_tasks()').catch((e: unknown) => { loopErrors.push(String(e)); });
      await sleep(20);
    }
  })();

  const tsParent: WorkflowFunction = async (ctx: WorkflowContext, n: number) => {
    const act = await ctx.activity<{ doubled: number; by: string }>('sqlDouble', { n });
    const child = await ctx.child<{ child: string; doubled: number }>('sqlChild', { n: n + 1 });
    let activityFailure = '';
    try {
      await ctx.activity('sqlDouble', { n: -1 }, { retryPolicy: { maximumAttempts: 1 } });
    } catch (e) {
      assert.ok(e instanceof ActivityFailure);
      activityFailure = e.reason;
    }
    let childFailure = '';
    try {
      await ctx.child('sqlChild', { n: -5 }, { workflowId: 'bad-sql-child' });
    } catch (e) {
      assert.ok(e instanceof ChildWorkflowFailure);
      childFailure = `${e.status}:${e.reason}`;
    }
    return { act, child, activityFailure, childFailure };
  };
  // The TypeScript twin of app.sql_greeter (without the refusal).
  const tsGreeter: WorkflowFunction = async (ctx: WorkflowContext, input: { name: string }) => {
    const g = await ctx.activity('tsGreet', { name: input.name }, { startToCloseTimeout: '30s' });
    return { greeting: g, refused: null };
  };
  // The TypeScript twin of app.sql_versioned.
  const versioned: WorkflowFunction = async (ctx: WorkflowContext, input: { name: string }) => {
    const version = ctx.getVersion('welcome', -1, 1);
    const greeting = version === 1
      ? await ctx.activity('tsGreet', { name: input.name }, { startToCloseTimeout: '30s' }) : null;
    await ctx.waitSignal('go');
    const again = ctx.getVersion('welcome', -1, 1);
    return { version, again, greeting, finishedBy: 'ts' };
  };
  const activities: Record<string, ActivityFunction> = {
    tsGreet: (input: { name: string }) => {
      tsCalls.push(`greet ${input.name}`);
      return `hello ${input.name} from TypeScript`;
    },
    tsRefuse: () => {
      tsCalls.push('refuse');
      throw new ApplicationFailure('not today', { type: 'Refused' });
    },
  };
  worker = new Worker({
    pool: asPool(pool), taskQueue: 'interop', pollWait: 1000, workflows: { tsParent, tsGreeter, versioned }, activities,
    logger: new MemoryLogger(),
  });
  void worker.run();
});

after(async () => {
  await worker?.shutdown().catch(() => undefined);
  running = false;
  await executorLoop;
  await pool.end();
});

/** The history as "EventType" lines, plus the activity type and id where scheduled. */
function shape(events: HistoryEvent[]): string[] {
  return events.map((e) => e.eventType === 'ActivityTaskScheduled'
    ? `${e.eventType} ${String(e.attributes.activityId)} ${String(e.attributes.activityType)}`
    : e.eventType);
}

test('a TypeScript workflow calls a SQL activity and a SQL child workflow, and sees their failures', async () => {
  const h = await client.start('tsParent', 20, { workflowId: 'ts-parent-1' });
  const r = await h.result({ timeout: 20000 });
  assert.deepEqual(r, {
    act: { doubled: 40, by: 'sql' },
    child: { child: 'ts-parent-1/2', doubled: 42 },
    activityFailure: '22003',
    childFailure: 'failed:WF007',
  });
  // The SQL child's own run: its result, its parent, its activity in its history.
  const c = client.getHandle('ts-parent-1/2');
  const d = await c.describe();
  assert.equal(d.status, 'completed');
  assert.equal((d.parent as { workflowId?: string } | null)?.workflowId, 'ts-parent-1');
  assert.ok(shape(await c.history()).includes('ActivityTaskScheduled 1 sqlDouble'));
  // The parent's history numbers the calls as SQL workflows do: activity 1, child 2, activity 3, child 4.
  const evs = await h.history();
  assert.deepEqual(evs.filter((e) => e.eventType === 'ActivityTaskScheduled').map((e) => e.attributes.activityId), ['1', '3']);
  assert.deepEqual(evs.filter((e) => e.eventType === 'StartChildWorkflowExecutionInitiated')
    .map((e) => e.attributes.workflowId), ['ts-parent-1/2', 'bad-sql-child']);
});

test('a SQL workflow calls TypeScript activities; its history is that of the same workflow in TypeScript', async () => {
  const hs = await client.start('sqlGreeter', { name: 'Ann' }, { workflowId: 'sql-greeter-1' });
  assert.deepEqual(await hs.result({ timeout: 20000 }), { greeting: 'hello Ann from TypeScript', refused: null });
  const ht = await client.start('tsGreeter', { name: 'Bob' }, { workflowId: 'ts-greeter-1' });
  assert.deepEqual(await ht.result({ timeout: 20000 }), { greeting: 'hello Bob from TypeScript', refused: null });
  const sqlShape = shape(await hs.history());
  assert.deepEqual(sqlShape, shape(await ht.history()));
  assert.ok(sqlShape.includes('ActivityTaskScheduled 1 tsGreet'), sqlShape.join(', '));
  // The activity's attributes, written by PL/pgSQL or by the SDK, are the same.
  const sched = async (h: typeof hs): Promise<Record<string, unknown>> => {
    const a = (await h.history()).find((e) => e.eventType === 'ActivityTaskScheduled')!.attributes;
    const { input: _i, decisionTaskCompletedEventId: _d, retryPolicy: _r, ...rest } = a as Record<string, unknown>;
    return rest;
  };
  assert.deepEqual(await sched(hs), await sched(ht));
  // A TypeScript activity's failure is WF007 in SQL, naming the activity and its reason.
  const hr = await client.start('sqlGreeter', { name: 'Cy', refuse: true }, { workflowId: 'sql-greeter-2' });
  const r = await hr.result({ timeout: 20000 }) as { greeting: string; refused: string };
  assert.equal(r.greeting, 'hello Cy from TypeScript');
  assert.match(r.refused, /tsRefuse/);
  assert.match(r.refused, /Refused/);
  assert.deepEqual(tsCalls, ['greet Ann', 'greet Bob', 'greet Cy', 'refuse']);
  assert.deepEqual(loopErrors, [], 'durable.run_tasks() raised nothing');
});

test('a version marker of SQL get_version() is understood by TypeScript getVersion(), and the other way round', async () => {
  const register = "SELECT durable.register_workflow('versioned', 'app.sql_versioned(jsonb)', 'interop', run_as => 'interop_app')";
  const unregister = "SELECT durable.unregister_workflow('versioned', 'interop')";
  const blocked = async (id: string): Promise<void> => {
    for (let i = 0; i < 750; i++) {
      const n = (await client.getHandle(id).history()).filter((e) => e.eventType === 'DecisionTaskCompleted').length;
      if (n >= 2) return;
      await sleep(20);
    }
    throw new Error(`${id} did not reach its signal wait`);
  };
  const marker = async (id: string): Promise<unknown[]> => (await client.getHandle(id).history())
    .filter((e) => e.eventType === 'MarkerRecorded').map((e) => [e.attributes.markerName, e.attributes.details]);

  // SQL records the marker, TypeScript finishes the run.
  await pool.query(register);
  const a = await client.start('versioned', { name: 'Sql' }, { workflowId: 'versioned-sql-first' });
  await blocked(a.workflowId);
  await pool.query(unregister);
  await a.signal('go');
  assert.deepEqual(await a.result({ timeout: 20000 }),
    { version: 1, again: 1, greeting: 'hello Sql from TypeScript', finishedBy: 'ts' });

  // TypeScript records the marker, SQL finishes the run.
  const b = await client.start('versioned', { name: 'Ts' }, { workflowId: 'versioned-ts-first' });
  await blocked(b.workflowId);
  await pool.query(register);
  await b.signal('go');
  assert.deepEqual(await b.result({ timeout: 20000 }),
    { version: 1, again: 1, greeting: 'hello Ts from TypeScript', finishedBy: 'sql' });

  // The same marker, whoever wrote it.
  const expected = [['Version', { id: 1, changeId: 'welcome', version: 1 }]];
  assert.deepEqual(await marker(a.workflowId), expected);
  assert.deepEqual(await marker(b.workflowId), expected);
  assert.equal(worker?.workflowWorker?.stats.nonDeterministic, 0);
  assert.deepEqual(loopErrors, [], 'durable.run_tasks() raised nothing');
});

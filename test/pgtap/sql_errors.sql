-- Bad arguments of the SQL-workflow functions: the registration functions and
-- run_tasks() raise at once and change nothing; the calls of a workflow function raise
-- inside it, so that the workflow fails with the SQLSTATE as reason and the message as
-- details.message.
BEGIN;
SELECT plan(22);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

CREATE ROLE err_app;
CREATE SCHEMA app;
GRANT USAGE ON SCHEMA app TO err_app;

-- app.call runs the statement of its input, so that each case below is one workflow.
CREATE FUNCTION app.call(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE input->>'sql';
    RETURN 'null';
END $$;
CREATE FUNCTION app.echo(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT input $$;
SELECT durable.register_workflow('call', 'app.call(jsonb)', run_as => 'err_app');
SELECT durable.register_activity('echo', 'app.echo(jsonb)', run_as => 'err_app');

-- The reason and message with which the workflow running sql failed.
CREATE FUNCTION pg_temp.failure(wid text, sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM durable.start_workflow('call', jsonb_build_object('sql', sql), wid);
    PERFORM durable.run_tasks();
    RETURN (SELECT format('%s: %s', a->>'reason', a->'details'->>'message')
              FROM (SELECT t.attrs(wid, 'WorkflowExecutionFailed') AS a) x);
END $$;

-- Registration: checked before anything is written.
SELECT throws_ok($$ SELECT durable.register_workflow(NULL, 'app.call(jsonb)', run_as => 'err_app') $$,
    '22004', 'workflow_type must not be null', 'register_workflow: a null type');
SELECT throws_ok($$ SELECT durable.register_activity('x', NULL, run_as => 'err_app') $$,
    '22004', 'function must not be null', 'register_activity: a null function');
SELECT throws_ok($$ SELECT durable.register_workflow('x', 'app.call(jsonb)', task_queue => '', run_as => 'err_app') $$,
    '22023', 'task_queue must not be empty', 'register_workflow: an empty task queue');
SELECT throws_ok($$ SELECT durable.unregister_workflow(NULL) $$,
    '22004', 'workflow_type must not be null', 'unregister_workflow: a null type');
SELECT throws_ok($$ SELECT durable.unregister_activity('echo', NULL) $$,
    '22004', 'task_queue must not be null', 'unregister_activity: a null task queue');
SELECT is(durable.unregister_workflow('never-registered'), false,
    'unregister_workflow of a type that is not registered: false');
SELECT is((SELECT count(*) FROM durable.registrations)::int, 2, 'the errors registered nothing');

-- run_tasks
SELECT throws_ok($$ SELECT durable.run_tasks(0) $$,
    '22023', 'max_tasks must be greater than zero', 'run_tasks(0)');
-- (a role that may call it: durable_admin)
GRANT durable_admin TO err_app;
SELECT is(pg_temp.failure('nested', 'SELECT durable.run_tasks()'),
    '55000: durable.run_tasks() cannot be called inside a workflow function',
    'run_tasks() inside a workflow function: 55000');

REVOKE durable_admin FROM err_app;

-- The calls of a workflow function.
SELECT is(pg_temp.failure('a-null', 'SELECT durable.activity(NULL)'),
    '22004: activity_type must not be null', 'activity(): a null type');
SELECT is(pg_temp.failure('a-opts', $q$SELECT durable.activity('echo', '1', '[1]')$q$),
    '22023: options must be a JSON object', 'activity(): options not an object');
SELECT is(pg_temp.failure('a-bad', $q$SELECT durable.activity('echo', '1', '{"startToCloseTimeoutSeconds": -1}')$q$),
    '22023: options.startToCloseTimeoutSeconds must not be negative', 'activity(): a bad option value names it');
SELECT is(pg_temp.failure('await-bad', $q$SELECT durable.await('7')$q$),
    '22023: handle "7" is not an activity started by this workflow', 'await(): a handle never returned');
SELECT is(pg_temp.failure('await-null', 'SELECT durable.await(NULL)'),
    '22004: handle must not be null', 'await(): a null handle');
SELECT is(pg_temp.failure('sleep-null', 'SELECT durable.sleep(NULL)'),
    '22004: duration must not be null', 'sleep(): a null duration');
SELECT is(pg_temp.failure('sleep-neg', $q$SELECT durable.sleep('-1 second')$q$),
    '22023: duration must not be negative', 'sleep(): a negative duration');
SELECT is(pg_temp.failure('ws-null', 'SELECT durable.wait_signal(NULL)'),
    '22004: signal_name must not be null', 'wait_signal(): a null name');
SELECT is(pg_temp.failure('ws-neg', $q$SELECT durable.wait_signal('go', '-5 seconds')$q$),
    '22023: timeout must not be negative', 'wait_signal(): a negative timeout');
SELECT is(pg_temp.failure('cw-null', 'SELECT durable.child_workflow(NULL)'),
    '22004: workflow_type must not be null', 'child_workflow(): a null type');
SELECT is(pg_temp.failure('cw-opt', $q$SELECT durable.child_workflow('kid', NULL, '{"parentClosePolicy": "SOMETIMES"}')$q$),
    '22023: invalid options.parentClosePolicy "SOMETIMES"', 'child_workflow(): a bad option names it');
SELECT is(pg_temp.failure('cw-unknown', $q$SELECT durable.child_workflow('kid', NULL, '{"input": 1}')$q$),
    '22023: options has an unknown field "input"', 'child_workflow(): an option it does not take');

-- None of those failures scheduled anything.
SELECT is((SELECT count(*) FROM durable.activities)::int, 0, 'no activity was scheduled by a failed call');

SELECT * FROM finish();
ROLLBACK;

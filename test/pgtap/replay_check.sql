-- durable.replay_check() (docs/sql-workflows.md "Checking new code against running
-- workflows"): new code of a workflow type replayed against the histories of its runs,
-- inside the transaction that creates it, writing nothing; its arguments and who may
-- call it.
BEGIN;
SELECT plan(27);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

CREATE ROLE rc_app;
CREATE ROLE rc_deployer;  GRANT durable_client TO rc_deployer;  GRANT rc_app TO rc_deployer;
CREATE ROLE rc_reader;    GRANT durable_client TO rc_reader;
CREATE ROLE rc_nobody;
CREATE SCHEMA app;
GRANT USAGE ON SCHEMA app TO PUBLIC;
CREATE TABLE app.written (v text);
GRANT INSERT, SELECT ON app.written TO rc_app;
CREATE FUNCTION app.echo(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT input $$;
SELECT durable.register_activity('echo', 'app.echo(jsonb)', run_as => 'rc_app');

CREATE FUNCTION app.ord(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM durable.activity('echo', '"a"');
    PERFORM durable.sleep((input->>'wait')::interval);
    RETURN '"v1"';
END $$;
SELECT durable.register_workflow('ord', 'app.ord(jsonb)', run_as => 'rc_app');
SELECT durable.start_workflow('ord', '{"wait": "1 second"}', 'ord-done') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 3, 'ord-done sleeps');
SELECT t.at('2026-01-01 00:00:01+00');
SELECT is(durable.tick() + durable.run_tasks(), 2, 'ord-done completes');
SELECT t.at('2026-01-01 00:01:00+00');
SELECT durable.start_workflow('ord', '{"wait": "1 hour"}', 'ord-1') IS NOT NULL AS started;
SELECT t.at('2026-01-01 00:02:00+00');
SELECT durable.start_workflow('ord', '{"wait": "1 hour"}', 'ord-2') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 6, 'ord-1 and ord-2 sleep');
CREATE TEMP TABLE before_history AS SELECT * FROM durable.history;
CREATE TEMP TABLE before_runs AS SELECT run_id, last_event_id, decision_scheduled_id FROM durable.runs;

-- 1. The unchanged function passes.
SELECT results_eq($$ SELECT workflow_id, ok, event_id, history, code, message
                       FROM durable.replay_check('ord', 'app.ord(jsonb)') $$,
    $$ VALUES ('ord-2', true, NULL::bigint, NULL, NULL, NULL), ('ord-1', true, NULL, NULL, NULL, NULL) $$,
    'the unchanged function replays every running run, the latest first: ok');

-- 2. A changed function, inside the transaction that creates it: the divergence.
SAVEPOINT deploy;
CREATE OR REPLACE FUNCTION app.ord(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO app.written VALUES ('by the check');
    PERFORM durable.activity('audit', '"first"');
    PERFORM durable.activity('echo', '"a"');
    PERFORM durable.sleep((input->>'wait')::interval);
    RETURN '"v2"';
END $$;
SELECT results_eq($$ SELECT workflow_id, ok, event_id, history, code, message
                       FROM durable.replay_check('ord', 'app.ord(jsonb)') $$,
    $$ VALUES ('ord-2', false, 5::bigint, 'activity echo', 'activity audit',
               'command 1 is activity echo in history, but the workflow issued activity audit'),
              ('ord-1', false, 5::bigint, 'activity echo', 'activity audit',
               'command 1 is activity echo in history, but the workflow issued activity audit') $$,
    'an activity added before the runs'' point: the event where they part, what history has and what the code did');
SELECT is((SELECT count(*) FROM app.written), 0::bigint, 'what the function wrote was rolled back');
ROLLBACK TO deploy;
SELECT is((SELECT bool_and(ok) FROM durable.replay_check('ord', 'app.ord(jsonb)')), true,
    'after the rollback the old function is back, and passes');

-- 3. New code that keeps the old branch with get_version passes, and so does one that
-- adds commands past the runs' point (they are new decisions, not written).
SAVEPOINT deploy;
CREATE FUNCTION app.ord_v2(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    IF durable.get_version('audit', -1, 1) = 1 THEN
        PERFORM durable.activity('audit', '"first"');
    END IF;
    PERFORM durable.activity('echo', '"a"');
    PERFORM durable.sleep((input->>'wait')::interval);
    PERFORM durable.activity('echo', '"after"');
    RETURN '"v2"';
END $$;
SELECT is((SELECT array_agg(ok) FROM durable.replay_check('ord', 'app.ord_v2(jsonb)', only_running => false)),
    '{t,t,f}', 'with only_running false the closed run too: it completed where this code runs an activity');
SELECT is((SELECT message FROM durable.replay_check('ord', 'app.ord_v2(jsonb)', only_running => false)
            WHERE workflow_id = 'ord-done'),
    'the workflow issued activity echo as command 3, which history does not have',
    'the closed run: a command where its history shows the code had moved on');
SELECT is((SELECT count(*) FROM durable.replay_check('ord', 'app.ord_v2(jsonb)', max_runs => 1)), 1::bigint,
    'max_runs bounds the runs checked');
SELECT is((SELECT workflow_id FROM durable.replay_check('ord', 'app.ord_v2(jsonb)', max_runs => 1)), 'ord-2',
    'the latest first');
ROLLBACK TO deploy;

-- 4. Code that waits before commands of history.
SAVEPOINT deploy;
CREATE FUNCTION app.ord_wait(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM durable.wait_signal('go');
    PERFORM durable.activity('echo', '"a"');
    RETURN NULL;
END $$;
SELECT results_eq($$ SELECT DISTINCT ok, event_id, history, code, message
                       FROM durable.replay_check('ord', 'app.ord_wait(jsonb)') $$,
    $$ VALUES (false, 5::bigint, 'activity echo', 'waits before it',
               'history has activity echo as command 1, which the workflow did not issue') $$,
    'a function that waits for a signal before the commands of history');
ROLLBACK TO deploy;

-- 5. Nothing was written by any of it.
SELECT results_eq($$ SELECT * FROM durable.history ORDER BY run_id, event_id $$,
    $$ SELECT * FROM before_history ORDER BY run_id, event_id $$, 'history is unchanged');
SELECT results_eq($$ SELECT run_id, last_event_id, decision_scheduled_id FROM durable.runs ORDER BY run_id $$,
    $$ SELECT * FROM before_runs ORDER BY run_id $$, 'the runs are unchanged');

-- 6. Arguments.
SELECT throws_ok($$ SELECT * FROM durable.replay_check('ord', 'app.ord(jsonb)', max_runs => 0) $$,
    '22023', 'max_runs must be between 1 and 100000', 'max_runs 0: 22023');
SELECT throws_ok($$ SELECT * FROM durable.replay_check('ord', 'app.ord(jsonb)', max_runs => 100001) $$,
    '22023', 'max_runs must be between 1 and 100000', 'max_runs over 100000: 22023');
SELECT throws_ok($$ SELECT * FROM durable.replay_check('ord', NULL) $$,
    '22004', 'function must not be null', 'a null function: 22004');
SELECT throws_ok($$ SELECT * FROM durable.replay_check(NULL, 'app.ord(jsonb)') $$,
    '22004', 'workflow_type must not be null', 'a null workflow_type: 22004');
SELECT throws_ok($$ SELECT * FROM durable.replay_check('ord', 'pg_catalog.now()') $$,
    '22023', NULL, 'a function that is not f(jsonb) RETURNS jsonb: 22023');
SELECT throws_ok($$ SELECT * FROM durable.replay_check('ord', 'app.ord(jsonb)', 'nowhere') $$,
    'WF002', NULL, 'an unknown namespace: WF002');
SELECT is((SELECT count(*) FROM durable.replay_check('nothing', 'app.ord(jsonb)')), 0::bigint,
    'a type without runs: no rows');

-- A run on a queue where no SQL function runs the type is not replayed.
SAVEPOINT ext;
SELECT durable.start_workflow('ord', '{"wait": "1 hour"}', 'ord-ext', task_queue => 'external') IS NOT NULL AS started;
SELECT results_eq($$ SELECT ok, message FROM durable.replay_check('ord', 'app.ord(jsonb)')
                      WHERE workflow_id = 'ord-ext' $$,
    $$ VALUES (NULL::boolean, 'workflow type "ord" is not registered on task queue "external": no SQL function runs it') $$,
    'a run whose queue has no registration of the type: ok NULL, and why');
ROLLBACK TO ext;

-- 7. Who may call it.
SELECT durable.create_namespace('closed');
SET LOCAL ROLE rc_deployer;
SELECT is((SELECT count(*) FROM durable.replay_check('ord', 'app.ord(jsonb)')), 2::bigint,
    'a client that has the privileges of the run_as role checks the runs');
SELECT throws_ok($$ SELECT * FROM durable.replay_check('ord', 'app.ord(jsonb)', 'closed') $$,
    '42501', 'permission denied for namespace "closed": privilege client required',
    'a role without the namespace gets the error of describe_workflow');
RESET ROLE;
SET LOCAL ROLE rc_reader;
SELECT throws_ok($$ SELECT * FROM durable.replay_check('ord', 'app.ord(jsonb)') $$,
    '42501', 'permission denied to run code as role "rc_app"',
    'a client without the privileges of the run_as role may not run code as it');
RESET ROLE;
SET LOCAL ROLE rc_nobody;
SELECT throws_ok($$ SELECT * FROM durable.replay_check('ord', 'app.ord(jsonb)') $$,
    '42501', NULL, 'a role outside the client group: 42501');
RESET ROLE;
REVOKE EXECUTE ON FUNCTION app.ord(jsonb) FROM PUBLIC;
SET LOCAL ROLE rc_deployer;
SELECT throws_ok($$ SELECT * FROM durable.replay_check('ord', 'app.ord(jsonb)') $$,
    '42501', 'permission denied for function app.ord(jsonb)', 'EXECUTE on the function is required');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;

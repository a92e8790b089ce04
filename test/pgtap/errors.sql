-- Errors (docs/errors.md): each bad argument raises its SQLSTATE with a message
-- that names it, and writes nothing.
BEGIN;
SELECT plan(47);

SET LOCAL durable.test_time = '2026-04-01 00:00:00+00';
SELECT durable.start_workflow('t', NULL, 'here') IS NOT NULL AS started;

-- Everything a call could write, summed, to show that a failed call wrote nothing.
CREATE FUNCTION pg_temp.footprint() RETURNS text LANGUAGE sql AS $$
    SELECT format('runs=%s history=%s ready=%s timers=%s buffered=%s',
        (SELECT count(*) FROM durable.runs),
        (SELECT count(*) FROM durable.history),
        (SELECT count(*) FROM durable.ready_tasks),
        (SELECT count(*) FROM durable.timers),
        (SELECT count(*) FROM durable.buffered_events))
$$;
SELECT pg_temp.footprint() AS before \gset

-- start_workflow
SELECT throws_ok($$SELECT durable.start_workflow(NULL)$$, '22004', 'workflow_type must not be null');
SELECT throws_ok($$SELECT durable.start_workflow('')$$, '22023', 'workflow_type must not be empty');
SELECT throws_ok($$SELECT durable.start_workflow(repeat('x', 1001))$$, '22023', 'workflow_type is too long');
SELECT throws_ok($$SELECT durable.start_workflow('t', workflow_id => '')$$, '22023', 'workflow_id must not be empty');
SELECT throws_ok($$SELECT durable.start_workflow('t', workflow_id => repeat('x', 1001))$$, '22023', 'workflow_id is too long');
SELECT throws_ok($$SELECT durable.start_workflow('t', task_queue => NULL)$$, '22004', 'task_queue must not be null');
SELECT throws_ok($$SELECT durable.start_workflow('t', task_queue => '')$$, '22023', 'task_queue must not be empty');
SELECT throws_ok($$SELECT durable.start_workflow('t', namespace => '')$$, '22023', 'namespace must not be empty');
SELECT throws_ok($$SELECT durable.start_workflow('t', namespace => 'nowhere')$$, 'WF002', 'namespace "nowhere" does not exist');
SELECT throws_ok($$SELECT durable.start_workflow('t', id_reuse_policy => 'never')$$, '22023', 'invalid id_reuse_policy "never"');
SELECT throws_ok($$SELECT durable.start_workflow('t', id_reuse_policy => NULL)$$, '22004', 'id_reuse_policy must not be null');
SELECT throws_ok($$SELECT durable.start_workflow('t', execution_timeout => '-1s')$$, '22023', 'execution_timeout must not be negative');
SELECT throws_ok($$SELECT durable.start_workflow('t', run_timeout => '0')$$, '22023', 'run_timeout must be greater than zero');
SELECT throws_ok($$SELECT durable.start_workflow('t', decision_timeout => '-10s')$$, '22023', 'decision_timeout must not be negative');
SELECT throws_ok($$SELECT durable.start_workflow('t', delay => '-1s')$$, '22023', 'delay must not be negative');
SELECT throws_ok($$SELECT durable.start_workflow('t', memo => '1')$$, '22023', 'memo must be a JSON object');
SELECT throws_ok($$SELECT durable.start_workflow('t', cron_schedule => 'every day')$$, '22023', 'invalid cron_schedule "every day"');
SELECT throws_ok($$SELECT durable.start_workflow('t', cron_schedule => '')$$, '22023', 'cron_schedule must not be empty');
SELECT throws_ok($$SELECT durable.start_workflow('t', retry_policy => '{}')$$, '22023', 'retry_policy.initialIntervalInSeconds is required');
SELECT throws_ok($$SELECT durable.start_workflow('t', retry_policy => '{"initialIntervalInSeconds": 1, "maximumAttempts": 2, "jitter": 1}')$$,
                 '22023', 'retry_policy has an unknown field "jitter"');
SELECT throws_ok($$SELECT durable.start_workflow('t', NULL, 'here')$$, 'WF001', NULL, 'start of a running workflow_id: WF001');

-- signal_workflow
SELECT throws_ok($$SELECT durable.signal_workflow(NULL, 's')$$, '22004', 'workflow_id must not be null');
SELECT throws_ok($$SELECT durable.signal_workflow('here', NULL)$$, '22004', 'signal_name must not be null');
SELECT throws_ok($$SELECT durable.signal_workflow('here', '')$$, '22023', 'signal_name must not be empty');
SELECT throws_ok($$SELECT durable.signal_workflow('gone', 's')$$, 'WF002', 'workflow "gone" not found in namespace "default"');
SELECT throws_ok($$SELECT durable.signal_workflow('here', 's', namespace => 'nowhere')$$, 'WF002', 'namespace "nowhere" does not exist');
SELECT throws_ok($$SELECT durable.signal_workflow('here', 's', run_id => '00000000-0000-0000-0000-000000000001')$$,
                 'WF002', 'workflow "here" has no run 00000000-0000-0000-0000-000000000001 in namespace "default"');

-- cancel_workflow, terminate_workflow, describe_workflow, get_history, resolve_run_id
SELECT throws_ok($$SELECT durable.cancel_workflow(NULL)$$, '22004', 'workflow_id must not be null');
SELECT throws_ok($$SELECT durable.cancel_workflow('gone')$$, 'WF002', 'workflow "gone" not found in namespace "default"');
SELECT throws_ok($$SELECT durable.cancel_workflow('here', namespace => NULL)$$, '22004', 'namespace must not be null');
SELECT throws_ok($$SELECT durable.terminate_workflow('')$$, '22023', 'workflow_id must not be empty');
SELECT throws_ok($$SELECT durable.terminate_workflow('gone')$$, 'WF002', 'workflow "gone" not found in namespace "default"');
SELECT throws_ok($$SELECT durable.describe_workflow('gone')$$, 'WF002', 'workflow "gone" not found in namespace "default"');
SELECT throws_ok($$SELECT * FROM durable.get_history('gone')$$, 'WF002', 'workflow "gone" not found in namespace "default"');
SELECT throws_ok($$SELECT durable.resolve_run_id(NULL)$$, '22004', 'workflow_id must not be null');

-- retry_policy, retry_delay, tick
SELECT throws_ok($$SELECT durable.retry_policy('1s')$$, '22023', 'a retry policy needs maximum_attempts or expiration_interval');
SELECT throws_ok($$SELECT durable.retry_policy(NULL, maximum_attempts => 1)$$, '22004', 'initial_interval must not be null');
SELECT throws_ok($$SELECT durable.retry_policy('1s', 0.5, maximum_attempts => 1)$$, '22023', 'backoff_coefficient must be at least 1');
SELECT throws_ok($$SELECT durable.retry_delay('{"initialIntervalInSeconds": 1, "maximumAttempts": 1}', 0)$$, '22023', 'failed_attempt must be at least 1');
SELECT throws_ok($$SELECT durable.tick(-1)$$, '22023', 'max_items must be greater than zero');

-- Limits: WF006.
SET LOCAL durable.max_payload_size = 1024;
SELECT throws_ok($$SELECT durable.start_workflow('t', jsonb_build_object('b', repeat('x', 2000)))$$, 'WF006', 'input is too large');
SELECT throws_ok($$SELECT durable.signal_workflow('here', 's', jsonb_build_object('b', repeat('x', 2000)))$$, 'WF006', 'input is too large');
SELECT throws_ok($$SELECT durable.terminate_workflow('here', 'r', jsonb_build_object('b', repeat('x', 2000)))$$, 'WF006', 'details is too large');
RESET durable.max_payload_size;

SELECT is(pg_temp.footprint(), :'before', 'none of the failed calls wrote anything');

-- WF003 after the run closed, and nothing written by those either.
SELECT durable.terminate_workflow('here');
SELECT pg_temp.footprint() AS closed \gset
SELECT throws_ok($$SELECT durable.signal_workflow('here', 's')$$, 'WF003', NULL, 'signal of a closed run: WF003');
SELECT throws_ok($$SELECT durable.cancel_workflow('here')$$, 'WF003', NULL, 'cancel of a closed run: WF003');
SELECT is(pg_temp.footprint(), :'closed', 'WF003 calls wrote nothing');

SELECT * FROM finish();
ROLLBACK;

-- Bounds (docs/errors.md "Bounds on durations and numbers"), so that no overflow
-- wedges a queue: every duration, coefficient
-- and count a user gives is bounded (at most 100 years = 36525 days; a
-- backoffCoefficient at most 1000) and refused with 22023 naming the argument or
-- field, changing nothing; every deadline and delay the engine computes
-- saturates, so that values an older version stored (simulated here by writing
-- them into the tables) never make a later poll, terminate, describe, retry or
-- purge fail.  The largest accepted values work end to end.
BEGIN;
SELECT plan(66);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';
-- Without the bound a poll would wait its 200 years: fail instead of hanging.
SET LOCAL statement_timeout = '60s';

-- The text of what sql returns, or "ERROR <sqlstate>: <message>".
CREATE FUNCTION pg_temp.try(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
    EXECUTE sql INTO r;
    RETURN COALESCE(NULLIF(r, ''), 'ok');
EXCEPTION WHEN OTHERS THEN
    RETURN format('ERROR %s: %s', SQLSTATE, SQLERRM);
END $$;

SELECT t.footprint() AS before \gset

-- -------------------------------------------------------------------------
-- The client API: start_workflow and signal_with_start.
SELECT throws_ok($$ SELECT durable.start_workflow('wf', NULL, 'w', run_timeout => '100000000 years') $$,
    '22023', 'run_timeout must be at most 100 years (36525 days)', 'start_workflow: run_timeout of 100000000 years');
SELECT throws_ok($$ SELECT durable.start_workflow('wf', NULL, 'w', run_timeout => '36526 days') $$,
    '22023', 'run_timeout must be at most 100 years (36525 days)', 'start_workflow: run_timeout one day over');
SELECT throws_ok($$ SELECT durable.start_workflow('wf', NULL, 'w', execution_timeout => '2147483647 days') $$,
    '22023', 'execution_timeout must be at most 100 years (36525 days)', 'start_workflow: execution_timeout');
SELECT throws_ok($$ SELECT durable.start_workflow('wf', NULL, 'w', decision_timeout => '178000000 years') $$,
    '22023', 'decision_timeout must be at most 100 years (36525 days)', 'start_workflow: decision_timeout');
SELECT throws_ok($$ SELECT durable.start_workflow('wf', NULL, 'w', delay => '2147483647 days') $$,
    '22023', 'delay must be at most 100 years (36525 days)', 'start_workflow: delay');
SELECT throws_ok($$ SELECT durable.start_workflow('wf', NULL, 'w', delay => '1000000 months -29999999 days') $$,
    '22023', 'delay must be at most 100 years (36525 days)', 'start_workflow: one day made of huge months and days');
SELECT throws_ok($$ SELECT durable.signal_with_start('wf', 'w', 's', run_timeout => '200 years') $$,
    '22023', 'run_timeout must be at most 100 years (36525 days)', 'signal_with_start: run_timeout');
SELECT throws_ok($$ SELECT durable.signal_with_start('wf', 'w', 's', delay => '-1 second') $$,
    '22023', 'delay must not be negative', 'signal_with_start: a negative delay');

-- Retry policies, as JSON (every field named) and from retry_policy().
SELECT throws_ok($$ SELECT durable.start_workflow('wf', NULL, 'w', retry_policy =>
        '{"initialIntervalInSeconds": 1e300, "maximumAttempts": 3}') $$,
    '22023', 'retry_policy.initialIntervalInSeconds must be at most 100 years (36525 days)', 'retryPolicy: initialIntervalInSeconds');
SELECT throws_ok($$ SELECT durable.start_workflow('wf', NULL, 'w', retry_policy =>
        '{"initialIntervalInSeconds": 1, "maximumIntervalInSeconds": 1e400, "maximumAttempts": 3}') $$,
    '22023', 'retry_policy.maximumIntervalInSeconds must be at most 100 years (36525 days)', 'retryPolicy: a maximum past float8');
SELECT throws_ok($$ SELECT durable.start_workflow('wf', NULL, 'w', retry_policy =>
        '{"initialIntervalInSeconds": 1, "expirationIntervalInSeconds": 3155760001}') $$,
    '22023', 'retry_policy.expirationIntervalInSeconds must be at most 100 years (36525 days)', 'retryPolicy: expirationIntervalInSeconds');
SELECT throws_ok($$ SELECT durable.start_workflow('wf', NULL, 'w', retry_policy =>
        '{"initialIntervalInSeconds": 1, "backoffCoefficient": 1e6, "maximumAttempts": 3}') $$,
    '22023', 'retry_policy.backoffCoefficient must be at most 1000', 'retryPolicy: backoffCoefficient');
SELECT throws_ok($$ SELECT durable.start_workflow('wf', NULL, 'w', retry_policy =>
        '{"initialIntervalInSeconds": 1, "maximumAttempts": 1e400}') $$,
    '22023', 'retry_policy.maximumAttempts must be at most 2147483647', 'retryPolicy: maximumAttempts past float8');
SELECT throws_ok($$ SELECT durable.start_workflow('wf', NULL, 'w', retry_policy =>
        '{"initialIntervalInSeconds": 1, "maximumAttempts": -3}') $$,
    '22023', 'retry_policy.maximumAttempts must not be negative', 'retryPolicy: negative maximumAttempts');
SELECT throws_ok($$ SELECT durable.start_workflow('wf', NULL, 'w', retry_policy =>
        '{"initialIntervalInSeconds": 1e-400, "maximumAttempts": 3}') $$,
    '22023', 'retry_policy.initialIntervalInSeconds must be greater than zero', 'retryPolicy: an initial interval below float8');
SELECT throws_ok($$ SELECT durable.retry_policy('200 years') $$,
    '22023', 'initial_interval must be at most 100 years (36525 days)', 'retry_policy(): initial_interval');
SELECT throws_ok($$ SELECT durable.retry_policy('1 second', 'NaN', maximum_attempts => 3) $$,
    '22023', 'backoff_coefficient must be at least 1', 'retry_policy(): a NaN coefficient');
SELECT throws_ok($$ SELECT durable.retry_policy('1 second', 'Infinity', maximum_attempts => 3) $$,
    '22023', 'backoff_coefficient must be at most 1000', 'retry_policy(): an infinite coefficient');
SELECT throws_ok($$ SELECT durable.retry_policy('1 second', 1000.5, maximum_attempts => 3) $$,
    '22023', 'backoff_coefficient must be at most 1000', 'retry_policy(): a coefficient over 1000');
SELECT throws_ok($$ SELECT durable.retry_policy('1 second', maximum_interval => '178000000 years', maximum_attempts => 3) $$,
    '22023', 'maximum_interval must be at most 100 years (36525 days)', 'retry_policy(): maximum_interval');
SELECT throws_ok($$ SELECT durable.retry_policy('1 second', expiration_interval => '36526 days') $$,
    '22023', 'expiration_interval must be at most 100 years (36525 days)', 'retry_policy(): expiration_interval');
SELECT throws_ok($$ SELECT durable.retry_delay('{"initialIntervalInSeconds": 1, "backoffCoefficient": 1e300, "maximumAttempts": 3}', 5) $$,
    '22023', 'retry_policy.backoffCoefficient must be at most 1000', 'retry_delay(): a policy over the bounds');

-- Namespaces: retention and the default activity retry policy.
SELECT throws_ok($$ SELECT durable.create_namespace('big', retention => '178000000 years') $$,
    '22023', 'retention must be at most 100 years (36525 days)', 'create_namespace: retention');
SELECT throws_ok($$ SELECT durable.create_namespace('big', retention => '1000000 months -29999999 days') $$,
    '22023', 'retention must be at most 100 years (36525 days)', 'create_namespace: a retention of huge months and days');
SELECT throws_ok($$ SELECT durable.alter_namespace('default', retention => '36526 days') $$,
    '22023', 'retention must be at most 100 years (36525 days)', 'alter_namespace: retention');
SELECT throws_ok($$ SELECT durable.alter_namespace('default', activity_retry_policy =>
        '{"initialIntervalInSeconds": 1, "maximumIntervalInSeconds": 1e12, "maximumAttempts": 3}') $$,
    '22023', 'activity_retry_policy.maximumIntervalInSeconds must be at most 100 years (36525 days)', 'alter_namespace: activity_retry_policy');

-- Polls: wait.
SELECT throws_ok($$ SELECT durable.poll_decision_task('q', wait => '200 years') $$,
    '22023', 'wait must be at most 100 years (36525 days)', 'poll_decision_task: wait');
SELECT throws_ok($$ SELECT durable.poll_activity_task('q', wait => '2147483647 days') $$,
    '22023', 'wait must be at most 100 years (36525 days)', 'poll_activity_task: wait');
SELECT throws_ok($$ SELECT * FROM durable.poll_activity_tasks('q', wait => '200 years') $$,
    '22023', 'wait must be at most 100 years (36525 days)', 'poll_activity_tasks: wait');
SELECT throws_ok($$ SELECT * FROM durable.poll_activity_tasks('q', max_tasks => -2147483648) $$,
    '22023', 'max_tasks must be at least 1', 'poll_activity_tasks: a negative max_tasks');
SELECT throws_ok($$ SELECT durable.tick(-2147483648) $$,
    '22023', 'max_items must be greater than zero', 'tick: a negative max_items');

-- The clock of the tests.
SELECT throws_ok($$ SET LOCAL durable.test_time = '294276-01-01 00:00:00+00' $$,
    '22023', 'invalid value for parameter "durable.test_time": "294276-01-01 00:00:00+00"', 'test_time near the end of timestamptz');

SELECT is(t.footprint(), :'before', 'none of the refused calls wrote anything');

-- -------------------------------------------------------------------------
-- Decisions: every number of seconds and the retry policy of each.
SELECT durable.start_workflow('wf', NULL, 'dec', 'dec') IS NOT NULL AS started;
SELECT durable.poll_decision_task('dec')->>'taskToken' AS dec_token \gset
SELECT t.footprint() AS dec_before \gset
CREATE FUNCTION pg_temp.decide(d jsonb) RETURNS void LANGUAGE sql AS
    $$ SELECT durable.complete_decision_task(current_setting('b.token'), jsonb_build_array(d)) $$;
SELECT set_config('b.token', :'dec_token', true);
SELECT throws_ok($$ SELECT pg_temp.decide('{"decisionType": "StartTimer", "timerId": "t", "startToFireTimeoutSeconds": 1e20}') $$,
    '22023', 'decisions[0].startToFireTimeoutSeconds must be at most 100 years (36525 days)', 'StartTimer: startToFireTimeoutSeconds');
SELECT throws_ok($$ SELECT pg_temp.decide(t.sched('a', '{"scheduleToStartTimeoutSeconds": 1e400}')) $$,
    '22023', 'decisions[0].scheduleToStartTimeoutSeconds must be at most 100 years (36525 days)', 'ScheduleActivityTask: scheduleToStartTimeoutSeconds past float8');
SELECT throws_ok($$ SELECT pg_temp.decide(t.sched('a', '{"startToCloseTimeoutSeconds": 3155760001}')) $$,
    '22023', 'decisions[0].startToCloseTimeoutSeconds must be at most 100 years (36525 days)', 'ScheduleActivityTask: startToCloseTimeoutSeconds');
SELECT throws_ok($$ SELECT pg_temp.decide(t.sched('a', '{"scheduleToCloseTimeoutSeconds": -1e400}')) $$,
    '22023', 'decisions[0].scheduleToCloseTimeoutSeconds must not be negative', 'ScheduleActivityTask: scheduleToCloseTimeoutSeconds below float8');
SELECT throws_ok($$ SELECT pg_temp.decide(t.sched('a', '{"heartbeatTimeoutSeconds": 1e10}')) $$,
    '22023', 'decisions[0].heartbeatTimeoutSeconds must be at most 100 years (36525 days)', 'ScheduleActivityTask: heartbeatTimeoutSeconds');
SELECT throws_ok($$ SELECT pg_temp.decide(t.sched('a', '{"retryPolicy": {"initialIntervalInSeconds": 1, "backoffCoefficient": 1001, "maximumAttempts": 3}}')) $$,
    '22023', 'decisions[0].retryPolicy.backoffCoefficient must be at most 1000', 'ScheduleActivityTask: retryPolicy.backoffCoefficient');
SELECT throws_ok($$ SELECT pg_temp.decide('{"decisionType": "ContinueAsNewWorkflowExecution", "backoffStartIntervalInSeconds": 1e12}') $$,
    '22023', 'decisions[0].backoffStartIntervalInSeconds must be at most 100 years (36525 days)', 'ContinueAsNew: backoffStartIntervalInSeconds');
SELECT throws_ok($$ SELECT pg_temp.decide('{"decisionType": "ContinueAsNewWorkflowExecution", "workflowRunTimeoutSeconds": 1e12}') $$,
    '22023', 'decisions[0].workflowRunTimeoutSeconds must be at most 100 years (36525 days)', 'ContinueAsNew: workflowRunTimeoutSeconds');
SELECT throws_ok($$ SELECT pg_temp.decide('{"decisionType": "StartChildWorkflowExecution", "workflowType": "c", "workflowExecutionTimeoutSeconds": 1e12}') $$,
    '22023', 'decisions[0].workflowExecutionTimeoutSeconds must be at most 100 years (36525 days)', 'StartChild: workflowExecutionTimeoutSeconds');
SELECT throws_ok($$ SELECT pg_temp.decide('{"decisionType": "StartChildWorkflowExecution", "workflowType": "c", "taskStartToCloseTimeoutSeconds": 1e12}') $$,
    '22023', 'decisions[0].taskStartToCloseTimeoutSeconds must be at most 100 years (36525 days)', 'StartChild: taskStartToCloseTimeoutSeconds');
SELECT is(t.footprint(), :'dec_before', 'no refused decision wrote anything');

-- -------------------------------------------------------------------------
-- fail_activity: next_retry_delay (main leaked a 23502 not-null violation).
SELECT durable.start_workflow('wf', NULL, 'fa', 'fa') IS NOT NULL AS started;
SELECT t.decide('fa', jsonb_build_array(t.sched('a1'))) IS NOT NULL AS decided;
SELECT durable.poll_activity_task('fa')->>'taskToken' AS fa_token \gset
SELECT throws_ok(format($$ SELECT durable.fail_activity(%L, 'r', NULL, '2147483647 days') $$, :'fa_token'),
    '22023', 'next_retry_delay must be at most 100 years (36525 days)', 'fail_activity: next_retry_delay');
SELECT is(pg_temp.try(format($$ SELECT durable.fail_activity(%L, 'r', NULL, '36525 days') $$, :'fa_token')), 'ok',
    'fail_activity: the largest next_retry_delay is taken');
SELECT is((t.pending('fa')->>'nextAttemptScheduledTime')::timestamptz, durable.now() + interval '36525 days',
    'the next attempt is 36525 days later');

-- -------------------------------------------------------------------------
-- retry_delay() is never negative, at any attempt and coefficient.
SELECT is(durable.retry_delay(durable.retry_policy('1 second', 1000, '36525 days', NULL, 10), 100),
    interval '876600 hours', 'retry_delay: a huge backoff saturates at the maximum interval');
SELECT is(durable.retry_delay(durable.retry_policy('1 second', 1000, maximum_attempts => 10), 2147483647),
    interval '100 seconds', 'retry_delay: the last attempt gets the default maximum (100 x initial)');
SELECT is((SELECT count(*) FROM unnest(ARRAY[1, 1.0000001, 2, 999.9, 1000]::float8[]) c,
                               unnest(ARRAY[1, 2, 64, 1100, 2147483647]) n,
                               unnest(ARRAY['1 second', '36525 days']::interval[]) m
            WHERE durable.retry_delay(durable.retry_policy('1 second', c, m, NULL, 10), n)
                  NOT BETWEEN interval '0' AND interval '36525 days'), 0::bigint,
    'retry_delay: within 0 .. 36525 days for every coefficient, attempt and maximum');

-- -------------------------------------------------------------------------
-- Values stored by an older version (0.2.0 accepted them) must not wedge anything.

-- A run_timeout of 100000000 years in the table: the queue still serves, the run
-- still terminates (main: every poll of the queue failed with 22008).
SELECT durable.start_workflow('wf', NULL, 'old_huge', 'wedge') IS NOT NULL AS started;
UPDATE durable.runs SET run_timeout = 3.1104e15, execution_timeout = 1e300, decision_timeout = 1e300
 WHERE workflow_id = 'old_huge';
SELECT durable.start_workflow('wf', NULL, 'behind', 'wedge') IS NOT NULL AS started;
SELECT is(pg_temp.try($$ SELECT durable.poll_decision_task('wedge')->>'workflowId' $$), 'old_huge',
    'a poll delivers the run with the huge stored run_timeout');
SELECT is(pg_temp.try($$ SELECT durable.poll_decision_task('wedge')->>'workflowId' $$), 'behind',
    'and the run behind it');
SELECT is(pg_temp.try($$ SELECT durable.terminate_workflow('old_huge') $$), 'ok',
    'terminate_workflow of that run works');
SELECT is(durable.describe_workflow('old_huge')->>'status', 'terminated', 'it is terminated');

-- A stored activity policy and timeouts past every bound: describe and a retry
-- work, the retry saturating at 100 years (main: make_interval overflowed,
-- the retry wrote a null scheduled_time).
SELECT durable.start_workflow('wf', NULL, 'oldpol', 'oldpol') IS NOT NULL AS started;
SELECT t.decide('oldpol', jsonb_build_array(t.sched('a1', '{"scheduleToCloseTimeoutSeconds": 60}'))) IS NOT NULL AS decided;
UPDATE durable.activities
   SET retry_policy = '{"initialIntervalInSeconds": 1e300, "backoffCoefficient": 1e300, "maximumIntervalInSeconds": 1e300, "expirationIntervalInSeconds": 0, "maximumAttempts": 5, "nonRetriableErrorReasons": []}',
       schedule_to_close_timeout = 1e300
 WHERE workflow_id = 'oldpol';
SELECT is(pg_temp.try($$ SELECT durable.describe_workflow('oldpol')->'pendingActivities'->0->>'expirationTime' $$),
    to_jsonb(durable.now() + interval '36525 days')#>>'{}', 'describe_workflow: the expiration time saturates');
SELECT is(pg_temp.try(format($$ SELECT durable.fail_activity(%L, 'r') $$,
                             durable.poll_activity_task('oldpol')->>'taskToken')), 'ok',
    'fail_activity under the stored policy works');
SELECT is((t.pending('oldpol')->>'nextAttemptScheduledTime')::timestamptz, durable.now() + interval '36525 days',
    'its retry waits the largest delay, 36525 days');

-- A namespace whose stored retention is 178000000 years (the 0.3.0 update clamps
-- it and adds a CHECK; a database not yet updated may still hold it): purge
-- works for every namespace (main: 22008 for all).
SELECT durable.create_namespace('old_ns', '1 day');
ALTER TABLE durable.namespaces DROP CONSTRAINT IF EXISTS namespaces_retention_bounds;
UPDATE durable.namespaces SET retention = '178000000 years' WHERE name = 'old_ns';
SELECT durable.start_workflow('wf', NULL, 'in_old', 'q', 'old_ns') IS NOT NULL AS started;
SELECT durable.terminate_workflow('in_old', namespace => 'old_ns');
SELECT durable.start_workflow('wf', NULL, 'in_default', 'q') IS NOT NULL AS started;
SELECT durable.terminate_workflow('in_default');
SELECT t.at('2026-01-09 00:00:00+00');
SELECT is(pg_temp.try($$ SELECT durable.purge()::text $$), '2', 'purge removes the runs of default past its 7 days');
SELECT is((SELECT string_agg(workflow_id, ',' ORDER BY workflow_id) FROM durable.runs
            WHERE workflow_id IN ('in_old', 'in_default', 'old_huge')), 'in_old', 'and keeps the one of old_ns');

-- -------------------------------------------------------------------------
-- The largest values end to end, at the end of the clock's range.
SELECT t.at('9899-06-01 00:00:00+00');
SELECT is(pg_temp.try($$ SELECT durable.create_namespace('long', '36525 days') $$), 'ok',
    'create_namespace: a retention of 36525 days');
SELECT is(pg_temp.try($$ SELECT durable.start_workflow('wf', NULL, 'max', 'max', 'long',
        retry_policy => durable.retry_policy('36525 days', 1000, '36525 days', '36525 days', 10),
        execution_timeout => '36525 days', run_timeout => '36525 days',
        decision_timeout => '36525 days', delay => '36524 days') IS NOT NULL $$), 'true',
    'start_workflow: every duration at its largest (the delay one day less, to leave the run a day)');
SELECT t.at((durable.now() + interval '36524 days')::text);
SELECT ok(durable.tick() >= 1, 'the timers due by then fire');
SELECT is(pg_temp.try($$ SELECT durable.poll_decision_task('max', namespace => 'long')->>'workflowId' $$), 'max',
    'and a poll delivers it');
SELECT is(pg_temp.try($$ SELECT durable.terminate_workflow('max', namespace => 'long') $$), 'ok',
    'terminate_workflow works');
SELECT matches(pg_temp.try($$ SELECT durable.purge()::text $$), '^[0-9]+$', 'purge works');

-- A workflow function: durable.sleep() past the bound fails the workflow with 22023.
CREATE ROLE bounds_app;
CREATE SCHEMA app;
GRANT USAGE ON SCHEMA app TO bounds_app;
CREATE FUNCTION app.sleepy(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM durable.sleep((input->>'d')::interval);
    RETURN 'null';
END $$;
SELECT durable.register_workflow('sleepy', 'app.sleepy(jsonb)', run_as => 'bounds_app');
SELECT durable.start_workflow('sleepy', '{"d": "200 years"}', 'sleepy') IS NOT NULL AS started;
SELECT durable.run_tasks() >= 0 AS ran;
SELECT is((SELECT format('%s: %s', a->>'reason', a->'details'->>'message')
             FROM (SELECT t.attrs('sleepy', 'WorkflowExecutionFailed') AS a) x),
    '22023: duration must be at most 100 years (36525 days)', 'sleep: a duration of 200 years fails the workflow');

SELECT * FROM finish();
ROLLBACK;

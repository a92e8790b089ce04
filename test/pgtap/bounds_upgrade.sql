-- Bounds (docs/errors.md "Bounds on durations and numbers") on a database created
-- at 0.2.0, which accepted any finite
-- duration and coefficient: with such values in its tables the 0.3.0 library
-- still polls, terminates, retries and purges; ALTER EXTENSION durable UPDATE
-- then clamps them into the bounds (100 years, coefficient 1000) and adds a
-- CHECK on namespaces.retention.
BEGIN;
SELECT plan(13);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

-- The text of what sql returns, or "ERROR <sqlstate>: <message>".
CREATE FUNCTION pg_temp.try(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
    EXECUTE sql INTO r;
    RETURN COALESCE(NULLIF(r, ''), 'ok');
EXCEPTION WHEN OTHERS THEN
    RETURN format('ERROR %s: %s', SQLSTATE, SQLERRM);
END $$;

DROP EXTENSION durable;
CREATE EXTENSION durable VERSION '0.2.0';

-- What 0.2.0 let users store (written directly: 0.3.0's API refuses it).
SELECT durable.create_namespace('old_ns', '1 day');
UPDATE durable.namespaces
   SET retention = '178000000 years',
       activity_retry_policy = '{"initialIntervalInSeconds": 1e300, "backoffCoefficient": 1e300, "maximumIntervalInSeconds": 1e300, "expirationIntervalInSeconds": 1e300, "maximumAttempts": 0, "nonRetriableErrorReasons": []}'
 WHERE name = 'old_ns';
SELECT durable.start_workflow('wf', NULL, 'in_old', 'q', 'old_ns') IS NOT NULL AS started;
SELECT durable.terminate_workflow('in_old', namespace => 'old_ns');
SELECT durable.start_workflow('wf', NULL, 'closed', 'q') IS NOT NULL AS started;
SELECT durable.terminate_workflow('closed');
SELECT durable.start_workflow('wf', NULL, 'huge', 'wedge') IS NOT NULL AS started;
UPDATE durable.runs
   SET run_timeout = 3.1104e15, execution_timeout = 1e300,
       retry_policy = '{"initialIntervalInSeconds": 1, "backoffCoefficient": 1e300, "maximumIntervalInSeconds": 1e300, "expirationIntervalInSeconds": 0, "maximumAttempts": 5, "nonRetriableErrorReasons": []}'
 WHERE workflow_id = 'huge';
SELECT durable.start_workflow('wf', NULL, 'behind', 'wedge') IS NOT NULL AS started;

-- The 0.3.0 library on that schema.
SELECT is(pg_temp.try($$ SELECT durable.poll_decision_task('wedge')->>'workflowId' $$), 'huge',
    'at 0.2.0: a poll delivers the run with the huge stored run_timeout');
SELECT is(pg_temp.try($$ SELECT durable.poll_decision_task('wedge')->>'workflowId' $$), 'behind',
    'at 0.2.0: and the run behind it');
SELECT is(pg_temp.try($$ SELECT durable.start_workflow('wf', NULL, 'act', 'act', 'old_ns') IS NOT NULL $$), 'true',
    'at 0.2.0: a run of the namespace with the huge activity policy starts');
SELECT durable.complete_decision_task(durable.poll_decision_task('act', namespace => 'old_ns')->>'taskToken',
    jsonb_build_array(t.sched('a1')));
SELECT is(pg_temp.try(format($$ SELECT durable.fail_activity(%L, 'r') $$,
                             durable.poll_activity_task('act', namespace => 'old_ns')->>'taskToken')), 'ok',
    'at 0.2.0: its activity fails and is retried');
SELECT is((durable.describe_workflow('act', 'old_ns')->'pendingActivities'->0->>'nextAttemptScheduledTime')::timestamptz,
    durable.now() + interval '36525 days', 'at 0.2.0: the retry waits the largest delay');
SELECT t.at('2026-01-09 00:00:00+00');
SELECT is(pg_temp.try($$ SELECT durable.purge()::text $$), '1', 'at 0.2.0: purge works');
SELECT is(pg_temp.try($$ SELECT durable.terminate_workflow('huge') $$), 'ok', 'at 0.2.0: terminate_workflow works');

-- The update clamps what is stored.
ALTER EXTENSION durable UPDATE TO '0.3.0';
SELECT is((SELECT retention FROM durable.namespaces WHERE name = 'old_ns'), interval '36525 days',
    'the update clamps a stored retention to 36525 days');
SELECT is((SELECT activity_retry_policy FROM durable.namespaces WHERE name = 'old_ns'),
    '{"initialIntervalInSeconds": 3155760000, "backoffCoefficient": 1000, "maximumIntervalInSeconds": 3155760000, "expirationIntervalInSeconds": 3155760000, "maximumAttempts": 0, "nonRetriableErrorReasons": []}'::jsonb,
    'and a stored activity retry policy');
SELECT is((SELECT row(run_timeout, execution_timeout, retry_policy->>'backoffCoefficient',
                      retry_policy->>'maximumIntervalInSeconds')::text
             FROM durable.runs WHERE workflow_id = 'huge'),
    '(3155760000,3155760000,1000,3155760000)', 'and the timeouts and retry policy of a run');
SELECT is((SELECT count(*) FROM durable.activities
            WHERE retry_policy->>'backoffCoefficient' = '1000'
              AND retry_policy->>'initialIntervalInSeconds' = '3155760000'), 1::bigint,
    'and the retry policy of an activity');
SELECT throws_ok($$ UPDATE durable.namespaces SET retention = '200 years' WHERE name = 'old_ns' $$,
    '23514', NULL, 'a retention over 36525 days can no longer be stored');
SELECT is(pg_temp.try($$ SELECT durable.poll_decision_task('wedge')::text $$), 'ok', 'polls still work');

SELECT * FROM finish();
ROLLBACK;

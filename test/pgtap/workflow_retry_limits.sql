-- The limits of a workflow's retry (docs/api.md "Workflow retries, ContinueAsNew,
-- cron"): its retry policy's expiration and its execution_timeout
-- count from the first run of the chain; a retry past either is not made.
BEGIN;
SELECT plan(14);

-- Fail the current run of wid through a FailWorkflowExecution decision.
CREATE FUNCTION pg_temp.fail_run(wid text, q text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    t jsonb := durable.poll_decision_task(q);
BEGIN
    IF t IS NULL OR t->>'workflowId' <> wid THEN
        RAISE EXCEPTION 'no decision task for %', wid;
    END IF;
    PERFORM durable.complete_decision_task(t->>'taskToken',
        '[{"decisionType": "FailWorkflowExecution", "reason": "boom"}]');
END $$;
CREATE FUNCTION pg_temp.statuses(wid text) RETURNS text[] LANGUAGE sql AS $$
    SELECT array_agg(status || '/' || attempt ORDER BY run_seq)
      FROM durable.runs WHERE workflow_id = wid
$$;

-- Expiration: 30 s from the first run.  Retries after 10 s, then 20 s.
SELECT t.at('2026-07-01 00:00:00+00');
SELECT durable.start_workflow('t', NULL, 'exp', task_queue => 'exp',
    retry_policy => durable.retry_policy('10 seconds', expiration_interval => '30 seconds')) IS NOT NULL;
SELECT pg_temp.fail_run('exp', 'exp');
SELECT is(pg_temp.statuses('exp'), '{continued_as_new/1,running/2}', 'the first failure retries');
SELECT is(durable.poll_decision_task('exp'), NULL, 'not before the 10 s backoff');
SELECT t.at('2026-07-01 00:00:10+00');
SELECT ok(durable.tick() > 0, 'the backoff timer fires at 10 s');
SELECT t.at('2026-07-01 00:00:25+00');
SELECT pg_temp.fail_run('exp', 'exp');
SELECT is(pg_temp.statuses('exp'), '{continued_as_new/1,failed/2}',
          'at 25 s the next retry (20 s later) would pass the expiration: failed');
SELECT is((SELECT event_type FROM durable.get_history('exp') ORDER BY event_id DESC LIMIT 1),
          'WorkflowExecutionFailed', 'closed with WorkflowExecutionFailed');

-- execution_timeout spans the chain: the retried run times out at the first
-- run's start + 60 s, and an execution timeout is not retried.
SELECT t.at('2026-07-02 00:00:00+00');
SELECT durable.start_workflow('t', NULL, 'exe', task_queue => 'exe', execution_timeout => '60 seconds',
    retry_policy => durable.retry_policy('10 seconds', maximum_attempts => 5)) IS NOT NULL;
SELECT t.at('2026-07-02 00:00:05+00');
SELECT pg_temp.fail_run('exe', 'exe');
SELECT is(pg_temp.statuses('exe'), '{continued_as_new/1,running/2}', 'the failure retries');
SELECT is((SELECT (attributes->>'workflowExecutionTimeoutSeconds')::int FROM durable.get_history('exe') WHERE event_id = 1),
          60, 'the new run keeps the execution timeout');
SELECT t.at('2026-07-02 00:00:59+00');
SELECT durable.tick();
SELECT is(durable.describe_workflow('exe')->>'status', 'running', 'still running at 59 s');
SELECT t.at('2026-07-02 00:01:00+00');
SELECT durable.tick();
SELECT is(pg_temp.statuses('exe'), '{continued_as_new/1,timed_out/2}',
          'at the first run''s start + 60 s the chain times out, without retry');
SELECT is((SELECT attributes FROM durable.get_history('exe') ORDER BY event_id DESC LIMIT 1),
          '{"timeoutType": "EXECUTION"}', 'WorkflowExecutionTimedOut, EXECUTION');

-- A retry whose backoff would pass the execution deadline is not made.
SELECT t.at('2026-07-03 00:00:00+00');
SELECT durable.start_workflow('t', NULL, 'late', task_queue => 'late', execution_timeout => '20 seconds',
    retry_policy => durable.retry_policy('30 seconds', maximum_attempts => 5)) IS NOT NULL;
SELECT pg_temp.fail_run('late', 'late');
SELECT is(pg_temp.statuses('late'), '{failed/1}', 'a retry after the execution deadline is not made');

-- maximumAttempts counts runs: with 2, the second failure is final.
SELECT t.at('2026-07-04 00:00:00+00');
SELECT durable.start_workflow('t', NULL, 'max', task_queue => 'max',
    retry_policy => durable.retry_policy('1 second', maximum_attempts => 2)) IS NOT NULL;
SELECT pg_temp.fail_run('max', 'max');
SELECT t.at('2026-07-04 00:00:01+00');
SELECT durable.tick();
SELECT pg_temp.fail_run('max', 'max');
SELECT is(pg_temp.statuses('max'), '{continued_as_new/1,failed/2}', 'maximumAttempts 2: two runs');
SELECT is((SELECT attributes->>'continuedExecutionRunId' FROM durable.get_history('max') WHERE event_id = 1),
          (SELECT run_id::text FROM durable.runs WHERE workflow_id = 'max' AND attempt = 1),
          'the second run names the first as continuedExecutionRunId');
SELECT is((SELECT attributes->'failure'->>'reason' FROM durable.history h JOIN durable.runs r USING (run_id)
            WHERE r.workflow_id = 'max' AND r.attempt = 1 AND h.event_type = 'WorkflowExecutionContinuedAsNew'),
          'boom', 'the ContinuedAsNew event carries the failure');

SELECT * FROM finish();
ROLLBACK;

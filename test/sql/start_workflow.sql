-- start_workflow: history, describe, delay, timeouts, every option.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS durable;
RESET client_min_messages;
SET durable.test_time = '2026-01-01 00:00:00+00';
SET timezone = 'UTC';

-- History without the random run ids.
CREATE FUNCTION pg_temp.hist(wid text, ns text DEFAULT 'default')
RETURNS TABLE(event_id bigint, event_time timestamptz, event_type text, attributes jsonb)
LANGUAGE sql AS $$
    SELECT event_id, event_time, event_type, attributes - 'firstExecutionRunId'
      FROM durable.get_history(wid, ns)
$$;

-- A plain start: WorkflowExecutionStarted then DecisionTaskScheduled.
SELECT durable.start_workflow('order', '{"item": 42}', 'order-1') IS NOT NULL AS started;
SELECT * FROM pg_temp.hist('order-1');
SELECT d - 'runId' - 'firstRunId' - 'startTime' AS describe,
       d->>'runId' = durable.resolve_run_id('order-1')::text AS run_id_matches,
       (d->>'startTime')::timestamptz = durable.now() AS start_time_is_now
  FROM durable.describe_workflow('order-1') d;
-- A decision task is ready on the queue.
SELECT r.namespace, r.task_queue, r.kind, r.scheduled_event_id, r.attempt
  FROM durable.ready_tasks r JOIN durable.runs USING (run_id)
 WHERE workflow_id = 'order-1';

-- workflow_id NULL is a new UUID, version 7: its first 48 bits are the time of
-- the start in milliseconds, so that the start writes at the right edge of
-- the indexes on workflow ids; the other 74 bits are random.
WITH s AS (SELECT durable.start_workflow('anon') AS run_id)
SELECT workflow_id ~ '^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' AS uuid_id
  FROM durable.runs JOIN s USING (run_id);

-- Every option recorded in WorkflowExecutionStarted and in the run.
SELECT durable.start_workflow('billing', '[1, 2]', 'bill-1',
        task_queue => 'payments', namespace => 'default',
        retry_policy => durable.retry_policy('2 seconds', maximum_attempts => 5),
        id_reuse_policy => 'reject_duplicate',
        execution_timeout => '1 hour', run_timeout => '10 minutes',
        decision_timeout => '30 seconds',
        memo => '{"owner": "team-a"}') IS NOT NULL AS started;
SELECT * FROM pg_temp.hist('bill-1');
SELECT kind, due_at FROM durable.timers t JOIN durable.runs USING (run_id)
 WHERE workflow_id = 'bill-1' ORDER BY due_at;
SELECT d->'memo' AS memo, d->'retryPolicy' AS retry_policy, d->>'taskQueue' AS task_queue,
       d->'runTimeoutSeconds' AS run_timeout, d->'executionTimeoutSeconds' AS execution_timeout,
       d->'decisionTimeoutSeconds' AS decision_timeout
  FROM durable.describe_workflow('bill-1') d;
SELECT durable.terminate_workflow('bill-1', 'done looking');

-- delay: WorkflowExecutionStarted now, DecisionTaskScheduled after the delay.
SELECT durable.start_workflow('order', NULL, 'late-1', delay => '90 seconds') IS NOT NULL AS started;
SELECT * FROM pg_temp.hist('late-1');
SET durable.test_time = '2026-01-01 00:01:29+00';
SELECT durable.tick() AS fired_early;
SELECT count(*) AS events FROM pg_temp.hist('late-1');
SET durable.test_time = '2026-01-01 00:01:30+00';
SELECT durable.tick() AS fired;
SELECT * FROM pg_temp.hist('late-1');
SELECT durable.tick() AS fired_again;

-- A zero delay is no delay.
SELECT durable.start_workflow('order', NULL, 'now-1', delay => '0') IS NOT NULL AS started;
SELECT event_type FROM pg_temp.hist('now-1');

-- run_timeout closes the run with WorkflowExecutionTimedOut when due.
SET durable.test_time = '2026-01-01 00:00:00+00';
SELECT durable.start_workflow('slow', NULL, 'slow-1', run_timeout => '5 minutes') IS NOT NULL AS started;
SET durable.test_time = '2026-01-01 00:05:00+00';
SELECT durable.tick() AS fired;
SELECT event_id, event_type, attributes FROM pg_temp.hist('slow-1');
SELECT d->>'status' AS status, d->>'closeTime' AS close_time
  FROM durable.describe_workflow('slow-1') d;
SELECT count(*) AS timers_left FROM durable.timers t JOIN durable.runs USING (run_id)
 WHERE workflow_id = 'slow-1';

-- execution_timeout likewise, counted from the start.
SET durable.test_time = '2026-01-01 00:00:00+00';
SELECT durable.start_workflow('slow', NULL, 'slow-2', execution_timeout => '1 hour',
                              run_timeout => '2 hours') IS NOT NULL AS started;
SET durable.test_time = '2026-01-01 01:00:00+00';
SELECT durable.tick() AS fired;
SELECT event_type, attributes FROM pg_temp.hist('slow-2') WHERE event_id > 2;
SET durable.test_time = '2026-01-01 02:00:00+00';
SELECT durable.tick() AS run_timeout_dropped_with_run;

-- cron_schedule: the first decision task waits for the next fire time.
SET durable.test_time = '2026-01-01 00:00:30+00';
SELECT durable.start_workflow('report', NULL, 'cron-1', cron_schedule => '*/15 * * * *') IS NOT NULL AS started;
SELECT event_type, attributes->'cronSchedule' AS cron,
       attributes->'firstDecisionTaskBackoffSeconds' AS backoff
  FROM pg_temp.hist('cron-1');
SET durable.test_time = '2026-01-01 00:15:00+00';
SELECT durable.tick() AS fired;
SELECT event_type FROM pg_temp.hist('cron-1');

-- max_items bounds one tick.
SET durable.test_time = '2026-01-01 00:00:00+00';
SELECT count(durable.start_workflow('batch', NULL, 'batch-' || i, delay => '1 minute'))
  FROM generate_series(1, 5) i;
SET durable.test_time = '2026-01-01 00:02:00+00';
SELECT durable.tick(3) AS first, durable.tick(3) AS second, durable.tick(3) AS third;

-- Bad arguments: each names the argument and writes nothing.
SELECT count(*) AS runs_before FROM durable.runs \gset
SELECT durable.start_workflow(NULL);
SELECT durable.start_workflow('');
SELECT durable.start_workflow('t', workflow_id => '');
SELECT durable.start_workflow('t', workflow_id => repeat('x', 1001));
SELECT durable.start_workflow(repeat('t', 1001));
SELECT durable.start_workflow('t', task_queue => NULL);
SELECT durable.start_workflow('t', task_queue => '');
SELECT durable.start_workflow('t', namespace => NULL);
SELECT durable.start_workflow('t', namespace => 'nowhere');
SELECT durable.start_workflow('t', id_reuse_policy => 'sometimes');
SELECT durable.start_workflow('t', id_reuse_policy => NULL);
SELECT durable.start_workflow('t', execution_timeout => '-1 second');
SELECT durable.start_workflow('t', execution_timeout => '0');
SELECT durable.start_workflow('t', run_timeout => '-5 minutes');
SELECT durable.start_workflow('t', decision_timeout => '0 seconds');
SELECT durable.start_workflow('t', delay => '-1 day');
SELECT durable.start_workflow('t', memo => '"text"');
SELECT durable.start_workflow('t', memo => '[1]');
SELECT durable.start_workflow('t', cron_schedule => '61 * * * *');
SELECT durable.start_workflow('t', cron_schedule => '* * * * *', delay => '1 minute');
SELECT durable.start_workflow('t', retry_policy => '{"maximumAttempts": 3}');
SELECT durable.start_workflow('t', retry_policy => '[]');
SELECT durable.tick(0);
SELECT count(*) = :runs_before AS nothing_written FROM durable.runs;

-- Payload limit: WF006.
SET durable.max_payload_size = 1024;
SELECT durable.start_workflow('t', jsonb_build_object('blob', repeat('x', 2000)));
SELECT durable.start_workflow('t', memo => jsonb_build_object('blob', repeat('x', 2000)));
RESET durable.max_payload_size;
SELECT count(*) = :runs_before AS nothing_written FROM durable.runs;

-- durable.test_time: only a superuser sets it; empty means the wall clock.
SET durable.test_time = 'not a time';
SET durable.test_time = '';
SELECT durable.now() > '2026-06-01' AS wall_clock;
RESET durable.test_time;

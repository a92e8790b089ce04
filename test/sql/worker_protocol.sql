-- The worker protocol end to end: a workflow whose one activity fails twice,
-- is retried after 1 s and 2 s, and then succeeds.  The clock is frozen with
-- durable.test_time and timers fire with durable.tick().  Run ids are random,
-- so they are masked.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS durable;
RESET client_min_messages;
SET timezone = 'UTC';
SET datestyle = 'ISO';
SET durable.test_time = '2026-03-01 12:00:00+00';

SELECT durable.start_workflow('order', '{"orderId": 17}', 'wp-order-17', 'wp_orders') IS NOT NULL AS started;

-- The workflow worker: poll, then schedule the activity.
SELECT t->>'taskToken' AS token, t->>'workflowType' AS workflow_type, t->'attempt' AS attempt,
       jsonb_array_length(t->'history') AS events
  FROM durable.poll_decision_task('wp_orders', 'decider-1') t \gset
\echo :workflow_type :attempt :events
SELECT durable.complete_decision_task(:'token',
    '[{"decisionType": "ScheduleActivityTask", "activityId": "charge", "activityType": "charge_card",
       "input": {"amount": 42.5}, "startToCloseTimeoutSeconds": 30,
       "retryPolicy": {"initialIntervalInSeconds": 1, "backoffCoefficient": 2,
                       "maximumAttempts": 5}}]');

-- Attempt 1 fails.
SELECT durable.fail_activity(durable.poll_activity_task('wp_orders', 'worker-1')->>'taskToken',
                             'card_declined', '{"code": 51}');

-- During the backoff: describe_workflow's pending activity.
SELECT jsonb_pretty(durable.describe_workflow('wp-order-17')->'pendingActivities');
SELECT durable.poll_activity_task('wp_orders') IS NULL AS nothing_during_backoff;

-- 1 s later the retry timer puts attempt 2 on the queue; it fails too.
SET durable.test_time = '2026-03-01 12:00:01+00';
SELECT durable.tick() > 0 AS fired;
SELECT durable.fail_activity(durable.poll_activity_task('wp_orders', 'worker-2')->>'taskToken',
                             'gateway_timeout');
SELECT a->>'state' AS state, a->'attempt' AS attempt, a->>'lastFailureReason' AS last_failure,
       a->>'nextAttemptScheduledTime' AS next_attempt
  FROM jsonb_array_elements(durable.describe_workflow('wp-order-17')->'pendingActivities') a;

-- 2 s later attempt 3 succeeds.
SET durable.test_time = '2026-03-01 12:00:03+00';
SELECT durable.tick() > 0 AS fired;
SELECT durable.complete_activity(durable.poll_activity_task('wp_orders', 'worker-3')->>'taskToken',
                                 '{"chargeId": "ch_1"}');

-- Every attempt, with its outcome.
SELECT attempt, outcome, failure_reason, failure_details, worker_identity,
       scheduled_time, started_time, end_time, next_retry_time
  FROM durable.activity_attempts WHERE workflow_id = 'wp-order-17' ORDER BY attempt;

-- The workflow worker completes the workflow.
SET durable.test_time = '2026-03-01 12:00:04+00';
SELECT durable.complete_decision_task(t->>'taskToken',
    '[{"decisionType": "CompleteWorkflowExecution", "result": {"status": "paid"}}]')
  FROM durable.poll_decision_task('wp_orders', 'decider-1') t;

-- The complete history.  ActivityTaskStarted appears once, with the final
-- attempt and the last failure; failed attempts are in durable.activity_attempts
-- (docs/api.md "Activities: retries, timeouts, heartbeats").
SELECT event_id, event_time, event_type,
       jsonb_pretty(regexp_replace(attributes::text,
           '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<run_id>', 'g')::jsonb) AS attributes
  FROM durable.get_history('wp-order-17') ORDER BY event_id;

SELECT status, attempt, result, history_length FROM durable.workflows WHERE workflow_id = 'wp-order-17';


-- An activity whose cancellation was requested (RequestCancelActivityTask) is
-- not retried: a heartbeat timeout or a failure of its started attempt is
-- recorded (ActivityTaskTimedOut, ActivityTaskFailed) and the workflow
-- decides.  Written from Cadence's and Temporal's RetryActivity, which
-- returns "no retry" when the activity info has CancelRequested (Temporal's
-- retry state RETRY_STATE_CANCEL_REQUESTED), whatever the retry policy says.
BEGIN;
SELECT plan(12);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

-- A heartbeat timeout after the cancel request.
SELECT durable.start_workflow('wf', NULL, 'hbc', 'hbc') IS NOT NULL AS started;
SELECT t.decide('hbc', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 600, "heartbeatTimeoutSeconds": 10,
    "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 5}}'))) IS NOT NULL;
SELECT durable.poll_activity_task('hbc') AS a1 \gset
SELECT durable.signal_workflow('hbc', 'stop');
SELECT t.decide('hbc', '[{"decisionType": "RequestCancelActivityTask", "activityId": "a1"}]') IS NOT NULL;
SELECT is(t.pending('hbc')->>'state', 'CANCEL_REQUESTED', 'the started activity is asked to cancel');
SELECT t.at('2026-01-01 00:00:11+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.events('hbc', from_id => 10),
    '{ActivityTaskCancelRequested,ActivityTaskStarted,ActivityTaskTimedOut,DecisionTaskScheduled}',
    'the heartbeat timeout is recorded, and the workflow decides');
SELECT is(t.attrs('hbc', 'ActivityTaskTimedOut') - 'details',
    '{"scheduledEventId": 5, "startedEventId": 11, "timeoutType": "HEARTBEAT",
      "lastFailureReason": "durable:Timeout HEARTBEAT", "retryState": "CANCEL_REQUESTED"}'::jsonb,
    'ActivityTaskTimedOut: HEARTBEAT, retryState CANCEL_REQUESTED');
SELECT is(durable.describe_workflow('hbc')->'pendingActivities', '[]', 'no attempt 2 is pending');
SELECT is(durable.poll_activity_task('hbc'), NULL, 'no attempt 2 is delivered');

-- A failure after the cancel request.
SELECT durable.start_workflow('wf', NULL, 'fc', 'fc') IS NOT NULL AS started;
SELECT t.decide('fc', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 600,
    "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 5}}'))) IS NOT NULL;
SELECT durable.poll_activity_task('fc', identity => 'w-1') AS f1 \gset
SELECT durable.signal_workflow('fc', 'stop');
SELECT t.decide('fc', '[{"decisionType": "RequestCancelActivityTask", "activityId": "a1"}]') IS NOT NULL;
SELECT is(durable.heartbeat_activity(:'f1'::jsonb->>'taskToken'), true, 'its heartbeat says so');
SELECT durable.fail_activity(:'f1'::jsonb->>'taskToken', 'boom', '{"x": 1}');
SELECT is(t.events('fc', from_id => 10),
    '{ActivityTaskCancelRequested,ActivityTaskStarted,ActivityTaskFailed,DecisionTaskScheduled}',
    'the failure is recorded, and the workflow decides');
SELECT is(t.attrs('fc', 'ActivityTaskFailed'),
    '{"scheduledEventId": 5, "startedEventId": 11, "reason": "boom", "details": {"x": 1},
      "identity": "w-1", "retryState": "CANCEL_REQUESTED"}'::jsonb,
    'ActivityTaskFailed: retryState CANCEL_REQUESTED');
SELECT is(durable.describe_workflow('fc')->'pendingActivities', '[]', 'no attempt 2 is pending');
SELECT t.at('2026-01-01 00:00:30+00');
SELECT durable.tick() AS fired \gset
SELECT is(durable.poll_activity_task('fc'), NULL, 'no attempt 2 is delivered');
SELECT is((SELECT array_agg(outcome ORDER BY attempt) FROM durable.activity_attempts WHERE workflow_id = 'fc'),
    '{failed}', 'activity_attempts: the one attempt');

-- Without a cancel request the same failure is retried (the policy allows 5).
SELECT durable.start_workflow('wf', NULL, 'fr', 'fr') IS NOT NULL AS started;
SELECT t.decide('fr', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 600,
    "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 5}}'))) IS NOT NULL;
SELECT is(t.fail_round('fr'), '2/SCHEDULED/00:00:01', 'retried as usual');

SELECT * FROM finish();
ROLLBACK;

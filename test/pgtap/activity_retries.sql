-- Activity retries (docs/api.md "Activities: retries, timeouts, heartbeats",
-- "Retry policies"): exact backoff delays, the
-- stop rules, the namespace's default policy, and the history of a retried
-- activity (ActivityTaskStarted only with the final outcome).
BEGIN;
SELECT plan(45);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

-- 1 s, 2 s, 4 s, 8 s, then capped at the 10 s maximum; maximumAttempts 6.
SELECT durable.start_workflow('wf', NULL, 'backoff', 'backoff') IS NOT NULL AS started;
SELECT t.decide('backoff', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 60,
    "retryPolicy": {"initialIntervalInSeconds": 1, "backoffCoefficient": 2, "maximumIntervalInSeconds": 10, "maximumAttempts": 6}}'))) IS NOT NULL;
SELECT durable.poll_activity_task('backoff', identity => 'w-1') AS task \gset
SELECT durable.fail_activity(:'task'::jsonb->>'taskToken', 'boom', '{"try": 1}');
SELECT is(t.pending('backoff') - 'activityType' - 'expirationTime' - 'lastWorkerIdentity',
    '{"activityId": "a1", "state": "SCHEDULED", "attempt": 2, "maximumAttempts": 6,
      "scheduledTime": "2026-01-01T00:00:01+00:00", "lastStartedTime": null, "lastHeartbeatTime": null, "heartbeatDetails": null,
      "lastFailureReason": "boom", "lastFailureDetails": {"try": 1},
      "nextAttemptScheduledTime": "2026-01-01T00:00:01+00:00"}'::jsonb,
    'describe during the backoff: attempt 2, last failure, next attempt in 1 s');
SELECT is(durable.poll_activity_task('backoff'), NULL, 'no task during the backoff');
SELECT t.at('2026-01-01 00:00:00.999+00');
SELECT is(durable.tick(), 0, 'nothing fires before the backoff ends');
SELECT t.at('2026-01-01 00:00:01+00');
SELECT is(durable.tick(), 1, 'the backoff timer fires');
SELECT is(t.pending('backoff')->>'nextAttemptScheduledTime', NULL, 'attempt 2 is on its queue');
SELECT is(t.fail_round('backoff'), '3/SCHEDULED/00:00:02', 'after attempt 2: 2 s');
SELECT is(t.fail_round('backoff'), '4/SCHEDULED/00:00:04', 'after attempt 3: 4 s');
SELECT is(t.fail_round('backoff'), '5/SCHEDULED/00:00:08', 'after attempt 4: 8 s');
SELECT is(t.fail_round('backoff'), '6/SCHEDULED/00:00:10', 'after attempt 5: capped at 10 s');
SELECT is(t.events('backoff', from_id => 5), '{ActivityTaskScheduled}', 'no history while retrying');
SELECT is(t.fail_round('backoff', 'last'), 'closed', 'attempt 6 is the last');
SELECT is(t.events('backoff', from_id => 5),
    '{ActivityTaskScheduled,ActivityTaskStarted,ActivityTaskFailed,DecisionTaskScheduled}',
    'ActivityTaskStarted and ActivityTaskFailed only at the end');
SELECT is(t.attrs('backoff', 'ActivityTaskStarted'),
    '{"scheduledEventId": 5, "identity": "postgres", "attempt": 6, "lastFailureReason": "boom", "lastFailureDetails": null}'::jsonb,
    'ActivityTaskStarted: the final attempt and the failure of the attempt before it');
SELECT is(t.attrs('backoff', 'ActivityTaskFailed'),
    '{"scheduledEventId": 5, "startedEventId": 6, "reason": "last", "details": null, "identity": "postgres",
      "retryState": "MAXIMUM_ATTEMPTS_REACHED"}'::jsonb, 'ActivityTaskFailed: maximum attempts reached');
SELECT is((SELECT array_agg(format('%s:%s:%s:%s', attempt, outcome, failure_reason, next_retry_time - end_time) ORDER BY attempt)
             FROM durable.activity_attempts WHERE workflow_id = 'backoff'),
    '{1:failed:boom:00:00:01,2:failed:boom:00:00:02,3:failed:boom:00:00:04,4:failed:boom:00:00:08,5:failed:boom:00:00:10,6:failed:last:}',
    'activity_attempts: every attempt, its outcome and its retry time');

-- A reason in nonRetriableErrorReasons fails the activity at once.
SELECT durable.start_workflow('wf', NULL, 'nonretry', 'nonretry') IS NOT NULL AS started;
SELECT t.decide('nonretry', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 60,
    "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 5, "nonRetriableErrorReasons": ["fatal"]}}'))) IS NOT NULL;
SELECT is(t.fail_round('nonretry', 'transient'), '2/SCHEDULED/00:00:01', 'another reason is retried');
SELECT is(t.fail_round('nonretry', 'fatal'), 'closed', 'a non-retriable reason is not');
SELECT is(t.attrs('nonretry', 'ActivityTaskFailed')->>'retryState', 'NON_RETRYABLE_FAILURE', 'retryState NON_RETRYABLE_FAILURE');
SELECT is(t.attrs('nonretry', 'ActivityTaskStarted')->'attempt', '2', 'failed for good at attempt 2');

-- maximumAttempts = 1 means no retry at all (and no extended timeouts).
SELECT durable.start_workflow('wf', NULL, 'once', 'once', run_timeout => '1 hour') IS NOT NULL AS started;
SELECT t.decide('once', jsonb_build_array(t.sched('a1', '{"scheduleToStartTimeoutSeconds": 5, "scheduleToCloseTimeoutSeconds": 20,
    "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 1}}'))) IS NOT NULL;
SELECT is(t.attrs('once', 'ActivityTaskScheduled') - 'retryPolicy',
    '{"activityId": "a1", "activityType": "do", "taskQueue": "once", "input": null, "scheduleToStartTimeoutSeconds": 5,
      "scheduleToCloseTimeoutSeconds": 20, "startToCloseTimeoutSeconds": 20, "decisionTaskCompletedEventId": 4}'::jsonb,
    'without retries the timeouts are not extended; StartToClose defaults to ScheduleToClose');
SELECT is(t.fail_round('once'), 'closed', 'maximumAttempts 1: the first failure is final');
SELECT is(t.attrs('once', 'ActivityTaskFailed')->>'retryState', 'MAXIMUM_ATTEMPTS_REACHED', 'retryState MAXIMUM_ATTEMPTS_REACHED');

-- With retries, ScheduleToStart and ScheduleToClose are extended to the
-- policy's expiration, or to the workflow's timeout where it has none.
SELECT t.at('2026-01-01 01:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'extend', 'extend', run_timeout => '1 hour') IS NOT NULL AS started;
SELECT t.at('2026-01-01 01:10:00+00');
SELECT t.decide('extend', jsonb_build_array(
    t.sched('a1', '{"scheduleToStartTimeoutSeconds": 5, "scheduleToCloseTimeoutSeconds": 20,
        "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 3, "expirationIntervalInSeconds": 120}}'),
    t.sched('a2', '{"scheduleToStartTimeoutSeconds": 5, "scheduleToCloseTimeoutSeconds": 20,
        "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 3}}'))) IS NOT NULL;
SELECT is(t.attrs('extend', 'ActivityTaskScheduled', 1) - 'retryPolicy' - 'activityId' - 'activityType' - 'taskQueue' - 'input',
    '{"scheduleToStartTimeoutSeconds": 120, "scheduleToCloseTimeoutSeconds": 120, "startToCloseTimeoutSeconds": 20,
      "decisionTaskCompletedEventId": 4}'::jsonb, 'extended to the policy''s expiration');
SELECT is(t.attrs('extend', 'ActivityTaskScheduled', 2) - 'retryPolicy' - 'activityId' - 'activityType' - 'taskQueue' - 'input',
    '{"scheduleToStartTimeoutSeconds": 3000, "scheduleToCloseTimeoutSeconds": 3000, "startToCloseTimeoutSeconds": 20,
      "decisionTaskCompletedEventId": 4}'::jsonb, 'extended to what is left of the workflow''s run timeout');

-- The expiration counts from the first attempt's scheduling.
SELECT t.at('2026-01-01 02:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'expire', 'expire') IS NOT NULL AS started;
SELECT t.decide('expire', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 60,
    "retryPolicy": {"initialIntervalInSeconds": 10, "backoffCoefficient": 1, "expirationIntervalInSeconds": 25}}'))) IS NOT NULL;
SELECT t.at('2026-01-01 02:00:05+00');
SELECT is(t.fail_round('expire'), '2/SCHEDULED/00:00:10', 'at +5 s, a retry at +15 s is within the expiration');
SELECT t.at('2026-01-01 02:00:16+00');
SELECT is(t.fail_round('expire'), 'closed', 'at +16 s, a retry at +26 s would pass it: failed for good');
SELECT is(t.attrs('expire', 'ActivityTaskFailed')->>'retryState', 'EXPIRATION_INTERVAL_EXCEEDED', 'retryState EXPIRATION_INTERVAL_EXCEEDED');

-- The ScheduleToClose deadline stops the retries too.
SELECT t.at('2026-01-01 03:00:00+00');
SELECT durable.start_workflow('wf', NULL, 's2c', 's2c') IS NOT NULL AS started;
SELECT t.decide('s2c', jsonb_build_array(t.sched('a1', '{"scheduleToCloseTimeoutSeconds": 10,
    "retryPolicy": {"initialIntervalInSeconds": 4, "backoffCoefficient": 1, "maximumAttempts": 10}}'))) IS NOT NULL;
SELECT is(t.fail_round('s2c'), '2/SCHEDULED/00:00:04', 'at 0 s: retry at 4 s');
SELECT is(t.fail_round('s2c'), '3/SCHEDULED/00:00:04', 'at 4 s: retry at 8 s');
SELECT is(t.fail_round('s2c'), 'closed', 'at 8 s: a retry at 12 s would pass the 10 s ScheduleToClose');
SELECT is(t.attrs('s2c', 'ActivityTaskFailed')->>'retryState', 'TIMEOUT', 'retryState TIMEOUT');
SELECT is(t.attrs('s2c', 'ActivityTaskStarted')->'attempt', '3', 'at attempt 3');

-- next_retry_delay replaces the computed delay; the stop rules still apply.
SELECT t.at('2026-01-01 04:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'override', 'override') IS NOT NULL AS started;
SELECT t.decide('override', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 60,
    "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 5, "expirationIntervalInSeconds": 100}}'))) IS NOT NULL;
SELECT is(t.fail_round('override', 'slow down', '30 seconds'), '2/SCHEDULED/00:00:30', 'next_retry_delay 30 s replaces 1 s');
SELECT is(t.fail_round('override', 'busy', '0'), '3/SCHEDULED/queued', 'next_retry_delay 0: retried at once, no backoff');
SELECT is(t.fail_round('override', 'slow down', '80 seconds'), 'closed', 'a delay past the expiration is not retried');
SELECT is(t.attrs('override', 'ActivityTaskFailed')->>'retryState', 'EXPIRATION_INTERVAL_EXCEEDED', 'retryState EXPIRATION_INTERVAL_EXCEEDED');

-- Without a policy, the namespace's default: 1 s x2, at most 100 s, 10 attempts.
SELECT t.at('2026-01-01 05:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'default', 'default') IS NOT NULL AS started;
SELECT t.decide('default', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 60}'))) IS NOT NULL;
SELECT is(t.attrs('default', 'ActivityTaskScheduled')->'retryPolicy',
    '{"initialIntervalInSeconds": 1, "backoffCoefficient": 2, "maximumIntervalInSeconds": 100,
      "expirationIntervalInSeconds": 0, "maximumAttempts": 10, "nonRetriableErrorReasons": []}'::jsonb,
    'ActivityTaskScheduled shows the default policy');
SELECT is(ARRAY(SELECT t.fail_round('default') FROM generate_series(1, 10)),
    '{2/SCHEDULED/00:00:01,3/SCHEDULED/00:00:02,4/SCHEDULED/00:00:04,5/SCHEDULED/00:00:08,6/SCHEDULED/00:00:16,7/SCHEDULED/00:00:32,8/SCHEDULED/00:01:04,9/SCHEDULED/00:01:40,10/SCHEDULED/00:01:40,closed}',
    'default policy: 1, 2, 4, 8, 16, 32, 64, 100, 100 s, and attempt 10 is the last');
SELECT is(t.attrs('default', 'ActivityTaskFailed')->>'retryState', 'MAXIMUM_ATTEMPTS_REACHED', 'after 10 attempts');
SELECT is((SELECT count(*) FROM durable.activity_attempts WHERE workflow_id = 'default' AND outcome = 'failed'), 10::bigint,
    'activity_attempts: 10 failed attempts');

-- A failure after two retries, then success: the attempt and the last failure
-- reach ActivityTaskStarted.
SELECT t.at('2026-01-01 06:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'third', 'third') IS NOT NULL AS started;
SELECT t.decide('third', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 60}'))) IS NOT NULL;
SELECT is(t.fail_round('third', 'first'), '2/SCHEDULED/00:00:01', 'first failure');
SELECT is(t.fail_round('third', 'second'), '3/SCHEDULED/00:00:02', 'second failure');
SELECT durable.complete_activity(durable.poll_activity_task('third', identity => 'w-3')->>'taskToken', '"done"');
SELECT is(t.events('third', from_id => 5),
    '{ActivityTaskScheduled,ActivityTaskStarted,ActivityTaskCompleted,DecisionTaskScheduled}', 'one Started, one Completed');
SELECT is(t.attrs('third', 'ActivityTaskStarted'),
    '{"scheduledEventId": 5, "identity": "w-3", "attempt": 3, "lastFailureReason": "second", "lastFailureDetails": null}'::jsonb,
    'ActivityTaskStarted: attempt 3, lastFailureReason of attempt 2');
SELECT is((SELECT array_agg(outcome ORDER BY attempt) FROM durable.activity_attempts WHERE workflow_id = 'third'),
    '{failed,failed,completed}', 'activity_attempts: failed, failed, completed');

SELECT * FROM finish();
ROLLBACK;

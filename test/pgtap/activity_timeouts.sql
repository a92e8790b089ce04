-- Activity timeouts and failure reasons (docs/api.md "Activities: retries, timeouts,
-- heartbeats"): StartToClose
-- and Heartbeat timeouts are retried, ScheduleToStart and ScheduleToClose are
-- final; a worker that dies is found by its StartToClose (10 minutes by
-- default) and the task comes back as the next attempt with the heartbeat
-- details of the previous one.
BEGIN;
SELECT plan(30);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

-- fail_activity without a reason fails with durable:Generic.
SELECT durable.start_workflow('wf', NULL, 'generic', 'generic') IS NOT NULL AS started;
SELECT t.decide('generic', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 60}'))) IS NOT NULL;
SELECT durable.fail_activity(durable.poll_activity_task('generic')->>'taskToken', NULL);
SELECT is(t.pending('generic')->>'lastFailureReason', 'durable:Generic', 'a NULL reason is durable:Generic');
SELECT is((SELECT failure_reason FROM durable.activity_attempts WHERE workflow_id = 'generic' AND attempt = 1),
    'durable:Generic', 'activity_attempts shows durable:Generic');

-- StartToClose: retried with reason durable:Timeout START_TO_CLOSE; the last
-- attempt times out for good with ActivityTaskTimedOut.
SELECT t.at('2026-01-01 01:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'stc', 'stc') IS NOT NULL AS started;
SELECT t.decide('stc', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 30,
    "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 2}}'))) IS NOT NULL;
SELECT durable.poll_activity_task('stc', identity => 'w-1') AS task1 \gset
SELECT t.at('2026-01-01 01:00:29.999+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.pending('stc')->>'state' || '/' || (t.pending('stc')->>'attempt'), 'STARTED/1', 'StartToClose: not yet');
SELECT t.at('2026-01-01 01:00:30+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.pending('stc') - 'activityType' - 'expirationTime' - 'lastWorkerIdentity' - 'activityId' - 'lastHeartbeatTime' - 'heartbeatDetails',
    '{"state": "SCHEDULED", "attempt": 2, "maximumAttempts": 2, "scheduledTime": "2026-01-01T01:00:31+00:00", "lastStartedTime": null,
      "lastFailureReason": "durable:Timeout START_TO_CLOSE", "lastFailureDetails": null,
      "nextAttemptScheduledTime": "2026-01-01T01:00:31+00:00"}'::jsonb, 'attempt 2 after 1 s, reason durable:Timeout START_TO_CLOSE');
SELECT throws_ok(format($$SELECT durable.complete_activity(%L)$$, :'task1'::jsonb->>'taskToken'), 'WF005', NULL,
    'the timed-out attempt''s token is stale');
SELECT t.at('2026-01-01 01:00:31+00');
SELECT durable.tick() AS fired \gset
SELECT is(durable.poll_activity_task('stc')->'attempt', '2', 'attempt 2 is handed out');
SELECT t.at('2026-01-01 01:01:01+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.events('stc', from_id => 5),
    '{ActivityTaskScheduled,ActivityTaskStarted,ActivityTaskTimedOut,DecisionTaskScheduled}', 'ActivityTaskTimedOut for good');
SELECT is(t.attrs('stc', 'ActivityTaskTimedOut'),
    '{"scheduledEventId": 5, "startedEventId": 6, "timeoutType": "START_TO_CLOSE", "details": null,
      "lastFailureReason": "durable:Timeout START_TO_CLOSE", "retryState": "MAXIMUM_ATTEMPTS_REACHED"}'::jsonb,
    'ActivityTaskTimedOut: START_TO_CLOSE');
SELECT is((SELECT array_agg(format('%s:%s:%s', attempt, outcome, failure_reason) ORDER BY attempt) FROM durable.activity_attempts WHERE workflow_id = 'stc'),
    '{"1:timed_out:durable:Timeout START_TO_CLOSE","2:timed_out:durable:Timeout START_TO_CLOSE"}', 'activity_attempts: two timeouts');

-- Heartbeat timeout: retried with reason durable:Timeout HEARTBEAT; the next
-- attempt gets the details of the last heartbeat.
SELECT t.at('2026-01-01 02:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'hb', 'hb') IS NOT NULL AS started;
SELECT t.decide('hb', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 600, "heartbeatTimeoutSeconds": 10}'))) IS NOT NULL;
SELECT durable.poll_activity_task('hb') AS task1 \gset
SELECT is((:'task1'::jsonb)->'heartbeatTimeout', '10', 'the task carries its heartbeat timeout');
SELECT t.at('2026-01-01 02:00:08+00');
SELECT is(durable.heartbeat_activity(:'task1'::jsonb->>'taskToken', '{"done": 8}'), false, 'heartbeat at 8 s');
SELECT t.at('2026-01-01 02:00:17+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.pending('hb')->>'state' || '/' || (t.pending('hb')->>'attempt'), 'STARTED/1', 'the heartbeat moved the deadline to 18 s');
SELECT t.at('2026-01-01 02:00:18+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.pending('hb')->>'state' || '/' || (t.pending('hb')->>'attempt'), 'SCHEDULED/2', 'no heartbeat for 10 s: timed out, attempt 2 scheduled');
SELECT is(t.pending('hb')->>'lastFailureReason', 'durable:Timeout HEARTBEAT', 'reason durable:Timeout HEARTBEAT');
SELECT t.at('2026-01-01 02:00:19+00');
SELECT durable.tick() AS fired \gset
SELECT is(durable.poll_activity_task('hb') - 'taskToken' - 'runId' - 'workflowId' - 'namespace' - 'activityId' - 'activityType' - 'input',
    '{"attempt": 2, "scheduledTime": "2026-01-01T02:00:19+00:00", "startedTime": "2026-01-01T02:00:19+00:00",
      "heartbeatDetails": {"done": 8}, "heartbeatTimeout": 10, "deadline": "2026-01-01T02:10:19+00:00"}'::jsonb,
    'attempt 2 carries the heartbeat details of attempt 1');

-- ScheduleToStart is final: no worker took the task.
SELECT t.at('2026-01-01 03:00:00+00');
SELECT durable.start_workflow('wf', NULL, 's2s', 's2s') IS NOT NULL AS started;
SELECT t.decide('s2s', jsonb_build_array(t.sched('a1', '{"scheduleToStartTimeoutSeconds": 5, "startToCloseTimeoutSeconds": 60}'))) IS NOT NULL;
SELECT t.at('2026-01-01 03:00:05+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.events('s2s', from_id => 5), '{ActivityTaskScheduled,ActivityTaskTimedOut,DecisionTaskScheduled}',
    'ScheduleToStart: ActivityTaskTimedOut at once, no ActivityTaskStarted, no retry');
SELECT is(t.attrs('s2s', 'ActivityTaskTimedOut'),
    '{"scheduledEventId": 5, "timeoutType": "SCHEDULE_TO_START", "details": null}'::jsonb, 'timeoutType SCHEDULE_TO_START');
SELECT is(durable.poll_activity_task('s2s'), NULL, 'the task is gone');

-- ScheduleToClose is final, even with attempts left.
SELECT t.at('2026-01-01 04:00:00+00');
SELECT durable.start_workflow('wf', NULL, 's2c', 's2c') IS NOT NULL AS started;
SELECT t.decide('s2c', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 6, "scheduleToCloseTimeoutSeconds": 10}'))) IS NOT NULL;
SELECT durable.poll_activity_task('s2c') IS NOT NULL AS polled;
SELECT t.at('2026-01-01 04:00:06+00');
SELECT durable.tick() AS fired \gset
SELECT t.at('2026-01-01 04:00:07+00');
SELECT durable.tick() AS fired \gset
SELECT is(durable.poll_activity_task('s2c')->>'deadline', '2026-01-01T04:00:10+00:00', 'attempt 2''s deadline is the ScheduleToClose deadline');
SELECT t.at('2026-01-01 04:00:10+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.events('s2c', from_id => 5), '{ActivityTaskScheduled,ActivityTaskStarted,ActivityTaskTimedOut,DecisionTaskScheduled}',
    'ScheduleToClose: timed out for good');
SELECT is(t.attrs('s2c', 'ActivityTaskTimedOut'),
    '{"scheduledEventId": 5, "startedEventId": 6, "timeoutType": "SCHEDULE_TO_CLOSE", "details": null,
      "lastFailureReason": "durable:Timeout START_TO_CLOSE"}'::jsonb, 'timeoutType SCHEDULE_TO_CLOSE');
SELECT is(t.attrs('s2c', 'ActivityTaskStarted')->'attempt', '2', 'at attempt 2');

-- Neither StartToClose nor ScheduleToClose: 10 minutes.  A worker that
-- dies is found by it, and the task comes back as the next attempt with the
-- heartbeat details of the dead one.
SELECT t.at('2026-01-01 05:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'dead', 'dead') IS NOT NULL AS started;
SELECT t.decide('dead', jsonb_build_array(t.sched('a1'))) IS NOT NULL;
SELECT is(t.attrs('dead', 'ActivityTaskScheduled')->'startToCloseTimeoutSeconds', '600', 'StartToClose defaults to 600 s');
SELECT durable.poll_activity_task('dead', identity => 'doomed') AS task1 \gset
SELECT is((:'task1'::jsonb)->>'deadline', '2026-01-01T05:10:00+00:00', 'the task''s deadline is 10 minutes away');
SELECT t.at('2026-01-01 05:03:00+00');
SELECT is(durable.heartbeat_activity(:'task1'::jsonb->>'taskToken', '{"row": 300}'), false, 'the worker heartbeats, then dies');
SELECT t.at('2026-01-01 05:09:59+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.pending('dead')->>'state' || '/' || (t.pending('dead')->>'attempt'), 'STARTED/1', 'not reclaimed before 10 minutes');
SELECT t.at('2026-01-01 05:10:00+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.pending('dead')->>'state' || '/' || (t.pending('dead')->>'attempt'), 'SCHEDULED/2', 'reclaimed at 10 minutes');
SELECT t.at('2026-01-01 05:10:01+00');
SELECT durable.tick() AS fired \gset
SELECT is(durable.poll_activity_task('dead', identity => 'heir') - 'taskToken' - 'runId' - 'workflowId' - 'namespace' - 'activityType' - 'input' - 'heartbeatTimeout',
    '{"activityId": "a1", "attempt": 2, "scheduledTime": "2026-01-01T05:10:01+00:00", "startedTime": "2026-01-01T05:10:01+00:00",
      "heartbeatDetails": {"row": 300}, "deadline": "2026-01-01T05:20:01+00:00"}'::jsonb,
    'the next attempt, with the dead worker''s heartbeat details');
SELECT is((SELECT format('%s:%s:%s', outcome, failure_reason, worker_identity) FROM durable.activity_attempts WHERE workflow_id = 'dead' AND attempt = 1),
    'timed_out:durable:Timeout START_TO_CLOSE:doomed', 'activity_attempts: the dead worker''s attempt timed out');

-- durable.default_activity_timeout sets that default.
SET LOCAL durable.default_activity_timeout = '90s';
SELECT durable.start_workflow('wf', NULL, 'guc', 'guc') IS NOT NULL AS started;
SELECT t.decide('guc', jsonb_build_array(t.sched('a1'))) IS NOT NULL;
SELECT is(t.attrs('guc', 'ActivityTaskScheduled')->'startToCloseTimeoutSeconds', '90', 'durable.default_activity_timeout');

SELECT * FROM finish();
ROLLBACK;

-- describe_workflow and terminate_workflow as Cadence does them:
--  - describe_workflow's pendingActivities[] is Cadence's PendingActivityInfo:
--    attempt, maximumAttempts, expirationTime, and the last heartbeat's time
--    and details, which a retry keeps (Cadence resets neither when it
--    schedules the next attempt);
--  - a run terminated by a start with terminate_if_running names the run that
--    replaced it (Cadence: details "New runID: <id>");
--  - DecisionTaskCompleted and DecisionTaskFailed carry the identity of the
--    worker, which a worker that does not pass it again polled with (Cadence's
--    workers send the same identity to poll and respond).
BEGIN;
SELECT plan(15);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

-- Pending activity info across a retry.
SELECT durable.start_workflow('wf', NULL, 'act', 'act');
SELECT t.decide('act', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 600,
    "heartbeatTimeoutSeconds": 60,
    "retryPolicy": {"initialIntervalInSeconds": 10, "maximumAttempts": 5, "expirationIntervalInSeconds": 3600}}'))) IS NOT NULL;
SELECT is(t.events('act'),
    '{WorkflowExecutionStarted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,ActivityTaskScheduled}',
    'the activity is scheduled');
SELECT is(t.pending('act')->'maximumAttempts', '5', 'pendingActivities: maximumAttempts');
SELECT is((t.pending('act')->>'expirationTime')::timestamptz, '2026-01-01 01:00:00+00',
    'pendingActivities: expirationTime, the expiration interval after the first schedule');
SELECT durable.poll_activity_task('act', 'aw1') AS a1 \gset
SELECT t.at('2026-01-01 00:00:05+00');
SELECT durable.heartbeat_activity((:'a1'::jsonb)->>'taskToken', '{"progress": 40}');
SELECT t.at('2026-01-01 00:00:07+00');
SELECT durable.fail_activity((:'a1'::jsonb)->>'taskToken', 'boom');
SELECT is(t.pending('act') - 'expirationTime' - 'scheduledTime' - 'nextAttemptScheduledTime' - 'lastStartedTime',
    '{"activityId": "a1", "activityType": "do", "state": "SCHEDULED", "attempt": 2, "maximumAttempts": 5,
      "lastHeartbeatTime": "2026-01-01T00:00:05+00:00", "heartbeatDetails": {"progress": 40},
      "lastFailureReason": "boom", "lastFailureDetails": null, "lastWorkerIdentity": "aw1"}'::jsonb,
    'after the failure: attempt 2 of 5, the last heartbeat kept with its details');
SELECT t.at('2026-01-01 00:00:17+00');
SELECT durable.tick() AS fired \gset
SELECT durable.poll_activity_task('act', 'aw2') AS a2 \gset
SELECT is((:'a2'::jsonb)->'heartbeatDetails', '{"progress": 40}', 'the next attempt gets the details');
SELECT is(t.pending('act')->>'state', 'STARTED', 'attempt 2 started');
SELECT is((t.pending('act')->>'lastHeartbeatTime')::timestamptz, '2026-01-01 00:00:05+00',
    'the started attempt still shows the last heartbeat time');
-- Attempt 2's heartbeat timeout counts from its own start (00:00:17), not the old heartbeat.
SELECT t.at('2026-01-01 00:01:16+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.pending('act')->'attempt', '2', 'no heartbeat timeout 59 s into attempt 2');
SELECT t.at('2026-01-01 00:01:17+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.pending('act')->>'lastFailureReason', 'durable:Timeout HEARTBEAT', 'its heartbeat timeout after 60 s');
SELECT is(t.pending('act')->'attempt', '3', 'attempt 3 follows');
SELECT is(t.events('act'),
    '{WorkflowExecutionStarted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,ActivityTaskScheduled}',
    'retried attempts write no events');

-- terminate_if_running names the new run.
SELECT durable.start_workflow('wf', NULL, 'tir', 'tir') AS old \gset
SELECT durable.start_workflow('wf', NULL, 'tir', 'tir', id_reuse_policy => 'terminate_if_running') AS new \gset
SELECT is(t.events('tir', :'old'), '{WorkflowExecutionStarted,DecisionTaskScheduled,WorkflowExecutionTerminated}',
    'the running run is terminated');
SELECT is(t.attrs('tir', 'WorkflowExecutionTerminated', 1, :'old') - 'identity',
    jsonb_build_object('reason', 'terminated by a new start (id_reuse_policy terminate_if_running)',
                       'details', jsonb_build_object('newRunId', :'new')),
    'WorkflowExecutionTerminated names the run that replaced it');
SELECT is(t.events('tir', :'new'), '{WorkflowExecutionStarted,DecisionTaskScheduled}', 'the new run starts');

-- The identity of decision task answers.
SELECT durable.start_workflow('wf', NULL, 'ident', 'ident') AS i1 \gset
SELECT durable.poll_decision_task('ident', 'decider-7') AS d1 \gset
SELECT durable.fail_decision_task((:'d1'::jsonb)->>'taskToken', 'WorkflowWorkerUnhandledFailure', NULL);
-- Attempt 2 is transient: its DecisionTaskStarted is written only with the
-- answer, with the answer's identity, as Cadence writes a transient pair.
SELECT durable.poll_decision_task('ident', 'decider-8') AS d2 \gset
SELECT durable.complete_decision_task((:'d2'::jsonb)->>'taskToken',
    '[{"decisionType": "StartTimer", "timerId": "t1", "startToFireTimeoutSeconds": 60}]', 'decider-8');
SELECT durable.signal_workflow('ident', 's');
SELECT durable.poll_decision_task('ident', 'decider-9') AS d3 \gset
SELECT durable.complete_decision_task((:'d3'::jsonb)->>'taskToken', '[]');
SELECT is((SELECT array_agg(event_type || ':' || COALESCE(attributes->>'scheduledEventId', '-') || ':'
                            || COALESCE(attributes->>'startedEventId', '-') || ':'
                            || COALESCE(attributes->>'identity', '-') ORDER BY event_id)
             FROM durable.get_history('ident') WHERE event_type LIKE 'DecisionTask%' AND event_type <> 'DecisionTaskScheduled'),
    '{DecisionTaskStarted:2:-:decider-7,DecisionTaskFailed:2:3:decider-7,DecisionTaskStarted:5:-:decider-8,DecisionTaskCompleted:5:6:decider-8,DecisionTaskStarted:10:-:decider-9,DecisionTaskCompleted:10:11:decider-9}',
    'Failed and Completed carry the identity of the worker: the one the answer names, else the one it polled with');

SELECT * FROM finish();
ROLLBACK;

-- Heartbeats and cancellation (docs/api.md "Worker functions"): heartbeats keep
-- an attempt alive and show in describe_workflow; heartbeat_activity returns true
-- once the workflow has a cancel request; an activity that finishes after its
-- workflow closed is rejected with WF005 and its result is not recorded.
BEGIN;
SELECT plan(17);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

SELECT durable.start_workflow('wf', NULL, 'hb', 'hb') IS NOT NULL AS started;
SELECT t.decide('hb', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 600, "heartbeatTimeoutSeconds": 10}'),
                                              t.sched('a2', '{"startToCloseTimeoutSeconds": 600}'))) IS NOT NULL;
SELECT durable.poll_activity_task('hb', identity => 'w-1') AS task1 \gset
SELECT durable.poll_activity_task('hb', identity => 'w-2') AS task2 \gset
SELECT t.at('2026-01-01 00:00:07+00');
SELECT is(durable.heartbeat_activity(:'task1'::jsonb->>'taskToken', '{"done": 7}'), false, 'a heartbeat returns false without a cancel request');
SELECT is(t.pending('hb') - 'activityType' - 'expirationTime' - 'nextAttemptScheduledTime' - 'lastFailureReason' - 'lastFailureDetails',
    '{"activityId": "a1", "state": "STARTED", "attempt": 1, "maximumAttempts": 10, "scheduledTime": "2026-01-01T00:00:00+00:00",
      "lastStartedTime": "2026-01-01T00:00:00+00:00", "lastHeartbeatTime": "2026-01-01T00:00:07+00:00",
      "heartbeatDetails": {"done": 7}, "lastWorkerIdentity": "w-1"}'::jsonb,
    'describe shows the heartbeat time and details');
SELECT t.at('2026-01-01 00:00:14+00');
SELECT is(durable.heartbeat_activity(:'task1'::jsonb->>'taskToken'), false, 'a heartbeat without details');
SELECT is(t.pending('hb')->'heartbeatDetails', '{"done": 7}', 'keeps the last details');
SELECT t.at('2026-01-01 00:00:23+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.pending('hb')->>'state', 'STARTED', 'heartbeats every 7 s keep a 10 s heartbeat timeout from firing');
SELECT is(t.events('hb', from_id => 7), '{}', 'heartbeats write no history');

-- cancel_workflow: the heartbeats of the run's activities return true.
SELECT durable.cancel_workflow('hb', 'enough');
SELECT is(durable.heartbeat_activity(:'task1'::jsonb->>'taskToken'), true, 'after cancel_workflow, a heartbeat returns true');
SELECT is(durable.heartbeat_activity(:'task2'::jsonb->>'taskToken', '{"x": 1}'), true, 'for every activity of the run');
SELECT is(t.events('hb', from_id => 7), '{WorkflowExecutionCancelRequested,DecisionTaskScheduled}',
    'WorkflowExecutionCancelRequested and a decision task');
SELECT is(t.pending('hb')->>'state', 'STARTED', 'the activity itself is not canceled by the request');

-- The workflow closes; the activities finish later: WF005, nothing recorded.
SELECT t.decide('hb', '[{"decisionType": "CancelWorkflowExecution"}]') IS NOT NULL;
SELECT is(durable.describe_workflow('hb')->>'status', 'canceled', 'the workflow is canceled');
SELECT t.footprint() AS before \gset
SELECT throws_ok(format($$SELECT durable.complete_activity(%L, '"late"')$$, :'task1'::jsonb->>'taskToken'), 'WF005', NULL,
    'complete_activity after the workflow closed: WF005');
SELECT throws_ok(format($$SELECT durable.fail_activity(%L, 'late')$$, :'task2'::jsonb->>'taskToken'), 'WF005', NULL,
    'fail_activity after the workflow closed: WF005');
SELECT throws_ok(format($$SELECT durable.heartbeat_activity(%L)$$, :'task1'::jsonb->>'taskToken'), 'WF005', NULL,
    'heartbeat_activity after the workflow closed: WF005');
SELECT throws_ok(format($$SELECT durable.report_activity_canceled(%L)$$, :'task2'::jsonb->>'taskToken'), 'WF005', NULL,
    'report_activity_canceled after the workflow closed: WF005');
SELECT is(t.footprint(), :'before', 'the late calls wrote nothing');
SELECT is((SELECT count(*) FROM durable.history h JOIN durable.runs r USING (run_id)
            WHERE r.workflow_id = 'hb' AND h.event_type LIKE 'ActivityTask%' AND h.event_type <> 'ActivityTaskScheduled'),
    0::bigint, 'no activity outcome in the history');

SELECT * FROM finish();
ROLLBACK;

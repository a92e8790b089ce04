-- A decision that cancels a timer which fired while its decision task was
-- started (the workflow has not seen the TimerFired, which is buffered) gets
-- TimerCanceled and the TimerFired is dropped, as in Cadence (its mutable
-- state's AddTimerCanceledEvent: checkAndClearTimerFiredEvent).  An activity
-- that completed meanwhile is another matter in Cadence, kept here: it is no
-- longer pending, so its cancel request fails (ACTIVITY_ID_UNKNOWN) and its
-- buffered completion is written.
BEGIN;
SELECT plan(12);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

CREATE FUNCTION pg_temp.hist(wid text, from_id int DEFAULT 1) RETURNS text[] LANGUAGE sql AS $$
    SELECT array_agg(event_id || ':' || event_type ORDER BY event_id)
      FROM durable.get_history(wid) WHERE event_id >= from_id $$;
CREATE FUNCTION pg_temp.event(wid text, id int) RETURNS jsonb LANGUAGE sql AS $$
    SELECT attributes - 'identity' FROM durable.get_history(wid) WHERE event_id = id $$;

-- 1. The timer fires while the decision task that cancels it is started.
SELECT durable.start_workflow('wf', NULL, 'ct', 'ct', decision_timeout => '5 minutes') IS NOT NULL AS started;
SELECT t.decide('ct', '[{"decisionType": "StartTimer", "timerId": "t1", "startToFireTimeoutSeconds": 60},
                        {"decisionType": "StartTimer", "timerId": "t2", "startToFireTimeoutSeconds": 120}]') IS NOT NULL;
SELECT durable.signal_workflow('ct', 'wake');
SELECT durable.poll_decision_task('ct') AS d \gset
SELECT t.at('2026-01-01 00:01:00+00');
SELECT durable.tick() AS fired \gset
SELECT durable.complete_decision_task(:'d'::jsonb->>'taskToken', '[{"decisionType": "CancelTimer", "timerId": "t1"}]');
SELECT is(pg_temp.hist('ct', 7),
    '{7:WorkflowExecutionSignaled,8:DecisionTaskScheduled,9:DecisionTaskStarted,10:DecisionTaskCompleted,11:TimerCanceled}',
    'TimerCanceled; no TimerFired, no CancelTimerFailed, no new decision task');
SELECT is(pg_temp.event('ct', 11), '{"timerId": "t1", "startedEventId": 5, "decisionTaskCompletedEventId": 10}',
    'TimerCanceled names the timer''s TimerStarted');
SELECT is(durable.poll_decision_task('ct'), NULL, 'no decision task is scheduled');
SELECT is(durable.describe_workflow('ct')->'pendingTimers'->0->>'timerId', 't2', 'only t2 is pending');
SELECT t.at('2026-01-01 00:02:00+00');
SELECT durable.tick() AS fired \gset
SELECT is(pg_temp.hist('ct', 12), '{12:TimerFired,13:DecisionTaskScheduled}', 't2 fires later');
SELECT is(pg_temp.event('ct', 12), '{"timerId": "t2", "startedEventId": 6}', 'TimerFired of t2');

-- 2. The same with a signal buffered too: the signal is kept and calls for a
-- decision task.
SELECT t.at('2026-01-02 00:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'ct2', 'ct2', decision_timeout => '5 minutes') IS NOT NULL AS started;
SELECT t.decide('ct2', '[{"decisionType": "StartTimer", "timerId": "t1", "startToFireTimeoutSeconds": 60}]') IS NOT NULL;
SELECT durable.signal_workflow('ct2', 'wake');
SELECT durable.poll_decision_task('ct2') AS d \gset
SELECT t.at('2026-01-02 00:01:00+00');
SELECT durable.tick() AS fired \gset
SELECT durable.signal_workflow('ct2', 'late');
SELECT durable.complete_decision_task(:'d'::jsonb->>'taskToken', '[{"decisionType": "CancelTimer", "timerId": "t1"}]');
SELECT is(pg_temp.hist('ct2', 8),
    '{8:DecisionTaskStarted,9:DecisionTaskCompleted,10:TimerCanceled,11:WorkflowExecutionSignaled,12:DecisionTaskScheduled}',
    'TimerCanceled, the buffered signal, a decision task');

-- 3. Cancel the timer and complete the workflow: the TimerFired was all that
-- was buffered, and it is dropped, so nothing is left unhandled (Cadence
-- recomputes its unhandled events after the TimerCanceled).
SELECT t.at('2026-01-02 12:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'ct3', 'ct3', decision_timeout => '5 minutes') IS NOT NULL AS started;
SELECT t.decide('ct3', '[{"decisionType": "StartTimer", "timerId": "t1", "startToFireTimeoutSeconds": 60}]') IS NOT NULL;
SELECT durable.signal_workflow('ct3', 'wake');
SELECT durable.poll_decision_task('ct3') AS d \gset
SELECT t.at('2026-01-02 12:01:00+00');
SELECT durable.tick() AS fired \gset
SELECT durable.complete_decision_task(:'d'::jsonb->>'taskToken',
    '[{"decisionType": "CancelTimer", "timerId": "t1"}, {"decisionType": "CompleteWorkflowExecution", "result": 1}]');
SELECT is(pg_temp.hist('ct3', 8),
    '{8:DecisionTaskStarted,9:DecisionTaskCompleted,10:TimerCanceled,11:WorkflowExecutionCompleted}',
    'TimerCanceled, WorkflowExecutionCompleted');
-- With a signal buffered too, the completion is refused (UnhandledDecision): no
-- event of the decisions is written, and the TimerFired is kept.
SELECT durable.start_workflow('wf', NULL, 'ct4', 'ct4', decision_timeout => '5 minutes') IS NOT NULL AS started;
SELECT t.decide('ct4', '[{"decisionType": "StartTimer", "timerId": "t1", "startToFireTimeoutSeconds": 60}]') IS NOT NULL;
SELECT durable.signal_workflow('ct4', 'wake');
SELECT durable.poll_decision_task('ct4') AS d \gset
SELECT t.at('2026-01-02 12:02:00+00');
SELECT durable.tick() AS fired \gset
SELECT durable.signal_workflow('ct4', 'late');
SELECT durable.complete_decision_task(:'d'::jsonb->>'taskToken',
    '[{"decisionType": "CancelTimer", "timerId": "t1"}, {"decisionType": "CompleteWorkflowExecution", "result": 1}]');
SELECT is(pg_temp.hist('ct4', 8),
    '{8:DecisionTaskStarted,9:DecisionTaskFailed,10:TimerFired,11:WorkflowExecutionSignaled,12:DecisionTaskScheduled}',
    'with a signal buffered too: DecisionTaskFailed (UnhandledDecision), the TimerFired, the signal, a decision task');

-- 4. An activity that completes while the decision task that cancels it is started.
SELECT t.at('2026-01-03 00:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'ca', 'ca', decision_timeout => '5 minutes') IS NOT NULL AS started;
SELECT t.decide('ca', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 60}'))) IS NOT NULL;
SELECT durable.poll_activity_task('ca') AS a \gset
SELECT durable.signal_workflow('ca', 'wake');
SELECT durable.poll_decision_task('ca') AS d \gset
SELECT durable.complete_activity(:'a'::jsonb->>'taskToken', '"r"');
SELECT durable.complete_decision_task(:'d'::jsonb->>'taskToken',
    '[{"decisionType": "RequestCancelActivityTask", "activityId": "a1"}]');
SELECT is(pg_temp.hist('ca', 8),
    '{8:DecisionTaskStarted,9:DecisionTaskCompleted,10:RequestCancelActivityTaskFailed,11:ActivityTaskStarted,12:ActivityTaskCompleted,13:DecisionTaskScheduled}',
    'RequestCancelActivityTaskFailed, then the buffered ActivityTaskStarted and ActivityTaskCompleted');
SELECT is(pg_temp.event('ca', 10), '{"activityId": "a1", "cause": "ACTIVITY_ID_UNKNOWN", "decisionTaskCompletedEventId": 9}',
    'the cancel request fails: ACTIVITY_ID_UNKNOWN');
SELECT is(pg_temp.event('ca', 12), '{"scheduledEventId": 5, "startedEventId": 11, "result": "r"}',
    'ActivityTaskCompleted');

SELECT * FROM finish();
ROLLBACK;

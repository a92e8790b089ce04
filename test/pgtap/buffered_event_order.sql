-- Events that arrive while a decision task is started are buffered and
-- written, as Cadence writes them (its mutable state's FlushBufferedEvents at
-- the end of the completing transaction), after DecisionTaskCompleted and
-- the events of that task's decisions; then comes the next decision task.
BEGIN;
SELECT plan(12);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

-- "id:type" of each event of a run's history, from event from_id.
CREATE FUNCTION pg_temp.hist(wid text, from_id int DEFAULT 1) RETURNS text[] LANGUAGE sql AS $$
    SELECT array_agg(event_id || ':' || event_type ORDER BY event_id)
      FROM durable.get_history(wid) WHERE event_id >= from_id $$;
CREATE FUNCTION pg_temp.event(wid text, id int) RETURNS jsonb LANGUAGE sql AS $$
    SELECT attributes - 'identity' FROM durable.get_history(wid) WHERE event_id = id $$;

-- 1. A signal buffered while the decision task schedules an activity.
SELECT durable.start_workflow('wf', NULL, 'sig', 'sig', decision_timeout => '5 minutes') IS NOT NULL AS started;
SELECT durable.poll_decision_task('sig') AS d \gset
SELECT durable.signal_workflow('sig', 'go', '{"n": 1}');
SELECT durable.complete_decision_task(:'d'::jsonb->>'taskToken', jsonb_build_array(t.sched('a1')));
SELECT is(pg_temp.hist('sig', 3),
    '{3:DecisionTaskStarted,4:DecisionTaskCompleted,5:ActivityTaskScheduled,6:WorkflowExecutionSignaled,7:DecisionTaskScheduled}',
    'DecisionTaskCompleted, the decision''s ActivityTaskScheduled, the buffered signal, a new decision task');
SELECT is(pg_temp.event('sig', 5)->'decisionTaskCompletedEventId', '4', 'ActivityTaskScheduled names DecisionTaskCompleted');
SELECT is(pg_temp.event('sig', 6), '{"signalName": "go", "input": {"n": 1}}', 'the signal');

-- 2. A timer fires while the decision task schedules an activity and records a marker.
SELECT durable.start_workflow('wf', NULL, 'tmr', 'tmr', decision_timeout => '5 minutes') IS NOT NULL AS started;
SELECT t.decide('tmr', '[{"decisionType": "StartTimer", "timerId": "t1", "startToFireTimeoutSeconds": 60}]') IS NOT NULL;
SELECT durable.signal_workflow('tmr', 'wake');
SELECT durable.poll_decision_task('tmr') AS d \gset
SELECT t.at('2026-01-01 00:01:00+00');
SELECT durable.tick() AS fired \gset
SELECT durable.complete_decision_task(:'d'::jsonb->>'taskToken', jsonb_build_array(t.sched('a1'),
    '{"decisionType": "RecordMarker", "markerName": "m"}'::jsonb));
SELECT is(pg_temp.hist('tmr', 6),
    '{6:WorkflowExecutionSignaled,7:DecisionTaskScheduled,8:DecisionTaskStarted,9:DecisionTaskCompleted,10:ActivityTaskScheduled,11:MarkerRecorded,12:TimerFired,13:DecisionTaskScheduled}',
    'the decision''s ActivityTaskScheduled and MarkerRecorded, then the buffered TimerFired, then a decision task');
SELECT is(pg_temp.event('tmr', 12), '{"timerId": "t1", "startedEventId": 5}', 'TimerFired names its TimerStarted');

-- 3. An activity completes while the decision task starts a timer.
SELECT t.at('2026-01-02 00:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'act', 'act', decision_timeout => '5 minutes') IS NOT NULL AS started;
SELECT t.decide('act', jsonb_build_array(t.sched('a1',
    '{"startToCloseTimeoutSeconds": 60, "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 2}}'))) IS NOT NULL;
SELECT durable.poll_activity_task('act', identity => 'aw') AS a \gset
SELECT durable.signal_workflow('act', 'wake');
SELECT durable.poll_decision_task('act') AS d \gset
SELECT durable.complete_activity(:'a'::jsonb->>'taskToken', '"r"');
SELECT durable.complete_decision_task(:'d'::jsonb->>'taskToken',
    '[{"decisionType": "StartTimer", "timerId": "t1", "startToFireTimeoutSeconds": 60}]');
SELECT is(pg_temp.hist('act', 6),
    '{6:WorkflowExecutionSignaled,7:DecisionTaskScheduled,8:DecisionTaskStarted,9:DecisionTaskCompleted,10:TimerStarted,11:ActivityTaskStarted,12:ActivityTaskCompleted,13:DecisionTaskScheduled}',
    'the decision''s TimerStarted, then the buffered ActivityTaskStarted and ActivityTaskCompleted');
SELECT is(pg_temp.event('act', 10), '{"timerId": "t1", "startToFireTimeoutSeconds": 60, "decisionTaskCompletedEventId": 9}',
    'TimerStarted names DecisionTaskCompleted');
SELECT is(pg_temp.event('act', 11), '{"scheduledEventId": 5, "attempt": 1}', 'ActivityTaskStarted names ActivityTaskScheduled');
SELECT is(pg_temp.event('act', 12), '{"scheduledEventId": 5, "startedEventId": 11, "result": "r"}',
    'ActivityTaskCompleted names both');

-- 4. A decision that cancels an activity not started yet (ActivityTaskCanceled at
-- once) and starts a timer, with a signal buffered: the decision task the cancel
-- calls for comes after all of the decisions' events and the signal.
SELECT durable.start_workflow('wf', NULL, 'can', 'can', decision_timeout => '5 minutes') IS NOT NULL AS started;
SELECT t.decide('can', jsonb_build_array(t.sched('a1'))) IS NOT NULL;
SELECT durable.signal_workflow('can', 'wake');
SELECT durable.poll_decision_task('can') AS d \gset
SELECT durable.signal_workflow('can', 'late');
SELECT durable.complete_decision_task(:'d'::jsonb->>'taskToken',
    '[{"decisionType": "RequestCancelActivityTask", "activityId": "a1"},
      {"decisionType": "StartTimer", "timerId": "t1", "startToFireTimeoutSeconds": 60}]');
SELECT is(pg_temp.hist('can', 9),
    '{9:DecisionTaskCompleted,10:ActivityTaskCancelRequested,11:ActivityTaskCanceled,12:TimerStarted,13:WorkflowExecutionSignaled,14:DecisionTaskScheduled}',
    'ActivityTaskCancelRequested, ActivityTaskCanceled, TimerStarted, the buffered signal, then one decision task');
SELECT is(pg_temp.event('can', 11) - 'details',
    '{"scheduledEventId": 5, "latestCancelRequestedEventId": 10}',
    'ActivityTaskCanceled names ActivityTaskScheduled and the cancel request');
SELECT is(pg_temp.event('can', 13)->>'signalName', 'late', 'the buffered signal');

SELECT * FROM finish();
ROLLBACK;

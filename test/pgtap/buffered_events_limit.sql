-- Too many events buffered during one decision task fail that task, so that
-- the worker starts over with the whole history.  Written from Cadence's and
-- Temporal's closeTransactionHandleBufferedEventsLimit (mutable state): once
-- a workflow with a started decision task has MaximumBufferedEventsBatch
-- (100) events buffered, the task gets DecisionTaskFailed with cause
-- ForceCloseDecision, the buffered events are written and a new decision
-- task is scheduled.  durable.max_buffered_events is that limit.
BEGIN;
SELECT plan(11);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

SELECT durable.start_workflow('wf', NULL, 'bl', 'bl') IS NOT NULL AS started;
SELECT durable.poll_decision_task('bl') AS d1 \gset
DO $$ BEGIN FOR i IN 1..99 LOOP PERFORM durable.signal_workflow('bl', 's', to_jsonb(i)); END LOOP; END $$;
SELECT is(t.events('bl'), '{WorkflowExecutionStarted,DecisionTaskScheduled,DecisionTaskStarted}',
    '99 signals are buffered while the task is started');
SELECT durable.signal_workflow('bl', 's', '100');
SELECT is(array_remove(t.events('bl', from_id => 3), 'WorkflowExecutionSignaled'),
    '{DecisionTaskStarted,DecisionTaskFailed,DecisionTaskScheduled}',
    'the 100th fails the task: DecisionTaskFailed, the signals, a new DecisionTaskScheduled');
SELECT is(t.events('bl', from_id => 5), array_fill('WorkflowExecutionSignaled'::text, ARRAY[100]) || '{DecisionTaskScheduled}',
    'the 100 signals are written between them');
SELECT is(t.attrs('bl', 'DecisionTaskFailed'),
    '{"scheduledEventId": 2, "startedEventId": 3, "cause": "ForceCloseDecision", "identity": "durable"}'::jsonb,
    'DecisionTaskFailed: cause ForceCloseDecision');
SELECT is(t.attrs('bl', 'DecisionTaskScheduled', 2)->>'attempt', '1', 'the new task is a first attempt');
SELECT is((SELECT count(*) FROM durable.buffered_events), 0::bigint, 'nothing is left buffered');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]')$$, :'d1'::jsonb->>'taskToken'),
    'WF005', NULL, 'the failed task''s completion is refused (WF005)');
SELECT durable.poll_decision_task('bl') AS d2 \gset
SELECT is(jsonb_array_length(:'d2'::jsonb->'history'), 106, 'the new task has the whole history');
SELECT lives_ok(format($$SELECT durable.complete_decision_task(%L, '[]')$$, :'d2'::jsonb->>'taskToken'),
    'and completes');

-- The limit is durable.max_buffered_events (100 by default).
SELECT is(current_setting('durable.max_buffered_events', true), '100', 'durable.max_buffered_events is 100 by default');
SET LOCAL durable.max_buffered_events = 2;
SELECT durable.start_workflow('wf', NULL, 'bl2', 'bl2') IS NOT NULL AS started;
SELECT durable.poll_decision_task('bl2') IS NOT NULL AS polled;
SELECT durable.signal_workflow('bl2', 's');
SELECT durable.signal_workflow('bl2', 's');
SELECT is(t.events('bl2', from_id => 3),
    '{DecisionTaskStarted,DecisionTaskFailed,WorkflowExecutionSignaled,WorkflowExecutionSignaled,DecisionTaskScheduled}',
    'with 2, the second buffered signal fails the task');

SELECT * FROM finish();
ROLLBACK;

-- Reset and restart (docs/api.md "Reset and restart"): fix the code and carry on.  reset_workflow is Cadence's
-- ResetWorkflowExecution: the new run's history is the old one's up to the
-- DecisionTaskStarted before the chosen DecisionTaskCompleted, then DecisionTaskFailed
-- {cause ResetWorkflow, reason, baseRunId, newRunId}, the signals received after the
-- point (re-applied), and a DecisionTaskScheduled; activities and timers pending at the
-- point are pending again, those after it are gone; a running run is terminated.
-- restart_workflow starts a new chain of a closed workflow with the same options.
BEGIN;
SELECT * FROM no_plan();
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

-- The history of a run as "id:type" lines, for whole-history comparisons.
CREATE FUNCTION pg_temp.hist(wid text, rid uuid) RETURNS text[] LANGUAGE sql AS $$
    SELECT array_agg(event_id || ':' || event_type ORDER BY event_id)
      FROM durable.get_history(wid, run_id => rid) $$;
CREATE FUNCTION pg_temp.attr(wid text, rid uuid, eid bigint) RETURNS jsonb LANGUAGE sql AS $$
    SELECT attributes FROM durable.get_history(wid, run_id => rid) WHERE event_id = eid $$;

-- 1. A failed workflow with an activity pending, a timer pending and a signal.
--    1 WorkflowExecutionStarted, 2-4 decision (schedules a1), 5 ActivityTaskScheduled a1,
--    6-7 a1 started and completed, 8-10 decision (timer t1, activity a2),
--    11 TimerStarted, 12 ActivityTaskScheduled a2, 13 signal go, 14-16 decision that
--    fails the workflow, 17 WorkflowExecutionFailed.
SELECT durable.start_workflow('wf', '{"n": 1}', 'r1', 'r1') AS base \gset
SELECT t.decide('r1', jsonb_build_array(t.sched('a1', '{"taskQueue": "r1a"}'))) IS NOT NULL;
SELECT durable.complete_activity(durable.poll_activity_task('r1a')->>'taskToken', '{"a1": "done"}');
SELECT t.decide('r1', jsonb_build_array(
    '{"decisionType": "StartTimer", "timerId": "t1", "startToFireTimeoutSeconds": 3600}'::jsonb,
    t.sched('a2', '{"taskQueue": "r1a", "scheduleToStartTimeoutSeconds": 600}'))) IS NOT NULL;
SELECT durable.signal_workflow('r1', 'go', '{"s": 1}');
SELECT t.decide('r1', '[{"decisionType": "FailWorkflowExecution", "reason": "bug"}]') IS NOT NULL;
SELECT is(pg_temp.hist('r1', :'base'),
    '{1:WorkflowExecutionStarted,2:DecisionTaskScheduled,3:DecisionTaskStarted,4:DecisionTaskCompleted,5:ActivityTaskScheduled,6:ActivityTaskStarted,7:ActivityTaskCompleted,8:DecisionTaskScheduled,9:DecisionTaskStarted,10:DecisionTaskCompleted,11:TimerStarted,12:ActivityTaskScheduled,13:WorkflowExecutionSignaled,14:DecisionTaskScheduled,15:DecisionTaskStarted,16:DecisionTaskCompleted,17:WorkflowExecutionFailed}',
    'setup: the failed run');

-- The default point is the last DecisionTaskCompleted (16).
SELECT t.at('2026-01-01 00:10:00+00');
SELECT durable.reset_workflow('r1', 'fixed the decider') AS reset1 \gset
SELECT isnt(:'reset1'::uuid, :'base'::uuid, 'reset returns a new run id');
SELECT is(durable.resolve_run_id('r1'), :'reset1'::uuid, 'the new run is the latest');
SELECT is(pg_temp.hist('r1', :'reset1'),
    '{1:WorkflowExecutionStarted,2:DecisionTaskScheduled,3:DecisionTaskStarted,4:DecisionTaskCompleted,5:ActivityTaskScheduled,6:ActivityTaskStarted,7:ActivityTaskCompleted,8:DecisionTaskScheduled,9:DecisionTaskStarted,10:DecisionTaskCompleted,11:TimerStarted,12:ActivityTaskScheduled,13:WorkflowExecutionSignaled,14:DecisionTaskScheduled,15:DecisionTaskStarted,16:DecisionTaskFailed,17:DecisionTaskScheduled}',
    'default point: history up to the last DecisionTaskStarted, DecisionTaskFailed, DecisionTaskScheduled');
SELECT is((SELECT count(*) FROM durable.get_history('r1', run_id => :'reset1') n
             JOIN durable.get_history('r1', run_id => :'base') o USING (event_id)
            WHERE n.event_id <= 15 AND n.event_type = o.event_type AND n.attributes = o.attributes
              AND n.event_time = o.event_time), 15::bigint,
    'events 1 to 15 are copies of the old run''s');
SELECT is(pg_temp.attr('r1', :'reset1', 16),
    jsonb_build_object('scheduledEventId', 14, 'startedEventId', 15, 'cause', 'ResetWorkflow',
        'reason', 'fixed the decider', 'baseRunId', :'base', 'newRunId', :'reset1',
        'identity', current_user),
    'DecisionTaskFailed: cause ResetWorkflow, reason, baseRunId, newRunId, identity');
SELECT is(pg_temp.attr('r1', :'reset1', 17) - 'startToCloseTimeoutSeconds',
    '{"taskQueue": "r1", "attempt": 1}', 'a new decision task, attempt 1');
SELECT is((SELECT event_time FROM durable.get_history('r1', run_id => :'reset1') WHERE event_id = 16),
    '2026-01-01 00:10:00+00'::timestamptz, 'the new events are at the reset time');
SELECT is(durable.describe_workflow('r1')->>'status', 'running', 'the new run is running');
SELECT is(durable.describe_workflow('r1', run_id => :'base')->>'status', 'failed', 'the old run stays failed');
SELECT is((pg_temp.hist('r1', :'base'))[17], '17:WorkflowExecutionFailed', 'the old run''s history is unchanged');

-- Links and who did it.
SELECT is(durable.describe_workflow('r1')->>'resetFrom', :'base', 'describe: resetFrom');
SELECT is(durable.describe_workflow('r1', run_id => :'base')->>'resetTo', :'reset1', 'describe of the old run: resetTo');
SELECT is((durable.describe_workflow('r1')->'origin') - 'time',
    jsonb_build_object('kind', 'reset', 'runId', :'base', 'eventId', 16, 'reason', 'fixed the decider',
                       'identity', current_user),
    'describe: origin says reset, from which run and event, why and who');
SELECT is((SELECT reset_from FROM durable.workflows WHERE run_id = :'reset1'), :'base'::uuid, 'view: reset_from');
SELECT is((SELECT reset_to FROM durable.workflows WHERE run_id = :'base'), :'reset1'::uuid, 'view: reset_to');

-- Pending as of the point: activity a2 (a new first attempt) and timer t1 (due when it was).
SELECT is((SELECT jsonb_agg(p->>'activityId') FROM jsonb_array_elements(durable.describe_workflow('r1')->'pendingActivities') p),
    '["a2"]', 'the activity pending at the point is pending again (a1, completed, is not)');
SELECT is(durable.describe_workflow('r1')->'pendingActivities'->0->>'attempt', '1', 'as attempt 1');
SELECT is((SELECT jsonb_agg(p->>'timerId') FROM jsonb_array_elements(durable.describe_workflow('r1')->'pendingTimers') p),
    '["t1"]', 'the timer pending at the point is pending again');
SELECT is((durable.describe_workflow('r1')->'pendingTimers'->0->>'fireTime')::timestamptz,
    '2026-01-01 01:00:00+00'::timestamptz, 'due at its original time');
SELECT durable.poll_activity_task('r1a') AS a2 \gset
SELECT is(:'a2'::jsonb->>'runId', :'reset1', 'a2 is on its queue again, for the new run');
SELECT is(:'a2'::jsonb->>'activityId', 'a2', '... a2');
SELECT durable.complete_activity(:'a2'::jsonb->>'taskToken', '{"a2": "done"}');
-- The decider decides again.
SELECT t.decide('r1', '[]') IS NOT NULL;
SELECT t.at('2026-01-01 01:00:00+00');
SELECT ok(durable.tick() >= 1, 'the timer fires');
SELECT is(t.events('r1', :'reset1', 18),
    '{ActivityTaskStarted,ActivityTaskCompleted,DecisionTaskStarted,DecisionTaskCompleted,TimerFired,DecisionTaskScheduled}',
    'a2 completes and t1 fires in the new run');

-- 2. Reset the same old run to an earlier point (10): its signal (13) is re-applied;
--    the timer and activity a2, started after 10, are not carried over.  The running
--    run (reset1) is terminated with a reason that names the new run.
SELECT t.at('2026-01-01 02:00:00+00');
SELECT durable.reset_workflow('r1', 'back to 10', run_id => :'base', event_id => 10) AS reset2 \gset
SELECT is(pg_temp.hist('r1', :'reset2'),
    '{1:WorkflowExecutionStarted,2:DecisionTaskScheduled,3:DecisionTaskStarted,4:DecisionTaskCompleted,5:ActivityTaskScheduled,6:ActivityTaskStarted,7:ActivityTaskCompleted,8:DecisionTaskScheduled,9:DecisionTaskStarted,10:DecisionTaskFailed,11:WorkflowExecutionSignaled,12:DecisionTaskScheduled}',
    'event_id 10: DecisionTaskFailed, the signal re-applied, DecisionTaskScheduled');
SELECT is(pg_temp.attr('r1', :'reset2', 10) - 'identity' - 'newRunId',
    jsonb_build_object('scheduledEventId', 8, 'startedEventId', 9, 'cause', 'ResetWorkflow',
        'reason', 'back to 10', 'baseRunId', :'base'), 'DecisionTaskFailed of the decision task at the point');
SELECT is(pg_temp.attr('r1', :'reset2', 11),
    jsonb_build_object('signalName', 'go', 'input', '{"s": 1}'::jsonb, 'identity', current_user),
    'the re-applied signal: name, input and identity of the original');
SELECT is(durable.describe_workflow('r1')->'pendingActivities', '[]', 'no activity carried over');
SELECT is(durable.describe_workflow('r1')->'pendingTimers', '[]', 'no timer carried over');
SELECT is(durable.describe_workflow('r1', run_id => :'reset1')->>'status', 'terminated', 'the running run is terminated');
SELECT is(t.attrs('r1', 'WorkflowExecutionTerminated', 1, :'reset1'),
    jsonb_build_object('reason', format('reset to run %s: back to 10', :'reset2'),
        'details', jsonb_build_object('newRunId', :'reset2', 'baseRunId', :'base'), 'identity', current_user),
    'WorkflowExecutionTerminated names the new run');
SELECT is(durable.describe_workflow('r1', run_id => :'base')->>'resetTo', :'reset2', 'resetTo: the latest reset');
SELECT durable.poll_decision_task('r1') AS r1task \gset
SELECT is(:'r1task'::jsonb->>'runId', :'reset2', 'the decider gets the new run''s task');
SELECT is(:'r1task'::jsonb->'previousStartedEventId', '3',
    'previousStartedEventId: the last decision task completed before the point');
SELECT is(jsonb_array_length(:'r1task'::jsonb->'history'), 13, 'with the whole new history');
SELECT is((SELECT count(*) FROM durable.workflows WHERE workflow_id = 'r1' AND status = 'running'), 1::bigint,
    'one running run per workflow id');

-- 3. Reset of a completed run.
SELECT durable.start_workflow('wf', NULL, 'c1', 'c1') AS c1 \gset
SELECT t.decide('c1', '[{"decisionType": "CompleteWorkflowExecution", "result": 1}]') IS NOT NULL;
SELECT durable.reset_workflow('c1', 'wrong result') AS c1b \gset
SELECT is(pg_temp.hist('c1', :'c1b'),
    '{1:WorkflowExecutionStarted,2:DecisionTaskScheduled,3:DecisionTaskStarted,4:DecisionTaskFailed,5:DecisionTaskScheduled}',
    'completed run: reset to its last DecisionTaskCompleted');
SELECT t.decide('c1', '[{"decisionType": "CompleteWorkflowExecution", "result": 2}]') IS NOT NULL;
SELECT is(durable.describe_workflow('c1')->'result', '2', 'the new run completes with the new result');
SELECT is(durable.describe_workflow('c1', run_id => :'c1')->'result', '1', 'the old run keeps its result');

-- 4. Reset of a timed-out run: its run timeout counts again from the reset.
SELECT t.at('2026-01-02 00:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'to1', 'to1', run_timeout => '1 minute') AS to1 \gset
SELECT t.decide('to1', '[{"decisionType": "StartTimer", "timerId": "long", "startToFireTimeoutSeconds": 7200}]') IS NOT NULL;
SELECT t.at('2026-01-02 00:01:00+00');
SELECT durable.tick() >= 1;
SELECT is(durable.describe_workflow('to1')->>'status', 'timed_out', 'setup: timed out');
SELECT t.at('2026-01-02 00:30:00+00');
SELECT durable.reset_workflow('to1', 'more time') AS to1b \gset
SELECT is(t.events('to1', :'to1b', 4), '{DecisionTaskFailed,DecisionTaskScheduled}', 'timed-out run: reset');
SELECT is(durable.describe_workflow('to1')->'pendingTimers', '[]', 'the timer started after the point is not carried over');
SELECT t.at('2026-01-02 00:30:59+00');
SELECT durable.tick() >= 0;
SELECT is(durable.describe_workflow('to1')->>'status', 'running', 'not timed out before its run timeout from the reset');
SELECT t.at('2026-01-02 00:31:00+00');
SELECT durable.tick() >= 1;
SELECT is(durable.describe_workflow('to1')->>'status', 'timed_out', 'times out one run timeout after the reset');

-- 5. Reset of a running run, whose signal came after the point; a decision task is queued.
SELECT durable.start_workflow('wf', NULL, 'run1', 'run1') AS run1 \gset
SELECT t.decide('run1', jsonb_build_array(t.sched('x1', '{"taskQueue": "run1a"}'))) IS NOT NULL;
SELECT durable.signal_workflow('run1', 'poke', '{"p": 2}');
SELECT durable.reset_workflow('run1', 'redo') AS run1b \gset
SELECT is(pg_temp.hist('run1', :'run1'),
    '{1:WorkflowExecutionStarted,2:DecisionTaskScheduled,3:DecisionTaskStarted,4:DecisionTaskCompleted,5:ActivityTaskScheduled,6:WorkflowExecutionSignaled,7:DecisionTaskScheduled,8:WorkflowExecutionTerminated}',
    'the running run is terminated');
SELECT is(pg_temp.hist('run1', :'run1b'),
    '{1:WorkflowExecutionStarted,2:DecisionTaskScheduled,3:DecisionTaskStarted,4:DecisionTaskFailed,5:WorkflowExecutionSignaled,6:DecisionTaskScheduled}',
    'the new run: the signal after the point re-applied, the activity after it gone');
SELECT durable.poll_decision_task('run1') AS run1task \gset
SELECT is(:'run1task'::jsonb->>'runId', :'run1b', 'the decision task is the new run''s');
SELECT is(:'run1task'::jsonb->'previousStartedEventId', '0', 'previousStartedEventId: no decision task completed before the point');
SELECT is(durable.poll_activity_task('run1a'), NULL, 'the old run''s activity is not run');

-- 6. A SQL workflow resumed after its code was fixed: the step before the failure is
--    replayed from history, not run again.
CREATE ROLE rr_app;
CREATE SCHEMA rr;
GRANT USAGE ON SCHEMA rr TO rr_app;
CREATE SEQUENCE rr.step_calls;
GRANT USAGE ON SEQUENCE rr.step_calls TO rr_app;
CREATE FUNCTION rr.step(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM nextval('rr.step_calls');
    RETURN jsonb_build_object('step', input->'n');
END $$;
SELECT durable.register_activity('rr_step', 'rr.step(jsonb)', run_as => 'rr_app');
CREATE FUNCTION rr.flow(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE a jsonb;
BEGIN
    a := durable.activity('rr_step', '{"n": 1}');
    RAISE EXCEPTION 'bug after step 1';
END $$;
SELECT durable.register_workflow('rr_flow', 'rr.flow(jsonb)', run_as => 'rr_app');
SELECT durable.start_workflow('rr_flow', NULL, 'sqlwf') AS sql1 \gset
SELECT durable.run_tasks() > 0;
SELECT is(durable.describe_workflow('sqlwf')->>'status', 'failed', 'setup: the SQL workflow failed after step 1');
SELECT is(currval('rr.step_calls'), 1::bigint, 'setup: step 1 ran once');
CREATE OR REPLACE FUNCTION rr.flow(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE a jsonb; b jsonb;
BEGIN
    a := durable.activity('rr_step', '{"n": 1}');
    b := durable.activity('rr_step', '{"n": 2}');
    RETURN jsonb_build_object('a', a, 'b', b);
END $$;
SELECT durable.reset_workflow('sqlwf', 'fixed rr.flow') AS sql2 \gset
SELECT durable.run_tasks() > 0;
SELECT is(durable.describe_workflow('sqlwf')->>'status', 'completed', 'the fixed workflow completes');
SELECT is(durable.describe_workflow('sqlwf')->'result', '{"a": {"step": 1}, "b": {"step": 2}}',
    'with step 1''s recorded result and step 2''s');
SELECT is(currval('rr.step_calls'), 2::bigint, 'step 1 did not run again; step 2 ran once');
SELECT is((SELECT count(*) FROM durable.get_history('sqlwf', run_id => :'sql2') WHERE event_type = 'ActivityTaskScheduled'),
    2::bigint, 'the new run''s history: step 1 (copied) and step 2');

-- 7. Restart: a new chain with the same type, queue, options and input.
SELECT t.at('2026-01-03 00:00:00+00');
SELECT durable.start_workflow('wf', '{"n": 5}', 'rs1', 'rsq', run_timeout => '1 hour',
    decision_timeout => '20 seconds', memo => '{"k": 1}',
    retry_policy => durable.retry_policy('1 second', maximum_attempts => 1)) AS rs1 \gset
SELECT t.decide('rs1', '[{"decisionType": "FailWorkflowExecution", "reason": "bad"}]', 'rsq') IS NOT NULL;
SELECT t.at('2026-01-03 00:05:00+00');
SELECT durable.restart_workflow('rs1', 'try again') AS rs2 \gset
SELECT is(t.events('rs1', :'rs2'), '{WorkflowExecutionStarted,DecisionTaskScheduled}', 'restart: a new run from the start');
SELECT is(t.attrs('rs1', 'WorkflowExecutionStarted', 1, :'rs2'),
    jsonb_build_object('workflowType', 'wf', 'taskQueue', 'rsq', 'input', '{"n": 5}'::jsonb,
        'workflowRunTimeoutSeconds', 3600, 'taskStartToCloseTimeoutSeconds', 20, 'attempt', 1,
        'firstExecutionRunId', :'rs2', 'initiator', 'Restart', 'restartedFromRunId', :'rs1',
        'restartReason', 'try again',
        'retryPolicy', durable.retry_policy('1 second', maximum_attempts => 1),
        'memo', '{"k": 1}'::jsonb, 'identity', current_user),
    'WorkflowExecutionStarted: the same options and input, attempt 1, initiator Restart');
SELECT is(durable.describe_workflow('rs1')->>'restartedFrom', :'rs1', 'describe: restartedFrom');
SELECT is(durable.describe_workflow('rs1', run_id => :'rs1')->>'restartedTo', :'rs2', 'describe of the old run: restartedTo');
SELECT is(durable.describe_workflow('rs1')->'origin'->>'kind', 'restart', 'origin: restart');
SELECT is((SELECT restarted_from FROM durable.workflows WHERE run_id = :'rs2'), :'rs1'::uuid, 'view: restarted_from');
SELECT is(durable.describe_workflow('rs1')->>'firstRunId', :'rs2', 'a new chain');
SELECT throws_ok($$SELECT durable.restart_workflow('rs1', 'again')$$, 'WF001', NULL,
    'restart of a running workflow: WF001');
SELECT durable.terminate_workflow('rs1', 'stop');
SELECT durable.restart_workflow('rs1', 'new input', run_id => :'rs1', input => '{"n": 6}') AS rs3 \gset
SELECT is(t.attrs('rs1', 'WorkflowExecutionStarted', 1, :'rs3')->'input', '{"n": 6}', 'restart with a new input');
SELECT is(t.attrs('rs1', 'WorkflowExecutionStarted', 1, :'rs3')->>'restartedFromRunId', :'rs1', 'from the run named');

-- 8. Errors, each changing nothing.
SELECT durable.start_workflow('wf', NULL, 'nodtc', 'nodtc') AS nodtc \gset
SELECT t.footprint() AS before \gset
SELECT throws_ok($$SELECT durable.reset_workflow('nope', 'x')$$, 'WF002', NULL, 'unknown workflow: WF002');
SELECT throws_ok($$SELECT durable.restart_workflow('nope', 'x')$$, 'WF002', NULL, 'restart of an unknown workflow: WF002');
SELECT throws_ok($$SELECT durable.reset_workflow('r1', 'x', run_id => '00000000-0000-0000-0000-000000000000')$$,
    'WF002', NULL, 'unknown run: WF002');
SELECT throws_ok($$SELECT durable.reset_workflow('r1', 'x', 'nons')$$, 'WF002', NULL, 'unknown namespace: WF002');
SELECT throws_like(format($$SELECT durable.reset_workflow('r1', 'x', run_id => %L, event_id => 9)$$, :'base'),
    'event_id 9 of workflow "r1" run % is not a DecisionTaskCompleted event', 'event_id not a DecisionTaskCompleted');
SELECT throws_ok(format($$SELECT durable.reset_workflow('r1', 'x', run_id => %L, event_id => 9)$$, :'base'),
    '22023', NULL, '... is 22023');
SELECT throws_ok(format($$SELECT durable.reset_workflow('r1', 'x', run_id => %L, event_id => 99)$$, :'base'),
    '22023', NULL, 'event_id past the history: 22023');
SELECT throws_like($$SELECT durable.reset_workflow('r1', 'x', event_id => 0)$$, 'event_id must be positive',
    'event_id 0: named');
SELECT throws_ok($$SELECT durable.reset_workflow('nodtc', 'x')$$, '55000', NULL,
    'a run with no DecisionTaskCompleted: 55000');
SELECT throws_ok($$SELECT durable.reset_workflow('r1', '')$$, '22023', 'reason must not be empty', 'empty reason: 22023');
SELECT throws_ok($$SELECT durable.restart_workflow('c1', '')$$, '22023', 'reason must not be empty', 'restart: empty reason');
SELECT throws_ok($$SELECT durable.reset_workflow('r1', NULL)$$, '22004', NULL, 'NULL reason: 22004');
SELECT throws_ok($$SELECT durable.reset_workflow(NULL, 'x')$$, '22004', NULL, 'NULL workflow_id: 22004');
SELECT is(t.footprint(), :'before', 'the refused calls changed nothing');
SELECT is(durable.describe_workflow('nodtc')->>'status', 'running', 'nodtc still running');

-- A point where a child workflow is pending is refused (as Cadence refuses it).
SELECT durable.start_workflow('wf', NULL, 'par', 'par') AS par \gset
SELECT t.decide('par', '[{"decisionType": "StartChildWorkflowExecution", "workflowId": "par-child", "workflowType": "wf", "taskQueue": "parc"}]') IS NOT NULL;
SELECT t.decide('par', '[]') IS NOT NULL;
SELECT throws_like($$SELECT durable.reset_workflow('par', 'x')$$, '%child workflows are pending there%',
    'a point with a pending child: refused');
SELECT throws_ok($$SELECT durable.reset_workflow('par', 'x')$$, '22023', NULL, '... with 22023');
SELECT lives_ok($$SELECT durable.reset_workflow('par', 'x', event_id => 4)$$, 'the point before the child started is allowed');

-- 9. Privileges: as terminate_workflow.
CREATE ROLE rr_client; GRANT durable_client TO rr_client;
CREATE ROLE rr_worker; GRANT durable_worker TO rr_worker;
SELECT durable.create_namespace('rrns');
SELECT durable.start_workflow('wf', NULL, 'p1', 'p1', 'rrns') IS NOT NULL;
SELECT durable.complete_decision_task(durable.poll_decision_task('p1', NULL, 'rrns')->>'taskToken', '[]');
SET LOCAL ROLE rr_worker;
SELECT throws_ok($$SELECT durable.reset_workflow('c1', 'x')$$, '42501', NULL, 'durable_worker may not reset');
SELECT throws_ok($$SELECT durable.restart_workflow('c1', 'x')$$, '42501', NULL, 'durable_worker may not restart');
RESET ROLE;
SET LOCAL ROLE rr_client;
SELECT throws_like($$SELECT durable.reset_workflow('p1', 'x', 'rrns')$$, '%privilege client required%',
    'durable_client without client on the namespace: 42501');
SELECT lives_ok($$SELECT durable.reset_workflow('c1', 'by a client')$$, 'durable_client with client: reset');
RESET ROLE;
SELECT is(durable.describe_workflow('c1')->'origin'->>'identity', 'rr_client', 'the reset records the client''s role');

SELECT * FROM finish();
ROLLBACK;

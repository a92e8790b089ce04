-- Pausing a single workflow run (docs/task-queues.md "Pausing a workflow"): no task of a
-- paused run is handed out, by polls, eager dispatch or the executors
-- (durable.run_tasks()); signals are recorded, timers fire, tasks are scheduled and
-- wait, held; cancel and terminate work; who paused it, when and why show in
-- describe_workflow and durable.workflows; resuming hands the held tasks out again.
BEGIN;
SELECT plan(66);
SET LOCAL durable.test_time = '2026-05-01 00:00:00+00';

CREATE ROLE wp_client; GRANT durable_client TO wp_client;
CREATE ROLE wp_nobody;
CREATE FUNCTION pg_temp.held(wid text) RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(t.kind::text, ',' ORDER BY t.task_id) FROM durable.ready_tasks t
      JOIN durable.runs r USING (run_id) WHERE r.workflow_id = wid $$;

-- Bad input, an unknown workflow, privileges.
SELECT durable.start_workflow('job', NULL, 'w1', 'wq') IS NOT NULL AS started;
SELECT t.footprint() AS before \gset
SELECT throws_ok($$SELECT durable.pause_workflow(NULL)$$, '22004', NULL, 'workflow_id null');
SELECT throws_ok($$SELECT durable.pause_workflow('')$$, '22023', NULL, 'workflow_id empty');
SELECT throws_ok($$SELECT durable.pause_workflow('w1', namespace => NULL)$$, '22004', NULL, 'namespace null');
SELECT throws_ok($$SELECT durable.resume_workflow(NULL)$$, '22004', NULL, 'resume: workflow_id null');
SELECT throws_ok($$SELECT durable.pause_workflow('nope')$$, 'WF002', NULL, 'unknown workflow');
SELECT throws_ok($$SELECT durable.pause_workflow('w1', gen_random_uuid())$$, 'WF002', NULL, 'unknown run');
SELECT throws_ok($$SELECT durable.pause_workflow('w1', namespace => 'nope')$$, 'WF002', NULL, 'unknown namespace');
SET LOCAL ROLE wp_nobody;
SELECT throws_ok($$SELECT durable.pause_workflow('w1')$$, '42501', NULL, 'a role without durable_client may not pause');
RESET ROLE;
SELECT is(t.footprint(), :'before', 'bad input changed nothing');
SELECT is(durable.describe_workflow('w1') ? 'paused', false, 'describe: no paused while not paused');

-- Pause w1 as wp_client: its queued decision task is held; a second pause changes nothing.
SET LOCAL ROLE wp_client;
SELECT is(durable.pause_workflow('w1', reason => 'investigating'), true, 'paused');
RESET ROLE;
SELECT is(durable.pause_workflow('w1', reason => 'again'), false, 'already paused');
SELECT is(durable.describe_workflow('w1')->'paused',
    '{"at": "2026-05-01T00:00:00+00:00", "by": "wp_client", "reason": "investigating"}',
    'describe: paused at, by, reason');
SELECT is((SELECT format('%s %s %s', paused_at, paused_by, pause_reason) FROM durable.workflows
            WHERE workflow_id = 'w1'),
    '2026-05-01 00:00:00+00 wp_client investigating', 'durable.workflows: when, who, why');
SELECT is(pg_temp.held('w1'), 'D', 'its decision task is held');
SELECT is(durable.poll_decision_task('wq'), NULL::jsonb, 'a poll gets nothing');
SELECT is(durable.poll_decision_task('wq', wait => '0.01 s'), NULL::jsonb, 'a waiting poll gets nothing');
SELECT is((SELECT held_tasks FROM durable.task_queues WHERE task_queue = 'wq' AND kind = 'decision'),
    1::bigint, 'task_queues: one held task');
SELECT is((SELECT ready_tasks FROM durable.task_queues WHERE task_queue = 'wq' AND kind = 'decision'),
    0::bigint, 'task_queues: not ready');

-- Another run on the same queue is served.
SELECT durable.start_workflow('job', NULL, 'w2', 'wq') IS NOT NULL AS started;
SELECT is(t.decide('w2', '[]', 'wq')->>'workflowId', 'w2', 'another run of the queue is served');

-- Signals are recorded while paused; resume hands the held task out with the history in order.
SELECT durable.signal_workflow('w1', 'go', '{"n": 1}');
SELECT is(t.events('w1'), '{WorkflowExecutionStarted,DecisionTaskScheduled,WorkflowExecutionSignaled}',
    'the signal is recorded');
SELECT is(durable.poll_decision_task('wq'), NULL::jsonb, 'still nothing for a poll');
SELECT is(durable.resume_workflow('w1'), true, 'resumed');
SELECT is(durable.resume_workflow('w1'), false, 'not paused any more');
SELECT is(durable.describe_workflow('w1') ? 'paused', false, 'describe: no paused after resume');
SELECT is(pg_temp.held('w1'), 'd', 'its task is back on its queue');
SELECT durable.poll_decision_task('wq') AS d \gset
SELECT is(:'d'::jsonb->>'workflowId', 'w1', 'after resume a poll gets the held task');
SELECT is(array(SELECT e->>'eventType' FROM jsonb_array_elements(:'d'::jsonb->'history') e),
    '{WorkflowExecutionStarted,DecisionTaskScheduled,WorkflowExecutionSignaled,DecisionTaskStarted}',
    'with its history in order');

-- Eager paths hold: a task already started completes, but neither the next decision
-- task (return_new_task) nor an eager activity is handed out while paused.
SELECT durable.pause_workflow('w1');
SELECT durable.complete_decision_task(:'d'::jsonb->>'taskToken',
    '[{"decisionType": "ScheduleActivityTask", "activityId": "a", "activityType": "do",
       "taskQueue": "wq", "requestEagerExecution": true, "startToCloseTimeoutSeconds": 60},
      {"decisionType": "StartTimer", "timerId": "t", "startToFireTimeoutSeconds": 60}]',
    return_new_task => true, max_eager_activities => 1) IS NULL AS none \gset
SELECT ok(:'none'::boolean, 'the started task completes; no eager activity is returned');
SELECT is(pg_temp.held('w1'), 'A', 'the activity task is held');
SELECT is(durable.poll_activity_task('wq'), NULL::jsonb, 'a poll gets no activity');

-- A timer fires while paused; its decision task is held.
SELECT t.at('2026-05-01 00:02:00+00');
SELECT is(durable.tick(), 1, 'the timer fires');
SELECT is(t.events('w1', from_id => 8), '{TimerFired,DecisionTaskScheduled}', 'TimerFired, and a decision task scheduled');
SELECT is(pg_temp.held('w1'), 'A,D', 'both held, in their order');
SELECT is(durable.poll_decision_task('wq'), NULL::jsonb, 'a poll gets no decision task');
SELECT durable.resume_workflow('w1');
SELECT durable.poll_activity_task('wq') AS a \gset
SELECT is(:'a'::jsonb->>'activityId', 'a', 'after resume the activity is handed out');
SELECT durable.pause_workflow('w1');
SELECT is(durable.complete_activity(:'a'::jsonb->>'taskToken', '{"ok": true}', return_new_task => true),
    NULL, 'a started attempt completes while paused; no decision task returned');
SELECT is(durable.poll_decision_task('wq'), NULL::jsonb, 'and none is handed out');

-- Terminate closes a paused run; the pause ends with it; a closed run cannot be paused.
SELECT durable.terminate_workflow('w1', 'enough');
SELECT is(durable.describe_workflow('w1')->>'status', 'terminated', 'terminate closes a paused run');
SELECT is(durable.describe_workflow('w1') ? 'paused', false, 'a closed run is not paused');
SELECT is(pg_temp.held('w1'), NULL, 'its held tasks are gone');
SELECT throws_ok($$SELECT durable.pause_workflow('w1')$$, 'WF003', NULL, 'a closed run cannot be paused');
SELECT throws_ok($$SELECT durable.resume_workflow('w1')$$, 'WF003', NULL, 'nor resumed');

-- Cancel of a paused run is recorded; its decision task waits.
SELECT durable.start_workflow('job', NULL, 'c1', 'cq') IS NOT NULL AS started;
SELECT t.decide('c1', '[]', 'cq') IS NOT NULL AS decided;
SELECT durable.pause_workflow('c1');
SELECT durable.cancel_workflow('c1');
SELECT is(t.events('c1', from_id => 5), '{WorkflowExecutionCancelRequested,DecisionTaskScheduled}',
    'the cancel request is recorded');
SELECT is(pg_temp.held('c1'), 'D', 'its decision task is held');

-- A held activity's schedule-to-start timeout fires as on a queue nobody polls, and
-- its decision task waits held too.
SELECT durable.start_workflow('job', NULL, 'st1', 'stq') IS NOT NULL AS started;
SELECT t.decide('st1', '[{"decisionType": "ScheduleActivityTask", "activityId": "s", "activityType": "do",
    "taskQueue": "stq", "scheduleToStartTimeoutSeconds": 30, "startToCloseTimeoutSeconds": 60}]', 'stq')
    IS NOT NULL AS decided;
SELECT durable.pause_workflow('st1');
SELECT t.at('2026-05-01 00:02:30+00');
SELECT cmp_ok(durable.tick(), '>=', 1, 'the timeout fires');
SELECT is(t.attrs('st1', 'ActivityTaskTimedOut')->>'timeoutType', 'SCHEDULE_TO_START',
    'the held activity timed out SCHEDULE_TO_START');
SELECT is(durable.poll_decision_task('stq'), NULL::jsonb, 'the decision task it scheduled is held');

-- The metrics show the paused runs of each queue and the paused queues, by the tenant rules.
SELECT durable.pause_task_queue('pq', reason => 'maintenance');
SELECT is((SELECT value FROM durable.metrics WHERE metric = 'durable_workflows_paused'
            AND namespace = 'default' AND task_queue = 'cq'), 1::float8, 'metrics: one paused run on cq');
SELECT is((SELECT value FROM durable.metrics WHERE metric = 'durable_workflows_paused'
            AND namespace = 'default' AND task_queue = 'stq'), 1::float8, 'and one on stq');
SELECT is((SELECT value FROM durable.metrics WHERE metric = 'durable_task_queue_paused'
            AND namespace = 'default' AND task_queue = 'pq'), 1::float8, 'metrics: pq is paused');
SELECT ok(durable.metrics_text() LIKE '%durable_workflows_paused{namespace="default",task_queue="cq"} 1%'
      AND durable.metrics_text() LIKE '%# TYPE durable_task_queue_paused gauge%durable_task_queue_paused{namespace="default",task_queue="pq"} 1%',
    'metrics_text: both gauges');
SELECT durable.create_namespace('wpns');
SELECT durable.start_workflow('job', NULL, 'n1', 'nq', 'wpns') IS NOT NULL AS started;
SELECT durable.pause_workflow('n1', namespace => 'wpns');
SELECT durable.pause_task_queue('nq', 'wpns');
SELECT is((SELECT count(*) FROM durable.metrics WHERE namespace = 'wpns'
            AND metric IN ('durable_workflows_paused', 'durable_task_queue_paused')), 2::bigint,
    'the paused run and queue of a closed namespace show to its owner');
SET LOCAL ROLE wp_client;
SELECT is((SELECT count(*) FROM durable.metrics WHERE namespace = 'wpns'
            AND metric IN ('durable_workflows_paused', 'durable_task_queue_paused')), 0::bigint,
    'not to a role without its client privilege');
RESET ROLE;
SELECT durable.resume_task_queue('pq');

-- The executors: a SQL workflow waits while paused, and completes after resume.
CREATE ROLE wp_app;
CREATE SCHEMA wp;
GRANT USAGE ON SCHEMA wp TO wp_app;
CREATE FUNCTION wp.wf(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM durable.sleep('1 minute');
    RETURN '{"done": true}'::jsonb;
END $$;
SELECT durable.register_workflow('wpwf', 'wp.wf(jsonb)', 'sq', run_as => 'wp_app');
SELECT durable.start_workflow('wpwf', NULL, 's1', 'sq') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 1, 'the SQL workflow starts its timer');
SELECT durable.pause_workflow('s1');
SELECT t.at('2026-05-01 00:04:00+00');
SELECT is(durable.tick(), 1, 'its timer fires while paused');
SELECT is(pg_temp.held('s1'), 'W', 'its decision task is held for the executors');
SELECT is(durable.run_tasks(), 0, 'run_tasks runs nothing of a paused run');
SELECT is(durable.describe_workflow('s1')->>'status', 'running', 'the SQL workflow waits');
SELECT durable.resume_workflow('s1');
SELECT is(durable.run_tasks(), 1, 'after resume run_tasks runs it');
SELECT is(durable.describe_workflow('s1')->>'status', 'completed', 'and it completes');

-- A SQL activity's task is held too, and runs after the resume.
CREATE FUNCTION wp.act(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT '"acted"'::jsonb $$;
SELECT durable.register_activity('wpact', 'wp.act(jsonb)', 'sq', run_as => 'wp_app');
CREATE FUNCTION wp.wf2(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    RETURN durable.activity('wpact', NULL, '{"taskQueue": "sq"}');
END $$;
SELECT durable.register_workflow('wpwf2', 'wp.wf2(jsonb)', 'sq', run_as => 'wp_app');
SELECT durable.start_workflow('wpwf2', NULL, 's2', 'sq') IS NOT NULL AS started;
SELECT is(durable.run_tasks(1), 1, 'the first decision task schedules the SQL activity');
SELECT durable.pause_workflow('s2');
SELECT is(pg_temp.held('s2'), 'X', 'its activity task is held for the executors');
SELECT is(durable.run_tasks(), 0, 'run_tasks runs nothing of the paused run');
SELECT durable.resume_workflow('s2');
SELECT is(durable.run_tasks(), 2, 'after resume the activity and the last decision task run');
SELECT is(durable.describe_workflow('s2')->>'result', 'acted', 'and it completes with the activity''s result');

SELECT * FROM finish();
ROLLBACK;

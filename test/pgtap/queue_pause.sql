-- Pausing a task queue (docs/task-queues.md "Pausing a queue"): no task of a paused
-- queue is handed out, by polls, eager dispatch or the executors (durable.run_tasks());
-- tasks still queue and timers still fire; who paused it, when and why show in
-- durable.task_queues and describe_workflow; resuming hands the tasks out again.
BEGIN;
SELECT plan(31);
SET LOCAL durable.test_time = '2026-05-01 00:00:00+00';

CREATE ROLE qp_client; GRANT durable_client TO qp_client;

-- Bad input and an unknown namespace.
SELECT throws_ok($$SELECT durable.pause_task_queue(NULL)$$, '22004', NULL, 'task_queue null');
SELECT throws_ok($$SELECT durable.pause_task_queue('')$$, '22023', NULL, 'task_queue empty');
SELECT throws_ok($$SELECT durable.pause_task_queue('q', NULL)$$, '22004', NULL, 'namespace null');
SELECT throws_ok($$SELECT durable.resume_task_queue(NULL)$$, '22004', NULL, 'resume: task_queue null');
SELECT throws_ok($$SELECT durable.pause_task_queue('q', 'nope')$$, 'WF002', NULL, 'unknown namespace');

-- Pause 'pq' as qp_client; a second pause changes nothing.
SET LOCAL ROLE qp_client;
SELECT is(durable.pause_task_queue('pq', reason => 'payment provider down'), true, 'paused');
RESET ROLE;
SELECT is(durable.pause_task_queue('pq', reason => 'again'), false, 'already paused');
SELECT is((SELECT format('%s %s %s', paused_at, paused_by, pause_reason) FROM durable.task_queues
            WHERE task_queue = 'pq' AND kind = 'decision'),
    '2026-05-01 00:00:00+00 qp_client payment provider down', 'task_queues: when, who, why');
SELECT is((SELECT count(*) FROM durable.task_queues WHERE task_queue = 'pq'), 2::bigint,
    'an empty paused queue shows, for both kinds');

-- Tasks queue while paused; polls get nothing, even after waiting.
SELECT durable.start_workflow('job', NULL, 'p1', 'pq') IS NOT NULL AS started;
SELECT is(durable.poll_decision_task('pq'), NULL::jsonb, 'a poll of a paused queue gets nothing');
SELECT is(durable.poll_decision_task('pq', wait => '0.01 s'), NULL::jsonb, 'a waiting poll gets nothing');
SELECT is((SELECT ready_tasks FROM durable.task_queues WHERE task_queue = 'pq' AND kind = 'decision'),
    1::bigint, 'the task stays queued');
SELECT is(durable.describe_workflow('p1')->'taskQueuePaused', 'true', 'describe: its queue is paused');
SELECT is(durable.start_workflow_eager('job', NULL, 'p2', 'pq')->>'decisionTask', NULL,
    'start_workflow_eager on a paused queue: no task returned');
SELECT is((SELECT ready_tasks FROM durable.task_queues WHERE task_queue = 'pq' AND kind = 'decision'),
    2::bigint, 'its decision task is queued instead');

-- Another queue is not held back.
SELECT durable.start_workflow('job', NULL, 'o1', 'oq') IS NOT NULL AS started;
SELECT isnt(durable.poll_decision_task('oq'), NULL::jsonb, 'another queue is served');

-- Resume: the tasks are handed out again.
SELECT is(durable.resume_task_queue('pq'), true, 'resumed');
SELECT is(durable.resume_task_queue('pq'), false, 'not paused any more');
SELECT is(durable.describe_workflow('p1') ? 'taskQueuePaused', false, 'describe: not paused, no taskQueuePaused');
SELECT is((SELECT paused_at FROM durable.task_queues WHERE task_queue = 'pq' AND kind = 'decision'),
    NULL::timestamptz, 'task_queues: no pause');
SELECT durable.poll_decision_task('pq')->>'taskToken' AS tok \gset
SELECT ok(:'tok' <> '', 'after resume the poll gets the task');

-- Eager activities and return_new_task on a paused queue are queued instead.
SELECT durable.pause_task_queue('pq');
SELECT is(durable.complete_decision_task(:'tok',
    '[{"decisionType": "ScheduleActivityTask", "activityId": "a", "activityType": "do",
       "taskQueue": "pq", "requestEagerExecution": true, "startToCloseTimeoutSeconds": 60}]',
    max_eager_activities => 1) IS NULL, true, 'no eager activity from a paused queue');
SELECT is(durable.poll_activity_task('pq'), NULL::jsonb, 'the activity task is held');
SELECT is((SELECT ready_tasks FROM durable.task_queues WHERE task_queue = 'pq' AND kind = 'activity'),
    1::bigint, 'the activity task is queued');
SELECT durable.resume_task_queue('pq');
SELECT isnt(durable.poll_activity_task('pq'), NULL::jsonb, 'after resume the activity task is handed out');

-- The executors: a SQL workflow on a paused queue waits, and completes after resume.
CREATE ROLE qp_app;
CREATE SCHEMA qp;
GRANT USAGE ON SCHEMA qp TO qp_app;
CREATE FUNCTION qp.wf(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT '{"done": true}'::jsonb $$;
SELECT durable.register_workflow('qpwf', 'qp.wf(jsonb)', 'sq', run_as => 'qp_app');
SELECT durable.pause_task_queue('sq');
SELECT durable.start_workflow('qpwf', NULL, 's1', 'sq') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 0, 'run_tasks runs nothing of a paused queue');
SELECT is(durable.describe_workflow('s1')->>'status', 'running', 'the SQL workflow waits');
SELECT durable.resume_task_queue('sq');
SELECT is(durable.run_tasks(), 1, 'after resume run_tasks runs it');
SELECT is(durable.describe_workflow('s1')->>'status', 'completed', 'and it completes');

-- A timer still fires while paused: a delayed start queues its decision task.
SELECT durable.pause_task_queue('tq');
SELECT durable.start_workflow('job', NULL, 't1', 'tq', delay => '1 minute') IS NOT NULL AS started;
SELECT set_config('durable.test_time', '2026-05-01 00:02:00+00', true);
SELECT durable.tick();
SELECT is((SELECT ready_tasks FROM durable.task_queues WHERE task_queue = 'tq' AND kind = 'decision'),
    1::bigint, 'a timer fires while paused and its task queues');

-- A dropped namespace takes its paused queues with it.
SELECT durable.create_namespace('qpns');
SELECT durable.pause_task_queue('x', 'qpns');
SELECT durable.drop_namespace('qpns');
SELECT is((SELECT count(*) FROM durable.paused_task_queues WHERE namespace = 'qpns'), 0::bigint,
    'drop_namespace forgets its paused queues');

SELECT * FROM finish();
ROLLBACK;

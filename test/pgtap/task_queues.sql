-- durable.task_queues and describe_workflow's pollers fields (docs/task-queues.md
-- "Task queues"): ready tasks and the age of the oldest, tasks waiting on a timer,
-- pollers seen recently (kept in shared memory, no table written), the types
-- the executors run, and "no poller for a minute" on a running workflow.
BEGIN;
SELECT plan(22);
SET LOCAL durable.test_time = '2026-04-01 00:00:00+00';

-- Two workflows queued on 'tq' at 00:00 and 00:00:30; nobody polls yet.
SELECT durable.start_workflow('job', NULL, 'q1', 'tq') IS NOT NULL AS started;
SELECT t.at('2026-04-01 00:00:30+00');
SELECT durable.start_workflow('job', NULL, 'q2', 'tq') IS NOT NULL AS started;
SELECT t.at('2026-04-01 00:01:30+00');
SELECT is((SELECT format('%s %s %s %s %s', kind, ready_tasks, oldest_ready_time, oldest_ready_age, waiting_on_timer)
             FROM durable.task_queues WHERE task_queue = 'tq'),
    'decision 2 2026-04-01 00:00:00+00 00:01:30 0', 'two decision tasks ready, the oldest 90 s old');
SELECT is((SELECT pollers FROM durable.task_queues WHERE task_queue = 'tq'), '[]'::jsonb, 'no pollers yet');
SELECT is(durable.describe_workflow('q1')->'taskQueueWithoutPollers', 'true', 'describe: nobody polls its queue');

-- A worker polls: it shows with its identity and time; the oldest task goes.
SELECT durable.poll_decision_task('tq', identity => 'worker-1')->>'taskToken' AS tok \gset
SELECT durable.complete_decision_task(:'tok', jsonb_build_array(t.sched('a1', '{"taskQueue": "aq", "startToCloseTimeoutSeconds": 60,
    "retryPolicy": {"initialIntervalInSeconds": 30, "maximumAttempts": 3}}')));
SELECT is((SELECT format('%s %s', ready_tasks, oldest_ready_time) FROM durable.task_queues WHERE task_queue = 'tq'),
    '1 2026-04-01 00:00:30+00', 'one left, the next oldest');
SELECT is((SELECT pollers FROM durable.task_queues WHERE task_queue = 'tq'),
    '[{"identity": "worker-1", "lastPollTime": "2026-04-01T00:01:30+00:00"}]'::jsonb, 'the poller and its last poll');
SELECT is((SELECT last_poll_time FROM durable.task_queues WHERE task_queue = 'tq'),
    '2026-04-01 00:01:30+00'::timestamptz, 'last_poll_time');
SELECT is(durable.describe_workflow('q2')->'taskQueueWithoutPollers', 'false', 'describe: polled just now');
SELECT t.at('2026-04-01 00:02:30+00');
SELECT is(durable.describe_workflow('q2')->'taskQueueWithoutPollers', 'false', 'describe: polled a minute ago');
SELECT t.at('2026-04-01 00:02:31+00');
SELECT is(durable.describe_workflow('q2')->'taskQueueWithoutPollers', 'true', 'describe: no poll for over a minute');

-- A long poll counts as polling until its wait ends.
SELECT durable.poll_decision_task('tq', identity => 'worker-2') IS NOT NULL AS polled;
SELECT is(durable.poll_decision_task('tq', identity => 'worker-3', wait => '0.01 s'), NULL, 'nothing left');
SELECT is((SELECT jsonb_agg(p->'identity' ORDER BY p->>'identity') FROM durable.task_queues, jsonb_array_elements(pollers) p
            WHERE task_queue = 'tq'), '["worker-1", "worker-2", "worker-3"]', 'three pollers');
SELECT t.at('2026-04-01 00:07:31+00');
SELECT is((SELECT jsonb_agg(p->'identity' ORDER BY p->>'identity') FROM durable.task_queues, jsonb_array_elements(pollers) p
            WHERE task_queue = 'tq'), '["worker-2", "worker-3"]', 'after 5 minutes the first is gone from the view');

-- Activity queue (q1's activity): an attempt waiting on its retry backoff
-- waits on a timer.
SELECT is((SELECT format('%s %s %s', kind, ready_tasks, waiting_on_timer) FROM durable.task_queues WHERE task_queue = 'aq'),
    'activity 1 0', 'an activity task ready');
SELECT is(durable.describe_workflow('q1')->'activityTaskQueuesWithoutPollers', '["aq"]',
    'describe: nobody polls the pending activity''s queue');
SELECT durable.fail_activity(durable.poll_activity_task('aq', identity => 'act-1')->>'taskToken', 'boom');
SELECT is((SELECT format('%s %s %s', ready_tasks, oldest_ready_time IS NULL, waiting_on_timer) FROM durable.task_queues WHERE task_queue = 'aq'),
    '0 t 1', 'its retry waits on a timer');
SELECT is(durable.describe_workflow('q1')->'activityTaskQueuesWithoutPollers', '[]', 'describe: polled');

-- A delayed start waits on a timer on the decision side.
SELECT durable.start_workflow('job', NULL, 'later', 'dq', delay => '1 hour') IS NOT NULL AS started;
SELECT is((SELECT format('%s %s %s', kind, ready_tasks, waiting_on_timer) FROM durable.task_queues WHERE task_queue = 'dq'),
    'decision 0 1', 'a delayed start waits on a timer');

-- A queue served by the executors: its types show, and no poller is needed.
CREATE ROLE tq_app;
CREATE FUNCTION public.tq_wf(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT input $$;
SELECT durable.register_workflow('sqljob', 'public.tq_wf(jsonb)', 'sqlq', run_as => 'tq_app');
SELECT durable.start_workflow('sqljob', NULL, 's1', 'sqlq') IS NOT NULL AS started;
SELECT is((SELECT format('%s %s %s', kind, ready_tasks, executor_types) FROM durable.task_queues WHERE task_queue = 'sqlq'),
    'decision 1 {sqljob}', 'the executors'' types on the queue');
SELECT is(durable.describe_workflow('s1')->'taskQueueWithoutPollers', 'false', 'describe: executors need no poller');
SELECT is(durable.describe_workflow('s1', run_id => NULL) ? 'activityTaskQueuesWithoutPollers', true, 'the activity field is there');

-- A role sees only the queues of namespaces it may read.
SELECT durable.create_namespace('hidden');
SELECT durable.start_workflow('job', NULL, 'h1', 'hq', 'hidden') IS NOT NULL AS started;
CREATE ROLE tq_reader IN ROLE durable_client;
SET LOCAL ROLE tq_reader;
SELECT is((SELECT count(*) FROM durable.task_queues WHERE namespace = 'hidden'), 0::bigint,
    'a client does not see another namespace''s queues');
SELECT ok((SELECT count(*) FROM durable.task_queues WHERE namespace = 'default') > 0, 'but sees its own');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;

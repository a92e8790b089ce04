-- Limits of a task queue (docs/task-queues.md "Limits"): at most max_concurrent tasks
-- of a queue and kind started and not finished, at most rate starts a second with a
-- burst; decided where a poll claims, shown in durable.task_queues; set by the
-- namespace's owner or a durable_admin member.
BEGIN;
SELECT plan(47);
SET LOCAL durable.test_time = '2026-06-01 00:00:00+00';

CREATE ROLE tl_client; GRANT durable_client TO tl_client;
CREATE ROLE tl_admin; GRANT durable_admin TO tl_admin;

-- Bad input changes nothing.
SELECT throws_ok($$SELECT durable.set_task_queue_limits(NULL, 'activity', 1)$$, '22004', NULL, 'task_queue null');
SELECT throws_ok($$SELECT durable.set_task_queue_limits('lq', 'job', 1)$$, '22023',
    'kind must be "decision" or "activity"', 'an unknown kind');
SELECT throws_ok($$SELECT durable.set_task_queue_limits('lq', NULL, 1)$$, '22004', NULL, 'kind null');
SELECT throws_ok($$SELECT durable.set_task_queue_limits('lq', 'activity', 0)$$, '22023',
    'max_concurrent must be at least 1', 'max_concurrent 0');
SELECT throws_ok($$SELECT durable.set_task_queue_limits('lq', 'activity', rate => 0)$$, '22023', NULL, 'rate 0');
SELECT throws_ok($$SELECT durable.set_task_queue_limits('lq', 'activity', rate => 'NaN')$$, '22023', NULL, 'rate NaN');
SELECT throws_ok($$SELECT durable.set_task_queue_limits('lq', 'activity', rate => 'Infinity')$$, '22023', NULL, 'rate infinite');
SELECT throws_ok($$SELECT durable.set_task_queue_limits('lq', 'activity', burst => 3)$$, '22023',
    'burst needs a rate', 'burst without a rate');
SELECT throws_ok($$SELECT durable.set_task_queue_limits('lq', 'activity', rate => 1, burst => 0)$$, '22023',
    'burst must be between 1 and 1000000', 'burst 0');
SELECT throws_ok($$SELECT durable.set_task_queue_limits('lq', 'activity', 1, namespace => 'nope')$$, 'WF002',
    NULL, 'an unknown namespace');
SET LOCAL ROLE tl_client;
SELECT throws_ok($$SELECT durable.set_task_queue_limits('lq', 'activity', 1)$$, '42501',
    'permission denied to set the limits of a task queue of namespace "default"',
    'a client that does not own the namespace may not set limits');
RESET ROLE;
SELECT is((SELECT count(*) FROM durable.task_queue_limits), 0::bigint, 'bad input set nothing');

-- A durable_admin member sets a concurrency limit of 2 on the activities of lq.
SET LOCAL ROLE tl_admin;
SELECT is(durable.set_task_queue_limits('lq', 'activity', max_concurrent => 2), true, 'set by an admin');
RESET ROLE;
SELECT is(durable.set_task_queue_limits('lq', 'activity', max_concurrent => 2), false, 'the same limits change nothing');
SELECT is((SELECT format('%s %s %s %s', max_concurrent, started_tasks, rate_limit, ready_tasks)
             FROM durable.task_queues WHERE task_queue = 'lq' AND kind = 'activity'),
    '2 0  0', 'task_queues shows the limit of an empty queue');

-- Three workflows each schedule an activity on lq (each workflow's decision tasks on
-- a queue of its own).
CREATE FUNCTION pg_temp.schedule(wid text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM durable.start_workflow('job', NULL, wid, 'lqd_' || wid);
    PERFORM durable.complete_decision_task(durable.poll_decision_task('lqd_' || wid)->>'taskToken',
        '[{"decisionType": "ScheduleActivityTask", "activityId": "a", "activityType": "call",
           "taskQueue": "lq", "startToCloseTimeoutSeconds": 60}]');
END $$;
SELECT pg_temp.schedule('w1'), pg_temp.schedule('w2'), pg_temp.schedule('w3');
SELECT is((SELECT ready_tasks FROM durable.task_queues WHERE task_queue = 'lq' AND kind = 'activity'),
    3::bigint, 'all three are queued');

SELECT durable.poll_activity_task('lq')->>'taskToken' AS t1 \gset
SELECT durable.poll_activity_task('lq')->>'taskToken' AS t2 \gset
SELECT ok(:'t1' <> '' AND :'t2' <> '', 'two activity tasks start');
SELECT is(durable.poll_activity_task('lq'), NULL::jsonb, 'the third waits: two are started');
SELECT is(durable.poll_activity_task('lq', wait => '0.01 s'), NULL::jsonb, 'a waiting poll gets nothing either');
SELECT is((SELECT count(*) FROM durable.poll_activity_tasks('lq', max_tasks => 5)), 0::bigint,
    'nor does a batch poll');
SELECT is((SELECT format('%s/%s ready %s', started_tasks, max_concurrent, ready_tasks)
             FROM durable.task_queues WHERE task_queue = 'lq' AND kind = 'activity'),
    '2/2 ready 1', 'task_queues: 2 of 2 started, 1 ready');
SELECT isnt(durable.poll_decision_task('lq'), NULL::jsonb, 'the limit is of activities only: decision tasks are served')
  FROM (SELECT durable.start_workflow('job', NULL, 'd1', 'lq')) s;

-- A completed attempt frees its slot.
SELECT durable.complete_activity(:'t1', '"ok"');
SELECT durable.poll_activity_task('lq')->>'taskToken' AS t3 \gset
SELECT ok(:'t3' <> '', 'after one completes, the third starts');
SELECT is(durable.poll_activity_task('lq'), NULL::jsonb, 'and the queue is full again');

-- A failed attempt frees its slot (its retry waits for its backoff).
SELECT durable.fail_activity(:'t2', 'boom');
SELECT is((SELECT started_tasks FROM durable.task_queues WHERE task_queue = 'lq' AND kind = 'activity'),
    1::bigint, 'a failed attempt holds no slot');
SELECT pg_temp.schedule('w4');
SELECT isnt(durable.poll_activity_task('lq'), NULL::jsonb, 'so another starts');
SELECT is(durable.poll_activity_task('lq'), NULL::jsonb, 'full again');

-- A terminated workflow's started activity holds no slot: the claim that finds the
-- queue full drops the rows of tasks that have ended.
SELECT durable.terminate_workflow('w3', 'gone');
SELECT is((SELECT started_tasks FROM durable.task_queues WHERE task_queue = 'lq' AND kind = 'activity'),
    1::bigint, 'task_queues counts only tasks still started');
SELECT pg_temp.schedule('w5');
SELECT isnt(durable.poll_activity_task('lq'), NULL::jsonb, 'the slot of the terminated run is taken again');
SELECT is((SELECT string_agg(workflow_id, ',' ORDER BY workflow_id) FROM durable.task_starts s
             JOIN durable.runs r USING (run_id) WHERE s.task_queue = 'lq'), 'w4,w5',
    'the row of the ended task was dropped by the claim that needed its slot');

-- Removing the limits: every task is handed out again.
SELECT pg_temp.schedule('w6');
SELECT is(durable.poll_activity_task('lq'), NULL::jsonb, 'full');
SELECT is(durable.set_task_queue_limits('lq', 'activity'), true, 'limits removed');
SELECT isnt(durable.poll_activity_task('lq'), NULL::jsonb, 'no limit: the task starts');
SELECT is((SELECT count(*) FROM durable.task_starts WHERE task_queue = 'lq'), 0::bigint,
    'and the started rows are gone with it');

-- A rate limit: 2 decision task starts a second, burst 2, on rq.
SELECT is(durable.set_task_queue_limits('rq', 'decision', rate => 2, burst => 2), true, 'a rate limit');
SELECT count(durable.start_workflow('job', NULL, 'r' || i, 'rq')) FROM generate_series(1, 5) i;
SELECT is((SELECT count(t) FROM (SELECT durable.poll_decision_task('rq') t
                                    FROM generate_series(1, 3)) p),
    2::bigint, 'the burst: two start at once, the third waits for a token');
SET LOCAL durable.test_time = '2026-06-01 00:00:00.25+00';
SELECT is(durable.poll_decision_task('rq'), NULL::jsonb, 'a quarter of a second later: half a token');
SET LOCAL durable.test_time = '2026-06-01 00:00:00.5+00';
SELECT isnt(durable.poll_decision_task('rq'), NULL::jsonb, 'half a second later: one token');
SELECT is(durable.poll_decision_task('rq'), NULL::jsonb, 'and only one');
SET LOCAL durable.test_time = '2026-06-01 00:01:00+00';
SELECT is((SELECT count(t) FROM (SELECT durable.poll_decision_task('rq') t
                                    FROM generate_series(1, 3)) p),
    2::bigint, 'a minute later: the bucket holds no more than its burst');
SELECT is((SELECT format('%s %s', rate_limit, rate_burst) FROM durable.task_queues
            WHERE task_queue = 'rq' AND kind = 'decision'), '2 2', 'task_queues shows the rate');
SELECT is((SELECT format('%s %s', set_by, set_at) FROM durable.task_queue_limits
            WHERE task_queue = 'rq'), 'postgres 2026-06-01 00:00:00+00',
    'the row keeps who set the limits and when');
SELECT is(durable.start_workflow_eager('job', NULL, 're', 'rq')->>'decisionTask', NULL,
    'start_workflow_eager on a queue with limits: queued, not returned');

-- An eager activity of a queue with limits is queued, not started by the worker.
SELECT durable.set_task_queue_limits('eq', 'activity', max_concurrent => 5);
SELECT durable.start_workflow('job', NULL, 'e1', 'eq') IS NOT NULL AS started;
SELECT is(durable.complete_decision_task(durable.poll_decision_task('eq')->>'taskToken',
    '[{"decisionType": "ScheduleActivityTask", "activityId": "a", "activityType": "call",
       "taskQueue": "eq", "requestEagerExecution": true, "startToCloseTimeoutSeconds": 60}]',
    max_eager_activities => 1) IS NULL, true, 'no eager activity from a queue with limits');
SELECT is((SELECT ready_tasks FROM durable.task_queues WHERE task_queue = 'eq' AND kind = 'activity'),
    1::bigint, 'the activity task is queued');
SELECT isnt(durable.poll_activity_task('eq'), NULL::jsonb, 'and a poll starts it');

-- The limits of a namespace go with it.
SELECT durable.create_namespace('tl_ns');
SELECT durable.set_task_queue_limits('q', 'activity', 3, namespace => 'tl_ns');
SELECT durable.drop_namespace('tl_ns');
SELECT is((SELECT count(*) FROM durable.task_queue_limits WHERE namespace = 'tl_ns'), 0::bigint,
    'drop_namespace drops its limits');

SELECT * FROM finish();
ROLLBACK;

-- Priorities and concurrency keys (docs/task-queues.md "Priorities and fairness"): a
-- claim takes the lowest priority first; within a priority it goes round the keys,
-- oldest task first within a key, a key's weight giving it that many tasks in a row;
-- a key's own limits hold its tasks back and not the others'.  Runs keep their
-- priority and key, which their activities and children inherit unless given theirs.
BEGIN;
SELECT plan(55);
SET LOCAL durable.test_time = '2026-06-01 00:00:00+00';

CREATE ROLE tp_client; GRANT durable_client TO tp_client;

-- The workflow ids of the next n decision tasks a poll of queue q gets, in order.
CREATE FUNCTION pg_temp.polled(q text, n int) RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(COALESCE(durable.poll_decision_task(q)->>'workflowId', '-'), ' '
                      ORDER BY i)
      FROM generate_series(1, n) i $$;

-- Bad input changes nothing.
SELECT throws_ok($$SELECT durable.start_workflow('job', NULL, 'bad', 'pq', priority => 0)$$,
    '22023', 'priority must be between 1 and 5', 'priority 0');
SELECT throws_ok($$SELECT durable.start_workflow('job', NULL, 'bad', 'pq', priority => 6)$$,
    '22023', 'priority must be between 1 and 5', 'priority 6');
SELECT throws_ok($$SELECT durable.start_workflow('job', NULL, 'bad', 'pq', concurrency_key => '')$$,
    '22023', 'concurrency_key must not be empty', 'an empty key');
SELECT throws_ok($$SELECT durable.start_workflow('job', NULL, 'bad', 'pq',
                                                concurrency_key => repeat('k', 256))$$,
    '22023', 'concurrency_key is too long', 'a key of 256 bytes');
SELECT throws_ok($$SELECT durable.signal_with_start('job', 'bad', 's', priority => 9)$$,
    '22023', 'priority must be between 1 and 5', 'signal_with_start checks the priority');
SELECT throws_ok($$SELECT durable.set_task_key_limits('pq', 'decision', 'k', weight => 0)$$,
    '22023', 'weight must be between 1 and 1000', 'weight 0');
SELECT throws_ok($$SELECT durable.set_task_key_limits('pq', 'decision', 'k', max_concurrent => 0)$$,
    '22023', 'max_concurrent must be at least 1', 'max_concurrent 0');
SELECT throws_ok($$SELECT durable.set_task_key_limits('pq', 'decision', 'k', rate => 'NaN')$$,
    '22023', NULL, 'a key''s rate NaN');
SELECT throws_ok($$SELECT durable.set_task_key_limits('pq', 'decision', 'k', burst => 3)$$,
    '22023', 'burst needs a rate', 'a key''s burst without a rate');
SELECT throws_ok($$SELECT durable.set_task_key_limits('pq', 'decision', 'k', rate => 1, burst => 0)$$,
    '22023', 'burst must be between 1 and 1000000', 'a key''s burst 0');
SELECT throws_ok($$SELECT durable.set_task_key_limits('pq', 'decision', 'k', weight => 2,
                                                     namespace => 'nope')$$,
    'WF002', NULL, 'an unknown namespace');
SELECT throws_ok($$SELECT durable.set_task_key_limits('pq', 'decision', '', weight => 2)$$,
    '22023', 'concurrency_key must not be empty', 'the defaults are NULL, not an empty key');
SELECT throws_ok($$SELECT durable.set_task_key_limits('pq', 'job', 'k', weight => 2)$$,
    '22023', 'kind must be "decision" or "activity"', 'an unknown kind');
SET LOCAL ROLE tp_client;
SELECT throws_ok($$SELECT durable.set_task_key_limits('pq', 'decision', 'k', weight => 2)$$,
    '42501', NULL, 'a client that does not own the namespace may not set a key''s limits');
RESET ROLE;
SELECT is((SELECT count(*) FROM durable.runs WHERE workflow_id = 'bad'), 0::bigint,
    'no bad start made a run');
SELECT is((SELECT count(*) FROM durable.task_key_limits), 0::bigint, 'no bad call set limits');

-- Priorities: 1 first, 5 last, whatever the order of the starts; the default is 3.
SELECT durable.start_workflow('job', NULL, 'p5', 'pq', priority => 5);
SELECT durable.start_workflow('job', NULL, 'p3', 'pq');
SELECT durable.start_workflow('job', NULL, 'p1', 'pq', priority => 1);
SELECT durable.start_workflow('job', NULL, 'p3b', 'pq', priority => 3);
SELECT durable.start_workflow('job', NULL, 'p2', 'pq', priority => 2);
SELECT is(pg_temp.polled('pq', 6), 'p1 p2 p3 p3b p5 -', 'the lowest priority first, then the oldest');
SELECT is(durable.describe_workflow('p1')->'priority', '1', 'describe_workflow shows the priority');
SELECT ok(NOT durable.describe_workflow('p3') ? 'priority',
    'and leaves it out for the default');
SELECT is((SELECT priority FROM durable.workflows WHERE workflow_id = 'p5'), 5::smallint,
    'durable.workflows shows it');
SELECT is((SELECT attributes->'priority' FROM durable.history h JOIN durable.runs r USING (run_id)
            WHERE r.workflow_id = 'p2' AND h.event_id = 1), '2',
    'WorkflowExecutionStarted records it');

-- Fairness: key a has 6 tasks queued before key b's 2; the claims go round the keys.
SELECT count(durable.start_workflow('job', NULL, 'a' || i, 'fq', concurrency_key => 'a'))
  FROM generate_series(1, 6) i;
SELECT count(durable.start_workflow('job', NULL, 'b' || i, 'fq', concurrency_key => 'b'))
  FROM generate_series(1, 2) i;
SELECT is((SELECT format('%s %s %s', concurrency_key, ready_tasks, weight)
             FROM durable.task_queue_keys WHERE task_queue = 'fq' AND concurrency_key = 'a'),
    'a 6 1', 'task_queue_keys counts a key''s ready tasks');
SELECT is(pg_temp.polled('fq', 9), 'a1 b1 a2 b2 a3 a4 a5 a6 -',
    'b does not wait behind a''s backlog');
SELECT is(durable.describe_workflow('a1')->'priority', '3',
    'a run with a key shows its priority, the default');

-- Tasks without a key take their turn as one more key, before the keys.
SELECT durable.start_workflow('job', NULL, 'k' || i, 'mq', concurrency_key => 'k') FROM generate_series(1, 3) i;
SELECT durable.start_workflow('job', NULL, 'n' || i, 'mq') FROM generate_series(1, 2) i;
SELECT is(pg_temp.polled('mq', 6), 'n1 k1 n2 k2 k3 -', 'tasks without a key are one more key');

-- Weights: a key of weight 3 takes three tasks in a row.
SELECT is(durable.set_task_key_limits('wq', 'decision', 'heavy', weight => 3), true, 'a weight');
SELECT is(durable.set_task_key_limits('wq', 'decision', 'heavy', weight => 3), false,
    'the same weight changes nothing');
SELECT count(durable.start_workflow('job', NULL, 'h' || i, 'wq', concurrency_key => 'heavy'))
  FROM generate_series(1, 6) i;
SELECT count(durable.start_workflow('job', NULL, 'l' || i, 'wq', concurrency_key => 'light'))
  FROM generate_series(1, 3) i;
SELECT is(pg_temp.polled('wq', 10), 'h1 h2 h3 l1 h4 h5 h6 l2 l3 -', 'weight 3 against weight 1');

-- Within a priority only: a priority-1 task of a light key comes before every heavy task.
SELECT count(durable.start_workflow('job', NULL, 'g' || i, 'gq', concurrency_key => 'g'))
  FROM generate_series(1, 3) i;
SELECT durable.start_workflow('job', NULL, 'urgent', 'gq', priority => 1, concurrency_key => 'u');
SELECT is(pg_temp.polled('gq', 2), 'urgent g1', 'priority before fairness');

-- A key's concurrency limit: at most 1 task of key x started; key y is not held back.
SELECT is(durable.set_task_key_limits('cq', 'decision', 'x', max_concurrent => 1), true,
    'a key''s concurrency limit');
SELECT count(durable.start_workflow('job', NULL, 'x' || i, 'cq', concurrency_key => 'x'))
  FROM generate_series(1, 3) i;
SELECT durable.start_workflow('job', NULL, 'y1', 'cq', concurrency_key => 'y');
SELECT durable.poll_decision_task('cq') AS x1 \gset
SELECT is(:'x1'::jsonb->>'workflowId', 'x1', 'the first of x starts');
SELECT is(pg_temp.polled('cq', 2), 'y1 -', 'y starts; x waits for its started task');
SELECT is((SELECT format('%s %s %s', ready_tasks, started_tasks, max_concurrent)
             FROM durable.task_queue_keys WHERE task_queue = 'cq' AND concurrency_key = 'x'),
    '2 1 1', 'task_queue_keys shows the key''s started task and its limit');
SELECT durable.complete_decision_task(:'x1'::jsonb->>'taskToken',
    '[{"decisionType": "CompleteWorkflowExecution"}]');
SELECT is(pg_temp.polled('cq', 2), 'x2 -', 'x1''s end lets the next of x start');

-- The defaults of every key: each key at most 1 started.
SELECT is(durable.set_task_key_limits('dq', 'decision', max_concurrent => 1), true,
    'the defaults of every key');
SELECT durable.start_workflow('job', NULL, 'd' || k || i, 'dq', concurrency_key => k)
  FROM unnest(ARRAY['p', 'q']) k, generate_series(1, 2) i;
SELECT is(pg_temp.polled('dq', 3), 'dp1 dq1 -', 'one of each key starts');
SELECT is(durable.set_task_key_limits('dq', 'decision', 'q', max_concurrent => 2), true,
    'a key''s own limit over the defaults');
SELECT is(pg_temp.polled('dq', 2), 'dq2 -', 'q may have two started, p still one');
SELECT is(durable.set_task_key_limits('dq', 'decision', 'q'), true, 'all NULL removes the key''s row');
SELECT is((SELECT count(*) FROM durable.task_key_limits WHERE task_queue = 'dq'), 1::bigint,
    'the defaults stay');

-- A key's rate limit: 1 start a second, burst 1.
SELECT is(durable.set_task_key_limits('rq', 'decision', 'r', rate => 1, burst => 1), true,
    'a key''s rate limit');
SELECT count(durable.start_workflow('job', NULL, 'r' || i, 'rq', concurrency_key => 'r'))
  FROM generate_series(1, 2) i;
SELECT durable.start_workflow('job', NULL, 's1', 'rq', concurrency_key => 's');
SELECT is(pg_temp.polled('rq', 3), 'r1 s1 -', 'r has one token a second; s has no limit');
SET LOCAL durable.test_time = '2026-06-01 00:00:01.1+00';
SELECT is(pg_temp.polled('rq', 1), 'r2', 'a second later r has a token again');
SET LOCAL durable.test_time = '2026-06-01 00:00:00+00';

-- Activities and children take the run's priority and key unless given their own.
SELECT durable.start_workflow('job', NULL, 'parent', 'iq', priority => 2, concurrency_key => 'acme');
SELECT durable.complete_decision_task(durable.poll_decision_task('iq')->>'taskToken',
    jsonb_build_array(
        jsonb_build_object('decisionType', 'ScheduleActivityTask', 'activityId', 'inherits',
                           'activityType', 'call', 'taskQueue', 'iaq',
                           'startToCloseTimeoutSeconds', 60,
                           'retryPolicy', jsonb_build_object('maximumAttempts', 3,
                                                             'initialIntervalInSeconds', 1)),
        jsonb_build_object('decisionType', 'ScheduleActivityTask', 'activityId', 'own',
                           'activityType', 'call', 'taskQueue', 'iaq',
                           'startToCloseTimeoutSeconds', 60,
                           'priority', 1, 'concurrencyKey', 'other'),
        jsonb_build_object('decisionType', 'StartChildWorkflowExecution', 'workflowId', 'child',
                           'workflowType', 'job', 'taskQueue', 'icq')));
SELECT is((SELECT string_agg(format('%s/%s', priority, concurrency_key), ' ' ORDER BY task_id)
             FROM durable.ready_tasks WHERE task_queue = 'iaq'),
    '2/acme 1/other', 'an activity inherits the run''s; one given its own keeps it');
SELECT is(durable.poll_activity_task('iaq')->>'activityId', 'own', 'priority 1 first');
SELECT is((SELECT format('%s/%s', priority, concurrency_key) FROM durable.workflows
            WHERE workflow_id = 'child'), '2/acme', 'a child inherits its parent''s');
SELECT is((SELECT attributes->>'concurrencyKey' FROM durable.history h
             JOIN durable.runs r USING (run_id)
            WHERE r.workflow_id = 'parent' AND h.event_type = 'ActivityTaskScheduled'
              AND h.attributes->>'activityId' = 'own'), 'other',
    'ActivityTaskScheduled records what the decision gave');
-- A retry keeps the activity's priority and key.
SELECT durable.fail_activity(durable.poll_activity_task('iaq')->>'taskToken', 'boom',
                             next_retry_delay => '0');
SELECT durable.tick();
SELECT is((SELECT format('%s/%s/%s', priority, concurrency_key, attempt) FROM durable.ready_tasks
            WHERE task_queue = 'iaq'), '2/acme/2', 'the retry is queued with them');

-- ContinueAsNew keeps the run's.
SELECT durable.complete_decision_task(durable.poll_decision_task('icq')->>'taskToken',
    '[{"decisionType": "ContinueAsNewWorkflowExecution", "workflowType": "job"}]');
SELECT is((SELECT string_agg(format('%s/%s/%s', priority, concurrency_key, status), ' '
                              ORDER BY status)
             FROM durable.workflows WHERE workflow_id = 'child'),
    '2/acme/continued_as_new 2/acme/running', 'the continued run keeps them');

-- Bad decision attributes fail the decision task's completion and change nothing.
SELECT durable.start_workflow('job', NULL, 'baddec', 'bq');
SELECT durable.poll_decision_task('bq')->>'taskToken' AS bt \gset
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L,
    '[{"decisionType": "ScheduleActivityTask", "activityId": "1", "activityType": "x",
       "priority": 7}]')$$, :'bt'), '22023', 'decisions[0].priority must be between 1 and 5',
    'a bad priority in a decision');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L,
    '[{"decisionType": "StartChildWorkflowExecution", "workflowType": "x",
       "concurrencyKey": ""}]')$$, :'bt'), '22023', 'decisions[0].concurrencyKey must not be empty',
    'an empty key in a decision');
SELECT is((SELECT last_event_id FROM durable.runs WHERE workflow_id = 'baddec'), 3::bigint,
    'the run is unchanged');

-- The executors take a namespace's SQL workflow tasks lowest priority first too.
CREATE ROLE tp_app;
CREATE SCHEMA tp;
GRANT USAGE ON SCHEMA tp TO tp_app;
CREATE FUNCTION tp.echo(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT input $$;
GRANT EXECUTE ON FUNCTION tp.echo(jsonb) TO tp_app;
SELECT durable.register_workflow('echo', 'tp.echo(jsonb)', task_queue => 'eq', run_as => 'tp_app');
SELECT durable.start_workflow('echo', '5', 'e5', 'eq', priority => 5);
SELECT durable.start_workflow('echo', '3', 'e3', 'eq');
SELECT durable.start_workflow('echo', '1', 'e1', 'eq', priority => 1);
CREATE FUNCTION pg_temp.closed() RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(workflow_id, ' ' ORDER BY workflow_id) FROM durable.workflows
     WHERE task_queue = 'eq' AND status = 'completed' $$;
SELECT durable.run_tasks(1);
SELECT is(pg_temp.closed(), 'e1', 'the executors run priority 1 first');
SELECT durable.run_tasks(1);
SELECT is(pg_temp.closed(), 'e1 e3', 'then 3');
SELECT durable.run_tasks(1);
SELECT is(pg_temp.closed(), 'e1 e3 e5', 'then 5');

SELECT * FROM finish();
ROLLBACK;

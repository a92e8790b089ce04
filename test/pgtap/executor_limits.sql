-- The limits of a task queue and of its concurrency keys bind the executors too
-- (docs/task-queues.md "Limits"): SQL workflows' decision tasks count under the
-- queue's limits of kind decision, SQL activities under those of kind activity,
-- together with the tasks external workers took from the same queue; a task held
-- back stays queued and runs once the limit admits it, and a chain of a run does not
-- take a limited task past its limits.  The executors also claim in the order polls
-- do: the lowest priority first, the concurrency keys in turn.  Run by
-- durable.run_tasks() in this session, with durable.test_time.
BEGIN;
SELECT plan(28);
SET LOCAL durable.test_time = '2026-06-01 00:00:00+00';

CREATE ROLE el_app;
CREATE SCHEMA el;
GRANT USAGE ON SCHEMA el TO el_app;
CREATE TABLE el.ran (n text);
GRANT INSERT ON el.ran TO el_app;

-- act records that it ran; one runs act once, on the queue and under the key its
-- input names.
CREATE FUNCTION el.act(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO el.ran VALUES (input->>'n');
    RETURN input;
END $$;
CREATE FUNCTION el.one(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    RETURN durable.activity('act', input,
        jsonb_strip_nulls(jsonb_build_object('taskQueue', input->>'q', 'concurrencyKey', input->>'k')));
END $$;
SELECT durable.register_workflow('one', 'el.one(jsonb)', run_as => 'el_app');
SELECT durable.register_workflow('one', 'el.one(jsonb)', task_queue => 'wq', run_as => 'el_app');
SELECT durable.register_workflow('one', 'el.one(jsonb)', task_queue => 'pq', run_as => 'el_app');
SELECT durable.register_workflow('one', 'el.one(jsonb)', task_queue => 'fq', run_as => 'el_app');
SELECT durable.register_activity('act', 'el.act(jsonb)', q, run_as => 'el_app')
  FROM unnest(ARRAY['free', 'mix', 'kq', 'rq']) q;

CREATE FUNCTION pg_temp.status(wid text) RETURNS text LANGUAGE sql AS
    $$ SELECT durable.describe_workflow(wid)->>'status' $$;
CREATE FUNCTION pg_temp.ran() RETURNS text LANGUAGE sql AS
    $$ SELECT COALESCE(string_agg(n, ' ' ORDER BY n), '') FROM el.ran $$;
-- An external worker's activity of type ext on queue q (key k), started by a poll:
-- its task token.
CREATE FUNCTION pg_temp.hold(wid text, q text, k text DEFAULT NULL) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM durable.start_workflow('ext', NULL, wid, 'exd_' || wid);
    PERFORM t.decide(wid, jsonb_build_array(jsonb_strip_nulls(jsonb_build_object(
        'decisionType', 'ScheduleActivityTask', 'activityId', 'a', 'activityType', 'ext',
        'taskQueue', q, 'concurrencyKey', k, 'startToCloseTimeoutSeconds', 600))), 'exd_' || wid);
    RETURN durable.poll_activity_task(q)->>'taskToken';
END $$;

-- 1. At most one activity of queue mix started: an external worker holds it, so the
-- SQL activity of the same queue waits, and the chain of its workflow's decision task
-- does not take it either.
SELECT durable.set_task_queue_limits('mix', 'activity', max_concurrent => 1);
SELECT pg_temp.hold('ext1', 'mix') AS ext1 \gset
SELECT ok(:'ext1' <> '', 'an external worker started an activity of mix');
SELECT durable.start_workflow('one', '{"n": "m1", "q": "mix"}', 'm1') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 1, 'only the decision task runs: the SQL activity of the full queue waits');
SELECT is((SELECT format('%s ready, %s started', ready_tasks, started_tasks) FROM durable.task_queues
            WHERE task_queue = 'mix' AND kind = 'activity'),
    '1 ready, 1 started', 'the SQL activity stays queued behind the external one');
SELECT is(pg_temp.ran(), '', 'it did not run');
SELECT durable.complete_activity(:'ext1', '"done"');
SELECT is(durable.run_tasks(), 2, 'once the external activity completed, the SQL activity runs, then the decision task');
SELECT is(pg_temp.status('m1'), 'completed', 'the workflow completed');
SELECT is(pg_temp.ran(), 'm1', 'its activity ran once');

-- 2. At most one decision task of queue wq started: a SQL workflow's decision task
-- waits while an external worker holds one of the same queue.
SELECT durable.set_task_queue_limits('wq', 'decision', max_concurrent => 1);
SELECT durable.start_workflow('ext', NULL, 'ext2', 'wq') IS NOT NULL AS started;
SELECT durable.poll_decision_task('wq')->>'taskToken' AS ext2 \gset
SELECT durable.start_workflow('one', '{"n": "w1", "q": "free"}', 'w1', 'wq') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 0, 'the SQL workflow''s decision task waits for the external one');
SELECT is(pg_temp.status('w1'), 'running', 'the SQL workflow has not moved');
SELECT durable.complete_decision_task(:'ext2', '[{"decisionType": "CompleteWorkflowExecution"}]');
SELECT is(durable.run_tasks(), 3, 'then it runs: decision task, activity, decision task');
SELECT is(pg_temp.status('w1'), 'completed', 'and completes');

-- 3. Key k1 of queue kq: at most one started.  An external worker holds one; the
-- SQL activity under k1 waits, the one under k2 runs.
SELECT durable.set_task_key_limits('kq', 'activity', 'k1', max_concurrent => 1);
SELECT pg_temp.hold('ext3', 'kq', 'k1') AS ext3 \gset
SELECT durable.start_workflow('one', '{"n": "k1", "q": "kq", "k": "k1"}', 'ka') IS NOT NULL AS started;
SELECT durable.start_workflow('one', '{"n": "k2", "q": "kq", "k": "k2"}', 'kb') IS NOT NULL AS started;
DELETE FROM el.ran;
SELECT is(durable.run_tasks(), 4,
    'both decision tasks, the activity under k2 and its workflow''s last decision task run');
SELECT is(pg_temp.ran(), 'k2', 'the activity under k1 waits: its key is full');
SELECT is((SELECT ready_tasks FROM durable.task_queue_keys
            WHERE task_queue = 'kq' AND kind = 'activity' AND concurrency_key = 'k1'),
    1::bigint, 'it is queued under its key');
SELECT durable.complete_activity(:'ext3', '"done"');
SELECT is(durable.run_tasks(), 2, 'once k1 has room, its activity runs');
SELECT is(pg_temp.ran(), 'k1 k2', 'each activity ran once');

-- 4. One activity start a second on queue rq (burst 1): of three, one runs now, the
-- next a second later; two seconds later only one more, not two.
SELECT durable.set_task_queue_limits('rq', 'activity', rate => 1, burst => 1);
DELETE FROM el.ran;
SELECT count(durable.start_workflow('one', jsonb_build_object('n', 'r' || i, 'q', 'rq'), 'r' || i))
  FROM generate_series(1, 3) i;
SELECT durable.run_tasks() AS ran \gset
SELECT is(pg_temp.ran(), 'r1', 'the first activity starts, the others wait for the rate');
SELECT t.at('2026-06-01 00:00:01+00');
SELECT durable.run_tasks() AS ran \gset
SELECT is(pg_temp.ran(), 'r1 r2', 'a second later the next starts');
SELECT t.at('2026-06-01 00:00:03+00');
SELECT durable.run_tasks() AS ran \gset
SELECT is(pg_temp.ran(), 'r1 r2 r3', 'two seconds later the last (a burst of one: one at a time)');
SELECT is((SELECT count(*) FROM durable.runs WHERE workflow_id LIKE 'r_' AND status = 'completed'),
    3::bigint, 'all three workflows completed');

-- 4b. Limits that do not bind: the chain of a run takes its activity through them, in
-- the same call, and leaves no start counted.
SELECT durable.register_activity('act', 'el.act(jsonb)', 'nb', run_as => 'el_app');
SELECT durable.set_task_queue_limits('nb', 'activity', max_concurrent => 100, rate => 1000, burst => 1000);
SELECT durable.start_workflow('one', '{"n": "nb1", "q": "nb"}', 'nb1') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 3, 'decision task, activity, decision task');
SELECT is(pg_temp.status('nb1'), 'completed', 'the workflow completed');
SELECT is((SELECT count(*) FROM durable.task_starts WHERE task_queue = 'nb'), 0::bigint,
    'its activity''s start is no longer counted');

-- 5. Priorities: of two SQL workflows of queue pq, the one of priority 1 runs first
-- though started second.
SELECT durable.start_workflow('one', '{"n": "p3", "q": "free"}', 'p3', 'pq') IS NOT NULL AS started;
SELECT durable.start_workflow('one', '{"n": "p1", "q": "free"}', 'p1', 'pq', priority => 1) IS NOT NULL AS started;
SELECT is(durable.run_tasks(1), 1, 'one task runs');
SELECT is((SELECT string_agg(wid, ' ') FROM unnest(ARRAY['p3', 'p1']) wid
            WHERE 'DecisionTaskCompleted' = ANY (t.events(wid))),
    'p1', 'it is the decision task of priority 1');

-- 6. Fairness: four workflows of key A, then one of key B, on queue fq: the executors
-- take B's second, not fifth.  (Nothing else is ready.)
SELECT is(durable.run_tasks(), 5, 'p1 and p3 run to their end');
SELECT count(durable.start_workflow('one', '{"q": "free"}', 'fa' || i, 'fq', concurrency_key => 'A'))
  FROM generate_series(1, 4) i;
SELECT durable.start_workflow('one', '{"q": "free"}', 'fb', 'fq', concurrency_key => 'B') IS NOT NULL AS started;
SELECT durable.run_tasks(1) + durable.run_tasks(1) AS ran \gset
SELECT is((SELECT string_agg(wid, ' ' ORDER BY wid) FROM unnest(ARRAY['fa1', 'fa2', 'fa3', 'fa4', 'fb']) wid
            WHERE 'DecisionTaskCompleted' = ANY (t.events(wid))),
    'fa1 fb', 'the first task of A, then B''s: the keys in turn');
SELECT is(:ran, 2, 'two tasks ran');

SELECT * FROM finish();
ROLLBACK;

-- A chain of an executor (durable.run_tasks() here) runs a SQL workflow's consecutive
-- tasks in one transaction, and keeps the run's next task in hand instead of writing
-- it (src/store/kept_task.c).  What the tables hold after the chain is what they would
-- hold had every task been written: a chain that ends (its length, a paused queue, a
-- limited queue, another task of the run first) leaves the next task on its queue with
-- the id it took when it was queued; one rolled back leaves nothing of it; histories
-- are the same.
BEGIN;
SELECT plan(20);
SET LOCAL durable.test_time = '2026-06-01 00:00:00+00';

CREATE ROLE ch_app;
CREATE FUNCTION public.ch_noop(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT input $$;
-- Three activities in a row; the second on queue input->>'q2' (the workflow's own by default).
CREATE FUNCTION public.ch_three(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM durable.activity('ch_noop', '1');
    PERFORM durable.activity('ch_noop', '2',
        CASE WHEN input ? 'q2' THEN jsonb_build_object('taskQueue', input->>'q2') END);
    PERFORM durable.activity('ch_noop', '3');
    RETURN '{"done": true}';
END $$;
-- Two activities at once, then both awaited.
CREATE FUNCTION public.ch_two(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
    a text := durable.start_activity('ch_noop', '"a"');
    b text := durable.start_activity('ch_noop', '"b"');
BEGIN
    RETURN jsonb_build_array(durable.await(a), durable.await(b));
END $$;
SELECT durable.register_workflow('ch_three', 'public.ch_three(jsonb)', 'chq', run_as => 'ch_app');
SELECT durable.register_activity('ch_noop', 'public.ch_noop(jsonb)', q, run_as => 'ch_app')
  FROM unnest(ARRAY['chq', 'chq_other']) q;

-- The run's tasks on the queues (kind and queue), in id order.
CREATE FUNCTION pg_temp.tasks(wid text) RETURNS text LANGUAGE sql AS $$
    SELECT coalesce(string_agg(format('%s %s', t.kind, t.task_queue), ', ' ORDER BY t.task_id), 'none')
      FROM durable.ready_tasks t JOIN durable.runs r USING (run_id)
     WHERE r.workflow_id = wid $$;
CREATE FUNCTION pg_temp.events(wid text) RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(h.event_type, ' ' ORDER BY h.event_id)
      FROM durable.history h JOIN durable.runs r USING (run_id) WHERE r.workflow_id = wid $$;

-- A chain cut by its length: the next task is on its queue, with the last id taken.
SELECT durable.start_workflow('ch_three', '{}', 'c1', 'chq') IS NOT NULL AS started;
SELECT is(durable.run_tasks(2), 2, 'a chain of 2: the decision and the first activity');
SELECT is(pg_temp.tasks('c1'), 'w chq', 'the next decision task is on the queue');
SELECT is((SELECT t.task_id FROM durable.ready_tasks t JOIN durable.runs r USING (run_id)
            WHERE r.workflow_id = 'c1'),
          (SELECT last_value FROM durable.ready_task_seq),
    'with the id it took when it was queued');
SELECT is(durable.run_tasks(), 5, 'the rest in one chain');
SELECT is(pg_temp.tasks('c1'), 'none', 'no task left');
SELECT is((SELECT status FROM durable.runs WHERE workflow_id = 'c1'), 'completed', 'completed');
SELECT is(pg_temp.events('c1'),
    'WorkflowExecutionStarted DecisionTaskScheduled DecisionTaskStarted DecisionTaskCompleted '
    'ActivityTaskScheduled ActivityTaskStarted ActivityTaskCompleted DecisionTaskScheduled '
    'DecisionTaskStarted DecisionTaskCompleted ActivityTaskScheduled ActivityTaskStarted '
    'ActivityTaskCompleted DecisionTaskScheduled DecisionTaskStarted DecisionTaskCompleted '
    'ActivityTaskScheduled ActivityTaskStarted ActivityTaskCompleted DecisionTaskScheduled '
    'DecisionTaskStarted DecisionTaskCompleted WorkflowExecutionCompleted',
    'the history is the one of tasks written and claimed one by one');

-- A chain whose next task is of a paused queue: it stays there, and runs once resumed.
SELECT durable.pause_task_queue('chq_other');
SELECT durable.start_workflow('ch_three', '{"q2": "chq_other"}', 'c2', 'chq') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 3, 'the chain stops before the paused queue''s activity');
SELECT is(pg_temp.tasks('c2'), 'x chq_other', 'the activity task waits on the paused queue');
SELECT durable.resume_task_queue('chq_other');
SELECT is(durable.run_tasks(), 4, 'resumed: the rest runs');
SELECT is((SELECT status FROM durable.runs WHERE workflow_id = 'c2'), 'completed', 'completed');

-- A chain whose next task is of a queue with limits: left on its queue for the
-- limits' claim, then taken through them.
SELECT durable.set_task_queue_limits('chq_other', 'activity', max_concurrent => 1);
SELECT durable.start_workflow('ch_three', '{"q2": "chq_other"}', 'c3', 'chq') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 7, 'the limits admit it');
SELECT is((SELECT status FROM durable.runs WHERE workflow_id = 'c3'), 'completed', 'completed');
SELECT is((SELECT count(*) FROM durable.task_starts), 0::bigint, 'no start of the limited queue left open');

-- A chain rolled back with its caller's savepoint leaves the first task as it was.
SELECT durable.start_workflow('ch_three', '{}', 'c4', 'chq') IS NOT NULL AS started;
SAVEPOINT before_chain;
SELECT is(durable.run_tasks(3), 3, 'a chain of 3');
ROLLBACK TO SAVEPOINT before_chain;
SELECT is(pg_temp.tasks('c4'), 'w chq', 'rolled back: the first decision task is queued again');
SELECT is(pg_temp.events('c4'), 'WorkflowExecutionStarted DecisionTaskScheduled',
    'and the history is as before');
SELECT is(durable.run_tasks(), 7, 'then it runs');

-- Two activities queued by one decision: the second is written, so the first, kept in
-- hand, is written too before the claim, which takes them in their order.
SELECT durable.register_workflow('ch_two', 'public.ch_two(jsonb)', 'chq', run_as => 'ch_app');
SELECT durable.start_workflow('ch_two', '{}', 'c5', 'chq') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 4, 'the decision, the two activities, the closing decision');
SELECT is((SELECT format('%s %s', status, result) FROM durable.runs WHERE workflow_id = 'c5'),
    'completed ["a", "b"]', 'completed with both results, in their order');

SELECT * FROM finish();
ROLLBACK;

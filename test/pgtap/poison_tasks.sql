-- A task that fails in the engine (not in the user's function) does not block the
-- executors: it is put off with a growing backoff (1 s doubling to 5 min), shows in
-- durable.stuck_tasks and describe_workflow's taskFailure with its error, comes back
-- when its backoff is over (a task_retry timer), and runs once the cause is gone.
-- Meanwhile every other workflow runs.  Run by durable.run_tasks() in this session.
BEGIN;
SELECT plan(31);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

CREATE ROLE wf_app;
CREATE SCHEMA app;
GRANT USAGE ON SCHEMA app TO wf_app;

-- Functions the engine cannot load: their library is missing, as after the package
-- of a C function was removed.  The engine fails on them before they run.  (CREATE
-- FUNCTION checks that the library is there: the test makes SQL functions and points
-- them at a library that is not.)
CREATE FUNCTION app.poison(input jsonb) RETURNS jsonb LANGUAGE sql AS 'SELECT input';
CREATE FUNCTION app.poison_act(input jsonb) RETURNS jsonb LANGUAGE sql AS 'SELECT input';
UPDATE pg_proc SET prolang = (SELECT oid FROM pg_language WHERE lanname = 'c'),
       prosrc = proname, probin = '$libdir/durable_no_such_library'
 WHERE oid IN ('app.poison(jsonb)'::regprocedure, 'app.poison_act(jsonb)'::regprocedure);
CREATE FUNCTION app.echo(input jsonb) RETURNS jsonb LANGUAGE sql AS 'SELECT input';
CREATE FUNCTION app.fine(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    RETURN jsonb_build_object('echo', durable.activity('echo', input));
END $$;
CREATE FUNCTION app.calls_poison(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    RETURN durable.activity('poison_act', input);
END $$;
SELECT durable.register_workflow('poison', 'app.poison(jsonb)', run_as => 'wf_app');
SELECT durable.register_workflow('fine', 'app.fine(jsonb)', run_as => 'wf_app');
SELECT durable.register_workflow('calls_poison', 'app.calls_poison(jsonb)', run_as => 'wf_app');
SELECT durable.register_activity('echo', 'app.echo(jsonb)', run_as => 'wf_app');
SELECT durable.register_activity('poison_act', 'app.poison_act(jsonb)', run_as => 'wf_app');

CREATE FUNCTION pg_temp.failure(wid text) RETURNS jsonb LANGUAGE sql AS
    $$ SELECT durable.describe_workflow(wid)->'taskFailure' $$;
CREATE FUNCTION pg_temp.status(wid text) RETURNS text LANGUAGE sql AS
    $$ SELECT durable.describe_workflow(wid)->>'status' $$;

-- 1. The poisoned task is the oldest; the other workflow still runs to its end.
SELECT durable.start_workflow('poison', '{}', 'p1') IS NOT NULL AS started;
SELECT durable.start_workflow('fine', '{"n": 1}', 'f1') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 4,
    'run_tasks takes the poisoned task (put off) and the three tasks of the other workflow');
SELECT is(pg_temp.status('f1'), 'completed', 'the other workflow completes');
SELECT is(pg_temp.status('p1'), 'running', 'the poisoned one is still running');
SELECT is(t.events('p1'), '{WorkflowExecutionStarted,DecisionTaskScheduled}',
    'nothing of the failed task was written: its decision task is still scheduled');
SELECT is(pg_temp.failure('p1') - 'lastError',
    '{"taskType": "decision", "scheduledEventId": 2, "attempts": 1,
      "nextAttemptTime": "2026-01-01T00:00:01+00:00"}'::jsonb,
    'describe_workflow: taskFailure, the first attempt failed, the next one in 1 s');
SELECT matches(pg_temp.failure('p1')->>'lastError',
    '^58P01: could not access file "\$libdir/durable_no_such_library"',
    'taskFailure.lastError: the SQLSTATE and the error');
SELECT results_eq(
    $$ SELECT workflow_id, workflow_type, task_type, activity_type, scheduled_event_id,
              failures, next_attempt_time FROM durable.stuck_tasks $$,
    $$ VALUES ('p1', 'poison', 'decision', NULL::text, 2::bigint, 1, '2026-01-01 00:00:01+00'::timestamptz) $$,
    'durable.stuck_tasks lists it');
SELECT is((SELECT due_at FROM durable.timers WHERE kind = 'task_retry'),
    '2026-01-01 00:00:01+00'::timestamptz, 'a task_retry timer ends its backoff');
SELECT is(pg_temp.failure('f1'), NULL, 'no taskFailure for a workflow whose tasks ran');

-- 2. During its backoff it is not taken again; new workflows run.
SELECT is(durable.run_tasks(), 0, 'before its time the put-off task is not retried');
SELECT durable.start_workflow('fine', '{"n": 2}', 'f2') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 3, 'a workflow started meanwhile runs');
SELECT is(pg_temp.status('f2'), 'completed', 'and completes');
SELECT is(pg_temp.failure('p1')->>'attempts', '1', 'the put-off task was not tried again');

-- 3. The backoff grows: 1 s, 2 s, 4 s ... up to 5 minutes.
SELECT t.at('2026-01-01 00:00:00.5+00');
SELECT is(durable.tick(), 0, 'its timer is not due before the backoff is over');
SELECT t.at('2026-01-01 00:00:01+00');
SELECT is(durable.tick(), 1, 'then the timer fires');
SELECT is(pg_temp.failure('p1')->>'nextAttemptTime', NULL, 'the task is due again');
SELECT is(durable.run_tasks(), 1, 'and retried');
SELECT is(pg_temp.failure('p1') - 'lastError',
    '{"taskType": "decision", "scheduledEventId": 2, "attempts": 2,
      "nextAttemptTime": "2026-01-01T00:00:03+00:00"}'::jsonb,
    'it failed again: put off by 2 s');
CREATE FUNCTION pg_temp.backoffs(rounds int) RETURNS int[] LANGUAGE plpgsql AS $$
DECLARE
    next timestamptz;
    delays int[] := '{}';
BEGIN
    FOR i IN 1 .. rounds LOOP
        next := (pg_temp.failure('p1')->>'nextAttemptTime')::timestamptz;
        PERFORM t.at(next::text);
        PERFORM durable.tick();
        PERFORM durable.run_tasks();
        delays := delays || extract(epoch FROM
            (pg_temp.failure('p1')->>'nextAttemptTime')::timestamptz - next)::int;
    END LOOP;
    RETURN delays;
END $$;
SELECT is(pg_temp.backoffs(9), '{4,8,16,32,64,128,256,300,300}',
    'each failure doubles the backoff, up to 5 minutes');
SELECT is(pg_temp.failure('p1')->>'attempts', '11', 'eleven attempts so far');
SELECT is((SELECT count(*) FROM durable.timers WHERE kind = 'task_retry'), 1::bigint,
    'one retry timer at a time');

-- 4. Once the cause is gone (the function can be loaded), the next retry runs it.
CREATE OR REPLACE FUNCTION app.poison(input jsonb) RETURNS jsonb
    LANGUAGE sql AS $$ SELECT '{"cured": true}'::jsonb $$;
SELECT t.at((pg_temp.failure('p1')->>'nextAttemptTime'));
SELECT is(durable.tick(), 1, 'the retry timer fires');
SELECT is(durable.run_tasks(), 1, 'the task runs');
SELECT is(durable.describe_workflow('p1')->>'result', '{"cured": true}', 'the workflow completes');
SELECT is(pg_temp.failure('p1'), NULL, 'taskFailure is gone');
SELECT is_empty($$ SELECT * FROM durable.stuck_tasks $$, 'no stuck task is left');

-- 5. A chain whose later task fails: its first task is kept, the failing one put off.
-- calls_poison's first decision task schedules poison_act, which the chain takes next.
SELECT durable.start_workflow('calls_poison', '{}', 'c1') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 2,
    'run_tasks: the decision task, then the activity task (put off)');
SELECT is(t.events('c1'),
    '{WorkflowExecutionStarted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,ActivityTaskScheduled}',
    'the decision task that ran before the failure in its chain is kept');
SELECT results_eq(
    $$ SELECT workflow_id, task_type, activity_type, failures FROM durable.stuck_tasks $$,
    $$ VALUES ('c1', 'activity', 'poison_act', 1) $$,
    'the activity task is the one put off');

-- 6. A run that closes drops its put-off task and its retry timer.
SELECT durable.terminate_workflow('c1', reason => 'enough');
SELECT is_empty($$ SELECT * FROM durable.stuck_tasks $$, 'terminated: no stuck task');
SELECT is((SELECT count(*) FROM durable.timers WHERE kind = 'task_retry'), 0::bigint,
    'and no retry timer');

SELECT * FROM finish();
ROLLBACK;

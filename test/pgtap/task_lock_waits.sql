-- A task put off because its run was locked (last_error 55P03: a client's open
-- transaction) is not failing in the engine: those waits do not lengthen the backoff
-- of a later failure in the engine.  failures counts the put-offs in a row of one
-- cause; the engine's failure after three lock waits is its first, put off 1 s (not
-- 8 s), and the next one doubles as usual.  Run by durable.run_tasks() in this
-- session; the lock waits themselves (which need another session holding the run)
-- are in test/t/060_executor_time_limits.pl and test/t/062_parallel_sql_activities.pl.
BEGIN;
SELECT plan(6);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

CREATE ROLE wf_app;
CREATE SCHEMA app;
GRANT USAGE ON SCHEMA app TO wf_app;
-- A function the engine cannot load (its library is missing): it fails before it runs.
CREATE FUNCTION app.poison(input jsonb) RETURNS jsonb LANGUAGE sql AS 'SELECT input';
UPDATE pg_proc SET prolang = (SELECT oid FROM pg_language WHERE lanname = 'c'),
       prosrc = proname, probin = '$libdir/durable_no_such_library'
 WHERE oid = 'app.poison(jsonb)'::regprocedure;
SELECT durable.register_workflow('poison', 'app.poison(jsonb)', run_as => 'wf_app');

SELECT durable.start_workflow('poison', '{}', 'p1') IS NOT NULL AS started;

-- The task as three waits for its locked run leave it, its last backoff over.
UPDATE durable.ready_tasks
   SET failures = 3, not_before = NULL,
       last_error = '55P03: canceling statement due to lock timeout'
 WHERE run_id = durable.resolve_run_id('p1');
SELECT results_eq(
    $$ SELECT failures, last_error FROM durable.stuck_tasks WHERE workflow_id = 'p1' $$,
    $$ VALUES (3, '55P03: canceling statement due to lock timeout') $$,
    'durable.stuck_tasks shows the waits for the lock');

SELECT is(durable.run_tasks(), 1, 'run_tasks takes the task, which fails in the engine');
SELECT results_eq(
    $$ SELECT failures, next_attempt_time FROM durable.stuck_tasks WHERE workflow_id = 'p1' $$,
    $$ VALUES (1, '2026-01-01 00:00:01+00'::timestamptz) $$,
    'its first failure in the engine: failures 1, put off 1 s, whatever the lock waits before');
SELECT matches(
    (SELECT last_error FROM durable.stuck_tasks WHERE workflow_id = 'p1'),
    '^58P01: ', 'last_error is the failure in the engine');

-- The next failure in the engine doubles the backoff.
SELECT t.at('2026-01-01 00:00:01+00');
SELECT is(durable.tick(), 1, 'the task_retry timer ends its backoff');
SELECT durable.run_tasks();
SELECT results_eq(
    $$ SELECT failures, next_attempt_time FROM durable.stuck_tasks WHERE workflow_id = 'p1' $$,
    $$ VALUES (2, '2026-01-01 00:00:03+00'::timestamptz) $$,
    'the second failure: failures 2, put off 2 s');

SELECT * FROM finish();
ROLLBACK;

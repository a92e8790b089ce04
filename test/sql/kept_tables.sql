-- kept_tables: an executor's chain keeps the tables it writes open from its first write
-- to its end (src/store/direct.c, "Tables kept open for an executor's chain"); every
-- other call closes what it opens.  A transaction that writes through durable, runs
-- chains (durable.run_tasks()), rolls back to a savepoint, alters a table, truncates one
-- or drops the extension behaves as if every call had closed what it opened, and its
-- commit reports nothing leaked: a WARNING would show below.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS durable;
SET durable.test_time = '2026-02-01 00:00:00+00';
\set VERBOSITY terse

-- A user's CHECK constraint fails in the middle of a write, in a savepoint: after the
-- rollback to it the transaction writes the same table again, and commits.
BEGIN;
SELECT durable.start_workflow('kt', '{}', 'kt-1', 'kt-q') IS NOT NULL AS started;
ALTER TABLE durable.history ADD CONSTRAINT kt_no_signal
    CHECK (event_type <> 'WorkflowExecutionSignaled') NOT VALID;
SELECT durable.start_workflow('kt', '{}', 'kt-2', 'kt-q') IS NOT NULL AS started_after_alter;
SAVEPOINT s;
SELECT durable.signal_workflow('kt-1', 'sig');
ROLLBACK TO SAVEPOINT s;
SELECT durable.start_workflow('kt', '{}', 'kt-3', 'kt-q') IS NOT NULL AS started_after_rollback;
ALTER TABLE durable.history DROP CONSTRAINT kt_no_signal;
SELECT durable.signal_workflow('kt-1', 'sig');
COMMIT;
SELECT r.workflow_id, array_agg(h.event_type ORDER BY h.event_id) AS events
  FROM durable.runs r JOIN durable.history h USING (run_id)
 WHERE r.workflow_id LIKE 'kt-%' GROUP BY 1 ORDER BY 1;

-- The same in a function's exception block, the way a PL/pgSQL caller handles errors.
CREATE TEMP TABLE kt_seen (what text);
DO $$
BEGIN
    ALTER TABLE durable.history ADD CONSTRAINT kt_no_signal
        CHECK (event_type <> 'WorkflowExecutionSignaled') NOT VALID;
    PERFORM durable.start_workflow('kt', '{}', 'kt-4', 'kt-q');
    BEGIN
        PERFORM durable.signal_workflow('kt-4', 'sig');
    EXCEPTION WHEN check_violation THEN
        INSERT INTO kt_seen VALUES ('signal refused');
    END;
    PERFORM durable.start_workflow('kt', '{}', 'kt-5', 'kt-q');
    ALTER TABLE durable.history DROP CONSTRAINT kt_no_signal;
END $$;
SELECT what FROM kt_seen;
SELECT workflow_id, status FROM durable.runs WHERE workflow_id IN ('kt-4', 'kt-5') ORDER BY 1;

-- A table written in a transaction can be truncated in it, and the extension dropped.
BEGIN;
SELECT durable.start_workflow('kt', '{}', 'kt-6', 'kt-q') IS NOT NULL AS started;
TRUNCATE durable.ready_tasks;
SELECT count(*) AS ready_tasks_left FROM durable.ready_tasks;
SELECT durable.start_workflow('kt', '{}', 'kt-7', 'kt-q') IS NOT NULL AS started_after_truncate;
SELECT count(*) AS ready_tasks_now FROM durable.ready_tasks;
DROP EXTENSION durable CASCADE;
SELECT count(*) AS durable_installed FROM pg_extension WHERE extname = 'durable';
ROLLBACK;
SELECT count(*) AS durable_installed FROM pg_extension WHERE extname = 'durable';
SELECT count(*) AS rolled_back FROM durable.runs WHERE workflow_id IN ('kt-6', 'kt-7');

-- Chains in the caller's transaction (run_tasks), one of them rolled back to a savepoint,
-- then a TRUNCATE and DROP EXTENSION in the same transaction.
BEGIN;
CREATE ROLE kt_app;
CREATE FUNCTION public.kt_step(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT input $$;
CREATE FUNCTION public.kt_flow(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM durable.activity('kt_step', '1');
    RETURN durable.activity('kt_step', '2');
END $$;
SELECT durable.register_workflow('kt_flow', 'public.kt_flow(jsonb)', 'kt-sql', run_as => 'kt_app');
SELECT durable.register_activity('kt_step', 'public.kt_step(jsonb)', 'kt-sql', run_as => 'kt_app');
SELECT durable.start_workflow('kt_flow', '{}', 'kt-8', 'kt-sql') IS NOT NULL AS started;
SAVEPOINT s;
SELECT durable.run_tasks() AS tasks_run;
ROLLBACK TO SAVEPOINT s;
SELECT status FROM durable.runs WHERE workflow_id = 'kt-8';
SELECT durable.run_tasks() AS tasks_run;
SELECT status, close_time IS NOT NULL AS closed FROM durable.runs WHERE workflow_id = 'kt-8';
SELECT count(*) AS attempts_logged FROM durable.activity_attempt_log l
  JOIN durable.runs r USING (run_id) WHERE r.workflow_id = 'kt-8';
TRUNCATE durable.activity_attempt_log;
DROP EXTENSION durable CASCADE;
SELECT count(*) AS durable_installed FROM pg_extension WHERE extname = 'durable';
ROLLBACK;

-- Clean up for the files after this one.
BEGIN;
DELETE FROM durable.ready_tasks WHERE run_id IN
    (SELECT run_id FROM durable.runs WHERE workflow_id LIKE 'kt-%');
DELETE FROM durable.timers WHERE run_id IN
    (SELECT run_id FROM durable.runs WHERE workflow_id LIKE 'kt-%');
DELETE FROM durable.history WHERE run_id IN
    (SELECT run_id FROM durable.runs WHERE workflow_id LIKE 'kt-%');
DELETE FROM durable.runs WHERE workflow_id LIKE 'kt-%';
COMMIT;

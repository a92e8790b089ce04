-- durable 0.2.0 -> 0.3.0: safety (no input, user code or fault brings the
-- server down or wedges the engine).

\echo Use "ALTER EXTENSION durable UPDATE TO '0.3.0'" to load this file. \quit

-- Poison tasks (issue 10): an executor task that fails in the engine (not in
-- the user's function) is put off with a growing backoff instead of being
-- retried at once as the oldest task, and shows here with its error.  NULL
-- columns for a task that never failed (rows are written without defaults).
ALTER TABLE durable.ready_tasks
    ADD COLUMN not_before timestamptz,
    ADD COLUMN failures integer,
    ADD COLUMN last_error text;
-- The executors' claim order, without the tasks being put off: the claim
-- never reads them.
DROP INDEX durable.ready_tasks_executor;
CREATE INDEX ready_tasks_executor ON durable.ready_tasks (task_id)
    WHERE kind IN ('w', 'x') AND not_before IS NULL;

-- Executor tasks that failed in the engine and are retried with a backoff
-- (next_attempt_time NULL: due now).
CREATE VIEW durable.stuck_tasks AS
    SELECT t.namespace, r.workflow_id, t.run_id, r.workflow_type,
           CASE t.kind WHEN 'w' THEN 'decision' ELSE 'activity' END AS task_type,
           a.activity_type, t.task_queue, t.scheduled_event_id, t.attempt,
           t.failures, t.last_error, t.not_before AS next_attempt_time
      FROM durable.ready_tasks t
      JOIN durable.runs r USING (run_id)
      LEFT JOIN durable.activities a
        ON t.kind = 'x' AND a.run_id = t.run_id
       AND a.scheduled_event_id = t.scheduled_event_id
     WHERE t.kind IN ('w', 'x') AND t.failures > 0;
GRANT SELECT ON durable.stuck_tasks TO durable_client, durable_admin;

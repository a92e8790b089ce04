-- durable 0.2.0 -> 0.3.0: safety (no input, user code or fault brings the
-- server down or wedges the engine).

\echo Use "ALTER EXTENSION durable UPDATE TO '0.3.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Bounds (issue 10, "Wedged queue by an overflow").  From 0.3.0 every
-- duration a user gives is at most 100 years (36525 days, 3155760000 s) and
-- every backoffCoefficient at most 1000 (README "Limits").  0.2.0 accepted
-- anything finite: clamp what it stored, so that the values in the tables
-- are within the bounds the engine now guarantees.  (The 0.3.0 library also
-- saturates every computation on stored values, so a database not yet
-- updated works as well.)
-- ---------------------------------------------------------------------------

-- A retry policy's durations and coefficient, clamped (the shape is kept).
CREATE FUNCTION durable.clamp_retry_policy_0_3_0(p jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE AS $clamp$
    SELECT CASE WHEN p IS NULL OR pg_catalog.jsonb_typeof(p) <> 'object' THEN p ELSE
        p || pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object(
            'initialIntervalInSeconds',
                CASE WHEN (p->>'initialIntervalInSeconds')::float8 > 3155760000
                     THEN 3155760000 END,
            'maximumIntervalInSeconds',
                CASE WHEN (p->>'maximumIntervalInSeconds')::float8 > 3155760000
                     THEN 3155760000 END,
            'expirationIntervalInSeconds',
                CASE WHEN (p->>'expirationIntervalInSeconds')::float8 > 3155760000
                     THEN 3155760000 END,
            'backoffCoefficient',
                CASE WHEN (p->>'backoffCoefficient')::float8 > 1000 THEN 1000 END))
    END
$clamp$;

UPDATE durable.namespaces
   SET retention = pg_catalog.make_interval(secs =>
           LEAST(GREATEST(pg_catalog.date_part('epoch', retention), 0), 3155760000))
 WHERE retention < interval '0' OR retention > interval '36525 days';
UPDATE durable.namespaces
   SET activity_retry_policy = durable.clamp_retry_policy_0_3_0(activity_retry_policy)
 WHERE activity_retry_policy IS DISTINCT FROM
       durable.clamp_retry_policy_0_3_0(activity_retry_policy);
ALTER TABLE durable.namespaces ADD CONSTRAINT namespaces_retention_bounds
    CHECK (retention >= interval '0' AND retention <= interval '36525 days');

UPDATE durable.runs
   SET execution_timeout = LEAST(execution_timeout, 3155760000),
       run_timeout = LEAST(run_timeout, 3155760000),
       decision_timeout = LEAST(decision_timeout, 3155760000),
       retry_policy = durable.clamp_retry_policy_0_3_0(retry_policy)
 WHERE execution_timeout > 3155760000 OR run_timeout > 3155760000
    OR decision_timeout > 3155760000
    OR retry_policy IS DISTINCT FROM durable.clamp_retry_policy_0_3_0(retry_policy);

UPDATE durable.activities
   SET schedule_to_start_timeout = LEAST(schedule_to_start_timeout, 3155760000),
       start_to_close_timeout = LEAST(start_to_close_timeout, 3155760000),
       schedule_to_close_timeout = LEAST(schedule_to_close_timeout, 3155760000),
       heartbeat_timeout = LEAST(heartbeat_timeout, 3155760000),
       retry_policy = durable.clamp_retry_policy_0_3_0(retry_policy)
 WHERE schedule_to_start_timeout > 3155760000 OR start_to_close_timeout > 3155760000
    OR schedule_to_close_timeout > 3155760000 OR heartbeat_timeout > 3155760000
    OR retry_policy IS DISTINCT FROM durable.clamp_retry_policy_0_3_0(retry_policy);

DROP FUNCTION durable.clamp_retry_policy_0_3_0(jsonb);
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

-- ---------------------------------------------------------------------------
-- Task tokens (issue 11, "Task tokens are guessable").  A token carries a
-- secret of 64 random bits drawn when its task is claimed, kept here and
-- checked on every answer; and the namespace and workflow id, for routers
-- (README "Task tokens").  NULL: no token with a secret was issued (a task
-- claimed before this update keeps its 0.2.0 token, which stays valid).
-- ---------------------------------------------------------------------------
ALTER TABLE durable.runs ADD COLUMN task_secret bigint;
ALTER TABLE durable.activities ADD COLUMN task_secret bigint;

-- What a token names, without its secret: reads no table, for any role.
CREATE FUNCTION durable.task_token_info(task_token text) RETURNS jsonb
    AS 'MODULE_PATHNAME', 'durable_task_token_info'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
GRANT EXECUTE ON FUNCTION durable.task_token_info(text) TO PUBLIC;

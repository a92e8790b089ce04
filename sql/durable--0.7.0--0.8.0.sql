-- durable 0.7.0 -> 0.8.0: flow control (limits, priorities, pauses and batch
-- operations) and fewer commits per workflow.
--
-- The schema check of sql/durable--0.2.0--0.3.0.sql is not repeated here:
-- since 0.3.0 the schema is owned by a superuser and only superusers may
-- create objects in it, and only a superuser can change that.  Objects are
-- schema-qualified and operators spelled OPERATOR(pg_catalog.x) as in the
-- earlier scripts.  Each section says what it is for.
--
-- An API function (re-)created here is SECURITY INVOKER with
-- SET search_path = pg_catalog, durable, pg_temp, as 0.5.0 made them all, and its name
-- is in engine_functions of src/base/caller.c, which runs it as the
-- extension's owner after noting its caller.

\echo Use "ALTER EXTENSION durable UPDATE TO '0.8.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Pausing a single workflow run (docs/task-queues.md "Pausing a workflow").
-- While a run is paused none of its tasks is handed out: its ready tasks
-- are held under the upper-case kinds 'D', 'A', 'W' and 'X' (of 'd', 'a',
-- 'w' and 'x'), which no claim reads, and the tasks it queues meanwhile are
-- written held; resuming moves them back under their old task ids.  Who
-- paused it (the calling role), when and why are kept in its row while it
-- is paused.  Pausing and resuming are client functions, granted as
-- terminate_workflow is: durable_client, with the namespace's 'client'
-- privilege.
ALTER TABLE durable.runs
    ADD COLUMN paused_at timestamptz,
    ADD COLUMN paused_by text,
    ADD COLUMN pause_reason text;
-- The paused runs, for the metrics' count.
CREATE INDEX runs_paused ON durable.runs (namespace, task_queue)
    WHERE paused_at IS NOT NULL;
ALTER TABLE durable.ready_tasks DROP CONSTRAINT ready_tasks_kind_check;
ALTER TABLE durable.ready_tasks ADD CONSTRAINT ready_tasks_kind_check
    CHECK (kind IN ('d', 'a', 'w', 'x', 'D', 'A', 'W', 'X'));

CREATE FUNCTION durable.pause_workflow(workflow_id text,
        run_id uuid DEFAULT NULL, reason text DEFAULT NULL,
        namespace text DEFAULT 'default')
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'durable_pause_workflow'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;
CREATE FUNCTION durable.resume_workflow(workflow_id text,
        run_id uuid DEFAULT NULL, namespace text DEFAULT 'default')
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'durable_resume_workflow'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;
REVOKE ALL ON FUNCTION durable.pause_workflow(text, uuid, text, text),
    durable.resume_workflow(text, uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION durable.pause_workflow(text, uuid, text, text),
    durable.resume_workflow(text, uuid, text) TO durable_client;

-- durable.workflows with the pause of each open run.
CREATE OR REPLACE VIEW durable.workflows WITH (security_barrier = true) AS
    SELECT r.namespace, r.workflow_id, r.run_id, r.workflow_type, r.task_queue,
           r.status, r.attempt, r.start_time, r.close_time,
           r.close_time OPERATOR(pg_catalog.-) r.start_time AS duration,
           r.input, r.result, r.failure, r.memo,
           r.cancel_requested, r.cron_schedule,
           r.parent_workflow_id, r.parent_run_id,
           r.continued_from, r.continued_to, r.first_run_id,
           r.last_event_id AS history_length,
           r.reset_from, r.reset_to, r.restarted_from, r.restarted_to,
           r.origin, r.search_attributes,
           COALESCE(r.pinned_function,
                    (SELECT g.function FROM durable.registrations g
                      WHERE g.namespace OPERATOR(pg_catalog.=) r.namespace
                        AND g.kind OPERATOR(pg_catalog.=) 'workflow'
                        AND g.type_name OPERATOR(pg_catalog.=) r.workflow_type
                        AND g.task_queue OPERATOR(pg_catalog.=) r.task_queue))
               AS function,
           r.paused_at, r.paused_by, r.pause_reason
      FROM durable.runs r
     WHERE durable.may_read_namespace(r.namespace);

-- durable.task_queues: held tasks of paused runs are not ready; they are
-- counted apart (held_tasks).
CREATE OR REPLACE VIEW durable.task_queues WITH (security_barrier = true) AS
    WITH ready AS (
        SELECT t.namespace, t.task_queue,
               CASE WHEN t.kind IN ('d', 'w', 'D', 'W') THEN 'decision' ELSE 'activity' END AS kind,
               pg_catalog.count(*) FILTER (WHERE t.not_before IS NULL
                   AND t.kind IN ('d', 'a', 'w', 'x')) AS ready_tasks,
               pg_catalog.count(*) FILTER (WHERE t.not_before IS NOT NULL
                   AND t.kind IN ('d', 'a', 'w', 'x')) AS put_off,
               pg_catalog.count(*) FILTER (WHERE t.kind IN ('D', 'A', 'W', 'X')) AS held,
               pg_catalog.min(t.task_id) FILTER (WHERE t.not_before IS NULL
                   AND t.kind IN ('d', 'a', 'w', 'x')) AS oldest_task_id
          FROM durable.ready_tasks t
         WHERE durable.may_read_namespace(t.namespace)
            OR pg_catalog.pg_has_role('pg_monitor', 'USAGE')
         GROUP BY 1, 2, 3),
    oldest AS (
        SELECT r.namespace, r.task_queue, r.kind,
               CASE WHEN t.kind IN ('d', 'w')
                    THEN (SELECT h.event_time FROM durable.history h
                           WHERE h.run_id OPERATOR(pg_catalog.=) t.run_id
                             AND h.event_id OPERATOR(pg_catalog.=) t.scheduled_event_id)
                    ELSE (SELECT a.scheduled_time FROM durable.activities a
                           WHERE a.run_id OPERATOR(pg_catalog.=) t.run_id
                             AND a.scheduled_event_id OPERATOR(pg_catalog.=) t.scheduled_event_id)
               END AS oldest_ready_time
          FROM ready r
          JOIN durable.ready_tasks t
            ON t.namespace OPERATOR(pg_catalog.=) r.namespace
           AND t.task_queue OPERATOR(pg_catalog.=) r.task_queue
           AND t.task_id OPERATOR(pg_catalog.=) r.oldest_task_id),
    waiting AS (
        SELECT w.namespace, w.task_queue, w.kind, pg_catalog.count(*) AS waiting
          FROM (SELECT r.namespace, r.task_queue, 'decision' AS kind
                  FROM durable.timers tm
                  JOIN durable.runs r USING (run_id)
                 WHERE tm.kind IN ('first_decision', 'decision_retry')
                UNION ALL
                SELECT a.namespace, a.task_queue, 'activity'
                  FROM durable.activities a
                 WHERE a.next_attempt_time IS NOT NULL) w
         WHERE durable.may_read_namespace(w.namespace)
            OR pg_catalog.pg_has_role('pg_monitor', 'USAGE')
         GROUP BY 1, 2, 3),
    pollers AS (
        SELECT p.namespace, p.task_queue, p.kind,
               pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                   'identity', p.identity, 'lastPollTime', p.last_poll_time)
                   ORDER BY p.last_poll_time DESC, p.identity) AS pollers,
               pg_catalog.max(p.last_poll_time) AS last_poll_time
          FROM durable.task_queue_pollers() p
         WHERE GREATEST(p.last_poll_time, p.poll_until)
               OPERATOR(pg_catalog.>=) (durable.now() OPERATOR(pg_catalog.-) '5 minutes'::interval)
         GROUP BY 1, 2, 3),
    registered AS (
        SELECT g.namespace, g.task_queue,
               CASE g.kind WHEN 'workflow' THEN 'decision' ELSE 'activity' END AS kind,
               pg_catalog.array_agg(g.type_name ORDER BY g.type_name) AS executor_types
          FROM durable.registrations g
         WHERE durable.may_read_namespace(g.namespace)
            OR pg_catalog.pg_has_role('pg_monitor', 'USAGE')
         GROUP BY 1, 2, 3),
    paused AS (
        SELECT p.namespace, p.task_queue, k.kind,
               p.paused_at, p.paused_by, p.reason
          FROM durable.paused_task_queues p
         CROSS JOIN (VALUES ('decision'), ('activity')) k (kind)
         WHERE durable.may_read_namespace(p.namespace)
            OR pg_catalog.pg_has_role('pg_monitor', 'USAGE')),
    queues AS (
        SELECT namespace, task_queue, kind FROM ready
        UNION SELECT namespace, task_queue, kind FROM waiting
        UNION SELECT namespace, task_queue, kind FROM pollers
        UNION SELECT namespace, task_queue, kind FROM registered
        UNION SELECT namespace, task_queue, kind FROM paused)
    SELECT q.namespace, q.task_queue, q.kind,
           COALESCE(r.ready_tasks, 0) AS ready_tasks,
           o.oldest_ready_time,
           durable.now() OPERATOR(pg_catalog.-) o.oldest_ready_time AS oldest_ready_age,
           (COALESCE(w.waiting, 0) OPERATOR(pg_catalog.+) COALESCE(r.put_off, 0)) AS waiting_on_timer,
           COALESCE(p.pollers, '[]'::jsonb) AS pollers,
           p.last_poll_time,
           COALESCE(g.executor_types, '{}'::text[]) AS executor_types,
           s.paused_at, s.paused_by, s.reason AS pause_reason,
           COALESCE(r.held, 0) AS held_tasks
      FROM queues q
      LEFT JOIN ready r USING (namespace, task_queue, kind)
      LEFT JOIN oldest o USING (namespace, task_queue, kind)
      LEFT JOIN waiting w USING (namespace, task_queue, kind)
      LEFT JOIN pollers p USING (namespace, task_queue, kind)
      LEFT JOIN registered g USING (namespace, task_queue, kind)
      LEFT JOIN paused s USING (namespace, task_queue, kind);

-- durable 0.3.0 -> 0.4.0: work under a held vacuum horizon (issue 12),
-- Cadence's history rules (issue 13), operating workflows from SQL (issue 14).
--
-- The schema check of sql/durable--0.2.0--0.3.0.sql is not repeated here:
-- at 0.3.0 the schema is owned by a superuser and only superusers may
-- create objects in it, and only a superuser can change that.
-- Every section below names its issue; objects are schema-qualified and
-- operators spelled OPERATOR(pg_catalog.x) as in the 0.3.0 script.

\echo Use "ALTER EXTENSION durable UPDATE TO '0.4.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Task queues and metrics (issue 14, parts 3 and 5: "Is anyone working on
-- this queue?", "How is it doing?").  Pollers and counters live in shared
-- memory (src/pollers.c, src/metrics.c), read by C functions that return
-- only the rows of namespaces the caller may read (members of pg_monitor
-- and durable_admin read every namespace, README "Metrics").
-- ---------------------------------------------------------------------------

-- The pollers seen since the server started (or until forgotten, README
-- "Task queues"), with the time their last poll began and the time its wait
-- ends at the latest.
CREATE FUNCTION durable.task_queue_pollers(
        OUT namespace text, OUT task_queue text, OUT kind text,
        OUT identity text, OUT last_poll_time timestamptz,
        OUT poll_until timestamptz)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'durable_task_queue_pollers'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, durable, pg_temp;

-- Per namespace, queue and kind: the tasks ready now and the age of the
-- oldest, the tasks waiting on a timer before they become ready (a delayed
-- start, a decision task retried after a backoff, an activity attempt
-- retried after its backoff, an executor task put off after an engine
-- failure), the pollers seen in the last 5 minutes and the types the
-- executors run there.
CREATE VIEW durable.task_queues AS
    WITH ready AS (
        SELECT t.namespace, t.task_queue,
               CASE WHEN t.kind IN ('d', 'w') THEN 'decision' ELSE 'activity' END AS kind,
               pg_catalog.count(*) FILTER (WHERE t.not_before IS NULL) AS ready_tasks,
               pg_catalog.count(*) FILTER (WHERE t.not_before IS NOT NULL) AS put_off,
               pg_catalog.min(t.task_id) FILTER (WHERE t.not_before IS NULL) AS oldest_task_id
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
    queues AS (
        SELECT namespace, task_queue, kind FROM ready
        UNION SELECT namespace, task_queue, kind FROM waiting
        UNION SELECT namespace, task_queue, kind FROM pollers
        UNION SELECT namespace, task_queue, kind FROM registered)
    SELECT q.namespace, q.task_queue, q.kind,
           COALESCE(r.ready_tasks, 0) AS ready_tasks,
           o.oldest_ready_time,
           durable.now() OPERATOR(pg_catalog.-) o.oldest_ready_time AS oldest_ready_age,
           (COALESCE(w.waiting, 0) OPERATOR(pg_catalog.+) COALESCE(r.put_off, 0)) AS waiting_on_timer,
           COALESCE(p.pollers, '[]'::jsonb) AS pollers,
           p.last_poll_time,
           COALESCE(g.executor_types, '{}'::text[]) AS executor_types
      FROM queues q
      LEFT JOIN ready r USING (namespace, task_queue, kind)
      LEFT JOIN oldest o USING (namespace, task_queue, kind)
      LEFT JOIN waiting w USING (namespace, task_queue, kind)
      LEFT JOIN pollers p USING (namespace, task_queue, kind)
      LEFT JOIN registered g USING (namespace, task_queue, kind);

-- The counters since the server started, one row a value (README "Metrics").
CREATE FUNCTION durable.metric_values(
        OUT metric text, OUT namespace text, OUT task_queue text,
        OUT label text, OUT le float8, OUT value float8)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'durable_metric_values'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, durable, pg_temp;
CREATE VIEW durable.metrics AS
    SELECT m.metric, m.namespace, m.task_queue, m.label, m.le, m.value
      FROM durable.metric_values() m;
-- The same in Prometheus's text exposition format.
CREATE FUNCTION durable.metrics_text() RETURNS text
    AS 'MODULE_PATHNAME', 'durable_metrics_text'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, durable, pg_temp;

REVOKE ALL ON FUNCTION durable.task_queue_pollers(), durable.metric_values(),
    durable.metrics_text() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION durable.task_queue_pollers(), durable.metric_values(),
    durable.metrics_text() TO durable_client, durable_worker, durable_admin, pg_monitor;
GRANT SELECT ON durable.task_queues, durable.metrics
    TO durable_client, durable_worker, durable_admin, pg_monitor;

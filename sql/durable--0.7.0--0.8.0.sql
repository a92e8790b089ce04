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
-- Limits of a task queue (docs/task-queues.md "Limits"): at most
-- max_concurrent tasks of a queue and kind started and not finished, and at
-- most rate task starts a second with a burst.  Decided where a poll claims
-- a task (src/store/task_limits.c), under an admission lock of the queue
-- held while the claim decides and starts, not to its commit.
-- durable.task_starts holds one row a task started under a concurrency
-- limit, counted by each claim; a row whose task has ended is dropped when
-- its attempt ends, or by the next claim that finds the queue full.  The
-- state of a rate limit is in shared memory.  Set by the namespace's owner
-- or a durable_admin member, as grants are.
CREATE TABLE durable.task_queue_limits (
    namespace       text NOT NULL,
    task_queue      text NOT NULL,
    kind            text NOT NULL CHECK (kind IN ('decision', 'activity')),
    max_concurrent  integer CHECK (max_concurrent >= 1),
    rate            float8 CHECK (rate > 0 AND rate <= 1e6),
    burst           integer CHECK (burst >= 1 AND burst <= 1000000),
    set_at          timestamptz NOT NULL,
    set_by          text NOT NULL,
    PRIMARY KEY (namespace, task_queue, kind),
    CHECK (max_concurrent IS NOT NULL OR rate IS NOT NULL),
    CHECK ((rate IS NULL) = (burst IS NULL))
);
SELECT pg_catalog.pg_extension_config_dump('durable.task_queue_limits', '');
GRANT SELECT ON durable.task_queue_limits TO durable_admin;

CREATE TABLE durable.task_starts (
    namespace           text NOT NULL,
    task_queue          text NOT NULL,
    kind                text NOT NULL,
    run_id              uuid NOT NULL,
    scheduled_event_id  bigint NOT NULL,
    attempt             integer NOT NULL,
    started_at          timestamptz NOT NULL,
    PRIMARY KEY (namespace, task_queue, kind, run_id, scheduled_event_id)
);
SELECT pg_catalog.pg_extension_config_dump('durable.task_starts', '');
GRANT SELECT ON durable.task_starts TO durable_admin;

CREATE FUNCTION durable.set_task_queue_limits(task_queue text, kind text,
        max_concurrent integer DEFAULT NULL, rate double precision DEFAULT NULL,
        burst integer DEFAULT NULL, namespace text DEFAULT 'default')
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'durable_set_task_queue_limits'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;
REVOKE ALL ON FUNCTION durable.set_task_queue_limits(text, text, integer,
    double precision, integer, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION durable.set_task_queue_limits(text, text, integer,
    double precision, integer, text) TO durable_client, durable_worker, durable_admin;

-- durable.task_queues with each queue's limits and the tasks started under
-- its concurrency limit (a queue with limits is shown even when it holds no
-- task).
CREATE OR REPLACE VIEW durable.task_queues WITH (security_barrier = true) AS
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
    paused AS (
        SELECT p.namespace, p.task_queue, k.kind,
               p.paused_at, p.paused_by, p.reason
          FROM durable.paused_task_queues p
         CROSS JOIN (VALUES ('decision'), ('activity')) k (kind)
         WHERE durable.may_read_namespace(p.namespace)
            OR pg_catalog.pg_has_role('pg_monitor', 'USAGE')),
    limited AS (
        SELECT l.namespace, l.task_queue, l.kind, l.max_concurrent,
               l.rate, l.burst,
               (SELECT pg_catalog.count(*) FROM durable.task_starts s
                 WHERE s.namespace OPERATOR(pg_catalog.=) l.namespace
                   AND s.task_queue OPERATOR(pg_catalog.=) l.task_queue
                   AND s.kind OPERATOR(pg_catalog.=) l.kind
                   AND CASE WHEN s.kind OPERATOR(pg_catalog.=) 'activity'
                       THEN EXISTS (SELECT 1 FROM durable.activities a
                                     WHERE a.run_id OPERATOR(pg_catalog.=) s.run_id
                                       AND a.scheduled_event_id OPERATOR(pg_catalog.=) s.scheduled_event_id
                                       AND a.attempt OPERATOR(pg_catalog.=) s.attempt
                                       AND a.started_time IS NOT NULL)
                       ELSE EXISTS (SELECT 1 FROM durable.runs r
                                     WHERE r.run_id OPERATOR(pg_catalog.=) s.run_id
                                       AND r.status OPERATOR(pg_catalog.=) 'running'
                                       AND r.decision_scheduled_id OPERATOR(pg_catalog.=) s.scheduled_event_id
                                       AND r.decision_started_id OPERATOR(pg_catalog.<>) 0)
                       END) AS started
          FROM durable.task_queue_limits l
         WHERE durable.may_read_namespace(l.namespace)
            OR pg_catalog.pg_has_role('pg_monitor', 'USAGE')),
    queues AS (
        SELECT namespace, task_queue, kind FROM ready
        UNION SELECT namespace, task_queue, kind FROM waiting
        UNION SELECT namespace, task_queue, kind FROM pollers
        UNION SELECT namespace, task_queue, kind FROM registered
        UNION SELECT namespace, task_queue, kind FROM paused
        UNION SELECT namespace, task_queue, kind FROM limited)
    SELECT q.namespace, q.task_queue, q.kind,
           COALESCE(r.ready_tasks, 0) AS ready_tasks,
           o.oldest_ready_time,
           durable.now() OPERATOR(pg_catalog.-) o.oldest_ready_time AS oldest_ready_age,
           (COALESCE(w.waiting, 0) OPERATOR(pg_catalog.+) COALESCE(r.put_off, 0)) AS waiting_on_timer,
           COALESCE(p.pollers, '[]'::jsonb) AS pollers,
           p.last_poll_time,
           COALESCE(g.executor_types, '{}'::text[]) AS executor_types,
           s.paused_at, s.paused_by, s.reason AS pause_reason,
           l.max_concurrent, l.started AS started_tasks,
           l.rate AS rate_limit, l.burst AS rate_burst
      FROM queues q
      LEFT JOIN ready r USING (namespace, task_queue, kind)
      LEFT JOIN oldest o USING (namespace, task_queue, kind)
      LEFT JOIN waiting w USING (namespace, task_queue, kind)
      LEFT JOIN pollers p USING (namespace, task_queue, kind)
      LEFT JOIN registered g USING (namespace, task_queue, kind)
      LEFT JOIN paused s USING (namespace, task_queue, kind)
      LEFT JOIN limited l USING (namespace, task_queue, kind);

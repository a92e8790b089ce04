-- durable 0.6.0 -> 0.7.0: fewer commits per workflow, flow control and safe
-- changes of workflow code.
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

\echo Use "ALTER EXTENSION durable UPDATE TO '0.7.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Partial history for eager dispatch (docs/api.md "Eager dispatch"), as
-- Temporal's sticky execution: a worker that keeps a run's state between
-- decision tasks passes history_after, the last event it has, and the
-- decision task returned to it carries only the events after it, instead of
-- the whole history at every step.  complete_decision_task and
-- complete_activity gain the parameter at the end with a NULL default (the
-- whole history), so existing calls work unchanged; the old signatures are
-- dropped and the new ones created as 0.6.0 left the old: SECURITY INVOKER
-- (the library runs them as the owner, src/base/caller.c), the same
-- search_path, EXECUTE for durable_worker only.
-- ---------------------------------------------------------------------------

DROP FUNCTION durable.complete_decision_task(text, jsonb, text, boolean, integer);
CREATE FUNCTION durable.complete_decision_task(task_token text, decisions jsonb,
        identity text DEFAULT NULL, return_new_task boolean DEFAULT false,
        max_eager_activities integer DEFAULT 0, history_after bigint DEFAULT NULL)
    RETURNS jsonb
    AS 'MODULE_PATHNAME', 'durable_complete_decision_task'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;
REVOKE ALL ON FUNCTION durable.complete_decision_task(text, jsonb, text, boolean, integer, bigint)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION durable.complete_decision_task(text, jsonb, text, boolean, integer, bigint)
    TO durable_worker;

DROP FUNCTION durable.complete_activity(text, jsonb, boolean);
CREATE FUNCTION durable.complete_activity(task_token text, result jsonb DEFAULT NULL,
        return_new_task boolean DEFAULT false, history_after bigint DEFAULT NULL)
    RETURNS jsonb
    AS 'MODULE_PATHNAME', 'durable_complete_activity'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;
REVOKE ALL ON FUNCTION durable.complete_activity(text, jsonb, boolean, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION durable.complete_activity(text, jsonb, boolean, bigint)
    TO durable_worker;
-- Histories for an SDK's replay test (docs/sql-workflows.md "Histories for the
-- replay test of an SDK"): the stored histories of a workflow type's runs,
-- the latest first, each as the "history" array of a decision task, for a
-- worker's replayer to run its own code against.  Privileges as get_history's
-- (the client group and the namespace's client privilege); it runs no code.
-- ---------------------------------------------------------------------------

CREATE FUNCTION durable.replay_histories(workflow_type text,
        namespace text DEFAULT 'default', only_running boolean DEFAULT true,
        max_runs integer DEFAULT 1000)
    RETURNS TABLE (workflow_id text, run_id uuid, history jsonb)
    AS 'MODULE_PATHNAME', 'durable_replay_histories'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;
REVOKE ALL ON FUNCTION durable.replay_histories(text, text, boolean, integer)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION durable.replay_histories(text, text, boolean, integer)
    TO durable_client, durable_admin;

-- ---------------------------------------------------------------------------
-- Running workflows kept on the function they ran with (docs/sql-workflows.md
-- "Keeping running workflows on their function"), as Temporal's pinned
-- workflows: register_workflow(..., running => 'keep') leaves the running
-- workflows that follow the registration on its old function, which
-- runs.pinned_function names; NULL (every run so far, every new run, a
-- ContinueAsNew's) is the registration's function.  The executors read the
-- column with the run's row; only the partial index below, of pinned runs,
-- is new to a run's writes.  move_runs() moves kept runs to the
-- registration's function (the client privilege, as terminate_workflow);
-- describe_workflow and the workflows view show the function a run uses.
-- register_workflow gains an argument, so it is made again, and it and the
-- other registration functions now run as the extension's owner with their
-- caller noted (src/base/caller.c), as the other API functions do.
-- ---------------------------------------------------------------------------

ALTER TABLE durable.runs ADD COLUMN pinned_function regprocedure;
CREATE INDEX runs_pinned_function ON durable.runs (pinned_function)
    WHERE pinned_function IS NOT NULL;

DROP FUNCTION durable.register_workflow(text, regprocedure, text, text, regrole);
CREATE FUNCTION durable.register_workflow(
        workflow_type text,
        function regprocedure,
        task_queue text DEFAULT 'default',
        namespace text DEFAULT 'default',
        run_as regrole DEFAULT NULL,
        running text DEFAULT 'move')
    RETURNS void
    AS 'MODULE_PATHNAME', 'durable_register_workflow'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;
REVOKE ALL ON FUNCTION
    durable.register_workflow(text, regprocedure, text, text, regrole, text)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    durable.register_workflow(text, regprocedure, text, text, regrole, text)
    TO durable_worker, durable_admin;

CREATE FUNCTION durable.move_runs(workflow_type text,
        from_function regprocedure DEFAULT NULL, workflow_id text DEFAULT NULL,
        namespace text DEFAULT 'default')
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'durable_move_runs'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;
REVOKE ALL ON FUNCTION durable.move_runs(text, regprocedure, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION durable.move_runs(text, regprocedure, text, text)
    TO durable_client, durable_admin;

-- The function a run uses, as describe_workflow's "function" shows it.
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
               AS function
      FROM durable.runs r
     WHERE durable.may_read_namespace(r.namespace);

-- ---------------------------------------------------------------------------
-- Pausing a task queue (docs/task-queues.md "Pausing a queue"): while a
-- queue has a row here, none of its tasks is handed out (polls, eager
-- dispatch, the executors); tasks still queue and timers still fire.  Who
-- paused it (the calling role), when and why are kept and shown in
-- durable.task_queues.  Pausing and resuming are client functions, granted
-- as terminate_workflow is: durable_client, with the namespace's 'client'
-- privilege.
CREATE TABLE durable.paused_task_queues (
    namespace  text NOT NULL,
    task_queue text NOT NULL,
    paused_at  timestamptz NOT NULL,
    paused_by  text NOT NULL,
    reason     text,
    PRIMARY KEY (namespace, task_queue)
);
SELECT pg_catalog.pg_extension_config_dump('durable.paused_task_queues', '');
GRANT SELECT ON durable.paused_task_queues TO durable_admin;

CREATE FUNCTION durable.pause_task_queue(task_queue text,
        namespace text DEFAULT 'default', reason text DEFAULT NULL)
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'durable_pause_task_queue'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;
CREATE FUNCTION durable.resume_task_queue(task_queue text,
        namespace text DEFAULT 'default')
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'durable_resume_task_queue'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;
REVOKE ALL ON FUNCTION durable.pause_task_queue(text, text, text),
    durable.resume_task_queue(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION durable.pause_task_queue(text, text, text),
    durable.resume_task_queue(text, text) TO durable_client;

-- durable.task_queues with the pause of each queue (paused queues are shown
-- even when they hold no task).
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
           s.paused_at, s.paused_by, s.reason AS pause_reason
      FROM queues q
      LEFT JOIN ready r USING (namespace, task_queue, kind)
      LEFT JOIN oldest o USING (namespace, task_queue, kind)
      LEFT JOIN waiting w USING (namespace, task_queue, kind)
      LEFT JOIN pollers p USING (namespace, task_queue, kind)
      LEFT JOIN registered g USING (namespace, task_queue, kind)
      LEFT JOIN paused s USING (namespace, task_queue, kind);

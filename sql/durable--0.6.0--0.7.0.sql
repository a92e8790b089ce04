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

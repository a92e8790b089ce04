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

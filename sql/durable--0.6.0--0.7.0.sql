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

-- durable 0.4.0 -> 0.5.0: tenants kept apart (views that leak nothing to a
-- qualifier of the caller's, executors shared fairly between namespaces with
-- limits an admin sets, privileges checked against the current user).
--
-- The schema check of sql/durable--0.2.0--0.3.0.sql is not repeated here:
-- since 0.3.0 the schema is owned by a superuser and only superusers may
-- create objects in it, and only a superuser can change that.  Objects are
-- schema-qualified and operators spelled OPERATOR(pg_catalog.x) as in the
-- earlier scripts.  Each section says what it is for.

\echo Use "ALTER EXTENSION durable UPDATE TO '0.5.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Executors shared between namespaces (README "Workflows and activities
-- written in SQL", src/executor_share.c).  A claim picks the namespace with
-- the fewest executor tasks running, then claims its oldest task: the
-- namespaces that have ready executor tasks are found by a loose scan of
-- this index, one descent a namespace.  It replaces the index of all
-- executor tasks in claim order, which nothing reads once the library finds
-- this one (a 0.4.0 schema keeps its claim of the oldest task).
-- ---------------------------------------------------------------------------
DROP INDEX durable.ready_tasks_executor;
CREATE INDEX ready_tasks_executor_namespace ON durable.ready_tasks (namespace, task_id)
    WHERE kind IN ('w', 'x') AND not_before IS NULL;

-- What an admin lets one namespace use of the executors: at most
-- max_executors of its tasks at once, and at most max_task_timeout as the
-- statement timeout of its workflow functions and SQL activities (NULL: no
-- limit; the timeouts in history stay as given).
ALTER TABLE durable.namespaces
    ADD COLUMN max_executors integer
        CONSTRAINT namespaces_max_executors_positive CHECK (max_executors > 0),
    ADD COLUMN max_task_timeout interval
        CONSTRAINT namespaces_max_task_timeout_bounds
        CHECK (max_task_timeout > interval '0' AND max_task_timeout <= interval '36525 days');

-- create_namespace and alter_namespace take them (0 or '0' in
-- alter_namespace clears a limit; NULL keeps it).
DROP FUNCTION durable.create_namespace(text, interval, jsonb, text);
CREATE FUNCTION durable.create_namespace(
        name text,
        retention interval DEFAULT '7 days',
        activity_retry_policy jsonb DEFAULT NULL,
        description text DEFAULT '',
        max_executors integer DEFAULT NULL,
        max_task_timeout interval DEFAULT NULL)
    RETURNS void
    AS 'MODULE_PATHNAME', 'durable_create_namespace'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = pg_catalog, durable, pg_temp;
DROP FUNCTION durable.alter_namespace(text, interval, jsonb, text);
CREATE FUNCTION durable.alter_namespace(
        name text,
        retention interval DEFAULT NULL,
        activity_retry_policy jsonb DEFAULT NULL,
        description text DEFAULT NULL,
        max_executors integer DEFAULT NULL,
        max_task_timeout interval DEFAULT NULL)
    RETURNS void
    AS 'MODULE_PATHNAME', 'durable_alter_namespace'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = pg_catalog, durable, pg_temp;
REVOKE ALL ON FUNCTION
    durable.create_namespace(text, interval, jsonb, text, integer, interval),
    durable.alter_namespace(text, interval, jsonb, text, integer, interval)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    durable.create_namespace(text, interval, jsonb, text, integer, interval),
    durable.alter_namespace(text, interval, jsonb, text, integer, interval)
    TO durable_admin;

-- ---------------------------------------------------------------------------
-- The caller of the API is the current user at the call (README "Namespace
-- privileges"), as PostgreSQL checks privileges: inside a SECURITY DEFINER
-- function, its owner.  The API functions become SECURITY INVOKER, keeping
-- their SET search_path; the library (src/caller.c) runs each as its owner,
-- as SECURITY DEFINER did, and notes who called it.  The SQL and PL/pgSQL
-- ones get a planner support function that loads the library before they
-- run, in a session that did not preload it.
-- ---------------------------------------------------------------------------

CREATE FUNCTION durable.engine_support(internal) RETURNS internal
    AS 'MODULE_PATHNAME', 'durable_engine_support'
    LANGUAGE C;
REVOKE ALL ON FUNCTION durable.engine_support(internal) FROM PUBLIC;

DO $caller$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN
        SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
         WHERE p.pronamespace OPERATOR(pg_catalog.=) 'durable'::regnamespace
           AND p.prosecdef
           AND p.proname OPERATOR(pg_catalog.=) ANY (ARRAY[
               'alter_namespace', 'cancel_workflow', 'complete_activity',
               'complete_decision_task', 'count_workflows', 'count_workflows_by_status',
               'create_namespace', 'describe_workflow', 'drop_namespace', 'fail_activity',
               'fail_decision_task', 'get_history', 'grant_namespace', 'heartbeat_activity',
               'list_workflows', 'poll_activity_task', 'poll_activity_tasks',
               'poll_decision_task', 'purge', 'report_activity_canceled', 'reset_workflow',
               'resolve_run_id', 'restart_workflow', 'revoke_namespace', 'run_tasks',
               'signal_with_start', 'signal_workflow', 'start_workflow',
               'terminate_workflow', 'tick', 'wait_workflow']::pg_catalog.name[])
    LOOP
        EXECUTE pg_catalog.format('ALTER FUNCTION %s SECURITY INVOKER', f);
    END LOOP;
END
$caller$;

ALTER FUNCTION durable.get_history(text, text, uuid) SUPPORT durable.engine_support;
ALTER FUNCTION durable.list_workflows(text, text, text, text, text, timestamptz,
    timestamptz, timestamptz, timestamptz, jsonb, jsonb, integer, text)
    SUPPORT durable.engine_support;
ALTER FUNCTION durable.count_workflows(text, text, text, text, text, timestamptz,
    timestamptz, timestamptz, timestamptz, jsonb, jsonb)
    SUPPORT durable.engine_support;
ALTER FUNCTION durable.count_workflows_by_status(text, text, text, text, timestamptz,
    timestamptz, timestamptz, timestamptz, jsonb, jsonb)
    SUPPORT durable.engine_support;

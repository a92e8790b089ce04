-- durable 0.1.0 -> 0.2.0: workflows and activities written as SQL functions,
-- run inside the server by the executor workers.

\echo Use "ALTER EXTENSION durable UPDATE TO '0.2.0'" to load this file. \quit

-- Which workflow and activity types the executor workers run, and how.
-- A decision task of a registered workflow type (an activity task of a
-- registered activity type) on its task queue is queued as kind 'w' ('x')
-- and taken only by the executors, never by an external poll.
CREATE TABLE durable.registrations (
    namespace       text NOT NULL,
    kind            text NOT NULL CHECK (kind IN ('workflow', 'activity')),
    type_name       text NOT NULL,
    task_queue      text NOT NULL,
    function        regprocedure NOT NULL,
    run_as          regrole NOT NULL,
    registered_by   regrole NOT NULL,
    registered_at   timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (namespace, kind, type_name, task_queue)
);
SELECT pg_catalog.pg_extension_config_dump('durable.registrations', '');

-- Backends cache the registrations as they do namespaces; a change invalidates
-- their caches, through the trigger function of namespaces, which serves any
-- table and is named for that now.
ALTER FUNCTION durable.namespaces_changed() RENAME TO cached_table_changed;
CREATE TRIGGER registrations_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON durable.registrations
    FOR EACH STATEMENT EXECUTE FUNCTION durable.cached_table_changed();

-- Executor tasks: 'w' a decision task of a SQL workflow, 'x' a SQL activity.
ALTER TABLE durable.ready_tasks DROP CONSTRAINT ready_tasks_kind_check;
ALTER TABLE durable.ready_tasks ADD CONSTRAINT ready_tasks_kind_check
    CHECK (kind IN ('d', 'a', 'w', 'x'));
-- The executors' claim order: oldest first, whatever the queue.
CREATE INDEX ready_tasks_executor ON durable.ready_tasks (task_id)
    WHERE kind IN ('w', 'x');

-- Registration.  These run as the caller (not SECURITY DEFINER): the caller's
-- role is what the functions will run as, and its privileges are checked.
CREATE FUNCTION durable.register_workflow(
        workflow_type text,
        function regprocedure,
        task_queue text DEFAULT 'default',
        namespace text DEFAULT 'default',
        run_as regrole DEFAULT NULL)
    RETURNS void
    AS 'MODULE_PATHNAME', 'durable_register_workflow'
    LANGUAGE C VOLATILE
    SET search_path = durable, pg_catalog, pg_temp;

CREATE FUNCTION durable.register_activity(
        activity_type text,
        function regprocedure,
        task_queue text DEFAULT 'default',
        namespace text DEFAULT 'default',
        run_as regrole DEFAULT NULL)
    RETURNS void
    AS 'MODULE_PATHNAME', 'durable_register_activity'
    LANGUAGE C VOLATILE
    SET search_path = durable, pg_catalog, pg_temp;

CREATE FUNCTION durable.unregister_workflow(
        workflow_type text,
        task_queue text DEFAULT 'default',
        namespace text DEFAULT 'default')
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'durable_unregister_workflow'
    LANGUAGE C VOLATILE
    SET search_path = durable, pg_catalog, pg_temp;

CREATE FUNCTION durable.unregister_activity(
        activity_type text,
        task_queue text DEFAULT 'default',
        namespace text DEFAULT 'default')
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'durable_unregister_activity'
    LANGUAGE C VOLATILE
    SET search_path = durable, pg_catalog, pg_temp;

-- Run ready executor tasks in this session (tests, or without executors).
CREATE FUNCTION durable.run_tasks(max_tasks integer DEFAULT 1000) RETURNS integer
    AS 'MODULE_PATHNAME', 'durable_run_tasks'
    LANGUAGE C VOLATILE STRICT
    SECURITY DEFINER SET search_path = durable, pg_catalog, pg_temp;

-- Calls for workflow functions.  They are deterministic under replay: each
-- returns what history recorded, or makes its decision and suspends the
-- function.  Outside a workflow function they raise 55000.
CREATE FUNCTION durable.activity(activity_type text, input jsonb DEFAULT NULL,
        options jsonb DEFAULT NULL)
    RETURNS jsonb
    AS 'MODULE_PATHNAME', 'durable_activity'
    LANGUAGE C VOLATILE;

CREATE FUNCTION durable.start_activity(activity_type text, input jsonb DEFAULT NULL,
        options jsonb DEFAULT NULL)
    RETURNS text
    AS 'MODULE_PATHNAME', 'durable_start_activity'
    LANGUAGE C VOLATILE;

CREATE FUNCTION durable.await(handle text) RETURNS jsonb
    AS 'MODULE_PATHNAME', 'durable_await'
    LANGUAGE C VOLATILE;

CREATE FUNCTION durable.sleep(duration interval) RETURNS void
    AS 'MODULE_PATHNAME', 'durable_sleep'
    LANGUAGE C VOLATILE;

CREATE FUNCTION durable.wait_signal(signal_name text, timeout interval DEFAULT NULL)
    RETURNS jsonb
    AS 'MODULE_PATHNAME', 'durable_wait_signal'
    LANGUAGE C VOLATILE;

CREATE FUNCTION durable.child_workflow(workflow_type text, input jsonb DEFAULT NULL,
        options jsonb DEFAULT NULL)
    RETURNS jsonb
    AS 'MODULE_PATHNAME', 'durable_child_workflow'
    LANGUAGE C VOLATILE;

CREATE FUNCTION durable.side_effect(value jsonb) RETURNS jsonb
    AS 'MODULE_PATHNAME', 'durable_side_effect'
    LANGUAGE C VOLATILE;

CREATE FUNCTION durable.workflow_info() RETURNS jsonb
    AS 'MODULE_PATHNAME', 'durable_workflow_info'
    LANGUAGE C VOLATILE;

REVOKE ALL ON durable.registrations FROM PUBLIC;
REVOKE ALL ON FUNCTION
    durable.register_workflow(text, regprocedure, text, text, regrole),
    durable.register_activity(text, regprocedure, text, text, regrole),
    durable.unregister_workflow(text, text, text),
    durable.unregister_activity(text, text, text),
    durable.run_tasks(integer)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    durable.register_workflow(text, regprocedure, text, text, regrole),
    durable.register_activity(text, regprocedure, text, text, regrole),
    durable.unregister_workflow(text, text, text),
    durable.unregister_activity(text, text, text)
    TO durable_worker, durable_admin;
GRANT SELECT ON durable.registrations TO durable_worker, durable_admin;
GRANT EXECUTE ON FUNCTION durable.run_tasks(integer) TO durable_admin;
GRANT EXECUTE ON FUNCTION
    durable.activity(text, jsonb, jsonb),
    durable.start_activity(text, jsonb, jsonb),
    durable.await(text),
    durable.sleep(interval),
    durable.wait_signal(text, interval),
    durable.child_workflow(text, jsonb, jsonb),
    durable.side_effect(jsonb),
    durable.workflow_info()
    TO PUBLIC;

-- durable 0.5.0 -> 0.6.0: what teams adopt an engine for (a TypeScript SDK's
-- start options, fewer commits per workflow, flow control, safe changes of
-- workflow code).
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

\echo Use "ALTER EXTENSION durable UPDATE TO '0.6.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Eager dispatch of the next decision task (docs/api.md "Eager dispatch"), as
-- Cadence's ReturnNewDecisionTask and Temporal's returnNewWorkflowTask: an
-- answer may ask for the decision task it leaves scheduled, started for the
-- caller in the same transaction.  complete_decision_task and
-- complete_activity gain return_new_task and return jsonb instead of void
-- (NULL when nothing is returned); the old calls keep working.
-- complete_decision_task also gains max_eager_activities (eager activities,
-- as Temporal's request_eager_execution and
-- RespondWorkflowTaskCompletedResponse.activity_tasks): how many activities
-- scheduled with requestEagerExecution on the decision task's own queue come
-- back started in its answer instead of being queued.  Their privileges are
-- the old ones: the worker group only.
-- ---------------------------------------------------------------------------

DROP FUNCTION durable.complete_decision_task(text, jsonb, text);
CREATE FUNCTION durable.complete_decision_task(task_token text, decisions jsonb,
        identity text DEFAULT NULL, return_new_task boolean DEFAULT false,
        max_eager_activities integer DEFAULT 0)
    RETURNS jsonb
    AS 'MODULE_PATHNAME', 'durable_complete_decision_task'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;
REVOKE ALL ON FUNCTION durable.complete_decision_task(text, jsonb, text, boolean, integer)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION durable.complete_decision_task(text, jsonb, text, boolean, integer)
    TO durable_worker;

DROP FUNCTION durable.complete_activity(text, jsonb);
CREATE FUNCTION durable.complete_activity(task_token text, result jsonb DEFAULT NULL,
        return_new_task boolean DEFAULT false)
    RETURNS jsonb
    AS 'MODULE_PATHNAME', 'durable_complete_activity'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;
REVOKE ALL ON FUNCTION durable.complete_activity(text, jsonb, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION durable.complete_activity(text, jsonb, boolean)
    TO durable_worker;

-- ---------------------------------------------------------------------------
-- Search attributes at start (docs/api.md "Client functions"): start_workflow
-- and signal_with_start take search_attributes, a JSON object stored as the
-- new run's search attributes and given in its WorkflowExecutionStarted as
-- searchAttributes, as a child's start and ContinueAsNew give them, so that
-- list_workflows finds the run from its start on (Temporal's
-- StartWorkflowExecution and SignalWithStartWorkflowExecution requests carry
-- them too).  A parameter is added at the end with a NULL default: every
-- existing parameter keeps its name, position and default, so existing calls
-- work unchanged.  The old signatures are dropped and the new ones created
-- as 0.5.0 left the old: SECURITY INVOKER (the library runs them as the
-- owner, src/base/caller.c), the same search_path, EXECUTE for
-- durable_client only.
-- ---------------------------------------------------------------------------

DROP FUNCTION durable.start_workflow(text, jsonb, text, text, text, jsonb, text,
    interval, interval, interval, text, interval, jsonb);
CREATE FUNCTION durable.start_workflow(
        workflow_type text,
        input jsonb DEFAULT NULL,
        workflow_id text DEFAULT NULL,
        task_queue text DEFAULT 'default',
        namespace text DEFAULT 'default',
        retry_policy jsonb DEFAULT NULL,
        id_reuse_policy text DEFAULT 'allow_duplicate_failed_only',
        execution_timeout interval DEFAULT NULL,
        run_timeout interval DEFAULT NULL,
        decision_timeout interval DEFAULT '10 seconds',
        cron_schedule text DEFAULT NULL,
        delay interval DEFAULT NULL,
        memo jsonb DEFAULT NULL,
        search_attributes jsonb DEFAULT NULL)
    RETURNS uuid
    AS 'MODULE_PATHNAME', 'durable_start_workflow'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;

DROP FUNCTION durable.signal_with_start(text, text, text, jsonb, jsonb, text, text,
    jsonb, text, interval, interval, interval, text, interval, jsonb);
CREATE FUNCTION durable.signal_with_start(
        workflow_type text,
        workflow_id text,
        signal_name text,
        signal_input jsonb DEFAULT NULL,
        input jsonb DEFAULT NULL,
        task_queue text DEFAULT 'default',
        namespace text DEFAULT 'default',
        retry_policy jsonb DEFAULT NULL,
        id_reuse_policy text DEFAULT 'allow_duplicate_failed_only',
        execution_timeout interval DEFAULT NULL,
        run_timeout interval DEFAULT NULL,
        decision_timeout interval DEFAULT '10 seconds',
        cron_schedule text DEFAULT NULL,
        delay interval DEFAULT NULL,
        memo jsonb DEFAULT NULL,
        search_attributes jsonb DEFAULT NULL)
    RETURNS uuid
    AS 'MODULE_PATHNAME', 'durable_signal_with_start'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;

REVOKE ALL ON FUNCTION
    durable.start_workflow(text, jsonb, text, text, text, jsonb, text, interval,
                           interval, interval, text, interval, jsonb, jsonb),
    durable.signal_with_start(text, text, text, jsonb, jsonb, text, text, jsonb,
                              text, interval, interval, interval, text, interval,
                              jsonb, jsonb)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    durable.start_workflow(text, jsonb, text, text, text, jsonb, text, interval,
                           interval, interval, text, interval, jsonb, jsonb),
    durable.signal_with_start(text, text, text, jsonb, jsonb, text, text, jsonb,
                              text, interval, interval, interval, text, interval,
                              jsonb, jsonb)
    TO durable_client;

-- ---------------------------------------------------------------------------
-- Versions of workflow code recorded in history (docs/sql-workflows.md
-- "Changing workflow code"), as Cadence's GetVersion and Temporal's patched:
-- calls for workflow functions, like durable.side_effect(), that record a
-- RecordMarker decision "Version" {id, changeId, version} the first time a
-- run passes them and return what history recorded on replay.  Outside a
-- workflow function they raise 55000; callable by all, as the other calls of
-- workflow code.
-- ---------------------------------------------------------------------------

CREATE FUNCTION durable.get_version(change_id text, min_supported integer,
        max_supported integer)
    RETURNS integer
    AS 'MODULE_PATHNAME', 'durable_get_version'
    LANGUAGE C VOLATILE;

CREATE FUNCTION durable.patched(change_id text) RETURNS boolean
    AS 'MODULE_PATHNAME', 'durable_patched'
    LANGUAGE C VOLATILE;

CREATE FUNCTION durable.deprecate_patch(change_id text) RETURNS void
    AS 'MODULE_PATHNAME', 'durable_deprecate_patch'
    LANGUAGE C VOLATILE;

GRANT EXECUTE ON FUNCTION
    durable.get_version(text, integer, integer),
    durable.patched(text),
    durable.deprecate_patch(text)
    TO PUBLIC;

-- ---------------------------------------------------------------------------
-- Replay checks before a deploy (docs/sql-workflows.md "Checking new code
-- against running workflows"): the stored histories of a workflow type's
-- runs replayed against a function, which may be one created in the
-- caller's own transaction, writing nothing.  Privileges as
-- describe_workflow's (the client group and the namespace's client
-- privilege); the function then also requires EXECUTE on the function and
-- the privileges of the role the registration runs as.
-- ---------------------------------------------------------------------------

CREATE FUNCTION durable.replay_check(workflow_type text, function regprocedure,
        namespace text DEFAULT 'default', only_running boolean DEFAULT true,
        max_runs integer DEFAULT 1000)
    RETURNS TABLE (workflow_id text, run_id uuid, ok boolean, event_id bigint,
                   history text, code text, message text)
    AS 'MODULE_PATHNAME', 'durable_replay_check'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;
REVOKE ALL ON FUNCTION durable.replay_check(text, regprocedure, text, boolean, integer)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION durable.replay_check(text, regprocedure, text, boolean, integer)
    TO durable_client, durable_admin;

-- Eager start (docs/api.md "Eager dispatch"), as Temporal's StartWorkflowExecution
-- with request_eager_execution: start_workflow_eager takes start_workflow's arguments
-- and an identity, starts the workflow, and returns the new run's first decision task
-- started for the caller, as a poll with that identity would start it, in the same
-- transaction: {"runId": ..., "decisionTask": <poll_decision_task's shape, or null>}.
-- The task is not queued; it is null, and queued as usual, when it is not due at once
-- (a delay, a cron schedule) or is a registered SQL workflow's.  The caller needs the
-- client and the worker privilege on the namespace.
CREATE FUNCTION durable.start_workflow_eager(
        workflow_type text,
        input jsonb DEFAULT NULL,
        workflow_id text DEFAULT NULL,
        task_queue text DEFAULT 'default',
        namespace text DEFAULT 'default',
        retry_policy jsonb DEFAULT NULL,
        id_reuse_policy text DEFAULT 'allow_duplicate_failed_only',
        execution_timeout interval DEFAULT NULL,
        run_timeout interval DEFAULT NULL,
        decision_timeout interval DEFAULT '10 seconds',
        cron_schedule text DEFAULT NULL,
        delay interval DEFAULT NULL,
        memo jsonb DEFAULT NULL,
        search_attributes jsonb DEFAULT NULL,
        identity text DEFAULT NULL)
    RETURNS jsonb
    AS 'MODULE_PATHNAME', 'durable_start_workflow_eager'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;

REVOKE ALL ON FUNCTION
    durable.start_workflow_eager(text, jsonb, text, text, text, jsonb, text, interval,
                                 interval, interval, text, interval, jsonb, jsonb, text)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    durable.start_workflow_eager(text, jsonb, text, text, text, jsonb, text, interval,
                                 interval, interval, text, interval, jsonb, jsonb, text)
    TO durable_client;

-- durable_citus 0.1.0 -> 0.2.0: signals and cancels across nodes (docs/citus.md,
-- "Signals and cancels across nodes").
\echo Use "ALTER EXTENSION durable_citus UPDATE TO '0.2.0'" to load this file. \quit

-- A SignalExternalWorkflowExecution or RequestCancelExternalWorkflowExecution decision
-- whose target another node owns is relayed to that node.  durable (0.11.0 and later)
-- has the hook: the one row of durable.router names a function that says whether
-- another node owns a workflow id, and one that relays a request there.  The engine
-- writes such a request to an external timer in the decision's transaction (its
-- outbox), and its timer worker relays it with durable_citus.relay(): a delegated call
-- of durable_citus.node_call() on the owner, which delivers it with
-- durable.receive_external() (and notes it, so that a relay tried again delivers
-- nothing twice), inside the timer worker's transaction, which then writes the answer
-- to the initiator's history and deletes the timer.  The engine calls both functions
-- as durable's owner, a superuser; they are granted to no one else.

DO $$
BEGIN
    IF pg_catalog.to_regclass('durable.router') IS NULL THEN
        RAISE EXCEPTION 'durable_citus 0.2.0 needs durable 0.11.0 or later'
            USING ERRCODE = '0A000',
                  HINT = 'Run ALTER EXTENSION durable UPDATE first, on the coordinator.';
    END IF;
END
$$;

-- Whether a node other than this one owns a workflow id (the engine asks it when it
-- finds no running workflow of a signal or cancel request's target on this node).
CREATE FUNCTION durable_citus.owned_elsewhere(namespace text, workflow_id text)
RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
    SELECT COALESCE(
        durable_citus.owner_group(durable_citus.route_key(namespace, workflow_id))
            OPERATOR(pg_catalog.<>) (SELECT groupid FROM pg_catalog.pg_dist_local_group),
        false)
$$;

-- A signal or cancel request relayed here by another node goes through node_call, the
-- distributed function of the cluster-wide calls, as the call 'receive_external' (a new
-- distributed function could not be distributed from this update script: the workers
-- still run 0.1.0 while it runs on the coordinator).  local_call is 0.1.0's with that
-- call added.
CREATE OR REPLACE FUNCTION durable_citus.local_call(call text, args jsonb)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    CASE call
    WHEN 'create_namespace' THEN
        PERFORM durable.create_namespace(args->>'name', (args->>'retention')::interval,
            durable_citus.unbox(args->'activity_retry_policy'), args->>'description', (args->>'max_executors')::integer,
            (args->>'max_task_timeout')::interval);
        RETURN NULL;
    WHEN 'alter_namespace' THEN
        PERFORM durable.alter_namespace(args->>'name', (args->>'retention')::interval,
            durable_citus.unbox(args->'activity_retry_policy'), args->>'description', (args->>'max_executors')::integer,
            (args->>'max_task_timeout')::interval);
        RETURN NULL;
    WHEN 'drop_namespace' THEN
        PERFORM durable.drop_namespace(args->>'name');
        RETURN NULL;
    WHEN 'grant_namespace' THEN
        PERFORM durable.grant_namespace(args->>'namespace', args->>'role', args->>'privilege');
        RETURN NULL;
    WHEN 'revoke_namespace' THEN
        PERFORM durable.revoke_namespace(args->>'namespace', args->>'role', args->>'privilege');
        RETURN NULL;
    WHEN 'register_workflow' THEN
        PERFORM durable.register_workflow(args->>'workflow_type', (args->>'function')::regprocedure,
            args->>'task_queue', args->>'namespace', (args->>'run_as')::regrole, args->>'running');
        RETURN NULL;
    WHEN 'register_activity' THEN
        PERFORM durable.register_activity(args->>'activity_type', (args->>'function')::regprocedure,
            args->>'task_queue', args->>'namespace', (args->>'run_as')::regrole);
        RETURN NULL;
    WHEN 'unregister_workflow' THEN
        RETURN pg_catalog.to_jsonb(durable.unregister_workflow(args->>'workflow_type',
            args->>'task_queue', args->>'namespace'));
    WHEN 'unregister_activity' THEN
        RETURN pg_catalog.to_jsonb(durable.unregister_activity(args->>'activity_type',
            args->>'task_queue', args->>'namespace'));
    WHEN 'pause_task_queue' THEN
        RETURN pg_catalog.to_jsonb(durable.pause_task_queue(args->>'task_queue',
            args->>'namespace', args->>'reason'));
    WHEN 'resume_task_queue' THEN
        RETURN pg_catalog.to_jsonb(durable.resume_task_queue(args->>'task_queue',
            args->>'namespace'));
    WHEN 'count_workflows' THEN
        RETURN pg_catalog.to_jsonb(durable.count_workflows(args->>'namespace', args->>'status',
            args->>'workflow_type', args->>'task_queue', args->>'workflow_id_prefix',
            (args->>'started_since')::timestamptz, (args->>'started_before')::timestamptz,
            (args->>'closed_since')::timestamptz, (args->>'closed_before')::timestamptz,
            durable_citus.unbox(args->'search_attributes'), durable_citus.unbox(args->'memo')));
    WHEN 'count_workflows_by_status' THEN
        RETURN (SELECT pg_catalog.jsonb_agg(pg_catalog.jsonb_build_array(c.status, c.count))
                  FROM durable.count_workflows_by_status(args->>'namespace',
                       args->>'workflow_type', args->>'task_queue', args->>'workflow_id_prefix',
                       (args->>'started_since')::timestamptz, (args->>'started_before')::timestamptz,
                       (args->>'closed_since')::timestamptz, (args->>'closed_before')::timestamptz,
                       durable_citus.unbox(args->'search_attributes'), durable_citus.unbox(args->'memo')) c);
    WHEN 'receive_external' THEN
        -- Granted to no one but durable's owner, who relays (relay() below).
        RETURN durable.receive_external(args);
    ELSE
        RAISE EXCEPTION 'durable_citus: unknown call %', pg_catalog.quote_nullable(call)
            USING ERRCODE = '22023';
    END CASE;
END
$$;

-- The relay: the delegated call to the owner of the request's target, in the caller's
-- transaction.  Returns durable.receive_external()'s answer.
-- It runs inside the sender's timer worker, which fires every timer of its
-- node: a connection to an unreachable owner gives up after 5 s instead of
-- Citus's 30, so that one node down holds the others' timers back briefly.
CREATE FUNCTION durable_citus.relay(request jsonb)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
SET citus.node_connection_timeout = 5000
AS $$
DECLARE
    r jsonb;
BEGIN
    -- The node function alone in its FROM clause, or Citus would not delegate it.
    SELECT s INTO r FROM durable_citus.node_call(
        durable_citus.route_key(request->>'namespace', request->>'workflowId'),
        'receive_external', request) s;
    RETURN r;
END
$$;

REVOKE ALL ON FUNCTION durable_citus.owned_elsewhere(text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION durable_citus.relay(jsonb) FROM PUBLIC;

-- Register the router on this node (every node runs this script).
INSERT INTO durable.router (name, owned_elsewhere, relay)
VALUES ('durable_citus', 'durable_citus.owned_elsewhere(text,text)',
        'durable_citus.relay(jsonb)')
ON CONFLICT (single) DO UPDATE
   SET name = EXCLUDED.name, owned_elsewhere = EXCLUDED.owned_elsewhere,
       relay = EXCLUDED.relay, registered_at = EXCLUDED.registered_at;

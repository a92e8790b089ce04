-- durable_citus 0.1.0: durable on a Citus cluster, one engine per worker node (docs/citus.md).
\echo Use "CREATE EXTENSION durable_citus" to load this file. \quit

-- How it works.  Every node of the cluster (coordinator and workers) has durable
-- installed, with its own tables, timer worker and executors: CREATE EXTENSION durable
-- on the coordinator runs on the workers too.  Each workflow is owned by one worker
-- node: the node that holds the shard of durable_citus.routes whose hash range holds
-- route_key(namespace, workflow_id).  The routes table holds no rows; it is there for
-- its colocation group, which Citus maps to nodes.
--
-- A client call on the coordinator, durable_citus.start_workflow(...) say, is a
-- PL/pgSQL function that calls durable_citus.node_start_workflow(route key, ...), a
-- function Citus distributes with the route key as its distribution argument and
-- force_delegation: Citus runs that call on the owning node, as the same role, inside
-- the caller's transaction (two-phase commit when a transaction writes on several
-- nodes), and passes its errors back with their SQLSTATE.  The node function checks the
-- route key and that its node owns it, then calls durable's own function there, which
-- checks the caller's privileges as it always does.  Delegation only happens for
-- `SELECT ... FROM f(constants)`, which is why the wrappers call the node functions in
-- a FROM clause.
--
-- Namespaces, grants and registrations are cluster-wide: their wrappers make the call
-- on the coordinator and then on every node that holds shards of the routes table,
-- in one transaction.  list_workflows and count_workflows ask every such node.
--
-- Every function is SECURITY INVOKER with a fixed search_path; it names every object
-- with its schema anyway.

GRANT USAGE ON SCHEMA durable_citus TO PUBLIC;

-- The route key of a workflow: '<namespace length>:<namespace>:<workflow id>', so that
-- no two (namespace, workflow id) pairs share one.  NULL if either is NULL.
CREATE FUNCTION durable_citus.route_key(namespace text, workflow_id text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
    SELECT pg_catalog.octet_length(namespace)::text OPERATOR(pg_catalog.||) ':'
           OPERATOR(pg_catalog.||) namespace OPERATOR(pg_catalog.||) ':'
           OPERATOR(pg_catalog.||) workflow_id
$$;

-- The colocation group that maps route keys to nodes (distributed below).
CREATE TABLE durable_citus.routes (route_key text NOT NULL);
COMMENT ON TABLE durable_citus.routes IS
    'durable_citus: holds no rows; its shards say which node owns which route keys';
-- Citus's get_shard_id_for_distribution_column() wants SELECT on it, from every caller.
GRANT SELECT ON durable_citus.routes TO PUBLIC;

-- The node that owns a route key, as Citus's metadata says (on any node that has it).
CREATE FUNCTION durable_citus.owner_group(route_key text) RETURNS integer
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
    SELECT p.groupid FROM pg_catalog.pg_dist_placement p
     WHERE p.shardid OPERATOR(pg_catalog.=) pg_catalog.get_shard_id_for_distribution_column(
               'durable_citus.routes'::pg_catalog.regclass, route_key)
     LIMIT 1
$$;

-- Run on the node by every node function: the route key is the workflow's, and this
-- node owns it.  A call that was not delegated (or a key made up) would otherwise start
-- or look for the workflow on the wrong node.
CREATE FUNCTION durable_citus.check_route(route_key text, namespace text, workflow_id text)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    owner integer;
BEGIN
    IF route_key IS NULL OR route_key IS DISTINCT FROM durable_citus.route_key(namespace, workflow_id) THEN
        RAISE EXCEPTION 'route_key % is not the route key of workflow % in namespace %',
            pg_catalog.quote_nullable(route_key), pg_catalog.quote_nullable(workflow_id),
            pg_catalog.quote_nullable(namespace)
            USING ERRCODE = '22023';
    END IF;
    owner := durable_citus.owner_group(route_key);
    IF owner IS DISTINCT FROM (SELECT groupid FROM pg_catalog.pg_dist_local_group) THEN
        RAISE EXCEPTION 'durable_citus: this node (group %) does not own workflow % of namespace % (its shard is on group %)',
            (SELECT groupid FROM pg_catalog.pg_dist_local_group), workflow_id, namespace, owner
            USING ERRCODE = '55000',
                  HINT = 'Call durable_citus''s functions on the coordinator: they run on the node that owns the workflow.';
    END IF;
END
$$;

-- The route key of a task token: its namespace and workflow id (durable.task_token_info
-- reads no table).  Tokens of 0.2.0 name no workflow.
CREATE FUNCTION durable_citus.token_route_key(task_token text) RETURNS text
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    info jsonb;
BEGIN
    IF task_token IS NULL THEN
        RETURN NULL;
    END IF;
    info := durable.task_token_info(task_token);
    IF info->>'workflowId' IS NULL OR info->>'namespace' IS NULL THEN
        RAISE EXCEPTION 'task_token names no workflow (a token of durable 0.2.0): durable_citus cannot route it'
            USING ERRCODE = '22023';
    END IF;
    RETURN durable_citus.route_key(info->>'namespace', info->>'workflowId');
END
$$;

-- The nodes that own workflows: each group that holds shards of the routes table, one
-- active primary node of it, and a route key that lands there (the delegated calls to
-- that node use it).
CREATE FUNCTION durable_citus.nodes()
RETURNS TABLE(group_id integer, node_name text, node_port integer, shards integer, route_key text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    g record;
    i integer;
    k text;
BEGIN
    FOR g IN
        SELECT p.groupid, n.nodename, n.nodeport, pg_catalog.count(*)::integer AS shards
          FROM pg_catalog.pg_dist_placement p
          JOIN pg_catalog.pg_dist_shard s ON s.shardid OPERATOR(pg_catalog.=) p.shardid
          JOIN pg_catalog.pg_dist_node n ON n.groupid OPERATOR(pg_catalog.=) p.groupid
                AND n.noderole OPERATOR(pg_catalog.=) 'primary' AND n.isactive
         WHERE s.logicalrelid OPERATOR(pg_catalog.=) 'durable_citus.routes'::pg_catalog.regclass
         GROUP BY p.groupid, n.nodename, n.nodeport
         ORDER BY p.groupid
    LOOP
        k := NULL;
        FOR i IN 0 .. 100000 LOOP
            IF durable_citus.owner_group('node:' OPERATOR(pg_catalog.||) i::text) OPERATOR(pg_catalog.=) g.groupid THEN
                k := 'node:' OPERATOR(pg_catalog.||) i::text;
                EXIT;
            END IF;
        END LOOP;
        group_id := g.groupid;
        node_name := g.nodename;
        node_port := g.nodeport;
        shards := g.shards;
        route_key := k;
        RETURN NEXT;
    END LOOP;
END
$$;

-- Run on the node by the node functions that work on a whole node (namespaces,
-- registrations, lists): the key lands on this node.
CREATE FUNCTION durable_citus.check_node_key(route_key text) RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    IF route_key IS NULL OR durable_citus.owner_group(route_key) IS DISTINCT FROM
            (SELECT groupid FROM pg_catalog.pg_dist_local_group) THEN
        RAISE EXCEPTION 'durable_citus: route_key % does not land on this node', pg_catalog.quote_nullable(route_key)
            USING ERRCODE = '55000';
    END IF;
END
$$;

------------------------------------------------------------------------------------
-- Client calls, routed by (namespace, workflow_id).
------------------------------------------------------------------------------------

CREATE FUNCTION durable_citus.node_start_workflow(route_key text, workflow_type text, input jsonb,
    workflow_id text, task_queue text, namespace text, retry_policy jsonb, id_reuse_policy text,
    execution_timeout interval, run_timeout interval, decision_timeout interval,
    cron_schedule text, delay interval, memo jsonb, search_attributes jsonb, priority integer,
    concurrency_key text)
RETURNS uuid
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.check_route(route_key, namespace, workflow_id);
    RETURN durable.start_workflow(workflow_type, input, workflow_id, task_queue, namespace,
        retry_policy, id_reuse_policy, execution_timeout, run_timeout, decision_timeout,
        cron_schedule, delay, memo, search_attributes, priority, concurrency_key);
END
$$;

CREATE FUNCTION durable_citus.start_workflow(workflow_type text, input jsonb DEFAULT NULL,
    workflow_id text DEFAULT NULL, task_queue text DEFAULT 'default', namespace text DEFAULT 'default',
    retry_policy jsonb DEFAULT NULL, id_reuse_policy text DEFAULT 'allow_duplicate_failed_only',
    execution_timeout interval DEFAULT NULL, run_timeout interval DEFAULT NULL,
    decision_timeout interval DEFAULT '10 seconds', cron_schedule text DEFAULT NULL,
    delay interval DEFAULT NULL, memo jsonb DEFAULT NULL, search_attributes jsonb DEFAULT NULL,
    priority integer DEFAULT NULL, concurrency_key text DEFAULT NULL)
RETURNS uuid
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    r uuid;
BEGIN
    -- durable's default id, drawn here so that it can be routed.
    IF workflow_id IS NULL THEN
        workflow_id := pg_catalog.gen_random_uuid()::text;
    END IF;
    IF namespace IS NULL THEN
        -- durable's own error (22004), on the coordinator: nothing to route.
        RETURN durable.start_workflow(workflow_type, input, workflow_id, task_queue, namespace,
            retry_policy, id_reuse_policy, execution_timeout, run_timeout, decision_timeout,
            cron_schedule, delay, memo, search_attributes, priority, concurrency_key);
    END IF;
    SELECT s INTO r FROM durable_citus.node_start_workflow(durable_citus.route_key(namespace, workflow_id),
        workflow_type, input, workflow_id, task_queue, namespace, retry_policy, id_reuse_policy,
        execution_timeout, run_timeout, decision_timeout, cron_schedule, delay, memo,
        search_attributes, priority, concurrency_key) s;
    RETURN r;
END
$$;

CREATE FUNCTION durable_citus.node_start_workflow_eager(route_key text, workflow_type text,
    input jsonb, workflow_id text, task_queue text, namespace text, retry_policy jsonb,
    id_reuse_policy text, execution_timeout interval, run_timeout interval,
    decision_timeout interval, cron_schedule text, delay interval, memo jsonb,
    search_attributes jsonb, identity text, priority integer, concurrency_key text)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.check_route(route_key, namespace, workflow_id);
    RETURN durable.start_workflow_eager(workflow_type, input, workflow_id, task_queue, namespace,
        retry_policy, id_reuse_policy, execution_timeout, run_timeout, decision_timeout,
        cron_schedule, delay, memo, search_attributes, identity, priority, concurrency_key);
END
$$;

CREATE FUNCTION durable_citus.start_workflow_eager(workflow_type text, input jsonb DEFAULT NULL,
    workflow_id text DEFAULT NULL, task_queue text DEFAULT 'default', namespace text DEFAULT 'default',
    retry_policy jsonb DEFAULT NULL, id_reuse_policy text DEFAULT 'allow_duplicate_failed_only',
    execution_timeout interval DEFAULT NULL, run_timeout interval DEFAULT NULL,
    decision_timeout interval DEFAULT '10 seconds', cron_schedule text DEFAULT NULL,
    delay interval DEFAULT NULL, memo jsonb DEFAULT NULL, search_attributes jsonb DEFAULT NULL,
    identity text DEFAULT NULL, priority integer DEFAULT NULL, concurrency_key text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    r jsonb;
BEGIN
    IF workflow_id IS NULL THEN
        workflow_id := pg_catalog.gen_random_uuid()::text;
    END IF;
    IF namespace IS NULL THEN
        RETURN durable.start_workflow_eager(workflow_type, input, workflow_id, task_queue, namespace,
            retry_policy, id_reuse_policy, execution_timeout, run_timeout, decision_timeout,
            cron_schedule, delay, memo, search_attributes, identity, priority, concurrency_key);
    END IF;
    SELECT s INTO r FROM durable_citus.node_start_workflow_eager(durable_citus.route_key(namespace, workflow_id),
        workflow_type, input, workflow_id, task_queue, namespace, retry_policy, id_reuse_policy,
        execution_timeout, run_timeout, decision_timeout, cron_schedule, delay, memo,
        search_attributes, identity, priority, concurrency_key) s;
    RETURN r;
END
$$;

CREATE FUNCTION durable_citus.node_signal_with_start(route_key text, workflow_type text,
    workflow_id text, signal_name text, signal_input jsonb, input jsonb, task_queue text,
    namespace text, retry_policy jsonb, id_reuse_policy text, execution_timeout interval,
    run_timeout interval, decision_timeout interval, cron_schedule text, delay interval,
    memo jsonb, search_attributes jsonb, priority integer, concurrency_key text)
RETURNS uuid
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.check_route(route_key, namespace, workflow_id);
    RETURN durable.signal_with_start(workflow_type, workflow_id, signal_name, signal_input, input,
        task_queue, namespace, retry_policy, id_reuse_policy, execution_timeout, run_timeout,
        decision_timeout, cron_schedule, delay, memo, search_attributes, priority, concurrency_key);
END
$$;

CREATE FUNCTION durable_citus.signal_with_start(workflow_type text, workflow_id text,
    signal_name text, signal_input jsonb DEFAULT NULL, input jsonb DEFAULT NULL,
    task_queue text DEFAULT 'default', namespace text DEFAULT 'default',
    retry_policy jsonb DEFAULT NULL, id_reuse_policy text DEFAULT 'allow_duplicate_failed_only',
    execution_timeout interval DEFAULT NULL, run_timeout interval DEFAULT NULL,
    decision_timeout interval DEFAULT '10 seconds', cron_schedule text DEFAULT NULL,
    delay interval DEFAULT NULL, memo jsonb DEFAULT NULL, search_attributes jsonb DEFAULT NULL,
    priority integer DEFAULT NULL, concurrency_key text DEFAULT NULL)
RETURNS uuid
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    r uuid;
BEGIN
    IF namespace IS NULL OR workflow_id IS NULL THEN
        RETURN durable.signal_with_start(workflow_type, workflow_id, signal_name, signal_input, input,
            task_queue, namespace, retry_policy, id_reuse_policy, execution_timeout, run_timeout,
            decision_timeout, cron_schedule, delay, memo, search_attributes, priority, concurrency_key);
    END IF;
    SELECT s INTO r FROM durable_citus.node_signal_with_start(durable_citus.route_key(namespace, workflow_id),
        workflow_type, workflow_id, signal_name, signal_input, input, task_queue, namespace,
        retry_policy, id_reuse_policy, execution_timeout, run_timeout, decision_timeout,
        cron_schedule, delay, memo, search_attributes, priority, concurrency_key) s;
    RETURN r;
END
$$;

CREATE FUNCTION durable_citus.node_signal_workflow(route_key text, workflow_id text,
    signal_name text, input jsonb, namespace text, run_id uuid)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.check_route(route_key, namespace, workflow_id);
    PERFORM durable.signal_workflow(workflow_id, signal_name, input, namespace, run_id);
END
$$;

CREATE FUNCTION durable_citus.signal_workflow(workflow_id text, signal_name text,
    input jsonb DEFAULT NULL, namespace text DEFAULT 'default', run_id uuid DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    IF namespace IS NULL OR workflow_id IS NULL THEN
        PERFORM durable.signal_workflow(workflow_id, signal_name, input, namespace, run_id);
        RETURN;
    END IF;
    PERFORM 1 FROM durable_citus.node_signal_workflow(durable_citus.route_key(namespace, workflow_id),
        workflow_id, signal_name, input, namespace, run_id);
END
$$;

CREATE FUNCTION durable_citus.node_cancel_workflow(route_key text, workflow_id text,
    reason text, namespace text, run_id uuid)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.check_route(route_key, namespace, workflow_id);
    PERFORM durable.cancel_workflow(workflow_id, reason, namespace, run_id);
END
$$;

CREATE FUNCTION durable_citus.cancel_workflow(workflow_id text, reason text DEFAULT NULL,
    namespace text DEFAULT 'default', run_id uuid DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    IF namespace IS NULL OR workflow_id IS NULL THEN
        PERFORM durable.cancel_workflow(workflow_id, reason, namespace, run_id);
        RETURN;
    END IF;
    PERFORM 1 FROM durable_citus.node_cancel_workflow(durable_citus.route_key(namespace, workflow_id),
        workflow_id, reason, namespace, run_id);
END
$$;

CREATE FUNCTION durable_citus.node_terminate_workflow(route_key text, workflow_id text,
    reason text, details jsonb, namespace text, run_id uuid)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.check_route(route_key, namespace, workflow_id);
    PERFORM durable.terminate_workflow(workflow_id, reason, details, namespace, run_id);
END
$$;

CREATE FUNCTION durable_citus.terminate_workflow(workflow_id text, reason text DEFAULT NULL,
    details jsonb DEFAULT NULL, namespace text DEFAULT 'default', run_id uuid DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    IF namespace IS NULL OR workflow_id IS NULL THEN
        PERFORM durable.terminate_workflow(workflow_id, reason, details, namespace, run_id);
        RETURN;
    END IF;
    PERFORM 1 FROM durable_citus.node_terminate_workflow(durable_citus.route_key(namespace, workflow_id),
        workflow_id, reason, details, namespace, run_id);
END
$$;

CREATE FUNCTION durable_citus.node_describe_workflow(route_key text, workflow_id text,
    namespace text, run_id uuid)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.check_route(route_key, namespace, workflow_id);
    RETURN durable.describe_workflow(workflow_id, namespace, run_id);
END
$$;

CREATE FUNCTION durable_citus.describe_workflow(workflow_id text, namespace text DEFAULT 'default',
    run_id uuid DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    r jsonb;
BEGIN
    IF namespace IS NULL OR workflow_id IS NULL THEN
        RETURN durable.describe_workflow(workflow_id, namespace, run_id);
    END IF;
    SELECT s INTO r FROM durable_citus.node_describe_workflow(durable_citus.route_key(namespace, workflow_id),
        workflow_id, namespace, run_id) s;
    RETURN r;
END
$$;

CREATE FUNCTION durable_citus.node_resolve_run_id(route_key text, workflow_id text,
    namespace text, run_id uuid)
RETURNS uuid
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.check_route(route_key, namespace, workflow_id);
    RETURN durable.resolve_run_id(workflow_id, namespace, run_id);
END
$$;

CREATE FUNCTION durable_citus.resolve_run_id(workflow_id text, namespace text DEFAULT 'default',
    run_id uuid DEFAULT NULL)
RETURNS uuid
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    r uuid;
BEGIN
    IF namespace IS NULL OR workflow_id IS NULL THEN
        RETURN durable.resolve_run_id(workflow_id, namespace, run_id);
    END IF;
    SELECT s INTO r FROM durable_citus.node_resolve_run_id(durable_citus.route_key(namespace, workflow_id),
        workflow_id, namespace, run_id) s;
    RETURN r;
END
$$;

CREATE FUNCTION durable_citus.node_get_history(route_key text, workflow_id text,
    namespace text, run_id uuid)
RETURNS TABLE(event_id bigint, event_time timestamptz, event_type text, attributes jsonb)
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.check_route(route_key, namespace, workflow_id);
    RETURN QUERY SELECT * FROM durable.get_history(workflow_id, namespace, run_id);
END
$$;

CREATE FUNCTION durable_citus.get_history(workflow_id text, namespace text DEFAULT 'default',
    run_id uuid DEFAULT NULL)
RETURNS TABLE(event_id bigint, event_time timestamptz, event_type text, attributes jsonb)
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    IF namespace IS NULL OR workflow_id IS NULL THEN
        RETURN QUERY SELECT * FROM durable.get_history(workflow_id, namespace, run_id);
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM durable_citus.node_get_history(
        durable_citus.route_key(namespace, workflow_id), workflow_id, namespace, run_id);
END
$$;

CREATE FUNCTION durable_citus.node_wait_workflow(route_key text, workflow_id text,
    namespace text, run_id uuid, wait interval)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.check_route(route_key, namespace, workflow_id);
    RETURN durable.wait_workflow(workflow_id, namespace, run_id, wait);
END
$$;

CREATE FUNCTION durable_citus.wait_workflow(workflow_id text, namespace text DEFAULT 'default',
    run_id uuid DEFAULT NULL, wait interval DEFAULT '30 seconds')
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    r jsonb;
BEGIN
    IF namespace IS NULL OR workflow_id IS NULL THEN
        RETURN durable.wait_workflow(workflow_id, namespace, run_id, wait);
    END IF;
    SELECT s INTO r FROM durable_citus.node_wait_workflow(durable_citus.route_key(namespace, workflow_id),
        workflow_id, namespace, run_id, wait) s;
    RETURN r;
END
$$;

CREATE FUNCTION durable_citus.node_reset_workflow(route_key text, workflow_id text,
    reason text, namespace text, run_id uuid, event_id bigint)
RETURNS uuid
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.check_route(route_key, namespace, workflow_id);
    RETURN durable.reset_workflow(workflow_id, reason, namespace, run_id, event_id);
END
$$;

CREATE FUNCTION durable_citus.reset_workflow(workflow_id text, reason text,
    namespace text DEFAULT 'default', run_id uuid DEFAULT NULL, event_id bigint DEFAULT NULL)
RETURNS uuid
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    r uuid;
BEGIN
    IF namespace IS NULL OR workflow_id IS NULL THEN
        RETURN durable.reset_workflow(workflow_id, reason, namespace, run_id, event_id);
    END IF;
    SELECT s INTO r FROM durable_citus.node_reset_workflow(durable_citus.route_key(namespace, workflow_id),
        workflow_id, reason, namespace, run_id, event_id) s;
    RETURN r;
END
$$;

CREATE FUNCTION durable_citus.node_restart_workflow(route_key text, workflow_id text,
    reason text, namespace text, run_id uuid, input jsonb)
RETURNS uuid
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.check_route(route_key, namespace, workflow_id);
    RETURN durable.restart_workflow(workflow_id, reason, namespace, run_id, input);
END
$$;

CREATE FUNCTION durable_citus.restart_workflow(workflow_id text, reason text,
    namespace text DEFAULT 'default', run_id uuid DEFAULT NULL, input jsonb DEFAULT NULL)
RETURNS uuid
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    r uuid;
BEGIN
    IF namespace IS NULL OR workflow_id IS NULL THEN
        RETURN durable.restart_workflow(workflow_id, reason, namespace, run_id, input);
    END IF;
    SELECT s INTO r FROM durable_citus.node_restart_workflow(durable_citus.route_key(namespace, workflow_id),
        workflow_id, reason, namespace, run_id, input) s;
    RETURN r;
END
$$;

CREATE FUNCTION durable_citus.node_pause_workflow(route_key text, workflow_id text,
    run_id uuid, reason text, namespace text)
RETURNS boolean
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.check_route(route_key, namespace, workflow_id);
    RETURN durable.pause_workflow(workflow_id, run_id, reason, namespace);
END
$$;

CREATE FUNCTION durable_citus.pause_workflow(workflow_id text, run_id uuid DEFAULT NULL,
    reason text DEFAULT NULL, namespace text DEFAULT 'default')
RETURNS boolean
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    r boolean;
BEGIN
    IF namespace IS NULL OR workflow_id IS NULL THEN
        RETURN durable.pause_workflow(workflow_id, run_id, reason, namespace);
    END IF;
    SELECT s INTO r FROM durable_citus.node_pause_workflow(durable_citus.route_key(namespace, workflow_id),
        workflow_id, run_id, reason, namespace) s;
    RETURN r;
END
$$;

CREATE FUNCTION durable_citus.node_resume_workflow(route_key text, workflow_id text,
    run_id uuid, namespace text)
RETURNS boolean
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.check_route(route_key, namespace, workflow_id);
    RETURN durable.resume_workflow(workflow_id, run_id, namespace);
END
$$;

CREATE FUNCTION durable_citus.resume_workflow(workflow_id text, run_id uuid DEFAULT NULL,
    namespace text DEFAULT 'default')
RETURNS boolean
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    r boolean;
BEGIN
    IF namespace IS NULL OR workflow_id IS NULL THEN
        RETURN durable.resume_workflow(workflow_id, run_id, namespace);
    END IF;
    SELECT s INTO r FROM durable_citus.node_resume_workflow(durable_citus.route_key(namespace, workflow_id),
        workflow_id, run_id, namespace) s;
    RETURN r;
END
$$;

------------------------------------------------------------------------------------
-- Worker calls, routed by the workflow their task token names.  Polls are not routed:
-- a worker polls each node (durable_citus.nodes(), docs/citus.md).
------------------------------------------------------------------------------------

CREATE FUNCTION durable_citus.node_complete_decision_task(route_key text, task_token text,
    decisions jsonb, identity text, return_new_task boolean, max_eager_activities integer,
    history_after bigint)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.check_node_key(route_key);
    IF route_key IS DISTINCT FROM durable_citus.token_route_key(task_token) THEN
        RAISE EXCEPTION 'route_key is not the route key of task_token' USING ERRCODE = '22023';
    END IF;
    RETURN durable.complete_decision_task(task_token, decisions, identity, return_new_task,
        max_eager_activities, history_after);
END
$$;

CREATE FUNCTION durable_citus.complete_decision_task(task_token text, decisions jsonb,
    identity text DEFAULT NULL, return_new_task boolean DEFAULT false,
    max_eager_activities integer DEFAULT 0, history_after bigint DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    k text := durable_citus.token_route_key(task_token);
    r jsonb;
BEGIN
    IF k IS NULL THEN
        RETURN durable.complete_decision_task(task_token, decisions, identity, return_new_task,
            max_eager_activities, history_after);
    END IF;
    SELECT s INTO r FROM durable_citus.node_complete_decision_task(k, task_token, decisions,
        identity, return_new_task, max_eager_activities, history_after) s;
    RETURN r;
END
$$;

CREATE FUNCTION durable_citus.node_fail_decision_task(route_key text, task_token text,
    cause text, details jsonb, identity text)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.check_node_key(route_key);
    IF route_key IS DISTINCT FROM durable_citus.token_route_key(task_token) THEN
        RAISE EXCEPTION 'route_key is not the route key of task_token' USING ERRCODE = '22023';
    END IF;
    PERFORM durable.fail_decision_task(task_token, cause, details, identity);
END
$$;

CREATE FUNCTION durable_citus.fail_decision_task(task_token text, cause text,
    details jsonb DEFAULT NULL, identity text DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    k text := durable_citus.token_route_key(task_token);
BEGIN
    IF k IS NULL THEN
        PERFORM durable.fail_decision_task(task_token, cause, details, identity);
        RETURN;
    END IF;
    PERFORM 1 FROM durable_citus.node_fail_decision_task(k, task_token, cause, details, identity);
END
$$;

CREATE FUNCTION durable_citus.node_complete_activity(route_key text, task_token text,
    result jsonb, return_new_task boolean, history_after bigint)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.check_node_key(route_key);
    IF route_key IS DISTINCT FROM durable_citus.token_route_key(task_token) THEN
        RAISE EXCEPTION 'route_key is not the route key of task_token' USING ERRCODE = '22023';
    END IF;
    RETURN durable.complete_activity(task_token, result, return_new_task, history_after);
END
$$;

CREATE FUNCTION durable_citus.complete_activity(task_token text, result jsonb DEFAULT NULL,
    return_new_task boolean DEFAULT false, history_after bigint DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    k text := durable_citus.token_route_key(task_token);
    r jsonb;
BEGIN
    IF k IS NULL THEN
        RETURN durable.complete_activity(task_token, result, return_new_task, history_after);
    END IF;
    SELECT s INTO r FROM durable_citus.node_complete_activity(k, task_token, result,
        return_new_task, history_after) s;
    RETURN r;
END
$$;

CREATE FUNCTION durable_citus.node_fail_activity(route_key text, task_token text,
    reason text, details jsonb, next_retry_delay interval)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.check_node_key(route_key);
    IF route_key IS DISTINCT FROM durable_citus.token_route_key(task_token) THEN
        RAISE EXCEPTION 'route_key is not the route key of task_token' USING ERRCODE = '22023';
    END IF;
    PERFORM durable.fail_activity(task_token, reason, details, next_retry_delay);
END
$$;

CREATE FUNCTION durable_citus.fail_activity(task_token text, reason text,
    details jsonb DEFAULT NULL, next_retry_delay interval DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    k text := durable_citus.token_route_key(task_token);
BEGIN
    IF k IS NULL THEN
        PERFORM durable.fail_activity(task_token, reason, details, next_retry_delay);
        RETURN;
    END IF;
    PERFORM 1 FROM durable_citus.node_fail_activity(k, task_token, reason, details, next_retry_delay);
END
$$;

CREATE FUNCTION durable_citus.node_heartbeat_activity(route_key text, task_token text,
    details jsonb)
RETURNS boolean
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.check_node_key(route_key);
    IF route_key IS DISTINCT FROM durable_citus.token_route_key(task_token) THEN
        RAISE EXCEPTION 'route_key is not the route key of task_token' USING ERRCODE = '22023';
    END IF;
    RETURN durable.heartbeat_activity(task_token, details);
END
$$;

CREATE FUNCTION durable_citus.heartbeat_activity(task_token text, details jsonb DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    k text := durable_citus.token_route_key(task_token);
    r boolean;
BEGIN
    IF k IS NULL THEN
        RETURN durable.heartbeat_activity(task_token, details);
    END IF;
    SELECT s INTO r FROM durable_citus.node_heartbeat_activity(k, task_token, details) s;
    RETURN r;
END
$$;

CREATE FUNCTION durable_citus.node_report_activity_canceled(route_key text, task_token text,
    details jsonb)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.check_node_key(route_key);
    IF route_key IS DISTINCT FROM durable_citus.token_route_key(task_token) THEN
        RAISE EXCEPTION 'route_key is not the route key of task_token' USING ERRCODE = '22023';
    END IF;
    PERFORM durable.report_activity_canceled(task_token, details);
END
$$;

CREATE FUNCTION durable_citus.report_activity_canceled(task_token text, details jsonb DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    k text := durable_citus.token_route_key(task_token);
BEGIN
    IF k IS NULL THEN
        PERFORM durable.report_activity_canceled(task_token, details);
        RETURN;
    END IF;
    PERFORM 1 FROM durable_citus.node_report_activity_canceled(k, task_token, details);
END
$$;

-- A jsonb argument inside the jsonb of a cluster-wide call: [value], or NULL for NULL,
-- so that durable_citus.unbox(args->'key') gives back NULL and JSON null apart.
CREATE FUNCTION durable_citus.box(value jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$ SELECT CASE WHEN value IS NULL THEN NULL ELSE pg_catalog.jsonb_build_array(value) END $$;

CREATE FUNCTION durable_citus.unbox(boxed jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
    SELECT CASE WHEN pg_catalog.jsonb_typeof(boxed) OPERATOR(pg_catalog.=) 'array'
                THEN boxed OPERATOR(pg_catalog.->) 0 END
$$;

------------------------------------------------------------------------------------
-- Cluster-wide calls: the coordinator, then every node that owns workflows, in the
-- caller's transaction.  node_call runs one of durable's functions on the node a key
-- lands on; `call` is one of the names below, never SQL.
------------------------------------------------------------------------------------

CREATE FUNCTION durable_citus.node_call(route_key text, call text, args jsonb)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.check_node_key(route_key);
    RETURN durable_citus.local_call(call, args);
END
$$;

CREATE FUNCTION durable_citus.local_call(call text, args jsonb)
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
    ELSE
        RAISE EXCEPTION 'durable_citus: unknown call %', pg_catalog.quote_nullable(call)
            USING ERRCODE = '22023';
    END CASE;
END
$$;

-- Make `call` on the coordinator, then on every node that owns workflows; the results,
-- the coordinator's first.
CREATE FUNCTION durable_citus.cluster_call(call text, args jsonb)
RETURNS jsonb[]
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    n record;
    r jsonb;
    results jsonb[];
BEGIN
    results := ARRAY[durable_citus.local_call(call, args)];
    FOR n IN SELECT * FROM durable_citus.nodes() LOOP
        SELECT s INTO r FROM durable_citus.node_call(n.route_key, call, args) s;
        results := results OPERATOR(pg_catalog.||) r;
    END LOOP;
    RETURN results;
END
$$;

CREATE FUNCTION durable_citus.create_namespace(name text, retention interval DEFAULT '7 days',
    activity_retry_policy jsonb DEFAULT NULL, description text DEFAULT '',
    max_executors integer DEFAULT NULL, max_task_timeout interval DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    -- The NULLs that durable refuses stay NULLs (jsonb_build_object keeps them as JSON
    -- null, which ->> turns back into NULL).
    PERFORM durable_citus.cluster_call('create_namespace', pg_catalog.jsonb_build_object(
        'name', name, 'retention', retention, 'activity_retry_policy', durable_citus.box(activity_retry_policy),
        'description', description, 'max_executors', max_executors,
        'max_task_timeout', max_task_timeout));
END
$$;

CREATE FUNCTION durable_citus.alter_namespace(name text, retention interval DEFAULT NULL,
    activity_retry_policy jsonb DEFAULT NULL, description text DEFAULT NULL,
    max_executors integer DEFAULT NULL, max_task_timeout interval DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.cluster_call('alter_namespace', pg_catalog.jsonb_build_object(
        'name', name, 'retention', retention, 'activity_retry_policy', durable_citus.box(activity_retry_policy),
        'description', description, 'max_executors', max_executors,
        'max_task_timeout', max_task_timeout));
END
$$;

CREATE FUNCTION durable_citus.drop_namespace(name text)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.cluster_call('drop_namespace', pg_catalog.jsonb_build_object('name', name));
END
$$;

CREATE FUNCTION durable_citus.grant_namespace(namespace text, role text, privilege text)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.cluster_call('grant_namespace', pg_catalog.jsonb_build_object(
        'namespace', namespace, 'role', role, 'privilege', privilege));
END
$$;

CREATE FUNCTION durable_citus.revoke_namespace(namespace text, role text, privilege text)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.cluster_call('revoke_namespace', pg_catalog.jsonb_build_object(
        'namespace', namespace, 'role', role, 'privilege', privilege));
END
$$;

CREATE FUNCTION durable_citus.register_workflow(workflow_type text, function regprocedure,
    task_queue text DEFAULT 'default', namespace text DEFAULT 'default',
    run_as regrole DEFAULT NULL, running text DEFAULT 'move')
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    -- regprocedure and regrole travel as their names, resolved again on each node.
    PERFORM durable_citus.cluster_call('register_workflow', pg_catalog.jsonb_build_object(
        'workflow_type', workflow_type, 'function', function::text, 'task_queue', task_queue,
        'namespace', namespace, 'run_as', run_as::text, 'running', running));
END
$$;

CREATE FUNCTION durable_citus.register_activity(activity_type text, function regprocedure,
    task_queue text DEFAULT 'default', namespace text DEFAULT 'default',
    run_as regrole DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.cluster_call('register_activity', pg_catalog.jsonb_build_object(
        'activity_type', activity_type, 'function', function::text, 'task_queue', task_queue,
        'namespace', namespace, 'run_as', run_as::text));
END
$$;

CREATE FUNCTION durable_citus.unregister_workflow(workflow_type text,
    task_queue text DEFAULT 'default', namespace text DEFAULT 'default')
RETURNS boolean
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    RETURN (SELECT pg_catalog.bool_or((r #>> '{}')::boolean)
              FROM pg_catalog.unnest(durable_citus.cluster_call('unregister_workflow',
                       pg_catalog.jsonb_build_object('workflow_type', workflow_type,
                           'task_queue', task_queue, 'namespace', namespace))) r);
END
$$;

CREATE FUNCTION durable_citus.unregister_activity(activity_type text,
    task_queue text DEFAULT 'default', namespace text DEFAULT 'default')
RETURNS boolean
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    RETURN (SELECT pg_catalog.bool_or((r #>> '{}')::boolean)
              FROM pg_catalog.unnest(durable_citus.cluster_call('unregister_activity',
                       pg_catalog.jsonb_build_object('activity_type', activity_type,
                           'task_queue', task_queue, 'namespace', namespace))) r);
END
$$;

------------------------------------------------------------------------------------
-- Lists and counts across the nodes.
------------------------------------------------------------------------------------

CREATE FUNCTION durable_citus.node_list_workflows(route_key text, namespace text, status text,
    workflow_type text, task_queue text, workflow_id_prefix text, started_since timestamptz,
    started_before timestamptz, closed_since timestamptz, closed_before timestamptz,
    search_attributes jsonb, memo jsonb, page_size integer, after text, paused boolean)
RETURNS SETOF durable.workflow_list_entry
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.check_node_key(route_key);
    RETURN QUERY SELECT * FROM durable.list_workflows(namespace, status, workflow_type,
        task_queue, workflow_id_prefix, started_since, started_before, closed_since,
        closed_before, search_attributes, memo, page_size, after, paused);
END
$$;

-- A page of list_workflows over every node: each node's page, merged newest first.
-- The cursor is 'dc1:' and base64 of {"<group id>": <that node's cursor of the last of
-- its rows seen>}: each node goes on after its own position (a node none of whose rows
-- were shown starts at its beginning), and checks its own cursor's signature.
CREATE FUNCTION durable_citus.list_workflows(namespace text DEFAULT 'default',
    status text DEFAULT NULL, workflow_type text DEFAULT NULL, task_queue text DEFAULT NULL,
    workflow_id_prefix text DEFAULT NULL, started_since timestamptz DEFAULT NULL,
    started_before timestamptz DEFAULT NULL, closed_since timestamptz DEFAULT NULL,
    closed_before timestamptz DEFAULT NULL, search_attributes jsonb DEFAULT NULL,
    memo jsonb DEFAULT NULL, page_size integer DEFAULT 50, after text DEFAULT NULL,
    paused boolean DEFAULT NULL)
RETURNS SETOF durable.workflow_list_entry
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    positions jsonb := '{}';
    n record;
    e durable.workflow_list_entry;
    groups integer[] := '{}';
    entries durable.workflow_list_entry[] := '{}';
    x record;
BEGIN
    IF after IS NOT NULL THEN
        BEGIN
            IF pg_catalog.left(after, 4) OPERATOR(pg_catalog.<>) 'dc1:' THEN
                RAISE EXCEPTION 'bad prefix';
            END IF;
            positions := pg_catalog.convert_from(pg_catalog.decode(pg_catalog.substr(after, 5), 'base64'), 'UTF8')::jsonb;
            IF pg_catalog.jsonb_typeof(positions) OPERATOR(pg_catalog.<>) 'object' THEN
                RAISE EXCEPTION 'not an object';
            END IF;
        EXCEPTION WHEN OTHERS THEN
            RAISE EXCEPTION 'after is not a cursor of durable_citus.list_workflows'
                USING ERRCODE = '22023';
        END;
    END IF;
    IF namespace IS NULL OR page_size IS NULL OR page_size < 1 OR page_size > 1000 THEN
        -- durable's own errors for these, on the coordinator.
        RETURN QUERY SELECT * FROM durable.list_workflows(namespace, status, workflow_type,
            task_queue, workflow_id_prefix, started_since, started_before, closed_since,
            closed_before, search_attributes, memo, page_size, NULL, paused);
        RETURN;
    END IF;
    FOR n IN SELECT * FROM durable_citus.nodes() LOOP
        FOR e IN SELECT * FROM durable_citus.node_list_workflows(n.route_key, namespace, status,
                workflow_type, task_queue, workflow_id_prefix, started_since, started_before,
                closed_since, closed_before, search_attributes, memo, page_size,
                positions->>(n.group_id::text), paused) LOOP
            groups := groups OPERATOR(pg_catalog.||) n.group_id;
            entries := entries OPERATOR(pg_catalog.||) e;
        END LOOP;
    END LOOP;
    FOR x IN
        SELECT i FROM pg_catalog.generate_subscripts(entries, 1) AS i
         ORDER BY (entries[i]).start_time DESC, (entries[i]).run_id DESC
         LIMIT page_size
    LOOP
        e := entries[x.i];
        positions := positions OPERATOR(pg_catalog.||)
            pg_catalog.jsonb_build_object(groups[x.i]::text, e.cursor);
        e.cursor := 'dc1:' OPERATOR(pg_catalog.||) pg_catalog.translate(pg_catalog.encode(
            pg_catalog.convert_to(positions::text, 'UTF8'), 'base64'), E'\n', '');
        RETURN NEXT e;
    END LOOP;
END
$$;

CREATE FUNCTION durable_citus.count_workflows(namespace text DEFAULT 'default',
    status text DEFAULT NULL, workflow_type text DEFAULT NULL, task_queue text DEFAULT NULL,
    workflow_id_prefix text DEFAULT NULL, started_since timestamptz DEFAULT NULL,
    started_before timestamptz DEFAULT NULL, closed_since timestamptz DEFAULT NULL,
    closed_before timestamptz DEFAULT NULL, search_attributes jsonb DEFAULT NULL,
    memo jsonb DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    args jsonb := pg_catalog.jsonb_build_object('namespace', namespace, 'status', status,
        'workflow_type', workflow_type, 'task_queue', task_queue,
        'workflow_id_prefix', workflow_id_prefix, 'started_since', started_since,
        'started_before', started_before, 'closed_since', closed_since,
        'closed_before', closed_before, 'search_attributes', durable_citus.box(search_attributes), 'memo', durable_citus.box(memo));
    n record;
    r jsonb;
    total bigint;
BEGIN
    -- The coordinator first: it owns no workflows, but checks the arguments and the
    -- caller's privilege with durable's errors.
    total := (durable_citus.local_call('count_workflows', args))::text::bigint;
    FOR n IN SELECT * FROM durable_citus.nodes() LOOP
        SELECT s INTO r FROM durable_citus.node_call(n.route_key, 'count_workflows', args) s;
        total := total OPERATOR(pg_catalog.+) (r::text)::bigint;
    END LOOP;
    RETURN total;
END
$$;

CREATE FUNCTION durable_citus.count_workflows_by_status(namespace text DEFAULT 'default',
    workflow_type text DEFAULT NULL, task_queue text DEFAULT NULL,
    workflow_id_prefix text DEFAULT NULL, started_since timestamptz DEFAULT NULL,
    started_before timestamptz DEFAULT NULL, closed_since timestamptz DEFAULT NULL,
    closed_before timestamptz DEFAULT NULL, search_attributes jsonb DEFAULT NULL,
    memo jsonb DEFAULT NULL)
RETURNS TABLE(status text, count bigint)
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    args jsonb := pg_catalog.jsonb_build_object('namespace', namespace,
        'workflow_type', workflow_type, 'task_queue', task_queue,
        'workflow_id_prefix', workflow_id_prefix, 'started_since', started_since,
        'started_before', started_before, 'closed_since', closed_since,
        'closed_before', closed_before, 'search_attributes', durable_citus.box(search_attributes), 'memo', durable_citus.box(memo));
    n record;
    r jsonb;
    results jsonb[];
BEGIN
    results := ARRAY[durable_citus.local_call('count_workflows_by_status', args)];
    FOR n IN SELECT * FROM durable_citus.nodes() LOOP
        SELECT s INTO r FROM durable_citus.node_call(n.route_key, 'count_workflows_by_status', args) s;
        results := results OPERATOR(pg_catalog.||) r;
    END LOOP;
    -- Every status in durable's order (the coordinator's list has them all).
    RETURN QUERY
        SELECT p.value->>0, pg_catalog.sum((p.value->>1)::bigint)::bigint
          FROM pg_catalog.unnest(results) AS l(list),
               pg_catalog.jsonb_array_elements(l.list) WITH ORDINALITY AS p(value, pos)
         GROUP BY p.value->>0
         ORDER BY pg_catalog.min(p.pos);
END
$$;

CREATE FUNCTION durable_citus.node_task_queues(route_key text)
RETURNS SETOF durable.task_queues
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    PERFORM durable_citus.check_node_key(route_key);
    RETURN QUERY SELECT * FROM durable.task_queues;
END
$$;

-- The nodes that own workflows and their task queues (the rows of durable.task_queues of
-- each node that the caller may read): where workers must poll.
CREATE FUNCTION durable_citus.task_queues()
RETURNS TABLE(node_name text, node_port integer, namespace text, task_queue text, kind text,
    ready_tasks bigint, oldest_ready_time timestamptz, waiting_on_timer bigint, pollers jsonb,
    last_poll_time timestamptz, paused_at timestamptz, held_tasks bigint, started_tasks bigint)
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    n record;
BEGIN
    FOR n IN SELECT * FROM durable_citus.nodes() LOOP
        RETURN QUERY SELECT n.node_name, n.node_port, q.namespace, q.task_queue, q.kind,
                            q.ready_tasks, q.oldest_ready_time, q.waiting_on_timer, q.pollers,
                            q.last_poll_time, q.paused_at, q.held_tasks, q.started_tasks
                       FROM durable_citus.node_task_queues(n.route_key) q;
    END LOOP;
END
$$;

-- Runs on a node that does not own their workflow id: the child workflows that a
-- parent started on its own node (a StartChildWorkflowExecution decision, or
-- child_workflow() of a SQL workflow, acts on the parent's node: docs/citus.md, "Not
-- routed yet").  The routed calls look for them on the owner of their id and do not
-- find them; call durable's functions on the node listed.  Reads every run the caller
-- may see on each node.
CREATE FUNCTION durable_citus.node_misplaced_workflows(route_key text)
RETURNS TABLE(namespace text, workflow_id text, run_id uuid, status text,
    parent_workflow_id text, owner_group integer)
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    here integer := (SELECT groupid FROM pg_catalog.pg_dist_local_group);
BEGIN
    PERFORM durable_citus.check_node_key(route_key);
    RETURN QUERY
        SELECT m.namespace, m.workflow_id, m.run_id, m.status, m.parent_workflow_id, m.owner
          FROM (SELECT w.namespace, w.workflow_id, w.run_id, w.status, w.parent_workflow_id,
                       durable_citus.owner_group(durable_citus.route_key(w.namespace, w.workflow_id)) AS owner
                  FROM durable.workflows w) m
         WHERE m.owner IS DISTINCT FROM here;
END
$$;

CREATE FUNCTION durable_citus.misplaced_workflows()
RETURNS TABLE(node_name text, node_port integer, namespace text, workflow_id text, run_id uuid,
    status text, parent_workflow_id text, owner_node_name text, owner_node_port integer)
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    n record;
    m record;
BEGIN
    FOR n IN SELECT * FROM durable_citus.nodes() LOOP
        -- The node function alone in its FROM clause, or Citus would not delegate it.
        FOR m IN SELECT * FROM durable_citus.node_misplaced_workflows(n.route_key) LOOP
            node_name := n.node_name;
            node_port := n.node_port;
            namespace := m.namespace;
            workflow_id := m.workflow_id;
            run_id := m.run_id;
            status := m.status;
            parent_workflow_id := m.parent_workflow_id;
            SELECT o.nodename, o.nodeport INTO owner_node_name, owner_node_port
              FROM pg_catalog.pg_dist_node o
             WHERE o.groupid OPERATOR(pg_catalog.=) m.owner_group
               AND o.noderole OPERATOR(pg_catalog.=) 'primary'
             LIMIT 1;
            RETURN NEXT;
        END LOOP;
    END LOOP;
END
$$;

------------------------------------------------------------------------------------
-- Privileges: as durable grants its own functions (docs/privileges.md).  The node
-- functions need the same grants: the delegated call runs as the caller on the node.
------------------------------------------------------------------------------------

DO $$
DECLARE
    f record;
    grantee text;
BEGIN
    FOR f IN
        SELECT p.oid::regprocedure AS sig, p.proname::text AS name
          FROM pg_catalog.pg_proc p
         WHERE p.pronamespace OPERATOR(pg_catalog.=) 'durable_citus'::regnamespace
    LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f.sig);
        grantee := CASE
            WHEN f.name IN ('route_key', 'token_route_key', 'box', 'unbox', 'owner_group', 'check_route',
                            'check_node_key', 'nodes', 'task_queues', 'node_task_queues')
                THEN 'PUBLIC'
            WHEN pg_catalog.regexp_replace(f.name, '^node_', '') IN ('start_workflow',
                    'start_workflow_eager', 'signal_with_start', 'signal_workflow',
                    'cancel_workflow', 'terminate_workflow', 'describe_workflow',
                    'resolve_run_id', 'get_history', 'wait_workflow', 'reset_workflow',
                    'restart_workflow', 'pause_workflow', 'resume_workflow', 'list_workflows',
                    'count_workflows', 'count_workflows_by_status', 'misplaced_workflows')
                THEN 'durable_client'
            WHEN pg_catalog.regexp_replace(f.name, '^node_', '') IN ('complete_decision_task',
                    'fail_decision_task', 'complete_activity', 'fail_activity',
                    'heartbeat_activity', 'report_activity_canceled')
                THEN 'durable_worker'
            WHEN f.name IN ('register_workflow', 'register_activity', 'unregister_workflow',
                            'unregister_activity')
                THEN 'durable_worker, durable_admin'
            WHEN f.name IN ('create_namespace', 'alter_namespace', 'drop_namespace')
                THEN 'durable_admin'
            -- grant/revoke (for namespace owners and admins, as durable's), and the
            -- plumbing of the cluster-wide calls, which only runs durable's functions
            -- with their own checks.
            ELSE 'durable_client, durable_worker, durable_admin'
        END;
        EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO %s', f.sig, grantee);
    END LOOP;
END
$$;

------------------------------------------------------------------------------------
-- Shard moves are refused.  A workflow's runs, history and tasks are rows of durable's
-- own tables on its node, which Citus does not know belong to the shard of the routes
-- table that owns the workflow: a move (citus_move_shard_placement, the rebalancer,
-- citus_drain_node) or a split would carry the shard and leave the workflows behind, on
-- a node that no longer owns them.  Every such operation first creates the shard's
-- table on the target node: this event trigger, on every node, refuses that once the
-- node knows the routes table's shards (when the table is first distributed, Citus
-- creates the shards before it sends the metadata, which is when they may be created).
------------------------------------------------------------------------------------

CREATE FUNCTION durable_citus.refuse_shard_transfer() RETURNS event_trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    c record;
BEGIN
    FOR c IN SELECT * FROM pg_catalog.pg_event_trigger_ddl_commands() LOOP
        IF c.command_tag OPERATOR(pg_catalog.=) 'CREATE TABLE'
           AND c.schema_name OPERATOR(pg_catalog.=) 'durable_citus'
           AND c.object_identity OPERATOR(pg_catalog.~) '^durable_citus\.routes_[0-9]+$'
           AND EXISTS (SELECT 1 FROM pg_catalog.pg_dist_shard s
                        WHERE s.logicalrelid OPERATOR(pg_catalog.=) 'durable_citus.routes'::pg_catalog.regclass)
        THEN
            RAISE EXCEPTION 'durable_citus: the shards of durable_citus.routes cannot be moved, copied or split (creating % refused)',
                c.object_identity
                USING ERRCODE = '0A000',
                      DETAIL = 'The workflows a shard routes to its node live in durable''s tables there and would not move with the shard.',
                      HINT = 'Leave the shards of durable_citus.routes where they are; see docs/citus.md, "Shard moves and new nodes".';
        END IF;
    END LOOP;
END
$$;

CREATE EVENT TRIGGER durable_citus_refuse_shard_transfer ON ddl_command_end
    WHEN TAG IN ('CREATE TABLE')
    EXECUTE FUNCTION durable_citus.refuse_shard_transfer();

------------------------------------------------------------------------------------
-- Distribution: on the coordinator only (CREATE EXTENSION durable_citus there runs on
-- the workers too, where there is nothing to distribute).
------------------------------------------------------------------------------------

DO $$
DECLARE
    f record;
BEGIN
    IF NOT pg_catalog.citus_is_coordinator() THEN
        RETURN;
    END IF;
    -- Citus runs an extension's commands over one connection per node.
    SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
    PERFORM pg_catalog.create_distributed_table('durable_citus.routes', 'route_key');
    FOR f IN
        SELECT p.oid::pg_catalog.regprocedure AS sig
          FROM pg_catalog.pg_proc p
         WHERE p.pronamespace OPERATOR(pg_catalog.=) 'durable_citus'::regnamespace
           AND p.proname::text LIKE 'node\_%'
    LOOP
        PERFORM pg_catalog.create_distributed_function(f.sig, '$1',
            colocate_with := 'durable_citus.routes', force_delegation := true);
    END LOOP;
END
$$;

-- CREATE EXTENSION durable on the coordinator reaches the workers in a transaction that
-- Citus commits with two-phase commit.  A worker's launcher that looked at the database
-- while it was prepared found no extension there, and looks again only after 5 minutes:
-- the database would be left without its timer worker and executors that long (seen in
-- test/citus/t/002_workers.pl).  durable is committed everywhere by now: tell each
-- node's launcher to look.
SELECT durable.launcher_wakeup();

-- durable_citus 0.2.0 -> 0.3.0: the calls that act on each node's share of a queue or
-- of the histories, and batch operations, made once on the coordinator for every
-- node (docs/citus.md, "Calls made on every node"); time-ordered ids for starts
-- without one.  Children across nodes need no SQL here: durable's engine relays them
-- through the router registered by 0.2.0.

\echo Use "ALTER EXTENSION durable_citus UPDATE TO '0.3.0'" to load this file. \quit

-- local_call is 0.2.0's with the calls of this version added (a new distributed
-- function could not be distributed from an update script, as 0.2.0 explains).
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
    WHEN 'set_task_queue_limits' THEN
        RETURN pg_catalog.to_jsonb(durable.set_task_queue_limits(args->>'task_queue',
            args->>'kind', (args->>'max_concurrent')::integer,
            (args->>'rate')::double precision, (args->>'burst')::integer, args->>'namespace'));
    WHEN 'set_task_key_limits' THEN
        RETURN pg_catalog.to_jsonb(durable.set_task_key_limits(args->>'task_queue',
            args->>'kind', args->>'concurrency_key', (args->>'max_concurrent')::integer,
            (args->>'rate')::double precision, (args->>'burst')::integer,
            (args->>'weight')::integer, args->>'namespace'));
    WHEN 'replay_check' THEN
        RETURN (SELECT pg_catalog.jsonb_agg(pg_catalog.to_jsonb(c))
                  FROM durable.replay_check(args->>'workflow_type',
                       (args->>'function')::regprocedure, args->>'namespace',
                       (args->>'only_running')::boolean, (args->>'max_runs')::integer) c);
    WHEN 'purge' THEN
        RETURN pg_catalog.to_jsonb(durable.purge((args->>'max_runs')::integer));
    WHEN 'preview_batch' THEN
        RETURN pg_catalog.to_jsonb(durable.preview_batch(args->>'operation', args->>'namespace', args->>'status',
            args->>'workflow_type', args->>'task_queue', args->>'workflow_id_prefix',
            (args->>'started_since')::timestamptz, (args->>'started_before')::timestamptz,
            (args->>'closed_since')::timestamptz, (args->>'closed_before')::timestamptz,
            durable_citus.unbox(args->'search_attributes'), durable_citus.unbox(args->'memo'),
            args->>'reason', args->>'signal_name', durable_citus.unbox(args->'input'),
            args->>'reset_to'));
    WHEN 'start_batch' THEN
        RETURN pg_catalog.to_jsonb(durable.start_batch(args->>'operation', args->>'namespace', args->>'status',
            args->>'workflow_type', args->>'task_queue', args->>'workflow_id_prefix',
            (args->>'started_since')::timestamptz, (args->>'started_before')::timestamptz,
            (args->>'closed_since')::timestamptz, (args->>'closed_before')::timestamptz,
            durable_citus.unbox(args->'search_attributes'), durable_citus.unbox(args->'memo'),
            args->>'reason', args->>'signal_name', durable_citus.unbox(args->'input'),
            args->>'reset_to'));
    WHEN 'cancel_batch' THEN
        -- The node that has the batch cancels it; the others answer NULL.
        IF NOT EXISTS (SELECT 1 FROM durable.batches b
                        WHERE b.batch_id OPERATOR(pg_catalog.=) (args->>'batch_id')::uuid) THEN
            RETURN NULL;
        END IF;
        RETURN pg_catalog.to_jsonb(durable.cancel_batch((args->>'batch_id')::uuid));
    WHEN 'batches' THEN
        RETURN (SELECT pg_catalog.jsonb_agg(pg_catalog.to_jsonb(b) ORDER BY b.start_time DESC)
                  FROM durable.batches b);
    ELSE
        RAISE EXCEPTION 'durable_citus: unknown call %', pg_catalog.quote_nullable(call)
            USING ERRCODE = '22023';
    END CASE;
END
$$;

-- The limits of a task queue, set on every node: each node's share of the queue gets
-- them (a node enforces its own).  Returns whether they changed on any node.
CREATE FUNCTION durable_citus.set_task_queue_limits(task_queue text, kind text,
    max_concurrent integer DEFAULT NULL, rate double precision DEFAULT NULL,
    burst integer DEFAULT NULL, namespace text DEFAULT 'default')
RETURNS boolean
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    RETURN (SELECT pg_catalog.bool_or((r)::text::boolean)
              FROM pg_catalog.unnest(durable_citus.cluster_call('set_task_queue_limits',
                   pg_catalog.jsonb_build_object('task_queue', task_queue, 'kind', kind,
                       'max_concurrent', max_concurrent, 'rate', rate, 'burst', burst,
                       'namespace', namespace))) AS u(r));
END
$$;

-- The limits and weight of a concurrency key of a task queue, set on every node;
-- whether they changed on any node.
CREATE FUNCTION durable_citus.set_task_key_limits(task_queue text, kind text,
    concurrency_key text DEFAULT NULL, max_concurrent integer DEFAULT NULL,
    rate double precision DEFAULT NULL, burst integer DEFAULT NULL,
    weight integer DEFAULT NULL, namespace text DEFAULT 'default')
RETURNS boolean
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    RETURN (SELECT pg_catalog.bool_or((r)::text::boolean)
              FROM pg_catalog.unnest(durable_citus.cluster_call('set_task_key_limits',
                   pg_catalog.jsonb_build_object('task_queue', task_queue, 'kind', kind,
                       'concurrency_key', concurrency_key, 'max_concurrent', max_concurrent,
                       'rate', rate, 'burst', burst, 'weight', weight,
                       'namespace', namespace))) AS u(r));
END
$$;

-- A new function of a SQL workflow checked against the stored histories of every node
-- (durable.replay_check on each, max_runs each), with the node of each run.
CREATE FUNCTION durable_citus.replay_check(workflow_type text, function regprocedure,
    namespace text DEFAULT 'default', only_running boolean DEFAULT true,
    max_runs integer DEFAULT 1000)
RETURNS TABLE (node_name text, node_port integer, workflow_id text, run_id uuid,
    ok boolean, event_id bigint, history text, code text, message text)
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    args jsonb := pg_catalog.jsonb_build_object('workflow_type', workflow_type,
        'function', function::text, 'namespace', namespace, 'only_running', only_running,
        'max_runs', max_runs);
    n record;
    r jsonb;
BEGIN
    FOR n IN SELECT * FROM durable_citus.nodes() LOOP
        -- The node function alone in its FROM clause, or Citus would not delegate it.
        SELECT s INTO r FROM durable_citus.node_call(n.route_key, 'replay_check', args) s;
        RETURN QUERY
            SELECT n.node_name, n.node_port, x.workflow_id, x.run_id, x.ok, x.event_id,
                   x.history, x.code, x.message
              FROM pg_catalog.jsonb_to_recordset(COALESCE(r, '[]'::jsonb))
                   AS x(workflow_id text, run_id uuid, ok boolean, event_id bigint,
                        history text, code text, message text);
    END LOOP;
END
$$;

-- Closed runs past their namespace's retention, purged on every node (at most
-- max_runs each); returns how many in all.
CREATE FUNCTION durable_citus.purge(max_runs integer DEFAULT 1000)
RETURNS integer
LANGUAGE plpgsql STRICT SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    RETURN (SELECT COALESCE(pg_catalog.sum((r)::text::integer), 0)::integer
              FROM pg_catalog.unnest(durable_citus.cluster_call('purge',
                   pg_catalog.jsonb_build_object('max_runs', max_runs))) AS u(r));
END
$$;

-- A workflow id for a start without one, as durable draws it (a version 7 UUID: the
-- time in milliseconds first, then random bits), so that the ids of a node's runs grow
-- at the right edge of its indexes instead of landing on random pages of them
-- (docs/performance.md, "Many open workflows").  Drawn on the coordinator, where the
-- start is routed by it.
CREATE FUNCTION durable_citus.new_workflow_id()
RETURNS text
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
    SELECT pg_catalog.encode(
               pg_catalog.set_byte(
                   pg_catalog.overlay(r.b, pg_catalog.substr(
                       pg_catalog.int8send(pg_catalog.floor(pg_catalog.date_part('epoch',
                           pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) 1000)::bigint),
                       3), 1, 6),
                   6, (pg_catalog.get_byte(r.b, 6) OPERATOR(pg_catalog.&) 15)
                      OPERATOR(pg_catalog.|) 112),
               'hex')::uuid::text
      FROM (SELECT pg_catalog.uuid_send(pg_catalog.gen_random_uuid()) AS b) r
$$;
GRANT EXECUTE ON FUNCTION durable_citus.new_workflow_id() TO PUBLIC;

CREATE OR REPLACE FUNCTION durable_citus.start_workflow(workflow_type text, input jsonb DEFAULT NULL,
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
    -- durable's default id, time-ordered as durable draws it, drawn here so that it
    -- can be routed.
    IF workflow_id IS NULL THEN
        workflow_id := durable_citus.new_workflow_id();
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


CREATE OR REPLACE FUNCTION durable_citus.start_workflow_eager(workflow_type text, input jsonb DEFAULT NULL,
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
        workflow_id := durable_citus.new_workflow_id();
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


REVOKE ALL ON FUNCTION durable_citus.set_task_queue_limits(text, text, integer,
    double precision, integer, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION durable_citus.set_task_key_limits(text, text, text, integer,
    double precision, integer, integer, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION durable_citus.replay_check(text, regprocedure, text, boolean, integer)
    FROM PUBLIC;
REVOKE ALL ON FUNCTION durable_citus.purge(integer) FROM PUBLIC;
-- As durable grants the functions they wrap.
GRANT EXECUTE ON FUNCTION durable_citus.set_task_queue_limits(text, text, integer,
    double precision, integer, text) TO durable_client, durable_worker, durable_admin;
GRANT EXECUTE ON FUNCTION durable_citus.set_task_key_limits(text, text, text, integer,
    double precision, integer, integer, text) TO durable_client, durable_worker, durable_admin;
GRANT EXECUTE ON FUNCTION durable_citus.replay_check(text, regprocedure, text, boolean, integer)
    TO durable_client, durable_admin;
GRANT EXECUTE ON FUNCTION durable_citus.purge(integer) TO durable_admin;

-- Batch operations (docs/operations.md "Batch operations") over every node: the
-- preview counts the runs of every node, and the start makes one job on each node,
-- which each node's timer worker works through; a job is then seen, and canceled, on
-- its node, through these.
CREATE FUNCTION durable_citus.preview_batch(
    operation text, namespace text DEFAULT 'default', status text DEFAULT NULL,
    workflow_type text DEFAULT NULL, task_queue text DEFAULT NULL,
    workflow_id_prefix text DEFAULT NULL, started_since timestamptz DEFAULT NULL,
    started_before timestamptz DEFAULT NULL, closed_since timestamptz DEFAULT NULL,
    closed_before timestamptz DEFAULT NULL, search_attributes jsonb DEFAULT NULL,
    memo jsonb DEFAULT NULL, reason text DEFAULT NULL, signal_name text DEFAULT NULL,
    input jsonb DEFAULT NULL, reset_to text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
BEGIN
    RETURN (SELECT pg_catalog.sum((r)::text::bigint)::bigint
              FROM pg_catalog.unnest(durable_citus.cluster_call('preview_batch',
                   pg_catalog.jsonb_build_object('operation', operation,
        'namespace', namespace, 'status', status, 'workflow_type', workflow_type,
        'task_queue', task_queue, 'workflow_id_prefix', workflow_id_prefix,
        'started_since', started_since, 'started_before', started_before,
        'closed_since', closed_since, 'closed_before', closed_before,
        'search_attributes', durable_citus.box(search_attributes),
        'memo', durable_citus.box(memo), 'reason', reason, 'signal_name', signal_name,
        'input', durable_citus.box(input), 'reset_to', reset_to))) AS u(r));
END
$$;

CREATE FUNCTION durable_citus.start_batch(
    operation text, namespace text DEFAULT 'default', status text DEFAULT NULL,
    workflow_type text DEFAULT NULL, task_queue text DEFAULT NULL,
    workflow_id_prefix text DEFAULT NULL, started_since timestamptz DEFAULT NULL,
    started_before timestamptz DEFAULT NULL, closed_since timestamptz DEFAULT NULL,
    closed_before timestamptz DEFAULT NULL, search_attributes jsonb DEFAULT NULL,
    memo jsonb DEFAULT NULL, reason text DEFAULT NULL, signal_name text DEFAULT NULL,
    input jsonb DEFAULT NULL, reset_to text DEFAULT NULL)
RETURNS TABLE (node_name text, node_port integer, batch_id uuid)
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    args jsonb := pg_catalog.jsonb_build_object('operation', operation,
        'namespace', namespace, 'status', status, 'workflow_type', workflow_type,
        'task_queue', task_queue, 'workflow_id_prefix', workflow_id_prefix,
        'started_since', started_since, 'started_before', started_before,
        'closed_since', closed_since, 'closed_before', closed_before,
        'search_attributes', durable_citus.box(search_attributes),
        'memo', durable_citus.box(memo), 'reason', reason, 'signal_name', signal_name,
        'input', durable_citus.box(input), 'reset_to', reset_to);
    n record;
    r jsonb;
BEGIN
    -- Checked on the coordinator first (durable's errors, nothing started anywhere).
    PERFORM durable_citus.local_call('preview_batch', args);
    FOR n IN SELECT * FROM durable_citus.nodes() LOOP
        SELECT s INTO r FROM durable_citus.node_call(n.route_key, 'start_batch', args) s;
        node_name := n.node_name;
        node_port := n.node_port;
        batch_id := (r OPERATOR(pg_catalog.#>>) '{}')::uuid;
        RETURN NEXT;
    END LOOP;
END
$$;

CREATE FUNCTION durable_citus.cancel_batch(batch_id uuid)
RETURNS boolean
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    n record;
    r jsonb;
BEGIN
    IF batch_id IS NULL THEN
        RETURN durable.cancel_batch(batch_id);      -- durable's 22004
    END IF;
    FOR n IN SELECT * FROM durable_citus.nodes() LOOP
        SELECT s INTO r FROM durable_citus.node_call(n.route_key, 'cancel_batch',
            pg_catalog.jsonb_build_object('batch_id', batch_id)) s;
        IF r IS NOT NULL THEN
            RETURN (r)::text::boolean;
        END IF;
    END LOOP;
    RETURN durable.cancel_batch(batch_id);          -- on no node: durable's WF002
END
$$;

-- durable.batches of every node, with the node of each job.
CREATE FUNCTION durable_citus.batches()
RETURNS TABLE (node_name text, node_port integer, batch_id uuid, namespace text,
    operation text, state text, filters jsonb, reason text, signal_name text, input jsonb,
    reset_to text, started_by text, total bigint, touched bigint, skipped bigint,
    failed bigint, done bigint, start_time timestamptz, update_time timestamptz,
    close_time timestamptz, canceled_by text)
LANGUAGE plpgsql SECURITY INVOKER
SET search_path = pg_catalog, durable_citus, durable, pg_temp
AS $$
DECLARE
    n record;
    r jsonb;
BEGIN
    FOR n IN SELECT * FROM durable_citus.nodes() LOOP
        SELECT s INTO r FROM durable_citus.node_call(n.route_key, 'batches', '{}'::jsonb) s;
        RETURN QUERY
            SELECT n.node_name, n.node_port, x.batch_id, x.namespace, x.operation, x.state,
                   x.filters, x.reason, x.signal_name, x.input, x.reset_to, x.started_by,
                   x.total, x.touched, x.skipped, x.failed, x.done, x.start_time,
                   x.update_time, x.close_time, x.canceled_by
              FROM pg_catalog.jsonb_to_recordset(COALESCE(r, '[]'::jsonb))
                   AS x(batch_id uuid, namespace text, operation text, state text,
                        filters jsonb, reason text, signal_name text, input jsonb,
                        reset_to text, started_by text, total bigint, touched bigint,
                        skipped bigint, failed bigint, done bigint,
                        start_time timestamptz, update_time timestamptz,
                        close_time timestamptz, canceled_by text);
    END LOOP;
END
$$;

REVOKE ALL ON FUNCTION durable_citus.preview_batch(text, text, text, text, text, text,
    timestamptz, timestamptz, timestamptz, timestamptz, jsonb, jsonb, text, text, jsonb, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION durable_citus.start_batch(text, text, text, text, text, text,
    timestamptz, timestamptz, timestamptz, timestamptz, jsonb, jsonb, text, text, jsonb, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION durable_citus.cancel_batch(uuid) FROM PUBLIC;
REVOKE ALL ON FUNCTION durable_citus.batches() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION durable_citus.preview_batch(text, text, text, text, text, text,
    timestamptz, timestamptz, timestamptz, timestamptz, jsonb, jsonb, text, text, jsonb, text) TO durable_client;
GRANT EXECUTE ON FUNCTION durable_citus.start_batch(text, text, text, text, text, text,
    timestamptz, timestamptz, timestamptz, timestamptz, jsonb, jsonb, text, text, jsonb, text) TO durable_client;
GRANT EXECUTE ON FUNCTION durable_citus.cancel_batch(uuid) TO durable_client;
GRANT EXECUTE ON FUNCTION durable_citus.batches() TO durable_client;

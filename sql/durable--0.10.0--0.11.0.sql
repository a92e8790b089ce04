-- durable 0.10.0 -> 0.11.0: fewer commits and less space per workflow, and
-- workflows that cross the nodes of a Citus cluster.
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

\echo Use "ALTER EXTENSION durable UPDATE TO '0.11.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- A workflow's input is stored once, in its WorkflowExecutionStarted event
-- (event 1 of its first run's history, and of every run ContinueAsNew, a
-- retry, a cron fire, a reset or a restart starts): the run row no longer
-- keeps a copy.  An open workflow with an 800-byte input took about 3.4 kB,
-- the input twice; durable.runs is also the table every step of a workflow
-- updates, and a row a fifth of the size leaves more of it in memory.
-- durable.workflows and list_workflows read the input from the event (one
-- probe of history_pkey a row shown), NULL when it gave none (the event's
-- "input": null; an input given as JSON null shows as NULL too).  Rows written before the update keep
-- their bytes until they are next updated or the table is rewritten; the
-- event of each already holds its input.
-- ---------------------------------------------------------------------------
CREATE OR REPLACE VIEW durable.workflows WITH (security_barrier = true) AS
    SELECT r.namespace, r.workflow_id, r.run_id, r.workflow_type, r.task_queue,
           r.status, r.attempt, r.start_time, r.close_time,
           r.close_time OPERATOR(pg_catalog.-) r.start_time AS duration,
           (SELECT h.attributes OPERATOR(pg_catalog.->) 'input'
              FROM durable.history h
             WHERE h.run_id OPERATOR(pg_catalog.=) r.run_id
               AND h.event_id OPERATOR(pg_catalog.=) 1
               AND h.attributes OPERATOR(pg_catalog.->) 'input'
                   OPERATOR(pg_catalog.<>) 'null'::jsonb) AS input,
           r.result, r.failure, r.memo,
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
               AS function,
           r.paused_at, r.paused_by, r.pause_reason,
           COALESCE(r.priority, 3::smallint) AS priority, r.concurrency_key
      FROM durable.runs r
     WHERE durable.may_read_namespace(r.namespace);

CREATE OR REPLACE FUNCTION durable.list_workflows(
        namespace text DEFAULT 'default',
        status text DEFAULT NULL,
        workflow_type text DEFAULT NULL,
        task_queue text DEFAULT NULL,
        workflow_id_prefix text DEFAULT NULL,
        started_since timestamptz DEFAULT NULL,
        started_before timestamptz DEFAULT NULL,
        closed_since timestamptz DEFAULT NULL,
        closed_before timestamptz DEFAULT NULL,
        search_attributes jsonb DEFAULT NULL,
        memo jsonb DEFAULT NULL,
        page_size integer DEFAULT 50,
        after text DEFAULT NULL,
        paused boolean DEFAULT NULL)
    RETURNS SETOF durable.workflow_list_entry
    LANGUAGE plpgsql STABLE
    SECURITY INVOKER
    SET search_path = pg_catalog, durable, pg_temp
    SET DateStyle = 'ISO, YMD' SET TimeZone = 'UTC'
    SUPPORT durable.engine_support
    AS $list$
DECLARE
    cond text;
    filters jsonb;
    pattern text;
    payload text;
    after_time timestamptz;
    after_run uuid;
    inner_key bytea;
    outer_key bytea;
BEGIN
    cond := durable.workflow_filter(list_workflows.namespace, list_workflows.status,
        list_workflows.workflow_type, list_workflows.task_queue,
        list_workflows.workflow_id_prefix, list_workflows.started_since,
        list_workflows.started_before, list_workflows.closed_since,
        list_workflows.closed_before, list_workflows.search_attributes,
        list_workflows.memo);
    IF list_workflows.page_size IS NULL THEN
        RAISE EXCEPTION 'page_size must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF list_workflows.page_size OPERATOR(pg_catalog.<) 1
       OR list_workflows.page_size OPERATOR(pg_catalog.>) 1000 THEN
        RAISE EXCEPTION 'page_size must be between 1 and 1000'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = pg_catalog.format('It is %s.', list_workflows.page_size);
    END IF;
    -- The paused runs through runs_paused; the others by the filters' indexes.
    IF list_workflows.paused THEN
        cond := cond OPERATOR(pg_catalog.||) ' AND r.paused_at IS NOT NULL';
    ELSIF NOT list_workflows.paused THEN
        cond := cond OPERATOR(pg_catalog.||) ' AND r.paused_at IS NULL';
    END IF;
    pattern := pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(
        list_workflows.workflow_id_prefix, '\', '\\'), '%', '\%'), '_', '\_')
        OPERATOR(pg_catalog.||) '%';
    -- What the cursor is bound to: the filters, as given (paused only when
    -- given, as before it was a filter).
    filters := pg_catalog.jsonb_build_array(list_workflows.namespace, list_workflows.status,
        list_workflows.workflow_type, list_workflows.task_queue,
        list_workflows.workflow_id_prefix, list_workflows.started_since,
        list_workflows.started_before, list_workflows.closed_since,
        list_workflows.closed_before, list_workflows.search_attributes,
        list_workflows.memo);
    IF list_workflows.paused IS NOT NULL THEN
        filters := filters OPERATOR(pg_catalog.||)
            pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object('paused', list_workflows.paused));
    END IF;
    SELECT k.inner_key, k.outer_key INTO inner_key, outer_key FROM durable.list_cursor_key k;
    IF inner_key IS NULL OR outer_key IS NULL THEN
        RAISE EXCEPTION 'durable.list_cursor_key has no key'
            USING ERRCODE = 'internal_error',
                  HINT = 'ALTER EXTENSION durable UPDATE does not recreate it: restore the row, or drop and create the extension.';
    END IF;
    IF list_workflows.after IS NOT NULL THEN
        IF list_workflows.after OPERATOR(pg_catalog.!~) '^([0-9a-f][0-9a-f]){1,200}[0-9a-f]{64}$' THEN
            RAISE EXCEPTION 'after is not a cursor of list_workflows'
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Give the cursor column of the last row of the previous page, unchanged.';
        END IF;
        payload := pg_catalog.left(list_workflows.after, -64);
        IF pg_catalog.encode(pg_catalog.sha256(outer_key OPERATOR(pg_catalog.||) pg_catalog.sha256(
               inner_key OPERATOR(pg_catalog.||) pg_catalog.convert_to(
                   payload OPERATOR(pg_catalog.||) '/' OPERATOR(pg_catalog.||) filters::text, 'UTF8'))), 'hex')
           OPERATOR(pg_catalog.<>) pg_catalog.right(list_workflows.after, 64) THEN
            RAISE EXCEPTION 'after is not a cursor of list_workflows with these filters'
                USING ERRCODE = 'invalid_parameter_value',
                      DETAIL = 'It was altered, or returned by a call with other filters.',
                      HINT = 'Give the cursor column of the last row of the previous page, unchanged, with the same filters.';
        END IF;
        payload := pg_catalog.convert_from(pg_catalog.decode(payload, 'hex'), 'UTF8');
        after_time := pg_catalog.split_part(payload, '/', 1)::timestamptz;
        after_run := pg_catalog.split_part(payload, '/', 2)::uuid;
        cond := cond OPERATOR(pg_catalog.||)
            ' AND (r.start_time, r.run_id) OPERATOR(pg_catalog.<) ($12, $13)';
    END IF;
    RETURN QUERY EXECUTE
        'SELECT r.namespace, r.workflow_id, r.run_id, r.workflow_type, r.task_queue,'
        '       r.status, r.attempt, r.start_time, r.close_time,'
        '       r.close_time OPERATOR(pg_catalog.-) r.start_time,'
        '       (SELECT h.attributes OPERATOR(pg_catalog.->) ''input'' FROM durable.history h'
        '         WHERE h.run_id OPERATOR(pg_catalog.=) r.run_id'
        '           AND h.event_id OPERATOR(pg_catalog.=) 1'
        '           AND h.attributes OPERATOR(pg_catalog.->) ''input'''
        '               OPERATOR(pg_catalog.<>) ''null''::jsonb),'
        '       r.result, r.failure, r.memo, r.cancel_requested, r.cron_schedule,'
        '       r.parent_workflow_id, r.parent_run_id, r.continued_from, r.continued_to,'
        '       r.first_run_id, r.last_event_id, r.reset_from, r.reset_to,'
        '       r.restarted_from, r.restarted_to, r.origin, r.search_attributes,'
        '       pg_catalog.encode(pg_catalog.convert_to(c.p, ''UTF8''), ''hex'')'
        '       OPERATOR(pg_catalog.||) pg_catalog.encode(pg_catalog.sha256($17 OPERATOR(pg_catalog.||)'
        '           pg_catalog.sha256($16 OPERATOR(pg_catalog.||) pg_catalog.convert_to('
        '               pg_catalog.encode(pg_catalog.convert_to(c.p, ''UTF8''), ''hex'')'
        '               OPERATOR(pg_catalog.||) ''/'' OPERATOR(pg_catalog.||) $14, ''UTF8''))), ''hex''),'
        '       r.paused_at, r.paused_by, r.pause_reason'
        '  FROM (SELECT r.* FROM durable.runs r WHERE ' OPERATOR(pg_catalog.||) cond
        OPERATOR(pg_catalog.||)
        '         ORDER BY r.start_time DESC, r.run_id DESC LIMIT $15) r,'
        '       LATERAL (SELECT r.start_time::text OPERATOR(pg_catalog.||) ''/'''
        '                       OPERATOR(pg_catalog.||) r.run_id::text) c(p)'
        ' ORDER BY r.start_time DESC, r.run_id DESC'
        USING list_workflows.namespace, list_workflows.status,
              list_workflows.workflow_type, list_workflows.task_queue, pattern,
              list_workflows.started_since, list_workflows.started_before,
              list_workflows.closed_since, list_workflows.closed_before,
              list_workflows.search_attributes, list_workflows.memo,
              after_time, after_run, filters::text, list_workflows.page_size,
              inner_key, outer_key;
END
$list$;

ALTER TABLE durable.runs DROP COLUMN input;
------------------------------------------------------------------------------------
-- Signals and cancels across the nodes of a cluster (src/store/router.c,
-- src/engine/children.c "Across nodes", docs/citus.md "Signals and cancels across
-- nodes").  Where each workflow id is owned by one of several nodes that each run
-- durable (a Citus cluster with durable_citus), an extension that knows which node
-- owns which id registers a router: the one row of durable.router names a function
-- that says whether another node owns a workflow id and one that relays a signal or
-- cancel request to that node, where durable.receive_external() delivers it.  A
-- decision whose target is owned elsewhere is written to an external timer (the
-- outbox), relayed when it fires.  Only a superuser writes the table; the engine
-- calls the functions as the extension's owner, and refuses functions that a
-- superuser does not own.  Without a row the engine works as on a single server.
------------------------------------------------------------------------------------

CREATE TABLE durable.router (
    single          boolean PRIMARY KEY DEFAULT true CHECK (single),
    name            text NOT NULL,
    owned_elsewhere regprocedure NOT NULL,
    relay           regprocedure NOT NULL,
    registered_at   timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE durable.router IS
    'the router of a node that shares its workflows with other nodes (docs/citus.md); written by superusers only';
-- Every backend keeps the row in memory (src/store/router.c).
CREATE TRIGGER router_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON durable.router
    FOR EACH STATEMENT EXECUTE FUNCTION durable.cached_table_changed();
GRANT SELECT ON durable.router TO durable_admin;

-- The requests relayed here from other nodes and delivered, so that a relay tried
-- again (a failure between the two nodes' commits) delivers nothing twice.  Purged
-- with the run they reached.
CREATE TABLE durable.received_requests (
    initiator_run_id   uuid NOT NULL,
    initiated_event_id bigint NOT NULL,
    target_run_id      uuid NOT NULL,
    received_at        timestamptz NOT NULL,
    PRIMARY KEY (initiator_run_id, initiated_event_id)
);
CREATE INDEX received_requests_target ON durable.received_requests (target_run_id);
SELECT pg_catalog.pg_extension_config_dump('durable.received_requests', '');
GRANT SELECT ON durable.received_requests TO durable_admin;

-- Deliver a request relayed from another node (an external timer's payload) to its
-- target here; returns {"outcome": "done" | "not_found" | "busy", "runId": ...}.
-- Granted to no one: the relay calls it as the extension's owner.
CREATE FUNCTION durable.receive_external(request jsonb) RETURNS jsonb
    AS 'MODULE_PATHNAME', 'durable_receive_external'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;
REVOKE ALL ON FUNCTION durable.receive_external(jsonb) FROM PUBLIC;

-- durable 0.3.0 -> 0.4.0: work under a held vacuum horizon
-- (docs/performance.md "A held vacuum horizon"), Cadence's history rules
-- (docs/cadence-differences.md), operating workflows from SQL (finding
-- workflows, task queues, metrics, reset and restart).
--
-- The schema check of sql/durable--0.2.0--0.3.0.sql is not repeated here:
-- at 0.3.0 the schema is owned by a superuser and only superusers may
-- create objects in it, and only a superuser can change that.
-- Every section below names its issue; objects are schema-qualified and
-- operators spelled OPERATOR(pg_catalog.x) as in the 0.3.0 script.

\echo Use "ALTER EXTENSION durable UPDATE TO '0.4.0'" to load this file. \quit

-- Cron and timeout rules (docs/api.md "Workflow retries, ContinueAsNew,
-- cron"): a run's timeout counts from
-- its first decision task, as Cadence's does (start + firstDecisionTaskBackoff
-- + run timeout).  The deadline is kept only for a run whose first decision
-- task waits (a delay, a cron fire time, a retry backoff) and that has a run
-- timeout; NULL means start_time + run_timeout, as before (and as for every
-- run started before this update).
ALTER TABLE durable.runs ADD COLUMN run_deadline timestamptz;
-- ---------------------------------------------------------------------------
-- Reset and restart: fix the code and carry on (docs/api.md "Reset and
-- restart").
--
-- A reset makes a new run of the same workflow id whose history is a copy of
-- a run's up to a DecisionTaskCompleted (Cadence's ResetWorkflowExecution);
-- a restart starts a new chain with the same type, queue, options and input.
-- The new run records where it came from (reset_from or restarted_from, and
-- origin: who did it, why, when), the old run where it went (reset_to,
-- restarted_to: the latest such run).  src/engine/reset.c explains the rest.
-- ---------------------------------------------------------------------------
ALTER TABLE durable.runs
    ADD COLUMN reset_from uuid,
    ADD COLUMN reset_to uuid,
    ADD COLUMN restarted_from uuid,
    ADD COLUMN restarted_to uuid,
    ADD COLUMN origin jsonb;

-- durable.workflows shows these columns: the view is re-created once, with
-- search_attributes too, in the section "Finding workflows" below.

CREATE FUNCTION durable.reset_workflow(
        workflow_id text,
        reason text,
        namespace text DEFAULT 'default',
        run_id uuid DEFAULT NULL,
        event_id bigint DEFAULT NULL)
    RETURNS uuid
    AS 'MODULE_PATHNAME', 'durable_reset_workflow'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = pg_catalog, durable, pg_temp;

CREATE FUNCTION durable.restart_workflow(
        workflow_id text,
        reason text,
        namespace text DEFAULT 'default',
        run_id uuid DEFAULT NULL,
        input jsonb DEFAULT NULL)
    RETURNS uuid
    AS 'MODULE_PATHNAME', 'durable_restart_workflow'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = pg_catalog, durable, pg_temp;

-- Granted as terminate_workflow is: to durable_client (durable_admin is a
-- member); each call also needs the client privilege on its namespace.
REVOKE ALL ON FUNCTION durable.reset_workflow(text, text, text, uuid, bigint),
    durable.restart_workflow(text, text, text, uuid, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION durable.reset_workflow(text, text, text, uuid, bigint),
    durable.restart_workflow(text, text, text, uuid, jsonb) TO durable_client;
-- ---------------------------------------------------------------------------
-- durable.wait_workflow() (docs/api.md "Waiting for a result"), the close
-- of a workflow's chain
-- as soon as it commits (woken like the long polls, holding no xmin while
-- it sleeps), for the roles that may describe the workflow.  A client
-- function: durable_client, with the namespace's 'client' privilege.
CREATE FUNCTION durable.wait_workflow(
        workflow_id text,
        namespace text DEFAULT 'default',
        run_id uuid DEFAULT NULL,
        wait interval DEFAULT '30 seconds')
    RETURNS jsonb
    AS 'MODULE_PATHNAME', 'durable_wait_workflow'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = pg_catalog, durable, pg_temp;
REVOKE ALL ON FUNCTION durable.wait_workflow(text, text, uuid, interval)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION durable.wait_workflow(text, text, uuid, interval)
    TO durable_client;

-- ---------------------------------------------------------------------------
-- Finding workflows: list and count
-- runs by namespace, status, type, task queue, workflow id prefix, start and
-- close time, search attributes and memo, through indexes, with keyset
-- pagination (docs/api.md "Finding workflows").
-- ---------------------------------------------------------------------------

-- One index a filter, each ending in the list order (start_time, run_id), so
-- that a page of a filter is the first rows of one index range, read
-- backwards from the cursor.  None of these columns changes while a run is
-- open, except status at close (already indexed by runs_one_running and
-- runs_closed: closing is not a HOT update anyway), so the decision and
-- activity updates of a run stay HOT.
CREATE INDEX runs_list ON durable.runs (namespace, start_time, run_id);
CREATE INDEX runs_list_status ON durable.runs (namespace, status, start_time, run_id);
-- The status after the order: a page by type (or queue) and status checks the
-- status in the index, without reading the rows of the other statuses.
CREATE INDEX runs_list_type
    ON durable.runs (namespace, workflow_type, start_time, run_id, status);
CREATE INDEX runs_list_queue
    ON durable.runs (namespace, task_queue, start_time, run_id, status);
-- A workflow id prefix is a LIKE 'prefix%' range, which a btree serves under
-- any collation only with text_pattern_ops (the equality lookups of the
-- engine use it as they used the index it replaces).
DROP INDEX durable.runs_by_workflow_id;
CREATE INDEX runs_by_workflow_id
    ON durable.runs (namespace, workflow_id text_pattern_ops, run_seq DESC);
-- Containment (@>) on search attributes and memo.  Partial: most runs have
-- neither, and a start that sets none writes nothing to these indexes.
CREATE INDEX runs_search_attributes ON durable.runs
    USING gin (search_attributes jsonb_path_ops) WHERE search_attributes IS NOT NULL;
CREATE INDEX runs_memo ON durable.runs
    USING gin (memo jsonb_path_ops) WHERE memo IS NOT NULL;
-- The close time filter uses runs_closed (close_time) WHERE status <> 'running'.

-- The search attributes of a run (UpsertWorkflowSearchAttributes), in the view.
CREATE OR REPLACE VIEW durable.workflows AS
    SELECT r.namespace, r.workflow_id, r.run_id, r.workflow_type, r.task_queue,
           r.status, r.attempt, r.start_time, r.close_time,
           r.close_time OPERATOR(pg_catalog.-) r.start_time AS duration,
           r.input, r.result, r.failure, r.memo,
           r.cancel_requested, r.cron_schedule,
           r.parent_workflow_id, r.parent_run_id,
           r.continued_from, r.continued_to, r.first_run_id,
           r.last_event_id AS history_length,
           r.reset_from, r.reset_to, r.restarted_from, r.restarted_to,
           r.origin, r.search_attributes
      FROM durable.runs r
     WHERE durable.may_read_namespace(r.namespace);

-- A row of list_workflows: the columns of durable.workflows, then the cursor
-- that list_workflows(after => ...) continues after.
CREATE TYPE durable.workflow_list_entry AS (
    namespace           text,
    workflow_id         text,
    run_id              uuid,
    workflow_type       text,
    task_queue          text,
    status              text,
    attempt             integer,
    start_time          timestamptz,
    close_time          timestamptz,
    duration            interval,
    input               jsonb,
    result              jsonb,
    failure             jsonb,
    memo                jsonb,
    cancel_requested    boolean,
    cron_schedule       text,
    parent_workflow_id  text,
    parent_run_id       uuid,
    continued_from      uuid,
    continued_to        uuid,
    first_run_id        uuid,
    history_length      bigint,
    reset_from          uuid,
    reset_to            uuid,
    restarted_from      uuid,
    restarted_to        uuid,
    origin              jsonb,
    search_attributes   jsonb,
    cursor              text
);

-- Internal: the checks of describe_workflow for a namespace, for the caller
-- of the API (WF002, 42501).  Called by the functions below as the owner.
CREATE FUNCTION durable.check_namespace_read(namespace text) RETURNS void
    AS 'MODULE_PATHNAME', 'durable_check_namespace_read'
    LANGUAGE C STABLE;

-- Internal: check the filters of list and count, and return the condition on
-- durable.runs r that they make.  Its parameters are $1 .. $11, the filters
-- in this order (the pattern of the prefix in $5); the condition is made of
-- fixed fragments only, never of the values.
CREATE FUNCTION durable.workflow_filter(
        namespace text, status text, workflow_type text, task_queue text,
        workflow_id_prefix text, started_since timestamptz, started_before timestamptz,
        closed_since timestamptz, closed_before timestamptz,
        search_attributes jsonb, memo jsonb)
    RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, durable, pg_temp
    AS $filter$
DECLARE
    cond text := 'r.namespace OPERATOR(pg_catalog.=) $1';
BEGIN
    PERFORM durable.check_namespace_read(workflow_filter.namespace);
    IF workflow_filter.status IS NOT NULL THEN
        IF workflow_filter.status NOT IN ('running', 'completed', 'failed', 'canceled',
                                          'terminated', 'continued_as_new', 'timed_out') THEN
            RAISE EXCEPTION 'status "%" is not a workflow status',
                    CASE WHEN pg_catalog.length(workflow_filter.status) OPERATOR(pg_catalog.>) 64
                         THEN pg_catalog.left(workflow_filter.status, 64) OPERATOR(pg_catalog.||) '...'
                         ELSE workflow_filter.status END
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Give one of running, completed, failed, canceled, terminated, continued_as_new, timed_out.';
        END IF;
        cond := cond || ' AND r.status OPERATOR(pg_catalog.=) $2';
    END IF;
    IF workflow_filter.workflow_type IS NOT NULL THEN
        cond := cond || ' AND r.workflow_type OPERATOR(pg_catalog.=) $3';
    END IF;
    IF workflow_filter.task_queue IS NOT NULL THEN
        cond := cond || ' AND r.task_queue OPERATOR(pg_catalog.=) $4';
    END IF;
    IF workflow_filter.workflow_id_prefix IS NOT NULL
       AND workflow_filter.workflow_id_prefix OPERATOR(pg_catalog.<>) '' THEN
        cond := cond || ' AND r.workflow_id OPERATOR(pg_catalog.~~) $5';
    END IF;
    IF workflow_filter.started_since IS NOT NULL THEN
        cond := cond || ' AND r.start_time OPERATOR(pg_catalog.>=) $6';
    END IF;
    IF workflow_filter.started_before IS NOT NULL THEN
        cond := cond || ' AND r.start_time OPERATOR(pg_catalog.<) $7';
    END IF;
    -- Closed runs only, through runs_closed.
    IF workflow_filter.closed_since IS NOT NULL THEN
        cond := cond || ' AND r.status OPERATOR(pg_catalog.<>) ''running'''
                     || ' AND r.close_time OPERATOR(pg_catalog.>=) $8';
    END IF;
    IF workflow_filter.closed_before IS NOT NULL THEN
        cond := cond || ' AND r.status OPERATOR(pg_catalog.<>) ''running'''
                     || ' AND r.close_time OPERATOR(pg_catalog.<) $9';
    END IF;
    IF workflow_filter.search_attributes IS NOT NULL THEN
        IF pg_catalog.jsonb_typeof(workflow_filter.search_attributes)
           OPERATOR(pg_catalog.<>) 'object' THEN
            RAISE EXCEPTION 'search_attributes must be a JSON object'
                USING ERRCODE = 'invalid_parameter_value',
                      DETAIL = pg_catalog.format('It is a JSON %s.',
                          pg_catalog.jsonb_typeof(workflow_filter.search_attributes)),
                      HINT = 'Give the attributes to match, e.g. {"CustomerId": "c-42"}.';
        END IF;
        cond := cond || ' AND r.search_attributes OPERATOR(pg_catalog.@>) $10';
    END IF;
    IF workflow_filter.memo IS NOT NULL THEN
        IF pg_catalog.jsonb_typeof(workflow_filter.memo) OPERATOR(pg_catalog.<>) 'object' THEN
            RAISE EXCEPTION 'memo must be a JSON object'
                USING ERRCODE = 'invalid_parameter_value',
                      DETAIL = pg_catalog.format('It is a JSON %s.',
                          pg_catalog.jsonb_typeof(workflow_filter.memo)),
                      HINT = 'Give the memo fields to match, e.g. {"owner": "ops"}.';
        END IF;
        cond := cond || ' AND r.memo OPERATOR(pg_catalog.@>) $11';
    END IF;
    RETURN cond;
END
$filter$;

-- A page of runs, newest start first (run_id breaks ties), after the row
-- whose cursor is given.  The cursor is the row's start time and run id,
-- hex-encoded, and a hash of them with the filters: a cursor altered, or
-- used with other filters, is refused rather than read as another position.
-- DateStyle and TimeZone are fixed so that the start time's text (in the
-- cursor) reads back exactly.
CREATE FUNCTION durable.list_workflows(
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
        after text DEFAULT NULL)
    RETURNS SETOF durable.workflow_list_entry
    LANGUAGE plpgsql STABLE
    SECURITY DEFINER
    SET search_path = pg_catalog, durable, pg_temp
    SET DateStyle = 'ISO, YMD' SET TimeZone = 'UTC'
    AS $list$
DECLARE
    cond text;
    filters text;
    pattern text;
    payload text;
    after_time timestamptz;
    after_run uuid;
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
    pattern := pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(
        list_workflows.workflow_id_prefix, '\', '\\'), '%', '\%'), '_', '\_')
        OPERATOR(pg_catalog.||) '%';
    -- What the cursor is bound to: the filters, as given.
    filters := pg_catalog.jsonb_build_array(list_workflows.namespace, list_workflows.status,
        list_workflows.workflow_type, list_workflows.task_queue,
        list_workflows.workflow_id_prefix, list_workflows.started_since,
        list_workflows.started_before, list_workflows.closed_since,
        list_workflows.closed_before, list_workflows.search_attributes,
        list_workflows.memo)::text;
    IF list_workflows.after IS NOT NULL THEN
        IF list_workflows.after OPERATOR(pg_catalog.!~) '^([0-9a-f][0-9a-f]){1,200}[0-9a-f]{32}$' THEN
            RAISE EXCEPTION 'after is not a cursor of list_workflows'
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Give the cursor column of the last row of the previous page, unchanged.';
        END IF;
        payload := pg_catalog.left(list_workflows.after, -32);
        IF pg_catalog.md5(payload OPERATOR(pg_catalog.||) '/' OPERATOR(pg_catalog.||) filters)
           OPERATOR(pg_catalog.<>) pg_catalog.right(list_workflows.after, 32) THEN
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
        '       r.input, r.result, r.failure, r.memo, r.cancel_requested, r.cron_schedule,'
        '       r.parent_workflow_id, r.parent_run_id, r.continued_from, r.continued_to,'
        '       r.first_run_id, r.last_event_id, r.reset_from, r.reset_to,'
        '       r.restarted_from, r.restarted_to, r.origin, r.search_attributes,'
        '       pg_catalog.encode(pg_catalog.convert_to(c.p, ''UTF8''), ''hex'')'
        '       OPERATOR(pg_catalog.||) pg_catalog.md5(pg_catalog.encode('
        '           pg_catalog.convert_to(c.p, ''UTF8''), ''hex'') OPERATOR(pg_catalog.||) ''/'''
        '           OPERATOR(pg_catalog.||) $14)'
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
              after_time, after_run, filters, list_workflows.page_size;
END
$list$;

-- How many runs match the filters of list_workflows.
CREATE FUNCTION durable.count_workflows(
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
        memo jsonb DEFAULT NULL)
    RETURNS bigint
    LANGUAGE plpgsql STABLE
    SECURITY DEFINER
    SET search_path = pg_catalog, durable, pg_temp
    AS $count$
DECLARE
    cond text;
    n bigint;
BEGIN
    cond := durable.workflow_filter(count_workflows.namespace, count_workflows.status,
        count_workflows.workflow_type, count_workflows.task_queue,
        count_workflows.workflow_id_prefix, count_workflows.started_since,
        count_workflows.started_before, count_workflows.closed_since,
        count_workflows.closed_before, count_workflows.search_attributes,
        count_workflows.memo);
    EXECUTE 'SELECT pg_catalog.count(*) FROM durable.runs r WHERE '
            OPERATOR(pg_catalog.||) cond
       INTO n
      USING count_workflows.namespace, count_workflows.status,
            count_workflows.workflow_type, count_workflows.task_queue,
            pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(
                count_workflows.workflow_id_prefix, '\', '\\'), '%', '\%'), '_', '\_')
                OPERATOR(pg_catalog.||) '%',
            count_workflows.started_since, count_workflows.started_before,
            count_workflows.closed_since, count_workflows.closed_before,
            count_workflows.search_attributes, count_workflows.memo;
    RETURN n;
END
$count$;

-- The counts of list_workflows' filters (but status) per status, every
-- status in its row, in one scan: the dashboard's tabs.
CREATE FUNCTION durable.count_workflows_by_status(
        namespace text DEFAULT 'default',
        workflow_type text DEFAULT NULL,
        task_queue text DEFAULT NULL,
        workflow_id_prefix text DEFAULT NULL,
        started_since timestamptz DEFAULT NULL,
        started_before timestamptz DEFAULT NULL,
        closed_since timestamptz DEFAULT NULL,
        closed_before timestamptz DEFAULT NULL,
        search_attributes jsonb DEFAULT NULL,
        memo jsonb DEFAULT NULL)
    RETURNS TABLE (status text, count bigint)
    LANGUAGE plpgsql STABLE
    SECURITY DEFINER
    SET search_path = pg_catalog, durable, pg_temp
    AS $bystatus$
DECLARE
    cond text;
BEGIN
    cond := durable.workflow_filter(count_workflows_by_status.namespace, NULL,
        count_workflows_by_status.workflow_type, count_workflows_by_status.task_queue,
        count_workflows_by_status.workflow_id_prefix, count_workflows_by_status.started_since,
        count_workflows_by_status.started_before, count_workflows_by_status.closed_since,
        count_workflows_by_status.closed_before, count_workflows_by_status.search_attributes,
        count_workflows_by_status.memo);
    -- A count a status: each an index-only scan of its (namespace, status)
    -- range (or of the filter's index), rather than a scan of the table.
    RETURN QUERY EXECUTE
        'SELECT s.status, (SELECT pg_catalog.count(*) FROM durable.runs r WHERE '
        OPERATOR(pg_catalog.||) cond OPERATOR(pg_catalog.||)
        '           AND r.status OPERATOR(pg_catalog.=) s.status)'
        '  FROM pg_catalog.unnest(ARRAY[''running'', ''completed'', ''failed'', ''canceled'','
        '                               ''terminated'', ''continued_as_new'', ''timed_out''])'
        '       WITH ORDINALITY s(status, ord)'
        ' ORDER BY s.ord'
        USING count_workflows_by_status.namespace, NULL::text,
              count_workflows_by_status.workflow_type, count_workflows_by_status.task_queue,
              pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(
                  count_workflows_by_status.workflow_id_prefix, '\', '\\'), '%', '\%'), '_', '\_')
                  OPERATOR(pg_catalog.||) '%',
              count_workflows_by_status.started_since, count_workflows_by_status.started_before,
              count_workflows_by_status.closed_since, count_workflows_by_status.closed_before,
              count_workflows_by_status.search_attributes, count_workflows_by_status.memo;
END
$bystatus$;

REVOKE ALL ON FUNCTION durable.check_namespace_read(text),
    durable.workflow_filter(text, text, text, text, text, timestamptz, timestamptz,
                            timestamptz, timestamptz, jsonb, jsonb),
    durable.list_workflows(text, text, text, text, text, timestamptz, timestamptz,
                           timestamptz, timestamptz, jsonb, jsonb, integer, text),
    durable.count_workflows(text, text, text, text, text, timestamptz, timestamptz,
                            timestamptz, timestamptz, jsonb, jsonb),
    durable.count_workflows_by_status(text, text, text, text, timestamptz, timestamptz,
                                      timestamptz, timestamptz, jsonb, jsonb)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    durable.list_workflows(text, text, text, text, text, timestamptz, timestamptz,
                           timestamptz, timestamptz, jsonb, jsonb, integer, text),
    durable.count_workflows(text, text, text, text, text, timestamptz, timestamptz,
                            timestamptz, timestamptz, jsonb, jsonb),
    durable.count_workflows_by_status(text, text, text, text, timestamptz, timestamptz,
                                      timestamptz, timestamptz, jsonb, jsonb)
    TO durable_client;

-- ---------------------------------------------------------------------------
-- Task queues and metrics ("Is anyone working on this queue?", "How is it
-- doing?").  Pollers and counters live in shared
-- memory (src/store/pollers.c, src/store/metrics.c), read by C functions that return
-- only the rows of namespaces the caller may read (members of pg_monitor
-- and durable_admin read every namespace, docs/metrics.md "Metrics").
-- ---------------------------------------------------------------------------

-- The pollers seen since the server started (or until forgotten,
-- docs/task-queues.md "Task queues"), with the time their last poll began and the time its wait
-- ends at the latest.
CREATE FUNCTION durable.task_queue_pollers(
        OUT namespace text, OUT task_queue text, OUT kind text,
        OUT identity text, OUT last_poll_time timestamptz,
        OUT poll_until timestamptz)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'durable_task_queue_pollers'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, durable, pg_temp;

-- Per namespace, queue and kind: the tasks ready now and the age of the
-- oldest, the tasks waiting on a timer before they become ready (a delayed
-- start, a decision task retried after a backoff, an activity attempt
-- retried after its backoff, an executor task put off after an engine
-- failure), the pollers seen in the last 5 minutes and the types the
-- executors run there.
CREATE VIEW durable.task_queues AS
    WITH ready AS (
        SELECT t.namespace, t.task_queue,
               CASE WHEN t.kind IN ('d', 'w') THEN 'decision' ELSE 'activity' END AS kind,
               pg_catalog.count(*) FILTER (WHERE t.not_before IS NULL) AS ready_tasks,
               pg_catalog.count(*) FILTER (WHERE t.not_before IS NOT NULL) AS put_off,
               pg_catalog.min(t.task_id) FILTER (WHERE t.not_before IS NULL) AS oldest_task_id
          FROM durable.ready_tasks t
         WHERE durable.may_read_namespace(t.namespace)
            OR pg_catalog.pg_has_role('pg_monitor', 'USAGE')
         GROUP BY 1, 2, 3),
    oldest AS (
        SELECT r.namespace, r.task_queue, r.kind,
               CASE WHEN t.kind IN ('d', 'w')
                    THEN (SELECT h.event_time FROM durable.history h
                           WHERE h.run_id OPERATOR(pg_catalog.=) t.run_id
                             AND h.event_id OPERATOR(pg_catalog.=) t.scheduled_event_id)
                    ELSE (SELECT a.scheduled_time FROM durable.activities a
                           WHERE a.run_id OPERATOR(pg_catalog.=) t.run_id
                             AND a.scheduled_event_id OPERATOR(pg_catalog.=) t.scheduled_event_id)
               END AS oldest_ready_time
          FROM ready r
          JOIN durable.ready_tasks t
            ON t.namespace OPERATOR(pg_catalog.=) r.namespace
           AND t.task_queue OPERATOR(pg_catalog.=) r.task_queue
           AND t.task_id OPERATOR(pg_catalog.=) r.oldest_task_id),
    waiting AS (
        SELECT w.namespace, w.task_queue, w.kind, pg_catalog.count(*) AS waiting
          FROM (SELECT r.namespace, r.task_queue, 'decision' AS kind
                  FROM durable.timers tm
                  JOIN durable.runs r USING (run_id)
                 WHERE tm.kind IN ('first_decision', 'decision_retry')
                UNION ALL
                SELECT a.namespace, a.task_queue, 'activity'
                  FROM durable.activities a
                 WHERE a.next_attempt_time IS NOT NULL) w
         WHERE durable.may_read_namespace(w.namespace)
            OR pg_catalog.pg_has_role('pg_monitor', 'USAGE')
         GROUP BY 1, 2, 3),
    pollers AS (
        SELECT p.namespace, p.task_queue, p.kind,
               pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                   'identity', p.identity, 'lastPollTime', p.last_poll_time)
                   ORDER BY p.last_poll_time DESC, p.identity) AS pollers,
               pg_catalog.max(p.last_poll_time) AS last_poll_time
          FROM durable.task_queue_pollers() p
         WHERE GREATEST(p.last_poll_time, p.poll_until)
               OPERATOR(pg_catalog.>=) (durable.now() OPERATOR(pg_catalog.-) '5 minutes'::interval)
         GROUP BY 1, 2, 3),
    registered AS (
        SELECT g.namespace, g.task_queue,
               CASE g.kind WHEN 'workflow' THEN 'decision' ELSE 'activity' END AS kind,
               pg_catalog.array_agg(g.type_name ORDER BY g.type_name) AS executor_types
          FROM durable.registrations g
         WHERE durable.may_read_namespace(g.namespace)
            OR pg_catalog.pg_has_role('pg_monitor', 'USAGE')
         GROUP BY 1, 2, 3),
    queues AS (
        SELECT namespace, task_queue, kind FROM ready
        UNION SELECT namespace, task_queue, kind FROM waiting
        UNION SELECT namespace, task_queue, kind FROM pollers
        UNION SELECT namespace, task_queue, kind FROM registered)
    SELECT q.namespace, q.task_queue, q.kind,
           COALESCE(r.ready_tasks, 0) AS ready_tasks,
           o.oldest_ready_time,
           durable.now() OPERATOR(pg_catalog.-) o.oldest_ready_time AS oldest_ready_age,
           (COALESCE(w.waiting, 0) OPERATOR(pg_catalog.+) COALESCE(r.put_off, 0)) AS waiting_on_timer,
           COALESCE(p.pollers, '[]'::jsonb) AS pollers,
           p.last_poll_time,
           COALESCE(g.executor_types, '{}'::text[]) AS executor_types
      FROM queues q
      LEFT JOIN ready r USING (namespace, task_queue, kind)
      LEFT JOIN oldest o USING (namespace, task_queue, kind)
      LEFT JOIN waiting w USING (namespace, task_queue, kind)
      LEFT JOIN pollers p USING (namespace, task_queue, kind)
      LEFT JOIN registered g USING (namespace, task_queue, kind);

-- The counters since the server started, one row a value (docs/metrics.md
-- "Metrics").
CREATE FUNCTION durable.metric_values(
        OUT metric text, OUT namespace text, OUT task_queue text,
        OUT label text, OUT le float8, OUT value float8)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'durable_metric_values'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, durable, pg_temp;
CREATE VIEW durable.metrics AS
    SELECT m.metric, m.namespace, m.task_queue, m.label, m.le, m.value
      FROM durable.metric_values() m;
-- The same in Prometheus's text exposition format.
CREATE FUNCTION durable.metrics_text() RETURNS text
    AS 'MODULE_PATHNAME', 'durable_metrics_text'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, durable, pg_temp;

REVOKE ALL ON FUNCTION durable.task_queue_pollers(), durable.metric_values(),
    durable.metrics_text() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION durable.task_queue_pollers(), durable.metric_values(),
    durable.metrics_text() TO durable_client, durable_worker, durable_admin, pg_monitor;
GRANT SELECT ON durable.task_queues, durable.metrics
    TO durable_client, durable_worker, durable_admin, pg_monitor;

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
-- Executors shared between namespaces (docs/sql-workflows.md "Sharing the
-- executors between namespaces", src/store/executor_share.c).  A claim picks the namespace with
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
-- Views that show a caller nothing of the namespaces it may not read, even to
-- a function of the caller's in its WHERE clause (docs/privileges.md
-- "Privileges").
-- A plain view's WHERE is merged with the caller's, and the planner runs the
-- cheapest qualifier first: a caller's plpgsql function declared COST
-- 0.0000001 that logs its arguments ran before durable.may_read_namespace()
-- on every row of durable.runs and printed other namespaces' input and memo.
-- A security barrier view runs its own WHERE first; only the caller's
-- qualifiers made of LEAKPROOF functions (=, <, ... on text, uuid,
-- timestamps) go below it, which is what lets an index serve them.
-- task_queues and metrics get the option too: their rows come from CTEs the
-- planner materializes today and from C functions that filter by namespace
-- themselves, which is a plan's choice rather than a guarantee.
-- CREATE OR REPLACE VIEW drops options it does not repeat: a later script
-- that re-creates one of these views must say WITH (security_barrier = true)
-- (test/pgtap/leaky_views.sql checks every view of the extension).
-- ---------------------------------------------------------------------------
ALTER VIEW durable.workflows SET (security_barrier = true);
-- A view that is a bare UNION ALL is flattened into its branches whatever
-- its options (PostgreSQL 15 pulls a UNION ALL up without looking at the
-- barrier), and the caller's qualifiers then reach each branch's scans: the
-- union goes into a subquery, under the view's single filter.
CREATE OR REPLACE VIEW durable.activity_attempts WITH (security_barrier = true) AS
    SELECT u.namespace, u.workflow_id, u.run_id, u.scheduled_event_id,
           u.activity_id, u.activity_type, u.attempt, u.outcome,
           u.failure_reason, u.failure_details, u.worker_identity,
           u.scheduled_time, u.started_time, u.end_time, u.next_retry_time
      FROM (SELECT r.namespace, r.workflow_id, l.run_id, l.scheduled_event_id,
                   l.activity_id, l.activity_type, l.attempt, l.outcome,
                   l.failure_reason, l.failure_details, l.worker_identity,
                   l.scheduled_time, l.started_time, l.end_time, l.next_retry_time
              FROM durable.activity_attempt_log l
              JOIN durable.runs r USING (run_id)
            UNION ALL
            SELECT r.namespace, r.workflow_id, a.run_id, a.scheduled_event_id,
                   a.activity_id, a.activity_type, a.attempt,
                   CASE WHEN a.state OPERATOR(pg_catalog.=) 'SCHEDULED' THEN 'scheduled'
                        ELSE 'running' END,
                   NULL::text, NULL::jsonb, a.last_worker_identity,
                   a.scheduled_time, a.started_time, NULL::timestamptz, NULL::timestamptz
              FROM durable.activities a
              JOIN durable.runs r USING (run_id)
             WHERE a.next_attempt_time IS NULL) u
     WHERE durable.may_read_namespace(u.namespace);
ALTER VIEW durable.stuck_tasks SET (security_barrier = true);
ALTER VIEW durable.task_queues SET (security_barrier = true);
ALTER VIEW durable.metrics SET (security_barrier = true);

-- ---------------------------------------------------------------------------
-- list_workflows' cursor signed with a key of the database's (docs/api.md
-- "Finding workflows").  Until now its check was an md5 of the position and
-- the filters, which anyone can compute: any position could be forged.  Now
-- it is sha256(outer_key || sha256(inner_key || message)), NMAC with two
-- random keys of 64 bytes drawn at install (gen_random_uuid() draws from
-- pg_strong_random) and readable only by the extension's owner, so that a
-- cursor can come only from list_workflows.  Cursors made before the update
-- are refused (22023) like altered ones.  The table's one row is not dumped:
-- a restored database draws new keys, and old cursors are refused.
-- ---------------------------------------------------------------------------
CREATE TABLE durable.list_cursor_key (
    only_row    boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    inner_key   bytea NOT NULL CHECK (pg_catalog.length(inner_key) OPERATOR(pg_catalog.=) 64),
    outer_key   bytea NOT NULL CHECK (pg_catalog.length(outer_key) OPERATOR(pg_catalog.=) 64)
);
INSERT INTO durable.list_cursor_key (inner_key, outer_key)
    SELECT pg_catalog.decode(pg_catalog.string_agg(pg_catalog.replace(
               pg_catalog.gen_random_uuid()::text, '-', ''), '') FILTER (WHERE i OPERATOR(pg_catalog.<=) 4), 'hex'),
           pg_catalog.decode(pg_catalog.string_agg(pg_catalog.replace(
               pg_catalog.gen_random_uuid()::text, '-', ''), '') FILTER (WHERE i OPERATOR(pg_catalog.>) 4), 'hex')
      FROM pg_catalog.generate_series(1, 8) i;
REVOKE ALL ON durable.list_cursor_key FROM PUBLIC;

-- A page of runs, newest start first (run_id breaks ties), after the row
-- whose cursor is given.  The cursor is the row's start time and run id,
-- hex-encoded, and a MAC of them and the filters with the keys above: a
-- cursor altered, forged or used with other filters is refused rather than
-- read as another position.  DateStyle and TimeZone are fixed so that the
-- start time's text (in the cursor) reads back exactly.
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
                   payload OPERATOR(pg_catalog.||) '/' OPERATOR(pg_catalog.||) filters, 'UTF8'))), 'hex')
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
        '       r.input, r.result, r.failure, r.memo, r.cancel_requested, r.cron_schedule,'
        '       r.parent_workflow_id, r.parent_run_id, r.continued_from, r.continued_to,'
        '       r.first_run_id, r.last_event_id, r.reset_from, r.reset_to,'
        '       r.restarted_from, r.restarted_to, r.origin, r.search_attributes,'
        '       pg_catalog.encode(pg_catalog.convert_to(c.p, ''UTF8''), ''hex'')'
        '       OPERATOR(pg_catalog.||) pg_catalog.encode(pg_catalog.sha256($17 OPERATOR(pg_catalog.||)'
        '           pg_catalog.sha256($16 OPERATOR(pg_catalog.||) pg_catalog.convert_to('
        '               pg_catalog.encode(pg_catalog.convert_to(c.p, ''UTF8''), ''hex'')'
        '               OPERATOR(pg_catalog.||) ''/'' OPERATOR(pg_catalog.||) $14, ''UTF8''))), ''hex'')'
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
              after_time, after_run, filters, list_workflows.page_size,
              inner_key, outer_key;
END
$list$;

-- ---------------------------------------------------------------------------
-- The caller of the API is the current user at the call (docs/privileges.md
-- "Namespace privileges"), as PostgreSQL checks privileges: inside a SECURITY DEFINER
-- function, its owner.  The API functions become SECURITY INVOKER, keeping
-- their SET search_path; the library (src/base/caller.c) runs each as its owner,
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

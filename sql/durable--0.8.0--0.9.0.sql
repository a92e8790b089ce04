-- durable 0.8.0 -> 0.9.0: keys, priorities and fairness where a task is
-- claimed, and fewer commits per workflow.
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

\echo Use "ALTER EXTENSION durable UPDATE TO '0.9.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Priorities and concurrency keys (docs/task-queues.md "Priorities and
-- fairness"): a task carries a priority, 1 (first) to 5, default 3, and a
-- concurrency key chosen by the caller ('' for none), a workflow's for its
-- decision tasks (start_workflow's priority and concurrency_key) and an
-- activity's for its activity tasks (ScheduleActivityTask's priority and
-- concurrencyKey, else its workflow's).  A claim takes the lowest priority
-- first and, within a priority, goes round the keys (weighted round robin,
-- src/store/claim_order.c), oldest task first within a key: the primary key
-- of durable.ready_tasks is that order.  A run keeps its own (NULL: 3 and
-- none), and so does an activity, for its retries; children, ContinueAsNew
-- and retries of a run inherit them.
-- ---------------------------------------------------------------------------
ALTER TABLE durable.ready_tasks
    ADD COLUMN priority smallint NOT NULL DEFAULT 3
        CHECK (priority BETWEEN 1 AND 5),
    ADD COLUMN concurrency_key text NOT NULL DEFAULT '';
ALTER TABLE durable.ready_tasks DROP CONSTRAINT ready_tasks_pkey;
ALTER TABLE durable.ready_tasks ADD PRIMARY KEY
    (namespace, task_queue, kind, priority, concurrency_key, task_id);
ALTER TABLE durable.runs
    ADD COLUMN priority smallint CHECK (priority BETWEEN 1 AND 5),
    ADD COLUMN concurrency_key text;
ALTER TABLE durable.activities
    ADD COLUMN priority smallint CHECK (priority BETWEEN 1 AND 5),
    ADD COLUMN concurrency_key text;

-- Limits of each concurrency key of a queue and kind: at most max_concurrent
-- of the key's tasks started and not finished, at most rate starts a second
-- with a burst, and its weight in the round robin (its turn takes that many
-- tasks in a row).  The row of concurrency_key '' holds the defaults of
-- every key; a key's own row replaces them, each value it has (NULL: the
-- default's).  Decided in the claim's
-- transaction as a queue's limits are (src/store/task_limits.c); the starts
-- of a key are counted from durable.task_starts.
CREATE TABLE durable.task_key_limits (
    namespace       text NOT NULL,
    task_queue      text NOT NULL,
    kind            text NOT NULL CHECK (kind IN ('decision', 'activity')),
    concurrency_key text NOT NULL,
    max_concurrent  integer CHECK (max_concurrent >= 1),
    rate            float8 CHECK (rate > 0 AND rate <= 1e6),
    burst           integer CHECK (burst >= 1 AND burst <= 1000000),
    weight          integer CHECK (weight BETWEEN 1 AND 1000),
    set_at          timestamptz NOT NULL,
    set_by          text NOT NULL,
    PRIMARY KEY (namespace, task_queue, kind, concurrency_key),
    CHECK (max_concurrent IS NOT NULL OR rate IS NOT NULL OR weight IS NOT NULL),
    CHECK ((rate IS NULL) = (burst IS NULL))
);
SELECT pg_catalog.pg_extension_config_dump('durable.task_key_limits', '');
GRANT SELECT ON durable.task_key_limits TO durable_admin;
ALTER TABLE durable.task_starts
    ADD COLUMN concurrency_key text NOT NULL DEFAULT '';
CREATE INDEX task_starts_by_key
    ON durable.task_starts (namespace, task_queue, kind, concurrency_key);

CREATE FUNCTION durable.set_task_key_limits(task_queue text, kind text,
        concurrency_key text DEFAULT NULL, max_concurrent integer DEFAULT NULL,
        rate double precision DEFAULT NULL, burst integer DEFAULT NULL,
        weight integer DEFAULT NULL, namespace text DEFAULT 'default')
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'durable_set_task_key_limits'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;
REVOKE ALL ON FUNCTION durable.set_task_key_limits(text, text, text, integer,
    double precision, integer, integer, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION durable.set_task_key_limits(text, text, text, integer,
    double precision, integer, integer, text) TO durable_client, durable_worker, durable_admin;

-- The keys of each queue: the tasks ready and started of each key, and its
-- limits and weight (its own, else the queue's defaults for every key).
CREATE VIEW durable.task_queue_keys WITH (security_barrier = true) AS
    WITH ready AS (
        SELECT t.namespace, t.task_queue,
               CASE WHEN t.kind IN ('d', 'w') THEN 'decision' ELSE 'activity' END AS kind,
               t.concurrency_key,
               pg_catalog.count(*) AS ready_tasks,
               pg_catalog.min(t.priority) AS top_priority
          FROM durable.ready_tasks t
         WHERE t.kind IN ('d', 'a', 'w', 'x') AND t.not_before IS NULL
           AND t.concurrency_key OPERATOR(pg_catalog.<>) ''
           AND (durable.may_read_namespace(t.namespace)
                OR pg_catalog.pg_has_role('pg_monitor', 'USAGE'))
         GROUP BY 1, 2, 3, 4),
    started AS (
        SELECT s.namespace, s.task_queue, s.kind, s.concurrency_key,
               pg_catalog.count(*) AS started_tasks
          FROM durable.task_starts s
         WHERE s.concurrency_key OPERATOR(pg_catalog.<>) ''
           AND (durable.may_read_namespace(s.namespace)
                OR pg_catalog.pg_has_role('pg_monitor', 'USAGE'))
         GROUP BY 1, 2, 3, 4),
    own AS (
        SELECT l.* FROM durable.task_key_limits l
         WHERE l.concurrency_key OPERATOR(pg_catalog.<>) ''
           AND (durable.may_read_namespace(l.namespace)
                OR pg_catalog.pg_has_role('pg_monitor', 'USAGE'))),
    keys AS (
        SELECT namespace, task_queue, kind, concurrency_key FROM ready
        UNION SELECT namespace, task_queue, kind, concurrency_key FROM started
        UNION SELECT namespace, task_queue, kind, concurrency_key FROM own)
    SELECT k.namespace, k.task_queue, k.kind, k.concurrency_key,
           COALESCE(r.ready_tasks, 0) AS ready_tasks,
           r.top_priority,
           COALESCE(s.started_tasks, 0) AS started_tasks,
           COALESCE(o.max_concurrent, d.max_concurrent) AS max_concurrent,
           COALESCE(o.rate, d.rate) AS rate_limit,
           CASE WHEN o.rate IS NOT NULL THEN o.burst ELSE d.burst END AS rate_burst,
           COALESCE(o.weight, d.weight, 1) AS weight
      FROM keys k
      LEFT JOIN ready r USING (namespace, task_queue, kind, concurrency_key)
      LEFT JOIN started s USING (namespace, task_queue, kind, concurrency_key)
      LEFT JOIN own o USING (namespace, task_queue, kind, concurrency_key)
      LEFT JOIN durable.task_key_limits d
        ON d.namespace OPERATOR(pg_catalog.=) k.namespace
       AND d.task_queue OPERATOR(pg_catalog.=) k.task_queue
       AND d.kind OPERATOR(pg_catalog.=) k.kind
       AND d.concurrency_key OPERATOR(pg_catalog.=) '';
GRANT SELECT ON durable.task_queue_keys TO durable_client, durable_worker, durable_admin;

-- start_workflow, signal_with_start and start_workflow_eager take the new
-- run's priority and concurrency_key, added at the end with NULL defaults
-- (3 and none): every existing parameter keeps its name, position and
-- default.  The old signatures are dropped and the new ones made as before.
DROP FUNCTION durable.start_workflow(text, jsonb, text, text, text, jsonb, text,
    interval, interval, interval, text, interval, jsonb, jsonb);
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
        search_attributes jsonb DEFAULT NULL,
        priority integer DEFAULT NULL,
        concurrency_key text DEFAULT NULL)
    RETURNS uuid
    AS 'MODULE_PATHNAME', 'durable_start_workflow'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;

DROP FUNCTION durable.signal_with_start(text, text, text, jsonb, jsonb, text, text,
    jsonb, text, interval, interval, interval, text, interval, jsonb, jsonb);
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
        search_attributes jsonb DEFAULT NULL,
        priority integer DEFAULT NULL,
        concurrency_key text DEFAULT NULL)
    RETURNS uuid
    AS 'MODULE_PATHNAME', 'durable_signal_with_start'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;

DROP FUNCTION durable.start_workflow_eager(text, jsonb, text, text, text, jsonb,
    text, interval, interval, interval, text, interval, jsonb, jsonb, text);
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
        identity text DEFAULT NULL,
        priority integer DEFAULT NULL,
        concurrency_key text DEFAULT NULL)
    RETURNS jsonb
    AS 'MODULE_PATHNAME', 'durable_start_workflow_eager'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;

REVOKE ALL ON FUNCTION
    durable.start_workflow(text, jsonb, text, text, text, jsonb, text, interval,
                           interval, interval, text, interval, jsonb, jsonb,
                           integer, text),
    durable.signal_with_start(text, text, text, jsonb, jsonb, text, text, jsonb,
                              text, interval, interval, interval, text, interval,
                              jsonb, jsonb, integer, text),
    durable.start_workflow_eager(text, jsonb, text, text, text, jsonb, text,
                                 interval, interval, interval, text, interval,
                                 jsonb, jsonb, text, integer, text)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    durable.start_workflow(text, jsonb, text, text, text, jsonb, text, interval,
                           interval, interval, text, interval, jsonb, jsonb,
                           integer, text),
    durable.signal_with_start(text, text, text, jsonb, jsonb, text, text, jsonb,
                              text, interval, interval, interval, text, interval,
                              jsonb, jsonb, integer, text),
    durable.start_workflow_eager(text, jsonb, text, text, text, jsonb, text,
                                 interval, interval, interval, text, interval,
                                 jsonb, jsonb, text, integer, text)
    TO durable_client;

-- durable.workflows with each run's priority (3 unless given) and
-- concurrency key.
CREATE OR REPLACE VIEW durable.workflows WITH (security_barrier = true) AS
    SELECT r.namespace, r.workflow_id, r.run_id, r.workflow_type, r.task_queue,
           r.status, r.attempt, r.start_time, r.close_time,
           r.close_time OPERATOR(pg_catalog.-) r.start_time AS duration,
           r.input, r.result, r.failure, r.memo,
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
-- list_workflows shows the pause of each run, as durable.workflows does since
-- 0.8.0, and finds the paused ones (docs/api.md "Finding workflows").  Its
-- row type gets paused_at, paused_by and pause_reason after cursor, and the
-- function a last argument, paused: true for the paused runs, false for the
-- others, NULL (the default) for all.  The other arguments and columns keep
-- their places.  A cursor is bound to paused only when it is given, so that
-- a cursor made before the update still continues its list.  The function is
-- dropped and made again (a new argument is a new signature): SECURITY
-- INVOKER with engine_support, granted to durable_client, as 0.5.0 left it.
-- ---------------------------------------------------------------------------
DROP FUNCTION durable.list_workflows(text, text, text, text, text, timestamptz,
    timestamptz, timestamptz, timestamptz, jsonb, jsonb, integer, text);
ALTER TYPE durable.workflow_list_entry
    ADD ATTRIBUTE paused_at timestamptz,
    ADD ATTRIBUTE paused_by text,
    ADD ATTRIBUTE pause_reason text;

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
        '       r.input, r.result, r.failure, r.memo, r.cancel_requested, r.cron_schedule,'
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

REVOKE ALL ON FUNCTION durable.list_workflows(text, text, text, text, text, timestamptz,
    timestamptz, timestamptz, timestamptz, jsonb, jsonb, integer, text, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION durable.list_workflows(text, text, text, text, text, timestamptz,
    timestamptz, timestamptz, timestamptz, jsonb, jsonb, integer, text, boolean) TO durable_client;

-- ---------------------------------------------------------------------------
-- Retention of batch jobs (docs/operations.md "Batch operations"): a job
-- completed or canceled longer ago than its namespace's retention is purged
-- with its errors, as closed runs are, by durable.purge() and the timer
-- worker's purge (src/store/retention.c).  Running jobs are never purged.
-- This index serves that purge, oldest close first; it holds the finished
-- jobs only.
-- ---------------------------------------------------------------------------
CREATE INDEX batch_jobs_closed ON durable.batch_jobs (close_time)
    WHERE state OPERATOR(pg_catalog.<>) 'running';

-- ---------------------------------------------------------------------------
-- Batch operations that pause and resume workflows (docs/operations.md
-- "Batch operations"): 'pause' calls pause_workflow with the batch's reason,
-- 'resume' calls resume_workflow, on every run the filters match, as the
-- caller, as the other operations do.
-- ---------------------------------------------------------------------------
ALTER TABLE durable.batch_jobs DROP CONSTRAINT batch_jobs_operation_check;
ALTER TABLE durable.batch_jobs ADD CONSTRAINT batch_jobs_operation_check
    CHECK (operation IN ('terminate', 'cancel', 'signal', 'reset', 'restart',
                         'pause', 'resume'));
CREATE OR REPLACE FUNCTION durable.batch_check(
        operation text, namespace text, status text, workflow_type text,
        task_queue text, workflow_id_prefix text, started_since timestamptz,
        started_before timestamptz, closed_since timestamptz,
        closed_before timestamptz, search_attributes jsonb, memo jsonb,
        reason text, signal_name text, reset_to text)
    RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, durable, pg_temp
    AS $check$
BEGIN
    IF batch_check.operation IS NULL THEN
        RAISE EXCEPTION 'operation must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF batch_check.operation NOT IN ('terminate', 'cancel', 'signal', 'reset', 'restart',
                                   'pause', 'resume') THEN
        RAISE EXCEPTION 'operation "%" is not a batch operation',
                pg_catalog.left(batch_check.operation, 64)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give one of terminate, cancel, signal, reset, restart, pause, resume.';
    END IF;
    IF batch_check.namespace IS NULL THEN
        RAISE EXCEPTION 'namespace must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF batch_check.reason IS NULL THEN
        RAISE EXCEPTION 'reason must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF batch_check.reason OPERATOR(pg_catalog.=) ''
       OR pg_catalog.octet_length(batch_check.reason) OPERATOR(pg_catalog.>) 1000 THEN
        RAISE EXCEPTION 'reason must be 1 to 1000 bytes'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF batch_check.operation OPERATOR(pg_catalog.=) 'signal' THEN
        IF batch_check.signal_name IS NULL THEN
            RAISE EXCEPTION 'signal_name must not be null for a signal batch'
                USING ERRCODE = 'null_value_not_allowed';
        END IF;
        IF batch_check.signal_name OPERATOR(pg_catalog.=) ''
           OR pg_catalog.octet_length(batch_check.signal_name) OPERATOR(pg_catalog.>) 1000 THEN
            RAISE EXCEPTION 'signal_name must be 1 to 1000 bytes'
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
    ELSIF batch_check.signal_name IS NOT NULL THEN
        RAISE EXCEPTION 'signal_name is only for a signal batch'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF batch_check.operation OPERATOR(pg_catalog.=) 'reset' THEN
        IF batch_check.reset_to IS NOT NULL
           AND batch_check.reset_to NOT IN ('last_decision', 'first_decision') THEN
            RAISE EXCEPTION 'reset_to "%" is not a reset point',
                    pg_catalog.left(batch_check.reset_to, 64)
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Give last_decision (the default) or first_decision.';
        END IF;
    ELSIF batch_check.reset_to IS NOT NULL THEN
        RAISE EXCEPTION 'reset_to is only for a reset batch'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN durable.workflow_filter(batch_check.namespace, batch_check.status,
        batch_check.workflow_type, batch_check.task_queue,
        batch_check.workflow_id_prefix, batch_check.started_since,
        batch_check.started_before, batch_check.closed_since,
        batch_check.closed_before, batch_check.search_attributes,
        batch_check.memo);
END
$check$;

-- ---------------------------------------------------------------------------
-- The executors claim a namespace's SQL workflow and SQL activity tasks in
-- the priorities' order too (docs/task-queues.md "Priorities and fairness"):
-- their index, which the loose scan of namespaces walks
-- (src/store/executor_share.c), is on (namespace, priority, task_id).
-- ---------------------------------------------------------------------------
DROP INDEX durable.ready_tasks_executor_namespace;
CREATE INDEX ready_tasks_executor_namespace
    ON durable.ready_tasks (namespace, priority, task_id)
    WHERE kind IN ('w', 'x') AND not_before IS NULL;

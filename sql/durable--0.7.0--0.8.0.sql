-- durable 0.7.0 -> 0.8.0: flow control (limits, priorities, pauses and batch
-- operations) and fewer commits per workflow.
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

\echo Use "ALTER EXTENSION durable UPDATE TO '0.8.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Pausing a single workflow run (docs/task-queues.md "Pausing a workflow").
-- While a run is paused none of its tasks is handed out: its ready tasks
-- are held under the upper-case kinds 'D', 'A', 'W' and 'X' (of 'd', 'a',
-- 'w' and 'x'), which no claim reads, and the tasks it queues meanwhile are
-- written held; resuming moves them back under their old task ids.  Who
-- paused it (the calling role), when and why are kept in its row while it
-- is paused.  Pausing and resuming are client functions, granted as
-- terminate_workflow is: durable_client, with the namespace's 'client'
-- privilege.
ALTER TABLE durable.runs
    ADD COLUMN paused_at timestamptz,
    ADD COLUMN paused_by text,
    ADD COLUMN pause_reason text;
-- The paused runs, for the metrics' count.
CREATE INDEX runs_paused ON durable.runs (namespace, task_queue)
    WHERE paused_at IS NOT NULL;
ALTER TABLE durable.ready_tasks DROP CONSTRAINT ready_tasks_kind_check;
ALTER TABLE durable.ready_tasks ADD CONSTRAINT ready_tasks_kind_check
    CHECK (kind IN ('d', 'a', 'w', 'x', 'D', 'A', 'W', 'X'));

CREATE FUNCTION durable.pause_workflow(workflow_id text,
        run_id uuid DEFAULT NULL, reason text DEFAULT NULL,
        namespace text DEFAULT 'default')
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'durable_pause_workflow'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;
CREATE FUNCTION durable.resume_workflow(workflow_id text,
        run_id uuid DEFAULT NULL, namespace text DEFAULT 'default')
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'durable_resume_workflow'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;
REVOKE ALL ON FUNCTION durable.pause_workflow(text, uuid, text, text),
    durable.resume_workflow(text, uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION durable.pause_workflow(text, uuid, text, text),
    durable.resume_workflow(text, uuid, text) TO durable_client;

-- durable.workflows with the pause of each open run.
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
           r.paused_at, r.paused_by, r.pause_reason
      FROM durable.runs r
     WHERE durable.may_read_namespace(r.namespace);

-- ---------------------------------------------------------------------------
-- Limits of a task queue (docs/task-queues.md "Limits"): at most
-- max_concurrent tasks of a queue and kind started and not finished, and at
-- most rate task starts a second with a burst.  Decided where a poll claims
-- a task (src/store/task_limits.c), under an admission lock of the queue
-- held while the claim decides and claims, not to its commit.
-- durable.task_starts holds one row a task started under a concurrency
-- limit, counted by each claim; a row whose task has ended is dropped when
-- its attempt ends, or by the next claim that finds the queue full.  The
-- state of a rate limit is in shared memory.  Set by the namespace's owner
-- or a durable_admin member, as grants are.
CREATE TABLE durable.task_queue_limits (
    namespace       text NOT NULL,
    task_queue      text NOT NULL,
    kind            text NOT NULL CHECK (kind IN ('decision', 'activity')),
    max_concurrent  integer CHECK (max_concurrent >= 1),
    rate            float8 CHECK (rate > 0 AND rate <= 1e6),
    burst           integer CHECK (burst >= 1 AND burst <= 1000000),
    set_at          timestamptz NOT NULL,
    set_by          text NOT NULL,
    PRIMARY KEY (namespace, task_queue, kind),
    CHECK (max_concurrent IS NOT NULL OR rate IS NOT NULL),
    CHECK ((rate IS NULL) = (burst IS NULL))
);
SELECT pg_catalog.pg_extension_config_dump('durable.task_queue_limits', '');
GRANT SELECT ON durable.task_queue_limits TO durable_admin;

-- One row a start: an activity attempt by its scheduled event, a decision
-- task by its run (scheduled_event_id 0: a run has one started at a time).
CREATE TABLE durable.task_starts (
    namespace           text NOT NULL,
    task_queue          text NOT NULL,
    kind                text NOT NULL,
    run_id              uuid NOT NULL,
    scheduled_event_id  bigint NOT NULL,
    attempt             integer NOT NULL,
    started_at          timestamptz NOT NULL,
    PRIMARY KEY (namespace, task_queue, kind, run_id, scheduled_event_id)
);
SELECT pg_catalog.pg_extension_config_dump('durable.task_starts', '');
GRANT SELECT ON durable.task_starts TO durable_admin;

CREATE FUNCTION durable.set_task_queue_limits(task_queue text, kind text,
        max_concurrent integer DEFAULT NULL, rate double precision DEFAULT NULL,
        burst integer DEFAULT NULL, namespace text DEFAULT 'default')
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'durable_set_task_queue_limits'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;
REVOKE ALL ON FUNCTION durable.set_task_queue_limits(text, text, integer,
    double precision, integer, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION durable.set_task_queue_limits(text, text, integer,
    double precision, integer, text) TO durable_client, durable_worker, durable_admin;

-- durable.task_queues with the held tasks of paused runs (not ready: counted
-- apart, held_tasks, from the section above), then each queue's limits and
-- the tasks started under its concurrency limit (a queue with limits is
-- shown even when it holds no task).
CREATE OR REPLACE VIEW durable.task_queues WITH (security_barrier = true) AS
    WITH ready AS (
        SELECT t.namespace, t.task_queue,
               CASE WHEN t.kind IN ('d', 'w', 'D', 'W') THEN 'decision' ELSE 'activity' END AS kind,
               pg_catalog.count(*) FILTER (WHERE t.not_before IS NULL
                   AND t.kind IN ('d', 'a', 'w', 'x')) AS ready_tasks,
               pg_catalog.count(*) FILTER (WHERE t.not_before IS NOT NULL
                   AND t.kind IN ('d', 'a', 'w', 'x')) AS put_off,
               pg_catalog.count(*) FILTER (WHERE t.kind IN ('D', 'A', 'W', 'X')) AS held,
               pg_catalog.min(t.task_id) FILTER (WHERE t.not_before IS NULL
                   AND t.kind IN ('d', 'a', 'w', 'x')) AS oldest_task_id
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
    paused AS (
        SELECT p.namespace, p.task_queue, k.kind,
               p.paused_at, p.paused_by, p.reason
          FROM durable.paused_task_queues p
         CROSS JOIN (VALUES ('decision'), ('activity')) k (kind)
         WHERE durable.may_read_namespace(p.namespace)
            OR pg_catalog.pg_has_role('pg_monitor', 'USAGE')),
    limited AS (
        SELECT l.namespace, l.task_queue, l.kind, l.max_concurrent,
               l.rate, l.burst,
               (SELECT pg_catalog.count(*) FROM durable.task_starts s
                 WHERE s.namespace OPERATOR(pg_catalog.=) l.namespace
                   AND s.task_queue OPERATOR(pg_catalog.=) l.task_queue
                   AND s.kind OPERATOR(pg_catalog.=) l.kind
                   AND CASE WHEN s.kind OPERATOR(pg_catalog.=) 'activity'
                       THEN EXISTS (SELECT 1 FROM durable.activities a
                                     WHERE a.run_id OPERATOR(pg_catalog.=) s.run_id
                                       AND a.scheduled_event_id OPERATOR(pg_catalog.=) s.scheduled_event_id
                                       AND a.attempt OPERATOR(pg_catalog.=) s.attempt
                                       AND a.started_time IS NOT NULL)
                       ELSE EXISTS (SELECT 1 FROM durable.runs r
                                     WHERE r.run_id OPERATOR(pg_catalog.=) s.run_id
                                       AND r.status OPERATOR(pg_catalog.=) 'running'
                                       AND r.decision_started_id OPERATOR(pg_catalog.<>) 0)
                       END) AS started
          FROM durable.task_queue_limits l
         WHERE durable.may_read_namespace(l.namespace)
            OR pg_catalog.pg_has_role('pg_monitor', 'USAGE')),
    queues AS (
        SELECT namespace, task_queue, kind FROM ready
        UNION SELECT namespace, task_queue, kind FROM waiting
        UNION SELECT namespace, task_queue, kind FROM pollers
        UNION SELECT namespace, task_queue, kind FROM registered
        UNION SELECT namespace, task_queue, kind FROM paused
        UNION SELECT namespace, task_queue, kind FROM limited)
    SELECT q.namespace, q.task_queue, q.kind,
           COALESCE(r.ready_tasks, 0) AS ready_tasks,
           o.oldest_ready_time,
           durable.now() OPERATOR(pg_catalog.-) o.oldest_ready_time AS oldest_ready_age,
           (COALESCE(w.waiting, 0) OPERATOR(pg_catalog.+) COALESCE(r.put_off, 0)) AS waiting_on_timer,
           COALESCE(p.pollers, '[]'::jsonb) AS pollers,
           p.last_poll_time,
           COALESCE(g.executor_types, '{}'::text[]) AS executor_types,
           s.paused_at, s.paused_by, s.reason AS pause_reason,
           COALESCE(r.held, 0) AS held_tasks,
           l.max_concurrent, l.started AS started_tasks,
           l.rate AS rate_limit, l.burst AS rate_burst
      FROM queues q
      LEFT JOIN ready r USING (namespace, task_queue, kind)
      LEFT JOIN oldest o USING (namespace, task_queue, kind)
      LEFT JOIN waiting w USING (namespace, task_queue, kind)
      LEFT JOIN pollers p USING (namespace, task_queue, kind)
      LEFT JOIN registered g USING (namespace, task_queue, kind)
      LEFT JOIN paused s USING (namespace, task_queue, kind)
      LEFT JOIN limited l USING (namespace, task_queue, kind);
-- Batch operations (docs/operations.md "Batch operations"): terminate,
-- cancel, signal, reset or restart every run that list_workflows' filters
-- match, as Temporal's batch operations do.  start_batch records a job;
-- the timer worker of the database (src/bgw/timer_worker.c), or
-- run_batches(), works through its runs a slice per transaction, in the
-- order (start_time, run_id), keeping its position in the job's row, and
-- calls the API function on each run as the role that started the job
-- (src/api/batch.c); run_as is a regrole, as in durable.registrations, so
-- that a dump restored into another cluster keeps the role by its name.
-- Only runs that existed when the job started are
-- touched: run_seq at most max_run_seq, so the runs a reset or restart
-- makes are not reached again.

-- ---------------------------------------------------------------------------

CREATE TABLE durable.batch_jobs (
    batch_id        uuid PRIMARY KEY,
    namespace       text NOT NULL,
    operation       text NOT NULL
        CHECK (operation IN ('terminate', 'cancel', 'signal', 'reset', 'restart')),
    filters         jsonb NOT NULL,
    condition       text NOT NULL,
    reason          text NOT NULL,
    signal_name     text,
    input           jsonb,
    reset_to        text CHECK (reset_to IN ('last_decision', 'first_decision')),
    run_as          regrole NOT NULL,
    started_by      text NOT NULL,
    state           text NOT NULL DEFAULT 'running'
        CHECK (state IN ('running', 'completed', 'canceled')),
    total           bigint NOT NULL,
    max_run_seq     bigint NOT NULL,
    touched         bigint NOT NULL DEFAULT 0,
    skipped         bigint NOT NULL DEFAULT 0,
    failed          bigint NOT NULL DEFAULT 0,
    after_time      timestamptz,
    after_run       uuid,
    start_time      timestamptz NOT NULL,
    update_time     timestamptz NOT NULL,
    close_time      timestamptz,
    canceled_by     text
);
CREATE INDEX batch_jobs_running ON durable.batch_jobs (start_time)
    WHERE state OPERATOR(pg_catalog.=) 'running';
SELECT pg_catalog.pg_extension_config_dump('durable.batch_jobs', '');
GRANT SELECT ON durable.batch_jobs TO durable_admin;

-- The first 1000 errors of a job, one per run.
CREATE TABLE durable.batch_job_errors (
    batch_id        uuid NOT NULL REFERENCES durable.batch_jobs ON DELETE CASCADE,
    run_id          uuid NOT NULL,
    workflow_id     text NOT NULL,
    sqlstate        text NOT NULL,
    message         text NOT NULL,
    error_time      timestamptz NOT NULL,
    PRIMARY KEY (batch_id, run_id)
);
SELECT pg_catalog.pg_extension_config_dump('durable.batch_job_errors', '');
GRANT SELECT ON durable.batch_job_errors TO durable_admin;

-- The jobs and errors of the namespaces where the current user has
-- 'client' (barriers, as the other views: docs/privileges.md).
CREATE VIEW durable.batches WITH (security_barrier = true) AS
    SELECT b.batch_id, b.namespace, b.operation, b.state, b.filters, b.reason,
           b.signal_name, b.input, b.reset_to, b.started_by, b.total,
           b.touched, b.skipped, b.failed,
           (b.touched OPERATOR(pg_catalog.+) b.skipped OPERATOR(pg_catalog.+) b.failed) AS done,
           b.start_time, b.update_time, b.close_time, b.canceled_by
      FROM durable.batch_jobs b
     WHERE durable.may_read_namespace(b.namespace);
CREATE VIEW durable.batch_errors WITH (security_barrier = true) AS
    SELECT e.batch_id, b.namespace, e.run_id, e.workflow_id, e.sqlstate, e.message,
           e.error_time
      FROM durable.batch_job_errors e
      JOIN durable.batch_jobs b USING (batch_id)
     WHERE durable.may_read_namespace(b.namespace);
GRANT SELECT ON durable.batches, durable.batch_errors TO durable_client;

-- Internal: the role of the API call under way (src/base/caller.c), and a
-- wake-up of the database's timer worker at commit.
CREATE FUNCTION durable.batch_caller() RETURNS oid
    AS 'MODULE_PATHNAME', 'durable_batch_caller'
    LANGUAGE C VOLATILE;
REVOKE ALL ON FUNCTION durable.batch_caller() FROM PUBLIC;

-- Internal: check a batch's arguments for the caller of the API and return
-- the condition of workflow_filter on durable.runs r.  Called as the owner
-- by preview_batch and start_batch.
CREATE FUNCTION durable.batch_check(
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
    IF batch_check.operation NOT IN ('terminate', 'cancel', 'signal', 'reset', 'restart') THEN
        RAISE EXCEPTION 'operation "%" is not a batch operation',
                pg_catalog.left(batch_check.operation, 64)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give one of terminate, cancel, signal, reset, restart.';
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
REVOKE ALL ON FUNCTION durable.batch_check(text, text, text, text, text, text,
    timestamptz, timestamptz, timestamptz, timestamptz, jsonb, jsonb, text, text, text)
    FROM PUBLIC;

-- Internal: the next runs of a job after its position, at most max_runs,
-- in the order (start_time, run_id); the filters' values are $1 .. $11 of
-- its condition, as in list_workflows.
CREATE FUNCTION durable.batch_page(batch_id uuid, max_runs integer)
    RETURNS TABLE (run_id uuid, workflow_id text, start_time timestamptz)
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, durable, pg_temp
    AS $page$
DECLARE
    b durable.batch_jobs;
    f jsonb;
BEGIN
    SELECT * INTO b FROM durable.batch_jobs j
     WHERE j.batch_id OPERATOR(pg_catalog.=) batch_page.batch_id;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    f := b.filters;
    RETURN QUERY EXECUTE
        'SELECT r.run_id, r.workflow_id, r.start_time FROM durable.runs r WHERE '
        OPERATOR(pg_catalog.||) b.condition OPERATOR(pg_catalog.||)
        ' AND r.run_seq OPERATOR(pg_catalog.<=) $12'
        OPERATOR(pg_catalog.||)
        CASE WHEN b.after_run IS NULL THEN ''
             ELSE ' AND (r.start_time, r.run_id) OPERATOR(pg_catalog.>) ($13, $14)' END
        OPERATOR(pg_catalog.||)
        ' ORDER BY r.start_time, r.run_id LIMIT $15'
        USING b.namespace, f->>'status', f->>'workflow_type', f->>'task_queue',
              pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(
                  f->>'workflow_id_prefix', '\', '\\'), '%', '\%'), '_', '\_')
                  OPERATOR(pg_catalog.||) '%',
              (f->>'started_since')::timestamptz, (f->>'started_before')::timestamptz,
              (f->>'closed_since')::timestamptz, (f->>'closed_before')::timestamptz,
              f->'search_attributes', f->'memo',
              b.max_run_seq, b.after_time, b.after_run, batch_page.max_runs;
END
$page$;
REVOKE ALL ON FUNCTION durable.batch_page(uuid, integer) FROM PUBLIC;

-- The dry run of start_batch: its checks, and how many runs match now.
CREATE FUNCTION durable.preview_batch(
        operation text,
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
        reason text DEFAULT NULL,
        signal_name text DEFAULT NULL,
        input jsonb DEFAULT NULL,
        reset_to text DEFAULT NULL)
    RETURNS bigint
    LANGUAGE plpgsql STABLE
    SECURITY INVOKER
    SET search_path = pg_catalog, durable, pg_temp
    AS $preview$
DECLARE
    cond text;
    n bigint;
BEGIN
    cond := durable.batch_check(preview_batch.operation, preview_batch.namespace,
        preview_batch.status, preview_batch.workflow_type, preview_batch.task_queue,
        preview_batch.workflow_id_prefix, preview_batch.started_since,
        preview_batch.started_before, preview_batch.closed_since,
        preview_batch.closed_before, preview_batch.search_attributes,
        preview_batch.memo, COALESCE(preview_batch.reason, 'preview'),
        preview_batch.signal_name, preview_batch.reset_to);
    EXECUTE 'SELECT pg_catalog.count(*) FROM durable.runs r WHERE '
            OPERATOR(pg_catalog.||) cond
       INTO n
      USING preview_batch.namespace, preview_batch.status,
            preview_batch.workflow_type, preview_batch.task_queue,
            pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(
                preview_batch.workflow_id_prefix, '\', '\\'), '%', '\%'), '_', '\_')
                OPERATOR(pg_catalog.||) '%',
            preview_batch.started_since, preview_batch.started_before,
            preview_batch.closed_since, preview_batch.closed_before,
            preview_batch.search_attributes, preview_batch.memo;
    RETURN n;
END
$preview$ SUPPORT durable.engine_support;

-- Start a job; returns its id.  The caller needs 'client' on the namespace
-- (else 42501 and no job); each run is then touched as the caller would
-- touch it with the operation's function.
CREATE FUNCTION durable.start_batch(
        operation text,
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
        reason text DEFAULT NULL,
        signal_name text DEFAULT NULL,
        input jsonb DEFAULT NULL,
        reset_to text DEFAULT NULL)
    RETURNS uuid
    LANGUAGE plpgsql VOLATILE
    SECURITY INVOKER
    SET search_path = pg_catalog, durable, pg_temp
    AS $start$
DECLARE
    cond text;
    id uuid := pg_catalog.gen_random_uuid();
    caller oid;
    n bigint;
    hw bigint;
BEGIN
    cond := durable.batch_check(start_batch.operation, start_batch.namespace,
        start_batch.status, start_batch.workflow_type, start_batch.task_queue,
        start_batch.workflow_id_prefix, start_batch.started_since,
        start_batch.started_before, start_batch.closed_since,
        start_batch.closed_before, start_batch.search_attributes,
        start_batch.memo, start_batch.reason, start_batch.signal_name,
        start_batch.reset_to);
    caller := durable.batch_caller();
    -- Every run committed before this point has a run_seq at most this.
    SELECT CASE WHEN s.is_called THEN s.last_value ELSE 0 END INTO hw
      FROM durable.run_seq s;
    EXECUTE 'SELECT pg_catalog.count(*) FROM durable.runs r WHERE '
            OPERATOR(pg_catalog.||) cond
            OPERATOR(pg_catalog.||) ' AND r.run_seq OPERATOR(pg_catalog.<=) $12'
       INTO n
      USING start_batch.namespace, start_batch.status,
            start_batch.workflow_type, start_batch.task_queue,
            pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(
                start_batch.workflow_id_prefix, '\', '\\'), '%', '\%'), '_', '\_')
                OPERATOR(pg_catalog.||) '%',
            start_batch.started_since, start_batch.started_before,
            start_batch.closed_since, start_batch.closed_before,
            start_batch.search_attributes, start_batch.memo, hw;
    INSERT INTO durable.batch_jobs (batch_id, namespace, operation, filters, condition,
            reason, signal_name, input, reset_to, run_as, started_by, total,
            max_run_seq, start_time, update_time)
    VALUES (id, start_batch.namespace, start_batch.operation,
            pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object(
                'status', start_batch.status,
                'workflow_type', start_batch.workflow_type,
                'task_queue', start_batch.task_queue,
                'workflow_id_prefix', NULLIF(start_batch.workflow_id_prefix, ''),
                'started_since', start_batch.started_since,
                'started_before', start_batch.started_before,
                'closed_since', start_batch.closed_since,
                'closed_before', start_batch.closed_before,
                'search_attributes', start_batch.search_attributes,
                'memo', start_batch.memo)),
            cond, start_batch.reason, start_batch.signal_name, start_batch.input,
            CASE WHEN start_batch.operation OPERATOR(pg_catalog.=) 'reset'
                 THEN COALESCE(start_batch.reset_to, 'last_decision') END,
            caller::pg_catalog.regrole, pg_catalog.pg_get_userbyid(caller), n, hw,
            durable.now(), durable.now());
    RETURN id;
END
$start$ SUPPORT durable.engine_support;

-- Cancel a running job: it touches no run after this commits.  True if it
-- was running.
CREATE FUNCTION durable.cancel_batch(batch_id uuid)
    RETURNS boolean
    LANGUAGE plpgsql VOLATILE
    SECURITY INVOKER
    SET search_path = pg_catalog, durable, pg_temp
    AS $cancel$
DECLARE
    ns text;
    st text;
BEGIN
    IF cancel_batch.batch_id IS NULL THEN
        RAISE EXCEPTION 'batch_id must not be null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT b.namespace, b.state INTO ns, st FROM durable.batch_jobs b
     WHERE b.batch_id OPERATOR(pg_catalog.=) cancel_batch.batch_id FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'batch "%" not found', cancel_batch.batch_id
            USING ERRCODE = 'WF002';
    END IF;
    PERFORM durable.check_namespace_read(ns);
    IF st OPERATOR(pg_catalog.<>) 'running' THEN
        RETURN false;
    END IF;
    UPDATE durable.batch_jobs b
       SET state = 'canceled', close_time = durable.now(), update_time = durable.now(),
           canceled_by = pg_catalog.pg_get_userbyid(durable.batch_caller())
     WHERE b.batch_id OPERATOR(pg_catalog.=) cancel_batch.batch_id;
    RETURN true;
END
$cancel$ SUPPORT durable.engine_support;

-- Work through running jobs, at most max_runs runs in all, in the
-- caller's transaction (the timer worker does this a slice per
-- transaction); returns the number of runs done.
CREATE FUNCTION durable.run_batches(max_runs integer DEFAULT 500) RETURNS integer
    AS 'MODULE_PATHNAME', 'durable_run_batches'
    LANGUAGE C VOLATILE STRICT
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;

REVOKE ALL ON FUNCTION durable.preview_batch(text, text, text, text, text, text,
        timestamptz, timestamptz, timestamptz, timestamptz, jsonb, jsonb, text, text,
        jsonb, text),
    durable.start_batch(text, text, text, text, text, text,
        timestamptz, timestamptz, timestamptz, timestamptz, jsonb, jsonb, text, text,
        jsonb, text),
    durable.cancel_batch(uuid),
    durable.run_batches(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION durable.preview_batch(text, text, text, text, text, text,
        timestamptz, timestamptz, timestamptz, timestamptz, jsonb, jsonb, text, text,
        jsonb, text),
    durable.start_batch(text, text, text, text, text, text,
        timestamptz, timestamptz, timestamptz, timestamptz, jsonb, jsonb, text, text,
        jsonb, text),
    durable.cancel_batch(uuid) TO durable_client;
GRANT EXECUTE ON FUNCTION durable.run_batches(integer) TO durable_admin;

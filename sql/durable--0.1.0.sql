-- durable 0.1.0: schema, client API, timers.
--
-- Every table here is state derived from durable.history, kept for fast access,
-- except durable.history itself, which is the source of truth.  No table is
-- writable by PUBLIC; the API functions are SECURITY DEFINER with a fixed
-- search_path and are granted per group (durable_client, durable_worker,
-- durable_admin).

\echo Use "CREATE EXTENSION durable" to load this file. \quit

-- Group roles.  Roles are cluster-wide, so a second database that installs the
-- extension finds them already there.
DO $roles$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'durable_client') THEN
        CREATE ROLE durable_client NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'durable_worker') THEN
        CREATE ROLE durable_worker NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'durable_admin') THEN
        CREATE ROLE durable_admin NOLOGIN;
    END IF;
END
$roles$;

-- Namespaces: isolation scopes (Cadence's domains).
CREATE TABLE durable.namespaces (
    name                    text PRIMARY KEY,
    retention               interval NOT NULL DEFAULT '7 days',
    activity_retry_policy   jsonb NOT NULL DEFAULT
        '{"initialIntervalInSeconds": 1, "backoffCoefficient": 2.0, "maximumIntervalInSeconds": 100, "expirationIntervalInSeconds": 0, "maximumAttempts": 10, "nonRetriableErrorReasons": []}',
    description             text NOT NULL DEFAULT '',
    created_at              timestamptz NOT NULL DEFAULT pg_catalog.now()
);
INSERT INTO durable.namespaces (name, description)
    VALUES ('default', 'created by CREATE EXTENSION durable');

-- Backends cache namespaces; a change to the table invalidates their caches.
CREATE FUNCTION durable.namespaces_changed() RETURNS trigger
    AS 'MODULE_PATHNAME', 'durable_namespaces_changed'
    LANGUAGE C;
CREATE TRIGGER namespaces_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON durable.namespaces
    FOR EACH STATEMENT EXECUTE FUNCTION durable.namespaces_changed();

CREATE SEQUENCE durable.run_seq;

-- One row a workflow run.  Columns that change while a run is open are kept out
-- of every index, so that those updates are HOT.
CREATE TABLE durable.runs (
    run_id                  uuid PRIMARY KEY,
    run_seq                 bigint NOT NULL,
    namespace               text NOT NULL,
    workflow_id             text NOT NULL,
    workflow_type           text NOT NULL,
    task_queue              text NOT NULL,
    status                  text NOT NULL DEFAULT 'running'
        CHECK (status IN ('running', 'completed', 'failed', 'canceled',
                          'terminated', 'continued_as_new', 'timed_out')),
    input                   jsonb,
    attempt                 integer NOT NULL DEFAULT 1,
    first_run_id            uuid NOT NULL,
    chain_start_time        timestamptz NOT NULL,
    continued_from          uuid,
    continued_to            uuid,
    start_time              timestamptz NOT NULL,
    close_time              timestamptz,
    result                  jsonb,
    failure                 jsonb,
    retry_policy            jsonb,
    execution_timeout       float8,
    run_timeout             float8,
    decision_timeout        float8 NOT NULL,
    execution_deadline      timestamptz,
    cron_schedule           text,
    memo                    jsonb,
    search_attributes       jsonb,
    parent_namespace        text,
    parent_workflow_id      text,
    parent_run_id           uuid,
    parent_initiated_id     bigint,
    cancel_requested        boolean NOT NULL DEFAULT false,
    last_event_id           bigint NOT NULL DEFAULT 0,
    decision_scheduled_id   bigint NOT NULL DEFAULT 0,
    decision_started_id     bigint NOT NULL DEFAULT 0,
    decision_attempt        integer NOT NULL DEFAULT 0,
    decision_started_time   timestamptz,
    previous_started_id     bigint NOT NULL DEFAULT 0,
    activity_attempts       integer NOT NULL DEFAULT 0,
    has_buffered            boolean NOT NULL DEFAULT false
) WITH (fillfactor = 80);

-- At most one running execution per (namespace, workflow_id), whatever its type.
CREATE UNIQUE INDEX runs_one_running
    ON durable.runs (namespace, workflow_id) WHERE status = 'running';
-- The chain of runs of a workflow_id, latest first.
CREATE INDEX runs_by_workflow_id
    ON durable.runs (namespace, workflow_id, run_seq DESC);
-- Retention: closed runs by close time.
CREATE INDEX runs_closed
    ON durable.runs (close_time) WHERE status <> 'running';

-- The history of every run: append-only, event ids from 1 per run.
CREATE TABLE durable.history (
    run_id          uuid NOT NULL,
    event_id        bigint NOT NULL,
    event_time      timestamptz NOT NULL,
    event_type      text NOT NULL,
    attributes      jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (run_id, event_id)
);

-- Events that arrived while a decision task was started; appended after its
-- DecisionTaskCompleted, as Cadence does (docs/api.md "Failed decision tasks,
-- buffered events").
CREATE SEQUENCE durable.buffered_event_seq;
CREATE TABLE durable.buffered_events (
    run_id          uuid NOT NULL,
    seq             bigint NOT NULL DEFAULT pg_catalog.nextval('durable.buffered_event_seq'),
    event_time      timestamptz NOT NULL,
    event_type      text NOT NULL,
    attributes      jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (run_id, seq)
);

-- Tasks ready to be polled: small, claimed with FOR UPDATE SKIP LOCKED and
-- deleted by the claim.  kind 'd' is a decision task, 'a' an activity task.
CREATE SEQUENCE durable.ready_task_seq;
CREATE TABLE durable.ready_tasks (
    namespace           text NOT NULL,
    task_queue          text NOT NULL,
    kind                "char" NOT NULL CHECK (kind IN ('d', 'a')),
    task_id             bigint NOT NULL DEFAULT pg_catalog.nextval('durable.ready_task_seq'),
    run_id              uuid NOT NULL,
    scheduled_event_id  bigint NOT NULL,
    attempt             integer NOT NULL DEFAULT 1,
    -- The claim order of a queue: oldest first.
    PRIMARY KEY (namespace, task_queue, kind, task_id)
);
-- Closing a run drops its tasks.
CREATE INDEX ready_tasks_by_run ON durable.ready_tasks (run_id);

-- Durable timers.  A timer is deleted in the same transaction as its effect, and
-- only while its run's row is locked.
CREATE TABLE durable.timers (
    run_id          uuid NOT NULL,
    kind            text NOT NULL,
    ref_id          bigint NOT NULL DEFAULT 0,
    due_at          timestamptz NOT NULL,
    attempt         integer NOT NULL DEFAULT 0,
    -- What the handler needs, for work between two runs (children.c).
    payload         jsonb,
    PRIMARY KEY (run_id, kind, ref_id)
);
CREATE INDEX timers_due ON durable.timers (due_at);

-- Pending activities: one row from ActivityTaskScheduled until the activity
-- completes, fails, times out or is canceled for good.
CREATE TABLE durable.activities (
    run_id                  uuid NOT NULL,
    scheduled_event_id      bigint NOT NULL,
    namespace               text NOT NULL,
    workflow_id             text NOT NULL,
    activity_id             text NOT NULL,
    activity_type           text NOT NULL,
    task_queue              text NOT NULL,
    input                   jsonb,
    state                   text NOT NULL DEFAULT 'SCHEDULED'
        CHECK (state IN ('SCHEDULED', 'STARTED', 'CANCEL_REQUESTED')),
    attempt                 integer NOT NULL DEFAULT 1,
    retry_policy            jsonb,
    schedule_to_start_timeout float8,
    start_to_close_timeout  float8,
    schedule_to_close_timeout float8,
    heartbeat_timeout       float8,
    first_scheduled_time    timestamptz NOT NULL,
    scheduled_time          timestamptz NOT NULL,
    started_time            timestamptz,
    last_heartbeat_time     timestamptz,
    heartbeat_details       jsonb,
    last_failure_reason     text,
    last_failure_details    jsonb,
    next_attempt_time       timestamptz,
    last_worker_identity    text,
    cancel_requested        boolean NOT NULL DEFAULT false,
    PRIMARY KEY (run_id, scheduled_event_id)
) WITH (fillfactor = 80);
CREATE UNIQUE INDEX activities_by_activity_id
    ON durable.activities (run_id, activity_id);

-- One row an activity attempt that has ended (the running attempt is in
-- durable.activities).  Failed attempts and the retries they scheduled live
-- here, not in history, which records an activity's final attempt only
-- (docs/api.md "Activities: retries, timeouts, heartbeats").
CREATE TABLE durable.activity_attempt_log (
    run_id              uuid NOT NULL,
    scheduled_event_id  bigint NOT NULL,
    attempt             integer NOT NULL,
    activity_id         text NOT NULL,
    activity_type       text NOT NULL,
    worker_identity     text,
    scheduled_time      timestamptz NOT NULL,
    started_time        timestamptz,
    end_time            timestamptz NOT NULL,
    outcome             text NOT NULL
        CHECK (outcome IN ('completed', 'failed', 'timed_out', 'canceled')),
    failure_reason      text,
    failure_details     jsonb,
    next_retry_time     timestamptz,
    PRIMARY KEY (run_id, scheduled_event_id, attempt)
);

-- Pending children: one row from ChildWorkflowExecutionStarted until the
-- parent hears how the child's chain ended, or closes (and applies
-- parent_close_policy).  Changed only under the parent's row lock.
CREATE TABLE durable.children (
    parent_run_id       uuid NOT NULL,
    initiated_event_id  bigint NOT NULL,
    namespace           text NOT NULL,
    workflow_id         text NOT NULL,
    run_id              uuid NOT NULL,      -- the first run of the child's chain
    workflow_type       text NOT NULL,
    parent_close_policy text NOT NULL
        CHECK (parent_close_policy IN ('TERMINATE', 'REQUEST_CANCEL', 'ABANDON')),
    started_event_id    bigint NOT NULL,
    PRIMARY KEY (parent_run_id, initiated_event_id)
);

-- Pending user timers (StartTimer decisions).
CREATE TABLE durable.user_timers (
    run_id              uuid NOT NULL,
    timer_id            text NOT NULL,
    started_event_id    bigint NOT NULL,
    fire_time           timestamptz NOT NULL,
    PRIMARY KEY (run_id, timer_id)
);

-- pg_dump keeps workflows.  The default namespace is created by CREATE
-- EXTENSION, so only the others are dumped.
SELECT pg_catalog.pg_extension_config_dump('durable.namespaces', $$WHERE name <> 'default'$$);
SELECT pg_catalog.pg_extension_config_dump('durable.runs', '');
SELECT pg_catalog.pg_extension_config_dump('durable.history', '');
SELECT pg_catalog.pg_extension_config_dump('durable.buffered_events', '');
SELECT pg_catalog.pg_extension_config_dump('durable.ready_tasks', '');
SELECT pg_catalog.pg_extension_config_dump('durable.timers', '');
SELECT pg_catalog.pg_extension_config_dump('durable.activities', '');
SELECT pg_catalog.pg_extension_config_dump('durable.activity_attempt_log', '');
SELECT pg_catalog.pg_extension_config_dump('durable.user_timers', '');
SELECT pg_catalog.pg_extension_config_dump('durable.children', '');
SELECT pg_catalog.pg_extension_config_dump('durable.run_seq', '');
SELECT pg_catalog.pg_extension_config_dump('durable.buffered_event_seq', '');
SELECT pg_catalog.pg_extension_config_dump('durable.ready_task_seq', '');

-- Views for people and dashboards.
CREATE VIEW durable.workflows AS
    SELECT r.namespace, r.workflow_id, r.run_id, r.workflow_type, r.task_queue,
           r.status, r.attempt, r.start_time, r.close_time,
           r.close_time - r.start_time AS duration,
           r.input, r.result, r.failure, r.memo,
           r.cancel_requested, r.cron_schedule,
           r.parent_workflow_id, r.parent_run_id,
           r.continued_from, r.continued_to, r.first_run_id,
           r.last_event_id AS history_length
      FROM durable.runs r;

CREATE VIEW durable.activity_attempts AS
    SELECT r.namespace, r.workflow_id, l.run_id, l.scheduled_event_id,
           l.activity_id, l.activity_type, l.attempt, l.outcome,
           l.failure_reason, l.failure_details, l.worker_identity,
           l.scheduled_time, l.started_time, l.end_time, l.next_retry_time
      FROM durable.activity_attempt_log l
      JOIN durable.runs r USING (run_id)
    UNION ALL
    SELECT r.namespace, r.workflow_id, a.run_id, a.scheduled_event_id,
           a.activity_id, a.activity_type, a.attempt,
           CASE WHEN a.state = 'SCHEDULED' THEN 'scheduled' ELSE 'running' END,
           NULL::text, NULL::jsonb, a.last_worker_identity,
           a.scheduled_time, a.started_time, NULL::timestamptz, NULL::timestamptz
      FROM durable.activities a
      JOIN durable.runs r USING (run_id)
     WHERE a.next_attempt_time IS NULL;

-- The engine's clock and tick.

CREATE FUNCTION durable.now() RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'durable_now'
    LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE FUNCTION durable.tick(max_items integer DEFAULT 10000) RETURNS integer
    AS 'MODULE_PATHNAME', 'durable_tick'
    LANGUAGE C VOLATILE STRICT
    SECURITY DEFINER SET search_path = durable, pg_catalog, pg_temp;

-- Retention: purge closed runs past their namespace's retention.
CREATE FUNCTION durable.purge(max_runs integer DEFAULT 1000) RETURNS integer
    AS 'MODULE_PATHNAME', 'durable_purge'
    LANGUAGE C VOLATILE STRICT
    SECURITY DEFINER SET search_path = durable, pg_catalog, pg_temp;

-- Namespaces.
CREATE FUNCTION durable.create_namespace(
        name text,
        retention interval DEFAULT '7 days',
        activity_retry_policy jsonb DEFAULT NULL,
        description text DEFAULT '')
    RETURNS void
    AS 'MODULE_PATHNAME', 'durable_create_namespace'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = durable, pg_catalog, pg_temp;

CREATE FUNCTION durable.alter_namespace(
        name text,
        retention interval DEFAULT NULL,
        activity_retry_policy jsonb DEFAULT NULL,
        description text DEFAULT NULL)
    RETURNS void
    AS 'MODULE_PATHNAME', 'durable_alter_namespace'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = durable, pg_catalog, pg_temp;

CREATE FUNCTION durable.drop_namespace(name text)
    RETURNS void
    AS 'MODULE_PATHNAME', 'durable_drop_namespace'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = durable, pg_catalog, pg_temp;

CREATE FUNCTION durable.retry_policy(
        initial_interval interval,
        backoff_coefficient float8 DEFAULT 2.0,
        maximum_interval interval DEFAULT NULL,
        expiration_interval interval DEFAULT NULL,
        maximum_attempts integer DEFAULT 0,
        non_retryable_error_reasons text[] DEFAULT '{}')
    RETURNS jsonb
    AS 'MODULE_PATHNAME', 'durable_retry_policy'
    LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION durable.retry_delay(retry_policy jsonb, failed_attempt integer)
    RETURNS interval
    AS 'MODULE_PATHNAME', 'durable_retry_delay'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION durable.cron_next(schedule text, after timestamptz DEFAULT durable.now())
    RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'durable_cron_next'
    LANGUAGE C STABLE STRICT PARALLEL SAFE;

-- Client API.

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
        memo jsonb DEFAULT NULL)
    RETURNS uuid
    AS 'MODULE_PATHNAME', 'durable_start_workflow'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = durable, pg_catalog, pg_temp;

CREATE FUNCTION durable.signal_workflow(
        workflow_id text,
        signal_name text,
        input jsonb DEFAULT NULL,
        namespace text DEFAULT 'default',
        run_id uuid DEFAULT NULL)
    RETURNS void
    AS 'MODULE_PATHNAME', 'durable_signal_workflow'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = durable, pg_catalog, pg_temp;

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
        memo jsonb DEFAULT NULL)
    RETURNS uuid
    AS 'MODULE_PATHNAME', 'durable_signal_with_start'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = durable, pg_catalog, pg_temp;

CREATE FUNCTION durable.cancel_workflow(
        workflow_id text,
        reason text DEFAULT NULL,
        namespace text DEFAULT 'default',
        run_id uuid DEFAULT NULL)
    RETURNS void
    AS 'MODULE_PATHNAME', 'durable_cancel_workflow'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = durable, pg_catalog, pg_temp;

CREATE FUNCTION durable.terminate_workflow(
        workflow_id text,
        reason text DEFAULT NULL,
        details jsonb DEFAULT NULL,
        namespace text DEFAULT 'default',
        run_id uuid DEFAULT NULL)
    RETURNS void
    AS 'MODULE_PATHNAME', 'durable_terminate_workflow'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = durable, pg_catalog, pg_temp;

CREATE FUNCTION durable.resolve_run_id(
        workflow_id text,
        namespace text DEFAULT 'default',
        run_id uuid DEFAULT NULL)
    RETURNS uuid
    AS 'MODULE_PATHNAME', 'durable_resolve_run_id'
    LANGUAGE C STABLE
    SECURITY DEFINER SET search_path = durable, pg_catalog, pg_temp;

CREATE FUNCTION durable.describe_workflow(
        workflow_id text,
        namespace text DEFAULT 'default',
        run_id uuid DEFAULT NULL)
    RETURNS jsonb
    AS 'MODULE_PATHNAME', 'durable_describe_workflow'
    LANGUAGE C STABLE
    SECURITY DEFINER SET search_path = durable, pg_catalog, pg_temp;

CREATE FUNCTION durable.get_history(
        workflow_id text,
        namespace text DEFAULT 'default',
        run_id uuid DEFAULT NULL)
    RETURNS TABLE(event_id bigint, event_time timestamptz, event_type text, attributes jsonb)
    LANGUAGE sql STABLE
    SECURITY DEFINER SET search_path = durable, pg_catalog, pg_temp
    AS $$
        SELECT h.event_id, h.event_time, h.event_type, h.attributes
          FROM durable.history h
         WHERE h.run_id = durable.resolve_run_id(get_history.workflow_id,
                                                 get_history.namespace,
                                                 get_history.run_id)
         ORDER BY h.event_id
    $$;

-- Worker API.

CREATE FUNCTION durable.poll_decision_task(
        task_queue text DEFAULT 'default',
        identity text DEFAULT NULL,
        namespace text DEFAULT 'default',
        wait interval DEFAULT '0')
    RETURNS jsonb
    AS 'MODULE_PATHNAME', 'durable_poll_decision_task'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = durable, pg_catalog, pg_temp;

CREATE FUNCTION durable.complete_decision_task(task_token text, decisions jsonb,
        identity text DEFAULT NULL)
    RETURNS void
    AS 'MODULE_PATHNAME', 'durable_complete_decision_task'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = durable, pg_catalog, pg_temp;

CREATE FUNCTION durable.fail_decision_task(task_token text, cause text,
        details jsonb DEFAULT NULL, identity text DEFAULT NULL)
    RETURNS void
    AS 'MODULE_PATHNAME', 'durable_fail_decision_task'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = durable, pg_catalog, pg_temp;

CREATE FUNCTION durable.poll_activity_task(
        task_queue text DEFAULT 'default',
        identity text DEFAULT NULL,
        namespace text DEFAULT 'default',
        wait interval DEFAULT '0')
    RETURNS jsonb
    AS 'MODULE_PATHNAME', 'durable_poll_activity_task'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = durable, pg_catalog, pg_temp;

CREATE FUNCTION durable.poll_activity_tasks(
        task_queue text DEFAULT 'default',
        identity text DEFAULT NULL,
        namespace text DEFAULT 'default',
        wait interval DEFAULT '0',
        max_tasks integer DEFAULT 10)
    RETURNS SETOF jsonb
    AS 'MODULE_PATHNAME', 'durable_poll_activity_tasks'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = durable, pg_catalog, pg_temp;

CREATE FUNCTION durable.complete_activity(task_token text, result jsonb DEFAULT NULL)
    RETURNS void
    AS 'MODULE_PATHNAME', 'durable_complete_activity'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = durable, pg_catalog, pg_temp;

CREATE FUNCTION durable.fail_activity(task_token text, reason text,
        details jsonb DEFAULT NULL, next_retry_delay interval DEFAULT NULL)
    RETURNS void
    AS 'MODULE_PATHNAME', 'durable_fail_activity'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = durable, pg_catalog, pg_temp;

CREATE FUNCTION durable.heartbeat_activity(task_token text, details jsonb DEFAULT NULL)
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'durable_heartbeat_activity'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = durable, pg_catalog, pg_temp;

CREATE FUNCTION durable.report_activity_canceled(task_token text, details jsonb DEFAULT NULL)
    RETURNS void
    AS 'MODULE_PATHNAME', 'durable_report_activity_canceled'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = durable, pg_catalog, pg_temp;

-- Internal: whether the library was preloaded (the background worker runs).
CREATE FUNCTION durable.preloaded() RETURNS boolean
    AS 'MODULE_PATHNAME', 'durable_preloaded'
    LANGUAGE C STABLE;

-- Internal: have the launcher start this database's timer worker at commit.
CREATE FUNCTION durable.launcher_wakeup() RETURNS void
    AS 'MODULE_PATHNAME', 'durable_launcher_wakeup'
    LANGUAGE C VOLATILE;

-- Privileges: nothing for PUBLIC but the pure functions; the rest per group.
REVOKE ALL ON ALL TABLES IN SCHEMA durable FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA durable FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA durable FROM PUBLIC;
GRANT USAGE ON SCHEMA durable TO PUBLIC;
GRANT EXECUTE ON FUNCTION durable.now(), durable.preloaded(),
    durable.retry_policy(interval, float8, interval, interval, integer, text[]),
    durable.retry_delay(jsonb, integer),
    durable.cron_next(text, timestamptz)
    TO PUBLIC;

GRANT EXECUTE ON FUNCTION
    durable.start_workflow(text, jsonb, text, text, text, jsonb, text, interval,
                           interval, interval, text, interval, jsonb),
    durable.signal_workflow(text, text, jsonb, text, uuid),
    durable.signal_with_start(text, text, text, jsonb, jsonb, text, text, jsonb,
                              text, interval, interval, interval, text, interval,
                              jsonb),
    durable.cancel_workflow(text, text, text, uuid),
    durable.terminate_workflow(text, text, jsonb, text, uuid),
    durable.resolve_run_id(text, text, uuid),
    durable.describe_workflow(text, text, uuid),
    durable.get_history(text, text, uuid)
    TO durable_client;
GRANT SELECT ON durable.workflows, durable.activity_attempts TO durable_client;

GRANT EXECUTE ON FUNCTION
    durable.poll_decision_task(text, text, text, interval),
    durable.complete_decision_task(text, jsonb, text),
    durable.fail_decision_task(text, text, jsonb, text),
    durable.poll_activity_task(text, text, text, interval),
    durable.poll_activity_tasks(text, text, text, interval, integer),
    durable.complete_activity(text, jsonb),
    durable.fail_activity(text, text, jsonb, interval),
    durable.heartbeat_activity(text, jsonb),
    durable.report_activity_canceled(text, jsonb)
    TO durable_worker;

GRANT EXECUTE ON FUNCTION durable.tick(integer), durable.purge(integer),
    durable.create_namespace(text, interval, jsonb, text),
    durable.alter_namespace(text, interval, jsonb, text),
    durable.drop_namespace(text)
    TO durable_admin;
GRANT SELECT ON ALL TABLES IN SCHEMA durable TO durable_admin;
GRANT durable_client, durable_worker TO durable_admin;

SELECT durable.launcher_wakeup();

DO $warn$
BEGIN
    IF NOT durable.preloaded() THEN
        RAISE WARNING 'durable is not in shared_preload_libraries: durable timers fire only when durable.tick() is called'
            USING HINT = 'Add durable to shared_preload_libraries and restart, or run SELECT durable.tick() every second from pg_cron or the application.';
    END IF;
END
$warn$;

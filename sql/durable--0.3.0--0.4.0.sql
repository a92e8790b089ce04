-- durable 0.3.0 -> 0.4.0: work under a held vacuum horizon (issue 12),
-- Cadence's history rules (issue 13), operating workflows from SQL (issue 14).
--
-- The schema check of sql/durable--0.2.0--0.3.0.sql is not repeated here:
-- at 0.3.0 the schema is owned by a superuser and only superusers may
-- create objects in it, and only a superuser can change that.
-- Every section below names its issue; objects are schema-qualified and
-- operators spelled OPERATOR(pg_catalog.x) as in the 0.3.0 script.

\echo Use "ALTER EXTENSION durable UPDATE TO '0.4.0'" to load this file. \quit

-- Issue 13, items 4-7 (cron and timeout rules): a run's timeout counts from
-- its first decision task, as Cadence's does (start + firstDecisionTaskBackoff
-- + run timeout).  The deadline is kept only for a run whose first decision
-- task waits (a delay, a cron fire time, a retry backoff) and that has a run
-- timeout; NULL means start_time + run_timeout, as before (and as for every
-- run started before this update).
ALTER TABLE durable.runs ADD COLUMN run_deadline timestamptz;
-- ---------------------------------------------------------------------------
-- Issue 14, part 4: reset and restart ("Fix it and carry on").
--
-- A reset makes a new run of the same workflow id whose history is a copy of
-- a run's up to a DecisionTaskCompleted (Cadence's ResetWorkflowExecution);
-- a restart starts a new chain with the same type, queue, options and input.
-- The new run records where it came from (reset_from or restarted_from, and
-- origin: who did it, why, when), the old run where it went (reset_to,
-- restarted_to: the latest such run).  src/reset.c explains the rest.
-- ---------------------------------------------------------------------------
ALTER TABLE durable.runs
    ADD COLUMN reset_from uuid,
    ADD COLUMN reset_to uuid,
    ADD COLUMN restarted_from uuid,
    ADD COLUMN restarted_to uuid,
    ADD COLUMN origin jsonb;

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
           r.origin
      FROM durable.runs r
     WHERE durable.may_read_namespace(r.namespace);

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
-- Issue 14, part 1: durable.wait_workflow(), the close of a workflow's chain
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

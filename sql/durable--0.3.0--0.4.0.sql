-- durable 0.3.0 -> 0.4.0: work under a held vacuum horizon (issue 12),
-- Cadence's history rules (issue 13), operating workflows from SQL (issue 14).
--
-- The schema check of sql/durable--0.2.0--0.3.0.sql is not repeated here:
-- at 0.3.0 the schema is owned by a superuser and only superusers may
-- create objects in it, and only a superuser can change that.
-- Every section below names its issue; objects are schema-qualified and
-- operators spelled OPERATOR(pg_catalog.x) as in the 0.3.0 script.

\echo Use "ALTER EXTENSION durable UPDATE TO '0.4.0'" to load this file. \quit

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

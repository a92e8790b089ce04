-- durable 0.11.0 -> 0.12.0: less space per open workflow, and child workflows
-- that cross the nodes of a Citus cluster.
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

\echo Use "ALTER EXTENSION durable UPDATE TO '0.12.0'" to load this file. \quit

-- One index of the runs of a workflow id instead of two: an open workflow
-- takes one index entry less, and a start writes one less.
-- runs_of_workflow_id is unique on (namespace, workflow_id, key) with NULLS
-- NOT DISTINCT, the key NULL for the running run and run_seq for a closed one:
-- at most one run of a workflow id is running, as runs_one_running ensured (a
-- start inserts with ON CONFLICT on the new index), and the runs of an id come
-- running first, then the closed ones latest first (NULLS FIRST is DESC's
-- default), as runs_by_workflow_id listed them, text_pattern_ops kept for the
-- workflow id prefix of list_workflows.  A run is inserted running and a new
-- one only while none is running, so the running run is the latest: the
-- engine orders by the key to find the latest (src/engine/runs.h).  The
-- library of 0.12.0 uses the old indexes until this runs.
CREATE UNIQUE INDEX runs_of_workflow_id
    ON durable.runs (namespace, workflow_id text_pattern_ops,
                     (CASE WHEN status OPERATOR(pg_catalog.=) 'running' THEN NULL
                           ELSE run_seq END) DESC)
    NULLS NOT DISTINCT;
DROP INDEX durable.runs_one_running;
DROP INDEX durable.runs_by_workflow_id;

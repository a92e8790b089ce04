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

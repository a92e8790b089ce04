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

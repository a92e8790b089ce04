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
-- Views that show a caller nothing of the namespaces it may not read, even to
-- a function of the caller's in its WHERE clause (README "Privileges").
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

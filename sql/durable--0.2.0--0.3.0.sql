-- durable 0.2.0 -> 0.3.0: safety (no input, user code or fault brings the
-- server down or wedges the engine) and least privilege (docs/privileges.md).

\echo Use "ALTER EXTENSION durable UPDATE TO '0.3.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- The schema: a superuser's code must not be captured by a schema created
-- beforehand by someone else (docs/privileges.md "Privileges").  CREATE
-- EXTENSION uses a schema named durable that exists already.  Whoever can
-- create objects in it (its owner, a role granted CREATE on it) could put
-- there an operator or function that the extension's statements and its
-- SECURITY DEFINER functions, which run as a superuser, would pick up, e.g.
-- durable.=(uuid, uuid).  So the schema must be owned by a superuser, no
-- other role may create objects in it, and it may hold nothing but the
-- extension's own objects; otherwise this fails with 42501 and, the whole
-- CREATE EXTENSION or ALTER EXTENSION UPDATE being one transaction, nothing
-- is left behind.
--
-- The check must run before any statement that could resolve a name to the
-- schema.  So a fresh CREATE EXTENSION does not take the update path
-- (0.1.0, 0.1.0--0.2.0, then this script), whose first two scripts would
-- already run in the schema: the Makefile builds sql/durable--0.3.0.sql,
-- which PostgreSQL prefers for a fresh install, as this block followed by
-- the three scripts of the path, so that a fresh install is the same
-- schema as an updated one (test/t/007_upgrade.pl) and begins with the
-- check.  An update from 0.2.0 runs it here, first: it must stay the first
-- statement of this script.  Everything in the block is schema-qualified:
-- it runs with search_path = durable.
-- BEGIN schema check (copied to the top of sql/durable--0.3.0.sql)
DO $schema_check$
DECLARE
    nsp pg_catalog.oid;
    ext pg_catalog.oid;
    owner_name pg_catalog.text;
    owner_super pg_catalog.bool;
    listed pg_catalog.text;
BEGIN
    SELECT n.oid, r.rolname, r.rolsuper INTO nsp, owner_name, owner_super
      FROM pg_catalog.pg_namespace n
      JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) n.nspowner
     WHERE n.nspname OPERATOR(pg_catalog.=) 'durable';
    SELECT e.oid INTO ext FROM pg_catalog.pg_extension e
     WHERE e.extname OPERATOR(pg_catalog.=) 'durable';
    IF NOT owner_super THEN
        RAISE EXCEPTION 'schema "durable" is owned by role "%", which is not a superuser', owner_name
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'That role could create objects in the schema that the extension''s functions would use while they run as a superuser.',
                  HINT = 'Drop the schema and let CREATE EXTENSION durable create it, or run ALTER SCHEMA durable OWNER TO a superuser first.';
    END IF;
    SELECT pg_catalog.string_agg(CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0::pg_catalog.oid
                                      THEN 'PUBLIC' ELSE pg_catalog.quote_ident(r.rolname) END,
                                 ', ')
      INTO listed
      FROM pg_catalog.pg_namespace n,
           LATERAL pg_catalog.aclexplode(n.nspacl) a
      LEFT JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) a.grantee
     WHERE n.oid OPERATOR(pg_catalog.=) nsp
       AND a.privilege_type OPERATOR(pg_catalog.=) 'CREATE'
       AND (a.grantee OPERATOR(pg_catalog.=) 0::pg_catalog.oid OR NOT r.rolsuper);
    IF listed IS NOT NULL THEN
        RAISE EXCEPTION 'roles that are not superusers may create objects in schema "durable": %', listed
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'They could create objects in the schema that the extension''s functions would use while they run as a superuser.',
                  HINT = 'REVOKE CREATE ON SCHEMA durable FROM them first.';
    END IF;
    SELECT pg_catalog.string_agg(pg_catalog.concat_ws(' ', o.type, o.identity), ', ')
      INTO listed
      FROM pg_catalog.pg_depend d,
           LATERAL pg_catalog.pg_identify_object(d.classid, d.objid, d.objsubid) o
     WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
       AND d.refobjid OPERATOR(pg_catalog.=) nsp
       AND NOT (d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
                AND d.objid OPERATOR(pg_catalog.=) ext)
       AND NOT EXISTS (
           SELECT FROM pg_catalog.pg_depend m
            WHERE m.classid OPERATOR(pg_catalog.=) d.classid
              AND m.objid OPERATOR(pg_catalog.=) d.objid
              AND m.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
              AND m.refobjid OPERATOR(pg_catalog.=) ext
              AND m.deptype OPERATOR(pg_catalog.=) 'e'::pg_catalog."char");
    IF listed IS NOT NULL THEN
        RAISE EXCEPTION 'schema "durable" holds objects that are not part of the extension: %', listed
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'The extension''s functions could use them while they run as a superuser.',
                  HINT = 'Drop them or move them to another schema first.';
    END IF;
END
$schema_check$;
-- END schema check

-- ---------------------------------------------------------------------------
-- Bounds, so that no deadline or backoff can overflow and wedge a queue.
-- From 0.3.0 every
-- duration a user gives is at most 100 years (36525 days, 3155760000 s) and
-- every backoffCoefficient at most 1000 (docs/errors.md "Bounds on durations
-- and numbers").  0.2.0 accepted
-- anything finite: clamp what it stored, so that the values in the tables
-- are within the bounds the engine now guarantees.  (The 0.3.0 library also
-- saturates every computation on stored values, so a database not yet
-- updated works as well.)
-- ---------------------------------------------------------------------------

-- A retry policy's durations and coefficient, clamped (the shape is kept).
CREATE FUNCTION durable.clamp_retry_policy_0_3_0(p jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE AS $clamp$
    SELECT CASE WHEN p IS NULL OR pg_catalog.jsonb_typeof(p) <> 'object' THEN p ELSE
        p || pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object(
            'initialIntervalInSeconds',
                CASE WHEN (p->>'initialIntervalInSeconds')::float8 > 3155760000
                     THEN 3155760000 END,
            'maximumIntervalInSeconds',
                CASE WHEN (p->>'maximumIntervalInSeconds')::float8 > 3155760000
                     THEN 3155760000 END,
            'expirationIntervalInSeconds',
                CASE WHEN (p->>'expirationIntervalInSeconds')::float8 > 3155760000
                     THEN 3155760000 END,
            'backoffCoefficient',
                CASE WHEN (p->>'backoffCoefficient')::float8 > 1000 THEN 1000 END))
    END
$clamp$;

UPDATE durable.namespaces
   SET retention = pg_catalog.make_interval(secs =>
           LEAST(GREATEST(pg_catalog.date_part('epoch', retention), 0), 3155760000))
 WHERE retention < interval '0' OR retention > interval '36525 days';
UPDATE durable.namespaces
   SET activity_retry_policy = durable.clamp_retry_policy_0_3_0(activity_retry_policy)
 WHERE activity_retry_policy IS DISTINCT FROM
       durable.clamp_retry_policy_0_3_0(activity_retry_policy);
ALTER TABLE durable.namespaces ADD CONSTRAINT namespaces_retention_bounds
    CHECK (retention >= interval '0' AND retention <= interval '36525 days');

UPDATE durable.runs
   SET execution_timeout = LEAST(execution_timeout, 3155760000),
       run_timeout = LEAST(run_timeout, 3155760000),
       decision_timeout = LEAST(decision_timeout, 3155760000),
       retry_policy = durable.clamp_retry_policy_0_3_0(retry_policy)
 WHERE execution_timeout > 3155760000 OR run_timeout > 3155760000
    OR decision_timeout > 3155760000
    OR retry_policy IS DISTINCT FROM durable.clamp_retry_policy_0_3_0(retry_policy);

UPDATE durable.activities
   SET schedule_to_start_timeout = LEAST(schedule_to_start_timeout, 3155760000),
       start_to_close_timeout = LEAST(start_to_close_timeout, 3155760000),
       schedule_to_close_timeout = LEAST(schedule_to_close_timeout, 3155760000),
       heartbeat_timeout = LEAST(heartbeat_timeout, 3155760000),
       retry_policy = durable.clamp_retry_policy_0_3_0(retry_policy)
 WHERE schedule_to_start_timeout > 3155760000 OR start_to_close_timeout > 3155760000
    OR schedule_to_close_timeout > 3155760000 OR heartbeat_timeout > 3155760000
    OR retry_policy IS DISTINCT FROM durable.clamp_retry_policy_0_3_0(retry_policy);

DROP FUNCTION durable.clamp_retry_policy_0_3_0(jsonb);
-- Poison tasks (docs/background-workers.md "Poison tasks"): an executor task that fails in the engine (not in
-- the user's function) is put off with a growing backoff instead of being
-- retried at once as the oldest task, and shows here with its error.  NULL
-- columns for a task that never failed (rows are written without defaults).
ALTER TABLE durable.ready_tasks
    ADD COLUMN not_before timestamptz,
    ADD COLUMN failures integer,
    ADD COLUMN last_error text;
-- The executors' claim order, without the tasks being put off: the claim
-- never reads them.
DROP INDEX durable.ready_tasks_executor;
CREATE INDEX ready_tasks_executor ON durable.ready_tasks (task_id)
    WHERE kind IN ('w', 'x') AND not_before IS NULL;

-- Executor tasks that failed in the engine and are retried with a backoff
-- (next_attempt_time NULL: due now).
CREATE VIEW durable.stuck_tasks AS
    SELECT t.namespace, r.workflow_id, t.run_id, r.workflow_type,
           CASE t.kind WHEN 'w' THEN 'decision' ELSE 'activity' END AS task_type,
           a.activity_type, t.task_queue, t.scheduled_event_id, t.attempt,
           t.failures, t.last_error, t.not_before AS next_attempt_time
      FROM durable.ready_tasks t
      JOIN durable.runs r USING (run_id)
      LEFT JOIN durable.activities a
        ON t.kind = 'x' AND a.run_id = t.run_id
       AND a.scheduled_event_id = t.scheduled_event_id
     WHERE t.kind IN ('w', 'x') AND t.failures > 0;
GRANT SELECT ON durable.stuck_tasks TO durable_client, durable_admin;

-- ---------------------------------------------------------------------------
-- search_path of the functions, so that no object created by someone else
-- can capture what a superuser's function means.  The SECURITY DEFINER functions run as the extension's owner, a
-- superuser, and the registration functions write durable.registrations as
-- its owner: pg_catalog comes first in their search_path, so that no object
-- of another schema can stand in for a built-in operator or function, and
-- pg_temp comes last, explicitly, since a search_path that does not name it
-- searches it first.  (test/pgtap/function_search_path.sql checks every
-- function of the extension.)
-- ---------------------------------------------------------------------------
ALTER FUNCTION durable.tick(integer) SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.purge(integer) SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.create_namespace(text, interval, jsonb, text)
    SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.alter_namespace(text, interval, jsonb, text)
    SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.drop_namespace(text) SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.start_workflow(text, jsonb, text, text, text, jsonb, text, interval,
                                      interval, interval, text, interval, jsonb)
    SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.signal_workflow(text, text, jsonb, text, uuid)
    SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.signal_with_start(text, text, text, jsonb, jsonb, text, text, jsonb,
                                         text, interval, interval, interval, text, interval,
                                         jsonb)
    SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.cancel_workflow(text, text, text, uuid)
    SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.terminate_workflow(text, text, jsonb, text, uuid)
    SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.resolve_run_id(text, text, uuid)
    SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.describe_workflow(text, text, uuid)
    SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.get_history(text, text, uuid)
    SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.poll_decision_task(text, text, text, interval)
    SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.complete_decision_task(text, jsonb, text)
    SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.fail_decision_task(text, text, jsonb, text)
    SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.poll_activity_task(text, text, text, interval)
    SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.poll_activity_tasks(text, text, text, interval, integer)
    SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.complete_activity(text, jsonb)
    SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.fail_activity(text, text, jsonb, interval)
    SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.heartbeat_activity(text, jsonb)
    SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.report_activity_canceled(text, jsonb)
    SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.register_workflow(text, regprocedure, text, text, regrole)
    SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.register_activity(text, regprocedure, text, text, regrole)
    SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.unregister_workflow(text, text, text)
    SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.unregister_activity(text, text, text)
    SET search_path = pg_catalog, durable, pg_temp;
ALTER FUNCTION durable.run_tasks(integer) SET search_path = pg_catalog, durable, pg_temp;

-- ---------------------------------------------------------------------------
-- Task tokens, which could be guessed from ids a worker can see.  A token
-- carries a secret of 64 random bits drawn when its task is claimed, kept
-- here and checked on every answer; and the namespace and workflow id, for
-- routers (docs/api.md "Task tokens").  NULL: no token with a secret was issued (a task
-- claimed before this update keeps its 0.2.0 token, which stays valid).
-- ---------------------------------------------------------------------------
ALTER TABLE durable.runs ADD COLUMN task_secret bigint;
ALTER TABLE durable.activities ADD COLUMN task_secret bigint;

-- What a token names, without its secret: reads no table, for any role.
CREATE FUNCTION durable.task_token_info(task_token text) RETURNS jsonb
    AS 'MODULE_PATHNAME', 'durable_task_token_info'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
GRANT EXECUTE ON FUNCTION durable.task_token_info(text) TO PUBLIC;

-- ---------------------------------------------------------------------------
-- Namespace privileges, so that namespaces isolate teams.  The group
-- roles still gate the functions (EXECUTE); a namespace privilege is checked
-- besides: 'client' (start, signal, cancel, terminate, describe, history, the
-- rows of the views) and 'worker' (poll and complete its tasks, register its
-- types).  The namespace's owner, durable_admin members and superusers have
-- both everywhere.  A new namespace is open to no one else; the namespaces
-- that exist now, 'default' among them, are granted to PUBLIC so that their
-- users see no change (docs/privileges.md "Namespace privileges"; an admin
-- may revoke it).
-- ---------------------------------------------------------------------------

-- Who created a namespace; the namespaces that exist now are the extension
-- owner's, and one inserted directly (by a superuser) is its inserter's.
ALTER TABLE durable.namespaces ADD COLUMN owner regrole;
UPDATE durable.namespaces
   SET owner = (SELECT e.extowner FROM pg_catalog.pg_extension e
                 WHERE e.extname OPERATOR(pg_catalog.=) 'durable')::pg_catalog.regrole;
ALTER TABLE durable.namespaces ALTER COLUMN owner SET NOT NULL,
    ALTER COLUMN owner SET DEFAULT pg_catalog.to_regrole(pg_catalog.quote_ident(CURRENT_USER));

-- One row a privilege granted; grantee 0 (shown as '-') is PUBLIC.
CREATE TABLE durable.namespace_grants (
    namespace       text NOT NULL,
    grantee         regrole NOT NULL,
    privilege       text NOT NULL CHECK (privilege IN ('client', 'worker')),
    granted_by      regrole NOT NULL,
    granted_at      timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (namespace, grantee, privilege)
);
-- The PUBLIC grants of 'default' are made by CREATE EXTENSION (this script),
-- as 'default' itself is: not dumped, so that a restore does not collide
-- with them.
SELECT pg_catalog.pg_extension_config_dump('durable.namespace_grants',
    $$WHERE namespace OPERATOR(pg_catalog.<>) 'default' OR grantee::pg_catalog.oid OPERATOR(pg_catalog.<>) 0$$);
CREATE TRIGGER namespace_grants_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON durable.namespace_grants
    FOR EACH STATEMENT EXECUTE FUNCTION durable.cached_table_changed();
INSERT INTO durable.namespace_grants (namespace, grantee, privilege, granted_by)
    SELECT n.name, 0::pg_catalog.oid::pg_catalog.regrole, p.privilege, n.owner
      FROM durable.namespaces n
     CROSS JOIN (VALUES ('client'), ('worker')) p(privilege);
REVOKE ALL ON durable.namespace_grants FROM PUBLIC;
GRANT SELECT ON durable.namespace_grants TO durable_admin;

CREATE FUNCTION durable.grant_namespace(namespace text, role text, privilege text)
    RETURNS void
    AS 'MODULE_PATHNAME', 'durable_grant_namespace'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = pg_catalog, durable, pg_temp;
CREATE FUNCTION durable.revoke_namespace(namespace text, role text, privilege text)
    RETURNS void
    AS 'MODULE_PATHNAME', 'durable_revoke_namespace'
    LANGUAGE C VOLATILE
    SECURITY DEFINER SET search_path = pg_catalog, durable, pg_temp;
-- Whether the current role may read a namespace (the views' filter).  Not
-- SECURITY DEFINER: it asks about the role that queries the view.
CREATE FUNCTION durable.may_read_namespace(namespace text)
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'durable_may_read_namespace'
    LANGUAGE C STABLE STRICT PARALLEL SAFE;
REVOKE ALL ON FUNCTION durable.grant_namespace(text, text, text),
    durable.revoke_namespace(text, text, text) FROM PUBLIC;
-- Anyone may ask to grant; only the owner and durable_admin members may.
GRANT EXECUTE ON FUNCTION durable.grant_namespace(text, text, text),
    durable.revoke_namespace(text, text, text)
    TO durable_client, durable_worker, durable_admin;
GRANT EXECUTE ON FUNCTION durable.may_read_namespace(text) TO PUBLIC;

-- The views show the namespaces the role may read.
CREATE OR REPLACE VIEW durable.workflows AS
    SELECT r.namespace, r.workflow_id, r.run_id, r.workflow_type, r.task_queue,
           r.status, r.attempt, r.start_time, r.close_time,
           r.close_time OPERATOR(pg_catalog.-) r.start_time AS duration,
           r.input, r.result, r.failure, r.memo,
           r.cancel_requested, r.cron_schedule,
           r.parent_workflow_id, r.parent_run_id,
           r.continued_from, r.continued_to, r.first_run_id,
           r.last_event_id AS history_length
      FROM durable.runs r
     WHERE durable.may_read_namespace(r.namespace);

CREATE OR REPLACE VIEW durable.activity_attempts AS
    SELECT r.namespace, r.workflow_id, l.run_id, l.scheduled_event_id,
           l.activity_id, l.activity_type, l.attempt, l.outcome,
           l.failure_reason, l.failure_details, l.worker_identity,
           l.scheduled_time, l.started_time, l.end_time, l.next_retry_time
      FROM durable.activity_attempt_log l
      JOIN durable.runs r USING (run_id)
     WHERE durable.may_read_namespace(r.namespace)
    UNION ALL
    SELECT r.namespace, r.workflow_id, a.run_id, a.scheduled_event_id,
           a.activity_id, a.activity_type, a.attempt,
           CASE WHEN a.state OPERATOR(pg_catalog.=) 'SCHEDULED' THEN 'scheduled' ELSE 'running' END,
           NULL::text, NULL::jsonb, a.last_worker_identity,
           a.scheduled_time, a.started_time, NULL::timestamptz, NULL::timestamptz
      FROM durable.activities a
      JOIN durable.runs r USING (run_id)
     WHERE a.next_attempt_time IS NULL
       AND durable.may_read_namespace(r.namespace);

CREATE OR REPLACE VIEW durable.stuck_tasks AS
    SELECT t.namespace, r.workflow_id, t.run_id, r.workflow_type,
           CASE t.kind WHEN 'w' THEN 'decision' ELSE 'activity' END AS task_type,
           a.activity_type, t.task_queue, t.scheduled_event_id, t.attempt,
           t.failures, t.last_error, t.not_before AS next_attempt_time
      FROM durable.ready_tasks t
      JOIN durable.runs r USING (run_id)
      LEFT JOIN durable.activities a
        ON t.kind OPERATOR(pg_catalog.=) 'x' AND a.run_id OPERATOR(pg_catalog.=) t.run_id
       AND a.scheduled_event_id OPERATOR(pg_catalog.=) t.scheduled_event_id
     WHERE t.kind IN ('w', 'x') AND t.failures OPERATOR(pg_catalog.>) 0
       AND durable.may_read_namespace(t.namespace);

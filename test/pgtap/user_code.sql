-- What user code (workflow functions and SQL activities) runs as, run by durable.run_tasks():
-- its run_as role's own search_path (ALTER ROLE ... SET, ALTER ROLE ... IN DATABASE ... SET),
-- every setting it changes rolled back after each call, a security-restricted operation
-- (no temporary table, no SET ROLE), EXECUTE checked at each call (docs/privileges.md
-- "Privileges"); and an ordinary role's attack on the engine, with the role setup of
-- examples/subscription.sql: an activity that points the search_path at its own `=`
-- operator for uuid must not get it run by the engine as the superuser that owns
-- run_tasks().
BEGIN;
SELECT plan(16);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

-- uc_app: an application role whose search_path names its schema, where its code
-- refers to tables without a schema.
CREATE ROLE uc_app;
CREATE SCHEMA ucapp AUTHORIZATION uc_app;
CREATE TABLE ucapp.t (note text);
ALTER TABLE ucapp.t OWNER TO uc_app;
ALTER ROLE uc_app SET search_path = ucapp, public;
-- uc_db: a role whose setting in this database beats its own.
CREATE ROLE uc_db;
ALTER ROLE uc_db SET search_path = nowhere;
DO $$ BEGIN
    EXECUTE format('ALTER ROLE uc_db IN DATABASE %I SET search_path = ucdb', current_database());
END $$;

-- The workflow runs the activities named in input.steps in turn, one attempt each, and
-- returns their results ("failed" for a failed one).
CREATE FUNCTION ucapp.flow(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
    results jsonb := '[]';
    step text;
BEGIN
    FOR step IN SELECT jsonb_array_elements_text(input->'steps') LOOP
        BEGIN
            results := results || jsonb_build_array(durable.activity(step, NULL,
                '{"retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 1}}'));
        EXCEPTION WHEN SQLSTATE 'WF007' THEN
            results := results || '["failed"]';
        END;
    END LOOP;
    RETURN results;
END $$;
-- No schema named: the role's search_path finds ucapp.t.
CREATE FUNCTION ucapp.write_t(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO t VALUES ('written');
    RETURN to_jsonb(current_setting('search_path'));
END $$;
-- Settings changed by one call...
CREATE FUNCTION ucapp.leak(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('search_path', 'pg_catalog', false);
    PERFORM set_config('work_mem', '1234kB', false);
    RETURN '"set"';
END $$;
-- ... are not seen by the next.
CREATE FUNCTION ucapp.look(input jsonb) RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_build_object('search_path', current_setting('search_path'),
                              'work_mem', current_setting('work_mem')) $$;
CREATE FUNCTION ucapp.temp(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    CREATE TEMP TABLE kept_in_the_session (i int);
    RETURN '"created"';
END $$;
CREATE FUNCTION ucapp.become(input jsonb) RETURNS jsonb LANGUAGE sql AS $$
    SELECT to_jsonb(set_config('role', 'uc_app', false)) $$;
CREATE FUNCTION ucapp.revoked(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT '"ran"'::jsonb $$;
CREATE FUNCTION ucapp.db_path(input jsonb) RETURNS jsonb LANGUAGE sql AS $$
    SELECT to_jsonb(current_setting('search_path')) $$;
ALTER FUNCTION ucapp.flow(jsonb) OWNER TO uc_app;
ALTER FUNCTION ucapp.write_t(jsonb) OWNER TO uc_app;
ALTER FUNCTION ucapp.leak(jsonb) OWNER TO uc_app;
ALTER FUNCTION ucapp.look(jsonb) OWNER TO uc_app;
ALTER FUNCTION ucapp.temp(jsonb) OWNER TO uc_app;
ALTER FUNCTION ucapp.become(jsonb) OWNER TO uc_app;
REVOKE EXECUTE ON FUNCTION ucapp.revoked(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ucapp.revoked(jsonb) TO uc_app;

SELECT durable.register_workflow('flow', 'ucapp.flow(jsonb)', 'uc', run_as => 'uc_app');
SELECT durable.register_activity(a, ('ucapp.' || a || '(jsonb)')::regprocedure, 'uc', run_as => 'uc_app')
  FROM unnest('{write_t,leak,look,temp,become,revoked}'::text[]) a;
SELECT durable.register_activity('db_path', 'ucapp.db_path(jsonb)', 'uc', run_as => 'uc_db');
-- EXECUTE revoked after the registration: checked again when it runs.
REVOKE EXECUTE ON FUNCTION ucapp.revoked(jsonb) FROM uc_app;

SELECT durable.start_workflow('flow', '{"steps": ["write_t", "leak", "look", "temp", "become", "revoked", "db_path"]}',
                              'uc-flow', 'uc') IS NOT NULL AS started;
SELECT cmp_ok(durable.run_tasks(), '>', 0, 'run_tasks runs the workflow');
SELECT is(durable.describe_workflow('uc-flow')->>'status', 'completed', 'the workflow completed');
SELECT is(durable.describe_workflow('uc-flow')->'result'->0, '"ucapp, public, pg_temp"',
    'an activity runs with its role''s search_path (pg_temp last)');
SELECT is((SELECT array_agg(note) FROM ucapp.t), '{written}', 'and finds its table without a schema');
SELECT is(durable.describe_workflow('uc-flow')->'result'->2,
    jsonb_build_object('search_path', 'ucapp, public, pg_temp', 'work_mem', current_setting('work_mem')),
    'settings an activity changed with set_config() are rolled back after it');
SELECT is((SELECT failure_reason || ': ' || (failure_details->>'message') FROM durable.activity_attempts
            WHERE workflow_id = 'uc-flow' AND activity_type = 'temp'),
    '42501: cannot create temporary table within security-restricted operation',
    'an activity may not create a temporary table that would outlive it in the session');
SELECT is((SELECT failure_reason FROM durable.activity_attempts
            WHERE workflow_id = 'uc-flow' AND activity_type = 'become'),
    '42501', 'nor SET ROLE');
SELECT is((SELECT failure_reason || ': ' || (failure_details->>'message') FROM durable.activity_attempts
            WHERE workflow_id = 'uc-flow' AND activity_type = 'revoked'),
    'durable:PermissionDenied: role "uc_app" may not execute function ucapp.revoked(jsonb) of activity type "revoked"',
    'EXECUTE revoked since the registration: the attempt fails, the function does not run');
SELECT is(durable.describe_workflow('uc-flow')->'result'->6, '"ucdb, pg_temp"',
    'ALTER ROLE ... IN DATABASE ... SET beats ALTER ROLE ... SET, as at login');
SELECT is(current_setting('work_mem') <> '1234kB', true, 'the caller of run_tasks() keeps its settings');

-- run_tasks() called by a durable_admin that is no superuser: the code runs as its
-- run_as role, not as the caller nor as run_tasks()' owner.
CREATE ROLE uc_admin;
GRANT durable_admin TO uc_admin;
CREATE FUNCTION ucapp.whoami(input jsonb) RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_build_object('user', current_user, 'superuser', rolsuper)
      FROM pg_roles WHERE rolname = current_user $$;
SELECT durable.register_activity('whoami', 'ucapp.whoami(jsonb)', 'uc', run_as => 'uc_app');
SELECT durable.start_workflow('flow', '{"steps": ["whoami"]}', 'uc-admin', 'uc') IS NOT NULL AS started;
SET LOCAL ROLE uc_admin;
SELECT cmp_ok(durable.run_tasks(), '>', 0, 'a durable_admin that is no superuser runs the tasks');
RESET ROLE;
SELECT is(durable.describe_workflow('uc-admin')->'result', '[{"user": "uc_app", "superuser": false}]',
    'the activity ran as its run_as role');

-- The attack, with the role setup of examples/subscription.sql.
CREATE ROLE mallory;
GRANT durable_worker, durable_client TO mallory;
CREATE SCHEMA mallory AUTHORIZATION mallory;
SET LOCAL ROLE mallory;
-- Counts the calls of mallory's operator made as a superuser (a sequence: not rolled back).
CREATE SEQUENCE mallory.ran_as_superuser;
CREATE FUNCTION mallory.uuid_eq(a uuid, b uuid) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        PERFORM pg_catalog.nextval('mallory.ran_as_superuser');
        ALTER ROLE mallory SUPERUSER;
    END IF;
    RETURN a OPERATOR(pg_catalog.=) b;
END $$;
CREATE OPERATOR mallory.= (LEFTARG = uuid, RIGHTARG = uuid, FUNCTION = mallory.uuid_eq);
CREATE FUNCTION mallory.attack(input jsonb) RETURNS jsonb LANGUAGE sql AS $$
    SELECT to_jsonb(set_config('search_path', 'mallory, pg_catalog', false)) $$;
CREATE FUNCTION mallory.flow(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM durable.activity('attack');
    RETURN durable.activity('attack');
END $$;
SELECT durable.register_workflow('mflow', 'mallory.flow(jsonb)', 'mallory');
SELECT durable.register_activity('attack', 'mallory.attack(jsonb)', 'mallory');
SELECT durable.start_workflow('mflow', NULL, 'mallory-1', 'mallory') IS NOT NULL AS started;
RESET ROLE;
SELECT cmp_ok(durable.run_tasks(), '>', 0, 'run_tasks runs mallory''s workflow');
SELECT is(durable.describe_workflow('mallory-1')->>'status', 'completed', 'which completes');
SELECT is((SELECT is_called FROM mallory.ran_as_superuser), false,
    'the engine never ran mallory''s operator as a superuser');
SELECT is((SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory'), false, 'mallory is no superuser');

SELECT * FROM finish();
ROLLBACK;

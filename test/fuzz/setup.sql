-- The fuzzer's fixtures (test/fuzz/fuzz.pl runs this once, and again after it drops and
-- recreates the extension).  Idempotent: every object is created if missing.
--
-- Roles: one login role per group role of durable, one with none, fuzz_app (what SQL
-- workflows and activities run as) and fuzz_smith (sqlsmith's role: durable_admin,
-- short statement timeout, no superuser so that it cannot terminate backends).
DO $roles$
DECLARE r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['fuzz_client', 'fuzz_worker', 'fuzz_admin', 'fuzz_none',
                             'fuzz_app', 'fuzz_smith'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
            EXECUTE format('CREATE ROLE %I LOGIN', r);
        END IF;
    END LOOP;
END $roles$;
GRANT durable_client TO fuzz_client;
GRANT durable_worker TO fuzz_worker;
GRANT durable_admin TO fuzz_admin, fuzz_smith;
GRANT fuzz_app TO fuzz_worker, fuzz_admin;
ALTER ROLE fuzz_smith SET statement_timeout = '2s';

-- The code of SQL workflows and activities.
CREATE SCHEMA IF NOT EXISTS fz;
GRANT USAGE ON SCHEMA fz TO PUBLIC;
CREATE TABLE IF NOT EXISTS fz.scratch (v text);
GRANT INSERT, SELECT ON fz.scratch TO PUBLIC;

CREATE OR REPLACE FUNCTION fz.act_echo(input jsonb) RETURNS jsonb LANGUAGE sql
    AS $$ SELECT input $$;
CREATE OR REPLACE FUNCTION fz.act_null(input jsonb) RETURNS jsonb LANGUAGE sql
    AS $$ SELECT NULL::jsonb $$;
-- Raises the SQLSTATE input->>'code' (message "fuzz raise", which the log scan skips).
CREATE OR REPLACE FUNCTION fz.act_raise(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'fuzz raise %', input->>'code'
        USING ERRCODE = COALESCE(input->>'code', 'P0001');
END $$;
-- Sleeps input->>'secs' (at most 0.3 s), writes a row, returns its input.
CREATE OR REPLACE FUNCTION fz.act_slow(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_sleep(LEAST(COALESCE((input->>'secs')::float8, 0.05), 0.3));
    INSERT INTO fz.scratch VALUES ('slow');
    RETURN input;
END $$;
-- A result over durable.max_payload_size.
CREATE OR REPLACE FUNCTION fz.act_big(input jsonb) RETURNS jsonb LANGUAGE sql
    AS $$ SELECT jsonb_build_object('big', repeat('b', 3000000)) $$;
-- Spins until its statement timeout (the activity's StartToClose) stops it, at most 2 s.
CREATE OR REPLACE FUNCTION fz.act_spin(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE t timestamptz := clock_timestamp();
BEGIN
    WHILE clock_timestamp() < t + interval '2 seconds' LOOP END LOOP;
    RETURN input;
END $$;
-- Signatures that register_* must refuse.
CREATE OR REPLACE FUNCTION fz.bad_text(input text) RETURNS jsonb LANGUAGE sql
    AS $$ SELECT to_jsonb(input) $$;
CREATE OR REPLACE FUNCTION fz.bad_setof(input jsonb) RETURNS SETOF jsonb LANGUAGE sql
    AS $$ SELECT input $$;

-- A workflow that runs the program in input->'ops': a list of steps, each an object
-- {"op": ...}.  The fuzzer writes random programs, so that every call of the workflow
-- API, replay, suspension, errors, cancellation and non-determinism are exercised.
CREATE OR REPLACE FUNCTION fz.wf_main(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
    o jsonb;
    r jsonb;
    acc jsonb := '[]';
    handles text[] := '{}';
    h text;
BEGIN
    FOR o IN SELECT jsonb_array_elements(CASE jsonb_typeof(input->'ops')
                                         WHEN 'array' THEN input->'ops' ELSE '[]' END) LOOP
        CASE o->>'op'
        WHEN 'act' THEN
            r := durable.activity(o->>'type', o->'input', o->'options');
        WHEN 'act_catch' THEN
            BEGIN
                r := durable.activity(o->>'type', o->'input', o->'options');
            EXCEPTION WHEN SQLSTATE 'WF007' OR SQLSTATE 'WF008' THEN
                r := to_jsonb(SQLERRM);
            END;
        WHEN 'start' THEN
            handles := handles || durable.start_activity(o->>'type', o->'input', o->'options');
        WHEN 'await' THEN
            FOREACH h IN ARRAY handles LOOP
                r := durable.await(h);
            END LOOP;
            handles := '{}';
        WHEN 'await_bad' THEN
            r := durable.await(o->>'handle');
        WHEN 'sleep' THEN
            PERFORM durable.sleep((o->>'secs')::interval);
        WHEN 'signal' THEN
            r := durable.wait_signal(o->>'name', (o->>'timeout')::interval);
        WHEN 'child' THEN
            r := durable.child_workflow(o->>'type', o->'input', o->'options');
        WHEN 'child_catch' THEN
            BEGIN
                r := durable.child_workflow(o->>'type', o->'input', o->'options');
            EXCEPTION WHEN SQLSTATE 'WF007' OR SQLSTATE 'WF008' THEN
                r := to_jsonb(SQLERRM);
            END;
        WHEN 'side' THEN
            r := durable.side_effect(o->'value');
        WHEN 'info' THEN
            r := durable.workflow_info();
        WHEN 'now' THEN
            r := to_jsonb(durable.now());
        WHEN 'raise' THEN
            RAISE EXCEPTION 'fuzz raise %', o->>'code' USING ERRCODE = o->>'code';
        WHEN 'catch_all' THEN
            BEGIN
                RAISE EXCEPTION 'fuzz raise %', o->>'code' USING ERRCODE = o->>'code';
            EXCEPTION WHEN OTHERS THEN
                r := to_jsonb(SQLSTATE);
            END;
        WHEN 'write' THEN
            INSERT INTO fz.scratch VALUES ('workflow');
        WHEN 'random' THEN
            -- Non-deterministic: a replay may take the other branch.
            IF random() < 0.5 THEN
                r := durable.activity('echo', '1');
            ELSE
                PERFORM durable.sleep('1 second');
            END IF;
        WHEN 'pg_sleep' THEN
            PERFORM pg_sleep(LEAST((o->>'secs')::float8, 0.5));
        ELSE
            NULL;
        END CASE;
        acc := acc || COALESCE(r, 'null');
    END LOOP;
    RETURN COALESCE(input->'result', acc);
END $$;

-- Namespace privileges inside SECURITY DEFINER functions: durable checks them
-- for the current user at the call, as PostgreSQL checks table privileges.
-- A role's SECURITY DEFINER function acts with its owner's rights, never its
-- caller's: dr_b's helpers, called by dr_a (who has client and worker in
-- namespace ta), can neither read nor change dr_a's workflows there; dr_a's
-- own SECURITY DEFINER functions, granted to dr_c (no rights in ta), let dr_c
-- do in ta exactly what dr_a could, recorded as dr_a.
BEGIN;
SELECT plan(37);

CREATE ROLE dr_a IN ROLE durable_client, durable_worker;
CREATE ROLE dr_b IN ROLE durable_client, durable_worker;
CREATE ROLE dr_c IN ROLE durable_client;
SELECT durable.create_namespace('ta', '1 day');
SELECT durable.grant_namespace('ta', 'dr_a', 'client');
SELECT durable.grant_namespace('ta', 'dr_a', 'worker');

SET ROLE dr_a;
SELECT durable.start_workflow('t', '{"secret": "of a"}', id, 'qa', namespace => 'ta')
  FROM unnest('{wa-1,wa-2}'::text[]) id;
-- One decision task completed, so that the runs can be reset.
SELECT durable.complete_decision_task(durable.poll_decision_task('qa', namespace => 'ta')->>'taskToken', '[]');
SELECT durable.complete_decision_task(durable.poll_decision_task('qa', namespace => 'ta')->>'taskToken', '[]');
RESET ROLE;

-- The same helpers for both roles: each reads or changes a workflow of ta.
CREATE FUNCTION pg_temp.helpers(owner name) RETURNS void LANGUAGE plpgsql AS $make$
BEGIN
    EXECUTE format($f$
        CREATE FUNCTION public.%1$s_describe(wid text) RETURNS text
            LANGUAGE sql SECURITY DEFINER
            AS $$ SELECT durable.describe_workflow(wid, 'ta')->>'status' $$;
        CREATE FUNCTION public.%1$s_history(wid text) RETURNS bigint
            LANGUAGE sql SECURITY DEFINER
            AS $$ SELECT count(*) FROM durable.get_history(wid, 'ta') $$;
        CREATE FUNCTION public.%1$s_view() RETURNS bigint
            LANGUAGE sql SECURITY DEFINER
            AS $$ SELECT count(*) FROM durable.workflows WHERE namespace = 'ta' $$;
        CREATE FUNCTION public.%1$s_list() RETURNS bigint
            LANGUAGE sql SECURITY DEFINER
            AS $$ SELECT count(*) FROM durable.list_workflows('ta') $$;
        CREATE FUNCTION public.%1$s_count() RETURNS bigint
            LANGUAGE sql SECURITY DEFINER
            AS $$ SELECT durable.count_workflows('ta') $$;
        CREATE FUNCTION public.%1$s_signal(wid text) RETURNS void
            LANGUAGE sql SECURITY DEFINER
            AS $$ SELECT durable.signal_workflow(wid, 'ping', '{}', namespace => 'ta') $$;
        CREATE FUNCTION public.%1$s_reset(wid text) RETURNS uuid
            LANGUAGE sql SECURITY DEFINER
            AS $$ SELECT durable.reset_workflow(wid, 'by %1$s', 'ta') $$;
        CREATE FUNCTION public.%1$s_terminate(wid text) RETURNS void
            LANGUAGE sql SECURITY DEFINER
            AS $$ SELECT durable.terminate_workflow(wid, 'by %1$s', namespace => 'ta') $$;
        ALTER FUNCTION public.%1$s_describe(text) OWNER TO %1$s;
        ALTER FUNCTION public.%1$s_history(text) OWNER TO %1$s;
        ALTER FUNCTION public.%1$s_view() OWNER TO %1$s;
        ALTER FUNCTION public.%1$s_list() OWNER TO %1$s;
        ALTER FUNCTION public.%1$s_count() OWNER TO %1$s;
        ALTER FUNCTION public.%1$s_signal(text) OWNER TO %1$s;
        ALTER FUNCTION public.%1$s_reset(text) OWNER TO %1$s;
        ALTER FUNCTION public.%1$s_terminate(text) OWNER TO %1$s;
    $f$, owner);
END $make$;
SELECT pg_temp.helpers('dr_b');
SELECT pg_temp.helpers('dr_a');
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO PUBLIC;

-- 1. dr_b's helpers, called by dr_a: they act as dr_b, who has no right in ta.
CREATE TEMP TABLE before AS SELECT t.footprint() AS f;
GRANT SELECT ON before TO PUBLIC;
SET ROLE dr_a;
SELECT throws_ok($$ SELECT public.dr_b_describe('wa-1') $$, '42501',
    'permission denied for namespace "ta": privilege client required',
    'dr_b''s function called by dr_a: describe_workflow is refused');
SELECT throws_ok($$ SELECT public.dr_b_history('wa-1') $$, '42501', NULL,
    'get_history is refused');
SELECT is(public.dr_b_view(), 0::bigint, 'the workflows view shows none of ta''s runs');
SELECT throws_ok($$ SELECT public.dr_b_list() $$, '42501', NULL,
    'list_workflows is refused');
SELECT throws_ok($$ SELECT public.dr_b_count() $$, '42501', NULL,
    'count_workflows is refused');
SELECT throws_ok($$ SELECT public.dr_b_signal('wa-1') $$, '42501', NULL,
    'signal_workflow is refused');
SELECT throws_ok($$ SELECT public.dr_b_reset('wa-1') $$, '42501', NULL,
    'reset_workflow is refused');
SELECT throws_ok($$ SELECT public.dr_b_terminate('wa-1') $$, '42501', NULL,
    'terminate_workflow is refused');
-- dr_a's own calls work, and see the same as before.
SELECT is(durable.describe_workflow('wa-1', 'ta')->>'status', 'running',
    'dr_a itself still reads its workflow');
SELECT is((SELECT count(*) FROM durable.workflows WHERE namespace = 'ta'), 2::bigint,
    'and sees its runs in the view');
RESET ROLE;
SELECT is(t.footprint(), (SELECT f FROM before), 'the refused calls wrote nothing');

-- Queried by dr_b directly: the same answers.
SET ROLE dr_b;
SELECT throws_ok($$ SELECT durable.describe_workflow('wa-1', 'ta') $$, '42501', NULL,
    'dr_b''s own call is refused likewise');
SELECT is((SELECT count(*) FROM durable.workflows WHERE namespace = 'ta'), 0::bigint,
    'and its view shows nothing of ta');
RESET ROLE;

-- 2. dr_a's helpers, called by dr_c (no right in ta): they act as dr_a.
SET ROLE dr_c;
SELECT throws_ok($$ SELECT durable.describe_workflow('wa-1', 'ta') $$, '42501', NULL,
    'dr_c alone may not read ta');
SELECT is((SELECT count(*) FROM durable.workflows WHERE namespace = 'ta'), 0::bigint,
    'nor see its runs in the view');
SELECT is(public.dr_a_describe('wa-1'), 'running',
    'through dr_a''s SECURITY DEFINER function, describe_workflow answers');
SELECT cmp_ok(public.dr_a_history('wa-1'), '>=', 4::bigint, 'get_history answers');
SELECT is(public.dr_a_view(), 2::bigint, 'the view shows ta''s runs, as to dr_a');
SELECT is(public.dr_a_list(), 2::bigint, 'list_workflows lists them');
SELECT is(public.dr_a_count(), 2::bigint, 'count_workflows counts them');
SELECT lives_ok($$ SELECT public.dr_a_signal('wa-1') $$, 'signal_workflow works');
SELECT isnt(public.dr_a_reset('wa-2'), NULL::uuid, 'reset_workflow works');
SELECT lives_ok($$ SELECT public.dr_a_terminate('wa-1') $$, 'terminate_workflow works');
RESET ROLE;

-- What they did, and who is recorded: the current user at the call, dr_a.
SELECT is(durable.describe_workflow('wa-1', 'ta')->>'status', 'terminated',
    'wa-1 was terminated');
SELECT is((SELECT attributes->>'identity' FROM durable.get_history('wa-1', 'ta')
            WHERE event_type = 'WorkflowExecutionSignaled'), 'dr_a',
    'the signal records dr_a as identity');
SELECT is((SELECT attributes->>'identity' FROM durable.get_history('wa-1', 'ta')
            WHERE event_type = 'WorkflowExecutionTerminated'), 'dr_a',
    'the termination records dr_a');
SELECT is((SELECT origin->>'identity' FROM durable.runs
            WHERE namespace = 'ta' AND workflow_id = 'wa-2' AND origin IS NOT NULL), 'dr_a',
    'the reset''s new run records dr_a in its origin');
SELECT is((SELECT count(*) FROM durable.runs WHERE namespace = 'ta' AND workflow_id = 'wa-2'),
    2::bigint, 'the reset made a new run');

-- 3. Nested: dr_b's helper called inside dr_a's, called by dr_c: dr_b's rights.
CREATE FUNCTION public.dr_a_via_b(wid text) RETURNS text LANGUAGE sql SECURITY DEFINER
    AS $$ SELECT public.dr_b_describe(wid) $$;
ALTER FUNCTION public.dr_a_via_b(text) OWNER TO dr_a;
GRANT EXECUTE ON FUNCTION public.dr_a_via_b(text) TO PUBLIC;
SET ROLE dr_c;
SELECT throws_ok($$ SELECT public.dr_a_via_b('wa-1') $$, '42501', NULL,
    'dr_b''s function inside dr_a''s: dr_b''s rights, not dr_a''s');
RESET ROLE;

-- 4. A namespace created inside a SECURITY DEFINER function belongs to its owner.
CREATE ROLE dr_admin IN ROLE durable_admin;
CREATE FUNCTION public.admin_create(ns text) RETURNS void LANGUAGE sql SECURITY DEFINER
    AS $$ SELECT durable.create_namespace(ns, '1 day') $$;
ALTER FUNCTION public.admin_create(text) OWNER TO dr_admin;
GRANT EXECUTE ON FUNCTION public.admin_create(text) TO dr_c;
SET ROLE dr_c;
SELECT lives_ok($$ SELECT public.admin_create('tc') $$,
    'dr_c creates a namespace through a durable_admin member''s function');
SELECT throws_ok($$ SELECT durable.create_namespace('td', '1 day') $$, '42501', NULL,
    'but not directly');
RESET ROLE;
SELECT is((SELECT owner::text FROM durable.namespaces WHERE name = 'tc'), 'dr_admin',
    'its owner is the function''s owner');

-- 5. SET ROLE still counts: the current user is the role set.
SET ROLE dr_a;
SELECT is(durable.describe_workflow('wa-2', 'ta')->>'status', 'running',
    'SET ROLE dr_a reads ta');
RESET ROLE;
SET SESSION AUTHORIZATION dr_b;
SELECT throws_ok($$ SELECT durable.describe_workflow('wa-2', 'ta') $$, '42501', NULL,
    'a session of dr_b does not');
RESET SESSION AUTHORIZATION;

-- 6. The API functions are not SECURITY DEFINER (their caller would be
-- hidden): each runs as the extension's owner through src/base/caller.c, and a
-- new SECURITY DEFINER function would check its caller's session role.
SELECT is_empty($$ SELECT p.oid::regprocedure::text FROM pg_proc p
                    WHERE p.pronamespace = 'durable'::regnamespace AND p.prosecdef $$,
    'no function of durable is SECURITY DEFINER');
SELECT is(ARRAY(SELECT DISTINCT p.proname::text FROM pg_proc p
                  WHERE p.pronamespace = 'durable'::regnamespace
                    AND p.prosupport = 'durable.engine_support'::regproc ORDER BY 1),
    '{cancel_batch,count_workflows,count_workflows_by_status,get_history,list_workflows,preview_batch,start_batch}'::text[],
    'the SQL and PL/pgSQL API functions have the support function that loads the library');
SELECT is(has_function_privilege('dr_c', 'durable.engine_support(internal)', 'EXECUTE'),
    false, 'which no one may call');

SELECT * FROM finish();
ROLLBACK;

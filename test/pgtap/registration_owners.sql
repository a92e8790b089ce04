-- Registrations are owned (docs/privileges.md "Privileges"): a binding
-- belongs to the role that made it (durable.registrations.registered_by).
-- Only that role, its members and durable_admin may replace or unregister it;
-- another member of durable_worker gets 42501 and nothing changes, or its code
-- would run for the other team's workflows.
BEGIN;
SELECT plan(22);

CREATE ROLE own_team_a IN ROLE durable_worker;
CREATE ROLE own_team_b IN ROLE durable_worker;
CREATE ROLE own_alice IN ROLE own_team_a;
CREATE ROLE own_admin IN ROLE durable_admin;
CREATE SCHEMA own;
GRANT USAGE ON SCHEMA own TO PUBLIC;
CREATE FUNCTION own.a(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT '"a"'::jsonb $$;
CREATE FUNCTION own.b(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT '"b"'::jsonb $$;

-- The bindings as "kind type queue function run_as registered_by", in order.
CREATE FUNCTION pg_temp.bindings() RETURNS text LANGUAGE sql AS $$
    SELECT COALESCE(string_agg(format('%s %s %s %s %s %s', kind, type_name, task_queue,
                                      function, run_as, registered_by),
                               '; ' ORDER BY kind, type_name, task_queue), '')
      FROM durable.registrations WHERE type_name LIKE 'own%' $$;

SET LOCAL ROLE own_team_a;
SELECT lives_ok($$ SELECT durable.register_workflow('own_wf', 'own.a(jsonb)') $$,
    'team a registers a workflow type');
SELECT lives_ok($$ SELECT durable.register_activity('own_act', 'own.a(jsonb)') $$,
    'and an activity type');
RESET ROLE;
SELECT is(pg_temp.bindings(),
    'activity own_act default own.a(jsonb) own_team_a own_team_a; workflow own_wf default own.a(jsonb) own_team_a own_team_a',
    'the bindings belong to team a');

-- Another team may not take them over or drop them.
SET LOCAL ROLE own_team_b;
SELECT throws_ok($$ SELECT durable.register_workflow('own_wf', 'own.b(jsonb)') $$, '42501', NULL,
    'team b may not replace team a''s workflow binding: 42501');
SELECT throws_like($$ SELECT durable.register_workflow('own_wf', 'own.b(jsonb)') $$,
    '%workflow type "own_wf" on task queue "default" in namespace "default"%',
    'the error names the binding');
SELECT throws_ok($$ SELECT durable.register_activity('own_act', 'own.b(jsonb)') $$, '42501', NULL,
    'nor its activity binding');
SELECT throws_ok($$ SELECT durable.unregister_workflow('own_wf') $$, '42501', NULL,
    'nor unregister the workflow type');
SELECT throws_ok($$ SELECT durable.unregister_activity('own_act') $$, '42501', NULL,
    'nor the activity type');
SELECT lives_ok($$ SELECT durable.register_workflow('own_wf', 'own.b(jsonb)', task_queue => 'own_q') $$,
    'the same type on another task queue is another binding: team b may make it');
SELECT lives_ok($$ SELECT durable.register_workflow('own_wf_b', 'own.b(jsonb)') $$,
    'and so is another type');
SELECT is(durable.unregister_activity('own_never'), false,
    'unregistering a type nobody registered is false, as before');
RESET ROLE;
SELECT is(pg_temp.bindings(),
    'activity own_act default own.a(jsonb) own_team_a own_team_a; '
    'workflow own_wf default own.a(jsonb) own_team_a own_team_a; '
    'workflow own_wf own_q own.b(jsonb) own_team_b own_team_b; '
    'workflow own_wf_b default own.b(jsonb) own_team_b own_team_b',
    'team a''s bindings are unchanged');

-- A member of the owner may replace it; the binding keeps its owner.
SET LOCAL ROLE own_alice;
SELECT lives_ok($$ SELECT durable.register_workflow('own_wf', 'own.b(jsonb)', run_as => 'own_team_a') $$,
    'a member of team a replaces team a''s binding');
RESET ROLE;
SELECT is((SELECT format('%s %s %s', function, run_as, registered_by) FROM durable.registrations
            WHERE type_name = 'own_wf' AND task_queue = 'default'),
    'own.b(jsonb) own_team_a own_team_a', 'the new function, still owned by team a');

-- Team a, in turn, may not touch team b's.
SET LOCAL ROLE own_team_a;
SELECT throws_ok($$ SELECT durable.unregister_workflow('own_wf', 'own_q') $$, '42501', NULL,
    'team a may not unregister team b''s binding');
SELECT throws_ok($$ SELECT durable.register_workflow('own_wf_b', 'own.a(jsonb)') $$, '42501', NULL,
    'nor replace it');
SELECT is(durable.unregister_activity('own_act'), true, 'team a unregisters its own activity type');
RESET ROLE;

-- durable_admin may replace and drop any binding.
SET LOCAL ROLE own_admin;
SELECT lives_ok($$ SELECT durable.register_workflow('own_wf_b', 'own.a(jsonb)') $$,
    'durable_admin replaces team b''s binding');
SELECT is(durable.unregister_workflow('own_wf', 'own_q'), true,
    'and unregisters another of team b''s');
RESET ROLE;
SELECT is(pg_temp.bindings(),
    'workflow own_wf default own.b(jsonb) own_team_a own_team_a; '
    'workflow own_wf_b default own.a(jsonb) own_admin own_team_b',
    'the bindings after the owners and the admin changed them');
SELECT is(durable.unregister_workflow('own_wf'), true, 'a superuser may drop any binding');
SELECT is(pg_temp.bindings(), 'workflow own_wf_b default own.a(jsonb) own_admin own_team_b',
    'it is gone');

SELECT * FROM finish();
ROLLBACK;

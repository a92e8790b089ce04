-- Versions of workflow code recorded in history (docs/sql-workflows.md "Changing
-- workflow code"): durable.get_version(), durable.patched() and
-- durable.deprecate_patch(), run by durable.run_tasks() in this session.  A run that
-- passed the changed point before the change keeps the old branch (DEFAULT_VERSION -1,
-- no command taken), a new run records a "Version" marker and takes the new branch, a
-- version outside the supported range fails the decision task as non-deterministic,
-- and bad arguments are refused.
BEGIN;
SELECT plan(54);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

CREATE ROLE wv_app;
CREATE SCHEMA app;
GRANT USAGE ON SCHEMA app TO wv_app;
CREATE FUNCTION app.echo(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT input $$;
SELECT durable.register_activity('echo', 'app.echo(jsonb)', run_as => 'wv_app');
SELECT durable.register_activity('extra', 'app.echo(jsonb)', run_as => 'wv_app');

-- pg_temp.wf(type, name, body): CREATE OR REPLACE FUNCTION app.<name>(input jsonb)
-- RETURNS jsonb LANGUAGE plpgsql with that body, registered as workflow type <type>.
CREATE FUNCTION pg_temp.wf(wtype text, fname text, body text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('CREATE OR REPLACE FUNCTION app.%I(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS %L',
                   fname, body);
    PERFORM durable.register_workflow(wtype, format('app.%I(jsonb)', fname)::regprocedure,
                                      run_as => 'wv_app');
END $$;
CREATE FUNCTION pg_temp.outcome(wid text) RETURNS text LANGUAGE sql AS $$
    SELECT format('%s %s', d->>'status', COALESCE(NULLIF(d->'result', 'null'), NULLIF(d->'failure', 'null')))
      FROM durable.describe_workflow(wid) d $$;
CREATE FUNCTION pg_temp.markers(wid text) RETURNS jsonb LANGUAGE sql AS $$
    SELECT COALESCE(jsonb_agg(attributes - 'decisionTaskCompletedEventId' ORDER BY event_id), '[]')
      FROM durable.get_history(wid) WHERE event_type = 'MarkerRecorded' $$;

-- 1. get_version: a run started on version 1 keeps the old branch, a new run takes
-- the new one.
SELECT pg_temp.wf('ship', 'ship_v1', $$
BEGIN
    PERFORM durable.activity('echo', '"pack"');
    PERFORM durable.sleep('1 hour');
    RETURN '"v1"';
END $$);
SELECT durable.start_workflow('ship', NULL, 'ship-old') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 3, 'ship-old: its activity ran, it sleeps');

SELECT pg_temp.wf('ship', 'ship_v2', $$
DECLARE v int;
BEGIN
    v := durable.get_version('gift-wrap', -1, 1);
    IF v = 1 THEN
        PERFORM durable.activity('extra', '"wrap"');
    END IF;
    PERFORM durable.activity('echo', '"pack"');
    PERFORM durable.sleep('1 hour');
    RETURN jsonb_build_object('version', v, 'again', durable.get_version('gift-wrap', -1, 1));
END $$);
SELECT durable.start_workflow('ship', NULL, 'ship-new') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 5, 'ship-new: two activities, then it sleeps');
SELECT is(pg_temp.markers('ship-new'),
    '[{"markerName": "Version", "details": {"id": 1, "changeId": "gift-wrap", "version": 1}}]',
    'ship-new recorded the version marker {id, changeId, version: max_supported}');
SELECT is((t.events('ship-new', from_id => 4))[1:3], '{DecisionTaskCompleted,MarkerRecorded,ActivityTaskScheduled}',
    'the marker is the first event of the first decision');
SELECT is(t.attrs('ship-new', 'ActivityTaskScheduled')->>'activityId', '2',
    'the marker took command number 1: the activity is 2');
SELECT is(t.attrs('ship-new', 'ActivityTaskScheduled')->>'activityType', 'extra', 'ship-new took the new branch');
SELECT t.at('2026-01-01 01:00:00+00');
SELECT cmp_ok(durable.tick(), '>=', 2, 'both timers fire');
SELECT is(durable.run_tasks(), 2, 'a decision task each');
SELECT is(pg_temp.outcome('ship-old'), 'completed {"again": -1, "version": -1}',
    'ship-old, started on version 1, took the old branch: DEFAULT_VERSION -1, every call');
SELECT is(pg_temp.markers('ship-old'), '[]', 'and recorded no marker');
SELECT is(pg_temp.outcome('ship-new'), 'completed {"again": 1, "version": 1}',
    'ship-new replayed its marker: version 1, every call');
SELECT is(jsonb_array_length(pg_temp.markers('ship-new')), 1, 'one marker for the two calls');

-- 2. A run that passed the point in a decision task of the past without a command
-- there (it waited for a signal): DEFAULT_VERSION, no command taken.
SELECT pg_temp.wf('sig', 'sig_v1', $$
BEGIN
    PERFORM durable.activity('echo', '"a"');
    PERFORM durable.wait_signal('go');
    RETURN durable.activity('echo', '"b"');
END $$);
SELECT durable.start_workflow('sig', NULL, 'sig-old') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 3, 'sig-old waits for its signal');
SELECT pg_temp.wf('sig', 'sig_v2', $$
DECLARE v int;
BEGIN
    PERFORM durable.activity('echo', '"a"');
    v := durable.get_version('check', -1, 1);
    PERFORM durable.wait_signal('go');
    RETURN jsonb_build_object('v', v, 'b', durable.activity('echo', '"b"'));
END $$);
SELECT durable.start_workflow('sig', NULL, 'sig-new') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 3, 'sig-new waits for its signal');
SELECT durable.signal_workflow('sig-old', 'go');
SELECT durable.signal_workflow('sig-new', 'go');
SELECT is(durable.run_tasks(), 6, 'both go on');
SELECT is(pg_temp.outcome('sig-old'), 'completed {"b": "b", "v": -1}',
    'sig-old had passed the point in a past decision task: -1');
SELECT is(t.attrs('sig-old', 'ActivityTaskScheduled', 2)->>'activityId', '2', 'and no command number was taken');
SELECT is(pg_temp.outcome('sig-new'), 'completed {"b": "b", "v": 1}', 'sig-new recorded version 1');
SELECT is(t.attrs('sig-new', 'ActivityTaskScheduled', 2)->>'activityId', '3', 'its marker is command 2');

-- 3. A version outside the supported range fails the decision task as
-- non-deterministic, naming the change, the version and the range.
SELECT pg_temp.wf('rng', 'rng_v1', $$
BEGIN
    PERFORM durable.sleep('1 hour');
    RETURN '"v1"';
END $$);
SELECT durable.start_workflow('rng', NULL, 'rng-old') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 1, 'rng-old sleeps');
SELECT pg_temp.wf('rng', 'rng_v2', $$
DECLARE v int := durable.get_version('fast', -1, 1);
BEGIN
    PERFORM durable.sleep('1 hour');
    RETURN to_jsonb(v);
END $$);
SELECT durable.start_workflow('rng', NULL, 'rng-new') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 1, 'rng-new sleeps');
-- Version 3 drops the old branch and version 1.
SELECT pg_temp.wf('rng', 'rng_v3', $$
DECLARE v int := durable.get_version('fast', 2, 2);
BEGIN
    PERFORM durable.sleep('1 hour');
    RETURN to_jsonb(v);
END $$);
SELECT t.at('2026-01-01 02:00:00+00');
SELECT is(durable.tick() + durable.run_tasks(), 4, 'the timers fire, a decision task each');
SELECT is(t.attrs('rng-old', 'DecisionTaskFailed')->>'cause', 'NonDeterministicWorkflow',
    'rng-old: its decision task fails with cause NonDeterministicWorkflow');
SELECT is(t.attrs('rng-old', 'DecisionTaskFailed')->'details'->>'message',
    'change "fast": the run has version -1, but the workflow supports versions 2 to 2',
    'the details name the change, the version of the run (DEFAULT_VERSION) and the range');
SELECT is(t.attrs('rng-new', 'DecisionTaskFailed')->'details'->>'message',
    'change "fast": the run has version 1, but the workflow supports versions 2 to 2',
    'rng-new: the recorded version 1 is below the range');
SELECT is(pg_temp.outcome('rng-old') || pg_temp.outcome('rng-new'), 'running running ',
    'both wait for code that supports them');
SELECT pg_temp.wf('rng', 'rng_v4', $$
DECLARE v int := durable.get_version('fast', -1, 2);
BEGIN
    PERFORM durable.sleep('1 hour');
    RETURN to_jsonb(v);
END $$);
SELECT t.at('2026-01-01 02:00:05+00');
SELECT is(durable.tick() + durable.run_tasks(), 4, 'the retried decision tasks run code that supports both');
SELECT is(pg_temp.outcome('rng-old') || pg_temp.outcome('rng-new'), 'completed -1completed 1',
    'rng-old on the old branch, rng-new on version 1');

-- 4. patched() and deprecate_patch(): the same marker, version 1.
SELECT t.at('2026-01-01 10:00:00+00');
SELECT pg_temp.wf('pat', 'pat_v1', $$
BEGIN
    PERFORM durable.activity('echo', '"a"');
    PERFORM durable.sleep((input->>'wait')::interval);
    RETURN '"v1"';
END $$);
SELECT durable.start_workflow('pat', '{"wait": "1 hour"}', 'pat-old') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 3, 'pat-old sleeps');
SELECT pg_temp.wf('pat', 'pat_v2', $$
DECLARE p boolean := durable.patched('extra-step');
BEGIN
    IF p THEN
        PERFORM durable.activity('extra', '"x"');
    END IF;
    PERFORM durable.activity('echo', '"a"');
    PERFORM durable.sleep((input->>'wait')::interval);
    RETURN jsonb_build_object('patched', p, 'again', durable.patched('extra-step'));
END $$);
SELECT durable.start_workflow('pat', '{"wait": "1 hour"}', 'pat-new') IS NOT NULL AS started;
SELECT durable.start_workflow('pat', '{"wait": "2 hours"}', 'pat-mid') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 10, 'pat-new and pat-mid sleep');
SELECT is(pg_temp.markers('pat-new'),
    '[{"markerName": "Version", "details": {"id": 1, "changeId": "extra-step", "version": 1}}]',
    'patched() records the version marker with version 1');
SELECT t.at('2026-01-01 11:00:00+00');
SELECT is(durable.tick() + durable.run_tasks(), 4, 'pat-old and pat-new wake up');
SELECT is(pg_temp.outcome('pat-old'), 'completed {"again": false, "patched": false}',
    'pat-old, past the point before the patch: patched() is false');
SELECT is(pg_temp.outcome('pat-new'), 'completed {"again": true, "patched": true}', 'pat-new: true');
-- Every run that took the old branch is closed: deprecate_patch() keeps the marker.
SELECT pg_temp.wf('pat', 'pat_v3', $$
BEGIN
    PERFORM durable.deprecate_patch('extra-step');
    PERFORM durable.activity('extra', '"x"');
    PERFORM durable.activity('echo', '"a"');
    PERFORM durable.sleep((input->>'wait')::interval);
    RETURN '"v3"';
END $$);
SELECT durable.start_workflow('pat', '{"wait": "1 hour"}', 'pat-dep') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 5, 'pat-dep sleeps');
SELECT is(pg_temp.markers('pat-dep'),
    '[{"markerName": "Version", "details": {"id": 1, "changeId": "extra-step", "version": 1, "deprecated": true}}]',
    'deprecate_patch() records the marker, deprecated');
SELECT t.at('2026-01-01 12:00:00+00');
SELECT is(durable.tick() + durable.run_tasks(), 4, 'pat-mid and pat-dep wake up');
SELECT is(pg_temp.outcome('pat-mid'), 'completed "v3"', 'pat-mid, patched by version 2, accepted by version 3');
SELECT is(pg_temp.outcome('pat-dep'), 'completed "v3"', 'pat-dep completes');
-- Then the call goes: a deprecated marker is passed over by code that does not call it.
SELECT durable.start_workflow('pat', '{"wait": "1 hour"}', 'pat-dep2') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 5, 'pat-dep2 sleeps, on version 3');
SELECT pg_temp.wf('pat', 'pat_v4', $$
BEGIN
    PERFORM durable.activity('extra', '"x"');
    PERFORM durable.activity('echo', '"a"');
    PERFORM durable.sleep((input->>'wait')::interval);
    RETURN '"v4"';
END $$);
SELECT t.at('2026-01-01 13:00:00+00');
SELECT is(durable.tick() + durable.run_tasks(), 2, 'pat-dep2 wakes up on version 4');
SELECT is(pg_temp.outcome('pat-dep2'), 'completed "v4"', 'version 4 passed over the deprecated marker');

-- 5. Bad arguments, inside a workflow function: the workflow fails with the SQLSTATE.
SELECT pg_temp.wf('bad', 'bad', $$
BEGIN
    RETURN to_jsonb(durable.get_version(input->>'id', (input->>'min')::int, (input->>'max')::int));
END $$);
SELECT durable.start_workflow('bad', '{"id": "c", "min": 2, "max": 1}', 'bad-range') IS NOT NULL AS started;
SELECT durable.start_workflow('bad', '{"id": "c", "min": -2, "max": 1}', 'bad-min') IS NOT NULL AS started;
SELECT durable.start_workflow('bad', '{"min": 1, "max": 1}', 'bad-null') IS NOT NULL AS started;
SELECT durable.start_workflow('bad', '{"id": "", "min": 1, "max": 1}', 'bad-empty') IS NOT NULL AS started;
SELECT durable.start_workflow('bad', jsonb_build_object('id', repeat('x', 1001), 'min', 1, 'max', 1),
                              'bad-long') IS NOT NULL AS started;
SELECT durable.start_workflow('bad', '{"id": "c", "max": 1}', 'bad-nullmin') IS NOT NULL AS started;
SELECT durable.start_workflow('bad', '{"id": "c", "min": 1, "max": 3}', 'good') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 7, 'a decision task each');
CREATE FUNCTION pg_temp.failure(wid text) RETURNS text LANGUAGE sql AS $$
    SELECT format('%s %s', a->>'reason', a->'details'->>'message')
      FROM (SELECT t.attrs(wid, 'WorkflowExecutionFailed') a) x $$;
SELECT is(pg_temp.failure('bad-range'), '22023 min_supported (2) must not be greater than max_supported (1)',
    'min_supported > max_supported: 22023');
SELECT is(pg_temp.failure('bad-min'), '22023 min_supported must be at least -1 (DEFAULT_VERSION)',
    'min_supported below -1: 22023');
SELECT is(pg_temp.failure('bad-null'), '22004 change_id must not be null', 'a null change_id: 22004');
SELECT is(pg_temp.failure('bad-empty'), '22023 change_id must not be empty', 'an empty change_id: 22023');
SELECT is(pg_temp.failure('bad-long'), '22023 change_id is too long', 'a change_id over 1000 bytes: 22023');
SELECT is(pg_temp.failure('bad-nullmin'), '22004 min_supported must not be null', 'a null min_supported: 22004');
SELECT is(pg_temp.outcome('good'), 'completed 3', 'and a good call records max_supported');
SELECT is((SELECT count(*) FROM durable.history h JOIN durable.runs r USING (run_id)
            WHERE r.workflow_type = 'bad' AND h.event_type = 'MarkerRecorded'), 1::bigint,
    'no marker was recorded by a refused call');

-- 6. Outside a workflow function: 55000.
SELECT throws_ok($$ SELECT durable.get_version('c', -1, 1) $$, '55000',
    'durable.get_version() can only be called inside a workflow function run by durable',
    'get_version() outside a workflow function: 55000');
SELECT throws_ok($$ SELECT durable.patched('c') $$, '55000', NULL, 'patched() outside: 55000');
SELECT throws_ok($$ SELECT durable.deprecate_patch('c') $$, '55000', NULL, 'deprecate_patch() outside: 55000');

SELECT * FROM finish();
ROLLBACK;

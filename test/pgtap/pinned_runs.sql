-- Running workflows kept on the function they ran with (docs/sql-workflows.md
-- "Keeping running workflows on their function"): register_workflow(..., running =>
-- 'keep'), the function describe_workflow and the workflows view show, move_runs(), a
-- ContinueAsNew (a retry) and a reset, and the check of DROP FUNCTION for kept runs.
BEGIN;
SELECT plan(43);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

CREATE ROLE pr_app;
CREATE ROLE pr_client;   GRANT durable_client TO pr_client;
CREATE SCHEMA app;
GRANT USAGE ON SCHEMA app TO pr_app;
CREATE FUNCTION app.echo(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT input $$;
SELECT durable.register_activity('echo', 'app.echo(jsonb)', run_as => 'pr_app');
SELECT durable.register_activity('audit', 'app.echo(jsonb)', run_as => 'pr_app');

-- Version 1: an activity, a day's sleep, then it fails if asked to.
CREATE FUNCTION app.flow_v1(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM durable.activity('echo', '"v1"');
    PERFORM durable.sleep('1 day');
    IF input->>'fail' = 'yes' THEN
        RAISE EXCEPTION 'version 1 fails';
    END IF;
    RETURN '"v1"';
END $$;
-- Version 2 audits first: the runs of version 1 that passed that point do not
-- replay with it.
CREATE FUNCTION app.flow_v2(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM durable.activity('audit', '"v2"');
    PERFORM durable.activity('echo', '"v2"');
    PERFORM durable.sleep('1 day');
    RETURN '"v2"';
END $$;
-- describe_workflow's function, and whether it is kept.
CREATE FUNCTION pg_temp.fn(wid text) RETURNS text LANGUAGE sql AS $$
    SELECT format('%s %s', d->>'function', d->>'functionPinned')
      FROM durable.describe_workflow(wid) d $$;
CREATE FUNCTION pg_temp.outcome(wid text) RETURNS text LANGUAGE sql AS $$
    SELECT format('%s %s', d->>'status', COALESCE(NULLIF(d->'result', 'null'), NULLIF(d->'failure', 'null')))
      FROM durable.describe_workflow(wid) d $$;

SELECT durable.register_workflow('flow', 'app.flow_v1(jsonb)', run_as => 'pr_app');
SELECT durable.start_workflow('flow', NULL, 'p-1') IS NOT NULL AS started;
SELECT durable.start_workflow('flow', '{"fail": "yes"}', 'p-retry',
    retry_policy => durable.retry_policy('1 second', maximum_attempts => 2)) IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 6, 'p-1 and p-retry run their activity and sleep');
SELECT durable.start_workflow('flow', NULL, 'p-m') IS NOT NULL AS started;
SELECT is(pg_temp.fn('p-1'), 'app.flow_v1(jsonb) false',
          'describe_workflow: the registration''s function, not kept');
SELECT is((SELECT function::text FROM durable.workflows WHERE workflow_id = 'p-1'),
          'app.flow_v1(jsonb)', 'and the workflows view');
SELECT durable.start_workflow('ext', NULL, 'p-ext', 'nowhere') IS NOT NULL AS started;
SELECT is(durable.describe_workflow('p-ext') ?| '{function,functionPinned}', false,
          'a type that no function runs: neither key');

-- 1. Registered again with running => 'keep'.
SELECT durable.register_workflow('flow', 'app.flow_v2(jsonb)', run_as => 'pr_app', running => 'keep');
SELECT is(pg_temp.fn('p-1'), 'app.flow_v1(jsonb) true', 'a running workflow keeps its function');
SELECT is(pg_temp.fn('p-m'), 'app.flow_v1(jsonb) true',
          'one whose first decision task has not run too: it started before the registration');
SELECT is((SELECT pinned_function::text FROM durable.runs WHERE workflow_id = 'p-retry'),
          'app.flow_v1(jsonb)', 'runs.pinned_function names it');
SELECT is((SELECT function::text FROM durable.workflows WHERE workflow_id = 'p-1'),
          'app.flow_v1(jsonb)', 'the view shows the kept function');
SELECT durable.start_workflow('flow', NULL, 'p-2') IS NOT NULL AS started;
SELECT is(pg_temp.fn('p-2'), 'app.flow_v2(jsonb) false', 'a new run uses the new function');
SELECT is((SELECT pinned_function FROM durable.runs WHERE workflow_id = 'p-2'), NULL,
          'and keeps none: NULL follows the registration');
SELECT is((SELECT pinned_function FROM durable.runs WHERE workflow_id = 'p-ext'), NULL,
          'a run of another type is not touched');

-- Registering again with 'move' (the default) moves the runs that follow the
-- registration, not those kept on a function.
SELECT durable.register_workflow('flow', 'app.flow_v2(jsonb)', run_as => 'pr_app');
SELECT is(pg_temp.fn('p-1'), 'app.flow_v1(jsonb) true', 'running => ''move'' leaves kept runs kept');

-- 2. move_runs.
SELECT is(durable.move_runs('flow', workflow_id => 'p-m'), 1::bigint, 'move_runs of one workflow: 1');
SELECT is(pg_temp.fn('p-m'), 'app.flow_v2(jsonb) false', 'it follows the registration again');
SELECT is(durable.move_runs('flow', workflow_id => 'p-m'), 0::bigint, 'moved again: nothing to move');
SELECT is(durable.move_runs('flow', 'app.flow_v2(jsonb)'), 0::bigint,
          'from a function no run keeps: 0');
SELECT is(durable.move_runs('nothing'), 0::bigint, 'a type without kept runs: 0');

SELECT is(durable.run_tasks(), 10, 'p-2 and the moved p-m run version 2: three decision tasks and two activities each');
SELECT is((SELECT count(*) FROM durable.get_history('p-m')
            WHERE event_type = 'ActivityTaskScheduled' AND attributes->>'activityType' = 'audit'),
          1::bigint, 'the moved run ran the new function');
SELECT is((SELECT count(*) FROM durable.get_history('p-1') WHERE event_type = 'DecisionTaskFailed'),
          0::bigint, 'no decision task of the kept runs failed');

-- 3. The kept runs finish on version 1; a retry (ContinueAsNew) takes version 2.
SELECT t.at('2026-01-02 00:00:00+00');
SELECT is(durable.tick() + durable.run_tasks(), 8, 'the four runs wake up');
SELECT is(pg_temp.outcome('p-1'), 'completed "v1"', 'p-1 completes on version 1');
SELECT is(pg_temp.outcome('p-2'), 'completed "v2"', 'p-2 on version 2');
SELECT is(pg_temp.outcome('p-m'), 'completed "v2"', 'the moved p-m on version 2');
SELECT is((SELECT status FROM durable.runs WHERE workflow_id = 'p-retry' AND pinned_function IS NOT NULL),
          'continued_as_new', 'p-retry''s run fails on version 1 and is continued as new by its retry policy');
SELECT t.at('2026-01-02 00:00:01+00');
SELECT is(durable.tick() + durable.run_tasks(), 6, 'its next run starts after the backoff, and runs');
SELECT is(pg_temp.fn('p-retry'), 'app.flow_v2(jsonb) false', 'the continued run uses the new function');
SELECT is((SELECT count(*) FROM durable.get_history('p-retry')
            WHERE event_type = 'ActivityTaskScheduled' AND attributes->>'activityType' = 'audit'),
          1::bigint, 'and runs it');

-- 4. A reset of a kept run keeps its function (its history came from it).
SELECT durable.reset_workflow('p-1', 'again') IS NOT NULL AS reset;
SELECT is(pg_temp.fn('p-1'), 'app.flow_v1(jsonb) true', 'a reset run keeps the function of the run it resets');
SELECT is(durable.run_tasks(), 1, 'and replays with it');
SELECT is(pg_temp.outcome('p-1'), 'completed "v1"', 'completing on version 1');

-- 5. The check of DROP FUNCTION counts kept runs.
SELECT durable.start_workflow('flow', NULL, 'p-3') IS NOT NULL AS started;
SELECT durable.register_workflow('flow', 'app.echo(jsonb)', run_as => 'pr_app', running => 'keep');
SELECT is(pg_temp.fn('p-3'), 'app.flow_v2(jsonb) true', 'p-3 keeps version 2');
SET LOCAL durable.replay_check_on_replace = 'error';
SELECT throws_ok($$ DROP FUNCTION app.flow_v2(jsonb) $$, '55000',
    'cannot drop function app.flow_v2(jsonb): running workflows of type "flow" use it',
    'under error, a drop of a function that kept runs use is refused');
SELECT lives_ok($$ DROP FUNCTION app.flow_v1(jsonb) $$, 'a function no running workflow uses may go');
SET LOCAL durable.replay_check_on_replace = 'warning';
SELECT durable.register_workflow('flow', 'app.flow_v2(jsonb)', run_as => 'pr_app');

-- 6. Arguments and privileges.
SELECT throws_ok($$ SELECT durable.register_workflow('flow', 'app.flow_v2(jsonb)', run_as => 'pr_app', running => 'stay') $$,
    '22023', 'running must be "keep" or "move"', 'running other than keep or move: 22023');
SELECT throws_ok($$ SELECT durable.register_workflow('flow', 'app.flow_v2(jsonb)', run_as => 'pr_app', running => NULL) $$,
    '22004', 'running must not be null', 'a null running: 22004');
CREATE FUNCTION app.gone(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT input $$;
SELECT durable.register_workflow('other', 'app.gone(jsonb)', run_as => 'pr_app');
SELECT durable.start_workflow('other', NULL, 'p-o') IS NOT NULL AS started;
SET LOCAL durable.replay_check_on_replace = 'off';
DROP FUNCTION app.gone(jsonb);
SELECT throws_ok($$ SELECT durable.register_workflow('other', 'app.echo(jsonb)', run_as => 'pr_app', running => 'keep') $$,
    '55000', NULL, 'keeping runs on a function that was dropped: 55000');
CREATE FUNCTION app.private(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT input $$;
REVOKE EXECUTE ON FUNCTION app.private(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION app.private(jsonb) TO pr_app;
CREATE ROLE pr_other;
SELECT durable.register_workflow('priv', 'app.private(jsonb)', run_as => 'pr_app');
SELECT durable.start_workflow('priv', NULL, 'p-p') IS NOT NULL AS started;
SELECT throws_ok($$ SELECT durable.register_workflow('priv', 'app.echo(jsonb)', run_as => 'pr_other', running => 'keep') $$,
    '42501', 'role "pr_other" may not execute function app.private(jsonb), which running workflows of type "priv" would keep',
    'keeping runs on a function the new run_as may not execute: 42501');
SELECT throws_ok($$ SELECT durable.move_runs(NULL) $$, '22004', 'workflow_type must not be null',
    'move_runs: a null workflow_type: 22004');
SELECT throws_ok($$ SELECT durable.move_runs('flow', workflow_id => '') $$, '22023', 'workflow_id must not be empty',
    'an empty workflow_id: 22023');
SELECT throws_ok($$ SELECT durable.move_runs('flow', namespace => 'nowhere') $$, 'WF002', NULL,
    'an unknown namespace: WF002');
SET LOCAL ROLE pr_client;
SELECT is(durable.move_runs('flow'), 2::bigint,
          'a client moves the kept runs of its namespace (p-3, and p-retry''s run on version 2)');
RESET ROLE;
SELECT durable.create_namespace('closed');
SET LOCAL ROLE pr_client;
SELECT throws_ok($$ SELECT durable.move_runs('flow', namespace => 'closed') $$, '42501',
    'permission denied for namespace "closed": privilege client required', 'not those of another');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;

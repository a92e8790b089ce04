-- Long SQL workflows (docs/sql-workflows.md): the executor keeps a run's history, as
-- replay indexed it, from one decision task of a chain to the next and reads only the
-- events appended since (src/sqlwf/replay.c, ReplayWorkflow).  A 100-step workflow
-- completes with the exact history; a workflow run in long chains has the same history,
-- event for event, as the same workflow run one task a chain (each task reading its whole
-- history); a signal in the middle is seen; and non-determinism that shows up in the
-- middle of a chain is still found.
BEGIN;
SELECT plan(20);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

CREATE ROLE wf_long;
CREATE SCHEMA app;
GRANT USAGE ON SCHEMA app TO wf_long;
-- Counts how often code ran: nextval() survives the rollback of what the code wrote.
CREATE SEQUENCE app.runs;
CREATE SEQUENCE app.echo_calls;
GRANT USAGE ON SEQUENCE app.runs, app.echo_calls TO wf_long;
-- What the nd workflow's code does at step 10: an activity writes it.
CREATE TABLE app.mode (m text);
INSERT INTO app.mode VALUES ('a');
GRANT SELECT, UPDATE ON app.mode TO wf_long;

CREATE FUNCTION app.echo(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM nextval('app.echo_calls');
    RETURN input;
END $$;
CREATE FUNCTION app.switch_mode(input jsonb) RETURNS jsonb LANGUAGE sql AS
    $$ UPDATE app.mode SET m = 'b' RETURNING to_jsonb(m) $$;
SELECT durable.register_activity('echo', 'app.echo(jsonb)', run_as => 'wf_long');
SELECT durable.register_activity('other', 'app.echo(jsonb)', run_as => 'wf_long');
SELECT durable.register_activity('switch_mode', 'app.switch_mode(jsonb)', run_as => 'wf_long');

-- 1. A workflow of input->'n' sequential activities.
CREATE FUNCTION app.steps(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
    total int := 0;
BEGIN
    PERFORM nextval('app.runs');
    FOR i IN 1 .. (input->>'n')::int LOOP
        total := total + (durable.activity('echo', to_jsonb(i)))::int;
    END LOOP;
    RETURN jsonb_build_object('total', total);
END $$;
SELECT durable.register_workflow('steps', 'app.steps(jsonb)', run_as => 'wf_long');

SELECT durable.start_workflow('steps', '{"n": 100}', 'steps-100') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 201, 'run_tasks: 101 decision tasks and 100 activities, until the workflow closes');
SELECT is(durable.describe_workflow('steps-100')->>'status', 'completed', 'the 100-step workflow completed');
SELECT is(durable.describe_workflow('steps-100')->'result', '{"total": 5050}', 'with the sum of its 100 results');
SELECT is(currval('app.runs'), 101::bigint, 'the function ran once a decision task');
SELECT is(currval('app.echo_calls'), 100::bigint, 'each activity ran once');
SELECT is((SELECT count(*) FROM durable.get_history('steps-100') WHERE event_type = 'ActivityTaskCompleted'),
    100::bigint, '100 ActivityTaskCompleted');
SELECT is((SELECT array_agg(event_id ORDER BY event_id) FROM durable.get_history('steps-100')),
    (SELECT array_agg(i::bigint ORDER BY i) FROM generate_series(1, 605) i),
    'event ids 1 to 605, dense');
-- Each step: the decision task that scheduled the activity, then the activity.
SELECT is(t.events('steps-100'),
    ARRAY['WorkflowExecutionStarted']
    || (SELECT array_agg(e ORDER BY k, o) FROM generate_series(1, 100) k,
          unnest('{DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,ActivityTaskScheduled,
                   ActivityTaskStarted,ActivityTaskCompleted}'::text[]) WITH ORDINALITY AS s(e, o))
    || '{DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,WorkflowExecutionCompleted}'::text[],
    'the events of 100 steps, in order');
-- Step k's events are 1 + 6(k-1) + 1 .. 6: each names the right events and command.
SELECT is((SELECT count(*) FROM generate_series(1, 100) k,
                  LATERAL (SELECT 1 + 6 * (k - 1) AS b) b
            WHERE (SELECT attributes FROM durable.get_history('steps-100') WHERE event_id = b + 3)
                    = jsonb_build_object('identity', 'durable-executor:' || pg_backend_pid(),
                                         'scheduledEventId', b + 1, 'startedEventId', b + 2)
              AND (SELECT attributes - 'retryPolicy' - 'startToCloseTimeoutSeconds'
                     FROM durable.get_history('steps-100') WHERE event_id = b + 4)
                    = jsonb_build_object('activityId', k::text, 'activityType', 'echo',
                                         'taskQueue', 'default', 'input', k,
                                         'decisionTaskCompletedEventId', b + 3)
              AND (SELECT attributes FROM durable.get_history('steps-100') WHERE event_id = b + 6)
                    = jsonb_build_object('result', k, 'scheduledEventId', b + 4,
                                         'startedEventId', b + 5,
                                         'identity', 'durable-executor:' || pg_backend_pid())),
    100::bigint, 'each step''s events name their decision task, command number, input and result');

-- 2. The same workflow in long chains and one task a chain: the same history.  A signal
-- in the middle, a side effect and a version marker, and a timer.
CREATE FUNCTION app.mixed(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
    r jsonb := '[]';
    s jsonb;
BEGIN
    FOR i IN 1 .. 30 LOOP
        r := r || durable.activity('echo', to_jsonb(i));
    END LOOP;
    r := r || durable.side_effect('"effect"') || to_jsonb(durable.get_version('change', -1, 2));
    s := durable.wait_signal('go');
    PERFORM durable.sleep('1 minute');
    FOR i IN 31 .. 60 LOOP
        r := r || durable.activity('echo', to_jsonb(i));
    END LOOP;
    RETURN jsonb_build_object('r', r, 's', s, 'now', durable.now());
END $$;
SELECT durable.register_workflow('mixed', 'app.mixed(jsonb)', run_as => 'wf_long');
-- The history of a workflow without its run ids, which differ.
CREATE FUNCTION pg_temp.history(wid text) RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_agg(jsonb_build_array(event_id, event_time, event_type,
                                       attributes - 'firstExecutionRunId') ORDER BY event_id)
      FROM durable.get_history(wid) $$;
-- Run tasks one a chain until none is left; how many.
CREATE FUNCTION pg_temp.one_by_one() RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    n int := 0;
BEGIN
    WHILE durable.run_tasks(1) > 0 LOOP
        n := n + 1;
    END LOOP;
    RETURN n;
END $$;

SELECT durable.start_workflow('mixed', NULL, 'mixed-chains') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 61, 'in chains: 30 activities, then the wait for the signal');
SELECT durable.signal_workflow('mixed-chains', 'go', '{"from": "test"}');
SELECT is(durable.run_tasks(), 1, 'the signal: the timer starts');
SELECT t.at('2026-01-01 00:01:00+00');
SELECT durable.tick();
SELECT is(durable.run_tasks(), 61, 'the timer fired: 30 more activities, then the close');

SELECT t.at('2026-01-01 00:00:00+00');
SELECT durable.start_workflow('mixed', NULL, 'mixed-alone') IS NOT NULL AS started;
SELECT is(pg_temp.one_by_one(), 61, 'one task a chain: the same tasks');
SELECT durable.signal_workflow('mixed-alone', 'go', '{"from": "test"}');
SELECT is(pg_temp.one_by_one(), 1, 'the signal');
SELECT t.at('2026-01-01 00:01:00+00');
SELECT durable.tick();
SELECT is(pg_temp.one_by_one(), 61, 'the timer, the rest');

SELECT is((SELECT jsonb_build_array(r->30, r->31)
             FROM (SELECT durable.describe_workflow('mixed-chains')->'result'->'r' AS r) x),
    '["effect", 2]',
    'the workflow saw its side effect and the version it recorded');
SELECT is(pg_temp.history('mixed-chains'), pg_temp.history('mixed-alone'),
    'the same history, event for event: ids, times, types and attributes');

-- 3. Non-determinism in the middle of a chain: activity 20 changes what the code does at
-- step 10, and the next decision task of the same chain finds it.
CREATE FUNCTION app.nd(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. 30 LOOP
        IF i = 20 THEN
            PERFORM durable.activity('switch_mode');
        ELSIF i = 10 AND (SELECT m FROM app.mode) = 'b' THEN
            PERFORM durable.activity('other', to_jsonb(i));
        ELSE
            PERFORM durable.activity('echo', to_jsonb(i));
        END IF;
    END LOOP;
    RETURN NULL;
END $$;
SELECT durable.register_workflow('nd', 'app.nd(jsonb)', run_as => 'wf_long');
SELECT t.at('2026-01-01 00:00:00+00');
SELECT durable.start_workflow('nd', NULL, 'nd') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 41, '20 decision tasks and their activities, then the failed one');
SELECT is(t.events('nd', from_id => 121),
    '{ActivityTaskCompleted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskFailed}',
    'the decision task after activity 20 failed');
SELECT is(t.attrs('nd', 'DecisionTaskFailed')->'details'->>'message',
    'command 10 is activity echo in history, but the workflow issued activity other',
    'NonDeterministicWorkflow at command 10');

SELECT * FROM finish();
ROLLBACK;

-- Workflows written as SQL functions (docs/sql-workflows.md), run by durable.run_tasks() in this
-- session: every call of the workflow API, replay (the function runs again from the
-- start and finds its results in the history), the exact histories (those of an external
-- worker making the same decisions), non-determinism, errors caught and uncaught,
-- workflow retry and cancellation, registration and its checks, and what happens when
-- the API is called outside a workflow function.
BEGIN;
SELECT plan(146);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

-- The code runs as wf_app, an ordinary role; the functions live in schema app.
CREATE ROLE wf_app;
CREATE SCHEMA app;
GRANT USAGE ON SCHEMA app TO wf_app;
-- Counts how often code ran: nextval() survives the rollback of what the code wrote.
CREATE SEQUENCE app.runs;
CREATE SEQUENCE app.echo_calls;
GRANT USAGE ON SEQUENCE app.runs, app.echo_calls TO wf_app;
CREATE TABLE app.scratch (v text);
GRANT INSERT, SELECT ON app.scratch TO wf_app;

-- Activities: echo returns its input; fail always fails.
CREATE FUNCTION app.echo(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM nextval('app.echo_calls');
    RETURN input;
END $$;
CREATE FUNCTION app.fail(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'no luck' USING DETAIL = 'the detail', HINT = 'the hint';
END $$;
SELECT durable.register_activity('echo', 'app.echo(jsonb)', run_as => 'wf_app');
SELECT durable.register_activity('fail', 'app.fail(jsonb)', run_as => 'wf_app');

-- pg_temp.wf(type, body): CREATE OR REPLACE FUNCTION app.<type>(input jsonb) RETURNS
-- jsonb LANGUAGE plpgsql with that body, registered as workflow type <type> on queue
-- 'default', to run as wf_app.
CREATE FUNCTION pg_temp.wf(wtype text, body text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('CREATE OR REPLACE FUNCTION app.%I(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS %L',
                   wtype, body);
    PERFORM durable.register_workflow(wtype, format('app.%I(jsonb)', wtype)::regprocedure,
                                      run_as => 'wf_app');
END $$;
-- describe_workflow's status and result as "status result".
CREATE FUNCTION pg_temp.outcome(wid text) RETURNS text LANGUAGE sql AS $$
    SELECT format('%s %s', d->>'status', COALESCE(NULLIF(d->'result', 'null'), NULLIF(d->'failure', 'null')))
      FROM durable.describe_workflow(wid) d $$;
CREATE FUNCTION pg_temp.later(secs numeric) RETURNS void LANGUAGE sql AS
    $$ SELECT set_config('durable.test_time', (durable.now() + secs * interval '1 second')::text, true) $$;

-- 1. durable.activity(): sequential activities.  The function runs once per decision
-- task, from the start; each activity runs once, and its result comes from the history.
SELECT pg_temp.wf('seq', $$
DECLARE a jsonb; b jsonb;
BEGIN
    PERFORM nextval('app.runs');
    a := durable.activity('echo', jsonb_build_object('step', 1, 'in', input));
    b := durable.activity('echo', jsonb_build_object('step', 2, 'prev', a->'step'),
                          '{"startToCloseTimeoutSeconds": 5, "heartbeatTimeoutSeconds": 2,
                            "retryPolicy": {"initialIntervalInSeconds": 3, "maximumAttempts": 2}}');
    RETURN jsonb_build_object('a', a, 'b', b);
END $$);
SELECT durable.start_workflow('seq', '{"x": 1}', 'seq') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 5, 'run_tasks: 3 decision tasks and 2 activities, until the workflow closes');
SELECT is(pg_temp.outcome('seq'), 'completed {"a": {"in": {"x": 1}, "step": 1}, "b": {"prev": 1, "step": 2}}',
    'the workflow completed with what its function returned');
SELECT is(currval('app.runs'), 3::bigint, 'the function ran three times: once per decision task');
SELECT is(currval('app.echo_calls'), 2::bigint, 'each activity ran once: on replay its result came from the history');
SELECT is(t.events('seq'),
    '{WorkflowExecutionStarted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,ActivityTaskScheduled,
      ActivityTaskStarted,ActivityTaskCompleted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,ActivityTaskScheduled,
      ActivityTaskStarted,ActivityTaskCompleted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,WorkflowExecutionCompleted}',
    'the history of two sequential activities');
SELECT is(t.attrs('seq', 'ActivityTaskScheduled', 1) - 'retryPolicy',
    '{"activityId": "1", "activityType": "echo", "taskQueue": "default", "input": {"step": 1, "in": {"x": 1}},
      "startToCloseTimeoutSeconds": 600, "decisionTaskCompletedEventId": 4}'::jsonb,
    'activity 1: activityId "1", the workflow''s queue, the input, StartToClose durable.default_activity_timeout');
SELECT is(t.attrs('seq', 'ActivityTaskScheduled', 2) - 'retryPolicy',
    '{"activityId": "2", "activityType": "echo", "taskQueue": "default", "input": {"step": 2, "prev": 1},
      "startToCloseTimeoutSeconds": 5, "heartbeatTimeoutSeconds": 2, "decisionTaskCompletedEventId": 10}'::jsonb,
    'activity 2: activityId "2"; the options are the ScheduleActivityTask attributes');
SELECT is(t.attrs('seq', 'ActivityTaskScheduled', 2)->'retryPolicy',
    '{"initialIntervalInSeconds": 3, "backoffCoefficient": 2, "maximumIntervalInSeconds": 300,
      "expirationIntervalInSeconds": 0, "maximumAttempts": 2, "nonRetriableErrorReasons": []}'::jsonb,
    'the retry policy option, normalised');
SELECT is(t.attrs('seq', 'ActivityTaskCompleted', 2) - 'identity',
    '{"scheduledEventId": 11, "startedEventId": 12, "result": {"step": 2, "prev": 1}}'::jsonb,
    'ActivityTaskCompleted holds the activity''s result');
SELECT is(t.attrs('seq', 'WorkflowExecutionCompleted'),
    '{"result": {"a": {"in": {"x": 1}, "step": 1}, "b": {"prev": 1, "step": 2}}, "decisionTaskCompletedEventId": 16}'::jsonb,
    'WorkflowExecutionCompleted: the function''s return value');
SELECT is(t.attrs('seq', 'DecisionTaskStarted')->>'identity', 'durable-executor:' || pg_backend_pid(),
    'the executor''s identity: durable-executor:<pid>');
SELECT is(durable.run_tasks(), 0, 'nothing left to run');

-- 2. start_activity() + await(): three activities in parallel, in one decision.
SELECT pg_temp.wf('par', $$
DECLARE h1 text; h2 text; h3 text; r3 jsonb; r1 jsonb;
BEGIN
    h1 := durable.start_activity('echo', '1');
    h2 := durable.start_activity('echo', '2');
    h3 := durable.start_activity('echo', '3');
    r3 := durable.await(h3);          -- in any order
    r1 := durable.await(h1);
    RETURN jsonb_build_array(r1, durable.await(h2), r3);
END $$);
SELECT durable.start_workflow('par', NULL, 'par') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 5, 'run_tasks: 2 decision tasks and 3 activities');
SELECT is(pg_temp.outcome('par'), 'completed [1, 2, 3]', 'each await returned its own activity''s result');
SELECT is(t.events('par'),
    '{WorkflowExecutionStarted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,
      ActivityTaskScheduled,ActivityTaskScheduled,ActivityTaskScheduled,
      ActivityTaskStarted,ActivityTaskCompleted,DecisionTaskScheduled,ActivityTaskStarted,ActivityTaskCompleted,
      ActivityTaskStarted,ActivityTaskCompleted,DecisionTaskStarted,DecisionTaskCompleted,WorkflowExecutionCompleted}',
    'one decision schedules the three activities; they complete before the next decision task starts');
SELECT is((SELECT array_agg(format('%s:%s:%s', attributes->>'activityId', attributes->>'input', attributes->>'decisionTaskCompletedEventId') ORDER BY event_id)
             FROM durable.get_history('par') WHERE event_type = 'ActivityTaskScheduled'),
    '{1:1:4,2:2:4,3:3:4}', 'activities 1, 2 and 3, all from the first decision task');

-- 3. sleep() and now(): a durable timer; now() is the time of the decision task in which
-- the line first ran, whenever the function is replayed.
SELECT t.at('2026-01-01 01:00:00+00');
SELECT pg_temp.wf('sleeper', $$
DECLARE before timestamptz;
BEGIN
    before := durable.now();
    PERFORM durable.sleep('1 hour');
    RETURN jsonb_build_object('before', before, 'after', durable.now());
END $$);
SELECT durable.start_workflow('sleeper', NULL, 'sleeper') IS NOT NULL AS started;
SELECT t.at('2026-01-01 01:00:10+00');
SELECT is(durable.run_tasks(), 1, 'the first decision task starts the timer');
SELECT is(t.events('sleeper', from_id => 3), '{DecisionTaskStarted,DecisionTaskCompleted,TimerStarted}', 'TimerStarted');
SELECT is(t.attrs('sleeper', 'TimerStarted'),
    '{"timerId": "1", "startToFireTimeoutSeconds": 3600, "decisionTaskCompletedEventId": 4}'::jsonb,
    'sleep(''1 hour''): timer "1" of 3600 s');
SELECT t.at('2026-01-01 02:00:09.999+00');
SELECT is(durable.tick() + durable.run_tasks(), 0, 'nothing to do before the hour is over');
SELECT t.at('2026-01-01 02:00:10+00');
SELECT is(durable.tick(), 1, 'the timer fires after one hour');
SELECT t.at('2026-01-01 02:30:00+00');
SELECT is(durable.run_tasks(), 1, 'the next decision task completes the workflow');
SELECT is(t.events('sleeper', from_id => 6),
    '{TimerFired,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,WorkflowExecutionCompleted}',
    'TimerFired, then the closing decision task');
SELECT is(t.attrs('sleeper', 'WorkflowExecutionCompleted')->'result',
    '{"before": "2026-01-01T01:00:10+00:00", "after": "2026-01-01T02:30:00+00:00"}'::jsonb,
    'now() before the sleep is still the time of the first decision task; after it, that of the second');

-- 4. wait_signal() without a timeout: no command; signals are taken in order, by name.
SELECT t.at('2026-01-01 03:00:00+00');
SELECT pg_temp.wf('waiter', $$
BEGIN
    RETURN jsonb_build_array(durable.wait_signal('go'), durable.wait_signal('go'));
END $$);
SELECT durable.start_workflow('waiter', NULL, 'waiter') IS NOT NULL AS started;
SELECT durable.signal_workflow('waiter', 'go', '{"n": 1}');
SELECT is(durable.run_tasks(), 1, 'a decision task');
SELECT is(t.events('waiter'),
    '{WorkflowExecutionStarted,DecisionTaskScheduled,WorkflowExecutionSignaled,DecisionTaskStarted,DecisionTaskCompleted}',
    'the first signal was there before the function ran; the second wait makes no command');
SELECT durable.signal_workflow('waiter', 'other', '"x"');
SELECT is(durable.run_tasks(), 1, 'a signal of another name: a decision task');
SELECT is(pg_temp.outcome('waiter'), 'running ', 'that signal is not the one waited for');
SELECT durable.signal_workflow('waiter', 'go', '{"n": 2}');
SELECT is(durable.run_tasks(), 1, 'the second ''go'' signal: a decision task');
SELECT is(pg_temp.outcome('waiter'), 'completed [{"n": 1}, {"n": 2}]', 'each wait returned its signal''s input, in order');
SELECT is(t.events('waiter', from_id => 6),
    '{WorkflowExecutionSignaled,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,
      WorkflowExecutionSignaled,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,WorkflowExecutionCompleted}',
    'the history of the two later signals');

-- 5. wait_signal() with a timeout: a timer; NULL when it fires first.
SELECT t.at('2026-01-01 04:00:00+00');
SELECT pg_temp.wf('timed', $$
BEGIN
    RETURN jsonb_build_object('got', durable.wait_signal('go', '10 minutes'));
END $$);
SELECT durable.start_workflow('timed', NULL, 'timed-out') IS NOT NULL AS started;
SELECT durable.start_workflow('timed', NULL, 'timed-signaled') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 2, 'two decision tasks, each starting a timer');
SELECT is(t.attrs('timed-out', 'TimerStarted'),
    '{"timerId": "1", "startToFireTimeoutSeconds": 600, "decisionTaskCompletedEventId": 4}'::jsonb,
    'wait_signal(''go'', ''10 minutes''): timer "1" of 600 s');
SELECT t.at('2026-01-01 04:05:00+00');
SELECT durable.signal_workflow('timed-signaled', 'go', '{"ok": true}');
SELECT is(durable.run_tasks(), 1, 'the signal: a decision task');
SELECT is(pg_temp.outcome('timed-signaled'), 'completed {"got": {"ok": true}}', 'the signal came first: its input');
SELECT t.at('2026-01-01 04:10:00+00');
SELECT durable.tick() AS fired \gset
SELECT is(durable.run_tasks(), 1, 'the timer of the other: a decision task');
SELECT is(pg_temp.outcome('timed-out'), 'completed {"got": null}', 'the timeout came first: NULL');
SELECT is(t.events('timed-out', from_id => 5),
    '{TimerStarted,TimerFired,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,WorkflowExecutionCompleted}',
    'the history of a wait that timed out');
SELECT is(t.events('timed-signaled', from_id => 5),
    '{TimerStarted,WorkflowExecutionSignaled,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,TimerCanceled,WorkflowExecutionCompleted}',
    'the history of a wait that got its signal: its timer is canceled');
-- A signal without input is still a signal: JSON null, not the SQL NULL of a timeout.
SELECT pg_temp.wf('nullsig', $$
DECLARE s jsonb;
BEGIN
    s := durable.wait_signal('go', '10 minutes');
    RETURN jsonb_build_object('timedOut', s IS NULL, 'input', s);
END $$);
SELECT durable.start_workflow('nullsig', NULL, 'nullsig') IS NOT NULL AS started;
SELECT durable.run_tasks() AS ran \gset
SELECT durable.signal_workflow('nullsig', 'go');
SELECT durable.run_tasks() AS ran \gset
SELECT is(pg_temp.outcome('nullsig'), 'completed {"input": null, "timedOut": false}',
    'a signal without input: wait_signal returns JSON null, which IS NULL does not take for a timeout');
SELECT is(t.attrs('timed-signaled', 'TimerCanceled') - 'identity',
    '{"timerId": "1", "startedEventId": 5, "decisionTaskCompletedEventId": 9}'::jsonb, 'TimerCanceled: timer "1"');

-- 6. child_workflow(): the child is an ordinary workflow, here a SQL one too.
SELECT t.at('2026-01-01 05:00:00+00');
SELECT pg_temp.wf('kid', $$
BEGIN
    IF input ? 'fail' THEN RAISE EXCEPTION 'kid refuses'; END IF;
    RETURN jsonb_build_object('double', (input->>'n')::int * 2, 'me', durable.workflow_info()->'workflowId');
END $$);
SELECT pg_temp.wf('parent', $$
DECLARE r jsonb; err text;
BEGIN
    r := durable.child_workflow('kid', jsonb_build_object('n', 21));
    BEGIN
        PERFORM durable.child_workflow('kid', '{"fail": true}', '{"workflowId": "the-failing-kid"}');
    EXCEPTION WHEN SQLSTATE 'WF007' THEN
        err := SQLERRM;
    END;
    RETURN jsonb_build_object('r', r, 'err', err);
END $$);
SELECT durable.start_workflow('parent', NULL, 'parent') IS NOT NULL AS started;
SELECT durable.run_tasks() > 0 AS ran;
SELECT is(pg_temp.outcome('parent'),
    'completed {"r": {"me": "parent/1", "double": 42}, "err": "child workflow \"the-failing-kid\" (kid) failed: P0001"}',
    'the child''s result; a failed child raises WF007 with its id, type and reason');
SELECT is(t.attrs('parent', 'StartChildWorkflowExecutionInitiated') - 'taskStartToCloseTimeoutSeconds' - 'workflowIdReusePolicy' - 'control',
    '{"namespace": "default", "workflowId": "parent/1", "workflowType": "kid", "taskQueue": "default", "input": {"n": 21},
      "parentClosePolicy": "TERMINATE", "decisionTaskCompletedEventId": 4}'::jsonb,
    'StartChildWorkflowExecution: the default workflowId is the parent''s id / the command number');
SELECT is(ARRAY(SELECT event_type FROM durable.get_history('parent') WHERE event_type NOT LIKE 'DecisionTask%' ORDER BY event_id),
    '{WorkflowExecutionStarted,StartChildWorkflowExecutionInitiated,ChildWorkflowExecutionStarted,ChildWorkflowExecutionCompleted,
      StartChildWorkflowExecutionInitiated,ChildWorkflowExecutionStarted,ChildWorkflowExecutionFailed,WorkflowExecutionCompleted}',
    'the parent''s history, decision tasks aside: one child at a time, started, then completed or failed');
SELECT is(pg_temp.outcome('the-failing-kid'), 'failed {"reason": "P0001", "details": {"context": "PL/pgSQL function app.kid(jsonb) line 3 at RAISE", "message": "kid refuses"}}',
    'the failing child failed with its error');

-- 7. side_effect(): recorded once, the same value on every replay.
SELECT pg_temp.wf('effect', $$
DECLARE v jsonb; e jsonb;
BEGIN
    v := durable.side_effect(to_jsonb(random()));
    e := durable.activity('echo', v);
    RETURN jsonb_build_object('v', v, 'echoed', e);
END $$);
SELECT durable.start_workflow('effect', NULL, 'effect') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 3, 'two decision tasks and the activity');
SELECT is((t.events('effect', from_id => 4))[1:3], '{DecisionTaskCompleted,MarkerRecorded,ActivityTaskScheduled}',
    'the marker and the activity go out in the same decision');
SELECT is(t.attrs('effect', 'MarkerRecorded') - 'details',
    '{"markerName": "SideEffect", "decisionTaskCompletedEventId": 4}'::jsonb, 'RecordMarker SideEffect');
SELECT is(t.attrs('effect', 'MarkerRecorded')->'details'->'id', '1', 'the marker''s id is the command number');
SELECT is(t.attrs('effect', 'ActivityTaskScheduled')->>'activityId', '2', 'the activity is command 2');
SELECT ok((SELECT r->'v' = r->'echoed' AND r->'v' = t.attrs('effect', 'MarkerRecorded')->'details'->'value'
             FROM (SELECT durable.describe_workflow('effect')->'result' AS r) x),
    'the value of the first run was passed to the activity, and returned by the replay');

-- 8. workflow_info().
SELECT pg_temp.wf('info', $$ BEGIN RETURN durable.workflow_info(); END $$);
SELECT durable.start_workflow('info', NULL, 'info') AS info_run \gset
SELECT is(durable.run_tasks(), 1, 'one decision task');
SELECT is(durable.describe_workflow('info')->'result',
    jsonb_build_object('namespace', 'default', 'workflowId', 'info', 'runId', :'info_run'::uuid,
        'workflowType', 'info', 'taskQueue', 'default', 'attempt', 1,
        'startTime', '2026-01-01T05:00:00+00:00', 'cancelRequested', false),
    'workflow_info(): namespace, ids, type, queue, attempt, start time, cancel request');

-- 9. The history is exactly what an external worker makes with the same decisions.
SELECT t.at('2026-01-02 00:00:00+00');
SELECT pg_temp.wf('same', $$
DECLARE a jsonb;
BEGIN
    a := durable.activity('echo', input, '{"startToCloseTimeoutSeconds": 60}');
    PERFORM durable.sleep('90 seconds');
    RETURN jsonb_build_object('a', a, 'mark', durable.side_effect('"m"'));
END $$);
SELECT durable.start_workflow('same', '{"k": "v"}', 'same-sql') IS NOT NULL AS started;
SELECT durable.run_tasks() AS ran \gset
SELECT t.at('2026-01-02 00:01:30+00');
SELECT durable.tick() AS fired \gset
SELECT durable.run_tasks() AS ran \gset
SELECT is(pg_temp.outcome('same-sql'), 'completed {"a": {"k": "v"}, "mark": "m"}', 'the SQL workflow completed');
-- The same by hand, a day later, once the types are no longer registered.
SELECT is(durable.unregister_workflow('same'), true, 'unregister_workflow: true when it was registered');
SELECT is(durable.unregister_activity('echo'), true, 'unregister_activity: true when it was registered');
SELECT t.at('2026-01-03 00:00:00+00');
SELECT durable.start_workflow('same', '{"k": "v"}', 'same-ext') IS NOT NULL AS started;
SELECT t.decide('same-ext', '[{"decisionType": "ScheduleActivityTask", "activityId": "1", "activityType": "echo",
    "input": {"k": "v"}, "startToCloseTimeoutSeconds": 60}]', 'default') IS NOT NULL;
SELECT durable.complete_activity(durable.poll_activity_task('default')->>'taskToken', '{"k": "v"}');
SELECT t.decide('same-ext', '[{"decisionType": "StartTimer", "timerId": "2", "startToFireTimeoutSeconds": 90}]', 'default') IS NOT NULL;
SELECT t.at('2026-01-03 00:01:30+00');
SELECT durable.tick() AS fired \gset
SELECT t.decide('same-ext', '[{"decisionType": "RecordMarker", "markerName": "SideEffect", "details": {"id": 3, "value": "m"}},
    {"decisionType": "CompleteWorkflowExecution", "result": {"a": {"k": "v"}, "mark": "m"}}]', 'default') IS NOT NULL;
CREATE FUNCTION pg_temp.normalized(wid text) RETURNS SETOF text LANGUAGE sql AS $$
    SELECT format('%s %s +%s %s', event_id, event_type, event_time - min(event_time) OVER (),
                  attributes - 'identity' - 'firstExecutionRunId')
      FROM durable.get_history(wid) ORDER BY event_id $$;
SELECT results_eq($$ SELECT * FROM pg_temp.normalized('same-sql') $$, $$ SELECT * FROM pg_temp.normalized('same-ext') $$,
    'the same events, attributes and times as the external worker''s, identities aside');
SELECT durable.register_activity('echo', 'app.echo(jsonb)', run_as => 'wf_app');

-- 10. Non-determinism: the code no longer matches the history.
SELECT t.at('2026-01-04 00:00:00+00');
SELECT durable.register_activity('nd_first', 'app.echo(jsonb)', run_as => 'wf_app');
SELECT durable.register_activity('nd_second', 'app.echo(jsonb)', run_as => 'wf_app');
SELECT pg_temp.wf('nd', $$
BEGIN
    PERFORM durable.activity('nd_first');
    PERFORM durable.sleep('1 hour');
    RETURN '"v1"';
END $$);
SELECT durable.start_workflow('nd', NULL, 'nd') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 3, 'version 1 runs up to its timer');
CREATE TABLE pg_temp.nd_before AS SELECT * FROM durable.get_history('nd');
-- Version 2, another function, calls another activity at the same position.
CREATE FUNCTION app.nd_v2(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM durable.activity('nd_second');
    PERFORM durable.sleep('1 hour');
    RETURN '"v2"';
END $$;
SELECT durable.register_workflow('nd', 'app.nd_v2(jsonb)', run_as => 'wf_app');
SELECT t.at('2026-01-04 01:00:00+00');
SELECT durable.tick() AS fired \gset
SELECT is(durable.run_tasks(), 1, 'the decision task after the timer runs version 2');
SELECT is(t.events('nd', from_id => 12), '{TimerFired,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskFailed}',
    'it fails the decision task');
SELECT is(t.attrs('nd', 'DecisionTaskFailed')->>'cause', 'NonDeterministicWorkflow', 'cause NonDeterministicWorkflow');
SELECT matches(t.attrs('nd', 'DecisionTaskFailed')->'details'->>'message', 'nd_first.*nd_second|nd_second.*nd_first',
    'the details name both the activity of the history and the one the code asked for');
SELECT is((SELECT count(*) FROM durable.activity_attempts WHERE workflow_id = 'nd' AND activity_type = 'nd_second'), 0::bigint,
    'nd_second was never scheduled');
SELECT results_eq($$ SELECT * FROM pg_temp.nd_before $$,
    $$ SELECT * FROM durable.get_history('nd') WHERE event_id <= 11 $$, 'the history before it is unchanged');
SELECT t.at('2026-01-04 01:00:04.999+00');
SELECT is(durable.tick() + durable.run_tasks(), 0, 'no new attempt before 5 s');
SELECT t.at('2026-01-04 01:00:05+00');
SELECT is(durable.tick() + durable.run_tasks(), 2, 'after 5 s, attempt 2: it fails again');
SELECT t.at('2026-01-04 01:00:14.999+00');
SELECT is(durable.tick() + durable.run_tasks(), 0, 'no attempt 3 before 10 s more');
-- Version 3 issues nothing where the history has the activity.
CREATE FUNCTION app.nd_v3(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT '"v3"'::jsonb $$;
SELECT durable.register_workflow('nd', 'app.nd_v3(jsonb)', run_as => 'wf_app');
SELECT t.at('2026-01-04 01:00:15+00');
SELECT is(durable.tick() + durable.run_tasks(), 2, 'attempt 3 after 10 s');
SELECT is(t.events('nd', from_id => 12), '{TimerFired,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskFailed}',
    'nothing was added: the failed retries are transient (Cadence)');
SELECT is(pg_temp.outcome('nd'), 'running ',
    'a command in the history that the code did not issue is non-deterministic too: the workflow waits');
-- Back to version 1: the workflow goes on.
SELECT durable.register_workflow('nd', 'app.nd(jsonb)', run_as => 'wf_app');
SELECT t.at('2026-01-04 01:00:35+00');
SELECT is(durable.tick() + durable.run_tasks(), 2, 'attempt 4, 20 s later, runs version 1 again');
SELECT is(pg_temp.outcome('nd'), 'completed "v1"', 'and completes the workflow');
SELECT is(t.events('nd', from_id => 16), '{DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,WorkflowExecutionCompleted}',
    'the completing attempt writes its transient DecisionTaskScheduled and DecisionTaskStarted');
SELECT is((SELECT attributes->'attempt' FROM durable.get_history('nd') WHERE event_id = 16), '4', 'as attempt 4');

-- 11. A dropped function: UnknownWorkflowType, retried with backoff.
SELECT pg_temp.wf('dropped', $$ BEGIN RETURN '1'; END $$);
SELECT durable.start_workflow('dropped', NULL, 'dropped') IS NOT NULL AS started;
DROP FUNCTION app.dropped(jsonb);
SELECT is(durable.run_tasks(), 1, 'the decision task runs');
SELECT is(t.attrs('dropped', 'DecisionTaskFailed')->>'cause', 'UnknownWorkflowType', 'and fails: UnknownWorkflowType');
SELECT is(pg_temp.outcome('dropped'), 'running ', 'the workflow is still running');
SELECT durable.terminate_workflow('dropped');

-- The decision timeout is the function's statement timeout.
SELECT pg_temp.wf('slowpoke', $$ BEGIN PERFORM pg_sleep(30); RETURN '1'; END $$);
SELECT durable.start_workflow('slowpoke', NULL, 'slowpoke', decision_timeout => '0.3 seconds') IS NOT NULL AS started;
SELECT is(durable.run_tasks(1), 1, 'the decision task ran into its timeout');
SELECT is(t.events('slowpoke'),
    '{WorkflowExecutionStarted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskTimedOut}',
    'DecisionTaskTimedOut; its retry is transient');
SELECT is(t.attrs('slowpoke', 'DecisionTaskTimedOut')->>'timeoutType', 'START_TO_CLOSE', 'timeoutType START_TO_CLOSE');
SELECT durable.terminate_workflow('slowpoke');

-- 12. Errors caught by the workflow: a failed activity raises WF007; in the handler the
-- workflow calls another activity (suspending inside an EXCEPTION block works).
SELECT t.at('2026-01-05 00:00:00+00');
SELECT pg_temp.wf('catcher', $$
DECLARE msg text; det text; comp jsonb;
BEGIN
    BEGIN
        PERFORM durable.activity('fail', '{}', '{"retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 1}}');
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
        comp := durable.activity('echo', jsonb_build_object('compensate', SQLSTATE));
    END;
    RETURN jsonb_build_object('msg', msg, 'detail', det::jsonb, 'comp', comp);
END $$);
SELECT durable.start_workflow('catcher', NULL, 'catcher') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 5, 'decision, failing activity, decision, compensation, decision');
SELECT is(pg_temp.outcome('catcher'),
    'completed {"msg": "activity 1 (fail) failed: P0001", "comp": {"compensate": "WF007"}, "detail": {"hint": "the hint", "detail": "the detail", "context": "PL/pgSQL function app.fail(jsonb) line 3 at RAISE", "message": "no luck"}}',
    'WF007: "activity 1 (fail) failed: P0001", the failure details as DETAIL; the handler''s activity ran');
SELECT is(t.attrs('catcher', 'ActivityTaskFailed') - 'identity' - 'retryState',
    '{"scheduledEventId": 5, "startedEventId": 6, "reason": "P0001",
      "details": {"message": "no luck", "detail": "the detail", "hint": "the hint",
                  "context": "PL/pgSQL function app.fail(jsonb) line 3 at RAISE"}}'::jsonb,
    'ActivityTaskFailed: reason = SQLSTATE, details = the error');

-- Suspension is not an error that WHEN OTHERS catches, and what a suspended execution
-- returns is ignored.
SELECT pg_temp.wf('stubborn', $$
DECLARE r jsonb;
BEGIN
    BEGIN
        PERFORM durable.sleep('1 minute');
    EXCEPTION WHEN OTHERS THEN
        RETURN '"caught the sleep"';
    END;
    BEGIN
        r := durable.activity('echo', '"after"');
    EXCEPTION WHEN query_canceled THEN
        RETURN '"caught the suspension"';
    END;
    RETURN r;
END $$);
SELECT durable.start_workflow('stubborn', NULL, 'stubborn') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 1, 'a decision task');
SELECT is(t.events('stubborn', from_id => 4), '{DecisionTaskCompleted,TimerStarted}',
    'WHEN OTHERS did not catch the suspension at sleep(): the timer started, the workflow runs');
SELECT t.at('2026-01-05 00:01:00+00');
SELECT is(durable.tick() + durable.run_tasks(), 4, 'the timer fires; a decision task, the activity, a decision task');
SELECT is(t.events('stubborn', from_id => 6),
    '{TimerFired,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,ActivityTaskScheduled,
      ActivityTaskStarted,ActivityTaskCompleted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,WorkflowExecutionCompleted}',
    'a handler that caught the suspension and returned did not close the workflow: the activity was scheduled');
SELECT is(pg_temp.outcome('stubborn'), 'completed "after"', 'the workflow completes with the activity''s result');

-- 13. An uncaught error fails the workflow with reason = SQLSTATE.
SELECT pg_temp.wf('boom', $$
BEGIN
    RAISE EXCEPTION 'bad input %', input USING ERRCODE = '22023', DETAIL = 'some detail', HINT = 'some hint';
END $$);
SELECT durable.start_workflow('boom', '7', 'boom') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 1, 'a decision task');
SELECT is(t.events('boom', from_id => 4), '{DecisionTaskCompleted,WorkflowExecutionFailed}', 'FailWorkflowExecution');
SELECT is(t.attrs('boom', 'WorkflowExecutionFailed') - 'decisionTaskCompletedEventId',
    '{"reason": "22023", "details": {"message": "bad input 7", "detail": "some detail", "hint": "some hint",
      "context": "PL/pgSQL function app.boom(jsonb) line 3 at RAISE"}}'::jsonb,
    'reason = SQLSTATE; details: message, detail, hint, context');
-- A bad option is an error raised inside the workflow function.
SELECT pg_temp.wf('badopt', $$
BEGIN
    RETURN durable.activity('echo', '1', '{"startToCloseTimeoutSeconds": 5, "colour": "red"}');
END $$);
SELECT durable.start_workflow('badopt', NULL, 'badopt') IS NOT NULL AS started;
SELECT durable.run_tasks() AS ran \gset
SELECT is(t.attrs('badopt', 'WorkflowExecutionFailed')->>'reason', '22023', 'an unknown activity option: 22023');
SELECT is(t.attrs('badopt', 'WorkflowExecutionFailed')->'details'->>'message', 'options has an unknown field "colour"',
    'the message names options and the field');
SELECT pg_temp.wf('badval', $$
BEGIN
    RETURN durable.activity('echo', '1', '{"startToCloseTimeoutSeconds": "soon"}');
END $$);
SELECT durable.start_workflow('badval', NULL, 'badval') IS NOT NULL AS started;
SELECT durable.run_tasks() AS ran \gset
SELECT is(t.attrs('badval', 'WorkflowExecutionFailed')->>'reason', '22023', 'a bad option value: 22023');
SELECT matches(t.attrs('badval', 'WorkflowExecutionFailed')->'details'->>'message', '^options\.startToCloseTimeoutSeconds',
    'the message names options.startToCloseTimeoutSeconds');

-- 14. Workflow retry with the run's retry policy (docs/api.md "Workflow retries,
-- ContinueAsNew, cron").
SELECT t.at('2026-01-06 00:00:00+00');
SELECT pg_temp.wf('flaky', $$
BEGIN
    IF (durable.workflow_info()->>'attempt')::int < 2 THEN
        RAISE EXCEPTION 'first run fails';
    END IF;
    RETURN durable.workflow_info()->'attempt';
END $$);
SELECT durable.start_workflow('flaky', NULL, 'flaky',
    retry_policy => durable.retry_policy('10 seconds', maximum_attempts => 3)) AS flaky_run1 \gset
SELECT is(durable.run_tasks(), 1, 'run 1 fails');
SELECT is(t.events('flaky', :'flaky_run1'), '{WorkflowExecutionStarted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,WorkflowExecutionContinuedAsNew}',
    'run 1 is continued as new by the retry policy');
SELECT is(t.attrs('flaky', 'WorkflowExecutionContinuedAsNew', rid => :'flaky_run1')->>'initiator', 'RetryPolicy', 'initiator RetryPolicy');
SELECT t.at('2026-01-06 00:00:10+00');
SELECT is(durable.tick() + durable.run_tasks(), 2, 'after the 10 s backoff, run 2 runs');
SELECT is(pg_temp.outcome('flaky'), 'completed 2', 'run 2 completes');

-- 15. cancel_workflow(): WF008 at the next blocking call.
SELECT t.at('2026-01-07 00:00:00+00');
SELECT pg_temp.wf('cancelme', $$ BEGIN PERFORM durable.sleep('1 day'); RETURN '"slept"'; END $$);
SELECT pg_temp.wf('cleanup', $$
DECLARE r jsonb;
BEGIN
    BEGIN
        PERFORM durable.wait_signal('never');
    EXCEPTION WHEN SQLSTATE 'WF008' THEN
        r := durable.activity('echo', to_jsonb(SQLERRM));   -- a compensation: WF008 comes once
    END;
    RETURN jsonb_build_object('compensated', r, 'cancelRequested', durable.workflow_info()->'cancelRequested');
END $$);
SELECT durable.start_workflow('cancelme', NULL, 'cancelme') IS NOT NULL AS started;
SELECT durable.start_workflow('cleanup', NULL, 'cleanup') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 2, 'both start waiting');
SELECT durable.cancel_workflow('cancelme', 'not needed');
SELECT durable.cancel_workflow('cleanup', 'not needed');
SELECT is(durable.run_tasks(), 4, 'decision tasks; the compensation; a decision task');
SELECT is(pg_temp.outcome('cancelme'), 'canceled ', 'WF008 escaped the function: the workflow is canceled');
SELECT is(t.events('cancelme', from_id => 6),
    '{WorkflowExecutionCancelRequested,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,WorkflowExecutionCanceled}',
    'CancelWorkflowExecution');
SELECT is(pg_temp.outcome('cleanup'), 'completed {"compensated": "workflow canceled", "cancelRequested": true}',
    'a function that catches WF008 ("workflow canceled") goes on and may run activities');

-- 16. The workflow's own writes are discarded.
SELECT pg_temp.wf('writer', $$
DECLARE n bigint;
BEGIN
    INSERT INTO app.scratch VALUES ('written by the workflow');
    PERFORM durable.activity('echo', '1');
    SELECT count(*) INTO n FROM app.scratch;
    RETURN to_jsonb(n);
END $$);
SELECT durable.start_workflow('writer', NULL, 'writer') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 3, 'two decision tasks and the activity');
SELECT is(pg_temp.outcome('writer'), 'completed 1', 'inside an execution, the function sees its own write');
SELECT is((SELECT count(*) FROM app.scratch), 0::bigint, 'but none of its writes is kept');

-- 17. Registration: checks and roles.
CREATE FUNCTION app.ok(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT input $$;
CREATE FUNCTION app.takes_text(input text) RETURNS jsonb LANGUAGE sql AS $$ SELECT to_jsonb(input) $$;
CREATE FUNCTION app.gives_text(input jsonb) RETURNS text LANGUAGE sql AS $$ SELECT input::text $$;
CREATE FUNCTION app.two_args(a jsonb, b jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT a $$;
CREATE FUNCTION app.many(input jsonb) RETURNS SETOF jsonb LANGUAGE sql AS $$ SELECT input $$;
CREATE PROCEDURE app.proc(input jsonb) LANGUAGE sql AS $$ SELECT 1 $$;
CREATE FUNCTION app.private(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT input $$;
REVOKE EXECUTE ON FUNCTION app.private(jsonb) FROM PUBLIC;
CREATE ROLE wf_other;
CREATE ROLE wf_dev IN ROLE durable_worker;
CREATE ROLE wf_nobody;
CREATE ROLE wf_super SUPERUSER;
GRANT USAGE ON SCHEMA app TO wf_dev, wf_nobody;

SELECT throws_like($$ SELECT durable.register_workflow('x', 'app.ok(jsonb)') $$,
    '%must not run as a superuser%', 'registering as a superuser without run_as is refused');
SELECT throws_ok($$ SELECT durable.register_workflow('x', 'app.ok(jsonb)') $$, '42501', NULL,
    'with SQLSTATE 42501');
SELECT lives_ok($$ SELECT durable.register_activity('x', 'app.ok(jsonb)', run_as => 'wf_super') $$,
    'naming a superuser in run_as is deliberate: allowed');
SELECT lives_ok($$ SELECT durable.register_activity('x', 'app.ok(jsonb)', run_as => 'wf_other') $$,
    'a superuser may name any ordinary role in run_as');
SELECT throws_ok($$ SELECT durable.register_workflow('x', 'app.takes_text(text)', run_as => 'wf_app') $$, '22023', NULL,
    'f(text): 22023');
SELECT throws_like($$ SELECT durable.register_workflow('x', 'app.gives_text(jsonb)', run_as => 'wf_app') $$, '%function%',
    'f(jsonb) RETURNS text: refused, naming the function argument');
SELECT throws_ok($$ SELECT durable.register_workflow('x', 'app.gives_text(jsonb)', run_as => 'wf_app') $$, '22023', NULL,
    'f(jsonb) RETURNS text: 22023');
SELECT throws_ok($$ SELECT durable.register_activity('x', 'app.two_args(jsonb,jsonb)', run_as => 'wf_app') $$, '22023', NULL,
    'two arguments: 22023');
SELECT throws_ok($$ SELECT durable.register_activity('x', 'app.many(jsonb)', run_as => 'wf_app') $$, '22023', NULL,
    'SETOF jsonb: 22023');
SELECT throws_ok($$ SELECT durable.register_workflow('x', 'app.proc(jsonb)', run_as => 'wf_app') $$, '22023', NULL,
    'a procedure: 22023');
SELECT throws_ok($$ SELECT durable.register_workflow('x', 'app.ok(jsonb)', namespace => 'nowhere', run_as => 'wf_app') $$,
    'WF002', NULL, 'an unknown namespace: WF002');
SELECT throws_ok($$ SELECT durable.register_workflow('', 'app.ok(jsonb)', run_as => 'wf_app') $$, '22023', NULL,
    'an empty type name: 22023');
SELECT throws_ok($$ SELECT durable.register_workflow(NULL, 'app.ok(jsonb)', run_as => 'wf_app') $$, '22004', NULL,
    'a NULL type name: 22004');
SELECT throws_ok($$ SELECT durable.register_activity('x', 'app.private(jsonb)', run_as => 'wf_app') $$, '42501', NULL,
    'run_as without EXECUTE on the function: 42501');
SET LOCAL ROLE wf_dev;
SELECT lives_ok($$ SELECT durable.register_activity('dev_act', 'app.ok(jsonb)', task_queue => 'devq') $$,
    'an ordinary role with durable_worker registers code to run as itself');
SELECT throws_ok($$ SELECT durable.register_activity('dev_act2', 'app.ok(jsonb)', run_as => 'wf_other') $$, '42501', NULL,
    'but not to run as a role whose privileges it does not have');
RESET ROLE;
SELECT is((SELECT format('%s %s %s %s', kind, function, run_as, registered_by) FROM durable.registrations
            WHERE type_name = 'dev_act'),
    'activity app.ok(jsonb) wf_dev wf_dev', 'durable.registrations: the binding, its run_as and who registered it');
SET LOCAL ROLE wf_nobody;
SELECT throws_ok($$ SELECT durable.register_activity('nb', 'app.ok(jsonb)') $$, '42501', NULL,
    'without durable_worker or durable_admin: 42501');
SELECT throws_ok($$ SELECT durable.run_tasks() $$, '42501', NULL, 'run_tasks() is for durable_admin');
RESET ROLE;
SELECT durable.register_activity('x', 'app.echo(jsonb)', run_as => 'wf_app');
SELECT is((SELECT format('%s %s', function, run_as) FROM durable.registrations WHERE type_name = 'x' AND kind = 'activity'),
    'app.echo(jsonb) wf_app', 'registering the same type again replaces the binding');
SELECT is(durable.unregister_workflow('never-registered'), false, 'unregister_workflow: false when it was not registered');

-- 18. (Un)registering moves the queued tasks between the executors and external pollers.
SELECT t.at('2026-01-08 00:00:00+00');
SELECT durable.start_workflow('movable', NULL, 'movable', 'mq') IS NOT NULL AS started;
SELECT durable.register_workflow('movable', 'app.ok(jsonb)', 'mq', run_as => 'wf_app');
SELECT is(durable.poll_decision_task('mq'), NULL, 'once registered, its queued decision task is not for external pollers');
SELECT durable.unregister_workflow('movable', 'mq');
SELECT durable.poll_decision_task('mq') AS mv \gset
SELECT is(:'mv'::jsonb->>'workflowId', 'movable', 'unregistered: an external poller gets it');
SELECT durable.fail_decision_task(:'mv'::jsonb->>'taskToken', 'WorkflowWorkerUnhandledFailure');
SELECT durable.register_workflow('movable', 'app.ok(jsonb)', 'mq', run_as => 'wf_app');
SELECT is(durable.run_tasks(), 1, 'registered again: the executor runs it');
SELECT is(pg_temp.outcome('movable'), 'completed ', 'app.ok returned its NULL input');
-- An activity of an external workflow, run by an executor, then by an external worker.
SELECT durable.start_workflow('ext', NULL, 'ext', 'eq') IS NOT NULL AS started;
SELECT t.decide('ext', '[{"decisionType": "ScheduleActivityTask", "activityId": "a", "activityType": "echo",
    "input": "hi", "startToCloseTimeoutSeconds": 10}]', 'eq') IS NOT NULL;
SELECT durable.register_activity('echo', 'app.echo(jsonb)', 'eq', run_as => 'wf_app');
SELECT is(durable.poll_activity_task('eq'), NULL, 'a registered activity is not for external pollers');
SELECT is(durable.run_tasks(), 1, 'the executor runs the external workflow''s activity');
SELECT is(t.attrs('ext', 'ActivityTaskCompleted')->'result', '"hi"', 'and completes it');
SELECT t.decide('ext', '[{"decisionType": "ScheduleActivityTask", "activityId": "b", "activityType": "echo",
    "input": "again", "startToCloseTimeoutSeconds": 10}]', 'eq') IS NOT NULL;
SELECT durable.unregister_activity('echo', 'eq');
SELECT is(durable.poll_activity_task('eq')->>'activityId', 'b', 'unregistered: the external worker gets the next one');

-- 19. Outside a workflow function: 55000.
SELECT throws_ok($$ SELECT durable.activity('echo') $$, '55000',
    'durable.activity() can only be called inside a workflow function run by durable', 'activity() outside: 55000');
SELECT throws_ok($$ SELECT durable.start_activity('echo') $$, '55000', NULL, 'start_activity() outside: 55000');
SELECT throws_ok($$ SELECT durable.await('1') $$, '55000', NULL, 'await() outside: 55000');
SELECT throws_ok($$ SELECT durable.sleep('1 second') $$, '55000', NULL, 'sleep() outside: 55000');
SELECT throws_ok($$ SELECT durable.wait_signal('go') $$, '55000', NULL, 'wait_signal() outside: 55000');
SELECT throws_ok($$ SELECT durable.child_workflow('kid') $$, '55000', NULL, 'child_workflow() outside: 55000');
SELECT throws_ok($$ SELECT durable.side_effect('1') $$, '55000', NULL, 'side_effect() outside: 55000');
SELECT throws_ok($$ SELECT durable.workflow_info() $$, '55000', NULL, 'workflow_info() outside: 55000');
-- An activity function is not a workflow function either.
CREATE FUNCTION app.sneaky(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM durable.sleep('1 second');
    RETURN '1';
END $$;
SELECT durable.register_activity('sneaky', 'app.sneaky(jsonb)', run_as => 'wf_app');
SELECT pg_temp.wf('sneaky_wf', $$
BEGIN
    RETURN durable.activity('sneaky', NULL, '{"retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 1}}');
EXCEPTION WHEN SQLSTATE 'WF007' THEN
    RETURN to_jsonb(SQLERRM);
END $$);
SELECT durable.start_workflow('sneaky_wf', NULL, 'sneaky') IS NOT NULL AS started;
SELECT durable.run_tasks() AS ran \gset
SELECT is(pg_temp.outcome('sneaky'), 'completed "activity 1 (sneaky) failed: 55000"',
    'durable.sleep() in an activity fails the attempt with 55000');

SELECT * FROM finish();
ROLLBACK;

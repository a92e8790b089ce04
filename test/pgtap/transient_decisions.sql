-- Transient decision tasks, as Cadence writes them (its mutable state's
-- decision task manager; host/decision_test.go): only the first failure or
-- timeout of a decision task is written (DecisionTaskScheduled, Started,
-- Failed or TimedOut).  Its retries are transient: their scheduled/started
-- pair is not in history, the poll response ends its history with it (ids
-- past the end of history, attempt > 1, startedEventId naming it), and it is
-- written with those ids when the attempt completes.  A new event makes the
-- next task a first attempt again; a signal, terminate or workflow timeout
-- during a transient attempt writes no event of the attempt.  durable counts
-- attempts from 1 where Cadence counts from 0 (docs/cadence-differences.md
-- "Differences from Cadence").
BEGIN;
SELECT plan(50);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

-- "id:type" of each event of a run's history.
CREATE FUNCTION pg_temp.hist(wid text) RETURNS text[] LANGUAGE sql AS $$
    SELECT array_agg(event_id || ':' || event_type ORDER BY event_id)
      FROM durable.get_history(wid) $$;
-- "id:type" of each event of a poll response's history, from event from_id.
CREATE FUNCTION pg_temp.task_hist(task jsonb, from_id int DEFAULT 1) RETURNS text[] LANGUAGE sql AS $$
    SELECT array_agg((e->>'eventId') || ':' || (e->>'eventType') ORDER BY o)
      FROM jsonb_array_elements(task->'history') WITH ORDINALITY AS h(e, o)
     WHERE (e->>'eventId')::int >= from_id $$;
-- The attributes of event id of a poll response's history.
CREATE FUNCTION pg_temp.task_event(task jsonb, id int) RETURNS jsonb LANGUAGE sql AS $$
    SELECT e->'attributes' FROM jsonb_array_elements(task->'history') AS h(e)
     WHERE (e->>'eventId')::int = id $$;
-- The attributes of event id of a run's history.
CREATE FUNCTION pg_temp.event(wid text, id int) RETURNS jsonb LANGUAGE sql AS $$
    SELECT attributes FROM durable.get_history(wid) WHERE event_id = id $$;
-- Poll a decision task of queue q (it must be there) and fail it.
CREATE FUNCTION pg_temp.poll_fail(q text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE t jsonb;
BEGIN
    t := durable.poll_decision_task(q, identity => 'crasher');
    IF t IS NULL THEN RAISE EXCEPTION 'no decision task on %', q; END IF;
    PERFORM durable.fail_decision_task(t->>'taskToken', 'WorkflowWorkerUnhandledFailure',
                                       '{"panic": "nil map"}', 'crasher');
    RETURN t;
END $$;

-- 1. A crash loop: the first failure is written, the retries are not.
SELECT durable.start_workflow('wf', NULL, 'loop', 'loop') IS NOT NULL AS started;
SELECT pg_temp.poll_fail('loop') AS t1 \gset
SELECT is(pg_temp.hist('loop'),
    '{1:WorkflowExecutionStarted,2:DecisionTaskScheduled,3:DecisionTaskStarted,4:DecisionTaskFailed}',
    'the first failure: DecisionTaskScheduled, DecisionTaskStarted, DecisionTaskFailed');
SELECT is(pg_temp.event('loop', 4) - 'details',
    '{"scheduledEventId": 2, "startedEventId": 3, "cause": "WorkflowWorkerUnhandledFailure", "identity": "crasher"}',
    'DecisionTaskFailed names its scheduled and started events');
SELECT durable.poll_decision_task('loop', identity => 'crasher') AS t2 \gset
SELECT is(jsonb_build_object('attempt', :'t2'::jsonb->'attempt', 'startedEventId', :'t2'::jsonb->'startedEventId',
                             'previousStartedEventId', :'t2'::jsonb->'previousStartedEventId'),
    '{"attempt": 2, "startedEventId": 6, "previousStartedEventId": 0}',
    'the retry: attempt 2, startedEventId past the end of history, no decision task completed yet');
SELECT is(pg_temp.task_hist(:'t2'),
    '{1:WorkflowExecutionStarted,2:DecisionTaskScheduled,3:DecisionTaskStarted,4:DecisionTaskFailed,5:DecisionTaskScheduled,6:DecisionTaskStarted}',
    'its poll response ends the history with the transient DecisionTaskScheduled and DecisionTaskStarted');
SELECT is(pg_temp.task_event(:'t2', 5),
    '{"taskQueue": "loop", "startToCloseTimeoutSeconds": 10, "attempt": 2}',
    'the transient DecisionTaskScheduled carries the attempt');
SELECT is(pg_temp.task_event(:'t2', 6), '{"scheduledEventId": 5, "identity": "crasher"}',
    'the transient DecisionTaskStarted names it and the poller');
SELECT is(pg_temp.hist('loop'),
    '{1:WorkflowExecutionStarted,2:DecisionTaskScheduled,3:DecisionTaskStarted,4:DecisionTaskFailed}',
    'the transient events are not in history');
SELECT durable.fail_decision_task(:'t2'::jsonb->>'taskToken', 'WorkflowWorkerUnhandledFailure', NULL, 'crasher');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]')$$, :'t2'::jsonb->>'taskToken'),
    'WF005', NULL, 'the failed attempt''s token is stale');
-- Attempts 3 to 7 fail too.
SELECT pg_temp.poll_fail('loop') AS t3 \gset
SELECT pg_temp.poll_fail('loop'), pg_temp.poll_fail('loop'), pg_temp.poll_fail('loop'), pg_temp.poll_fail('loop');
SELECT is((:'t3'::jsonb->'attempt')::int, 3, 'attempt 3');
SELECT is(pg_temp.hist('loop'),
    '{1:WorkflowExecutionStarted,2:DecisionTaskScheduled,3:DecisionTaskStarted,4:DecisionTaskFailed}',
    'six failed attempts leave history at the first failure');
SELECT durable.poll_decision_task('loop', identity => 'fixed') AS t8 \gset
SELECT is(jsonb_build_object('attempt', :'t8'::jsonb->'attempt', 'startedEventId', :'t8'::jsonb->'startedEventId'),
    '{"attempt": 8, "startedEventId": 6}', 'attempt 8: the same transient ids');
SELECT is(pg_temp.task_hist(:'t8', 5), '{5:DecisionTaskScheduled,6:DecisionTaskStarted}',
    'its poll response carries the transient pair');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]')$$, :'t3'::jsonb->>'taskToken'),
    'WF005', NULL, 'an earlier attempt''s token (same ids) is refused');
SELECT durable.complete_decision_task(:'t8'::jsonb->>'taskToken',
    '[{"decisionType": "StartTimer", "timerId": "t", "startToFireTimeoutSeconds": 60}]', 'fixed');
SELECT is(pg_temp.hist('loop'),
    '{1:WorkflowExecutionStarted,2:DecisionTaskScheduled,3:DecisionTaskStarted,4:DecisionTaskFailed,5:DecisionTaskScheduled,6:DecisionTaskStarted,7:DecisionTaskCompleted,8:TimerStarted}',
    'the completed attempt writes its transient pair at the ids its poll gave, then DecisionTaskCompleted');
SELECT is(pg_temp.event('loop', 5), '{"taskQueue": "loop", "startToCloseTimeoutSeconds": 10, "attempt": 8}',
    'DecisionTaskScheduled: attempt 8');
SELECT is(pg_temp.event('loop', 6), '{"scheduledEventId": 5, "identity": "fixed"}', 'DecisionTaskStarted');
SELECT is(pg_temp.event('loop', 7), '{"scheduledEventId": 5, "startedEventId": 6, "identity": "fixed"}',
    'DecisionTaskCompleted names them');
SELECT t.at('2026-01-01 00:01:00+00');
SELECT durable.tick() AS fired \gset
SELECT is(pg_temp.event('loop', 10), '{"taskQueue": "loop", "startToCloseTimeoutSeconds": 10, "attempt": 1}',
    'the next decision task is a first attempt');
SELECT is((durable.poll_decision_task('loop')->'previousStartedEventId')::int, 6,
    'previousStartedEventId is the completed transient attempt''s started event');
SELECT durable.terminate_workflow('loop');

-- 2. Decision timeouts (start-to-close): only the first is written.
SELECT t.at('2026-01-02 00:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'slow', 'slow') IS NOT NULL AS started;
SELECT durable.poll_decision_task('slow') IS NOT NULL AS polled;
SELECT t.at('2026-01-02 00:00:10+00');
SELECT is(durable.tick(), 1, 'the decision task times out');
SELECT is(pg_temp.hist('slow'),
    '{1:WorkflowExecutionStarted,2:DecisionTaskScheduled,3:DecisionTaskStarted,4:DecisionTaskTimedOut}',
    'DecisionTaskTimedOut, and its retry is not in history');
SELECT is(pg_temp.event('slow', 4), '{"scheduledEventId": 2, "startedEventId": 3, "timeoutType": "START_TO_CLOSE"}',
    'DecisionTaskTimedOut: START_TO_CLOSE');
SELECT durable.poll_decision_task('slow') AS s2 \gset
SELECT is(pg_temp.task_hist(:'s2', 4), '{4:DecisionTaskTimedOut,5:DecisionTaskScheduled,6:DecisionTaskStarted}',
    'the retry is transient');
SELECT t.at('2026-01-02 00:00:20+00');
SELECT is(durable.tick(), 1, 'the transient attempt times out too');
SELECT is(array_length(pg_temp.hist('slow'), 1), 4, 'and writes nothing');
SELECT durable.poll_decision_task('slow') AS s3 \gset
SELECT is(jsonb_build_object('attempt', :'s3'::jsonb->'attempt', 'startedEventId', :'s3'::jsonb->'startedEventId'),
    '{"attempt": 3, "startedEventId": 6}', 'attempt 3, transient');
SELECT durable.complete_decision_task(:'s3'::jsonb->>'taskToken', '[{"decisionType": "CompleteWorkflowExecution"}]');
SELECT is(pg_temp.hist('slow'),
    '{1:WorkflowExecutionStarted,2:DecisionTaskScheduled,3:DecisionTaskStarted,4:DecisionTaskTimedOut,5:DecisionTaskScheduled,6:DecisionTaskStarted,7:DecisionTaskCompleted,8:WorkflowExecutionCompleted}',
    'attempt 3 completes the workflow');
SELECT is((pg_temp.event('slow', 5)->'attempt')::int, 3, 'DecisionTaskScheduled: attempt 3');

-- 3. A signal while a transient attempt is scheduled: it is written at once, and
-- the attempt is a first attempt again, written when polled.
SELECT durable.start_workflow('wf', NULL, 'sig1', 'sig1') IS NOT NULL AS started;
SELECT pg_temp.poll_fail('sig1') IS NOT NULL AS failed;
SELECT durable.signal_workflow('sig1', 'go', '{"n": 1}');
SELECT is(pg_temp.hist('sig1'),
    '{1:WorkflowExecutionStarted,2:DecisionTaskScheduled,3:DecisionTaskStarted,4:DecisionTaskFailed,5:WorkflowExecutionSignaled}',
    'the signal goes to history at once');
SELECT durable.poll_decision_task('sig1', identity => 'w') AS g1 \gset
SELECT is(jsonb_build_object('attempt', :'g1'::jsonb->'attempt', 'startedEventId', :'g1'::jsonb->'startedEventId'),
    '{"attempt": 1, "startedEventId": 7}', 'the task polled next is a first attempt');
SELECT is(pg_temp.hist('sig1'),
    '{1:WorkflowExecutionStarted,2:DecisionTaskScheduled,3:DecisionTaskStarted,4:DecisionTaskFailed,5:WorkflowExecutionSignaled,6:DecisionTaskScheduled,7:DecisionTaskStarted}',
    'DecisionTaskScheduled and DecisionTaskStarted are written after the signal');
SELECT is(pg_temp.event('sig1', 6)->'attempt', '1', 'DecisionTaskScheduled: attempt 1');
SELECT is(pg_temp.task_hist(:'g1', 5), '{5:WorkflowExecutionSignaled,6:DecisionTaskScheduled,7:DecisionTaskStarted}',
    'the poll response is the history');

-- 4. A signal while a transient attempt is started: buffered; written after the
-- attempt's events when it completes.
SELECT durable.start_workflow('wf', NULL, 'sig2', 'sig2') IS NOT NULL AS started;
SELECT pg_temp.poll_fail('sig2') IS NOT NULL AS failed;
SELECT durable.poll_decision_task('sig2', identity => 'w') AS h2 \gset
SELECT durable.signal_workflow('sig2', 'go', '{"n": 2}');
SELECT is(array_length(pg_temp.hist('sig2'), 1), 4, 'the signal waits for the started attempt');
SELECT durable.complete_decision_task(:'h2'::jsonb->>'taskToken',
    '[{"decisionType": "StartTimer", "timerId": "t", "startToFireTimeoutSeconds": 60}]', 'w');
SELECT is(pg_temp.hist('sig2'),
    '{1:WorkflowExecutionStarted,2:DecisionTaskScheduled,3:DecisionTaskStarted,4:DecisionTaskFailed,5:DecisionTaskScheduled,6:DecisionTaskStarted,7:DecisionTaskCompleted,8:TimerStarted,9:WorkflowExecutionSignaled,10:DecisionTaskScheduled}',
    'the transient pair, DecisionTaskCompleted, the decision''s TimerStarted, the signal, a new decision task');
SELECT is(pg_temp.event('sig2', 10)->'attempt', '1', 'the new decision task is a first attempt');

-- 5. A signal while a transient attempt is started, and the attempt fails: the
-- signal is written and the next task is a written first attempt.
SELECT durable.start_workflow('wf', NULL, 'sig3', 'sig3') IS NOT NULL AS started;
SELECT pg_temp.poll_fail('sig3') IS NOT NULL AS failed;
SELECT durable.poll_decision_task('sig3') AS h3 \gset
SELECT durable.signal_workflow('sig3', 'go');
SELECT durable.fail_decision_task(:'h3'::jsonb->>'taskToken', 'WorkflowWorkerUnhandledFailure');
SELECT is(pg_temp.hist('sig3'),
    '{1:WorkflowExecutionStarted,2:DecisionTaskScheduled,3:DecisionTaskStarted,4:DecisionTaskFailed,5:WorkflowExecutionSignaled,6:DecisionTaskScheduled}',
    'the failed transient attempt writes nothing; the signal and a first attempt follow');
SELECT is(pg_temp.event('sig3', 6)->'attempt', '1', 'attempt 1');

-- 6. Terminate, and the run timeout, during a started transient attempt: the
-- attempt ends without an event (a first attempt would get DecisionTaskFailed).
SELECT durable.start_workflow('wf', NULL, 'term', 'term') IS NOT NULL AS started;
SELECT pg_temp.poll_fail('term') IS NOT NULL AS failed;
SELECT durable.poll_decision_task('term') AS k \gset
SELECT durable.signal_workflow('term', 'late');
SELECT durable.terminate_workflow('term', 'enough');
SELECT is(pg_temp.hist('term'),
    '{1:WorkflowExecutionStarted,2:DecisionTaskScheduled,3:DecisionTaskStarted,4:DecisionTaskFailed,5:WorkflowExecutionSignaled,6:WorkflowExecutionTerminated}',
    'terminate: the buffered signal, then WorkflowExecutionTerminated');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]')$$, :'k'::jsonb->>'taskToken'),
    'WF005', NULL, 'the attempt''s token is stale');
SELECT t.at('2026-01-03 00:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'rto', 'rto', run_timeout => '1 minute') IS NOT NULL AS started;
SELECT pg_temp.poll_fail('rto') IS NOT NULL AS failed;
SELECT durable.poll_decision_task('rto') IS NOT NULL AS polled;
SELECT t.at('2026-01-03 00:01:00+00');
SELECT durable.tick() AS fired \gset
SELECT is(pg_temp.hist('rto'),
    '{1:WorkflowExecutionStarted,2:DecisionTaskScheduled,3:DecisionTaskStarted,4:DecisionTaskFailed,5:WorkflowExecutionTimedOut}',
    'the run timeout: WorkflowExecutionTimedOut alone');

-- 7. A decision task's timeout counts from its own start.  The run's decision
-- timer, set for the task started at 00:00:00, is due at 00:00:10; the next task
-- starts at 00:00:05, before it is due: it does not time out at 00:00:10, but
-- at 00:00:15, ten seconds after its start.
SELECT t.at('2026-01-04 00:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'again', 'again') IS NOT NULL AS started;
SELECT durable.poll_decision_task('again') AS a1 \gset
SELECT durable.complete_decision_task(:'a1'::jsonb->>'taskToken',
    '[{"decisionType": "StartTimer", "timerId": "t", "startToFireTimeoutSeconds": 3}]');
SELECT t.at('2026-01-04 00:00:03+00');
SELECT durable.tick() AS fired \gset
SELECT t.at('2026-01-04 00:00:05+00');
SELECT is((durable.poll_decision_task('again')->>'startedEventId')::int, 8,
    'the second decision task starts at 00:00:05');
SELECT t.at('2026-01-04 00:00:10+00');
SELECT is(durable.tick(), 0, 'at 00:00:10 no decision task times out');
SELECT t.at('2026-01-04 00:00:15+00');
SELECT is(durable.tick(), 1, 'at 00:00:15 the second one does');
SELECT is(pg_temp.hist('again'),
    '{1:WorkflowExecutionStarted,2:DecisionTaskScheduled,3:DecisionTaskStarted,4:DecisionTaskCompleted,5:TimerStarted,6:TimerFired,7:DecisionTaskScheduled,8:DecisionTaskStarted,9:DecisionTaskTimedOut}',
    'DecisionTaskTimedOut once, for the second task');
SELECT is(pg_temp.event('again', 9), '{"scheduledEventId": 7, "startedEventId": 8, "timeoutType": "START_TO_CLOSE"}',
    'DecisionTaskTimedOut names the second task');

-- 8. Two attempts of a transient task have the same ids, and each times out ten
-- seconds after its own start: attempt 2 starts at 00:00:12 (its timer due at
-- 00:00:22) and fails; attempt 3 starts at 00:00:17, and times out at 00:00:27.
SELECT t.at('2026-01-05 00:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'same', 'same') IS NOT NULL AS started;
SELECT durable.poll_decision_task('same') IS NOT NULL AS polled;
SELECT t.at('2026-01-05 00:00:10+00');
SELECT durable.tick() AS fired \gset
SELECT t.at('2026-01-05 00:00:12+00');
SELECT durable.poll_decision_task('same') AS m2 \gset
SELECT durable.fail_decision_task(:'m2'::jsonb->>'taskToken', 'WorkflowWorkerUnhandledFailure');
SELECT t.at('2026-01-05 00:00:17+00');
SELECT durable.poll_decision_task('same') AS m3 \gset
SELECT is(jsonb_build_object('attempt', :'m3'::jsonb->'attempt', 'startedEventId', :'m3'::jsonb->'startedEventId'),
    jsonb_build_object('attempt', 3, 'startedEventId', (:'m2'::jsonb->'startedEventId')::int),
    'attempt 3 has the ids of attempt 2');
SELECT t.at('2026-01-05 00:00:22+00');
SELECT is(durable.tick(), 0, 'attempt 3 does not time out when attempt 2 would have');
SELECT t.at('2026-01-05 00:00:27+00');
SELECT is(durable.tick(), 1, 'it times out ten seconds after its own start');
SELECT is((durable.poll_decision_task('same')->'attempt')::int, 4, 'then attempt 4 is polled');

SELECT * FROM finish();
ROLLBACK;

-- Eager dispatch of the next decision task (docs/api.md "Eager dispatch"), as
-- Cadence's ReturnNewDecisionTask and Temporal's returnNewWorkflowTask:
-- complete_decision_task and complete_activity with return_new_task start the
-- decision task they leave scheduled for the caller, in the same transaction,
-- and return it as poll_decision_task would have: {"decisionTask": ...,
-- "activityTasks": []}.  It is never queued; histories are what a poll would
-- have written; a receiver that never answers loses nothing (the task times
-- out as any started task).
BEGIN;
SELECT plan(46);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

-- "id:type" of each event of a run's history, from event from_id.
CREATE FUNCTION pg_temp.hist(wid text, from_id int DEFAULT 1) RETURNS text[] LANGUAGE sql AS $$
    SELECT array_agg(event_id || ':' || event_type ORDER BY event_id)
      FROM durable.get_history(wid) WHERE event_id >= from_id $$;
CREATE FUNCTION pg_temp.event(wid text, id int) RETURNS jsonb LANGUAGE sql AS $$
    SELECT attributes FROM durable.get_history(wid) WHERE event_id = id $$;
-- A task without its token's secret (the last 16 hex digits), to compare two.
CREATE FUNCTION pg_temp.unsecret(task jsonb) RETURNS jsonb LANGUAGE sql AS $$
    SELECT task || jsonb_build_object('taskToken', left(task->>'taskToken', -16)) $$;
CREATE FUNCTION pg_temp.queued(wid text) RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FROM durable.ready_tasks r JOIN durable.runs u USING (run_id)
     WHERE u.workflow_id = wid $$;

-- 1. A signal arrives while the decision task is started: the completion
-- leaves a decision task scheduled, and the caller gets it started.  What a
-- poll would have returned is taken first in a savepoint, then undone.
SELECT durable.start_workflow('wf', NULL, 'sig', 'sig') IS NOT NULL AS started;
SELECT durable.poll_decision_task('sig', identity => 'w1') AS d \gset
SELECT durable.signal_workflow('sig', 'go', '{"n": 1}');
SAVEPOINT by_poll;
SELECT durable.complete_decision_task(:'d'::jsonb->>'taskToken', jsonb_build_array(t.sched('a1')), 'w1')
    IS NULL AS none \gset
SELECT durable.poll_decision_task('sig', identity => 'w1') AS polled \gset
ROLLBACK TO SAVEPOINT by_poll;
SELECT ok(:'none'::boolean, 'without return_new_task: NULL, as before');
SELECT durable.complete_decision_task(:'d'::jsonb->>'taskToken', jsonb_build_array(t.sched('a1')), 'w1',
    return_new_task => true) AS r \gset
SELECT is(array(SELECT jsonb_object_keys(:'r'::jsonb) ORDER BY 1), '{activityTasks,decisionTask}',
    'with return_new_task: decisionTask and activityTasks');
SELECT is(:'r'::jsonb->'activityTasks', '[]', 'no activity task');
SELECT is(pg_temp.unsecret(:'r'::jsonb->'decisionTask'), pg_temp.unsecret(:'polled'::jsonb),
    'the task returned is the one a poll would have returned');
SELECT isnt(:'r'::jsonb->'decisionTask'->>'taskToken', :'polled'::jsonb->>'taskToken',
    'with a secret of its own');
SELECT is(pg_temp.hist('sig', 3),
    '{3:DecisionTaskStarted,4:DecisionTaskCompleted,5:ActivityTaskScheduled,6:WorkflowExecutionSignaled,7:DecisionTaskScheduled,8:DecisionTaskStarted}',
    'history: the decisions'' events, the buffered signal, the new task scheduled and started');
SELECT is(pg_temp.event('sig', 8), '{"scheduledEventId": 7, "identity": "w1"}',
    'DecisionTaskStarted names the caller');
SELECT is((:'r'::jsonb->'decisionTask'->>'startedEventId')::int, 8, 'startedEventId');
SELECT is(pg_temp.queued('sig'), 1::bigint, 'only the activity is queued');
SELECT is(durable.poll_decision_task('sig'), NULL, 'no other poller gets the decision task');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]')$$, :'d'::jsonb->>'taskToken'),
    'WF005', NULL, 'the answered task''s token is stale');
SELECT durable.complete_decision_task(:'r'::jsonb->'decisionTask'->>'taskToken', '[]', return_new_task => true)
    IS NULL AS r2 \gset
SELECT ok(:'r2'::boolean, 'the returned task''s token completes it; nothing more to return: NULL');
SELECT is(pg_temp.hist('sig', 9), '{9:DecisionTaskCompleted}', 'DecisionTaskCompleted');

-- 2. complete_activity with return_new_task: the decision task its
-- completion schedules, started under the identity the attempt was polled with.
SELECT durable.poll_activity_task('sig', identity => 'aw') AS a \gset
SELECT durable.complete_activity(:'a'::jsonb->>'taskToken', '"done"', return_new_task => true) AS ra \gset
SELECT is(pg_temp.hist('sig', 10),
    '{10:ActivityTaskStarted,11:ActivityTaskCompleted,12:DecisionTaskScheduled,13:DecisionTaskStarted}',
    'ActivityTaskStarted written late, then the outcome, then the decision task scheduled and started');
SELECT is(pg_temp.event('sig', 13), '{"scheduledEventId": 12, "identity": "aw"}',
    'DecisionTaskStarted names the activity''s worker');
SELECT is((:'ra'::jsonb->'decisionTask'->>'startedEventId')::int, 13, 'the task returned');
SELECT is(jsonb_array_length(:'ra'::jsonb->'decisionTask'->'history'), 13, 'with the whole history');
SELECT is(pg_temp.queued('sig'), 0::bigint, 'nothing queued');
SELECT is(durable.poll_decision_task('sig'), NULL, 'nothing for a poll');

-- 3. complete_activity while a decision task is started: the outcome is
-- buffered, no task is scheduled, NULL.
SELECT durable.complete_decision_task(:'ra'::jsonb->'decisionTask'->>'taskToken',
    jsonb_build_array(t.sched('a2'))) IS NULL AS answered;
SELECT durable.poll_activity_task('sig', identity => 'aw') AS a2 \gset
SELECT durable.signal_workflow('sig', 'again');
SELECT durable.poll_decision_task('sig', identity => 'w2') AS d3 \gset
SELECT is(durable.complete_activity(:'a2'::jsonb->>'taskToken', '"r"', return_new_task => true), NULL,
    'an outcome buffered behind a started decision task: NULL');
-- The completion flushes it and returns the next task.
SELECT durable.complete_decision_task(:'d3'::jsonb->>'taskToken', '[]', return_new_task => true) AS r3 \gset
SELECT is(pg_temp.hist('sig', 19),
    '{19:DecisionTaskCompleted,20:ActivityTaskStarted,21:ActivityTaskCompleted,22:DecisionTaskScheduled,23:DecisionTaskStarted}',
    'the buffered ActivityTaskStarted and outcome, then the task returned');
SELECT is(pg_temp.event('sig', 23)->>'identity', 'w2', 'started by the completing worker (its poll identity)');

-- 4. The receiver crashes: the task it was given times out as any started
-- task, and the next attempt is transient and queued.
SELECT t.at('2026-01-01 00:00:10+00');
SELECT is(durable.tick(), 1, 'the unanswered task times out');
SELECT is(pg_temp.hist('sig', 23), '{23:DecisionTaskStarted,24:DecisionTaskTimedOut}', 'DecisionTaskTimedOut');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]')$$,
    :'r3'::jsonb->'decisionTask'->>'taskToken'), 'WF005', NULL, 'its token is stale');
SELECT durable.poll_decision_task('sig', identity => 'w3') AS d4 \gset
SELECT is(jsonb_build_object('attempt', :'d4'::jsonb->'attempt', 'startedEventId', :'d4'::jsonb->'startedEventId'),
    '{"attempt": 2, "startedEventId": 26}', 'a poll gets the retry, transient');

-- 5. A transient attempt answered with return_new_task while events wait:
-- a decision closing the workflow over an unseen signal fails the task
-- (UnhandledDecision; a transient attempt's failure writes no event) and the
-- caller gets the next attempt, a first one after the signal.
SELECT durable.signal_workflow('sig', 'late');
SELECT durable.complete_decision_task(:'d4'::jsonb->>'taskToken',
    '[{"decisionType": "CompleteWorkflowExecution"}]', 'w3', return_new_task => true) AS r4 \gset
SELECT is(pg_temp.hist('sig', 24),
    '{24:DecisionTaskTimedOut,25:WorkflowExecutionSignaled,26:DecisionTaskScheduled,27:DecisionTaskStarted}',
    'the transient attempt ends without an event; the signal, the next task started');
SELECT is(pg_temp.event('sig', 27), '{"scheduledEventId": 26, "identity": "w3"}', 'by the caller');
SELECT is(jsonb_build_object('attempt', :'r4'::jsonb->'decisionTask'->'attempt',
                             'startedEventId', :'r4'::jsonb->'decisionTask'->'startedEventId'),
    '{"attempt": 1, "startedEventId": 27}', 'returned: a first attempt');

-- 6. A completion that closes the run returns NULL.
SELECT is(durable.complete_decision_task(:'r4'::jsonb->'decisionTask'->>'taskToken',
    '[{"decisionType": "CompleteWorkflowExecution"}]', return_new_task => true), NULL,
    'the workflow completes: NULL');
SELECT is(pg_temp.queued('sig'), 0::bigint, 'nothing queued');

-- 7. A worker without the worker privilege on the namespace gets 42501, and
-- nothing changes.
CREATE ROLE ed_other;
GRANT durable_worker TO ed_other;
SELECT durable.create_namespace('closed');
SELECT durable.start_workflow('wf', NULL, 'priv', 'pq', 'closed') IS NOT NULL AS started;
SELECT durable.complete_decision_task(durable.poll_decision_task('pq', NULL, 'closed')->>'taskToken',
    jsonb_build_array(t.sched('p1'))) IS NULL AS scheduled;
SELECT durable.poll_activity_task('pq', NULL, 'closed')->>'taskToken' AS ptok \gset
SELECT durable.signal_workflow('priv', 's', NULL, 'closed');
SELECT durable.poll_decision_task('pq', NULL, 'closed')->>'taskToken' AS pdec \gset
SELECT t.footprint() AS before \gset
SET LOCAL ROLE ed_other;
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]', NULL, true)$$, :'pdec'),
    '42501', NULL, 'complete_decision_task with return_new_task: 42501');
SELECT throws_ok(format($$SELECT durable.complete_activity(%L, '1', true)$$, :'ptok'),
    '42501', NULL, 'complete_activity with return_new_task: 42501');
RESET ROLE;
SELECT is(t.footprint(), :'before', 'nothing changed');

-- 8. Bad input, changing nothing.
SELECT durable.start_workflow('wf', NULL, 'bad', 'bad') IS NOT NULL AS started;
SELECT durable.poll_decision_task('bad') AS b \gset
SELECT t.footprint() AS before \gset
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]', NULL, NULL)$$, :'b'::jsonb->>'taskToken'),
    '22004', 'return_new_task must not be null', 'complete_decision_task: a null return_new_task');
SELECT throws_ok($$SELECT durable.complete_activity('A:x', NULL, NULL)$$,
    '22004', 'return_new_task must not be null', 'complete_activity: a null return_new_task');
SELECT is(t.footprint(), :'before', 'nothing changed');

-- 9. history_after: a worker that keeps the run's state gets only the events
-- after the last one it has (Temporal's sticky execution); NULL, the whole
-- history.
CREATE FUNCTION pg_temp.ids(task jsonb) RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_path_query_array(task, '$.decisionTask.history[*].eventId') $$;
SELECT durable.start_workflow('wf', NULL, 'part', 'part') IS NOT NULL AS started;
SELECT durable.poll_decision_task('part', identity => 'pw') AS pd \gset
SELECT is(durable.complete_decision_task(:'pd'::jsonb->>'taskToken', jsonb_build_array(t.sched('a1')),
    NULL, true, 0, history_after => 3), NULL, 'nothing to return: NULL, history_after or not');
SELECT durable.poll_activity_task('part', identity => 'pw') AS pa \gset
SELECT durable.complete_activity(:'pa'::jsonb->>'taskToken', '"x"', true, history_after => 4) AS pr \gset
SELECT is(pg_temp.ids(:'pr'), '[5, 6, 7, 8, 9]', 'complete_activity: the events after event 4');
SELECT is(:'pr'::jsonb->'decisionTask'->'history',
    (SELECT jsonb_agg(jsonb_build_object('eventId', event_id, 'eventTime', event_time,
                                         'eventType', event_type, 'attributes', attributes) ORDER BY event_id)
       FROM durable.get_history('part') WHERE event_id > 4),
    'as get_history has them');
SELECT is((:'pr'::jsonb->'decisionTask'->>'startedEventId')::int, 9, 'startedEventId as before');
SELECT durable.signal_workflow('part', 'go');
SELECT durable.complete_decision_task(:'pr'::jsonb->'decisionTask'->>'taskToken', '[]', NULL, true, 0,
    history_after => 9) AS pr2 \gset
SELECT is(pg_temp.ids(:'pr2'), '[10, 11, 12, 13]',
    'complete_decision_task: the signal that came meanwhile and the new task');
SELECT t.footprint() AS before \gset
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]', NULL, true, 0, -1)$$,
    :'pr2'::jsonb->'decisionTask'->>'taskToken'),
    '22023', 'history_after must not be negative', 'a negative history_after');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]', NULL, true, 0, 14)$$,
    :'pr2'::jsonb->'decisionTask'->>'taskToken'),
    '22023', 'history_after 14 is past the last event of the run, 13', 'a history_after past history');
SELECT is(t.footprint(), :'before', 'nothing changed');
SELECT durable.signal_workflow('part', 'again');
SELECT durable.complete_decision_task(:'pr2'::jsonb->'decisionTask'->>'taskToken', '[]', NULL, true, 0,
    NULL) AS pr3 \gset
SELECT is(pg_temp.ids(:'pr3')->0, '1', 'NULL: the whole history');

SELECT * FROM finish();
ROLLBACK;

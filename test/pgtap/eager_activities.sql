-- Eager activities (docs/api.md "Eager dispatch"), as Temporal's
-- request_eager_execution: a ScheduleActivityTask decision with
-- requestEagerExecution on the decision task's own queue comes back started
-- in complete_decision_task's answer, up to max_eager_activities, as
-- poll_activity_task would have returned it; it is not queued.  Its attempt
-- counts, its timeouts run, its schedule-to-start is 0; a receiver that
-- crashes loses nothing (StartToClose times it out, the retry policy applies).
BEGIN;
SELECT plan(32);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

CREATE FUNCTION pg_temp.hist(wid text, from_id int DEFAULT 1) RETURNS text[] LANGUAGE sql AS $$
    SELECT array_agg(event_id || ':' || event_type ORDER BY event_id)
      FROM durable.get_history(wid) WHERE event_id >= from_id $$;
CREATE FUNCTION pg_temp.unsecret(task jsonb) RETURNS jsonb LANGUAGE sql AS $$
    SELECT task || jsonb_build_object('taskToken', left(task->>'taskToken', -16)) $$;
-- The ready tasks of a workflow, "queue/kind/scheduled id".
CREATE FUNCTION pg_temp.queued(wid text) RETURNS text[] LANGUAGE sql AS $$
    SELECT COALESCE(array_agg(r.task_queue || '/' || r.kind::text || '/' || r.scheduled_event_id
                              ORDER BY r.scheduled_event_id), '{}')
      FROM durable.ready_tasks r JOIN durable.runs u USING (run_id)
     WHERE u.workflow_id = wid $$;
CREATE FUNCTION pg_temp.eager(act text, extra jsonb DEFAULT '{}') RETURNS jsonb LANGUAGE sql AS $$
    SELECT t.sched(act, '{"requestEagerExecution": true, "startToCloseTimeoutSeconds": 10,
        "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 2}}'::jsonb || extra) $$;

-- 1. Four activities: a1 and a2 eager on the decision task's queue, a3 not
-- eager, a4 eager on another queue; max_eager_activities 1 takes a1 only.
SELECT durable.start_workflow('wf', NULL, 'ea', 'ea') IS NOT NULL AS started;
SELECT durable.poll_decision_task('ea', identity => 'w1') AS d \gset
SELECT jsonb_build_array(pg_temp.eager('a1'), pg_temp.eager('a2'), t.sched('a3'),
    pg_temp.eager('a4', '{"taskQueue": "other"}')) AS decisions \gset
SAVEPOINT by_poll;
SELECT durable.complete_decision_task(:'d'::jsonb->>'taskToken', :'decisions', 'w1') IS NULL AS none \gset
SELECT durable.poll_activity_task('ea', identity => 'w1') AS polled \gset
ROLLBACK TO SAVEPOINT by_poll;
SELECT ok(:'none'::boolean, 'without max_eager_activities: NULL, everything queued');
SELECT durable.complete_decision_task(:'d'::jsonb->>'taskToken', :'decisions', 'w1',
    max_eager_activities => 1) AS r \gset
SELECT is(:'r'::jsonb->'decisionTask', 'null', 'no decision task asked for');
SELECT is(jsonb_array_length(:'r'::jsonb->'activityTasks'), 1, 'one activity task');
SELECT is(pg_temp.unsecret(:'r'::jsonb->'activityTasks'->0), pg_temp.unsecret(:'polled'::jsonb),
    'the one a poll would have returned');
SELECT is(:'r'::jsonb->'activityTasks'->0->>'activityId', 'a1', 'a1');
SELECT is(:'r'::jsonb->'activityTasks'->0->'scheduledTime', :'r'::jsonb->'activityTasks'->0->'startedTime',
    'started when scheduled');
SELECT is(pg_temp.queued('ea'), '{ea/a/6,ea/a/7,other/a/8}', 'a2, a3 and a4 are queued, a1 is not');
SELECT is(pg_temp.hist('ea', 4),
    '{4:DecisionTaskCompleted,5:ActivityTaskScheduled,6:ActivityTaskScheduled,7:ActivityTaskScheduled,8:ActivityTaskScheduled}',
    'history: as without eager execution (ActivityTaskStarted comes with the outcome)');
SELECT is((SELECT attributes ? 'requestEagerExecution' FROM durable.get_history('ea') WHERE event_id = 5), false,
    'ActivityTaskScheduled does not record the request');
SELECT is(t.pending('ea')->>'state', 'STARTED', 'describe_workflow: a1 started');
SELECT durable.poll_activity_task('ea') AS a2 \gset
SELECT is(:'a2'::jsonb->>'activityId', 'a2', 'a poll gets a2, never a1');
SELECT durable.complete_activity(:'a2'::jsonb->>'taskToken', '"ok"') IS NULL AS done;
SELECT durable.complete_activity(durable.poll_activity_task('ea')->>'taskToken', '"ok"') IS NULL AS done;

-- 2. The receiver crashes: StartToClose times a1 out and the retry policy
-- applies; its token is stale.
SELECT t.at('2026-01-01 00:00:10+00');
SELECT cmp_ok(durable.tick(), '>=', 1, 'timers fire');
SELECT throws_ok(format($$SELECT durable.complete_activity(%L, '"late"')$$,
    :'r'::jsonb->'activityTasks'->0->>'taskToken'), 'WF005', NULL, 'the crashed attempt''s token is stale');
SELECT t.at('2026-01-01 00:00:11+00');
SELECT durable.tick() AS fired \gset
SELECT durable.poll_activity_task('ea', identity => 'w2') AS a1b \gset
SELECT is(jsonb_build_object('activityId', :'a1b'::jsonb->'activityId', 'attempt', :'a1b'::jsonb->'attempt'),
    '{"activityId": "a1", "attempt": 2}', 'a1 is retried from the queue: attempt 2');
SELECT durable.complete_activity(:'a1b'::jsonb->>'taskToken', '"ok"') IS NULL AS done;
SELECT is((SELECT attributes - 'lastFailureDetails' FROM durable.get_history('ea')
            WHERE event_type = 'ActivityTaskStarted' AND (attributes->'scheduledEventId')::int = 5),
    '{"scheduledEventId": 5, "attempt": 2, "identity": "w2", "lastFailureReason": "durable:Timeout START_TO_CLOSE"}',
    'ActivityTaskStarted: the final attempt, after the eager one timed out');

-- 3. Both asked: the next decision task and the eager activities, in one answer.
SELECT durable.start_workflow('wf', NULL, 'both', 'both') IS NOT NULL AS started;
SELECT durable.poll_decision_task('both', identity => 'w1') AS d \gset
SELECT durable.signal_workflow('both', 'go');
SELECT durable.complete_decision_task(:'d'::jsonb->>'taskToken',
    jsonb_build_array(pg_temp.eager('b1'), pg_temp.eager('b2')), 'w1',
    return_new_task => true, max_eager_activities => 5) AS r \gset
SELECT is(array(SELECT e->>'activityId' FROM jsonb_array_elements(:'r'::jsonb->'activityTasks') e),
    '{b1,b2}', 'both activities, in decision order');
SELECT is((:'r'::jsonb->'decisionTask'->>'startedEventId')::int, 9, 'and the next decision task');
SELECT is(pg_temp.hist('both', 4),
    '{4:DecisionTaskCompleted,5:ActivityTaskScheduled,6:ActivityTaskScheduled,7:WorkflowExecutionSignaled,8:DecisionTaskScheduled,9:DecisionTaskStarted}',
    'history');
SELECT is(pg_temp.queued('both'), '{}', 'nothing queued');
SELECT durable.complete_activity(:'r'::jsonb->'activityTasks'->1->>'taskToken', '"r2"') IS NULL AS buffered;
SELECT durable.complete_decision_task(:'r'::jsonb->'decisionTask'->>'taskToken', '[]',
    return_new_task => true) AS r2 \gset
SELECT is(pg_temp.hist('both', 10),
    '{10:DecisionTaskCompleted,11:ActivityTaskStarted,12:ActivityTaskCompleted,13:DecisionTaskScheduled,14:DecisionTaskStarted}',
    'b2''s outcome, buffered, then the next task returned');
SELECT is(t.attrs('both', 'ActivityTaskStarted'), '{"scheduledEventId": 6, "attempt": 1, "identity": "w1"}',
    'b2 was started by the completing worker');

-- 4. An eager activity canceled by a later decision of the same list, and
-- one of a run the list closes, are not returned.
SELECT durable.start_workflow('wf', NULL, 'cx', 'cx') IS NOT NULL AS started;
SELECT durable.poll_decision_task('cx') AS d \gset
SELECT is(durable.complete_decision_task(:'d'::jsonb->>'taskToken',
    jsonb_build_array(pg_temp.eager('c1'), '{"decisionType": "RequestCancelActivityTask", "activityId": "c1"}'::jsonb),
    max_eager_activities => 1), NULL, 'canceled in the same list: NULL');
SELECT is(t.events('cx', from_id => 5), '{ActivityTaskScheduled,ActivityTaskCancelRequested,ActivityTaskCanceled,DecisionTaskScheduled}',
    'it was canceled before it started');
SELECT durable.poll_decision_task('cx') AS d \gset
SELECT is(durable.complete_decision_task(:'d'::jsonb->>'taskToken',
    jsonb_build_array(pg_temp.eager('c2'), '{"decisionType": "CompleteWorkflowExecution"}'::jsonb),
    max_eager_activities => 1), NULL, 'the run closed: NULL');

-- 5. A SQL activity (its type registered to a SQL function) still goes to the
-- executors, and a worker without the worker privilege on the namespace gets
-- 42501 whatever it asks for.
CREATE ROLE ea_app;
CREATE ROLE ea_other;
GRANT durable_worker TO ea_other;
CREATE FUNCTION pg_temp.ea_fn(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT input $$;
SELECT durable.start_workflow('wf', NULL, 'sq', 'sq') IS NOT NULL AS started;
SELECT durable.register_activity('sqlact', 'pg_temp.ea_fn(jsonb)'::regprocedure, 'sq', run_as => 'ea_app')
    IS NOT NULL AS registered;
SELECT durable.poll_decision_task('sq') AS d \gset
SELECT is(durable.complete_decision_task(:'d'::jsonb->>'taskToken',
    jsonb_build_array(pg_temp.eager('s1') || '{"activityType": "sqlact"}'), max_eager_activities => 1), NULL,
    'a SQL activity is not returned');
SELECT is(pg_temp.queued('sq'), '{sq/x/5}', 'it is queued for the executors');
SELECT durable.create_namespace('closed');
SELECT durable.start_workflow('wf', NULL, 'priv', 'pq', 'closed') IS NOT NULL AS started;
SELECT durable.poll_decision_task('pq', NULL, 'closed') AS p \gset
SELECT t.footprint() AS before \gset
SELECT format($$SELECT durable.complete_decision_task(%L, %L, NULL, true, 1)$$,
    :'p'::jsonb->>'taskToken', jsonb_build_array(pg_temp.eager('p1'))) AS denied \gset
SET LOCAL ROLE ea_other;
SELECT throws_ok(:'denied',
    '42501', NULL, 'a worker without the worker privilege there: 42501');
RESET ROLE;
SELECT is(t.footprint(), :'before', 'nothing changed');

-- 6. Bad input, changing nothing.
SELECT durable.start_workflow('wf', NULL, 'bad', 'bad') IS NOT NULL AS started;
SELECT durable.poll_decision_task('bad') AS b \gset
SELECT t.footprint() AS before \gset
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, %L, max_eager_activities => -1)$$,
    :'b'::jsonb->>'taskToken', jsonb_build_array(pg_temp.eager('x'))),
    '22023', 'max_eager_activities must not be negative', 'a negative max_eager_activities');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]', max_eager_activities => NULL)$$,
    :'b'::jsonb->>'taskToken'), '22004', 'max_eager_activities must not be null', 'a null max_eager_activities');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, %L, max_eager_activities => 1)$$,
    :'b'::jsonb->>'taskToken', jsonb_build_array(t.sched('x', '{"requestEagerExecution": "yes"}'))),
    '22023', 'decisions[0].requestEagerExecution must be a boolean', 'requestEagerExecution not a boolean');
SELECT is(t.footprint(), :'before', 'nothing changed');

SELECT * FROM finish();
ROLLBACK;

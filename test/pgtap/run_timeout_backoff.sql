-- The run timeout counts from the first decision task, as in
-- Cadence, whose timer of a run's timeout is set at start +
-- firstDecisionTaskBackoffSeconds + executionStartToCloseTimeout (the
-- workflow timeout task of the history service).  A delay, a cron schedule's
-- wait for its fire time and a retry's backoff are not part of the run's time.
BEGIN;
SELECT plan(21);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

-- A delayed start: delay 1 hour, run timeout 10 minutes.
SELECT durable.start_workflow('wf', NULL, 'delayed', 'delayed',
    delay => '1 hour', run_timeout => '10 minutes') AS d1 \gset
SELECT is(t.attrs('delayed', 'WorkflowExecutionStarted')->'firstDecisionTaskBackoffSeconds', '3600',
    'WorkflowExecutionStarted carries firstDecisionTaskBackoffSeconds');
SELECT is(t.attrs('delayed', 'WorkflowExecutionStarted')->'workflowRunTimeoutSeconds', '600',
    'and the run timeout itself');
SELECT t.at('2026-01-01 00:10:00+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.events('delayed'), '{WorkflowExecutionStarted}',
    '10 minutes after the start, before its first decision task, the run has not timed out');
SELECT is(durable.describe_workflow('delayed')->>'status', 'running', 'it is running');
SELECT t.at('2026-01-01 01:00:00+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.events('delayed'), '{WorkflowExecutionStarted,DecisionTaskScheduled}',
    'the first decision task comes after the delay');
-- The first decision schedules an activity with a retry policy.
SELECT t.decide('delayed', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 60,
    "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 5}}'))) IS NOT NULL;
-- Its first attempt fails at 01:01: the run's deadline (01:10) is ahead, so it is retried.
SELECT t.at('2026-01-01 01:01:00+00');
SELECT is(t.fail_round('delayed'), '2/SCHEDULED/00:00:01',
    'an activity failing within the run time is retried: the run deadline counts from the first decision task');
SELECT t.at('2026-01-01 01:09:59+00');
SELECT durable.tick() AS fired \gset
SELECT is(durable.describe_workflow('delayed')->>'status', 'running', 'still running at 01:09:59');
SELECT t.at('2026-01-01 01:10:00+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.events('delayed'),
    '{WorkflowExecutionStarted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,ActivityTaskScheduled,WorkflowExecutionTimedOut}',
    'the run times out 10 minutes after its first decision task: start + backoff + run timeout');
SELECT is(t.attrs('delayed', 'WorkflowExecutionTimedOut'), '{"timeoutType": "START_TO_CLOSE"}',
    'WorkflowExecutionTimedOut START_TO_CLOSE');
SELECT is((SELECT array_agg(event_id || ':' || event_type || ':' || COALESCE(attributes->>'scheduledEventId', '')
                            || ':' || COALESCE(attributes->>'startedEventId', '') ORDER BY event_id)
             FROM durable.get_history('delayed') WHERE event_type LIKE 'DecisionTask%'),
    '{2:DecisionTaskScheduled::,3:DecisionTaskStarted:2:,4:DecisionTaskCompleted:2:3}',
    'the decision task events link to one another');

-- A cron workflow whose run timeout (10 minutes) is shorter than its period (1 hour).
SET LOCAL durable.test_time = '2026-02-01 00:00:30+00';
SELECT durable.start_workflow('wf', '{"job": 1}', 'hourly', 'hourly',
    cron_schedule => '0 * * * *', run_timeout => '10 minutes') AS c1 \gset
SELECT is(t.attrs('hourly', 'WorkflowExecutionStarted')->'firstDecisionTaskBackoffSeconds', '3570',
    'the first run waits 3570 s for its fire time');
SELECT t.at('2026-02-01 00:10:30+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.events('hourly'), '{WorkflowExecutionStarted}', 'the waiting cron run does not time out');
SELECT is(durable.resolve_run_id('hourly'), :'c1'::uuid, 'it is still the first run');
SELECT t.at('2026-02-01 01:00:00+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.events('hourly'), '{WorkflowExecutionStarted,DecisionTaskScheduled}', 'its body runs at 01:00');
SELECT t.decide('hourly', '[{"decisionType": "CompleteWorkflowExecution", "result": {"done": 1}}]') IS NOT NULL;
SELECT is(t.events('hourly', :'c1'),
    '{WorkflowExecutionStarted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,WorkflowExecutionContinuedAsNew}',
    'the first run completes and continues at the next fire time');
SELECT durable.resolve_run_id('hourly') AS c2 \gset
SELECT is(t.attrs('hourly', 'WorkflowExecutionStarted', 1, :'c2')->'firstDecisionTaskBackoffSeconds', '3600',
    'the second run waits for 02:00');
SELECT t.at('2026-02-01 01:30:00+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.events('hourly', :'c2'), '{WorkflowExecutionStarted}', 'the second run does not time out while it waits');
SELECT t.at('2026-02-01 02:00:00+00');
SELECT durable.tick() AS fired \gset
SELECT t.decide('hourly', '[{"decisionType": "CompleteWorkflowExecution", "result": {"done": 2}}]') IS NOT NULL;
SELECT is((SELECT array_agg(status ORDER BY start_time) FROM durable.workflows WHERE workflow_id = 'hourly'),
    '{continued_as_new,continued_as_new,running}', 'the body ran each period');

-- A retry's backoff (1 hour) is not part of the next run's 10 minutes either.
SET LOCAL durable.test_time = '2026-03-01 00:00:00+00';
SELECT durable.start_workflow('wf', NULL, 'retried', 'retried', run_timeout => '10 minutes',
    retry_policy => durable.retry_policy('1 hour', maximum_attempts => 2)) AS r1 \gset
SELECT t.decide('retried', '[{"decisionType": "FailWorkflowExecution", "reason": "oops"}]') IS NOT NULL;
SELECT durable.resolve_run_id('retried') AS r2 \gset
SELECT t.at('2026-03-01 00:30:00+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.events('retried', :'r2'), '{WorkflowExecutionStarted}', 'the retry waits out its backoff without timing out');
SELECT t.at('2026-03-01 01:00:00+00');
SELECT durable.tick() AS fired \gset
SELECT t.at('2026-03-01 01:09:59+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.events('retried', :'r2'), '{WorkflowExecutionStarted,DecisionTaskScheduled}', 'its body is due at 01:00');
SELECT t.at('2026-03-01 01:10:00+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.events('retried', :'r2'), '{WorkflowExecutionStarted,DecisionTaskScheduled,WorkflowExecutionTimedOut}',
    'and it times out 10 minutes after that, the last attempt');

SELECT * FROM finish();
ROLLBACK;

-- Closing and re-deciding (docs/api.md "Workflow retries, ContinueAsNew, cron",
-- "Failed decision tasks, buffered events"): workflow retry by
-- policy (FailWorkflowExecution and run timeout) as ContinueAsNew with
-- initiator RetryPolicy; no retry for non-retriable reasons, cancellation or
-- termination; decision task failures and timeouts; events that arrive while
-- a decision task is started.
BEGIN;
SELECT plan(39);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

-- FailWorkflowExecution with a retry policy.
SELECT durable.start_workflow('wf', '{"n": 1}', 'retry', 'retry',
    retry_policy => durable.retry_policy('10 seconds', maximum_attempts => 3, non_retryable_error_reasons => '{fatal}')) AS run1 \gset
SELECT t.decide('retry', '[{"decisionType": "FailWorkflowExecution", "reason": "oops", "details": {"e": 1}}]') IS NOT NULL;
SELECT durable.resolve_run_id('retry') AS run2 \gset
SELECT is(t.events('retry', :'run1'),
    '{WorkflowExecutionStarted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,WorkflowExecutionContinuedAsNew}',
    'the failed run closes with WorkflowExecutionContinuedAsNew');
SELECT is(t.attrs('retry', 'WorkflowExecutionContinuedAsNew', 1, :'run1'),
    jsonb_build_object('newExecutionRunId', :'run2', 'workflowType', 'wf', 'taskQueue', 'retry', 'input', '{"n": 1}'::jsonb,
        'taskStartToCloseTimeoutSeconds', 10, 'backoffStartIntervalInSeconds', 10, 'initiator', 'RetryPolicy',
        'failure', '{"reason": "oops", "details": {"e": 1}}'::jsonb, 'decisionTaskCompletedEventId', 4),
    'initiator RetryPolicy, newExecutionRunId, failure');
SELECT is(durable.describe_workflow('retry', run_id => :'run1')->>'status', 'continued_as_new', 'the first run is continued_as_new');
SELECT is(t.events('retry'), '{WorkflowExecutionStarted}', 'the new run waits for its backoff');
SELECT is(t.attrs('retry', 'WorkflowExecutionStarted') - 'identity' - 'retryPolicy',
    jsonb_build_object('workflowType', 'wf', 'taskQueue', 'retry', 'input', '{"n": 1}'::jsonb,
        'taskStartToCloseTimeoutSeconds', 10, 'attempt', 2, 'firstExecutionRunId', :'run1',
        'continuedExecutionRunId', :'run1', 'initiator', 'RetryPolicy',
        'continuedFailure', '{"reason": "oops", "details": {"e": 1}}'::jsonb, 'firstDecisionTaskBackoffSeconds', 10),
    'WorkflowExecutionStarted: attempt 2, continuedExecutionRunId, firstDecisionTaskBackoffSeconds');
SELECT is(durable.describe_workflow('retry')->'attempt', '2', 'describe: attempt 2');
SELECT is(durable.poll_decision_task('retry'), NULL, 'no decision task during the backoff');
SELECT t.at('2026-01-01 00:00:09.999+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.events('retry'), '{WorkflowExecutionStarted}', 'not before 10 s');
SELECT t.at('2026-01-01 00:00:10+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.events('retry'), '{WorkflowExecutionStarted,DecisionTaskScheduled}', 'the first decision task after the backoff');
SELECT t.decide('retry', '[{"decisionType": "FailWorkflowExecution", "reason": "oops"}]') IS NOT NULL;
SELECT is(t.attrs('retry', 'WorkflowExecutionStarted')->'firstDecisionTaskBackoffSeconds', '20', 'attempt 3 after 20 s');
SELECT is(durable.describe_workflow('retry')->'attempt', '3', 'describe: attempt 3');
SELECT t.at('2026-01-01 00:00:30+00');
SELECT durable.tick() AS fired \gset
SELECT t.decide('retry', '[{"decisionType": "FailWorkflowExecution", "reason": "oops"}]') IS NOT NULL;
SELECT is(t.events('retry', from_id => 4), '{DecisionTaskCompleted,WorkflowExecutionFailed}', 'attempt 3 of 3 fails for good');
SELECT is((SELECT array_agg(status || ':' || attempt ORDER BY start_time, attempt) FROM durable.workflows WHERE workflow_id = 'retry'),
    '{continued_as_new:1,continued_as_new:2,failed:3}', 'the chain: three runs');

-- A non-retriable reason is not retried.
SELECT durable.start_workflow('wf', NULL, 'fatal', 'fatal',
    retry_policy => durable.retry_policy('10 seconds', maximum_attempts => 3, non_retryable_error_reasons => '{fatal}')) IS NOT NULL;
SELECT t.decide('fatal', '[{"decisionType": "FailWorkflowExecution", "reason": "fatal"}]') IS NOT NULL;
SELECT is(durable.describe_workflow('fatal')->>'status', 'failed', 'nonRetriableErrorReasons: failed at once');

-- A run timeout is retried the same way.
SELECT t.at('2026-01-01 01:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'slow', 'slow', run_timeout => '1 minute',
    retry_policy => durable.retry_policy('5 seconds', maximum_attempts => 2)) AS slow1 \gset
SELECT t.at('2026-01-01 01:01:00+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.events('slow', :'slow1', from_id => 3), '{WorkflowExecutionContinuedAsNew}', 'the timed-out run continues as new');
SELECT is(t.attrs('slow', 'WorkflowExecutionContinuedAsNew', 1, :'slow1')->'failure',
    '{"reason": "durable:Timeout START_TO_CLOSE", "details": null}', 'with the timeout as its failure');
SELECT is(t.attrs('slow', 'WorkflowExecutionStarted') - 'identity' - 'retryPolicy' - 'continuedExecutionRunId' - 'firstExecutionRunId' - 'continuedFailure',
    '{"workflowType": "wf", "taskQueue": "slow", "input": null, "workflowRunTimeoutSeconds": 60, "taskStartToCloseTimeoutSeconds": 10,
      "attempt": 2, "initiator": "RetryPolicy", "firstDecisionTaskBackoffSeconds": 5}'::jsonb, 'attempt 2 after 5 s');
-- Its minute counts from its first decision task, after the 5 s backoff, as Cadence
-- counts it.
SELECT t.at('2026-01-01 01:02:05+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.events('slow'), '{WorkflowExecutionStarted,DecisionTaskScheduled,WorkflowExecutionTimedOut}', 'attempt 2 times out for good');
SELECT is(durable.describe_workflow('slow')->>'status', 'timed_out', 'status timed_out');

-- Cancellation and termination never retry.
SELECT durable.start_workflow('wf', NULL, 'cxl', 'cxl', retry_policy => durable.retry_policy('1 second', maximum_attempts => 5)) IS NOT NULL;
SELECT durable.cancel_workflow('cxl');
SELECT t.decide('cxl', '[{"decisionType": "CancelWorkflowExecution"}]') IS NOT NULL;
SELECT is((SELECT array_agg(status) FROM durable.workflows WHERE workflow_id = 'cxl'), '{canceled}', 'canceled: no retry');
SELECT durable.start_workflow('wf', NULL, 'term', 'term', retry_policy => durable.retry_policy('1 second', maximum_attempts => 5)) IS NOT NULL;
SELECT durable.terminate_workflow('term', 'stop');
SELECT is((SELECT array_agg(status) FROM durable.workflows WHERE workflow_id = 'term'), '{terminated}', 'terminated: no retry');

-- UnknownWorkflowType backs off 5 s, 10 s, ... up to 5 minutes; the
-- workflow does not fail.
SELECT t.at('2026-01-01 02:00:00+00');
SELECT durable.start_workflow('nobody', NULL, 'unknown', 'unknown') IS NOT NULL;
CREATE FUNCTION pg_temp.unknown_round() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    t jsonb;
    before timestamptz := durable.now();
    after timestamptz;
BEGIN
    t := durable.poll_decision_task('unknown');
    PERFORM durable.fail_decision_task(t->>'taskToken', 'UnknownWorkflowType', '{"type": "nobody"}');
    IF durable.poll_decision_task('unknown') IS NOT NULL THEN RETURN 'rescheduled at once'; END IF;
    SELECT due_at INTO after FROM durable.timers
     WHERE run_id = (t->>'runId')::uuid AND kind = 'decision_retry';
    PERFORM t.at(after::text);
    PERFORM durable.tick();
    RETURN format('attempt %s failed, next after %s', t->'attempt', after - before);
END $$;
SELECT is(ARRAY(SELECT pg_temp.unknown_round() FROM generate_series(1, 9)),
    '{"attempt 1 failed, next after 00:00:05","attempt 2 failed, next after 00:00:10","attempt 3 failed, next after 00:00:20","attempt 4 failed, next after 00:00:40","attempt 5 failed, next after 00:01:20","attempt 6 failed, next after 00:02:40","attempt 7 failed, next after 00:05:00","attempt 8 failed, next after 00:05:00","attempt 9 failed, next after 00:05:00"}',
    'UnknownWorkflowType: 5 s, 10 s, 20 s, ... capped at 300 s');
SELECT is(t.events('unknown'),
    '{WorkflowExecutionStarted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskFailed}',
    'only the first failure is written: the retries are transient (Cadence)');
SELECT is(t.attrs('unknown', 'DecisionTaskFailed') - 'identity',
    '{"scheduledEventId": 2, "startedEventId": 3, "cause": "UnknownWorkflowType", "details": {"type": "nobody"}}'::jsonb,
    'DecisionTaskFailed: cause UnknownWorkflowType');
SELECT durable.poll_decision_task('unknown') AS u10 \gset
SELECT is(:'u10'::jsonb->'attempt', '10', 'the next decision task is attempt 10');
SELECT is(ARRAY(SELECT format('%s:%s:%s', e->>'eventId', e->>'eventType', e->'attributes'->>'attempt')
                  FROM jsonb_array_elements(:'u10'::jsonb->'history') e OFFSET 4),
    '{5:DecisionTaskScheduled:10,6:DecisionTaskStarted:}', 'its poll response ends with the transient events');
SELECT is(durable.describe_workflow('unknown')->>'status', 'running', 'the workflow is still running');

-- Other causes reschedule at once.
SELECT durable.start_workflow('wf', NULL, 'panic', 'panic') IS NOT NULL;
SELECT durable.fail_decision_task(durable.poll_decision_task('panic')->>'taskToken', 'WorkflowWorkerUnhandledFailure');
SELECT is(t.events('panic', from_id => 3), '{DecisionTaskStarted,DecisionTaskFailed}', 'another cause: DecisionTaskFailed');
SELECT is(durable.poll_decision_task('panic')->'attempt', '2', 'rescheduled at once as attempt 2');

-- A decision timeout: DecisionTaskTimedOut and a new attempt.
SELECT t.at('2026-01-01 03:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'dto', 'dto', decision_timeout => '5 seconds') IS NOT NULL;
SELECT durable.poll_decision_task('dto') AS d1 \gset
SELECT t.at('2026-01-01 03:00:05+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.events('dto', from_id => 3), '{DecisionTaskStarted,DecisionTaskTimedOut}', 'DecisionTaskTimedOut; its retry is transient');
SELECT is(t.attrs('dto', 'DecisionTaskTimedOut'),
    '{"scheduledEventId": 2, "startedEventId": 3, "timeoutType": "START_TO_CLOSE"}'::jsonb, 'DecisionTaskTimedOut attributes');
SELECT is(durable.poll_decision_task('dto')->'attempt', '2', 'the new decision task is attempt 2');

-- A signal and an activity completion while a decision task is started.
SELECT t.at('2026-01-01 04:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'buf', 'buf') IS NOT NULL;
SELECT t.decide('buf', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 60}'))) IS NOT NULL;
SELECT durable.poll_activity_task('buf') AS atask \gset
SELECT durable.signal_workflow('buf', 'first');
SELECT durable.poll_decision_task('buf') AS dtask \gset
SELECT durable.signal_workflow('buf', 'second', '{"v": 2}');
SELECT durable.complete_activity(:'atask'::jsonb->>'taskToken', '"r"');
SELECT is(t.events('buf', from_id => 6), '{WorkflowExecutionSignaled,DecisionTaskScheduled,DecisionTaskStarted}',
    'nothing is appended while the decision task is started');
SELECT durable.complete_decision_task(:'dtask'::jsonb->>'taskToken', '[]');
SELECT is(t.events('buf', from_id => 6),
    '{WorkflowExecutionSignaled,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,WorkflowExecutionSignaled,ActivityTaskStarted,ActivityTaskCompleted,DecisionTaskScheduled}',
    'the buffered events follow DecisionTaskCompleted, and a decision task follows them');
SELECT is(t.attrs('buf', 'ActivityTaskCompleted'), '{"scheduledEventId": 5, "startedEventId": 11, "result": "r", "identity": "postgres"}'::jsonb,
    'ActivityTaskCompleted names its ActivityTaskStarted');

-- Closing while a signal is buffered fails the decision task.
SELECT durable.poll_decision_task('buf') AS dtask \gset
SELECT durable.signal_workflow('buf', 'third');
SELECT durable.complete_decision_task(:'dtask'::jsonb->>'taskToken', '[{"decisionType": "CompleteWorkflowExecution", "result": 1}]');
SELECT is(t.events('buf', from_id => 13),
    '{DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskFailed,WorkflowExecutionSignaled,DecisionTaskScheduled}',
    'CompleteWorkflowExecution with a signal buffered: DecisionTaskFailed, the signal, a new decision task');
SELECT is(t.attrs('buf', 'DecisionTaskFailed') - 'identity', '{"scheduledEventId": 13, "startedEventId": 14, "cause": "UnhandledDecision"}'::jsonb,
    'cause UnhandledDecision');
SELECT is(durable.describe_workflow('buf')->>'status', 'running', 'the workflow is still running');
SELECT t.decide('buf', '[{"decisionType": "CompleteWorkflowExecution", "result": 1}]') IS NOT NULL;
SELECT is(durable.describe_workflow('buf')->>'status', 'completed', 'the next decision task completes it');

SELECT * FROM finish();
ROLLBACK;

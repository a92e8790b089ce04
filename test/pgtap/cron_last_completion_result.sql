-- A cron run that fails or times out passes the result of
-- the last run that completed on to the next run, as Cadence does: its
-- decision handler and its timeout task continue a cron (or retried) run
-- with LastCompletionResult = the current run's WorkflowExecutionStarted
-- lastCompletionResult, in WorkflowExecutionContinuedAsNew and so in the next
-- run's WorkflowExecutionStarted.  A decider reads it from the first event of
-- its history (the poll response).
BEGIN;
SELECT plan(16);
SET LOCAL durable.test_time = '2026-01-01 00:00:30+00';

SELECT durable.start_workflow('wf', '{"job": 1}', 'cron', 'cron',
    cron_schedule => '0 * * * *') AS r1 \gset
SELECT is(t.attrs('cron', 'WorkflowExecutionStarted') ? 'lastCompletionResult', false,
    'the first run has no last completion result');

-- Run 1 completes.
SELECT t.at('2026-01-01 01:00:00+00');
SELECT durable.tick() AS fired \gset
SELECT t.decide('cron', '[{"decisionType": "CompleteWorkflowExecution", "result": {"run": 1}}]') IS NOT NULL;
SELECT durable.resolve_run_id('cron') AS r2 \gset
SELECT is(t.attrs('cron', 'WorkflowExecutionContinuedAsNew', 1, :'r1')->'lastCompletionResult', '{"run": 1}',
    'a completed cron run passes its result on');
SELECT is(t.attrs('cron', 'WorkflowExecutionStarted', 1, :'r2')->'lastCompletionResult', '{"run": 1}',
    'the next run starts with it');

-- Run 2 fails: it passes on run 1's result, with its failure.
SELECT t.at('2026-01-01 02:00:00+00');
SELECT durable.tick() AS fired \gset
SELECT durable.poll_decision_task('cron') AS task \gset
SELECT is((:'task'::jsonb)->'history'->0->'attributes'->'lastCompletionResult', '{"run": 1}',
    'the decider sees the last completion result in its poll response');
SELECT durable.complete_decision_task((:'task'::jsonb)->>'taskToken',
    '[{"decisionType": "FailWorkflowExecution", "reason": "oops", "details": {"e": 2}}]');
SELECT durable.resolve_run_id('cron') AS r3 \gset
SELECT is(t.events('cron', :'r2'),
    '{WorkflowExecutionStarted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,WorkflowExecutionContinuedAsNew}',
    'the failed cron run closes with WorkflowExecutionContinuedAsNew');
SELECT is(t.attrs('cron', 'WorkflowExecutionContinuedAsNew', 1, :'r2') - 'newExecutionRunId',
    '{"workflowType": "wf", "taskQueue": "cron", "input": {"job": 1},
      "taskStartToCloseTimeoutSeconds": 10, "backoffStartIntervalInSeconds": 3600, "initiator": "CronSchedule",
      "failure": {"reason": "oops", "details": {"e": 2}}, "lastCompletionResult": {"run": 1},
      "decisionTaskCompletedEventId": 4}'::jsonb,
    'WorkflowExecutionContinuedAsNew: initiator CronSchedule, the failure and the last completion result');
SELECT is(t.attrs('cron', 'WorkflowExecutionStarted', 1, :'r3') - 'identity' - 'firstExecutionRunId'
          - 'continuedExecutionRunId',
    '{"workflowType": "wf", "taskQueue": "cron", "input": {"job": 1},
      "taskStartToCloseTimeoutSeconds": 10, "attempt": 1, "initiator": "CronSchedule",
      "continuedFailure": {"reason": "oops", "details": {"e": 2}}, "lastCompletionResult": {"run": 1},
      "firstDecisionTaskBackoffSeconds": 3600, "cronSchedule": "0 * * * *"}'::jsonb,
    'the next run starts with the failure and run 1''s result');
SELECT is(t.attrs('cron', 'WorkflowExecutionStarted', 1, :'r3')->>'continuedExecutionRunId', :'r2',
    'continuedExecutionRunId links the runs');
SELECT is(durable.describe_workflow('cron', run_id => :'r2')->'result', 'null',
    'the failed run itself has no result');

-- Run 3 completes: its own result is passed on from now on.
SELECT t.at('2026-01-01 03:00:00+00');
SELECT durable.tick() AS fired \gset
SELECT t.decide('cron', '[{"decisionType": "CompleteWorkflowExecution", "result": {"run": 3}}]') IS NOT NULL;
SELECT is(t.attrs('cron', 'WorkflowExecutionStarted')->'lastCompletionResult', '{"run": 3}',
    'a later completion replaces it');

-- A cron run that times out (its decision task is never answered).
SET LOCAL durable.test_time = '2026-03-01 00:00:30+00';
SELECT durable.start_workflow('wf', NULL, 'crontimeout', 'crontimeout',
    cron_schedule => '0 * * * *', run_timeout => '10 minutes') AS t1 \gset
SELECT t.at('2026-03-01 01:00:00+00');
SELECT durable.tick() AS fired \gset
SELECT t.decide('crontimeout', '[{"decisionType": "CompleteWorkflowExecution", "result": {"run": 1}}]') IS NOT NULL;
SELECT durable.resolve_run_id('crontimeout') AS t2 \gset
SELECT t.at('2026-03-01 02:00:00+00');
SELECT durable.tick() AS fired \gset
SELECT t.at('2026-03-01 02:10:00+00');
SELECT durable.tick() AS fired \gset
SELECT durable.resolve_run_id('crontimeout') AS t3 \gset
SELECT is(t.events('crontimeout', :'t2'),
    '{WorkflowExecutionStarted,DecisionTaskScheduled,WorkflowExecutionContinuedAsNew}',
    'the timed-out cron run continues at the next fire time');
SELECT is(t.attrs('crontimeout', 'WorkflowExecutionContinuedAsNew', 1, :'t2')->'failure',
    '{"reason": "durable:Timeout START_TO_CLOSE", "details": null}', 'its failure is the run timeout');
SELECT is(t.attrs('crontimeout', 'WorkflowExecutionContinuedAsNew', 1, :'t2')->'lastCompletionResult', '{"run": 1}',
    'a timed-out cron run passes the last completion result on');
SELECT is(t.attrs('crontimeout', 'WorkflowExecutionStarted', 1, :'t3')->'lastCompletionResult', '{"run": 1}',
    'the run after it starts with it');

-- A cron workflow with a retry policy: the retry carries it too.
SET LOCAL durable.test_time = '2026-02-01 00:00:30+00';
SELECT durable.start_workflow('wf', NULL, 'cronretry', 'cronretry', cron_schedule => '0 * * * *',
    retry_policy => durable.retry_policy('1 minute', maximum_attempts => 2)) AS q1 \gset
SELECT t.at('2026-02-01 01:00:00+00');
SELECT durable.tick() AS fired \gset
SELECT t.decide('cronretry', '[{"decisionType": "CompleteWorkflowExecution", "result": "first"}]') IS NOT NULL;
SELECT t.at('2026-02-01 02:00:00+00');
SELECT durable.tick() AS fired \gset
SELECT t.decide('cronretry', '[{"decisionType": "FailWorkflowExecution", "reason": "flaky"}]') IS NOT NULL;
SELECT is(t.attrs('cronretry', 'WorkflowExecutionStarted') - 'identity' - 'firstExecutionRunId'
          - 'continuedExecutionRunId' - 'retryPolicy' - 'continuedFailure',
    '{"workflowType": "wf", "taskQueue": "cronretry", "input": null, "taskStartToCloseTimeoutSeconds": 10,
      "attempt": 2, "initiator": "RetryPolicy", "lastCompletionResult": "first",
      "firstDecisionTaskBackoffSeconds": 60, "cronSchedule": "0 * * * *"}'::jsonb,
    'a retry of a cron run (attempt 2, initiator RetryPolicy) carries the last completion result');
SELECT t.at('2026-02-01 02:01:00+00');
SELECT durable.tick() AS fired \gset
SELECT t.decide('cronretry', '[{"decisionType": "FailWorkflowExecution", "reason": "flaky"}]') IS NOT NULL;
SELECT is(t.attrs('cronretry', 'WorkflowExecutionStarted') - 'identity' - 'firstExecutionRunId'
          - 'continuedExecutionRunId' - 'retryPolicy' - 'continuedFailure',
    '{"workflowType": "wf", "taskQueue": "cronretry", "input": null, "taskStartToCloseTimeoutSeconds": 10,
      "attempt": 1, "initiator": "CronSchedule", "lastCompletionResult": "first",
      "firstDecisionTaskBackoffSeconds": 3540, "cronSchedule": "0 * * * *"}'::jsonb,
    'once the retries are used up, the next fire time, still with it');

SELECT * FROM finish();
ROLLBACK;

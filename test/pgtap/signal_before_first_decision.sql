-- A signal to a cron workflow before its first fire time is
-- recorded (WorkflowExecutionSignaled) but schedules no decision task: the
-- run's body starts at its fire time, as in Cadence, whose signal handler
-- creates no decision task for a cron run that has none processed or pending
-- ("the cron has not been started yet").  durable applies the same rule to
-- a delayed start and a retry's backoff (docs/cadence-differences.md).
BEGIN;
SELECT plan(16);
SET LOCAL durable.test_time = '2026-01-01 00:00:30+00';

SELECT durable.start_workflow('wf', NULL, 'cron', 'cron', cron_schedule => '0 * * * *') AS c1 \gset
SELECT t.at('2026-01-01 00:20:00+00');
SELECT durable.signal_workflow('cron', 'go', '{"a": 1}');
SELECT is(t.events('cron'), '{WorkflowExecutionStarted,WorkflowExecutionSignaled}',
    'a signal before the first fire time is recorded');
SELECT is(t.attrs('cron', 'WorkflowExecutionSignaled') - 'identity', '{"signalName": "go", "input": {"a": 1}}',
    'with its name and input');
SELECT is(durable.poll_decision_task('cron'), NULL, 'but makes no decision task');
SELECT is((SELECT count(*) FROM durable.ready_tasks WHERE run_id = :'c1'), 0::bigint, 'nothing is queued');
-- signal_with_start finds the waiting run and signals it the same way.
SELECT is(durable.signal_with_start('wf', 'cron', 'go', '{"a": 2}', task_queue => 'cron',
                                    cron_schedule => '0 * * * *'), :'c1'::uuid,
    'signal_with_start signals the waiting cron run');
SELECT is(t.events('cron'), '{WorkflowExecutionStarted,WorkflowExecutionSignaled,WorkflowExecutionSignaled}',
    'its signal is recorded, still without a decision task');
SELECT t.at('2026-01-01 00:59:59+00');
SELECT durable.tick() AS fired \gset
SELECT is(durable.poll_decision_task('cron'), NULL, 'no decision task before the fire time');
SELECT t.at('2026-01-01 01:00:00+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.events('cron'),
    '{WorkflowExecutionStarted,WorkflowExecutionSignaled,WorkflowExecutionSignaled,DecisionTaskScheduled}',
    'the body starts at the fire time, with one decision task');
SELECT durable.poll_decision_task('cron', 'w1') AS task \gset
SELECT is((SELECT array_agg(e->>'eventType' ORDER BY (e->>'eventId')::int)
             FROM jsonb_array_elements((:'task'::jsonb)->'history') e),
    '{WorkflowExecutionStarted,WorkflowExecutionSignaled,WorkflowExecutionSignaled,DecisionTaskScheduled,DecisionTaskStarted}',
    'its first decision task sees both signals');
SELECT is(((:'task'::jsonb)->>'attempt')::int, 1, 'attempt 1');
SELECT durable.complete_decision_task((:'task'::jsonb)->>'taskToken', '[]');
-- Once the body has started, a signal schedules a decision task at once.
SELECT durable.signal_workflow('cron', 'go', '{"a": 3}');
SELECT is(t.events('cron', from_id => 6),
    '{DecisionTaskCompleted,WorkflowExecutionSignaled,DecisionTaskScheduled}',
    'a signal to the started run schedules a decision task');
SELECT is(t.attrs('cron', 'DecisionTaskScheduled', 2)->'attempt', '1', 'attempt 1');

-- A delayed start waits for its delay whatever signal comes.
SET LOCAL durable.test_time = '2026-02-01 00:00:00+00';
SELECT durable.start_workflow('wf', NULL, 'later', 'later', delay => '1 hour') AS d1 \gset
SELECT t.at('2026-02-01 00:10:00+00');
SELECT durable.signal_workflow('later', 'go');
SELECT is(t.events('later'), '{WorkflowExecutionStarted,WorkflowExecutionSignaled}',
    'a signal to a delayed run is recorded');
SELECT is(durable.poll_decision_task('later'), NULL, 'and waits for the delay');
SELECT t.at('2026-02-01 01:00:00+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.events('later'), '{WorkflowExecutionStarted,WorkflowExecutionSignaled,DecisionTaskScheduled}',
    'the first decision task comes after the delay');

-- A run waiting for its retry's backoff too.
SELECT durable.start_workflow('wf', NULL, 'retry', 'retry',
    retry_policy => durable.retry_policy('1 hour', maximum_attempts => 2)) AS r1 \gset
SELECT t.decide('retry', '[{"decisionType": "FailWorkflowExecution", "reason": "oops"}]') IS NOT NULL;
SELECT durable.signal_workflow('retry', 'go');
SELECT is(t.events('retry'), '{WorkflowExecutionStarted,WorkflowExecutionSignaled}',
    'a signal during a retry''s backoff is recorded and waits for the backoff');

SELECT * FROM finish();
ROLLBACK;

-- signal_with_start, cron with a retry policy, retention (durable.purge) and
-- the namespace functions.
BEGIN;
SELECT plan(44);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

CREATE FUNCTION pg_temp.later(secs float8) RETURNS void LANGUAGE sql AS
    $$ SELECT set_config('durable.test_time', (durable.now() + secs * interval '1 second')::text, true) $$;

-- signal_with_start: starts when nothing runs ...
SELECT durable.signal_with_start('order', 'sws', 'paid', '{"amount": 5}', '{"id": 1}',
    task_queue => 'sws', memo => '{"m": 1}') AS sws1 \gset
SELECT is(t.events('sws'), '{WorkflowExecutionStarted,WorkflowExecutionSignaled,DecisionTaskScheduled}',
    'signal_with_start starts: Started, Signaled, then the decision task');
SELECT is((SELECT attributes - 'identity' FROM durable.get_history('sws') WHERE event_id = 2),
    '{"signalName": "paid", "input": {"amount": 5}}', 'with the signal');
SELECT is(durable.describe_workflow('sws')->'memo', '{"m": 1}', 'and the options of start_workflow');
SELECT is(durable.describe_workflow('sws')->>'historyLength', '3', 'historyLength counts the signal');
-- ... and signals a running execution.
SELECT is(durable.signal_with_start('order', 'sws', 'shipped', NULL), :'sws1'::uuid,
    'signal_with_start signals the running run and returns its run_id');
SELECT is(t.events('sws'), '{WorkflowExecutionStarted,WorkflowExecutionSignaled,DecisionTaskScheduled,WorkflowExecutionSignaled}',
    'one more signal, no second start');
SELECT is((SELECT count(*)::int FROM durable.runs WHERE workflow_id = 'sws'), 1, 'still one run');
SELECT t.decide('sws', '[{"decisionType": "CompleteWorkflowExecution"}]') IS NOT NULL;
SELECT throws_ok($$SELECT durable.signal_with_start('order', 'sws', 'again')$$, 'WF001', NULL,
    'a completed run is not restarted under allow_duplicate_failed_only');
SELECT isnt(durable.signal_with_start('order', 'sws', 'again', id_reuse_policy => 'allow_duplicate'), :'sws1'::uuid,
    'allow_duplicate starts a new run');
SELECT throws_ok($$SELECT durable.signal_with_start('order', 'x', NULL)$$, '22004', NULL, 'signal_name is required');
SELECT throws_ok($$SELECT durable.signal_with_start('order', 'x', 's', namespace => 'nowhere')$$, 'WF002', NULL, 'the namespace must exist');

-- Cron with a retry policy: a failed run retries before the schedule goes on.
SELECT durable.start_workflow('report', NULL, 'cr', 'cr', cron_schedule => '0 * * * *',
    retry_policy => durable.retry_policy('30 seconds', maximum_attempts => 2)) AS cr1 \gset
SELECT t.at('2026-01-01 01:00:00+00');
SELECT durable.tick() > 0;
SELECT t.decide('cr', '[{"decisionType": "FailWorkflowExecution", "reason": "flaky"}]') IS NOT NULL;
SELECT is((SELECT attributes->>'initiator' FROM durable.get_history('cr', run_id => :'cr1'::uuid) WHERE event_type = 'WorkflowExecutionContinuedAsNew'),
    'RetryPolicy', 'the failed cron run is retried first');
SELECT is(durable.describe_workflow('cr')->>'attempt', '2', 'as attempt 2');
SELECT is((SELECT attributes->>'firstDecisionTaskBackoffSeconds' FROM durable.get_history('cr') WHERE event_id = 1),
    '30', 'after the retry backoff, not the next fire time');
SELECT pg_temp.later(30);
SELECT durable.tick() > 0;
SELECT t.decide('cr', '[{"decisionType": "FailWorkflowExecution", "reason": "flaky"}]') IS NOT NULL;
SELECT is((SELECT array_agg(attributes->>'initiator' ORDER BY r.run_seq) FROM durable.runs r
             JOIN durable.history h ON h.run_id = r.run_id AND h.event_type = 'WorkflowExecutionContinuedAsNew'
            WHERE r.workflow_id = 'cr'),
    '{RetryPolicy,CronSchedule}', 'the retries used up, the schedule continues');
SELECT is(durable.describe_workflow('cr')->>'attempt', '1', 'with attempt 1 again');
SELECT is((SELECT attributes->>'firstDecisionTaskBackoffSeconds' FROM durable.get_history('cr') WHERE event_id = 1)::float8,
    3600 - 30::float8, 'at the next fire time');

-- Namespaces.
SELECT lives_ok($$SELECT durable.create_namespace('short', '1 hour', description => 'short-lived')$$, 'create_namespace');
SELECT is((SELECT row(retention, description)::text FROM durable.namespaces WHERE name = 'short'),
    '(01:00:00,short-lived)', 'with its retention and description');
SELECT is((SELECT activity_retry_policy->>'maximumAttempts' FROM durable.namespaces WHERE name = 'short'),
    '10', 'and the default activity retry policy');
SELECT throws_ok($$SELECT durable.create_namespace('short')$$, '42710', 'namespace "short" already exists', 'duplicate_object');
SELECT throws_ok($$SELECT durable.create_namespace('neg', '-1 hour')$$, '22023', 'retention must not be negative', 'negative retention');
SELECT throws_ok($$SELECT durable.create_namespace('bad', activity_retry_policy => '{"initialIntervalInSeconds": 0, "maximumAttempts": 3}')$$,
    '22023', NULL, 'a bad activity_retry_policy');
SELECT throws_like($$SELECT durable.create_namespace('bad', activity_retry_policy => '{"initialIntervalInSeconds": 0, "maximumAttempts": 3}')$$,
    '%activity_retry_policy%', 'naming the argument');
SELECT lives_ok($$SELECT durable.alter_namespace('short', activity_retry_policy => durable.retry_policy('2 seconds', maximum_attempts => 4))$$,
    'alter_namespace');
SELECT is((SELECT row(retention, description, activity_retry_policy->>'maximumAttempts')::text FROM durable.namespaces WHERE name = 'short'),
    '(01:00:00,short-lived,4)', 'NULL keeps the other settings');
SELECT throws_ok($$SELECT durable.alter_namespace('nowhere', '1 day')$$, 'WF002', 'namespace "nowhere" does not exist', 'alter an unknown namespace');
SELECT durable.start_workflow('w', NULL, 'in-short', 'in-short', namespace => 'short') IS NOT NULL;
SELECT throws_ok($$SELECT durable.drop_namespace('short')$$, '55006', 'namespace "short" has workflow runs', 'drop refuses a namespace with runs');
SELECT throws_ok($$SELECT durable.drop_namespace('default')$$, '55006', NULL, 'or the default namespace');
SELECT throws_ok($$SELECT durable.drop_namespace('nowhere')$$, 'WF002', NULL, 'or an unknown one');

-- Retention: closed runs go after their namespace's retention, running ones never.
SELECT durable.terminate_workflow('in-short', namespace => 'short');
SELECT durable.start_workflow('w', NULL, 'still-running', 'sr', namespace => 'short') IS NOT NULL;
SELECT is(durable.purge(), 0, 'nothing before the retention has passed');
SELECT pg_temp.later(3601);
SELECT is(durable.purge(), 1, 'the closed run of the short namespace is purged after its hour');
SELECT is((SELECT count(*)::int FROM durable.history h WHERE NOT EXISTS (SELECT 1 FROM durable.runs r WHERE r.run_id = h.run_id)),
    0, 'with its history');
SELECT is((SELECT status FROM durable.runs WHERE workflow_id = 'still-running'), 'running', 'a running run stays');
SELECT ok((SELECT count(*) FROM durable.runs WHERE namespace = 'default' AND status <> 'running') > 0,
    'closed runs of default (7 days) stay');
SELECT pg_temp.later(7 * 86400);
SELECT is(durable.purge(2), 2, 'a bounded batch');
SELECT ok(durable.purge() > 0, 'then the rest');
SELECT is((SELECT count(*)::int FROM durable.runs WHERE status <> 'running'), 0, 'every closed run is gone');
SELECT is((SELECT count(*)::int FROM durable.runs WHERE status = 'running'), 3, 'the running ones stay');
SELECT is((SELECT count(*)::int FROM durable.activity_attempt_log) + (SELECT count(*)::int FROM durable.buffered_events)
          + (SELECT count(*)::int FROM durable.children), 0, 'and nothing else names a purged run');
SELECT throws_ok($$SELECT durable.purge(0)$$, '22023', 'max_runs must be greater than zero', 'purge checks max_runs');
SELECT durable.terminate_workflow('still-running', namespace => 'short');
SELECT pg_temp.later(3601);
SELECT is(durable.purge(), 1, 'purged');
SELECT lives_ok($$SELECT durable.drop_namespace('short')$$, 'drop_namespace once its runs are purged');
SELECT throws_ok($$SELECT durable.start_workflow('w', namespace => 'short')$$, 'WF002', NULL, 'the namespace is gone');

SELECT * FROM finish();
ROLLBACK;

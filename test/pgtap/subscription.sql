-- examples/subscription.sql, driven by the test clock: the trial, two monthly charges
-- that each fail twice before they succeed (retried 1 s, then 2 s later), the emails
-- of the outbox, and the cancellation by a 'cancel' signal in the middle of a period.
-- The example is loaded as an ordinary role, the way its header says.
BEGIN;
SELECT plan(29);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

CREATE ROLE billing;
GRANT durable_worker, durable_client TO billing;
CREATE SCHEMA billing AUTHORIZATION billing;
SET LOCAL ROLE billing;
\i examples/subscription.sql
RESET ROLE;

SELECT is((SELECT array_agg(format('%s %s %s %s %s', kind, type_name, task_queue, function, run_as) ORDER BY kind, type_name)
             FROM durable.registrations),
    '{"activity charge_monthly_fee billing billing.charge_monthly_fee(jsonb) billing","activity send_email billing billing.send_email(jsonb) billing","workflow subscription billing billing.subscription(jsonb) billing"}',
    'the example registers its workflow and activities, to run as the role that loaded it');

-- Moves the test clock, fires what fell due, and runs what is ready.
CREATE FUNCTION pg_temp.advance(ts text) RETURNS integer LANGUAGE plpgsql AS $$
BEGIN
    PERFORM t.at(ts);
    PERFORM durable.tick();
    RETURN durable.run_tasks();
END $$;

-- The outbox, one "template:details" a row.
CREATE FUNCTION pg_temp.outbox() RETURNS text[] LANGUAGE sql AS $$
    SELECT COALESCE(array_agg(template || ':' || COALESCE(details::text, '') || '@' || to_char(sent_at, 'MM-DD HH24:MI:SS') ORDER BY id), '{}')
      FROM billing.subscription_emails $$;

-- The trial starts: the welcome email, then a 30-day interruptible sleep.
SELECT durable.start_workflow('subscription',
    '{"customerId": "ada", "trialPeriod": "30 days", "billingPeriod": "30 days", "amount": 9.99}',
    workflow_id => 'sub-ada', task_queue => 'billing') IS NOT NULL AS started;
SELECT is(durable.run_tasks(), 3, 'run_tasks: a decision task, the welcome email, a decision task');
SELECT is(t.events('sub-ada'),
    '{WorkflowExecutionStarted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,ActivityTaskScheduled,
      ActivityTaskStarted,ActivityTaskCompleted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,TimerStarted}',
    'history of the trial so far: the email activity, then the timer of the trial');
SELECT is(t.attrs('sub-ada', 'ActivityTaskScheduled') - 'retryPolicy',
    '{"activityId": "1", "activityType": "send_email", "taskQueue": "billing",
      "input": {"customerId": "ada", "template": "welcome"}, "startToCloseTimeoutSeconds": 600,
      "decisionTaskCompletedEventId": 4}'::jsonb,
    'the email is activity 1, on the workflow''s queue');
SELECT is(t.attrs('sub-ada', 'TimerStarted'),
    '{"timerId": "2", "startToFireTimeoutSeconds": 2592000, "decisionTaskCompletedEventId": 10}'::jsonb,
    'wait_signal(''cancel'', ''30 days''): timer 2 of 30 days');
SELECT is(pg_temp.outbox(), '{"welcome:@01-01 00:00:00"}', 'the welcome email is in the outbox');
SELECT is(durable.run_tasks(), 0, 'nothing more to run during the trial');
SELECT is(pg_temp.advance('2026-01-30 23:59:59+00'), 0, 'nothing happens before the trial ends');

-- The trial ends: the first charge fails twice, 1 s then 2 s apart, then succeeds.
SELECT is(pg_temp.advance('2026-01-31 00:00:00+00'), 2, 'the trial ends: a decision task and charge attempt 1');
SELECT is((SELECT count(*) FROM billing.charges), 0::bigint, 'attempt 1 failed and left no charge behind');
SELECT is(pg_temp.advance('2026-01-31 00:00:00.999+00'), 0, 'no retry before its backoff of 1 s');
SELECT is(pg_temp.advance('2026-01-31 00:00:01+00'), 1, 'attempt 2, 1 s later: it fails too');
SELECT is(pg_temp.advance('2026-01-31 00:00:02.999+00'), 0, 'no retry before its backoff of 2 s');
SELECT is(pg_temp.advance('2026-01-31 00:00:03+00'), 4,
    'attempt 3, 2 s later, succeeds; then a decision task, the email and a decision task');
SELECT is(t.events('sub-ada', from_id => 12),
    '{TimerFired,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,ActivityTaskScheduled,
      ActivityTaskStarted,ActivityTaskCompleted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,ActivityTaskScheduled,
      ActivityTaskStarted,ActivityTaskCompleted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,TimerStarted}',
    'history of the first period: the charge (its failures are attempts, not events), the email, the next timer');
SELECT is(t.attrs('sub-ada', 'ActivityTaskStarted', 2) - 'identity',
    '{"scheduledEventId": 16, "attempt": 3, "lastFailureReason": "P0001",
      "lastFailureDetails": {"message": "card of ada declined by the gateway", "hint": "Retried by durable.",
                             "context": "PL/pgSQL function charge_monthly_fee(jsonb) line 4 at RAISE"}}'::jsonb,
    'the charge completed at attempt 3, after a failure with reason P0001 and the error as details');
SELECT is(t.attrs('sub-ada', 'ActivityTaskCompleted', 2)->'result', '{"charged": 9.99, "period": 1}'::jsonb,
    'the charge''s result is in the history');

-- The second period: the same again.
SELECT is(pg_temp.advance('2026-03-02 00:00:03+00'), 2, '30 days later: a decision task and charge attempt 1');
SELECT is(pg_temp.advance('2026-03-02 00:00:04+00'), 1, 'attempt 2 fails');
SELECT is(pg_temp.advance('2026-03-02 00:00:06+00'), 4, 'attempt 3 succeeds; the email; the next timer');
SELECT is((SELECT array_agg(format('%s %s %s', period, amount, charged_at) ORDER BY period) FROM billing.charges),
    '{"1 9.99 2026-01-31 00:00:03+00","2 9.99 2026-03-02 00:00:06+00"}',
    'one charge a period, exactly once, at the attempt that succeeded');

-- Cancellation by signal, ten days into the third period.
SELECT t.at('2026-03-12 00:00:00+00');
SELECT durable.signal_workflow('sub-ada', 'cancel', '{"reason": "moving abroad"}');
SELECT is(durable.run_tasks(), 3, 'the signal: a decision task, the goodbye email, the closing decision task');
SELECT is(durable.describe_workflow('sub-ada') - 'closeTime' - 'startTime' - 'runId' - 'firstRunId' - 'historyLength',
    durable.describe_workflow('sub-ada') - 'closeTime' - 'startTime' - 'runId' - 'firstRunId' - 'historyLength'
        || '{"status": "completed", "result": {"periodsCharged": 2}, "pendingActivities": [], "pendingTimers": []}',
    'the workflow completed with 2 periods charged; nothing is left pending');
SELECT is(t.attrs('sub-ada', 'WorkflowExecutionSignaled') - 'identity',
    '{"signalName": "cancel", "input": {"reason": "moving abroad"}}'::jsonb, 'the signal is in the history');
SELECT is(t.attrs('sub-ada', 'ActivityTaskScheduled', 6)->'input',
    '{"customerId": "ada", "template": "canceled", "details": {"reason": "moving abroad"}}'::jsonb,
    'wait_signal returned the signal''s input to the workflow, which passed it to the email');
SELECT is(pg_temp.outbox(),
    '{"welcome:@01-01 00:00:00","charged:{\"period\": 1, \"charged\": 9.99}@01-31 00:00:03","charged:{\"period\": 2, \"charged\": 9.99}@03-02 00:00:06","canceled:{\"reason\": \"moving abroad\"}@03-12 00:00:00"}',
    'the outbox: welcome, two charges, the goodbye');
SELECT is((SELECT array_agg(format('%s %s %s %s %s', activity_id, activity_type, attempt, outcome,
                                   COALESCE(failure_reason || ' retry in ' || (next_retry_time - end_time), ''))
                            ORDER BY scheduled_event_id, attempt)
             FROM durable.activity_attempts WHERE workflow_id = 'sub-ada'),
    '{"1 send_email 1 completed ","3 charge_monthly_fee 1 failed P0001 retry in 00:00:01","3 charge_monthly_fee 2 failed P0001 retry in 00:00:02","3 charge_monthly_fee 3 completed ","4 send_email 1 completed ","6 charge_monthly_fee 1 failed P0001 retry in 00:00:01","6 charge_monthly_fee 2 failed P0001 retry in 00:00:02","6 charge_monthly_fee 3 completed ","7 send_email 1 completed ","9 send_email 1 completed "}',
    'activity_attempts: every charge failed twice, retried after 1 s and 2 s, then completed');
SELECT is((SELECT count(*) FROM durable.get_history('sub-ada') WHERE event_type = 'ActivityTaskFailed'), 0::bigint,
    'no activity failed for good');
SELECT is((SELECT array_agg(DISTINCT attributes->>'identity') FROM durable.get_history('sub-ada')
            WHERE event_type IN ('DecisionTaskStarted', 'ActivityTaskStarted')),
    ARRAY['durable-executor:' || pg_backend_pid()],
    'every task ran in this session''s executor (durable-executor:<pid>)');

SELECT * FROM finish();
ROLLBACK;

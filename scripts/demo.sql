-- durable demo: run by scripts/demo.sh (`make demo`) in a database that has the extension.
-- Starts a few workflows, acts on them the way a client would, and shows what the engine
-- recorded.  Sections 1-5 have no worker (their workflows wait for a decision task);
-- section 6 runs one workflow through a worker, in SQL.

\pset pager off
\set VERBOSITY terse

\echo
\echo '== 1. A workflow whose first decision task waits one minute (delay)'
SELECT durable.start_workflow('greet', '{"name": "Ada"}',
    workflow_id => 'demo-delayed', delay => '1 minute') AS run_id;

\echo
\echo '== 2. A workflow retried up to 3 times, 1 s after the first failure, then 2 s'
SELECT durable.retry_policy('1 second', maximum_attempts => 3) AS retry_policy;
SELECT durable.start_workflow('charge', '{"orderId": 17, "amount": 42.50}',
    workflow_id => 'demo-retry',
    retry_policy => durable.retry_policy('1 second', maximum_attempts => 3)) AS run_id;

\echo
\echo '== 3. A workflow that receives a signal'
SELECT durable.start_workflow('approval', '{"document": "budget-2025"}',
    workflow_id => 'demo-signal') AS run_id;
SELECT durable.signal_workflow('demo-signal', 'approve', '{"by": "ops"}');

\echo
\echo '== 4. A workflow canceled by its client'
SELECT durable.start_workflow('report', '{"month": "2025-01"}',
    workflow_id => 'demo-cancel') AS run_id;
SELECT durable.cancel_workflow('demo-cancel', 'no longer needed');

\echo
\echo '== 5. A workflow terminated by an operator'
SELECT durable.start_workflow('import', '{"file": "big.csv"}',
    workflow_id => 'demo-terminate') AS run_id;
SELECT durable.terminate_workflow('demo-terminate', 'operator request', '{"ticket": 7}');

\echo
\echo '== What the engine knows: describe_workflow and get_history of each'

\echo '-- demo-delayed'
SELECT jsonb_pretty(durable.describe_workflow('demo-delayed')) AS "demo-delayed";
SELECT * FROM durable.get_history('demo-delayed');

\echo '-- demo-retry'
SELECT jsonb_pretty(durable.describe_workflow('demo-retry')) AS "demo-retry";
SELECT * FROM durable.get_history('demo-retry');

\echo '-- demo-signal'
SELECT jsonb_pretty(durable.describe_workflow('demo-signal')) AS "demo-signal";
SELECT * FROM durable.get_history('demo-signal');

\echo '-- demo-cancel'
SELECT jsonb_pretty(durable.describe_workflow('demo-cancel')) AS "demo-cancel";
SELECT * FROM durable.get_history('demo-cancel');

\echo '-- demo-terminate'
SELECT jsonb_pretty(durable.describe_workflow('demo-terminate')) AS "demo-terminate";
SELECT * FROM durable.get_history('demo-terminate');

\echo
\echo '== 6. A worker runs a workflow: one activity that fails once, retried by the'
\echo '==    background worker after its 1 s backoff, then the workflow completes'
SELECT durable.start_workflow('order', '{"orderId": 17}', workflow_id => 'demo-worker',
    task_queue => 'demo') AS run_id;
-- The decision task: schedule the activity ChargeCard with a retry policy.
SELECT durable.poll_decision_task('demo', 'worker-1') AS t \gset
SELECT durable.complete_decision_task(:'t'::jsonb->>'taskToken',
    '[{"decisionType": "ScheduleActivityTask", "activityId": "charge",
       "activityType": "ChargeCard", "input": {"amount": 42.5},
       "startToCloseTimeoutSeconds": 30,
       "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 3}}]');
-- Attempt 1 fails; the retry is a durable timer.
SELECT durable.poll_activity_task('demo', 'worker-1') AS a \gset
SELECT durable.fail_activity(:'a'::jsonb->>'taskToken', 'CardDeclined', '{"code": 51}');
SELECT jsonb_pretty(durable.describe_workflow('demo-worker')->'pendingActivities') AS "pending, in backoff";
-- A long poll: the background worker fires the retry timer about a second later
-- and the commit that queues attempt 2 wakes this poll.
SELECT durable.poll_activity_task('demo', 'worker-1', wait => '10 seconds') AS a \gset
SELECT :'a'::jsonb->'attempt' AS attempt;
SELECT durable.complete_activity(:'a'::jsonb->>'taskToken', '{"chargeId": "ch_1"}');
-- The closing decision task sees ActivityTaskCompleted in its history.
SELECT durable.poll_decision_task('demo', 'worker-1') AS t \gset
SELECT durable.complete_decision_task(:'t'::jsonb->>'taskToken',
    '[{"decisionType": "CompleteWorkflowExecution", "result": {"charged": 42.5}}]');

\echo '-- demo-worker'
SELECT event_id, event_type, attributes FROM durable.get_history('demo-worker');
SELECT attempt, outcome, failure_reason, scheduled_time, end_time
  FROM durable.activity_attempts WHERE workflow_id = 'demo-worker' ORDER BY attempt;
SELECT status, result FROM durable.workflows WHERE workflow_id = 'demo-worker';

\echo
\echo '== 7. A workflow written in SQL, run by the engine: examples/subscription.sql.'
\echo '==    A 3 s trial, then a charge every 4 s (the gateway declines twice, so each charge'
\echo '==    is retried 1 s, then 2 s later), an email each time, until a cancel signal.'
\echo '==    No worker runs outside the server: the executor workers run the functions.'
CREATE ROLE billing;
GRANT durable_worker, durable_client TO billing;
CREATE SCHEMA billing AUTHORIZATION billing;
SET ROLE billing;
-- Loaded quietly (read examples/subscription.sql itself): tables billing.charges and
-- billing.subscription_emails, the functions, and their registration.
\set ECHO none
\o /dev/null
\ir ../examples/subscription.sql
\o
\set ECHO all
SELECT kind, type_name, task_queue, function, run_as FROM durable.registrations ORDER BY kind, type_name;
SELECT durable.start_workflow('subscription',
    '{"customerId": "ada", "trialPeriod": "3 seconds", "billingPeriod": "4 seconds", "amount": 9.99}',
    workflow_id => 'subscription-ada', task_queue => 'billing') AS run_id;
RESET ROLE;
-- Waits (by polling, which only a demo should do) until a query returns true.
CREATE FUNCTION pg_temp.wait_until(what text, query text, timeout interval DEFAULT '40 seconds')
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    deadline timestamptz := clock_timestamp() + timeout;
    done boolean;
BEGIN
    LOOP
        EXECUTE query INTO done;
        EXIT WHEN done;
        IF clock_timestamp() > deadline THEN
            RAISE EXCEPTION 'timed out waiting for %', what;
        END IF;
        PERFORM pg_sleep(0.2);
    END LOOP;
    RETURN what;
END $$;
SELECT pg_temp.wait_until('two charges', $$ SELECT count(*) >= 2 FROM billing.charges $$) AS "waited for";
SELECT durable.signal_workflow('subscription-ada', 'cancel', '{"reason": "moving abroad"}');
SELECT pg_temp.wait_until('the workflow to close',
    $$ SELECT status <> 'running' FROM durable.workflows WHERE workflow_id = 'subscription-ada' $$) AS "waited for";

\echo '-- subscription-ada: the result, and the history (t = seconds since the start)'
SELECT status, result, round(extract(epoch FROM duration)::numeric, 1) AS "seconds"
  FROM durable.workflows WHERE workflow_id = 'subscription-ada';
SELECT h.event_id, round(extract(epoch FROM h.event_time - w.start_time)::numeric, 1) AS t,
       h.event_type, h.attributes - 'identity' - 'retryPolicy' AS attributes
  FROM durable.get_history('subscription-ada') h, durable.workflows w
 WHERE w.workflow_id = 'subscription-ada'
 ORDER BY h.event_id;
\echo '-- every activity attempt: the charges failed twice each (P0001: card declined)'
SELECT a.activity_id, a.activity_type, a.attempt, a.outcome, a.failure_reason,
       round(extract(epoch FROM a.end_time - w.start_time)::numeric, 1) AS "ended at t",
       round(extract(epoch FROM a.next_retry_time - a.end_time)::numeric, 1) AS "retry after"
  FROM durable.activity_attempts a, durable.workflows w
 WHERE a.workflow_id = 'subscription-ada' AND w.workflow_id = 'subscription-ada'
 ORDER BY a.scheduled_event_id, a.attempt;
\echo '-- what the activities wrote: the charges, and the outbox of emails'
SELECT customer_id, period, amount FROM billing.charges ORDER BY period;
SELECT id, customer_id, template, details FROM billing.subscription_emails ORDER BY id;

-- examples/subscription.sql: a subscription, as a durable workflow written in PL/pgSQL.
--
-- The use case of Cadence's "fault-oblivious stateful workflow code": a customer signs
-- up with a trial period; when it ends, and at each billing period after that, the
-- customer is charged and told so by email, until they cancel, which they may do at any
-- time.  The workflow below is that business logic and nothing else: durable keeps its
-- state in the workflow's history, runs its activities with retries, and sleeps through
-- the periods with durable timers, whatever restarts or crashes happen meanwhile.
--
-- Load it as an ordinary role (durable never runs code as a superuser) that may register
-- code (durable_worker) and start workflows (durable_client), in a schema it owns:
--
--     CREATE ROLE billing LOGIN;
--     GRANT durable_worker, durable_client TO billing;
--     CREATE SCHEMA billing AUTHORIZATION billing;
--     SET ROLE billing;              -- or connect as billing
--     \i examples/subscription.sql
--
-- Then start a subscription (periods are intervals: '30 days' and '1 month' in real life,
-- seconds in `make demo`), and cancel it with a signal:
--
--     SELECT durable.start_workflow('subscription',
--         '{"customerId": "ada", "trialPeriod": "30 days", "billingPeriod": "1 month",
--           "amount": 9.99}', workflow_id => 'subscription-ada', task_queue => 'billing');
--     SELECT durable.signal_workflow('subscription-ada', 'cancel', '{"reason": "moving"}');
--
-- The engine's executor workers run the functions (durable.executor_workers per
-- database); the history, the attempts and the outbox show what happened:
--
--     SELECT event_id, event_type, attributes FROM durable.get_history('subscription-ada');
--     SELECT activity_type, attempt, outcome, failure_reason
--       FROM durable.activity_attempts WHERE workflow_id = 'subscription-ada';
--     SELECT * FROM billing.subscription_emails;

-- What the activities write: the charges made and the emails sent.  An activity's writes
-- commit in the same transaction as its completion, so a charge is recorded exactly once,
-- and an email row is written exactly once (a mailer would send the rows of this outbox).
CREATE TABLE billing.charges (
    customer_id text NOT NULL,
    period      integer NOT NULL,
    amount      numeric(10, 2) NOT NULL,
    charged_at  timestamptz NOT NULL DEFAULT durable.now(),
    PRIMARY KEY (customer_id, period)
);

CREATE TABLE billing.subscription_emails (
    id          bigserial PRIMARY KEY,
    customer_id text NOT NULL,
    template    text NOT NULL,          -- welcome, charged, canceled
    details     jsonb,
    sent_at     timestamptz NOT NULL DEFAULT durable.now()
);

-- A stand-in for a flaky payment gateway: it declines two calls out of three.  The count
-- is a sequence because nextval() is not rolled back: a failed activity attempt leaves
-- none of its writes behind, but the gateway remembers that it was called.
CREATE SEQUENCE billing.gateway_calls;

-- Activity: send an email (here, write it to the outbox).  Input {customerId, template,
-- details}.
CREATE FUNCTION billing.send_email(input jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    email_id bigint;
BEGIN
    INSERT INTO billing.subscription_emails (customer_id, template, details)
    VALUES (input->>'customerId', input->>'template', input->'details')
    RETURNING id INTO email_id;
    RETURN jsonb_build_object('emailId', email_id);
END $$;

-- Activity: charge the fee of one billing period.  Input {customerId, period, amount}.
-- An error fails the attempt (its reason is the SQLSTATE, P0001 here) and durable retries
-- it with the backoff of the retry policy the workflow gives.
CREATE FUNCTION billing.charge_monthly_fee(input jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
    IF nextval('billing.gateway_calls') % 3 <> 0 THEN
        RAISE EXCEPTION 'card of % declined by the gateway', input->>'customerId'
            USING HINT = 'Retried by durable.';
    END IF;
    INSERT INTO billing.charges (customer_id, period, amount)
    VALUES (input->>'customerId', (input->>'period')::int, (input->>'amount')::numeric);
    RETURN jsonb_build_object('charged', (input->>'amount')::numeric,
                              'period', (input->>'period')::int);
END $$;

-- The workflow.  Input {customerId, trialPeriod, billingPeriod, amount}; its result is
-- the number of periods charged.
--
-- Every durable.* call is a step that the engine records in the history.  When the
-- function reaches a step whose outcome is not in the history yet (an activity still to
-- run, a period still to wait), durable stops it there; when the outcome arrives, durable
-- runs the function again from the start, and the steps already done return their
-- recorded results at once.  So the function must do the same steps in the same order
-- each time: its side effects go through activities, its clock is durable.now(), and its
-- own table writes are discarded.
CREATE FUNCTION billing.subscription(input jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    customer  jsonb    := jsonb_build_object('customerId', input->'customerId');
    trial     interval := (input->>'trialPeriod')::interval;
    period    interval := (input->>'billingPeriod')::interval;
    -- A charge is retried 1 s, then 2 s, 4 s ... after each failure, 10 attempts at most.
    charging  jsonb    := '{"startToCloseTimeoutSeconds": 30,
                            "retryPolicy": {"initialIntervalInSeconds": 1,
                                            "backoffCoefficient": 2,
                                            "maximumAttempts": 10}}';
    charges   integer  := 0;
    charge    jsonb;
    canceled  jsonb;
BEGIN
    PERFORM durable.activity('send_email', customer || '{"template": "welcome"}');

    -- The trial period.  wait_signal() with a timeout is an interruptible sleep: it
    -- returns the input of a 'cancel' signal as soon as one arrives, or NULL when the
    -- period is over.
    canceled := durable.wait_signal('cancel', trial);

    WHILE canceled IS NULL LOOP
        charges := charges + 1;
        charge := durable.activity('charge_monthly_fee',
            customer || jsonb_build_object('period', charges, 'amount', input->'amount'),
            charging);
        PERFORM durable.activity('send_email',
            customer || jsonb_build_object('template', 'charged', 'details', charge));
        canceled := durable.wait_signal('cancel', period);
    END LOOP;

    PERFORM durable.activity('send_email',
        customer || jsonb_build_object('template', 'canceled', 'details', canceled));
    RETURN jsonb_build_object('periodsCharged', charges);
END $$;

-- Bind the types to the functions, on task queue 'billing'.  They run as the role that
-- registers them (here, the current one): it needs EXECUTE on the functions and the
-- rights the functions use, nothing more.
SELECT durable.register_workflow('subscription', 'billing.subscription(jsonb)',
                                 task_queue => 'billing');
SELECT durable.register_activity('send_email', 'billing.send_email(jsonb)',
                                 task_queue => 'billing');
SELECT durable.register_activity('charge_monthly_fee', 'billing.charge_monthly_fee(jsonb)',
                                 task_queue => 'billing');

-- Activities written as SQL functions (docs/sql-workflows.md), scheduled here by an external
-- decider (t.decide) and run by durable.run_tasks(): exactly once (their writes commit
-- with their completion), failures (nothing written, reason = SQLSTATE), retries with
-- the policy's exact delays, StartToClose as a statement timeout, and the role they run as.
BEGIN;
SELECT plan(42);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

CREATE ROLE act_app;
CREATE SCHEMA app;
GRANT USAGE ON SCHEMA app TO act_app;
CREATE TABLE app.ledger (id serial PRIMARY KEY, note text);
GRANT INSERT, SELECT ON app.ledger TO act_app;
GRANT USAGE ON SEQUENCE app.ledger_id_seq TO act_app;

-- pay writes a row and returns its id; bad writes a row, then fails.
CREATE FUNCTION app.pay(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE n integer;
BEGIN
    INSERT INTO app.ledger (note) VALUES (input->>'note') RETURNING id INTO n;
    RETURN jsonb_build_object('id', n, 'big', CASE WHEN input ? 'big' THEN repeat('x', 3000000) END);
END $$;
CREATE FUNCTION app.bad(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO app.ledger (note) VALUES ('written by a failing attempt');
    RETURN to_jsonb(1 / 0);
END $$;

-- A ScheduleActivityTask decision.
CREATE FUNCTION pg_temp.sched(id text, atype text, extra jsonb DEFAULT '{}') RETURNS jsonb LANGUAGE sql AS
    $$ SELECT jsonb_build_array(jsonb_build_object('decisionType', 'ScheduleActivityTask', 'activityId', id,
                                                   'activityType', atype) || extra) $$;
-- Starts an external workflow on queue wid, registers activity type atype there and
-- schedules activity "a" of that type.
CREATE FUNCTION pg_temp.setup(wid text, atype text, fn regprocedure, extra jsonb DEFAULT '{}') RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM durable.start_workflow('ext', NULL, wid, wid);
    PERFORM durable.register_activity(atype, fn, wid, run_as => 'act_app');
    PERFORM t.decide(wid, pg_temp.sched('a', atype, extra));
END $$;
-- The activity timers of workflow wid (its run stays open: a decision task is pending).
CREATE FUNCTION pg_temp.activity_timers(wid text) RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FROM durable.timers tm JOIN durable.runs r USING (run_id)
     WHERE r.workflow_id = wid AND tm.kind = 'activity' $$;
CREATE FUNCTION pg_temp.attempts(wid text) RETURNS text[] LANGUAGE sql AS $$
    SELECT array_agg(format('%s %s %s %s', attempt, outcome, COALESCE(failure_reason, '-'),
                            COALESCE((next_retry_time - end_time)::text, '-')) ORDER BY attempt)
      FROM durable.activity_attempts WHERE workflow_id = wid $$;

-- 1. Exactly once: the activity's writes and its completion commit together.
SELECT pg_temp.setup('once', 'pay', 'app.pay(jsonb)', '{"input": {"note": "paid"}, "startToCloseTimeoutSeconds": 10}');
SELECT is(durable.poll_activity_task('once'), NULL, 'a registered activity is not handed to external pollers');
SELECT is(durable.run_tasks(), 1, 'run_tasks runs the activity');
SELECT is((SELECT array_agg(note) FROM app.ledger), '{paid}', 'its write is there, once');
SELECT is(t.events('once', from_id => 5), '{ActivityTaskScheduled,ActivityTaskStarted,ActivityTaskCompleted,DecisionTaskScheduled}',
    'the activity completed');
SELECT is(t.attrs('once', 'ActivityTaskCompleted') - 'identity',
    jsonb_build_object('scheduledEventId', 5, 'startedEventId', 6,
                       'result', jsonb_build_object('id', (SELECT id FROM app.ledger), 'big', NULL)),
    'ActivityTaskCompleted holds the function''s result');
SELECT is(t.attrs('once', 'ActivityTaskStarted')->>'identity', 'durable-executor:' || pg_backend_pid(),
    'the executor''s identity is durable-executor:<pid>');
SELECT is(pg_temp.attempts('once'), '{"1 completed - -"}', 'one attempt, completed');
SELECT is(durable.run_tasks(), 0, 'nothing left to run');
SELECT is((SELECT count(*) FROM app.ledger), 1::bigint, 'still one row');
SELECT is(pg_temp.activity_timers('once'), 0::bigint, 'the completed activity left no timer');
-- An activity with a ScheduleToClose timeout has a timer from its scheduling; its
-- completion takes it.
SELECT pg_temp.setup('s2c', 'pay', 'app.pay(jsonb)', '{"input": {"note": "s2c"}, "scheduleToCloseTimeoutSeconds": 60}');
SELECT is(pg_temp.activity_timers('s2c'), 1::bigint, 'ScheduleToClose: the scheduled activity has its timer');
SELECT is(durable.run_tasks(), 1, 'the activity ran');
SELECT is(pg_temp.activity_timers('s2c'), 0::bigint, 'its completion took the timer');
DELETE FROM app.ledger WHERE note = 's2c';
-- A completion that cannot be recorded (its result is over durable.max_payload_size)
-- takes the activity's writes with it.
SELECT pg_temp.setup('toobig', 'pay', 'app.pay(jsonb)',
    '{"input": {"note": "too big", "big": true}, "startToCloseTimeoutSeconds": 10,
      "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 1}}');
SELECT is(durable.run_tasks(), 1, 'the activity ran');
SELECT is((SELECT count(*) FROM app.ledger WHERE note = 'too big'), 0::bigint,
    'its result could not be recorded: none of its writes is kept');
SELECT is(t.attrs('toobig', 'ActivityTaskCompleted'), NULL, 'and it did not complete');
SELECT is(t.attrs('toobig', 'ActivityTaskFailed')->>'reason', 'WF006', 'the attempt failed with WF006 (a limit exceeded)');

-- 2. A failing activity: nothing of it is kept; the reason is its SQLSTATE.
SELECT pg_temp.setup('fails', 'bad', 'app.bad(jsonb)',
    '{"startToCloseTimeoutSeconds": 10, "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 1}}');
SELECT is(durable.run_tasks(), 1, 'the activity ran');
SELECT is((SELECT count(*) FROM app.ledger WHERE note = 'written by a failing attempt'), 0::bigint,
    'the failed attempt left none of its writes');
SELECT is(t.events('fails', from_id => 5), '{ActivityTaskScheduled,ActivityTaskStarted,ActivityTaskFailed,DecisionTaskScheduled}',
    'maximumAttempts 1: it failed for good');
SELECT is(t.attrs('fails', 'ActivityTaskFailed') - 'identity',
    '{"scheduledEventId": 5, "startedEventId": 6, "reason": "22012",
      "details": {"message": "division by zero", "context": "SQL expression \"to_jsonb(1 / 0)\"\nPL/pgSQL function app.bad(jsonb) line 4 at RETURN"},
      "retryState": "MAXIMUM_ATTEMPTS_REACHED"}'::jsonb,
    'ActivityTaskFailed: reason = SQLSTATE (22012), details: the error''s message, its context (no detail, no hint)');
SELECT is(pg_temp.attempts('fails'), '{"1 failed 22012 -"}', 'activity_attempts: one failed attempt, 22012');

-- 3. Retries: the exact delays of the policy (2 s x 3: 2, 6, 18 s), nothing before them.
SELECT t.at('2026-01-01 01:00:00+00');
SELECT pg_temp.setup('retries', 'bad', 'app.bad(jsonb)',
    '{"startToCloseTimeoutSeconds": 10,
      "retryPolicy": {"initialIntervalInSeconds": 2, "backoffCoefficient": 3, "maximumAttempts": 4}}');
CREATE FUNCTION pg_temp.round(ts text) RETURNS integer LANGUAGE plpgsql AS $$
BEGIN
    PERFORM t.at(ts);
    PERFORM durable.tick();
    RETURN durable.run_tasks();
END $$;
SELECT is(durable.run_tasks(), 1, 'attempt 1 fails');
SELECT is(t.pending('retries')->>'nextAttemptScheduledTime', '2026-01-01T01:00:02+00:00', 'attempt 2 is due 2 s later');
SELECT is(pg_temp.activity_timers('retries'), 1::bigint, 'a timer holds the next attempt');
SELECT is(pg_temp.round('2026-01-01 01:00:01.999+00'), 0, 'nothing runs before');
SELECT is(pg_temp.round('2026-01-01 01:00:02+00'), 1, 'attempt 2 runs after 2 s, and fails');
SELECT is(pg_temp.round('2026-01-01 01:00:07.999+00'), 0, 'nothing runs before 6 s more');
SELECT is(pg_temp.round('2026-01-01 01:00:08+00'), 1, 'attempt 3 runs after 6 s, and fails');
SELECT is(pg_temp.round('2026-01-01 01:00:25.999+00'), 0, 'nothing runs before 18 s more');
SELECT is(pg_temp.round('2026-01-01 01:00:26+00'), 1, 'attempt 4 runs after 18 s, and fails for good');
SELECT is(pg_temp.attempts('retries'),
    '{"1 failed 22012 00:00:02","2 failed 22012 00:00:06","3 failed 22012 00:00:18","4 failed 22012 -"}',
    'activity_attempts: four failed attempts and their retry delays');
SELECT is(pg_temp.activity_timers('retries'), 0::bigint, 'the activity that failed for good left no timer');
SELECT is((SELECT count(*) FROM app.ledger WHERE note = 'written by a failing attempt'), 0::bigint,
    'no attempt left a write');

-- 4. StartToClose is the function's statement timeout.
CREATE FUNCTION app.slow(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO app.ledger (note) VALUES ('written by a slow attempt');
    PERFORM pg_sleep(30);
    RETURN '"too late"';
END $$;
SELECT pg_temp.setup('slow', 'slow', 'app.slow(jsonb)',
    '{"startToCloseTimeoutSeconds": 0.5, "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 1}}');
SELECT is(durable.run_tasks(), 1, 'the activity ran into its timeout');
SELECT is(pg_temp.attempts('slow'), '{"1 timed_out durable:Timeout START_TO_CLOSE -"}',
    'the attempt timed out: reason durable:Timeout START_TO_CLOSE');
SELECT is(t.attrs('slow', 'ActivityTaskTimedOut') - 'identity',
    '{"scheduledEventId": 5, "startedEventId": 6, "timeoutType": "START_TO_CLOSE", "details": null,
      "lastFailureReason": "durable:Timeout START_TO_CLOSE", "retryState": "MAXIMUM_ATTEMPTS_REACHED"}'::jsonb,
    'the activity timed out for good: ActivityTaskTimedOut START_TO_CLOSE');
SELECT is((SELECT count(*) FROM app.ledger WHERE note = 'written by a slow attempt'), 0::bigint,
    'its write is not kept');

-- 5. The function runs as run_as, an ordinary role, and never as the caller.
CREATE FUNCTION app.whoami(input jsonb) RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_build_object('user', current_user, 'superuser', rolsuper)
      FROM pg_roles WHERE rolname = current_user $$;
CREATE FUNCTION app.peek(input jsonb) RETURNS jsonb LANGUAGE sql AS $$
    SELECT to_jsonb(count(*)) FROM pg_authid $$;
SELECT pg_temp.setup('who', 'whoami', 'app.whoami(jsonb)');
SELECT pg_temp.setup('peek', 'peek', 'app.peek(jsonb)',
    '{"retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 1}}');
SELECT is(durable.run_tasks(), 2, 'both ran');
SELECT is(t.attrs('who', 'ActivityTaskCompleted')->'result', '{"user": "act_app", "superuser": false}',
    'current_user inside the activity is its run_as role, not a superuser');
SELECT is(t.attrs('peek', 'ActivityTaskFailed')->>'reason', '42501', 'what act_app may not read fails with 42501');
SELECT is(current_user::text, session_user::text, 'the caller of run_tasks() is itself again');

SELECT * FROM finish();
ROLLBACK;

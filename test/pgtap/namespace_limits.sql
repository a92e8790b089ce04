-- What an admin lets one namespace use of the executors: create_namespace and
-- alter_namespace take max_executors (at most that many of its executor tasks at once)
-- and max_task_timeout (the longest statement timeout its workflow functions and SQL
-- activities run with); NULL in alter_namespace keeps a limit, 0 or '0' clears it; bad
-- values are refused with 22023 naming the argument and change nothing; only
-- durable_admin members may call them.  A task of a namespace with max_task_timeout
-- runs with at most that timeout, while history keeps the timeout the workflow gave.
BEGIN;
SELECT plan(29);

CREATE FUNCTION pg_temp.limits(ns text) RETURNS text LANGUAGE sql AS $$
    SELECT format('%s %s', COALESCE(max_executors::text, '-'), COALESCE(max_task_timeout::text, '-'))
      FROM durable.namespaces WHERE name = ns $$;
CREATE FUNCTION pg_temp.err(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ' ' || SQLERRM;
END $$;

-- create_namespace
SELECT durable.create_namespace('plain');
SELECT is(pg_temp.limits('plain'), '- -', 'a namespace has no limits by default');
SELECT durable.create_namespace('tenant-a', max_executors => 2, max_task_timeout => '30 seconds');
SELECT is(pg_temp.limits('tenant-a'), '2 00:00:30', 'create_namespace sets both limits');
SELECT durable.create_namespace('zeroes', max_executors => 0, max_task_timeout => '0');
SELECT is(pg_temp.limits('zeroes'), '- -', '0 and ''0'' mean no limit');
SELECT is(pg_temp.err($$SELECT durable.create_namespace('bad', max_executors => -1)$$),
          '22023 max_executors must not be negative', 'a negative max_executors: 22023');
SELECT is(pg_temp.err($$SELECT durable.create_namespace('bad', max_task_timeout => '-1 second')$$),
          '22023 max_task_timeout must not be negative', 'a negative max_task_timeout: 22023');
SELECT is(pg_temp.err($$SELECT durable.create_namespace('bad', max_task_timeout => '36526 days')$$),
          '22023 max_task_timeout must be at most 100 years (36525 days)',
          'a max_task_timeout over 100 years: 22023');
SELECT is((SELECT count(*) FROM durable.namespaces WHERE name = 'bad'), 0::bigint,
          'and nothing is created');

-- alter_namespace
SELECT durable.alter_namespace('tenant-a', description => 'team A');
SELECT is(pg_temp.limits('tenant-a'), '2 00:00:30', 'NULL keeps both limits');
SELECT durable.alter_namespace('tenant-a', max_executors => 1);
SELECT is(pg_temp.limits('tenant-a'), '1 00:00:30', 'max_executors alone');
SELECT durable.alter_namespace('tenant-a', max_task_timeout => '2 minutes');
SELECT is(pg_temp.limits('tenant-a'), '1 00:02:00', 'max_task_timeout alone');
SELECT durable.alter_namespace('tenant-a', max_executors => 0);
SELECT is(pg_temp.limits('tenant-a'), '- 00:02:00', 'max_executors 0 clears it');
SELECT durable.alter_namespace('tenant-a', max_task_timeout => '0');
SELECT is(pg_temp.limits('tenant-a'), '- -', 'max_task_timeout ''0'' clears it');
SELECT durable.alter_namespace('plain', max_executors => 3, max_task_timeout => '1 hour');
SELECT is(pg_temp.limits('plain'), '3 01:00:00', 'both at once');
SELECT is(pg_temp.err($$SELECT durable.alter_namespace('plain', description => 'x', max_executors => -5)$$),
          '22023 max_executors must not be negative', 'alter_namespace: a negative max_executors');
SELECT is(pg_temp.err($$SELECT durable.alter_namespace('plain', description => 'x', max_task_timeout => '-1 hour')$$),
          '22023 max_task_timeout must not be negative', 'alter_namespace: a negative max_task_timeout');
SELECT is(pg_temp.err($$SELECT durable.alter_namespace('plain', max_task_timeout => '1000000 months -29999999 days')$$),
          '22023 max_task_timeout must be at most 100 years (36525 days)',
          'alter_namespace: an interval whose months are past the bound');
SELECT is((SELECT description || ' ' || pg_temp.limits('plain') FROM durable.namespaces WHERE name = 'plain'),
          ' 3 01:00:00', 'and nothing is changed, the description neither');
SELECT is(pg_temp.err($$SELECT durable.alter_namespace('nowhere', max_executors => 1)$$),
          'WF002 namespace "nowhere" does not exist', 'an unknown namespace: WF002');

-- Who may set them: durable_admin members (and superusers), as for every setting of a
-- namespace; not a client or worker, not even of the namespace.
CREATE ROLE nl_admin;   GRANT durable_admin TO nl_admin;
CREATE ROLE nl_client;  GRANT durable_client, durable_worker TO nl_client;
SELECT durable.grant_namespace('plain', 'nl_client', 'client');
SELECT durable.grant_namespace('plain', 'nl_client', 'worker');
SET LOCAL ROLE nl_client;
SELECT is(pg_temp.err($$SELECT durable.alter_namespace('plain', max_executors => 100)$$),
          '42501 permission denied for function alter_namespace', 'a client of the namespace may not raise its limit');
SELECT is(pg_temp.err($$SELECT durable.create_namespace('mine', max_executors => 100)$$),
          '42501 permission denied for function create_namespace', 'nor create one with limits');
RESET ROLE;
SET LOCAL ROLE nl_admin;
SELECT is(pg_temp.err($$SELECT durable.alter_namespace('plain', max_executors => 4)$$),
          'ok', 'a durable_admin member may');
RESET ROLE;
SELECT is(pg_temp.limits('plain'), '4 01:00:00', 'and the limit is set');

-- The timeout cap.  A SQL activity of a namespace with max_task_timeout 0.2 s that would
-- run 5 s, scheduled with a StartToClose of 60 s: the executor (here run_tasks()) cuts
-- it at 0.2 s, as a StartToClose timeout of the attempt; history keeps 60 s.
CREATE ROLE nl_app;
CREATE SCHEMA nl;
GRANT USAGE ON SCHEMA nl TO nl_app;
CREATE FUNCTION nl.slow(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_sleep(5);
    RETURN input;
END $$;
CREATE FUNCTION nl.wf(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    RETURN durable.activity('slow', input,
        '{"startToCloseTimeoutSeconds": 60, "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 1}}');
END $$;
GRANT EXECUTE ON FUNCTION nl.slow(jsonb), nl.wf(jsonb) TO nl_app;
SELECT durable.create_namespace('capped', max_task_timeout => '200 milliseconds');
SELECT durable.register_workflow('wf', 'nl.wf(jsonb)', namespace => 'capped', run_as => 'nl_app');
SELECT durable.register_activity('slow', 'nl.slow(jsonb)', namespace => 'capped', run_as => 'nl_app');
SELECT durable.start_workflow('wf', '1', 'cap-1', namespace => 'capped');
SELECT durable.run_tasks(1);	-- the decision task
CREATE TEMP TABLE took AS SELECT clock_timestamp() AS t0, NULL::float8 AS secs;
SELECT durable.run_tasks(10);	-- the activity, and the decision task after it
UPDATE took SET secs = extract(epoch FROM clock_timestamp() - t0);
SELECT is(durable.describe_workflow('cap-1', 'capped')->>'status', 'failed',
          'the activity was cut: its only attempt failed, and so did the workflow');
SELECT is((SELECT attributes->>'timeoutType' FROM durable.get_history('cap-1', 'capped')
            WHERE event_type = 'ActivityTaskTimedOut'), 'START_TO_CLOSE',
          'as a StartToClose timeout');
SELECT is((SELECT (attributes->>'startToCloseTimeoutSeconds')::float8
             FROM durable.get_history('cap-1', 'capped') WHERE event_type = 'ActivityTaskScheduled'),
          60::float8, 'history keeps the StartToClose the workflow gave');
SELECT cmp_ok((SELECT secs FROM took), '<', 4::float8,
              'cut well before the 5 s the function would have run');

-- A workflow function of the namespace is cut the same way: its decision task times
-- out, though its own decision timeout is 10 s.
CREATE FUNCTION nl.sleepy(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_sleep(3);
    RETURN input;
END $$;
GRANT EXECUTE ON FUNCTION nl.sleepy(jsonb) TO nl_app;
SELECT durable.register_workflow('sleepy', 'nl.sleepy(jsonb)', namespace => 'capped', run_as => 'nl_app');
SELECT durable.start_workflow('sleepy', '1', 'cap-3', namespace => 'capped', decision_timeout => '10 seconds');
SELECT durable.run_tasks(1);
SELECT is((SELECT attributes->>'timeoutType' FROM durable.get_history('cap-3', 'capped')
            WHERE event_type = 'DecisionTaskTimedOut'), 'START_TO_CLOSE',
          'a workflow function past max_task_timeout: its decision task timed out');
SELECT is((SELECT (attributes->>'startToCloseTimeoutSeconds')::float8
             FROM durable.get_history('cap-3', 'capped') WHERE event_type = 'DecisionTaskScheduled'
            ORDER BY event_id LIMIT 1),
          10::float8, 'history keeps its decision timeout');

-- A namespace without the cap runs its tasks with their own timeout.
SELECT durable.create_namespace('uncapped');
SELECT durable.register_workflow('wf', 'nl.wf(jsonb)', namespace => 'uncapped', run_as => 'nl_app');
SELECT durable.register_activity('slow', 'nl.slow(jsonb)', namespace => 'uncapped', run_as => 'nl_app');
CREATE OR REPLACE FUNCTION nl.slow(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_sleep(0.5);
    RETURN input;
END $$;
SELECT durable.start_workflow('wf', '2', 'cap-2', namespace => 'uncapped');
SELECT durable.run_tasks(10);
SELECT is(durable.describe_workflow('cap-2', 'uncapped')->>'status', 'completed',
          'a namespace without max_task_timeout: a 0.5 s activity completes');

SELECT * FROM finish();
ROLLBACK;

-- A read-only transaction (as every transaction of a hot standby is) refuses
-- every durable function that writes with 25006, as it refuses a statement
-- that writes, and nothing is written; the readers keep working.
BEGIN;
SELECT plan(37);

SET LOCAL durable.test_time = '2026-04-01 00:00:00+00';

-- Run sql in a read-only subtransaction; its SQLSTATE, or 'ok' (then rolled
-- back, so that the test can go on writing).
CREATE FUNCTION pg_temp.ro(sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        SET LOCAL transaction_read_only = on;
        EXECUTE sql;
        RAISE EXCEPTION USING ERRCODE = 'XXRO0';
    EXCEPTION WHEN OTHERS THEN
        IF SQLSTATE = 'XXRO0' THEN RETURN 'ok'; END IF;
        RETURN SQLSTATE || ' ' || SQLERRM;
    END;
END $$;

-- Something for every function to act on: a run with a decision task ready,
-- a run with a started decision task, one with an activity task ready and
-- one with a started activity, and a closed run past its retention.
SELECT durable.start_workflow('t', workflow_id => 'ready', task_queue => 'dq') IS NOT NULL AS started;
SELECT durable.start_workflow('t', workflow_id => 'decided', task_queue => 'd2') IS NOT NULL AS started;
SELECT durable.poll_decision_task('d2')->>'taskToken' AS dtoken \gset
SELECT durable.start_workflow('t', workflow_id => 'acts', task_queue => 'acts') IS NOT NULL AS started;
SELECT t.decide('acts', jsonb_build_array(t.sched('a1', '{"taskQueue": "aq"}'),
                                          t.sched('a2', '{"taskQueue": "aq2"}'))) IS NOT NULL AS decided;
SELECT durable.poll_activity_task('aq2')->>'taskToken' AS atoken \gset
SELECT durable.start_workflow('t', workflow_id => 'old', task_queue => 'old') IS NOT NULL AS started;
SELECT durable.terminate_workflow('old');
SELECT t.at('2026-05-01 00:00:00+00');
CREATE FUNCTION pg_temp.wf(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT input $$;

SELECT t.footprint() AS before \gset

-- Client API
SELECT is(pg_temp.ro($$SELECT durable.start_workflow('t', workflow_id => 'new')$$),
          '25006 cannot execute durable.start_workflow() in a read-only transaction', 'start_workflow');
SELECT is(pg_temp.ro($$SELECT durable.signal_with_start('t', 'ready', 'sig')$$),
          '25006 cannot execute durable.signal_with_start() in a read-only transaction', 'signal_with_start');
SELECT is(pg_temp.ro($$SELECT durable.signal_workflow('ready', 'sig')$$),
          '25006 cannot execute durable.signal_workflow() in a read-only transaction', 'signal_workflow');
SELECT is(pg_temp.ro($$SELECT durable.cancel_workflow('ready')$$),
          '25006 cannot execute durable.cancel_workflow() in a read-only transaction', 'cancel_workflow');
SELECT is(pg_temp.ro($$SELECT durable.terminate_workflow('ready')$$),
          '25006 cannot execute durable.terminate_workflow() in a read-only transaction', 'terminate_workflow');

-- Worker API
SELECT is(pg_temp.ro($$SELECT durable.poll_decision_task('dq')$$),
          '25006 cannot execute durable.poll_decision_task() in a read-only transaction', 'poll_decision_task');
SELECT is(pg_temp.ro($$SELECT durable.poll_decision_task('empty', wait => '10s')$$),
          '25006 cannot execute durable.poll_decision_task() in a read-only transaction',
          'poll_decision_task on an empty queue, with a wait: refused at once');
SELECT is(pg_temp.ro($$SELECT durable.poll_activity_task('aq')$$),
          '25006 cannot execute durable.poll_activity_task() in a read-only transaction', 'poll_activity_task');
SELECT is(pg_temp.ro($$SELECT * FROM durable.poll_activity_tasks('aq')$$),
          '25006 cannot execute durable.poll_activity_tasks() in a read-only transaction', 'poll_activity_tasks');
SELECT is(pg_temp.ro(format($$SELECT durable.complete_decision_task(%L, '[]')$$, :'dtoken')),
          '25006 cannot execute durable.complete_decision_task() in a read-only transaction', 'complete_decision_task');
SELECT is(pg_temp.ro(format($$SELECT durable.fail_decision_task(%L, 'oops')$$, :'dtoken')),
          '25006 cannot execute durable.fail_decision_task() in a read-only transaction', 'fail_decision_task');
SELECT is(pg_temp.ro(format($$SELECT durable.complete_activity(%L, '1')$$, :'atoken')),
          '25006 cannot execute durable.complete_activity() in a read-only transaction', 'complete_activity');
SELECT is(pg_temp.ro(format($$SELECT durable.fail_activity(%L, 'oops')$$, :'atoken')),
          '25006 cannot execute durable.fail_activity() in a read-only transaction', 'fail_activity');
SELECT is(pg_temp.ro(format($$SELECT durable.heartbeat_activity(%L)$$, :'atoken')),
          '25006 cannot execute durable.heartbeat_activity() in a read-only transaction', 'heartbeat_activity');
SELECT is(pg_temp.ro(format($$SELECT durable.report_activity_canceled(%L)$$, :'atoken')),
          '25006 cannot execute durable.report_activity_canceled() in a read-only transaction', 'report_activity_canceled');

-- Admin, timers, executors, retention
SELECT is(pg_temp.ro($$SELECT durable.tick()$$),
          '25006 cannot execute durable.tick() in a read-only transaction', 'tick');
SELECT is(pg_temp.ro($$SELECT durable.purge()$$),
          '25006 cannot execute durable.purge() in a read-only transaction', 'purge');
SELECT is(pg_temp.ro($$SELECT durable.run_tasks()$$),
          '25006 cannot execute durable.run_tasks() in a read-only transaction', 'run_tasks');
SELECT is(pg_temp.ro($$SELECT durable.create_namespace('other')$$),
          '25006 cannot execute durable.create_namespace() in a read-only transaction', 'create_namespace');
SELECT is(pg_temp.ro($$SELECT durable.alter_namespace('default', description => 'd')$$),
          '25006 cannot execute durable.alter_namespace() in a read-only transaction', 'alter_namespace');
SELECT is(pg_temp.ro($$SELECT durable.drop_namespace('default')$$),
          '25006 cannot execute durable.drop_namespace() in a read-only transaction', 'drop_namespace');
SELECT is(pg_temp.ro($$SELECT durable.register_workflow('w', 'pg_temp.wf(jsonb)')$$),
          '25006 cannot execute durable.register_workflow() in a read-only transaction', 'register_workflow');
SELECT is(pg_temp.ro($$SELECT durable.register_activity('w', 'pg_temp.wf(jsonb)')$$),
          '25006 cannot execute durable.register_activity() in a read-only transaction', 'register_activity');
SELECT is(pg_temp.ro($$SELECT durable.unregister_workflow('w')$$),
          '25006 cannot execute durable.unregister_workflow() in a read-only transaction', 'unregister_workflow');
SELECT is(pg_temp.ro($$SELECT durable.unregister_activity('w')$$),
          '25006 cannot execute durable.unregister_activity() in a read-only transaction', 'unregister_activity');

SELECT is(t.footprint(), :'before', 'nothing was written');

-- The readers work in a read-only transaction.
SELECT is(pg_temp.ro($$SELECT durable.describe_workflow('ready')$$), 'ok', 'describe_workflow');
SELECT is(pg_temp.ro($$SELECT * FROM durable.get_history('ready')$$), 'ok', 'get_history');
SELECT is(pg_temp.ro($$SELECT durable.resolve_run_id('ready')$$), 'ok', 'resolve_run_id');
SELECT is(pg_temp.ro($$SELECT * FROM durable.workflows$$), 'ok', 'the workflows view');
SELECT is(pg_temp.ro($$SELECT * FROM durable.activity_attempts$$), 'ok', 'the activity_attempts view');
SELECT is(pg_temp.ro($$SELECT durable.retry_delay(durable.retry_policy('1 second', maximum_attempts => 5), 3), durable.now(),
                              durable.cron_next('* * * * *')$$), 'ok', 'the pure functions');

-- Out of the read-only transaction, the same calls work.
SELECT isnt(durable.poll_decision_task('dq'), NULL, 'a read-write poll gets the task');
SELECT lives_ok(format($$SELECT durable.complete_activity(%L, '1')$$, :'atoken'), 'a read-write complete_activity');
SELECT is(durable.tick(), 1, 'a read-write tick fires the due timer');
SELECT is(durable.purge(), 1, 'a read-write purge purges the old run');
SELECT lives_ok($$SELECT durable.create_namespace('other')$$, 'a read-write create_namespace');

SELECT * FROM finish();
ROLLBACK;

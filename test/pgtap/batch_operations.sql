-- Batch operations (docs/operations.md "Batch operations"): preview_batch counts what
-- start_batch would touch (list_workflows' filters); a job works through its runs, a
-- slice per run_batches() (the timer worker's step), calling the operation's function on
-- each run as the role that started it; progress and per-run errors in durable.batches
-- and durable.batch_errors; cancel_batch; namespaces; bad input.
BEGIN;
SELECT * FROM no_plan();
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

CREATE ROLE bo_client; GRANT durable_client TO bo_client;
CREATE ROLE bo_other;  GRANT durable_client TO bo_other;
SELECT durable.create_namespace('bo');
SELECT durable.create_namespace('bo-other');
SELECT durable.grant_namespace('bo', 'bo_client', 'client');
SELECT durable.grant_namespace('bo-other', 'bo_other', 'client');

-- 12 running workflows of type t1 (bo-1 .. bo-12), 3 of type t2, one t1 completed.
SELECT durable.start_workflow('t1', NULL, 'bo-' || i, 'q', 'bo',
                              memo => jsonb_build_object('i', i))
  FROM generate_series(1, 12) i;
SELECT durable.start_workflow('t2', NULL, 'bo-x' || i, 'q2', 'bo') FROM generate_series(1, 3) i;
SELECT durable.start_workflow('t1', NULL, 'bo-done', 'qd', 'bo');
SELECT durable.complete_decision_task(durable.poll_decision_task('qd', NULL, 'bo')->>'taskToken',
    '[{"decisionType": "CompleteWorkflowExecution", "result": 1}]');

SET LOCAL ROLE bo_client;

-- Dry run: the same counts as count_workflows.
SELECT is(durable.preview_batch('terminate', 'bo', workflow_type => 't1'), 13::bigint,
    'preview: every t1 run, closed ones included');
SELECT is(durable.preview_batch('terminate', 'bo', status => 'running', workflow_type => 't1'),
    durable.count_workflows('bo', status => 'running', workflow_type => 't1'),
    'preview counts as count_workflows does');
SELECT is(durable.preview_batch('signal', 'bo', workflow_id_prefix => 'bo-x', signal_name => 's'),
    3::bigint, 'preview of a signal by prefix');
SELECT is((SELECT count(*) FROM durable.batches), 0::bigint, 'a preview starts nothing');

-- Bad input: the SQLSTATE, a message naming the argument, nothing recorded.
SELECT throws_ok($$ SELECT durable.start_batch('explode', 'bo', reason => 'x') $$,
    '22023', 'operation "explode" is not a batch operation', 'an unknown operation');
SELECT throws_ok($$ SELECT durable.start_batch(NULL, 'bo', reason => 'x') $$,
    '22004', 'operation must not be null', 'a null operation');
SELECT throws_ok($$ SELECT durable.start_batch('terminate', 'bo') $$,
    '22004', 'reason must not be null', 'a batch needs a reason');
SELECT throws_ok($$ SELECT durable.start_batch('terminate', 'bo', reason => '') $$,
    '22023', 'reason must be 1 to 1000 bytes', 'an empty reason');
SELECT throws_ok($$ SELECT durable.start_batch('signal', 'bo', reason => 'x') $$,
    '22004', 'signal_name must not be null for a signal batch', 'a signal without a name');
SELECT throws_ok($$ SELECT durable.start_batch('terminate', 'bo', reason => 'x', signal_name => 's') $$,
    '22023', 'signal_name is only for a signal batch', 'a signal name for another operation');
SELECT throws_ok($$ SELECT durable.start_batch('reset', 'bo', reason => 'x', reset_to => 'middle') $$,
    '22023', 'reset_to "middle" is not a reset point', 'reset to an unknown point');
SELECT throws_ok($$ SELECT durable.start_batch('cancel', 'bo', reason => 'x', reset_to => 'first_decision') $$,
    '22023', 'reset_to is only for a reset batch', 'a reset point for another operation');
SELECT throws_ok($$ SELECT durable.start_batch('terminate', 'bo', status => 'sleeping', reason => 'x') $$,
    '22023', 'status "sleeping" is not a workflow status', 'a bad filter, from workflow_filter');
SELECT throws_ok($$ SELECT durable.start_batch('terminate', 'bo', memo => '[1]', reason => 'x') $$,
    '22023', 'memo must be a JSON object', 'a bad memo filter');
SELECT throws_ok($$ SELECT durable.preview_batch('explode', 'bo') $$,
    '22023', 'operation "explode" is not a batch operation', 'preview checks the same');
SELECT throws_ok($$ SELECT durable.start_batch('terminate', 'nowhere', reason => 'x') $$,
    'WF002', NULL, 'an unknown namespace');
SELECT throws_ok($$ SELECT durable.start_batch('terminate', 'bo-other', reason => 'x') $$,
    '42501', NULL, 'a namespace without the client privilege: refused at the start');
SELECT throws_ok($$ SELECT durable.cancel_batch(NULL) $$, '22004', 'batch_id must not be null',
    'cancel_batch of null');
SELECT throws_ok($$ SELECT durable.cancel_batch('00000000-0000-0000-0000-000000000001') $$, 'WF002',
    'batch "00000000-0000-0000-0000-000000000001" not found', 'cancel_batch of an unknown batch');
SELECT is((SELECT count(*) FROM durable.batches), 0::bigint, 'bad input records nothing');

-- Terminate every t1 run, 5 a slice: the completed one is skipped.
SELECT durable.start_batch('terminate', 'bo', workflow_type => 't1', reason => 'bad deploy') AS b1 \gset
SELECT is((SELECT row(operation, state, total, done, started_by)::text FROM durable.batches
            WHERE batch_id = :'b1'),
    '(terminate,running,13,0,bo_client)', 'the job is recorded, running, with the count at its start');
RESET ROLE;
SELECT is(durable.run_batches(5), 5, 'a slice of 5 runs');
SELECT is((SELECT row(touched, skipped, failed, state)::text FROM durable.batches WHERE batch_id = :'b1'),
    '(5,0,0,running)', 'progress after a slice');
SELECT is(durable.count_workflows('bo', status => 'terminated'), 5::bigint, '5 runs terminated');
SELECT is(durable.run_batches(500), 8, 'the rest');
SELECT is((SELECT row(touched, skipped, failed, state)::text FROM durable.batches WHERE batch_id = :'b1'),
    '(12,1,0,completed)', 'the job completed: 12 terminated, the closed run skipped');
SELECT is(durable.count_workflows('bo', status => 'running', workflow_type => 't1'), 0::bigint,
    'no t1 run is running');
SELECT is(durable.count_workflows('bo', status => 'running', workflow_type => 't2'), 3::bigint,
    'the t2 runs are untouched');
SELECT is((SELECT attributes->>'reason' || '/' || (attributes->>'identity')
             FROM durable.get_history('bo-3', 'bo') WHERE event_type = 'WorkflowExecutionTerminated'),
    'bad deploy/bo_client', 'terminated with the reason, as the role that started the job');
SELECT is(durable.run_batches(), 0, 'nothing left to do');

-- Signal the t2 runs.
SET LOCAL ROLE bo_client;
SELECT durable.start_batch('signal', 'bo', workflow_type => 't2', reason => 'nudge',
                           signal_name => 'wake', input => '{"n": 1}') AS b2 \gset
RESET ROLE;
SELECT is(durable.run_batches(), 3, 'three signals');
SELECT is((SELECT count(*) FROM durable.history h JOIN durable.runs r USING (run_id)
            WHERE r.workflow_type = 't2' AND h.event_type = 'WorkflowExecutionSignaled'
              AND h.attributes->>'signalName' = 'wake' AND h.attributes->'input' = '{"n": 1}'),
    3::bigint, 'each t2 run got the signal once');

-- Cancel the t2 runs.
SET LOCAL ROLE bo_client;
SELECT durable.start_batch('cancel', 'bo', workflow_type => 't2', reason => 'stop') AS b3 \gset
RESET ROLE;
SELECT is(durable.run_batches(3), 3, 'three cancel requests');
SELECT is((SELECT state FROM durable.batches WHERE batch_id = :'b3'), 'running',
    'a full slice: the job does not know yet that it has no run left');
SELECT is(durable.run_batches(), 0, 'the next finds none');
SELECT is((SELECT state || ' ' || done FROM durable.batches WHERE batch_id = :'b3'), 'completed 3',
    'and completes the job');
SELECT is((SELECT count(*) FROM durable.runs WHERE workflow_type = 't2' AND cancel_requested),
    3::bigint, 'each t2 run has a cancel request');

-- Restart the terminated t1 runs, then reset them: a run made by the job is not reached.
SELECT t.at('2026-01-01 00:05:00+00');
SET LOCAL ROLE bo_client;
SELECT durable.start_batch('restart', 'bo', status => 'terminated', workflow_id_prefix => 'bo-1',
                           reason => 'again') AS b4 \gset
RESET ROLE;
SELECT is(durable.run_batches(), 4, 'bo-1, bo-10, bo-11, bo-12 restarted');
SELECT is((SELECT row(touched, skipped, failed, state)::text FROM durable.batches WHERE batch_id = :'b4'),
    '(4,0,0,completed)', 'the restart job completed');
SELECT is(durable.count_workflows('bo', status => 'running', workflow_type => 't1'), 4::bigint,
    'four new runs');

-- Reset: bo-1's new run completes two decision tasks; the others none (errors).
DO $$
DECLARE t jsonb;
BEGIN
    LOOP
        t := durable.poll_decision_task('q', NULL, 'bo');
        EXIT WHEN t IS NULL OR t->>'workflowId' = 'bo-1';
    END LOOP;
    PERFORM durable.complete_decision_task(t->>'taskToken',
        '[{"decisionType": "StartTimer", "timerId": "a", "startToFireTimeoutSeconds": 60}]');
END $$;
SET LOCAL ROLE bo_client;
SELECT durable.start_batch('reset', 'bo', status => 'running', workflow_type => 't1',
                           reason => 'fixed', reset_to => 'first_decision') AS b5 \gset
RESET ROLE;
SELECT is(durable.run_batches(), 4, 'four runs reached');
SELECT is((SELECT row(touched, skipped, failed, state)::text FROM durable.batches WHERE batch_id = :'b5'),
    '(1,0,3,completed)', 'one reset, three errors');
SELECT is((SELECT array_agg(workflow_id || ':' || sqlstate ORDER BY workflow_id)
             FROM durable.batch_errors WHERE batch_id = :'b5'),
    '{bo-10:55000,bo-11:55000,bo-12:55000}', 'an error per run that never completed a decision task');
SELECT is((SELECT count(*) FROM durable.runs WHERE workflow_id = 'bo-1'), 3::bigint,
    'bo-1: the terminated run, the restarted one and the reset one');
SELECT is((SELECT attributes->>'cause' FROM durable.get_history('bo-1', 'bo')
            WHERE event_type = 'DecisionTaskFailed'), 'ResetWorkflow', 'the reset run');

-- Pause, then resume, the running t1 runs: a run paused already counts as touched.
SELECT durable.pause_workflow('bo-10', reason => 'by hand', namespace => 'bo');
SET LOCAL ROLE bo_client;
SELECT is(durable.preview_batch('pause', 'bo', status => 'running', workflow_type => 't1',
                                reason => 'provider down'), 4::bigint, 'the pause would touch four');
SELECT durable.start_batch('pause', 'bo', status => 'running', workflow_type => 't1',
                           reason => 'provider down') AS bp \gset
RESET ROLE;
SELECT is(durable.run_batches(), 4, 'four runs reached');
SELECT is((SELECT row(touched, skipped, failed, state)::text FROM durable.batches WHERE batch_id = :'bp'),
    '(4,0,0,completed)', 'the pause job completed');
SELECT is((SELECT array_agg(workflow_id || ':' || COALESCE(pause_reason, '-') ORDER BY workflow_id)
             FROM durable.workflows WHERE namespace = 'bo' AND status = 'running'
              AND workflow_type = 't1'),
    '{bo-1:provider down,bo-10:by hand,bo-11:provider down,bo-12:provider down}',
    'each run is paused, the one paused by hand keeps its reason');
SET LOCAL ROLE bo_client;
SELECT durable.start_batch('resume', 'bo', status => 'running', workflow_type => 't1',
                           reason => 'provider back') AS br \gset
RESET ROLE;
SELECT is(durable.run_batches(), 4, 'four runs resumed');
SELECT is((SELECT count(*) FROM durable.workflows WHERE namespace = 'bo' AND paused_at IS NOT NULL),
    0::bigint, 'none is paused');
SELECT throws_ok($$SELECT durable.preview_batch('suspend', 'bo', reason => 'x')$$, '22023',
    'operation "suspend" is not a batch operation', 'an unknown operation');

-- Cancel a batch half-way.
SELECT durable.start_workflow('t3', NULL, 'bo-c' || i, 'q3', 'bo') FROM generate_series(1, 6) i;
SET LOCAL ROLE bo_client;
SELECT durable.start_batch('terminate', 'bo', workflow_type => 't3', reason => 'x') AS b6 \gset
RESET ROLE;
SELECT is(durable.run_batches(2), 2, 'two of six');
SET LOCAL ROLE bo_other;
SELECT throws_ok($$ SELECT durable.cancel_batch('$$ || :'b6' || $$') $$, '42501', NULL,
    'a client of another namespace cannot cancel it');
SELECT is((SELECT count(*) FROM durable.batches), 0::bigint, 'nor see any job of bo');
SELECT is((SELECT count(*) FROM durable.batch_errors), 0::bigint, 'nor their errors');
SET LOCAL ROLE bo_client;
SELECT ok(durable.cancel_batch(:'b6'), 'cancel_batch');
SELECT ok(NOT durable.cancel_batch(:'b6'), 'cancel_batch again: not running');
SELECT is((SELECT row(state, touched, canceled_by)::text FROM durable.batches WHERE batch_id = :'b6'),
    '(canceled,2,bo_client)', 'canceled after two');
RESET ROLE;
SELECT is(durable.run_batches(), 0, 'a canceled job does nothing');
SELECT is(durable.count_workflows('bo', status => 'running', workflow_type => 't3'), 4::bigint,
    'four t3 runs still running');

-- A role that loses its namespace privilege: per-run errors (42501).
SET LOCAL ROLE bo_client;
SELECT durable.start_batch('terminate', 'bo', workflow_type => 't3', reason => 'y') AS b7 \gset
RESET ROLE;
SELECT durable.revoke_namespace('bo', 'bo_client', 'client');
SELECT is(durable.run_batches(), 6, 'the six t3 runs reached');
SELECT is((SELECT row(touched, skipped, failed)::text FROM durable.batch_jobs WHERE batch_id = :'b7'),
    '(0,0,6)', 'each fails, the privilege checked first');
SELECT is((SELECT array_agg(DISTINCT sqlstate || ' ' || message) FROM durable.batch_job_errors
            WHERE batch_id = :'b7'),
    '{"42501 permission denied for namespace \"bo\": privilege client required"}',
    'with the privilege error of the role that started the job');
SELECT is(durable.count_workflows('bo', status => 'running', workflow_type => 't3'), 4::bigint,
    'nothing terminated');

-- The caller is the current user at the call: inside a SECURITY DEFINER function of
-- bo_other's, bo_other, whatever role calls it (docs/privileges.md).
SELECT durable.grant_namespace('bo', 'bo_client', 'client');
CREATE FUNCTION public.bo_definer() RETURNS uuid LANGUAGE sql SECURITY DEFINER
    SET search_path = pg_catalog AS
    $$ SELECT durable.start_batch('terminate', 'bo-other', reason => 'via definer') $$;
ALTER FUNCTION public.bo_definer() OWNER TO bo_other;
GRANT EXECUTE ON FUNCTION public.bo_definer() TO bo_client;
SET LOCAL ROLE bo_client;
SELECT public.bo_definer() AS b8 \gset
SELECT is((SELECT count(*) FROM durable.batches WHERE batch_id = :'b8'), 0::bigint,
    'bo_client does not see the job it started through bo_other''s function in bo-other');
RESET ROLE;
SELECT is((SELECT started_by FROM durable.batches WHERE batch_id = :'b8'), 'bo_other',
    'the job runs as the function''s owner');
SET LOCAL ROLE bo_other;
SELECT throws_ok($$ SELECT durable.preview_batch('terminate', 'bo') $$, '42501', NULL,
    'preview_batch outside the role''s namespaces: 42501');
RESET ROLE;

SELECT throws_ok($$ SELECT durable.run_batches(0) $$, '22023', 'max_runs must be between 1 and 100000',
    'run_batches: max_runs');

SELECT * FROM finish();
ROLLBACK;

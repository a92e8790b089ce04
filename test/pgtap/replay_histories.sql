-- durable.replay_histories() (docs/sql-workflows.md "Histories for the replay test of an
-- SDK"): the stored histories of a workflow type's runs, each as the "history" array of
-- a decision task, the latest first; only the namespace's own runs, for whom may read
-- it; its arguments.
BEGIN;
SELECT plan(22);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

CREATE ROLE rh_reader;   GRANT durable_client TO rh_reader;
CREATE ROLE rh_worker;   GRANT durable_worker TO rh_worker;
SELECT durable.create_namespace('ta');
SELECT durable.create_namespace('tb');
SELECT durable.grant_namespace('tb', 'rh_reader', 'client');

-- In default: pay-1 closed, pay-2 and pay-3 running (pay-3 with a started decision task).
SELECT durable.start_workflow('pay', '{"n": 1}', 'pay-1', 'q') IS NOT NULL AS started;
SELECT t.decide('pay-1', '[{"decisionType": "CompleteWorkflowExecution", "result": 1}]', 'q');
SELECT t.at('2026-01-01 00:01:00+00');
SELECT durable.start_workflow('pay', '{"n": 2}', 'pay-2', 'q') IS NOT NULL AS started;
SELECT t.decide('pay-2', '[{"decisionType": "StartTimer", "timerId": "t",
                            "startToFireTimeoutSeconds": 3600}]', 'q');
SELECT t.at('2026-01-01 00:02:00+00');
SELECT durable.start_workflow('pay', '{"n": 3}', 'pay-3', 'q') IS NOT NULL AS started;
CREATE TEMP TABLE task AS SELECT durable.poll_decision_task('q') AS t;
-- The same type in ta and tb.
SELECT durable.start_workflow('pay', '{"secret": "ta"}', 'pay-ta', 'q', 'ta') IS NOT NULL AS started;
SELECT durable.start_workflow('pay', '{"mine": "tb"}', 'pay-tb', 'q', 'tb') IS NOT NULL AS started;

-- 1. Shape.
SELECT is((SELECT history FROM durable.replay_histories('pay') WHERE workflow_id = 'pay-3'),
          (SELECT t->'history' FROM task),
          'a history is the "history" array of the decision task a poll returns');
SELECT is((SELECT history FROM durable.replay_histories('pay') WHERE workflow_id = 'pay-2'),
          (SELECT jsonb_agg(jsonb_build_object('eventId', event_id, 'eventTime', event_time,
                                               'eventType', event_type, 'attributes', attributes)
                            ORDER BY event_id)
             FROM durable.get_history('pay-2')),
          'the rows of get_history() as one JSON value');
SELECT is((SELECT run_id FROM durable.replay_histories('pay') WHERE workflow_id = 'pay-2'),
          durable.resolve_run_id('pay-2'), 'with the run id');
SELECT is((SELECT history->0->'attributes'->'input' FROM durable.replay_histories('pay')
            WHERE workflow_id = 'pay-2'),
          '{"n": 2}'::jsonb, 'WorkflowExecutionStarted first, with the input');

-- 2. Which runs, in which order.
SELECT is(ARRAY(SELECT workflow_id FROM durable.replay_histories('pay')),
          '{pay-3,pay-2}', 'the running runs, the latest first');
SELECT is(ARRAY(SELECT workflow_id FROM durable.replay_histories('pay', only_running => false)),
          '{pay-3,pay-2,pay-1}', 'only_running false: the closed ones too');
SELECT is(ARRAY(SELECT workflow_id FROM durable.replay_histories('pay', max_runs => 1)),
          '{pay-3}', 'max_runs bounds them');
SELECT is((SELECT history->-1->>'eventType' FROM durable.replay_histories('pay', only_running => false)
            WHERE workflow_id = 'pay-1'),
          'WorkflowExecutionCompleted', 'a closed run''s history ends with its close');
SELECT is((SELECT count(*) FROM durable.replay_histories('nothing')), 0::bigint,
          'a type without runs: no rows');
SELECT is(ARRAY(SELECT workflow_id FROM durable.replay_histories('pay', 'ta')),
          '{pay-ta}', 'another namespace: its own runs only');

-- 3. Who may call it.
SET LOCAL ROLE rh_reader;
SELECT is(ARRAY(SELECT workflow_id FROM durable.replay_histories('pay', 'tb')),
          '{pay-tb}', 'a client reads its namespace''s histories');
SELECT throws_ok($$ SELECT * FROM durable.replay_histories('pay', 'ta') $$,
    '42501', 'permission denied for namespace "ta": privilege client required',
    'and not another tenant''s');
RESET ROLE;
SET LOCAL ROLE rh_worker;
SELECT throws_ok($$ SELECT * FROM durable.replay_histories('pay') $$,
    '42501', NULL, 'a worker that is not a client may not call it');
RESET ROLE;

-- 4. Arguments.
SELECT throws_ok($$ SELECT * FROM durable.replay_histories(NULL) $$,
    '22004', 'workflow_type must not be null', 'a null workflow_type: 22004');
SELECT throws_ok($$ SELECT * FROM durable.replay_histories('') $$,
    '22023', 'workflow_type must not be empty', 'an empty workflow_type: 22023');
SELECT throws_ok($$ SELECT * FROM durable.replay_histories('pay', NULL) $$,
    '22004', 'namespace must not be null', 'a null namespace: 22004');
SELECT throws_ok($$ SELECT * FROM durable.replay_histories('pay', only_running => NULL) $$,
    '22004', 'only_running must not be null', 'a null only_running: 22004');
SELECT throws_ok($$ SELECT * FROM durable.replay_histories('pay', max_runs => NULL) $$,
    '22004', 'max_runs must not be null', 'a null max_runs: 22004');
SELECT throws_ok($$ SELECT * FROM durable.replay_histories('pay', max_runs => 0) $$,
    '22023', 'max_runs must be between 1 and 100000', 'max_runs 0: 22023');
SELECT throws_ok($$ SELECT * FROM durable.replay_histories('pay', max_runs => 100001) $$,
    '22023', 'max_runs must be between 1 and 100000', 'max_runs over 100000: 22023');
SELECT throws_ok($$ SELECT * FROM durable.replay_histories('pay', 'nowhere') $$,
    'WF002', 'namespace "nowhere" does not exist', 'an unknown namespace: WF002');
SELECT throws_ok($$ SELECT * FROM durable.replay_histories(repeat('x', 1001)) $$,
    '22023', 'workflow_type is too long', 'an over-long workflow_type: 22023');

SELECT * FROM finish();
ROLLBACK;

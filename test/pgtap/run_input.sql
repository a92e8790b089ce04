-- A workflow's input is stored once, in its WorkflowExecutionStarted event
-- (docs/api.md "Finding workflows"): durable.workflows and list_workflows show
-- it from there, and every run a chain starts by itself (a retry, a cron
-- fire), a reset and a restart take it from the run they come from.
BEGIN;
SELECT plan(13);
SET LOCAL durable.test_time = '2026-01-01 00:00:30+00';

SELECT hasnt_column('durable', 'runs', 'input',
    'the run row keeps no copy of the input');

-- A start: the input in the event, the view and the list.
SELECT durable.start_workflow('wf', '{"order": 17, "items": ["a", "b"]}', 'in-1', 'in-1') AS r1 \gset
SELECT is(t.attrs('in-1', 'WorkflowExecutionStarted')->'input', '{"order": 17, "items": ["a", "b"]}',
    'WorkflowExecutionStarted holds the input');
SELECT is((SELECT input FROM durable.workflows WHERE workflow_id = 'in-1'),
    '{"order": 17, "items": ["a", "b"]}', 'durable.workflows shows it');
SELECT is((SELECT input FROM durable.list_workflows(workflow_id_prefix => 'in-1')),
    '{"order": 17, "items": ["a", "b"]}', 'list_workflows shows it');
SELECT durable.start_workflow('wf', NULL, 'in-null', 'in-null') IS NOT NULL AS started;
SELECT is((SELECT input FROM durable.workflows WHERE workflow_id = 'in-null'), NULL,
    'a workflow started without input shows none');

-- A retry: the next run of the chain gets the same input.
SELECT durable.start_workflow('wf', '{"try": true}', 'in-retry', 'in-retry',
    retry_policy => '{"initialIntervalInSeconds": 60, "maximumAttempts": 3}') AS rr1 \gset
SELECT t.decide('in-retry', '[{"decisionType": "FailWorkflowExecution", "reason": "boom"}]') IS NOT NULL;
SELECT durable.resolve_run_id('in-retry') AS rr2 \gset
SELECT isnt(:'rr2'::uuid, :'rr1'::uuid, 'the failed run is retried in a new run');
SELECT is(t.attrs('in-retry', 'WorkflowExecutionStarted', 1, :'rr2')->'input', '{"try": true}',
    'the retry starts with the input of the run it retries');
SELECT is((SELECT input FROM durable.workflows WHERE run_id = :'rr2'), '{"try": true}',
    'and durable.workflows shows it for the new run');

-- A cron fire: the next run gets the same input.
SELECT durable.start_workflow('wf', '{"job": "nightly"}', 'in-cron', 'in-cron',
    cron_schedule => '0 * * * *') AS c1 \gset
SELECT t.at('2026-01-01 01:00:00+00');
SELECT durable.tick() IS NOT NULL AS fired;
SELECT t.decide('in-cron', '[{"decisionType": "CompleteWorkflowExecution", "result": 1}]') IS NOT NULL;
SELECT durable.resolve_run_id('in-cron') AS c2 \gset
SELECT is((SELECT input FROM durable.workflows WHERE run_id = :'c2'), '{"job": "nightly"}',
    'the next cron run shows the same input');

-- A restart of a closed workflow, then a reset of the restarted run.
SELECT t.decide('in-1', '[{"decisionType": "CompleteWorkflowExecution", "result": "done"}]') IS NOT NULL;
SELECT durable.restart_workflow('in-1', 'again') AS r2 \gset
SELECT is((SELECT input FROM durable.workflows WHERE run_id = :'r2'),
    '{"order": 17, "items": ["a", "b"]}', 'a restart starts with the input of the run it restarts');
SELECT t.decide('in-1', '[{"decisionType": "StartTimer", "timerId": "t", "startToFireTimeoutSeconds": 600}]') IS NOT NULL;
SELECT durable.reset_workflow('in-1', 'again and again') AS r3 \gset
SELECT is((SELECT input FROM durable.workflows WHERE run_id = :'r3'),
    '{"order": 17, "items": ["a", "b"]}', 'a reset run shows the input of the run it resets');
SELECT is(t.attrs('in-1', 'WorkflowExecutionStarted', 1, :'r3')->'input',
    '{"order": 17, "items": ["a", "b"]}', 'in its copy of WorkflowExecutionStarted');

-- ContinueAsNew with an input of its own.
SELECT t.decide('in-1', '[{"decisionType": "ContinueAsNewWorkflowExecution", "input": {"order": 18}}]') IS NOT NULL;
SELECT is((SELECT input FROM durable.workflows WHERE workflow_id = 'in-1' AND status = 'running'),
    '{"order": 18}', 'a run continued as new shows the input its decision gave');

SELECT * FROM finish();
ROLLBACK;

-- ExternalWorkflowExecutionSignaled and ExternalWorkflowExecutionCancelRequested
-- record the run id the decision gave, empty when it gave none, not the run
-- that was found: written from Cadence's and Temporal's transfer tasks
-- (requestSignalCompleted / requestCancelExternalExecutionCompleted), which
-- call AddExternalWorkflowExecutionSignaled and ...CancelRequested with the
-- task's TargetRunID, the decision's runId.
BEGIN;
SELECT plan(4);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

SELECT durable.start_workflow('s', NULL, 'sender', 'sender') IS NOT NULL AS started;
SELECT durable.start_workflow('t', NULL, 'target', 'target') AS target_run \gset
SELECT t.decide('sender', jsonb_build_array(
    '{"decisionType": "SignalExternalWorkflowExecution", "workflowId": "target", "signalName": "a"}'::jsonb,
    jsonb_build_object('decisionType', 'SignalExternalWorkflowExecution', 'workflowId', 'target',
                       'runId', :'target_run', 'signalName', 'b'),
    '{"decisionType": "RequestCancelExternalWorkflowExecution", "workflowId": "target"}'::jsonb)) IS NOT NULL;
SELECT is(t.attrs('sender', 'ExternalWorkflowExecutionSignaled', 1)->>'runId', '',
    'ExternalWorkflowExecutionSignaled: runId empty when the decision gave none');
SELECT is(t.attrs('sender', 'ExternalWorkflowExecutionSignaled', 2)->>'runId', :'target_run',
    'ExternalWorkflowExecutionSignaled: the runId the decision gave');
SELECT is(t.attrs('sender', 'ExternalWorkflowExecutionCancelRequested')->>'runId', '',
    'ExternalWorkflowExecutionCancelRequested: runId empty when the decision gave none');
SELECT is((SELECT count(*) FROM durable.get_history('target') WHERE event_type = 'WorkflowExecutionSignaled'),
    2::bigint, 'the target''s latest run got both signals');

SELECT * FROM finish();
ROLLBACK;

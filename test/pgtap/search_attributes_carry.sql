-- Search attributes of a continued run and of a child.  Written from
-- Cadence's and Temporal's ContinueAsNewWorkflowExecution and
-- StartChildWorkflowExecution decision (command) attributes, which carry
-- searchAttributes (and memo) for the new run, and from their mutable state's
-- continue-as-new, which keeps the current run's search attributes when the
-- decision gives none.  The new run and the child are found by list_workflows.
BEGIN;
SELECT plan(11);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

-- ContinueAsNew with searchAttributes and memo.
SELECT durable.start_workflow('wf', NULL, 'can', 'can') AS can1 \gset
SELECT t.decide('can', '[{"decisionType": "ContinueAsNewWorkflowExecution",
    "searchAttributes": {"Color": "blue"}, "memo": {"m": 1}}]') IS NOT NULL;
SELECT is((SELECT array_agg(workflow_id || '/' || status) FROM durable.list_workflows(search_attributes => '{"Color": "blue"}')),
    '{can/running}', 'list_workflows finds the new run by the search attributes ContinueAsNew gave');
SELECT isnt(durable.resolve_run_id('can'), :'can1'::uuid, 'it is the new run');
SELECT is(t.attrs('can', 'WorkflowExecutionStarted')->'searchAttributes', '{"Color": "blue"}',
    'its WorkflowExecutionStarted has them');
SELECT is(t.attrs('can', 'WorkflowExecutionContinuedAsNew', rid => :'can1')->'searchAttributes', '{"Color": "blue"}',
    'and so has the closed run''s WorkflowExecutionContinuedAsNew');
SELECT is(durable.describe_workflow('can')->'memo', '{"m": 1}', 'the memo is carried too');

-- Without searchAttributes the run's own carry over.
SELECT durable.start_workflow('wf', NULL, 'keep', 'keep') IS NOT NULL AS started;
SELECT t.decide('keep', '[{"decisionType": "UpsertWorkflowSearchAttributes", "searchAttributes": {"Color": "green"}},
    {"decisionType": "ContinueAsNewWorkflowExecution"}]') IS NOT NULL;
SELECT is((SELECT array_agg(workflow_id || '/' || status ORDER BY status) FROM durable.list_workflows(search_attributes => '{"Color": "green"}')),
    '{keep/continued_as_new,keep/running}', 'a ContinueAsNew without searchAttributes keeps the run''s own');

-- StartChildWorkflowExecution with searchAttributes.
SELECT durable.start_workflow('wf', NULL, 'parent', 'parent') IS NOT NULL AS started;
SELECT t.decide('parent', '[{"decisionType": "StartChildWorkflowExecution", "workflowId": "kid",
    "workflowType": "kid", "taskQueue": "kidq", "searchAttributes": {"Team": "red"}, "memo": {"k": 2}}]') IS NOT NULL;
SELECT is((SELECT array_agg(workflow_id || '/' || status) FROM durable.list_workflows(search_attributes => '{"Team": "red"}')),
    '{kid/running}', 'list_workflows finds the child by the search attributes its start gave');
SELECT is(t.attrs('parent', 'StartChildWorkflowExecutionInitiated')->'searchAttributes', '{"Team": "red"}',
    'StartChildWorkflowExecutionInitiated has them');
SELECT is(t.attrs('kid', 'WorkflowExecutionStarted')->'searchAttributes', '{"Team": "red"}',
    'the child''s WorkflowExecutionStarted has them');
SELECT throws_ok($$SELECT t.decide('parent', '[{"decisionType": "StartChildWorkflowExecution", "workflowType": "kid",
    "searchAttributes": "red"}]')$$, '22023', 'decisions[0].searchAttributes must be a JSON object',
    'searchAttributes must be an object');

-- A SQL workflow's child_workflow options.
CREATE ROLE sa_app;
CREATE SCHEMA sa;
GRANT USAGE ON SCHEMA sa TO sa_app;
CREATE FUNCTION sa.parent(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    RETURN durable.child_workflow('external_kid', NULL,
        '{"workflowId": "sqlkid", "searchAttributes": {"Team": "sql"}}');
END $$;
GRANT EXECUTE ON FUNCTION sa.parent(jsonb) TO sa_app;
SELECT durable.register_workflow('sa_parent', 'sa.parent(jsonb)', 'saq', run_as => 'sa_app');
SELECT durable.start_workflow('sa_parent', NULL, 'sqlparent', 'saq') IS NOT NULL AS started;
SELECT durable.run_tasks() > 0 AS ran;
SELECT is((SELECT array_agg(workflow_id || '/' || status) FROM durable.list_workflows(search_attributes => '{"Team": "sql"}')),
    '{sqlkid/running}', 'a SQL workflow''s child_workflow options carry searchAttributes');

SELECT * FROM finish();
ROLLBACK;

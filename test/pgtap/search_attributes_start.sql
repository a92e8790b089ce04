-- Search attributes given at start: start_workflow's and signal_with_start's
-- search_attributes, as Temporal's StartWorkflowExecution and
-- SignalWithStartWorkflowExecution requests carry them.  The run has them from
-- its first event on: WorkflowExecutionStarted shows them, list_workflows and
-- count_workflows find the run, describe_workflow shows them; an upsert merges
-- into them.  Bad input is refused with 22023 (WF006 over max_payload_size)
-- and starts nothing; a call without them is unchanged.
BEGIN;
SELECT plan(21);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

-- start_workflow
SELECT durable.start_workflow('wf', NULL, 'sa1', 'q',
    search_attributes => '{"Color": "blue", "Size": 3}') IS NOT NULL AS started;
SELECT is((SELECT array_agg(workflow_id || '/' || status)
             FROM durable.list_workflows(search_attributes => '{"Color": "blue"}')),
    '{sa1/running}', 'list_workflows finds a run by the search attributes its start gave');
SELECT is(durable.count_workflows(search_attributes => '{"Size": 3}'), 1::bigint,
    'count_workflows counts it');
SELECT is(durable.count_workflows(search_attributes => '{"Color": "red"}'), 0::bigint,
    'other values do not match');
SELECT is(durable.describe_workflow('sa1')->'searchAttributes', '{"Color": "blue", "Size": 3}',
    'describe_workflow shows them');
SELECT is(t.attrs('sa1', 'WorkflowExecutionStarted')->'searchAttributes',
    '{"Color": "blue", "Size": 3}', 'WorkflowExecutionStarted has them as searchAttributes');
SELECT t.decide('sa1', '[{"decisionType": "UpsertWorkflowSearchAttributes",
    "searchAttributes": {"Color": "green"}}]', 'q') IS NOT NULL AS decided;
SELECT is(durable.describe_workflow('sa1')->'searchAttributes', '{"Color": "green", "Size": 3}',
    'an upsert merges into them');

-- a ContinueAsNew without searchAttributes keeps them
SELECT durable.start_workflow('wf', NULL, 'sa-can', 'qc',
    search_attributes => '{"Team": "ops"}') AS can1 \gset
SELECT t.decide('sa-can', '[{"decisionType": "ContinueAsNewWorkflowExecution"}]', 'qc') IS NOT NULL AS decided;
SELECT is((SELECT array_agg(status ORDER BY status)
             FROM durable.list_workflows(search_attributes => '{"Team": "ops"}')),
    '{continued_as_new,running}', 'the continued run keeps them');

-- without: as before
SELECT durable.start_workflow('wf', NULL, 'plain', 'q') IS NOT NULL AS started;
SELECT is(durable.describe_workflow('plain')->'searchAttributes', 'null',
    'a start without search attributes has none');
SELECT ok(NOT t.attrs('plain', 'WorkflowExecutionStarted') ? 'searchAttributes',
    'and its WorkflowExecutionStarted has no searchAttributes');

-- signal_with_start: a new run
SELECT durable.signal_with_start('wf', 'sws', 'go', '{"n": 1}', NULL, 'qs',
    search_attributes => '{"Color": "amber"}') AS sws1 \gset
SELECT is((SELECT array_agg(workflow_id || '/' || status)
             FROM durable.list_workflows(search_attributes => '{"Color": "amber"}')),
    '{sws/running}', 'list_workflows finds a run signal_with_start started');
SELECT is(t.attrs('sws', 'WorkflowExecutionStarted')->'searchAttributes', '{"Color": "amber"}',
    'its WorkflowExecutionStarted has them');
SELECT is(durable.describe_workflow('sws')->'searchAttributes', '{"Color": "amber"}',
    'describe_workflow shows them');
-- a running one is only signalled
SELECT is(durable.signal_with_start('wf', 'sws', 'go', NULL, NULL, 'qs',
    search_attributes => '{"Color": "pink"}'), :'sws1'::uuid, 'a running run is signalled');
SELECT is(durable.describe_workflow('sws')->'searchAttributes', '{"Color": "amber"}',
    'and keeps its search attributes');

-- bad input: nothing started
SELECT durable.count_workflows() AS before \gset
SELECT throws_ok($$SELECT durable.start_workflow('wf', NULL, 'bad', 'q', search_attributes => '"blue"')$$,
    '22023', 'search_attributes must be a JSON object', 'start_workflow refuses a non-object');
SELECT throws_ok($$SELECT durable.start_workflow('wf', NULL, 'bad', 'q', search_attributes => '[1]')$$,
    '22023', 'search_attributes must be a JSON object', 'and an array');
SELECT throws_ok($$SELECT durable.signal_with_start('wf', 'bad', 's', search_attributes => '3')$$,
    '22023', 'search_attributes must be a JSON object', 'signal_with_start refuses a non-object');
SET LOCAL durable.max_payload_size = 1024;
SELECT throws_ok($$SELECT durable.start_workflow('wf', NULL, 'bad', 'q',
    search_attributes => jsonb_build_object('b', repeat('x', 2000)))$$,
    'WF006', 'search_attributes is too large', 'over max_payload_size: WF006');
RESET durable.max_payload_size;
SELECT is(durable.count_workflows(), :'before'::bigint, 'nothing was started');
SELECT is((SELECT count(*) FROM durable.runs WHERE workflow_id = 'bad'), 0::bigint,
    'no run of the refused id');

-- the old positional calls still resolve
SELECT lives_ok($$SELECT durable.start_workflow('wf', NULL, 'pos', 'q', 'default', NULL,
    'allow_duplicate_failed_only', NULL, NULL, '10 seconds', NULL, NULL, '{"m": 1}')$$,
    'a call with the 13 arguments of 0.5.0 still works');

SELECT * FROM finish();
ROLLBACK;

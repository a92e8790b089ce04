-- Children across nodes, on one server (docs/citus.md "Children across nodes";
-- src/engine/children.c "Across nodes"): a router says another node owns the ids
-- 'kid-...', and its relay hands each request to durable.receive_external() in this
-- same database, standing for that node.  A child whose id is owned elsewhere is started
-- through its parent's outbox: StartChildWorkflowExecutionInitiated in the decision's
-- transaction, ChildWorkflowExecutionStarted (or ...Failed) when tick relays it, once;
-- an answer that comes while the parent's decision task is started is buffered and its
-- event id noted when flushed.  A child's close relayed to its parent is written once
-- the parent has its Started, and answered busy before; a close policy relayed to the
-- child's node is applied there; a start whose parent closed first starts nothing.
BEGIN;
SELECT plan(41);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

CREATE SCHEMA rc;
CREATE TABLE rc.relayed (req jsonb);
CREATE FUNCTION rc.elsewhere(namespace text, workflow_id text) RETURNS boolean
    LANGUAGE sql AS $$ SELECT workflow_id LIKE 'kid-%' $$;
CREATE FUNCTION rc.relay(request jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO rc.relayed VALUES (request);
    RETURN durable.receive_external(request);
END $$;
INSERT INTO durable.router (name, owned_elsewhere, relay)
    VALUES ('test', 'rc.elsewhere(text,text)', 'rc.relay(jsonb)');

CREATE FUNCTION pg_temp.child(wid text, extra jsonb DEFAULT '{}') RETURNS jsonb LANGUAGE sql AS
    $$ SELECT jsonb_build_object('decisionType', 'StartChildWorkflowExecution', 'workflowId', wid,
                                 'workflowType', 'kid', 'taskQueue', 'kq_' || wid) || extra $$;
-- A child's close as the child's node relays it to the parent's.
CREATE FUNCTION pg_temp.closed(parent text, initiated int, kid text, kid_run uuid, close_id int,
                               event_type text DEFAULT 'ChildWorkflowExecutionFailed') RETURNS jsonb
LANGUAGE sql AS $$
    SELECT jsonb_build_object('kind', 'child_closed', 'namespace', 'default', 'workflowId', parent,
        'parentRunId', durable.resolve_run_id(parent), 'parentInitiatedEventId', initiated,
        'eventType', event_type,
        'attributes', jsonb_build_object('namespace', 'default', 'workflowId', kid,
                                         'runId', kid_run, 'workflowType', 'kid', 'reason', 'boom'),
        'initiator', jsonb_build_object('namespace', 'default', 'workflowId', kid,
                                        'runId', kid_run, 'initiatedEventId', close_id)) $$;

-- ---- A start through the outbox ----
SELECT durable.start_workflow('parent', NULL, 'p1', 'pq1', decision_timeout => '1 hour') AS p1run \gset
SELECT t.decide('p1', jsonb_build_array(pg_temp.child('kid-1', '{"input": {"n": 1}, "control": "c1"}')), 'pq1')
    IS NOT NULL;
SELECT is(t.events('p1', from_id => 5), '{StartChildWorkflowExecutionInitiated}',
    'the decision writes Initiated, and no decision task: the start waits in the outbox');
SELECT is((SELECT count(*) FROM durable.timers WHERE run_id = :'p1run' AND kind = 'external'), 1::bigint,
    'one request in the parent''s outbox');
SELECT is((SELECT count(*) FROM durable.runs WHERE workflow_id = 'kid-1'), 0::bigint, 'no child yet');
SELECT is(durable.describe_workflow('p1')->'pendingChildren',
    '[{"runId": null, "namespace": "default", "workflowId": "kid-1", "workflowType": "kid",
       "startedEventId": null, "initiatedEventId": 5, "parentClosePolicy": "TERMINATE"}]',
    'describe_workflow shows the pending child, without a run yet');
SELECT ok(durable.tick() >= 1, 'tick relays it');
SELECT is(t.events('p1', from_id => 5),
    '{StartChildWorkflowExecutionInitiated,ChildWorkflowExecutionStarted,DecisionTaskScheduled}',
    'the owner''s answer: Started, and a decision task');
SELECT is(t.attrs('p1', 'ChildWorkflowExecutionStarted')->>'runId', durable.resolve_run_id('kid-1')::text,
    'Started names the child''s run');
SELECT is(durable.describe_workflow('kid-1')->'parent'->>'runId', :'p1run', 'the child names its parent');
SELECT is(t.attrs('kid-1', 'WorkflowExecutionStarted')->'input', '{"n": 1}', 'and has its input');
SELECT is((SELECT started_event_id FROM durable.children WHERE parent_run_id = :'p1run'), 6::bigint,
    'the parent waits for the child, its Started noted');
SELECT is(durable.describe_workflow('p1')->'pendingChildren'->0->>'runId', durable.resolve_run_id('kid-1')::text,
    'describe_workflow shows the child once, with its run');
SELECT is((SELECT count(*) FROM durable.timers WHERE run_id = :'p1run' AND kind = 'external'), 0::bigint,
    'the outbox is empty');
SELECT is(rc.relay((SELECT req FROM rc.relayed WHERE req->>'workflowId' = 'kid-1')) - 'runId',
    '{"outcome": "started", "duplicate": true}', 'the start relayed again is answered as a duplicate');
SELECT is((SELECT count(*) FROM durable.runs WHERE workflow_id = 'kid-1'), 1::bigint, 'and starts nothing');

-- The child completes; its parent is here, so it hears of it as always.
SELECT t.decide('kid-1', '[{"decisionType": "CompleteWorkflowExecution", "result": "kid done"}]', 'kq_kid-1')
    IS NOT NULL;
SELECT is(t.attrs('p1', 'ChildWorkflowExecutionCompleted') - 'runId',
    '{"result": "kid done", "namespace": "default", "workflowId": "kid-1", "workflowType": "kid",
      "startedEventId": 6, "initiatedEventId": 5}',
    'the parent gets the child''s result, naming its initiated and started events');

-- ---- A child id taken on its owner ----
SELECT durable.start_workflow('other', NULL, 'kid-taken', 'oq');
SELECT t.decide('p1', jsonb_build_array(pg_temp.child('kid-taken', '{"control": "c2"}')), 'pq1') IS NOT NULL;
SELECT ok(durable.tick() >= 1, 'tick relays the second start');
SELECT is(t.attrs('p1', 'StartChildWorkflowExecutionFailed') - 'decisionTaskCompletedEventId',
    '{"cause": "WORKFLOW_ALREADY_RUNNING", "control": "c2", "namespace": "default", "workflowId": "kid-taken",
      "workflowType": "kid", "initiatedEventId": 11}',
    'an id running on its owner: Failed, with the cause and the control');

-- ---- The answer comes while the parent's decision task is started ----
SELECT durable.start_workflow('parent', NULL, 'p2', 'pq2', decision_timeout => '1 hour') AS p2run \gset
SELECT t.decide('p2', jsonb_build_array(pg_temp.child('kid-2')), 'pq2') IS NOT NULL;
SELECT durable.signal_workflow('p2', 'poke');
SELECT durable.poll_decision_task('pq2')->>'taskToken' AS p2tok \gset
SELECT ok(durable.tick() >= 1, 'tick relays the start while the parent''s decision task runs');
SELECT is((SELECT started_event_id FROM durable.children WHERE parent_run_id = :'p2run'), 0::bigint,
    'Started is buffered: its event id is not known yet');
SELECT is(durable.receive_external(pg_temp.closed('p2', 5, 'kid-2', durable.resolve_run_id('kid-2'), 4))->>'outcome',
    'busy', 'a close of that child before the parent has its Started is answered busy');
SELECT durable.complete_decision_task(:'p2tok', '[]');
SELECT is((SELECT started_event_id FROM durable.children WHERE parent_run_id = :'p2run'),
    (SELECT event_id FROM durable.get_history('p2') WHERE event_type = 'ChildWorkflowExecutionStarted'),
    'flushed with the decision task''s completion, Started''s event id is noted');
SELECT is(durable.receive_external(pg_temp.closed('p2', 5, 'kid-2', durable.resolve_run_id('kid-2'), 4))->>'outcome',
    'done', 'then the close is written');
SELECT is(t.attrs('p2', 'ChildWorkflowExecutionFailed')->>'startedEventId',
    (SELECT event_id FROM durable.get_history('p2') WHERE event_type = 'ChildWorkflowExecutionStarted')::text,
    'naming the Started event');
SELECT is(durable.receive_external(pg_temp.closed('p2', 5, 'kid-2', durable.resolve_run_id('kid-2'), 4)) - 'runId',
    '{"outcome": "done", "duplicate": true}', 'a close relayed again is a duplicate');
SELECT is((SELECT count(*) FROM durable.get_history('p2') WHERE event_type = 'ChildWorkflowExecutionFailed'),
    1::bigint, 'written once');
SELECT is(durable.receive_external(pg_temp.closed('p2', 5, 'kid-2', durable.resolve_run_id('kid-2'), 8))->>'outcome',
    'not_found', 'a close of a child the parent no longer waits for is not found');

-- ---- A close before the start was relayed, and a close policy ----
SELECT durable.start_workflow('parent', NULL, 'p3', 'pq3', decision_timeout => '1 hour') AS p3run \gset
SELECT t.decide('p3', jsonb_build_array(pg_temp.child('kid-3')), 'pq3') IS NOT NULL;
SELECT is(durable.receive_external(pg_temp.closed('p3', 5, 'kid-3', gen_random_uuid(), 4))->>'outcome',
    'busy', 'a close while the start is still in the parent''s outbox is answered busy');
SELECT ok(durable.tick() >= 1, 'tick relays the start');
SELECT is(durable.receive_external(jsonb_build_object('kind', 'close_policy', 'namespace', 'default',
        'workflowId', 'kid-3', 'runId', durable.resolve_run_id('kid-3'), 'policy', 'TERMINATE',
        'parent', jsonb_build_object('namespace', 'default', 'workflowId', 'p3', 'runId', :'p3run')))->>'outcome',
    'done', 'a close policy relayed to the child''s node is applied');
SELECT is(durable.describe_workflow('kid-3')->>'status', 'terminated', 'the child is terminated');

-- ---- A parent that closes before its start is relayed ----
SELECT durable.start_workflow('parent', NULL, 'p4', 'pq4', decision_timeout => '1 hour') AS p4run \gset
SELECT t.decide('p4', jsonb_build_array(pg_temp.child('kid-4')), 'pq4') IS NOT NULL;
SELECT durable.terminate_workflow('p4', 'changed my mind');
SELECT ok(durable.tick() >= 1, 'tick relays the start of a closed parent');
SELECT is((SELECT count(*) FROM durable.runs WHERE workflow_id = 'kid-4'), 0::bigint,
    'the child is not started');
SELECT is((SELECT count(*) FROM durable.timers WHERE run_id = :'p4run' AND kind = 'external'), 0::bigint,
    'and the outbox is empty');

-- ---- A relay that answers started without the child's run: an error (22000), the
-- start kept in the outbox ----
CREATE FUNCTION rc.bad_relay(request jsonb) RETURNS jsonb LANGUAGE sql AS
    $$ SELECT '{"outcome": "started"}'::jsonb $$;
UPDATE durable.router SET relay = 'rc.bad_relay(jsonb)';
SELECT durable.start_workflow('parent', NULL, 'p5', 'pq5', decision_timeout => '1 hour') AS p5run \gset
SELECT t.decide('p5', jsonb_build_array(pg_temp.child('kid-5')), 'pq5') IS NOT NULL;
SELECT throws_ok($$SELECT durable.tick()$$, '22000',
    'the router''s relay answered a child''s start without its runId',
    'a start answered without the child''s run is an error');
SELECT is(t.events('p5', from_id => 5), '{StartChildWorkflowExecutionInitiated}', 'the parent gets no answer');

-- ---- Requests that are not ----
SELECT throws_ok($$SELECT durable.receive_external('{"kind": "start_child", "namespace": "default"}')$$,
    '22023', 'request is not a start_child request', 'a start without its workflow and parent is 22023');
SELECT throws_ok($$SELECT durable.receive_external(jsonb_set(pg_temp.closed('p1', 5, 'kid-1', gen_random_uuid(), 4),
                                                              '{eventType}', '"WorkflowExecutionSignaled"'))$$,
    '22023', 'request is not a child_closed request', 'a close with an event that is not a child''s close is 22023');
-- A start is checked as the parent's node checked its decision.
CREATE FUNCTION pg_temp.start_req(extra jsonb) RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_build_object('kind', 'start_child', 'namespace', 'default', 'workflowId', 'kid-x',
        'workflowType', 'kid', 'taskQueue', 'kq', 'workflowIdReusePolicy', 'allow_duplicate',
        'parentClosePolicy', 'ABANDON',
        'initiator', jsonb_build_object('namespace', 'default', 'workflowId', 'px',
                                        'runId', gen_random_uuid(), 'initiatedEventId', 5)) || extra $$;
SELECT throws_ok($$SELECT durable.receive_external(pg_temp.start_req('{"taskStartToCloseTimeoutSeconds": 1e12}'))$$,
    '22023', NULL, 'a start with a timeout past 100 years is 22023');
SELECT throws_ok($$SELECT durable.receive_external(pg_temp.start_req('{"priority": 9}'))$$,
    '22023', 'priority must be between 1 and 5', 'a start with a priority out of 1..5 is 22023');
SELECT is((SELECT count(*) FROM durable.runs WHERE workflow_id = 'kid-x'), 0::bigint, 'neither started anything');
SELECT throws_ok($$SELECT durable.receive_external('{"kind": "launch"}')$$,
    '22023', 'request has an unknown kind', 'an unknown kind is 22023');

SELECT * FROM finish();
ROLLBACK;

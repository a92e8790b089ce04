-- The router hook on one server (docs/api.md "Child workflows", "Across nodes";
-- src/store/router.c): without a row of durable.router a signal to a workflow that is
-- not here fails as always; with one whose owned_elsewhere says another node owns the
-- target, the request goes to an external timer (the outbox) and tick() relays it,
-- writing the relay's answer (done, not found, busy: tried again) to the sender's
-- history.  A target that is here is signalled here whatever the router says.
-- durable.receive_external delivers a request once and answers a repeat as a
-- duplicate.  Router functions with the wrong signature or a non-superuser owner are
-- refused; dropped ones are ignored.
BEGIN;
SELECT plan(23);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

CREATE SCHEMA rt;
CREATE TABLE rt.relayed (req jsonb);
-- Another node owns every id that starts with 'remote-'.
CREATE FUNCTION rt.elsewhere(namespace text, workflow_id text) RETURNS boolean
    LANGUAGE sql AS $$ SELECT workflow_id LIKE 'remote-%' $$;
-- The other node: 'remote-busy' is busy once, 'remote-none' does not exist, the rest
-- are signalled.
CREATE FUNCTION rt.relay(request jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO rt.relayed VALUES (request);
    IF request->>'workflowId' = 'remote-none' THEN
        RETURN '{"outcome": "not_found"}';
    ELSIF request->>'workflowId' = 'remote-odd' THEN
        RETURN '{"outcome": "maybe"}';
    ELSIF request->>'workflowId' = 'remote-busy'
          AND (SELECT count(*) FROM rt.relayed r WHERE r.req->>'workflowId' = 'remote-busy') = 1 THEN
        RETURN '{"outcome": "busy"}';
    END IF;
    RETURN '{"outcome": "done", "runId": "00000000-0000-0000-0000-000000000001"}';
END $$;

CREATE FUNCTION pg_temp.signal(wid text) RETURNS jsonb LANGUAGE sql AS
    $$ SELECT jsonb_build_object('decisionType', 'SignalExternalWorkflowExecution',
                                 'workflowId', wid, 'signalName', 'ping', 'input', '{"n": 1}') $$;

-- No router: not found, as always.
SELECT durable.start_workflow('sender', NULL, 's1', 'rq1', decision_timeout => '1 hour');
SELECT t.decide('s1', jsonb_build_array(pg_temp.signal('remote-a')), 'rq1') IS NOT NULL;
SELECT is(t.events('s1', from_id => 5),
    '{SignalExternalWorkflowExecutionInitiated,SignalExternalWorkflowExecutionFailed,DecisionTaskScheduled}',
    'without a router, a target that is not here is not found at once');

INSERT INTO durable.router (name, owned_elsewhere, relay)
    VALUES ('test', 'rt.elsewhere(text,text)', 'rt.relay(jsonb)');

-- A target owned elsewhere: to the outbox, relayed by tick.
SELECT durable.start_workflow('sender', NULL, 's2', 'rq2', decision_timeout => '1 hour') AS s2run \gset
SELECT durable.start_workflow('target', NULL, 'remote-here', 'rt');
SELECT t.decide('s2', jsonb_build_array(pg_temp.signal('remote-a'), pg_temp.signal('remote-none'),
                                        pg_temp.signal('remote-busy'), pg_temp.signal('remote-here')), 'rq2')
    IS NOT NULL;
SELECT is(t.events('s2', from_id => 5),
    '{SignalExternalWorkflowExecutionInitiated,SignalExternalWorkflowExecutionInitiated,
      SignalExternalWorkflowExecutionInitiated,SignalExternalWorkflowExecutionInitiated,
      ExternalWorkflowExecutionSignaled,DecisionTaskScheduled}',
    'with a router, requests owned elsewhere wait; the one whose target is here is signalled at once');
SELECT is((SELECT count(*) FROM t.events('remote-here') e(a), unnest(e.a) x WHERE x = 'WorkflowExecutionSignaled'),
    1::bigint, 'a target here gets it here, whatever the router says');
SELECT is((SELECT array_agg(ref_id ORDER BY ref_id) FROM durable.timers WHERE kind = 'external'),
    '{5,6,7}'::bigint[], 'the three others are in the outbox');
SELECT is((SELECT count(*) FROM rt.relayed), 0::bigint, 'and nothing was relayed in the decision''s transaction');

SELECT ok(durable.tick() >= 2, 'tick relays them');
SELECT is((SELECT array_agg(ref_id ORDER BY ref_id) FROM durable.timers WHERE kind = 'external'),
    '{7}'::bigint[], 'the busy one stays in the outbox');
SELECT is((SELECT req - 'input' FROM rt.relayed WHERE req->>'workflowId' = 'remote-a'),
    jsonb_build_object('cancel', false, 'namespace', 'default', 'workflowId', 'remote-a', 'runId', NULL,
        'signalName', 'ping', 'control', NULL, 'childWorkflowOnly', false,
        'initiator', jsonb_build_object('namespace', 'default', 'workflowId', 's2', 'runId', :'s2run'::uuid,
                                        'initiatedEventId', 5),
        'decisionTaskCompletedEventId', 4),
    'the relay gets the whole request, its initiator named');
SELECT ok(durable.tick() >= 1, 'the next tick relays the busy one again');
SELECT is(t.events('s2', from_id => 11),
    '{ExternalWorkflowExecutionSignaled,SignalExternalWorkflowExecutionFailed,ExternalWorkflowExecutionSignaled}',
    'the answers: signaled, not found, signaled once no longer busy');
SELECT is(t.attrs('s2', 'SignalExternalWorkflowExecutionFailed'),
    '{"initiatedEventId": 6, "namespace": "default", "workflowId": "remote-none",
      "cause": "EXTERNAL_WORKFLOW_EXECUTION_NOT_FOUND", "decisionTaskCompletedEventId": 4}'::jsonb,
    'not found elsewhere: Failed, with the cause');
SELECT is((SELECT count(*) FROM durable.timers WHERE kind = 'external'), 0::bigint, 'the outbox is empty');

-- The receiving side: delivered once, a repeat answered from the note.
SELECT durable.start_workflow('target', NULL, 'tgt', 'rt') AS tgtrun \gset
SELECT is(durable.receive_external(jsonb_build_object('namespace', 'default', 'workflowId', 'tgt',
        'signalName', 'hi', 'initiator', jsonb_build_object('namespace', 'default', 'workflowId', 'far',
            'runId', '00000000-0000-0000-0000-0000000000aa', 'initiatedEventId', 9))),
    jsonb_build_object('outcome', 'done', 'runId', :'tgtrun'::uuid), 'receive_external delivers a request');
SELECT is(durable.receive_external(jsonb_build_object('namespace', 'default', 'workflowId', 'tgt',
        'signalName', 'hi', 'initiator', jsonb_build_object('namespace', 'default', 'workflowId', 'far',
            'runId', '00000000-0000-0000-0000-0000000000aa', 'initiatedEventId', 9))),
    jsonb_build_object('outcome', 'done', 'runId', :'tgtrun'::uuid, 'duplicate', true),
    'and answers the same request again as a duplicate');
SELECT is(t.attrs('tgt', 'WorkflowExecutionSignaled')->'externalWorkflowExecution',
    '{"namespace": "default", "workflowId": "far", "runId": "00000000-0000-0000-0000-0000000000aa",
      "initiatedEventId": 9}'::jsonb, 'the signal names its initiator');
SELECT is((SELECT count(*) FROM durable.get_history('tgt') WHERE event_type = 'WorkflowExecutionSignaled'),
    1::bigint, 'once');
SELECT throws_ok($$SELECT durable.receive_external('{"namespace": "default", "workflowId": "tgt"}')$$,
    '22023', 'request is not a signal or cancel request', 'a request without its initiator is refused');

SELECT throws_ok($$SELECT durable.receive_external(NULL)$$,
    '22004', 'request must not be null', 'a null request is refused');

-- A relay that answers no outcome is an error (22000): the sender's history gets no
-- answer and the request stays in the outbox.
SELECT durable.start_workflow('sender', NULL, 's4', 'rq4', decision_timeout => '1 hour') AS s4run \gset
SELECT t.decide('s4', jsonb_build_array(pg_temp.signal('remote-odd')), 'rq4') IS NOT NULL;
SELECT throws_ok($$SELECT durable.tick()$$, '22000',
    'the router''s relay answered {"outcome": "maybe"}, not an outcome of durable.receive_external()',
    'a relay answering no outcome is an error');
SELECT is((SELECT count(*) FROM durable.get_history('s4')
            WHERE event_type IN ('ExternalWorkflowExecutionSignaled', 'SignalExternalWorkflowExecutionFailed')),
    0::bigint, 'the sender gets no answer');
SELECT is((SELECT count(*) FROM durable.timers WHERE run_id = :'s4run' AND kind = 'external'),
    1::bigint, 'and the request stays in the outbox');

-- A router function a superuser does not own is refused; one dropped is ignored.
CREATE ROLE rt_owner;
ALTER FUNCTION rt.elsewhere(text, text) OWNER TO rt_owner;
SELECT durable.start_workflow('sender', NULL, 's3', 'rq3', decision_timeout => '1 hour');
SELECT throws_ok($$SELECT t.decide('s3', jsonb_build_array(pg_temp.signal('remote-b')), 'rq3')$$,
    '55000', NULL, 'a router function owned by a role that is not a superuser is refused');
ALTER FUNCTION rt.elsewhere(text, text) OWNER TO CURRENT_USER;
DROP FUNCTION rt.relay(jsonb);
SELECT t.decide('s3', jsonb_build_array(pg_temp.signal('remote-b')), 'rq3') IS NOT NULL;
SELECT is(t.events('s3', from_id => 5),
    '{SignalExternalWorkflowExecutionInitiated,SignalExternalWorkflowExecutionFailed,DecisionTaskScheduled}',
    'a router whose function was dropped is ignored');

SELECT * FROM finish();
ROLLBACK;

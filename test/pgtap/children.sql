-- Child workflows (docs/api.md "Child workflows"), parent close policies and signals or cancel
-- requests to other workflows: StartChildWorkflowExecution,
-- SignalExternalWorkflowExecution, RequestCancelExternalWorkflowExecution.
BEGIN;
SELECT plan(68);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

CREATE FUNCTION pg_temp.later(secs int) RETURNS void LANGUAGE sql AS
    $$ SELECT set_config('durable.test_time', (durable.now() + secs * interval '1 second')::text, true) $$;
CREATE FUNCTION pg_temp.child(wid text, extra jsonb DEFAULT '{}') RETURNS jsonb LANGUAGE sql AS
    $$ SELECT jsonb_build_object('decisionType', 'StartChildWorkflowExecution',
                                 'workflowId', wid, 'workflowType', 'kid', 'taskQueue', wid) || extra $$;
CREATE FUNCTION pg_temp.footprint() RETURNS text LANGUAGE sql AS $$
    SELECT format('runs=%s history=%s ready=%s timers=%s children=%s',
        (SELECT count(*) FROM durable.runs), (SELECT count(*) FROM durable.history),
        (SELECT count(*) FROM durable.ready_tasks), (SELECT count(*) FROM durable.timers),
        (SELECT count(*) FROM durable.children)) $$;

-- A child that completes.
SELECT durable.start_workflow('parent', '{}', 'p1', 'p1', decision_timeout => '1 hour') AS p1run \gset
SELECT t.decide('p1', jsonb_build_array(pg_temp.child('c1', '{"input": {"x": 1}, "control": "ctl"}'))) IS NOT NULL;
SELECT is(t.events('p1', from_id => 4),
    '{DecisionTaskCompleted,StartChildWorkflowExecutionInitiated,ChildWorkflowExecutionStarted,DecisionTaskScheduled}',
    'the child starts at once: Initiated, then ChildWorkflowExecutionStarted and a decision task');
SELECT is(t.attrs('p1', 'StartChildWorkflowExecutionInitiated') - '{taskStartToCloseTimeoutSeconds,input}'::text[],
    '{"namespace": "default", "workflowId": "c1", "workflowType": "kid", "taskQueue": "c1",
      "parentClosePolicy": "TERMINATE", "workflowIdReusePolicy": "allow_duplicate_failed_only",
      "control": "ctl", "decisionTaskCompletedEventId": 4}'::jsonb,
    'StartChildWorkflowExecutionInitiated carries the request, TERMINATE by default');
SELECT is(t.attrs('p1', 'ChildWorkflowExecutionStarted'),
    jsonb_build_object('initiatedEventId', 5, 'namespace', 'default', 'workflowId', 'c1',
        'workflowType', 'kid', 'runId', durable.resolve_run_id('c1')),
    'ChildWorkflowExecutionStarted names the child run');
SELECT is(t.attrs('c1', 'WorkflowExecutionStarted')->'parentWorkflowExecution',
    jsonb_build_object('namespace', 'default', 'workflowId', 'p1', 'runId', :'p1run'::uuid, 'initiatedEventId', 5),
    'the child''s WorkflowExecutionStarted names its parent');
SELECT is(t.attrs('c1', 'WorkflowExecutionStarted')->'input', '{"x": 1}', 'the child gets its input');
SELECT is(durable.describe_workflow('p1')->'pendingChildren',
    jsonb_build_array(jsonb_build_object('namespace', 'default', 'workflowId', 'c1',
        'runId', durable.resolve_run_id('c1'), 'workflowType', 'kid', 'initiatedEventId', 5,
        'startedEventId', 6, 'parentClosePolicy', 'TERMINATE')),
    'describe_workflow shows the pending child');
SELECT is(durable.describe_workflow('c1')->'parent'->>'workflowId', 'p1', 'and the child its parent');
SELECT t.decide('c1', '[{"decisionType": "CompleteWorkflowExecution", "result": {"ok": true}}]') IS NOT NULL;
SELECT is(t.events('p1', from_id => 7), '{DecisionTaskScheduled,ChildWorkflowExecutionCompleted}',
    'the parent hears of the completion in the child''s transaction');
SELECT is(t.attrs('p1', 'ChildWorkflowExecutionCompleted'),
    jsonb_build_object('initiatedEventId', 5, 'startedEventId', 6, 'namespace', 'default',
        'workflowId', 'c1', 'runId', durable.resolve_run_id('c1'), 'workflowType', 'kid',
        'result', '{"ok": true}'::jsonb),
    'ChildWorkflowExecutionCompleted carries the result');
SELECT is(durable.describe_workflow('p1')->'pendingChildren', '[]', 'no pending child left');

-- A child's retries are invisible to its parent; its chain's end is not.
SELECT t.decide('p1', jsonb_build_array(pg_temp.child('c2',
    jsonb_build_object('retryPolicy', durable.retry_policy('10 seconds', maximum_attempts => 2))))) IS NOT NULL;
SELECT durable.resolve_run_id('c2') AS c2first \gset
SELECT t.decide('c2', '[{"decisionType": "FailWorkflowExecution", "reason": "bad"}]') IS NOT NULL;
SELECT is(durable.describe_workflow('c2')->>'attempt', '2', 'the child is retried');
SELECT is(t.events('p1', from_id => 13), '{DecisionTaskScheduled}', 'and the parent hears nothing of it');
SELECT is(durable.describe_workflow('c2')->'parent'->>'workflowId', 'p1', 'the retry keeps the parent');
SELECT pg_temp.later(10);
SELECT is(durable.tick(), 1, 'the retry''s backoff passes');
SELECT t.decide('c2', '[{"decisionType": "FailWorkflowExecution", "reason": "bad again", "details": {"n": 2}}]') IS NOT NULL;
SELECT is(t.attrs('p1', 'ChildWorkflowExecutionFailed') - 'runId',
    '{"initiatedEventId": 11, "startedEventId": 12, "namespace": "default", "workflowId": "c2",
      "workflowType": "kid", "reason": "bad again", "details": {"n": 2}}'::jsonb,
    'the last failure reaches the parent');
SELECT is((t.attrs('p1', 'ChildWorkflowExecutionFailed')->>'runId')::uuid, durable.resolve_run_id('c2'),
    'naming the chain''s last run');
SELECT isnt(durable.resolve_run_id('c2'), :'c2first'::uuid, 'which is not the first');

-- Canceled, through RequestCancelExternalWorkflowExecution of the parent.
SELECT t.decide('p1', jsonb_build_array(pg_temp.child('c3'))) IS NOT NULL;
SELECT t.decide('p1', '[{"decisionType": "RequestCancelExternalWorkflowExecution", "workflowId": "c3", "childWorkflowOnly": true, "control": "stop"}]') IS NOT NULL;
SELECT is(t.events('p1', from_id => 21),
    '{DecisionTaskCompleted,RequestCancelExternalWorkflowExecutionInitiated,ExternalWorkflowExecutionCancelRequested,DecisionTaskScheduled}',
    'RequestCancelExternal: Initiated, then ExternalWorkflowExecutionCancelRequested');
SELECT is(t.attrs('p1', 'ExternalWorkflowExecutionCancelRequested'),
    jsonb_build_object('initiatedEventId', 22, 'namespace', 'default', 'workflowId', 'c3',
        'runId', '', 'control', 'stop'),
    'with the run id the decision gave: none (Cadence''s TargetRunID)');
SELECT is(t.attrs('c3', 'WorkflowExecutionCancelRequested')->'externalWorkflowExecution',
    jsonb_build_object('namespace', 'default', 'workflowId', 'p1', 'runId', :'p1run'::uuid, 'initiatedEventId', 22),
    'the child''s WorkflowExecutionCancelRequested names who asked');
SELECT ok((durable.describe_workflow('c3')->>'cancelRequested')::boolean, 'the child''s cancel flag is set');
SELECT t.decide('c3', '[{"decisionType": "CancelWorkflowExecution", "details": "bye"}]') IS NOT NULL;
SELECT is(t.attrs('p1', 'ChildWorkflowExecutionCanceled')->'details', '"bye"', 'ChildWorkflowExecutionCanceled');

-- Timed out; and a child event waits behind a started decision task.
SELECT t.decide('p1', jsonb_build_array(pg_temp.child('c4', '{"workflowRunTimeoutSeconds": 60}'))) IS NOT NULL;
SELECT durable.poll_decision_task('p1') AS ptask \gset
SELECT pg_temp.later(60);
SELECT durable.tick() > 0;
SELECT is(t.attrs('p1', 'ChildWorkflowExecutionTimedOut'), NULL, 'buffered while the parent decides');
SELECT durable.complete_decision_task(:'ptask'::jsonb->>'taskToken', '[]');
SELECT is(t.events('p1', from_id => 32), '{DecisionTaskCompleted,ChildWorkflowExecutionTimedOut,DecisionTaskScheduled}',
    'then follows the decision task''s completion, with a new decision task');
SELECT is(t.attrs('p1', 'ChildWorkflowExecutionTimedOut')->>'timeoutType', 'START_TO_CLOSE', 'ChildWorkflowExecutionTimedOut');

-- Terminated; a cron child continues unseen by its parent until then.
SELECT t.decide('p1', jsonb_build_array(pg_temp.child('c5', '{"cronSchedule": "* * * * *", "parentClosePolicy": "ABANDON"}'))) IS NOT NULL;
SELECT is(durable.describe_workflow('c5')->>'cronSchedule', '* * * * *', 'a child accepts a cron schedule');
SELECT t.at(durable.cron_next('* * * * *')::text);
SELECT durable.tick() > 0;
SELECT t.decide('c5', '[{"decisionType": "CompleteWorkflowExecution", "result": 1}]') IS NOT NULL;
SELECT is((SELECT count(*)::int FROM durable.runs WHERE workflow_id = 'c5'), 2, 'the cron child continued as new');
SELECT is(t.attrs('p1', 'ChildWorkflowExecutionCompleted', 2), NULL, 'the parent heard nothing');
SELECT durable.terminate_workflow('c5', 'enough');
SELECT is(t.attrs('p1', 'ChildWorkflowExecutionTerminated') - 'runId',
    '{"initiatedEventId": 37, "startedEventId": 38, "namespace": "default", "workflowId": "c5", "workflowType": "kid"}'::jsonb,
    'ChildWorkflowExecutionTerminated');

-- A workflow id already running, or refused by the reuse policy.
SELECT durable.start_workflow('other', NULL, 'taken', 'taken');
SELECT t.decide('p1', jsonb_build_array(pg_temp.child('taken'),
    pg_temp.child('c1', '{"workflowIdReusePolicy": "RejectDuplicate"}'),
    pg_temp.child('c1', '{"workflowIdReusePolicy": "AllowDuplicate"}'))) IS NOT NULL;
SELECT is(t.events('p1', from_id => 42),
    '{DecisionTaskCompleted,StartChildWorkflowExecutionInitiated,StartChildWorkflowExecutionFailed,StartChildWorkflowExecutionInitiated,StartChildWorkflowExecutionFailed,StartChildWorkflowExecutionInitiated,ChildWorkflowExecutionStarted,DecisionTaskScheduled}',
    'a running id and a refused reuse fail the start, not the completion');
SELECT is(t.attrs('p1', 'StartChildWorkflowExecutionFailed'),
    '{"initiatedEventId": 43, "namespace": "default", "workflowId": "taken", "workflowType": "kid",
      "cause": "WORKFLOW_ALREADY_RUNNING", "decisionTaskCompletedEventId": 42}'::jsonb,
    'StartChildWorkflowExecutionFailed');
SELECT is(durable.describe_workflow('taken')->'parent', 'null', 'the running workflow is left alone');
SELECT is(jsonb_array_length(durable.describe_workflow('p1')->'pendingChildren'), 1, 'one pending child');

-- The parent closes: TERMINATE (the c1 of above) by default.
SELECT t.decide('p1', '[{"decisionType": "CompleteWorkflowExecution"}]') IS NOT NULL;
SELECT is(durable.describe_workflow('c1')->>'status', 'terminated', 'TERMINATE: the child is terminated');
SELECT is(t.attrs('c1', 'WorkflowExecutionTerminated') - 'identity',
    jsonb_build_object('reason', 'by parent close policy', 'details',
        jsonb_build_object('namespace', 'default', 'workflowId', 'p1', 'runId', :'p1run'::uuid)),
    'with reason "by parent close policy"');
SELECT is(t.events('p1', from_id => 52), '{WorkflowExecutionCompleted}', 'and nothing is written to the closed parent');

-- Each policy on each way a parent closes.
CREATE FUNCTION pg_temp.policy_case(pid text, policy text, how text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    t jsonb;
    d jsonb;
    c jsonb;
BEGIN
    PERFORM durable.start_workflow('parent', NULL, pid, pid,
        retry_policy => CASE WHEN how = 'retry' THEN durable.retry_policy('1 second', maximum_attempts => 3) END,
        run_timeout => CASE WHEN how = 'timeout' THEN interval '1 minute' END,
        cron_schedule => CASE WHEN how = 'cron' THEN '* * * * *' END);
    IF how = 'cron' THEN
        PERFORM t.at(durable.cron_next('* * * * *')::text);
        PERFORM durable.tick();
    END IF;
    PERFORM t.decide(pid, jsonb_build_array(pg_temp.child(pid || '-c',
        jsonb_build_object('parentClosePolicy', policy))));
    d := CASE how
        WHEN 'complete' THEN '{"decisionType": "CompleteWorkflowExecution"}'
        WHEN 'cron' THEN '{"decisionType": "CompleteWorkflowExecution"}'
        WHEN 'fail' THEN '{"decisionType": "FailWorkflowExecution"}'
        WHEN 'retry' THEN '{"decisionType": "FailWorkflowExecution"}'
        WHEN 'cancel' THEN '{"decisionType": "CancelWorkflowExecution"}'
        WHEN 'decider' THEN '{"decisionType": "ContinueAsNewWorkflowExecution"}'
    END;
    IF d IS NOT NULL THEN
        PERFORM t.decide(pid, jsonb_build_array(d));
    ELSIF how = 'terminate' THEN
        PERFORM durable.terminate_workflow(pid);
    ELSIF how = 'timeout' THEN
        PERFORM pg_temp.later(60);
        PERFORM durable.tick();
    END IF;
    c := durable.describe_workflow(pid || '-c');
    RETURN format('%s %s cancel=%s', durable.describe_workflow(pid, run_id => durable.resolve_run_id(pid, run_id =>
                (SELECT run_id FROM durable.runs WHERE workflow_id = pid ORDER BY run_seq LIMIT 1)))->>'status',
        c->>'status', c->>'cancelRequested');
END $$;

SELECT is(pg_temp.policy_case('t-complete', 'TERMINATE', 'complete'), 'completed terminated cancel=false', 'TERMINATE on completion');
SELECT is(pg_temp.policy_case('t-fail', 'TERMINATE', 'fail'), 'failed terminated cancel=false', 'TERMINATE on failure');
SELECT is(pg_temp.policy_case('t-cancel', 'TERMINATE', 'cancel'), 'canceled terminated cancel=false', 'TERMINATE on cancellation');
SELECT is(pg_temp.policy_case('t-timeout', 'TERMINATE', 'timeout'), 'timed_out terminated cancel=false', 'TERMINATE on timeout');
SELECT is(pg_temp.policy_case('t-term', 'TERMINATE', 'terminate'), 'terminated terminated cancel=false', 'TERMINATE on termination');
SELECT is(pg_temp.policy_case('t-retry', 'TERMINATE', 'retry'), 'continued_as_new terminated cancel=false', 'TERMINATE on a retry');
SELECT is(pg_temp.policy_case('t-cron', 'TERMINATE', 'cron'), 'continued_as_new terminated cancel=false', 'TERMINATE on a cron continuation');
SELECT is(pg_temp.policy_case('t-decider', 'TERMINATE', 'decider'), 'continued_as_new terminated cancel=false', 'TERMINATE on ContinueAsNew');
SELECT is(pg_temp.policy_case('r-complete', 'REQUEST_CANCEL', 'complete'), 'completed running cancel=true', 'REQUEST_CANCEL on completion');
SELECT is(pg_temp.policy_case('r-fail', 'REQUEST_CANCEL', 'fail'), 'failed running cancel=true', 'REQUEST_CANCEL on failure');
SELECT is(pg_temp.policy_case('r-timeout', 'REQUEST_CANCEL', 'timeout'), 'timed_out running cancel=true', 'REQUEST_CANCEL on timeout');
SELECT is(pg_temp.policy_case('r-term', 'REQUEST_CANCEL', 'terminate'), 'terminated running cancel=true', 'REQUEST_CANCEL on termination');
SELECT is(pg_temp.policy_case('r-decider', 'REQUEST_CANCEL', 'decider'), 'continued_as_new running cancel=true', 'REQUEST_CANCEL on ContinueAsNew');
SELECT is(t.events('r-complete-c', from_id => 3), '{WorkflowExecutionCancelRequested}', 'REQUEST_CANCEL as cancel_workflow does');
SELECT is(pg_temp.policy_case('a-complete', 'ABANDON', 'complete'), 'completed running cancel=false', 'ABANDON on completion');
SELECT is(pg_temp.policy_case('a-term', 'ABANDON', 'terminate'), 'terminated running cancel=false', 'ABANDON on termination');
SELECT is(pg_temp.policy_case('a-retry', 'ABANDON', 'retry'), 'continued_as_new running cancel=false', 'ABANDON on a retry');

-- Grandchildren: terminating a parent terminates down the tree.
SELECT durable.start_workflow('parent', NULL, 'g0', 'g0');
SELECT t.decide('g0', jsonb_build_array(pg_temp.child('g1'))) IS NOT NULL;
SELECT t.decide('g1', jsonb_build_array(pg_temp.child('g2'))) IS NOT NULL;
SELECT durable.terminate_workflow('g0');
SELECT is(ARRAY[durable.describe_workflow('g1')->>'status', durable.describe_workflow('g2')->>'status'],
    '{terminated,terminated}', 'TERMINATE cascades to grandchildren');
SELECT is(t.attrs('g1', 'ChildWorkflowExecutionTerminated'), NULL,
    'the middle child, closed first, hears nothing of its own child');

-- Signals to other workflows, and to itself.
SELECT durable.start_workflow('s', NULL, 'sender', 'sender');
SELECT durable.start_workflow('t', NULL, 'target', 'target');
SELECT t.decide('sender', '[
    {"decisionType": "SignalExternalWorkflowExecution", "workflowId": "target", "signalName": "ping", "input": {"n": 1}, "control": "c1"},
    {"decisionType": "SignalExternalWorkflowExecution", "workflowId": "nobody", "signalName": "ping"},
    {"decisionType": "SignalExternalWorkflowExecution", "workflowId": "sender", "signalName": "self"},
    {"decisionType": "SignalExternalWorkflowExecution", "workflowId": "target", "signalName": "kids", "childWorkflowOnly": true},
    {"decisionType": "RequestCancelExternalWorkflowExecution", "workflowId": "nobody"}]') IS NOT NULL;
SELECT is(t.events('sender', from_id => 4), '{DecisionTaskCompleted,
    SignalExternalWorkflowExecutionInitiated,ExternalWorkflowExecutionSignaled,
    SignalExternalWorkflowExecutionInitiated,SignalExternalWorkflowExecutionFailed,
    SignalExternalWorkflowExecutionInitiated,WorkflowExecutionSignaled,ExternalWorkflowExecutionSignaled,
    SignalExternalWorkflowExecutionInitiated,SignalExternalWorkflowExecutionFailed,
    RequestCancelExternalWorkflowExecutionInitiated,RequestCancelExternalWorkflowExecutionFailed,
    DecisionTaskScheduled}',
    'signalled, not found, itself (no deadlock), not a child, cancel not found');
SELECT is(t.attrs('sender', 'ExternalWorkflowExecutionSignaled'),
    jsonb_build_object('initiatedEventId', 5, 'namespace', 'default', 'workflowId', 'target',
        'runId', '', 'control', 'c1'),
    'ExternalWorkflowExecutionSignaled');
SELECT is(t.attrs('sender', 'SignalExternalWorkflowExecutionFailed'),
    '{"initiatedEventId": 7, "namespace": "default", "workflowId": "nobody",
      "cause": "EXTERNAL_WORKFLOW_EXECUTION_NOT_FOUND", "decisionTaskCompletedEventId": 4}'::jsonb,
    'SignalExternalWorkflowExecutionFailed');
SELECT is(t.attrs('sender', 'RequestCancelExternalWorkflowExecutionFailed')->>'cause',
    'EXTERNAL_WORKFLOW_EXECUTION_NOT_FOUND', 'RequestCancelExternalWorkflowExecutionFailed');
SELECT is(t.events('target', from_id => 3), '{WorkflowExecutionSignaled}', 'the target got one signal');
SELECT is(t.attrs('target', 'WorkflowExecutionSignaled') - 'identity',
    jsonb_build_object('signalName', 'ping', 'input', '{"n": 1}'::jsonb, 'externalWorkflowExecution',
        jsonb_build_object('namespace', 'default', 'workflowId', 'sender',
            'runId', durable.resolve_run_id('sender'), 'initiatedEventId', 5)),
    'WorkflowExecutionSignaled names the sender');
SELECT durable.terminate_workflow('target');
SELECT t.decide('sender', '[{"decisionType": "SignalExternalWorkflowExecution", "workflowId": "target", "signalName": "late"}]') IS NOT NULL;
SELECT is(t.attrs('sender', 'SignalExternalWorkflowExecutionFailed', 3)->>'workflowId', 'target',
    'a closed target is not found');

-- Malformed decisions fail the completion and change nothing.
SELECT durable.poll_decision_task('sender') AS stask \gset
SELECT pg_temp.footprint() AS before \gset
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[{"decisionType": "StartChildWorkflowExecution", "workflowId": "x"}]')$$, :'stask'::jsonb->>'taskToken'),
    '22023', 'decisions[0].workflowType is required', 'workflowType is required');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[{"decisionType": "StartChildWorkflowExecution", "workflowType": "x", "parentClosePolicy": "KEEP"}]')$$, :'stask'::jsonb->>'taskToken'),
    '22023', 'invalid decisions[0].parentClosePolicy "KEEP"', 'a bad parentClosePolicy');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[{"decisionType": "StartChildWorkflowExecution", "workflowType": "x", "namespace": "nowhere"}]')$$, :'stask'::jsonb->>'taskToken'),
    'WF002', 'decisions[0].namespace: namespace "nowhere" does not exist', 'an unknown namespace');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[{"decisionType": "SignalExternalWorkflowExecution", "workflowId": "x", "signalName": "s", "runId": "nope"}]')$$, :'stask'::jsonb->>'taskToken'),
    '22023', 'decisions[0].runId must be a UUID', 'a bad runId');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[{"decisionType": "RequestCancelExternalWorkflowExecution"}]')$$, :'stask'::jsonb->>'taskToken'),
    '22023', 'decisions[0].workflowId is required', 'RequestCancelExternal needs a workflowId');
SELECT is(pg_temp.footprint(), :'before', 'nothing was written');

SELECT * FROM finish();
ROLLBACK;

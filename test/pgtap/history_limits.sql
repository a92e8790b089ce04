-- A workflow at its limits is closed and never wedges its task queue.
--
-- The rule followed is Temporal's: its workflow context's history size checks
-- terminate a workflow at the event that takes its history past the count
-- limit (the history ends with that event, then WorkflowExecutionTerminated),
-- and its workflow task handler's sizeLimitChecker fails the task of a
-- command whose payload is over the size limit and terminates the workflow
-- (terminateWorkflow).  durable keeps the last DURABLE_CLOSE_ROOM (10) events
-- of durable.max_history_events for the events that close a run, and writes
-- closing events whatever the count, so that an operator's terminate and a run
-- timeout always work.  Throughout, a second workflow on the same queue is
-- served: a poll returns a task or nothing, never another workflow's error.
BEGIN;
SELECT plan(40);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';
SET LOCAL client_min_messages = error;

-- Runs sql; 'ok', or the SQLSTATE it raised (the transaction goes on).
CREATE FUNCTION pg_temp.try(sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE sql;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END $$;

-- Polls a decision task of queue q and completes it with no decisions: the
-- workflow id it was for, NULL when there was none, or the SQLSTATE raised.
CREATE FUNCTION pg_temp.serve(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE t jsonb;
BEGIN
    t := durable.poll_decision_task(q);
    IF t IS NULL THEN RETURN NULL; END IF;
    PERFORM durable.complete_decision_task(t->>'taskToken', '[]');
    RETURN t->>'workflowId';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END $$;

-- Signals wid n times, or until its run closes or a signal is refused; how
-- many signals were accepted.
CREATE FUNCTION pg_temp.signal_many(wid text, n int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE i int := 0;
BEGIN
    WHILE i < n AND (SELECT status FROM durable.runs WHERE workflow_id = wid
                      ORDER BY run_seq DESC LIMIT 1) = 'running' LOOP
        BEGIN
            PERFORM durable.signal_workflow(wid, 's', to_jsonb(i));
        EXCEPTION WHEN SQLSTATE 'WF006' THEN
            RETURN i;
        END;
        i := i + 1;
    END LOOP;
    RETURN i;
END $$;

CREATE FUNCTION pg_temp.status(wid text) RETURNS text LANGUAGE sql AS
    $$ SELECT status FROM durable.runs WHERE workflow_id = wid ORDER BY run_seq DESC LIMIT 1 $$;

-- 1. The event-count limit: 100 events, the last 10 kept for closing a run.
SET LOCAL durable.max_history_events = 100;
SELECT durable.start_workflow('wf', NULL, 'full', 'q1') IS NOT NULL AS started;
SELECT durable.start_workflow('wf', NULL, 'other', 'q1') IS NOT NULL AS started;
-- Events 1 and 2 are WorkflowExecutionStarted and DecisionTaskScheduled; the
-- signal written as event 90 reaches the limit and the run is terminated.
SELECT is(pg_temp.signal_many('full', 200), 88, 'signals are accepted up to the limit less the room for closing');
SELECT is(pg_temp.status('full'), 'terminated', 'the workflow at its limit is terminated');
SELECT is(t.events('full', from_id => 89),
    '{WorkflowExecutionSignaled,WorkflowExecutionSignaled,WorkflowExecutionTerminated}',
    'history ends with the signal that reached the limit, then WorkflowExecutionTerminated');
SELECT is(t.attrs('full', 'WorkflowExecutionTerminated'),
    '{"reason": "durable:HistoryCountExceedsLimit", "details": {"historyEvents": 90, "maxHistoryEvents": 100}, "identity": "durable"}'::jsonb,
    'WorkflowExecutionTerminated: reason durable:HistoryCountExceedsLimit');
SELECT is(pg_temp.try($$SELECT durable.signal_workflow('full', 's')$$), 'WF003', 'a later signal: WF003, not running');
SELECT is(pg_temp.serve('q1'), 'other', 'a poll of the queue serves the other workflow');
SELECT is(pg_temp.serve('q1'), NULL, 'and then finds nothing, without an error');
SELECT is((SELECT count(*) FROM durable.ready_tasks WHERE run_id IN (SELECT run_id FROM durable.runs WHERE workflow_id = 'full')), 0::bigint, 'no task of the closed run is left');

-- 2. terminate_workflow always fits: a run near its limit, a decision task
-- started, 30 signals buffered meanwhile (written with the closing events).
SELECT durable.start_workflow('wf', NULL, 'busy', 'q2') IS NOT NULL AS started;
SELECT durable.start_workflow('wf', NULL, 'other2', 'q2') IS NOT NULL AS started;
SELECT is(pg_temp.signal_many('busy', 80), 80, '80 signals (history at 82 events)');
SELECT is(durable.poll_decision_task('q2')->>'workflowId', 'busy', 'its decision task is started (event 83)');
SELECT is(pg_temp.signal_many('busy', 30), 30, '30 signals buffered while it is started');
SELECT is(pg_temp.try($$SELECT durable.terminate_workflow('busy', 'operator')$$), 'ok',
    'terminate_workflow of the run works');
SELECT is(pg_temp.status('busy'), 'terminated', 'terminated');
SELECT is(array_remove(t.events('busy', from_id => 83), 'WorkflowExecutionSignaled'),
    '{DecisionTaskStarted,DecisionTaskFailed,WorkflowExecutionTerminated}',
    'DecisionTaskFailed (ForceCloseDecision), the buffered signals, WorkflowExecutionTerminated');
SELECT is((SELECT count(*) FROM durable.history h JOIN durable.runs r USING (run_id)
            WHERE r.workflow_id = 'busy'), 115::bigint, 'closing events are never refused (115 events)');
SELECT is(t.attrs('busy', 'WorkflowExecutionTerminated')->>'reason', 'operator', 'the operator''s reason');
SELECT is(pg_temp.serve('q2'), 'other2', 'the other workflow on the queue is served');

-- 3. The run timeout always fits too: the same run shape, timed out by tick().
SELECT durable.start_workflow('wf', NULL, 'late', 'q3', run_timeout => '1 minute',
                              decision_timeout => '5 minutes') IS NOT NULL AS started;
SELECT durable.start_workflow('wf', NULL, 'other3', 'q3') IS NOT NULL AS started;
SELECT is(pg_temp.signal_many('late', 80), 80, '80 signals');
SELECT is(durable.poll_decision_task('q3')->>'workflowId', 'late', 'its decision task is started');
SELECT is(pg_temp.signal_many('late', 30), 30, '30 signals buffered');
SELECT t.at('2026-01-01 00:02:00+00');
SELECT is(pg_temp.try($$SELECT durable.tick()$$), 'ok', 'tick() fires the run timeout');
SELECT is(pg_temp.status('late'), 'timed_out', 'the run timed out');
SELECT is(pg_temp.serve('q3'), 'other3', 'the other workflow on the queue is served');

-- A timer that fires at the limit: tick() terminates the run.
SELECT durable.start_workflow('wf', NULL, 'tm', 'q6') IS NOT NULL AS started;
SELECT is(pg_temp.signal_many('tm', 84), 84, '84 signals (events 3 to 86)');
SELECT t.decide('tm', '[{"decisionType": "StartTimer", "timerId": "t1", "startToFireTimeoutSeconds": 60}]', 'q6') IS NOT NULL;
SELECT t.at('2026-01-01 00:04:00+00');
SELECT is(pg_temp.try($$SELECT durable.tick()$$), 'ok', 'tick() fires the timer');
SELECT is(t.events('tm', from_id => 89),
    '{TimerStarted,TimerFired,DecisionTaskScheduled,WorkflowExecutionTerminated}',
    'TimerFired reaches the limit: the run is terminated');
SELECT is((SELECT count(*) FROM durable.timers WHERE run_id IN (SELECT run_id FROM durable.runs WHERE workflow_id = 'tm')),
    0::bigint, 'no timer of it is left');
RESET durable.max_history_events;

-- 4. A decision's payload over durable.max_payload_size (a marker's details)
-- while a signal arrives: DecisionTaskFailed with the decision's cause, the
-- signal, WorkflowExecutionTerminated; the worker's call does not fail.
SET LOCAL durable.max_payload_size = 1024;
SELECT durable.start_workflow('wf', NULL, 'blob', 'q4') IS NOT NULL AS started;
SELECT durable.start_workflow('wf', NULL, 'other4', 'q4') IS NOT NULL AS started;
SELECT durable.poll_decision_task('q4') AS d4 \gset
SELECT durable.signal_workflow('blob', 's');
SELECT is(pg_temp.try(format($$SELECT durable.complete_decision_task(%L, %L)$$, :'d4'::jsonb->>'taskToken',
    jsonb_build_array(jsonb_build_object('decisionType', 'RecordMarker', 'markerName', 'm',
                                         'details', repeat('x', 2000))))), 'ok',
    'the completion with an oversized marker is answered');
SELECT is(pg_temp.status('blob'), 'terminated', 'the workflow is terminated');
SELECT is(t.events('blob', from_id => 3),
    '{DecisionTaskStarted,DecisionTaskFailed,WorkflowExecutionSignaled,WorkflowExecutionTerminated}',
    'DecisionTaskFailed, the buffered signal, WorkflowExecutionTerminated');
SELECT is(t.attrs('blob', 'DecisionTaskFailed')->>'cause', 'BadRecordMarkerAttributes',
    'DecisionTaskFailed: cause BadRecordMarkerAttributes');
SELECT is(t.attrs('blob', 'WorkflowExecutionTerminated')->>'reason', 'durable:PayloadSizeExceedsLimit',
    'WorkflowExecutionTerminated: reason durable:PayloadSizeExceedsLimit');
SELECT is(pg_temp.serve('q4'), 'other4', 'the other workflow on the queue is served');

-- 5. A result over the limit: the same, with CompleteWorkflowExecution's cause.
SELECT durable.start_workflow('wf', NULL, 'bigresult', 'q5') IS NOT NULL AS started;
SELECT durable.poll_decision_task('q5') AS d5 \gset
SELECT is(pg_temp.try(format($$SELECT durable.complete_decision_task(%L, %L)$$, :'d5'::jsonb->>'taskToken',
    jsonb_build_array(jsonb_build_object('decisionType', 'CompleteWorkflowExecution',
                                         'result', repeat('x', 2000))))), 'ok',
    'the completion with an oversized result is answered');
SELECT is(t.events('bigresult', from_id => 3),
    '{DecisionTaskStarted,DecisionTaskFailed,WorkflowExecutionTerminated}',
    'DecisionTaskFailed, WorkflowExecutionTerminated');
SELECT is(t.attrs('bigresult', 'DecisionTaskFailed')->>'cause', 'BadCompleteWorkflowExecutionAttributes',
    'DecisionTaskFailed: cause BadCompleteWorkflowExecutionAttributes');
RESET durable.max_payload_size;

-- 6. A SQL workflow that runs activities forever, run by durable.run_tasks():
-- its run is terminated at the limit instead of its task failing in the
-- engine again and again (a poison task); the other SQL workflow completes.
SET LOCAL durable.max_history_events = 100;
CREATE ROLE hl_app;
CREATE SCHEMA hl;
GRANT USAGE ON SCHEMA hl TO hl_app;
CREATE FUNCTION hl.echo(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT input $$;
CREATE FUNCTION hl.forever(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    LOOP
        PERFORM durable.activity('hl_echo', '1');
    END LOOP;
END $$;
CREATE FUNCTION hl.once(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    RETURN durable.activity('hl_echo', '"done"');
END $$;
GRANT EXECUTE ON FUNCTION hl.echo(jsonb), hl.forever(jsonb), hl.once(jsonb) TO hl_app;
SELECT durable.register_activity('hl_echo', 'hl.echo(jsonb)', 'sq', run_as => 'hl_app');
SELECT durable.register_workflow('hl_forever', 'hl.forever(jsonb)', 'sq', run_as => 'hl_app');
SELECT durable.register_workflow('hl_once', 'hl.once(jsonb)', 'sq', run_as => 'hl_app');
SELECT durable.start_workflow('hl_forever', NULL, 'forever', 'sq') IS NOT NULL AS started;
SELECT durable.start_workflow('hl_once', NULL, 'once', 'sq') IS NOT NULL AS started;
SELECT durable.run_tasks() > 0 AS ran;
SELECT is(pg_temp.status('forever'), 'terminated', 'the SQL workflow at its limit is terminated');
SELECT is(t.attrs('forever', 'WorkflowExecutionTerminated')->>'reason', 'durable:HistoryCountExceedsLimit',
    'reason durable:HistoryCountExceedsLimit');
SELECT is(pg_temp.status('once'), 'completed', 'the other SQL workflow on the queue completed');
SELECT is((SELECT count(*) FROM durable.ready_tasks WHERE run_id IN (SELECT run_id FROM durable.runs WHERE workflow_id = 'forever')), 0::bigint,
    'no task of it is left to fail again');

SELECT * FROM finish();
ROLLBACK;

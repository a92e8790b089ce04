-- Heartbeats and cancellation, DESIGN.md rules 5 and 11: heartbeats keep an
-- attempt alive and show in describe_workflow; heartbeat_activity returns true
-- once the workflow has a cancel request; an activity that finishes after its
-- workflow closed is rejected with WF005 and its result is not recorded.
BEGIN;
SELECT plan(17);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

-- Helpers (pg_temp: gone with the session).
CREATE FUNCTION pg_temp.at(ts text) RETURNS void LANGUAGE sql AS
    $$ SELECT set_config('durable.test_time', ts, true) $$;
-- Poll the next decision task of a queue, check its workflow, answer it.
CREATE FUNCTION pg_temp.decide(wid text, decisions jsonb, queue text DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE t jsonb;
BEGIN
    t := durable.poll_decision_task(COALESCE(queue, wid));
    IF t IS NULL THEN RAISE EXCEPTION 'no decision task for %', wid; END IF;
    IF t->>'workflowId' <> wid THEN
        RAISE EXCEPTION 'decision task of % instead of %', t->>'workflowId', wid;
    END IF;
    PERFORM durable.complete_decision_task(t->>'taskToken', decisions);
    RETURN t;
END $$;
-- The event types of a run's history, in order.
CREATE FUNCTION pg_temp.events(wid text, rid uuid DEFAULT NULL, from_id int DEFAULT 1) RETURNS text[]
LANGUAGE sql AS $$
    SELECT COALESCE(array_agg(event_type ORDER BY event_id), '{}') FROM durable.get_history(wid, run_id => rid)
     WHERE event_id >= from_id $$;
-- The attributes of the n-th event of a type.
CREATE FUNCTION pg_temp.attrs(wid text, etype text, n int DEFAULT 1, rid uuid DEFAULT NULL)
RETURNS jsonb LANGUAGE sql AS $$
    SELECT attributes FROM durable.get_history(wid, run_id => rid) WHERE event_type = etype
     ORDER BY event_id OFFSET n - 1 LIMIT 1 $$;
-- describe_workflow's first pending activity.
CREATE FUNCTION pg_temp.pending(wid text) RETURNS jsonb LANGUAGE sql AS
    $$ SELECT durable.describe_workflow(wid)->'pendingActivities'->0 $$;
-- A ScheduleActivityTask decision.
CREATE FUNCTION pg_temp.sched(act text, extra jsonb DEFAULT '{}') RETURNS jsonb LANGUAGE sql AS
    $$ SELECT jsonb_build_object('decisionType', 'ScheduleActivityTask',
                                 'activityId', act, 'activityType', 'do') || extra $$;
-- Everything a call could write, to show that a failed call wrote nothing.
CREATE FUNCTION pg_temp.footprint() RETURNS text LANGUAGE sql AS $$
    SELECT format('runs=%s history=%s ready=%s timers=%s buffered=%s activities=%s attempts=%s user_timers=%s',
        (SELECT count(*) FROM durable.runs), (SELECT count(*) FROM durable.history),
        (SELECT count(*) FROM durable.ready_tasks), (SELECT count(*) FROM durable.timers),
        (SELECT count(*) FROM durable.buffered_events), (SELECT count(*) FROM durable.activities),
        (SELECT count(*) FROM durable.activity_attempt_log), (SELECT count(*) FROM durable.user_timers)) $$;
-- Poll an activity task of queue q (it must be there) and fail it at the
-- current test time; then report describe_workflow's pending activity as
-- "attempt/state/delay" (delay: nextAttemptScheduledTime - now), move the
-- clock to the next attempt and tick.  'closed' when the activity is over.
CREATE FUNCTION pg_temp.fail_round(wid text, reason text DEFAULT 'boom',
                                   next_delay interval DEFAULT NULL)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    t jsonb;
    p jsonb;
    r text;
BEGIN
    t := durable.poll_activity_task(wid);
    IF t IS NULL THEN RAISE EXCEPTION 'no activity task for %', wid; END IF;
    PERFORM durable.fail_activity(t->>'taskToken', reason, NULL, next_delay);
    p := durable.describe_workflow(wid)->'pendingActivities'->0;
    IF p IS NULL THEN RETURN 'closed'; END IF;
    IF p->>'nextAttemptScheduledTime' IS NULL THEN
        RETURN format('%s/%s/queued', p->>'attempt', p->>'state');
    END IF;
    r := format('%s/%s/%s', p->>'attempt', p->>'state',
                (p->>'nextAttemptScheduledTime')::timestamptz - durable.now());
    PERFORM pg_temp.at(p->>'nextAttemptScheduledTime');
    PERFORM durable.tick();
    RETURN r;
END $$;

SELECT durable.start_workflow('wf', NULL, 'hb', 'hb') IS NOT NULL AS started;
SELECT pg_temp.decide('hb', jsonb_build_array(pg_temp.sched('a1', '{"startToCloseTimeoutSeconds": 600, "heartbeatTimeoutSeconds": 10}'),
                                              pg_temp.sched('a2', '{"startToCloseTimeoutSeconds": 600}'))) IS NOT NULL;
SELECT durable.poll_activity_task('hb', identity => 'w-1') AS task1 \gset
SELECT durable.poll_activity_task('hb', identity => 'w-2') AS task2 \gset
SELECT pg_temp.at('2026-01-01 00:00:07+00');
SELECT is(durable.heartbeat_activity(:'task1'::jsonb->>'taskToken', '{"done": 7}'), false, 'a heartbeat returns false without a cancel request');
SELECT is(pg_temp.pending('hb') - 'activityType' - 'expirationTime' - 'nextAttemptScheduledTime' - 'lastFailureReason' - 'lastFailureDetails',
    '{"activityId": "a1", "state": "STARTED", "attempt": 1, "scheduledTime": "2026-01-01T00:00:00+00:00",
      "lastStartedTime": "2026-01-01T00:00:00+00:00", "lastHeartbeatTime": "2026-01-01T00:00:07+00:00",
      "heartbeatDetails": {"done": 7}, "lastWorkerIdentity": "w-1"}'::jsonb,
    'describe shows the heartbeat time and details');
SELECT pg_temp.at('2026-01-01 00:00:14+00');
SELECT is(durable.heartbeat_activity(:'task1'::jsonb->>'taskToken'), false, 'a heartbeat without details');
SELECT is(pg_temp.pending('hb')->'heartbeatDetails', '{"done": 7}', 'keeps the last details');
SELECT pg_temp.at('2026-01-01 00:00:23+00');
SELECT durable.tick() AS fired \gset
SELECT is(pg_temp.pending('hb')->>'state', 'STARTED', 'heartbeats every 7 s keep a 10 s heartbeat timeout from firing');
SELECT is(pg_temp.events('hb', from_id => 7), '{}', 'heartbeats write no history');

-- cancel_workflow: the heartbeats of the run's activities return true.
SELECT durable.cancel_workflow('hb', 'enough');
SELECT is(durable.heartbeat_activity(:'task1'::jsonb->>'taskToken'), true, 'after cancel_workflow, a heartbeat returns true');
SELECT is(durable.heartbeat_activity(:'task2'::jsonb->>'taskToken', '{"x": 1}'), true, 'for every activity of the run');
SELECT is(pg_temp.events('hb', from_id => 7), '{WorkflowExecutionCancelRequested,DecisionTaskScheduled}',
    'WorkflowExecutionCancelRequested and a decision task');
SELECT is(pg_temp.pending('hb')->>'state', 'STARTED', 'the activity itself is not canceled by the request');

-- The workflow closes; the activities finish later: WF005, nothing recorded.
SELECT pg_temp.decide('hb', '[{"decisionType": "CancelWorkflowExecution"}]') IS NOT NULL;
SELECT is(durable.describe_workflow('hb')->>'status', 'canceled', 'the workflow is canceled');
SELECT pg_temp.footprint() AS before \gset
SELECT throws_ok(format($$SELECT durable.complete_activity(%L, '"late"')$$, :'task1'::jsonb->>'taskToken'), 'WF005', NULL,
    'complete_activity after the workflow closed: WF005');
SELECT throws_ok(format($$SELECT durable.fail_activity(%L, 'late')$$, :'task2'::jsonb->>'taskToken'), 'WF005', NULL,
    'fail_activity after the workflow closed: WF005');
SELECT throws_ok(format($$SELECT durable.heartbeat_activity(%L)$$, :'task1'::jsonb->>'taskToken'), 'WF005', NULL,
    'heartbeat_activity after the workflow closed: WF005');
SELECT throws_ok(format($$SELECT durable.report_activity_canceled(%L)$$, :'task2'::jsonb->>'taskToken'), 'WF005', NULL,
    'report_activity_canceled after the workflow closed: WF005');
SELECT is(pg_temp.footprint(), :'before', 'the late calls wrote nothing');
SELECT is((SELECT count(*) FROM durable.history h JOIN durable.runs r USING (run_id)
            WHERE r.workflow_id = 'hb' AND h.event_type LIKE 'ActivityTask%' AND h.event_type <> 'ActivityTaskScheduled'),
    0::bigint, 'no activity outcome in the history');

SELECT * FROM finish();
ROLLBACK;

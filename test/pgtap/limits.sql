-- Limits and stale task tokens, DESIGN.md rule 9 and section 6: a run that
-- reaches durable.max_attempts_per_run fails at once, without retry; too many
-- pending activities is WF006; tokens of attempts that timed out, completed or
-- whose run closed are WF005; a malformed token is 22023; a failed call
-- changes nothing.
BEGIN;
SELECT plan(27);
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

-- Rule 9: the per-run attempt cap (3 here instead of 1000).  The workflow has
-- a retry policy, and still is not retried.
SET LOCAL durable.max_attempts_per_run = 3;
SELECT durable.start_workflow('wf', NULL, 'cap', 'cap',
    retry_policy => durable.retry_policy('1 second', maximum_attempts => 5)) AS cap_run \gset
SELECT pg_temp.decide('cap', jsonb_build_array(pg_temp.sched('a1', '{"startToCloseTimeoutSeconds": 60}'))) IS NOT NULL;
SELECT is(pg_temp.fail_round('cap'), '2/SCHEDULED/00:00:01', 'attempt 1 of the run');
SELECT is(pg_temp.fail_round('cap'), '3/SCHEDULED/00:00:02', 'attempt 2 of the run');
SELECT is(pg_temp.fail_round('cap'), 'closed', 'attempt 3 reaches the cap');
SELECT is(pg_temp.events('cap', from_id => 5), '{ActivityTaskScheduled,WorkflowExecutionFailed}', 'the run fails at once');
SELECT is(pg_temp.attrs('cap', 'WorkflowExecutionFailed'),
    '{"reason": "durable:MaxAttemptsPerRun", "details": {"activityAttempts": 3, "maxAttemptsPerRun": 3}}'::jsonb,
    'WorkflowExecutionFailed: durable:MaxAttemptsPerRun');
SELECT is(durable.describe_workflow('cap') - '{runId,firstRunId,startTime,closeTime,pendingChildren,pendingTimers,memo,parent,continuedFrom,continuedTo,retryPolicy,cronSchedule,executionTimeoutSeconds,runTimeoutSeconds,decisionTimeoutSeconds,namespace,workflowType,taskQueue,result,cancelRequested}'::text[],
    '{"workflowId": "cap", "status": "failed", "attempt": 1, "historyLength": 6, "pendingActivities": [],
      "failure": {"reason": "durable:MaxAttemptsPerRun", "details": {"activityAttempts": 3, "maxAttemptsPerRun": 3}}}'::jsonb,
    'failed, not retried although the workflow has a retry policy');
SELECT is(durable.resolve_run_id('cap'), :'cap_run'::uuid, 'no new run');
SELECT is((SELECT array_agg(outcome ORDER BY attempt) FROM durable.activity_attempts WHERE workflow_id = 'cap'),
    '{failed,failed,failed}', 'activity_attempts: the three attempts');

-- Scheduling counts too: the fourth activity of a run capped at 3.
SELECT durable.start_workflow('wf', NULL, 'cap2', 'cap2') IS NOT NULL AS started;
SELECT pg_temp.decide('cap2', jsonb_build_array(pg_temp.sched('a1'), pg_temp.sched('a2'), pg_temp.sched('a3'), pg_temp.sched('a4'))) IS NOT NULL;
SELECT is(pg_temp.events('cap2', from_id => 4),
    '{DecisionTaskCompleted,ActivityTaskScheduled,ActivityTaskScheduled,ActivityTaskScheduled,WorkflowExecutionFailed}',
    'a fourth ScheduleActivityTask fails the run');
SELECT is(pg_temp.attrs('cap2', 'WorkflowExecutionFailed')->>'reason', 'durable:MaxAttemptsPerRun', 'reason durable:MaxAttemptsPerRun');
RESET durable.max_attempts_per_run;

-- Rule 9: durable.max_pending_activities (2 here): WF006, and nothing written.
SET LOCAL durable.max_pending_activities = 2;
SELECT durable.start_workflow('wf', NULL, 'many', 'many') IS NOT NULL AS started;
SELECT durable.poll_decision_task('many') AS dtask \gset
SELECT pg_temp.footprint() AS before \gset
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, %L)$$, :'dtask'::jsonb->>'taskToken',
    jsonb_build_array(pg_temp.sched('a1'), pg_temp.sched('a2'), pg_temp.sched('a3'))),
    'WF006', 'workflow "many" has too many pending activities', 'a third pending activity: WF006');
SELECT is(pg_temp.footprint(), :'before', 'the failed completion wrote nothing');
SELECT lives_ok(format($$SELECT durable.complete_decision_task(%L, %L)$$, :'dtask'::jsonb->>'taskToken',
    jsonb_build_array(pg_temp.sched('a1'), pg_temp.sched('a2'))), 'two are fine');
RESET durable.max_pending_activities;

-- Stale tokens.
SELECT pg_temp.at('2026-01-01 01:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'stale', 'stale', decision_timeout => '5 seconds') IS NOT NULL AS started;
-- A decision task that timed out.
SELECT durable.poll_decision_task('stale') AS d1 \gset
SELECT pg_temp.at('2026-01-01 01:00:05+00');
SELECT durable.tick() AS fired \gset
SELECT pg_temp.footprint() AS before \gset
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]')$$, :'d1'::jsonb->>'taskToken'), 'WF005', NULL,
    'a decision task that timed out: WF005');
SELECT throws_ok(format($$SELECT durable.fail_decision_task(%L, 'Panic')$$, :'d1'::jsonb->>'taskToken'), 'WF005', NULL,
    'failing it: WF005');
-- A decision task already completed.
SELECT durable.poll_decision_task('stale') AS d2 \gset
SELECT durable.complete_decision_task(:'d2'::jsonb->>'taskToken', jsonb_build_array(pg_temp.sched('a1', '{"startToCloseTimeoutSeconds": 30}')));
SELECT pg_temp.footprint() AS before \gset
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]')$$, :'d2'::jsonb->>'taskToken'), 'WF005', NULL,
    'a decision task completed already: WF005');
-- An activity attempt reclaimed by its StartToClose timeout.
SELECT durable.poll_activity_task('stale') AS a1 \gset
SELECT pg_temp.at('2026-01-01 01:00:35+00');
SELECT durable.tick() AS fired \gset
SELECT pg_temp.footprint() AS before \gset
SELECT throws_ok(format($$SELECT durable.complete_activity(%L)$$, :'a1'::jsonb->>'taskToken'), 'WF005', NULL, 'complete after a reclaim: WF005');
SELECT throws_ok(format($$SELECT durable.fail_activity(%L, 'x')$$, :'a1'::jsonb->>'taskToken'), 'WF005', NULL, 'fail after a reclaim: WF005');
SELECT throws_ok(format($$SELECT durable.heartbeat_activity(%L)$$, :'a1'::jsonb->>'taskToken'), 'WF005', NULL, 'heartbeat after a reclaim: WF005');
SELECT is(pg_temp.footprint(), :'before', 'the stale calls wrote nothing');
-- An activity completed already.
SELECT pg_temp.at('2026-01-01 01:00:36+00');
SELECT durable.tick() AS fired \gset
SELECT durable.poll_activity_task('stale') AS a2 \gset
SELECT durable.complete_activity(:'a2'::jsonb->>'taskToken', '1');
SELECT throws_ok(format($$SELECT durable.complete_activity(%L, '2')$$, :'a2'::jsonb->>'taskToken'), 'WF005', NULL, 'a second completion: WF005');
SELECT is(pg_temp.attrs('stale', 'ActivityTaskCompleted')->'result', '1', 'the first result stands');
-- A run that closed.
SELECT durable.poll_decision_task('stale') AS d3 \gset
SELECT durable.terminate_workflow('stale', 'stop');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]')$$, :'d3'::jsonb->>'taskToken'), 'WF005', NULL,
    'a decision task of a closed run: WF005');
-- Malformed tokens.
SELECT throws_ok($$SELECT durable.complete_activity('garbage')$$, '22023', 'task_token "garbage" is not an activity task token', 'garbage: 22023');
SELECT throws_ok(format($$SELECT durable.complete_activity(%L)$$, :'d3'::jsonb->>'taskToken'), '22023', NULL, 'a decision token for an activity: 22023');
SELECT throws_ok($$SELECT durable.heartbeat_activity(NULL)$$, '22004', 'task_token must not be null', 'NULL: 22004');
SELECT throws_ok($$SELECT durable.complete_activity('A:00000000-0000-0000-0000-000000000000:5:1')$$, 'WF005', NULL, 'an unknown run: WF005');

SELECT * FROM finish();
ROLLBACK;

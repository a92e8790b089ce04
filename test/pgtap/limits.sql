-- Limits and stale task tokens (docs/api.md "Activities: retries, timeouts,
-- heartbeats", docs/errors.md): a run that
-- reaches durable.max_attempts_per_run fails at once, without retry; too many
-- pending activities is WF006; tokens of attempts that timed out, completed or
-- whose run closed are WF005; a malformed token is 22023; a failed call
-- changes nothing.
BEGIN;
SELECT plan(27);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

-- The per-run attempt cap (3 here instead of 1000).  The workflow has
-- a retry policy, and still is not retried.
SET LOCAL durable.max_attempts_per_run = 3;
SELECT durable.start_workflow('wf', NULL, 'cap', 'cap',
    retry_policy => durable.retry_policy('1 second', maximum_attempts => 5)) AS cap_run \gset
SELECT t.decide('cap', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 60}'))) IS NOT NULL;
SELECT is(t.fail_round('cap'), '2/SCHEDULED/00:00:01', 'attempt 1 of the run');
SELECT is(t.fail_round('cap'), '3/SCHEDULED/00:00:02', 'attempt 2 of the run');
SELECT is(t.fail_round('cap'), 'closed', 'attempt 3 reaches the cap');
SELECT is(t.events('cap', from_id => 5), '{ActivityTaskScheduled,WorkflowExecutionFailed}', 'the run fails at once');
SELECT is(t.attrs('cap', 'WorkflowExecutionFailed'),
    '{"reason": "durable:MaxAttemptsPerRun", "details": {"activityAttempts": 3, "maxAttemptsPerRun": 3}}'::jsonb,
    'WorkflowExecutionFailed: durable:MaxAttemptsPerRun');
SELECT is(durable.describe_workflow('cap') - '{runId,firstRunId,startTime,closeTime,pendingChildren,pendingTimers,memo,searchAttributes,parent,continuedFrom,continuedTo,retryPolicy,cronSchedule,executionTimeoutSeconds,runTimeoutSeconds,decisionTimeoutSeconds,namespace,workflowType,taskQueue,result,cancelRequested}'::text[],
    '{"workflowId": "cap", "status": "failed", "attempt": 1, "historyLength": 6, "pendingActivities": [],
      "failure": {"reason": "durable:MaxAttemptsPerRun", "details": {"activityAttempts": 3, "maxAttemptsPerRun": 3}}}'::jsonb,
    'failed, not retried although the workflow has a retry policy');
SELECT is(durable.resolve_run_id('cap'), :'cap_run'::uuid, 'no new run');
SELECT is((SELECT array_agg(outcome ORDER BY attempt) FROM durable.activity_attempts WHERE workflow_id = 'cap'),
    '{failed,failed,failed}', 'activity_attempts: the three attempts');

-- Scheduling counts too: the fourth activity of a run capped at 3.
SELECT durable.start_workflow('wf', NULL, 'cap2', 'cap2') IS NOT NULL AS started;
SELECT t.decide('cap2', jsonb_build_array(t.sched('a1'), t.sched('a2'), t.sched('a3'), t.sched('a4'))) IS NOT NULL;
SELECT is(t.events('cap2', from_id => 4),
    '{DecisionTaskCompleted,ActivityTaskScheduled,ActivityTaskScheduled,ActivityTaskScheduled,WorkflowExecutionFailed}',
    'a fourth ScheduleActivityTask fails the run');
SELECT is(t.attrs('cap2', 'WorkflowExecutionFailed')->>'reason', 'durable:MaxAttemptsPerRun', 'reason durable:MaxAttemptsPerRun');
RESET durable.max_attempts_per_run;

-- durable.max_pending_activities (2 here): WF006, and nothing written.
SET LOCAL durable.max_pending_activities = 2;
SELECT durable.start_workflow('wf', NULL, 'many', 'many') IS NOT NULL AS started;
SELECT durable.poll_decision_task('many') AS dtask \gset
SELECT t.footprint() AS before \gset
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, %L)$$, :'dtask'::jsonb->>'taskToken',
    jsonb_build_array(t.sched('a1'), t.sched('a2'), t.sched('a3'))),
    'WF006', 'workflow "many" has too many pending activities', 'a third pending activity: WF006');
SELECT is(t.footprint(), :'before', 'the failed completion wrote nothing');
SELECT lives_ok(format($$SELECT durable.complete_decision_task(%L, %L)$$, :'dtask'::jsonb->>'taskToken',
    jsonb_build_array(t.sched('a1'), t.sched('a2'))), 'two are fine');
RESET durable.max_pending_activities;

-- Stale tokens.
SELECT t.at('2026-01-01 01:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'stale', 'stale', decision_timeout => '5 seconds') IS NOT NULL AS started;
-- A decision task that timed out.
SELECT durable.poll_decision_task('stale') AS d1 \gset
SELECT t.at('2026-01-01 01:00:05+00');
SELECT durable.tick() AS fired \gset
SELECT t.footprint() AS before \gset
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]')$$, :'d1'::jsonb->>'taskToken'), 'WF005', NULL,
    'a decision task that timed out: WF005');
SELECT throws_ok(format($$SELECT durable.fail_decision_task(%L, 'Panic')$$, :'d1'::jsonb->>'taskToken'), 'WF005', NULL,
    'failing it: WF005');
-- A decision task already completed.
SELECT durable.poll_decision_task('stale') AS d2 \gset
SELECT durable.complete_decision_task(:'d2'::jsonb->>'taskToken', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 30}')));
SELECT t.footprint() AS before \gset
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]')$$, :'d2'::jsonb->>'taskToken'), 'WF005', NULL,
    'a decision task completed already: WF005');
-- An activity attempt reclaimed by its StartToClose timeout.
SELECT durable.poll_activity_task('stale') AS a1 \gset
SELECT t.at('2026-01-01 01:00:35+00');
SELECT durable.tick() AS fired \gset
SELECT t.footprint() AS before \gset
SELECT throws_ok(format($$SELECT durable.complete_activity(%L)$$, :'a1'::jsonb->>'taskToken'), 'WF005', NULL, 'complete after a reclaim: WF005');
SELECT throws_ok(format($$SELECT durable.fail_activity(%L, 'x')$$, :'a1'::jsonb->>'taskToken'), 'WF005', NULL, 'fail after a reclaim: WF005');
SELECT throws_ok(format($$SELECT durable.heartbeat_activity(%L)$$, :'a1'::jsonb->>'taskToken'), 'WF005', NULL, 'heartbeat after a reclaim: WF005');
SELECT is(t.footprint(), :'before', 'the stale calls wrote nothing');
-- An activity completed already.
SELECT t.at('2026-01-01 01:00:36+00');
SELECT durable.tick() AS fired \gset
SELECT durable.poll_activity_task('stale') AS a2 \gset
SELECT durable.complete_activity(:'a2'::jsonb->>'taskToken', '1');
SELECT throws_ok(format($$SELECT durable.complete_activity(%L, '2')$$, :'a2'::jsonb->>'taskToken'), 'WF005', NULL, 'a second completion: WF005');
SELECT is(t.attrs('stale', 'ActivityTaskCompleted')->'result', '1', 'the first result stands');
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

-- The worker protocol (docs/api.md "Worker functions"): each decision type writes the
-- events Cadence writes; a completion with one malformed decision changes
-- nothing and names the bad decision.
BEGIN;
SELECT plan(62);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

-- ScheduleActivityTask, and the activity's completion.
SELECT durable.start_workflow('wf', '{"n": 1}', 'sched', 'sched') IS NOT NULL AS started;
SELECT t.decide('sched', jsonb_build_array(t.sched('a1',
    '{"input": {"k": "v"}, "startToCloseTimeoutSeconds": 30, "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 3}}'))) IS NOT NULL;
SELECT is(t.events('sched'),
    '{WorkflowExecutionStarted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,ActivityTaskScheduled}',
    'ScheduleActivityTask: ActivityTaskScheduled after DecisionTaskCompleted');
SELECT is(t.attrs('sched', 'ActivityTaskScheduled') - 'retryPolicy',
    '{"activityId": "a1", "activityType": "do", "taskQueue": "sched", "input": {"k": "v"},
      "startToCloseTimeoutSeconds": 30, "decisionTaskCompletedEventId": 4}'::jsonb,
    'ActivityTaskScheduled carries the activity, its input, queue and timeouts');
SELECT is(t.attrs('sched', 'ActivityTaskScheduled')->'retryPolicy',
    '{"initialIntervalInSeconds": 1, "backoffCoefficient": 2, "maximumIntervalInSeconds": 100,
      "expirationIntervalInSeconds": 0, "maximumAttempts": 3, "nonRetriableErrorReasons": []}'::jsonb,
    'ActivityTaskScheduled carries the normalised retry policy');
SELECT is(durable.poll_decision_task('sched'), NULL, 'no decision task while the activity runs');
SELECT durable.poll_activity_task('sched', identity => 'w-1') AS task \gset
SELECT is((:'task'::jsonb) - 'taskToken' - 'runId',
    '{"namespace": "default", "workflowId": "sched", "activityId": "a1", "activityType": "do",
      "input": {"k": "v"}, "attempt": 1, "scheduledTime": "2026-01-01T00:00:00+00:00",
      "startedTime": "2026-01-01T00:00:00+00:00", "heartbeatDetails": null,
      "heartbeatTimeout": null, "deadline": "2026-01-01T00:00:30+00:00"}'::jsonb,
    'the activity task');
SELECT is(t.events('sched', from_id => 6), '{}', 'polling an activity writes no history');
SELECT t.at('2026-01-01 00:00:05+00');
SELECT durable.complete_activity(:'task'::jsonb->>'taskToken', '{"ok": true}');
SELECT is(t.events('sched', from_id => 6),
    '{ActivityTaskStarted,ActivityTaskCompleted,DecisionTaskScheduled}',
    'completion: ActivityTaskStarted, ActivityTaskCompleted, a decision task');
SELECT is(t.attrs('sched', 'ActivityTaskStarted'),
    '{"scheduledEventId": 5, "identity": "w-1", "attempt": 1}'::jsonb,
    'ActivityTaskStarted: final attempt, worker identity');
SELECT is((SELECT event_time FROM durable.get_history('sched') WHERE event_type = 'ActivityTaskStarted'),
    '2026-01-01 00:00:00+00'::timestamptz, 'ActivityTaskStarted keeps the start time');
SELECT is(t.attrs('sched', 'ActivityTaskCompleted'),
    '{"scheduledEventId": 5, "startedEventId": 6, "result": {"ok": true}, "identity": "w-1"}'::jsonb,
    'ActivityTaskCompleted: result, scheduled and started event ids');
SELECT is((SELECT array_agg(outcome || ':' || attempt) FROM durable.activity_attempts WHERE workflow_id = 'sched'),
    '{completed:1}', 'activity_attempts: one completed attempt');
SELECT is(durable.describe_workflow('sched')->'pendingActivities', '[]', 'nothing pending');

-- RequestCancelActivityTask of an activity not started: canceled at once.
SELECT durable.start_workflow('wf', NULL, 'cancel1', 'cancel1') IS NOT NULL AS started;
SELECT t.decide('cancel1', jsonb_build_array(t.sched('a1'))) IS NOT NULL;
SELECT durable.signal_workflow('cancel1', 'stop');
SELECT t.decide('cancel1', '[{"decisionType": "RequestCancelActivityTask", "activityId": "a1"}]') IS NOT NULL;
SELECT is(t.events('cancel1', from_id => 5),
    '{ActivityTaskScheduled,WorkflowExecutionSignaled,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,ActivityTaskCancelRequested,ActivityTaskCanceled,DecisionTaskScheduled}',
    'RequestCancelActivityTask of a scheduled activity: CancelRequested, Canceled, a decision task');
SELECT is(t.attrs('cancel1', 'ActivityTaskCancelRequested'),
    '{"activityId": "a1", "decisionTaskCompletedEventId": 9}'::jsonb, 'ActivityTaskCancelRequested');
SELECT is(t.attrs('cancel1', 'ActivityTaskCanceled'),
    '{"scheduledEventId": 5, "latestCancelRequestedEventId": 10, "details": null, "identity": null}'::jsonb,
    'ActivityTaskCanceled names the cancel request');
SELECT is(durable.poll_activity_task('cancel1'), NULL, 'the canceled activity is not handed out');
SELECT is((SELECT count(*) FROM durable.activity_attempts WHERE workflow_id = 'cancel1'), 0::bigint,
    'an activity canceled before it started has no attempt');

-- RequestCancelActivityTask of a started activity: the worker learns it from
-- its heartbeat and reports the cancellation.
SELECT durable.start_workflow('wf', NULL, 'cancel2', 'cancel2') IS NOT NULL AS started;
SELECT t.decide('cancel2', jsonb_build_array(t.sched('a1'))) IS NOT NULL;
SELECT durable.poll_activity_task('cancel2', identity => 'w-2') AS task \gset
SELECT is(durable.heartbeat_activity(:'task'::jsonb->>'taskToken', '{"p": 1}'), false, 'no cancel request yet');
SELECT durable.signal_workflow('cancel2', 'stop');
SELECT t.decide('cancel2', '[{"decisionType": "RequestCancelActivityTask", "activityId": "a1"}]') IS NOT NULL;
SELECT is(t.events('cancel2', from_id => 5),
    '{ActivityTaskScheduled,WorkflowExecutionSignaled,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,ActivityTaskCancelRequested}',
    'RequestCancelActivityTask of a started activity: only ActivityTaskCancelRequested');
SELECT is(t.pending('cancel2')->>'state', 'CANCEL_REQUESTED', 'describe: CANCEL_REQUESTED');
SELECT is(durable.heartbeat_activity(:'task'::jsonb->>'taskToken'), true, 'the heartbeat returns true');
SELECT durable.report_activity_canceled(:'task'::jsonb->>'taskToken', '{"why": "asked"}');
SELECT is(t.events('cancel2', from_id => 11),
    '{ActivityTaskStarted,ActivityTaskCanceled,DecisionTaskScheduled}',
    'report_activity_canceled: ActivityTaskStarted, ActivityTaskCanceled, a decision task');
SELECT is(t.attrs('cancel2', 'ActivityTaskCanceled'),
    '{"scheduledEventId": 5, "startedEventId": 11, "details": {"why": "asked"}, "identity": "w-2"}'::jsonb,
    'ActivityTaskCanceled carries the details');
SELECT is((SELECT array_agg(outcome) FROM durable.activity_attempts WHERE workflow_id = 'cancel2'),
    '{canceled}', 'activity_attempts: canceled');

-- StartTimer, TimerFired; CancelTimer, TimerCanceled.
SELECT t.at('2026-01-01 01:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'timers', 'timers') IS NOT NULL AS started;
SELECT t.decide('timers', '[{"decisionType": "StartTimer", "timerId": "t1", "startToFireTimeoutSeconds": 60},
                                  {"decisionType": "StartTimer", "timerId": "t2", "startToFireTimeoutSeconds": 120}]') IS NOT NULL;
SELECT is(t.events('timers', from_id => 5), '{TimerStarted,TimerStarted}', 'StartTimer: TimerStarted');
SELECT is(t.attrs('timers', 'TimerStarted'),
    '{"timerId": "t1", "startToFireTimeoutSeconds": 60, "decisionTaskCompletedEventId": 4}'::jsonb, 'TimerStarted');
SELECT is(durable.describe_workflow('timers')->'pendingTimers',
    '[{"timerId": "t1", "startedEventId": 5, "fireTime": "2026-01-01T01:01:00+00:00"},
      {"timerId": "t2", "startedEventId": 6, "fireTime": "2026-01-01T01:02:00+00:00"}]'::jsonb, 'describe: pendingTimers');
SELECT t.at('2026-01-01 01:00:59+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.events('timers', from_id => 7), '{}', 'a second early, the timer has not fired');
SELECT t.at('2026-01-01 01:01:00+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.events('timers', from_id => 7), '{TimerFired,DecisionTaskScheduled}', 'on time: TimerFired and a decision task');
SELECT is(t.attrs('timers', 'TimerFired'), '{"timerId": "t1", "startedEventId": 5}'::jsonb, 'TimerFired');
SELECT t.decide('timers', '[{"decisionType": "CancelTimer", "timerId": "t2"}]') IS NOT NULL;
SELECT is(t.events('timers', from_id => 9), '{DecisionTaskStarted,DecisionTaskCompleted,TimerCanceled}', 'CancelTimer: TimerCanceled');
SELECT is(t.attrs('timers', 'TimerCanceled'),
    '{"timerId": "t2", "startedEventId": 6, "decisionTaskCompletedEventId": 10}'::jsonb, 'TimerCanceled');
SELECT t.at('2026-01-01 02:00:00+00');
SELECT durable.tick() AS fired \gset
SELECT is(t.events('timers', from_id => 12), '{}', 'a canceled timer never fires');

-- RecordMarker and UpsertWorkflowSearchAttributes, then CompleteWorkflowExecution.
SELECT durable.start_workflow('wf', NULL, 'done', 'done') IS NOT NULL AS started;
SELECT t.decide('done', '[{"decisionType": "RecordMarker", "markerName": "Version", "details": {"v": 2}},
    {"decisionType": "UpsertWorkflowSearchAttributes", "searchAttributes": {"CustomerId": "c-7"}},
    {"decisionType": "CompleteWorkflowExecution", "result": {"total": 42}}]') IS NOT NULL;
SELECT is(t.events('done', from_id => 4),
    '{DecisionTaskCompleted,MarkerRecorded,UpsertWorkflowSearchAttributes,WorkflowExecutionCompleted}',
    'RecordMarker, UpsertWorkflowSearchAttributes, CompleteWorkflowExecution');
SELECT is(t.attrs('done', 'MarkerRecorded'),
    '{"markerName": "Version", "details": {"v": 2}, "decisionTaskCompletedEventId": 4}'::jsonb, 'MarkerRecorded');
SELECT is(t.attrs('done', 'UpsertWorkflowSearchAttributes'),
    '{"searchAttributes": {"CustomerId": "c-7"}, "decisionTaskCompletedEventId": 4}'::jsonb, 'UpsertWorkflowSearchAttributes');
SELECT is(t.attrs('done', 'WorkflowExecutionCompleted'),
    '{"result": {"total": 42}, "decisionTaskCompletedEventId": 4}'::jsonb, 'WorkflowExecutionCompleted');
SELECT is(durable.describe_workflow('done') - '{runId,firstRunId,startTime,closeTime,pendingActivities,pendingChildren,pendingTimers,memo,parent,continuedFrom,continuedTo,retryPolicy,cronSchedule,executionTimeoutSeconds,runTimeoutSeconds,decisionTimeoutSeconds,namespace,workflowType,taskQueue}'::text[],
    '{"workflowId": "done", "status": "completed", "attempt": 1, "result": {"total": 42}, "failure": null,
      "cancelRequested": false, "historyLength": 7, "searchAttributes": {"CustomerId": "c-7"}}'::jsonb,
    'describe: completed with its result and the search attributes it upserted');

-- FailWorkflowExecution without a retry policy: failed for good.
SELECT durable.start_workflow('wf', NULL, 'failed', 'failed') IS NOT NULL AS started;
SELECT t.decide('failed', '[{"decisionType": "FailWorkflowExecution", "reason": "bad-input", "details": {"field": "n"}}]') IS NOT NULL;
SELECT is(t.events('failed', from_id => 4), '{DecisionTaskCompleted,WorkflowExecutionFailed}', 'FailWorkflowExecution: WorkflowExecutionFailed');
SELECT is(t.attrs('failed', 'WorkflowExecutionFailed'),
    '{"reason": "bad-input", "details": {"field": "n"}, "decisionTaskCompletedEventId": 4}'::jsonb, 'WorkflowExecutionFailed');
SELECT is(durable.describe_workflow('failed')->>'status', 'failed', 'status failed, no retry without a policy');
SELECT is((SELECT count(*) FROM durable.runs WHERE workflow_id = 'failed'), 1::bigint, 'no new run');

-- CancelWorkflowExecution, after a cancel request.
SELECT durable.start_workflow('wf', NULL, 'canceled', 'canceled') IS NOT NULL AS started;
SELECT t.decide('canceled', '[]') IS NOT NULL;
SELECT durable.cancel_workflow('canceled', 'user asked');
SELECT t.decide('canceled', '[{"decisionType": "CancelWorkflowExecution", "details": "cleaned up"}]') IS NOT NULL;
SELECT is(t.events('canceled', from_id => 4),
    '{DecisionTaskCompleted,WorkflowExecutionCancelRequested,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,WorkflowExecutionCanceled}',
    'CancelWorkflowExecution: WorkflowExecutionCanceled');
SELECT is(t.attrs('canceled', 'WorkflowExecutionCanceled'),
    '{"details": "cleaned up", "decisionTaskCompletedEventId": 8}'::jsonb, 'WorkflowExecutionCanceled');
SELECT is(durable.describe_workflow('canceled')->>'status', 'canceled', 'status canceled');

-- ContinueAsNewWorkflowExecution: a new run of the chain, initiator Decider.
SELECT durable.start_workflow('wf', '{"page": 1}', 'can', 'can') AS first_run \gset
SELECT t.decide('can', '[{"decisionType": "ContinueAsNewWorkflowExecution", "input": {"page": 2}}]') IS NOT NULL;
SELECT durable.resolve_run_id('can') AS second_run \gset
SELECT isnt(:'second_run'::uuid, :'first_run'::uuid, 'run_id NULL means the new run');
SELECT is(t.events('can', :'first_run'), '{WorkflowExecutionStarted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,WorkflowExecutionContinuedAsNew}',
    'the first run ends with WorkflowExecutionContinuedAsNew');
SELECT is(t.attrs('can', 'WorkflowExecutionContinuedAsNew', 1, :'first_run') - 'newExecutionRunId',
    '{"workflowType": "wf", "taskQueue": "can", "input": {"page": 2}, "taskStartToCloseTimeoutSeconds": 10,
      "backoffStartIntervalInSeconds": 0, "initiator": "Decider", "decisionTaskCompletedEventId": 4}'::jsonb,
    'WorkflowExecutionContinuedAsNew: initiator Decider');
SELECT is(t.attrs('can', 'WorkflowExecutionContinuedAsNew', 1, :'first_run')->>'newExecutionRunId',
    :'second_run', 'newExecutionRunId names the new run');
SELECT is(t.events('can'), '{WorkflowExecutionStarted,DecisionTaskScheduled}', 'get_history with run_id NULL follows the chain');
SELECT is(t.attrs('can', 'WorkflowExecutionStarted') - 'identity',
    jsonb_build_object('workflowType', 'wf', 'taskQueue', 'can', 'input', '{"page": 2}'::jsonb,
        'taskStartToCloseTimeoutSeconds', 10, 'attempt', 1, 'firstExecutionRunId', :'first_run',
        'continuedExecutionRunId', :'first_run', 'initiator', 'Decider'),
    'the new run: continuedExecutionRunId, initiator Decider, attempt 1');
SELECT is(durable.describe_workflow('can') - '{startTime,closeTime,pendingActivities,pendingChildren,pendingTimers,memo,searchAttributes,parent,retryPolicy,cronSchedule,executionTimeoutSeconds,runTimeoutSeconds,decisionTimeoutSeconds,namespace,workflowType,taskQueue,result,failure,cancelRequested,taskQueueWithoutPollers,activityTaskQueuesWithoutPollers}'::text[],
    jsonb_build_object('workflowId', 'can', 'runId', :'second_run', 'status', 'running', 'attempt', 1,
        'historyLength', 2, 'firstRunId', :'first_run', 'continuedFrom', :'first_run', 'continuedTo', NULL),
    'describe_workflow with run_id NULL follows the chain');
SELECT is(durable.describe_workflow('can', run_id => :'first_run')->>'status', 'continued_as_new', 'the first run is continued_as_new');
SELECT is(durable.poll_decision_task('can')->>'runId', :'second_run', 'the new run has its decision task');

-- A malformed decision among good ones changes nothing and is named.
SELECT durable.start_workflow('wf', NULL, 'bad', 'bad') IS NOT NULL AS started;
SELECT durable.poll_decision_task('bad') AS task \gset
SELECT t.footprint() AS before \gset
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, %L)$$, :'task'::jsonb->>'taskToken',
    jsonb_build_array(t.sched('a1'), '{"decisionType": "RecordMarker", "markerName": "m"}'::jsonb,
        '{"decisionType": "StartTimer", "timerId": "t1"}'::jsonb)),
    '22023', 'decisions[2].startToFireTimeoutSeconds is required', 'a StartTimer without its timeout is named');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, %L)$$, :'task'::jsonb->>'taskToken',
    jsonb_build_array(t.sched('a1'), t.sched('a2', '{"startToCloseTimeoutSeconds": "soon"}'))),
    '22023', 'decisions[1].startToCloseTimeoutSeconds must be a number of seconds', 'a bad timeout is named');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, %L)$$, :'task'::jsonb->>'taskToken',
    '[{"decisionType": "CompleteWorkflowExecution"}, {"decisionType": "RecordMarker", "markerName": "m"}]'),
    '22023', 'decisions[0]: CompleteWorkflowExecution must be the last decision', 'a close decision must be last');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, %L)$$, :'task'::jsonb->>'taskToken',
    '[{"decisionType": "RecordMarker", "markerName": "m"}, {"decisionType": "Sleep"}]'),
    '22023', 'decisions[1].decisionType "Sleep" is not a decision', 'an unknown decision type is named');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, %L)$$, :'task'::jsonb->>'taskToken',
    jsonb_build_array(t.sched('a1', '{"retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 3, "backoffCoefficient": 0.5}}'))),
    '22023', 'decisions[0].retryPolicy.backoffCoefficient must be at least 1', 'a bad retry policy is named');
SELECT is(t.footprint(), :'before', 'the failed completions wrote nothing');
SELECT lives_ok(format($$SELECT durable.complete_decision_task(%L, %L)$$, :'task'::jsonb->>'taskToken',
    jsonb_build_array(t.sched('a1'))), 'the same task can still be completed');
SELECT is(t.events('bad', from_id => 4), '{DecisionTaskCompleted,ActivityTaskScheduled}', 'with the good decisions only');

SELECT * FROM finish();
ROLLBACK;

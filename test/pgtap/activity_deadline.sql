-- Which deadline applies to a retried activity.  With a retry policy that
-- allows more than one attempt, the ScheduleToStart and ScheduleToClose
-- timeouts are extended to the policy's expiration interval, or else to the
-- time left before the workflow's deadline: Cadence's rule (its decision
-- attribute validator's validateActivityScheduleAttributes, which makes
-- ScheduleToStart and ScheduleToClose as long as the retry policy's
-- expiration, or the workflow's timeout when the policy has none).  ActivityTaskScheduled records
-- the values that apply, and describe_workflow's expirationTime is the
-- deadline that applies: ScheduleToClose, the expiration, or the workflow's.
BEGIN;
SELECT plan(7);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

-- 2 s ScheduleToClose, 1 s ScheduleToStart, a 60 s expiration interval.
SELECT durable.start_workflow('wf', NULL, 'exp', 'exp') IS NOT NULL AS started;
SELECT t.decide('exp', jsonb_build_array(t.sched('a1', '{"scheduleToCloseTimeoutSeconds": 2,
    "scheduleToStartTimeoutSeconds": 1,
    "retryPolicy": {"initialIntervalInSeconds": 1, "expirationIntervalInSeconds": 60}}'))) IS NOT NULL;
SELECT is(t.attrs('exp', 'ActivityTaskScheduled') - 'activityId' - 'activityType' - 'taskQueue' - 'input'
          - 'retryPolicy' - 'decisionTaskCompletedEventId',
    '{"scheduleToStartTimeoutSeconds": 60, "scheduleToCloseTimeoutSeconds": 60, "startToCloseTimeoutSeconds": 2}'::jsonb,
    'recorded: ScheduleToStart and ScheduleToClose are the expiration, StartToClose the 2 s given');
SELECT is((t.pending('exp')->>'expirationTime')::timestamptz, '2026-01-01 00:01:00+00',
    'expirationTime: the expiration after the first schedule');

-- No expiration interval: the workflow's run timeout (10 minutes) applies.
SELECT durable.start_workflow('wf', NULL, 'wfd', 'wfd', run_timeout => '10 minutes') IS NOT NULL AS started;
SELECT t.decide('wfd', jsonb_build_array(t.sched('a1', '{"scheduleToCloseTimeoutSeconds": 2,
    "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 5}}'))) IS NOT NULL;
SELECT is((t.attrs('wfd', 'ActivityTaskScheduled')->>'scheduleToCloseTimeoutSeconds')::float8, 600::float8,
    'recorded: ScheduleToClose is the time left before the workflow''s deadline');
SELECT is((t.pending('wfd')->>'expirationTime')::timestamptz, '2026-01-01 00:10:00+00',
    'expirationTime: the workflow''s deadline');

-- No ScheduleToClose at all: the workflow's deadline still ends the retries.
SELECT durable.start_workflow('wf', NULL, 'nos2c', 'nos2c', run_timeout => '10 minutes') IS NOT NULL AS started;
SELECT t.decide('nos2c', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 5}'))) IS NOT NULL;
SELECT is((t.pending('nos2c')->>'expirationTime')::timestamptz, '2026-01-01 00:10:00+00',
    'expirationTime without ScheduleToClose: the workflow''s deadline');

-- maximumAttempts 1: no retry, the 2 s given are kept.
SELECT durable.start_workflow('wf', NULL, 'once', 'once', run_timeout => '10 minutes') IS NOT NULL AS started;
SELECT t.decide('once', jsonb_build_array(t.sched('a1', '{"scheduleToCloseTimeoutSeconds": 2,
    "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 1}}'))) IS NOT NULL;
SELECT is((t.pending('once')->>'expirationTime')::timestamptz, '2026-01-01 00:00:02+00',
    'without retry ScheduleToClose is kept: expirationTime 2 s after the schedule');

-- No timeout anywhere (no ScheduleToClose, no expiration, a workflow
-- without timeouts): nothing ends the retries but their count, and there is
-- no deadline to show.
SELECT durable.start_workflow('wf', NULL, 'none', 'none') IS NOT NULL AS started;
SELECT t.decide('none', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 5,
    "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 5}}'))) IS NOT NULL;
SELECT is(t.pending('none')->'expirationTime', 'null'::jsonb,
    'no timeout anywhere: expirationTime is null');

SELECT * FROM finish();
ROLLBACK;

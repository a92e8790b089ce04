-- poll_activity_tasks: several activity tasks at once; polls that wait.
BEGIN;
SELECT plan(9);
SET LOCAL durable.test_time = '2026-06-01 00:00:00+00';

SELECT durable.start_workflow('batch', NULL, 'b1', task_queue => 'bq') IS NOT NULL AS started;
SELECT durable.complete_decision_task(durable.poll_decision_task('bq')->>'taskToken',
    '[{"decisionType": "ScheduleActivityTask", "activityId": "a1", "activityType": "x"},
      {"decisionType": "ScheduleActivityTask", "activityId": "a2", "activityType": "x"},
      {"decisionType": "ScheduleActivityTask", "activityId": "a3", "activityType": "x"}]');

CREATE TEMP TABLE got AS
    SELECT t FROM durable.poll_activity_tasks('bq', 'w1', max_tasks => 2) t;
SELECT is((SELECT count(*)::int FROM got), 2, 'max_tasks bounds a batch');
SELECT is((SELECT array_agg(t->>'activityId' ORDER BY t->>'activityId') FROM got),
          '{a1,a2}', 'oldest first');
SELECT is((SELECT count(DISTINCT t->>'taskToken')::int FROM got), 2, 'each with its own token');
SELECT is((SELECT array_agg(t->>'activityId') FROM durable.poll_activity_tasks('bq', 'w2', max_tasks => 5) t),
          '{a3}', 'the next batch gets what is left');
SELECT is((SELECT count(*)::int FROM durable.poll_activity_tasks('bq', 'w3')), 0,
          'an empty queue gives no row');
SELECT is((SELECT count(*)::int FROM durable.activities WHERE state = 'STARTED'), 3,
          'every task of a batch is started');
SELECT throws_ok($$SELECT * FROM durable.poll_activity_tasks('bq', max_tasks => 0)$$,
                 '22023', 'max_tasks must be at least 1');
SELECT throws_ok($$SELECT durable.poll_activity_task('bq', wait => '-1 second')$$,
                 '22023', 'wait must not be negative');
-- A poll whose wait runs out with nothing ready returns NULL.
SELECT is(durable.poll_decision_task('empty', wait => '50 milliseconds'), NULL,
          'a poll that waits in vain returns NULL');

SELECT * FROM finish();
ROLLBACK;

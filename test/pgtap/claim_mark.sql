-- Claims start at a queue's low-water mark (src/store/claim_mark.c, docs/performance.md
-- "A held vacuum horizon"): tasks still
-- come oldest first, and a task whose claim was rolled back (to a savepoint, in the
-- transaction that goes on claiming) is delivered again, although the tasks after it
-- were claimed meanwhile.
BEGIN;
SELECT plan(5);

SELECT count(durable.start_workflow('cm', NULL, 'cm-' || i, task_queue => 'cmq'))
  FROM generate_series(1, 6) i;

SELECT is(durable.poll_decision_task('cmq')->>'workflowId', 'cm-1', 'the oldest task first');
SELECT is(durable.poll_decision_task('cmq')->>'workflowId', 'cm-2', 'then the next');

SAVEPOINT claims;
SELECT durable.poll_decision_task('cmq')->>'workflowId' AS third;
SELECT durable.poll_decision_task('cmq')->>'workflowId' AS fourth;
SELECT durable.poll_decision_task('cmq')->>'workflowId' AS fifth;
ROLLBACK TO SAVEPOINT claims;

SELECT is(durable.poll_decision_task('cmq')->>'workflowId', 'cm-3',
          'a task whose claim was rolled back comes back, in its place');
SELECT is((SELECT array_agg(durable.poll_decision_task('cmq')->>'workflowId') FROM generate_series(1, 3)),
          '{cm-4,cm-5,cm-6}', 'and the ones after it, each once');
SELECT is(durable.poll_decision_task('cmq'), NULL, 'none left');

SELECT * FROM finish();
ROLLBACK;

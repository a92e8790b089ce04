-- activity_eager: the activity cycle's workflow (activity_cycle.sql) with eager
-- dispatch (docs/api.md "Eager dispatch"): 5 autocommit transactions instead of 7
-- (bench/README.md):
--   1 start_workflow
--   2 poll_decision_task
--   3 complete_decision_task(..., max_eager_activities => 1): the activity comes back
--     started (requestEagerExecution, bench_decide_eager)
--   4 complete_activity(..., return_new_task => true): the next decision task comes
--     back started
--   5 complete_decision_task
-- Run with -M prepared: tokens and tasks travel as bind parameters.  A call that
-- returned nothing (it should not) makes the next one a no-op.
SELECT durable.start_workflow('bench_cycle', '{"n": 1}'::jsonb, NULL, 'bench');
SELECT durable.poll_decision_task('bench', 'bench-worker', 'default', '5s') AS dtask
\gset
SELECT (SELECT durable.complete_decision_task(t->>'taskToken', bench_decide_eager(t), NULL,
            false, 1)->'activityTasks'->0->>'taskToken'
          FROM (SELECT NULLIF(:dtask, '')::jsonb AS t) s WHERE t IS NOT NULL) AS atoken
\gset
SELECT (SELECT durable.complete_activity(tok, '{"ok": true}'::jsonb, true)->'decisionTask'
          FROM (SELECT NULLIF(:atoken, '') AS tok) s WHERE tok IS NOT NULL) AS dtask
\gset
SELECT durable.complete_decision_task(t->>'taskToken', bench_decide(t))
  FROM (SELECT NULLIF(:dtask, '')::jsonb AS t) s WHERE t IS NOT NULL;

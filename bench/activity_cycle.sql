-- activity: one activity cycle a script execution, 7 autocommit transactions, one a
-- worker API call, done the way a worker does them (bench/README.md):
--   1 start_workflow            4 poll_activity_task        6 poll_decision_task
--   2 poll_decision_task        5 complete_activity         7 complete_decision_task
--   3 complete_decision_task
-- The clients share the queue `bench`, so a poll may return another client's task;
-- bench_decide() (made by bench/run.sh) answers any decision task from its history:
-- ScheduleActivityTask first, CompleteWorkflowExecution once ActivityTaskCompleted is
-- there.  Run with -M prepared: tokens and tasks travel as bind parameters.  A poll that
-- comes back empty after its wait (it should not) makes the next call a no-op.  The
-- queue is the variable `queue` (-D queue=...): `bench`, or `bench_limited` for the
-- workload activity_limited, whose queue has limits that never bind.
SELECT durable.start_workflow('bench_cycle', '{"n": 1}'::jsonb, NULL, :queue);
SELECT durable.poll_decision_task(:queue, 'bench-worker', 'default', '5s') AS dtask
\gset
SELECT durable.complete_decision_task(t->>'taskToken', bench_decide(t))
  FROM (SELECT NULLIF(:dtask, '')::jsonb AS t) s WHERE t IS NOT NULL;
SELECT durable.poll_activity_task(:queue, 'bench-worker', 'default', '5s')->>'taskToken' AS atoken
\gset
SELECT durable.complete_activity(tok, '{"ok": true}'::jsonb)
  FROM (SELECT NULLIF(:atoken, '') AS tok) s WHERE tok IS NOT NULL;
SELECT durable.poll_decision_task(:queue, 'bench-worker', 'default', '5s') AS dtask
\gset
SELECT durable.complete_decision_task(t->>'taskToken', bench_decide(t))
  FROM (SELECT NULLIF(:dtask, '')::jsonb AS t) s WHERE t IS NOT NULL;

-- activity: one activity cycle a script execution, 7 autocommit transactions, one a
-- worker API call, done the way a worker does them (bench/README.md):
--   1 start_workflow            4 poll_activity_task        6 poll_decision_task
--   2 poll_decision_task        5 complete_activity         7 complete_decision_task
--   3 complete_decision_task
-- The clients share the queue `bench`, so a poll may return another client's task;
-- bench_decide() (bench/workers.sql) answers any decision task from its history:
-- ScheduleActivityTask first, CompleteWorkflowExecution once ActivityTaskCompleted is
-- there.  It runs in the poll's statement, where the task arrives, and only the token
-- and the decisions come back, as a worker reads its task and sends its decisions: the
-- task is not sent back to the server to be parsed again.  Run with -M prepared: tokens
-- and decisions travel as bind parameters.  A poll that comes back empty after its wait
-- (it should not) makes the next call a no-op.  The queue is the variable `queue` (-D queue=...): `bench`, or `bench_limited` for the
-- workload activity_limited, whose queue has limits that never bind.
SELECT durable.start_workflow('bench_cycle', '{"n": 1}'::jsonb, NULL, :queue);
SELECT t->>'taskToken' AS dtoken, bench_decide(t) AS decisions
  FROM (SELECT durable.poll_decision_task(:queue, 'bench-worker', 'default', '5s') AS t) s
\gset
SELECT durable.complete_decision_task(tok, NULLIF(:decisions, '')::jsonb)
  FROM (SELECT NULLIF(:dtoken, '') AS tok) s WHERE tok IS NOT NULL;
SELECT durable.poll_activity_task(:queue, 'bench-worker', 'default', '5s')->>'taskToken' AS atoken
\gset
SELECT durable.complete_activity(tok, '{"ok": true}'::jsonb)
  FROM (SELECT NULLIF(:atoken, '') AS tok) s WHERE tok IS NOT NULL;
SELECT t->>'taskToken' AS dtoken, bench_decide(t) AS decisions
  FROM (SELECT durable.poll_decision_task(:queue, 'bench-worker', 'default', '5s') AS t) s
\gset
SELECT durable.complete_decision_task(tok, NULLIF(:decisions, '')::jsonb)
  FROM (SELECT NULLIF(:dtoken, '') AS tok) s WHERE tok IS NOT NULL;

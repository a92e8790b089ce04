-- activity_eager: the activity cycle's workflow (activity_cycle.sql) done with eager
-- dispatch (docs/api.md "Eager dispatch", "Eager start"), 4 autocommit transactions
-- instead of 7 (bench/README.md):
--   1 start_workflow_eager: the workflow starts and its first decision task comes back
--     started, as a worker that starts the workflows it runs has it
--   2 complete_decision_task(..., max_eager_activities => 1): the activity comes back
--     started (requestEagerExecution, bench_decide_eager)
--   3 complete_activity(..., return_new_task => true, history_after => the first task's
--     startedEventId): the next decision task comes back started, with the events after
--     the ones the worker has (a worker that keeps the run's state, as Temporal's sticky
--     execution)
--   4 complete_decision_task
-- Each task is answered (bench_decide_eager, bench_decide) in the statement that
-- receives it, and only its token and the decisions come back, as a worker reads its
-- task and sends its decisions (activity_cycle.sql).  Run with -M prepared: tokens and
-- decisions travel as bind parameters.  A call that returned nothing (it should not)
-- makes the next one a no-op.
SELECT d->>'taskToken' AS dtoken, bench_decide_eager(d) AS decisions,
       d->>'startedEventId' AS seen
  FROM (SELECT durable.start_workflow_eager('bench_cycle', '{"n": 1}'::jsonb, NULL, 'bench',
                                            identity => 'bench-worker')->'decisionTask' AS d) s
\gset
SELECT (SELECT durable.complete_decision_task(tok, NULLIF(:decisions, '')::jsonb, NULL,
            false, 1)->'activityTasks'->0->>'taskToken'
          FROM (SELECT NULLIF(:dtoken, '') AS tok) s WHERE tok IS NOT NULL) AS atoken
\gset
SELECT d->>'taskToken' AS dtoken, bench_decide(d) AS decisions
  FROM (SELECT (SELECT durable.complete_activity(tok, '{"ok": true}'::jsonb, true,
                                                 NULLIF(:seen, '')::bigint)->'decisionTask'
                  FROM (SELECT NULLIF(:atoken, '') AS tok) s WHERE tok IS NOT NULL) AS d) s
\gset
SELECT durable.complete_decision_task(tok, NULLIF(:decisions, '')::jsonb)
  FROM (SELECT NULLIF(:dtoken, '') AS tok) s WHERE tok IS NOT NULL;

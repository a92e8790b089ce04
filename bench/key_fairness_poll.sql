-- key_fairness: a worker of the cheapest kind.  It polls the queue (-D queue=...) and
-- answers each decision task at once with CompleteWorkflowExecution, two autocommit
-- transactions a script execution.  Run with -M prepared: the task's token travels as a
-- bind parameter.  A poll that comes back empty after its 1 s wait (an idle queue) makes the
-- answer a no-op; the short wait lets pgbench stop within a second of its -T.
SELECT durable.poll_decision_task(:queue, 'kf-worker', 'default', '1s')->>'taskToken' AS dtoken
\gset
SELECT durable.complete_decision_task(tok,
           '[{"decisionType": "CompleteWorkflowExecution", "result": {"ok": true}}]'::jsonb)
  FROM (SELECT NULLIF(:dtoken, '') AS tok) s WHERE tok IS NOT NULL;

-- citus cycle_direct / cycle_routed: the activity cycle of bench/activity_cycle.sql (7
-- calls) run by a pgbench client connected to one worker node.  Only the start differs:
-- bench_start(:routed) (made by bench/citus.sh) draws a workflow id that this node owns
-- and sends the start over a dblink connection the session keeps, either to the
-- coordinator as durable_citus.start_workflow (routed: the coordinator delegates it back
-- to this node) or to this node itself as durable.start_workflow (direct).  The six
-- worker calls (polls and completions) are made on this node directly, as a worker polls
-- each node (docs/citus.md "Workers").  Run with -M prepared.
SELECT bench_start(:routed, :queue);
SELECT t->>'taskToken' AS dtoken, bench_decide(t) AS decisions
  FROM (SELECT durable.poll_decision_task(:queue, 'bench-worker', 'default', '2s') AS t) s
\gset
SELECT durable.complete_decision_task(tok, NULLIF(:decisions, '')::jsonb)
  FROM (SELECT NULLIF(:dtoken, '') AS tok) s WHERE tok IS NOT NULL;
SELECT durable.poll_activity_task(:queue, 'bench-worker', 'default', '2s')->>'taskToken' AS atoken
\gset
SELECT durable.complete_activity(tok, '{"ok": true}'::jsonb)
  FROM (SELECT NULLIF(:atoken, '') AS tok) s WHERE tok IS NOT NULL;
SELECT t->>'taskToken' AS dtoken, bench_decide(t) AS decisions
  FROM (SELECT durable.poll_decision_task(:queue, 'bench-worker', 'default', '2s') AS t) s
\gset
SELECT durable.complete_decision_task(tok, NULLIF(:decisions, '')::jsonb)
  FROM (SELECT NULLIF(:dtoken, '') AS tok) s WHERE tok IS NOT NULL;

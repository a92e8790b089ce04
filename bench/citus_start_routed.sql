-- citus start_routed: one durable_citus.start_workflow per transaction, autocommit, sent
-- to the coordinator, which draws the workflow id (a random UUID) and delegates the call
-- to the worker that owns it (docs/citus.md).  No worker polls.  bench/citus.sh.
SELECT durable_citus.start_workflow('bench', '{"n": 1}'::jsonb);

-- start: one durable.start_workflow per transaction, autocommit, with a random workflow
-- id (the default) and a small input; no worker runs, so nothing else competes.
SELECT durable.start_workflow('bench', '{"n": 1}'::jsonb);

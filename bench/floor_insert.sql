-- The floor: one autocommit INSERT of a row keyed by a random uuid into an indexed table
-- (bench_floor, made by bench/run.sh), i.e. what PostgreSQL itself commits for a
-- transaction shaped like start_workflow's (one indexed row, one WAL flush).
INSERT INTO bench_floor (k, v) VALUES (gen_random_uuid()::text, '{"n": 1}'::jsonb);

-- sqlwf: start one workflow of type bench_sqlwf (a SQL workflow of three no-op SQL
-- activities, registered by bench/run.sh), autocommit.  The executor workers run it.
SELECT durable.start_workflow('bench_sqlwf', '{"n": 1}'::jsonb, task_queue => 'sqlwf');

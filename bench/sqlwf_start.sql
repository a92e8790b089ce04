-- sqlwf: start one workflow of type bench_sqlwf (a SQL workflow of three no-op SQL
-- activities, registered by bench/run.sh), autocommit.  The executor workers run it.
-- Its queue is the variable `queue` (-D queue=...): `sqlwf`, or `sqlwf_limited` for the
-- workload sqlwf_limited, whose queue has limits that never bind.
SELECT durable.start_workflow('bench_sqlwf', '{"n": 1}'::jsonb, task_queue => :queue);

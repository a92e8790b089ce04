-- fairness: tenant B starts one SQL workflow of one no-op SQL activity and waits for its
-- close (wait_workflow, woken by the commit), autocommit; the script's latency is B's
-- workflow latency, start to result, while tenant A keeps the executors busy.
\set id random(1, 2000000000)
SELECT durable.start_workflow('bench_fair_quick', '{"n": 1}'::jsonb, 'fb-' || :client_id || '-' || :id,
                              task_queue => 'fair', namespace => 'bench_fair_b');
SELECT durable.wait_workflow('fb-' || :client_id || '-' || :id, 'bench_fair_b', wait => '60 seconds');

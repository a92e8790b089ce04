-- key_fairness: tenant B starts one workflow on the queue of tenant A's backlog
-- (-D queue=...), with the concurrency key -D key=... ('-': none), autocommit.  Its
-- first decision task's wait is read from the run's history afterwards.
SELECT durable.start_workflow('kf_b', '{"n": 1}'::jsonb, NULL, :queue,
                              concurrency_key => NULLIF(:key, '-'));

-- queue_floor: the floor of the activity cycle, 7 autocommit transactions a script
-- execution on a plain job table (bench_queue, made by bench/run.sh): the peers' queue
-- cycle (bench/README.md: INSERT a job; claim it with FOR UPDATE SKIP LOCKED; UPDATE it
-- to done) chained three times, each completion inserting the next job in the same statement,
-- like the activity cycle's transactions:
--   1 INSERT job 'd'              (start_workflow)
--   2 claim a 'd' job             (poll_decision_task)
--   3 done + INSERT job 'a'       (complete_decision_task: schedules the activity)
--   4 claim an 'a' job            (poll_activity_task)
--   5 done + INSERT job 'd'       (complete_activity: schedules a decision)
--   6 claim a 'd' job             (poll_decision_task)
--   7 done                        (complete_decision_task: closes the workflow)
-- Clients share the table, so a claim may take another client's job, as in the cycle.
-- A claim can come back empty (rarely: its snapshot predates the jobs inserted since,
-- and SKIP LOCKED passed over the rest); it then yields job 0, the next UPDATE does
-- nothing, and the job left ready is taken by a later claim.  durable's polls retry
-- instead (their wait), so this only flatters the floor.
INSERT INTO bench_queue (kind, payload) VALUES ('d', '{"n": 1}'::jsonb);
WITH c AS (UPDATE bench_queue SET state = 'running', claimed_at = now()
  WHERE id = (SELECT id FROM bench_queue WHERE state = 'ready' AND kind = 'd'
              ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
  RETURNING id)
  SELECT COALESCE((SELECT id FROM c), 0) AS job
\gset
WITH done AS (UPDATE bench_queue SET state = 'done', done_at = now() WHERE id = :job)
  INSERT INTO bench_queue (kind, payload) VALUES ('a', '{"n": 1}'::jsonb);
WITH c AS (UPDATE bench_queue SET state = 'running', claimed_at = now()
  WHERE id = (SELECT id FROM bench_queue WHERE state = 'ready' AND kind = 'a'
              ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
  RETURNING id)
  SELECT COALESCE((SELECT id FROM c), 0) AS job
\gset
WITH done AS (UPDATE bench_queue SET state = 'done', done_at = now() WHERE id = :job)
  INSERT INTO bench_queue (kind, payload) VALUES ('d', '{"ok": true}'::jsonb);
WITH c AS (UPDATE bench_queue SET state = 'running', claimed_at = now()
  WHERE id = (SELECT id FROM bench_queue WHERE state = 'ready' AND kind = 'd'
              ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
  RETURNING id)
  SELECT COALESCE((SELECT id FROM c), 0) AS job
\gset
UPDATE bench_queue SET state = 'done', done_at = now() WHERE id = :job;

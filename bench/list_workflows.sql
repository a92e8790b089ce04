-- bench/list_workflows.sql: the data of the list benchmark (bench/list_workflows.sh).
-- 1,000,000 runs written straight into durable.runs, as the engine writes them (the
-- columns start_workflow sets, and those closing sets), in start-time order over 30
-- days: 80 % in namespace default, 15 % in billing, 5 % in tenant-3; 10 % running,
-- 70 % completed, 8 % failed, 3 % canceled, 4 % terminated, 3 % continued_as_new,
-- 2 % timed_out; 20 workflow types (type-0 has 1 run in 4, the rest alike); 10 task
-- queues; search attributes on 30 % ({"CustomerId": "c-<0..19999>", "Region": one of 5}),
-- a memo on 20 %.  Then VACUUM ANALYZE, as autovacuum would have done by then.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
SELECT setseed(0.42);
SELECT durable.create_namespace('billing');
SELECT durable.create_namespace('tenant-3');
INSERT INTO durable.runs (run_id, run_seq, namespace, workflow_id, workflow_type, task_queue,
        status, input, attempt, first_run_id, chain_start_time, start_time, close_time,
        result, failure, decision_timeout, memo, search_attributes, last_event_id,
        decision_scheduled_id)
SELECT id, nextval('durable.run_seq'), ns, 'wf-' || g, wtype, 'queue-' || (g % 10),
       st, '{"n": 1}', 1, id, t, t,
       CASE WHEN st <> 'running' THEN t + (g % 600) * interval '1 second' END,
       CASE WHEN st = 'completed' THEN '{"ok": true}'::jsonb END,
       CASE WHEN st = 'failed' THEN '{"reason": "boom", "details": null}'::jsonb END,
       10,
       CASE WHEN g % 5 = 0 THEN jsonb_build_object('owner', 'team-' || (g % 50)) END,
       CASE WHEN g % 10 < 3 THEN jsonb_build_object('CustomerId', 'c-' || (g % 20000),
            'Region', (ARRAY['eu', 'us', 'ap', 'sa', 'af'])[1 + g % 5]) END,
       CASE WHEN st = 'running' THEN 2 ELSE 11 END,
       CASE WHEN st = 'running' THEN 2 ELSE 0 END
  FROM (SELECT g, gen_random_uuid() AS id,
               timestamptz '2026-01-01 00:00:00+00' + g * interval '2592 milliseconds' AS t,
               CASE WHEN h < 80 THEN 'default' WHEN h < 95 THEN 'billing' ELSE 'tenant-3' END AS ns,
               CASE WHEN s < 10 THEN 'running' WHEN s < 80 THEN 'completed'
                    WHEN s < 88 THEN 'failed' WHEN s < 91 THEN 'canceled'
                    WHEN s < 95 THEN 'terminated' WHEN s < 98 THEN 'continued_as_new'
                    ELSE 'timed_out' END AS st,
               CASE WHEN w < 25 THEN 'type-0' ELSE 'type-' || (1 + w::int % 19) END AS wtype
          FROM (SELECT g, floor(random() * 100) AS h, floor(random() * 100) AS s,
                       floor(random() * 100) AS w
                  FROM generate_series(1, 1000000) g) x) y;
VACUUM ANALYZE durable.runs;

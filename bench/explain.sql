-- bench/explain.sql: EXPLAIN (ANALYZE, BUFFERS) of every statement durable's C code keeps
-- a plan for (every KeptPlan of src/*.c), over a database holding 100,000 closed
-- workflows and about 11,000 running ones in every state.  Run by
-- `bash bench/run.sh explain`, which writes the output to bench/EXPLAIN.md (psql -q:
-- only the \echo lines, the statements and the plans).
--
-- This file only loads the data and sets the psql variables the sample values use.
-- The statements are not copied here: bench/extract_plans.py reads them from the
-- KeptPlan structs of src/*.c and writes the PREPARE / EXPLAIN EXECUTE script that the
-- last line includes (psql variable `plans`, its path; run.sh generates it first):
--
--     python3 bench/extract_plans.py > /tmp/plans.sql
--     psql -v plans=/tmp/plans.sql -f bench/explain.sql
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only on
SET client_min_messages = warning;

\o /dev/null
-- 100,000 closed workflows, 10,000 a transaction: started and terminated at once.
SELECT format($f$SELECT count(*) FROM (SELECT durable.start_workflow('bulk', '{"n": 1}',
    'closed-' || g, 'bulk') FROM generate_series(%s, %s) g) s$f$, b * 10000 + 1, b * 10000 + 10000)
  FROM generate_series(0, 9) b \gexec
SELECT format($f$SELECT count(*) FROM (SELECT durable.terminate_workflow('closed-' || g,
    'bulk load') FROM generate_series(%s, %s) g) s$f$, b * 10000 + 1, b * 10000 + 10000)
  FROM generate_series(0, 9) b \gexec

-- 1,000 workflows completed through the worker protocol (decision, one activity,
-- decision), so history, activity_attempt_log and the run rows look like real ones.
SELECT count(*) FROM (SELECT durable.start_workflow('cycle', '{"n": 1}', 'done-' || g,
    'cycle') FROM generate_series(1, 1000) g) s;
DO $$
DECLARE t jsonb;
BEGIN
    FOR i IN 1..1000 LOOP
        t := durable.poll_decision_task('cycle', 'explain');
        PERFORM durable.complete_decision_task(t->>'taskToken', '[{"decisionType":
            "ScheduleActivityTask", "activityId": "a1", "activityType": "noop",
            "input": {}, "startToCloseTimeoutSeconds": 60}]');
        t := durable.poll_activity_task('cycle', 'explain');
        PERFORM durable.complete_activity(t->>'taskToken', '{"ok": true}');
        t := durable.poll_decision_task('cycle', 'explain');
        PERFORM durable.complete_decision_task(t->>'taskToken',
            '[{"decisionType": "CompleteWorkflowExecution", "result": {}}]');
    END LOOP;
END $$;

-- Running workflows (every timeout long enough that the timer worker leaves them alone
-- while this runs):
--   2,000 waiting for a decision task (queue `bulk`), with a run and an execution
--         timeout (timers run_timeout and execution_timeout);
--   2,000 with a started decision task (timer decision_timeout) and a signal buffered
--         behind it (queue `st`);
--     200 with an activity scheduled and 200 with an activity started (queue `acts`,
--         timer activity);
--   2,000 with a user timer (timer user_timer);
--     200 parents (queue `parents`) each with a pending child (ABANDON), the 200
--         children waiting for their first decision task (queue `kids`);
--   5,000 with a delayed first decision task (timer first_decision).
-- The other kinds of durable.timers (decision_retry, deliver, external, close_policy)
-- are due at once or within seconds and gone by the time the plans run.
SELECT count(*) FROM (SELECT durable.start_workflow('open', '{"n": 1}', 'open-' || g,
    'bulk', execution_timeout => '2 days', run_timeout => '1 day')
    FROM generate_series(1, 2000) g) s;
SELECT count(*) FROM (SELECT durable.start_workflow('open', '{"n": 1}', 'started-' || g,
    'st', decision_timeout => '1 hour') FROM generate_series(1, 2000) g) s;
SELECT count(*) FROM (SELECT durable.poll_decision_task('st', 'explain')
    FROM generate_series(1, 2000)) s;
SELECT count(*) FROM (SELECT durable.signal_workflow('started-' || g, 'ping', '{}')
    FROM generate_series(1, 2000) g) s;
SELECT count(*) FROM (SELECT durable.start_workflow('open', '{"n": 1}', 'act-' || g, 'acts')
    FROM generate_series(1, 2400) g) s;
SELECT count(*) FROM (SELECT durable.start_workflow('parent', '{"n": 1}', 'parent-' || g,
    'parents') FROM generate_series(1, 200) g) s;
DO $$
DECLARE t jsonb;
BEGIN
    FOR i IN 1..400 LOOP
        t := durable.poll_decision_task('acts', 'explain');
        PERFORM durable.complete_decision_task(t->>'taskToken', '[{"decisionType":
            "ScheduleActivityTask", "activityId": "a1", "activityType": "noop",
            "input": {}, "startToCloseTimeoutSeconds": 7200,
            "heartbeatTimeoutSeconds": 3600}]');
    END LOOP;
    FOR i IN 1..2000 LOOP
        t := durable.poll_decision_task('acts', 'explain');
        PERFORM durable.complete_decision_task(t->>'taskToken', '[{"decisionType":
            "StartTimer", "timerId": "t1", "startToFireTimeoutSeconds": 3600}]');
    END LOOP;
    FOR i IN 1..200 LOOP
        PERFORM durable.poll_activity_task('acts', 'explain');
    END LOOP;
    FOR i IN 1..200 LOOP
        t := durable.poll_decision_task('parents', 'explain');
        PERFORM durable.complete_decision_task(t->>'taskToken', jsonb_build_array(
            jsonb_build_object('decisionType', 'StartChildWorkflowExecution',
                'workflowId', 'child-of-' || (t->>'workflowId'), 'workflowType', 'child',
                'taskQueue', 'kids', 'parentClosePolicy', 'ABANDON',
                'taskStartToCloseTimeoutSeconds', 3600)));
    END LOOP;
END $$;
SELECT count(*) FROM (SELECT durable.start_workflow('later', '{"n": 1}', 'delayed-' || g,
    'bulk', delay => '1 hour') FROM generate_series(1, 5000) g) s;
-- A batch job (that matches no run: completed at once) for batch.c's statements.
SELECT durable.start_batch('signal', 'default', workflow_id_prefix => 'no-such-run-',
    reason => 'explain', signal_name => 'ping');
SELECT durable.run_batches();
VACUUM ANALYZE;
\o

\echo '## The data'
\echo
\echo '```'
SELECT format('%-28s %9s rows', relname, n_live_tup) FROM pg_stat_user_tables
 WHERE schemaname = 'durable' ORDER BY relname;
\echo
SELECT format('runs %-23s %9s', status, count(*)) FROM durable.runs GROUP BY status
 ORDER BY status;
SELECT format('timers %-21s %9s', kind, count(*)) FROM durable.timers GROUP BY kind
 ORDER BY kind;
SELECT format('ready_tasks %-16s %9s', task_queue || ' ' || kind::text, count(*))
  FROM durable.ready_tasks GROUP BY task_queue, kind ORDER BY 1;
SELECT format('%-27s %9s', 'decision_timeout timers of runs with no started decision task',
       count(*)) FROM durable.timers t JOIN durable.runs r USING (run_id)
 WHERE t.kind = 'decision_timeout' AND r.decision_started_id = 0;
\echo '```'
\echo

-- The psql variables of the sample values (see OVERRIDES in bench/extract_plans.py).
-- A terminated run.
SELECT run_id AS closed_run, workflow_id AS closed_wid FROM durable.runs
 WHERE workflow_id = 'closed-50000' \gset
-- A running run with a STARTED activity.
SELECT r.run_id AS run, r.workflow_id AS wid, r.last_event_id + 1 AS next_event,
       a.scheduled_event_id AS act_sched, a.attempt AS act_attempt
  FROM durable.runs r JOIN durable.activities a USING (run_id)
 WHERE a.state = 'STARTED' ORDER BY r.run_seq LIMIT 1 \gset
-- A SCHEDULED activity.
SELECT run_id AS sched_run, scheduled_event_id AS sched_act FROM durable.activities
 WHERE state = 'SCHEDULED' ORDER BY run_id LIMIT 1 \gset
-- A started decision task with a buffered signal.
SELECT run_id AS started_run FROM durable.buffered_events ORDER BY run_id LIMIT 1 \gset
-- A pending user timer.
SELECT run_id AS timer_run, timer_id, started_event_id AS timer_event
  FROM durable.user_timers ORDER BY run_id LIMIT 1 \gset
-- A durable.timers row (the latest due: a delayed start).
SELECT run_id AS t_run, kind AS t_kind, ref_id AS t_ref FROM durable.timers
 ORDER BY due_at DESC LIMIT 1 \gset
-- A parent with a pending child.
SELECT parent_run_id AS parent_run, initiated_event_id AS child_init
  FROM durable.children ORDER BY parent_run_id LIMIT 1 \gset
-- A run with a ready task.
SELECT run_id AS ready_run FROM durable.ready_tasks ORDER BY run_id LIMIT 1 \gset
-- A run completed through the worker protocol.
SELECT run_id AS done_run FROM durable.runs WHERE workflow_id = 'done-500' \gset
-- The batch job.
SELECT batch_id AS batch FROM durable.batch_jobs ORDER BY start_time LIMIT 1 \gset
SELECT gen_random_uuid() AS new_run \gset

-- Every KeptPlan of src/*.c, from bench/extract_plans.py.
\i :plans

-- bench/explain.sql: EXPLAIN (ANALYZE, BUFFERS) of every statement durable's C code keeps
-- a plan for (the KeptPlan structs of src/runs.c, src/api_worker.c, src/activities.c,
-- src/workflow.c, src/timers.c), over a database holding 100,000 closed workflows and a
-- few thousand running ones in every state.  Run by `bash bench/run.sh explain`, which
-- writes the output to bench/EXPLAIN.md (psql -q: only the \echo lines and the plans).
--
-- The statements are copied from the C sources, with RUN_COLUMNS and ACTIVITY_COLUMNS
-- expanded; each is PREPAREd with the plan's argument types and EXPLAINed as EXECUTE
-- with literal values under plan_cache_mode = force_generic_plan: the generic plan is
-- the one a backend keeps using once its kept plan has run five times, and the one
-- that cannot look at the values.  Statements that write run inside BEGIN ... ROLLBACK.
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
    'cycle') FROM generate_series(1, 1000) g) s \g /dev/null
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

-- Running workflows: 2,000 waiting for a decision task (queue `bulk`); 2,000 with a
-- started decision task (its timeout timer armed) and a signal buffered behind it; 200
-- with an activity scheduled (queue `acts`); 200 with an activity started; 2,000 with a
-- user timer; 5,000 with a delayed first decision task (a timer each).
SELECT count(*) FROM (SELECT durable.start_workflow('open', '{"n": 1}', 'open-' || g,
    'bulk') FROM generate_series(1, 2000) g) s \g /dev/null
SELECT count(*) FROM (SELECT durable.start_workflow('open', '{"n": 1}', 'started-' || g,
    'st') FROM generate_series(1, 2000) g) s \g /dev/null
SELECT count(*) FROM (SELECT durable.poll_decision_task('st', 'explain')
    FROM generate_series(1, 2000)) s \g /dev/null
SELECT count(*) FROM (SELECT durable.signal_workflow('started-' || g, 'ping', '{}')
    FROM generate_series(1, 2000) g) s \g /dev/null
SELECT count(*) FROM (SELECT durable.start_workflow('open', '{"n": 1}', 'act-' || g, 'acts')
    FROM generate_series(1, 2400) g) s \g /dev/null
DO $$
DECLARE t jsonb;
BEGIN
    FOR i IN 1..400 LOOP
        t := durable.poll_decision_task('acts', 'explain');
        PERFORM durable.complete_decision_task(t->>'taskToken', '[{"decisionType":
            "ScheduleActivityTask", "activityId": "a1", "activityType": "noop",
            "input": {}, "startToCloseTimeoutSeconds": 60, "heartbeatTimeoutSeconds": 30}]');
    END LOOP;
    FOR i IN 1..2000 LOOP
        t := durable.poll_decision_task('acts', 'explain');
        PERFORM durable.complete_decision_task(t->>'taskToken', '[{"decisionType":
            "StartTimer", "timerId": "t1", "startToFireTimeoutSeconds": 3600}]');
    END LOOP;
    FOR i IN 1..200 LOOP
        PERFORM durable.poll_activity_task('acts', 'explain');
    END LOOP;
END $$;
SELECT count(*) FROM (SELECT durable.start_workflow('later', '{"n": 1}', 'delayed-' || g,
    'bulk', delay => '1 hour') FROM generate_series(1, 5000) g) s \g /dev/null
VACUUM ANALYZE;
\o

\echo '## The data'
\echo
\echo '```'
SELECT format('%-28s %9s rows', relname, n_live_tup) FROM pg_stat_user_tables
 WHERE schemaname = 'durable' ORDER BY relname;
\echo '```'
\echo

-- Literal values for the parameters: a run in each state.
SELECT run_id AS closed_run, workflow_id AS closed_wid FROM durable.runs
 WHERE workflow_id = 'closed-50000' \gset
SELECT r.run_id AS run, r.workflow_id AS wid, r.last_event_id + 1 AS next_event
  FROM durable.runs r JOIN durable.activities a USING (run_id)
 WHERE a.state = 'STARTED' ORDER BY r.run_seq LIMIT 1 \gset
SELECT scheduled_event_id AS act_sched, attempt AS act_attempt FROM durable.activities
 WHERE run_id = :'run' \gset
SELECT run_id AS started_run FROM durable.buffered_events LIMIT 1 \gset
SELECT run_id AS timer_run, started_event_id AS timer_event FROM durable.user_timers
 LIMIT 1 \gset
SELECT timer_id AS any_timer FROM durable.timers ORDER BY due_at DESC LIMIT 1 \gset

SET plan_cache_mode = force_generic_plan;
\set explain 'EXPLAIN (ANALYZE, BUFFERS, SUMMARY OFF)'

-- ---------------------------------------------------------------- src/runs.c
\echo '## src/runs.c'
\echo
\echo '### load_latest'
\echo '```'
PREPARE load_latest(text, text) AS SELECT run_id, namespace, workflow_id, workflow_type, task_queue, status, attempt, cancel_requested, decision_timeout, last_event_id, decision_scheduled_id, decision_started_id, decision_attempt, decision_started_time, previous_started_id, activity_attempts, LEAST(execution_deadline, start_time + run_timeout * interval '1 second') FROM durable.runs WHERE namespace = $1 AND workflow_id = $2 ORDER BY run_seq DESC LIMIT 1;
:explain EXECUTE load_latest('default', :'closed_wid');
\echo '```'
\echo '### load_latest_locked'
\echo '```'
PREPARE load_latest_locked(text, text) AS SELECT run_id, namespace, workflow_id, workflow_type, task_queue, status, attempt, cancel_requested, decision_timeout, last_event_id, decision_scheduled_id, decision_started_id, decision_attempt, decision_started_time, previous_started_id, activity_attempts, LEAST(execution_deadline, start_time + run_timeout * interval '1 second') FROM durable.runs WHERE namespace = $1 AND workflow_id = $2 ORDER BY run_seq DESC LIMIT 1 FOR UPDATE;
BEGIN;
:explain EXECUTE load_latest_locked('default', :'wid');
ROLLBACK;
\echo '```'
\echo '### load_given'
\echo '```'
PREPARE load_given(text, text, uuid) AS SELECT run_id, namespace, workflow_id, workflow_type, task_queue, status, attempt, cancel_requested, decision_timeout, last_event_id, decision_scheduled_id, decision_started_id, decision_attempt, decision_started_time, previous_started_id, activity_attempts, LEAST(execution_deadline, start_time + run_timeout * interval '1 second') FROM durable.runs WHERE run_id = $3 AND namespace = $1 AND workflow_id = $2;
:explain EXECUTE load_given('default', :'closed_wid', :'closed_run');
\echo '```'
\echo '### load_given_locked'
\echo '```'
PREPARE load_given_locked(text, text, uuid) AS SELECT run_id, namespace, workflow_id, workflow_type, task_queue, status, attempt, cancel_requested, decision_timeout, last_event_id, decision_scheduled_id, decision_started_id, decision_attempt, decision_started_time, previous_started_id, activity_attempts, LEAST(execution_deadline, start_time + run_timeout * interval '1 second') FROM durable.runs WHERE run_id = $3 AND namespace = $1 AND workflow_id = $2 FOR UPDATE;
BEGIN;
:explain EXECUTE load_given_locked('default', :'wid', :'run');
ROLLBACK;
\echo '```'
\echo '### load_by_id_locked'
\echo '```'
PREPARE load_by_id_locked(uuid) AS SELECT run_id, namespace, workflow_id, workflow_type, task_queue, status, attempt, cancel_requested, decision_timeout, last_event_id, decision_scheduled_id, decision_started_id, decision_attempt, decision_started_time, previous_started_id, activity_attempts, LEAST(execution_deadline, start_time + run_timeout * interval '1 second') FROM durable.runs WHERE run_id = $1 FOR UPDATE;
BEGIN;
:explain EXECUTE load_by_id_locked(:'run');
ROLLBACK;
\echo '```'
\echo '### load_by_id_skip_locked'
\echo '```'
PREPARE load_by_id_skip_locked(uuid) AS SELECT run_id, namespace, workflow_id, workflow_type, task_queue, status, attempt, cancel_requested, decision_timeout, last_event_id, decision_scheduled_id, decision_started_id, decision_attempt, decision_started_time, previous_started_id, activity_attempts, LEAST(execution_deadline, start_time + run_timeout * interval '1 second') FROM durable.runs WHERE run_id = $1 FOR UPDATE SKIP LOCKED;
BEGIN;
:explain EXECUTE load_by_id_skip_locked(:'run');
ROLLBACK;
\echo '```'
\echo '### save_run'
\echo '```'
PREPARE save_run(uuid, bool, int8, int8, int8, int4, timestamptz, int8, int4) AS UPDATE durable.runs SET cancel_requested = $2, last_event_id = $3, decision_scheduled_id = $4, decision_started_id = $5, decision_attempt = $6, decision_started_time = $7, previous_started_id = $8, activity_attempts = $9 WHERE run_id = $1;
BEGIN;
:explain EXECUTE save_run(:'run', false, :next_event, 0, 0, 1, NULL, 3, 1);
ROLLBACK;
\echo '```'
\echo '### close_run'
\echo '```'
PREPARE close_run(uuid, text, timestamptz, jsonb, jsonb, int8, bool) AS UPDATE durable.runs SET status = $2, close_time = $3, result = $4, failure = $5, last_event_id = $6, cancel_requested = $7, decision_scheduled_id = 0, decision_started_id = 0, decision_attempt = 0, decision_started_time = NULL WHERE run_id = $1;
BEGIN;
:explain EXECUTE close_run(:'run', 'completed', now(), '{}', NULL, :next_event, false);
ROLLBACK;
\echo '```'
\echo '### insert_event'
\echo '```'
PREPARE insert_event(uuid, int8, timestamptz, text, jsonb) AS INSERT INTO durable.history (run_id, event_id, event_time, event_type, attributes) VALUES ($1, $2, $3, $4, $5);
BEGIN;
:explain EXECUTE insert_event(:'run', :next_event, now(), 'WorkflowExecutionSignaled', '{}');
ROLLBACK;
\echo '```'
\echo '### buffer_event'
\echo '```'
PREPARE buffer_event(uuid, timestamptz, text, jsonb) AS INSERT INTO durable.buffered_events (run_id, event_time, event_type, attributes) VALUES ($1, $2, $3, $4);
BEGIN;
:explain EXECUTE buffer_event(:'started_run', now(), 'WorkflowExecutionSignaled', '{}');
ROLLBACK;
\echo '```'
\echo '### take_buffered'
\echo '```'
PREPARE take_buffered(uuid) AS WITH taken AS (DELETE FROM durable.buffered_events WHERE run_id = $1 RETURNING seq, event_time, event_type, attributes) SELECT event_time, event_type, attributes FROM taken ORDER BY seq;
BEGIN;
:explain EXECUTE take_buffered(:'started_run');
ROLLBACK;
\echo '```'
\echo '### insert_ready'
\echo '```'
PREPARE insert_ready(text, text, "char", uuid, int8, int4) AS INSERT INTO durable.ready_tasks (namespace, task_queue, kind, run_id, scheduled_event_id, attempt) VALUES ($1, $2, $3, $4, $5, $6);
BEGIN;
:explain EXECUTE insert_ready('default', 'acts', 'd', :'run', :next_event, 1);
ROLLBACK;
\echo '```'
\echo '### delete_run_activities'
\echo '```'
PREPARE delete_run_activities(uuid) AS DELETE FROM durable.activities WHERE run_id = $1;
BEGIN;
:explain EXECUTE delete_run_activities(:'run');
ROLLBACK;
\echo '```'
\echo '### delete_run_user_timers'
\echo '```'
PREPARE delete_run_user_timers(uuid) AS DELETE FROM durable.user_timers WHERE run_id = $1;
BEGIN;
:explain EXECUTE delete_run_user_timers(:'timer_run');
ROLLBACK;
\echo '```'
\echo '### namespace_exists'
\echo '```'
PREPARE namespace_exists(text) AS SELECT 1 FROM durable.namespaces WHERE name = $1;
:explain EXECUTE namespace_exists('default');
\echo '```'
\echo

-- ---------------------------------------------------------------- src/api_worker.c
\echo '## src/api_worker.c'
\echo
\echo '### claim_ready (a decision task of a queue with 2,000 waiting)'
\echo '```'
PREPARE claim_ready(text, text, "char") AS DELETE FROM durable.ready_tasks WHERE task_id = (SELECT task_id FROM durable.ready_tasks WHERE namespace = $1 AND task_queue = $2 AND kind = $3 ORDER BY task_id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING run_id, scheduled_event_id, attempt;
BEGIN;
:explain EXECUTE claim_ready('default', 'bulk', 'd');
ROLLBACK;
\echo '```'
\echo '### claim_ready (an empty queue: what a waiting poll runs)'
\echo '```'
BEGIN;
:explain EXECUTE claim_ready('default', 'nothing-here', 'a');
ROLLBACK;
\echo '```'
\echo '### claim_ready (an empty queue, custom plan: what the first five executions get)'
\echo '```'
SET plan_cache_mode = force_custom_plan;
BEGIN;
:explain EXECUTE claim_ready('default', 'nothing-here', 'a');
ROLLBACK;
SET plan_cache_mode = force_generic_plan;
\echo '```'
\echo '### decision_task_json'
\echo '```'
PREPARE decision_task_json(uuid, text) AS SELECT pg_catalog.jsonb_build_object('taskToken', $2::text, 'namespace', r.namespace, 'workflowId', r.workflow_id, 'runId', r.run_id, 'workflowType', r.workflow_type, 'taskQueue', r.task_queue, 'attempt', r.decision_attempt, 'previousStartedEventId', r.previous_started_id, 'startedEventId', r.decision_started_id, 'history', COALESCE((SELECT pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('eventId', h.event_id, 'eventTime', h.event_time, 'eventType', h.event_type, 'attributes', h.attributes) ORDER BY h.event_id) FROM durable.history h WHERE h.run_id = r.run_id), '[]')) FROM durable.runs r WHERE r.run_id = $1;
:explain EXECUTE decision_task_json(:'run', 'D:token');
\echo '```'
\echo '### heartbeat_plan'
\echo '```'
PREPARE heartbeat_plan(uuid, int8, int4, timestamptz, jsonb) AS UPDATE durable.activities a SET last_heartbeat_time = $4, heartbeat_details = COALESCE($5, a.heartbeat_details) WHERE a.run_id = $1 AND a.scheduled_event_id = $2 AND a.attempt = $3 AND a.state IN ('STARTED', 'CANCEL_REQUESTED') RETURNING a.cancel_requested OR (SELECT r.cancel_requested FROM durable.runs r WHERE r.run_id = a.run_id);
BEGIN;
:explain EXECUTE heartbeat_plan(:'run', :act_sched, :act_attempt, now(), '{"p": 1}');
ROLLBACK;
\echo '```'
\echo '### has_buffered'
\echo '```'
PREPARE has_buffered(uuid) AS SELECT 1 FROM durable.buffered_events WHERE run_id = $1 LIMIT 1;
:explain EXECUTE has_buffered(:'started_run');
\echo '```'
\echo

-- ---------------------------------------------------------------- src/activities.c
\echo '## src/activities.c'
\echo
\echo '### load_activity'
\echo '```'
PREPARE load_activity(uuid, int8) AS SELECT run_id, scheduled_event_id, namespace, workflow_id, activity_id, activity_type, task_queue, input, state, attempt, retry_policy, schedule_to_start_timeout, start_to_close_timeout, schedule_to_close_timeout, heartbeat_timeout, first_scheduled_time, scheduled_time, started_time, last_heartbeat_time, heartbeat_details, last_failure_reason, last_failure_details, next_attempt_time, last_worker_identity, cancel_requested FROM durable.activities WHERE run_id = $1 AND scheduled_event_id = $2 FOR UPDATE;
BEGIN;
:explain EXECUTE load_activity(:'run', :act_sched);
ROLLBACK;
\echo '```'
\echo '### load_activity_by_id'
\echo '```'
PREPARE load_activity_by_id(uuid, text) AS SELECT run_id, scheduled_event_id, namespace, workflow_id, activity_id, activity_type, task_queue, input, state, attempt, retry_policy, schedule_to_start_timeout, start_to_close_timeout, schedule_to_close_timeout, heartbeat_timeout, first_scheduled_time, scheduled_time, started_time, last_heartbeat_time, heartbeat_details, last_failure_reason, last_failure_details, next_attempt_time, last_worker_identity, cancel_requested FROM durable.activities WHERE run_id = $1 AND activity_id = $2 FOR UPDATE;
BEGIN;
:explain EXECUTE load_activity_by_id(:'run', 'a1');
ROLLBACK;
\echo '```'
\echo '### start_attempt'
\echo '```'
PREPARE start_attempt(uuid, int8, int4, timestamptz, text) AS UPDATE durable.activities SET state = 'STARTED', started_time = $4, last_heartbeat_time = NULL, last_worker_identity = $5 WHERE run_id = $1 AND scheduled_event_id = $2 AND attempt = $3 AND state = 'SCHEDULED' AND next_attempt_time IS NULL RETURNING run_id, scheduled_event_id, namespace, workflow_id, activity_id, activity_type, task_queue, input, state, attempt, retry_policy, schedule_to_start_timeout, start_to_close_timeout, schedule_to_close_timeout, heartbeat_timeout, first_scheduled_time, scheduled_time, started_time, last_heartbeat_time, heartbeat_details, last_failure_reason, last_failure_details, next_attempt_time, last_worker_identity, cancel_requested;
BEGIN;
:explain EXECUTE start_attempt(:'run', :act_sched, :act_attempt, now(), 'explain');
ROLLBACK;
\echo '```'
\echo '### insert_activity'
\echo '```'
PREPARE insert_activity(uuid, int8, text, text, text, text, text, jsonb, jsonb, float8, float8, float8, float8, timestamptz) AS INSERT INTO durable.activities (run_id, scheduled_event_id, namespace, workflow_id, activity_id, activity_type, task_queue, input, retry_policy, schedule_to_start_timeout, start_to_close_timeout, schedule_to_close_timeout, heartbeat_timeout, first_scheduled_time, scheduled_time) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14);
BEGIN;
:explain EXECUTE insert_activity(:'run', :next_event, 'default', :'wid', 'a2', 'noop', 'acts', '{}', NULL, NULL, 60, NULL, NULL, now());
ROLLBACK;
\echo '```'
\echo '### save_activity'
\echo '```'
PREPARE save_activity(uuid, int8, text, int4, timestamptz, timestamptz, timestamptz, jsonb, text, jsonb, timestamptz, bool) AS UPDATE durable.activities SET state = $3, attempt = $4, scheduled_time = $5, started_time = $6, last_heartbeat_time = $7, heartbeat_details = $8, last_failure_reason = $9, last_failure_details = $10, next_attempt_time = $11, cancel_requested = $12 WHERE run_id = $1 AND scheduled_event_id = $2;
BEGIN;
:explain EXECUTE save_activity(:'run', :act_sched, 'SCHEDULED', 2, now(), NULL, NULL, NULL, 'boom', '{}', now() + interval '1 second', false);
ROLLBACK;
\echo '```'
\echo '### delete_activity'
\echo '```'
PREPARE delete_activity(uuid, int8) AS DELETE FROM durable.activities WHERE run_id = $1 AND scheduled_event_id = $2;
BEGIN;
:explain EXECUTE delete_activity(:'run', :act_sched);
ROLLBACK;
\echo '```'
\echo '### arm_timer'
\echo '```'
PREPARE arm_timer(uuid, int8, timestamptz) AS INSERT INTO durable.timers (due_at, kind, run_id, ref_id) VALUES ($3, 'activity', $1, $2) ON CONFLICT (run_id, kind, ref_id) DO UPDATE SET due_at = EXCLUDED.due_at;
BEGIN;
:explain EXECUTE arm_timer(:'run', :act_sched, now() + interval '60 seconds');
ROLLBACK;
\echo '```'
\echo '### disarm_timer'
\echo '```'
PREPARE disarm_timer(uuid, int8) AS DELETE FROM durable.timers WHERE run_id = $1 AND kind = 'activity' AND ref_id = $2;
BEGIN;
:explain EXECUTE disarm_timer(:'run', :act_sched);
ROLLBACK;
\echo '```'
\echo '### log_attempt'
\echo '```'
PREPARE log_attempt(uuid, int8, int4, text, text, text, timestamptz, timestamptz, timestamptz, text, text, jsonb, timestamptz) AS INSERT INTO durable.activity_attempt_log (run_id, scheduled_event_id, attempt, activity_id, activity_type, worker_identity, scheduled_time, started_time, end_time, outcome, failure_reason, failure_details, next_retry_time) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13);
BEGIN;
:explain EXECUTE log_attempt(:'run', :act_sched, :act_attempt, 'a1', 'noop', 'explain', now(), now(), now(), 'completed', NULL, NULL, NULL);
ROLLBACK;
\echo '```'
\echo '### count_pending'
\echo '```'
PREPARE count_pending(uuid) AS SELECT count(*) FROM durable.activities WHERE run_id = $1;
:explain EXECUTE count_pending(:'run');
\echo '```'
\echo '### namespace_policy'
\echo '```'
PREPARE namespace_policy(text) AS SELECT activity_retry_policy FROM durable.namespaces WHERE name = $1;
:explain EXECUTE namespace_policy('default');
\echo '```'
\echo

-- ---------------------------------------------------------------- src/timers.c
\echo '## src/timers.c'
\echo
\echo '### insert_timer'
\echo '```'
PREPARE insert_timer(timestamptz, text, uuid, int8, int4) AS INSERT INTO durable.timers (due_at, kind, run_id, ref_id, attempt) VALUES ($1, $2, $3, $4, $5);
BEGIN;
:explain EXECUTE insert_timer(now() + interval '10 seconds', 'decision_timeout', :'run', :next_event, 1);
ROLLBACK;
\echo '```'
\echo '### delete_run_timers'
\echo '```'
PREPARE delete_run_timers(uuid) AS DELETE FROM durable.timers WHERE run_id = $1;
BEGIN;
:explain EXECUTE delete_run_timers(:'run');
ROLLBACK;
\echo '```'
\echo '### due_timers (nothing due: the background worker''s every tick)'
\echo '```'
PREPARE due_timers(timestamptz, int4) AS SELECT timer_id, kind, run_id, ref_id, attempt FROM durable.timers WHERE due_at <= $1 ORDER BY due_at, timer_id LIMIT $2;
:explain EXECUTE due_timers(now(), 10000);
\echo '```'
\echo '### due_timers (all 5,800 due, an hour later)'
\echo '```'
:explain EXECUTE due_timers(now() + interval '2 hours', 10000);
\echo '```'
\echo '### take_timer'
\echo '```'
PREPARE take_timer(int8) AS DELETE FROM durable.timers WHERE timer_id = $1;
BEGIN;
:explain EXECUTE take_timer(:any_timer);
ROLLBACK;
\echo '```'
\echo '### insert_user_timer'
\echo '```'
PREPARE insert_user_timer(uuid, text, int8, timestamptz) AS INSERT INTO durable.user_timers (run_id, timer_id, started_event_id, fire_time) VALUES ($1, $2, $3, $4) ON CONFLICT (run_id, timer_id) DO NOTHING;
BEGIN;
:explain EXECUTE insert_user_timer(:'run', 't9', :next_event, now() + interval '1 hour');
ROLLBACK;
\echo '```'
\echo '### take_user_timer'
\echo '```'
PREPARE take_user_timer(uuid, text) AS DELETE FROM durable.user_timers WHERE run_id = $1 AND timer_id = $2 RETURNING started_event_id;
BEGIN;
:explain EXECUTE take_user_timer(:'timer_run', 't1');
ROLLBACK;
\echo '```'
\echo '### take_user_timer_by_event'
\echo '```'
PREPARE take_user_timer_by_event(uuid, int8) AS DELETE FROM durable.user_timers WHERE run_id = $1 AND started_event_id = $2 RETURNING timer_id;
BEGIN;
:explain EXECUTE take_user_timer_by_event(:'timer_run', :timer_event);
ROLLBACK;
\echo '```'
\echo '### delete_run_timer'
\echo '```'
PREPARE delete_run_timer(uuid, text, int8) AS DELETE FROM durable.timers WHERE run_id = $1 AND kind = $2 AND ref_id = $3;
BEGIN;
:explain EXECUTE delete_run_timer(:'run', 'activity', :act_sched);
ROLLBACK;
\echo '```'
\echo '### run_exists'
\echo '```'
PREPARE run_exists(uuid) AS SELECT 1 FROM durable.runs WHERE run_id = $1;
:explain EXECUTE run_exists(:'run');
\echo '```'
\echo

-- ---------------------------------------------------------------- src/workflow.c
\echo '## src/workflow.c'
\echo
\echo '### insert_run'
\echo '```'
PREPARE insert_run(uuid, text, text, text, text, jsonb, int4, uuid, timestamptz, timestamptz, jsonb, float8, float8, float8, timestamptz, text, jsonb, int8, int8, int4, text, text, uuid, int8, uuid) AS INSERT INTO durable.runs (run_id, run_seq, namespace, workflow_id, workflow_type, task_queue, input, attempt, first_run_id, chain_start_time, start_time, retry_policy, execution_timeout, run_timeout, decision_timeout, execution_deadline, cron_schedule, memo, last_event_id, decision_scheduled_id, decision_attempt, parent_namespace, parent_workflow_id, parent_run_id, parent_initiated_id, continued_from) VALUES ($1, pg_catalog.nextval('durable.run_seq'), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25) ON CONFLICT (namespace, workflow_id) WHERE status = 'running' DO NOTHING RETURNING run_id;
BEGIN;
SELECT gen_random_uuid() AS new_run \gset
:explain EXECUTE insert_run(:'new_run', 'default', 'explain-new', 'bench', 'bulk', '{}', 1, :'new_run', now(), now(), NULL, NULL, NULL, 10, NULL, NULL, NULL, 2, 2, 1, NULL, NULL, NULL, NULL, NULL);
ROLLBACK;
\echo '```'
\echo '### insert_run (the workflow id is running: the conflict)'
\echo '```'
BEGIN;
:explain EXECUTE insert_run(:'new_run', 'default', :'wid', 'bench', 'bulk', '{}', 1, :'new_run', now(), now(), NULL, NULL, NULL, 10, NULL, NULL, NULL, 2, 2, 1, NULL, NULL, NULL, NULL, NULL);
ROLLBACK;
\echo '```'
\echo '### load_chain'
\echo '```'
PREPARE load_chain(uuid) AS SELECT first_run_id, chain_start_time, execution_timeout, execution_deadline, input, retry_policy, cron_schedule, memo, run_timeout, parent_namespace, parent_workflow_id, parent_run_id, parent_initiated_id FROM durable.runs WHERE run_id = $1;
:explain EXECUTE load_chain(:'run');
\echo '```'
\echo '### set_continued_to'
\echo '```'
PREPARE set_continued_to(uuid, uuid) AS UPDATE durable.runs SET continued_to = $2 WHERE run_id = $1;
BEGIN;
:explain EXECUTE set_continued_to(:'closed_run', :'run');
ROLLBACK;
\echo '```'
\echo '### set_search_attributes'
\echo '```'
PREPARE set_search_attributes(uuid, jsonb) AS UPDATE durable.runs SET search_attributes = COALESCE(search_attributes, '{}') || $2 WHERE run_id = $1;
BEGIN;
:explain EXECUTE set_search_attributes(:'run', '{"k": 1}');
ROLLBACK;
\echo '```'

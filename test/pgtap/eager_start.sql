-- Eager start (docs/api.md "Eager dispatch"), as Temporal's StartWorkflowExecution
-- with request_eager_execution: start_workflow_eager starts a workflow as
-- start_workflow does and returns its first decision task started for the caller,
-- as poll_decision_task would have returned it; the task is not queued.  It is null,
-- and queued, when not due at once (delay, cron) or a SQL workflow's; id reuse rules
-- and errors are start_workflow's; a receiver that crashes loses nothing (the task
-- times out and is retried); the caller needs the worker privilege too.
BEGIN;
SELECT plan(24);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

CREATE FUNCTION pg_temp.queued(wid text) RETURNS text[] LANGUAGE sql AS $$
    SELECT COALESCE(array_agg(r.task_queue || '/' || r.kind::text || '/' || r.scheduled_event_id
                              ORDER BY r.scheduled_event_id), '{}')
      FROM durable.ready_tasks r JOIN durable.runs u USING (run_id)
     WHERE u.workflow_id = wid $$;
CREATE FUNCTION pg_temp.keys(j jsonb) RETURNS text[] LANGUAGE sql AS $$
    SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(j) k $$;

-- 1. The first decision task comes back started, with the caller's identity.
SELECT durable.start_workflow_eager('wf', '{"x": 1}', 'es', 'es', identity => 'w1') AS r \gset
SELECT is(:'r'::jsonb->>'runId', (SELECT run_id::text FROM durable.runs WHERE workflow_id = 'es'),
    'runId is the new run''s');
SELECT is(:'r'::jsonb->'decisionTask'->>'workflowId', 'es', 'its decision task');
SELECT is(t.events('es'), '{WorkflowExecutionStarted,DecisionTaskScheduled,DecisionTaskStarted}',
    'started at once');
SELECT is(t.attrs('es', 'DecisionTaskStarted')->>'identity', 'w1', 'by the caller''s identity');
SELECT is(pg_temp.queued('es'), '{}', 'nothing queued');
SELECT is(durable.poll_decision_task('es'), NULL, 'a poll gets nothing');
SELECT is((:'r'::jsonb->'decisionTask'->>'startedEventId')::int, 3, 'startedEventId');
SELECT is(jsonb_array_length(:'r'::jsonb->'decisionTask'->'history'), 3, 'with its history');

-- Its shape is a poll's.
SAVEPOINT shape;
SELECT durable.start_workflow('wf', '{"x": 1}', 'es-poll', 'es-poll');
SELECT is(pg_temp.keys(:'r'::jsonb->'decisionTask'),
    pg_temp.keys(durable.poll_decision_task('es-poll', identity => 'w1')), 'the keys of a poll''s task');
ROLLBACK TO SAVEPOINT shape;

SELECT lives_ok(format($$SELECT durable.complete_decision_task(%L, '[{"decisionType": "CompleteWorkflowExecution"}]')$$,
    :'r'::jsonb->'decisionTask'->>'taskToken'), 'its token answers it');
SELECT is(durable.describe_workflow('es')->>'status', 'completed', 'the workflow completes');

-- 2. Not due at once: null, and queued as usual.
SELECT durable.start_workflow_eager('wf', NULL, 'es-delay', 'es', delay => '5 seconds') AS r \gset
SELECT is(:'r'::jsonb->'decisionTask', 'null', 'a delay: no task');
SELECT is(:'r'::jsonb->>'runId', (SELECT run_id::text FROM durable.runs WHERE workflow_id = 'es-delay'),
    'the run is started');
SELECT durable.start_workflow_eager('wf', NULL, 'es-cron', 'es', cron_schedule => '0 * * * *') AS r \gset
SELECT is(:'r'::jsonb->'decisionTask', 'null', 'a cron schedule: no task');
SELECT t.at('2026-01-01 00:00:06+00');
SELECT durable.tick();
SELECT is(pg_temp.queued('es-delay'), '{es/d/2}', 'the delayed task is queued when due');

-- 3. A SQL workflow's task goes to the executors.
CREATE ROLE es_app;
CREATE SCHEMA es;
GRANT USAGE ON SCHEMA es TO es_app;
CREATE FUNCTION es.body(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT input $$;
GRANT EXECUTE ON FUNCTION es.body(jsonb) TO es_app;
SELECT durable.register_workflow('es_sql', 'es.body(jsonb)', 'esq', run_as => 'es_app');
SELECT durable.start_workflow_eager('es_sql', NULL, 'es-sql', 'esq') AS r \gset
SELECT is(:'r'::jsonb->'decisionTask', 'null', 'a SQL workflow: no task');
SELECT is(array_length(pg_temp.queued('es-sql'), 1), 1, 'its task is queued for the executors');

-- 4. Id reuse: start_workflow's rules and errors.
SELECT durable.start_workflow_eager('wf', NULL, 'es-dup', 'es-dup', identity => 'w1') AS r \gset
SELECT throws_ok($$SELECT durable.start_workflow_eager('wf', NULL, 'es-dup', 'es-dup')$$, 'WF001', NULL,
    'a running workflow id: WF001, as start_workflow');
SELECT durable.start_workflow_eager('wf', NULL, 'es-dup', 'es-dup', id_reuse_policy => 'terminate_if_running',
    identity => 'w2') AS r2 \gset
SELECT isnt(:'r2'::jsonb->>'runId', :'r'::jsonb->>'runId', 'terminate_if_running: a new run');
SELECT is(:'r2'::jsonb->'decisionTask'->>'runId', :'r2'::jsonb->>'runId', 'with its task');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]')$$,
    :'r'::jsonb->'decisionTask'->>'taskToken'), 'WF005', NULL, 'the old run''s task is stale');

-- 5. The receiver crashes: the task times out, and a poll gets the retry.
SELECT t.at('2026-01-01 00:00:20+00');
SELECT durable.tick();
SELECT is(t.events('es-dup', (:'r2'::jsonb->>'runId')::uuid),
    '{WorkflowExecutionStarted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskTimedOut}',
    'the unanswered task times out');
SELECT is(durable.poll_decision_task('es-dup', identity => 'w3')->>'attempt', '2', 'a poll gets the retry');

-- 6. The worker privilege is needed too.
SELECT durable.create_namespace('es-ns');
CREATE ROLE es_client;
GRANT durable_client TO es_client;
SELECT durable.grant_namespace('es-ns', 'es_client', 'client');
SET LOCAL ROLE es_client;
SELECT throws_ok($$SELECT durable.start_workflow_eager('wf', NULL, 'es-p', 'es', 'es-ns')$$, '42501',
    'permission denied for namespace "es-ns": privilege worker required', 'without the worker privilege: 42501');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;

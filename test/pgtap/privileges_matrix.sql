-- The privilege matrix (docs/privileges.md): every function and every table or view of the
-- extension, as a member of each group role (durable_client, durable_worker,
-- durable_admin), as a role whose namespace privileges are in another namespace, and as
-- a role with no grants at all (PUBLIC), against a namespace 'secret' created by
-- create_namespace.  Each call runs in a subtransaction that is rolled back, so every
-- role meets the same state; its outcome is 'ok' or the SQLSTATE it raised.  The
-- expectation table must name every function and relation of the extension: one added
-- without a row here fails the first two tests.  Then the namespace privileges one by
-- one: default open to all, a new namespace closed, grant and revoke, memberships, the
-- owner, and a denied call that changes nothing.
BEGIN;
SELECT * FROM no_plan();
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

CREATE ROLE pm_client;   GRANT durable_client TO pm_client;
CREATE ROLE pm_worker;   GRANT durable_worker TO pm_worker;
CREATE ROLE pm_admin;    GRANT durable_admin TO pm_admin;
CREATE ROLE pm_other;    GRANT durable_client, durable_worker TO pm_other;
CREATE ROLE pm_nobody;

CREATE SCHEMA pm;
GRANT USAGE ON SCHEMA pm TO PUBLIC;
CREATE FUNCTION pm.fn(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT input $$;
CREATE TABLE pm.tokens (k text PRIMARY KEY, token text);
GRANT SELECT ON pm.tokens TO PUBLIC;

SELECT durable.create_namespace('secret');
SELECT durable.create_namespace('other');
SELECT durable.create_namespace('pm-empty');
SELECT durable.grant_namespace('secret', 'pm_client', 'client');
SELECT durable.grant_namespace('secret', 'pm_worker', 'worker');
SELECT durable.grant_namespace('other', 'pm_other', 'client');
SELECT durable.grant_namespace('other', 'pm_other', 'worker');

-- In 'secret': pm-dec has a started decision task, pm-act a started activity (and an
-- ended attempt), a registration of pm_worker's, and a stuck executor task.
SELECT durable.start_workflow('pm', '{"ssn": "078-05-1120"}', 'pm-dec', 'q', 'secret');
SELECT durable.start_workflow('pm', '{"ssn": "219-09-9999"}', 'pm-act', 'qa', 'secret');
SELECT durable.complete_decision_task(durable.poll_decision_task('qa', NULL, 'secret')->>'taskToken',
    '[{"decisionType": "ScheduleActivityTask", "activityId": "a", "activityType": "do",
       "taskQueue": "qa", "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 5}}]');
SELECT durable.fail_activity(durable.poll_activity_task('qa', NULL, 'secret')->>'taskToken', 'boom',
                             next_retry_delay => '0');
SELECT durable.tick();
INSERT INTO pm.tokens VALUES
    ('activity', durable.poll_activity_task('qa', NULL, 'secret')->>'taskToken'),
    ('decision', durable.poll_decision_task('q', NULL, 'secret')->>'taskToken');
SET LOCAL ROLE pm_worker;
SELECT durable.register_workflow('pm-reg', 'pm.fn(jsonb)', 'qr', 'secret');
RESET ROLE;
INSERT INTO durable.ready_tasks (namespace, task_queue, kind, run_id, scheduled_event_id,
                                 failures, last_error, not_before)
    SELECT 'secret', 'qs', 'w', run_id, 1, 1, 'test', '2100-01-01' FROM durable.runs
     WHERE workflow_id = 'pm-dec';
-- A batch job in 'secret', with an error.
INSERT INTO pm.tokens VALUES ('batch', durable.start_batch('signal', 'secret',
    workflow_id_prefix => 'pm-dec', reason => 'pm', signal_name => 's'));
INSERT INTO durable.batch_job_errors
    SELECT batch_id, run_id, 'pm-dec', 'XX000', 'test', now() FROM durable.batch_jobs, durable.runs
     WHERE workflow_id = 'pm-dec';
SELECT isnt((SELECT count(*) FROM pm.tokens WHERE token IS NOT NULL), 0::bigint, 'setup: the tokens');

-- The outcome of a statement run as a role: 'ok' or its SQLSTATE.  Always undone.
CREATE FUNCTION pm.try(role name, stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE outcome text;
BEGIN
    BEGIN
        EXECUTE format('SET LOCAL ROLE %I', role);
        EXECUTE stmt;
        RAISE SQLSTATE 'PMOK0';
    EXCEPTION WHEN OTHERS THEN
        outcome := CASE SQLSTATE WHEN 'PMOK0' THEN 'ok' WHEN 'PMRW0' THEN 'rows'
                                 WHEN 'PMNO0' THEN 'none' ELSE SQLSTATE END;
    END;
    RESET ROLE;
    RETURN outcome;
END $$;

-- What each role may do: client, worker, admin, other (privileges in 'other' only),
-- public (a role with no grants).  55000: a workflow-code call outside a workflow.
CREATE TABLE pm.expect_functions (fn text PRIMARY KEY, stmt text,
    client text, worker text, admin text, other text, public text);
INSERT INTO pm.expect_functions VALUES
 ('now()', $$SELECT durable.now()$$, 'ok', 'ok', 'ok', 'ok', 'ok'),
 ('preloaded()', $$SELECT durable.preloaded()$$, 'ok', 'ok', 'ok', 'ok', 'ok'),
 ('retry_policy(interval,double precision,interval,interval,integer,text[])',
  $$SELECT durable.retry_policy('1 second', maximum_attempts => 2)$$, 'ok', 'ok', 'ok', 'ok', 'ok'),
 ('retry_delay(jsonb,integer)', $$SELECT durable.retry_delay('{"initialIntervalInSeconds": 2, "maximumAttempts": 3}', 1)$$, 'ok', 'ok', 'ok', 'ok', 'ok'),
 ('cron_next(text,timestamp with time zone)', $$SELECT durable.cron_next('* * * * *')$$,
  'ok', 'ok', 'ok', 'ok', 'ok'),
 ('may_read_namespace(text)', $$SELECT durable.may_read_namespace('secret')$$,
  'ok', 'ok', 'ok', 'ok', 'ok'),
 ('task_token_info(text)',
  $$SELECT durable.task_token_info('D1:7:default:1:w:00000000-0000-0000-0000-000000000000:1:2:0123456789abcdef')$$,
  'ok', 'ok', 'ok', 'ok', 'ok'),
 ('launcher_wakeup()', $$SELECT durable.launcher_wakeup()$$, '42501', '42501', '42501', '42501', '42501'),
 ('cached_table_changed()', $$SELECT durable.cached_table_changed()$$,
  '42501', '42501', '42501', '42501', '42501'),
 -- internal: a request relayed from another node by its router, as the extension's owner
 ('receive_external(jsonb)', $$SELECT durable.receive_external('{}')$$,
  '42501', '42501', '42501', '42501', '42501'),
 ('tick(integer)', $$SELECT durable.tick()$$, '42501', '42501', 'ok', '42501', '42501'),
 ('purge(integer)', $$SELECT durable.purge()$$, '42501', '42501', 'ok', '42501', '42501'),
 ('run_tasks(integer)', $$SELECT durable.run_tasks()$$, '42501', '42501', 'ok', '42501', '42501'),
 ('create_namespace(text,interval,jsonb,text,integer,interval)', $$SELECT durable.create_namespace('pm-new')$$,
  '42501', '42501', 'ok', '42501', '42501'),
 ('alter_namespace(text,interval,jsonb,text,integer,interval)',
  $$SELECT durable.alter_namespace('secret', description => 'x')$$, '42501', '42501', 'ok', '42501', '42501'),
 ('drop_namespace(text)', $$SELECT durable.drop_namespace('pm-empty')$$,
  '42501', '42501', 'ok', '42501', '42501'),
 ('grant_namespace(text,text,text)', $$SELECT durable.grant_namespace('secret', 'pm_nobody', 'client')$$,
  '42501', '42501', 'ok', '42501', '42501'),
 ('revoke_namespace(text,text,text)', $$SELECT durable.revoke_namespace('secret', 'pm_client', 'client')$$,
  '42501', '42501', 'ok', '42501', '42501'),
 -- the namespace's owner or durable_admin, as the grants
 ('set_task_queue_limits(text,text,integer,double precision,integer,text)',
  $$SELECT durable.set_task_queue_limits('q', 'activity', 2, namespace => 'secret')$$,
  '42501', '42501', 'ok', '42501', '42501'),
 ('set_task_key_limits(text,text,text,integer,double precision,integer,integer,text)',
  $$SELECT durable.set_task_key_limits('q', 'activity', 'customer-1', 2, namespace => 'secret')$$,
  '42501', '42501', 'ok', '42501', '42501'),
 -- client
 ('start_workflow(text,jsonb,text,text,text,jsonb,text,interval,interval,interval,text,interval,jsonb,jsonb,integer,text)',
  $$SELECT durable.start_workflow('pm', NULL, 'pm-new', 'q', 'secret')$$, 'ok', '42501', 'ok', '42501', '42501'),
 -- client, and worker to receive the task: only admin has both in 'secret'
 ('start_workflow_eager(text,jsonb,text,text,text,jsonb,text,interval,interval,interval,text,interval,jsonb,jsonb,text,integer,text)',
  $$SELECT durable.start_workflow_eager('pm', NULL, 'pm-new', 'q', 'secret')$$, '42501', '42501', 'ok', '42501', '42501'),
 ('signal_with_start(text,text,text,jsonb,jsonb,text,text,jsonb,text,interval,interval,interval,text,interval,jsonb,jsonb,integer,text)',
  $$SELECT durable.signal_with_start('pm', 'pm-dec', 's', namespace => 'secret')$$,
  'ok', '42501', 'ok', '42501', '42501'),
 ('signal_workflow(text,text,jsonb,text,uuid)',
  $$SELECT durable.signal_workflow('pm-dec', 's', NULL, 'secret')$$, 'ok', '42501', 'ok', '42501', '42501'),
 ('cancel_workflow(text,text,text,uuid)', $$SELECT durable.cancel_workflow('pm-dec', NULL, 'secret')$$,
  'ok', '42501', 'ok', '42501', '42501'),
 ('reset_workflow(text,text,text,uuid,bigint)',
  $$SELECT durable.reset_workflow('pm-act', 'fix', 'secret')$$, 'ok', '42501', 'ok', '42501', '42501'),
 ('restart_workflow(text,text,text,uuid,jsonb)',
  $$SELECT durable.restart_workflow('pm-dec', 'again', 'secret')$$, 'WF001', '42501', 'WF001', '42501', '42501'),
 ('terminate_workflow(text,text,jsonb,text,uuid)',
  $$SELECT durable.terminate_workflow('pm-dec', NULL, NULL, 'secret')$$, 'ok', '42501', 'ok', '42501', '42501'),
 ('resolve_run_id(text,text,uuid)', $$SELECT durable.resolve_run_id('pm-dec', 'secret')$$,
  'ok', '42501', 'ok', '42501', '42501'),
 ('describe_workflow(text,text,uuid)', $$SELECT durable.describe_workflow('pm-dec', 'secret')$$,
  'ok', '42501', 'ok', '42501', '42501'),
 ('replay_check(text,regprocedure,text,boolean,integer)',
  $$SELECT count(*) FROM durable.replay_check('pm', 'pm.fn(jsonb)', 'secret')$$, 'ok', '42501', 'ok', '42501', '42501'),
 ('pause_task_queue(text,text,text)',
  $$SELECT durable.pause_task_queue('q', 'secret', 'why')$$, 'ok', '42501', 'ok', '42501', '42501'),
 ('resume_task_queue(text,text)',
  $$SELECT durable.resume_task_queue('q', 'secret')$$, 'ok', '42501', 'ok', '42501', '42501'),
 ('pause_workflow(text,uuid,text,text)',
  $$SELECT durable.pause_workflow('pm-dec', NULL, 'why', 'secret')$$, 'ok', '42501', 'ok', '42501', '42501'),
 ('resume_workflow(text,uuid,text)',
  $$SELECT durable.resume_workflow('pm-dec', NULL, 'secret')$$, 'ok', '42501', 'ok', '42501', '42501'),
 ('move_runs(text,regprocedure,text,text)',
  $$SELECT durable.move_runs('pm', namespace => 'secret')$$, 'ok', '42501', 'ok', '42501', '42501'),
 ('replay_histories(text,text,boolean,integer)',
  $$SELECT count(*) FROM durable.replay_histories('pm', 'secret')$$, 'ok', '42501', 'ok', '42501', '42501'),
 ('get_history(text,text,uuid)', $$SELECT count(*) FROM durable.get_history('pm-dec', 'secret')$$,
  'ok', '42501', 'ok', '42501', '42501'),
 ('wait_workflow(text,text,uuid,interval)', $$SELECT durable.wait_workflow('pm-dec', 'secret', wait => '0')$$,
  'ok', '42501', 'ok', '42501', '42501'),
 ('list_workflows(text,text,text,text,text,timestamp with time zone,timestamp with time zone,timestamp with time zone,timestamp with time zone,jsonb,jsonb,integer,text,boolean)',
  $$SELECT count(*) FROM durable.list_workflows('secret')$$, 'ok', '42501', 'ok', '42501', '42501'),
 ('count_workflows(text,text,text,text,text,timestamp with time zone,timestamp with time zone,timestamp with time zone,timestamp with time zone,jsonb,jsonb)',
  $$SELECT durable.count_workflows('secret')$$, 'ok', '42501', 'ok', '42501', '42501'),
 ('count_workflows_by_status(text,text,text,text,timestamp with time zone,timestamp with time zone,timestamp with time zone,timestamp with time zone,jsonb,jsonb)',
  $$SELECT count(*) FROM durable.count_workflows_by_status('secret')$$, 'ok', '42501', 'ok', '42501', '42501'),
 ('preview_batch(text,text,text,text,text,text,timestamp with time zone,timestamp with time zone,timestamp with time zone,timestamp with time zone,jsonb,jsonb,text,text,jsonb,text)',
  $$SELECT durable.preview_batch('terminate', 'secret')$$, 'ok', '42501', 'ok', '42501', '42501'),
 ('start_batch(text,text,text,text,text,text,timestamp with time zone,timestamp with time zone,timestamp with time zone,timestamp with time zone,jsonb,jsonb,text,text,jsonb,text)',
  $$SELECT durable.start_batch('terminate', 'secret', reason => 'pm')$$, 'ok', '42501', 'ok', '42501', '42501'),
 ('cancel_batch(uuid)', $$SELECT durable.cancel_batch((SELECT token FROM pm.tokens WHERE k = 'batch')::uuid)$$,
  'ok', '42501', 'ok', '42501', '42501'),
 ('run_batches(integer)', $$SELECT durable.run_batches()$$, '42501', '42501', 'ok', '42501', '42501'),
 -- internal: called by the batch functions as the extension's owner
 ('batch_caller()', $$SELECT durable.batch_caller()$$, '42501', '42501', '42501', '42501', '42501'),
 ('batch_check(text,text,text,text,text,text,timestamp with time zone,timestamp with time zone,timestamp with time zone,timestamp with time zone,jsonb,jsonb,text,text,text)',
  $$SELECT durable.batch_check('terminate', 'secret', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'x', NULL, NULL)$$,
  '42501', '42501', '42501', '42501', '42501'),
 ('batch_page(uuid,integer)', $$SELECT count(*) FROM durable.batch_page((SELECT token FROM pm.tokens WHERE k = 'batch')::uuid, 10)$$,
  '42501', '42501', '42501', '42501', '42501'),
 -- internal: called by the three above as the extension's owner
 -- (a planner support function: SQL cannot pass it an argument of type internal)
 ('engine_support(internal)', $s$DO $d$ BEGIN IF NOT has_function_privilege(
      'durable.engine_support(internal)', 'EXECUTE') THEN RAISE SQLSTATE '42501'; END IF; END $d$$s$,
  '42501', '42501', '42501', '42501', '42501'),
 ('check_namespace_read(text)', $$SELECT durable.check_namespace_read('secret')$$,
  '42501', '42501', '42501', '42501', '42501'),
 ('workflow_filter(text,text,text,text,text,timestamp with time zone,timestamp with time zone,timestamp with time zone,timestamp with time zone,jsonb,jsonb)',
  $$SELECT durable.workflow_filter('secret', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)$$,
  '42501', '42501', '42501', '42501', '42501'),
 -- worker
 ('poll_decision_task(text,text,text,interval)', $$SELECT durable.poll_decision_task('q', NULL, 'secret')$$,
  '42501', 'ok', 'ok', '42501', '42501'),
 ('poll_activity_task(text,text,text,interval)', $$SELECT durable.poll_activity_task('q', NULL, 'secret')$$,
  '42501', 'ok', 'ok', '42501', '42501'),
 ('poll_activity_tasks(text,text,text,interval,integer)',
  $$SELECT count(*) FROM durable.poll_activity_tasks('q', NULL, 'secret')$$, '42501', 'ok', 'ok', '42501', '42501'),
 ('complete_decision_task(text,jsonb,text,boolean,integer,bigint)',
  $$SELECT durable.complete_decision_task((SELECT token FROM pm.tokens WHERE k = 'decision'), '[]')$$,
  '42501', 'ok', 'ok', '42501', '42501'),
 ('fail_decision_task(text,text,jsonb,text)',
  $$SELECT durable.fail_decision_task((SELECT token FROM pm.tokens WHERE k = 'decision'), 'x')$$,
  '42501', 'ok', 'ok', '42501', '42501'),
 ('complete_activity(text,jsonb,boolean,bigint)',
  $$SELECT durable.complete_activity((SELECT token FROM pm.tokens WHERE k = 'activity'), '{}')$$,
  '42501', 'ok', 'ok', '42501', '42501'),
 ('fail_activity(text,text,jsonb,interval)',
  $$SELECT durable.fail_activity((SELECT token FROM pm.tokens WHERE k = 'activity'), 'x')$$,
  '42501', 'ok', 'ok', '42501', '42501'),
 ('heartbeat_activity(text,jsonb)',
  $$SELECT durable.heartbeat_activity((SELECT token FROM pm.tokens WHERE k = 'activity'))$$,
  '42501', 'ok', 'ok', '42501', '42501'),
 ('report_activity_canceled(text,jsonb)',
  $$SELECT durable.report_activity_canceled((SELECT token FROM pm.tokens WHERE k = 'activity'))$$,
  '42501', 'ok', 'ok', '42501', '42501'),
 ('register_workflow(text,regprocedure,text,text,regrole,text)',
  $$SELECT durable.register_workflow('pm-x', 'pm.fn(jsonb)', 'qx', 'secret')$$,
  '42501', 'ok', 'ok', '42501', '42501'),
 ('register_activity(text,regprocedure,text,text,regrole)',
  $$SELECT durable.register_activity('pm-x', 'pm.fn(jsonb)', 'qx', 'secret')$$,
  '42501', 'ok', 'ok', '42501', '42501'),
 ('unregister_workflow(text,text,text)', $$SELECT durable.unregister_workflow('pm-reg', 'qr', 'secret')$$,
  '42501', 'ok', 'ok', '42501', '42501'),
 ('unregister_activity(text,text,text)', $$SELECT durable.unregister_activity('pm-reg', 'qr', 'secret')$$,
  '42501', 'ok', 'ok', '42501', '42501'),
 -- workflow code: callable by all, meaningful only inside a workflow function
 ('activity(text,jsonb,jsonb)', $$SELECT durable.activity('x')$$, '55000', '55000', '55000', '55000', '55000'),
 ('start_activity(text,jsonb,jsonb)', $$SELECT durable.start_activity('x')$$,
  '55000', '55000', '55000', '55000', '55000'),
 ('await(text)', $$SELECT durable.await('x')$$, '55000', '55000', '55000', '55000', '55000'),
 ('sleep(interval)', $$SELECT durable.sleep('1 s')$$, '55000', '55000', '55000', '55000', '55000'),
 ('wait_signal(text,interval)', $$SELECT durable.wait_signal('x')$$, '55000', '55000', '55000', '55000', '55000'),
 ('child_workflow(text,jsonb,jsonb)', $$SELECT durable.child_workflow('x')$$,
  '55000', '55000', '55000', '55000', '55000'),
 ('side_effect(jsonb)', $$SELECT durable.side_effect('1')$$, '55000', '55000', '55000', '55000', '55000'),
 ('workflow_info()', $$SELECT durable.workflow_info()$$, '55000', '55000', '55000', '55000', '55000'),
 ('get_version(text,integer,integer)', $$SELECT durable.get_version('x', -1, 1)$$,
  '55000', '55000', '55000', '55000', '55000'),
 ('patched(text)', $$SELECT durable.patched('x')$$, '55000', '55000', '55000', '55000', '55000'),
 ('deprecate_patch(text)', $$SELECT durable.deprecate_patch('x')$$, '55000', '55000', '55000', '55000', '55000'),
 -- monitoring (docs/metrics.md "Metrics"): rows filtered by namespace, not for PUBLIC
 ('metric_values()', $$SELECT count(*) FROM durable.metric_values()$$, 'ok', 'ok', 'ok', 'ok', '42501'),
 ('metrics_text()', $$SELECT durable.metrics_text()$$, 'ok', 'ok', 'ok', 'ok', '42501'),
 ('task_queue_pollers()', $$SELECT count(*) FROM durable.task_queue_pollers()$$, 'ok', 'ok', 'ok', 'ok', '42501');

-- Relations: 'rows' when the role reads rows of namespace 'secret' (relations with a
-- namespace column), 'none' when it reads none, 'ok' (others) or the SQLSTATE.
CREATE TABLE pm.expect_relations (rel text PRIMARY KEY,
    client text, worker text, admin text, other text, public text);
INSERT INTO pm.expect_relations VALUES
 ('workflows', 'rows', '42501', 'rows', 'none', '42501'),
 ('activity_attempts', 'rows', '42501', 'rows', 'none', '42501'),
 ('stuck_tasks', 'rows', '42501', 'rows', 'none', '42501'),
 -- The monitoring views show the namespaces a role may read (client privilege).
 -- Nothing is counted yet: counters count at commit, and this file is one transaction.
 ('task_queues', 'rows', 'none', 'rows', 'none', '42501'),
 ('metrics', 'none', 'none', 'none', 'none', '42501'),
 -- Registrations name functions and roles, not workflow data: every worker reads all.
 ('registrations', '42501', 'rows', 'rows', 'rows', '42501'),
 ('namespaces', '42501', '42501', 'ok', '42501', '42501'),
 ('namespace_grants', '42501', '42501', 'rows', '42501', '42501'),
 ('runs', '42501', '42501', 'rows', '42501', '42501'),
 ('history', '42501', '42501', 'ok', '42501', '42501'),
 ('buffered_events', '42501', '42501', 'ok', '42501', '42501'),
 ('ready_tasks', '42501', '42501', 'rows', '42501', '42501'),
 ('paused_task_queues', '42501', '42501', 'none', '42501', '42501'),
 ('task_queue_limits', '42501', '42501', 'none', '42501', '42501'),
 ('task_starts', '42501', '42501', 'none', '42501', '42501'),
 ('task_key_limits', '42501', '42501', 'none', '42501', '42501'),
 -- The keys of the queues, of the namespaces a role may read: none here has a key.
 ('task_queue_keys', 'none', 'none', 'none', 'none', '42501'),
 -- Batch operations: the views show the jobs of the namespaces a role may read.
 ('batches', 'rows', '42501', 'rows', 'none', '42501'),
 ('batch_errors', 'rows', '42501', 'rows', 'none', '42501'),
 ('batch_jobs', '42501', '42501', 'rows', '42501', '42501'),
 ('batch_job_errors', '42501', '42501', 'ok', '42501', '42501'),
 ('timers', '42501', '42501', 'ok', '42501', '42501'),
 ('activities', '42501', '42501', 'rows', '42501', '42501'),
 ('activity_attempt_log', '42501', '42501', 'ok', '42501', '42501'),
 ('children', '42501', '42501', 'none', '42501', '42501'),
 ('user_timers', '42501', '42501', 'ok', '42501', '42501'),
 -- The router of a cluster node and the requests it received from other nodes.
 ('router', '42501', '42501', 'ok', '42501', '42501'),
 ('received_requests', '42501', '42501', 'ok', '42501', '42501'),
 -- The key that signs list_workflows' cursors: only the extension's owner reads it.
 ('list_cursor_key', '42501', '42501', '42501', '42501', '42501');

CREATE VIEW pm.ext_functions AS
    SELECT regexp_replace(p.oid::regprocedure::text, '^durable\.', '') AS fn
      FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
     WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
       AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'durable');
CREATE VIEW pm.ext_relations AS
    SELECT c.relname::text AS rel, EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid
                                           AND a.attname = 'namespace' AND NOT a.attisdropped) AS by_ns
      FROM pg_depend d JOIN pg_class c ON c.oid = d.objid
     WHERE d.classid = 'pg_class'::regclass AND d.deptype = 'e' AND c.relkind IN ('r', 'v')
       AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'durable');

SELECT is(ARRAY(SELECT fn FROM pm.ext_functions EXCEPT SELECT fn FROM pm.expect_functions ORDER BY 1),
          '{}'::text[], 'every function of the extension is in the expectation table');
SELECT is(ARRAY(SELECT rel FROM pm.ext_relations EXCEPT SELECT rel FROM pm.expect_relations ORDER BY 1),
          '{}'::text[], 'every table and view of the extension is in the expectation table');

SELECT is(ARRAY[pm.try('pm_client', e.stmt), pm.try('pm_worker', e.stmt), pm.try('pm_admin', e.stmt),
                pm.try('pm_other', e.stmt), pm.try('pm_nobody', e.stmt)],
          ARRAY[e.client, e.worker, e.admin, e.other, e.public],
          format('%s as client, worker, admin, other namespace, public', e.fn))
  FROM pm.expect_functions e JOIN pm.ext_functions f USING (fn)
 ORDER BY e.fn;

SELECT is(ARRAY[pm.try('pm_client', s), pm.try('pm_worker', s), pm.try('pm_admin', s),
                pm.try('pm_other', s), pm.try('pm_nobody', s)],
          ARRAY[e.client, e.worker, e.admin, e.other, e.public],
          format('reading %s as client, worker, admin, other namespace, public', e.rel))
  FROM pm.expect_relations e JOIN pm.ext_relations r USING (rel),
       LATERAL (SELECT CASE WHEN r.by_ns THEN format(
           $q$DO $d$ BEGIN IF EXISTS (SELECT 1 FROM durable.%I WHERE namespace = 'secret')
               THEN RAISE SQLSTATE 'PMRW0'; ELSE RAISE SQLSTATE 'PMNO0'; END IF; END $d$$q$, e.rel)
           ELSE format('SELECT count(*) FROM durable.%I', e.rel) END AS s) q
 ORDER BY e.rel;

-- The same reads, with a function of the caller's in the WHERE clause that the
-- planner would run first (cheap) and that stops at the first row of 'secret'
-- it is given: it must see 'secret' only where the role reads its rows.
CREATE FUNCTION pm.leak(ns text) RETURNS boolean LANGUAGE plpgsql STABLE COST 0.0000001 AS
    $$ BEGIN IF ns = 'secret' THEN RAISE SQLSTATE 'PMRW0'; END IF; RETURN true; END $$;
SELECT is(ARRAY[pm.try('pm_client', s), pm.try('pm_worker', s), pm.try('pm_admin', s),
                pm.try('pm_other', s), pm.try('pm_nobody', s)],
          ARRAY[e.client, e.worker, e.admin, e.other, e.public],
          format('a leaky qualifier on %s as client, worker, admin, other namespace, public', e.rel))
  FROM pm.expect_relations e JOIN pm.ext_relations r USING (rel)
  JOIN pg_class c ON c.oid = ('durable.' || quote_ident(e.rel))::regclass AND c.relkind = 'v',
       LATERAL (SELECT format(
           $q$DO $d$ BEGIN PERFORM count(*) FROM durable.%I WHERE pm.leak(namespace);
               RAISE SQLSTATE 'PMNO0'; END $d$$q$, e.rel) AS s) q
 WHERE r.by_ns
 ORDER BY e.rel;

-- The error names the namespace and the privilege.
CREATE FUNCTION pm.err(role name, stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE msg text;
BEGIN
    BEGIN
        EXECUTE format('SET LOCAL ROLE %I', role);
        EXECUTE stmt;
        msg := 'no error';
    EXCEPTION WHEN OTHERS THEN
        msg := SQLSTATE || ' ' || SQLERRM;
    END;
    RESET ROLE;
    RETURN msg;
END $$;
SELECT is(pm.err('pm_other', $$SELECT durable.terminate_workflow('pm-dec', NULL, NULL, 'secret')$$),
          '42501 permission denied for namespace "secret": privilege client required',
          'terminate outside the role''s namespaces: 42501 naming the namespace and the privilege');
SELECT durable.grant_namespace('secret', 'pm_other', 'client');
SELECT is(pm.err('pm_other', $$SELECT durable.poll_activity_task('q', NULL, 'secret')$$),
          '42501 permission denied for namespace "secret": privilege worker required',
          'client does not imply worker: a poll needs the worker privilege');
SELECT durable.revoke_namespace('secret', 'pm_other', 'client');
SELECT is((SELECT status FROM durable.runs WHERE workflow_id = 'pm-dec'), 'running',
          'the denied terminate changed nothing');

-- 'default' stays open to every member of the group roles (PUBLIC has both privileges).
SELECT is(pm.try('pm_other', $$SELECT durable.start_workflow('pm', NULL, 'pm-d', 'q')$$), 'ok',
          'default: a client with no grant of its own starts workflows');
SELECT is(pm.try('pm_other', $$SELECT durable.poll_decision_task('q')$$), 'ok',
          'default: a worker with no grant of its own polls');
SELECT is(ARRAY(SELECT privilege FROM durable.namespace_grants
                 WHERE namespace = 'default' AND grantee::oid = 0 ORDER BY 1),
          '{client,worker}', 'default: granted to PUBLIC');
SELECT durable.revoke_namespace('default', 'PUBLIC', 'client');
SELECT is(pm.try('pm_other', $$SELECT durable.start_workflow('pm', NULL, 'pm-d', 'q')$$), '42501',
          'an admin can close default: revoke client from PUBLIC');
SELECT is(pm.try('pm_admin', $$SELECT durable.start_workflow('pm', NULL, 'pm-d', 'q')$$), 'ok',
          'durable_admin still may');
SELECT durable.grant_namespace('default', 'public', 'client');
SELECT is(pm.try('pm_other', $$SELECT durable.start_workflow('pm', NULL, 'pm-d', 'q')$$), 'ok',
          'and open it again (PUBLIC in any case)');

-- A new namespace is open to its creator and durable_admin only.
CREATE ROLE pm_owner;
GRANT durable_admin TO pm_owner;
SET LOCAL ROLE pm_owner;
SELECT durable.create_namespace('pm-owned');
RESET ROLE;
SELECT is((SELECT owner::text FROM durable.namespaces WHERE name = 'pm-owned'), 'pm_owner',
          'create_namespace records its creator as the owner');
SELECT is(pm.try('pm_client', $$SELECT durable.start_workflow('pm', NULL, 'x', 'q', 'pm-owned')$$), '42501',
          'a new namespace is closed to a client');
REVOKE durable_admin FROM pm_owner;
GRANT durable_client TO pm_owner;
SELECT is(pm.try('pm_owner', $$SELECT durable.start_workflow('pm', NULL, 'x', 'q', 'pm-owned')$$), 'ok',
          'its owner, no longer an admin, still may');
SELECT is(pm.try('pm_owner', $$SELECT durable.grant_namespace('pm-owned', 'pm_client', 'client')$$), 'ok',
          'its owner may grant on it');
SELECT is(pm.try('pm_owner', $$SELECT durable.grant_namespace('secret', 'pm_client', 'worker')$$), '42501',
          'but not on a namespace of another owner');
SELECT durable.grant_namespace('pm-owned', 'pm_client', 'client');
SELECT is(pm.try('pm_client', $$SELECT durable.start_workflow('pm', NULL, 'x', 'q', 'pm-owned')$$), 'ok',
          'once granted, the client may (the same session: the cache is invalidated)');
SELECT durable.revoke_namespace('pm-owned', 'pm_client', 'client');
SELECT is(pm.try('pm_client', $$SELECT durable.start_workflow('pm', NULL, 'x', 'q', 'pm-owned')$$), '42501',
          'revoked, it may not');
SELECT is(pm.err('pm_admin', $$SELECT durable.grant_namespace('pm-owned', 'pm_client', 'admin')$$),
          '22023 privilege must be "client" or "worker"', 'an unknown privilege: 22023');
SELECT is(pm.err('pm_admin', $$SELECT durable.grant_namespace('pm-owned', 'pm_nosuchrole', 'client')$$),
          '42704 role "pm_nosuchrole" does not exist', 'an unknown role: 42704');

-- Privileges go with role membership, and a change of membership is seen at once.
SELECT is(pm.try('pm_nobody', $$SELECT durable.describe_workflow('pm-dec', 'secret')$$), '42501',
          'a role with no grants may not describe');
GRANT pm_client TO pm_nobody;
SELECT is(pm.try('pm_nobody', $$SELECT durable.describe_workflow('pm-dec', 'secret')$$), 'ok',
          'a member of a grantee has its privileges');
REVOKE pm_client FROM pm_nobody;
SELECT is(pm.try('pm_nobody', $$SELECT durable.describe_workflow('pm-dec', 'secret')$$), '42501',
          'and loses them with the membership');

-- The views show a role the namespaces it may read.
SELECT durable.start_workflow('pm', NULL, 'pm-o', 'q', 'other');
SELECT durable.start_workflow('pm', NULL, 'pm-def', 'q');
SET LOCAL ROLE pm_other;
SELECT is(ARRAY(SELECT DISTINCT namespace FROM durable.workflows ORDER BY 1), '{default,other}',
          'durable.workflows shows pm_other its namespaces and default');
RESET ROLE;
SET LOCAL ROLE pm_client;
SELECT is(ARRAY(SELECT DISTINCT namespace FROM durable.workflows ORDER BY 1), '{default,secret}',
          'and pm_client its own');
RESET ROLE;

-- A worker acting in its namespace cannot start a child in another one.
SELECT durable.start_workflow('pm', NULL, 'pm-c', 'qc', 'other');
SELECT is(pm.try('pm_other', $$SELECT durable.complete_decision_task(
              durable.poll_decision_task('qc', NULL, 'other')->>'taskToken',
              '[{"decisionType": "StartChildWorkflowExecution", "workflowId": "kid",
                 "workflowType": "pm", "taskQueue": "q", "namespace": "secret"}]')$$), '42501',
          'a decision starting a child in a namespace without client there: 42501');
SELECT is(pm.try('pm_other', $$SELECT durable.complete_decision_task(
              durable.poll_decision_task('qc', NULL, 'other')->>'taskToken',
              '[{"decisionType": "StartChildWorkflowExecution", "workflowId": "kid",
                 "workflowType": "pm", "taskQueue": "q", "namespace": "other"}]')$$), 'ok',
          'in its own namespace it may');

-- User code run by the executors acts as its run_as role, not as the executor's
-- session (a superuser): an activity of pm_other's cannot start a workflow in 'secret'.
CREATE FUNCTION pm.evil(input jsonb) RETURNS jsonb LANGUAGE sql AS
    $$ SELECT to_jsonb(durable.start_workflow('pm', '{}', 'evil', 'q', 'secret')) $$;
SET LOCAL ROLE pm_other;
SELECT durable.register_activity('pm-evil', 'pm.evil(jsonb)', 'qe', 'other');
RESET ROLE;
SELECT durable.start_workflow('pm', NULL, 'pm-e', 'qe', 'other');
SELECT durable.complete_decision_task(durable.poll_decision_task('qe', NULL, 'other')->>'taskToken',
    '[{"decisionType": "ScheduleActivityTask", "activityId": "a", "activityType": "pm-evil",
       "taskQueue": "qe", "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 1}}]');
SELECT is(durable.run_tasks(), 1, 'the executor runs the activity');
SELECT is((SELECT failure_reason FROM durable.activity_attempts WHERE workflow_id = 'pm-e'), '42501',
          'which fails with 42501');
SELECT is((SELECT count(*) FROM durable.runs WHERE workflow_id = 'evil'), 0::bigint,
          'and starts nothing in secret');

-- A SECURITY DEFINER function acts with its owner's namespace privileges, as
-- PostgreSQL checks table privileges for the current user: pm_other's helper,
-- called by pm_client, cannot read 'secret'; pm_client's, called by pm_nobody, can.
CREATE FUNCTION pm.describe_as_owner(wid text, ns text) RETURNS text
    LANGUAGE sql SECURITY DEFINER
    AS $$ SELECT durable.describe_workflow(wid, ns)->>'status' $$;
CREATE FUNCTION pm.describe_as_client(wid text, ns text) RETURNS text
    LANGUAGE sql SECURITY DEFINER
    AS $$ SELECT durable.describe_workflow(wid, ns)->>'status' $$;
ALTER FUNCTION pm.describe_as_owner(text, text) OWNER TO pm_other;
ALTER FUNCTION pm.describe_as_client(text, text) OWNER TO pm_client;
SELECT is(pm.try('pm_client', $$SELECT pm.describe_as_owner('pm-dec', 'secret')$$), '42501',
          'pm_other''s SECURITY DEFINER function, called by pm_client: pm_other''s privileges');
SELECT is(pm.try('pm_nobody', $$SELECT pm.describe_as_client('pm-dec', 'secret')$$), 'ok',
          'pm_client''s, called by a role with no grants: pm_client''s');

SELECT * FROM finish();
ROLLBACK;

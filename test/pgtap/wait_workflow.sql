-- durable.wait_workflow() (docs/api.md "Waiting for a result"): the close of a workflow's chain, as
-- Temporal's handle.result() gives it: {runId, status, result, failure, closeTime} of
-- the last run, following retries, ContinueAsNew and cron; NULL while the chain is
-- open when the wait passes; errors and privileges as describe_workflow.  That a
-- commit wakes a waiting call, and that it holds no xmin meanwhile, is in
-- test/t/043_wait_workflow.pl.
BEGIN;
SELECT plan(40);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';
-- A wait that is not cut short fails here instead of hanging the run.
SET LOCAL statement_timeout = '60s';

-- What wait_workflow returns, without closeTime (checked on its own).
CREATE FUNCTION pg_temp.outcome(wid text, rid uuid DEFAULT NULL, w interval DEFAULT '0')
RETURNS jsonb LANGUAGE sql AS
    $$ SELECT durable.wait_workflow(wid, run_id => rid, wait => w) - 'closeTime' $$;

-- Each closed status, one run.
SELECT durable.start_workflow('wf', NULL, 'done', 'q') AS done1 \gset
SELECT is(durable.wait_workflow('done', wait => '0'), NULL, 'running, wait 0: NULL at once');
SELECT is(durable.wait_workflow('done', wait => '10 milliseconds'), NULL,
    'running: NULL when the wait passes');
SELECT is(durable.wait_workflow('done', wait => NULL), NULL, 'wait NULL: no wait, as the polls');
SELECT t.decide('done', '[{"decisionType": "CompleteWorkflowExecution", "result": {"total": 42}}]', 'q') IS NOT NULL;
SELECT is(pg_temp.outcome('done'),
    jsonb_build_object('runId', :'done1', 'status', 'completed', 'result', '{"total": 42}'::jsonb, 'failure', NULL),
    'completed: its result');
SELECT is(durable.wait_workflow('done')->>'closeTime',
    durable.describe_workflow('done')->>'closeTime', 'closeTime is the run''s close time');
SELECT is((durable.wait_workflow('done')->>'closeTime')::timestamptz, '2026-01-01 00:00:00+00',
    'closeTime on the engine''s clock');
SELECT is(pg_temp.outcome('done', w => '1 hour') ->> 'status', 'completed',
    'a closed chain returns at once whatever the wait');

SELECT durable.start_workflow('wf', NULL, 'failed', 'q') IS NOT NULL;
SELECT t.decide('failed', '[{"decisionType": "FailWorkflowExecution", "reason": "bad", "details": {"x": 1}}]', 'q') IS NOT NULL;
SELECT is(pg_temp.outcome('failed') - 'runId',
    '{"status": "failed", "result": null, "failure": {"reason": "bad", "details": {"x": 1}}}',
    'failed: its failure');

SELECT durable.start_workflow('wf', NULL, 'canceled', 'q') IS NOT NULL;
SELECT t.decide('canceled', '[]', 'q') IS NOT NULL;
SELECT durable.cancel_workflow('canceled', 'stop');
SELECT is(pg_temp.outcome('canceled'), NULL, 'a cancel request does not close the run');
SELECT t.decide('canceled', '[{"decisionType": "CancelWorkflowExecution", "details": "bye"}]', 'q') IS NOT NULL;
SELECT is(pg_temp.outcome('canceled')->>'status', 'canceled', 'canceled');

SELECT durable.start_workflow('wf', NULL, 'terminated', 'q') IS NOT NULL;
SELECT durable.terminate_workflow('terminated', 'enough');
SELECT is(pg_temp.outcome('terminated') - 'runId',
    '{"status": "terminated", "result": null, "failure": null}', 'terminated');

SELECT durable.start_workflow('wf', NULL, 'slow', 'q', run_timeout => '1 minute') IS NOT NULL;
SELECT t.at('2026-01-01 00:01:00+00');
SELECT durable.tick() AS fired \gset
SELECT is(pg_temp.outcome('slow') - 'runId',
    '{"status": "timed_out", "result": null, "failure": {"reason": "durable:Timeout START_TO_CLOSE", "details": null}}',
    'timed_out: the run timeout');

-- A retry chain: the failed run is continued; the chain closes with its last run.
SELECT t.at('2026-01-01 01:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'retry', 'q',
    retry_policy => durable.retry_policy('10 seconds', maximum_attempts => 3)) AS retry1 \gset
SELECT t.decide('retry', '[{"decisionType": "FailWorkflowExecution", "reason": "oops"}]', 'q') IS NOT NULL;
SELECT durable.resolve_run_id('retry') AS retry2 \gset
SELECT is(pg_temp.outcome('retry', :'retry1'), NULL,
    'from the failed first run: NULL, its retry is still open');
SELECT is(pg_temp.outcome('retry'), NULL, 'from the latest run: NULL');
SELECT t.at('2026-01-01 01:00:10+00');
SELECT durable.tick() AS fired \gset
SELECT t.decide('retry', '[{"decisionType": "CompleteWorkflowExecution", "result": "second time lucky"}]', 'q') IS NOT NULL;
SELECT is(pg_temp.outcome('retry', :'retry1'),
    jsonb_build_object('runId', :'retry2', 'status', 'completed', 'result', '"second time lucky"'::jsonb, 'failure', NULL),
    'from the first run: the retry''s result, with the retry''s runId');
SELECT is(pg_temp.outcome('retry', :'retry2')->>'runId', :'retry2', 'from the second run: the same');
SELECT is(pg_temp.outcome('retry')->>'runId', :'retry2', 'run_id NULL: the same');

-- Retries used up: the chain closes failed.
SELECT durable.start_workflow('wf', NULL, 'hopeless', 'q',
    retry_policy => durable.retry_policy('1 second', maximum_attempts => 2)) AS hopeless1 \gset
SELECT t.decide('hopeless', '[{"decisionType": "FailWorkflowExecution", "reason": "no"}]', 'q') IS NOT NULL;
SELECT t.at('2026-01-01 01:00:11+00');
SELECT durable.tick() AS fired \gset
SELECT t.decide('hopeless', '[{"decisionType": "FailWorkflowExecution", "reason": "still no"}]', 'q') IS NOT NULL;
SELECT is(pg_temp.outcome('hopeless', :'hopeless1')->'failure'->>'reason', 'still no',
    'retries used up: the last attempt''s failure');
SELECT isnt(pg_temp.outcome('hopeless', :'hopeless1')->>'runId', :'hopeless1', 'of the last run');

-- ContinueAsNew by the decider, twice.
SELECT durable.start_workflow('wf', '{"page": 1}', 'pages', 'q') AS pages1 \gset
SELECT t.decide('pages', '[{"decisionType": "ContinueAsNewWorkflowExecution", "input": {"page": 2}}]', 'q') IS NOT NULL;
SELECT is(pg_temp.outcome('pages', :'pages1'), NULL, 'ContinueAsNew: the next run is open');
SELECT t.decide('pages', '[{"decisionType": "ContinueAsNewWorkflowExecution", "input": {"page": 3}}]', 'q') IS NOT NULL;
SELECT durable.resolve_run_id('pages') AS pages3 \gset
SELECT t.decide('pages', '[{"decisionType": "CompleteWorkflowExecution", "result": 3}]', 'q') IS NOT NULL;
SELECT is(pg_temp.outcome('pages', :'pages1'),
    jsonb_build_object('runId', :'pages3', 'status', 'completed', 'result', 3, 'failure', NULL),
    'ContinueAsNew twice: the third run''s result');

-- Cron: a completed (or failed) run continues at the next fire time, so the chain
-- closes only when a run ends without a next one (terminate, cancel, an
-- execution timeout), as a cron workflow's result in Temporal.
SELECT t.at('2026-01-01 02:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'hourly', 'q', cron_schedule => '0 * * * *') AS cron1 \gset
SELECT t.at('2026-01-01 03:00:00+00');
SELECT durable.tick() AS fired \gset
SELECT t.decide('hourly', '[{"decisionType": "CompleteWorkflowExecution", "result": "report 1"}]', 'q') IS NOT NULL;
SELECT is(durable.describe_workflow('hourly', run_id => :'cron1')->>'status', 'continued_as_new',
    'setup: the completed cron run is continued');
SELECT is(pg_temp.outcome('hourly', :'cron1'), NULL, 'cron: a completed run does not close the chain');
SELECT t.at('2026-01-01 04:00:00+00');
SELECT durable.tick() AS fired \gset
SELECT t.decide('hourly', '[{"decisionType": "FailWorkflowExecution", "reason": "no data"}]', 'q') IS NOT NULL;
SELECT is(pg_temp.outcome('hourly', :'cron1'), NULL, 'nor a failed one');
SELECT durable.resolve_run_id('hourly') AS cron3 \gset
SELECT durable.terminate_workflow('hourly', 'retired');
SELECT is(pg_temp.outcome('hourly', :'cron1'),
    jsonb_build_object('runId', :'cron3', 'status', 'terminated', 'result', NULL, 'failure', NULL),
    'terminating the waiting cron run closes the chain');

SELECT t.at('2026-01-01 05:00:00+00');
SELECT durable.start_workflow('wf', NULL, 'daily', 'q', cron_schedule => '@daily',
    execution_timeout => '3 days') AS daily1 \gset
SELECT t.at('2026-01-04 05:00:00+00');
SELECT durable.tick() AS fired \gset
SELECT is(pg_temp.outcome('daily', :'daily1')->>'status', 'timed_out',
    'cron with an execution timeout: the chain closes timed_out');

-- A new chain of the same id after a closed one: run_id NULL means the latest run.
SELECT durable.start_workflow('wf', NULL, 'done', 'q', id_reuse_policy => 'allow_duplicate') AS done2 \gset
SELECT is(pg_temp.outcome('done'), NULL, 'run_id NULL: the new, open chain');
SELECT is(pg_temp.outcome('done', :'done1')->>'runId', :'done1', 'run_id of the old chain: its close');

-- Errors: the SQLSTATEs of describe_workflow, and 22023 naming the argument.
SELECT durable.create_namespace('ww-private');
SELECT throws_ok($$ SELECT durable.wait_workflow('nope') $$, 'WF002',
    'workflow "nope" not found in namespace "default"', 'an unknown workflow: WF002');
SELECT throws_ok($$ SELECT durable.wait_workflow('done', 'nowhere') $$, 'WF002', NULL,
    'an unknown namespace: WF002');
SELECT throws_ok(format($$ SELECT durable.wait_workflow('failed', run_id => %L) $$, :'done1'), 'WF002', NULL,
    'a run of another workflow: WF002');
SELECT throws_ok($$ SELECT durable.wait_workflow('done', wait => '-1 second') $$, '22023', NULL,
    'a negative wait: 22023');
SELECT throws_ok($$ SELECT durable.wait_workflow('done', wait => '36526 days') $$, '22023',
    'wait must be at most 100 years (36525 days)', 'a wait past the bound of the polls: 22023');
SELECT throws_ok($$ SELECT durable.wait_workflow('') $$, '22023', NULL, 'an empty workflow_id: 22023');
SELECT throws_ok($$ SELECT durable.wait_workflow('done', '') $$, '22023', NULL, 'an empty namespace: 22023');
SELECT throws_ok($$ SELECT durable.wait_workflow(NULL) $$, '22004', NULL, 'a NULL workflow_id: 22004');

-- Privileges: durable_client with the namespace's client privilege, as describe.
CREATE ROLE ww_client;   GRANT durable_client TO ww_client;
CREATE ROLE ww_worker;   GRANT durable_worker TO ww_worker;
SELECT durable.start_workflow('wf', NULL, 'private', 'q', 'ww-private') IS NOT NULL;
SET LOCAL ROLE ww_client;
SELECT is(durable.wait_workflow('done', 'default', :'done1', '0')->>'status', 'completed',
    'a durable_client member reads a namespace granted to PUBLIC');
SELECT throws_ok($$ SELECT durable.wait_workflow('private', 'ww-private') $$, '42501',
    'permission denied for namespace "ww-private": privilege client required',
    'not in a namespace it has no client privilege in');
RESET ROLE;
SET LOCAL ROLE ww_worker;
SELECT throws_ok($$ SELECT durable.wait_workflow('done', wait => '0') $$, '42501', NULL,
    'a durable_worker member may not (EXECUTE)');
RESET ROLE;
SELECT durable.grant_namespace('ww-private', 'ww_client', 'client');
SET LOCAL ROLE ww_client;
SELECT is(durable.wait_workflow('private', 'ww-private', wait => '0'), NULL, 'granted client: it may');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;

-- durable writes its hottest rows without the executor (src/store/direct.c); what a
-- user adds to its tables is either honoured as a statement would honour it,
-- or refused with a clear error and nothing written (docs/operations.md
-- "What durable's tables support").
BEGIN;
SELECT plan(34);

SET LOCAL durable.test_time = '2026-04-01 00:00:00+00';
CREATE TABLE audit (tbl text, op text);
CREATE FUNCTION audit_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO audit VALUES (TG_TABLE_NAME, TG_OP); RETURN NULL; END $$;

SELECT durable.start_workflow('t', workflow_id => 'w1', task_queue => 'q') IS NOT NULL AS started;
SELECT t.footprint() AS before \gset

-- Triggers: refused, on every call that writes the table, until dropped.
CREATE TRIGGER audit_history AFTER INSERT ON durable.history
    FOR EACH ROW EXECUTE FUNCTION audit_row();
SELECT throws_ok($$SELECT durable.poll_decision_task('q')$$, '0A000',
    'durable does not support trigger "audit_history" on table durable.history',
    'a row trigger on durable.history refuses a poll');
SELECT throws_ok($$SELECT durable.start_workflow('t', workflow_id => 'w2', task_queue => 'q')$$, '0A000',
    'durable does not support trigger "audit_history" on table durable.history',
    'and a start');
ALTER TABLE durable.history DISABLE TRIGGER audit_history;
SELECT lives_ok($$SELECT durable.start_workflow('t', workflow_id => 'w2', task_queue => 'q2')$$,
    'a disabled trigger is no obstacle: it would not fire for a statement either');
DROP TRIGGER audit_history ON durable.history;
CREATE TRIGGER audit_runs AFTER UPDATE ON durable.runs
    FOR EACH STATEMENT EXECUTE FUNCTION audit_row();
SELECT throws_ok($$SELECT durable.signal_workflow('w1', 'sig')$$, '0A000',
    'durable does not support trigger "audit_runs" on table durable.runs',
    'a statement trigger on durable.runs refuses a signal');
DROP TRIGGER audit_runs ON durable.runs;
CREATE TRIGGER audit_ready BEFORE DELETE ON durable.ready_tasks
    FOR EACH ROW EXECUTE FUNCTION audit_row();
SELECT throws_ok($$SELECT durable.poll_decision_task('q')$$, '0A000',
    'durable does not support trigger "audit_ready" on table durable.ready_tasks',
    'a delete trigger on durable.ready_tasks refuses a poll');
DROP TRIGGER audit_ready ON durable.ready_tasks;
SELECT durable.terminate_workflow('w2');
DELETE FROM durable.history WHERE run_id = (SELECT run_id FROM durable.runs WHERE workflow_id = 'w2');
DELETE FROM durable.runs WHERE workflow_id = 'w2';
SELECT is(t.footprint(), :'before', 'nothing was written');
SELECT is((SELECT count(*) FROM audit), 0::bigint, 'and no trigger fired for some rows only');
CREATE TRIGGER audit_truncate AFTER TRUNCATE ON durable.ready_tasks
    FOR EACH STATEMENT EXECUTE FUNCTION audit_row();
SELECT isnt(durable.poll_decision_task('q'), NULL, 'a TRUNCATE trigger is no obstacle: durable never truncates');
DROP TRIGGER audit_truncate ON durable.ready_tasks;

-- Rules, generated columns: refused.
CREATE RULE history_notify AS ON INSERT TO durable.history DO ALSO NOTIFY history_changed;
SELECT throws_ok($$SELECT durable.start_workflow('t', workflow_id => 'w2', task_queue => 'q')$$, '0A000',
    'durable does not support rules on table durable.history', 'a rule is refused');
DROP RULE history_notify ON durable.history;
ALTER TABLE durable.history ADD COLUMN big boolean GENERATED ALWAYS AS (event_id > 100) STORED;
SELECT throws_ok($$SELECT durable.start_workflow('t', workflow_id => 'w2', task_queue => 'q')$$, '0A000',
    'durable does not support a generated column on table durable.history', 'a generated column is refused');
ALTER TABLE durable.history DROP COLUMN big;

-- A changed column type is refused, not written as the old type.
ALTER TABLE durable.timers ALTER COLUMN attempt TYPE bigint;
SELECT throws_ok($$SELECT durable.start_workflow('t', workflow_id => 'w2', task_queue => 'q', delay => '1 minute')$$, '0A000',
    'column "attempt" of durable.timers has type bigint instead of integer', 'a changed column type is refused');
ALTER TABLE durable.timers ALTER COLUMN attempt TYPE integer;

-- Columns a user adds: an inserted row gets the column's default, or NULL,
-- as an INSERT would give it; NOT NULL is enforced.
ALTER TABLE durable.history ADD COLUMN tenant text DEFAULT current_setting('app.tenant', true),
                            ADD COLUMN seen boolean,
                            ADD COLUMN n bigint GENERATED ALWAYS AS IDENTITY;
SET LOCAL app.tenant = 'acme';
SELECT lives_ok($$SELECT durable.start_workflow('t', workflow_id => 'cols', task_queue => 'cols')$$,
    'a start works with columns added to durable.history');
SELECT is((SELECT array_agg(DISTINCT tenant) FROM durable.history h JOIN durable.runs r USING (run_id)
            WHERE r.workflow_id = 'cols'), ARRAY['acme'], 'each new event has the added column''s default');
SELECT is((SELECT count(*) FROM durable.history h JOIN durable.runs r USING (run_id)
            WHERE r.workflow_id = 'cols' AND seen IS NULL AND n IS NOT NULL), 2::bigint,
    'a column without a default is NULL, an identity column numbered');
SELECT isnt(durable.poll_decision_task('cols'), NULL, 'a poll works too');
SELECT is(t.events('cols'), ARRAY['WorkflowExecutionStarted', 'DecisionTaskScheduled', 'DecisionTaskStarted'],
    'and its history reads the same');
ALTER TABLE durable.history DROP COLUMN tenant, DROP COLUMN seen, DROP COLUMN n;
ALTER TABLE durable.ready_tasks ADD COLUMN must int NOT NULL;
SELECT throws_ok($$SELECT durable.start_workflow('t', workflow_id => 'w2', task_queue => 'q')$$, '23502',
    'null value in column "must" of relation "ready_tasks" violates not-null constraint',
    'a NOT NULL column without a default refuses a row, as an INSERT does');
ALTER TABLE durable.ready_tasks DROP COLUMN must;
ALTER TABLE durable.runs ADD COLUMN note text DEFAULT 'kept';
SELECT lives_ok($$SELECT durable.signal_workflow('cols', 'sig')$$, 'a run row with an added column is updated');
SELECT is((SELECT note FROM durable.runs WHERE workflow_id = 'cols'), 'kept', 'and keeps its value');
ALTER TABLE durable.runs DROP COLUMN note;

-- CHECK constraints a user adds are evaluated on the rows written directly.
SELECT t.footprint() AS before \gset
ALTER TABLE durable.ready_tasks ADD CONSTRAINT short_queue CHECK (length(task_queue) <= 8);
SELECT throws_ok($$SELECT durable.start_workflow('t', workflow_id => 'w3', task_queue => 'a_long_queue')$$, '23514',
    'new row for relation "ready_tasks" violates check constraint "short_queue"',
    'a CHECK on durable.ready_tasks refuses an insert');
SELECT is(t.footprint(), :'before', 'nothing was written');
SELECT lives_ok($$SELECT durable.start_workflow('t', workflow_id => 'w3', task_queue => 'short')$$,
    'a row that satisfies it is written');
ALTER TABLE durable.ready_tasks DROP CONSTRAINT short_queue;
ALTER TABLE durable.runs ADD CONSTRAINT never_terminated CHECK (status <> 'terminated');
SELECT throws_ok($$SELECT durable.terminate_workflow('w3')$$, '23514',
    'new row for relation "runs" violates check constraint "never_terminated"',
    'a CHECK on durable.runs refuses an update');
ALTER TABLE durable.runs DROP CONSTRAINT never_terminated;
SELECT t.decide('w3', jsonb_build_array(t.sched('a1', '{"taskQueue": "aq"}')), 'short') IS NOT NULL AS decided;
ALTER TABLE durable.activities ADD CONSTRAINT no_mallory CHECK (last_worker_identity <> 'mallory');
SELECT throws_ok($$SELECT durable.poll_activity_task('aq', identity => 'mallory')$$, '23514',
    'new row for relation "activities" violates check constraint "no_mallory"',
    'a CHECK on durable.activities refuses a started attempt');
SELECT durable.poll_activity_task('aq', identity => 'alice') AS atask \gset
SELECT isnt(:'atask'::jsonb, NULL, 'another identity gets the task');
ALTER TABLE durable.activities DROP CONSTRAINT no_mallory;
-- durable.activity_attempt_log is written directly too: a trigger is refused,
-- a CHECK a user added is evaluated, and the failed call changes nothing.
SELECT t.footprint() || ' ' || (SELECT a.state || '/' || a.attempt FROM durable.activities a) AS before \gset
CREATE TRIGGER audit_attempts AFTER INSERT ON durable.activity_attempt_log
    FOR EACH ROW EXECUTE FUNCTION audit_row();
SELECT throws_ok(format('SELECT durable.fail_activity(%L, %L)', :'atask'::jsonb->>'taskToken', 'boom'), '0A000',
    'durable does not support trigger "audit_attempts" on table durable.activity_attempt_log',
    'a trigger on durable.activity_attempt_log refuses a failed attempt');
DROP TRIGGER audit_attempts ON durable.activity_attempt_log;
ALTER TABLE durable.activity_attempt_log ADD CONSTRAINT no_boom CHECK (failure_reason <> 'boom');
SELECT throws_ok(format('SELECT durable.fail_activity(%L, %L)', :'atask'::jsonb->>'taskToken', 'boom'), '23514',
    'new row for relation "activity_attempt_log" violates check constraint "no_boom"',
    'a CHECK on durable.activity_attempt_log refuses a logged attempt');
SELECT is(t.footprint() || ' ' || (SELECT a.state || '/' || a.attempt FROM durable.activities a), :'before',
    'nothing was written, the attempt is still started');
SELECT lives_ok(format('SELECT durable.fail_activity(%L, %L)', :'atask'::jsonb->>'taskToken', 'fine'),
    'an attempt that satisfies it is logged');
SELECT is((SELECT outcome || '/' || failure_reason FROM durable.activity_attempt_log), 'failed/fine',
    'as the attempt log has it');
ALTER TABLE durable.activity_attempt_log DROP CONSTRAINT no_boom;

-- A publication: UPDATE and DELETE need a replica identity, as for a statement.
SET LOCAL client_min_messages = error;   -- "wal_level is insufficient ..."
CREATE PUBLICATION durable_pub FOR TABLE durable.ready_tasks;
ALTER TABLE durable.ready_tasks REPLICA IDENTITY NOTHING;
SELECT throws_ok($$SELECT durable.poll_decision_task('cols')$$, '55000',
    'cannot delete from table "ready_tasks" because it does not have a replica identity and publishes deletes',
    'a claim of a published table without a replica identity is refused as a DELETE is');
ALTER TABLE durable.ready_tasks REPLICA IDENTITY DEFAULT;
SELECT lives_ok($$SELECT durable.signal_workflow('w1', 'sig')$$, 'with its replica identity back, writes work');

-- The engine's own triggers keep working.
SELECT lives_ok($$SELECT durable.create_namespace('other')$$, 'create_namespace');
SELECT isnt(durable.start_workflow('t', namespace => 'other'), NULL, 'a start in the new namespace');

SELECT * FROM finish();
ROLLBACK;

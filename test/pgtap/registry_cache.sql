-- The cache of durable.registrations (src/store/registry.c): a load of it that fails leaves it
-- invalid, so that the next call of the same backend reads the table again and routes a
-- registered SQL workflow to the executors.  Before the fix the failed load left an empty
-- cache marked valid: for the backend's lifetime, every SQL workflow it started went to
-- external pollers (kind 'd') and durable.run_tasks() never ran it.
--
-- The load fails on a lock timeout: a prepared transaction holds durable.registrations
-- locked, so that one session can make the load fail and then carry on.  No transaction
-- wraps the file (PREPARE TRANSACTION needs its own); the runner drops the database.
SELECT plan(6);

DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'registry_cache_app') THEN
        CREATE ROLE registry_cache_app;
    END IF;
END $$;
CREATE FUNCTION hello(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT '"hi"'::jsonb $$;
SELECT durable.register_workflow('hello', 'hello(jsonb)', run_as => 'registry_cache_app');

BEGIN;
LOCK TABLE durable.registrations IN ACCESS EXCLUSIVE MODE;
PREPARE TRANSACTION 'registry_cache_lock';

SET lock_timeout = '10ms';
SELECT throws_ok($$ SELECT durable.start_workflow('hello', NULL, 'w1') $$, '55P03', NULL,
    'start_workflow fails while the registrations cannot be read (lock timeout)');
RESET lock_timeout;
COMMIT PREPARED 'registry_cache_lock';

SELECT lives_ok($$ SELECT durable.start_workflow('hello', NULL, 'w2') $$,
    'the same session starts the workflow once the lock is gone');
SELECT is((SELECT t.kind FROM durable.ready_tasks t JOIN durable.runs r USING (run_id)
            WHERE r.workflow_id = 'w2'),
          'w', 'its decision task goes to the executors, as the type is registered');
SELECT is(durable.poll_decision_task(), NULL, 'not to external pollers');
SELECT cmp_ok(durable.run_tasks(), '>', 0, 'durable.run_tasks() runs it');
SELECT is(durable.describe_workflow('w2')->>'status', 'completed', 'and it completes');

SELECT * FROM finish();

-- Plumbing smoke test: the runner created this database with durable and pgtap.
BEGIN;
SELECT plan(2);

SELECT has_schema('durable');
SELECT has_function('durable'::name, 'start_workflow'::name);

SELECT * FROM finish();
ROLLBACK;

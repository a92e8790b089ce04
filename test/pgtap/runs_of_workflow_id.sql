-- The runs of a workflow id have one index, runs_of_workflow_id (0.12.0, two
-- before it): what a user sees through it.  A second start of a running id is
-- refused (WF001) and allowed after the run closes as the policy says; with
-- many closed runs and a running one, describe_workflow and get_history
-- without a run_id reach the running run, and once it closes the latest run;
-- the lookups and the workflow id prefix filter go through the index.  A
-- start refuses an index of that name that is not unique (0A000) or a
-- relation of that name that is not an index (42809), and writes nothing.
BEGIN;
SELECT plan(20);

SET LOCAL durable.test_time = '2026-05-01 00:00:00+00';

-- 'started' or the SQLSTATE of a start with this policy and input.
CREATE FUNCTION pg_temp.try_start(wid text, policy text, n int) RETURNS text
    LANGUAGE plpgsql AS $$
BEGIN
    PERFORM durable.start_workflow('t', jsonb_build_object('n', n), wid,
                                   id_reuse_policy => policy);
    RETURN 'started';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END $$;

-- The schema: one index of durable.runs keyed by (namespace, workflow_id),
-- unique with NULLS NOT DISTINCT; the two it replaced are gone.
SELECT is(ARRAY(SELECT indexname::text FROM pg_indexes
                 WHERE schemaname = 'durable' AND tablename = 'runs'
                   AND indexdef LIKE '%(namespace, workflow_id%' ORDER BY 1),
          '{runs_of_workflow_id}', 'durable.runs has one index of the runs of a workflow id');
SELECT ok((SELECT indisunique AND indnullsnotdistinct FROM pg_index
            WHERE indexrelid = 'durable.runs_of_workflow_id'::regclass),
          'it is unique, NULLS NOT DISTINCT');
SELECT is((SELECT count(*)::int FROM pg_indexes WHERE schemaname = 'durable'
            AND indexname IN ('runs_one_running', 'runs_by_workflow_id')), 0,
          'runs_one_running and runs_by_workflow_id are gone');

-- A second start of a running id is refused; after it closes, per policy.
SELECT is(pg_temp.try_start('ri-a', 'allow_duplicate', 1), 'started', 'the first start');
SELECT is(pg_temp.try_start('ri-a', 'allow_duplicate', 2), 'WF001',
          'a second start of the running id is refused (WF001)');
SELECT is(pg_temp.try_start('ri-a', 'reject_duplicate', 2), 'WF001', 'whatever the policy');
SELECT is((SELECT count(*)::int FROM durable.runs WHERE workflow_id = 'ri-a'), 1,
          'and writes no run');
SELECT durable.terminate_workflow('ri-a', 'test');
SELECT is(pg_temp.try_start('ri-a', 'reject_duplicate', 3), 'WF001',
          'reject_duplicate refuses after the run closed');
SELECT is(pg_temp.try_start('ri-a', 'allow_duplicate_failed_only', 4), 'started',
          'allow_duplicate_failed_only starts after a terminated run');
SELECT is(pg_temp.try_start('ri-a', 'terminate_if_running', 5), 'started',
          'terminate_if_running replaces the running run');
SELECT is(ARRAY(SELECT status FROM durable.runs WHERE workflow_id = 'ri-a' ORDER BY run_seq),
          '{terminated,terminated,running}', 'one run of the id is running');

-- Many closed runs, then a running one: the lookups without a run_id reach it.
SELECT pg_temp.try_start('ri-many', 'allow_duplicate', g),
       durable.terminate_workflow('ri-many', 'closed ' || g)
  FROM generate_series(1, 20) g;
SELECT is(pg_temp.try_start('ri-many', 'allow_duplicate', 21), 'started',
          'a 21st run after 20 closed ones');
SELECT is(durable.describe_workflow('ri-many')->>'runId',
          (SELECT run_id::text FROM durable.runs
            WHERE workflow_id = 'ri-many' AND status = 'running'),
          'describe_workflow with no run_id shows the running run');
SELECT is((SELECT attributes->'input' FROM durable.get_history('ri-many') WHERE event_id = 1),
          '{"n": 21}', 'get_history with no run_id reads the running run');
SELECT durable.terminate_workflow('ri-many', 'closed 21');
SELECT is((SELECT attributes->'input' FROM durable.get_history('ri-many') WHERE event_id = 1),
          '{"n": 21}', 'once it closed, the latest closed run');

-- The plans: the latest run of an id and a workflow id prefix by the index.
ANALYZE durable.runs;
SET LOCAL enable_seqscan = off;
CREATE FUNCTION pg_temp.plan_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    line text;
    plan text := '';
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        plan := plan || line || E'\n';
    END LOOP;
    RETURN plan;
END $$;
SELECT matches(pg_temp.plan_of($$SELECT run_id FROM durable.runs
    WHERE namespace = 'default' AND workflow_id = 'ri-many'
    ORDER BY (CASE WHEN status = 'running' THEN NULL ELSE run_seq END) DESC LIMIT 1$$),
    'Index Scan using runs_of_workflow_id', 'the latest run of an id: an index scan');
SELECT matches(pg_temp.plan_of($$SELECT r.run_id FROM durable.runs r
    WHERE r.namespace OPERATOR(pg_catalog.=) 'default'
      AND r.workflow_id OPERATOR(pg_catalog.~~) 'ri-a%'$$),
    'runs_of_workflow_id', 'the workflow id prefix of list_workflows: the index');

-- The index changed by hand: refused, nothing written.
SELECT count(*) AS runs_before FROM durable.runs \gset
SAVEPOINT changed;
DROP INDEX durable.runs_of_workflow_id;
CREATE INDEX runs_of_workflow_id ON durable.runs (namespace, workflow_id);
SELECT throws_ok($$SELECT durable.start_workflow('t', NULL, 'ri-changed')$$, '0A000',
    'durable.runs_of_workflow_id is not a unique index of durable.runs',
    'a start refuses a runs_of_workflow_id that is not unique');
DROP INDEX durable.runs_of_workflow_id;
CREATE TABLE durable.runs_of_workflow_id (x int);
SELECT throws_ok($$SELECT durable.start_workflow('t', NULL, 'ri-changed')$$, '42809',
    '"runs_of_workflow_id" is not an index',
    'a start refuses a runs_of_workflow_id that is not an index of durable.runs');
SELECT is((SELECT count(*) FROM durable.runs), :'runs_before'::bigint,
    'the refused starts wrote no run');
ROLLBACK TO SAVEPOINT changed;

SELECT * FROM finish();
ROLLBACK;

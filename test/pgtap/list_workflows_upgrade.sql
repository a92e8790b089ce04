-- Finding workflows after ALTER EXTENSION durable UPDATE from 0.3.0:
-- the 0.4.0 library describes the search attributes of runs on a 0.3.0 schema; the
-- update builds the indexes over the runs already there, and list_workflows finds them,
-- by a search attribute upserted before the update among others, through the new indexes.
BEGIN;
SELECT plan(7);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

DROP EXTENSION durable;
CREATE EXTENSION durable VERSION '0.3.0';
SELECT durable.start_workflow('up', NULL, 'up-' || g, 'up-q') FROM generate_series(1, 3) g;
SELECT durable.complete_decision_task(durable.poll_decision_task('up-q')->>'taskToken',
    '[{"decisionType": "UpsertWorkflowSearchAttributes", "searchAttributes": {"Customer": "c-7"}}]');
SELECT is(durable.describe_workflow('up-1')->'searchAttributes', '{"Customer": "c-7"}',
          'the 0.4.0 library on a 0.3.0 schema: describe_workflow shows searchAttributes');

ALTER EXTENSION durable UPDATE TO '0.4.0';

SELECT set_eq($$SELECT indexrelid::regclass::text FROM pg_index
                 WHERE indrelid = 'durable.runs'::regclass$$,
              ARRAY['durable.runs_pkey', 'durable.runs_one_running', 'durable.runs_by_workflow_id',
                    'durable.runs_closed', 'durable.runs_list', 'durable.runs_list_status',
                    'durable.runs_list_type', 'durable.runs_list_queue',
                    'durable.runs_search_attributes', 'durable.runs_memo'],
              'the update builds the indexes of the list filters');
SELECT is(ARRAY(SELECT workflow_id FROM durable.list_workflows(workflow_type => 'up')
                 ORDER BY workflow_id),
          '{up-1,up-2,up-3}', 'list_workflows finds the runs started before the update');
SELECT is(durable.count_workflows(status => 'running', workflow_type => 'up'), 3::bigint,
          'and counts them');
SET LOCAL enable_seqscan = off;
SELECT is(ARRAY(SELECT workflow_id FROM durable.list_workflows(search_attributes => '{"Customer": "c-7"}')),
          '{up-1}', 'a search attribute upserted before the update is found (index scans only)');
SELECT is((SELECT search_attributes FROM durable.workflows WHERE workflow_id = 'up-1'),
          '{"Customer": "c-7"}', 'durable.workflows shows it');
-- The engine's lookups by workflow id use the rebuilt index (text_pattern_ops).
SELECT is(durable.resolve_run_id('up-2'), (SELECT run_id FROM durable.runs WHERE workflow_id = 'up-2'),
          'resolve_run_id after the workflow id index was rebuilt');

SELECT * FROM finish();
ROLLBACK;

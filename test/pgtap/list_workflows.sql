-- Finding workflows (docs/api.md "Finding workflows"): list_workflows, count_workflows and
-- count_workflows_by_status, each filter, keyset pagination while runs are started
-- between pages, the errors, and what a role may read; and the search attributes of
-- UpsertWorkflowSearchAttributes in describe_workflow and durable.workflows.  Expected values come from what the runs were made to be, not from output.
BEGIN;
SELECT * FROM no_plan();
SET LOCAL durable.test_time = '2026-03-01 10:00:00+00';

-- The runs, at 10:00 + n minutes:
--   lw-order-1 order  q-a  completed 10:01, closed 10:30, memo {"owner": "ops"}
--   lw-order-2 order  q-a  failed    10:02, closed 10:40
--   lw-order_3 order  q-b  running   10:03, search attributes {"CustomerId": "c-1", "Tier": 2}
--   lw-ship-1  ship   q-b  terminated 10:04, closed 11:00
--   lw-ship-2  ship   q-a  running   10:05, search attributes {"CustomerId": "c-2"}
--   lwx%       ship   q-a  running   10:06
SELECT t.at('2026-03-01 10:01:00+00');
SELECT durable.start_workflow('order', NULL, 'lw-order-1', 'lw-order-1', memo => '{"owner": "ops", "n": 1}');
SELECT t.at('2026-03-01 10:02:00+00');
SELECT durable.start_workflow('order', NULL, 'lw-order-2', 'lw-order-2');
SELECT t.at('2026-03-01 10:03:00+00');
SELECT durable.start_workflow('order', NULL, 'lw-order_3', 'lw-order_3');
SELECT t.at('2026-03-01 10:04:00+00');
SELECT durable.start_workflow('ship', NULL, 'lw-ship-1', 'q-b');
SELECT t.at('2026-03-01 10:05:00+00');
SELECT durable.start_workflow('ship', NULL, 'lw-ship-2', 'lw-ship-2');
SELECT t.at('2026-03-01 10:06:00+00');
SELECT durable.start_workflow('ship', NULL, 'lwx%', 'q-a');
SELECT t.at('2026-03-01 10:10:00+00');
SELECT t.decide('lw-order_3', '[{"decisionType": "UpsertWorkflowSearchAttributes",
    "searchAttributes": {"CustomerId": "c-1"}}]');
SELECT t.decide('lw-ship-2', '[{"decisionType": "UpsertWorkflowSearchAttributes",
    "searchAttributes": {"CustomerId": "c-2"}}]');
SELECT t.at('2026-03-01 10:30:00+00');
SELECT t.decide('lw-order-1', '[{"decisionType": "CompleteWorkflowExecution", "result": {}}]');
SELECT t.at('2026-03-01 10:40:00+00');
SELECT t.decide('lw-order-2', '[{"decisionType": "FailWorkflowExecution", "reason": "boom"}]');
SELECT t.at('2026-03-01 11:00:00+00');
SELECT durable.terminate_workflow('lw-ship-1', 'test');
-- A second upsert merges into the first (Cadence).
SELECT durable.signal_workflow('lw-order_3', 'go');
SELECT t.decide('lw-order_3', '[{"decisionType": "UpsertWorkflowSearchAttributes",
    "searchAttributes": {"Tier": 2}}]');
-- The queues of the runs that took decisions, as the table above says.
UPDATE durable.runs SET task_queue = CASE workflow_id WHEN 'lw-order_3' THEN 'q-b' ELSE 'q-a' END
 WHERE workflow_id IN ('lw-order-1', 'lw-order-2', 'lw-order_3', 'lw-ship-2');

CREATE FUNCTION pg_temp.ids(q text) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE r text[];
BEGIN
    EXECUTE 'SELECT coalesce(array_agg(workflow_id), ''{}'') FROM (' || q || ') x' INTO r;
    RETURN r;
END $$;
CREATE FUNCTION pg_temp.state(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ' ' || SQLERRM;
END $$;

-- Search attributes.
SELECT is(durable.describe_workflow('lw-order_3')->'searchAttributes', '{"CustomerId": "c-1", "Tier": 2}',
          'describe_workflow shows the upserted search attributes, merged');
SELECT is((SELECT search_attributes FROM durable.workflows WHERE workflow_id = 'lw-ship-2'),
          '{"CustomerId": "c-2"}', 'durable.workflows has a search_attributes column');
SELECT is(durable.describe_workflow('lw-ship-1')->'searchAttributes', 'null',
          'a run without search attributes: searchAttributes null');

-- Each filter: newest start first.
SELECT is(pg_temp.ids('SELECT * FROM durable.list_workflows()'),
          '{lwx%,lw-ship-2,lw-ship-1,lw-order_3,lw-order-2,lw-order-1}', 'no filter: all, newest start first');
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows(status => 'running')$$),
          '{lwx%,lw-ship-2,lw-order_3}', 'status running');
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows(status => 'failed')$$),
          '{lw-order-2}', 'status failed');
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows(status => 'canceled')$$),
          '{}', 'status canceled: none');
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows(workflow_type => 'order')$$),
          '{lw-order_3,lw-order-2,lw-order-1}', 'workflow type');
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows(task_queue => 'q-b')$$),
          '{lw-ship-1,lw-order_3}', 'task queue');
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows(workflow_type => 'ship', status => 'running',
                                                             task_queue => 'q-a')$$),
          '{lwx%,lw-ship-2}', 'type, status and queue together');
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows(workflow_id_prefix => 'lw-order')$$),
          '{lw-order_3,lw-order-2,lw-order-1}', 'workflow id prefix');
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows(workflow_id_prefix => 'lw-order_')$$),
          '{lw-order_3}', 'an underscore in the prefix is a character, not a wildcard');
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows(workflow_id_prefix => 'lwx%')$$),
          '{lwx%}', 'so is a percent sign');
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows(started_since => '2026-03-01 10:02:00+00',
                                                             started_before => '2026-03-01 10:05:00+00')$$),
          '{lw-ship-1,lw-order_3,lw-order-2}', 'start time range: since inclusive, before exclusive');
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows(closed_since => '2026-03-01 10:30:00+00',
                                                             closed_before => '2026-03-01 11:00:00+00')$$),
          '{lw-order-2,lw-order-1}', 'close time range: closed runs only');
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows(closed_since => '2026-03-01 00:00:00+00')$$),
          '{lw-ship-1,lw-order-2,lw-order-1}', 'closed since: no running run');
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows(search_attributes => '{"CustomerId": "c-1"}')$$),
          '{lw-order_3}', 'search attributes: containment');
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows(search_attributes => '{"Tier": 2, "CustomerId": "c-1"}')$$),
          '{lw-order_3}', 'search attributes: several keys, all must match');
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows(search_attributes => '{"CustomerId": "c-9"}')$$),
          '{}', 'search attributes: no match');
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows(search_attributes => '{}')$$),
          '{lw-ship-2,lw-order_3}', 'search attributes {}: the runs that have any');
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows(memo => '{"owner": "ops"}')$$),
          '{lw-order-1}', 'memo: containment');
SELECT is((SELECT row(status, failure->>'reason', search_attributes)::text
             FROM durable.list_workflows(workflow_id_prefix => 'lw-order-2')),
          '(failed,boom,)', 'a row carries the columns of durable.workflows');

-- Counts, with the same filters.
SELECT is(durable.count_workflows(), 6::bigint, 'count: all');
SELECT is(durable.count_workflows(workflow_type => 'ship', status => 'running'), 2::bigint, 'count: type and status');
SELECT is(durable.count_workflows(search_attributes => '{"CustomerId": "c-2"}'), 1::bigint,
          'count: search attributes');
SELECT is(durable.count_workflows(namespace => 'default', closed_since => '2026-03-01 10:35:00+00'), 2::bigint,
          'count: close time');
SELECT is(array_agg(status || '=' || count), '{running=3,completed=1,failed=1,canceled=0,terminated=1,continued_as_new=0,timed_out=0}',
          'counts by status: every status in its row, zero included')
  FROM durable.count_workflows_by_status();
SELECT is(array_agg(status || '=' || count) FILTER (WHERE count > 0), '{running=1,completed=1,failed=1}',
          'counts by status with a filter')
  FROM durable.count_workflows_by_status(workflow_type => 'order');

-- Pagination: 9 runs more, five with the same start time (the run id breaks the
-- tie), read 4 at a time while runs are started between the pages: each run that
-- existed at the first page comes exactly once, in order; the new ones (newer) not.
SELECT t.at('2026-03-01 12:00:00+00');
SELECT durable.start_workflow('page', NULL, 'lw-page-' || g, 'q-p') FROM generate_series(1, 5) g;
SELECT t.at('2026-03-01 12:01:00+00');
SELECT durable.start_workflow('page', NULL, 'lw-page-' || g, 'q-p') FROM generate_series(6, 9) g;
CREATE TEMP TABLE seen (n serial, page int, workflow_id text, cursor text);
CREATE TEMP TABLE expected AS
    SELECT workflow_id, row_number() OVER (ORDER BY start_time DESC, run_id DESC) AS n
      FROM durable.workflows WHERE workflow_type IN ('page', 'order');
DO $$
DECLARE
    c text := NULL;
    p int := 0;
    got int;
BEGIN
    LOOP
        p := p + 1;
        INSERT INTO seen (page, workflow_id, cursor)
            SELECT p, l.workflow_id, l.cursor
              FROM durable.list_workflows(workflow_id_prefix => 'lw-', status => NULL,
                                          page_size => 4, after => c) l
             WHERE l.workflow_type IN ('page', 'order');
        GET DIAGNOSTICS got = ROW_COUNT;
        EXIT WHEN got = 0 OR p > 10;
        SELECT s.cursor INTO c FROM seen s ORDER BY s.n DESC LIMIT 1;
        -- New runs between the pages: newer than anything read so far.
        PERFORM set_config('durable.test_time', (TIMESTAMPTZ '2026-03-01 13:00:00+00'
                           + p * interval '1 minute')::text, true);
        PERFORM durable.start_workflow('page', NULL, 'lw-new-' || p, 'q-p');
    END LOOP;
END $$;
SELECT is((SELECT array_agg(workflow_id ORDER BY n) FROM seen),
          (SELECT array_agg(workflow_id ORDER BY n) FROM expected),
          'pages of 4 across ties and new runs: every run once, in order, no gap');
SELECT is((SELECT count(*) FROM seen WHERE workflow_id LIKE 'lw-new-%'), 0::bigint,
          'runs started between pages are not on the later pages');
SELECT is((SELECT count(DISTINCT page) FROM seen), 4::bigint,
          'the 12 runs (some pages filtered) came in the pages expected');
SELECT is((SELECT count(*) FROM durable.list_workflows(page_size => 1000)), 19::bigint,
          'page_size 1000 is allowed (6 + 9 + 4 runs in default)');
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows(workflow_type => 'page', page_size => 2,
                          after => (SELECT cursor FROM durable.list_workflows(workflow_type => 'page')
                                     WHERE workflow_id = 'lw-new-1'))$$),
          (SELECT array_agg(workflow_id ORDER BY start_time DESC, run_id DESC)
             FROM (SELECT * FROM durable.workflows WHERE workflow_type = 'page'
                      AND start_time < '2026-03-01 13:00:00+00'
                    ORDER BY start_time DESC, run_id DESC LIMIT 2) x),
          'a page after a row, of the size asked');

-- Errors: 22023 naming the argument, 22004 for a null, WF002 for an unknown namespace.
SELECT is(pg_temp.state($$SELECT * FROM durable.list_workflows(status => 'Failed')$$),
          '22023 status "Failed" is not a workflow status', 'an unknown status: 22023');
SELECT is(pg_temp.state($$SELECT durable.count_workflows(status => 'done')$$),
          '22023 status "done" is not a workflow status', 'count: an unknown status: 22023');
SELECT is(pg_temp.state($$SELECT * FROM durable.list_workflows(page_size => 0)$$),
          '22023 page_size must be between 1 and 1000', 'page_size 0: 22023');
SELECT is(pg_temp.state($$SELECT * FROM durable.list_workflows(page_size => 1001)$$),
          '22023 page_size must be between 1 and 1000', 'page_size 1001: 22023');
SELECT is(pg_temp.state($$SELECT * FROM durable.list_workflows(page_size => NULL)$$),
          '22004 page_size must not be null', 'page_size null: 22004');
SELECT is(pg_temp.state($$SELECT * FROM durable.list_workflows(after => 'page 2')$$),
          '22023 after is not a cursor of list_workflows', 'a malformed cursor: 22023');
SELECT is(pg_temp.state(format($$SELECT * FROM durable.list_workflows(after => %L)$$,
              (SELECT overlay(cursor placing CASE WHEN substr(cursor, 9, 1) = '3' THEN '4' ELSE '3' END
                              from 9 for 1)
                 FROM durable.list_workflows(page_size => 1)))),
          '22023 after is not a cursor of list_workflows with these filters', 'an altered cursor: 22023');
SELECT is(pg_temp.state(format($$SELECT * FROM durable.list_workflows(status => 'failed', after => %L)$$,
              (SELECT cursor FROM durable.list_workflows(page_size => 1)))),
          '22023 after is not a cursor of list_workflows with these filters',
          'a cursor of other filters: 22023');
-- A cursor forged from what a client reads (a run's start time and id, and the
-- filters): neither the unkeyed md5 that 0.4.0 checked nor a sha256 without the
-- database's key passes.  The position is real: lw-ship-1's.
CREATE TEMP TABLE forge AS
    SELECT encode(convert_to(start_time::text || '/' || run_id::text, 'UTF8'), 'hex') AS p,
           jsonb_build_array('default', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                             NULL)::text AS f
      FROM durable.workflows WHERE workflow_id = 'lw-ship-1';
SELECT is(pg_temp.state(format($$SELECT * FROM durable.list_workflows(after => %L)$$,
              (SELECT p || md5(p || '/' || f) FROM forge))),
          '22023 after is not a cursor of list_workflows with these filters',
          'a cursor forged with an md5 of the position and the filters: 22023');
SELECT is(pg_temp.state(format($$SELECT * FROM durable.list_workflows(after => %L)$$,
              (SELECT p || encode(sha256(convert_to(p || '/' || f, 'UTF8')), 'hex') FROM forge))),
          '22023 after is not a cursor of list_workflows with these filters',
          'a cursor forged with a sha256 of the position and the filters: 22023');
SELECT is((SELECT left(cursor, -64) FROM durable.list_workflows(page_size => 1000)
            WHERE workflow_id = 'lw-ship-1'), (SELECT p FROM forge),
          'the forged position is the one list_workflows gives that run');
SELECT is(pg_temp.state($$SELECT * FROM durable.list_workflows(search_attributes => '["c-1"]')$$),
          '22023 search_attributes must be a JSON object', 'search attributes not an object: 22023');
SELECT is(pg_temp.state($$SELECT durable.count_workflows(memo => '"ops"')$$),
          '22023 memo must be a JSON object', 'memo not an object: 22023');
SELECT is(pg_temp.state($$SELECT * FROM durable.list_workflows('nowhere')$$),
          'WF002 namespace "nowhere" does not exist', 'an unknown namespace: WF002');
SELECT is(pg_temp.state($$SELECT * FROM durable.count_workflows_by_status('nowhere')$$),
          'WF002 namespace "nowhere" does not exist', 'counts: an unknown namespace: WF002');
SELECT is(pg_temp.state($$SELECT * FROM durable.list_workflows(NULL)$$),
          '22004 namespace must not be null', 'a null namespace: 22004');

-- Privileges: a role reads the namespaces it may read, and is refused the others.
SELECT durable.create_namespace('lw-secret');
SELECT durable.start_workflow('order', NULL, 'lw-hidden', 'q-a', 'lw-secret');
CREATE ROLE lw_reader;
GRANT durable_client TO lw_reader;
CREATE ROLE lw_outsider;
GRANT durable_client TO lw_outsider;
SELECT durable.grant_namespace('lw-secret', 'lw_reader', 'client');
SET LOCAL ROLE lw_reader;
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows('lw-secret')$$), '{lw-hidden}',
          'a role with the client privilege lists the namespace');
SELECT is(durable.count_workflows('lw-secret'), 1::bigint, 'and counts it');
RESET ROLE;
SET LOCAL ROLE lw_outsider;
SELECT is(pg_temp.state($$SELECT * FROM durable.list_workflows('lw-secret')$$),
          '42501 permission denied for namespace "lw-secret": privilege client required',
          'a role without it: 42501');
SELECT is(pg_temp.state($$SELECT durable.count_workflows('lw-secret')$$),
          '42501 permission denied for namespace "lw-secret": privilege client required',
          'count: 42501');
SELECT is(pg_temp.state($$SELECT * FROM durable.count_workflows_by_status('lw-secret')$$),
          '42501 permission denied for namespace "lw-secret": privilege client required',
          'counts by status: 42501');
SELECT is(durable.count_workflows(), 19::bigint, 'it still lists default: 6 + 9 + 4 started between pages');
RESET ROLE;
SET LOCAL ROLE lw_reader;
SELECT is(pg_temp.state($$SELECT durable.check_namespace_read('lw-secret')$$),
          '42501 permission denied for function check_namespace_read',
          'the internal check is not callable');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;

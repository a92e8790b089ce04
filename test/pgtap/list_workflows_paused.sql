-- The pause of each run in list_workflows (docs/api.md "Finding workflows"): its rows
-- show paused_at, paused_by and pause_reason after cursor, as durable.workflows does,
-- and paused => true / false finds the paused runs or the others, page by page, with
-- a cursor bound to that filter.  The earlier arguments and columns keep their places.
BEGIN;
SELECT plan(17);
SET LOCAL durable.test_time = '2026-06-01 09:00:00+00';

CREATE ROLE lp_client; GRANT durable_client TO lp_client;
CREATE FUNCTION pg_temp.ids(q text) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE r text[];
BEGIN
    EXECUTE 'SELECT coalesce(array_agg(workflow_id), ''{}'') FROM (' || q || ') x' INTO r;
    RETURN r;
END $$;

-- lp-1 .. lp-5 started a minute apart; lp-2 and lp-4 paused by lp_client, lp-5 paused
-- and resumed.
SELECT t.at('2026-06-01 09:01:00+00');
SELECT durable.start_workflow('lp', NULL, 'lp-1', 'lpq') IS NOT NULL AS started;
SELECT t.at('2026-06-01 09:02:00+00');
SELECT durable.start_workflow('lp', NULL, 'lp-2', 'lpq') IS NOT NULL AS started;
SELECT t.at('2026-06-01 09:03:00+00');
SELECT durable.start_workflow('lp', NULL, 'lp-3', 'lpq') IS NOT NULL AS started;
SELECT t.at('2026-06-01 09:04:00+00');
SELECT durable.start_workflow('lp', NULL, 'lp-4', 'lpq') IS NOT NULL AS started;
SELECT t.at('2026-06-01 09:05:00+00');
SELECT durable.start_workflow('lp', NULL, 'lp-5', 'lpq') IS NOT NULL AS started;
SELECT t.at('2026-06-01 09:10:00+00');
SET LOCAL ROLE lp_client;
SELECT durable.pause_workflow('lp-2', reason => 'disk full');
SELECT durable.pause_workflow('lp-4');
SELECT durable.pause_workflow('lp-5', reason => 'briefly');
SELECT durable.resume_workflow('lp-5');
RESET ROLE;

SELECT is(ARRAY(SELECT attname::text FROM pg_attribute
                 WHERE attrelid = 'durable.workflow_list_entry'::regclass AND attnum > 0
                 ORDER BY attnum),
    '{namespace,workflow_id,run_id,workflow_type,task_queue,status,attempt,start_time,close_time,duration,input,result,failure,memo,cancel_requested,cron_schedule,parent_workflow_id,parent_run_id,continued_from,continued_to,first_run_id,history_length,reset_from,reset_to,restarted_from,restarted_to,origin,search_attributes,cursor,paused_at,paused_by,pause_reason}',
    'a row: the columns it had, then cursor, then the pause');

-- What the rows show.
SET LOCAL ROLE lp_client;
SELECT is((SELECT format('%s|%s|%s', paused_at, paused_by, pause_reason)
             FROM durable.list_workflows() WHERE workflow_id = 'lp-2'),
    '2026-06-01 09:10:00+00|lp_client|disk full', 'a paused run: when, by whom, why');
SELECT is((SELECT format('%s|%s|%s', paused_at, paused_by, pause_reason IS NULL)
             FROM durable.list_workflows() WHERE workflow_id = 'lp-4'),
    '2026-06-01 09:10:00+00|lp_client|t', 'paused without a reason: pause_reason NULL');
SELECT is((SELECT count(*) FROM durable.list_workflows()
            WHERE workflow_id IN ('lp-1', 'lp-3', 'lp-5')
              AND paused_at IS NULL AND paused_by IS NULL AND pause_reason IS NULL),
    3::bigint, 'runs not paused (lp-5 resumed): the three columns NULL');
SELECT is((SELECT row(paused_at, paused_by, pause_reason)::text FROM durable.list_workflows()
            WHERE workflow_id = 'lp-2'),
          (SELECT row(paused_at, paused_by, pause_reason)::text FROM durable.workflows
            WHERE workflow_id = 'lp-2'),
    'the same as durable.workflows');

-- The filter.
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows(paused => true)$$),
    '{lp-4,lp-2}', 'paused => true: the paused runs, newest start first');
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows(paused => false)$$),
    '{lp-5,lp-3,lp-1}', 'paused => false: the others');
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows(paused => NULL)$$),
    '{lp-5,lp-4,lp-3,lp-2,lp-1}', 'paused => NULL (the default): all');
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows('default', 'running', 'lp', 'lpq',
                          'lp-', NULL, NULL, NULL, NULL, NULL, NULL, 50, NULL)$$),
    '{lp-5,lp-4,lp-3,lp-2,lp-1}', 'a call with the thirteen arguments before paused, by position');
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows(paused => true, workflow_id_prefix => 'lp-4')$$),
    '{lp-4}', 'paused combines with the other filters');
SELECT is(pg_temp.ids($$SELECT * FROM durable.list_workflows(paused => true, status => 'completed')$$),
    '{}', 'and with status');

-- Pages of the paused runs: a cursor of paused => true continues only that list.
SELECT cursor AS c1 FROM durable.list_workflows(paused => true, page_size => 1) \gset
SELECT is(pg_temp.ids(format($$SELECT * FROM durable.list_workflows(paused => true, page_size => 1,
                                   after => %L)$$, :'c1')),
    '{lp-2}', 'the next page of the paused runs');
SELECT throws_ok(format($$SELECT * FROM durable.list_workflows(after => %L)$$, :'c1'),
    '22023', 'after is not a cursor of list_workflows with these filters',
    'its cursor without paused is refused, naming after');
SELECT throws_ok(format($$SELECT * FROM durable.list_workflows(paused => false, after => %L)$$, :'c1'),
    '22023', 'after is not a cursor of list_workflows with these filters',
    'and with paused => false');
SELECT cursor AS c0 FROM durable.list_workflows(page_size => 2) ORDER BY start_time LIMIT 1 \gset
SELECT throws_ok(format($$SELECT * FROM durable.list_workflows(paused => true, after => %L)$$, :'c0'),
    '22023', 'after is not a cursor of list_workflows with these filters',
    'a cursor of the whole list is refused with paused => true');
SELECT is(pg_temp.ids(format($$SELECT * FROM durable.list_workflows(after => %L)$$, :'c0')),
    '{lp-3,lp-2,lp-1}', 'and continues the whole list without paused');
RESET ROLE;

-- The namespace's client privilege, as for every filter.
CREATE ROLE lp_nobody;
SET LOCAL ROLE lp_nobody;
SELECT throws_ok($$SELECT * FROM durable.list_workflows(paused => true)$$, '42501', NULL,
    'a role without durable_client may not list');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;

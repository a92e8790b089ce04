-- One running execution per (namespace, workflow_id), and
-- id_reuse_policy for a closed one.  Closed states that the client API cannot
-- produce yet (completed, failed, canceled) are set on the run row directly;
-- terminated and timed_out are produced through the API.
BEGIN;
SELECT plan(32);

SET LOCAL durable.test_time = '2026-04-01 00:00:00+00';

-- Close the latest run of wid with the given status.
CREATE FUNCTION pg_temp.close_as(wid text, st text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF st = 'terminated' THEN
        PERFORM durable.terminate_workflow(wid, 'test');
    ELSIF st = 'timed_out' THEN
        UPDATE durable.timers SET due_at = durable.now()
         WHERE run_id = durable.resolve_run_id(wid);
        PERFORM durable.tick();
    ELSE
        UPDATE durable.runs SET status = st, close_time = durable.now()
         WHERE run_id = durable.resolve_run_id(wid);
    END IF;
END $$;

-- 'started' or the SQLSTATE of a start with this policy.
CREATE FUNCTION pg_temp.try_start(wid text, policy text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM durable.start_workflow('t', NULL, wid, id_reuse_policy => policy,
                                   run_timeout => '1 hour');
    RETURN 'started';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END $$;

-- The matrix: for each closed status, each policy.
CREATE TEMP TABLE expected_matrix (status text, policy text, outcome text);
INSERT INTO expected_matrix VALUES
    ('completed',  'allow_duplicate_failed_only', 'WF001'),
    ('completed',  'allow_duplicate',             'started'),
    ('completed',  'reject_duplicate',            'WF001'),
    ('completed',  'terminate_if_running',        'started'),
    ('failed',     'allow_duplicate_failed_only', 'started'),
    ('failed',     'allow_duplicate',             'started'),
    ('failed',     'reject_duplicate',            'WF001'),
    ('failed',     'terminate_if_running',        'started'),
    ('timed_out',  'allow_duplicate_failed_only', 'started'),
    ('timed_out',  'allow_duplicate',             'started'),
    ('timed_out',  'reject_duplicate',            'WF001'),
    ('timed_out',  'terminate_if_running',        'started'),
    ('canceled',   'allow_duplicate_failed_only', 'started'),
    ('canceled',   'allow_duplicate',             'started'),
    ('canceled',   'reject_duplicate',            'WF001'),
    ('canceled',   'terminate_if_running',        'started'),
    ('terminated', 'allow_duplicate_failed_only', 'started'),
    ('terminated', 'allow_duplicate',             'started'),
    ('terminated', 'reject_duplicate',            'WF001'),
    ('terminated', 'terminate_if_running',        'started'),
    ('continued_as_new', 'allow_duplicate',       'started');

CREATE FUNCTION pg_temp.run_matrix_case(st text, policy text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    wid text := 'm-' || st || '-' || policy;
BEGIN
    PERFORM durable.start_workflow('t', NULL, wid, run_timeout => '1 hour');
    PERFORM pg_temp.close_as(wid, st);
    RETURN pg_temp.try_start(wid, policy);
END $$;

SELECT is(pg_temp.run_matrix_case(status, policy), outcome,
          format('after a %s run, %s: %s', status, policy, outcome))
  FROM expected_matrix ORDER BY status, policy;

-- A running execution rejects every policy but terminate_if_running.
SELECT durable.start_workflow('t', NULL, 'live') IS NOT NULL AS started;
SELECT is(pg_temp.try_start('live', 'allow_duplicate_failed_only'), 'WF001', 'running: allow_duplicate_failed_only rejected');
SELECT is(pg_temp.try_start('live', 'allow_duplicate'), 'WF001', 'running: allow_duplicate rejected');
SELECT is(pg_temp.try_start('live', 'reject_duplicate'), 'WF001', 'running: reject_duplicate rejected');
SELECT throws_like(
    $$SELECT durable.start_workflow('t', NULL, 'live')$$,
    'workflow execution already started: workflow "live" in namespace "default" is running as run ' ||
        (SELECT durable.resolve_run_id('live'))::text,
    'WF001 names the running run_id');

-- terminate_if_running: the old run is terminated, the new one runs.
SELECT durable.resolve_run_id('live') AS old_run \gset
SELECT is(pg_temp.try_start('live', 'terminate_if_running'), 'started', 'running: terminate_if_running starts');
SELECT is((SELECT status FROM durable.runs WHERE run_id = :'old_run'), 'terminated', 'the old run is terminated');
SELECT is((SELECT attributes->>'reason' FROM durable.history
            WHERE run_id = :'old_run' AND event_type = 'WorkflowExecutionTerminated'),
          'terminated by a new start (id_reuse_policy terminate_if_running)',
          'its WorkflowExecutionTerminated says why');
SELECT isnt(durable.resolve_run_id('live'), :'old_run'::uuid, 'the latest run is the new one');
SELECT is((SELECT count(*)::int FROM durable.runs WHERE workflow_id = 'live' AND status = 'running'), 1,
          'exactly one run is running');

-- The same workflow_id in another namespace is another workflow.
INSERT INTO durable.namespaces (name) VALUES ('other');
SELECT isnt(durable.start_workflow('t', NULL, 'live', namespace => 'other'), NULL,
            'the same workflow_id starts in another namespace');
-- ... and runs of any type share the id.
SELECT is(pg_temp.try_start('live', 'allow_duplicate'), 'WF001', 'type does not matter: still running');

SELECT * FROM finish();
ROLLBACK;

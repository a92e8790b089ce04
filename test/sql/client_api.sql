-- signal, cancel, terminate, resolve_run_id, describe, get_history.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS durable;
RESET client_min_messages;
SET durable.test_time = '2026-02-01 12:00:00+00';
SET timezone = 'UTC';

CREATE FUNCTION pg_temp.hist(wid text, rid uuid DEFAULT NULL)
RETURNS TABLE(event_id bigint, event_type text, attributes jsonb)
LANGUAGE sql AS $$
    SELECT event_id, event_type, attributes - 'firstExecutionRunId'
      FROM durable.get_history(wid, run_id => rid)
$$;

-- Errors as "SQLSTATE: message", with run ids masked.
CREATE FUNCTION pg_temp.err(sql text) RETURNS text LANGUAGE plpgsql AS $f$
BEGIN
    EXECUTE sql;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || regexp_replace(SQLERRM,
        '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<uuid>', 'g');
END
$f$;

SELECT durable.start_workflow('order', '{"id": 7}', 'o-1') AS run1 \gset

-- Signals append WorkflowExecutionSignaled; the decision task already
-- scheduled serves them (no second DecisionTaskScheduled).
SELECT durable.signal_workflow('o-1', 'add_item', '{"sku": "A"}');
SELECT durable.signal_workflow('o-1', 'add_item');
SELECT * FROM pg_temp.hist('o-1');
SELECT count(*) AS ready_decision_tasks FROM durable.ready_tasks WHERE run_id = :'run1';

-- cancel_workflow: flag, WorkflowExecutionCancelRequested; a second request
-- changes nothing.
SELECT durable.cancel_workflow('o-1', 'customer changed their mind');
SELECT durable.cancel_workflow('o-1', 'again');
SELECT event_id, event_type, attributes FROM pg_temp.hist('o-1') WHERE event_id > 4;
SELECT d->'cancelRequested' AS cancel_requested, d->>'status' AS status
  FROM durable.describe_workflow('o-1') d;

-- terminate_workflow closes the run; everything after is WF003.
SELECT durable.terminate_workflow('o-1', 'operator', '{"ticket": 12}');
SELECT event_id, event_type, attributes FROM pg_temp.hist('o-1') WHERE event_id > 5;
SELECT d->>'status' AS status, d->>'closeTime' AS close_time
  FROM durable.describe_workflow('o-1') d;
SELECT pg_temp.err($$SELECT durable.signal_workflow('o-1', 'late')$$);
SELECT pg_temp.err($$SELECT durable.cancel_workflow('o-1')$$);
SELECT pg_temp.err($$SELECT durable.terminate_workflow('o-1')$$);

-- A second run of the same workflow_id (terminated allows it by default);
-- run_id NULL means the latest run, an explicit run_id the one named.
SELECT durable.start_workflow('order', '{"id": 8}', 'o-1') AS run2 \gset
SELECT durable.resolve_run_id('o-1') = :'run2' AS latest_is_run2,
       durable.resolve_run_id('o-1', run_id => :'run1') = :'run1' AS explicit_run1;
SELECT d->>'status' AS run1_status FROM durable.describe_workflow('o-1', run_id => :'run1') d;
SELECT d->>'status' AS run2_status FROM durable.describe_workflow('o-1') d;
SELECT count(*) AS run1_events FROM pg_temp.hist('o-1', :'run1');
SELECT count(*) AS run2_events FROM pg_temp.hist('o-1');
-- Signalling the closed run by its run_id is WF003; the latest works.
SELECT pg_temp.err(format($$SELECT durable.signal_workflow('o-1', 's', run_id => %L)$$, :'run1'));
SELECT durable.signal_workflow('o-1', 's');
SELECT durable.terminate_workflow('o-1', run_id => :'run2');

-- Namespaces isolate workflow ids.
INSERT INTO durable.namespaces (name) VALUES ('team-b');
SELECT durable.start_workflow('order', NULL, 'o-1', namespace => 'team-b') IS NOT NULL AS started_in_team_b;
SELECT d->>'namespace' AS ns, d->>'status' AS status
  FROM durable.describe_workflow('o-1', 'team-b') d;
SELECT count(*) AS team_b_events FROM durable.get_history('o-1', 'team-b');

-- Errors: unknown workflow, unknown run, unknown namespace, bad arguments.
SELECT durable.signal_workflow('missing', 's');
SELECT durable.cancel_workflow('missing');
SELECT durable.terminate_workflow('missing');
SELECT durable.describe_workflow('missing');
SELECT * FROM durable.get_history('missing');
SELECT pg_temp.err($$SELECT durable.resolve_run_id('o-1', run_id => '00000000-0000-0000-0000-000000000000')$$);
SELECT durable.describe_workflow('o-1', 'nowhere');
SELECT durable.signal_workflow('o-1', 's', namespace => 'nowhere');
SELECT durable.signal_workflow(NULL, 's');
SELECT durable.signal_workflow('o-1', NULL);
SELECT durable.signal_workflow('o-1', '');
SELECT durable.signal_workflow('o-1', repeat('s', 1001));
SELECT durable.cancel_workflow('');
SELECT durable.terminate_workflow(NULL);
SELECT durable.describe_workflow(NULL);
SELECT durable.describe_workflow('o-1', NULL);
SET durable.max_payload_size = 1024;
SELECT durable.signal_workflow('o-1', 's', jsonb_build_object('b', repeat('x', 2000)), 'team-b');
SELECT durable.terminate_workflow('o-1', 'r', jsonb_build_object('b', repeat('x', 2000)), 'team-b');
RESET durable.max_payload_size;
SELECT count(*) AS team_b_events_unchanged FROM durable.get_history('o-1', 'team-b');

-- History limit: the signal that takes the history to durable.max_history_events
-- less the 10 events kept for closing a run is written, and the run is
-- terminated (a WARNING, here silenced: it names the run id); a later signal
-- is WF003 (docs/api.md "Limits of a run").
SET durable.max_history_events = 100;
SELECT durable.start_workflow('chatty', NULL, 'chatty-1') IS NOT NULL AS started;
SET client_min_messages = error;
DO $$
BEGIN
    FOR i IN 1..88 LOOP
        PERFORM durable.signal_workflow('chatty-1', 'ping');
    END LOOP;
END
$$;
RESET client_min_messages;
SELECT pg_temp.err($$SELECT durable.signal_workflow('chatty-1', 'one too many')$$);
SELECT count(*) AS events FROM durable.get_history('chatty-1');
SELECT status FROM durable.runs WHERE workflow_id = 'chatty-1';
SELECT event_type, attributes->>'reason' AS reason FROM durable.get_history('chatty-1') WHERE event_id >= 90;
RESET durable.max_history_events;

-- Large payloads come back exactly as they were sent (a datum must be copied before
-- the memory that holds it is released).
--
-- 1. Signals of ~1.5 kB that arrive while a decision task is started are buffered and
--    moved into history when the task completes (FlushBufferedEvents): 2 and then 40 of
--    them, each one's input intact in history and in the next decision task.
-- 2. An activity that completes with a ~1.5 kB result while a decision task is started:
--    its buffered ActivityTaskStarted and ActivityTaskCompleted are written intact.
-- 3. A history of 300 signals of every storage size (short and long inline values,
--    compressed and toasted ones) handed to a decision poll is the history get_history
--    reads, event for event.
-- A jsonb of 127 bytes to ~2 kB is stored inline, uncompressed: reading it yields a
-- pointer into the SPI result or the buffer page, which must be copied before release.
BEGIN;
SELECT plan(14);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

-- The input of signal i, about size bytes, distinct for each i.
CREATE FUNCTION pg_temp.sig(i int, size int) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_build_object('i', i, 'pad',
        (SELECT string_agg(md5(i || ':' || k), '') FROM generate_series(1, greatest(size / 32, 1)) k)) $$;
-- How many of a run's signals (in history order) differ from sig(1..n, size).
CREATE FUNCTION pg_temp.bad_signals(wid text, size int) RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FILTER (WHERE input IS DISTINCT FROM pg_temp.sig(n::int, size))
      FROM (SELECT attributes->'input' AS input, row_number() OVER (ORDER BY event_id) AS n
              FROM durable.get_history(wid) WHERE event_type = 'WorkflowExecutionSignaled') s $$;
-- The signals' inputs of a decision task's history, as a count of those that differ.
CREATE FUNCTION pg_temp.bad_task_signals(task jsonb, size int) RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FILTER (WHERE input IS DISTINCT FROM pg_temp.sig(n::int, size))
      FROM (SELECT e->'attributes'->'input' AS input,
                   row_number() OVER (ORDER BY (e->>'eventId')::int) AS n
              FROM jsonb_array_elements(task->'history') e
             WHERE e->>'eventType' = 'WorkflowExecutionSignaled') s $$;

-- Signals sent while the first decision task of a run is started, then the task completed.
CREATE FUNCTION pg_temp.signals_during_task(wid text, n int, size int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE t jsonb;
BEGIN
    PERFORM durable.start_workflow('ext', NULL, wid, wid);
    t := durable.poll_decision_task(wid);
    FOR i IN 1..n LOOP
        PERFORM durable.signal_workflow(wid, 'big', pg_temp.sig(i, size));
    END LOOP;
    PERFORM durable.complete_decision_task(t->>'taskToken', '[]');
END $$;

-- 1. Two, then forty signals buffered during a decision task.
SELECT pg_temp.signals_during_task('two', 2, 1500);
SELECT is((SELECT count(*) FROM durable.get_history('two') WHERE event_type = 'WorkflowExecutionSignaled'),
    2::bigint, 'two buffered signals are in history');
SELECT is(pg_temp.bad_signals('two', 1500), 0::bigint, 'each one''s input intact');
SELECT is(pg_temp.bad_task_signals(durable.poll_decision_task('two'), 1500), 0::bigint,
    'and intact in the next decision task');

SELECT pg_temp.signals_during_task('forty', 40, 1500);
SELECT is((SELECT count(*) FROM durable.get_history('forty') WHERE event_type = 'WorkflowExecutionSignaled'),
    40::bigint, 'forty buffered signals are in history');
SELECT is(pg_temp.bad_signals('forty', 1500), 0::bigint, 'each one''s input intact');
SELECT is(pg_temp.bad_task_signals(durable.poll_decision_task('forty'), 1500), 0::bigint,
    'and intact in the next decision task');
SELECT is(t.events('forty', from_id => 4),
    ARRAY['DecisionTaskCompleted'] || array_fill('WorkflowExecutionSignaled'::text, ARRAY[40])
        || '{DecisionTaskScheduled,DecisionTaskStarted}',
    'they follow DecisionTaskCompleted, in the order they came');

-- 2. An activity completed while a decision task is started; its first attempt failed
--    with large details, which its ActivityTaskStarted carries.
SELECT durable.start_workflow('ext', NULL, 'act', 'act');
SELECT t.decide('act', jsonb_build_array(t.sched('1',
    '{"retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 3}}')));
SELECT durable.fail_activity(durable.poll_activity_task('act')->>'taskToken', 'r', pg_temp.sig(8, 1500));
SELECT t.at('2026-01-01 00:00:01+00');
SELECT durable.tick();
CREATE TEMP TABLE task AS SELECT durable.poll_activity_task('act') AS t;
SELECT durable.signal_workflow('act', 'go');
CREATE TEMP TABLE decision AS SELECT durable.poll_decision_task('act') AS t;
SELECT durable.complete_activity((SELECT t->>'taskToken' FROM task), pg_temp.sig(7, 1500));
SELECT durable.complete_decision_task((SELECT t->>'taskToken' FROM decision), '[]');
SELECT is(t.attrs('act', 'ActivityTaskCompleted')->'result', pg_temp.sig(7, 1500),
    'the result of an activity completed during a decision task is intact');
SELECT is(t.attrs('act', 'ActivityTaskStarted') - 'identity',
    jsonb_build_object('scheduledEventId', 5, 'attempt', 2, 'lastFailureReason', 'r',
                       'lastFailureDetails', pg_temp.sig(8, 1500)),
    'its ActivityTaskStarted is intact, with the first attempt''s failure');
SELECT is((t.attrs('act', 'ActivityTaskCompleted')->>'startedEventId')::int,
    (SELECT event_id::int FROM durable.get_history('act') WHERE event_type = 'ActivityTaskStarted'),
    'and the completion names it');

-- 3. 300 signals of every size, then a decision poll reads the whole history.
SELECT durable.start_workflow('ext', NULL, 'many', 'many');
SELECT count(durable.signal_workflow('many', 'big',
    pg_temp.sig(i, (ARRAY[40, 650, 1500, 6000, 20000])[1 + i % 5]))) FROM generate_series(1, 300) i;
CREATE TEMP TABLE many AS SELECT durable.poll_decision_task('many') AS t;
SELECT is((SELECT jsonb_array_length(t->'history') FROM many), 303,
    'the decision task has the whole history');
SELECT is((SELECT count(*) FILTER (WHERE e->'attributes'->'input'
                                   IS DISTINCT FROM pg_temp.sig(n::int, (ARRAY[40, 650, 1500, 6000, 20000])[1 + n::int % 5]))
             FROM many, LATERAL (SELECT e, row_number() OVER (ORDER BY (e->>'eventId')::int) AS n
                                   FROM jsonb_array_elements(t->'history') e
                                  WHERE e->>'eventType' = 'WorkflowExecutionSignaled') s),
    0::bigint, 'every signal''s input in it is the one sent');
SELECT ok((SELECT t->'history' FROM many) =
    (SELECT jsonb_agg(jsonb_build_object('eventId', event_id, 'eventTime', event_time,
                                         'eventType', event_type, 'attributes', attributes)
                      ORDER BY event_id)
       FROM durable.get_history('many')),
    'it is the history get_history reads, event for event');
SELECT is((SELECT count(*) FROM durable.get_history('many')
            WHERE event_type NOT IN ('WorkflowExecutionStarted', 'WorkflowExecutionSignaled',
                                     'DecisionTaskScheduled', 'DecisionTaskStarted')),
    0::bigint, 'and every event type is one that was written');

SELECT * FROM finish();
ROLLBACK;

-- Task tokens: a token carries a secret drawn when its task is claimed, and the
-- namespace and workflow id of its task (docs/api.md "Task tokens").  Every answer checks it: a token with another secret, one digit
-- changed, the previous attempt's token, or one forged from the run id and
-- event ids (the format of 0.2.0) gets WF005 and changes nothing.
-- durable.task_token_info() returns what a token names, without its secret;
-- malformed tokens get 22023.
BEGIN;
SELECT plan(65);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

-- A namespace and a workflow id with colons and a two-byte letter: the
-- lengths in the token are in bytes.
SELECT 't' || chr(246) || 'k:ns' AS ns, 'w:' || chr(252) || ':1' AS wid \gset
SELECT durable.create_namespace(:'ns');

-- The parts of a token, and tokens made from parts.
CREATE FUNCTION pg_temp.secret(tok text) RETURNS text LANGUAGE sql AS
    $$ SELECT right(tok, 16) $$;
CREATE FUNCTION pg_temp.with_secret(tok text, s text) RETURNS text LANGUAGE sql AS
    $$ SELECT left(tok, -16) || s $$;
-- The last hex digit of the secret changed.
CREATE FUNCTION pg_temp.flip(tok text) RETURNS text LANGUAGE sql AS
    $$ SELECT left(tok, -1) || CASE right(tok, 1) WHEN '0' THEN '1' ELSE '0' END $$;
CREATE FUNCTION pg_temp.make(kind text, ns text, wid text, run text, s bigint, third bigint, secret text)
RETURNS text LANGUAGE sql AS
    $$ SELECT format('%s1:%s:%s:%s:%s:%s:%s:%s:%s', kind, octet_length(ns), ns,
                     octet_length(wid), wid, run, s, third, secret) $$;
-- The SQLSTATE of a call, or 'ok'.
CREATE FUNCTION pg_temp.try(sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE sql;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END $$;

-- ---------------------------------------------------------------- decisions
SELECT durable.start_workflow('wf', NULL, :'wid', 'tq', :'ns') AS run \gset
SELECT durable.poll_decision_task('tq', namespace => :'ns') AS d \gset
SELECT :'d'::jsonb->>'taskToken' AS dtok \gset

SELECT is(left(:'dtok', -16), pg_temp.make('D', :'ns', :'wid', :'run', 2, 3, ''),
    'a decision token: D1, namespace and workflow id with their byte lengths, run id, scheduled and started ids');
SELECT ok(pg_temp.secret(:'dtok') ~ '^[0-9a-f]{16}$', 'then a secret of 16 hex digits');
SELECT is(durable.task_token_info(:'dtok'),
    jsonb_build_object('kind', 'decision', 'version', 1, 'namespace', :'ns', 'workflowId', :'wid',
                       'runId', :'run', 'scheduledEventId', 2, 'startedEventId', 3),
    'task_token_info: the parts of a decision token, without the secret');
SELECT is((SELECT task_secret FROM durable.runs WHERE run_id = :'run'),
    ('x' || pg_temp.secret(:'dtok'))::bit(64)::bigint, 'the secret is kept in the run''s row');

-- Forgeries of the decision token: each is WF005 and writes nothing.
SELECT t.footprint() AS before \gset
SELECT pg_temp.with_secret(:'dtok', '0123456789abcdef') AS f_secret,
       pg_temp.flip(:'dtok') AS f_digit,
       format('D:%s:2:3', :'run') AS f_old,
       pg_temp.make('D', 'default', :'wid', :'run', 2, 3, pg_temp.secret(:'dtok')) AS f_ns,
       pg_temp.make('D', :'ns', 'other', :'run', 2, 3, pg_temp.secret(:'dtok')) AS f_wid
\gset
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]')$$, :'f_secret'), 'WF005', NULL,
    'complete_decision_task: another secret is WF005');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]')$$, :'f_digit'), 'WF005', NULL,
    'complete_decision_task: one digit of the secret changed is WF005');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]')$$, :'f_old'), 'WF005', NULL,
    'complete_decision_task: a token forged from the run id and event ids (0.2.0 format) is WF005');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]')$$, :'f_ns'), 'WF005', NULL,
    'complete_decision_task: another namespace is WF005');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]')$$, :'f_wid'), 'WF005', NULL,
    'complete_decision_task: another workflow id is WF005');
SELECT throws_ok(format($$SELECT durable.fail_decision_task(%L, 'Panic')$$, :'f_secret'), 'WF005', NULL,
    'fail_decision_task: another secret is WF005');
SELECT throws_ok(format($$SELECT durable.fail_decision_task(%L, 'Panic')$$, :'f_digit'), 'WF005', NULL,
    'fail_decision_task: one digit changed is WF005');
SELECT throws_ok(format($$SELECT durable.fail_decision_task(%L, 'Panic')$$, :'f_old'), 'WF005', NULL,
    'fail_decision_task: a token forged in the 0.2.0 format is WF005');
SELECT is(t.footprint(), :'before', 'the forged decision tokens wrote nothing');
SELECT is((SELECT array_agg(event_type ORDER BY event_id) FROM durable.history WHERE run_id = :'run'),
    '{WorkflowExecutionStarted,DecisionTaskScheduled,DecisionTaskStarted}',
    'the history is as the poll left it');

-- The real token works, once.
SELECT lives_ok(format($$SELECT durable.complete_decision_task(%L, %L)$$, :'dtok',
    jsonb_build_array(t.sched('a1', '{"taskQueue": "aq", "startToCloseTimeoutSeconds": 30,
        "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 5}}'))),
    'complete_decision_task with the real token');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]')$$, :'dtok'), 'WF005', NULL,
    'the same token again is WF005');

-- ---------------------------------------------------------------- activities
SELECT durable.poll_activity_task('aq', namespace => :'ns') AS a \gset
SELECT :'a'::jsonb->>'taskToken' AS atok \gset
SELECT is(left(:'atok', -16), pg_temp.make('A', :'ns', :'wid', :'run', 5, 1, ''),
    'an activity token: A1, namespace, workflow id, run id, scheduled id and attempt');
SELECT ok(pg_temp.secret(:'atok') ~ '^[0-9a-f]{16}$', 'then a secret of 16 hex digits');
SELECT is(durable.task_token_info(:'atok'),
    jsonb_build_object('kind', 'activity', 'version', 1, 'namespace', :'ns', 'workflowId', :'wid',
                       'runId', :'run', 'scheduledEventId', 5, 'attempt', 1),
    'task_token_info: the parts of an activity token');
SELECT isnt(pg_temp.secret(:'atok'), pg_temp.secret(:'dtok'), 'each task has its own secret');

SELECT t.footprint() AS before \gset
SELECT pg_temp.with_secret(:'atok', pg_temp.secret(:'dtok')) AS f_secret,
       pg_temp.flip(:'atok') AS f_digit,
       format('A:%s:5:1', :'run') AS f_old,
       pg_temp.make('A', :'ns', 'w:x:1', :'run', 5, 1, pg_temp.secret(:'atok')) AS f_wid
\gset
SELECT throws_ok(format($$SELECT durable.complete_activity(%L)$$, :'f_secret'), 'WF005', NULL,
    'complete_activity: another task''s secret is WF005');
SELECT throws_ok(format($$SELECT durable.complete_activity(%L)$$, :'f_digit'), 'WF005', NULL,
    'complete_activity: one digit changed is WF005');
SELECT throws_ok(format($$SELECT durable.complete_activity(%L)$$, :'f_old'), 'WF005', NULL,
    'complete_activity: a token forged in the 0.2.0 format is WF005');
SELECT throws_ok(format($$SELECT durable.complete_activity(%L)$$, :'f_wid'), 'WF005', NULL,
    'complete_activity: another workflow id is WF005');
SELECT throws_ok(format($$SELECT durable.fail_activity(%L, 'boom')$$, :'f_digit'), 'WF005', NULL,
    'fail_activity: one digit changed is WF005');
SELECT throws_ok(format($$SELECT durable.fail_activity(%L, 'boom')$$, :'f_old'), 'WF005', NULL,
    'fail_activity: a token forged in the 0.2.0 format is WF005');
SELECT throws_ok(format($$SELECT durable.heartbeat_activity(%L, '{"forged": 1}')$$, :'f_digit'), 'WF005', NULL,
    'heartbeat_activity: one digit changed is WF005');
SELECT throws_ok(format($$SELECT durable.heartbeat_activity(%L, '{"forged": 1}')$$, :'f_old'), 'WF005', NULL,
    'heartbeat_activity: a token forged in the 0.2.0 format is WF005');
SELECT throws_ok(format($$SELECT durable.report_activity_canceled(%L)$$, :'f_secret'), 'WF005', NULL,
    'report_activity_canceled: another secret is WF005');
SELECT throws_ok(format($$SELECT durable.report_activity_canceled(%L)$$, :'f_old'), 'WF005', NULL,
    'report_activity_canceled: a token forged in the 0.2.0 format is WF005');
SELECT is(t.footprint(), :'before', 'the forged activity tokens wrote nothing');
SELECT is((SELECT format('%s/%s/%s', state, attempt, heartbeat_details) FROM durable.activities WHERE run_id = :'run'),
    'STARTED/1/', 'the attempt is as the poll left it: no forged heartbeat details');

SELECT is(durable.heartbeat_activity(:'atok', '{"done": 1}'), false, 'heartbeat_activity with the real token');

-- The attempt times out and is claimed again: the first attempt's token, and
-- one with the new attempt's ids but the old secret, are WF005.
SELECT t.at('2026-01-01 00:00:30+00');
SELECT durable.tick() AS fired \gset
SELECT t.at('2026-01-01 00:00:31+00');
SELECT durable.tick() AS fired \gset
SELECT durable.poll_activity_task('aq', namespace => :'ns')->>'taskToken' AS atok2 \gset
SELECT is(durable.task_token_info(:'atok2')->'attempt', '2', 'attempt 2 is claimed');
SELECT isnt(pg_temp.secret(:'atok2'), pg_temp.secret(:'atok'), 'with a new secret');
SELECT t.footprint() AS before \gset
SELECT throws_ok(format($$SELECT durable.complete_activity(%L)$$, :'atok'), 'WF005', NULL,
    'the previous attempt''s token is WF005');
SELECT throws_ok(format($$SELECT durable.heartbeat_activity(%L)$$, :'atok'), 'WF005', NULL,
    'and for a heartbeat');
SELECT throws_ok(format($$SELECT durable.complete_activity(%L)$$, pg_temp.with_secret(:'atok2', pg_temp.secret(:'atok'))),
    'WF005', NULL, 'the new attempt''s ids with the previous attempt''s secret are WF005');
SELECT throws_ok(format($$SELECT durable.fail_activity(%L, 'boom')$$, pg_temp.with_secret(:'atok2', pg_temp.secret(:'atok'))),
    'WF005', NULL, 'fail_activity too');
SELECT is(t.footprint(), :'before', 'they wrote nothing');
SELECT is(durable.heartbeat_activity(:'atok2'), false, 'attempt 2''s token heartbeats');
SELECT lives_ok(format($$SELECT durable.fail_activity(%L, 'boom', NULL, '0 seconds')$$, :'atok2'),
    'fail_activity with the real token');
SELECT durable.poll_activity_task('aq', namespace => :'ns')->>'taskToken' AS atok3 \gset
SELECT lives_ok(format($$SELECT durable.complete_activity(%L, '{"ok": true}')$$, :'atok3'),
    'complete_activity with the real token');
SELECT is((SELECT attributes->'result' FROM durable.history WHERE run_id = :'run' AND event_type = 'ActivityTaskCompleted'),
    '{"ok": true}', 'the activity completed');

-- A decision task that timed out and was claimed again: the first token is
-- WF005, the second works; fail_decision_task with a real token works.
SELECT durable.poll_decision_task('tq', namespace => :'ns')->>'taskToken' AS dtok1 \gset
SELECT t.at('2026-01-01 00:01:00+00');
SELECT durable.tick() AS fired \gset
SELECT durable.poll_decision_task('tq', namespace => :'ns')->>'taskToken' AS dtok2 \gset
SELECT throws_ok(format($$SELECT durable.fail_decision_task(%L, 'Panic')$$, :'dtok1'), 'WF005', NULL,
    'a timed-out decision task''s token is WF005');
SELECT throws_ok(format($$SELECT durable.fail_decision_task(%L, 'Panic')$$, pg_temp.with_secret(:'dtok2', pg_temp.secret(:'dtok1'))),
    'WF005', NULL, 'the new task''s ids with the old secret are WF005');
SELECT lives_ok(format($$SELECT durable.fail_decision_task(%L, 'Panic')$$, :'dtok2'),
    'fail_decision_task with the real token');

-- report_activity_canceled and a batch poll: each token works.
SELECT durable.poll_decision_task('tq', namespace => :'ns')->>'taskToken' AS dtok3 \gset
SELECT durable.complete_decision_task(:'dtok3', jsonb_build_array(t.sched('b1', '{"taskQueue": "bq"}'),
    t.sched('b2', '{"taskQueue": "bq"}'), t.sched('b3', '{"taskQueue": "bq"}')));
CREATE TEMP TABLE batch AS
    SELECT task->>'taskToken' AS tok FROM durable.poll_activity_tasks('bq', namespace => :'ns', max_tasks => 3) task;
SELECT is((SELECT count(DISTINCT pg_temp.secret(tok)) FROM batch WHERE tok LIKE 'A1:%'), 3::bigint,
    'a batch poll gives three tokens, each with its own secret');
SELECT is((SELECT array_agg(pg_temp.try(format('SELECT durable.complete_activity(%L)', pg_temp.flip(tok)))) FROM batch),
    '{WF005,WF005,WF005}', 'each with a digit changed is WF005');
SELECT is((SELECT array_agg(pg_temp.try(format('SELECT durable.complete_activity(%L)', tok))) FROM batch),
    '{ok,ok,ok}', 'each real one completes');
SELECT durable.complete_decision_task(durable.poll_decision_task('tq', namespace => :'ns')->>'taskToken',
    jsonb_build_array(t.sched('c1', '{"taskQueue": "bq"}')));
SELECT durable.cancel_workflow(:'wid', namespace => :'ns');
SELECT durable.poll_activity_task('bq', namespace => :'ns')->>'taskToken' AS ctok \gset
SELECT is(durable.heartbeat_activity(:'ctok'), true, 'the heartbeat sees the cancel request');
SELECT throws_ok(format($$SELECT durable.report_activity_canceled(%L)$$, pg_temp.flip(:'ctok')), 'WF005', NULL,
    'report_activity_canceled: one digit changed is WF005');
SELECT lives_ok(format($$SELECT durable.report_activity_canceled(%L)$$, :'ctok'),
    'report_activity_canceled with the real token');

-- A task claimed before ALTER EXTENSION durable UPDATE has no secret: its
-- 0.2.0 token still answers it (and no token with a secret does).
SELECT durable.start_workflow('wf', NULL, 'old', 'oq') AS orun \gset
SELECT durable.poll_decision_task('oq') AS od \gset
UPDATE durable.runs SET task_secret = NULL WHERE run_id = :'orun';
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]')$$, :'od'::jsonb->>'taskToken'), 'WF005', NULL,
    'a token with a secret does not answer a task that has none');
SELECT lives_ok(format($$SELECT durable.complete_decision_task(%L, %L)$$, format('D:%s:2:3', :'orun'),
    jsonb_build_array(t.sched('o1', '{"taskQueue": "oq"}'))), 'the 0.2.0 token answers a decision task without a secret');
SELECT durable.poll_activity_task('oq') AS oa \gset
UPDATE durable.activities SET task_secret = NULL WHERE run_id = :'orun';
SELECT is(durable.heartbeat_activity(format('A:%s:5:1', :'orun')), false,
    'and heartbeats an activity attempt without a secret');
SELECT lives_ok(format($$SELECT durable.complete_activity(%L)$$, format('A:%s:5:1', :'orun')),
    'and completes it');
SELECT is(durable.task_token_info(format('A:%s:5:1', :'orun')),
    jsonb_build_object('kind', 'activity', 'version', 0, 'namespace', NULL, 'workflowId', NULL,
                       'runId', :'orun', 'scheduledEventId', 5, 'attempt', 1),
    'task_token_info of a 0.2.0 token: no namespace nor workflow id');

-- ---------------------------------------------------------------- malformed
SELECT t.footprint() AS before \gset
SELECT is(array_agg(pg_temp.try(format('SELECT durable.complete_decision_task(%L, ''[]'')', tok)) ORDER BY n),
    array_fill('22023'::text, ARRAY[count(*)::int]), 'malformed decision tokens are 22023')
  FROM (SELECT row_number() OVER () AS n, tok FROM unnest(ARRAY[
    'D1:',
    'D1:7:default',
    'D1:0::1:x:' || :'run' || ':2:3:0123456789abcdef',
    'D1:07:default:1:x:' || :'run' || ':2:3:0123456789abcdef',
    'D1:1001:' || repeat('x', 1001) || ':1:x:' || :'run' || ':2:3:0123456789abcdef',
    'D1:8:default:1:x:' || :'run' || ':2:3:0123456789abcdef',
    'D1:6:default:1:x:' || :'run' || ':2:3:0123456789abcdef',
    'D1:7:default:99:x:' || :'run' || ':2:3:0123456789abcdef',
    pg_temp.make('D', :'ns', :'wid', :'run', 2, 3, '0123456789ABCDEF'),
    pg_temp.make('D', :'ns', :'wid', :'run', 2, 3, '0123456789abcde'),
    pg_temp.make('D', :'ns', :'wid', :'run', 2, 3, '0123456789abcdef0'),
    pg_temp.make('D', :'ns', :'wid', :'run', 2, 3, '0123456789abcdeg'),
    pg_temp.make('D', :'ns', :'wid', :'run', 2, 3, '0123456789abcdef') || ':',
    replace(pg_temp.make('D', :'ns', :'wid', :'run', 2, 3, '0123456789abcdef'), ':2:3:', ':02:3:'),
    replace(pg_temp.make('D', :'ns', :'wid', :'run', 2, 3, '0123456789abcdef'), ':2:3:', ':0:3:'),
    replace(pg_temp.make('D', :'ns', :'wid', :'run', 2, 3, '0123456789abcdef'), ':2:3:', ':-2:3:'),
    replace(pg_temp.make('D', :'ns', :'wid', :'run', 2, 3, '0123456789abcdef'), ':2:3:', ':9223372036854775808:3:'),
    replace(pg_temp.make('D', :'ns', :'wid', :'run', 2, 3, '0123456789abcdef'), ':2:3:', ': 2:3:'),
    pg_temp.make('D', :'ns', :'wid', 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz', 2, 3, '0123456789abcdef'),
    -- a length that ends inside the two-byte letter
    format('D1:2:%s:1:x:%s:2:3:0123456789abcdef', :'ns', :'run'),
    pg_temp.make('A', :'ns', :'wid', :'run', 2, 3, '0123456789abcdef'),
    'd1:7:default:1:x:' || :'run' || ':2:3:0123456789abcdef',
    'D2:7:default:1:x:' || :'run' || ':2:3:0123456789abcdef']) AS tok) s;
SELECT throws_ok(format($$SELECT durable.complete_activity(%L)$$,
    pg_temp.make('A', :'ns', :'wid', :'run', 5, 2147483648, '0123456789abcdef')), '22023', NULL,
    'an attempt beyond integer is 22023');
SELECT throws_ok(format($$SELECT durable.heartbeat_activity(%L)$$,
    pg_temp.make('A', :'ns', :'wid', :'run', 5, 1, '')), '22023', NULL, 'an activity token without its secret is 22023');
SELECT is(t.footprint(), :'before', 'malformed tokens wrote nothing');
SELECT throws_ok($$SELECT durable.task_token_info('garbage')$$, '22023', 'task_token "garbage" is not a task token',
    'task_token_info of garbage is 22023');
SELECT throws_ok($$SELECT durable.task_token_info('D1:7:default')$$, '22023', NULL,
    'task_token_info of a truncated token is 22023');
SELECT is(durable.task_token_info(NULL), NULL, 'task_token_info(NULL) is NULL');

SELECT * FROM finish();
ROLLBACK;

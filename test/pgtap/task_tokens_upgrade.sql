-- Task tokens (docs/api.md "Task tokens") on a database created at 0.2.0: until ALTER
-- EXTENSION durable UPDATE the 0.3.0 library issues 0.2.0's tokens (it has
-- nowhere to keep a secret) and they work as before.  Tasks claimed before
-- the update keep their tokens, which still answer them after it; tasks
-- claimed after it get tokens with a secret, and a token forged from their
-- ids in the old format is WF005.
BEGIN;
SELECT plan(14);
SET LOCAL durable.test_time = '2026-01-01 00:00:00+00';

DROP EXTENSION durable;
CREATE EXTENSION durable VERSION '0.2.0';

-- At 0.2.0: 0.2.0's token format, and it works.
SELECT durable.start_workflow('wf', NULL, 'w1', 'q1') AS run1 \gset
SELECT durable.poll_decision_task('q1')->>'taskToken' AS d1 \gset
SELECT is(:'d1', format('D:%s:2:3', :'run1'), 'at 0.2.0 a decision token has the format of 0.2.0');
SELECT lives_ok(format($$SELECT durable.complete_decision_task(%L, %L)$$, :'d1',
    jsonb_build_array(t.sched('a1', '{"taskQueue": "q1"}'), t.sched('a2', '{"taskQueue": "q1"}'))),
    'and completes its task');
SELECT durable.poll_activity_task('q1')->>'taskToken' AS a1 \gset
SELECT durable.poll_activity_task('q1')->>'taskToken' AS a2 \gset
SELECT is(:'a1', format('A:%s:5:1', :'run1'), 'an activity token has the format of 0.2.0');
SELECT is(durable.heartbeat_activity(:'a1'), false, 'and heartbeats');
SELECT lives_ok(format($$SELECT durable.complete_activity(%L)$$, :'a1'), 'and completes');
-- A decision task claimed before the update, still open.
SELECT durable.poll_decision_task('q1')->>'taskToken' AS d2 \gset

ALTER EXTENSION durable UPDATE;

-- Tasks claimed before the update: their tokens still answer them.
SELECT is(durable.heartbeat_activity(:'a2'), false, 'after the update, a token of 0.2.0 heartbeats its attempt');
SELECT lives_ok(format($$SELECT durable.complete_activity(%L)$$, :'a2'), 'and completes it');
SELECT lives_ok(format($$SELECT durable.complete_decision_task(%L, %L)$$, :'d2',
    jsonb_build_array(t.sched('a3', '{"taskQueue": "q1"}'))),
    'a decision task claimed before the update is completed with its 0.2.0 token');

-- Tasks claimed after it: tokens with a secret; the old format is refused.
SELECT durable.poll_activity_task('q1')->>'taskToken' AS a3 \gset
SELECT ok(:'a3' ~ '^A1:7:default:2:w1:.*:[0-9a-f]{16}$', 'after the update an activity token has a secret');
SELECT t.footprint() AS before \gset
SELECT throws_ok(format($$SELECT durable.complete_activity(%L)$$,
    format('A:%s:%s:1', :'run1', durable.task_token_info(:'a3')->>'scheduledEventId')), 'WF005', NULL,
    'a token of its ids in the 0.2.0 format is WF005');
SELECT is(t.footprint(), :'before', 'and changes nothing');
SELECT lives_ok(format($$SELECT durable.complete_activity(%L)$$, :'a3'), 'the real token completes it');
SELECT durable.poll_decision_task('q1')->>'taskToken' AS d3 \gset
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]')$$,
    format('D:%s:%s:%s', :'run1', durable.task_token_info(:'d3')->>'scheduledEventId',
           durable.task_token_info(:'d3')->>'startedEventId')), 'WF005', NULL,
    'a decision token of 0.2.0''s format for a task claimed after the update is WF005');
SELECT lives_ok(format($$SELECT durable.complete_decision_task(%L, '[]')$$, :'d3'), 'the real one completes it');

SELECT * FROM finish();
ROLLBACK;

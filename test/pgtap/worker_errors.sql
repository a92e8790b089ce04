-- The worker functions' bad arguments: each raises its SQLSTATE with a message
-- naming the argument, before anything is written.
BEGIN;
SELECT plan(29);
SELECT t.at('2026-08-01 00:00:00+00');

SELECT durable.start_workflow('t', NULL, 'we', task_queue => 'we') IS NOT NULL;
SELECT durable.poll_decision_task('we') AS d \gset
SELECT t.footprint() AS before \gset

-- Polls
SELECT throws_ok($$SELECT durable.poll_decision_task(NULL)$$, '22004', 'task_queue must not be null');
SELECT throws_ok($$SELECT durable.poll_decision_task('')$$, '22023', 'task_queue must not be empty');
SELECT throws_ok($$SELECT durable.poll_decision_task('we', '')$$, '22023', 'identity must not be empty');
SELECT throws_ok($$SELECT durable.poll_decision_task('we', namespace => 'nowhere')$$, 'WF002', 'namespace "nowhere" does not exist');
SELECT throws_ok($$SELECT durable.poll_decision_task('we', wait => '-1 second')$$, '22023', 'wait must not be negative');
SELECT throws_ok($$SELECT durable.poll_activity_task(NULL)$$, '22004', 'task_queue must not be null');
SELECT throws_ok($$SELECT durable.poll_activity_task('we', namespace => NULL)$$, '22004', 'namespace must not be null');
SELECT throws_ok($$SELECT * FROM durable.poll_activity_tasks('we', max_tasks => NULL)$$, '22004', 'max_tasks must not be null');

-- Decision task answers
SELECT throws_ok($$SELECT durable.complete_decision_task(NULL, '[]')$$, '22004', 'task_token must not be null');
SELECT throws_ok($$SELECT durable.complete_decision_task('garbage', '[]')$$, '22023', 'task_token "garbage" is not a decision task token');
-- A token of the right shape whose run id is not a UUID is as malformed (not 22P02).
SELECT throws_ok($$SELECT durable.complete_decision_task('D:zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz:1:1', '[]')$$, '22023',
    'task_token "D:zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz:1:1" is not a decision task token');
SELECT throws_ok($$SELECT durable.complete_activity('A:0000000-00000-0000-0000-0000000000000:1:1')$$, '22023',
    'task_token "A:0000000-00000-0000-0000-0000000000000:1:1" is not an activity task token');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, NULL)$$, :'d'::jsonb->>'taskToken'),
                 '22004', 'decisions must not be null');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '{}')$$, :'d'::jsonb->>'taskToken'),
                 '22023', 'decisions must be a JSON array');
SELECT throws_ok(format($$SELECT durable.complete_decision_task(%L, '[]', '')$$, :'d'::jsonb->>'taskToken'),
                 '22023', 'identity must not be empty');
SELECT throws_ok(format($$SELECT durable.fail_decision_task(%L, NULL)$$, :'d'::jsonb->>'taskToken'),
                 '22004', 'cause must not be null');
SELECT throws_ok(format($$SELECT durable.fail_decision_task(%L, '')$$, :'d'::jsonb->>'taskToken'),
                 '22023', 'cause must not be empty');
SELECT throws_ok(format($$SELECT durable.fail_decision_task(%L, 'Panic', NULL, '')$$, :'d'::jsonb->>'taskToken'),
                 '22023', 'identity must not be empty');
SELECT is(t.footprint(), :'before', 'none of the failed decision calls wrote anything');

-- An activity attempt, and the activity calls' bad arguments
SELECT durable.complete_decision_task(:'d'::jsonb->>'taskToken',
    jsonb_build_array(t.sched('a1', '{"taskQueue": "we"}'))) IS NULL;
SELECT durable.poll_activity_task('we') AS a \gset
SELECT t.footprint() AS started \gset
SELECT throws_ok(format($$SELECT durable.complete_activity(%L)$$, :'d'::jsonb->>'taskToken'),
                 '22023', NULL, 'a decision token is not an activity token');
SELECT throws_ok($$SELECT durable.complete_activity(NULL)$$, '22004', 'task_token must not be null');
SELECT throws_ok(format($$SELECT durable.fail_activity(%L, '')$$, :'a'::jsonb->>'taskToken'),
                 '22023', 'reason must not be empty');
SELECT throws_ok(format($$SELECT durable.fail_activity(%L, 'boom', NULL, '-1 second')$$, :'a'::jsonb->>'taskToken'),
                 '22023', 'next_retry_delay must not be negative');
SELECT throws_ok($$SELECT durable.heartbeat_activity('A:garbage')$$, '22023', NULL, 'a malformed token: 22023');
SELECT throws_ok($$SELECT durable.report_activity_canceled(NULL)$$, '22004', 'task_token must not be null');
SET LOCAL durable.max_payload_size = 1024;
SELECT throws_ok(format($$SELECT durable.complete_activity(%L, jsonb_build_object('b', repeat('x', 2000)))$$,
                        :'a'::jsonb->>'taskToken'), 'WF006', 'result is too large');
SELECT throws_ok(format($$SELECT durable.heartbeat_activity(%L, jsonb_build_object('b', repeat('x', 2000)))$$,
                        :'a'::jsonb->>'taskToken'), 'WF006', 'details is too large');
RESET durable.max_payload_size;
SELECT is(t.footprint(), :'started', 'none of the failed activity calls wrote anything');
-- The attempt is still the current one: it completes.
SELECT lives_ok(format($$SELECT durable.complete_activity(%L, '"ok"')$$, :'a'::jsonb->>'taskToken'),
                'the attempt completes after the failed calls');

SELECT * FROM finish();
ROLLBACK;

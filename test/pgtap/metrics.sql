-- durable.metrics and durable.metrics_text() (docs/metrics.md "Metrics"): the counters
-- move by the right amounts for a scripted workflow, count only what
-- commits, show a role only its namespaces, and the text is Prometheus's
-- exposition format.  No BEGIN: counters count at commit, so every statement
-- commits (the database is this file's own).
SELECT plan(39);
SET durable.test_time = '2026-03-01 00:00:00+00';

-- The value of a counter of queue q (NULL: the database's row), 0 if absent.
CREATE FUNCTION t.m(metric text, q text, lbl text DEFAULT NULL, le float8 DEFAULT NULL)
RETURNS float8 LANGUAGE sql AS $$
    SELECT COALESCE(sum(value), 0) FROM durable.metrics m
     WHERE m.metric = $1 AND m.task_queue IS NOT DISTINCT FROM $2
       AND (m.namespace = 'default' OR $2 IS NULL)
       AND m.label IS NOT DISTINCT FROM $3 AND m.le IS NOT DISTINCT FROM $4 $$;
CREATE FUNCTION t.clock(ts text) RETURNS void LANGUAGE sql AS
    $$ SELECT set_config('durable.test_time', ts, false) $$;

-- A workflow whose activity fails, is retried after 1 s, fails for good, and
-- whose workflow then fails.
SELECT durable.start_workflow('order', NULL, 'm1', 'mq') IS NOT NULL AS started;
SELECT is(t.m('durable_workflows_started_total', 'mq'), 1::float8, 'a start counts once');
SELECT t.clock('2026-03-01 00:00:02+00');
SELECT t.decide('m1', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 60,
    "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 2}}')), 'mq') IS NOT NULL;
SELECT is(t.m('durable_decision_tasks_total', 'mq', 'started'), 1::float8, 'decision task started');
SELECT is(t.m('durable_decision_tasks_total', 'mq', 'completed'), 1::float8, 'decision task completed');
SELECT is(t.m('durable_decision_schedule_to_start_seconds_count', 'mq'), 1::float8,
    'schedule-to-start of the decision task observed');
SELECT is(t.m('durable_decision_schedule_to_start_seconds_bucket', 'mq', NULL, 1), 0::float8,
    'it waited 2 s: not in the 1 s bucket');
SELECT is(t.m('durable_decision_schedule_to_start_seconds_bucket', 'mq', NULL, 2.5), 1::float8,
    'it waited 2 s: in the 2.5 s bucket');
SELECT is(t.m('durable_decision_schedule_to_start_seconds_sum', 'mq'), 2::float8, 'the sum is 2 s');
SELECT durable.fail_activity(durable.poll_activity_task('mq')->>'taskToken', 'boom');
SELECT is(t.m('durable_activity_tasks_total', 'mq', 'started'), 1::float8, 'activity attempt started');
SELECT is(t.m('durable_activity_tasks_total', 'mq', 'failed'), 1::float8, 'activity attempt failed');
SELECT is(t.m('durable_retries_scheduled_total', 'mq', 'activity'), 1::float8, 'a retry scheduled');
SELECT t.clock('2026-03-01 00:00:05+00');
SELECT is(durable.tick(), 1, 'the retry timer fires');
SELECT is(t.m('durable_timers_fired_total', NULL), 1::float8, 'timers fired, in the database''s row');
SELECT is(t.m('durable_timer_lateness_seconds_bucket', NULL, NULL, 1), 0::float8, 'it fired 2 s late: not within 1 s');
SELECT is(t.m('durable_timer_lateness_seconds_bucket', NULL, NULL, 2.5), 1::float8, 'it fired 2 s late: within 2.5 s');
SELECT durable.fail_activity(durable.poll_activity_task('mq')->>'taskToken', 'boom');
SELECT is(t.m('durable_activity_tasks_total', 'mq', 'started'), 2::float8, 'second attempt started');
SELECT is(t.m('durable_activity_tasks_total', 'mq', 'failed'), 2::float8, 'second attempt failed');
SELECT is(t.m('durable_retries_scheduled_total', 'mq', 'activity'), 1::float8, 'no retry after the last attempt');
SELECT is(t.m('durable_activity_schedule_to_start_seconds_count', 'mq'), 2::float8, 'two activity schedule-to-starts');
SELECT t.decide('m1', '[{"decisionType": "FailWorkflowExecution", "reason": "gave up"}]', 'mq') IS NOT NULL;
SELECT is(t.m('durable_workflows_closed_total', 'mq', 'failed'), 1::float8, 'workflow closed as failed');
SELECT is(t.m('durable_decision_tasks_total', 'mq', 'completed'), 2::float8, 'two decision tasks completed');

-- Timeouts: a decision task and an activity attempt time out.
SELECT durable.start_workflow('order', NULL, 'm2', 'mq', decision_timeout => '10 seconds') IS NOT NULL AS started;
SELECT durable.poll_decision_task('mq') IS NOT NULL AS polled;
SELECT t.clock('2026-03-01 00:01:00+00');
SELECT durable.tick();
SELECT is(t.m('durable_decision_tasks_total', 'mq', 'timed_out'), 1::float8, 'decision task timed out');
SELECT t.decide('m2', jsonb_build_array(t.sched('a1', '{"startToCloseTimeoutSeconds": 5,
    "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 1}}')), 'mq') IS NOT NULL;
SELECT durable.poll_activity_task('mq') IS NOT NULL AS polled;
SELECT t.clock('2026-03-01 00:02:00+00');
SELECT durable.tick();
SELECT is(t.m('durable_activity_tasks_total', 'mq', 'timed_out'), 1::float8, 'activity attempt timed out');
SELECT t.decide('m2', '[{"decisionType": "CompleteWorkflowExecution"}]', 'mq') IS NOT NULL;
SELECT is(t.m('durable_workflows_closed_total', 'mq', 'completed'), 1::float8, 'workflow closed as completed');

-- A workflow retried by its policy: the failed run continues as a new one.
SELECT durable.start_workflow('order', NULL, 'm3', 'mq',
    retry_policy => '{"initialIntervalInSeconds": 1, "maximumAttempts": 2}') IS NOT NULL AS started;
SELECT t.decide('m3', '[{"decisionType": "FailWorkflowExecution", "reason": "once"}]', 'mq') IS NOT NULL;
SELECT is(t.m('durable_retries_scheduled_total', 'mq', 'workflow'), 1::float8, 'a workflow retry scheduled');
SELECT is(t.m('durable_workflows_started_total', 'mq'), 4::float8, 'the retry is a new run');

-- What rolls back counts nothing, a rolled back savepoint included.
BEGIN;
SELECT durable.start_workflow('order', NULL, 'gone', 'mq') IS NOT NULL AS started;
ROLLBACK;
BEGIN;
SAVEPOINT s;
SELECT durable.start_workflow('order', NULL, 'gone', 'mq') IS NOT NULL AS started;
ROLLBACK TO SAVEPOINT s;
SELECT durable.start_workflow('order', NULL, 'kept', 'mq') IS NOT NULL AS started;
COMMIT;
SELECT is(t.m('durable_workflows_started_total', 'mq'), 5::float8, 'rolled back starts do not count');

-- A role sees the counters of the namespaces it may read; pg_monitor all.
SELECT durable.create_namespace('secret');
SELECT durable.start_workflow('order', NULL, 's1', 'sq', 'secret') IS NOT NULL AS started;
CREATE ROLE metrics_app IN ROLE durable_client;
CREATE ROLE metrics_mon IN ROLE pg_monitor;
SET ROLE metrics_app;
SELECT is((SELECT array_agg(DISTINCT coalesce(namespace, '-')) FROM durable.metrics
            WHERE metric <> 'durable_metrics_enabled'), '{default}',
    'a client sees only the namespaces it may read, and not the database''s row');
SELECT is((SELECT value FROM durable.metrics WHERE metric = 'durable_metrics_enabled'), 1::float8,
    'a client sees that counting is on');
SELECT ok(strpos(durable.metrics_text(), 'secret') = 0, 'nor in the text');
RESET ROLE;
SET ROLE metrics_mon;
SELECT is((SELECT array_agg(DISTINCT coalesce(namespace, '-') ORDER BY coalesce(namespace, '-')) FROM durable.metrics),
    '{-,default,secret}', 'a pg_monitor member sees every namespace');
RESET ROLE;
CREATE ROLE metrics_nobody;
SET ROLE metrics_nobody;
SELECT throws_ok('SELECT * FROM durable.metrics', '42501', NULL, 'PUBLIC may not read metrics');
RESET ROLE;

-- The text parses as the exposition format, line by line: HELP and TYPE
-- before the samples of a family, names prefixed durable_, label values
-- quoted, numbers; histogram buckets cumulative, +Inf equal to _count.
CREATE TEMP TABLE lines AS
    SELECT n, l FROM unnest(string_to_array(rtrim(durable.metrics_text(), E'\n'), E'\n')) WITH ORDINALITY AS x(l, n);
SELECT is((SELECT count(*) FROM lines WHERE l !~ '^# HELP durable_[a-z_]+ [^\n]+$'
                                      AND l !~ '^# TYPE durable_[a-z_]+ (counter|gauge|histogram)$'
                                      AND l !~ '^durable_[a-z_]+(\{[a-z_]+="([^"\\]|\\.)*"(,[a-z_]+="([^"\\]|\\.)*")*\})? (-?[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?|\+Inf)$'),
    0::bigint, 'every line is a comment or a sample');
SELECT is((SELECT count(*) FROM lines s
            WHERE s.l !~ '^#'
              AND NOT EXISTS (SELECT 1 FROM lines h
                               WHERE h.n < s.n AND h.l ~ '^# TYPE '
                                 AND (substring(s.l from '^[a-z_]+') = split_part(h.l, ' ', 3)
                                      OR (split_part(h.l, ' ', 4) = 'histogram'
                                          AND substring(s.l from '^[a-z_]+') ~ ('^' || split_part(h.l, ' ', 3) || '_(bucket|sum|count)$'))))),
    0::bigint, 'every sample follows the TYPE line of its family');
SELECT is((SELECT count(*) FROM lines WHERE l ~ '^# TYPE') , (SELECT count(*) FROM lines WHERE l ~ '^# HELP'),
    'one HELP a TYPE');
SELECT is((SELECT count(DISTINCT split_part(l, ' ', 3)) FROM lines WHERE l ~ '^# TYPE'),
    (SELECT count(*) FROM lines WHERE l ~ '^# TYPE'), 'each family once');
SELECT ok((SELECT bool_and(c.v = b.v) FROM
            (SELECT regexp_replace(substring(l from '^[^ ]+'), '_count', '') AS k, split_part(l, ' ', 2)::float8 AS v
               FROM lines WHERE l ~ '_count[{ ]') c
            JOIN (SELECT regexp_replace(regexp_replace(substring(l from '^[^ ]+'), ',?le="\+Inf"', ''), '_bucket', '') AS k,
                         split_part(l, ' ', 2)::float8 AS v
                    FROM lines WHERE l ~ 'le="\+Inf"') b
              ON regexp_replace(b.k, '\{\}', '') = c.k), 'the +Inf bucket equals _count');
SELECT is((SELECT count(*) FROM lines WHERE l ~ '^durable_workflows_closed_total\{namespace="default",task_queue="mq",status="failed"\} 1$'),
    1::bigint, 'a sample as Prometheus writes it');
-- The library is preloaded here: the gauge says the counters count.
SELECT is((SELECT string_agg(l, E'\n' ORDER BY n) FROM lines WHERE n <= 3),
    E'# HELP durable_metrics_enabled 1 if durable counts (it is in shared_preload_libraries), 0 if nothing is counted.\n'
    '# TYPE durable_metrics_enabled gauge\n'
    'durable_metrics_enabled 1', 'the text starts with durable_metrics_enabled 1');
SELECT is((SELECT array_agg(row(namespace, task_queue, label, le, value)::text)
             FROM durable.metrics WHERE metric = 'durable_metrics_enabled'),
          '{"(,,,,1)"}', 'and the view has its row, without labels');

SELECT * FROM finish();
DROP ROLE metrics_app;
DROP ROLE metrics_mon;
DROP ROLE metrics_nobody;

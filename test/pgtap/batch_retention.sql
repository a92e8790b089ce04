-- Retention of batch jobs (docs/operations.md "Batch operations"): a job completed or
-- canceled longer ago than its namespace's retention is purged with its errors by
-- durable.purge() (and the timer worker's purge, src/store/retention.c); a running
-- job never is, however old; a job of a dropped namespace goes after the shortest
-- retention left; purge's max_runs bounds the jobs of a call too.
BEGIN;
SELECT plan(19);
SET LOCAL durable.test_time = '2026-02-01 00:00:00+00';

SELECT durable.create_namespace('br', retention => '1 day');
SELECT durable.create_namespace('br-gone', retention => '30 days');
SELECT durable.start_workflow('t', NULL, w, 'q', 'br')
  FROM unnest(ARRAY['br-t1', 'br-t2', 'br-e1', 'br-e2', 'br-c1', 'br-c2', 'br-c3',
                    'br-k1', 'br-k2', 'br-k3']) w;
SELECT durable.start_workflow('t', NULL, 'dflt-1', 'q');
CREATE FUNCTION pg_temp.jobs() RETURNS text LANGUAGE sql AS $$
    SELECT coalesce(string_agg(reason || ':' || state, ',' ORDER BY reason), '')
      FROM durable.batch_jobs $$;

-- b1 completed; b2 completed with an error per run (no decision task to reset to);
-- b3 canceled after one run; b4 running after one run; b5 of 'default' (7 days);
-- b6 of a namespace without runs, dropped once its job has completed.
SELECT durable.start_batch('terminate', 'br', workflow_id_prefix => 'br-t', reason => 'b1') AS b1 \gset
SELECT is(durable.run_batches(), 2, 'b1 terminates its two runs');
SELECT durable.start_batch('reset', 'br', workflow_id_prefix => 'br-e', reason => 'b2',
                           reset_to => 'first_decision') AS b2 \gset
SELECT is(durable.run_batches(), 2, 'b2 reaches its two runs');
SELECT is((SELECT count(*) FROM durable.batch_job_errors WHERE batch_id = :'b2'), 2::bigint,
    'b2 keeps an error for each');
SELECT durable.start_batch('terminate', 'br', workflow_id_prefix => 'br-c', reason => 'b3') AS b3 \gset
SELECT durable.run_batches(1);
SELECT durable.cancel_batch(:'b3');
SELECT durable.start_batch('terminate', 'default', workflow_id_prefix => 'dflt-', reason => 'b5') AS b5 \gset
SELECT durable.run_batches();
SELECT durable.start_batch('terminate', 'br-gone', reason => 'b6') AS b6 \gset
SELECT durable.run_batches();
SELECT durable.drop_namespace('br-gone');
SELECT durable.start_batch('terminate', 'br', workflow_id_prefix => 'br-k', reason => 'b4') AS b4 \gset
SELECT durable.run_batches(1);
SELECT is(pg_temp.jobs(), 'b1:completed,b2:completed,b3:canceled,b4:running,b5:completed,b6:completed',
    'six jobs: five finished, one running');

-- Before the retention: nothing.
SELECT t.at('2026-02-01 23:59:59+00');
SELECT durable.purge();
SELECT is(pg_temp.jobs(), 'b1:completed,b2:completed,b3:canceled,b4:running,b5:completed,b6:completed',
    'a day less a second later: every job is kept');

-- Bad input changes nothing.
SELECT t.at('2026-02-02 00:00:01+00');
SELECT throws_ok($$SELECT durable.purge(0)$$, '22023', 'max_runs must be greater than zero',
    'purge(0): 22023 naming max_runs');
SELECT is((SELECT count(*) FROM durable.batch_jobs), 6::bigint, 'and purges no job');

-- Past br's day: its finished jobs and their errors, and the dropped namespace's job.
SELECT cmp_ok(durable.purge(), '>', 0, 'purge: the closed runs of br');
SELECT is(pg_temp.jobs(), 'b4:running,b5:completed',
    'the completed and canceled jobs of br and the job of the dropped namespace are purged');
SELECT is((SELECT count(*) FROM durable.batch_job_errors WHERE batch_id = :'b2'), 0::bigint,
    'with their errors');
SELECT is((SELECT count(*) FROM durable.batches), 2::bigint, 'durable.batches shows the two left');

-- A running job is never purged; default's finished one after its 7 days.
SELECT t.at('2026-03-15 00:00:00+00');
SELECT durable.purge();
SELECT is(pg_temp.jobs(), 'b4:running', 'six weeks on: the running job is still there');
SELECT is((SELECT touched FROM durable.batch_jobs WHERE batch_id = :'b4'), 1::bigint,
    'untouched by the purge');

-- Once it completes, it goes after br's day from its close.
SELECT is(durable.run_batches(), 2, 'b4 terminates its last two runs');
SELECT is((SELECT close_time FROM durable.batch_jobs WHERE batch_id = :'b4'),
    '2026-03-15 00:00:00+00'::timestamptz, 'and closes now');
SELECT durable.purge();
SELECT is(pg_temp.jobs(), 'b4:completed', 'not purged at its close');
SELECT t.at('2026-03-16 00:00:01+00');
SELECT durable.purge();
SELECT is(pg_temp.jobs(), '', 'purged a day after it');

-- max_runs bounds the jobs of a call too; the oldest close goes first.
SELECT durable.start_batch('terminate', 'br', workflow_id_prefix => 'none-', reason => 'b7');
SELECT durable.run_batches();
SELECT t.at('2026-03-16 00:00:02+00');
SELECT durable.start_batch('terminate', 'br', workflow_id_prefix => 'none-', reason => 'b8');
SELECT durable.run_batches();
SELECT t.at('2026-03-17 00:00:03+00');
SELECT durable.purge(1);
SELECT is(pg_temp.jobs(), 'b8:completed', 'purge(1) purges one job, the oldest');
SELECT durable.purge(1);
SELECT is(pg_temp.jobs(), '', 'and the next call the other');

SELECT * FROM finish();
ROLLBACK;

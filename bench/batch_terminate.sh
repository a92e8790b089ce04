#!/usr/bin/env bash
# bench/batch_terminate.sh: a batch terminate of BATCH_RUNS (100,000) running workflows
# by the timer worker (docs/operations.md "Batch operations").  Runs against any server
# with durable preloaded and its background workers on, given the usual PG* variables
# (PGHOST, PGPORT).  It creates (and drops at the start) a database bench_batch, starts
# the runs (10,000 a transaction), starts the batch, and samples every 100 ms, until the
# batch completes, the age of the timer worker's transaction (pg_stat_activity); prints
# the runs terminated a second (from the batch's start to its close) and the longest
# transaction of the worker seen, e.g.
#   batch  terminate of 100000 runs: 61.2 s, 1634 runs/s; longest worker transaction seen 0.212 s
set -euo pipefail
BATCH_RUNS=${BATCH_RUNS:-100000}
DB=bench_batch

psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" >/dev/null
psql -X -q -d "$DB" -c "CREATE EXTENSION durable" >/dev/null
start=$(date +%s)
psql -X -q -d "$DB" -v ON_ERROR_STOP=1 -v runs="$BATCH_RUNS" >/dev/null <<'SQL'
SELECT durable.create_namespace('bulk');
SELECT format('SELECT count(durable.start_workflow(''job'', NULL, ''w-'' || i, ''q'', ''bulk''))
                 FROM generate_series(%s, %s) i', f, LEAST(f + 9999, :runs))
  FROM generate_series(1, :runs, 10000) f \gexec
SQL
echo "batch  started $BATCH_RUNS runs in $(($(date +%s) - start)) s"

psql -X -q -A -t -d "$DB" -v ON_ERROR_STOP=1 2>&1 <<'SQL'
SELECT durable.start_batch('terminate', 'bulk', status => 'running', reason => 'bench')
    AS batch \gset
-- Sample the worker's transaction every 100 ms until the batch completes.
CREATE TEMP TABLE samples (age float8);
DO $$
BEGIN
    WHILE (SELECT state FROM durable.batches) = 'running' LOOP
        INSERT INTO samples
            SELECT extract(epoch FROM clock_timestamp() - xact_start) FROM pg_stat_activity
             WHERE backend_type = 'durable timer worker' AND datname = current_database()
               AND xact_start IS NOT NULL;
        PERFORM pg_sleep(0.1);
        COMMIT;
    END LOOP;
END $$;
SELECT format('batch  terminate of %s runs: %s s, %s runs/s; touched %s, failed %s, skipped %s; longest worker transaction seen %s s',
              b.total, round(extract(epoch FROM b.close_time - b.start_time)::numeric, 1),
              round(b.touched / extract(epoch FROM b.close_time - b.start_time)::numeric),
              b.touched, b.failed, b.skipped,
              (SELECT round(max(age)::numeric, 3) FROM samples))
  FROM durable.batches b;
SQL

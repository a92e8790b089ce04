#!/usr/bin/env bash
# bench/list_workflows.sh: the list benchmark (docs/api.md "Finding workflows"):
# list_workflows and count_workflows over 1,000,000 runs.  Run by bench/run.sh (WORKLOADS names `list`, or
# is empty) against its cluster; runs alone against any server with durable preloaded,
# given the usual PG* variables (PGHOST, PGPORT).  It creates (and drops at the start) a
# database bench_list, loads bench/list_workflows.sql into it, then times each call
# LIST_CALLS (20) times in one session and prints the mean ms a call, with the scans of
# its plan (auto_explain), e.g.
#   list  page 1, status failed + type type-3 (50 rows)    0.41 ms   Index Scan Backward using runs_list_type
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LIST_CALLS=${LIST_CALLS:-20}
DB=bench_list

psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" >/dev/null
psql -X -q -d "$DB" -c "CREATE EXTENSION durable" >/dev/null
start=$(date +%s)
psql -X -q -d "$DB" -f "$ROOT/bench/list_workflows.sql" >/dev/null
echo "list  loaded 1,000,000 runs (bench/list_workflows.sql) in $(($(date +%s) - start)) s;" \
    "durable.runs $(psql -X -q -A -t -d "$DB" -c "SELECT pg_size_pretty(pg_table_size('durable.runs'))")," \
    "its indexes $(psql -X -q -A -t -d "$DB" -c "SELECT pg_size_pretty(pg_indexes_size('durable.runs'))")"

psql -X -q -A -t -d "$DB" -v ON_ERROR_STOP=1 -v calls="$LIST_CALLS" 2>&1 <<'SQL' |
SET client_min_messages = warning;
-- The mean ms of a statement over n runs (after one to warm the cache), and the scans
-- of its plan and of the statements it runs (auto_explain, into the client's messages).
CREATE FUNCTION pg_temp.ms(label text, q text, n int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    rows bigint;
BEGIN
    EXECUTE q INTO rows;
    t0 := clock_timestamp();
    FOR i IN 1..n LOOP
        EXECUTE q INTO rows;
    END LOOP;
    RETURN format('%-60s %9s ms', label || ' (' || rows || ' rows)',
                  to_char(extract(epoch FROM clock_timestamp() - t0) * 1000 / n, 'FM999990.00'));
END $$;
-- A cursor deep into a filter: the last row's after `pages` pages of 1000.
CREATE FUNCTION pg_temp.deep(st text, wt text, pages int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE c text;
BEGIN
    FOR i IN 1..pages LOOP
        SELECT min(l.cursor) COLLATE "C" INTO c
          FROM (SELECT cursor FROM durable.list_workflows(status => st, workflow_type => wt,
                                                          page_size => 1000, after => c)) l;
    END LOOP;
    RETURN c;
END $$;
SELECT pg_temp.deep('completed', 'type-0', 100) AS deep_cursor \gset
SELECT pg_temp.ms('page 1, no filter',
    $q$SELECT count(*) FROM durable.list_workflows()$q$, :calls);
SELECT pg_temp.ms('page 1, status failed + type type-3',
    $q$SELECT count(*) FROM durable.list_workflows(status => 'failed', workflow_type => 'type-3')$q$, :calls);
SELECT pg_temp.ms('page 1, status completed + type type-0',
    $q$SELECT count(*) FROM durable.list_workflows(status => 'completed', workflow_type => 'type-0')$q$, :calls);
SELECT pg_temp.ms('page 2001 (100,000 rows deep), completed + type-0',
    format($q$SELECT count(*) FROM durable.list_workflows(status => 'completed',
           workflow_type => 'type-0', after => %L)$q$, :'deep_cursor'), :calls);
SELECT pg_temp.ms('page 1, status timed_out + queue queue-7',
    $q$SELECT count(*) FROM durable.list_workflows(status => 'timed_out', task_queue => 'queue-7')$q$, :calls);
SELECT pg_temp.ms('page 1, search attribute CustomerId c-42',
    $q$SELECT count(*) FROM durable.list_workflows(search_attributes => '{"CustomerId": "c-42"}')$q$, :calls);
SELECT pg_temp.ms('page 1, search attribute Region eu (6 % of runs)',
    $q$SELECT count(*) FROM durable.list_workflows(search_attributes => '{"Region": "eu"}')$q$, :calls);
SELECT pg_temp.ms('page 1, memo owner team-7',
    $q$SELECT count(*) FROM durable.list_workflows(memo => '{"owner": "team-7"}')$q$, :calls);
SELECT pg_temp.ms('page 1, workflow id prefix wf-12345',
    $q$SELECT count(*) FROM durable.list_workflows(workflow_id_prefix => 'wf-12345')$q$, :calls);
SELECT pg_temp.ms('page 1, closed in a 10-minute range',
    $q$SELECT count(*) FROM durable.list_workflows(closed_since => '2026-01-15 00:00+00',
                                                   closed_before => '2026-01-15 00:10+00')$q$, :calls);
SELECT pg_temp.ms('count_workflows(status => failed)',
    $q$SELECT durable.count_workflows(status => 'failed')$q$, :calls);
SELECT pg_temp.ms('count_workflows(status => failed, type => type-3)',
    $q$SELECT durable.count_workflows(status => 'failed', workflow_type => 'type-3')$q$, :calls);
SELECT pg_temp.ms('count_workflows_by_status() (namespace default, 800,000 runs)',
    $q$SELECT count(*) FROM durable.count_workflows_by_status()$q$, :calls);
SELECT pg_temp.ms('count_workflows_by_status(workflow_type => type-3)',
    $q$SELECT count(*) FROM durable.count_workflows_by_status(workflow_type => 'type-3')$q$, :calls);
-- The plans: each statement once more, under auto_explain.
LOAD 'auto_explain';
SET auto_explain.log_min_duration = 0;
SET auto_explain.log_nested_statements = on;
SET client_min_messages = log;
SELECT 'plan', count(*) FROM durable.list_workflows(status => 'failed', workflow_type => 'type-3');
SELECT 'plan', count(*) FROM durable.list_workflows(status => 'completed', workflow_type => 'type-0', after => :'deep_cursor');
SELECT 'plan', count(*) FROM durable.list_workflows(search_attributes => '{"CustomerId": "c-42"}');
SELECT 'plan', count(*) FROM durable.list_workflows(workflow_id_prefix => 'wf-12345');
SELECT 'plan', count(*) FROM durable.list_workflows(closed_since => '2026-01-15 00:00+00', closed_before => '2026-01-15 00:10+00');
SELECT 'plan', durable.count_workflows(status => 'failed');
SELECT 'plan', count(*) FROM durable.count_workflows_by_status();
SQL
    awk '/ERROR|FATAL/ { print; next }
         / ms$/ && !/^psql/ { print "list  " $0; next }
         /Query Text: SELECT r\.|Query Text: SELECT pg_catalog.count|Query Text: SELECT s\.status/ { p = 1; next }
         /Query Text: SELECT .plan./ { q = $0; sub(/.*Query Text: /, "", q); print "plan  " q; printf "%s", buf; buf = ""; p = 0; next }
         /Query Text:/ { p = 0; next }
         /(Index|Index Only|Bitmap Index|Seq|Bitmap Heap) Scan/ && p {
             s = $0; sub(/^[ ]*(->)?[ ]*/, "", s); sub(/  \(cost.*/, "", s); buf = buf "        " s "\n" }'
psql -X -q -d postgres -c "DROP DATABASE $DB" >/dev/null

#!/usr/bin/env bash
# bench/instructions.sh: `make bench-instructions`.
#
# The CPU a workflow costs, counted in instructions rather than seconds: one backend in
# single-user mode runs the workflows under valgrind's callgrind, which counts every
# instruction the server executes.  The count does not move with the machine's load, as
# CPU seconds do on a shared machine (bench/README.md "Instructions"), so it compares two
# commits to within a fraction of a percent with one run each.
#
#   sqlwf     SQLWF_COUNT (200) SQL workflows of three no-op SQL activities (the sqlwf
#             workload's bench_sqlwf) started in one statement, then run by
#             durable.run_tasks(7), one statement (and transaction) a workflow: its 7
#             tasks as an executor's chain runs them.
#   activity  CYCLES (100) activity cycles, the 7 calls of bench/activity_cycle.sql, one
#             statement (and transaction) each.
#   eager     CYCLES (100) of the same workflow with eager dispatch, the 4 calls of
#             bench/activity_eager.sql, compared with the same queue floor.
#   floors    the same counts for the floors bench/run.sh compares them with: 8 one-row
#             INSERTs a SQL workflow (floor_insert.sql), the 7 transactions of
#             floor_queue.sql an activity cycle; each workflow's count is printed as a
#             multiple of its floor's, the CPU side of bench/run.sh's `vs floor`.
#
# Each count has the count of an empty session (start-up and shutdown) taken off, and is
# divided by the workflows, which must all have completed.  Chains are bounded by their
# tasks, not their time, in this build (EXECUTOR_CHAIN_MS 10 s): under valgrind a chain of
# 7 tasks outlasts the 20 ms an executor gives it.  Single-user mode parses each
# statement, which pgbench -M prepared does once: the activity cycle's count includes
# that parsing, the same for every commit compared.
#
# CALLGRIND_DIR: a directory to keep each session's callgrind profile and script in
# (NAME.callgrind, NAME.sql; read with callgrind_annotate --inclusive=yes).
#
# As root it installs valgrind and runs itself again as the `postgres` OS user on a copy
# of the tree (scripts/lib.sh).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/lib.sh"

SQLWF_COUNT=${SQLWF_COUNT:-200}
CYCLES=${CYCLES:-100}
export SQLWF_COUNT CYCLES

if is_root; then
    ensure_packages
    ensure_packages valgrind
    BENCH_COMMIT=${BENCH_COMMIT:-$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)}
    export BENCH_COMMIT
    rerun_as_postgres bench/instructions.sh
    exit
fi
command -v valgrind >/dev/null || die "valgrind is not installed (apt-get install valgrind)"

find_pg
# The build of this count only: executor.c is built again, with and then without it.
touch "$ROOT/src/sqlwf/executor.c"
export COPT="-DEXECUTOR_CHAIN_MS=10000"
build_temp_install || die "build failed"
unset COPT
touch "$ROOT/src/sqlwf/executor.c"
COMMIT=${BENCH_COMMIT:-$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/durable-instructions.XXXXXX")
trap 'stop_cluster "$WORK/data"; rm -rf "$WORK"' EXIT
PORT=${BENCH_PORT:-54335}
cat >"$WORK/extra.conf" <<'EOF'
shared_preload_libraries = 'durable'
durable.executor_workers = 0
durable.worker_enabled = off
fsync = off
EOF
start_cluster "$WORK/data" "$PORT" "$WORK" "$WORK/extra.conf"
psql -X -q -v ON_ERROR_STOP=1 -h "$WORK" -p "$PORT" -d postgres -c "CREATE EXTENSION durable" \
    -f "$ROOT/bench/workers.sql" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -h "$WORK" -p "$PORT" -d postgres >/dev/null <<'EOF'
SELECT durable.register_workflow('bench_sqlwf', 'bench_sqlwf(jsonb)', 'sqlwf',
                                 run_as => 'bench_app'),
       durable.register_activity('bench_noop', 'bench_noop(jsonb)', 'sqlwf',
                                 run_as => 'bench_app');
-- The task tokens and decisions between one call and the next, and the floors' jobs
CREATE TABLE bench_hand (k text PRIMARY KEY, v text);
-- The floors' tables, as bench/run.sh makes them
CREATE TABLE bench_floor (id bigserial PRIMARY KEY, k text NOT NULL, v jsonb);
CREATE INDEX ON bench_floor (k);
CREATE TABLE bench_queue (id bigserial PRIMARY KEY, kind "char" NOT NULL,
    state text NOT NULL DEFAULT 'ready', payload jsonb, claimed_at timestamptz,
    done_at timestamptz);
CREATE INDEX bench_queue_ready ON bench_queue (kind, id) WHERE state = 'ready';
EOF
stop_cluster "$WORK/data"

# Single-user mode reads one statement a line.
: >"$WORK/empty.sql"
{
    echo "SELECT count(durable.start_workflow('bench_sqlwf', '{\"n\": 1}'::jsonb, task_queue => 'sqlwf')) FROM generate_series(1, $SQLWF_COUNT);"
    for ((i = 0; i < SQLWF_COUNT; i++)); do echo "SELECT durable.run_tasks(7);"; done
    echo "SELECT 'completed ' || count(*) FROM durable.runs WHERE status = 'completed';"
} >"$WORK/sqlwf.sql"
# The activity cycle and its queue floor run prepared statements, as pgbench -M prepared
# runs them in bench/run.sh: each is parsed and planned once, in the session's first
# lines.  The tokens and decisions the cycle hands from one call to the next, and the
# job the floor claims, are kept in bench_hand.
{
    echo "PREPARE start_wf AS SELECT durable.start_workflow('bench_cycle', '{\"n\": 1}'::jsonb, NULL, 'bench');"
    echo "PREPARE poll_d AS INSERT INTO bench_hand SELECT 'd', t->>'taskToken' || '|' || bench_decide(t)::text FROM (SELECT durable.poll_decision_task('bench', 'bench-worker', 'default', '0s') AS t) s ON CONFLICT (k) DO UPDATE SET v = excluded.v;"
    echo "PREPARE answer_d AS SELECT durable.complete_decision_task(split_part(v, '|', 1), split_part(v, '|', 2)::jsonb) FROM bench_hand WHERE k = 'd';"
    echo "PREPARE poll_a AS INSERT INTO bench_hand SELECT 'a', durable.poll_activity_task('bench', 'bench-worker', 'default', '0s')->>'taskToken' ON CONFLICT (k) DO UPDATE SET v = excluded.v;"
    echo "PREPARE answer_a AS SELECT durable.complete_activity(v, '{\"ok\": true}'::jsonb) FROM bench_hand WHERE k = 'a';"
    for ((i = 0; i < CYCLES; i++)); do
        printf '%s\n' "EXECUTE start_wf;" "EXECUTE poll_d;" "EXECUTE answer_d;" "EXECUTE poll_a;" \
            "EXECUTE answer_a;" "EXECUTE poll_d;" "EXECUTE answer_d;"
    done
    echo "SELECT 'completed ' || count(*) FROM durable.runs WHERE status = 'completed';"
} >"$WORK/activity.sql"
# The same workflow with eager dispatch, the 4 calls of bench/activity_eager.sql.
{
    echo "PREPARE start_e AS INSERT INTO bench_hand SELECT 'd', d->>'taskToken' || '|' || bench_decide_eager(d)::text || '|' || (d->>'startedEventId') FROM (SELECT durable.start_workflow_eager('bench_cycle', '{\"n\": 1}'::jsonb, NULL, 'bench', identity => 'bench-worker')->'decisionTask' AS d) s ON CONFLICT (k) DO UPDATE SET v = excluded.v;"
    echo "PREPARE answer_e AS INSERT INTO bench_hand SELECT 'a', durable.complete_decision_task(split_part(v, '|', 1), split_part(v, '|', 2)::jsonb, NULL, false, 1)->'activityTasks'->0->>'taskToken' FROM bench_hand WHERE k = 'd' ON CONFLICT (k) DO UPDATE SET v = excluded.v;"
    echo "PREPARE complete_e AS INSERT INTO bench_hand SELECT 'd', d->>'taskToken' || '|' || bench_decide(d)::text FROM (SELECT durable.complete_activity(a.v, '{\"ok\": true}'::jsonb, true, split_part(d.v, '|', 3)::bigint)->'decisionTask' AS d FROM bench_hand a, bench_hand d WHERE a.k = 'a' AND d.k = 'd') s ON CONFLICT (k) DO UPDATE SET v = excluded.v;"
    echo "PREPARE answer_d AS SELECT durable.complete_decision_task(split_part(v, '|', 1), split_part(v, '|', 2)::jsonb) FROM bench_hand WHERE k = 'd';"
    for ((i = 0; i < CYCLES; i++)); do
        printf '%s\n' "EXECUTE start_e;" "EXECUTE answer_e;" "EXECUTE complete_e;" "EXECUTE answer_d;"
    done
    echo "SELECT 'completed ' || count(*) FROM durable.runs WHERE status = 'completed';"
} >"$WORK/eager.sql"
# The floors of bench/run.sh: 8 one-row INSERTs (floor_insert.sql, which run.sh does not
# prepare) a SQL workflow, and the 7 transactions of floor_queue.sql an activity cycle.
{
    for ((i = 0; i < SQLWF_COUNT * 8; i++)); do
        echo "INSERT INTO bench_floor (k, v) VALUES (gen_random_uuid()::text, '{\"n\": 1}'::jsonb);"
    done
    echo "SELECT 'completed ' || count(*) / 8 FROM bench_floor;"
} >"$WORK/insert_floor.sql"
{
    echo "PREPARE job_new(\"char\", jsonb) AS INSERT INTO bench_queue (kind, payload) VALUES (\$1, \$2);"
    echo "PREPARE job_claim(\"char\") AS WITH c AS (UPDATE bench_queue SET state = 'running', claimed_at = now() WHERE id = (SELECT id FROM bench_queue WHERE state = 'ready' AND kind = \$1 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id) INSERT INTO bench_hand SELECT 'j', COALESCE((SELECT id FROM c), 0)::text ON CONFLICT (k) DO UPDATE SET v = excluded.v;"
    echo "PREPARE job_done_then(\"char\", jsonb) AS WITH done AS (UPDATE bench_queue SET state = 'done', done_at = now() WHERE id = (SELECT v::bigint FROM bench_hand WHERE k = 'j')) INSERT INTO bench_queue (kind, payload) VALUES (\$1, \$2);"
    echo "PREPARE job_done AS UPDATE bench_queue SET state = 'done', done_at = now() WHERE id = (SELECT v::bigint FROM bench_hand WHERE k = 'j');"
    for ((i = 0; i < CYCLES; i++)); do
        printf '%s\n' "EXECUTE job_new('d', '{\"n\": 1}');" "EXECUTE job_claim('d');" \
            "EXECUTE job_done_then('a', '{\"n\": 1}');" "EXECUTE job_claim('a');" \
            "EXECUTE job_done_then('d', '{\"ok\": true}');" "EXECUTE job_claim('d');" "EXECUTE job_done;"
    done
    echo "SELECT 'completed ' || count(*) / 3 FROM bench_queue WHERE state = 'done';"
} >"$WORK/queue_floor.sql"

# count NAME: the instructions of a single-user backend running $WORK/NAME.sql on a
# copy of the prepared cluster; its output goes to $WORK/NAME.out.
count() {
    rm -rf "$WORK/run"
    cp -a "$WORK/data" "$WORK/run"
    valgrind --tool=callgrind --callgrind-out-file="$WORK/$1.callgrind" \
        "$TMP_BINDIR/postgres" --single -D "$WORK/run" postgres \
        <"$WORK/$1.sql" >"$WORK/$1.out" 2>"$WORK/$1.valgrind" ||
        { tail -n 20 "$WORK/$1.valgrind"; die "the $1 session failed"; }
    if grep -q 'ERROR:' "$WORK/$1.valgrind"; then
        grep -m 5 'ERROR:' "$WORK/$1.valgrind"
        die "the $1 session had errors"
    fi
    if [ -n "${CALLGRIND_DIR:-}" ]; then
        cp "$WORK/$1.callgrind" "$WORK/$1.sql" "$CALLGRIND_DIR/" || die "cannot write to CALLGRIND_DIR $CALLGRIND_DIR"
    fi
    sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$WORK/$1.valgrind"
}
# completed NAME N: whether N workflows completed in the NAME session
completed() {
    grep -q "= \"completed $2\"" "$WORK/$1.out" ||
        die "the $1 session did not complete its $2 workflows: $(grep -m 1 -o 'completed [0-9]*' "$WORK/$1.out")"
}

log "counting an empty session"
empty=$(count empty)
log "counting $SQLWF_COUNT SQL workflows"
sqlwf=$(count sqlwf)
completed sqlwf "$SQLWF_COUNT"
log "counting $CYCLES activity cycles"
activity=$(count activity)
completed activity "$CYCLES"
log "counting $CYCLES activity cycles with eager dispatch"
eager=$(count eager)
completed eager "$CYCLES"
log "counting their floors: $((SQLWF_COUNT * 8)) one-row INSERTs, $CYCLES queue cycles"
insert_floor=$(count insert_floor)
completed insert_floor "$SQLWF_COUNT"
queue_floor=$(count queue_floor)
completed queue_floor "$CYCLES"

echo
echo "durable instructions a workflow (commit $COMMIT; valgrind --tool=callgrind, one backend, single-user mode)"
awk -v e="$empty" -v s="$sqlwf" -v a="$activity" -v ea="$eager" -v fi="$insert_floor" \
    -v fq="$queue_floor" -v ns="$SQLWF_COUNT" -v na="$CYCLES" 'BEGIN {
    s = (s - e) / ns; a = (a - e) / na; ea = (ea - e) / na
    fi = (fi - e) / ns; fq = (fq - e) / na
    printf "  sqlwf     SQL workflow of 3 SQL activities, started and run in chains: %6.0f thousand, %.2f x its floor\n", s / 1000, s / fi
    printf "  activity  activity cycle, 7 calls (prepared statements):              %6.0f thousand, %.2f x its floor\n", a / 1000, a / fq
    printf "  eager     the same cycle with eager dispatch, 4 calls:                  %6.0f thousand, %.2f x its floor\n", ea / 1000, ea / fq
    printf "  floors    8 one-row INSERTs %.0f thousand; the 7 transactions of a queue cycle %.0f thousand\n", fi / 1000, fq / 1000
    printf "  (an empty session: %.0f million)\n", e / 1000000 }'

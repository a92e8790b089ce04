#!/usr/bin/env bash
# bench/run.sh: `make bench`.
#
# Builds durable into ./tmp_install (see scripts/lib.sh), starts a throwaway cluster set
# up like the peers' machine (fsync and synchronous_commit on, shared_buffers = 1GB, see
# /work/shared/PEERS.md), and runs each workload below with pgbench, one after another in
# the same run, next to its floor: plain PostgreSQL transactions of the same shape.
# Prints a table (transactions/s, p50/p99 latency, % of the floor) and writes it to
# bench/results/<timestamp>.txt.  See bench/README.md.
#
# Environment: CLIENTS (8), THREADS (2), DURATION seconds (20), RUNS (1; with more, each
# figure is the median of the runs, and rounds alternate the workloads), BENCH_PORT
# (54331), PGBENCH_OPTS (extra pgbench options, e.g. "-M prepared").
#
# As root it installs missing Debian packages, then runs itself again as the `postgres`
# OS user on a copy of the tree (initdb refuses root) and copies the results back.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/lib.sh"

CLIENTS=${CLIENTS:-8}
THREADS=${THREADS:-2}
DURATION=${DURATION:-20}
RUNS=${RUNS:-1}
BENCH_PORT=${BENCH_PORT:-54331}
PGBENCH_OPTS=${PGBENCH_OPTS:-}
export CLIENTS THREADS DURATION RUNS BENCH_PORT PGBENCH_OPTS

if is_root; then
    ensure_packages
    # The run as postgres works on a copy that is removed afterwards: it writes its
    # results into a directory handed over here, and we copy them into the tree.
    BENCH_COMMIT=${BENCH_COMMIT:-$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)}
    handoff=$(mktemp -d "${TMPDIR:-/tmp}/durable-bench-results.XXXXXX")
    chown postgres: "$handoff"
    rc=0
    BENCH_COMMIT=$BENCH_COMMIT BENCH_RESULTS_DIR=$handoff rerun_as_postgres bench/run.sh || rc=$?
    mkdir -p "$ROOT/bench/results"
    if compgen -G "$handoff/*.txt" >/dev/null; then
        cp "$handoff"/*.txt "$ROOT/bench/results/"
        chown "$(stat -c %u:%g "$ROOT")" "$ROOT/bench/results" "$ROOT/bench/results"/*.txt
    fi
    rm -rf "$handoff"
    exit "$rc"
fi

find_pg
build_temp_install || die "build failed"

RESULTS_DIR=${BENCH_RESULTS_DIR:-$ROOT/bench/results}
BENCH_COMMIT=${BENCH_COMMIT:-$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RESULT_FILE="$RESULTS_DIR/$STAMP.txt"
mkdir -p "$RESULTS_DIR"

# A scratch directory for the cluster, its socket and pgbench's logs; removed on exit,
# with the server stopped, whatever happened.
WORK=$(mktemp -d "${TMPDIR:-/tmp}/durable-bench.XXXXXX")
cleanup() {
    stop_cluster "$WORK/data"
    rm -rf "$WORK"
}
trap cleanup EXIT

# Settings of the peers' machine, plus what keeps a checkpoint out of a 20 s run.
cat >"$WORK/bench.conf" <<'EOF'
shared_preload_libraries = 'durable'
max_connections = 100
shared_buffers = 1GB
fsync = on
synchronous_commit = on
full_page_writes = on
checkpoint_timeout = 30min
max_wal_size = 4GB
min_wal_size = 1GB
lc_messages = 'C'
timezone = 'UTC'
log_line_prefix = '%m [%p] %q%a '
log_min_messages = warning
log_checkpoints = on
EOF
log "starting a cluster in $WORK (fsync on, synchronous_commit on, shared_buffers 1GB)"
start_cluster "$WORK/data" "$BENCH_PORT" "$WORK" "$WORK/bench.conf"
export PGHOST="$WORK" PGPORT="$BENCH_PORT" PGDATABASE=bench
createdb bench
psql -X -q -v ON_ERROR_STOP=1 <<'EOF'
CREATE EXTENSION durable;
CREATE TABLE bench_floor (id bigserial PRIMARY KEY, k text NOT NULL, v jsonb);
CREATE INDEX ON bench_floor (k);
EOF

# The workloads, in the order they run.  workload NAME SCRIPT [SETUP_SQL] [FLOOR]:
#   SCRIPT     a pgbench script, relative to bench/
#   SETUP_SQL  run with psql before each of its runs (e.g. to pre-fill a queue)
#   FLOOR      the NAME of the workload this one is compared with (none: it is a floor)
NAMES=() SCRIPTS=() SETUPS=() FLOORS=()
workload() {
    NAMES+=("$1") SCRIPTS+=("$2") SETUPS+=("${3:-}") FLOORS+=("${4:-}")
}
workload floor floor_insert.sql
workload start start_workflow.sql "" floor
# Later: e.g. `workload activity activity_cycle.sql "<pre-fill SQL>" queue_floor`.

# measure I RUN: one pgbench run of workload I; appends "tps p50 p99 failed" to
# $WORK/NAME.runs.  Per-transaction logs give the latencies: column 3 is the latency
# in microseconds (a failed transaction has "failed" there and is left out).
measure() {
    local i=$1 run=$2 name=${NAMES[$1]} prefix out tps failed
    prefix="$WORK/log/$name.$run"
    out="$WORK/$name.$run.out"
    mkdir -p "$WORK/log"
    if [ -n "${SETUPS[$i]}" ]; then psql -X -q -v ON_ERROR_STOP=1 -c "${SETUPS[$i]}"; fi
    psql -X -q -c CHECKPOINT   # start every run from a clean slate of dirty buffers
    log "run $run/$RUNS: $name ($CLIENTS clients, $THREADS threads, ${DURATION}s)"
    # shellcheck disable=SC2086  # PGBENCH_OPTS is a list of options
    pgbench -n -c "$CLIENTS" -j "$THREADS" -T "$DURATION" $PGBENCH_OPTS \
        --log --log-prefix="$prefix" -f "$ROOT/bench/${SCRIPTS[$i]}" >"$out" 2>&1 ||
        { cat "$out"; tail -n 20 "$WORK/server.log"; die "pgbench failed on $name"; }
    tps=$(awk '/^tps = / {print $3; exit}' "$out")
    failed=$(awk -F'[: ]+' '/^number of failed transactions/ {print $5; exit}' "$out")
    [ -n "$tps" ] || { cat "$out"; die "no tps in pgbench's output for $name"; }
    cat "$prefix".* | awk '$3 ~ /^[0-9]+$/ {print $3}' | LC_ALL=C sort -n |
        awk -v tps="$tps" -v failed="${failed:-0}" '
            { a[NR] = $1 }
            END {
                if (NR == 0) { print tps, "nan", "nan", failed; exit }
                i50 = int((NR * 50 + 99) / 100); i99 = int((NR * 99 + 99) / 100)
                printf "%s %.3f %.3f %s\n", tps, a[i50] / 1000, a[i99] / 1000, failed
            }' >>"$WORK/$name.runs"
    rm -f "$prefix".*
}

# median FILE COLUMN: the median of a column of numbers (mean of the middle two if even).
median() {
    awk -v c="$2" '{print $c}' "$1" | LC_ALL=C sort -g |
        awk '{ a[NR] = $1 } END { m = int((NR + 1) / 2)
             if (NR % 2) print a[m]; else printf "%.3f\n", (a[m] + a[m + 1]) / 2 }'
}

# Rounds alternate the workloads, so that a drift of the machine hits each alike.
for ((run = 1; run <= RUNS; run++)); do
    for i in "${!NAMES[@]}"; do measure "$i" "$run"; done
done

# The report: the medians over the runs, each workload as a percentage of its floor.
declare -A TPS
{
    echo "durable bench $STAMP (commit $BENCH_COMMIT)"
    echo "$(postgres --version); $(nproc) CPUs; $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
    echo "pgbench -n -c $CLIENTS -j $THREADS -T $DURATION ${PGBENCH_OPTS:+$PGBENCH_OPTS }(median of $RUNS run(s))"
    echo "fsync on, synchronous_commit on, shared_buffers 1GB"
    echo
    printf '%-10s %-22s %12s %9s %9s %8s %10s\n' workload script "transact/s" "p50 ms" "p99 ms" failed "vs floor"
    for i in "${!NAMES[@]}"; do
        name=${NAMES[$i]}
        TPS[$name]=$(median "$WORK/$name.runs" 1)
        ratio=floor
        if [ -n "${FLOORS[$i]}" ]; then
            ratio=$(awk -v a="${TPS[$name]}" -v b="${TPS[${FLOORS[$i]}]}" \
                'BEGIN { printf "%.1f %%", 100 * a / b }')
        fi
        printf '%-10s %-22s %12.1f %9.2f %9.2f %8s %10s\n' "$name" "${SCRIPTS[$i]}" \
            "${TPS[$name]}" "$(median "$WORK/$name.runs" 2)" "$(median "$WORK/$name.runs" 3)" \
            "$(awk '{s += $4} END {print s + 0}' "$WORK/$name.runs")" "$ratio"
    done
    if [ "$RUNS" -gt 1 ]; then
        echo
        echo "each run (tps p50 p99 failed):"
        for name in "${NAMES[@]}"; do
            echo "  $name: $(awk '{printf "%s%.1f %.2f %.2f %s", (NR > 1 ? " | " : ""), $1, $2, $3, $4}' \
                "$WORK/$name.runs")"
        done
    fi
    # Anything the server complained about during the run.
    problems=$(grep -E 'WARNING:|ERROR:|FATAL:|PANIC:|TRAP:|terminated by signal' \
        "$WORK/server.log" || true)
    echo
    if [ -n "$problems" ]; then
        echo "server log: $(wc -l <<<"$problems") warning/error line(s), first ones:"
        head -n 10 <<<"$problems" | sed 's/^/  /'
    else
        echo "server log: no warnings or errors"
    fi
    # The script's own CHECKPOINTs run between runs; one set off by time or WAL volume
    # may have landed in a run.
    echo "checkpoints not requested by this script: $(grep -cE 'checkpoint starting: (time|wal)' \
        "$WORK/server.log" || true)"
} | tee "$RESULT_FILE"
log "results: bench/results/$STAMP.txt"

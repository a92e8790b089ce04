#!/usr/bin/env bash
# bench/citus.sh: the cost of routing through durable_citus (docs/citus.md), and the
# throughput with 1 and with 2 worker nodes (bench/README.md, "durable_citus").
#
# For each number of workers in $WORKERS ("1 2"), it starts in a private temp install a
# Citus coordinator and that many workers on this machine (127.0.0.1), all with the same
# settings (fsync and synchronous_commit on; below), creates citus, durable, durable_citus
# and dblink, and runs with pgbench, alternating within each round:
#   start_direct   durable.start_workflow on each worker directly (bench/start_workflow.sql;
#                  one pgbench a worker, CLIENTS clients each, at the same time; summed)
#   start_routed   durable_citus.start_workflow on the coordinator (bench/citus_start_routed.sql;
#                  CLIENTS clients a worker), which delegates each start to its owner
#   cycle_direct   the 7-call activity cycle (bench/citus_cycle.sql) on each worker, all
#                  7 calls on that worker (one pgbench a worker, CLIENTS clients each)
#   cycle_routed   the same, but the start goes to the coordinator as
#                  durable_citus.start_workflow, which delegates it back to the worker;
#                  the 6 worker calls (polls, completions) stay on the worker, as a
#                  worker polls each node directly
# In both cycles the start is sent over a dblink connection the pgbench session keeps
# (bench_start below), to the coordinator or to the worker itself, so that the only
# difference is where the start goes.  Reports scripts/s (starts, or workflows through
# the cycle), the ratios routed / direct, and the CPU ms a script execution of the
# coordinator's and the workers' processes, and writes them to
# bench/results/citus-<timestamp>.txt.  bench/README.md ("durable_citus") has figures
# and a model of throughput against nodes built from them.
#
# Environment: WORKERS ("1 2"), CLIENTS (8 a worker node), THREADS (2), DURATION seconds
# (15), RUNS (2), CITUS_BENCH_PORT (56200: the coordinator; workers the next ports).
#
# As root it installs missing Debian packages, builds Citus if needed
# (scripts/build-citus.sh), then runs itself again as the `postgres` OS user on a copy of
# the tree and copies the results back.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/lib.sh"

WORKERS=${WORKERS:-1 2}
CLIENTS=${CLIENTS:-8}
THREADS=${THREADS:-2}
DURATION=${DURATION:-15}
RUNS=${RUNS:-2}
CITUS_BENCH_PORT=${CITUS_BENCH_PORT:-56200}
export WORKERS CLIENTS THREADS DURATION RUNS CITUS_BENCH_PORT

if is_root && [ "${DURABLE_RERUN:-}" != 1 ]; then
    # shellcheck disable=SC2119  # durable's packages, not the script's arguments
    ensure_packages
    "$ROOT/scripts/build-citus.sh" || die "building Citus failed"
    find_pg
    export CITUS_INSTALL="$ROOT/tmp_citus/install"
    BENCH_COMMIT=${BENCH_COMMIT:-$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)}
    handoff=$(mktemp -d "${TMPDIR:-/tmp}/durable-bench-results.XXXXXX")
    chown postgres: "$handoff"
    rc=0
    BENCH_COMMIT=$BENCH_COMMIT BENCH_RESULTS_DIR=$handoff rerun_as_postgres bench/citus.sh || rc=$?
    mkdir -p "$ROOT/bench/results"
    if compgen -G "$handoff/*.txt" >/dev/null; then
        cp "$handoff"/*.txt "$ROOT/bench/results/"
        chown "$(stat -c %u:%g "$ROOT")" "$ROOT/bench/results" "$ROOT/bench/results"/*.txt
    fi
    rm -rf "$handoff"
    exit "$rc"
fi

find_pg
if [ -z "${CITUS_INSTALL:-}" ]; then
    "$ROOT/scripts/build-citus.sh" || die "building Citus failed"
    CITUS_INSTALL="$ROOT/tmp_citus/install"
fi
build_temp_install || die "build failed"
log "adding Citus ($CITUS_INSTALL) and durable_citus to $TMP_INSTALL"
cp -a "$CITUS_INSTALL/." "$TMP_INSTALL/" || die "copying Citus failed"
make -C "$ROOT/citus" -s PG_CONFIG="$PG_CONFIG" install DESTDIR="$TMP_INSTALL" >/dev/null ||
    die "installing durable_citus failed"
[ -f "$(pg_config --pkglibdir)/citus.so" ] || die "no citus.so in the temp install"

RESULTS_DIR=${BENCH_RESULTS_DIR:-$ROOT/bench/results}
BENCH_COMMIT=${BENCH_COMMIT:-$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RESULT_FILE="$RESULTS_DIR/citus-$STAMP.txt"
mkdir -p "$RESULTS_DIR"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/durable-citus-bench.XXXXXX")
NODES=()   # the data directories of the cluster that runs
stop_nodes() {
    local d
    for d in "${NODES[@]}"; do stop_cluster "$d"; done
    NODES=()
}
cleanup() {
    stop_nodes
    rm -rf "$WORK"
}
trap cleanup EXIT

# The settings of every node, every run (bench/run.sh's, with shared_buffers for three
# servers on one machine).
cat >"$WORK/node.conf" <<'EOF'
shared_preload_libraries = 'citus,durable'
listen_addresses = '127.0.0.1'
citus.local_hostname = '127.0.0.1'
max_connections = 200
shared_buffers = 512MB
fsync = on
synchronous_commit = on
full_page_writes = on
checkpoint_timeout = 30min
max_wal_size = 4GB
min_wal_size = 1GB
durable.executor_workers = 0
max_worker_processes = 32
lc_messages = 'C'
timezone = 'UTC'
log_line_prefix = '%m [%p] %q%a '
log_min_messages = warning
EOF

# psql_on PORT ARGS...: psql to the bench database of a node, by TCP as the nodes reach
# one another.
psql_on() {
    local port=$1; shift
    psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -d bench "$@"
}

# setup_cluster K: a coordinator on CITUS_BENCH_PORT and K workers on the next ports,
# fresh, set up as test/citus/perl/CitusCluster.pm does.
setup_cluster() {
    local k=$1 i port dir
    for ((i = 0; i <= k; i++)); do
        port=$((CITUS_BENCH_PORT + i))
        dir="$WORK/k$k/node$i"
        mkdir -p "$dir"
        start_cluster "$dir/data" "$port" "$dir" "$WORK/node.conf"
        NODES+=("$dir/data")
        createdb -h 127.0.0.1 -p "$port" bench
        psql_on "$port" -c 'CREATE EXTENSION citus'
    done
    psql_on "$CITUS_BENCH_PORT" >/dev/null <<EOF
SELECT citus_set_coordinator_host('127.0.0.1', $CITUS_BENCH_PORT);
SELECT citus_add_node('127.0.0.1', $CITUS_BENCH_PORT + i) FROM generate_series(1, $k) i;
CREATE EXTENSION durable;
CREATE EXTENSION durable_citus;
CREATE EXTENSION dblink;
-- The worker logic of the cycle (bench/workers.sql's bench_decide).
CREATE FUNCTION bench_decide(task jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS \$\$
    SELECT CASE WHEN task->'history' @> '[{"eventType": "ActivityTaskCompleted"}]'
        THEN '[{"decisionType": "CompleteWorkflowExecution", "result": {"ok": true}}]'::jsonb
        ELSE '[{"decisionType": "ScheduleActivityTask", "activityId": "a1",
                "activityType": "noop", "input": {}, "startToCloseTimeoutSeconds": 60}]'::jsonb
    END
\$\$;
-- The cycle's start, run on a worker: a workflow id that this node owns (so that this
-- node's pollers get its tasks), started over the session's dblink connection on the
-- coordinator through durable_citus (routed) or on this node through durable (direct).
CREATE FUNCTION bench_start(routed boolean, queue text) RETURNS text LANGUAGE plpgsql AS \$\$
DECLARE
    id text;
    conn text := CASE WHEN routed THEN 'bench_coord' ELSE 'bench_self' END;
    r text;
BEGIN
    LOOP
        id := gen_random_uuid()::text;
        EXIT WHEN durable_citus.owner_group(durable_citus.route_key('default', id)) =
            (SELECT groupid FROM pg_dist_local_group);
    END LOOP;
    IF NOT coalesce(conn = ANY (dblink_get_connections()), false) THEN
        PERFORM dblink_connect(conn, format('host=127.0.0.1 dbname=bench port=%s',
            CASE WHEN routed THEN '$CITUS_BENCH_PORT' ELSE current_setting('port') END));
    END IF;
    SELECT x INTO r FROM dblink(conn, format('SELECT %s.start_workflow(%L, %L::jsonb, %L, %L)::text',
        CASE WHEN routed THEN 'durable_citus' ELSE 'durable' END,
        'bench_cycle', '{"n": 1}', id, queue)) AS t(x text);
    RETURN r;
END
\$\$;
EOF
    # Citus creates the extensions and functions on the workers; check one.
    psql_on "$((CITUS_BENCH_PORT + 1))" -A -t -c "SELECT 'bench_start'::regproc" >/dev/null ||
        die "bench_start was not created on the worker"
}

# tps_of PREFIX: script executions a second from pgbench's per-transaction logs, those
# that ended within DURATION seconds of the first one's start (bench/run.sh's count: a
# poll waiting for a task nobody makes any more, at the end, does not count).
tps_of() {
    cat "$1".* | awk -v d="$DURATION" '$3 ~ /^[0-9]+$/ {
            e = $5 + $6 / 1e6; n++; end[n] = e; st = e - $3 / 1e6
            if (n == 1 || st < t0) t0 = st }
        END { for (i = 1; i <= n; i++) if (end[i] <= t0 + d) c++
              printf "%.1f\n", c / d }'
}

# node_cpu_ms DATADIR: the CPU a node's processes used so far, in ms (the postmaster's
# own and that of its children, those ended included, from /proc; bench/run.sh's).
node_cpu_ms() {
    local pm pid sum=0 hz
    hz=$(getconf CLK_TCK)
    pm=$(head -n 1 "$1/postmaster.pid")
    for pid in "$pm" $(pgrep -P "$pm"); do
        sum=$((sum + $(awk '{print $14 + $15 + $16 + $17}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
    done
    echo $((sum * 1000 / hz))
}

# measure K NAME RUN: one run of a workload; appends its scripts/s (summed over the
# pgbench processes) to $WORK/k$K.NAME, and the CPU ms a script execution of the
# coordinator and of the workers (together) to $WORK/k$K.NAME.cpu.
measure() {
    local k=$1 name=$2 run=$3 i p total=0 t pids=() ports=() script opts=() clients=$CLIENTS
    for ((i = 0; i <= k; i++)); do psql_on "$((CITUS_BENCH_PORT + i))" -c CHECKPOINT; done
    case "$name" in
        start_direct) script=start_workflow.sql ;;
        start_routed) script=citus_start_routed.sql ;;
        cycle_direct) script=citus_cycle.sql opts=(-M prepared -D queue=bench -D routed=false) ;;
        cycle_routed) script=citus_cycle.sql opts=(-M prepared -D queue=bench -D routed=true) ;;
    esac
    if [ "$name" = start_routed ]; then
        ports=("$CITUS_BENCH_PORT") clients=$((CLIENTS * k))
    else
        for ((i = 1; i <= k; i++)); do ports+=("$((CITUS_BENCH_PORT + i))"); done
    fi
    mkdir -p "$WORK/log"
    rm -f "$WORK/log/"*
    local cpu0=() cpu1=() n
    for ((i = 0; i <= k; i++)); do cpu0+=("$(node_cpu_ms "${NODES[$i]}")"); done
    for p in "${ports[@]}"; do
        pgbench -n -h 127.0.0.1 -p "$p" -c "$clients" -j "$THREADS" -T "$DURATION" "${opts[@]}" \
            --log --log-prefix="$WORK/log/$p" -f "$ROOT/bench/$script" bench \
            >"$WORK/pgbench.$p.out" 2>&1 &
        pids+=($!)
    done
    for i in "${!pids[@]}"; do
        wait "${pids[$i]}" || { cat "$WORK/pgbench.${ports[$i]}.out"; die "pgbench failed on $name"; }
    done
    for ((i = 0; i <= k; i++)); do cpu1+=("$(node_cpu_ms "${NODES[$i]}")"); done
    for p in "${ports[@]}"; do
        t=$(tps_of "$WORK/log/$p")
        total=$(awk -v a="$total" -v b="$t" 'BEGIN { printf "%.1f", a + b }')
    done
    echo "$total" >>"$WORK/k$k.$name"
    # Scripts run in the whole pgbench run (its tail included), for the CPU a script.
    n=$(cat "$WORK/log/"* | awk '$3 ~ /^[0-9]+$/' | wc -l)
    awk -v n="$n" -v c="$((cpu1[0] - cpu0[0]))" \
        -v w="$(for ((i = 1; i <= k; i++)); do echo $((cpu1[i] - cpu0[i])); done | awk '{s += $1} END {print s}')" \
        'BEGIN { if (n > 0) printf "%.3f %.3f\n", c / n, w / n }' >>"$WORK/k$k.$name.cpu"
    log "$k worker(s), run $run/$RUNS: $name ${total}/s (${#ports[@]} pgbench, $clients clients each, ${DURATION}s)"
}

# median FILE [DIGITS]: the median of a file of numbers (mean of the middle two if
# even), with DIGITS decimals (1).
median() {
    LC_ALL=C sort -g "$1" | awk -v f="%.${2:-1}f\n" '{ a[NR] = $1 } END { m = int((NR + 1) / 2)
        if (NR % 2) printf f, a[m]; else printf f, (a[m] + a[m + 1]) / 2 }'
}

WORKLOADS_ORDER=(start_direct start_routed cycle_direct cycle_routed)
for k in $WORKERS; do
    log "$k worker(s): a coordinator on $CITUS_BENCH_PORT and workers on the next port(s)"
    setup_cluster "$k"
    for ((run = 1; run <= RUNS; run++)); do
        # Rounds alternate the order of direct and routed, so that a drift hits each alike.
        if ((run % 2)); then order=(0 1 2 3); else order=(1 0 3 2); fi
        for i in "${order[@]}"; do measure "$k" "${WORKLOADS_ORDER[$i]}" "$run"; done
    done
    # Workflows the cycles left open on each worker (none expected but those of the end).
    open=0
    for ((i = 1; i <= k; i++)); do
        open=$((open + $(psql_on "$((CITUS_BENCH_PORT + i))" -A -t -c \
            "SELECT count(*) FROM durable.runs WHERE workflow_type = 'bench_cycle' AND status = 'running'")))
    done
    echo "$open" >"$WORK/k$k.open"
    problems=$(cat "$WORK/k$k"/node*/server.log | grep -E 'WARNING:|ERROR:|FATAL:|PANIC:|TRAP:|terminated by signal' || true)
    echo "$problems" >"$WORK/k$k.problems"
    stop_nodes
done

{
    echo "durable_citus bench $STAMP (commit $BENCH_COMMIT): bench/citus.sh"
    echo "$(postgres --version); Citus $(awk -F"'" '/default_version/ {print $2}' "$(pg_config --sharedir)/extension/citus.control"); $(nproc) CPUs, shared by every node"
    echo "WORKERS=\"$WORKERS\" CLIENTS=$CLIENTS (a worker node) THREADS=$THREADS DURATION=$DURATION RUNS=$RUNS (median)"
    echo "every node: fsync on, synchronous_commit on, shared_buffers 512MB; pgbench over TCP 127.0.0.1"
    echo
    printf '%-8s %-13s %12s %12s %8s   %s\n' workers workload "direct /s" "routed /s" ratio "each run: direct | routed"
    for k in $WORKERS; do
        for w in start cycle; do
            d=$(median "$WORK/k$k.${w}_direct") r=$(median "$WORK/k$k.${w}_routed")
            printf '%-8s %-13s %12s %12s %8s   %s | %s\n' "$k" "$w" "$d" "$r" \
                "$(awk -v a="$r" -v b="$d" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')" \
                "$(paste -sd ' ' "$WORK/k$k.${w}_direct")" "$(paste -sd ' ' "$WORK/k$k.${w}_routed")"
        done
    done
    echo
    echo "CPU ms a script execution (median), coordinator + workers:"
    for k in $WORKERS; do
        for name in "${WORKLOADS_ORDER[@]}"; do
            printf '  %s worker(s) %-13s %s + %s ms\n' "$k" "$name" \
                "$(awk '{print $1}' "$WORK/k$k.$name.cpu" >"$WORK/tmp.1"; median "$WORK/tmp.1" 3)" \
                "$(awk '{print $2}' "$WORK/k$k.$name.cpu" >"$WORK/tmp.2"; median "$WORK/tmp.2" 3)"
        done
    done
    echo
    echo "start: starts/s; cycle: workflows/s through the 7-call activity cycle (1 start + 6 worker calls);"
    echo "direct: every call on a worker; routed: the start through the coordinator (durable_citus),"
    echo "the worker calls on the owning worker directly.  ratio = routed / direct."
    for k in $WORKERS; do
        for w in start cycle; do
            d=$(median "$WORK/k$k.${w}_direct") r=$(median "$WORK/k$k.${w}_routed")
            awk -v k="$k" -v w="$w" -v d="$d" -v r="$r" 'BEGIN { if (d > 0 && r > 0)
                printf "%s worker(s), %s: routing adds %.3f ms of this machine a routed call (1/routed - 1/direct)\n",
                    k, w, 1000 * (1 / r - 1 / d) }'
        done
    done
    for k in $WORKERS; do
        echo "$k worker(s): cycle workflows left running at the end: $(cat "$WORK/k$k.open");" \
            "server log lines with WARNING or worse: $(grep -c . "$WORK/k$k.problems" || true)"
        grep . "$WORK/k$k.problems" | head -n 5 | sed 's/^/  /' || true
    done
} | tee "$RESULT_FILE"
log "results: bench/results/citus-$STAMP.txt"

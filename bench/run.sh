#!/usr/bin/env bash
# bench/run.sh: `make bench`.
#
# Builds durable into ./tmp_install (see scripts/lib.sh), starts a throwaway cluster set
# up like the machine the peers were measured on (fsync and synchronous_commit on,
# shared_buffers = 1GB; bench/README.md says who the peers are), and runs each workload
# below with pgbench, one after another in the same run, next to its floor: plain
# PostgreSQL transactions of the same shape.  Then bench/latency.c measures the wake-up
# latency of waiting long polls.  Prints a table (script executions/s, p50/p99 latency, %
# of the floor) and writes it to bench/results/<timestamp>.txt.  See bench/README.md.
#
# Environment: CLIENTS (8), THREADS (2), DURATION seconds (20), RUNS (1; with more, each
# figure is the median of the runs, and rounds alternate the workloads), BENCH_PORT
# (54331), PGBENCH_OPTS (extra pgbench options for every workload), WORKLOADS (names to
# run, default all), LATENCY (1: run bench/latency.c after the workloads of each round;
# 0: skip it), LAT_WAITERS (4), LAT_RATE (50 starts a second), LAT_SECONDS (20),
# BENCH_SETUP_SQL (SQL run once after the setup).
#
# The workload list (WORKLOADS names it, or is empty) is bench/list_workflows.sh, run once
# after the rounds in a database of its own: 1,000,000 runs loaded, then the mean ms of
# list_workflows and count_workflows calls (LIST_CALLS each, default 20).
#
# The workload sqlwf (WORKLOADS names it, or is empty) is not a pgbench run of fixed
# duration: it registers a SQL workflow of three no-op SQL activities, turns on
# SQLWF_EXECUTORS (8) executor workers, starts SQLWF_COUNT (2000) workflows with pgbench as
# fast as 8 clients can, waits until all are closed, and reports workflows/s and
# activities/s from the first start to the last close, next to the pgbench floor of the
# same number of transactions (8 a workflow) measured just before it, and, for context,
# the fastest peer's figure for workflows of three no-op steps, from another machine
# (DBOS Transact, 212 workflows/s; bench/README.md).  The workload sqlwf_limited (the
# same, run when WORKLOADS names it or is empty) runs them on a queue whose decision and
# activity tasks have limits that never bind: what the executors' claim under limits costs.
#
# The workload sqlwf_steps (WORKLOADS names it, or is empty), each round: the cost of a
# step of a SQL workflow as it gets longer.  STEPS_TOTAL (2400) steps as SQL workflows of
# 3 and then of STEPS_LONG (100) sequential no-op SQL activities (bench_steps), all started
# at once and run by STEPS_EXECUTORS (SQLWF_EXECUTORS, 8) executors; wall ms a step (from
# the starts' commit to the last close, over the steps) and the executors' CPU ms a step
# of each, and the ratios long / 3 steps, which should be about 1.
#
# Long workloads, run only when WORKLOADS names them (once, in the first round), each
# reported in its own section below the table with its ratios to a rate measured in the
# same run (see "Long workloads" below to add one):
#   held_xmin     the activity cycle for HELD_NORMAL_SECONDS (60) normally, then for
#                 HELD_MINUTES (10) minutes while a REPEATABLE READ session that did a read
#                 holds its snapshot (and so the vacuum horizon); scripts/s of the first
#                 and the last minute (and every minute) as % of the normal rate, and the
#                 size of each durable table before, at the end, after the snapshot
#                 closed and VACUUM ran, and after HELD_RECOVERY_SECONDS (90) more of the
#                 activity cycle and another VACUUM (docs/performance.md "A held
#                 vacuum horizon").
#   fairness      tenant B's SQL workflow latency (start to wait_workflow's return, 2
#                 clients, FAIR_SECONDS (15) s each) with the executors idle, then while
#                 tenant A keeps FAIR_EXECUTORS (4) executors busy with a backlog of
#                 FAIR_BACKLOG (400) workflows of a FAIR_SLOW (0.5) s SQL activity.
#   key_fairness  tenant B's schedule-to-start of KEY_FAIRNESS_B (100) first decision
#                 tasks, started over KEY_FAIRNESS_SPREAD (5) s on a queue polled by
#                 KEY_FAIRNESS_POLLERS (8) workers that complete each task at once: on
#                 an empty queue, behind tenant A's KEY_FAIRNESS_BACKLOG (100,000) tasks
#                 with concurrency keys 'A' and 'B', and behind them without keys (the
#                 pollers stop KEY_FAIRNESS_WAIT (15) s after B's last start); in a
#                 database of its own, bench_keys.
#   million_open  the activity cycle (OPEN_ROUNDS (2) times DURATION s) with OPEN_SMALL
#                 (1,000) open workflows started with delay => '1 day', then with
#                 OPEN_LARGE (1,000,000): the mean of the second rates as % of the first.
#   ts_activity   one-activity workflows through the TypeScript SDK (bench/ts_activity.js:
#                 8 Workers in one Node process, clients starting a workflow and waiting
#                 for it, for DURATION s with each number of clients in TS_CLIENTS
#                 ("8 32")) as % of the activity cycle, which it runs with queue_floor;
#                 then ms a step of 3-step and 100-step workflows.  Needs node and npm.
#
# `bash bench/run.sh explain` instead loads 100,000 closed and some running workflows
# (bench/explain.sql) and writes EXPLAIN (ANALYZE, BUFFERS) of every KeptPlan of src/*.c,
# read from the sources by bench/extract_plans.py, to bench/EXPLAIN.md.
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
WORKLOADS=${WORKLOADS:-}
TIMERS=${TIMERS:-1}
LATENCY=${LATENCY:-1}
LAT_WAITERS=${LAT_WAITERS:-4}
LAT_RATE=${LAT_RATE:-50}
LAT_SECONDS=${LAT_SECONDS:-20}
SQLWF_COUNT=${SQLWF_COUNT:-2000}
SQLWF_EXECUTORS=${SQLWF_EXECUTORS:-8}
STEPS_TOTAL=${STEPS_TOTAL:-2400}
STEPS_LONG=${STEPS_LONG:-100}
STEPS_EXECUTORS=${STEPS_EXECUTORS:-$SQLWF_EXECUTORS}
HELD_NORMAL_SECONDS=${HELD_NORMAL_SECONDS:-60}
HELD_MINUTES=${HELD_MINUTES:-10}
HELD_RECOVERY_SECONDS=${HELD_RECOVERY_SECONDS:-90}
OPEN_SMALL=${OPEN_SMALL:-1000}
OPEN_LARGE=${OPEN_LARGE:-1000000}
OPEN_ROUNDS=${OPEN_ROUNDS:-2}
FAIR_EXECUTORS=${FAIR_EXECUTORS:-4}
FAIR_BACKLOG=${FAIR_BACKLOG:-400}
FAIR_SLOW=${FAIR_SLOW:-0.5}
FAIR_SECONDS=${FAIR_SECONDS:-15}
KEY_FAIRNESS_BACKLOG=${KEY_FAIRNESS_BACKLOG:-100000}
KEY_FAIRNESS_B=${KEY_FAIRNESS_B:-100}
KEY_FAIRNESS_POLLERS=${KEY_FAIRNESS_POLLERS:-8}
KEY_FAIRNESS_SPREAD=${KEY_FAIRNESS_SPREAD:-5}
KEY_FAIRNESS_WAIT=${KEY_FAIRNESS_WAIT:-15}
TS_CLIENTS=${TS_CLIENTS:-8 32}
MODE=${1:-bench}
# ts_activity is compared with the activity cycle and its floor: run them too.
if grep -qw ts_activity <<<"$WORKLOADS"; then WORKLOADS="$WORKLOADS queue_floor activity"; fi
case "$MODE" in bench | explain) ;; *) echo "usage: bench/run.sh [explain]" >&2; exit 2 ;; esac
export CLIENTS THREADS DURATION RUNS BENCH_PORT PGBENCH_OPTS WORKLOADS LATENCY TIMERS \
    LAT_WAITERS LAT_RATE LAT_SECONDS SQLWF_COUNT SQLWF_EXECUTORS STEPS_TOTAL STEPS_LONG \
    STEPS_EXECUTORS HELD_NORMAL_SECONDS HELD_MINUTES HELD_RECOVERY_SECONDS OPEN_SMALL \
    OPEN_LARGE FAIR_EXECUTORS FAIR_BACKLOG FAIR_SLOW FAIR_SECONDS KEY_FAIRNESS_BACKLOG KEY_FAIRNESS_B \
    KEY_FAIRNESS_POLLERS KEY_FAIRNESS_SPREAD KEY_FAIRNESS_WAIT TS_CLIENTS BENCH_SETUP_SQL

if is_root; then
    ensure_packages
    # The run as postgres works on a copy that is removed afterwards: it writes its
    # results into a directory handed over here, and we copy them into the tree.
    BENCH_COMMIT=${BENCH_COMMIT:-$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)}
    handoff=$(mktemp -d "${TMPDIR:-/tmp}/durable-bench-results.XXXXXX")
    chown postgres: "$handoff"
    rc=0
    BENCH_COMMIT=$BENCH_COMMIT BENCH_RESULTS_DIR=$handoff rerun_as_postgres bench/run.sh "$MODE" ||
        rc=$?
    mkdir -p "$ROOT/bench/results"
    if compgen -G "$handoff/*.txt" >/dev/null; then
        cp "$handoff"/*.txt "$ROOT/bench/results/"
        chown "$(stat -c %u:%g "$ROOT")" "$ROOT/bench/results" "$ROOT/bench/results"/*.txt
    fi
    if [ -f "$handoff/EXPLAIN.md" ]; then
        cp "$handoff/EXPLAIN.md" "$ROOT/bench/EXPLAIN.md"
        chown "$(stat -c %u:%g "$ROOT")" "$ROOT/bench/EXPLAIN.md"
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
# Executor workers run SQL workflows; only the sqlwf workload turns them on (a reload),
# so that they sit out the other workloads.  Room for them, the launcher and the timer
# workers.
durable.executor_workers = 0
max_worker_processes = 32
EOF
# BENCH_CONF_EXTRA: a file of further settings, e.g. to measure one with and without.
if [ -n "${BENCH_CONF_EXTRA:-}" ]; then
    cat "$BENCH_CONF_EXTRA" >>"$WORK/bench.conf" || die "cannot read BENCH_CONF_EXTRA $BENCH_CONF_EXTRA"
fi
log "starting a cluster in $WORK (fsync on, synchronous_commit on, shared_buffers 1GB)"
start_cluster "$WORK/data" "$BENCH_PORT" "$WORK" "$WORK/bench.conf"
export PGHOST="$WORK" PGPORT="$BENCH_PORT" PGDATABASE=bench
createdb bench
psql -X -q -v ON_ERROR_STOP=1 <<'EOF'
CREATE EXTENSION durable;
CREATE TABLE bench_floor (id bigserial PRIMARY KEY, k text NOT NULL, v jsonb);
CREATE INDEX ON bench_floor (k);
-- The job table of queue_floor (floor_queue.sql): a plain queue, claimed in id order
-- through a partial index on the ready jobs.
CREATE TABLE bench_queue (id bigserial PRIMARY KEY, kind "char" NOT NULL,
    state text NOT NULL DEFAULT 'ready', payload jsonb, claimed_at timestamptz,
    done_at timestamptz);
CREATE INDEX bench_queue_ready ON bench_queue (kind, id) WHERE state = 'ready';
EOF

# The workers (bench/workers.sql), on the queues of the sqlwf workloads.
psql -X -q -v ON_ERROR_STOP=1 -f "$ROOT/bench/workers.sql" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<'EOF'
SELECT durable.register_workflow('bench_sqlwf', 'bench_sqlwf(jsonb)', q, run_as => 'bench_app'),
       durable.register_activity('bench_noop', 'bench_noop(jsonb)', q, run_as => 'bench_app')
  FROM unnest(ARRAY['sqlwf', 'sqlwf_limited']) q;
-- sqlwf_limited: the same on a queue whose decision and activity tasks have limits
-- that never bind, which the executors' claims pass through.
SELECT durable.set_task_queue_limits('sqlwf_limited', k, max_concurrent => 10000,
           rate => 1000000, burst => 1000000)
  FROM unnest(ARRAY['decision', 'activity']) k;
SELECT durable.register_workflow('bench_steps', 'bench_steps(jsonb)', 'sqlwf', run_as => 'bench_app');
EOF
# BENCH_SETUP_SQL: SQL run once after the setup, e.g. to measure the activity cycle with
# another queue paused (docs/task-queues.md "Pausing a queue").
if [ -n "${BENCH_SETUP_SQL:-}" ]; then
    psql -X -q -v ON_ERROR_STOP=1 -c "$BENCH_SETUP_SQL" >/dev/null
fi

# Anything the server complained about (WARNING and worse, crashes).
# (Executors stopped by the sqlwf workload's `executors 0` say FATAL as they go: expected.)
server_problems() {
    grep -E 'WARNING:|ERROR:|FATAL:|PANIC:|TRAP:|terminated by signal' "$WORK/server.log" |
        grep -v 'terminating background worker "durable executor" due to administrator command' |
        # bench/latency.c cancels the polls still waiting when it ends: expected.
        grep -v 'durable-latency ERROR:  canceling statement due to user request' |
        # held_xmin's snapshot session is cancelled when its workload is over: expected.
        grep -v 'durable-held-xmin ERROR:  canceling statement due to user request' |
        # ts_activity's workers cancel their waiting polls when they shut down: expected.
        grep -v 'durable-ts-bench ERROR:  canceling statement due to user request' |
        # key_fairness drops its database bench_keys, which stops that database's timer
        # worker and any autovacuum of it: expected.
        grep -v 'FATAL:  terminating background worker "durable timer worker" due to administrator command' |
        grep -v 'FATAL:  terminating autovacuum process due to administrator command' ||
        true
}

if [ "$MODE" = explain ]; then
    # EXPLAIN.md: the plans of every kept statement over 100,000 closed workflows.  The
    # statements come from src/*.c through bench/extract_plans.py, which fails (and so
    # this run) on anything in a KeptPlan it cannot read.
    log "extracting the kept plans of src/*.c (bench/extract_plans.py)"
    python3 "$ROOT/bench/extract_plans.py" "$ROOT/src" >"$WORK/plans.sql" ||
        die "bench/extract_plans.py failed"
    # (a heading each: the utility statements, LOCK, are shown but not prepared)
    nplans=$(grep -c "^\\\\echo '### " "$WORK/plans.sql")
    log "loading workflows and explaining $nplans statements (bench/explain.sql)"
    {
        echo "# EXPLAIN (ANALYZE, BUFFERS) of durable's kept statements"
        echo
        echo "Generated by \`bash bench/run.sh explain\` (as root: it re-runs as postgres) from"
        echo "src/*.c (every KeptPlan, $nplans statements, read by bench/extract_plans.py) and the"
        echo "data of bench/explain.sql, at commit $BENCH_COMMIT on $(date -u +%Y-%m-%d),"
        echo "$(postgres --version).  Generic plans (plan_cache_mode = force_generic_plan), as"
        echo "the engine runs them; statements that write or lock ran in BEGIN ... ROLLBACK."
        echo "Do not edit by hand: regenerate it."
        echo
        psql -X -q -v ON_ERROR_STOP=1 -v plans="$WORK/plans.sql" -P pager=off \
            -f "$ROOT/bench/explain.sql" 2>&1
    } >"$WORK/EXPLAIN.md" || { tail -n 30 "$WORK/EXPLAIN.md"; die "bench/explain.sql failed"; }
    explained=$(grep -c '^### ' "$WORK/EXPLAIN.md" || true)
    [ "$explained" = "$nplans" ] || die "$nplans statements extracted but $explained explained"
    # Sequential scans and sorts, each under the name of its statement.
    seqscans=$(grep -c 'Seq Scan' "$WORK/EXPLAIN.md" || true)
    # (Written aside first: awk must not read the lines it appends.)
    {
        echo
        echo "## Summary"
        echo
        echo "Plan lines with a sequential scan: $seqscans.  Every Seq Scan and Sort line,"
        echo "under its file and statement:"
        echo
        awk '/^## src\// { file = substr($0, 4) }
             /^### / { plan = substr($0, 5) }
             /Seq Scan|-> *Sort|^Sort|Sort Method/ {
                 sub(/^ */, ""); printf "    %s %s: %s\n", file, plan, $0 }' "$WORK/EXPLAIN.md"
    } >"$WORK/summary.md"
    cat "$WORK/summary.md" >>"$WORK/EXPLAIN.md"
    problems=$(server_problems)
    [ -z "$problems" ] || { echo "server log:"; head -n 20 <<<"$problems"; }
    cp "$WORK/EXPLAIN.md" "$RESULTS_DIR/EXPLAIN.md"
    [ -n "${BENCH_RESULTS_DIR:-}" ] || mv "$RESULTS_DIR/EXPLAIN.md" "$ROOT/bench/EXPLAIN.md"
    log "$nplans statements, $seqscans plan line(s) with a Seq Scan; written to bench/EXPLAIN.md"
    exit 0
fi

# The workloads, in the order they run.
#   workload NAME SCRIPT [SETUP_SQL] [FLOOR] [OPTS] [COUNT_SQL]
#   SCRIPT     a pgbench script, relative to bench/
#   SETUP_SQL  run with psql before each of its runs (e.g. to pre-fill a queue)
#   FLOOR      the NAME of the workload this one is compared with (none: it is a floor)
#   OPTS       pgbench options of this workload only (e.g. -M prepared)
#   COUNT_SQL  a query returning one row "workflows activities" (totals so far), read
#              before and after each run: the differences over DURATION are reported as
#              workflows/s and activities/s
NAMES=() SCRIPTS=() SETUPS=() FLOORS=() OPTS=() COUNTS=()
workload() {
    if [ -n "$WORKLOADS" ] && ! grep -qw -- "$1" <<<"$WORKLOADS"; then return 0; fi
    NAMES+=("$1") SCRIPTS+=("$2") SETUPS+=("${3:-}") FLOORS+=("${4:-}") OPTS+=("${5:-}")
    COUNTS+=("${6:-}")
}
CYCLE_COUNTS="SELECT (SELECT count(*) FROM durable.runs WHERE workflow_type = 'bench_cycle'
    AND status = 'completed'), (SELECT count(*) FROM durable.activity_attempt_log
    WHERE activity_type = 'noop' AND outcome = 'completed')"
workload floor floor_insert.sql
workload start start_workflow.sql "" floor
# The activity cycle and its floor: 7 transactions a script execution each.
workload queue_floor floor_queue.sql "" "" "-M prepared"
workload activity activity_cycle.sql "" queue_floor "-M prepared -D queue=bench" "$CYCLE_COUNTS"
# The same on a queue whose decision and activity tasks have limits that never bind (a
# concurrency limit above the clients, a rate limit above any rate): what a limit costs
# (docs/task-queues.md "Limits").
LIMITS_SQL="SELECT durable.set_task_queue_limits('bench_limited', k, max_concurrent => 10000,
    rate => 1000000, burst => 1000000) FROM unnest(ARRAY['decision', 'activity']) k"
workload activity_limited activity_cycle.sql "$LIMITS_SQL" queue_floor \
    "-M prepared -D queue=bench_limited" "$CYCLE_COUNTS"
# The same workflow with eager dispatch: 4 transactions a script execution.
workload activity_eager activity_eager.sql "" queue_floor "-M prepared" "$CYCLE_COUNTS"
# A floor must run before the workloads compared with it (it may not be left out).
for i in "${!NAMES[@]}"; do
    f=${FLOORS[$i]}
    if [ -n "$f" ] && ! printf '%s\n' "${NAMES[@]}" | grep -qx -- "$f"; then
        FLOORS[$i]=""
    fi
done

# bench/latency.c, compiled against the system's libpq (libpq-dev).
if [ "$LATENCY" = 1 ]; then
    gcc -O2 -Wall -Wextra -pthread -I"$("$PG_CONFIG" --includedir)" -o "$WORK/latency" \
        "$ROOT/bench/latency.c" -L"$("$PG_CONFIG" --libdir)" -lpq ||
        die "compiling bench/latency.c failed (is libpq-dev installed?)"
fi

# The commits of the bench database so far, and the transaction ids assigned (each
# transaction that wrote took one): their differences over a run, divided by the
# workflows it completed, are its commits and write transactions a workflow.
XACTS_SQL="SELECT xact_commit, txid_current() FROM pg_stat_database WHERE datname = current_database()"
# The WAL written so far, in bytes (full-page images after the run's CHECKPOINT included).
WAL_SQL="SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')"

# server_cpu_ms: the CPU the bench cluster's processes used so far, in ms (the
# postmaster's own and that of its children, those ended included, from /proc).
server_cpu_ms() {
    local pm pid sum=0 hz
    hz=$(getconf CLK_TCK)
    pm=$(head -n 1 "$WORK/data/postmaster.pid")
    for pid in "$pm" $(pgrep -P "$pm"); do
        sum=$((sum + $(awk '{print $14 + $15 + $16 + $17}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
    done
    echo $((sum * 1000 / hz))
}

# client_cpu_ms: the CPU this shell's ended children used so far, in ms (bash's times,
# run in this shell: in a $(...) subshell it would count the subshell's children).
client_cpu_ms() {
    times >"$WORK/times.out"
    awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/)
        printf "%d\n", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1000 }' "$WORK/times.out"
}

# measure I RUN: one pgbench run of workload I; appends "tps p50 p99 failed" to
# $WORK/NAME.runs (and "workflows/s activities/s" to $WORK/NAME.counts with a
# COUNT_SQL).  Per-transaction logs give the latencies: column 3 is the latency of one
# script execution in microseconds (a failed one has "failed" there and is left out).
measure() {
    local i=$1 run=$2 name=${NAMES[$1]} prefix out tps failed before="" cpu_server cpu_client \
        xacts_before xacts_after
    prefix="$WORK/log/$name.$run"
    out="$WORK/$name.$run.out"
    mkdir -p "$WORK/log"
    if [ -n "${SETUPS[$i]}" ]; then psql -X -q -v ON_ERROR_STOP=1 -c "${SETUPS[$i]}"; fi
    psql -X -q -c CHECKPOINT   # start every run from a clean slate of dirty buffers
    cpu_server=$(server_cpu_ms)
    client_cpu_ms >"$WORK/cpu_client.out"
    cpu_client=$(cat "$WORK/cpu_client.out")
    if [ -n "${COUNTS[$i]}" ]; then
        before=$(psql -X -q -A -t -F ' ' -c "${COUNTS[$i]}")
        xacts_before=$(psql -X -q -A -t -F ' ' -c "$XACTS_SQL")
    fi
    log "run $run/$RUNS: $name ($CLIENTS clients, $THREADS threads, ${DURATION}s)"
    # shellcheck disable=SC2086  # PGBENCH_OPTS and OPTS are lists of options
    pgbench -n -c "$CLIENTS" -j "$THREADS" -T "$DURATION" $PGBENCH_OPTS ${OPTS[$i]} \
        --log --log-prefix="$prefix" -f "$ROOT/bench/${SCRIPTS[$i]}" >"$out" 2>&1 ||
        { cat "$out"; tail -n 20 "$WORK/server.log"; die "pgbench failed on $name"; }
    client_cpu_ms >"$WORK/cpu_client.out"
    cpu_server=$(($(server_cpu_ms) - cpu_server)) cpu_client=$(($(cat "$WORK/cpu_client.out") - cpu_client))
    # The server's CPU a script execution (*.scpu, ms): its backends' and background
    # workers' CPU over the run, over the script executions that succeeded in it.
    cat "$prefix".* | awk -v cs="$cpu_server" '$3 ~ /^[0-9]+$/ { n++ }
        END { if (n > 0) printf "%.3f\n", cs / n }' >>"$WORK/$name.scpu"
    if [ -n "${COUNTS[$i]}" ]; then
        # Server and pgbench CPU a workflow completed (*.cpu: "server_ms client_ms").
        sleep 1   # the pgbench sessions' backends report their commits as they exit
        xacts_after=$(psql -X -q -A -t -F ' ' -c "$XACTS_SQL")
        psql -X -q -A -t -F ' ' -c "${COUNTS[$i]}" |
            awk -v b="$before" -v d="$DURATION" -v cs="$cpu_server" -v cc="$cpu_client" \
                -v xb="$xacts_before" -v xa="$xacts_after" -v xacts="$WORK/$name.xacts" \
                -v counts="$WORK/$name.counts" -v cpu="$WORK/$name.cpu" '{ split(b, x, " ")
                printf "%.1f %.1f\n", ($1 - x[1]) / d, ($2 - x[2]) / d >>counts
                if ($1 > x[1]) printf "%.3f %.3f\n", cs / ($1 - x[1]), cc / ($1 - x[1]) >>cpu
                split(xb, p, " "); split(xa, q, " ")
                if ($1 > x[1]) printf "%.2f %.2f\n", (q[1] - p[1]) / ($1 - x[1]), (q[2] - p[2]) / ($1 - x[1]) >>xacts }'
    fi
    tps=$(awk '/^tps = / {print $3; exit}' "$out")
    failed=$(awk -F'[: ]+' '/^number of failed transactions/ {print $5; exit}' "$out")
    [ -n "$tps" ] || { cat "$out"; die "no tps in pgbench's output for $name"; }
    # Script executions a second: those that ended within DURATION seconds of the
    # first one's start (columns 5 and 6: when it ended), over DURATION.  pgbench's own
    # tps divides by the time until the last client stopped, which for the activity
    # cycle includes a tail: a client whose poll waits for a task that nobody will make
    # any more, the other clients having stopped, sits out its wait (see bench/README.md, "Reading the table").
    tps=$(cat "$prefix".* | awk -v d="$DURATION" '$3 ~ /^[0-9]+$/ {
            e = $5 + $6 / 1e6; n++; end[n] = e; st = e - $3 / 1e6
            if (n == 1 || st < t0) t0 = st }
        END { for (i = 1; i <= n; i++) if (end[i] <= t0 + d) c++
              printf "%.1f\n", c / d }')
    cat "$prefix".* | awk '$3 ~ /^[0-9]+$/ {print $3}' | LC_ALL=C sort -n |
        awk -v tps="$tps" -v failed="${failed:-0}" '
            { a[NR] = $1 }
            END {
                if (NR == 0) { print tps, "nan", "nan", failed; exit }
                i50 = int((NR * 50 + 99) / 100); i99 = int((NR * 99 + 99) / 100)
                printf "%s %.3f %.3f %s\n", tps, a[i50] / 1000, a[i99] / 1000, failed
            }' >>"$WORK/$name.runs"
    log "$name: $tps scripts/s in the first ${DURATION}s; pgbench: $(awk '/^tps = / {print $3; exit}' "$out") tps, $(awk '/^duration:/ {print $2; exit}' "$out") s"
    rm -f "$prefix".*
}

# latency RUN: one run of bench/latency.c; appends "p50 p99 max call_p50 call_p99
# call_max missing" (ms) to $WORK/latency.runs.
latency() {
    local run=$1 out="$WORK/latency.$1.out" rc=0
    psql -X -q -c CHECKPOINT
    log "run $run/$RUNS: latency ($LAT_WAITERS waiting polls, $LAT_RATE starts/s for ${LAT_SECONDS}s)"
    "$WORK/latency" -w "$LAT_WAITERS" -r "$LAT_RATE" -s "$LAT_SECONDS" -q latency >"$out" 2>&1 ||
        rc=$?
    cat "$out"
    grep -q '^RESULT ' "$out" || { tail -n 20 "$WORK/server.log"; die "latency failed (exit $rc)"; }
    sed -n 's/^RESULT //p' "$out" | tr ' ' '\n' | awk -F= '{ v[$1] = $2 }
        END { print v["p50"], v["p99"], v["max"], v["call_p50"], v["call_p99"],
              v["call_max"], v["missing"] }' >>"$WORK/latency.runs"
}

# timers RUN RATE: timer lateness (fire time - due time) of RATE timers a second for
# LAT_SECONDS, fired by the background worker; appends "rate p50 p99 max n missing" (ms)
# to $WORK/timers.runs.  Each timer is a workflow's first decision task, due one second
# after its start: WorkflowExecutionStarted's time + 1 s is the due time, and
# DecisionTaskScheduled's time is when the worker fired it.
timers() {
    local run=$1 rate=$2 wtype="lateness_${1}_${2}" out="$WORK/timers.$1.$2.out"
    psql -X -q -c CHECKPOINT
    log "run $run/$RUNS: timer lateness at $rate timers/s for ${LAT_SECONDS}s"
    pgbench -n -M prepared -c 4 -j 2 -T "$LAT_SECONDS" -R "$rate" -D wtype="$wtype" \
        -f "$ROOT/bench/timer_delay.sql" >"$out" 2>&1 ||
        { cat "$out"; die "pgbench failed on timers"; }
    sleep 3   # the last timers fall due
    psql -X -q -A -t -F ' ' -v wtype="$wtype" -v rate="$rate" <<'SQL' >>"$WORK/timers.runs"
SELECT :rate,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2),
       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 2),
       round(max(ms)::numeric, 2), count(ms), count(*) - count(ms)
  FROM (SELECT extract(epoch FROM s.event_time - (w.event_time + interval '1 second')) * 1000 AS ms
          FROM durable.runs r
          JOIN durable.history w ON w.run_id = r.run_id AND w.event_id = 1
          LEFT JOIN durable.history s ON s.run_id = r.run_id AND s.event_id = 2
         WHERE r.workflow_type = :'wtype') x;
SQL
}

# worker_cpu: CPU time (ms) the timer worker of the bench database used over 10 idle
# seconds: it sleeps on its latch between timers, so this should be about 0.
worker_cpu() {
    local pid before after tck
    pid=$(psql -X -q -A -t -c "SELECT pid FROM pg_stat_activity
        WHERE backend_type = 'durable timer worker' AND datname = current_database()")
    [ -n "$pid" ] || { echo "none"; return 0; }
    tck=$(getconf CLK_TCK)
    before=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    sleep 10
    after=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    echo $(( (after - before) * 1000 / tck ))
}

# executors N: set durable.executor_workers to N (a reload) and wait until the launcher
# has started or stopped them.
executors() {
    local n=$1 i have=""
    psql -X -q -v ON_ERROR_STOP=1 -c "ALTER SYSTEM SET durable.executor_workers = $n" \
        -c "SELECT pg_reload_conf()" >/dev/null
    for ((i = 0; i < 300; i++)); do
        have=$(psql -X -q -A -t -c "SELECT count(*) FROM pg_stat_activity
            WHERE backend_type = 'durable executor' AND datname = current_database()")
        [ "$have" = "$n" ] && return 0
        sleep 0.1
    done
    die "durable.executor_workers = $n: $have executor(s) running after 30 s"
}

# sqlwf RUN [NAME QUEUE]: the floor, then SQLWF_COUNT SQL workflows started by 8 pgbench
# clients on QUEUE (sqlwf) and run by SQLWF_EXECUTORS executor workers.  Appends
# "workflows/s activities/s seconds floor_tps not_completed" to $WORK/NAME.runs (NAME:
# sqlwf).
sqlwf() {
    local run=$1 name=${2:-sqlwf} queue=${3:-sqlwf}
    local out="$WORK/$name.$1.out" n=$((SQLWF_COUNT / 8 * 8)) floor_tps marker i done_n=0 xid0
    local wal0 floor_wal
    # The floor: as many one-row INSERT transactions as the workflows take (start, 4
    # decision tasks, 3 activities: 8 each), by 8 clients.
    psql -X -q -c CHECKPOINT
    log "run $run/$RUNS: $name floor ($((n * 8)) INSERT transactions, 8 clients)"
    wal0=$(psql -X -q -A -t -c "$WAL_SQL")
    pgbench -n -c 8 -j "$THREADS" -t "$n" -f "$ROOT/bench/floor_insert.sql" \
        >"$WORK/${name}_floor.$run.out" 2>&1 ||
        { cat "$WORK/${name}_floor.$run.out"; die "pgbench failed on the $name floor"; }
    floor_wal=$(awk -v a="$(psql -X -q -A -t -c "$WAL_SQL")" -v b="$wal0" -v n="$n" \
        'BEGIN { printf "%.0f", (a - b) / n }')
    floor_tps=$(awk '/^tps = / {print $3; exit}' "$WORK/${name}_floor.$run.out")
    executors "$SQLWF_EXECUTORS"
    psql -X -q -c CHECKPOINT
    marker=$(psql -X -q -A -t -c "SELECT clock_timestamp()")
    xid0=$(psql -X -q -A -t -c "SELECT txid_current()")
    wal0=$(psql -X -q -A -t -c "$WAL_SQL")
    log "run $run/$RUNS: $name ($n SQL workflows started by 8 clients, $SQLWF_EXECUTORS executors)"
    pgbench -n -M prepared -c 8 -j "$THREADS" -t $((n / 8)) -D queue="$queue" \
        -f "$ROOT/bench/sqlwf_start.sql" >"$out" 2>&1 || { cat "$out"; die "pgbench failed on $name"; }
    for ((i = 0; i < 1200; i++)); do
        done_n=$(psql -X -q -A -t -v marker="$marker" <<'SQL'
SELECT count(*) FROM durable.runs
 WHERE workflow_type = 'bench_sqlwf' AND start_time >= :'marker' AND status <> 'running';
SQL
)
        [ "$done_n" -ge "$n" ] && break
        sleep 0.1
    done
    # Transaction ids a workflow: those assigned meanwhile (the polling loop above
    # reads only).  Not commits: an executor runs a run's steps as subtransactions of
    # one transaction (docs/sql-workflows.md "Transactions"), each of which that writes
    # takes an id.
    # And the WAL a workflow, next to that of the floor's 8 transactions.
    awk -v a="$(psql -X -q -A -t -c "SELECT txid_current()")" -v b="$xid0" -v n="$n" \
        -v wa="$(psql -X -q -A -t -c "$WAL_SQL")" -v wb="$wal0" -v fw="$floor_wal" \
        'BEGIN { printf "%.2f %.0f %s\n", (a - b - 1) / n, (wa - wb) / n, fw }' >>"$WORK/$name.xacts"
    psql -X -q -A -t -F ' ' -v marker="$marker" -v floor="$floor_tps" -v n="$n" \
        <<'SQL' >>"$WORK/$name.runs"
SELECT round(count(*) / secs, 1), round(acts / secs, 1), round(secs, 2), :floor,
       :n - count(*) FILTER (WHERE status = 'completed')
  FROM (SELECT r.status,
               extract(epoch FROM max(r.close_time) OVER () - min(r.start_time) OVER ()) AS secs,
               (SELECT count(*) FROM durable.activity_attempt_log l JOIN durable.runs r2 USING (run_id)
                 WHERE r2.workflow_type = 'bench_sqlwf' AND r2.start_time >= :'marker'
                   AND l.outcome = 'completed') AS acts
          FROM durable.runs r
         WHERE r.workflow_type = 'bench_sqlwf' AND r.start_time >= :'marker') x
 GROUP BY secs, acts;
SQL
    executors 0
    log "$name: $(tail -n 1 "$WORK/$name.runs" | awk '{printf "%s workflows/s, %s activities/s over %s s; floor %s tps; %s not completed", $1, $2, $3, $4, $5}')"
}

# executor_cpu: CPU time (ms, user and system) the executors of the bench database
# have used so far.
executor_cpu() {
    local pid tck total=0
    tck=$(getconf CLK_TCK)
    for pid in $(psql -X -q -A -t -c "SELECT pid FROM pg_stat_activity
        WHERE backend_type = 'durable executor' AND datname = current_database()"); do
        total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
    done
    echo $((total * 1000 / tck))
}

# steps_run RUN N: STEPS_TOTAL / N workflows of N no-op SQL activities (bench_steps),
# started in one transaction, run by the executors (already on); appends "N workflows
# ms_a_step seconds not_completed executor_cpu_ms_a_step" to $WORK/sqlwf_steps.runs.  The
# time runs from the commit of the starts (the executors see none of them before) to the
# last close.
steps_run() {
    local run=$1 steps=$2 n=$(( (STEPS_TOTAL + $2 - 1) / $2 )) marker i done_n=0 cpu0 cpu1
    psql -X -q -c CHECKPOINT
    log "run $run/$RUNS: sqlwf_steps ($n SQL workflows of $steps steps, $STEPS_EXECUTORS executors)"
    cpu0=$(executor_cpu)
    marker=$(psql -X -q -A -t -v ON_ERROR_STOP=1 -c "SELECT count(durable.start_workflow('bench_steps',
        jsonb_build_object('n', $steps), 'steps-$run-$steps-' || i, task_queue => 'sqlwf'))
        FROM generate_series(1, $n) i" -c "SELECT clock_timestamp()" | tail -n 1)
    for ((i = 0; i < 6000; i++)); do
        done_n=$(psql -X -q -A -t -v prefix="steps-$run-$steps-" <<'SQL'
SELECT count(*) FROM durable.runs
 WHERE workflow_id LIKE :'prefix' || '%' AND status <> 'running';
SQL
)
        [ "$done_n" -ge "$n" ] && break
        sleep 0.1
    done
    cpu1=$(executor_cpu)
    psql -X -q -A -t -F ' ' -v marker="$marker" -v n="$n" -v steps="$steps" \
        -v cpu="$((cpu1 - cpu0))" -v prefix="steps-$run-$steps-" <<'SQL' >>"$WORK/sqlwf_steps.runs"
SELECT :steps, :n, round((1000 * secs / (:n * :steps))::numeric, 3), round(secs::numeric, 2),
       :n - count(*) FILTER (WHERE status = 'completed'), round(:cpu::numeric / (:n * :steps), 3)
  FROM (SELECT r.status,
               extract(epoch FROM max(r.close_time) OVER () - :'marker'::timestamptz) AS secs
          FROM durable.runs r
         WHERE r.workflow_id LIKE :'prefix' || '%') x
 GROUP BY secs;
SQL
    log "sqlwf_steps: $(tail -n 1 "$WORK/sqlwf_steps.runs" | awk '{printf "%s workflows of %s steps: %s ms a step (executors CPU %s ms) over %s s; %s not completed", $2, $1, $3, $6, $4, $5}')"
}

# sqlwf_steps RUN: the cost of a step of 3-step and of STEPS_LONG-step (100) SQL workflows.
sqlwf_steps() {
    executors "$STEPS_EXECUTORS"
    steps_run "$1" 3
    steps_run "$1" "$STEPS_LONG"
    executors 0
}

# ---- Long workloads -------------------------------------------------------------------
# Each is a shell function NAME RUN that runs only when WORKLOADS names it, in the first
# round only, and writes the lines of its section of the report to $WORK/NAME.report
# (every figure in it a ratio to a rate measured in the same run).  To add one: write the
# function and add its name to LONG_WORKLOADS.
LONG_WORKLOADS="held_xmin million_open fairness key_fairness"

# cycle_rate TAG SECONDS: the activity cycle (activity_cycle.sql, CLIENTS clients,
# -M prepared) for SECONDS; prints its scripts/s (scripts that ended within SECONDS of
# the first one's start, as measure() counts them) and keeps pgbench's per-script log
# in $WORK/log/TAG.* for minute_rates.
cycle_rate() {
    local tag=$1 secs=$2 out="$WORK/$1.out"
    mkdir -p "$WORK/log"
    # shellcheck disable=SC2086
    pgbench -n -c "$CLIENTS" -j "$THREADS" -T "$secs" $PGBENCH_OPTS -M prepared -D queue=bench \
        --log --log-prefix="$WORK/log/$tag" -f "$ROOT/bench/activity_cycle.sql" >"$out" 2>&1 ||
        { cat "$out" >&2; tail -n 20 "$WORK/server.log" >&2; die "pgbench failed on $tag"; }
    cat "$WORK/log/$tag".* | awk -v d="$secs" '$3 ~ /^[0-9]+$/ {
            e = $5 + $6 / 1e6; n++; end[n] = e; st = e - $3 / 1e6
            if (n == 1 || st < t0) t0 = st }
        END { for (i = 1; i <= n; i++) if (end[i] <= t0 + d) c++
              printf "%.1f\n", c / d }'
}

# minute_rates TAG MINUTES: scripts/s of each minute of the run logged as TAG (minute 1
# starts with the first script), one a line.
minute_rates() {
    cat "$WORK/log/$1".* | awk -v m="$2" '$3 ~ /^[0-9]+$/ {
            e = $5 + $6 / 1e6; n++; end[n] = e; st = e - $3 / 1e6
            if (n == 1 || st < t0) t0 = st }
        END { for (i = 1; i <= n; i++) { b = int((end[i] - t0) / 60); c[b]++ }
              for (b = 0; b < m; b++) printf "%.1f\n", c[b] / 60 }'
}

# durable_sizes: "table bytes" of every table of schema durable (with its indexes and
# TOAST), one a line, by name.
durable_sizes() {
    psql -X -q -A -t -F ' ' -c "SELECT c.relname, pg_total_relation_size(c.oid)
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'durable' AND c.relkind = 'r' ORDER BY 1"
}

# index_reads: "index scans entries_read" of every index of schema durable, one a line,
# by name (pg_stat_user_indexes, after the statistics of all backends are flushed).
index_reads() {
    sleep 1.5   # backends flush their statistics at most once a second
    psql -X -q -A -t -F ' ' -c "SELECT pg_stat_clear_snapshot()" -c "SELECT indexrelname,
        idx_scan, idx_tup_read FROM pg_stat_user_indexes WHERE schemaname = 'durable'
        ORDER BY 1" | grep -v '^$'
}

# held_xmin RUN: the activity cycle under a held vacuum horizon (see the head of this
# file, and docs/performance.md "A held vacuum horizon").
held_xmin() {
    local secs=$((HELD_MINUTES * 60)) normal held_pid i xmin_age last rates recovered
    psql -X -q -c CHECKPOINT
    log "held_xmin: activity cycle, ${HELD_NORMAL_SECONDS}s normally"
    normal=$(cycle_rate held_normal "$HELD_NORMAL_SECONDS")
    log "held_xmin: normal rate $normal scripts/s"
    durable_sizes >"$WORK/held.before"
    # The session that holds the horizon: a REPEATABLE READ transaction whose first read
    # took its snapshot, then idle (in pg_sleep) until it is cancelled.
    PGAPPNAME=durable-held-xmin psql -X -q -c "BEGIN ISOLATION LEVEL REPEATABLE READ" \
        -c "SELECT count(*) FROM durable.runs" -c "SELECT pg_sleep($secs + 3600)" \
        -c "COMMIT" >"$WORK/held_session.out" 2>&1 &
    held_pid=$!
    for ((i = 0; i < 300; i++)); do
        [ -n "$(psql -X -q -A -t -c "SELECT backend_xmin FROM pg_stat_activity
            WHERE application_name = 'durable-held-xmin' AND backend_xmin IS NOT NULL")" ] && break
        sleep 0.1
    done
    [ "$i" -lt 300 ] || die "held_xmin: the snapshot session did not start"
    log "held_xmin: activity cycle, $HELD_MINUTES minute(s) with the snapshot held"
    index_reads >"$WORK/held.idx0"
    cycle_rate held_held "$secs" >/dev/null
    index_reads >"$WORK/held.idx1"
    xmin_age=$(psql -X -q -A -t -c "SELECT age(backend_xmin) FROM pg_stat_activity
        WHERE application_name = 'durable-held-xmin'")
    durable_sizes >"$WORK/held.end"
    psql -X -q -A -t -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity
        WHERE application_name = 'durable-held-xmin'" >/dev/null
    wait "$held_pid" || true
    log "held_xmin: snapshot closed; VACUUM"
    psql -X -q -c VACUUM
    durable_sizes >"$WORK/held.after"
    # Work goes on: the queue tables' ends drain (VACUUM gives them back) and the timer
    # worker rebuilds the indexes that grew (src/store/compaction.c, once a minute).
    log "held_xmin: activity cycle, ${HELD_RECOVERY_SECONDS}s after the snapshot closed"
    recovered=$(cycle_rate held_recovery "$HELD_RECOVERY_SECONDS")
    psql -X -q -c VACUUM
    durable_sizes >"$WORK/held.recovered"
    psql -X -q -A -t -F ' ' -c "SELECT c.relname, pg_table_size(c.oid), pg_indexes_size(c.oid)
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'durable' AND c.relname IN ('ready_tasks', 'timers', 'activities')
        ORDER BY 1" >"$WORK/held.split"
    rates=$(minute_rates held_held "$HELD_MINUTES")
    last=$(tail -n 1 <<<"$rates")
    {
        echo "held_xmin: the activity cycle ($CLIENTS clients) for ${HELD_NORMAL_SECONDS}s normally, then" \
            "$HELD_MINUTES minute(s) while a REPEATABLE READ session held its snapshot (xmin" \
            "${xmin_age:-?} transactions old at the end)"
        printf '  normal:                      %8.1f scripts/s (the floor of the ratios below)\n' "$normal"
        printf '  held snapshot, minute 1:     %8.1f scripts/s = %5.1f %% of normal\n' \
            "$(head -n 1 <<<"$rates")" "$(awk -v a="$(head -n 1 <<<"$rates")" -v b="$normal" \
                'BEGIN { printf "%.1f", (b > 0 ? 100 * a / b : 0) }')"
        printf '  held snapshot, minute %-3s    %8.1f scripts/s = %5.1f %% of normal (goal: >= 50 %%)\n' \
            "$HELD_MINUTES:" "$last" "$(awk -v a="$last" -v b="$normal" \
                'BEGIN { printf "%.1f", (b > 0 ? 100 * a / b : 0) }')"
        echo "  every minute (% of normal): $(awk -v b="$normal" '{ printf "%s%.0f", (NR > 1 ? " " : ""),
            (b > 0 ? 100 * $1 / b : 0) }' <<<"$rates")"
        printf '  after the snapshot closed:   %8.1f scripts/s = %5.1f %% of normal (%ss)\n' \
            "$recovered" "$(awk -v a="$recovered" -v b="$normal" \
                'BEGIN { printf "%.1f", (b > 0 ? 100 * a / b : 0) }')" "$HELD_RECOVERY_SECONDS"
        echo "  size of each durable table (with indexes and TOAST), MB:"
        printf '    %-22s %8s %9s %9s %9s %10s %10s\n' table normal "held end" "VACUUM" \
            "then ${HELD_RECOVERY_SECONDS}s" "VACUUM/n" "then/n"
        LC_ALL=C join "$WORK/held.before" "$WORK/held.end" | LC_ALL=C join - "$WORK/held.after" |
            LC_ALL=C join - "$WORK/held.recovered" |
            awk '{ printf "    %-22s %8.1f %9.1f %9.1f %9.1f %9.2fx %9.2fx\n", $1, $2 / 1048576,
                        $3 / 1048576, $4 / 1048576, $5 / 1048576, ($2 > 0 ? $4 / $2 : 0),
                        ($2 > 0 ? $5 / $2 : 0)
                   a += $2; b += $3; c += $4; d += $5 }
                 END { printf "    %-22s %8.1f %9.1f %9.1f %9.1f %9.2fx %9.2fx\n", "all", a / 1048576,
                        b / 1048576, c / 1048576, d / 1048576, (a > 0 ? c / a : 0),
                        (a > 0 ? d / a : 0) }'
        echo "  (normal: after the normal ${HELD_NORMAL_SECONDS}s; VACUUM: right after the snapshot closed;" \
            "then ${HELD_RECOVERY_SECONDS}s: after that much more work and another VACUUM. history, runs" \
            "and activity_attempt_log keep every closed workflow, so they grow with the work done;" \
            "the goal, 1.5x, is for the queue tables)"
        echo "  the queue tables after the recovery, MB: $(awk '{ printf "%s%s %.1f heap + %.1f indexes",
            (NR > 1 ? ", " : ""), $1, $2 / 1048576, $3 / 1048576 }' "$WORK/held.split")"
        echo "  the timer worker's lines in the server log (src/store/compaction.c):"
        grep -E 'durable: the vacuum horizon|durable (could not rebuild|rebuilt) the indexes' \
            "$WORK/server.log" | sed -E 's/^.*(LOG|WARNING): +/    /' || echo "    (none)"
        echo "  index entries read a scan while the snapshot was held (pg_stat_user_indexes;" \
            "a scan that walks dead entries reads many):"
        LC_ALL=C join "$WORK/held.idx0" "$WORK/held.idx1" |
            awk '$4 > $2 { printf "    %-32s %10d scans %10.1f entries a scan\n", $1, $4 - $2,
                                  ($5 - $3) / ($4 - $2) }'

    } >"$WORK/held_xmin.report"
    rm -f "$WORK/log/held_"*
}

# million_open RUN: the activity cycle with OPEN_SMALL, then with OPEN_LARGE open
# workflows (delayed starts of type bench_open, queue bench_open, a day away).
# rounds_rate TAG: the activity cycle OPEN_ROUNDS times for DURATION s; prints the
# mean rate, then the rates of the rounds ("mean r1,r2,...").
rounds_rate() {
    local r rates=""
    for ((r = 1; r <= OPEN_ROUNDS; r++)); do
        rates="$rates${rates:+,}$(cycle_rate "$1_$r" "$DURATION")"
    done
    awk -v l="$rates" 'BEGIN { n = split(l, a, ","); for (i = 1; i <= n; i++) t += a[i]
        printf "%.1f %s\n", t / n, l }'
}

million_open() {
    local small large have n bytes0 bytes1
    open_workflows() {
        local want=$1 batch
        have=$(psql -X -q -A -t -c "SELECT count(*) FROM durable.runs
            WHERE workflow_type = 'bench_open' AND status = 'running'")
        while [ "$have" -lt "$want" ]; do
            batch=$((want - have < 10000 ? want - have : 10000))
            psql -X -q -v ON_ERROR_STOP=1 -c "SELECT count(durable.start_workflow('bench_open',
                '{\"payload\": \"$(printf '%0800d' 0)\"}'::jsonb, task_queue => 'bench_open',
                delay => '1 day')) FROM generate_series(1, $batch)" >/dev/null ||
                die "million_open: starting workflows failed"
            have=$((have + batch))
        done
        psql -X -q -c "VACUUM ANALYZE" -c CHECKPOINT
    }
    bytes0=$(psql -X -q -A -t -c "SELECT pg_database_size(current_database())")
    log "million_open: $OPEN_SMALL open workflows"
    open_workflows "$OPEN_SMALL"
    small=$(rounds_rate open_small)
    log "million_open: $small scripts/s with $OPEN_SMALL open; starting up to $OPEN_LARGE"
    open_workflows "$OPEN_LARGE"
    bytes1=$(psql -X -q -A -t -c "SELECT pg_database_size(current_database())")
    n=$(psql -X -q -A -t -c "SELECT count(*) FROM durable.runs
        WHERE workflow_type = 'bench_open' AND status = 'running'")
    large=$(rounds_rate open_large)
    {
        echo "million_open: the activity cycle (${DURATION}s, $CLIENTS clients) with few and with many" \
            "open workflows (delay => '1 day', 800-byte input)"
        printf '  %9d open: %8.1f scripts/s, the mean of %s (the floor of the ratio)\n' \
            "$OPEN_SMALL" "${small%% *}" "${small#* }"
        printf '  %9d open: %8.1f scripts/s, the mean of %s = %.1f %% of it (goal: >= 90 %%)\n' \
            "$n" "${large%% *}" "${large#* }" \
            "$(awk -v a="${large%% *}" -v b="${small%% *}" 'BEGIN { printf "%.1f", (b > 0 ? 100 * a / b : 0) }')"
        echo "  database grew by $(awk -v a="$bytes0" -v b="$bytes1" -v n="$n" \
            'BEGIN { printf "%.0f MB, %.0f bytes an open workflow", (b - a) / 1048576, (b - a) / n }')"
    } >"$WORK/million_open.report"
    rm -f "$WORK/log/open_"*
}

# fair_latency TAG: tenant B's workflows (bench/fairness_b.sql, 2 clients) for
# FAIR_SECONDS; prints "count p50 p99 max" of their latency in ms.
fair_latency() {
    local tag=$1 prefix="$WORK/log/fair_$1"
    mkdir -p "$WORK/log"
    pgbench -n -c 2 -j 2 -T "$FAIR_SECONDS" --log --log-prefix="$prefix" \
        -f "$ROOT/bench/fairness_b.sql" >"$WORK/fair_$tag.out" 2>&1 ||
        { cat "$WORK/fair_$tag.out"; die "pgbench failed on fairness ($tag)"; }
    cat "$prefix".* | awk '$3 ~ /^[0-9]+$/ {print $3}' | LC_ALL=C sort -n |
        awk '{ a[NR] = $1 } END { if (NR == 0) { print 0, "nan", "nan", "nan"; exit }
             printf "%d %.1f %.1f %.1f\n", NR, a[int((NR * 50 + 99) / 100)] / 1000,
                 a[int((NR * 99 + 99) / 100)] / 1000, a[NR] / 1000 }'
    rm -f "$prefix".*
}

# fairness RUN: B's latency with the executors idle, then while A saturates them
# (docs/sql-workflows.md "Sharing the executors between namespaces").
fairness() {
    local idle busy left_before left_after a_done
    psql -X -q -v ON_ERROR_STOP=1 -v slow="$FAIR_SLOW" >/dev/null <<'SQL'
SELECT durable.create_namespace('bench_fair_a'), durable.create_namespace('bench_fair_b');
CREATE FUNCTION bench_fair_sleep(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_sleep((input->>'secs')::float8);
    RETURN input;
END $$;
CREATE FUNCTION bench_fair_slow(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    RETURN durable.activity('bench_fair_sleep', input, '{"startToCloseTimeoutSeconds": 60}');
END $$;
CREATE FUNCTION bench_fair_quick(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    RETURN durable.activity('bench_noop', input);
END $$;
SELECT durable.register_workflow('bench_fair_slow', 'bench_fair_slow(jsonb)', 'fair', 'bench_fair_a', 'bench_app'),
       durable.register_activity('bench_fair_sleep', 'bench_fair_sleep(jsonb)', 'fair', 'bench_fair_a', 'bench_app'),
       durable.register_workflow('bench_fair_quick', 'bench_fair_quick(jsonb)', 'fair', 'bench_fair_b', 'bench_app'),
       durable.register_activity('bench_noop', 'bench_noop(jsonb)', 'fair', 'bench_fair_b', 'bench_app');
SQL
    executors "$FAIR_EXECUTORS"
    log "fairness: tenant B's latency, executors idle (${FAIR_SECONDS}s)"
    idle=$(fair_latency idle)
    psql -X -q -v ON_ERROR_STOP=1 -c "SELECT count(durable.start_workflow('bench_fair_slow',
        jsonb_build_object('secs', $FAIR_SLOW), task_queue => 'fair', namespace => 'bench_fair_a'))
        FROM generate_series(1, $FAIR_BACKLOG)" >/dev/null
    sleep 1
    a_done="SELECT count(*) FROM durable.activity_attempt_log
        WHERE activity_type = 'bench_fair_sleep' AND outcome = 'completed'"
    left_before=$(psql -X -q -A -t -c "$a_done")
    log "fairness: tenant B's latency while A's $FAIR_BACKLOG workflows of ${FAIR_SLOW}s keep $FAIR_EXECUTORS executors busy (${FAIR_SECONDS}s)"
    busy=$(fair_latency busy)
    left_after=$(psql -X -q -A -t -c "$a_done")
    psql -X -q -c "SELECT durable.terminate_workflow(workflow_id, 'bench over', namespace => 'bench_fair_a')
        FROM durable.runs WHERE namespace = 'bench_fair_a' AND status = 'running'" >/dev/null || true
    executors 0
    {
        echo "fairness: tenant B's SQL workflows (one no-op SQL activity; start, then wait_workflow;" \
            "2 clients) on $FAIR_EXECUTORS executors"
        awk '{printf "  executors idle:              %6d workflows, p50 %8.1f  p99 %8.1f  max %8.1f ms\n", $1, $2, $3, $4}' <<<"$idle"
        awk '{printf "  tenant A saturating them:    %6d workflows, p50 %8.1f  p99 %8.1f  max %8.1f ms\n", $1, $2, $3, $4}' <<<"$busy"
        echo "  tenant A: $FAIR_BACKLOG workflows of a ${FAIR_SLOW} s SQL activity ($(awk -v n="$FAIR_BACKLOG" \
            -v s="$FAIR_SLOW" -v e="$FAIR_EXECUTORS" 'BEGIN { printf "%.0f", n * s / e }') s of work for" \
            "the executors); $((left_after - left_before)) of its activities completed while B ran," \
            "$((FAIR_BACKLOG - left_after)) still to run at the end"
    } >"$WORK/fairness.report"
}

# kf_setting TAG QUEUE AKEY BKEY BACKLOG: one setting of key_fairness, on task queue
# QUEUE of database bench_keys.  Tenant A's BACKLOG workflows (concurrency key AKEY,
# empty: none) are started first, KEY_FAIRNESS_POLLERS pollers (bench/key_fairness_poll.sql)
# start a second later, and tenant B's KEY_FAIRNESS_B workflows (key BKEY) are started at
# random over about KEY_FAIRNESS_SPREAD s (pgbench -R) while they poll; the pollers stop
# KEY_FAIRNESS_WAIT s after that.  Appends to $WORK/key_fairness.runs "TAG b_total
# b_started p50 p99 max a_per_s a_left tail_s backlog_s": B's schedule-to-start of its
# first decision task (DecisionTaskStarted - DecisionTaskScheduled of its run, ms), A's
# workflows completed a second while the pollers ran, A's workflows still queued when
# they stopped, the seconds from B's last start to their stop, and the seconds A's starts
# took.
kf_setting() {
    local tag=$1 queue=$2 akey=$3 bkey=$4 backlog=$5 t0 t1 poll_pid rc=0 backlog_s=0 start f
    if [ "$backlog" -gt 0 ]; then
        log "key_fairness ($tag): starting tenant A's $backlog workflows on queue $queue (key '${akey:-}')"
        start=$(date +%s.%N)
        # 1,000, then 10,000 a statement, each in a session of its own.  A session plans
        # durable's statements at its first call and keeps the plans; once autovacuum
        # has analyzed durable.runs with the idle setting's 100 runs in it, a session's
        # plan of start_workflow's check of the workflow id (INSERT INTO durable.runs
        # ... WHERE NOT EXISTS (SELECT 1 FROM durable.runs WHERE namespace = $2 AND
        # workflow_id = $3)) is a sequential scan of durable.runs, whose cost grows with
        # every start until the next ANALYZE of the table: 20,000 starts in one session
        # took 53 s instead of 3 to 5.  Each later session plans with the table grown.
        for ((f = 1; f <= backlog; f += (f == 1 ? 1000 : 10000))); do
            psql -X -q -v ON_ERROR_STOP=1 -v q="$queue" -v key="$akey" -v n=$((f == 1 ? 1000 : 10000)) \
                -v last="$backlog" -v f="$f" >/dev/null <<'SQL' ||
SELECT count(durable.start_workflow('kf_a', NULL, NULL, :'q', concurrency_key => NULLIF(:'key', '')))
  FROM generate_series(:f, LEAST(:f + :n - 1, :last));
SQL
                die "key_fairness: starting tenant A's workflows failed"
        done
        backlog_s=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
        psql -X -q -c "VACUUM ANALYZE" -c CHECKPOINT
    fi
    t0=$(psql -X -q -A -t -c "SELECT clock_timestamp()")
    log "key_fairness ($tag): $KEY_FAIRNESS_POLLERS pollers; B's $KEY_FAIRNESS_B starts (key '${bkey:-}') over ~${KEY_FAIRNESS_SPREAD}s"
    pgbench -n -M prepared -c "$KEY_FAIRNESS_POLLERS" -j "$THREADS" \
        -T $((1 + KEY_FAIRNESS_SPREAD + KEY_FAIRNESS_WAIT)) -D queue="$queue" \
        -f "$ROOT/bench/key_fairness_poll.sql" >"$WORK/kf_poll_$tag.out" 2>&1 &
    poll_pid=$!
    sleep 1
    pgbench -n -M prepared -c 1 -j 1 -t "$KEY_FAIRNESS_B" \
        -R "$(awk -v n="$KEY_FAIRNESS_B" -v s="$KEY_FAIRNESS_SPREAD" 'BEGIN { printf "%.3f", n / s }')" \
        -D queue="$queue" -D key="${bkey:--}" -f "$ROOT/bench/key_fairness_b.sql" \
        >"$WORK/kf_b_$tag.out" 2>&1 || rc=$?
    wait "$poll_pid" || { cat "$WORK/kf_poll_$tag.out"; die "pgbench failed on key_fairness's pollers ($tag)"; }
    [ "$rc" = 0 ] || { cat "$WORK/kf_b_$tag.out"; die "pgbench failed on key_fairness's starts ($tag)"; }
    t1=$(psql -X -q -A -t -c "SELECT clock_timestamp()")
    psql -X -q -A -t -F ' ' -v tag="$tag" -v q="$queue" -v t0="$t0" -v t1="$t1" \
        -v backlog_s="$backlog_s" <<'SQL' >>"$WORK/key_fairness.runs"
WITH b AS (
    SELECT (SELECT min(h.event_time) FROM durable.history h
             WHERE h.run_id = r.run_id AND h.event_type = 'DecisionTaskScheduled') AS sched,
           (SELECT min(h.event_time) FROM durable.history h
             WHERE h.run_id = r.run_id AND h.event_type = 'DecisionTaskStarted') AS started
      FROM durable.runs r
     WHERE r.workflow_type = 'kf_b' AND r.task_queue = :'q'),
w AS (SELECT extract(epoch FROM started - sched) * 1000 AS ms FROM b WHERE started IS NOT NULL)
SELECT :'tag', (SELECT count(*) FROM b), (SELECT count(*) FROM w),
       coalesce(round((SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY ms) FROM w)::numeric, 1)::text, '-'),
       coalesce(round((SELECT percentile_disc(0.99) WITHIN GROUP (ORDER BY ms) FROM w)::numeric, 1)::text, '-'),
       coalesce(round((SELECT max(ms) FROM w)::numeric, 1)::text, '-'),
       (SELECT coalesce(round(count(*) / nullif(extract(epoch FROM max(close_time) - :'t0'::timestamptz), 0)::numeric, 1), 0)
          FROM durable.runs
         WHERE workflow_type = 'kf_a' AND task_queue = :'q' AND status = 'completed'
           AND close_time BETWEEN :'t0' AND :'t1'),
       (SELECT count(*) FROM durable.runs
         WHERE workflow_type = 'kf_a' AND task_queue = :'q' AND status = 'running'),
       round(extract(epoch FROM :'t1'::timestamptz - (SELECT max(sched) FROM b))::numeric, 1),
       :backlog_s;
SQL
    # A's workflows completed a second in each 5 s of the pollers' run: whether the
    # claims slow down as the backlog drains.
    psql -X -q -A -t -v tag="$tag" -v q="$queue" -v t0="$t0" -v t1="$t1" <<'SQL' >>"$WORK/key_fairness.arate"
SELECT :'tag' || ' ' || string_agg(round(coalesce(n, 0) / 5.0)::text, ' ' ORDER BY s)
  FROM generate_series(0, floor(extract(epoch FROM :'t1'::timestamptz - :'t0'::timestamptz) / 5)::int - 1) s
  LEFT JOIN (SELECT floor(extract(epoch FROM close_time - :'t0'::timestamptz) / 5)::int AS s, count(*) AS n
               FROM durable.runs
              WHERE workflow_type = 'kf_a' AND task_queue = :'q' AND status = 'completed'
                AND close_time BETWEEN :'t0' AND :'t1'
              GROUP BY 1) c USING (s);
SQL
    log "key_fairness ($tag): $(tail -n 1 "$WORK/key_fairness.runs")"
}

# key_fairness RUN: tenant B's schedule-to-start on a queue where tenant A has a backlog,
# with concurrency keys and without (docs/task-queues.md "Priorities and fairness"), in a
# database of its own (bench_keys, dropped at the end: A's backlog is left there).
key_fairness() {
    local -x PGDATABASE=bench_keys
    psql -X -q -d postgres -c "SET client_min_messages = warning" \
        -c "DROP DATABASE IF EXISTS bench_keys" -c "CREATE DATABASE bench_keys"
    psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION durable"
    : >"$WORK/key_fairness.runs"
    : >"$WORK/key_fairness.arate"
    kf_setting idle kf_idle "" "" 0
    kf_setting keyed kf_keyed A B "$KEY_FAIRNESS_BACKLOG"
    kf_setting unkeyed kf_fifo "" "" "$KEY_FAIRNESS_BACKLOG"
    psql -X -q -d postgres -c "DROP DATABASE bench_keys"
    {
        echo "key_fairness: tenant B's $KEY_FAIRNESS_B workflows started over ~${KEY_FAIRNESS_SPREAD}s on a queue" \
            "polled by $KEY_FAIRNESS_POLLERS workers that complete each decision task at once;" \
            "schedule-to-start of B's first decision task (history: DecisionTaskStarted - DecisionTaskScheduled)"
        printf '  %-9s %-34s %9s %9s %9s %9s %10s\n' setting "tenant A's backlog" "B started" \
            "p50 ms" "p99 ms" "max ms" "A wf/s"
        awk -v n="$KEY_FAIRNESS_BACKLOG" '{
            what = ($1 == "idle" ? "none" : ($1 == "keyed" ? n " with key A, B with key B" : n ", no keys (FIFO)"))
            printf "  %-9s %-34s %5d/%-3d %9s %9s %9s %10s\n", $1, what, $3, $2, $4, $5, $6, ($1 == "idle" ? "-" : $7) }' \
            "$WORK/key_fairness.runs"
        awk '$1 == "idle" { i = $5 } $1 == "keyed" { k = $5 }
             END { if (i > 0 && k != "-") printf "  p99(keyed) / p99(idle): %.2f\n", k / i
                   else print "  p99(keyed) / p99(idle): n/a" }' "$WORK/key_fairness.runs"
        awk -v n="$KEY_FAIRNESS_BACKLOG" '$1 == "unkeyed" {
            printf "  unkeyed: %d of B\047s %d first decision tasks started before the pollers stopped, %.1f s after B\047s last start\n", $3, $2, $9
            if ($3 < $2)
                printf "    %d of A\047s %d workflows were still queued ahead of B\047s: about %.0f s more at A\047s rate of %.1f workflows/s\n", $8, n, ($7 > 0 ? $8 / $7 : 0), $7 }' \
            "$WORK/key_fairness.runs"
        awk -v n="$KEY_FAIRNESS_BACKLOG" '$1 != "idle" {
            printf "  %s: A\047s %d starts took %.1f s; %d of them still queued when the pollers stopped\n", $1, n, $10, $8 }' \
            "$WORK/key_fairness.runs"
        awk '$1 != "idle" { printf "  %s: A\047s workflows completed a second, each 5 s of the pollers\047 run:", $1
                            for (i = 2; i <= NF; i++) printf " %s", $i; print "" }' "$WORK/key_fairness.arate"
    } >"$WORK/key_fairness.report"
}

# ts_activity RUN: workflows through the TypeScript SDK (clients/typescript, built here
# with npm ci and tsc): bench/ts_activity.js runs 8 Workers in one Node process and
# clients that start one-activity workflows and wait for their results, for DURATION
# seconds with each number of clients in TS_CLIENTS; in the first round then 3-step and
# 100-step workflows for the cost of a step.  It runs in every round right after the
# activity cycle, and each round's rate is divided by that round's activity cycle: the
# two ran a minute apart at most, under the same load of the machine.  Appends
# "clients workflows/s ratio_to_activity errors node_cpu_% server_ms/wf node_ms/wf
# writes/wf" to
# $WORK/ts_activity.runs; ts_activity_report writes the section of the report.
TS_BUILT=0
ts_activity() {
    local run=$1 dir="$ROOT/clients/typescript" out="$WORK/ts_activity.$1.out" act steps=0
    if [ "$TS_BUILT" = 0 ]; then
        command -v node >/dev/null && command -v npm >/dev/null ||
            die "ts_activity: node and npm are needed (Debian packages nodejs npm)"
        if ! cmp -s "$dir/package-lock.json" "$dir/node_modules/.durable-lock"; then
            log "ts_activity: npm ci in clients/typescript"
            (cd "$dir" && HOME="$WORK" npm_config_cache="$WORK/npm-cache" npm ci --no-audit --no-fund) \
                >"$WORK/ts_npm.log" 2>&1 || { cat "$WORK/ts_npm.log"; die "ts_activity: npm ci failed"; }
        fi
        (cd "$dir" && node_modules/.bin/tsc -p tsconfig.build.json) >"$WORK/ts_tsc.log" 2>&1 ||
            { cat "$WORK/ts_tsc.log"; die "ts_activity: tsc failed"; }
        TS_BUILT=1
    fi
    if [ "$run" = 1 ]; then steps=1; fi
    psql -X -q -c CHECKPOINT
    log "run $run/$RUNS: ts_activity (8 SDK workers; clients: $TS_CLIENTS; ${DURATION}s each)"
    DURABLE_BENCH_POSTMASTER=$(head -n 1 "$WORK/data/postmaster.pid") \
        node "$ROOT/bench/ts_activity.js" "$DURATION" "$dir/dist" "$TS_CLIENTS" "$steps" \
        >"$out" 2>"$WORK/ts_activity.err" ||
        { cat "$out" "$WORK/ts_activity.err"; die "bench/ts_activity.js failed"; }
    act=$(sed -n "${run}p" "$WORK/activity.runs" | awk '{print $1}')
    awk -v act="$act" '$1 == "throughput" {
        printf "%d %.1f %.1f %d %d %.3f %.3f %.2f\n", $5, $2, 100 * $2 / act, $3, $4, $6, $7, $8 }' \
        "$out" >>"$WORK/ts_activity.runs"
    log "ts_activity: $(awk '{printf "%s%d clients %.1f workflows/s (%.1f %% of the activity cycle)", (NR > 1 ? ", " : ""), $1, $2, $3}' <(tail -n "$(wc -w <<<"$TS_CLIENTS")" "$WORK/ts_activity.runs"))"
}

# The ts_activity section of the report, from every round's lines.
ts_activity_report() {
    local c qf act
    qf=$(median "$WORK/queue_floor.runs" 1)
    act=$(median "$WORK/activity.runs" 1)
    echo "ts_activity: one-activity workflows through the TypeScript SDK (bench/ts_activity.js:" \
        "8 Workers in one Node process; clients start a workflow and wait for its result," \
        "${DURATION}s), in each round after its pgbench workloads; median of $RUNS round(s)"
    for c in $TS_CLIENTS; do
        awk -v c="$c" '$1 == c' "$WORK/ts_activity.runs" >"$WORK/ts_activity.$c"
        printf '  %2d clients: %.1f workflows/s, %.1f %% of the activity cycle of its round (each round: %s); %.1f %% of queue_floor (%.1f); errors %d\n' \
            "$c" "$(median "$WORK/ts_activity.$c" 2)" "$(median "$WORK/ts_activity.$c" 3)" \
            "$(awk '{printf "%s%.1f %%", (NR > 1 ? ", " : ""), $3}' "$WORK/ts_activity.$c")" \
            "$(awk -v a="$(median "$WORK/ts_activity.$c" 2)" -v q="$qf" 'BEGIN {printf "%.1f", 100 * a / q}')" \
            "$qf" "$(awk '{s += $4} END {print s + 0}' "$WORK/ts_activity.$c")"
        printf '      CPU a workflow: server %.3f ms, Node %.3f ms (%d %% of a core); %.2f write transactions a workflow\n' \
            "$(median "$WORK/ts_activity.$c" 6)" "$(median "$WORK/ts_activity.$c" 7)" \
            "$(median "$WORK/ts_activity.$c" 5)" "$(median "$WORK/ts_activity.$c" 8)"
    done
    if [ -f "$WORK/activity.cpu" ]; then
        printf '  the activity cycle (%.1f scripts/s, 8 clients), CPU a workflow: server %.3f ms, pgbench %.3f ms\n' \
            "$act" "$(median "$WORK/activity.cpu" 1)" "$(median "$WORK/activity.cpu" 2)"
    fi
    awk '$1 == "steps" { printf "  %3d-step workflows: %.3f ms/step (%d workflows, 8 at a time; %d of %d decision tasks from the cache)\n", $2, $3, $4, $6, $5 }' "$WORK/ts_activity.1.out"
    awk '$1 == "steps" { ms[$2] = $3 } END { if (ms[3] > 0) printf "  100 steps / 3 steps, ms a step: %.2f\n", ms[100] / ms[3] }' "$WORK/ts_activity.1.out"
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
    if grep -qw ts_activity <<<"$WORKLOADS"; then ts_activity "$run"; fi
    if [ -z "$WORKLOADS" ] || grep -qw sqlwf <<<"$WORKLOADS"; then sqlwf "$run"; fi
    if [ -z "$WORKLOADS" ] || grep -qw sqlwf_limited <<<"$WORKLOADS"; then
        sqlwf "$run" sqlwf_limited sqlwf_limited
    fi
    if [ -z "$WORKLOADS" ] || grep -qw sqlwf_steps <<<"$WORKLOADS"; then sqlwf_steps "$run"; fi
    if [ "$run" = 1 ]; then
        for long in $LONG_WORKLOADS; do
            if grep -qw "$long" <<<"$WORKLOADS"; then "$long" "$run"; fi
        done
    fi
    if [ "$LATENCY" = 1 ]; then latency "$run"; fi
    if [ "$TIMERS" = 1 ]; then
        timers "$run" 20
        timers "$run" 1000
    fi
done
IDLE_CPU=""
if [ "$TIMERS" = 1 ]; then IDLE_CPU=$(worker_cpu); fi
# The list benchmark (bench/list_workflows.sh): once, in a database of its own.
if [ -z "$WORKLOADS" ] || grep -qw list <<<"$WORKLOADS"; then
    log "list: loading 1,000,000 runs and timing list_workflows (bench/list_workflows.sh)"
    bash "$ROOT/bench/list_workflows.sh" >"$WORK/list.out" 2>&1 ||
        { cat "$WORK/list.out"; die "bench/list_workflows.sh failed"; }
fi

# The report: the medians over the runs, each workload as a percentage of its floor.
declare -A TPS SCPU
{
    echo "durable bench $STAMP (commit $BENCH_COMMIT)"
    echo "$(postgres --version); $(nproc) CPUs; $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
    echo "pgbench -n -c $CLIENTS -j $THREADS -T $DURATION ${PGBENCH_OPTS:+$PGBENCH_OPTS }(median of $RUNS run(s))"
    echo "fsync on, synchronous_commit on, shared_buffers 1GB"
    if [ ${#NAMES[@]} -gt 0 ]; then
        echo
        printf '%-14s %-20s %8s %10s %9s %9s %7s %9s %10s %9s\n' workload script "xact/scr" "scripts/s" \
            "p50 ms" "p99 ms" failed "vs floor" "cpu ms/scr" "cpu/floor"
    fi
    for i in "${!NAMES[@]}"; do
        name=${NAMES[$i]}
        TPS[$name]=$(median "$WORK/$name.runs" 1)
        SCPU[$name]=$(median "$WORK/$name.scpu" 1)
        ratio=floor cpu_ratio=floor
        if [ -n "${FLOORS[$i]}" ]; then
            ratio=$(awk -v a="${TPS[$name]}" -v b="${TPS[${FLOORS[$i]}]}" \
                'BEGIN { printf "%.1f %%", 100 * a / b }')
            cpu_ratio=$(awk -v a="${SCPU[$name]}" -v b="${SCPU[${FLOORS[$i]}]}" \
                'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
        fi
        # transactions a script execution: the SQL commands of the script
        xacts=$(grep -cvE '^[[:space:]]*(--|\\|$)|^[[:space:]]' "$ROOT/bench/${SCRIPTS[$i]}" || true)
        printf '%-14s %-20s %8s %10.1f %9.2f %9.2f %7s %9s %10s %9s\n' "$name" "${SCRIPTS[$i]}" "$xacts" \
            "${TPS[$name]}" "$(median "$WORK/$name.runs" 2)" "$(median "$WORK/$name.runs" 3)" \
            "$(awk '{s += $4} END {print s + 0}' "$WORK/$name.runs")" "$ratio" "${SCPU[$name]}" "$cpu_ratio"
    done
    for name in "${NAMES[@]}"; do
        [ -f "$WORK/$name.counts" ] || continue
        echo "$name: $(median "$WORK/$name.counts" 1) workflows/s and" \
            "$(median "$WORK/$name.counts" 2) activities/s completed (counted in durable's tables);" \
            "$(median "$WORK/$name.xacts" 1) commits and $(median "$WORK/$name.xacts" 2) write transactions a workflow"
    done
    if [ -f "$WORK/sqlwf.runs" ]; then
        wfs=$(median "$WORK/sqlwf.runs" 1)
        floor_wfs=$(awk -v t="$(median "$WORK/sqlwf.runs" 4)" 'BEGIN { printf "%.1f", t / 8 }')
        echo
        echo "sqlwf: $((SQLWF_COUNT / 8 * 8)) SQL workflows of 3 no-op SQL activities, started by" \
            "8 pgbench clients, run by $SQLWF_EXECUTORS executor workers"
        printf '  %.1f workflows/s, %.1f activities/s (first start to last close: %.2f s)\n' \
            "$wfs" "$(median "$WORK/sqlwf.runs" 2)" "$(median "$WORK/sqlwf.runs" 3)"
        printf '  floor: %d one-row INSERTs (8 transactions a workflow) at %.1f tps = %.1f workflows/s: sqlwf is %s\n' \
            $((SQLWF_COUNT / 8 * 64)) "$(median "$WORK/sqlwf.runs" 4)" "$floor_wfs" \
            "$(awk -v a="$wfs" -v b="$floor_wfs" 'BEGIN { printf "%.1f %% of it", 100 * a / b }')"
        # The peers' figures come from another machine (machines of that kind differ by
        # up to 2x; bench/README.md): only ratios to a floor compare, so the fastest
        # peer's figure for the same workload is shown as its own ratio to its own floor,
        # never divided into a figure of this run.
        printf '  for context, from another machine: DBOS Transact ran 212 such workflows/s there,\n'
        printf '  %s of its one-row INSERT floor (7,219 tps / 8 = 902 workflows/s), against %s here\n' \
            "23.5 %" "$(awk -v a="$wfs" -v b="$floor_wfs" 'BEGIN { printf "%.1f %%", 100 * a / b }')"
        echo "  workflows not completed: $(awk '{s += $5} END {print s + 0}' "$WORK/sqlwf.runs");" \
            "$(median "$WORK/sqlwf.xacts" 1) transaction ids a workflow (each step of a chain is a subtransaction with an id of its own; the floor: 8 transactions)"
        echo "  WAL a workflow: $(median "$WORK/sqlwf.xacts" 2) bytes; the floor's 8 INSERTs: $(median "$WORK/sqlwf.xacts" 3) bytes"
    fi
    if [ -f "$WORK/sqlwf_limited.runs" ]; then
        wfs=$(median "$WORK/sqlwf_limited.runs" 1)
        floor_wfs=$(awk -v t="$(median "$WORK/sqlwf_limited.runs" 4)" 'BEGIN { printf "%.1f", t / 8 }')
        echo
        echo "sqlwf_limited: the same on a queue with limits that never bind (docs/task-queues.md \"Limits\")"
        printf '  %.1f workflows/s: %s of its own floor (%.1f workflows/s)%s\n' "$wfs" \
            "$(awk -v a="$wfs" -v b="$floor_wfs" 'BEGIN { printf "%.1f %%", 100 * a / b }')" "$floor_wfs" \
            "$([ -f "$WORK/sqlwf.runs" ] && awk -v a="$wfs" -v b="$floor_wfs" \
                -v c="$(median "$WORK/sqlwf.runs" 1)" \
                -v d="$(awk -v t="$(median "$WORK/sqlwf.runs" 4)" 'BEGIN { printf "%.1f", t / 8 }')" \
                'BEGIN { printf ", against %.1f %% without limits", 100 * c / d }')"
        echo "  workflows not completed: $(awk '{s += $5} END {print s + 0}' "$WORK/sqlwf_limited.runs");" \
            "$(median "$WORK/sqlwf_limited.xacts" 1) transaction ids a workflow"
    fi
    if [ -f "$WORK/ts_activity.runs" ]; then
        echo
        ts_activity_report
    fi
    if [ -f "$WORK/sqlwf_steps.runs" ]; then
        awk '$1 == 3' "$WORK/sqlwf_steps.runs" >"$WORK/sqlwf_steps.short"
        awk -v l="$STEPS_LONG" '$1 == l' "$WORK/sqlwf_steps.runs" >"$WORK/sqlwf_steps.long"
        echo
        echo "sqlwf_steps: about $STEPS_TOTAL steps as SQL workflows of 3 and of $STEPS_LONG sequential" \
            "no-op SQL activities, started at once, run by $STEPS_EXECUTORS executor workers"
        for f in short long; do
            printf '  %3d-step workflows: %.3f ms/step, executors CPU %.3f ms/step (%d workflows; %.2f s from the starts to the last close)\n' \
                "$(awk 'NR == 1 {print $1}' "$WORK/sqlwf_steps.$f")" "$(median "$WORK/sqlwf_steps.$f" 3)" \
                "$(median "$WORK/sqlwf_steps.$f" 6)" "$(awk 'NR == 1 {print $2}' "$WORK/sqlwf_steps.$f")" \
                "$(median "$WORK/sqlwf_steps.$f" 4)"
        done
        printf '  %d steps / 3 steps, ms a step: %s; executors CPU a step: %s\n' "$STEPS_LONG" \
            "$(awk -v a="$(median "$WORK/sqlwf_steps.long" 3)" -v b="$(median "$WORK/sqlwf_steps.short" 3)" \
                'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')" \
            "$(awk -v a="$(median "$WORK/sqlwf_steps.long" 6)" -v b="$(median "$WORK/sqlwf_steps.short" 6)" \
                'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
        echo "  workflows not completed: $(awk '{s += $5} END {print s + 0}' "$WORK/sqlwf_steps.runs")"
    fi
    for long in $LONG_WORKLOADS; do
        if [ -f "$WORK/$long.report" ]; then
            echo
            cat "$WORK/$long.report"
        fi
    done
    if [ -f "$WORK/latency.runs" ]; then
        echo
        echo "wake-up latency (bench/latency.c): $LAT_WAITERS sessions waiting in" \
            "poll_decision_task(wait => '10s'), $LAT_RATE starts/s for ${LAT_SECONDS}s"
        printf '  poll return - start_workflow return: p50 %.2f  p99 %.2f  max %.2f ms\n' \
            "$(median "$WORK/latency.runs" 1)" "$(median "$WORK/latency.runs" 2)" \
            "$(median "$WORK/latency.runs" 3)"
        printf '  poll return - start_workflow call:   p50 %.2f  p99 %.2f  max %.2f ms\n' \
            "$(median "$WORK/latency.runs" 4)" "$(median "$WORK/latency.runs" 5)" \
            "$(median "$WORK/latency.runs" 6)"
        echo "  tasks never received: $(awk '{s += $7} END {print s + 0}' "$WORK/latency.runs")"
    fi
    if [ -f "$WORK/timers.runs" ]; then
        echo
        echo "timer lateness (fire - due), background worker, timers due 1 s after their start:"
        for rate in 20 1000; do
            awk -v r="$rate" '$1 == r' "$WORK/timers.runs" >"$WORK/timers.$rate"
            printf '  %5s timers/s: p50 %.2f  p99 %.2f  max %.2f ms  (%s fired, %s not fired)\n' \
                "$rate" "$(median "$WORK/timers.$rate" 2)" "$(median "$WORK/timers.$rate" 3)" \
                "$(median "$WORK/timers.$rate" 4)" "$(awk '{s += $5} END {print s + 0}' "$WORK/timers.$rate")" \
                "$(awk '{s += $6} END {print s + 0}' "$WORK/timers.$rate")"
        done
        echo "  timer worker CPU over 10 idle seconds: ${IDLE_CPU} ms"
    fi
    if [ -f "$WORK/list.out" ]; then
        echo
        echo "list_workflows over 1,000,000 runs (bench/list_workflows.sh), mean ms a call:"
        sed 's/^/  /' "$WORK/list.out"
    fi
    if [ "$RUNS" -gt 1 ]; then
        echo
        echo "each run (tps p50 p99 failed cpu_ms/scr):"
        for name in "${NAMES[@]}"; do
            echo "  $name: $(paste -d ' ' "$WORK/$name.runs" "$WORK/$name.scpu" |
                awk '{printf "%s%.1f %.2f %.2f %s %s", (NR > 1 ? " | " : ""), $1, $2, $3, $4, $5}')"
        done
        if [ -f "$WORK/sqlwf.runs" ]; then
            echo "  sqlwf (workflows/s activities/s seconds floor_tps): $(awk \
                '{printf "%s%s %s %s %s", (NR > 1 ? " | " : ""), $1, $2, $3, $4}' "$WORK/sqlwf.runs")"
        fi
        if [ -f "$WORK/sqlwf_steps.runs" ]; then
            echo "  sqlwf_steps (ms a step and executors CPU ms a step, 3 steps, $STEPS_LONG steps): $(awk \
                -v l="$STEPS_LONG" '$1 == 3 {a[++n] = $3 " " $6} $1 == l {b[++m] = $3 " " $6}
                 END {for (i = 1; i <= n; i++) printf "%s%s %s", (i > 1 ? " | " : ""), a[i], b[i]}' \
                "$WORK/sqlwf_steps.runs")"
        fi
        if [ -f "$WORK/latency.runs" ]; then
            echo "  latency (p50 p99 max ms from the return): $(awk \
                '{printf "%s%.2f %.2f %.2f", (NR > 1 ? " | " : ""), $1, $2, $3}' "$WORK/latency.runs")"
        fi
    fi
    # Anything the server complained about during the run.
    problems=$(server_problems)
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

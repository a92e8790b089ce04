#!/usr/bin/env bash
# scripts/test.sh [regress|pgtap|isolation|tap ...]: `make test`.
#
# Checks the C source (scripts/check-pg-try and scripts/check-layers, one test each),
# builds durable,
# installs it into ./tmp_install (a private copy of PostgreSQL, see scripts/lib.sh) and
# runs the test layers, each on its own throwaway cluster configured by
# test/durable.conf:
#   regress    pg_regress            test/sql/*.sql, expected/*.out (via test/expected)
#   pgtap      pg_prove              test/pgtap/*.sql, one fresh database a file
#   isolation  pg_isolation_regress  test/isolation/specs/*.spec, test/isolation/expected
#   tap        prove                 test/t/*.pl with PostgreSQL::Test::Cluster
#   ui         node + Chromium       ui/test/*.test.js: the dashboard in a headless browser
#                                    (run when node, npm and chromium are installed; as
#                                    root they are installed; UI_PORT, default 18490)
#   ts         node --test           clients/typescript/test/*.test.ts: the TypeScript SDK
#                                    (run when node and npm are installed; as root they are
#                                    installed; its cluster on TS_PG_PORT, default PGTAP_PORT + 2)
# No argument runs every layer (or those named in $LAYERS).  $TESTS limits every layer
# to the files whose base name matches one of its space-separated shell patterns, e.g.
# TESTS='00_smoke' scripts/test.sh regress.
#
# $PG_CONFIG picks the PostgreSQL to build and test against (default: Debian's
# postgresql-15); `make test-cassert` points it at an assert-enabled build.
# $DURABLE_TEST_CONF_EXTRA names a file (absolute, or relative to the tree) appended to
# test/durable.conf for every cluster, e.g. test/small_buffers.conf.
#
# As root it installs missing Debian packages, then runs itself again as the `postgres`
# OS user on a copy of the tree.  Outputs land in ./tmp_check/<layer>/.  The last line
# is "N passed, N failed", counting test files; the exit status is 0 only if none failed.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/lib.sh"

ALL_LAYERS="regress pgtap isolation tap ui ts"
if [ $# -gt 0 ]; then
    LAYER_LIST=("$@")
else
    read -r -a LAYER_LIST <<<"${LAYERS:-$ALL_LAYERS}"
fi
for l in "${LAYER_LIST[@]}"; do
    case " $ALL_LAYERS " in *" $l "*) ;; *) die "unknown layer '$l' (one of: $ALL_LAYERS)" ;; esac
done

# The ui layer's packages, installed (as root) only when it runs and only for a command
# that is missing (a Node.js from elsewhere, with its own npm, conflicts with Debian's npm).
UI_PACKAGES="nodejs npm chromium"
ui_selected() { case " ${LAYER_LIST[*]} " in *" ui "*) return 0 ;; *) return 1 ;; esac; }
ui_missing_packages() {
    command -v node >/dev/null || echo nodejs
    command -v npm >/dev/null || echo npm
    command -v chromium >/dev/null || echo chromium
}

# The ts layer's: node and npm, the same way.
ts_selected() { case " ${LAYER_LIST[*]} " in *" ts "*) return 0 ;; *) return 1 ;; esac; }
ts_missing_packages() {
    command -v node >/dev/null || echo nodejs
    command -v npm >/dev/null || echo npm
}

if is_root; then
    ensure_packages
    if ui_selected && [ -n "$(ui_missing_packages)" ]; then
        # shellcheck disable=SC2046  # one package a word
        ensure_packages $(ui_missing_packages)
    fi
    if ts_selected && [ -n "$(ts_missing_packages)" ]; then
        # shellcheck disable=SC2046  # one package a word
        ensure_packages $(ts_missing_packages)
    fi
    find_pg     # an absolute $PG_CONFIG for the run as postgres
    rc=0
    rerun_as_postgres scripts/test.sh "${LAYER_LIST[@]}" || rc=$?
    exit "$rc"
fi
if command -v dpkg >/dev/null && ! (ensure_packages) 2>/dev/null; then
    warn "some of these packages are missing; layers that need them will fail: $DURABLE_PACKAGES"
fi
find_pg

PGTAP_PORT=${PGTAP_PORT:-54329}
OUT="$ROOT/tmp_check"
PASSED=0
FAILED=0
FAILED_NAMES=()
CLEANUP_DATA=()  # clusters to stop on exit
CLEANUP_DIRS=()  # socket dirs to remove on exit

cleanup() {
    local d
    for d in "${CLEANUP_DATA[@]}"; do stop_cluster "$d"; done
    for d in "${CLEANUP_DIRS[@]}"; do rm -rf "$d"; done
}
trap cleanup EXIT

# layer_files LAYER: the test files of LAYER that $TESTS selects, sorted, one a line.
layer_files() {
    local pattern f name p
    case $1 in
        regress) pattern="$ROOT/test/sql/*.sql" ;;
        pgtap) pattern="$ROOT/test/pgtap/*.sql" ;;
        isolation) pattern="$ROOT/test/isolation/specs/*.spec" ;;
        tap) pattern="$ROOT/test/t/*.pl" ;;
        ui) pattern="$ROOT/ui/test/*.test.js" ;;
        ts) pattern="$ROOT/clients/typescript/test/*.test.ts" ;;
    esac
    for f in $pattern; do
        [ -e "$f" ] || continue
        name=$(basename "$f"); name=${name%.*}; name=${name%.test}
        if [ -z "${TESTS:-}" ]; then echo "$f"; continue; fi
        set -f
        for p in $TESTS; do
            # shellcheck disable=SC2053  # $p is a pattern on purpose
            if [[ $name == $p ]]; then echo "$f"; break; fi
        done
        set +f
    done | LC_ALL=C sort
}

# record LAYER NAME ok|fail
record() {
    if [ "$3" = ok ]; then
        PASSED=$((PASSED + 1))
    else
        FAILED=$((FAILED + 1))
        FAILED_NAMES+=("$1/$2")
    fi
}

# FAILURE_LINES: what a failed file said of its failure (a TAP file's "Failed test"
# lines and the server crash), printed again after the summary line's list of failed
# files: the tail of a long run's output is what a CI report shows.
FAILURE_LINES=()

# note_failure LAYER NAME OUTPUT: keep the failed checks that a TAP output (prove's,
# pg_prove's) names, with what they got and expected.
note_failure() {
    local line
    while IFS= read -r line; do
        FAILURE_LINES+=("$1/$2: $line")
    done < <({ grep -E -A 3 "^# +Failed test" "$3" || true
               grep -E "Dubious|Bail out|died|timed out" "$3" || true; } | head -n 24)
}

# record_regress_output LAYER OUTPUT NAME...: a test passed if pg_regress said "... ok".
record_regress_output() {
    local layer=$1 output=$2 name; shift 2
    for name in "$@"; do
        if grep -Eq "^(test )? *$name +\.\.\. ok( |$)" "$output"; then
            record "$layer" "$name" ok
        else
            record "$layer" "$name" fail
        fi
    done
}

# The server log lines of a crash: a failed assertion (TRAP, only in an assert-enabled
# build), a PANIC, or a backend killed by a signal (a segfault after a use-after-free).
CRASH_RE='PANIC:|TRAP:|terminated by signal'
# The same for TAP tests, where kill -9 is on purpose: every signal but 9.
TAP_CRASH_RE='PANIC:|TRAP:|terminated by signal ([0-8]|1[0-9]):'

# show_crash SERVER_LOG [FROM_BYTE]: if the server crashed or failed an assertion (after
# byte FROM_BYTE of the log), say so and show the log around it, and return 0; else 1.
# A plain failed test needs no server log: its diffs say it all.
show_crash() {
    local logf=$1 from=${2:-0}
    [ -f "$logf" ] || return 1
    tail -c +"$((from + 1))" "$logf" | grep -q -E "$CRASH_RE" || return 1
    echo "---- server crash in $logf ----"
    tail -c +"$((from + 1))" "$logf" | grep -n -E -B 5 -A 10 "$CRASH_RE" | head -n 80
    return 0
}

# log_size FILE: its size in bytes (0 if it does not exist).
log_size() {
    if [ -f "$1" ]; then wc -c <"$1"; else echo 0; fi
}

# run_pg_regress LAYER BINARY INPUTDIR DBNAME FILE...: the shared pg_regress driver.
run_pg_regress() {
    local layer=$1 bin=$2 inputdir=$3 dbname=$4 out="$OUT/$1" rc=0; shift 4
    local names=() missing=() f d name
    for f in "$@"; do f=$(basename "$f"); names+=("${f%.*}"); done
    rm -rf "$out"; mkdir -p "$out"
    # pg_regress stops at the first test without an expected file.  If some have none,
    # run from a copy of the input dir where they expect empty output: every test runs,
    # and those fail showing their whole output.
    for name in "${names[@]}"; do
        [ -f "$inputdir/expected/$name.out" ] || missing+=("$name")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        warn "$layer: no expected output for: ${missing[*]} (review" \
            "tmp_check/$layer/results/<name>.out, then copy it to the expected dir)"
        mkdir -p "$out/inputdir/expected"
        for d in sql specs input output; do
            if [ -e "$inputdir/$d" ]; then ln -s "$inputdir/$d" "$out/inputdir/$d"; fi
        done
        for f in "$inputdir"/expected/*; do
            if [ -f "$f" ]; then ln -s "$f" "$out/inputdir/expected/"; fi
        done
        for name in "${missing[@]}"; do : >"$out/inputdir/expected/$name.out"; done
        inputdir="$out/inputdir"
    fi
    "$bin" --temp-instance="$out/instance" --temp-config="$TEST_CONF" \
        --bindir="$TMP_BINDIR" --inputdir="$inputdir" --outputdir="$out" \
        --dbname="$dbname" --no-locale --encoding=UTF8 "${names[@]}" 2>&1 |
        tee "$out/output.txt" || rc=$?
    record_regress_output "$layer" "$out/output.txt" "${names[@]}"
    if [ "$rc" -ne 0 ] && [ -s "$out/regression.diffs" ]; then
        echo "---- $out/regression.diffs ----"
        cat "$out/regression.diffs"
    fi
    # A crash fails the layer even if every output matched (say, a background worker's).
    if show_crash "$out/log/postmaster.log"; then
        record "$layer" server_crash fail
    fi
}

layer_regress() {
    [ -d "$ROOT/test/expected" ] || die "test/expected must be a symlink to ../expected"
    run_pg_regress regress "$PGXS_SRC/test/regress/pg_regress" "$ROOT/test" \
        contrib_regression "$@"
}

layer_isolation() {
    run_pg_regress isolation "$PGXS_SRC/test/isolation/pg_isolation_regress" \
        "$ROOT/test/isolation" isolation_regression "$@"
}

# wait_ready SOCKDIR PORT: wait (up to 60 s) until the server accepts connections.
wait_ready() {
    local _
    for _ in $(seq 1 120); do
        pg_isready -q -h "$1" -p "$2" && return 0
        sleep 0.5
    done
    warn "the server on port $2 is not accepting connections"
}

# fresh_db SOCKDIR PORT DB [psql args...]: create database DB with durable in it (and
# whatever the extra psql arguments add), for one test file of a layer.
fresh_db() {
    local sock=$1 port=$2 db=$3
    shift 3
    createdb -h "$sock" -p "$port" "$db" &&
        psql -X -q -h "$sock" -p "$port" -d "$db" -v ON_ERROR_STOP=1 \
            -c 'CREATE EXTENSION durable' "$@"
}

# pgTAP: one cluster; each file runs in a fresh database in which the runner has done
# CREATE EXTENSION durable and pgtap, and the shared helpers of test/pgtap/lib.
layer_pgtap() {
    local out="$OUT/pgtap" sock f name db rc logpos
    rm -rf "$out"; mkdir -p "$out"
    if ! command -v pg_prove >/dev/null; then
        warn "pg_prove not found (package libtap-parser-sourcehandler-pgtap-perl)"
        for f in "$@"; do name=$(basename "$f"); record pgtap "${name%.*}" fail; done
        return
    fi
    sock=$(mktemp -d "${TMPDIR:-/tmp}/durable-pgtap.XXXXXX")
    CLEANUP_DIRS+=("$sock")
    CLEANUP_DATA+=("$out/data")
    start_cluster "$out/data" "$PGTAP_PORT" "$sock" "$TEST_CONF"
    log "pgtap server: $(psql -X -A -t -h "$sock" -p "$PGTAP_PORT" -d postgres -c \
        "SELECT version() || ', shared_buffers ' || current_setting('shared_buffers')
             || ', assertions ' || current_setting('debug_assertions')")"
    for f in "$@"; do
        name=$(basename "$f"); name=${name%.*}
        db="pgtap_$(printf '%s' "$name" | tr -c 'A-Za-z0-9_' '_')"
        rc=0
        # After a crash the server restarts: let it finish recovery, or the next files
        # would fail for nothing.
        wait_ready "$sock" "$PGTAP_PORT"
        logpos=$(log_size "$out/server.log")
        {
            fresh_db "$sock" "$PGTAP_PORT" "$db" -c 'CREATE EXTENSION pgtap' \
                -f "$ROOT/test/pgtap/lib/helpers.sql" &&
                (cd "$ROOT" && pg_prove -h "$sock" -p "$PGTAP_PORT" -d "$db" "${f#"$ROOT"/}" 2>&1)
        } | tee "$out/$name.prove" || rc=$?
        dropdb -h "$sock" -p "$PGTAP_PORT" --force --if-exists "$db" ||
            warn "could not drop database $db"
        # A crash while the file ran fails it, even if its tests passed.
        if show_crash "$out/server.log" "$logpos"; then
            FAILURE_LINES+=("pgtap/$name: server crash: $(tail -c +"$((logpos + 1))" "$out/server.log" |
                grep -m 1 -E "$CRASH_RE")")
            rc=1
        fi
        if [ "$rc" -eq 0 ]; then
            record pgtap "$name" ok
        else
            record pgtap "$name" fail
            note_failure pgtap "$name" "$out/$name.prove"
        fi
    done
    stop_cluster "$out/data"
}

# TAP: prove with the environment of PGXS's prove_installcheck; every cluster a test
# makes gets test/durable.conf (plus the extra file) through TEMP_CONFIG (a test may
# append_conf over it).
layer_tap() {
    local out="$OUT/tap" f name rc logf prove_flags=()
    read -r -a prove_flags <<<"${PROVE_FLAGS:-}"   # e.g. PROVE_FLAGS=-v
    rm -rf "$out"; mkdir -p "$out"
    if ! perl -MIPC::Run -e 1 2>/dev/null; then
        warn "perl module IPC::Run not found (package libipc-run-perl)"
        for f in "$@"; do name=$(basename "$f"); record tap "${name%.*}" fail; done
        return
    fi
    for f in "$@"; do
        name=$(basename "$f"); name=${name%.*}
        rc=0
        (
            cd "$ROOT/test" &&
                TESTDIR="$out" PGPORT=65432 \
                    PG_REGRESS="$PGXS_SRC/test/regress/pg_regress" \
                    TEMP_CONFIG="$TEST_CONF" \
                    prove -I "$PGXS_SRC/test/perl" -I "$ROOT/test" -I "$ROOT/test/perl" \
                    "${prove_flags[@]}" \
                    "t/$name.pl" 2>&1
        ) | tee "$out/$name.prove" || rc=$?
        # A crash in one of the test's servers fails it, even if its checks passed
        # (kill -9, signal 9, is what crash tests do on purpose).
        for logf in "$out/tmp_check/log/${name}"_*.log; do
            [ -f "$logf" ] || continue
            if grep -q -E "$TAP_CRASH_RE" "$logf"; then
                echo "---- server crash in $logf ----"
                grep -n -E -B 5 -A 10 "$TAP_CRASH_RE" "$logf" | head -n 80
                FAILURE_LINES+=("tap/$name: server crash in $(basename "$logf"): $(grep -m 1 -E "$TAP_CRASH_RE" "$logf")")
                rc=1
            fi
        done
        if [ "$rc" -eq 0 ]; then
            record tap "$name" ok
        else
            record tap "$name" fail
            note_failure tap "$name" "$out/$name.prove"
            if [ -f "$out/tmp_check/log/regress_log_$name" ]; then
                echo "---- last lines of $out/tmp_check/log/regress_log_$name ----"
                tail -n 40 "$out/tmp_check/log/regress_log_$name"
            fi
        fi
    done
}

# ui: the dashboard (ui/) in headless Chromium.  One cluster with the background worker
# on (retry timers fire by the clock); each file gets a fresh database and drives the
# dashboard on $UI_PORT (and the next two ports) with puppeteer-core.  npm ci installs
# ui/package-lock.json's packages (the npm cache is tmp_check/npm-cache).  Without node,
# npm or chromium the layer is skipped with a warning.
layer_ui() {
    local out="$OUT/ui" sock f name db rc logpos chromium
    local ui_port=${UI_PORT:-18490} ui_db_port=$((PGTAP_PORT + 1))
    chromium=${CHROMIUM:-$(command -v chromium || true)}
    if ! command -v node >/dev/null || ! command -v npm >/dev/null || [ -z "$chromium" ]; then
        warn "ui: node, npm or chromium missing (packages $UI_PACKAGES): layer skipped"
        return
    fi
    rm -rf "$out"; mkdir -p "$out/home"
    if ! cmp -s "$ROOT/ui/package-lock.json" "$ROOT/ui/node_modules/.durable-lock"; then
        log "ui: npm ci"
        if (cd "$ROOT/ui" && npm_config_cache="$OUT/npm-cache" npm ci --no-audit --no-fund \
            >"$out/npm-ci.log" 2>&1); then
            cp "$ROOT/ui/package-lock.json" "$ROOT/ui/node_modules/.durable-lock"
        else
            cat "$out/npm-ci.log"
            for f in "$@"; do name=$(basename "$f" .test.js); record ui "$name" fail; done
            return
        fi
    fi
    sock=$(mktemp -d "${TMPDIR:-/tmp}/durable-ui.XXXXXX")
    CLEANUP_DIRS+=("$sock")
    CLEANUP_DATA+=("$out/data")
    { cat "$TEST_CONF"; echo 'durable.worker_enabled = on'; } >"$out/durable.conf"
    start_cluster "$out/data" "$ui_db_port" "$sock" "$out/durable.conf"
    for f in "$@"; do
        name=$(basename "$f" .test.js)
        db="ui_$(printf '%s' "$name" | tr -c 'A-Za-z0-9_' '_')"
        rc=0
        wait_ready "$sock" "$ui_db_port"
        logpos=$(log_size "$out/server.log")
        {
            fresh_db "$sock" "$ui_db_port" "$db" &&
                PGHOST="$sock" PGPORT="$ui_db_port" PGDATABASE="$db" PGUSER=$(id -un) \
                    UI_PORT="$ui_port" UI_OUT="$out" CHROMIUM="$chromium" HOME="$out/home" \
                    node "$f" 2>&1 | tee "$out/$name.tap"
        } || rc=$?
        grep -q '^not ok' "$out/$name.tap" 2>/dev/null && rc=1
        dropdb -h "$sock" -p "$ui_db_port" --force --if-exists "$db" || warn "could not drop database $db"
        if show_crash "$out/server.log" "$logpos"; then rc=1; fi
        if [ "$rc" -eq 0 ]; then record ui "$name" ok; else record ui "$name" fail; fi
    done
    log "ui: screenshots in $out"
    stop_cluster "$out/data"
}

# ts: the TypeScript SDK (clients/typescript).  npm ci installs
# clients/typescript/package-lock.json's packages (the npm cache is
# tmp_check/npm-cache), tsc compiles the package (dist/, as npm pack would) and its
# tests (build/), and node's test runner runs each test file against a fresh database
# of one cluster of its own (port TS_PG_PORT, default PGTAP_PORT + 2) with durable
# preloaded and the background worker off: the tests fire timers with durable.test_time
# and durable.tick().  Without node or npm the layer is skipped with a warning.
layer_ts() {
    local out="$OUT/ts" dir="$ROOT/clients/typescript" sock f name db rc logpos
    local ts_port=${TS_PG_PORT:-$((PGTAP_PORT + 2))}
    if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
        warn "ts: node or npm missing (packages nodejs npm): layer skipped"
        return
    fi
    rm -rf "$out"; mkdir -p "$out/home"
    if ! cmp -s "$dir/package-lock.json" "$dir/node_modules/.durable-lock"; then
        log "ts: npm ci"
        if (cd "$dir" && HOME="$out/home" npm_config_cache="$OUT/npm-cache" \
            npm ci --no-audit --no-fund >"$out/npm-ci.log" 2>&1); then
            cp "$dir/package-lock.json" "$dir/node_modules/.durable-lock"
        else
            cat "$out/npm-ci.log"
            for f in "$@"; do name=$(basename "$f" .test.ts); record ts "$name" fail; done
            return
        fi
    fi
    log "ts: tsc"
    if ! (cd "$dir" && rm -rf dist build && node_modules/.bin/tsc -p tsconfig.build.json &&
        node_modules/.bin/tsc -p tsconfig.json) >"$out/tsc.log" 2>&1; then
        cat "$out/tsc.log"
        for f in "$@"; do name=$(basename "$f" .test.ts); record ts "$name" fail; done
        return
    fi
    sock=$(mktemp -d "${TMPDIR:-/tmp}/durable-ts.XXXXXX")
    CLEANUP_DIRS+=("$sock")
    CLEANUP_DATA+=("$out/data")
    start_cluster "$out/data" "$ts_port" "$sock" "$TEST_CONF"
    for f in "$@"; do
        name=$(basename "$f" .test.ts)
        db="ts_$(printf '%s' "$name" | tr -c 'A-Za-z0-9_' '_')"
        rc=0
        wait_ready "$sock" "$ts_port"
        logpos=$(log_size "$out/server.log")
        {
            fresh_db "$sock" "$ts_port" "$db" &&
                (cd "$dir" && PGHOST="$sock" PGPORT="$ts_port" PGDATABASE="$db" PGUSER=$(id -un) \
                    HOME="$out/home" timeout 300 node --test --test-reporter=tap \
                    "build/test/$name.test.js") 2>&1 | tee "$out/$name.tap"
        } || rc=$?
        dropdb -h "$sock" -p "$ts_port" --force --if-exists "$db" || warn "could not drop database $db"
        if show_crash "$out/server.log" "$logpos"; then rc=1; fi
        if [ "$rc" -eq 0 ]; then record ts "$name" ok; else record ts "$name" fail; fi
    done
    stop_cluster "$out/data"
}

# Which files each layer runs, known before the build so that a broken build still
# yields a count.
declare -A FILES
total=0
for l in "${LAYER_LIST[@]}"; do
    FILES[$l]=$(layer_files "$l")
    [ -n "${FILES[$l]}" ] && total=$((total + $(wc -l <<<"${FILES[$l]}")))
done

# Static checks of the C source, before the build; each counts as a test (layer
# "check").  check-pg-try: no return/goto/break leaving a PG_TRY block.
log "check: scripts/check-pg-try"
if "$ROOT/scripts/check-pg-try"; then
    record check check-pg-try ok
else
    echo "scripts/check-pg-try: leave PG_TRY / PG_CATCH / PG_FINALLY only through PG_END_TRY"
    record check check-pg-try fail
fi
# check-layers: calls and includes go only down src/'s layers (src/README.md).
log "check: scripts/check-layers"
if "$ROOT/scripts/check-layers"; then
    record check check-layers ok
else
    echo "scripts/check-layers: a call or include goes up src/'s layers; see src/README.md"
    record check check-layers fail
fi

# The settings of every cluster: test/durable.conf, plus $DURABLE_TEST_CONF_EXTRA.
TEST_CONF="$ROOT/test/durable.conf"
if [ -n "${DURABLE_TEST_CONF_EXTRA:-}" ]; then
    extra=$DURABLE_TEST_CONF_EXTRA
    case "$extra" in /*) ;; *) extra="$ROOT/$extra" ;; esac
    [ -f "$extra" ] || die "DURABLE_TEST_CONF_EXTRA: no file $extra"
    mkdir -p "$OUT"
    TEST_CONF="$OUT/durable.conf"
    cat "$ROOT/test/durable.conf" "$extra" >"$TEST_CONF"
    log "cluster settings: test/durable.conf + $extra"
fi

if ! build_temp_install; then
    echo "build or install failed: no test ran"
    if [ "$FAILED" -gt 0 ]; then echo "failed: ${FAILED_NAMES[*]}"; fi
    echo "$PASSED passed, $((FAILED + total)) failed"
    exit 1
fi

for l in "${LAYER_LIST[@]}"; do
    if [ -z "${FILES[$l]}" ]; then
        log "$l: no test files, skipped"
        continue
    fi
    mapfile -t files <<<"${FILES[$l]}"
    log "$l: ${#files[@]} file(s)"
    "layer_$l" "${files[@]}"
done

echo
if [ "$FAILED" -gt 0 ]; then
    for line in "${FAILURE_LINES[@]}"; do echo "$line"; done
    echo "failed: ${FAILED_NAMES[*]}"
    echo "outputs: $OUT"
fi
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]

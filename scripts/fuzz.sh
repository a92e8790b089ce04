#!/usr/bin/env bash
# scripts/fuzz.sh: `make fuzz`.
#
# Builds durable into ./tmp_install (scripts/lib.sh), starts a throwaway cluster with
# durable preloaded and its background workers on (timer worker, executors), and runs
# test/fuzz/fuzz.pl against it: our own fuzzer of every API function, and Debian's
# sqlsmith.  See test/README.md ("Fuzzing").
#
#   FUZZ_SECONDS=60          how long to fuzz
#   FUZZ_SEED=<n>            the seed (printed by every run) to generate the same calls
#   FUZZ_CLIENTS=4           concurrent connections of the fuzzer
#   FUZZ_SQLSMITH_SECONDS    how long sqlsmith runs alongside (default: half the time; 0: off)
#   FUZZ_DROP_EXTENSION=1    0: never DROP/CREATE EXTENSION during the run
#   FUZZ_ALLOW='22P02 ...'   SQLSTATEs to accept on top of the expected ones
#   FUZZ_PORT                the cluster's port (default: PGTAP_PORT, else 54339)
#
# Results land in ./tmp_check/fuzz/: findings.sql (a reproducer for each distinct
# finding), stats.txt (calls and SQLSTATEs per function), server.log, sqlsmith.log.
# The last line is the summary; the exit status is 1 if there was any crash, XX000 or
# unexpected SQLSTATE.  As root it installs missing packages (sqlsmith, libdbd-pg-perl
# and the test packages), then runs itself again as the `postgres` OS user.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/lib.sh"

DURABLE_PACKAGES="$DURABLE_PACKAGES sqlsmith libdbd-pg-perl"
OUT_FINAL="$ROOT/tmp_check/fuzz"

if is_root; then
    ensure_packages
    id postgres >/dev/null 2>&1 || die "no postgres OS user"
    # The run's tree is a copy that is removed when it passes: results go to a directory
    # postgres can write, copied into this tree afterwards.
    outdir=$(mktemp -d "${TMPDIR:-/tmp}/durable-fuzz.XXXXXX")
    chown postgres: "$outdir"
    rc=0
    FUZZ_OUT="$outdir" rerun_as_postgres scripts/fuzz.sh || rc=$?
    rm -rf "$OUT_FINAL"
    mkdir -p "$(dirname "$OUT_FINAL")"
    cp -a "$outdir" "$OUT_FINAL"
    rm -rf "$outdir"
    exit "$rc"
fi
if command -v dpkg >/dev/null && ! (ensure_packages) 2>/dev/null; then
    warn "some of these packages are missing: $DURABLE_PACKAGES"
fi
perl -MDBD::Pg -e 1 2>/dev/null || die "perl module DBD::Pg not found (package libdbd-pg-perl)"
command -v sqlsmith >/dev/null || warn "sqlsmith not found (package sqlsmith): only our fuzzer runs"
find_pg

OUT=${FUZZ_OUT:-$OUT_FINAL}
PORT=${FUZZ_PORT:-${PGTAP_PORT:-54339}}
rm -rf "${OUT:?}"/*
mkdir -p "$OUT"
build_temp_install || die "build or install failed"

sock=$(mktemp -d "${TMPDIR:-/tmp}/durable-fuzz-sock.XXXXXX")
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
    # pg_ctl, or the postmaster's pid if the temp install is gone.
    stop_cluster "$OUT/data"
    if [ -f "$OUT/data/postmaster.pid" ]; then
        kill -TERM "$(head -n 1 "$OUT/data/postmaster.pid")" 2>/dev/null || true
    fi
    rm -rf "$sock"
}
trap cleanup EXIT

# The test settings, with the workers on, crash restarts on, and logs that carry each
# error's SQLSTATE, backend type, application name and source location.
{
    cat "$ROOT/test/durable.conf"
    cat <<'EOF'

# make fuzz
durable.worker_enabled = on
durable.worker_max_sleep = 1
restart_after_crash = on
log_error_verbosity = verbose
log_line_prefix = '%m [%p] %e [%b] %u [%a] '
log_min_messages = warning
log_min_error_statement = error
EOF
} >"$OUT/fuzz.conf"
start_cluster "$OUT/data" "$PORT" "$sock" "$OUT/fuzz.conf"
createdb -h "$sock" -p "$PORT" fuzz

rc=0
perl "$ROOT/test/fuzz/fuzz.pl" --host "$sock" --port "$PORT" --db fuzz --out "$OUT" \
    --log "$OUT/server.log" --src "$ROOT/src" --setup "$ROOT/test/fuzz/setup.sql" --show tmp_check/fuzz || rc=$?
exit "$rc"

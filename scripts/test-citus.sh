#!/usr/bin/env bash
# scripts/test-citus.sh: `make test-citus`, the tests of durable_citus (citus/, docs/citus.md).
#
# scripts/build-citus.sh builds Citus once from vendor/ into ./tmp_citus (cached); this
# script builds durable into ./tmp_install (a private copy of PostgreSQL, see
# scripts/lib.sh), adds Citus's files and durable_citus's to it, and runs the TAP tests
# test/citus/t/*.pl with PostgreSQL::Test::Cluster: each starts a Citus coordinator and
# two workers on this machine (test/citus/perl/CitusCluster.pm).  $TESTS limits the files
# to those whose base name matches one of its shell patterns; PROVE_FLAGS=-v shows each
# check.  As root it installs the Debian packages it needs, then runs itself again as the
# `postgres` OS user on a copy of the tree.  Outputs land in ./tmp_check/citus/.  The
# last line is "N passed, N failed", counting test files.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/lib.sh"

if is_root && [ "${DURABLE_RERUN:-}" != 1 ]; then
    # shellcheck disable=SC2119  # durable's packages, not the script's arguments
    ensure_packages
    # node and npm for the dashboard's test (008), when missing (a Node.js from
    # elsewhere, with its own npm, conflicts with Debian's npm)
    ui_missing=$(command -v node >/dev/null || echo nodejs; command -v npm >/dev/null || echo npm)
    # shellcheck disable=SC2086  # one package a word
    [ -z "$ui_missing" ] || ensure_packages $ui_missing || warn "could not install $ui_missing"
    if ! "$ROOT/scripts/build-citus.sh"; then
        echo "building Citus failed: no test ran"
        echo "0 passed, 1 failed"
        exit 1
    fi
    find_pg     # an absolute $PG_CONFIG for the run as postgres
    export CITUS_INSTALL="$ROOT/tmp_citus/install"
    rc=0
    rerun_as_postgres scripts/test-citus.sh || rc=$?
    exit "$rc"
fi

find_pg
if [ -z "${CITUS_INSTALL:-}" ]; then
    if ! "$ROOT/scripts/build-citus.sh"; then
        echo "building Citus failed: no test ran"
        echo "0 passed, 1 failed"
        exit 1
    fi
    CITUS_INSTALL="$ROOT/tmp_citus/install"
fi

OUT="$ROOT/tmp_check/citus"
PASSED=0
FAILED=0
FAILED_NAMES=()

files=()
for f in "$ROOT"/test/citus/t/*.pl; do
    [ -e "$f" ] || continue
    name=$(basename "$f" .pl)
    if [ -n "${TESTS:-}" ]; then
        keep=0
        set -f
        for p in $TESTS; do
            # shellcheck disable=SC2053  # $p is a pattern on purpose
            if [[ $name == $p ]]; then keep=1; break; fi
        done
        set +f
        [ "$keep" -eq 1 ] || continue
    fi
    files+=("$f")
done

if ! build_temp_install; then
    echo "build or install failed: no test ran"
    echo "0 passed, $((${#files[@]} > 0 ? ${#files[@]} : 1)) failed"
    exit 1
fi
log "adding Citus ($CITUS_INSTALL) and durable_citus to $TMP_INSTALL"
if ! cp -a "$CITUS_INSTALL/." "$TMP_INSTALL/" ||
    ! make -C "$ROOT/citus" -s PG_CONFIG="$PG_CONFIG" install DESTDIR="$TMP_INSTALL" >/dev/null; then
    echo "installing Citus or durable_citus failed: no test ran"
    echo "0 passed, $((${#files[@]} > 0 ? ${#files[@]} : 1)) failed"
    exit 1
fi
[ -f "$("$TMP_BINDIR/pg_config" --pkglibdir)/citus.so" ] || die "no citus.so in the temp install"

# The dashboard's packages for 008_dashboard (ui/package-lock.json, as scripts/test.sh's
# ui layer installs them): without node the test skips itself.
if command -v node >/dev/null && command -v npm >/dev/null &&
    ! (cd "$ROOT/ui" && node -e "require('pg')" >/dev/null 2>&1); then
    log "ui: npm ci (for the dashboard's test)"
    mkdir -p "$ROOT/tmp_check"
    if (cd "$ROOT/ui" && npm_config_cache="$ROOT/tmp_check/npm-cache" npm ci --no-audit --no-fund \
        >"$ROOT/tmp_check/citus-npm-ci.log" 2>&1); then
        cp "$ROOT/ui/package-lock.json" "$ROOT/ui/node_modules/.durable-lock"
    else
        warn "npm ci in ui/ failed (tmp_check/citus-npm-ci.log): 008_dashboard will fail"
    fi
fi

# The crash lines of a server log (scripts/test.sh's; kill -9 is never used here).
TAP_CRASH_RE='PANIC:|TRAP:|terminated by signal'

rm -rf "$OUT"; mkdir -p "$OUT"
log "citus: ${#files[@]} file(s)"
prove_flags=()
read -r -a prove_flags <<<"${PROVE_FLAGS:-}"
for f in "${files[@]}"; do
    name=$(basename "$f" .pl)
    rc=0
    (
        cd "$ROOT/test/citus" &&
            TESTDIR="$OUT" PGPORT=65432 \
                PG_REGRESS="$PGXS_SRC/test/regress/pg_regress" \
                TEMP_CONFIG="$ROOT/test/durable.conf" \
                prove -I "$PGXS_SRC/test/perl" -I "$ROOT/test/perl" -I "$ROOT/test/citus/perl" \
                "${prove_flags[@]}" "t/$name.pl"
    ) || rc=$?
    for logf in "$OUT/tmp_check/log/${name}"_*.log; do
        [ -f "$logf" ] || continue
        if grep -q -E "$TAP_CRASH_RE" "$logf"; then
            echo "---- server crash in $logf ----"
            grep -n -E -B 5 -A 10 "$TAP_CRASH_RE" "$logf" | head -n 80
            rc=1
        fi
    done
    if [ "$rc" -eq 0 ]; then
        PASSED=$((PASSED + 1))
    else
        FAILED=$((FAILED + 1))
        FAILED_NAMES+=("citus/$name")
        if [ -f "$OUT/tmp_check/log/regress_log_$name" ]; then
            echo "---- last lines of $OUT/tmp_check/log/regress_log_$name ----"
            tail -n 40 "$OUT/tmp_check/log/regress_log_$name"
        fi
    fi
done

echo
if [ "$FAILED" -gt 0 ]; then
    echo "failed: ${FAILED_NAMES[*]}"
    echo "outputs: $OUT"
fi
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]

#!/usr/bin/env bash
# scripts/test-cassert.sh [regress|pgtap|isolation|tap ...]: `make test-cassert`.
#
# Runs the test layers (all four unless named) against an assert-enabled PostgreSQL:
# scripts/build-cassert.sh builds it once into ./tmp_cassert/postgresql (cached: a later
# run reuses it), then scripts/test.sh builds durable with that installation's pg_config
# and runs the layers with its binaries.  With assertions on, PostgreSQL overwrites
# pfree'd memory (CLOBBER_FREED_MEMORY) and checks memory contexts, so a datum used after
# its memory context was reset or its buffer released reads garbage at once, and a
# failed Assert() stops the backend with a TRAP line in the server log; scripts/test.sh
# counts a crash in a test's server log as a failure.  The last line is
# "N passed, N failed", as for `make test`.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/lib.sh"

if ! "$ROOT/scripts/build-cassert.sh"; then
    echo "building the assert-enabled PostgreSQL failed: no test ran"
    echo "0 passed, 1 failed"
    exit 1
fi
PG_CONFIG="$ROOT/tmp_cassert/postgresql/bin/pg_config" exec "$ROOT/scripts/test.sh" "$@"

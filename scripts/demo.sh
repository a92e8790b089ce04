#!/usr/bin/env bash
# scripts/demo.sh: `make demo`.
#
# Builds durable into ./tmp_install (like scripts/test.sh), starts a throwaway cluster in
# ./demo_cluster with shared_preload_libraries = 'durable', creates the extension in a
# database `demo`, runs scripts/demo.sql with psql (queries echoed) and stops the server
# on exit.  As root: installs missing packages, builds as root, and runs the cluster as
# the `postgres` OS user (on a copy of the tree if postgres cannot use this one).
# DEMO_PORT picks the port (default 54330; the server listens on a private socket only).
# DEMO_UI=1 then leaves the cluster running with the dashboard (ui/) on
# http://127.0.0.1:${DURABLE_UI_PORT:-8080} until Ctrl-C.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/lib.sh"

DEMO_DIR="$ROOT/demo_cluster"
DEMO_PORT=${DEMO_PORT:-54330}

if is_root; then
    ensure_packages
    if [ "${DEMO_UI:-}" = 1 ]; then
        command -v node >/dev/null && command -v npm >/dev/null || ensure_packages nodejs npm
        cmp -s "$ROOT/ui/package-lock.json" "$ROOT/ui/node_modules/.durable-lock" ||
            { (cd "$ROOT/ui" && npm ci --no-audit --no-fund) &&
                cp "$ROOT/ui/package-lock.json" "$ROOT/ui/node_modules/.durable-lock"; } ||
            die "npm ci in ui/ failed"
    fi
    find_pg
    build_temp_install || die "build failed"
    rm -rf "$DEMO_DIR"
    mkdir -p "$DEMO_DIR"
    chown postgres: "$DEMO_DIR"
    if runuser -u postgres -- test -x "$TMP_BINDIR/postgres" -a -r "$ROOT/scripts/demo.sql" \
        -a -w "$DEMO_DIR"; then
        exec runuser -u postgres -- env DURABLE_DEMO_BUILT=1 DEMO_UI="${DEMO_UI:-}" \
            bash "$ROOT/scripts/demo.sh"
    fi
    rm -rf "$DEMO_DIR"
    rerun_as_postgres scripts/demo.sh
    exit
fi

find_pg
if [ "${DURABLE_DEMO_BUILT:-}" = 1 ]; then
    use_temp_install || die "no temp install"   # root built it for us
else
    build_temp_install || die "build failed"
fi

# A fresh cluster; the directory itself may be one root made for us.
mkdir -p "$DEMO_DIR"
rm -rf "${DEMO_DIR:?}"/*
SOCK=$(mktemp -d "${TMPDIR:-/tmp}/durable-demo.XXXXXX")
trap 'stop_cluster "$DEMO_DIR/data"; rm -rf "$SOCK"' EXIT
cat >"$DEMO_DIR/demo.conf" <<'EOF'
shared_preload_libraries = 'durable'
# The executor workers run workflows and activities written in SQL (section 7 of
# demo.sql): two per database, next to the launcher and the timer worker.
durable.executor_workers = 2
max_worker_processes = 16
lc_messages = 'C'
log_line_prefix = '%m [%p] %q%a '
EOF
log "starting a cluster in $DEMO_DIR (log: $DEMO_DIR/server.log)"
start_cluster "$DEMO_DIR/data" "$DEMO_PORT" "$SOCK" "$DEMO_DIR/demo.conf"

export PGHOST="$SOCK" PGPORT="$DEMO_PORT"
createdb demo
psql -X -q -v ON_ERROR_STOP=1 -d demo -c 'CREATE EXTENSION durable'
log "running scripts/demo.sql"
psql -X -v ON_ERROR_STOP=1 --echo-all -d demo -f "$ROOT/scripts/demo.sql"

# The TypeScript example (examples/typescript-order), when node and npm are here: the
# SDK packed from a copy of clients/typescript (npm ci, npm pack), the example installed
# with that tarball, built and run against database demo.  Without node or npm, or when
# a step fails (npm without network, say), the demo says so and goes on.
ts_example() {
    local work="$DEMO_DIR/typescript" npmenv=()
    [ -w "${HOME:-/nonexistent}" ] || npmenv=(HOME="$work/home" npm_config_cache="$work/npm-cache")
    rm -rf "$work"
    mkdir -p "$work/clients" "$work/examples" "$work/home"
    tar -C "$ROOT/clients" --exclude=./typescript/node_modules --exclude=./typescript/dist \
        --exclude=./typescript/build --exclude='./typescript/*.tgz' -cf - ./typescript |
        tar -C "$work/clients" -xf - &&
        tar -C "$ROOT/examples" --exclude=./typescript-order/node_modules \
            --exclude=./typescript-order/dist -cf - ./typescript-order | tar -C "$work/examples" -xf - &&
        (cd "$work/clients/typescript" && env "${npmenv[@]}" npm ci --no-audit --no-fund &&
            env "${npmenv[@]}" npm pack) >"$work/sdk.log" 2>&1 &&
        (cd "$work/examples/typescript-order" && env "${npmenv[@]}" npm install --no-audit --no-fund &&
            env "${npmenv[@]}" npm run build) >"$work/example.log" 2>&1 ||
        { warn "the TypeScript example could not be built (logs in $work): skipped"; return 0; }
    (cd "$work/examples/typescript-order" && PGDATABASE=demo node dist/main.js) ||
        die "examples/typescript-order failed"
}
if command -v node >/dev/null && command -v npm >/dev/null; then
    log "running examples/typescript-order (the durable-pg SDK; README \"A TypeScript order workflow\")"
    ts_example
else
    log "node or npm missing: examples/typescript-order (the TypeScript SDK) not run"
fi
if [ "${DEMO_UI:-}" = 1 ]; then
    if [ ! -d "$ROOT/ui/node_modules/pg" ]; then
        (cd "$ROOT/ui" && npm ci --no-audit --no-fund) || die "npm ci in ui/ failed"
    fi
    log "demo done; the dashboard of database demo: http://127.0.0.1:${DURABLE_UI_PORT:-8080}/ (Ctrl-C stops it and the server)"
    PGDATABASE=demo node "$ROOT/ui/server.js" || true
else
    log "demo done; stopping the server. To see these workflows in the dashboard, run"
    log "  DEMO_UI=1 make demo    (then open http://127.0.0.1:8080/; Ctrl-C stops it)"
    log "or, on any database: make ui DATABASE_URL=postgresql:///app (see docs/dashboard.md)"
fi

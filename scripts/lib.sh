# shellcheck shell=bash
# Shared shell helpers for scripts/test.sh and scripts/demo.sh.  Source it; do not run it.
#
# What it provides:
#   ensure_packages        as root: apt-get install what the build and the tests need
#   rerun_as_postgres      as root: run a script again as the `postgres` OS user, on a
#                          copy of the tree that user owns (initdb refuses root)
#   build_temp_install     build durable and install it into ./tmp_install, a private
#                          copy of the PostgreSQL installation (no root needed)
#   start_cluster / stop_cluster   a throwaway cluster on a private unix socket
#
# Variables set for the callers: ROOT (the tree), PG_CONFIG (absolute: $PG_CONFIG if the
# caller set it, e.g. the assert-enabled build of scripts/build-cassert.sh, else the system's),
# PGXS_SRC (the pgxs src/ dir: pg_regress, isolation tester, perl modules), TMP_INSTALL,
# TMP_BINDIR (the bin dir of the temp install, put first in PATH by build_temp_install).

ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
PG_MAJOR=${PG_MAJOR:-15}
TMP_INSTALL="$ROOT/tmp_install"

# Debian packages the build and every test layer need (python3-psycopg: README's Python
# example, run by test/t/054_readme_examples.pl).
DURABLE_PACKAGES="postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR postgresql-$PG_MAJOR-pgtap
    libtap-parser-sourcehandler-pgtap-perl postgresql-$PG_MAJOR-cron libipc-run-perl perl make gcc
    python3-psycopg"

log() { printf '==> %s\n' "$*"; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }
die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

is_root() { [ "$(id -u)" -eq 0 ]; }

# Install the packages above (or those named as arguments) that dpkg does not know as
# installed (root only).
# apt-get update runs at most once (DURABLE_APT_UPDATED=1 says a caller already did it).
ensure_packages() {
    local missing=() p
    for p in ${*:-$DURABLE_PACKAGES}; do
        dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    is_root || die "missing packages: ${missing[*]} (install them, or run as root)"
    command -v apt-get >/dev/null || die "missing packages: ${missing[*]} and no apt-get"
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    if [ "${DURABLE_APT_UPDATED:-}" != 1 ]; then
        apt-get update -q
        export DURABLE_APT_UPDATED=1
    fi
    apt-get install -y -q "${missing[@]}"
}

# Find pg_config ($PG_CONFIG, else the system's) and the pgxs source dir (after
# ensure_packages).  Debian's layout and a plain `configure --prefix` install both work.
find_pg() {
    if [ -z "${PG_CONFIG:-}" ]; then
        if [ -x "/usr/lib/postgresql/$PG_MAJOR/bin/pg_config" ]; then
            PG_CONFIG="/usr/lib/postgresql/$PG_MAJOR/bin/pg_config"
        else
            PG_CONFIG=$(command -v pg_config) || die "pg_config not found"
        fi
    fi
    case "$PG_CONFIG" in
        /*) ;;
        */*) PG_CONFIG="$(cd "$(dirname "$PG_CONFIG")" && pwd)/$(basename "$PG_CONFIG")" ;;
        *) PG_CONFIG=$(command -v "$PG_CONFIG") || die "pg_config not found" ;;
    esac
    [ -x "$PG_CONFIG" ] || die "no pg_config at $PG_CONFIG"
    export PG_CONFIG
    # pgxs.mk is <pgxs>/src/makefiles/pgxs.mk
    PGXS_SRC=$(dirname "$(dirname "$("$PG_CONFIG" --pgxs)")")
    [ -x "$PGXS_SRC/test/regress/pg_regress" ] || die "no pg_regress under $PGXS_SRC"
}

# As root: copy the tree to a fresh directory owned by postgres and run
# `bash <copy>/<script> "$@"` there as postgres.  Returns that run's exit status.
# The copy is removed when the run succeeds (unless KEEP_RUN_TREE is set) and kept
# (and named) when it fails.
# ./tmp_cassert (the cached assert-enabled PostgreSQL) and ./tmp_citus (Citus, built by
# scripts/build-citus.sh) are not copied: the run uses the originals in place, through
# their absolute paths ($PG_CONFIG, $CITUS_INSTALL), so the caches outlive the copy.
rerun_as_postgres() {
    local script=$1; shift
    local dest rc=0
    id postgres >/dev/null 2>&1 || die "no postgres OS user (is postgresql-$PG_MAJOR installed?)"
    dest=$(mktemp -d "${TMPDIR:-/tmp}/durable-run.XXXXXX")
    # Build products, old clusters and .git are not copied.
    tar -C "$ROOT" --exclude=./.git --exclude=./tmp_install --exclude=./tmp_check --exclude=./demo_cluster \
        --exclude=./tmp_cassert --exclude=./tmp_citus --exclude=./.build-pg_config \
        --exclude=./results --exclude=./log --exclude='*.o' --exclude='*.so' \
        --exclude='*.bc' -cf - . | tar -C "$dest" -xf -
    # A $PG_CONFIG the postgres user cannot reach (the tree under /root, say): run with a
    # copy of its installation, which relocates like tmp_install does.
    if [ -n "${PG_CONFIG:-}" ] && ! runuser -u postgres -- test -x "$PG_CONFIG"; then
        local prefix
        prefix=$(dirname "$(dirname "$PG_CONFIG")")
        log "copying $prefix for the postgres user"
        cp -a "$prefix" "$dest/tmp_pg" || die "cannot copy $prefix"
        PG_CONFIG="$dest/tmp_pg/bin/pg_config"
    fi
    chown -R postgres: "$dest"
    chmod 755 "$dest"
    log "running $script as postgres in $dest"
    runuser -u postgres -- env -C "$dest" DURABLE_RERUN=1 PG_CONFIG="${PG_CONFIG:-}" \
        bash "$dest/$script" "$@" || rc=$?
    # The dashboard's screenshots (the ui layer) are for the caller to look at: they
    # land in this tree's tmp_check/ui, as they do when the tests run as postgres.
    if compgen -G "$dest/tmp_check/ui/*.png" >/dev/null; then
        rm -rf "$ROOT/tmp_check/ui" && mkdir -p "$ROOT/tmp_check/ui" &&
            cp "$dest"/tmp_check/ui/*.png "$ROOT/tmp_check/ui/" ||
            warn "could not copy the screenshots to $ROOT/tmp_check/ui"
    fi
    if [ "$rc" -eq 0 ] && [ -z "${KEEP_RUN_TREE:-}" ]; then
        rm -rf "$dest"
    else
        warn "kept the run's tree for inspection: $dest"
    fi
    return "$rc"
}

# Build durable and install it into ./tmp_install: a copy of the system's PostgreSQL
# (bin, lib, share: pgtap and pg_cron come along) plus durable's files.  PostgreSQL
# binaries find share/ and lib/ relative to their own path, so the copy serves its own
# files and nothing is written outside the tree.
build_temp_install() {
    local bindir libroot sharedir
    bindir=$("$PG_CONFIG" --bindir)
    libroot=$(dirname "$bindir")            # /usr/lib/postgresql/15 (bin, lib, pgxs), or
                                            # the prefix of a `configure --prefix` build
    sharedir=$("$PG_CONFIG" --sharedir)     # /usr/share/postgresql/15, or <prefix>/share
    # Each step is checked by hand: callers use `build_temp_install || ...`, where
    # set -e does not apply.
    # Objects built against another PostgreSQL (say the assert-enabled one, whose headers
    # differ) are not reused: .build-pg_config names the pg_config of the last build.
    if [ "$(cat "$ROOT/.build-pg_config" 2>/dev/null)" != "$PG_CONFIG" ]; then
        rm -f "$ROOT"/src/*.o "$ROOT"/src/*/*.o "$ROOT"/src/*.bc "$ROOT"/src/*/*.bc \
            "$ROOT"/*.so "$ROOT"/*.bc
        echo "$PG_CONFIG" >"$ROOT/.build-pg_config"
    fi
    log "building durable against $PG_CONFIG"
    make -C "$ROOT" -s PG_CONFIG="$PG_CONFIG" || { warn "make failed"; return 1; }
    log "temp install in $TMP_INSTALL"
    rm -rf "$TMP_INSTALL" &&
        mkdir -p "$TMP_INSTALL$(dirname "$libroot")" &&
        cp -a "$libroot" "$TMP_INSTALL$libroot" || { warn "copying $libroot failed"; return 1; }
    case "$sharedir" in
        "$libroot"/*) ;;                    # already copied with libroot (configure --prefix)
        *) mkdir -p "$TMP_INSTALL$(dirname "$sharedir")" &&
            cp -a "$sharedir" "$TMP_INSTALL$sharedir" ||
            { warn "copying $sharedir failed"; return 1; } ;;
    esac
    make -C "$ROOT" -s PG_CONFIG="$PG_CONFIG" install DESTDIR="$TMP_INSTALL" >/dev/null ||
        { warn "make install failed"; return 1; }
    use_temp_install
    # The copy must serve its own files, or tests would run against the system's.
    if [ "$(pg_config --sharedir)" != "$TMP_INSTALL$sharedir" ]; then
        warn "the copied PostgreSQL does not relocate: $(pg_config --sharedir)"
        return 1
    fi
}

# Use an existing ./tmp_install: set TMP_BINDIR and put it first in PATH.
use_temp_install() {
    TMP_BINDIR="$TMP_INSTALL$("$PG_CONFIG" --bindir)"
    [ -x "$TMP_BINDIR/postgres" ] || { warn "no temp install in $TMP_INSTALL"; return 1; }
    export PATH="$TMP_BINDIR:$PATH"
}

# start_cluster DATADIR PORT SOCKETDIR [EXTRA_CONF_FILE]: initdb (UTF8, C locale), add
# the conf file, listen on a unix socket only, start.  Logs go to DATADIR/../server.log.
start_cluster() {
    local data=$1 port=$2 sock=$3 conf=${4:-}
    initdb -D "$data" -A trust -N -E UTF8 --no-locale >"$(dirname "$data")/initdb.log" 2>&1 ||
        { cat "$(dirname "$data")/initdb.log"; die "initdb failed"; }
    {
        echo "port = $port"
        echo "listen_addresses = ''"
        echo "unix_socket_directories = '$sock'"
        if [ -n "$conf" ]; then cat "$conf"; fi
    } >>"$data/postgresql.conf"
    pg_ctl -D "$data" -l "$(dirname "$data")/server.log" -w -t 60 start >/dev/null ||
        { tail -n 30 "$(dirname "$data")/server.log"; die "server did not start"; }
}

# stop_cluster DATADIR: fast shutdown if it runs.
stop_cluster() {
    local data=$1
    [ -f "$data/postmaster.pid" ] && pg_ctl -D "$data" -m fast -w stop >/dev/null 2>&1
    return 0
}

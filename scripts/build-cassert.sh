#!/usr/bin/env bash
# scripts/build-cassert.sh: build an assert-enabled PostgreSQL into ./tmp_cassert/postgresql,
# for `make test-cassert` (scripts/test-cassert.sh).
#
# It is Debian's source package of the installed postgresql-$PG_MAJOR (same version,
# Debian's patches applied), configured with --enable-cassert (USE_ASSERT_CHECKING, which
# brings CLOBBER_FREED_MEMORY: pfree'd memory is overwritten with 0x7F, and
# MEMORY_CONTEXT_CHECKING: chunk overruns and bad pfree's are reported), --enable-debug
# and --enable-tap-tests, plus the isolation tester, pgTAP (SQL files copied from the
# installed postgresql-$PG_MAJOR-pgtap) and pg_cron (Debian's source package of the
# installed postgresql-$PG_MAJOR-cron, built against this server).
#
# The build is cached: ./tmp_cassert/postgresql/.stamp names the postgresql-15 version it
# was built for, and a later run while that version is installed builds nothing.  The
# build takes 6 to 15 minutes on 2 cores.  If a mirror lacks the source of the installed
# version (security updates sometimes), the newest 15.x source apt lists is built: the
# tests use that installation's own server, pg_config and pgxs, so they still match.
#
# As root it first installs what the build needs (dpkg-dev for `apt-get source`, bison,
# flex, libreadline-dev, zlib1g-dev) and adds deb-src entries for the Debian sources apt
# already uses; as another user those must be there already.  The build runs as whoever
# runs this script; the tests (scripts/test.sh) then run as postgres.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/lib.sh"

CASSERT_DIR="$ROOT/tmp_cassert"
# Debian's 50-per-version-dirs.patch installs the libraries into /usr/lib/postgresql/15/lib
# unless the libdir names "postgres": the prefix must, so that nothing is written outside.
PREFIX="$CASSERT_DIR/postgresql"
SRCDIR="$CASSERT_DIR/src"
JOBS=${JOBS:-2}
BUILD_PACKAGES="dpkg-dev bison flex libreadline-dev zlib1g-dev libipc-run-perl perl make gcc"

# installed_version PACKAGE: the version dpkg has installed, or nothing.
installed_version() {
    dpkg-query -W -f='${Version}' "$1" 2>/dev/null || true
}

# ensure_build_packages: as root, the packages the build needs and deb-src entries.
ensure_build_packages() {
    local missing=() p
    for p in $BUILD_PACKAGES; do
        dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
    done
    local need_src=0
    # shellcheck disable=SC2016  # $(CREATED_BY) is apt's format, not the shell's
    if ! apt-get indextargets --format '$(CREATED_BY)' 2>/dev/null | grep -q '^Sources$'; then
        need_src=1
    fi
    [ ${#missing[@]} -eq 0 ] && [ "$need_src" -eq 0 ] && return 0
    is_root || die "the cassert build needs: ${missing[*]}${need_src:+ and deb-src entries} (run as root once)"
    export DEBIAN_FRONTEND=noninteractive
    if [ "$need_src" -eq 1 ]; then
        add_deb_src
    fi
    if [ "$need_src" -eq 1 ] || [ "${DURABLE_APT_UPDATED:-}" != 1 ]; then
        apt-get update -q
        export DURABLE_APT_UPDATED=1
    fi
    if [ ${#missing[@]} -gt 0 ]; then
        log "installing ${missing[*]}"
        apt-get install -y -q "${missing[@]}"
    fi
}

# add_deb_src: a deb-src twin of every deb822 "Types: deb" stanza apt already uses (or of
# every one-line "deb" entry), in a file of its own.
add_deb_src() {
    local f out=/etc/apt/sources.list.d/durable-deb-src.sources
    : >"$out.tmp"
    for f in /etc/apt/sources.list.d/*.sources; do
        if [ ! -f "$f" ] || [ "$f" = "$out" ]; then continue; fi
        # Paragraphs of type deb only, their Types line rewritten to deb-src.
        awk 'BEGIN { RS = ""; ORS = "\n\n" }
             /(^|\n)Types:[ \t]*deb([ \t]|\n|$)/ && !/deb-src/ && !/Enabled:[ \t]*no/ {
                 sub(/Types:[ \t]*deb/, "Types: deb-src"); print }' "$f" >>"$out.tmp"
    done
    if [ -s "$out.tmp" ]; then
        mv "$out.tmp" "$out"
    else
        rm -f "$out.tmp"
        out=/etc/apt/sources.list.d/durable-deb-src.list
        cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
            sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' >"$out"
        [ -s "$out" ] || die "no Debian source entries found to add deb-src for"
    fi
    log "added deb-src entries in $out"
}

# fetch_source PACKAGE VERSION DIR: unpack Debian's source package PACKAGE (patches
# applied) into DIR, at VERSION if apt can fetch it, else at the newest version apt lists
# (a security update's source may be missing from a mirror).  Prints the version used.
fetch_source() {
    local pkg=$1 ver=$2 dir=$3 work v unpacked tried=""
    work="$CASSERT_DIR/dl-$pkg"
    for v in "$ver" $(apt-cache showsrc "$pkg" 2>/dev/null | sed -n 's/^Version: //p' |
        sort -u -r -V); do
        case " $tried " in *" $v "*) continue ;; esac
        tried="$tried $v"
        rm -rf "$work" "$dir"; mkdir -p "$work"
        log "apt-get source $pkg=$v" >&2
        if (cd "$work" && apt-get source -q "$pkg=$v" >apt-source.log 2>&1); then
            unpacked=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)
            [ -n "$unpacked" ] || die "apt-get source $pkg=$v unpacked nothing"
            if ! { mkdir -p "$(dirname "$dir")" && mv "$unpacked" "$dir"; }; then
                die "cannot move $unpacked"
            fi
            rm -rf "$work"
            [ "$v" = "$ver" ] ||
                warn "source of $pkg=$ver not available; built $v (same major version)"
            echo "$v"
            return 0
        fi
        grep -E '^(E|Err):' "$work/apt-source.log" | head -n 3 >&2
    done
    die "apt-get source $pkg failed for every version apt lists"
}

is_root && ensure_build_packages

PG_VERSION_DEB=$(installed_version "postgresql-$PG_MAJOR")
CRON_VERSION_DEB=$(installed_version "postgresql-$PG_MAJOR-cron")
PGTAP_VERSION_DEB=$(installed_version "postgresql-$PG_MAJOR-pgtap")
[ -n "$PG_VERSION_DEB" ] || die "postgresql-$PG_MAJOR is not installed: nothing to match"
STAMP="postgresql-$PG_MAJOR=$PG_VERSION_DEB"

if [ -f "$PREFIX/.stamp" ] && [ "$(cat "$PREFIX/.stamp")" = "$STAMP" ] &&
    [ -x "$PREFIX/bin/postgres" ]; then
    log "assert-enabled PostgreSQL $(cat "$PREFIX/.built-version") is in $PREFIX (cached)"
else
    log "building an assert-enabled PostgreSQL in $CASSERT_DIR (for $STAMP)"
    rm -rf "$PREFIX"
    mkdir -p "$CASSERT_DIR"
    built_pg=$(fetch_source "postgresql-$PG_MAJOR" "$PG_VERSION_DEB" "$SRCDIR/postgresql") ||
        exit 1
    (
        cd "$SRCDIR/postgresql" || exit 1
        # Run from `make test-cassert`, this is a nested make: PostgreSQL's
        # makefiles build their generated headers (utils/errcodes.h ...) first only
        # at MAKELEVEL 0, so the outer make's level and flags must not leak in.
        unset MAKELEVEL MAKEFLAGS MFLAGS
        log "configure (log in $SRCDIR/postgresql/configure.out)"
        ./configure --prefix="$PREFIX" --enable-cassert --enable-debug --enable-tap-tests \
            --without-icu --with-readline --with-zlib >configure.out 2>&1 ||
            { tail -n 30 configure.out; exit 1; }
        log "make -j$JOBS (log in $SRCDIR/postgresql/make.out)"
        { make -j"$JOBS" -s && make -s install &&
            make -C src/test/isolation -s install; } >make.out 2>&1 ||
            { tail -n 40 make.out; exit 1; }
    ) || die "building PostgreSQL failed"
    case $("$PREFIX/bin/pg_config" --pkglibdir) in
        "$PREFIX"/*) ;;
        *) die "the build's pkglibdir is outside $PREFIX: $("$PREFIX/bin/pg_config" --pkglibdir)" ;;
    esac
    grep -q '^#define USE_ASSERT_CHECKING 1' \
        "$("$PREFIX/bin/pg_config" --includedir-server)/pg_config.h" ||
        die "the build is not assert-enabled"
    echo "$built_pg" >"$PREFIX/.built-version"
    echo "$STAMP" >"$PREFIX/.stamp"
    log "assert-enabled PostgreSQL $built_pg installed in $PREFIX"
fi

# contrib's test_decoding, the output plugin of test/t/010_standby_decoding.pl (Debian's
# postgresql-15 ships it): built from the same source tree, once.
if [ ! -f "$PREFIX/lib/test_decoding.so" ]; then
    [ -d "$SRCDIR/postgresql/contrib/test_decoding" ] ||
        die "no PostgreSQL source in $SRCDIR/postgresql for contrib/test_decoding (rm -rf $PREFIX to rebuild)"
    (
        unset MAKELEVEL MAKEFLAGS MFLAGS
        make -C "$SRCDIR/postgresql/contrib/test_decoding" -s install \
            >"$SRCDIR/test_decoding.make.out" 2>&1
    ) || { tail -n 20 "$SRCDIR/test_decoding.make.out"; die "building contrib/test_decoding failed"; }
    log "contrib/test_decoding built into $PREFIX"
fi

# pgTAP is SQL only: the installed package's files serve any server of the same major.
sysshare=$("/usr/lib/postgresql/$PG_MAJOR/bin/pg_config" --sharedir 2>/dev/null || true)
if [ -n "$PGTAP_VERSION_DEB" ] && [ -n "$sysshare" ]; then
    cp -u "$sysshare"/extension/pgtap* "$PREFIX/share/extension/"
else
    warn "postgresql-$PG_MAJOR-pgtap is not installed: the pgTAP layer will fail"
fi

# pg_cron is C: build Debian's source package of the installed postgresql-15-cron
# against this server (once).  Without it test/t/005_pg_cron_purge.pl skips itself.
if [ -f "$PREFIX/lib/pg_cron.so" ]; then
    :
elif [ -n "$CRON_VERSION_DEB" ]; then
    cron_src=$(dpkg-query -W -f='${source:Package}' "postgresql-$PG_MAJOR-cron")
    cron_ver=$(dpkg-query -W -f='${source:Version}' "postgresql-$PG_MAJOR-cron")
    if (fetch_source "$cron_src" "$cron_ver" "$SRCDIR/pg_cron" >/dev/null) &&
        make -C "$SRCDIR/pg_cron" -s PG_CONFIG="$PREFIX/bin/pg_config" install \
            >"$SRCDIR/pg_cron.make.out" 2>&1; then
        log "pg_cron $cron_ver built into $PREFIX"
    else
        [ -f "$SRCDIR/pg_cron.make.out" ] && tail -n 20 "$SRCDIR/pg_cron.make.out"
        warn "could not build pg_cron ($cron_src $cron_ver) for the assert-enabled" \
            "PostgreSQL: test/t/005_pg_cron_purge.pl will skip itself there"
    fi
else
    warn "postgresql-$PG_MAJOR-cron is not installed: test/t/005_pg_cron_purge.pl will skip"
fi

# Readable by the postgres OS user, who runs the tests when root calls them.
chmod -R a+rX "$CASSERT_DIR"

#!/usr/bin/env bash
# scripts/build-citus.sh: build Citus from vendor/ into ./tmp_citus, for `make test-citus`
# (scripts/test-citus.sh).
#
# Citus is not in Debian's archive.  The tests build it once from the source archive in
# vendor/ (vendor/README.md says what it is and how it was made) against the PostgreSQL
# that $PG_CONFIG names (default: Debian's postgresql-15), and install it with DESTDIR
# into ./tmp_citus/install: the same absolute paths as that PostgreSQL's, under a private
# root.  scripts/test-citus.sh copies those files into its temp install (./tmp_install,
# see scripts/lib.sh), next to durable's.  Nothing is written outside the tree.
#
# The build is cached: ./tmp_citus/.stamp names the archive's checksum and the pg_config
# used, and a later run with the same ones builds nothing.  It takes 1 to 3 minutes on
# 2 cores.  As root it first installs what the build needs (liblz4-dev, libzstd-dev,
# libkrb5-dev besides durable's own packages); as another user they must be there.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/lib.sh"

CITUS_VERSION=13.2.2
ARCHIVE="$ROOT/vendor/citus-$CITUS_VERSION.tar.gz"
PATCHES=("$ROOT/vendor/citus-$CITUS_VERSION-pg15.20.patch")
CITUS_DIR="$ROOT/tmp_citus"
SRCDIR="$CITUS_DIR/src"
DESTDIR="$CITUS_DIR/install"
JOBS=${JOBS:-2}
CITUS_BUILD_PACKAGES="liblz4-dev libzstd-dev libkrb5-dev"

if is_root; then
    ensure_packages
    # shellcheck disable=SC2086  # one package a word
    ensure_packages $CITUS_BUILD_PACKAGES
fi
find_pg
[ -f "$ARCHIVE" ] || die "no $ARCHIVE"

STAMP="$(sha256sum "$ARCHIVE" "${PATCHES[@]}" | awk '{print $1}' | tr '\n' ' ')$PG_CONFIG"
pkglibdir=$("$PG_CONFIG" --pkglibdir)
if [ -f "$CITUS_DIR/.stamp" ] && [ "$(cat "$CITUS_DIR/.stamp")" = "$STAMP" ] &&
    [ -f "$DESTDIR$pkglibdir/citus.so" ]; then
    log "Citus $CITUS_VERSION is in $DESTDIR (cached)"
    exit 0
fi

log "building Citus $CITUS_VERSION in $CITUS_DIR against $PG_CONFIG"
start=$SECONDS
rm -rf "$CITUS_DIR"
mkdir -p "$SRCDIR"
tar -C "$SRCDIR" -xzf "$ARCHIVE"
tree="$SRCDIR/citus-$CITUS_VERSION"
[ -d "$tree" ] || die "the archive did not unpack to citus-$CITUS_VERSION/"
for p in "${PATCHES[@]}"; do
    patch -s -d "$tree" -p1 <"$p" || die "patch $p failed"
done
(
    cd "$tree" || exit 1
    # Run from make, this is a nested make: the outer make's level and flags must not
    # leak in.
    unset MAKELEVEL MAKEFLAGS MFLAGS
    log "configure (log in $tree/configure.out)"
    ./configure --without-libcurl PG_CONFIG="$PG_CONFIG" >configure.out 2>&1 ||
        { tail -n 30 configure.out; exit 1; }
    log "make -j$JOBS (log in $tree/make.out)"
    { make -j"$JOBS" -s && make -s install DESTDIR="$DESTDIR"; } >make.out 2>&1 ||
        { tail -n 40 make.out; exit 1; }
) || die "building Citus failed"
[ -f "$DESTDIR$pkglibdir/citus.so" ] || die "no citus.so in $DESTDIR$pkglibdir after the build"
echo "$STAMP" >"$CITUS_DIR/.stamp"
# Readable by the postgres OS user, who runs the tests when root calls them.
chmod -R a+rX "$CITUS_DIR"
log "Citus $CITUS_VERSION built in $((SECONDS - start)) s into $DESTDIR"

# durable: PGXS build.
#
#   make            build durable.so (warnings are errors)
#   make install    install into the PostgreSQL that pg_config names
#   make test       every test layer on a throwaway cluster (scripts/test.sh)
#   make test-cassert   the same against an assert-enabled PostgreSQL, built once into
#                   ./tmp_cassert (scripts/test-cassert.sh)
#   make test-citus the durable_citus layer (citus/) on a Citus coordinator and two
#                   workers, Citus built once into ./tmp_citus (scripts/test-citus.sh)
#   make test-small-buffers   regress, pgTAP and isolation with shared_buffers = 128kB
#   make demo       a throwaway cluster running a few workflows (scripts/demo.sh);
#                   DEMO_UI=1 leaves it running with the dashboard on 127.0.0.1:8080
#   make ui         the dashboard (ui/server.js) on 127.0.0.1:8080, connected with
#                   DATABASE_URL or the PG* environment variables (docs/dashboard.md)
#   make bench      the pgbench benchmarks with their floors (bench/run.sh)
#   make bench-instructions  the instructions a workflow costs, counted by valgrind
#                   (bench/instructions.sh)
#   make bench-citus  the cost of routing through durable_citus, 1 and 2 workers
#                   (bench/citus.sh)
#   make fuzz       the fuzzer and sqlsmith against a throwaway cluster (scripts/fuzz.sh)

EXTENSION = durable
MODULE_big = durable
OBJS = $(patsubst %.c,%.o,$(sort $(wildcard src/*.c src/*/*.c)))

# The shipped scripts, and the fresh install scripts of the shipped and
# current versions, sql/durable--0.3.0.sql to sql/durable--0.12.0.sql, which
# are built: the schema check at the top of sql/durable--0.2.0--0.3.0.sql,
# then the scripts of the update path from 0.1.0 to that version.
# PostgreSQL runs one for a fresh CREATE EXTENSION instead of the path, so
# that the check runs before anything else (see that script's comment).
# The shipped versions' are still built so that CREATE EXTENSION durable
# VERSION '0.3.0' installs what 0.3.0 shipped (the upgrade tests start from
# them).  A new
# version adds its update script to a path of its own and its install
# script to DURABLE_INSTALL_SQL.
DURABLE_PATH_0.3.0 = sql/durable--0.1.0.sql sql/durable--0.1.0--0.2.0.sql \
	sql/durable--0.2.0--0.3.0.sql
DURABLE_PATH_0.4.0 = $(DURABLE_PATH_0.3.0) sql/durable--0.3.0--0.4.0.sql
DURABLE_PATH_0.5.0 = $(DURABLE_PATH_0.4.0) sql/durable--0.4.0--0.5.0.sql
DURABLE_PATH_0.6.0 = $(DURABLE_PATH_0.5.0) sql/durable--0.5.0--0.6.0.sql
DURABLE_PATH_0.7.0 = $(DURABLE_PATH_0.6.0) sql/durable--0.6.0--0.7.0.sql
DURABLE_PATH_0.8.0 = $(DURABLE_PATH_0.7.0) sql/durable--0.7.0--0.8.0.sql
DURABLE_PATH_0.9.0 = $(DURABLE_PATH_0.8.0) sql/durable--0.8.0--0.9.0.sql
DURABLE_PATH_0.10.0 = $(DURABLE_PATH_0.9.0) sql/durable--0.9.0--0.10.0.sql
DURABLE_PATH_0.11.0 = $(DURABLE_PATH_0.10.0) sql/durable--0.10.0--0.11.0.sql
DURABLE_PATH_0.12.0 = $(DURABLE_PATH_0.11.0) sql/durable--0.11.0--0.12.0.sql
DURABLE_INSTALL_SQL = sql/durable--0.3.0.sql sql/durable--0.4.0.sql sql/durable--0.5.0.sql \
	sql/durable--0.6.0.sql sql/durable--0.7.0.sql sql/durable--0.8.0.sql \
	sql/durable--0.9.0.sql sql/durable--0.10.0.sql sql/durable--0.11.0.sql \
	sql/durable--0.12.0.sql
DATA = $(filter-out $(DURABLE_INSTALL_SQL),$(sort $(wildcard sql/durable--*.sql)))
DATA_built = $(DURABLE_INSTALL_SQL)

PG_CONFIG ?= pg_config
PG_CPPFLAGS = -I$(srcdir)/src
PG_CFLAGS = -Wall -Wextra -Werror -Wno-unused-parameter -Wno-sign-compare \
	-Wno-missing-field-initializers

EXTRA_CLEAN = tmp_check tmp_install results output_iso log regression.diffs regression.out \
	demo_cluster .build-pg_config $(addsuffix .tmp,$(DURABLE_INSTALL_SQL))

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

$(OBJS): $(wildcard src/*.h src/*/*.h)

# sql/durable--V.sql from $(DURABLE_PATH_V); the check block must come out
# as its third line.
.SECONDEXPANSION:
$(DURABLE_INSTALL_SQL): sql/durable--%.sql: $$(DURABLE_PATH_%)
	{ printf '%s\n' '-- durable $*, built by the Makefile from $(DURABLE_PATH_$*): do not edit.' \
	    '\echo Use "CREATE EXTENSION durable" to load this file. \quit'; \
	  sed -n '/^-- BEGIN schema check/,/^-- END schema check/p' sql/durable--0.2.0--0.3.0.sql; \
	  cat $(DURABLE_PATH_$*); } > $@.tmp
	sed -n 3p $@.tmp | grep -q '^-- BEGIN schema check'
	mv $@.tmp $@

.PHONY: test test-cassert test-citus test-small-buffers demo bench bench-citus bench-instructions fuzz ui
# scripts/test.sh runs pg_regress, pgTAP, isolation and TAP layers on its own clusters;
# `scripts/test.sh regress` runs one layer (see test/README.md).  PG15's pg_regress has
# no --expecteddir: it runs with --inputdir=test, and test/expected is a committed
# symlink to ../expected.
test:
	scripts/test.sh

# LAYERS limits both, e.g. `make test-cassert LAYERS=pgtap`.
test-cassert:
	scripts/test-cassert.sh

# TESTS limits it, e.g. `make test-citus TESTS=001_routing`.
test-citus:
	scripts/test-citus.sh

test-small-buffers:
	DURABLE_TEST_CONF_EXTRA=test/small_buffers.conf LAYERS="$${LAYERS:-regress pgtap isolation}" scripts/test.sh

demo:
	scripts/demo.sh

# npm ci when ui/package-lock.json changed since the last one (the stamp), then the server.
ui:
	@cmp -s ui/package-lock.json ui/node_modules/.durable-lock || \
	    { (cd ui && npm ci --no-audit --no-fund) && cp ui/package-lock.json ui/node_modules/.durable-lock; }
	node ui/server.js $(DATABASE_URL)

bench:
	bench/run.sh

bench-citus:
	bench/citus.sh

bench-instructions:
	bench/instructions.sh

# FUZZ_SECONDS (60), FUZZ_SEED, FUZZ_CLIENTS: see scripts/fuzz.sh and test/README.md.
fuzz:
	scripts/fuzz.sh

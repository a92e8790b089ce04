# durable: PGXS build.
#
#   make            build durable.so (warnings are errors)
#   make install    install into the PostgreSQL that pg_config names
#   make test       every test layer on a throwaway cluster (scripts/test.sh)
#   make test-cassert   the same against an assert-enabled PostgreSQL, built once into
#                   ./tmp_cassert (scripts/test-cassert.sh)
#   make test-small-buffers   regress, pgTAP and isolation with shared_buffers = 128kB
#   make demo       a throwaway cluster running a few workflows (scripts/demo.sh)
#   make bench      the pgbench benchmarks with their floors (bench/run.sh)
#   make fuzz       the fuzzer and sqlsmith against a throwaway cluster (scripts/fuzz.sh)

EXTENSION = durable
MODULE_big = durable
OBJS = $(patsubst %.c,%.o,$(sort $(wildcard src/*.c)))

DATA = $(sort $(wildcard sql/durable--*.sql))

PG_CONFIG ?= pg_config
PG_CPPFLAGS = -I$(srcdir)/src
PG_CFLAGS = -Wall -Wextra -Werror -Wno-unused-parameter -Wno-sign-compare \
	-Wno-missing-field-initializers

EXTRA_CLEAN = tmp_check tmp_install results output_iso log regression.diffs regression.out \
	demo_cluster .build-pg_config

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

$(OBJS): $(wildcard src/*.h)

.PHONY: test test-cassert test-small-buffers demo bench fuzz
# scripts/test.sh runs pg_regress, pgTAP, isolation and TAP layers on its own clusters;
# `scripts/test.sh regress` runs one layer (see test/README.md).  PG15's pg_regress has
# no --expecteddir: it runs with --inputdir=test, and test/expected is a committed
# symlink to ../expected.
test:
	scripts/test.sh

# LAYERS limits both, e.g. `make test-cassert LAYERS=pgtap`.
test-cassert:
	scripts/test-cassert.sh

test-small-buffers:
	DURABLE_TEST_CONF_EXTRA=test/small_buffers.conf LAYERS="$${LAYERS:-regress pgtap isolation}" scripts/test.sh

demo:
	scripts/demo.sh

bench:
	bench/run.sh

# FUZZ_SECONDS (60), FUZZ_SEED, FUZZ_CLIENTS: see scripts/fuzz.sh and test/README.md.
fuzz:
	scripts/fuzz.sh

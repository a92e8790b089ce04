# A session's kept plans follow its tables as they grow (src/store/spi.c): a
# statement planned while durable.runs was nearly empty (right after an
# ANALYZE of 20 runs) scans it whole, which is right then; after 5,000 more
# runs started in the same session, with no ANALYZE between (autovacuum is
# off), the same statements use the index of the key they look up.  Before,
# such a plan was kept at every call of the session until something
# invalidated it.  auto_explain logs the plans of the engine's statements of
# the last signals and descriptions: none scans durable.runs sequentially.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('plans_grow');
# auto_explain is PostgreSQL's contrib module: Debian's server package has it, the
# assert-enabled build of make test-cassert does not.
plan skip_all => 'auto_explain is not installed'
  unless -e $node->config_data('--pkglibdir') . '/auto_explain.so';
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = off
autovacuum = off
});
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', q{
CREATE EXTENSION durable;
SELECT count(durable.start_workflow('t', NULL, 'seed' || i, 'q')) FROM generate_series(1, 20) i;
ANALYZE;
});

# One session: signals and descriptions while the table is small, 5,000 starts,
# then the same calls again, the last of them with their plans logged.
my $log_start;
my $session = $node->background_psql('app');
$session->query_safe(q{
SELECT count(durable.signal_workflow('seed' || (i % 20 + 1), 's', '1')) FROM generate_series(1, 30) i;
SELECT count(durable.describe_workflow('seed' || (i % 20 + 1))) FROM generate_series(1, 30) i;
SELECT count(durable.start_workflow('t', NULL, 'w' || i, 'q')) FROM generate_series(1, 5000) i;
SELECT count(durable.signal_workflow('w' || i, 's', '1')) FROM generate_series(1, 300) i;
SELECT count(durable.describe_workflow('w' || i)) FROM generate_series(1, 300) i;
});
$log_start = -s $node->logfile;
$session->query_safe(q{
LOAD 'auto_explain';
SET auto_explain.log_min_duration = 0;
SET auto_explain.log_nested_statements = on;
SELECT count(durable.signal_workflow('w' || i, 's', '2')) FROM generate_series(301, 320) i;
SELECT count(durable.describe_workflow('w' || i)) FROM generate_series(301, 320) i;
});
$session->quit;
my $log = slurp_file($node->logfile, $log_start);

my @plans = ($log =~ /Query Text: (.*?)(?=\n\S|\z)/gs);
my @runs = grep { /durable\.runs/ } @plans;
cmp_ok(scalar(@runs), '>', 20,
	'auto_explain logged the engine\'s statements on durable.runs (' . scalar(@runs) . ')');
my @scans = grep { /Seq Scan on runs\b/ } @plans;
is(scalar(@scans), 0, 'none scans durable.runs sequentially after it grew')
  or diag(join("\n----\n", @scans[0 .. ($#scans < 2 ? $#scans : 2)]));

done_testing();

# Retention without the background worker: a pg_cron job calls durable.purge(),
# which removes closed runs past their namespace's retention and leaves the
# rest (running runs, runs still within retention).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# `make test-cassert` builds pg_cron for its assert-enabled PostgreSQL from Debian's
# source package; where that source could not be fetched it has none (and says so).
# Everywhere else pg_cron is required: scripts/test.sh installs postgresql-15-cron.
my $sharedir = `pg_config --sharedir`;
chomp $sharedir;
plan skip_all => 'pg_cron is not built for this assert-enabled PostgreSQL'
  if !-f "$sharedir/extension/pg_cron.control"
  && `pg_config --configure` =~ /--enable-cassert/;

my $node = PostgreSQL::Test::Cluster->new('cron');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'durable,pg_cron'
cron.database_name = 'postgres'
# The TAP cluster listens on a unix socket only: run jobs in background workers.
cron.use_background_workers = on
durable.worker_enabled = off
});
$node->start;

$node->safe_psql('postgres', 'CREATE EXTENSION durable; CREATE EXTENSION pg_cron;');
$node->safe_psql('postgres', q{
    SELECT durable.create_namespace('scratch', retention => '0 seconds');
    SELECT durable.start_workflow('w', workflow_id => 'old-' || i, namespace => 'scratch')
      FROM generate_series(1, 5) i;
    SELECT durable.terminate_workflow('old-' || i, namespace => 'scratch')
      FROM generate_series(1, 5) i;
    SELECT durable.start_workflow('w', workflow_id => 'alive', namespace => 'scratch');
    SELECT durable.start_workflow('w', workflow_id => 'kept');
    SELECT durable.terminate_workflow('kept');
});
is($node->safe_psql('postgres',
        "SELECT count(*) FROM durable.runs WHERE status <> 'running'"),
    '6', 'six closed runs before the job');

# pg_cron 1.5 and later take second intervals; 1.4 takes cron syntax only,
# and then the job runs at the start of the next minute.
my ($ret, $out, $err) = $node->psql('postgres',
    q{SELECT cron.schedule('durable-purge', '1 seconds', 'SELECT durable.purge()')});
if ($ret != 0)
{
    note("pg_cron without second intervals ($err): scheduling every minute");
    $node->safe_psql('postgres',
        q{SELECT cron.schedule('durable-purge', '* * * * *', 'SELECT durable.purge()')});
}

ok($node->poll_query_until('postgres',
        "SELECT count(*) = 0 FROM durable.runs WHERE namespace = 'scratch' AND status <> 'running'"),
    'the pg_cron job purged the closed runs past retention');
is($node->safe_psql('postgres',
        "SELECT count(*) FROM durable.history h WHERE NOT EXISTS (SELECT 1 FROM durable.runs r WHERE r.run_id = h.run_id)"),
    '0', 'with their history');
is($node->safe_psql('postgres', "SELECT status FROM durable.runs WHERE workflow_id = 'alive'"),
    'running', 'a running run stays');
is($node->safe_psql('postgres', "SELECT status FROM durable.runs WHERE workflow_id = 'kept'"),
    'terminated', 'a closed run within its retention (7 days) stays');
ok($node->poll_query_until('postgres',
        "SELECT count(*) > 0 FROM cron.job_run_details WHERE command = 'SELECT durable.purge()' AND status = 'succeeded'"),
    'pg_cron recorded the run');

$node->stop;
done_testing();

# Plumbing smoke test: a cluster with durable preloaded starts and creates the extension.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('smoke');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'durable'");
$node->start;

$node->safe_psql('postgres', 'CREATE EXTENSION durable');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'server answers with durable loaded');
is($node->safe_psql('postgres',
        "SELECT extname FROM pg_extension WHERE extname = 'durable'"),
    'durable', 'extension created');

$node->stop;
done_testing();

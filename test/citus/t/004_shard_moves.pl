# Shard moves and new nodes: moving, copying or rebalancing the shards of
# durable_citus.routes is refused with a clear error (0A000), since the workflows a shard
# routes to its node live in durable's tables there and would not move with it; a node
# added later gets durable and durable_citus but owns no workflow, and routing goes on
# as before.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CitusCluster;

my ($coord, $w1, $w2) = citus_cluster();

$coord->safe_psql('postgres', qq{SELECT durable_citus.start_workflow('t', NULL, 'm-$_')}) foreach (1 .. 10);
my $before = join(',', map { owner_port($coord, 'default', "m-$_") } 1 .. 10);

# A move of a shard that owns a workflow, from its node to the other.
my $port = owner_port($coord, 'default', 'm-1');
my $to = $port eq $w1->port ? $w2->port : $w1->port;
my $shard = $coord->safe_psql('postgres', q{
	SELECT get_shard_id_for_distribution_column('durable_citus.routes', durable_citus.route_key('default', 'm-1'))});
my ($stdout, $stderr) = ('', '');
$coord->psql('postgres', "\\set VERBOSITY verbose\nSELECT citus_move_shard_placement($shard, '127.0.0.1', $port, '127.0.0.1', $to, 'block_writes')",
	stdout => \$stdout, stderr => \$stderr);
like($stderr, qr/ERROR:\s+0A000: durable_citus: the shards of durable_citus.routes cannot be moved/,
	'citus_move_shard_placement of a routes shard is refused with 0A000');
like($stderr, qr/DETAIL:.*would not move with the shard/, 'the error says why');
is($coord->safe_psql('postgres', qq{
	SELECT n.nodeport FROM pg_dist_placement p JOIN pg_dist_node n USING (groupid) WHERE p.shardid = $shard}),
	$port, 'the shard stayed where it was');
is(sqlstate_of($coord, q{SELECT durable_citus.start_workflow('t', NULL, 'm-1')}), 'WF001',
	'and its workflow is still found on its owner');

# A split, on the same node, is refused the same way.
my $mid = $coord->safe_psql('postgres', qq{
	SELECT ((shardminvalue::bigint + shardmaxvalue::bigint) / 2)::text FROM pg_dist_shard WHERE shardid = $shard});
my $nodeid = $coord->safe_psql('postgres', "SELECT nodeid FROM pg_dist_node WHERE nodeport = $port");
($stdout, $stderr) = ('', '');
$coord->psql('postgres', "\\set VERBOSITY verbose\nSELECT citus_split_shard_by_split_points($shard, ARRAY['$mid'], ARRAY[$nodeid, $nodeid], 'block_writes')",
	stdout => \$stdout, stderr => \$stderr);
like($stderr, qr/ERROR:\s+0A000: durable_citus: the shards of durable_citus.routes cannot be moved/,
	'citus_split_shard_by_split_points of a routes shard is refused');
is($coord->safe_psql('postgres', 'SELECT sum(shards) FROM durable_citus.nodes()'), '32', 'no shard was added');

# A node added later: it gets the extensions, and owns nothing.
my $w3 = PostgreSQL::Test::Cluster->new('worker3');
$w3->init;
$w3->append_conf('postgresql.conf', q{
shared_preload_libraries = 'citus,durable'
listen_addresses = '127.0.0.1'
citus.local_hostname = '127.0.0.1'
durable.worker_enabled = on
max_prepared_transactions = 20
});
$w3->start;
$w3->safe_psql('postgres', 'CREATE EXTENSION citus');
$coord->safe_psql('postgres', "SELECT citus_add_node('127.0.0.1', " . $w3->port . ')');
is($w3->safe_psql('postgres', q{
	SELECT string_agg(extname, ',' ORDER BY extname) FROM pg_extension WHERE extname LIKE 'durable%'}),
	'durable,durable_citus', 'a node added later gets durable and durable_citus');
is($coord->safe_psql('postgres', 'SELECT count(*) FROM durable_citus.nodes()'), '2',
	'it owns no shard of the routes table, so no workflow');

# Rebalancing onto it is refused, and changes nothing.
($stdout, $stderr) = ('', '');
$coord->psql('postgres', q{
	\set VERBOSITY verbose
	SELECT rebalance_table_shards('durable_citus.routes', shard_transfer_mode => 'block_writes')},
	stdout => \$stdout, stderr => \$stderr);
like($stderr, qr/ERROR:\s+0A000: durable_citus: the shards of durable_citus.routes cannot be moved/,
	'rebalance_table_shards of the routes table is refused');
is($coord->safe_psql('postgres', 'SELECT string_agg(node_port::text || \':\' || shards, \',\' ORDER BY group_id) FROM durable_citus.nodes()'),
	$w1->port . ':16,' . $w2->port . ':16', 'every shard stayed where it was');
is(join(',', map { owner_port($coord, 'default', "m-$_") } 1 .. 10), $before, 'so did every workflow\'s owner');
is(join(',', map { holders([ $coord, $w1, $w2, $w3 ], 'default', "m-$_") } 1 .. 10), $before,
	'and every run');
$coord->safe_psql('postgres', q{SELECT durable_citus.start_workflow('t', NULL, 'after-add')});
is(holders([ $coord, $w1, $w2, $w3 ], 'default', 'after-add'), owner_port($coord, 'default', 'after-add'),
	'a start after the node was added lands on its owner');

done_testing();

# Helpers of the durable_citus tests (test/citus/t/*.pl, run by scripts/test-citus.sh):
# a Citus cluster of a coordinator and two workers on this machine, with durable and
# durable_citus installed, and a few checks.
package CitusCluster;

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Exporter 'import';

our @EXPORT = qw(citus_cluster sqlstate_of owner_port holders id_owned_by count_events);

# citus_cluster(%opts): ($coordinator, $worker1, $worker2), started, Citus set up (the
# coordinator in the metadata, both workers added), durable and durable_citus created
# on the coordinator (Citus creates them on the workers); $opts{durable_citus_version}
# names the version of durable_citus to create (default: the current one), and
# $opts{prefix} is put before the servers' names (a second cluster in one test).  Every
# server preloads 'citus,durable' with durable's background workers on, and listens on
# 127.0.0.1, the address the nodes reach one another by.
sub citus_cluster
{
	my %opts = @_;
	my @nodes;
	foreach my $name ('coordinator', 'worker1', 'worker2')
	{
		my $node = PostgreSQL::Test::Cluster->new(($opts{prefix} // '') . $name);
		$node->init;
		$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'citus,durable'
listen_addresses = '127.0.0.1'
citus.local_hostname = '127.0.0.1'
durable.worker_enabled = on
durable.worker_max_sleep = 1
max_prepared_transactions = 20
max_worker_processes = 32
});
		$node->start;
		$node->safe_psql('postgres', 'CREATE EXTENSION citus');
		push @nodes, $node;
	}
	my ($coord, @workers) = @nodes;
	$coord->safe_psql('postgres',
		"SELECT citus_set_coordinator_host('127.0.0.1', " . $coord->port . ')');
	foreach my $w (@workers)
	{
		$coord->safe_psql('postgres', "SELECT citus_add_node('127.0.0.1', " . $w->port . ')');
	}
	my $version = defined $opts{durable_citus_version}
	  ? " VERSION '$opts{durable_citus_version}'" : '';
	$coord->safe_psql('postgres', "CREATE EXTENSION durable; CREATE EXTENSION durable_citus$version");
	return @nodes;
}

# sqlstate_of($node, $sql, %opts): run $sql in psql (one session, stopping at the first
# error) and return the SQLSTATE of its error, '' if none.  $opts{user} connects as that
# role.
sub sqlstate_of
{
	my ($node, $sql, %opts) = @_;
	my ($stdout, $stderr) = ('', '');
	my @extra = defined $opts{user} ? (extra_params => [ '-U', $opts{user} ]) : ();
	$node->psql('postgres', "\\set VERBOSITY verbose\n$sql",
		stdout => \$stdout, stderr => \$stderr, on_error_stop => 1, @extra);
	return $stderr =~ /ERROR:\s+([0-9A-Z]{5}):/ ? $1 : '';
}

# owner_port($coord, $namespace, $workflow_id): the port of the worker that owns the
# workflow, as Citus's metadata on the coordinator says.
sub owner_port
{
	my ($coord, $ns, $id) = @_;
	return $coord->safe_psql('postgres', qq{
		SELECT n.nodeport FROM pg_dist_node n
		 WHERE n.groupid = durable_citus.owner_group(durable_citus.route_key('$ns', '$id'))});
}

# holders(\@nodes, $namespace, $workflow_id): the ports of the nodes whose durable has a
# run of the workflow, comma-separated.
sub holders
{
	my ($nodes, $ns, $id) = @_;
	my @ports;
	foreach my $n (@$nodes)
	{
		push @ports, $n->port
		  if $n->safe_psql('postgres', qq{
			SELECT count(*) FROM durable.runs
			 WHERE namespace = '$ns' AND workflow_id = '$id'}) > 0;
	}
	return join(',', @ports);
}


# id_owned_by($coord, $node, $prefix): the first id "$prefix-N" (in namespace default)
# that the node owns.
sub id_owned_by
{
	my ($coord, $node, $prefix) = @_;
	foreach my $i (1 .. 500)
	{
		return "$prefix-$i" if owner_port($coord, 'default', "$prefix-$i") eq $node->port;
	}
	die "no id $prefix-N owned by port " . $node->port;
}

# count_events($node, $workflow_id, $event_type): how many events of the type the
# workflow's latest run has in its history on the node.
sub count_events
{
	my ($node, $id, $type) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT count(*) FROM durable.get_history('$id') WHERE event_type = '$type'});
}

1;

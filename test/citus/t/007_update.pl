# durable_citus 0.1.0 has shipped: a cluster created with it and updated with ALTER
# EXTENSION durable_citus UPDATE on the coordinator has 0.2.0 on every node, its router
# registered on each, and relays a signal across nodes as a fresh 0.2.0 does; its
# functions are those of a fresh install.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CitusCluster;

my ($coord, $w1, $w2) = citus_cluster(durable_citus_version => '0.1.0');
my @all = ($coord, $w1, $w2);

sub versions
{
	return join(',', map {
		$_->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'durable_citus'})
	} @all);
}

sub id_on
{
	my ($node, $prefix) = @_;
	foreach my $i (1 .. 500)
	{
		return "$prefix-$i" if owner_port($coord, 'default', "$prefix-$i") eq $node->port;
	}
	die "no id $prefix-N owned by port " . $node->port;
}

# The functions of durable_citus on a node, with their definitions and privileges.
my $functions = q{
	SELECT md5(string_agg(p.oid::regprocedure::text || ' ' || pg_get_functiondef(p.oid)
	                      || coalesce(p.proacl::text, ''), E'\n' ORDER BY p.oid::regprocedure::text))
	  FROM pg_proc p WHERE p.pronamespace = 'durable_citus'::regnamespace};

is(versions(), '0.1.0,0.1.0,0.1.0', 'created at 0.1.0 on every node');
is($w1->safe_psql('postgres', 'SELECT count(*) FROM durable.router'), '0', 'no router at 0.1.0');

$coord->safe_psql('postgres', 'ALTER EXTENSION durable_citus UPDATE');
is(versions(), '0.2.0,0.2.0,0.2.0', 'ALTER EXTENSION UPDATE on the coordinator updates every node');
foreach my $n ($w1, $w2)
{
	is($n->safe_psql('postgres', 'SELECT name FROM durable.router'), 'durable_citus',
		'the router is registered on worker port ' . $n->port);
}

my $sender = id_on($w1, 'sender');
my $target = id_on($w2, 'target');
$coord->safe_psql('postgres', qq{
	SELECT durable_citus.start_workflow('sender', NULL, '$sender', 'xs');
	SELECT durable_citus.start_workflow('target', NULL, '$target', 'xt');});
my $tok = $w1->safe_psql('postgres', q{SELECT durable.poll_decision_task('xs')->>'taskToken'});
$w1->safe_psql('postgres', qq{
	SELECT durable.complete_decision_task('$tok', '[{"decisionType": "SignalExternalWorkflowExecution",
		"workflowId": "$target", "signalName": "ping"}]')});
ok($w1->poll_query_until('postgres', qq{
	SELECT durable.tick() >= 0 AND EXISTS (SELECT 1 FROM durable.get_history('$sender')
	 WHERE event_type = 'ExternalWorkflowExecutionSignaled')}),
	'a signal from worker 1 to a workflow of worker 2 is answered');
is($w2->safe_psql('postgres', qq{
	SELECT count(*) FROM durable.get_history('$target') WHERE event_type = 'WorkflowExecutionSignaled'}),
	'1', 'and arrived once');

# The same functions as a fresh 0.2.0: a second cluster, created at the current version.
my $updated = $w1->safe_psql('postgres', $functions);
is($coord->safe_psql('postgres', $functions), $updated, 'the coordinator has the same as a worker');
my ($fresh_coord, $fresh_w1) = citus_cluster(prefix => 'fresh_');
is($fresh_w1->safe_psql('postgres', $functions), $updated,
	'the functions of the updated durable_citus are those of a fresh 0.2.0, privileges included');

done_testing();

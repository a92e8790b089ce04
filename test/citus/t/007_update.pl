# durable_citus 0.1.0 and 0.2.0 have shipped: a cluster created with 0.1.0 and updated
# with ALTER EXTENSION durable_citus UPDATE on the coordinator, to 0.2.0 and then, with
# work in flight, to the current version, has it on every node, its router registered
# on each; it relays a signal across nodes, the workflow in flight completes, the calls
# made on every node work, and its functions are those of a fresh install.
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

# The functions of durable_citus on a node, with their definitions and privileges.
my $functions = q{
	SELECT md5(string_agg(p.oid::regprocedure::text || ' ' || pg_get_functiondef(p.oid)
	                      || coalesce(p.proacl::text, ''), E'\n' ORDER BY p.oid::regprocedure::text))
	  FROM pg_proc p WHERE p.pronamespace = 'durable_citus'::regnamespace};

is(versions(), '0.1.0,0.1.0,0.1.0', 'created at 0.1.0 on every node');
is($w1->safe_psql('postgres', 'SELECT count(*) FROM durable.router'), '0', 'no router at 0.1.0');

$coord->safe_psql('postgres', q{ALTER EXTENSION durable_citus UPDATE TO '0.2.0'});
is(versions(), '0.2.0,0.2.0,0.2.0', 'ALTER EXTENSION UPDATE on the coordinator updates every node');
foreach my $n ($w1, $w2)
{
	is($n->safe_psql('postgres', 'SELECT name FROM durable.router'), 'durable_citus',
		'the router is registered on worker port ' . $n->port);
}

my $sender = id_owned_by($coord, $w1, 'sender');
my $target = id_owned_by($coord, $w2, 'target');
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

# A workflow in flight (its decision task started) when 0.2.0 is updated to the current
# version.
my $inflight = id_owned_by($coord, $w2, 'inflight');
$coord->safe_psql('postgres', qq{SELECT durable_citus.start_workflow('flight', NULL, '$inflight', 'xf')});
$tok = $w2->safe_psql('postgres', q{SELECT durable.poll_decision_task('xf')->>'taskToken'});
$coord->safe_psql('postgres', 'ALTER EXTENSION durable_citus UPDATE');
my $current = $coord->safe_psql('postgres', q{SELECT default_version FROM pg_available_extensions WHERE name = 'durable_citus'});
is(versions(), "$current,$current,$current", 'the update to the current version reaches every node');
$coord->safe_psql('postgres', qq{
	SELECT durable_citus.complete_decision_task('$tok', '[{"decisionType": "CompleteWorkflowExecution"}]')});
is($coord->safe_psql('postgres', qq{SELECT durable_citus.describe_workflow('$inflight')->>'status'}),
	'completed', 'the workflow in flight completes through the updated routed calls');
is($coord->safe_psql('postgres', q{
	SELECT durable_citus.set_task_queue_limits('xf', 'decision', max_concurrent => 3)}),
	't', 'a call made on every node works after the update');
is(join(',', map { $_->safe_psql('postgres', q{
	SELECT max_concurrent FROM durable.task_queue_limits WHERE task_queue = 'xf'}) } ($w1, $w2)),
	'3,3', 'and reached both workers');

# The same functions as a fresh install: a second cluster, created at the current version.
my $updated = $w1->safe_psql('postgres', $functions);
is($coord->safe_psql('postgres', $functions), $updated, 'the coordinator has the same as a worker');
my ($fresh_coord, $fresh_w1) = citus_cluster(prefix => 'fresh_');
is($fresh_w1->safe_psql('postgres', $functions), $updated,
	'the functions of the updated durable_citus are those of a fresh install, privileges included');

done_testing();

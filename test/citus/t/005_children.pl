# What is not routed yet (docs/citus.md, "Not routed yet"): a child workflow started by
# a decision is created on its parent's node, whatever its id hashes to.  This test pins
# that behaviour down until children are relayed to their owner: the child runs and
# closes on the parent's node, the parent sees its result, durable_citus's routed calls
# do not find it on the owner of its id (WF002), and misplaced_workflows() lists it with
# its node.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CitusCluster;

my ($coord, $w1, $w2) = citus_cluster();
my %node_by_port = ($w1->port => $w1, $w2->port => $w2);

$coord->safe_psql('postgres', q{SELECT durable_citus.start_workflow('parent', NULL, 'parent-1', 'kids')});
my $pport = owner_port($coord, 'default', 'parent-1');
my $pnode = $node_by_port{$pport};
# A child id owned by the other worker.
my $child;
foreach my $i (1 .. 200)
{
	if (owner_port($coord, 'default', "child-$i") ne $pport)
	{
		$child = "child-$i";
		last;
	}
}

my $tok = $pnode->safe_psql('postgres', q{SELECT durable.poll_decision_task('kids')->>'taskToken'});
$coord->safe_psql('postgres', qq{
	SELECT durable_citus.complete_decision_task('$tok',
		'[{"decisionType": "StartChildWorkflowExecution", "workflowId": "$child", "workflowType": "kid"}]')});
is(holders([ $coord, $w1, $w2 ], 'default', $child), $pport,
	'the child is created on its parent\'s node, not on the owner of its id');
is(sqlstate_of($coord, qq{SELECT durable_citus.describe_workflow('$child')}), 'WF002',
	'so the routed calls do not find it');
is($coord->safe_psql('postgres', q{
	SELECT string_agg(node_port || ' ' || workflow_id || ' ' || parent_workflow_id || ' ' || owner_node_port, ',')
	  FROM durable_citus.misplaced_workflows()}),
	"$pport $child parent-1 " . owner_port($coord, 'default', $child),
	'misplaced_workflows() lists it, with the node it is on and the owner of its id');

# It still runs there: a worker of that node completes it, and the parent sees the result.
$tok = $pnode->safe_psql('postgres', q{SELECT durable.poll_decision_task('kids')->>'taskToken'});
is($coord->safe_psql('postgres', qq{SELECT durable.task_token_info('$tok')->>'workflowId'}), $child,
	'its decision task is polled on the parent\'s node');
$pnode->safe_psql('postgres', qq{
	SELECT durable.complete_decision_task('$tok',
		'[{"decisionType": "CompleteWorkflowExecution", "result": "kid done"}]')});
is($coord->safe_psql('postgres', q{
	SELECT count(*) FROM durable_citus.get_history('parent-1') WHERE event_type = 'ChildWorkflowExecutionCompleted'}),
	'1', 'the parent, found by the routed calls, got the child\'s result');

done_testing();

# durable_citus routes each client call to the worker node that owns the workflow:
# runs land on the owner of (namespace, workflow_id) and nowhere else, a second start of
# a running id gets WF001 from the owner in and out of explicit transactions, a
# transaction that starts workflows on both workers commits or rolls back on both, and
# signal, signal_with_start, cancel, terminate, describe, history, wait, reset and restart
# reach the owner.  Bad input gets durable's documented errors.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CitusCluster;

my ($coord, $w1, $w2) = citus_cluster();
my @workers = ($w1, $w2);

is($w1->safe_psql('postgres', q{
	SELECT string_agg(extname, ',' ORDER BY extname) FROM pg_extension
	 WHERE extname IN ('durable', 'durable_citus')}),
	'durable,durable_citus', 'CREATE EXTENSION on the coordinator installed both on a worker');
is($coord->safe_psql('postgres', 'SELECT string_agg(node_port::text, \',\' ORDER BY group_id) FROM durable_citus.nodes()'),
	$w1->port . ',' . $w2->port, 'nodes() lists the two workers, which own the shards');

# Twenty workflows: each runs on its owner only, and both workers own some.
my %owned;
foreach my $i (1 .. 20)
{
	$coord->safe_psql('postgres', qq{SELECT durable_citus.start_workflow('order', '{"n": $i}', 'order-$i')});
}
my $misplaced = 0;
foreach my $i (1 .. 20)
{
	my $owner = owner_port($coord, 'default', "order-$i");
	my $held = holders([ $coord, @workers ], 'default', "order-$i");
	$misplaced++ if $held ne $owner;
	$owned{$owner}++;
}
is($misplaced, 0, 'every run is on the node that owns its workflow id, and only there');
# A start without an id gets one drawn as durable draws it: a version 7 UUID, time first.
$coord->safe_psql('postgres', q{SELECT durable_citus.start_workflow('anon7')});
$coord->safe_psql('postgres', q{SELECT pg_sleep(0.01); SELECT durable_citus.start_workflow('anon7')});
my @anon = split /\n/, $coord->safe_psql('postgres', q{
	SELECT workflow_id FROM durable_citus.list_workflows(workflow_type => 'anon7') ORDER BY start_time});
is(join(',', map { substr($_, 14, 1) } @anon), '7,7', 'a start without an id draws a version 7 UUID');
ok(@anon == 2 && $anon[0] lt $anon[1], 'the later start draws the greater id');
is(scalar(keys %owned), 2, 'both workers own some of the twenty');
is($coord->safe_psql('postgres', 'SELECT count(*) FROM durable.runs'), '0',
	'the coordinator holds no run');

# The same workflow id in another namespace is another route key.
is($coord->safe_psql('postgres', q{SELECT durable_citus.route_key('default', 'a:b') <> durable_citus.route_key('default:a', 'b')}),
	't', 'route keys of (namespace, workflow id) do not collide');

# A second start of a running id: WF001 from the owner, in and out of a transaction.
is(sqlstate_of($coord, q{SELECT durable_citus.start_workflow('order', NULL, 'order-1')}),
	'WF001', 'a second start of a running id gets WF001');
is(sqlstate_of($coord, q{
	BEGIN;
	SELECT durable_citus.start_workflow('order', NULL, 'order-1');
	COMMIT;}),
	'WF001', 'a second start inside BEGIN ... COMMIT gets WF001 too');
is(sqlstate_of($coord, q{
	BEGIN;
	SELECT durable_citus.start_workflow('order', NULL, 'tx-new');
	SELECT durable_citus.start_workflow('order', NULL, 'tx-new');
	COMMIT;}),
	'WF001', 'a start of an id started earlier in the same transaction gets WF001');
is(holders([ $coord, @workers ], 'default', 'tx-new'), '', 'and that transaction left nothing');
is($coord->safe_psql('postgres', q{SELECT count(*) FROM durable_citus.list_workflows(workflow_id_prefix => 'order-1', page_size => 100)}),
	'11', 'order-1 and order-10 ... order-19 have one run each');

# Two starts owned by different workers in one transaction: both or neither.
my ($a, $b);
foreach my $i (1 .. 200)
{
	$a //= "pair-$i" if owner_port($coord, 'default', "pair-$i") eq $w1->port;
	$b //= "pair-$i" if owner_port($coord, 'default', "pair-$i") eq $w2->port;
	last if defined $a && defined $b;
}
$coord->safe_psql('postgres', qq{
	BEGIN;
	SELECT durable_citus.start_workflow('pair', NULL, '$a');
	SELECT durable_citus.start_workflow('pair', NULL, '$b');
	ROLLBACK;});
is(holders([ $coord, @workers ], 'default', $a) . '|' . holders([ $coord, @workers ], 'default', $b),
	'|', 'a rolled back transaction left neither');
$coord->safe_psql('postgres', qq{
	BEGIN;
	SELECT durable_citus.start_workflow('pair', NULL, '$a');
	SELECT durable_citus.start_workflow('pair', NULL, '$b');
	COMMIT;});
is(holders([ $coord, @workers ], 'default', $a) . '|' . holders([ $coord, @workers ], 'default', $b),
	$w1->port . '|' . $w2->port, 'a committed one started both, each on its owner');

# A workflow id drawn by start_workflow (NULL) is routed too.
my $run = $coord->safe_psql('postgres', q{SELECT durable_citus.start_workflow('anon')});
my $anon = $coord->safe_psql('postgres', qq{
	SELECT workflow_id FROM durable_citus.list_workflows(workflow_type => 'anon')});
is(holders([ $coord, @workers ], 'default', $anon), owner_port($coord, 'default', $anon),
	'a start without a workflow id draws one and runs on its owner');

# Signals, describe, history.
$coord->safe_psql('postgres', q{SELECT durable_citus.signal_workflow('order-2', 'paid', '{"amount": 5}')});
is($coord->safe_psql('postgres', q{
	SELECT string_agg(event_type, ',' ORDER BY event_id) FROM durable_citus.get_history('order-2')}),
	'WorkflowExecutionStarted,DecisionTaskScheduled,WorkflowExecutionSignaled',
	'signal_workflow reaches the owner; get_history reads its history');
is($coord->safe_psql('postgres', q{
	SELECT d->>'workflowId' || ' ' || (d->>'status') || ' ' || (d->>'historyLength')
	  FROM durable_citus.describe_workflow('order-2') d}),
	'order-2 running 3', 'describe_workflow reads the run on its owner');
$coord->safe_psql('postgres', q{
	SELECT durable_citus.signal_with_start('order', 'order-2', 'paid', '{"amount": 6}');
	SELECT durable_citus.signal_with_start('order', 'sws-1', 'paid', '{"amount": 7}');});
is($coord->safe_psql('postgres', q{
	SELECT count(*) FROM durable_citus.get_history('order-2') WHERE event_type = 'WorkflowExecutionSignaled'}),
	'2', 'signal_with_start signals a running workflow on its owner');
is(holders([ $coord, @workers ], 'default', 'sws-1'), owner_port($coord, 'default', 'sws-1'),
	'signal_with_start starts a new one on its owner');

# Inside a transaction, a later call sees what an earlier one did on the owner.
is($coord->safe_psql('postgres', q{
	BEGIN;
	SELECT durable_citus.signal_workflow('order-6', 'first');
	SELECT durable_citus.signal_workflow('order-6', 'second');
	SELECT string_agg(attributes->>'signalName', ',' ORDER BY event_id) FROM durable_citus.get_history('order-6')
	 WHERE event_type = 'WorkflowExecutionSignaled';
	COMMIT;}),
	"\n\nfirst,second", 'signals and history in one transaction, all on the owner');

# start_workflow_eager: started on the owner, its first decision task returned.
is($coord->safe_psql('postgres', q{
	SELECT durable_citus.start_workflow_eager('eager', NULL, 'eager-1', identity => 'w')->'decisionTask'->>'workflowId'}),
	'eager-1', 'start_workflow_eager returns the first decision task');
is(holders([ $coord, @workers ], 'default', 'eager-1'), owner_port($coord, 'default', 'eager-1'),
	'from the owner');

# Cancel, terminate, wait, restart, reset.
$coord->safe_psql('postgres', q{SELECT durable_citus.cancel_workflow('order-3', 'changed my mind')});
is($coord->safe_psql('postgres', q{SELECT durable_citus.describe_workflow('order-3')->>'cancelRequested'}),
	'true', 'cancel_workflow reaches the owner');
is($coord->safe_psql('postgres', q{SELECT durable_citus.wait_workflow('order-4', wait => '0') IS NULL}),
	't', 'wait_workflow of a running workflow with no wait is NULL');
$coord->safe_psql('postgres', q{SELECT durable_citus.terminate_workflow('order-4', 'test')});
is($coord->safe_psql('postgres', q{SELECT durable_citus.wait_workflow('order-4')->>'status'}),
	'terminated', 'terminate_workflow closes it; wait_workflow returns the close');
my $restarted = $coord->safe_psql('postgres', q{SELECT durable_citus.restart_workflow('order-4', 'again')});
is($coord->safe_psql('postgres', q{SELECT durable_citus.resolve_run_id('order-4')}),
	$restarted, 'restart_workflow starts a new run there; resolve_run_id finds it');
is(holders([ $coord, @workers ], 'default', 'order-4'), owner_port($coord, 'default', 'order-4'),
	'both runs of order-4 are on its owner');
is(sqlstate_of($coord, q{SELECT durable_citus.reset_workflow('order-5', 'no decision yet')}),
	'55000', 'reset_workflow of a run without a completed decision task gets durable\'s 55000');
is($coord->safe_psql('postgres', q{
	SELECT durable_citus.pause_workflow('order-5', reason => 'hold');
	SELECT durable_citus.describe_workflow('order-5')->'paused'->>'reason';
	SELECT durable_citus.resume_workflow('order-5');}),
	"t\nhold\nt", 'pause_workflow and resume_workflow reach the owner');

# Bad input: durable's errors, SQLSTATE kept.
is(sqlstate_of($coord, q{SELECT durable_citus.describe_workflow('no-such-workflow')}),
	'WF002', 'an unknown workflow gets WF002 from its owner');
is(sqlstate_of($coord, q{SELECT durable_citus.start_workflow('order', NULL, 'x', namespace => 'nowhere')}),
	'WF002', 'an unknown namespace gets WF002');
is(sqlstate_of($coord, q{SELECT durable_citus.signal_workflow('order-6', NULL)}),
	'22004', 'a NULL signal name gets 22004');
is(sqlstate_of($coord, q{SELECT durable_citus.start_workflow('order', NULL, 'y', namespace => NULL)}),
	'22004', 'a NULL namespace gets 22004');
is(sqlstate_of($coord, q{SELECT durable_citus.describe_workflow(NULL)}),
	'22004', 'a NULL workflow id gets 22004');
is(sqlstate_of($coord, q{SELECT durable_citus.start_workflow('order', NULL, 'z', priority => 9)}),
	'22023', 'a bad option gets durable\'s 22023 from the owner');
is(holders([ $coord, @workers ], 'default', 'z'), '', 'and changes nothing');
is(sqlstate_of($coord, q{SELECT durable_citus.complete_activity('not a token')}),
	'22023', 'a task token that does not parse gets 22023');

# A node function called with a route key that is not the workflow's is refused.
is(sqlstate_of($coord, q{
	SELECT * FROM durable_citus.node_describe_workflow('7:default:order-7', 'order-8', 'default', NULL)}),
	'22023', 'a node function refuses a route key that is not its workflow\'s');
# On a worker, Citus delegates such a call to the owner as well; one it runs in place
# (PERFORM of a PL/pgSQL simple expression) is refused on a node that does not own it.
my $other = $w1->port eq owner_port($coord, 'default', 'order-9') ? $w2 : $w1;
is(sqlstate_of($other, q{
	SELECT d->>'workflowId' FROM durable_citus.node_describe_workflow(
		durable_citus.route_key('default', 'order-9'), 'order-9', 'default', NULL) d}),
	'', 'a node function called on a worker that does not own the workflow is delegated to its owner');
is(sqlstate_of($other, q{
	DO $$BEGIN
		PERFORM durable_citus.node_describe_workflow(durable_citus.route_key('default', 'order-9'),
			'order-9', 'default', NULL);
	END$$}),
	'55000', 'one run in place there is refused');

done_testing();

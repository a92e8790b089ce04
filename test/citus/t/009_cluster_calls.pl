# The calls made once on the coordinator for every node (docs/citus.md, "Calls made on
# every node"): a task queue's and a concurrency key's limits set on both workers in one
# transaction (or on neither), replay_check over the histories of both workers, naming
# the node of each run, and purge on every node; each with durable's privileges.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CitusCluster;

my ($coord, $w1, $w2) = citus_cluster();

sub on_workers
{
	my ($sql) = @_;
	return join(',', map { $_->safe_psql('postgres', $sql) } ($w1, $w2));
}

$coord->safe_psql('postgres', q{
	CREATE ROLE rc_app LOGIN IN ROLE durable_client, durable_worker;
	CREATE FUNCTION public.nap_v1(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
	BEGIN
		PERFORM durable.sleep('1 day');
		RETURN '"woke"';
	END $$;
	CREATE FUNCTION public.nap_v2(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
	BEGIN
		PERFORM durable.sleep('1 day');
		PERFORM durable.sleep('1 hour');
		RETURN '"woke later"';
	END $$;
	CREATE FUNCTION public.nap_bad(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
	BEGIN
		RETURN durable.activity('stretch', '{}');
	END $$;
	GRANT EXECUTE ON FUNCTION public.nap_v1(jsonb), public.nap_v2(jsonb), public.nap_bad(jsonb) TO rc_app;});
my @as_app = (extra_params => [ '-U', 'rc_app' ]);

# ---- Limits ----
is($coord->safe_psql('postgres', q{
	SELECT durable_citus.set_task_queue_limits('napq', 'decision', max_concurrent => 4, rate => 50)}),
	't', 'set_task_queue_limits through the coordinator: true, the limits changed');
is(on_workers(q{SELECT max_concurrent || ' ' || rate FROM durable.task_queue_limits
	WHERE task_queue = 'napq' AND kind = 'decision'}),
	'4 50,4 50', 'each worker\'s share of the queue has the limits');
is($coord->safe_psql('postgres', q{
	SELECT durable_citus.set_task_queue_limits('napq', 'decision', max_concurrent => 4, rate => 50)}),
	'f', 'the same again: false, nothing changed');
is(sqlstate_of($coord, q{SELECT durable_citus.set_task_queue_limits('napq', 'decision', max_concurrent => 5)},
	user => 'rc_app'), '42501', 'a client that does not own the namespace may not, as with durable\'s');
is($coord->safe_psql('postgres', q{
	SELECT durable_citus.set_task_queue_limits('napq', 'decision', max_concurrent => 5)}),
	't', 'set to 5');
is(sqlstate_of($coord, q{SELECT durable_citus.set_task_queue_limits('napq', 'nap', max_concurrent => 9)}),
	'22023', 'a kind that is not one gets 22023');
is(on_workers(q{SELECT string_agg(max_concurrent::text, ' ') FROM durable.task_queue_limits WHERE task_queue = 'napq'}),
	'5,5', 'and changes nothing on any node');
is($coord->safe_psql('postgres', q{
	SELECT durable_citus.set_task_key_limits('napq', 'activity', 'tenant-1', max_concurrent => 2, weight => 3)}),
	't', 'set_task_key_limits through the coordinator');
is(on_workers(q{SELECT max_concurrent || ' ' || weight FROM durable.task_key_limits WHERE task_queue = 'napq' AND concurrency_key = 'tenant-1'}),
	'2 3,2 3', 'each worker has the key\'s limits');

# ---- replay_check over both workers' histories ----
$coord->safe_psql('postgres', q{SELECT durable_citus.register_workflow('nap', 'public.nap_v1(jsonb)', 'napq')}, @as_app);
my ($nap1, $nap2) = (id_owned_by($coord, $w1, 'nap'), id_owned_by($coord, $w2, 'nap'));
foreach my $id ($nap1, $nap2)
{
	$coord->safe_psql('postgres', qq{SELECT durable_citus.start_workflow('nap', NULL, '$id', 'napq')}, @as_app);
}
foreach my $pair ([ $w1, $nap1 ], [ $w2, $nap2 ])
{
	my ($node, $id) = @$pair;
	ok($node->poll_query_until('postgres', qq{
		SELECT count(*) = 1 FROM durable.get_history('$id') WHERE event_type = 'TimerStarted'}),
		"$id sleeps on its node");
}
is($coord->safe_psql('postgres', q{
	SELECT string_agg(node_port || ' ' || workflow_id || ' ' || ok, ',' ORDER BY node_port)
	  FROM durable_citus.replay_check('nap', 'public.nap_v2(jsonb)')}, @as_app),
	$w1->port . " $nap1 true," . $w2->port . " $nap2 true",
	'a compatible function follows the runs of both workers');
is($coord->safe_psql('postgres', q{
	SELECT string_agg(node_port || ' ' || ok || ' ' || history || ' ' || code, ',' ORDER BY node_port)
	  FROM durable_citus.replay_check('nap', 'public.nap_bad(jsonb)')}, @as_app),
	$w1->port . ' false timer activity stretch,' . $w2->port . ' false timer activity stretch',
	'an incompatible one is found out on each, with what history has and what it did');
is(sqlstate_of($coord, q{SELECT * FROM durable_citus.replay_check('nap', 'public.nap_v2(jsonb)', max_runs => 0)}),
	'22023', 'max_runs 0 gets durable\'s 22023');

# ---- Batch operations over both workers ----
my ($b1, $b2) = (id_owned_by($coord, $w1, 'batchy'), id_owned_by($coord, $w2, 'batchy'));
foreach my $id ($b1, $b2)
{
	$coord->safe_psql('postgres', qq{SELECT durable_citus.start_workflow('batchy', NULL, '$id', 'bq')}, @as_app);
}
is($coord->safe_psql('postgres', q{
	SELECT durable_citus.preview_batch('signal', workflow_type => 'batchy', signal_name => 'go')}, @as_app),
	'2', 'preview_batch counts the matching runs of both workers');
is($coord->safe_psql('postgres', q{
	SELECT string_agg(node_port || ' ' || (batch_id IS NOT NULL), ',' ORDER BY node_port)
	  FROM durable_citus.start_batch('signal', workflow_type => 'batchy', signal_name => 'go',
	                                 reason => 'wake up')}, @as_app),
	$w1->port . ' true,' . $w2->port . ' true', 'start_batch starts a job on each worker');
ok($coord->poll_query_until('postgres', q{
	SELECT count(*) = 2 AND bool_and(state = 'completed' AND touched = 1)
	  FROM durable_citus.batches() WHERE operation = 'signal'}),
	'each worker\'s timer worker works its job through');
is(on_workers(qq{SELECT count(*) FROM durable.get_history(CASE WHEN durable_citus.owned_elsewhere('default', '$b1')
	THEN '$b2' ELSE '$b1' END) WHERE event_type = 'WorkflowExecutionSignaled'}),
	'1,1', 'each workflow got the signal once, on its node');
my $done_batch = $coord->safe_psql('postgres', q{
	SELECT batch_id FROM durable_citus.batches() WHERE operation = 'signal' LIMIT 1});
is($coord->safe_psql('postgres', qq{SELECT durable_citus.cancel_batch('$done_batch')}, @as_app),
	'f', 'cancel_batch of a completed job, found on its node: false');
is(sqlstate_of($coord, q{SELECT durable_citus.cancel_batch(gen_random_uuid())}), 'WF002',
	'a job on no node is WF002, as durable says');
is(sqlstate_of($coord, q{SELECT durable_citus.cancel_batch(NULL)}), '22004',
	'a NULL batch id is 22004, as durable says');
is(sqlstate_of($coord, q{SELECT * FROM durable_citus.start_batch('explode', workflow_type => 'batchy')}),
	'22023', 'an unknown operation is 22023');
is($coord->safe_psql('postgres', q{SELECT count(*) FROM durable_citus.batches()}), '2',
	'and started no job anywhere');

# ---- purge ----
is($coord->safe_psql('postgres', q{SELECT durable_citus.purge()}), '0',
	'purge runs on every node (nothing is past its retention)');
is(sqlstate_of($coord, q{SELECT durable_citus.purge()}, user => 'rc_app'), '42501',
	'purge is for durable_admin, as durable\'s');

done_testing();

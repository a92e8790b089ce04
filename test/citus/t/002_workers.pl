# Workers on a Citus cluster: a worker polls each node (durable_citus.nodes() lists
# them) and answers through the coordinator, where durable_citus routes each completion,
# failure and heartbeat by the workflow its task token names; an answer sent straight to
# a node that does not own the workflow gets WF005.  A SQL workflow registered once on
# the coordinator is run by the executors of the node that owns each workflow.
# list_workflows pages across the nodes, count_workflows counts across them, and
# task_queues() shows each node's queues.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CitusCluster;
use DurableTest::LongPoll;

my ($coord, $w1, $w2) = citus_cluster();
my %node_by_port = ($w1->port => $w1, $w2->port => $w2);

# Workflows on queue 'jobs' until both workers own one.
my @ids;
my %seen;
foreach my $i (1 .. 50)
{
	my $port = owner_port($coord, 'default', "job-$i");
	next if $seen{$port}++;
	push @ids, "job-$i";
	last if scalar(@ids) == 2;
}
is(scalar(@ids), 2, 'two workflows, one owned by each worker');
$coord->safe_psql('postgres', qq{SELECT durable_citus.start_workflow('job', '{"n": 1}', '$_', 'jobs')})
  foreach @ids;

# The worker's loop: poll every node that durable_citus.nodes() lists, answer on the
# coordinator.
my $nodes = $coord->safe_psql('postgres', 'SELECT node_port FROM durable_citus.nodes() ORDER BY 1');
my @ports = split /\n/, $nodes;
is(scalar(@ports), 2, 'nodes() gives the two workers to poll');

my %decided;
foreach my $port (@ports)
{
	my $node = $node_by_port{$port};
	my $token = $node->safe_psql('postgres', q{SELECT durable.poll_decision_task('jobs')->>'taskToken'});
	isnt($token, '', "a decision task is polled on the node of port $port");
	my $wf = $coord->safe_psql('postgres', qq{SELECT durable.task_token_info('$token')->>'workflowId'});
	$decided{$wf} = 1;
	$coord->safe_psql('postgres', qq{
		SELECT durable_citus.complete_decision_task('$token',
			'[{"decisionType": "ScheduleActivityTask", "activityId": "a1", "activityType": "work",
			   "startToCloseTimeoutSeconds": 60, "heartbeatTimeoutSeconds": 60}]')});
}
is(join(',', sort keys %decided), join(',', sort @ids), 'each node gave the decision task of the workflow it owns');

foreach my $port (@ports)
{
	my $node = $node_by_port{$port};
	my $token = $node->safe_psql('postgres', q{SELECT durable.poll_activity_task('jobs')->>'taskToken'});
	isnt($token, '', "an activity task is polled on the node of port $port");
	# The owner refuses no answer; the other worker does not know the task.
	my $other = $port eq $w1->port ? $w2 : $w1;
	is(sqlstate_of($other, qq{SELECT durable.heartbeat_activity('$token')}), 'WF005',
		'a heartbeat sent straight to the other worker gets WF005');
	is($coord->safe_psql('postgres', qq{SELECT durable_citus.heartbeat_activity('$token', '{"p": 50}')}),
		'f', 'heartbeat_activity on the coordinator reaches the owner');
	$coord->safe_psql('postgres', qq{SELECT durable_citus.complete_activity('$token', '"done"')});
}
foreach my $port (@ports)
{
	my $node = $node_by_port{$port};
	my $token = $node->safe_psql('postgres', q{SELECT durable.poll_decision_task('jobs')->>'taskToken'});
	$coord->safe_psql('postgres', qq{
		SELECT durable_citus.complete_decision_task('$token',
			'[{"decisionType": "CompleteWorkflowExecution", "result": {"ok": true}}]')});
}
foreach my $id (@ids)
{
	is($coord->safe_psql('postgres', qq{SELECT durable_citus.wait_workflow('$id', wait => '10 seconds')->>'status'}),
		'completed', "$id completed through answers sent to the coordinator");
	my $owner = $node_by_port{ owner_port($coord, 'default', $id) };
	is($coord->safe_psql('postgres', qq{
		SELECT string_agg(event_type, ',' ORDER BY event_id) FROM durable_citus.get_history('$id')}),
		$owner->safe_psql('postgres', qq{
		SELECT string_agg(event_type, ',' ORDER BY event_id) FROM durable.get_history('$id')}),
		'get_history on the coordinator is the owner\'s history');
}

# A long poll on a worker is woken by a start committed with two-phase commit (a
# transaction that started workflows owned by both workers), at once.
my ($wa, $wb);
foreach my $i (1 .. 200)
{
	my $p = owner_port($coord, 'default', "two-$i");
	$wa //= "two-$i" if $p eq $w1->port;
	$wb //= "two-$i" if $p eq $w2->port;
	last if defined $wa && defined $wb;
}
my $lp = DurableTest::LongPoll->new($w1, 'postgres');
$lp->start_poller('p1', 'twoq', timeout => 120);
my $t0 = time;
$coord->safe_psql('postgres', qq{
	BEGIN;
	SELECT durable_citus.start_workflow('two', NULL, '$wa', 'twoq');
	SELECT durable_citus.start_workflow('two', NULL, '$wb', 'twoq');
	COMMIT;});
is($lp->finish('p1'), $wa, 'a poll waiting on a worker gets the task a two-phase commit queued there');
cmp_ok(time - $t0, '<', 30, 'at once, not after a wait');

# fail_decision_task and fail_activity, routed by token.
$coord->safe_psql('postgres', q{SELECT durable_citus.start_workflow('job', NULL, 'job-fail', 'fq')});
my $owner = $node_by_port{ owner_port($coord, 'default', 'job-fail') };
my $tok = $owner->safe_psql('postgres', q{SELECT durable.poll_decision_task('fq')->>'taskToken'});
$coord->safe_psql('postgres', qq{SELECT durable_citus.fail_decision_task('$tok', 'WorkflowWorkerUnhandledFailure')});
$tok = $owner->safe_psql('postgres', q{SELECT durable.poll_decision_task('fq')->>'taskToken'});
$coord->safe_psql('postgres', qq{
	SELECT durable_citus.complete_decision_task('$tok',
		'[{"decisionType": "ScheduleActivityTask", "activityId": "a1", "activityType": "work",
		   "startToCloseTimeoutSeconds": 60, "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 1}}]')});
$tok = $owner->safe_psql('postgres', q{SELECT durable.poll_activity_task('fq')->>'taskToken'});
$coord->safe_psql('postgres', qq{SELECT durable_citus.fail_activity('$tok', 'boom')});
is($coord->safe_psql('postgres', q{
	SELECT string_agg(event_type, ',' ORDER BY event_id) FROM durable_citus.get_history('job-fail')
	 WHERE event_type IN ('DecisionTaskFailed', 'ActivityTaskFailed')}),
	'DecisionTaskFailed,ActivityTaskFailed', 'fail_decision_task and fail_activity reach the owner');
is(sqlstate_of($coord, qq{SELECT durable_citus.complete_activity('$tok')}), 'WF005',
	'an answer with a stale token gets WF005 from the owner');

# A SQL workflow registered once, by a role of the application, runs on every owner.
$coord->safe_psql('postgres', q{
	CREATE ROLE app LOGIN IN ROLE durable_client, durable_worker;
	CREATE FUNCTION public.greet(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
	BEGIN
		RETURN jsonb_build_object('hello', input->>'name');
	END $$;
	GRANT EXECUTE ON FUNCTION public.greet(jsonb) TO app;});
$coord->safe_psql('postgres', q{SELECT durable_citus.register_workflow('greet', 'public.greet(jsonb)', 'sqlq')},
	extra_params => [ '-U', 'app' ]);
foreach my $n ($coord, $w1, $w2)
{
	is($n->safe_psql('postgres', q{
		SELECT function::text || ' ' || registered_by FROM durable.registrations WHERE type_name = 'greet'}),
		'greet(jsonb) app', 'the registration is on node ' . $n->name);
}
# Three workflows owned by each worker.
my (%greeted, @greet_ids);
foreach my $i (1 .. 100)
{
	my $port = owner_port($coord, 'default', "greet-$i");
	next if ($greeted{$port} // 0) >= 3;
	$greeted{$port}++;
	push @greet_ids, "greet-$i";
	last if scalar(@greet_ids) == 6;
}
foreach my $id (@greet_ids)
{
	$coord->safe_psql('postgres', qq{SELECT durable_citus.start_workflow('greet', '{"name": "$id"}', '$id', 'sqlq')},
		extra_params => [ '-U', 'app' ]);
}
my @results;
foreach my $id (@greet_ids)
{
	push @results, $coord->safe_psql('postgres', qq{
		SELECT durable_citus.wait_workflow('$id', wait => '20 seconds')->'result'->>'hello'},
		extra_params => [ '-U', 'app' ]);
}
is(join(',', @results), join(',', @greet_ids),
	'the executors of both workers ran the workflows each owns')
  or diag($coord->safe_psql('postgres', q{SELECT * FROM durable_citus.task_queues() WHERE task_queue = 'sqlq'})),
  diag($w1->safe_psql('postgres', q{SELECT * FROM durable.ready_tasks})),
  diag($w2->safe_psql('postgres', q{SELECT * FROM durable.ready_tasks})),
  diag($w1->safe_psql('postgres', q{SELECT * FROM durable.task_queues WHERE task_queue = 'sqlq'})),
  diag($w2->safe_psql('postgres', q{SELECT * FROM durable.task_queues WHERE task_queue = 'sqlq'})),
  diag($w1->safe_psql('postgres', q{SELECT * FROM durable.registrations})),
  diag($w1->safe_psql('postgres', q{SELECT workflow_id, status FROM durable.workflows WHERE task_queue = 'sqlq'})),
  diag($w2->safe_psql('postgres', q{SELECT * FROM durable.registrations})),
  diag($w2->safe_psql('postgres', q{SELECT workflow_id, status FROM durable.workflows WHERE task_queue = 'sqlq'})),
  diag($w1->safe_psql('postgres', q{SELECT backend_type, state, wait_event FROM pg_stat_activity WHERE backend_type LIKE 'durable%'})),
  diag($w2->safe_psql('postgres', q{SELECT backend_type, state, wait_event FROM pg_stat_activity WHERE backend_type LIKE 'durable%'}));
ok($coord->safe_psql('postgres', q{SELECT durable_citus.unregister_workflow('greet', 'sqlq')},
	extra_params => [ '-U', 'app' ]) eq 't'
	  && $w2->safe_psql('postgres', q{SELECT count(*) FROM durable.registrations WHERE type_name = 'greet'}) eq '0',
	'unregister_workflow removes it from every node');

# Lists and counts across the nodes.
$coord->safe_psql('postgres', qq{SELECT durable_citus.start_workflow('listed', NULL, 'l-$_', 'lq')})
  foreach (1 .. 7);
is($coord->safe_psql('postgres', q{SELECT durable_citus.count_workflows(workflow_type => 'listed')}),
	'7', 'count_workflows counts the runs of every node');
is($coord->safe_psql('postgres', q{
	SELECT string_agg(status || '=' || count, ',') FROM durable_citus.count_workflows_by_status(workflow_type => 'listed')}),
	'running=7,completed=0,failed=0,canceled=0,terminated=0,continued_as_new=0,timed_out=0',
	'count_workflows_by_status adds up the nodes, every status in durable\'s order');
my @listed;
my $after = 'NULL';
foreach my $page (1 .. 4)
{
	my $rows = $coord->safe_psql('postgres', qq{
		SELECT workflow_id || ' ' || cursor FROM durable_citus.list_workflows(workflow_type => 'listed',
			page_size => 3, after => $after)});
	last if $rows eq '';
	my @lines = split /\n/, $rows;
	push @listed, map { (split / /)[0] } @lines;
	$after = "'" . (split / /, $lines[-1])[1] . "'";
}
is(join(',', sort @listed), join(',', sort map { "l-$_" } 1 .. 7),
	'pages of 3 list the seven runs of both nodes, none twice');
is($coord->safe_psql('postgres', q{
	SELECT string_agg(workflow_id, ',') FROM durable_citus.list_workflows(workflow_type => 'listed')}),
	join(',', reverse map { "l-$_" } 1 .. 7), 'newest start first');
is(sqlstate_of($coord, q{SELECT * FROM durable_citus.list_workflows(after => 'dc1:garbage')}), '22023',
	'a cursor that is not one gets 22023');
is(sqlstate_of($coord, q{SELECT * FROM durable_citus.list_workflows(status => 'sleeping')}), '22023',
	'an unknown status gets durable\'s 22023');
is(sqlstate_of($coord, q{SELECT * FROM durable_citus.list_workflows(page_size => 0)}), '22023',
	'a page size out of bounds gets durable\'s 22023');

# Each node's queues.
is($coord->safe_psql('postgres', q{
	SELECT string_agg(DISTINCT node_port::text, ',') FROM durable_citus.task_queues() WHERE task_queue = 'lq'}),
	join(',', sort { $a <=> $b } keys %{ { map { owner_port($coord, 'default', "l-$_") => 1 } 1 .. 7 } }),
	'task_queues() shows the queue on the nodes that hold its tasks');
is($coord->safe_psql('postgres', q{
	SELECT sum(ready_tasks) FROM durable_citus.task_queues() WHERE task_queue = 'lq'}),
	'7', 'with their backlog');

done_testing();

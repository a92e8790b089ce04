# Signals and cancels across nodes (docs/citus.md, "Signals and cancels across nodes"):
# a SignalExternalWorkflowExecution or RequestCancelExternalWorkflowExecution decision of
# a workflow on worker 1 whose target worker 2 owns goes to worker 1's outbox (an
# external timer), is relayed to worker 2 by worker 1's timer worker, arrives once, and
# its answer is written to the sender's history as on a single server: Signaled,
# CancelRequested, or Failed with EXTERNAL_WORKFLOW_EXECUTION_NOT_FOUND.  A relay tried
# again finds the request delivered and delivers nothing twice.  Then a crash: the
# target's node is down when the decision commits, and the sender's node is stopped
# with -m immediate with the request still in its outbox; after both restart, the
# signal arrives exactly once.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CitusCluster;

my ($coord, $w1, $w2) = citus_cluster();

foreach my $n ($w1, $w2)
{
	is($n->safe_psql('postgres', q{
		SELECT name || ' ' || owned_elsewhere::text || ' ' || relay::text FROM durable.router}),
		'durable_citus durable_citus.owned_elsewhere(text,text) durable_citus.relay(jsonb)',
		'durable_citus registered its router on worker port ' . $n->port);
}

my $sender = id_owned_by($coord, $w1, 'sender');
my $target = id_owned_by($coord, $w2, 'target');
my $victim = id_owned_by($coord, $w2, 'victim');
my $nobody = id_owned_by($coord, $w2, 'nobody');
$coord->safe_psql('postgres', qq{
	SELECT durable_citus.start_workflow('sender', NULL, '$sender', 'xs');
	SELECT durable_citus.start_workflow('target', NULL, '$target', 'xt');
	SELECT durable_citus.start_workflow('target', NULL, '$victim', 'xt');});
is($w1->safe_psql('postgres', qq{SELECT durable_citus.owned_elsewhere('default', '$target')}),
	't', 'worker 1 knows that worker 2 owns the target');

# The decision is completed through the coordinator: the routed call runs on worker 1,
# inside a delegated call, where the engine asks the router.
my $tok = $w1->safe_psql('postgres', q{SELECT durable.poll_decision_task('xs')->>'taskToken'});
$coord->safe_psql('postgres', qq{
	SELECT durable_citus.complete_decision_task('$tok', '[
		{"decisionType": "SignalExternalWorkflowExecution", "workflowId": "$target",
		 "signalName": "ping", "input": {"n": 1}, "control": "c1"},
		{"decisionType": "RequestCancelExternalWorkflowExecution", "workflowId": "$victim"},
		{"decisionType": "SignalExternalWorkflowExecution", "workflowId": "$nobody",
		 "signalName": "ping"}]')});

# The timer worker relays them; durable.tick() may too (whichever claims a timer first).
ok($w1->poll_query_until('postgres', qq{
	SELECT durable.tick() >= 0 AND NOT EXISTS (SELECT 1 FROM durable.timers WHERE kind = 'external')}),
	'the outbox of worker 1 empties');
is($w1->safe_psql('postgres', qq{
	SELECT string_agg(event_type, ',' ORDER BY event_id) FROM durable.get_history('$sender')
	 WHERE event_id BETWEEN 4 AND 7}),
	'DecisionTaskCompleted,SignalExternalWorkflowExecutionInitiated,'
	  . 'RequestCancelExternalWorkflowExecutionInitiated,SignalExternalWorkflowExecutionInitiated',
	'the sender\'s history: the three requests');
is($w1->safe_psql('postgres', qq{
	SELECT string_agg(event_type, ',' ORDER BY event_type) FROM durable.get_history('$sender')
	 WHERE event_id > 7}),
	'DecisionTaskScheduled,ExternalWorkflowExecutionCancelRequested,ExternalWorkflowExecutionSignaled,'
	  . 'SignalExternalWorkflowExecutionFailed',
	'then their answers, each once (in the order they were relayed), and a decision task');
is($w1->safe_psql('postgres', qq{
	SELECT attributes - 'runId' FROM durable.get_history('$sender')
	 WHERE event_type = 'ExternalWorkflowExecutionSignaled'}),
	qq({"control": "c1", "namespace": "default", "workflowId": "$target", "initiatedEventId": 5}),
	'ExternalWorkflowExecutionSignaled names the initiated event and the target');
is($w1->safe_psql('postgres', qq{
	SELECT attributes->>'cause' || ' ' || (attributes->>'initiatedEventId')
	  FROM durable.get_history('$sender') WHERE event_type = 'SignalExternalWorkflowExecutionFailed'}),
	'EXTERNAL_WORKFLOW_EXECUTION_NOT_FOUND 7', 'a target that does not exist: Failed, with the cause');

my $sender_run = $w1->safe_psql('postgres', qq{SELECT durable.resolve_run_id('$sender')});
is(count_events($w2, $target, 'WorkflowExecutionSignaled'), '1', 'the target got the signal once');
is($w2->safe_psql('postgres', qq{
	SELECT (attributes->>'signalName') || ' ' || (attributes->'input')::text || ' '
	       || (attributes->'externalWorkflowExecution')::text
	  FROM durable.get_history('$target') WHERE event_type = 'WorkflowExecutionSignaled'}),
	qq(ping {"n": 1} {"runId": "$sender_run", "namespace": "default", "workflowId": "$sender", "initiatedEventId": 5}),
	'with its input, naming the sender as its initiator');
is($coord->safe_psql('postgres', qq{SELECT durable_citus.describe_workflow('$victim')->>'cancelRequested'}),
	'true', 'the cancel reached the other target');
is(holders([ $coord, $w1, $w2 ], 'default', $nobody), '', 'and the missing one was not created');
is($w2->safe_psql('postgres', q{SELECT count(*) FROM durable.received_requests}),
	'2', 'worker 2 noted the two requests it delivered');

# A relay tried again (as after a failure between the two nodes' commits) is answered
# from the note and delivers nothing.
my $again = qq({"cancel": false, "namespace": "default", "workflowId": "$target", "signalName": "ping",
	"initiator": {"namespace": "default", "workflowId": "$sender", "runId": "$sender_run", "initiatedEventId": 5}});
is($w2->safe_psql('postgres', qq{SELECT durable.receive_external('$again') - 'runId'}),
	'{"outcome": "done", "duplicate": true}', 'a request delivered already is answered done, as a duplicate');
is($w1->safe_psql('postgres', qq{SELECT durable_citus.relay('$again') - 'runId'}),
	'{"outcome": "done", "duplicate": true}', 'also through the relay from worker 1');
is(count_events($w2, $target, 'WorkflowExecutionSignaled'), '1', 'the target still has one signal');
is(sqlstate_of($w2, q{SELECT durable.receive_external('{"namespace": "default"}')}), '22023',
	'a request without its target and initiator gets 22023');

# Only a superuser relays or receives.
$coord->safe_psql('postgres', 'CREATE ROLE xs_client LOGIN; GRANT durable_client TO xs_client');
is(sqlstate_of($w2, qq{SELECT durable.receive_external('$again')}, user => 'xs_client'), '42501',
	'durable.receive_external is not granted to a client');
is(sqlstate_of($w1, qq{SELECT durable_citus.relay('$again')}, user => 'xs_client'), '42501',
	'nor durable_citus.relay');

# A child workflow is started on the node that owns its id (005_children.pl): its
# parent's signal and cancel, childWorkflowOnly included, reach it there.
my $parent = id_owned_by($coord, $w1, 'parent');
my $kid = id_owned_by($coord, $w2, 'kid');
$coord->safe_psql('postgres', qq{SELECT durable_citus.start_workflow('parent', NULL, '$parent', 'xp')});
$tok = $w1->safe_psql('postgres', q{SELECT durable.poll_decision_task('xp')->>'taskToken'});
$w1->safe_psql('postgres', qq{
	SELECT durable.complete_decision_task('$tok', '[{"decisionType": "StartChildWorkflowExecution",
		"workflowId": "$kid", "workflowType": "kid", "taskQueue": "xk"}]')});
ok($w1->poll_query_until('postgres', qq{
	SELECT count(*) = 1 FROM durable.get_history('$parent') WHERE event_type = 'ChildWorkflowExecutionStarted'}),
	'the child is started on worker 2');
$tok = $w1->safe_psql('postgres', q{SELECT durable.poll_decision_task('xp')->>'taskToken'});
$w1->safe_psql('postgres', qq{
	SELECT durable.complete_decision_task('$tok', '[
		{"decisionType": "SignalExternalWorkflowExecution", "workflowId": "$kid", "signalName": "hi"},
		{"decisionType": "RequestCancelExternalWorkflowExecution", "workflowId": "$kid",
		 "childWorkflowOnly": true}]')});
ok($w1->poll_query_until('postgres', qq{
	SELECT count(*) = 2 FROM durable.get_history('$parent') WHERE event_type LIKE 'External%'}),
	'a parent signals and cancels its child on another node');
is(count_events($w2, $kid, 'WorkflowExecutionSignaled') . ' '
	  . count_events($w2, $kid, 'WorkflowExecutionCancelRequested'),
	'1 1', 'the child got both, once');

# A crash.  Worker 2, the target's node, is down when the decision commits: the request
# waits in worker 1's outbox (its relay fails and is put off), and worker 1 is stopped
# with -m immediate with it there.  Both start again, and the relay delivers it once.
my $sender2 = id_owned_by($coord, $w1, 'sender2');
my $target2 = id_owned_by($coord, $w2, 'target2');
$coord->safe_psql('postgres', qq{
	SELECT durable_citus.start_workflow('sender', NULL, '$sender2', 'xs2');
	SELECT durable_citus.start_workflow('target', NULL, '$target2', 'xt');});
$tok = $w1->safe_psql('postgres', q{SELECT durable.poll_decision_task('xs2')->>'taskToken'});
$w2->stop('immediate');
$w1->safe_psql('postgres', qq{
	SELECT durable.complete_decision_task('$tok', '[
		{"decisionType": "SignalExternalWorkflowExecution", "workflowId": "$target2",
		 "signalName": "crash"}]')});
is($w1->safe_psql('postgres', q{SELECT count(*) FROM durable.timers WHERE kind = 'external'}),
	'1', 'the request is in worker 1\'s outbox');
ok($w1->poll_query_until('postgres', q{
	SELECT due_at > now() + interval '30 seconds' FROM durable.timers WHERE kind = 'external'}),
	'its relay to the stopped node failed and was put off');
$w1->stop('immediate');
$w2->start;
$w1->start;
is($w1->safe_psql('postgres', q{SELECT count(*) FROM durable.timers WHERE kind = 'external'}),
	'1', 'after the crash the request is still in the outbox');
# Past the put-off: tick relays it now.
is($w1->safe_psql('postgres', q{
	SET durable.test_time = '2100-01-01 00:00:00+00';
	SELECT durable.tick() >= 1;
	SELECT count(*) FROM durable.timers WHERE kind = 'external';}),
	"t\n0", 'tick relays it and empties the outbox');
is(count_events($w2, $target2, 'WorkflowExecutionSignaled'), '1', 'the signal arrived once');
is(count_events($w1, $sender2, 'ExternalWorkflowExecutionSignaled'), '1',
	'and the sender\'s history has its answer once');
is($w1->safe_psql('postgres', q{
	SET durable.test_time = '2100-01-01 00:05:00+00';
	SELECT durable.tick();}), '0', 'nothing is left to relay');
is(count_events($w2, $target2, 'WorkflowExecutionSignaled'), '1', 'still once');

done_testing();

# Child workflows across nodes (docs/citus.md, "Children across nodes"): a parent on
# worker 1 whose child's id worker 2 owns.  The start goes to worker 1's outbox and is
# relayed to worker 2, which starts the child there; the parent gets
# ChildWorkflowExecutionStarted (or StartChildWorkflowExecutionFailed when the id is
# taken) from the answer.  The child runs on its owner, found by durable_citus's routed
# calls; its close is relayed back and written to the parent once.  A parent that closes
# applies its children's close policies on their node.  Then crashes: the child's node is
# down when the start is decided and the parent's node is stopped with -m immediate with
# the start in its outbox; the parent's node is down when the child closes and the
# child's node is stopped the same way with the close in its outbox.  Each child starts
# once and each parent hears of each close once.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CitusCluster;

my ($coord, $w1, $w2) = citus_cluster();

# Poll the next decision task of a queue on a node, once it is ready: its token.
sub poll_decision
{
	my ($node, $queue) = @_;
	ok($node->poll_query_until('postgres', qq{
		SELECT count(*) > 0 FROM durable.ready_tasks t JOIN durable.runs r USING (run_id)
		 WHERE r.task_queue = '$queue' AND t.kind = 'd'}),
		"a decision task of $queue is ready on port " . $node->port);
	return $node->safe_psql('postgres',
		qq{SELECT durable.poll_decision_task('$queue')->>'taskToken'});
}

# Complete the next decision task of a queue on a node, through the coordinator.
sub decide
{
	my ($node, $queue, $decisions) = @_;
	my $tok = poll_decision($node, $queue);
	$coord->safe_psql('postgres',
		qq{SELECT durable_citus.complete_decision_task('$tok', '$decisions')});
}

# A crash with a request in the sender's outbox, its receiver stopped: the relay is put
# off; the sender is stopped with -m immediate; both start again, and a tick past the
# put-off relays the request and empties the outbox.
sub crash_with_request_in_outbox
{
	my ($sender, $receiver, $what) = @_;
	ok($sender->poll_query_until('postgres', q{
		SELECT count(*) = 1 AND bool_and(due_at > now() + interval '30 seconds')
		  FROM durable.timers WHERE kind = 'external'}),
		"the $what waits in the outbox of port " . $sender->port . ', its relay to the stopped node put off');
	$sender->stop('immediate');
	$receiver->start;
	$sender->start;
	is($sender->safe_psql('postgres', q{
		SET durable.test_time = '2100-01-01 00:00:00+00';
		SELECT durable.tick() >= 1;
		SELECT count(*) FROM durable.timers WHERE kind = 'external';}),
		"t\n0", "after the crash tick relays the $what and empties the outbox");
}

# Wait until a workflow's history on a node has an event of a type.
sub wait_for_event
{
	my ($node, $id, $type) = @_;
	ok($node->poll_query_until('postgres', qq{
		SELECT count(*) > 0 FROM durable.get_history('$id') WHERE event_type = '$type'}),
		"$id gets $type");
}

# ---- A child started on the owner of its id, and its close told to its parent ----
my $parent = id_owned_by($coord, $w1, 'parent');
my $child = id_owned_by($coord, $w2, 'child');
$coord->safe_psql('postgres', qq{SELECT durable_citus.start_workflow('parent', NULL, '$parent', 'kids')});
decide($w1, 'kids', qq{[{"decisionType": "StartChildWorkflowExecution", "workflowId": "$child",
	"workflowType": "kid", "taskQueue": "kid_q", "input": {"n": 7}, "control": "c1"}]});
wait_for_event($w1, $parent, 'ChildWorkflowExecutionStarted');
is(holders([ $coord, $w1, $w2 ], 'default', $child), $w2->port,
	'the child is created on the node that owns its id, and only there');
my $child_run = $w2->safe_psql('postgres', qq{SELECT durable.resolve_run_id('$child')});
is($w1->safe_psql('postgres', qq{
	SELECT string_agg(event_type, ',' ORDER BY event_id) FROM durable.get_history('$parent') WHERE event_id >= 5}),
	'StartChildWorkflowExecutionInitiated,ChildWorkflowExecutionStarted,DecisionTaskScheduled',
	'the parent\'s history: Initiated, then Started and a decision task');
is($w1->safe_psql('postgres', qq{
	SELECT attributes->>'initiatedEventId' || ' ' || (attributes->>'runId')
	  FROM durable.get_history('$parent') WHERE event_type = 'ChildWorkflowExecutionStarted'}),
	"5 $child_run", 'Started names the initiated event and the child\'s run on its node');
is($coord->safe_psql('postgres', qq{
	SELECT (durable_citus.describe_workflow('$child')->>'status') || ' '
	       || (durable_citus.describe_workflow('$child')->'parent'->>'workflowId')}),
	"running $parent", 'the routed calls find the child, and name its parent');
is($w2->safe_psql('postgres', qq{
	SELECT (attributes->'input')::text || ' ' || (attributes->'parentWorkflowExecution'->>'initiatedEventId')
	  FROM durable.get_history('$child') WHERE event_id = 1}),
	'{"n": 7} 5', 'the child\'s WorkflowExecutionStarted has the input and names the initiated event');
is($coord->safe_psql('postgres', q{SELECT count(*) FROM durable_citus.misplaced_workflows()}),
	'0', 'no workflow is on a node that does not own its id');

# A relay of the start tried again (as after a failure between the two nodes' commits) is
# answered from worker 2's note, with the same run, and starts nothing.
my $parent_run = $w1->safe_psql('postgres', qq{SELECT durable.resolve_run_id('$parent')});
my $again = qq({"kind": "start_child", "namespace": "default", "workflowId": "$child",
	"workflowType": "kid", "taskQueue": "kid_q", "workflowIdReusePolicy": "allow_duplicate_failed_only",
	"parentClosePolicy": "TERMINATE",
	"initiator": {"namespace": "default", "workflowId": "$parent", "runId": "$parent_run", "initiatedEventId": 5}});
is($w2->safe_psql('postgres', qq{SELECT durable.receive_external('$again')::text}),
	qq({"runId": "$child_run", "outcome": "started", "duplicate": true}),
	'a start delivered already is answered started, as a duplicate');
is($w2->safe_psql('postgres', qq{SELECT count(*) FROM durable.runs WHERE workflow_id = '$child'}),
	'1', 'the child still has one run');

# The child runs on its node and completes: its parent hears of it once.
decide($w2, 'kid_q', q{[{"decisionType": "CompleteWorkflowExecution", "result": "kid done"}]});
wait_for_event($w1, $parent, 'ChildWorkflowExecutionCompleted');
is($w1->safe_psql('postgres', qq{
	SELECT (attributes->>'result') || ' ' || (attributes->>'initiatedEventId') || ' '
	       || (attributes->>'startedEventId') || ' ' || (attributes->>'runId')
	  FROM durable.get_history('$parent') WHERE event_type = 'ChildWorkflowExecutionCompleted'}),
	"kid done 5 6 $child_run", 'the parent has the child\'s result, naming its initiated and started events');
ok($w2->poll_query_until('postgres', q{SELECT count(*) = 0 FROM durable.timers WHERE kind = 'external'}),
	'worker 2\'s outbox empties');
is(count_events($w1, $parent, 'ChildWorkflowExecutionCompleted'), '1', 'once');
is($w1->safe_psql('postgres', qq{
	SELECT count(*) FROM durable.children WHERE parent_run_id = '$parent_run'}),
	'0', 'the parent waits for no child any more');

# ---- A child id that is taken on its owner: StartChildWorkflowExecutionFailed ----
my $taken = id_owned_by($coord, $w2, 'taken');
$coord->safe_psql('postgres', qq{SELECT durable_citus.start_workflow('other', NULL, '$taken', 'other_q')});
decide($w1, 'kids', qq{[{"decisionType": "StartChildWorkflowExecution", "workflowId": "$taken",
	"workflowType": "kid", "control": "c2"}]});
wait_for_event($w1, $parent, 'StartChildWorkflowExecutionFailed');
is($w1->safe_psql('postgres', qq{
	SELECT (attributes->>'cause') || ' ' || (attributes->>'control') || ' ' || (attributes->>'workflowId')
	  FROM durable.get_history('$parent') WHERE event_type = 'StartChildWorkflowExecutionFailed'}),
	"WORKFLOW_ALREADY_RUNNING c2 $taken", 'the parent gets Failed with the cause and its control');
is($w2->safe_psql('postgres', qq{SELECT count(*) FROM durable.runs WHERE workflow_id = '$taken'}),
	'1', 'and the running workflow of that id is left alone');

# ---- Close policies applied on the child's node ----
my $p2 = id_owned_by($coord, $w1, 'policy-parent');
my ($k_term, $k_cancel, $k_abandon) = (id_owned_by($coord, $w2, 'k-term'), id_owned_by($coord, $w2, 'k-cancel'), id_owned_by($coord, $w2, 'k-abandon'));
$coord->safe_psql('postgres', qq{SELECT durable_citus.start_workflow('parent', NULL, '$p2', 'kids2')});
decide($w1, 'kids2', qq{[
	{"decisionType": "StartChildWorkflowExecution", "workflowId": "$k_term", "workflowType": "kid",
	 "taskQueue": "kid_q2", "parentClosePolicy": "TERMINATE"},
	{"decisionType": "StartChildWorkflowExecution", "workflowId": "$k_cancel", "workflowType": "kid",
	 "taskQueue": "kid_q2", "parentClosePolicy": "REQUEST_CANCEL"},
	{"decisionType": "StartChildWorkflowExecution", "workflowId": "$k_abandon", "workflowType": "kid",
	 "taskQueue": "kid_q2", "parentClosePolicy": "ABANDON"}]});
ok($w1->poll_query_until('postgres', qq{
	SELECT count(*) = 3 FROM durable.get_history('$p2') WHERE event_type = 'ChildWorkflowExecutionStarted'}),
	'the three children are started');
decide($w1, 'kids2', q{[{"decisionType": "CompleteWorkflowExecution", "result": "bye"}]});
ok($w2->poll_query_until('postgres', qq{
	SELECT durable.describe_workflow('$k_term')->>'status' = 'terminated'
	   AND (durable.describe_workflow('$k_cancel')->>'cancelRequested')::boolean}),
	'the parent\'s close terminates one child and asks another to cancel, on their node');
is($w2->safe_psql('postgres', qq{
	SELECT (attributes->>'reason') || ' ' || (attributes->'details'->>'workflowId')
	  FROM durable.get_history('$k_term') WHERE event_type = 'WorkflowExecutionTerminated'}),
	"by parent close policy $p2", 'the terminated child names the policy and its parent');
is($w2->safe_psql('postgres', qq{
	SELECT (durable.describe_workflow('$k_abandon')->>'status') || ' '
	       || (durable.describe_workflow('$k_cancel')->>'status')}),
	'running running', 'the abandoned child runs on, and the one asked to cancel decides');
ok($w1->poll_query_until('postgres', q{SELECT count(*) = 0 FROM durable.timers WHERE kind = 'close_policy'}),
	'nothing is left to apply');

# ---- A crash with a start in the outbox ----
my $p3 = id_owned_by($coord, $w1, 'crash-parent');
my $k3 = id_owned_by($coord, $w2, 'crash-kid');
$coord->safe_psql('postgres', qq{SELECT durable_citus.start_workflow('parent', NULL, '$p3', 'kids3')});
my $tok = poll_decision($w1, 'kids3');
$w2->stop('immediate');
$w1->safe_psql('postgres', qq{
	SELECT durable.complete_decision_task('$tok', '[{"decisionType": "StartChildWorkflowExecution",
		"workflowId": "$k3", "workflowType": "kid", "taskQueue": "kid_q3"}]')});
crash_with_request_in_outbox($w1, $w2, 'start');
is($w2->safe_psql('postgres', qq{SELECT count(*) FROM durable.runs WHERE workflow_id = '$k3'}),
	'1', 'the child started once');
is(count_events($w1, $p3, 'ChildWorkflowExecutionStarted'), '1', 'and its parent has Started once');

# ---- A crash with a child's close in the outbox ----
$tok = poll_decision($w2, 'kid_q3');
$w1->stop('immediate');
$w2->safe_psql('postgres', qq{
	SELECT durable.complete_decision_task('$tok', '[{"decisionType": "FailWorkflowExecution",
		"reason": "kid broke"}]')});
crash_with_request_in_outbox($w2, $w1, 'close');
is($w1->safe_psql('postgres', qq{
	SELECT count(*) || ' ' || min(attributes->>'reason') FROM durable.get_history('$p3')
	 WHERE event_type = 'ChildWorkflowExecutionFailed'}),
	'1 kid broke', 'the parent heard of the child\'s failure once');
is($w2->safe_psql('postgres', q{
	SET durable.test_time = '2100-01-01 00:05:00+00';
	SELECT durable.tick();}), '0', 'nothing is left to relay');
is(count_events($w1, $p3, 'ChildWorkflowExecutionFailed'), '1', 'still once');

# ---- SQL workflows: a parent whose children are on both workers ----
$coord->safe_psql('postgres', q{
	CREATE FUNCTION public.kid_sql(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
	BEGIN
		RETURN jsonb_build_object('kid', input->>'n');
	END $$;
	CREATE FUNCTION public.fanout_sql(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
	BEGIN
		RETURN jsonb_build_array(
			durable.child_workflow('kid_sql', '{"n": "a"}', jsonb_build_object('workflowId', input->>'a')),
			durable.child_workflow('kid_sql', '{"n": "b"}', jsonb_build_object('workflowId', input->>'b')));
	END $$;
	CREATE ROLE kids_app LOGIN IN ROLE durable_client, durable_worker;
	GRANT EXECUTE ON FUNCTION public.kid_sql(jsonb), public.fanout_sql(jsonb) TO kids_app;});
$coord->safe_psql('postgres', q{
	SELECT durable_citus.register_workflow('kid_sql', 'public.kid_sql(jsonb)', 'sql_kids');
	SELECT durable_citus.register_workflow('fanout_sql', 'public.fanout_sql(jsonb)', 'sql_kids');},
	extra_params => [ '-U', 'kids_app' ]);
my $fan = id_owned_by($coord, $w1, 'fan');
my ($fan_a, $fan_b) = (id_owned_by($coord, $w1, 'fan-a'), id_owned_by($coord, $w2, 'fan-b'));
$coord->safe_psql('postgres', qq{
	SELECT durable_citus.start_workflow('fanout_sql', '{"a": "$fan_a", "b": "$fan_b"}', '$fan', 'sql_kids')});
is($coord->safe_psql('postgres', qq{
	SELECT durable_citus.wait_workflow('$fan', wait => '30 seconds')->>'result'}),
	'[{"kid": "a"}, {"kid": "b"}]', 'a SQL workflow gets the results of children on its node and on the other');
is(holders([ $coord, $w1, $w2 ], 'default', $fan_a) . ' ' . holders([ $coord, $w1, $w2 ], 'default', $fan_b),
	$w1->port . ' ' . $w2->port, 'each child ran on the node that owns its id');

# ---- Requests that are not ----
is(sqlstate_of($w2, q{SELECT durable.receive_external('{"kind": "start_child", "namespace": "default"}')}),
	'22023', 'a start without its workflow and parent gets 22023');
is(sqlstate_of($w2, q{SELECT durable.receive_external('{"kind": "child_closed", "eventType": "WorkflowExecutionSignaled"}')}),
	'22023', 'a close that is not a child\'s close gets 22023');
is(sqlstate_of($w2, q{SELECT durable.receive_external('{"kind": "launch"}')}),
	'22023', 'an unknown kind gets 22023');

done_testing();

# A start hands its first decision task to a poll waiting for it
# (src/store/wait.c "ReserveWaitingPoller"): the start's own transaction starts
# the task with the poll's identity, and the poll, woken at that commit, reads
# it and writes nothing.  So does a decision task's completion with an
# activity it schedules, and an activity's completion with the decision task
# it schedules.  A start that rolls back, wholly or in a
# subtransaction, hands nothing over and the poll waits on; a start in a
# transaction block queues its task, and the poll claims it as before.  A poll
# of another namespace is never handed a task of this one.  A poll that leaves
# while its task is being started for it loses nothing: the task times out
# and the next poll gets it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use DurableTest::LongPoll;

my $node = PostgreSQL::Test::Cluster->new('handoff');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = off
});
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', 'CREATE EXTENSION durable');

my $lp = DurableTest::LongPoll->new($node, 'app');

# A long poll that prints the workflow id it got, whether its transaction
# wrote anything (an xid), and the task's token.
sub start_poll
{
	my ($name, $queue, %opt) = @_;
	my $ns = $opt{namespace} // 'default';
	my $wait = $opt{wait} // '300 seconds';
	my $kind = $opt{kind} // 'decision';
	my $id = $kind eq 'decision' ? 'workflowId' : 'activityId';
	return $lp->start($name, qq{
		SELECT (t->>'$id') || ' ' || (txid_current_if_assigned() IS NOT NULL)::text
		       || ' ' || (t->>'taskToken')
		  FROM durable.poll_${kind}_task('$queue', '$name', '$ns', '$wait') t},
		what => "$name polls $queue and sleeps");
}

sub history
{
	my ($wid, $ns) = @_;
	$ns //= 'default';
	return $node->safe_psql('app', qq{
		SELECT string_agg(event_type || CASE WHEN event_type = 'DecisionTaskStarted'
		                                    THEN ':' || (attributes->>'identity') ELSE '' END,
		                  ' ' ORDER BY event_id)
		  FROM durable.get_history('$wid', '$ns')});
}

# 1. A start in its own statement: the poll gets the task, its transaction
# wrote nothing, the task was started for it, and its token completes it.
start_poll('h1', 'hq');
$node->safe_psql('app', q{SELECT durable.start_workflow('t', '{"n": 1}', 'a', 'hq')});
$lp->wait_until_waiting([qw(h1)], [], 'the start wakes the poll');
my ($wid, $wrote, $token) = split / /, $lp->finish('h1');
is($wid, 'a', 'the poll got the task');
is($wrote, 'false', 'the poll wrote nothing: the start started the task');
is(history('a'), 'WorkflowExecutionStarted DecisionTaskScheduled DecisionTaskStarted:h1',
	'DecisionTaskStarted names the poll');
is($node->safe_psql('app', q{
	SELECT count(*) FROM durable.ready_tasks WHERE task_queue = 'hq'}), '0', 'nothing queued');
$node->safe_psql('app', qq{
	SELECT durable.complete_decision_task('$token',
		'[{"decisionType": "CompleteWorkflowExecution", "result": 7}]')});
is($node->safe_psql('app', q{SELECT durable.describe_workflow('a')->>'status'}),
	'completed', 'the handed-over token completes the workflow');

# 2. A start in a transaction block queues its task; the poll claims it.
start_poll('h2', 'hq');
$node->safe_psql('app', q{
	BEGIN;
	SELECT durable.start_workflow('t', NULL, 'b', 'hq');
	COMMIT;
});
$lp->wait_until_waiting([qw(h2)], [], 'the block\'s commit wakes the poll');
($wid, $wrote) = split / /, $lp->finish('h2');
is("$wid $wrote", 'b true', 'the poll claimed the queued task (a write)');
is(history('b'), 'WorkflowExecutionStarted DecisionTaskScheduled DecisionTaskStarted:h2',
	'the claim started it for the poll');

# 3. A start that rolls back hands nothing over: the poll waits on, and gets
# the next task.
start_poll('h3', 'hq');
my ($ret, $out, $err) = $node->psql('app', q{
	DO $$ BEGIN
		PERFORM durable.start_workflow('t', NULL, 'c', 'hq');
		RAISE EXCEPTION 'changed my mind';
	END $$});
like($err, qr/changed my mind/, 'the start rolled back');
$lp->wait_until_waiting([qw(h3)], [qw(h3)], 'the poll still waits');
is($node->safe_psql('app', q{SELECT count(*) FROM durable.runs WHERE workflow_id = 'c'}),
	'0', 'no run c');
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'd', 'hq')});
$lp->wait_until_waiting([qw(h3)], [], 'the next start wakes it');
($wid, $wrote) = split / /, $lp->finish('h3');
is("$wid $wrote", 'd false', 'it got the next task, handed over');

# 4. A start rolled back in a subtransaction, then another in the same
# statement: the poll gets the second one only.
start_poll('h4', 'hq');
$node->safe_psql('app', q{
	DO $$ BEGIN
		BEGIN
			PERFORM durable.start_workflow('t', NULL, 'e', 'hq');
			RAISE EXCEPTION 'not this one';
		EXCEPTION WHEN raise_exception THEN NULL;
		END;
		PERFORM durable.start_workflow('t', NULL, 'f', 'hq');
	END $$});
$lp->wait_until_waiting([qw(h4)], [], 'the statement\'s commit wakes the poll');
($wid) = split / /, $lp->finish('h4');
is($wid, 'f', 'the poll got the task that committed');
is($node->safe_psql('app', q{SELECT count(*) FROM durable.runs WHERE workflow_id = 'e'}),
	'0', 'no run e');
is(history('f') =~ /DecisionTaskStarted:h4$/ ? 1 : 0, 1, 'f was started for the poll');

# 5. A poll of another namespace, on a queue of the same name, is not handed
# this namespace's task, nor woken for it; the task stays queued.
$node->safe_psql('app', q{SELECT durable.create_namespace('other')});
start_poll('o1', 'hq', namespace => 'other');
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'g', 'hq')});
is($node->safe_psql('app', q{
	SELECT count(*) FROM durable.ready_tasks WHERE task_queue = 'hq' AND namespace = 'default'}),
	'1', 'the task of default is queued');
$lp->wait_until_waiting([qw(o1)], [qw(o1)], 'the poll of other still waits');
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'g', 'hq', 'other')});
$lp->wait_until_waiting([qw(o1)], [], 'a start in other wakes it');
($wid, $wrote) = split / /, $lp->finish('o1');
is("$wid $wrote", 'g false', 'it got the task of its own namespace, handed over');
is(history('g', 'other') =~ /DecisionTaskStarted:o1$/ ? 1 : 0, 1, 'started for o1 in other');
is(history('g'), 'WorkflowExecutionStarted DecisionTaskScheduled',
	'the task of default was not started');

# 6. A poll whose wait ends while a statement still runs after starting its
# task: the poll returns nothing once its wait and a second of grace are over;
# the task started for it times out after its decision_timeout and the next
# poll gets it.
$node->safe_psql('app', q{SELECT durable.poll_decision_task('hq', 'drain')});
start_poll('h6', 'hq', wait => '1 second');
$node->safe_psql('app', q{
	SET durable.test_time = '2026-01-01 00:00:00+00';
	SELECT durable.start_workflow('t', NULL, 'h', 'hq', decision_timeout => '5 seconds'),
	       pg_sleep(3);
});
is($lp->finish('h6'), '', 'the poll returned nothing');
is(history('h'), 'WorkflowExecutionStarted DecisionTaskScheduled DecisionTaskStarted:h6',
	'the task was started for the poll that left');
$node->safe_psql('app', q{
	SET durable.test_time = '2026-01-01 00:00:06+00';
	SELECT durable.tick();
});
is($node->safe_psql('app', q{
	SET durable.test_time = '2026-01-01 00:00:06+00';
	SELECT t->>'workflowId' || ' ' || (t->>'attempt')
	  FROM durable.poll_decision_task('hq', 'next') t}),
	'h 2', 'it timed out, and the next poll gets its second attempt');

# 7. A decision task's completion hands the activity it schedules to a poll
# of the activity's queue, and the activity's completion hands the next
# decision task to a decision poll.
# Start workflow $wid on queue aq (no poll waits), start activity poll $poll,
# then answer the first decision task by scheduling activity $aid on aq,
# followed by the decisions @more.
sub schedule_for_poll
{
	my ($wid, $poll, $aid, @more) = @_;
	$node->safe_psql('app', qq{SELECT durable.start_workflow('t', NULL, '$wid', 'aq')});
	my $dtoken = $node->safe_psql('app',
		q{SELECT durable.poll_decision_task('aq', 'd0')->>'taskToken'});
	start_poll($poll, 'aq', kind => 'activity');
	my $decisions = join(', ', qq{{"decisionType": "ScheduleActivityTask",
		"activityId": "$aid", "activityType": "work", "taskQueue": "aq",
		"startToCloseTimeoutSeconds": 30}}, @more);
	$node->safe_psql('app', qq{
		SELECT durable.complete_decision_task('$dtoken', '[$decisions]')});
}

schedule_for_poll('act', 'a1', 'x1');
$lp->wait_until_waiting([qw(a1)], [], 'the completion wakes the activity poll');
my $atoken;
($wid, $wrote, $atoken) = split / /, $lp->finish('a1');
is("$wid $wrote", 'x1 false', 'the activity poll got x1 and wrote nothing');
is($node->safe_psql('app', q{
	SELECT state || ' ' || a.attempt || ' ' || last_worker_identity
	  FROM durable.activities a JOIN durable.runs r USING (run_id) WHERE r.workflow_id = 'act'}),
	'STARTED 1 a1', 'the attempt was started for the poll');
start_poll('d1', 'aq');
$node->safe_psql('app', qq{SELECT durable.complete_activity('$atoken', '{"done": true}')});
$lp->wait_until_waiting([qw(d1)], [], 'the activity\'s completion wakes the decision poll');
($wid, $wrote, $token) = split / /, $lp->finish('d1');
is("$wid $wrote", 'act false', 'the decision poll got the next task and wrote nothing');
is(history('act'), join(' ', qw(WorkflowExecutionStarted DecisionTaskScheduled DecisionTaskStarted:d0
	DecisionTaskCompleted ActivityTaskScheduled ActivityTaskStarted ActivityTaskCompleted
	DecisionTaskScheduled DecisionTaskStarted:d1)), 'the history is a poll\'s');
is($node->safe_psql('app', q{
	SELECT attributes->>'identity' FROM durable.get_history('act')
	 WHERE event_type = 'ActivityTaskStarted'}), 'a1', 'ActivityTaskStarted names the activity poll');
$node->safe_psql('app', qq{
	SELECT durable.complete_decision_task('$token',
		'[{"decisionType": "CompleteWorkflowExecution", "result": 1}]')});
is($node->safe_psql('app', q{SELECT durable.describe_workflow('act')->>'status'}),
	'completed', 'the handed-over decision task completes the workflow');

# 8. An activity canceled by a later decision of the same completion is not
# handed over: the poll waits on.
schedule_for_poll('cx', 'a2', 'y1',
	'{"decisionType": "RequestCancelActivityTask", "activityId": "y1"}');
$lp->wait_until_waiting([qw(a2)], [qw(a2)], 'the activity poll still waits');
is($node->safe_psql('app', q{
	SELECT count(*) FROM durable.activities a JOIN durable.runs r USING (run_id)
	 WHERE r.workflow_id = 'cx'}), '0', 'y1 is gone');
$node->safe_psql('app', q{
	SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'a2'});
$lp->finish('a2');

$node->stop;
done_testing();

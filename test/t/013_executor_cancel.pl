# query_canceled (57014) inside SQL activities and workflow functions.
#
# 1. A SQL activity that raises SQLSTATE 57014 itself: its attempt fails with
#    reason 57014, is retried by its policy, and the workflow completes.  (The
#    executor used to return from inside PG_TRY after completing a decision task;
#    the next error of the same transaction, this one, then jumped into a dead
#    stack frame: signal 11 and a restart of the cluster, at every retry.)
# 2. pg_cancel_backend() of an executor while a SQL activity sleeps: the cancel
#    ends that attempt (failure 57014 recorded, retried by the policy) and the
#    workflow completes.
# 3. pg_cancel_backend() of an executor while a workflow function sleeps: the
#    decision task is not failed; it runs again and the workflow completes.
# 4. In a session, durable.run_tasks() under the session's statement_timeout: the
#    timeout cancels the statement even while a SQL activity runs (it is not
#    swallowed as the activity's failure, nor held off by the activity's own
#    StartToClose), and nothing of the attempt is recorded.
# 5. A workflow function that raises 57014 itself: the workflow fails with reason
#    57014 (it used to be taken for a cancel and run again forever).
# And the server never crashed.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('cancel');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = on
durable.worker_max_sleep = 1
durable.executor_workers = 1
max_worker_processes = 16
});
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION durable;
CREATE ROLE app_role;
CREATE SEQUENCE tries;
GRANT USAGE ON SEQUENCE tries TO app_role;

-- One activity, named by the input; its attempts are retried after 1 second.
CREATE FUNCTION one_step(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    IF input ? 'sleep_in_workflow' AND nextval('tries') = 1 THEN
        PERFORM pg_sleep(3600);
    END IF;
    RETURN durable.activity(input->>'activity', input,
        '{"startToCloseTimeoutSeconds": 7200,
          "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 3}}');
END $$;
-- Raises query_canceled on its first attempt (a sequence is not rolled back).
CREATE FUNCTION raiser(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    IF nextval('tries') = 1 THEN
        RAISE SQLSTATE '57014' USING MESSAGE = 'raised by the activity';
    END IF;
    RETURN '"done"';
END $$;
-- Sleeps an hour on its first attempt.
CREATE FUNCTION sleeper(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    IF nextval('tries') = 1 THEN
        PERFORM pg_sleep(3600);
    END IF;
    RETURN '"woke"';
END $$;
SELECT durable.register_workflow('one_step', 'one_step(jsonb)', run_as => 'app_role');
SELECT durable.register_activity('raiser', 'raiser(jsonb)', run_as => 'app_role');
SELECT durable.register_activity('sleeper', 'sleeper(jsonb)', run_as => 'app_role');
});
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'durable executor'}),
	'the executor runs');

# Start workflow $id with input $input after the sequence is reset.  The
# decision timeout (a statement timeout of the workflow function) is long: only
# the test's cancel ends a sleep.
sub start
{
	my ($id, $input) = @_;
	$node->safe_psql('postgres', qq{
		SELECT setval('tries', 1, false);
		SELECT durable.start_workflow('one_step', '$input', '$id',
		                              decision_timeout => '1 hour')});
}

# The workflow completes with $result.
sub completes
{
	my ($id, $result) = @_;
	ok($node->poll_query_until('postgres', qq{
		SELECT durable.describe_workflow('$id')->>'status' <> 'running'}),
		"$id ends");
	is($node->safe_psql('postgres', qq{
		SELECT (durable.describe_workflow('$id')->>'status') || ' '
		    || (durable.describe_workflow('$id')->>'result')}),
		"completed $result", "$id completed with $result");
}

# The attempts of $id's activity, as "attempt outcome reason" lines.
sub attempts
{
	my ($id) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT string_agg(format('%s %s %s', attempt, outcome, COALESCE(failure_reason, '-')),
		                  ',' ORDER BY attempt)
		  FROM durable.activity_attempts WHERE workflow_id = '$id'});
}

# The pid of the executor once it waits in pg_sleep.
sub sleeping_executor
{
	my $query = q{SELECT pid FROM pg_stat_activity
	               WHERE backend_type = 'durable executor' AND wait_event = 'PgSleep'};
	ok($node->poll_query_until('postgres', "SELECT count(*) = 1 FROM ($query) s"),
		'the executor sleeps inside the function');
	return $node->safe_psql('postgres', $query);
}

my $log_offset = -s $node->logfile;

# 1. The activity raises 57014 itself.
start('raises', '{"activity": "raiser"}');
completes('raises', 'done');
is(attempts('raises'), '1 failed 57014,2 completed -',
	'its first attempt failed with reason 57014 and was retried');

# 2. pg_cancel_backend() of the executor inside the activity.
start('canceled-activity', '{"activity": "sleeper"}');
my $pid = sleeping_executor();
is($node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)"), 't', 'cancel the executor');
completes('canceled-activity', 'woke');
is(attempts('canceled-activity'), '1 failed 57014,2 completed -',
	'the canceled attempt failed with reason 57014 and was retried');

# 3. pg_cancel_backend() of the executor inside the workflow function.
start('canceled-workflow', '{"activity": "raiser", "sleep_in_workflow": true}');
$pid = sleeping_executor();
is($node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)"), 't', 'cancel the executor');
completes('canceled-workflow', 'done');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM durable.get_history('canceled-workflow')
	 WHERE event_type IN ('DecisionTaskFailed', 'DecisionTaskTimedOut', 'WorkflowExecutionFailed')}),
	'0', 'the canceled decision task left no failure in history');

# 4. A session's statement_timeout while durable.run_tasks() runs an activity.
$node->safe_psql('postgres', 'ALTER SYSTEM SET durable.executor_workers = 0');
$node->reload;
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'durable executor'}),
	'no executor runs');
start('session', '{"activity": "sleeper"}');
my ($out, $err, $timed_out) = ('', '', 0);
my $ret = $node->psql('postgres', q{
	SET statement_timeout = '2s';
	SELECT durable.run_tasks()},
	stdout => \$out, stderr => \$err,
	timeout => $PostgreSQL::Test::Utils::timeout_default, timed_out => \$timed_out);
ok(!$timed_out, 'run_tasks() does not run past the statement timeout');
isnt($ret, 0, 'run_tasks() fails');
like($err, qr/canceling statement due to statement timeout/,
	'the session\'s statement timeout canceled it inside the activity');
is(attempts('session'), '', 'no attempt of the activity was recorded');
is($node->safe_psql('postgres', q{
	SELECT string_agg(event_type, ',' ORDER BY event_id) FROM durable.get_history('session')}),
	'WorkflowExecutionStarted,DecisionTaskScheduled', 'and its run is as it was');
is($node->safe_psql('postgres', 'SELECT durable.run_tasks()'), '3',
	'run_tasks() runs the decision, the activity and the next decision');
completes('session', 'woke');

# 5. A workflow function that raises 57014 itself fails its workflow (reason 57014),
#    instead of being run again and again.
$node->safe_psql('postgres', q{
CREATE FUNCTION raising_workflow(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    RAISE SQLSTATE '57014' USING MESSAGE = 'raised by the workflow';
END $$;
SELECT durable.register_workflow('raising_workflow', 'raising_workflow(jsonb)', run_as => 'app_role');
SELECT durable.start_workflow('raising_workflow', NULL, 'raising-workflow');
});
is($node->safe_psql('postgres', 'SELECT durable.run_tasks()'), '1', 'run_tasks() runs its decision task');
is($node->safe_psql('postgres', q{
	SELECT (durable.describe_workflow('raising-workflow')->>'status') || ' ' || (attributes->>'reason')
	    || ' ' || (attributes->'details'->>'message')
	  FROM durable.get_history('raising-workflow') WHERE event_type = 'WorkflowExecutionFailed'}),
	'failed 57014 raised by the workflow', 'the workflow failed with reason 57014');

my $log = slurp_file($node->logfile, $log_offset);
unlike($log, qr/terminated by signal|PANIC|TRAP:/, 'the server never crashed');
like($log, qr/canceling statement due to user request/,
	'the executor logged the cancel of the workflow function');

$node->stop;
done_testing();

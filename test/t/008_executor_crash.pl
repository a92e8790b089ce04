# kill -9 of an executor, once in the middle of a workflow function and once
# in the middle of a SQL activity that has written its row: after the crash
# and restart both workflows complete, and every activity's write is there
# exactly once (a unique key would refuse a second one, and the counts say
# that none is missing), with one ActivityTaskCompleted each in history.
#
# The test knows that an executor is inside the function because the
# function waits for an advisory lock that a session of the test holds.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use IPC::Run;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = on
durable.worker_max_sleep = 1
restart_after_crash = on
max_worker_processes = 16
});
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION durable;
CREATE ROLE app_role;
CREATE TABLE effects (k text PRIMARY KEY, written_by int DEFAULT pg_backend_pid());
GRANT INSERT ON effects TO app_role;

-- A workflow of two activities; with block = 'workflow' every replay first
-- waits for advisory lock 1.
CREATE FUNCTION two_steps(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
    id text := durable.workflow_info()->>'workflowId';
    r1 jsonb;
    r2 jsonb;
BEGIN
    IF input->>'block' = 'workflow' THEN
        PERFORM pg_advisory_xact_lock(1);
    END IF;
    r1 := durable.activity('effect', jsonb_build_object('k', id || '/1', 'block', input->'block'));
    r2 := durable.activity('effect', jsonb_build_object('k', id || '/2', 'block', input->'block'));
    RETURN jsonb_build_array(r1, r2);
END $$;

-- The activity writes its row, then, with block = 'activity', waits for
-- advisory lock 2 before it returns.
CREATE FUNCTION effect(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO effects (k) VALUES (input->>'k');
    IF input->>'block' = 'activity' THEN
        PERFORM pg_advisory_xact_lock(2);
    END IF;
    RETURN to_jsonb(input->>'k');
END $$;

SELECT durable.register_workflow('two_steps', 'two_steps(jsonb)', run_as => 'app_role');
SELECT durable.register_activity('effect', 'effect(jsonb)', run_as => 'app_role');
});
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 2 FROM pg_stat_activity WHERE backend_type = 'durable executor'}),
	'the executors run');

# A session that holds advisory lock $key until the server crashes.
sub hold_lock
{
	my ($key) = @_;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ 'psql', '-X', '-A', '-t', '-d', $node->connstr('postgres'),
		  '-c', "SELECT pg_advisory_lock($key)", '-c', 'SELECT pg_sleep(3600)' ],
		'>', \$out, '2>', \$err,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	ok($node->poll_query_until('postgres', qq{
		SELECT count(*) = 1 FROM pg_locks
		 WHERE locktype = 'advisory' AND objid = $key AND granted}),
		"the test holds advisory lock $key");
	return $h;
}

# The pid of the executor that waits for advisory lock $key.
sub executor_waiting_for
{
	my ($key) = @_;
	my $query = qq{
		SELECT a.pid FROM pg_locks l JOIN pg_stat_activity a USING (pid)
		 WHERE l.locktype = 'advisory' AND l.objid = $key AND NOT l.granted
		   AND a.backend_type = 'durable executor'};
	ok($node->poll_query_until('postgres', "SELECT count(*) = 1 FROM ($query) w"),
		"an executor waits for advisory lock $key inside the function");
	return $node->safe_psql('postgres', $query);
}

# kill -9 the executor, wait for the server to be back after its restart.
sub crash
{
	my ($pid, $holder) = @_;
	my $log_offset = -s $node->logfile;
	ok(kill('KILL', $pid), "kill -9 of executor $pid");
	$node->wait_for_log(qr/all server processes terminated; reinitializing/, $log_offset);
	eval { $holder->finish; };    # the server ended its session
	ok($node->poll_query_until('postgres', 'SELECT true'), 'the server is back');
}

sub completes
{
	my ($id) = @_;
	ok($node->poll_query_until('postgres', qq{
		SELECT durable.describe_workflow('$id')->>'status' = 'completed'}),
		"$id completes after the crash");
	is($node->safe_psql('postgres', qq{SELECT durable.describe_workflow('$id')->>'result'}),
		qq{["$id/1", "$id/2"]}, "$id has both activities' results");
	is($node->safe_psql('postgres', qq{
		SELECT string_agg(k, ',' ORDER BY k) FROM effects WHERE k LIKE '$id/%'}),
		"$id/1,$id/2", "each activity of $id wrote its row once");
	is($node->safe_psql('postgres', qq{
		SELECT count(*) FILTER (WHERE event_type = 'ActivityTaskCompleted') || ','
		    || count(*) FILTER (WHERE event_type = 'WorkflowExecutionCompleted')
		  FROM durable.get_history('$id')}),
		'2,1', "$id has two activity completions and one workflow completion in history");
}

# 1. In the middle of a workflow function.
my $holder = hold_lock(1);
$node->safe_psql('postgres', q{
	SELECT durable.start_workflow('two_steps', '{"block": "workflow"}', 'in-workflow',
	                              decision_timeout => '5 minutes')});
my $pid = executor_waiting_for(1);
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM durable.get_history('in-workflow')
	 WHERE event_type = 'DecisionTaskStarted'}),
	'0', 'the decision task in progress is not visible');
crash($pid, $holder);
completes('in-workflow');

# 2. In the middle of a SQL activity, after its INSERT.
$holder = hold_lock(2);
$node->safe_psql('postgres', q{
	SELECT durable.start_workflow('two_steps', '{"block": "activity"}', 'in-activity')});
$pid = executor_waiting_for(2);
is($node->safe_psql('postgres', q{SELECT count(*) FROM effects WHERE k LIKE 'in-activity/%'}),
	'0', 'the activity\'s row is not committed while it runs');
crash($pid, $holder);
completes('in-activity');

is($node->safe_psql('postgres', 'SELECT count(*) FROM effects'), '4', 'four rows in all');
is($node->safe_psql('postgres', 'SELECT count(*) FROM durable.ready_tasks'), '0',
	'no task is left');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM durable.activity_attempts WHERE outcome IS DISTINCT FROM 'completed'}),
	'0', 'no attempt failed: the crashed ones left no trace');

$node->stop;
done_testing();

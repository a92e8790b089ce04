# One role cannot stop the SQL workflows of every namespace: an executor's
# task ends by its time limit whatever the user code does, and an executor
# does not wait without limit on a lock that a client holds.  One executor
# (durable.executor_workers = 1), so that a stuck executor would stop all.
#
# 1. A workflow function that catches query_canceled in a loop, with a 2 s
#    decision timeout: the watchdog cancels it, then terminates its executor
#    (durable.executor_grace = 1 s); the history shows DecisionTaskTimedOut
#    START_TO_CLOSE, the next decision task is put off (failures, last_error,
#    not_before) instead of being claimed again at once, a workflow of another
#    namespace completes meanwhile, and terminate_workflow of the stuck one
#    returns within the bound.
# 2. The same loop in a SQL activity (maximumAttempts 1, StartToClose 2 s),
#    run at first in the chain of the decision task that scheduled it: the
#    attempt is recorded as ActivityTaskTimedOut START_TO_CLOSE and the
#    workflow, which catches WF007, completes.
# 3. A client that leaves `BEGIN; SELECT durable.signal_workflow('x', 's')`
#    open holds run x's lock while a decision task of x is ready: the
#    executor gives that task back after its lock timeout, another
#    namespace's workflow completes, the wait is logged at LOG (not WARNING),
#    and once the client commits, x completes.
# 4. pg_terminate_backend() of an executor in the middle of a task, before its
#    limit: the task is put off as a poison task, and no timeout is recorded.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

# A stuck executor shows as a poll that never ends: fail in a minute, not three.
$PostgreSQL::Test::Utils::timeout_default = 60;

my $node = PostgreSQL::Test::Cluster->new('limits');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = on
durable.worker_max_sleep = 1
durable.executor_workers = 1
durable.executor_grace = 1
max_worker_processes = 16
});
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION durable;
CREATE ROLE app_role;
SELECT durable.create_namespace('other');
CREATE SEQUENCE stubborn_calls;
GRANT USAGE ON SEQUENCE stubborn_calls TO app_role;

-- Never ends: it swallows every cancel, the statement timeout's included.
CREATE FUNCTION stubborn(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM nextval('stubborn_calls');
    LOOP
        BEGIN
            PERFORM pg_sleep(3600);
        EXCEPTION WHEN query_canceled THEN
            NULL;
        END;
    END LOOP;
END $$;
CREATE FUNCTION quick(input jsonb) RETURNS jsonb LANGUAGE sql AS
    $$ SELECT '"quick"'::jsonb $$;
CREATE FUNCTION act_wf(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    RETURN durable.activity('stubborn_act', input,
        '{"startToCloseTimeoutSeconds": 2,
          "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 1}}');
EXCEPTION WHEN SQLSTATE 'WF007' THEN
    RETURN '"the activity timed out"';
END $$;
CREATE FUNCTION slow(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_sleep(3);
    RETURN '"slow"';
END $$;
CREATE FUNCTION waiter(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM durable.wait_signal('first');
    RETURN durable.wait_signal('s');
END $$;
SELECT durable.register_workflow('stubborn', 'stubborn(jsonb)', run_as => 'app_role');
SELECT durable.register_workflow('act_wf', 'act_wf(jsonb)', run_as => 'app_role');
SELECT durable.register_activity('stubborn_act', 'stubborn(jsonb)', run_as => 'app_role');
SELECT durable.register_workflow('slow', 'slow(jsonb)', run_as => 'app_role');
SELECT durable.register_workflow('waiter', 'waiter(jsonb)', run_as => 'app_role');
SELECT durable.register_workflow('quick', 'quick(jsonb)', namespace => 'other',
                                 run_as => 'app_role');
});

sub executor_pid
{
	return $node->safe_psql('postgres', q{
		SELECT pid FROM pg_stat_activity WHERE backend_type = 'durable executor'});
}

sub status
{
	my ($id, $ns) = @_;
	$ns //= 'default';
	return qq{SELECT durable.describe_workflow('$id', '$ns')->>'status'};
}

ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'durable executor'}),
	'the executor runs');

# 1. A workflow function that swallows cancels.
my $log_offset = -s $node->logfile;
my $started = time;
$node->safe_psql('postgres', q{
	SELECT durable.start_workflow('stubborn', '{}', 'stuck', decision_timeout => '2 seconds')});
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE backend_type = 'durable executor' AND query LIKE 'durable: workflow stuck %'}),
	'the executor runs the stubborn function');
my $first_pid = executor_pid();
$node->safe_psql('postgres', q{
	SELECT durable.start_workflow('quick', '{}', 'q1', namespace => 'other')});

ok($node->poll_query_until('postgres', q{
	SELECT count(*) >= 1 FROM durable.get_history('stuck')
	 WHERE event_type = 'DecisionTaskTimedOut'
	   AND attributes->>'timeoutType' = 'START_TO_CLOSE'}),
	'the history shows the decision task timed out');
my $elapsed = time - $started;
# decision timeout 2 s + grace (cancel) + grace (terminate), and slack
cmp_ok($elapsed, '<', 2 + 1 + 1 + 4,
	sprintf('the task ended within its time limit and grace (%.1f s)', $elapsed));
ok($node->log_contains(qr/terminating executor process $first_pid: its decision task of run/,
	$log_offset), 'the watchdog logged the termination');
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'durable executor'
	   AND pid <> } . $first_pid), 'another executor took its place');

# The next decision task was put off: it carries the failure of the one the
# executor was terminated in (it stays counted while the task is run again).
ok($node->poll_query_until('postgres', q{
	SELECT failures >= 1 AND last_error LIKE '57P01: its executor was terminated%'
	  FROM durable.ready_tasks
	 WHERE run_id = durable.resolve_run_id('stuck') AND kind = 'w'}),
	'the next decision task is put off');

ok($node->poll_query_until('postgres', status('q1', 'other'), 'completed'),
	'a workflow of another namespace completes meanwhile');
is($node->safe_psql('postgres', status('stuck')), 'running',
	'the stubborn workflow is still running');

# terminate_workflow waits at most for the task under way to reach its limit:
# call it while the executor runs the function again.
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE backend_type = 'durable executor' AND query LIKE 'durable: workflow stuck %'}),
	'after its backoff the task runs again');
my $t0 = time;
my ($ret, $out, $err) = $node->psql('postgres', q{
	SET statement_timeout = '30s';
	SELECT durable.terminate_workflow('stuck', 'stubborn')});
my $waited = time - $t0;
is($ret, 0, 'terminate_workflow of the stuck run succeeds') or diag($err);
cmp_ok($waited, '<', 2 + 1 + 1 + 3,
	sprintf('terminate_workflow returned within the bound (%.1f s)', $waited));
is($node->safe_psql('postgres', status('stuck')), 'terminated', 'the run is terminated');

# 2. The same code as a SQL activity, first chained after its decision task.
$node->safe_psql('postgres', q{
	SELECT durable.start_workflow('act_wf', '{}', 'a1', decision_timeout => '2 seconds')});
ok($node->poll_query_until('postgres', status('a1'), 'completed'),
	'the workflow of the stubborn activity completes');
is($node->safe_psql('postgres', q{
	SELECT attributes->>'timeoutType' FROM durable.get_history('a1')
	 WHERE event_type = 'ActivityTaskTimedOut'}),
	'START_TO_CLOSE', 'the attempt is recorded as timed out, START_TO_CLOSE');
is($node->safe_psql('postgres', q{
	SELECT durable.describe_workflow('a1')->'result'}),
	'"the activity timed out"', 'the workflow saw the timeout as a failed activity');

# 3. A client holds a run's lock while a decision task of the run is ready.
$node->safe_psql('postgres', q{SELECT durable.start_workflow('waiter', '{}', 'x')});
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM durable.get_history('x')
	 WHERE event_type = 'DecisionTaskCompleted'}),
	'workflow x waits for its signal');
# Keep the executor busy, so that x's next decision task waits in the queue.
$node->safe_psql('postgres', q{SELECT durable.start_workflow('slow', '{}', 'busy')});
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE backend_type = 'durable executor' AND query LIKE 'durable: workflow busy %'}),
	'the executor is busy');
$log_offset = -s $node->logfile;
$node->safe_psql('postgres', q{SELECT durable.signal_workflow('x', 'first')});
my $holder = $node->background_psql('postgres');
$holder->query_safe('BEGIN');
$holder->query_safe(q{SELECT durable.signal_workflow('x', 's', '"late"')});

# The executor claims x's task and cannot lock x: it gives the task back.
ok($node->poll_query_until('postgres', q{
	SELECT failures >= 1 FROM durable.ready_tasks
	 WHERE run_id = durable.resolve_run_id('x') AND kind = 'w'}),
	'the task of the locked run is given back');
$node->safe_psql('postgres', q{
	SELECT durable.start_workflow('quick', '{}', 'q2', namespace => 'other')});
ok($node->poll_query_until('postgres', status('q2', 'other'), 'completed'),
	'a workflow of another namespace completes while the client holds the lock');
ok($node->log_contains(qr/LOG:  durable decision task \d+ of run \S+ waits: its run is locked/,
	$log_offset), 'the wait is logged at LOG');
ok(!$node->log_contains(qr/WARNING:  durable decision task \d+ of run .* failed in the engine/,
	$log_offset), 'and not as a failure of the engine');
is($node->safe_psql('postgres', status('x')), 'running', 'x still waits');

$holder->query_safe('COMMIT');
$holder->quit;
ok($node->poll_query_until('postgres', status('x'), 'completed'),
	'once the client commits, x completes');
is($node->safe_psql('postgres', q{SELECT durable.describe_workflow('x')->'result'}),
	'"late"', 'with the signal the client sent');

# 4. An operator terminates the executor in the middle of a task, its limit
#    not passed: the task is put off as a poison task, no timeout recorded.
$node->safe_psql('postgres', q{
	SELECT durable.start_workflow('stubborn', '{}', 'op', decision_timeout => '1 minute')});
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE backend_type = 'durable executor' AND query LIKE 'durable: workflow op %'}),
	'the executor runs the stubborn function again');
my $op_pid = executor_pid();
$node->safe_psql('postgres', "SELECT pg_terminate_backend($op_pid)");
ok($node->poll_query_until('postgres', q{
	SELECT failures >= 1
	       AND last_error LIKE '57P01: the executor process % running it was terminated'
	  FROM durable.ready_tasks
	 WHERE run_id = durable.resolve_run_id('op') AND kind = 'w'}),
	'a task whose executor an operator terminated is put off');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM durable.get_history('op') WHERE event_type LIKE 'DecisionTask%Out'}),
	'0', 'and no timeout is recorded');

$node->stop;
done_testing();

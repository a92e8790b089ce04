# SQL activities of one run started in parallel (start_activity() / await())
# are run by several executors; each locks the run while its function runs, so
# they run one after the other, and an executor waits for the run's lock while
# another executor holds it (that executor is bounded by its task's time
# limit), instead of giving its task back after its lock timeout (1 s) and
# putting it off (1 s, doubling) as it does for a run a client keeps locked.
#
# 1. A workflow of 5 parallel activities of 1.2 s each, with 4 executors:
#    the activities run back to back, no task of the run is given back
#    ("waits: its run is locked" is not logged for it), and the run closes
#    within 1 s of the 6 s its activities take (put off, they took 7.5 s
#    and more).
# 2. 4 activities of 0.2 s: the run closes within 2.5 s (about 0.9 s).
# 3. A client that keeps a run locked still gets its tasks given back, even
#    when several executors wait for that run at once (none of them holds its
#    lock): the tasks are put off with last_error 55P03, and the run completes
#    once the client commits.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

$PostgreSQL::Test::Utils::timeout_default = 60;

my $node = PostgreSQL::Test::Cluster->new('parallel');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = on
durable.worker_max_sleep = 1
durable.executor_workers = 4
max_worker_processes = 16
});
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION durable;
CREATE ROLE app_role;
-- When each activity ran, by the wall clock.
CREATE TABLE ran (wid text, i int, started timestamptz, ended timestamptz);
GRANT INSERT ON ran TO app_role;
CREATE FUNCTION nap(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
    PERFORM pg_sleep((input->>'secs')::float8);
    INSERT INTO ran VALUES (input->>'wid', (input->>'i')::int, t0, clock_timestamp());
    RETURN input->'i';
END $$;
CREATE FUNCTION fan_out(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
    h text[] := '{}';
    r jsonb := '[]';
BEGIN
    FOR i IN 1 .. (input->>'n')::int LOOP
        h := h || durable.start_activity('nap',
                jsonb_build_object('i', i, 'secs', input->'secs',
                                   'wid', durable.workflow_info()->>'workflowId'),
                '{"startToCloseTimeoutSeconds": 60}');
    END LOOP;
    FOR i IN 1 .. (input->>'n')::int LOOP
        r := r || durable.await(h[i]);
    END LOOP;
    RETURN r;
END $$;
CREATE FUNCTION waiter(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM durable.wait_signal('first');
    RETURN durable.wait_signal('s');
END $$;
SELECT durable.register_workflow('fan_out', 'fan_out(jsonb)', run_as => 'app_role');
SELECT durable.register_activity('nap', 'nap(jsonb)', run_as => 'app_role');
SELECT durable.register_workflow('waiter', 'waiter(jsonb)', run_as => 'app_role');
});

ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 4 FROM pg_stat_activity WHERE backend_type = 'durable executor'}),
	'four executors run');

sub status
{
	my ($id) = @_;
	return $node->safe_psql('postgres',
		qq{SELECT durable.describe_workflow('$id')->>'status'});
}

# Start a fan_out of n activities of secs each; wait for it to close.
# Returns the seconds from its start to the end of its last activity, and
# the wall clock seconds the client saw from start_workflow() to the close.
sub fan_out
{
	my ($id, $n, $secs) = @_;
	my $t0 = time;
	$node->safe_psql('postgres', qq{
		SELECT durable.start_workflow('fan_out', '{"n": $n, "secs": $secs}', '$id')});
	my $st;
	while (1)
	{
		$st = status($id);
		last if $st ne 'running' || time - $t0 > 30;
		usleep(20_000);
	}
	my $wall = time - $t0;
	is($st, 'completed', "$id completes");
	# closeTime is the time of the closing transaction's start, which may
	# have waited for the run's lock: the last activity's end is later.
	my $run = $node->safe_psql('postgres', qq{
		SELECT extract(epoch FROM max(ended) - (
		         SELECT (d->>'startTime')::timestamptz
		           FROM durable.describe_workflow('$id') d))
		  FROM ran WHERE wid = '$id'});
	diag(sprintf('%s: %d activities of %.1f s: the last ended %.2f s after the start; closed after %.2f s (client)',
			$id, $n, $secs, $run, $wall));
	return ($run, $wall);
}

# 1. 5 x 1.2 s: each activity but the first waits longer than the lock
#    timeout for the run's lock, which the executor running the one before
#    holds.
my $log_offset = -s $node->logfile;
my ($run, $wall) = fan_out('p5', 5, 1.2);
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM ran WHERE wid = 'p5'}), '5', 'each activity ran once');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM ran a JOIN ran b ON a.wid = b.wid AND a.i < b.i
	 WHERE a.wid = 'p5'
	   AND tstzrange(a.started, a.ended) && tstzrange(b.started, b.ended)}),
	'0', 'the activities of one run ran one after the other (the run stays locked)');
my $p5 = $node->safe_psql('postgres', q{SELECT durable.resolve_run_id('p5')});
ok(!$node->log_contains(qr/task \d+ of run $p5 waits: its run is locked/, $log_offset),
	'no task of the run was given back for its lock');
# 6 s of activities; put off, the tasks would add 1.5 s or more.
cmp_ok($wall, '<', 5 * 1.2 + 1,
	sprintf('the run closed %.2f s after its start, its activities ran %.2f s', $wall, $run));

# 2. 4 x 0.2 s: the waits are shorter than the lock timeout.
($run, $wall) = fan_out('p2', 4, 0.2);
cmp_ok($wall, '<', 2.5, sprintf('4 x 0.2 s: the run closed %.2f s after its start', $wall));

# 3. A client locks run x (5 activities of 2 s) while its first activity
#    runs: it gets the lock when an activity's executor commits, and keeps
#    it.  x's next tasks (the activities left, its decision task) are
#    claimed by executors that wait for the lock, none of which holds it:
#    each gives its task back.  How many are left for them depends on how
#    many executors queued for the run's lock before the client did (those
#    run their activity first, the lock passing from executor to executor),
#    so the test asks for one given back and put off, not a number.
$log_offset = -s $node->logfile;
$node->safe_psql('postgres', q{
	SELECT durable.start_workflow('fan_out', '{"n": 5, "secs": 2}', 'x')});
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE backend_type = 'durable executor' AND state = 'active'
	   AND query = 'durable: activity nap'}),
	'the first activity of x runs');
my $holder = $node->background_psql('postgres');
$holder->query_safe('BEGIN');
# Waits for the executor's chain to commit, then keeps x locked.
$holder->query_safe(q{SELECT durable.signal_workflow('x', 's')});
ok($node->poll_query_until('postgres', q{
	SELECT count(*) >= 1 FROM durable.ready_tasks
	 WHERE run_id = durable.resolve_run_id('x') AND last_error LIKE '55P03:%'}),
	'the tasks of the run a client keeps locked are given back and put off');
ok($node->log_contains(qr/LOG:  durable (activity|decision) task \d+ of run \S+ waits: its run is locked/,
	$log_offset), 'the wait is logged at LOG');
is(status('x'), 'running', 'x still runs');
$holder->query_safe('COMMIT');
$holder->quit;
ok($node->poll_query_until('postgres',
	q{SELECT durable.describe_workflow('x')->>'status'}, 'completed'),
	'once the client commits, x completes');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM ran WHERE wid = 'x'}), '5', 'each of its activities ran once');

$node->stop;
done_testing();

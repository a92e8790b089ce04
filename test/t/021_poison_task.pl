# A task that fails in the engine does not block the executors.  With a single
# executor, a SQL workflow whose function the engine cannot load (its library
# is missing) is the oldest task: the executor puts it off with a growing
# backoff, logs one line per failure, and serves the other workflows, which
# complete.  The poisoned task shows in durable.stuck_tasks with its error, and
# runs once the cause is gone.  A database still at 0.2.0 (no columns for a
# put-off task) keeps working under the new library until ALTER EXTENSION
# UPDATE, after which its poisoned task is put off too.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('primary');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = on
durable.worker_max_sleep = 1
durable.executor_workers = 1
max_worker_processes = 16
});
$node->start;

# The functions and registrations of a database; app.poison points at a
# library that is not there, as after the package of a C function was removed
# (CREATE FUNCTION checks the library, so the test updates the catalog).
my $setup = q{
CREATE SCHEMA app;
GRANT USAGE ON SCHEMA app TO app_role;
CREATE FUNCTION app.poison(input jsonb) RETURNS jsonb LANGUAGE sql AS 'SELECT input';
UPDATE pg_proc SET prolang = (SELECT oid FROM pg_language WHERE lanname = 'c'),
       prosrc = 'poison', probin = '$libdir/durable_no_such_library'
 WHERE oid = 'app.poison(jsonb)'::regprocedure;
CREATE FUNCTION app.echo(input jsonb) RETURNS jsonb LANGUAGE sql AS 'SELECT input';
CREATE FUNCTION app.fine(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    RETURN jsonb_build_object('echo', durable.activity('echo', input));
END $$;
SELECT durable.register_workflow('poison', 'app.poison(jsonb)', run_as => 'app_role');
SELECT durable.register_workflow('fine', 'app.fine(jsonb)', run_as => 'app_role');
SELECT durable.register_activity('echo', 'app.echo(jsonb)', run_as => 'app_role');
};

sub status
{
	my ($db, $wid) = @_;
	return qq{SELECT durable.describe_workflow('$wid')->>'status'};
}

# The log lines of the failures of run $run since $offset.
sub failure_lines
{
	my ($run, $offset) = @_;
	my $log = slurp_file($node->logfile, $offset);
	my @lines = ($log =~ /WARNING:  durable decision task \d+ of run \Q$run\E failed in the engine: 58P01/g);
	return scalar(@lines);
}

$node->safe_psql('postgres', 'CREATE ROLE app_role');
$node->safe_psql('postgres', 'CREATE EXTENSION durable');
$node->safe_psql('postgres', $setup);
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'durable executor'}),
	'the executor runs');

my $log_offset = -s $node->logfile;
my $poisoned = $node->safe_psql('postgres', q{SELECT durable.start_workflow('poison', '{}', 'p1')});
$node->safe_psql('postgres', q{
	SELECT durable.start_workflow('fine', jsonb_build_object('n', n), 'f' || n)
	  FROM generate_series(1, 3) n});
foreach my $n (1 .. 3)
{
	ok($node->poll_query_until('postgres', status('postgres', "f$n"), 'completed'),
		"workflow f$n completes while the oldest task is poisoned");
}
is($node->safe_psql('postgres', status('postgres', 'p1')), 'running',
	'the poisoned workflow is still running');
like($node->safe_psql('postgres', q{
	SELECT format('%s %s %s', workflow_id, task_type, last_error) FROM durable.stuck_tasks}),
	qr/^p1 decision 58P01: could not access file "\$libdir\/durable_no_such_library"/,
	'durable.stuck_tasks shows the poisoned task with its error');

# The backoff grows (1 s, 2 s, ...): wait for the third failure, then each
# failure has one log line, not one per executor loop.
ok($node->poll_query_until('postgres', q{
	SELECT failures >= 3 FROM durable.stuck_tasks WHERE workflow_id = 'p1'}),
	'the task is retried after its backoff');
my ($failures, $lines);
foreach my $try (1 .. 20)
{
	my $before = $node->safe_psql('postgres',
		q{SELECT failures FROM durable.stuck_tasks WHERE workflow_id = 'p1'});
	$lines = failure_lines($poisoned, $log_offset);
	$failures = $node->safe_psql('postgres',
		q{SELECT failures FROM durable.stuck_tasks WHERE workflow_id = 'p1'});
	last if $before eq $failures && $lines == $failures;
	sleep(1);
}
is($lines, $failures, "one log line per failure ($failures failures)");
my $backoff = $node->safe_psql('postgres', q{
	SELECT extract(epoch FROM next_attempt_time - now()) > 1.5
	    OR next_attempt_time IS NULL FROM durable.stuck_tasks WHERE workflow_id = 'p1'});
is($backoff, 't', 'after several failures the next attempt is seconds away');

# The cause is gone: the next retry runs the function and the workflow completes.
$node->safe_psql('postgres', q{
	CREATE OR REPLACE FUNCTION app.poison(input jsonb) RETURNS jsonb
	    LANGUAGE sql AS $$ SELECT '{"cured": true}'::jsonb $$});
ok($node->poll_query_until('postgres', status('postgres', 'p1'), 'completed'),
	'once the function can be loaded, the retry completes the workflow');
is($node->safe_psql('postgres', 'SELECT count(*) FROM durable.stuck_tasks'), '0',
	'no stuck task is left');

# A database still at 0.2.0 under this library: SQL workflows run as before.
$node->safe_psql('postgres', 'CREATE DATABASE old');
$node->safe_psql('old', q{CREATE EXTENSION durable VERSION '0.2.0'});
$node->safe_psql('old', $setup);
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE backend_type = 'durable executor' AND datname = 'old'}),
	'at 0.2.0 the executor runs');
$node->safe_psql('old', q{SELECT durable.start_workflow('fine', '{}', 'f0')});
ok($node->poll_query_until('old', status('old', 'f0'), 'completed'),
	'at 0.2.0 a SQL workflow completes');
is($node->safe_psql('old', q{SELECT durable.describe_workflow('f0') ? 'taskFailure'}), 'f',
	'at 0.2.0 describe_workflow has no taskFailure');

# There a poisoned task is retried, about once a second, and nothing is put off ...
$log_offset = -s $node->logfile;
$node->safe_psql('old', q{SELECT durable.start_workflow('poison', '{}', 'p0')});
$node->wait_for_log(qr/could not access file "\$libdir\/durable_no_such_library"/, $log_offset);
is($node->safe_psql('old', status('old', 'p0')), 'running', 'at 0.2.0 the poisoned task fails');

# ... until the update: then it is put off and the others run.
$node->safe_psql('old', 'ALTER EXTENSION durable UPDATE');
$node->safe_psql('old', q{SELECT durable.start_workflow('fine', '{}', 'f00')});
ok($node->poll_query_until('old', status('old', 'f00'), 'completed'),
	'after ALTER EXTENSION UPDATE another workflow completes');
ok($node->poll_query_until('old', q{
	SELECT count(*) = 1 FROM durable.stuck_tasks WHERE workflow_id = 'p0' AND failures >= 1}),
	'and the poisoned task is put off');

$node->stop;
done_testing();

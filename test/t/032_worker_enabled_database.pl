# durable.worker_enabled per database, so that a restored copy runs no work:
# ALTER DATABASE ... SET durable.worker_enabled = off makes that database's
# timer worker and executors idle, so that a copy restored from a backup
# (docs/operations.md "Backup") fires no timer and runs no SQL workflow or activity until
# the setting is turned on; then they do.  Turned off in a database already
# at work, its workers idle too.  An idle worker stays: the launcher does
# not start it again and again.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('worker_enabled_db');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = on
durable.worker_max_sleep = 1
max_worker_processes = 16
});
$node->start;

sub workers
{
	my ($db, $type) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT count(*) FROM pg_stat_activity
		 WHERE backend_type = 'durable $type' AND datname = '$db'});
}

sub timer_worker_pid
{
	my ($db) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT pid FROM pg_stat_activity
		 WHERE backend_type = 'durable timer worker' AND datname = '$db'});
}

# The work of a database: a SQL workflow calling a SQL activity, and a
# workflow whose first decision task waits for a timer that is due at once
# (its delay counted from a test time long past).  "$suffix" names them.
sub start_work
{
	my ($db, $suffix) = @_;
	$node->safe_psql($db, qq{
SELECT durable.start_workflow('flow', '{"n": 21}', 'sql$suffix');
SET durable.test_time = '2000-01-01 00:00:00+00';
SELECT durable.start_workflow('external', NULL, 'due$suffix', task_queue => 'ext', delay => '1 second');
});
}

sub register
{
	my ($db) = @_;
	$node->safe_psql($db, q{
CREATE FUNCTION double(input jsonb) RETURNS jsonb LANGUAGE sql
    AS $$ SELECT to_jsonb((input->>'n')::int * 2) $$;
CREATE FUNCTION flow(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    RETURN durable.activity('double', input);
END $$;
SELECT durable.register_workflow('flow', 'flow(jsonb)', run_as => 'app_role');
SELECT durable.register_activity('double', 'double(jsonb)', run_as => 'app_role');
});
}

# "sql-workflow-status timer-fired" of the work named by $suffix.
sub state_of
{
	my ($db, $suffix) = @_;
	return $node->safe_psql($db, qq{
		SELECT (durable.describe_workflow('sql$suffix')->>'status')
		       || ' ' || (SELECT count(*) > 1 FROM durable.get_history('due$suffix'))});
}

$node->safe_psql('postgres', q{
CREATE ROLE app_role;
CREATE DATABASE source;
ALTER DATABASE source SET durable.worker_enabled = off;
});
my $log_offset = -s $node->logfile;
$node->safe_psql('source', 'CREATE EXTENSION durable');
register('source');
start_work('source', '');
$node->wait_for_log(qr/durable workers idle in database "source": durable\.worker_enabled is off for it/,
	$log_offset);
pass('the timer worker of a database where durable.worker_enabled is off idles');
my $source_pid = timer_worker_pid('source');

# The same work in a database where it is on, for comparison: it is done.
$node->safe_psql('postgres', 'CREATE DATABASE live');
$node->safe_psql('live', 'CREATE EXTENSION durable');
register('live');
start_work('live', '');
ok($node->poll_query_until('live', q{SELECT durable.describe_workflow('sql')->>'status' = 'completed'}),
	'where it is on, the SQL workflow completes');
ok($node->poll_query_until('live', q{SELECT count(*) > 1 FROM durable.get_history('due')}),
	'and the timer fires');

is(state_of('source', ''), 'running false',
	'where it is off, meanwhile, the SQL workflow did not run and the timer did not fire');
is(workers('source', 'executor'), '0', 'no executor works there');
is(timer_worker_pid('source'), $source_pid, 'and its timer worker is the same process: not restarted');

# A copy restored into a database created with the setting off: nothing runs.
my $dump = $node->basedir . '/source.dump';
command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('source') ], 'pg_dump of source');
$node->safe_psql('postgres', q{
CREATE DATABASE staging;
ALTER DATABASE staging SET durable.worker_enabled = off;
});
$log_offset = -s $node->logfile;
command_ok([ 'pg_restore', '-d', $node->connstr('staging'), $dump ], 'pg_restore into staging');
$node->wait_for_log(qr/durable workers idle in database "staging"/, $log_offset);
is(state_of('staging', ''), 'running false', 'the restored copy runs nothing');

# Turned on, the copy does its work.
$node->safe_psql('postgres', 'ALTER DATABASE staging SET durable.worker_enabled = on');
ok($node->poll_query_until('staging', q{SELECT durable.describe_workflow('sql')->>'status' = 'completed'}),
	'turned on, the copy runs its SQL workflow');
is($node->safe_psql('staging', q{SELECT durable.describe_workflow('sql')->>'result'}), '42',
	'to its result');
ok($node->poll_query_until('staging', q{SELECT count(*) > 1 FROM durable.get_history('due')}),
	'and fires its timer');

# Turned off in a database at work: its timer worker and executors idle.
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 2 FROM pg_stat_activity
	 WHERE backend_type = 'durable executor' AND datname = 'live'}),
	'live has its executors');
$log_offset = -s $node->logfile;
$node->safe_psql('postgres', 'ALTER DATABASE live SET durable.worker_enabled = off');
$node->wait_for_log(qr/durable workers idle in database "live"/, $log_offset);
$node->wait_for_log(qr/durable executor 0 idle in database "live"/, $log_offset);
$node->wait_for_log(qr/durable executor 1 idle in database "live"/, $log_offset);
pass('turned off in live, its timer worker and executors idle');
start_work('live', '-2');
# The same work in staging, now on, for comparison.
start_work('staging', '-2');
ok($node->poll_query_until('staging', q{SELECT durable.describe_workflow('sql-2')->>'status' = 'completed'}),
	'in staging the new work is done');
ok($node->poll_query_until('staging', q{SELECT count(*) > 1 FROM durable.get_history('due-2')}),
	'timer included');
is(state_of('live', '-2'), 'running false', 'in live, meanwhile, nothing ran');
is(workers('live', 'executor'), '2', 'its executors stay, idle');

$node->safe_psql('postgres', 'ALTER DATABASE live RESET durable.worker_enabled');
ok($node->poll_query_until('live', q{SELECT durable.describe_workflow('sql-2')->>'status' = 'completed'}),
	'reset, live runs its SQL workflow');
ok($node->poll_query_until('live', q{SELECT count(*) > 1 FROM durable.get_history('due-2')}),
	'and fires its timer');

$node->stop;
done_testing();

# The background workers: timers fire without durable.tick(), a worker starts
# for a database created after the server, DROP EXTENSION and DROP DATABASE
# stop it, SIGHUP turns the workers off and on, SIGTERM is survived, nothing
# runs on a standby, and CREATE EXTENSION warns where the library is not
# preloaded.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use IPC::Run;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('primary');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = on
durable.worker_max_sleep = 1
max_worker_processes = 16
});
$node->start;

$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', 'CREATE EXTENSION durable');
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'durable launcher'}),
	'the launcher runs');
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE backend_type = 'durable timer worker' AND datname = 'app'}),
	'a timer worker runs for the database that has the extension');
# The launcher starts a timer worker for every database, which exits at once where
# the extension is not installed: one may be on its way out when this looks.
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 0 FROM pg_stat_activity
	 WHERE backend_type = 'durable timer worker' AND datname = 'postgres'}),
	'none stays for a database without the extension');

# A delayed first decision task fires by itself, close to its due time.
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'delayed', delay => '1 second')});
ok($node->poll_query_until('app', q{
	SELECT count(*) = 2 FROM durable.get_history('delayed')}),
	'a delayed start gets its decision task without durable.tick()');
my $late = $node->safe_psql('app', q{
	SELECT extract(epoch FROM s.event_time - (w.event_time + interval '1 second'))
	  FROM durable.get_history('delayed') w, durable.get_history('delayed') s
	 WHERE w.event_id = 1 AND s.event_id = 2});
cmp_ok($late, '>=', 0, 'it is not early');
cmp_ok($late, '<', 1.0, "it is late by less than a second ($late s)");

# A retry backoff fires by itself: the failed attempt comes back after 1 s.
$node->safe_psql('app', q{
	SELECT durable.start_workflow('t', NULL, 'retry');
	SELECT durable.complete_decision_task(durable.poll_decision_task()->>'taskToken',
		'[{"decisionType": "ScheduleActivityTask", "activityId": "a", "activityType": "x",
		   "retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 3}}]');
	SELECT durable.fail_activity(durable.poll_activity_task()->>'taskToken', 'boom');
});
is($node->safe_psql('app', 'SELECT durable.poll_activity_task() IS NULL'), 't',
	'no attempt during the backoff');
my $task = '';
foreach my $i (1 .. 100)
{
	$task = $node->safe_psql('app', q{SELECT durable.poll_activity_task(wait => '1 second')->>'attempt'});
	last if $task ne '';
}
is($task, '2', 'the second attempt comes back by itself after the backoff');

# A poll waiting on an empty queue is woken by the commit that makes its task.
# Its wait (120 s) is far longer than the test lets it run (30 s): a poll that only
# found its task when the wait ran out would fail this test, however slow the machine.
my ($in, $out, $err) = ('', '', '');
my $limit = IPC::Run::timeout(30);
my $poller = IPC::Run::start(
	[ 'psql', '-X', '-A', '-t', '-d', $node->connstr('app'), '-c',
	  q{SELECT durable.poll_decision_task('wake', wait => '120 seconds')->>'workflowId'} ],
	'<', \$in, '>', \$out, '2>', \$err, $limit);
ok($node->poll_query_until('app', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE query LIKE '%poll_decision_task(''wake''%' AND wait_event_type = 'Extension'}),
	'the poll sleeps (wait event Extension)');
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'woken', task_queue => 'wake')});
eval { $poller->finish; };
is($out, "woken\n", 'the commit of a task wakes the waiting poll, which gets it');

# A run timeout closes the run by itself.
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'slow', run_timeout => '1 second')});
ok($node->poll_query_until('app', q{
	SELECT durable.describe_workflow('slow')->>'status' = 'timed_out'}),
	'a run timeout fires by itself');

# A database created after the server gets its worker once it has the extension.
$node->safe_psql('postgres', 'CREATE DATABASE later');
$node->safe_psql('later', 'CREATE EXTENSION durable');
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE backend_type = 'durable timer worker' AND datname = 'later'}),
	'a worker starts for a database created after the server');
$node->safe_psql('later', q{SELECT durable.start_workflow('t', NULL, 'w', delay => '1 second')});
ok($node->poll_query_until('later', q{SELECT count(*) = 2 FROM durable.get_history('w')}),
	'and fires its timers');

# DROP EXTENSION: the worker goes.  While the DROP is in progress the worker
# waits for it on the extension's lock, not on a table dropped under it, and
# once the DROP commits it finds the extension gone and goes without an error.
# DROP DATABASE works with a worker attached.
my $drop_offset = -s $node->logfile;
my $dropper = $node->background_psql('later');
$dropper->query_safe('BEGIN');
$dropper->query_safe('DROP EXTENSION durable');
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_locks l JOIN pg_stat_activity a USING (pid)
	 WHERE a.backend_type = 'durable timer worker' AND a.datname = 'later'
	   AND NOT l.granted AND l.locktype = 'object'
	   AND l.classid = 'pg_extension'::regclass}),
	'the worker waits for the DROP on the extension');
$dropper->query_safe('COMMIT');
$dropper->quit;
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 0 FROM pg_stat_activity
	 WHERE backend_type = 'durable timer worker' AND datname = 'later'}),
	'DROP EXTENSION stops the worker');
unlike(slurp_file($node->logfile, $drop_offset), qr/ERROR:/,
	'the worker logs no error for the DROP');
$node->safe_psql('later', 'CREATE EXTENSION durable');
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE backend_type = 'durable timer worker' AND datname = 'later'}),
	'CREATE EXTENSION again brings it back');
my ($ret, $stdout, $stderr) = $node->psql('postgres', 'DROP DATABASE later');
is($ret, 0, 'DROP DATABASE succeeds while the database has a worker');
is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_database WHERE datname = 'later'}),
	'0', 'the database is gone');

# SIGTERM of a worker: the launcher starts another.
my $pid = $node->safe_psql('postgres', q{
	SELECT pid FROM pg_stat_activity
	 WHERE backend_type = 'durable timer worker' AND datname = 'app'});
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
ok($node->poll_query_until('postgres', qq{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE backend_type = 'durable timer worker' AND datname = 'app' AND pid <> $pid}),
	'a terminated worker is replaced');

# SIGHUP: durable.worker_enabled off stops the workers, on brings them back.
$node->safe_psql('postgres', 'ALTER SYSTEM SET durable.worker_enabled = off');
$node->reload;
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'durable timer worker'}),
	'worker_enabled = off stops the workers on reload');
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'paused', delay => '1 second')});
sleep(2);
is($node->safe_psql('app', q{SELECT count(*) FROM durable.get_history('paused')}), '1',
	'no timer fires while they are off');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET durable.worker_enabled');
$node->reload;
ok($node->poll_query_until('app', q{SELECT count(*) = 2 FROM durable.get_history('paused')}),
	'back on, the overdue timer fires');

# A standby runs no durable worker, and starts them when promoted.
$node->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($node, 'b', has_streaming => 1);
$standby->start;
$node->wait_for_catchup($standby);
sleep(2);
is($standby->safe_psql('postgres', q{
	SELECT count(*) FROM pg_stat_activity WHERE backend_type LIKE 'durable%'}),
	'0', 'nothing of durable runs on a standby');
$node->stop;
$standby->promote;
ok($standby->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE backend_type = 'durable timer worker' AND datname = 'app'}),
	'the promoted standby runs the worker');
$standby->stop;

# Without shared_preload_libraries, CREATE EXTENSION says that timers need tick().
my $plain = PostgreSQL::Test::Cluster->new('plain');
$plain->init;
$plain->append_conf('postgresql.conf', "shared_preload_libraries = ''");
$plain->start;
($ret, $stdout, $stderr) = $plain->psql('postgres', 'CREATE EXTENSION durable');
is($ret, 0, 'CREATE EXTENSION works without preloading');
like($stderr, qr/WARNING:  durable is not in shared_preload_libraries: durable timers fire only when durable\.tick\(\) is called/,
	'and warns that timers need durable.tick()');
$plain->safe_psql('postgres', q{
	SET durable.test_time = '2026-01-01 00:00:00+00';
	SELECT durable.start_workflow('t', NULL, 'w', delay => '1 minute');
	SET durable.test_time = '2026-01-01 00:01:00+00';
	SELECT durable.tick();
});
is($plain->safe_psql('postgres', q{SELECT count(*) FROM durable.get_history('w')}), '2',
	'durable.tick() fires timers there');
is($plain->safe_psql('postgres', q{SELECT durable.poll_decision_task(wait => '200 milliseconds') IS NOT NULL}),
	't', 'and a poll with a wait works without shared memory');

# The API's SQL and PL/pgSQL functions run as the extension's owner through the
# library's hook (src/base/caller.c): the planning of a session's first statement
# loads it, through their planner support function, before they run.
$plain->safe_psql('postgres', q{CREATE ROLE plain_client LOGIN IN ROLE durable_client});
foreach my $q (q{SELECT count(*) FROM durable.get_history('w')},
	q{SELECT count(*) FROM durable.list_workflows()},
	q{SELECT durable.count_workflows()},
	q{SELECT sum(count) FROM durable.count_workflows_by_status()})
{
	# A new session each: its first statement.
	my ($r, $out, $err) = $plain->psql('postgres', $q,
		connstr => $plain->connstr('postgres') . ' user=plain_client');
	is("$r $out $err", $q =~ /get_history/ ? '0 3 ' : '0 1 ',
		"a role's first statement of a session without the library: $q");
}
$plain->stop;

done_testing();

# The launcher's robustness (docs/background-workers.md): it logs one line when it
# starts; databases without the extension give their slot of durable.max_databases back; a DROP DATABASE
# or CREATE DATABASE ... TEMPLATE that PostgreSQL refuses leaves the workers alone; a
# launcher that was restarted adopts the workers that run and starts no second one for a
# slot; a worker that cannot be started for want of background worker slots is logged,
# at most once a minute for each database, and the others are started all the same.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Time::HiRes qw(time);
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('primary');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = on
durable.worker_max_sleep = 60
max_worker_processes = 24
# Three slots for postgres, d1, d2, d3 (without the extension) and app.
durable.max_databases = 3
});
$node->start;

# How many workers of a type run for a database.
sub workers
{
	my ($n, $type, $db) = @_;
	return $n->safe_psql('postgres', qq{
		SELECT count(*) FROM pg_stat_activity
		 WHERE backend_type = 'durable $type' AND datname = '$db'});
}

# The pids of the workers of a database, sorted: "timer pid | executor pids".
sub worker_pids
{
	my ($n, $db) = @_;
	return $n->safe_psql('postgres', qq{
		SELECT string_agg(pid::text, ',' ORDER BY backend_type DESC, pid)
		  FROM pg_stat_activity
		 WHERE backend_type IN ('durable timer worker', 'durable executor')
		   AND datname = '$db'});
}

# Wait until a database has its timer worker and $execs executors.
sub has_workers
{
	my ($n, $db, $execs) = @_;
	return $n->poll_query_until('postgres', qq{
		SELECT count(*) FILTER (WHERE backend_type = 'durable timer worker') = 1
		   AND count(*) FILTER (WHERE backend_type = 'durable executor') = $execs
		  FROM pg_stat_activity WHERE datname = '$db'});
}

# How many lines of the log from $offset match $re.
sub log_count
{
	my ($n, $re, $offset) = @_;
	my $log = slurp_file($n->logfile, $offset);
	my @lines = grep { /$re/ } split /\n/, $log;
	return scalar @lines;
}

# 1. One line when the launcher starts, with its settings.
$node->wait_for_log(
	qr/LOG:  durable launcher started: durable\.worker_enabled = on, durable\.max_databases = 3, durable\.executor_workers = 2/,
	0);
is(log_count($node, qr/durable launcher started/, 0), 1, 'the launcher logs one line when it starts');

# 2. Four databases without the extension, then one with it: three slots are enough,
# since the databases without the extension give theirs back once checked.
$node->safe_psql('postgres', "CREATE DATABASE $_") foreach qw(d1 d2 d3 app);
$node->safe_psql('app', 'CREATE EXTENSION durable');
ok(has_workers($node, 'app', 2),
	'the database with the extension gets its workers though more databases than slots lack it');
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 0 FROM pg_stat_activity
	 WHERE backend_type IN ('durable timer worker', 'durable executor') AND datname <> 'app'}),
	'no worker stays in the databases without the extension');

$node->stop;

# A node whose durable.max_databases is no limit, for the next two parts.
$node = PostgreSQL::Test::Cluster->new('second');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = on
durable.worker_max_sleep = 60
max_worker_processes = 24
});
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', 'CREATE EXTENSION durable');
ok(has_workers($node, 'app', 2), 'app has its workers');

# 3. Refused DROP DATABASE and CREATE DATABASE ... TEMPLATE change nothing.
$node->safe_psql('postgres', q{
	CREATE ROLE mallory LOGIN CREATEDB;
	GRANT CONNECT ON DATABASE app TO mallory});
my $pids = worker_pids($node, 'app');
my ($ret, $stdout, $stderr) =
  $node->psql('postgres', 'DROP DATABASE app', extra_params => [ '-U', 'mallory' ]);
like($stderr, qr/must be owner of database app/, 'DROP DATABASE by a role that does not own it is refused');
is(worker_pids($node, 'app'), $pids, 'and leaves the workers running');
($ret, $stdout, $stderr) =
  $node->psql('postgres', 'BEGIN; DROP DATABASE app; COMMIT');
like($stderr, qr/DROP DATABASE cannot run inside a transaction block/,
	'DROP DATABASE in a transaction block is refused');
is(worker_pids($node, 'app'), $pids, 'and leaves the workers running');
($ret, $stdout, $stderr) =
  $node->psql('postgres', 'CREATE DATABASE stolen TEMPLATE app', extra_params => [ '-U', 'mallory' ]);
like($stderr, qr/permission denied to copy database "app"/,
	'CREATE DATABASE ... TEMPLATE of a database the role does not own is refused');
is(worker_pids($node, 'app'), $pids, 'and leaves the workers running');
($ret, $stdout, $stderr) =
  $node->psql('app', 'DROP DATABASE app');
like($stderr, qr/cannot drop the currently open database/, 'DROP DATABASE of the current database is refused');
is(worker_pids($node, 'app'), $pids, 'and leaves the workers running');

# A DROP DATABASE that passes the checks stops the workers; if it fails after that
# (another session is connected), they come back without waiting for its pause to end.
my $session = $node->background_psql('app');
$session->query_safe('SELECT 1');
($ret, $stdout, $stderr) = $node->psql('postgres', 'DROP DATABASE app');
like($stderr, qr/database "app" is being accessed by other users/,
	'DROP DATABASE fails while a session is connected');
$session->quit;
ok(has_workers($node, 'app', 2), 'the workers come back');
$pids = worker_pids($node, 'app');

# 4. The launcher is terminated; its successor adopts the workers that run.
my $launcher = $node->safe_psql('postgres',
	q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'durable launcher'});
my $log_offset = -s $node->logfile;
$node->safe_psql('postgres', "SELECT pg_terminate_backend($launcher)");
$node->wait_for_log(qr/durable launcher started/, $log_offset);
ok($node->poll_query_until('postgres', qq{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE backend_type = 'durable launcher' AND pid <> $launcher}),
	'a new launcher runs');
# A database made now: once its workers run, the new launcher has looked at app too
# (twice: the executors start at a later look than the timer worker).  Before the fix it
# started a second timer worker for app, and executors that failed again and again.
$node->safe_psql('postgres', 'CREATE DATABASE later');
$node->safe_psql('later', 'CREATE EXTENSION durable');
ok(has_workers($node, 'later', 2), 'the new launcher starts the workers of a new database');
is(workers($node, 'timer worker', 'app'), '1', 'app has still one timer worker');
is(workers($node, 'executor', 'app'), '2', 'and two executors');
is(worker_pids($node, 'app'), $pids, 'the ones that ran before');

# An adopted executor and timer worker that exit are replaced, once.
my $exec = $node->safe_psql('postgres', q{
	SELECT min(pid) FROM pg_stat_activity WHERE backend_type = 'durable executor' AND datname = 'app'});
$node->safe_psql('postgres', "SELECT pg_terminate_backend($exec)");
ok($node->poll_query_until('postgres', qq{
	SELECT count(*) = 2 AND bool_and(pid <> $exec) FROM pg_stat_activity
	 WHERE backend_type = 'durable executor' AND datname = 'app'}),
	'an adopted executor that is terminated is replaced');
my $timer = $node->safe_psql('postgres', q{
	SELECT pid FROM pg_stat_activity WHERE backend_type = 'durable timer worker' AND datname = 'app'});
$node->safe_psql('postgres', "SELECT pg_terminate_backend($timer)");
ok($node->poll_query_until('postgres', qq{
	SELECT count(*) = 1 AND bool_and(pid <> $timer) FROM pg_stat_activity
	 WHERE backend_type = 'durable timer worker' AND datname = 'app'}),
	'an adopted timer worker that is terminated is replaced');
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'delayed', delay => '1 second')});
ok($node->poll_query_until('app', q{SELECT count(*) = 2 FROM durable.get_history('delayed')}),
	'which fires timers');
is(workers($node, 'timer worker', 'app'), '1', 'one timer worker');
is(workers($node, 'executor', 'app'), '2', 'two executors');
$node->stop;

# 5. Too few background worker slots: max_worker_processes = 5 leaves 3 once the
# launcher and PostgreSQL's logical replication launcher run, for three databases that
# want a timer worker and an executor each (6).
my $small = PostgreSQL::Test::Cluster->new('small');
$small->init;
$small->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = on
durable.worker_max_sleep = 60
durable.executor_workers = 1
max_worker_processes = 5
});
$small->start;
my $started = time();
foreach my $db (qw(a1 a2 a3))
{
	$small->safe_psql('postgres', "CREATE DATABASE $db");
	$small->safe_psql($db, 'CREATE EXTENSION durable');
}
ok($small->poll_query_until('postgres', q{
	SELECT count(*) = 3 FROM pg_stat_activity
	 WHERE backend_type IN ('durable timer worker', 'durable executor')
	   AND datname IN ('a1', 'a2', 'a3')}),
	'the three free background worker slots are used');
# Each look of the launcher tries the missing workers again (a reload is a look).
$small->safe_psql('postgres', 'SELECT pg_reload_conf()') foreach 1 .. 5;
my $missing = 0;
foreach my $db (qw(a1 a2 a3))
{
	my $has = $small->safe_psql('postgres', qq{
		SELECT count(*) FROM pg_stat_activity
		 WHERE backend_type IN ('durable timer worker', 'durable executor')
		   AND datname = '$db'});
	next if $has == 2;
	$missing++;
	ok($small->wait_for_log(
			qr/LOG:  durable: could not start (a timer worker|executor 1) for database "$db": no background worker slot is free/,
			0),
		"the failure to start a worker of $db is logged");
}
cmp_ok($missing, '>=', 2, "the workers of more than one database are missing ($missing)");

# At most once a minute for each database, over the test's window.
my $window = time() - $started;
foreach my $db (qw(a1 a2 a3))
{
	my $n = log_count($small, qr/could not start .* for database "$db"/, 0);
	cmp_ok($n, '<=', 1 + int($window / 60),
		"failures for $db logged at most once a minute ($n lines in ${window}s)");
}

# Fewer executors free slots: the launcher starts the missing timer workers.
$small->safe_psql('postgres', 'ALTER SYSTEM SET durable.executor_workers = 0');
$small->reload;
ok($small->poll_query_until('postgres', q{
	SELECT count(*) = 3 FROM pg_stat_activity WHERE backend_type = 'durable timer worker'}),
	'once slots are free, every database gets its timer worker');
$small->stop;

done_testing();

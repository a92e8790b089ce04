# A waiting long poll does not hold back the vacuum horizon (docs/api.md "Worker
# functions"): while it sleeps, its backend_xmin in pg_stat_activity is NULL, and a task
# committed meanwhile is still delivered at once.  Where an older snapshot may
# still be read after the poll returns (REPEATABLE READ, a statement that reads
# a table besides the poll, an open cursor, a poll inside a DO block, a
# function call in its arguments), the poll keeps its xmin (src/store/wait.c,
# "Dropping the xmin while a wait sleeps").
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use IPC::Run;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('xmin');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = off
});
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', q{
	CREATE EXTENSION durable;
	CREATE TABLE some_table (x int);
	INSERT INTO some_table VALUES (1);
});

# Start a psql session that runs $sql (a script) as application_name $name.
# Its waits (300 s) are far longer than a test lets it run (60 s): a poll that
# only found its task when the wait ran out fails the test.
my %sessions;
my $scripts = PostgreSQL::Test::Utils::tempdir;
sub start_session
{
	my ($name, $sql) = @_;
	my $s = { in => '', out => '', err => '' };
	PostgreSQL::Test::Utils::append_to_file("$scripts/$name.sql", $sql);
	$s->{h} = IPC::Run::start(
		[ 'psql', '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-f', "$scripts/$name.sql", '-d',
		  $node->connstr('app') . " application_name=$name" ],
		'<', \$s->{in}, '>', \$s->{out}, '2>', \$s->{err},
		IPC::Run::timeout(60));
	$sessions{$name} = $s;
	ok($node->poll_query_until('app', qq{
		SELECT count(*) = 1 FROM pg_stat_activity
		 WHERE application_name = '$name' AND wait_event_type = 'Extension'}),
		"$name: the poll sleeps");
	return $s;
}

# backend_xmin of a session, 'NULL' when it has none.
sub xmin_of
{
	my ($name) = @_;
	return $node->safe_psql('app', qq{
		SELECT COALESCE(backend_xmin::text, 'NULL') FROM pg_stat_activity
		 WHERE application_name = '$name'});
}

# Wait for a session to end; its output.
sub finish_session
{
	my ($name) = @_;
	my $s = $sessions{$name};
	eval { $s->{h}->finish; };
	note("$name: stderr: $s->{err}") if $s->{err} ne '';
	return $s->{out};
}

# Cancel a session's poll (it keeps its xmin and would sleep 300 s).
sub cancel_session
{
	my ($name) = @_;
	$node->safe_psql('app', qq{
		SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = '$name'});
	my $s = $sessions{$name};
	eval { $s->{h}->finish; };
	like($s->{err}, qr/canceling statement due to user request/, "$name: canceled");
}

# Something else must hold a snapshot, or the horizon of the waiting poll would
# not show: a transaction that has an xid keeps running while the polls wait,
# so that the xmin a poll's snapshot takes is that old xid.
my $holder_in = "BEGIN;\nSELECT txid_current();\n";
my $holder_out = '';
my $holder = IPC::Run::start(
	[ 'psql', '-X', '-A', '-t', '-f', '-', '-d', $node->connstr('app') ],
	'<', \$holder_in, '>', \$holder_out, '2>', \my $holder_err);
$holder->pump until $holder_out =~ /\d+/;
my ($holder_xid) = $holder_out =~ /(\d+)/;

# 1. A poll in autocommit: no xmin while it sleeps; a task committed meanwhile wakes it.
start_session('p_auto', q{
	SELECT durable.poll_decision_task('q_auto', wait => '300 seconds')->>'workflowId';
});
is(xmin_of('p_auto'), 'NULL', 'autocommit poll: backend_xmin is NULL while it waits');
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'w_auto', 'q_auto')});
is(finish_session('p_auto'), "w_auto\n",
	'the task committed while it waited is delivered at once');

# 2. In an explicit READ COMMITTED transaction that read before: the same.
start_session('p_block', q{
	BEGIN;
	SELECT count(*) FROM some_table;
	SELECT durable.poll_decision_task('q_block', wait => '300 seconds')->>'workflowId';
	COMMIT;
});
is(xmin_of('p_block'), 'NULL', 'in a READ COMMITTED transaction block: NULL');
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'w_block', 'q_block')});
is(finish_session('p_block'), "1\nw_block\n", 'and delivered');

# 3. poll_activity_tasks in FROM (a FunctionScan of the poll): the same.
start_session('p_batch', q{
	SELECT t->>'activityId' FROM durable.poll_activity_tasks('q_batch', wait => '300 seconds') t;
});
is(xmin_of('p_batch'), 'NULL', 'poll_activity_tasks in FROM: NULL');
$node->safe_psql('app', q{
	SELECT durable.start_workflow('t', NULL, 'w_batch', 'q_batch');
	SELECT durable.complete_decision_task(durable.poll_decision_task('q_batch')->>'taskToken',
		'[{"decisionType": "ScheduleActivityTask", "activityId": "a1", "activityType": "x"}]');
});
is(finish_session('p_batch'), "a1\n", 'and delivered');

# The cases that keep their xmin: it is the holder's xid, or older.
# 4. REPEATABLE READ: the transaction snapshot stays in use.
start_session('p_rr', q{
	BEGIN ISOLATION LEVEL REPEATABLE READ;
	SELECT durable.poll_decision_task('q_rr', wait => '300 seconds');
});
is(xmin_of('p_rr'), $holder_xid, 'REPEATABLE READ: the poll keeps its xmin');
cancel_session('p_rr');

# 5. A statement that reads a table besides the poll: the scan goes on with its snapshot.
start_session('p_scan', q{
	SELECT durable.poll_decision_task('q_scan', wait => '300 seconds') FROM some_table;
});
is(xmin_of('p_scan'), $holder_xid, 'SELECT poll(...) FROM some_table: keeps its xmin');
cancel_session('p_scan');

# 6. An open cursor of the transaction holds an older snapshot.
start_session('p_cursor', q{
	BEGIN;
	DECLARE c CURSOR FOR SELECT * FROM some_table;
	FETCH 1 FROM c;
	SELECT durable.poll_decision_task('q_cursor', wait => '300 seconds');
});
is(xmin_of('p_cursor'), $holder_xid, 'with an open cursor: keeps its xmin');
cancel_session('p_cursor');

# 7. A poll inside a DO block (or a function, or a procedure): its caller goes on.
start_session('p_do', q{
	DO $$ BEGIN PERFORM durable.poll_decision_task('q_do', wait => '300 seconds'); END $$;
});
is(xmin_of('p_do'), $holder_xid, 'inside a DO block: keeps its xmin');
cancel_session('p_do');

# 7b. A function call in the poll's arguments runs in the statement: it may wait
# itself and then read with the statement's snapshot, so the xmin is kept.
$node->safe_psql('app', q{
	CREATE FUNCTION queue_named(q text) RETURNS text LANGUAGE plpgsql AS $$ BEGIN RETURN q; END $$;
});
start_session('p_argfn', q{
	SELECT durable.poll_decision_task(queue_named('q_argfn'), wait => '300 seconds');
});
is(xmin_of('p_argfn'), $holder_xid, 'a function call as an argument: keeps its xmin');
cancel_session('p_argfn');

# 8. A task committed before the poll's statement began is there at its first claim,
# and a second poll after the wait in the same transaction sees new tasks (the
# snapshots after a sleep are fresh).
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'w_first', 'q_two')});
start_session('p_two', q{
	BEGIN;
	SELECT durable.poll_decision_task('q_two', wait => '300 seconds')->>'workflowId';
	SELECT durable.poll_decision_task('q_two', wait => '300 seconds')->>'workflowId';
	COMMIT;
});
is(xmin_of('p_two'), 'NULL', 'the second poll of the transaction sleeps without an xmin');
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'w_second', 'q_two')});
is(finish_session('p_two'), "w_first\nw_second\n", 'both tasks delivered, in order');

# The horizon moves while polls wait: VACUUM removes rows deleted after the poll began.
$holder_in .= "COMMIT;\n\\q\n";
$holder->finish;
start_session('p_vacuum', q{
	SELECT durable.poll_decision_task('q_vacuum', wait => '300 seconds')->>'workflowId';
});
$node->safe_psql('app', q{
	CREATE TABLE churn (x int) WITH (autovacuum_enabled = off);
	INSERT INTO churn SELECT generate_series(1, 1000);
	DELETE FROM churn;
});
my $vac_err = '';
$node->psql('app', q{VACUUM (VERBOSE) churn}, stderr => \$vac_err);
like($vac_err, qr/removed 1000 dead item identifiers|tuples: 1000 removed/,
	'VACUUM removes the rows deleted while the poll waits');
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'w_vacuum', 'q_vacuum')});
is(finish_session('p_vacuum'), "w_vacuum\n", 'and the poll still gets its task');

$node->stop;
done_testing();

# The executor workers: durable.executor_workers of them run in each database
# that has the extension, their number follows the setting on reload, a
# commit that queues a SQL task wakes them (a SQL workflow completes long
# before their sleep would end), SIGTERM is survived, DROP EXTENSION stops
# them, DROP DATABASE works while they run, durable.worker_enabled = off
# stops them, and none runs on a standby.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('primary');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = on
durable.worker_max_sleep = 60
max_worker_processes = 24
# Slots for postgres, app and later: copy, made after later is dropped, gets
# later's slot.
durable.max_databases = 3
});
$node->start;

# A query: how many executors run for a database; $cond adds a condition.
sub executors
{
	my ($db, $cond) = @_;
	$cond = defined $cond ? "AND $cond" : '';
	return qq{SELECT count(*) FROM pg_stat_activity
	           WHERE backend_type = 'durable executor' AND datname = '$db' $cond};
}

# Wait until $n executors run for a database ($cond as above).
sub executors_become
{
	my ($db, $n, $cond) = @_;
	return $node->poll_query_until('postgres', executors($db, $cond), $n);
}

sub set_and_reload
{
	my ($setting) = @_;
	$node->safe_psql('postgres', "ALTER SYSTEM SET $setting");
	$node->reload;
}

$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', 'CREATE EXTENSION durable');
ok(executors_become('app', 2),
	'two executors (the default) run for the database that has the extension');
is($node->safe_psql('postgres', executors('postgres')), '0',
	'none for a database without the extension');
ok(executors_become('app', 2, q{wait_event = 'Extension'}),
	'with nothing to do they sleep (wait event Extension)');

# Their number follows durable.executor_workers on reload.
set_and_reload('durable.executor_workers = 3');
ok(executors_become('app', 3), 'raised to 3 on reload');
set_and_reload('durable.executor_workers = 1');
ok(executors_become('app', 1), 'lowered to 1 on reload');
set_and_reload('durable.executor_workers = 0');
ok(executors_become('app', 0), '0 stops them all');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM pg_stat_activity
	 WHERE backend_type = 'durable timer worker' AND datname = 'app'}), '1',
	'the timer worker runs on');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET durable.executor_workers');
$node->reload;
ok(executors_become('app', 2), 'reset: 2 again');

# A SQL workflow and its SQL activity run by themselves.  The executors sleep
# up to durable.worker_max_sleep (60 s here): the workflow closing well within
# that shows that the commits of its tasks woke them, each time.
$node->safe_psql('app', q{
CREATE ROLE app_role;
CREATE TABLE greetings (name text PRIMARY KEY);
GRANT INSERT ON greetings TO app_role;
CREATE FUNCTION hello(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    RETURN durable.activity('shout', input);
END $$;
CREATE FUNCTION shout(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO greetings VALUES (input->>'name');
    RETURN to_jsonb(upper(input->>'name'));
END $$;
SELECT durable.register_workflow('hello', 'hello(jsonb)', run_as => 'app_role');
SELECT durable.register_activity('shout', 'shout(jsonb)', run_as => 'app_role');
});
$node->safe_psql('app', q{SELECT durable.start_workflow('hello', '{"name": "ann"}', 'w1')});
ok($node->poll_query_until('app', q{
	SELECT durable.describe_workflow('w1')->>'status' = 'completed'}),
	'a SQL workflow with a SQL activity completes without any poller');
my $took = $node->safe_psql('app', q{
	SELECT extract(epoch FROM (d->>'closeTime')::timestamptz - (d->>'startTime')::timestamptz)
	  FROM durable.describe_workflow('w1') d});
cmp_ok($took, '<', 20, "woken by the commits of its tasks, not by the 60 s timeout ($took s)");
is($node->safe_psql('app', q{SELECT durable.describe_workflow('w1')->>'result'}), 'ANN',
	'with the activity\'s result');
is($node->safe_psql('app', 'SELECT count(*) FROM greetings'), '1', 'whose write is there once');
like($node->safe_psql('app', q{
	SELECT string_agg(DISTINCT attributes->>'identity', ',') FROM durable.get_history('w1')
	 WHERE event_type = 'DecisionTaskStarted'}),
	qr/^durable-executor:\d+(,durable-executor:\d+)*$/, 'run by the executors');

# A durable.sleep() in a SQL workflow: the timer worker fires the timer, and
# the commit of the decision task it schedules wakes the executors.
$node->safe_psql('app', q{
CREATE FUNCTION nap(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM durable.sleep('1 second');
    RETURN '"rested"';
END $$;
SELECT durable.register_workflow('nap', 'nap(jsonb)', run_as => 'app_role');
SELECT durable.start_workflow('nap', NULL, 'n1');
});
ok($node->poll_query_until('app', q{
	SELECT durable.describe_workflow('n1')->>'status' = 'completed'}),
	'a SQL workflow that sleeps completes');
$took = $node->safe_psql('app', q{
	SELECT extract(epoch FROM (d->>'closeTime')::timestamptz - (d->>'startTime')::timestamptz)
	  FROM durable.describe_workflow('n1') d});
cmp_ok($took, '>=', 1, "not before its timer ($took s)");
cmp_ok($took, '<', 20, 'woken by the timer worker\'s commit, not by the 60 s timeout');

# SIGTERM of an executor: the launcher starts another.
my $pid = $node->safe_psql('postgres', executors('app') =~ s/count\(\*\)/min(pid)/r);
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
ok(executors_become('app', 2, "pid <> $pid"),
	'a terminated executor is replaced');
$node->safe_psql('app', q{SELECT durable.start_workflow('hello', '{"name": "bob"}', 'w2')});
ok($node->poll_query_until('app', q{
	SELECT durable.describe_workflow('w2')->>'status' = 'completed'}),
	'and they run workflows again');

# A database created after the server; DROP EXTENSION stops its executors,
# CREATE EXTENSION brings them back, DROP DATABASE works while they run.
$node->safe_psql('postgres', 'CREATE DATABASE later');
$node->safe_psql('later', 'CREATE EXTENSION durable');
ok(executors_become('later', 2),
	'executors start for a database created after the server');
$node->safe_psql('later', 'DROP EXTENSION durable');
ok(executors_become('later', 0),
	'DROP EXTENSION stops them');
$node->safe_psql('later', 'CREATE EXTENSION durable');
ok(executors_become('later', 2),
	'CREATE EXTENSION again brings them back');
my ($ret, $stdout, $stderr) = $node->psql('postgres', 'DROP DATABASE later');
is($ret, 0, 'DROP DATABASE succeeds while the database has executors');
is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_database WHERE datname = 'later'}),
	'0', 'the database is gone');
is($node->safe_psql('postgres', executors('app')), '2', 'the other database keeps its executors');

# CREATE DATABASE ... TEMPLATE of a database with executors; the new database
# takes the slot that DROP DATABASE freed.
($ret, $stdout, $stderr) = $node->psql('postgres', 'CREATE DATABASE copy TEMPLATE app');
is($ret, 0, 'CREATE DATABASE ... TEMPLATE succeeds while the template has executors');
ok(executors_become('copy', 2),
	'and the copy gets executors of its own');
ok(executors_become('app', 2),
	'and the template gets its executors back');

# durable.worker_enabled = off stops them, on brings them back.
set_and_reload('durable.worker_enabled = off');
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'durable executor'}),
	'worker_enabled = off stops every executor');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET durable.worker_enabled');
$node->reload;
ok(executors_become('app', 2), 'back on, they are back');

# A standby runs no executor, and starts them when promoted.
$node->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($node, 'b', has_streaming => 1);
$standby->start;
$node->wait_for_catchup($standby);
ok($standby->poll_query_until('postgres', q{SELECT pg_is_in_recovery()}), 'the standby is in recovery');
is($standby->safe_psql('postgres', q{
	SELECT count(*) FROM pg_stat_activity WHERE backend_type LIKE 'durable%'}),
	'0', 'no durable worker, no executor runs on a standby');
# The executors keep the tables they write open for a transaction, its
# subtransactions (user code, failed decision tasks) included, and close them
# at commit (src/store/direct.c): nothing is ever reported leaked.
unlike(slurp_file($node->logfile), qr/reference leak|refcount leak/,
	'no relation, tuple descriptor or snapshot reported leaked');
$node->stop;
$standby->promote;
ok($standby->poll_query_until('postgres', q{
	SELECT count(*) = 2 FROM pg_stat_activity
	 WHERE backend_type = 'durable executor' AND datname = 'app'}),
	'the promoted standby runs the executors');
$standby->safe_psql('app', q{SELECT durable.start_workflow('hello', '{"name": "cy"}', 'w3')});
ok($standby->poll_query_until('app', q{
	SELECT durable.describe_workflow('w3')->>'status' = 'completed'}),
	'which run workflows');
$standby->stop;

done_testing();

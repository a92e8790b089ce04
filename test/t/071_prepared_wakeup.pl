# Long polls are woken by a task committed with two-phase commit: PREPARE
# TRANSACTION keeps the wakeups of the transaction (src/store/wait.c), and the
# COMMIT PREPARED that the same session runs next sends them, once the tasks are
# visible.  That is how Citus commits a transaction that wrote on several nodes
# (docs/citus.md).  A ROLLBACK PREPARED wakes the pollers for nothing: they find no
# task and sleep on.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use DurableTest::LongPoll;

my $node = PostgreSQL::Test::Cluster->new('prepared');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = off
max_prepared_transactions = 10
});
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', 'CREATE EXTENSION durable');

# Each poll waits 300 s, and the test gives it 30 s to return after the commit: a
# poll that was not woken sleeps far longer (it may find its task on a periodic
# look, which is not what is tested here).
my $lp = DurableTest::LongPoll->new($node, 'app');

$lp->start_poller('p1', 'pq', timeout => 120);
my $t0 = time;
$node->safe_psql('app', q{
	BEGIN;
	SELECT durable.start_workflow('t', NULL, 'prepared-1', 'pq');
	PREPARE TRANSACTION 'start-1';
	COMMIT PREPARED 'start-1';});
is($lp->finish('p1'), 'prepared-1', 'COMMIT PREPARED of a start wakes the waiting poll, which gets the task');
cmp_ok(time - $t0, '<', 30, 'at once, not after a wait');

# Rolled back: the poll is woken for nothing and sleeps on; the next commit wakes it.
$lp->start_poller('p2', 'pq', timeout => 120);
$node->safe_psql('app', q{
	BEGIN;
	SELECT durable.start_workflow('t', NULL, 'prepared-2', 'pq');
	PREPARE TRANSACTION 'start-2';
	ROLLBACK PREPARED 'start-2';});
$lp->wait_until_waiting(['p2'], ['p2'], 'after ROLLBACK PREPARED the poll still waits');
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'plain-3', 'pq')});
is($lp->finish('p2'), 'plain-3', 'and the next commit wakes it');
is($node->safe_psql('app', q{SELECT count(*) FROM durable.runs WHERE workflow_id = 'prepared-2'}), '0',
	'the rolled back start left nothing');

done_testing();

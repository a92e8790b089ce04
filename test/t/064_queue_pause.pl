# Long polls on a paused task queue (docs/task-queues.md "Pausing a queue"): a
# task committed while the queue is paused wakes no poll for good (the poll
# claims nothing and sleeps on), and resuming the queue wakes every poll
# waiting on it at its commit, each of which then gets a task.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use DurableTest::LongPoll;

my $node = PostgreSQL::Test::Cluster->new('pause');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = off
});
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', 'CREATE EXTENSION durable');

# Sessions polling a queue with a wait far longer than the test runs.
my $lp = DurableTest::LongPoll->new($node, 'app');

is($node->safe_psql('app', q{SELECT durable.pause_task_queue('pz', reason => 'test')}),
	't', 'pz paused');
$lp->start_poller($_, 'pz') for qw(p1 p2);

# Two tasks committed while paused: the polls wake, claim nothing, sleep on.
$node->safe_psql('app', q{
	BEGIN;
	SELECT durable.start_workflow('t', NULL, 'a', 'pz');
	SELECT durable.start_workflow('t', NULL, 'b', 'pz');
	COMMIT;
});
select(undef, undef, undef, 0.5);	# time for a wrong claim to happen
ok($node->poll_query_until('app', q{
	SELECT count(*) = 2 FROM pg_stat_activity
	 WHERE application_name IN ('p1', 'p2') AND wait_event_type = 'Extension'}),
	'both polls still wait while the queue is paused');
is($node->safe_psql('app', q{
	SELECT ready_tasks FROM durable.task_queues WHERE task_queue = 'pz' AND kind = 'decision'}),
	'2', 'the two tasks stay queued');

# Resume: one commit wakes both polls, and each gets a task.
is($node->safe_psql('app', q{SELECT durable.resume_task_queue('pz')}), 't', 'pz resumed');
ok($node->poll_query_until('app', q{
	SELECT count(*) = 0 FROM pg_stat_activity
	 WHERE application_name IN ('p1', 'p2') AND state = 'active'}),
	'resuming wakes both polls');
is(join(' ', sort { $a cmp $b } ($lp->finish('p1'), $lp->finish('p2'))), 'a b', 'each got one of the tasks');

# The claims' probe of the paused queues reads the table's size first: a table
# of no page has no row.  Once VACUUM has truncated the emptied table, a pause
# committed again holds a claim back, and a resume lets it through.
$node->safe_psql('app', 'VACUUM durable.paused_task_queues');
is($node->safe_psql('app', q{SELECT pg_relation_size('durable.paused_task_queues')}),
	'0', 'VACUUM truncated the table of paused queues');
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'c', 'pz')});
$node->safe_psql('app', q{SELECT durable.pause_task_queue('pz')});
is($node->safe_psql('app', q{SELECT durable.poll_decision_task('pz', 'w', wait => '0s') IS NULL}),
	't', 'a pause written to the truncated table holds the claim back');
$node->safe_psql('app', q{SELECT durable.resume_task_queue('pz')});
$node->safe_psql('app', 'VACUUM durable.paused_task_queues');
is($node->safe_psql('app', q{
	SELECT pg_relation_size('durable.paused_task_queues') = 0,
	       durable.poll_decision_task('pz', 'w', wait => '0s')->>'workflowId'}),
	't|c', 'truncated again, the claim gets the task');

$node->stop;
done_testing();

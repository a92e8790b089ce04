# Long polls woken at commit (src/store/wait.c): a committed task wakes one
# waiting poller of its queue, the one that has waited longest, and n tasks
# committed together wake n of them; the others sleep on.  A poller of another
# queue is not woken for it.  A poller cancelled or terminated while it waits
# leaves the queue's waiters, so the next task goes to a poller that is still
# there instead of being lost until a poll's wait runs out.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use DurableTest::LongPoll;

my $node = PostgreSQL::Test::Cluster->new('wakeup');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = off
});
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', 'CREATE EXTENSION durable');

# Sessions polling a queue (application_name the poller's name), with a wait
# (300 s) far longer than the test waits for them to return: a poll that
# returned only when its wait ran out fails the test.
my $lp = DurableTest::LongPoll->new($node, 'app');

# 1. One task wakes one poller: the one that has waited longest.
$lp->start_poller($_, 'wq') for qw(p1 p2 p3 p4);
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'a', 'wq')});
$lp->wait_until_waiting([qw(p1 p2 p3 p4)], [qw(p2 p3 p4)],
	'one task: the poller that waited longest returns, three sleep on');
is($lp->finish('p1'), 'a', 'p1 got the task');

# 2. Two tasks committed together wake two pollers.
$node->safe_psql('app', q{
	BEGIN;
	SELECT durable.start_workflow('t', NULL, 'b', 'wq');
	SELECT durable.start_workflow('t', NULL, 'c', 'wq');
	COMMIT;
});
$lp->wait_until_waiting([qw(p2 p3 p4)], [qw(p4)], 'two tasks in one commit: two pollers return');
is(join(' ', sort { $a cmp $b } ($lp->finish('p2'), $lp->finish('p3'))), 'b c', 'each got one of the two tasks');

# 3. A poller of another queue is not woken for this one, and gets its own.
$lp->start_poller('o1', 'other');
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'd', 'wq')});
$lp->wait_until_waiting([qw(p4 o1)], [qw(o1)], 'a task of wq wakes the poller of wq');
is($lp->finish('p4'), 'd', 'p4 got it');
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'e', 'other')});
$lp->wait_until_waiting([qw(o1)], [], 'a task of other wakes the poller of other');
is($lp->finish('o1'), 'e', 'o1 got it');

# 4. A poller terminated while it waits: the next task goes to the one behind it.
$lp->start_poller($_, 'wq') for qw(t1 t2);
$node->safe_psql('app', q{
	SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 't1'});
ok($node->poll_query_until('app',
	q{SELECT count(*) = 0 FROM pg_stat_activity WHERE application_name = 't1'}),
	't1 is gone');
$lp->finish('t1');
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'f', 'wq')});
$lp->wait_until_waiting([qw(t2)], [], 'the task wakes t2, waiting behind the terminated poller');
is($lp->finish('t2'), 'f', 't2 got it');

# 5. The same with a poll cancelled while it waits (an error inside the wait).
$lp->start_poller($_, 'wq') for qw(c1 c2);
$node->safe_psql('app', q{
	SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'c1'});
ok($node->poll_query_until('app',
	q{SELECT count(*) = 0 FROM pg_stat_activity WHERE application_name = 'c1' AND state = 'active'}),
	'c1 is cancelled');
$lp->finish('c1');
like($lp->session('c1')->{err}, qr/canceling statement due to user request/, 'c1: the cancel is its error');
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'g', 'wq')});
$lp->wait_until_waiting([qw(c2)], [], 'the task wakes c2, waiting behind the cancelled poll');
is($lp->finish('c2'), 'g', 'c2 got it');

# 6. A task committed while nobody waits is claimed by the next poll at once.
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'h', 'wq')});
is($node->safe_psql('app', q{SELECT durable.poll_decision_task('wq', 'n1', wait => '300 seconds')->>'workflowId'}),
	'h', 'a poll finds a task queued before it');

$node->stop;
done_testing();

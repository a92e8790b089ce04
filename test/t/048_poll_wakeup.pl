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
use IPC::Run;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('wakeup');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = off
});
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', 'CREATE EXTENSION durable');

# A session polling a queue (application_name $name).  Its wait (300 s) is far
# longer than the test waits for it to return: a poll that returned only when
# its wait ran out fails the test.
my %sessions;
sub start_poller
{
	my ($name, $queue) = @_;
	my $s = { in => '', out => '', err => '' };
	$s->{h} = IPC::Run::start(
		[ 'psql', '-X', '-q', '-A', '-t', '-c',
		  qq{SELECT durable.poll_decision_task('$queue', '$name', wait => '300 seconds')->>'workflowId'},
		  '-d', $node->connstr('app') . " application_name=$name" ],
		'<', \$s->{in}, '>', \$s->{out}, '2>', \$s->{err});
	$sessions{$name} = $s;
	ok($node->poll_query_until('app', qq{
		SELECT count(*) = 1 FROM pg_stat_activity
		 WHERE application_name = '$name' AND wait_event_type = 'Extension'}),
		"$name polls $queue and sleeps");
}

# The pollers among @names that are still waiting, in order.
sub waiting
{
	my @names = @_;
	my $list = join(', ', map { "'$_'" } @names);
	return $node->safe_psql('app', qq{
		SELECT coalesce(string_agg(application_name, ' ' ORDER BY application_name), '')
		  FROM pg_stat_activity
		 WHERE application_name IN ($list) AND state = 'active'});
}

# Wait until exactly the pollers @left of @names are still waiting.
sub wait_until_waiting
{
	my ($names, $left, $what) = @_;
	my $list = join(', ', map { "'$_'" } @$names);
	my $want = join(' ', sort @$left);
	ok($node->poll_query_until('app', qq{
		SELECT coalesce(string_agg(application_name, ' ' ORDER BY application_name), '')
		  FROM pg_stat_activity
		 WHERE application_name IN ($list) AND state = 'active'}, $want),
		$what) or diag('waiting: ' . waiting(@$names));
}

sub finish
{
	my ($name) = @_;
	my $s = $sessions{$name};
	eval { $s->{h}->finish; };
	note("$name: stderr: $s->{err}") if $s->{err} ne '';
	chomp(my $out = $s->{out});
	return $out;
}

# 1. One task wakes one poller: the one that has waited longest.
start_poller($_, 'wq') for qw(p1 p2 p3 p4);
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'a', 'wq')});
wait_until_waiting([qw(p1 p2 p3 p4)], [qw(p2 p3 p4)],
	'one task: the poller that waited longest returns, three sleep on');
is(finish('p1'), 'a', 'p1 got the task');

# 2. Two tasks committed together wake two pollers.
$node->safe_psql('app', q{
	BEGIN;
	SELECT durable.start_workflow('t', NULL, 'b', 'wq');
	SELECT durable.start_workflow('t', NULL, 'c', 'wq');
	COMMIT;
});
wait_until_waiting([qw(p2 p3 p4)], [qw(p4)], 'two tasks in one commit: two pollers return');
is(join(' ', sort(finish('p2'), finish('p3'))), 'b c', 'each got one of the two tasks');

# 3. A poller of another queue is not woken for this one, and gets its own.
start_poller('o1', 'other');
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'd', 'wq')});
wait_until_waiting([qw(p4 o1)], [qw(o1)], 'a task of wq wakes the poller of wq');
is(finish('p4'), 'd', 'p4 got it');
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'e', 'other')});
wait_until_waiting([qw(o1)], [], 'a task of other wakes the poller of other');
is(finish('o1'), 'e', 'o1 got it');

# 4. A poller terminated while it waits: the next task goes to the one behind it.
start_poller($_, 'wq') for qw(t1 t2);
$node->safe_psql('app', q{
	SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 't1'});
ok($node->poll_query_until('app',
	q{SELECT count(*) = 0 FROM pg_stat_activity WHERE application_name = 't1'}),
	't1 is gone');
finish('t1');
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'f', 'wq')});
wait_until_waiting([qw(t2)], [], 'the task wakes t2, waiting behind the terminated poller');
is(finish('t2'), 'f', 't2 got it');

# 5. The same with a poll cancelled while it waits (an error inside the wait).
start_poller($_, 'wq') for qw(c1 c2);
$node->safe_psql('app', q{
	SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'c1'});
ok($node->poll_query_until('app',
	q{SELECT count(*) = 0 FROM pg_stat_activity WHERE application_name = 'c1' AND state = 'active'}),
	'c1 is cancelled');
finish('c1');
like($sessions{c1}{err}, qr/canceling statement due to user request/, 'c1: the cancel is its error');
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'g', 'wq')});
wait_until_waiting([qw(c2)], [], 'the task wakes c2, waiting behind the cancelled poll');
is(finish('c2'), 'g', 'c2 got it');

# 6. A task committed while nobody waits is claimed by the next poll at once.
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'h', 'wq')});
is($node->safe_psql('app', q{SELECT durable.poll_decision_task('wq', 'n1', wait => '300 seconds')->>'workflowId'}),
	'h', 'a poll finds a task queued before it');

$node->stop;
done_testing();

# Long polls on a paused task queue (docs/task-queues.md "Pausing a queue"): a
# task committed while the queue is paused wakes no poll for good (the poll
# claims nothing and sleeps on), and resuming the queue wakes every poll
# waiting on it at its commit, each of which then gets a task.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use IPC::Run;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('pause');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = off
});
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', 'CREATE EXTENSION durable');

# A session polling a queue with a wait far longer than the test runs.
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

sub finish
{
	my ($name) = @_;
	my $s = $sessions{$name};
	eval { $s->{h}->finish; };
	note("$name: stderr: $s->{err}") if $s->{err} ne '';
	chomp(my $out = $s->{out});
	return $out;
}

is($node->safe_psql('app', q{SELECT durable.pause_task_queue('pz', reason => 'test')}),
	't', 'pz paused');
start_poller($_, 'pz') for qw(p1 p2);

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
is(join(' ', sort(finish('p1'), finish('p2'))), 'a b', 'each got one of the tasks');

$node->stop;
done_testing();

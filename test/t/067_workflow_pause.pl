# Resuming a paused workflow run wakes whoever waits for its tasks, at its
# commit (docs/task-queues.md "Pausing a workflow"): long polls on its queue,
# which a task held while paused never hands anything, and the executor
# workers, which run a held SQL workflow's task long before their sleep would
# end.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use DurableTest::LongPoll;
use Time::HiRes qw(time);

my $node = PostgreSQL::Test::Cluster->new('wfpause');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = on
durable.worker_max_sleep = 300
max_worker_processes = 16
});
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', 'CREATE EXTENSION durable');

# Sessions polling a queue with a wait far longer than the test runs.
my $lp = DurableTest::LongPoll->new($node, 'app');

# Polls: two paused runs, two polls waiting on their queue.
$node->safe_psql('app', q{
	SELECT durable.start_workflow('t', NULL, 'a', 'wq');
	SELECT durable.start_workflow('t', NULL, 'b', 'wq');
	SELECT durable.pause_workflow('a', reason => 'test');
	SELECT durable.pause_workflow('b', reason => 'test');
});
$lp->start_poller($_, 'wq') for qw(p1 p2);

# A signal to a paused run commits a held task: the polls go on waiting.
$node->safe_psql('app', q{SELECT durable.signal_workflow('a', 'go')});
select(undef, undef, undef, 0.5);	# time for a wrong claim to happen
ok($node->poll_query_until('app', q{
	SELECT count(*) = 2 FROM pg_stat_activity
	 WHERE application_name IN ('p1', 'p2') AND wait_event_type = 'Extension'}),
	'both polls still wait while the runs are paused');
is($node->safe_psql('app', q{
	SELECT held_tasks || ' ' || ready_tasks FROM durable.task_queues
	 WHERE task_queue = 'wq' AND kind = 'decision'}),
	'2 0', 'the two decision tasks are held');

# Each resume wakes a poll at its commit, which gets the run's task.
is($node->safe_psql('app', q{SELECT durable.resume_workflow('a')}), 't', 'a resumed');
ok($node->poll_query_until('app', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE application_name IN ('p1', 'p2') AND wait_event_type = 'Extension'}),
	'resuming a wakes one poll');
is($node->safe_psql('app', q{SELECT durable.resume_workflow('b')}), 't', 'b resumed');
ok($node->poll_query_until('app', q{
	SELECT count(*) = 0 FROM pg_stat_activity
	 WHERE application_name IN ('p1', 'p2') AND state = 'active'}),
	'resuming b wakes the other');
is(join(' ', sort { $a cmp $b } ($lp->finish('p1'), $lp->finish('p2'))), 'a b', 'each got one of the runs');

# Executors: a SQL workflow waiting for a signal; paused, the signal's task is held
# and not run; the resume wakes the executors, which complete it at once.
$node->safe_psql('app', q{
	CREATE ROLE wp_app;
	CREATE FUNCTION public.waits(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
	BEGIN
	    RETURN durable.wait_signal('go');
	END $$;
	SELECT durable.register_workflow('waits', 'public.waits(jsonb)', 'sq', run_as => 'wp_app');
	SELECT durable.start_workflow('waits', NULL, 'x', 'sq');
});
ok($node->poll_query_until('app', q{
	SELECT count(*) > 0 FROM durable.get_history('x') WHERE event_type = 'DecisionTaskCompleted'}),
	'an executor ran the first decision task');
$node->safe_psql('app', q{
	SELECT durable.pause_workflow('x');
	SELECT durable.signal_workflow('x', 'go', '"done"');
});
select(undef, undef, undef, 1);	# time for a wrong run to happen
is($node->safe_psql('app', q{
	SELECT r.status || ' ' || string_agg(t.kind::text, ',')
	  FROM durable.runs r JOIN durable.ready_tasks t USING (run_id)
	 WHERE r.workflow_id = 'x' GROUP BY r.status}),
	'running W', 'paused: the signal is recorded, its decision task held, not run');
my $t0 = time();
$node->safe_psql('app', q{SELECT durable.resume_workflow('x')});
ok($node->poll_query_until('app', q{
	SELECT status = 'completed' FROM durable.runs WHERE workflow_id = 'x'}),
	'after the resume the workflow completes');
cmp_ok(time() - $t0, '<', 60, 'the resume woke the executors (their sleep is 300 s)');

$node->stop;
done_testing();

# Limits of a task queue under concurrent pollers (docs/task-queues.md "Limits"):
# eight sessions poll a queue whose activities are limited to three started at
# once, hold each task a little and complete it.  At every start the claiming
# transaction counts, after its claim, the queue's started activities it can see
# (its own and those committed): never more than three; the limit is reached;
# every activity completes, each in one attempt, none lost and none started
# twice.  Then a long poll on a full queue is woken by the completion that frees
# a slot, long before its wait ends.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use IPC::Run;
use Test::More;
use DurableTest::LongPoll;
use Time::HiRes qw(time);

my $node = PostgreSQL::Test::Cluster->new('limits');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = off
max_connections = 40
});
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', q{
CREATE EXTENSION durable;
CREATE TABLE seen (poller text, started bigint);
SELECT durable.set_task_queue_limits('cq', 'activity', max_concurrent => 3);
});

my $n = 160;
$node->safe_psql('app', qq{
SELECT count(durable.start_workflow('job', NULL, 'w' || i, 'cd')) FROM generate_series(1, $n) i;
DO \$\$
DECLARE t jsonb;
BEGIN
    LOOP
        t := durable.poll_decision_task('cd');
        EXIT WHEN t IS NULL;
        PERFORM durable.complete_decision_task(t->>'taskToken',
            '[{"decisionType": "ScheduleActivityTask", "activityId": "a", "activityType": "call",
               "taskQueue": "cq", "startToCloseTimeoutSeconds": 600}]');
    END LOOP;
END \$\$;
});
is($node->safe_psql('app', q{SELECT count(*) FROM durable.ready_tasks WHERE task_queue = 'cq'}),
	$n, "$n activity tasks queued");

# One poller's script: poll, count the queue's started activities in the same
# transaction, hold the task a few milliseconds, complete it.
my @h;
for my $p (1 .. 8)
{
	my $script = '';
	for (1 .. 40)
	{
		$script .= qq{BEGIN;
SELECT COALESCE(durable.poll_activity_task('cq', 'p$p', wait => '0.2 s')->>'taskToken', '') AS t \\gset
INSERT INTO seen SELECT 'p$p', count(*) FROM durable.activities
 WHERE task_queue = 'cq' AND started_time IS NOT NULL AND :'t' <> '';
COMMIT;
SELECT pg_sleep(0.003);
SELECT durable.complete_activity(:'t', '"ok"') WHERE :'t' <> '';
};
	}
	# From a file: the eight run at once (IPC::Run feeds stdin only when pumped).
	my $file = "${PostgreSQL::Test::Utils::tmp_check}/poller_$p.sql";
	unlink $file;				# appended to below: start from nothing
	PostgreSQL::Test::Utils::append_to_file($file, $script);
	my ($out, $err) = ('', '');
	push @h, IPC::Run::start(
		[ 'psql', '-X', '-q', '-f', $file, '-d', $node->connstr('app') ],
		'<', \'', '>', \$out, '2>', \$err);
}
$_->finish for @h;

my ($max, $starts) = split /\|/, $node->safe_psql('app',
	q{SELECT max(started), count(*) FILTER (WHERE started > 0) FROM seen});
cmp_ok($max, '<=', 3, "never more than 3 started at once (at most $max seen)");
is($max, 3, 'the limit was reached: eight pollers kept three started');
is($starts, $n, "$n starts in all");
is($node->safe_psql('app', q{
	SELECT count(*) FILTER (WHERE d->>'status' = 'running')
	  FROM generate_series(1, 160) i, durable.describe_workflow('w' || i) d}),
	$n, 'each workflow has its activity result waiting for its decision task');
is($node->safe_psql('app', q{
	SELECT count(*), count(DISTINCT run_id), max(attempt) FROM durable.activity_attempt_log
	 WHERE outcome = 'completed'}),
	"$n|$n|1", 'each activity completed once, in its first attempt');
is($node->safe_psql('app', q{SELECT count(*) FROM durable.activities WHERE task_queue = 'cq'}),
	'0', 'none is left');
is($node->safe_psql('app', q{SELECT count(*) FROM durable.task_starts}), '0',
	'no slot is left taken');

# A long poll on a full queue wakes when a completion frees a slot.
$node->safe_psql('app', q{
SELECT durable.set_task_queue_limits('cq', 'activity', max_concurrent => 1);
SELECT count(durable.start_workflow('job', NULL, 'x' || i, 'xd')) FROM generate_series(1, 2) i;
DO $$
DECLARE t jsonb;
BEGIN
    LOOP
        t := durable.poll_decision_task('xd');
        EXIT WHEN t IS NULL;
        PERFORM durable.complete_decision_task(t->>'taskToken',
            '[{"decisionType": "ScheduleActivityTask", "activityId": "a", "activityType": "call",
               "taskQueue": "cq", "startToCloseTimeoutSeconds": 600}]');
    END LOOP;
END $$;
});
my $first = $node->safe_psql('app', q{SELECT durable.poll_activity_task('cq')->>'taskToken'});
ok($first ne '', 'one task starts; the queue is full');
my $lp = DurableTest::LongPoll->new($node, 'app');
my $begin = time;
$lp->start_poller('waiter', 'cq', kind => 'activity',
	what => 'a long poll waits on the full queue');
$node->safe_psql('app', qq{SELECT durable.complete_activity('$first', '"ok"')});
like($lp->finish('waiter'), qr/^x[12]$/,
	'the completion that frees the slot wakes it with the other task');
cmp_ok(time - $begin, '<', 60, 'long before its wait of 300 s ends');

done_testing();

# Limits of concurrency keys under concurrent pollers (docs/task-queues.md
# "Priorities and fairness"): eight sessions poll a queue whose activities carry
# one of three keys, each key limited to two started at once (the defaults of
# every key), hold each task a little and complete it.  At every start the
# claiming transaction counts, after its claim, the started activities of each
# key it can see (its own and those committed): never more than two of a key;
# the limit is reached; every activity completes, each in one attempt, none
# lost and none started twice, and no slot is left taken.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use IPC::Run;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('key_limits');
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
CREATE TABLE seen (poller text, concurrency_key text, started bigint);
SELECT durable.set_task_key_limits('kq', 'activity', max_concurrent => 2);
});

# Each workflow schedules one activity on kq under key k1, k2 or k3.
my $n = 150;
$node->safe_psql('app', qq{
SELECT count(durable.start_workflow('job', NULL, 'w' || i, 'kd', concurrency_key => 'k' || (i % 3 + 1)))
  FROM generate_series(1, $n) i;
DO \$\$
DECLARE t jsonb;
BEGIN
    LOOP
        t := durable.poll_decision_task('kd');
        EXIT WHEN t IS NULL;
        PERFORM durable.complete_decision_task(t->>'taskToken',
            '[{"decisionType": "ScheduleActivityTask", "activityId": "a", "activityType": "call",
               "taskQueue": "kq", "startToCloseTimeoutSeconds": 600}]');
    END LOOP;
END \$\$;
});
is($node->safe_psql('app', q{
	SELECT string_agg(concurrency_key || '=' || ready_tasks, ' ' ORDER BY concurrency_key)
	  FROM durable.task_queue_keys WHERE task_queue = 'kq'}),
	'k1=50 k2=50 k3=50', 'the activities inherit their workflow\'s key');

# One poller's script: poll, count each key's started activities in the same
# transaction, hold the task a few milliseconds, complete it.
my @h;
for my $p (1 .. 8)
{
	my $script = '';
	for (1 .. 40)
	{
		$script .= qq{BEGIN;
SELECT COALESCE(durable.poll_activity_task('kq', 'p$p', wait => '0.2 s')->>'taskToken', '') AS t \\gset
INSERT INTO seen SELECT 'p$p', concurrency_key, count(*) FROM durable.activities
 WHERE task_queue = 'kq' AND started_time IS NOT NULL AND :'t' <> ''
 GROUP BY concurrency_key;
COMMIT;
SELECT pg_sleep(0.003);
SELECT durable.complete_activity(:'t', '"ok"') WHERE :'t' <> '';
};
	}
	# From a file: the eight run at once (IPC::Run feeds stdin only when pumped).
	# A name of this test's own: the TAP tests share tmp_check.
	my $file = "${PostgreSQL::Test::Utils::tmp_check}/key_poller_$p.sql";
	unlink $file;
	PostgreSQL::Test::Utils::append_to_file($file, $script);
	my ($out, $err) = ('', '');
	push @h, IPC::Run::start(
		[ 'psql', '-X', '-q', '-f', $file, '-d', $node->connstr('app') ],
		'<', \'', '>', \$out, '2>', \$err);
}
$_->finish for @h;

my ($max, $keys) = split /\|/, $node->safe_psql('app',
	q{SELECT max(started), count(DISTINCT concurrency_key) FROM seen});
cmp_ok($max, '<=', 2, "never more than 2 of a key started at once (at most $max seen)");
is($max, 2, 'the limit was reached');
is($keys, 3, 'each key had its tasks started');
is($node->safe_psql('app', q{
	SELECT count(*), count(DISTINCT run_id), max(attempt) FROM durable.activity_attempt_log
	 WHERE outcome = 'completed'}),
	"$n|$n|1", 'each activity completed once, in its first attempt');
is($node->safe_psql('app', q{SELECT count(*) FROM durable.activities WHERE task_queue = 'kq'}),
	'0', 'none is left');
is($node->safe_psql('app', q{SELECT count(*) FROM durable.task_starts}), '0',
	'no slot is left taken');

done_testing();

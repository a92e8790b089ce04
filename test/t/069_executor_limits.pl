# The limits of a task queue and of its concurrency keys bind the executor
# workers (docs/task-queues.md "Limits"): four executors run SQL activities of
# queue lim, limited to three started at once, and of key k1 to one.  Each
# activity records when its function ran, inside the transaction that claimed
# and completes it, so that the recorded spans of two activities overlap only
# if both were started at once: never more than three of lim, never more than
# one of k1, and the limit of three is reached.  Every activity runs once and
# every workflow completes.  A rate limit of four starts a second (burst 1)
# spaces the starts of queue slow by a quarter of a second; the executors,
# asleep while the rate holds their tasks back, wake when it admits one (they
# do not wait for durable.worker_max_sleep, 5 s here).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

$PostgreSQL::Test::Utils::timeout_default = 120;

my $node = PostgreSQL::Test::Cluster->new('executor_limits');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = on
durable.worker_max_sleep = 5
durable.executor_workers = 4
max_worker_processes = 16
});
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION durable;
CREATE ROLE app_role;
CREATE TABLE ran (wid text, q text, k text, started timestamptz, ended timestamptz);
GRANT INSERT ON ran TO app_role;
CREATE FUNCTION nap(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
    PERFORM pg_sleep((input->>'secs')::float8);
    INSERT INTO ran VALUES (input->>'wid', input->>'q', input->>'k', t0, clock_timestamp());
    RETURN input;
END $$;
CREATE FUNCTION one(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    RETURN durable.activity('nap', input || jsonb_build_object('wid', durable.workflow_info()->>'workflowId'),
        jsonb_build_object('taskQueue', input->>'q', 'concurrencyKey', input->>'k'));
END $$;
SELECT durable.register_workflow('one', 'one(jsonb)', run_as => 'app_role');
SELECT durable.register_activity('nap', 'nap(jsonb)', q, run_as => 'app_role')
  FROM unnest(ARRAY['lim', 'slow']) q;
SELECT durable.set_task_queue_limits('lim', 'activity', max_concurrent => 3);
SELECT durable.set_task_key_limits('lim', 'activity', 'k1', max_concurrent => 1);
SELECT durable.set_task_queue_limits('slow', 'activity', rate => 4, burst => 1);
});

ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 4 FROM pg_stat_activity WHERE backend_type = 'durable executor'}),
	'four executors run');

# 40 activities of 0.1 s on lim, under keys k1 to k4.
my $n = 40;
$node->safe_psql('postgres', qq{
SELECT count(durable.start_workflow('one',
         jsonb_build_object('q', 'lim', 'k', 'k' || (i % 4 + 1), 'secs', 0.1), 'l' || i))
  FROM generate_series(1, $n) i});
ok($node->poll_query_until('postgres', qq{
	SELECT count(*) = $n FROM durable.runs WHERE workflow_id LIKE 'l%' AND status = 'completed'}),
	"the $n workflows complete");

# The most activities whose spans contain the start of one of them.
sub most_at_once
{
	my ($where) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT max((SELECT count(*) FROM ran s
		             WHERE s.q = r.q AND $where
		               AND s.started <= r.started AND s.ended > r.started))
		  FROM ran r WHERE r.q = 'lim' AND } . ($where =~ s/s\./r./gr));
}
is($node->safe_psql('postgres', q{SELECT count(*), count(DISTINCT wid) FROM ran WHERE q = 'lim'}),
	"$n|$n", 'each activity ran once');
my $all = most_at_once('true');
cmp_ok($all, '<=', 3, "at most three activities of lim ran at once ($all)");
is($all, '3', 'the limit was reached: the executors ran three at once');
my $k1 = most_at_once(q{s.k = 'k1'});
is($k1, '1', 'the activities of key k1 ran one at a time');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM durable.task_starts WHERE task_queue = 'lim'}),
	'0', 'no start is left counted');

# 8 activities of queue slow at 4 starts a second, burst 1.
$node->safe_psql('postgres', q{
SELECT count(durable.start_workflow('one', jsonb_build_object('q', 'slow', 'secs', 0), 's' || i))
  FROM generate_series(1, 8) i});
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 8 FROM durable.runs WHERE workflow_id LIKE 's%' AND status = 'completed'}),
	'the 8 rate-limited workflows complete');
my ($gap, $span) = split /\|/, $node->safe_psql('postgres', q{
	SELECT min(gap), extract(epoch FROM max(started) - min(started))
	  FROM (SELECT started,
	               extract(epoch FROM started - lag(started) OVER (ORDER BY started)) AS gap
	          FROM ran WHERE q = 'slow') g});
# The start is recorded by the function, a few milliseconds after the claim.
cmp_ok($gap, '>=', 0.2, "the starts of slow are a quarter of a second apart ($gap s at least)");
cmp_ok($span, '<', 4.5,
	"the executors woke when the rate admitted the next ($span s for 8, not 5 s a start)");

done_testing();

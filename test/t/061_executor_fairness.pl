# The executors are shared fairly between namespaces: with tenant A keeping both
# executors busy with slow SQL activities and a backlog of more, tenant B's one-step
# SQL workflows complete within seconds, well before A's backlog drains (a claim of
# the oldest task of any namespace would run them after all of A's).  A namespace
# limited to one executor (max_executors) never runs two tasks at once, and the
# other executor serves another namespace meanwhile; an executor terminated while it
# runs that namespace's task does not leave it counted.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $node = PostgreSQL::Test::Cluster->new('primary');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = on
durable.executor_workers = 2
max_worker_processes = 16
});
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION durable;
CREATE ROLE app_role;
-- What each slow activity did, with the wall clock times it ran between.
CREATE TABLE ran (ns text, wid text, started timestamptz, ended timestamptz);
GRANT INSERT ON ran TO app_role;
CREATE FUNCTION slow(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
    PERFORM pg_sleep((input->>'secs')::float8);
    INSERT INTO ran VALUES (input->>'ns', input->>'wid', t0, clock_timestamp());
    RETURN input;
END $$;
CREATE FUNCTION slow_wf(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    RETURN durable.activity('slow', input || jsonb_build_object(
                                'wid', durable.workflow_info()->>'workflowId',
                                'ns', durable.workflow_info()->>'namespace'),
                            '{"startToCloseTimeoutSeconds": 60}');
END $$;
CREATE FUNCTION quick(input jsonb) RETURNS jsonb LANGUAGE sql AS 'SELECT input';
CREATE FUNCTION quick_wf(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    RETURN durable.activity('quick', input);
END $$;
SELECT durable.create_namespace(ns) FROM unnest(ARRAY['tenant_a', 'tenant_b', 'limited']) ns;
SELECT durable.register_workflow('slow_wf', 'slow_wf(jsonb)', namespace => ns, run_as => 'app_role'),
       durable.register_activity('slow', 'slow(jsonb)', namespace => ns, run_as => 'app_role')
  FROM unnest(ARRAY['tenant_a', 'limited']) ns;
SELECT durable.register_workflow('quick_wf', 'quick_wf(jsonb)', namespace => 'tenant_b', run_as => 'app_role');
SELECT durable.register_activity('quick', 'quick(jsonb)', namespace => 'tenant_b', run_as => 'app_role');
});

ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 2 FROM pg_stat_activity WHERE backend_type = 'durable executor'}),
	'two executors run');

# How many executors run a slow activity now.
my $busy = q{SELECT count(*) FROM pg_stat_activity
              WHERE backend_type = 'durable executor' AND query LIKE 'durable: activity slow%'};

# Start B's workflows and wait until they are closed: seconds it took, and how many of
# $ns's slow activities had completed by then.
sub run_b
{
	my ($prefix, $ns) = @_;
	my $t0 = time;
	$node->safe_psql('postgres', qq{
		SELECT durable.start_workflow('quick_wf', '{"x": 1}', '$prefix-' || i, namespace => 'tenant_b')
		  FROM generate_series(1, 3) i});
	$node->poll_query_until('postgres', qq{
		SELECT count(*) = 3 FROM durable.workflows
		 WHERE namespace = 'tenant_b' AND workflow_id LIKE '$prefix-%' AND status = 'completed'})
	  or diag("B's workflows $prefix did not complete");
	my $took = time - $t0;
	my $done = $node->safe_psql('postgres', "SELECT count(*) FROM ran WHERE ns = '$ns'");
	return ($took, $done);
}

# Tenant A: 16 workflows of a 1.5 s activity, 12 s of work for two executors.
$node->safe_psql('postgres', q{
	SELECT durable.start_workflow('slow_wf', '{"secs": 1.5}', 'a-' || i, namespace => 'tenant_a')
	  FROM generate_series(1, 16) i});
ok($node->poll_query_until('postgres', $busy, '2'), 'A keeps both executors busy');
my ($took, $done) = run_b('b', 'tenant_a');
cmp_ok($took, '<', 5, "B's three workflows complete within seconds ($took s)");
cmp_ok($done, '<', 8, "before half of A's backlog is done ($done of 16)");
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 16 FROM durable.workflows WHERE namespace = 'tenant_a' AND status = 'completed'}),
	"A's workflows all complete too");

# A namespace limited to one executor: at most one of its tasks at a time, and the
# other executor is free for B.
$node->safe_psql('postgres', q{SELECT durable.alter_namespace('limited', max_executors => 1)});
$node->safe_psql('postgres', q{
	SELECT durable.start_workflow('slow_wf', '{"secs": 1}', 'l-' || i, namespace => 'limited')
	  FROM generate_series(1, 4) i});
ok($node->poll_query_until('postgres', $busy, '1'), 'the limited namespace runs a task');
($took, $done) = run_b('b2', 'limited');
cmp_ok($took, '<', 2.5, "the other executor serves B meanwhile ($took s)");
cmp_ok($done, '<', 3, "while the limited namespace's backlog runs ($done of 4 done)");
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 4 FROM durable.workflows WHERE namespace = 'limited' AND status = 'completed'}),
	"the limited namespace's workflows complete");
is($node->safe_psql('postgres', q{
	SELECT max(n) FROM (SELECT count(*) AS n FROM ran r1 JOIN ran r2
	                      ON r2.ns = r1.ns AND r2.started < r1.ended AND r2.ended > r1.started
	                     WHERE r1.ns = 'limited' GROUP BY r1.wid) x}), '1',
	'no two of its activities overlapped');
my $span = $node->safe_psql('postgres', q{
	SELECT extract(epoch FROM max(ended) - min(started)) FROM ran WHERE ns = 'limited'});
cmp_ok($span, '>=', 4, "one after the other: 4 activities of 1 s took $span s");

# An executor terminated while it runs the limited namespace's task: the task runs
# again, and the namespace is not left counted as running (it would never run again).
$node->safe_psql('postgres', q{
	SELECT durable.start_workflow('slow_wf', '{"secs": 2}', 'k-' || i, namespace => 'limited')
	  FROM generate_series(1, 2) i});
ok($node->poll_query_until('postgres', $busy, '1'), 'the limited namespace runs a task again');
$node->safe_psql('postgres', qq{
	SELECT pg_terminate_backend(pid) FROM pg_stat_activity
	 WHERE backend_type = 'durable executor' AND query LIKE 'durable: activity slow%'});
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 2 FROM durable.workflows
	 WHERE namespace = 'limited' AND workflow_id LIKE 'k-%' AND status = 'completed'}),
	'after the executor was terminated, the namespace runs its tasks to the end');

$node->stop;
done_testing();

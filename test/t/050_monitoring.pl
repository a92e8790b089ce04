# Pollers and counters in shared memory, across backends (docs/task-queues.md,
# docs/metrics.md): a long poll waiting in one session shows in another's
# durable.task_queues while it waits; counts made by the executor workers
# (other backends) show in a client session and outlive those backends; a
# small durable.max_pollers forgets the stalest pollers; counters of queues
# beyond durable.max_metric_queues go to the database's row; a restart starts
# them from zero.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('monitoring');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = on
durable.worker_max_sleep = 1
durable.executor_workers = 2
durable.max_pollers = 4
durable.max_metric_queues = 2
max_worker_processes = 16
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION durable');

# A long poll in a background session: seen by another session while it waits.
my $bg = $node->background_psql('postgres');
$bg->query_until(qr/polling/, q{
	\echo polling
	SELECT durable.poll_decision_task('lq', identity => 'long-poller', wait => '60 s');
});
ok($node->poll_query_until('postgres', q{
	SELECT pollers @> '[{"identity": "long-poller"}]' FROM durable.task_queues WHERE task_queue = 'lq'}),
	'a waiting long poll shows in another session');
$node->safe_psql('postgres', q{SELECT durable.start_workflow('wf', NULL, 'lq-1', 'lq')});
is($node->safe_psql('postgres', q{SELECT durable.describe_workflow('lq-1')->'taskQueueWithoutPollers'}),
	'false', 'describe_workflow from a third session: the queue has a poller');
$bg->quit;

# durable.max_pollers = 4: the fifth poller of the server evicts the stalest
# among the entries its hash maps to (all four of them here).
for my $i (1 .. 6)
{
	$node->safe_psql('postgres', "SELECT durable.poll_activity_task('pq', identity => 'p$i')");
}
is($node->safe_psql('postgres', q{SELECT count(*) <= 4 FROM durable.task_queue_pollers()}),
	't', 'no more pollers than durable.max_pollers');
is($node->safe_psql('postgres', q{SELECT bool_or(identity = 'p6') FROM durable.task_queue_pollers()}),
	't', 'the newest poller is kept');

# A SQL workflow run by the executor workers: counted in their backends,
# read here.
$node->safe_psql('postgres', q{
	CREATE ROLE app;
	GRANT USAGE ON SCHEMA public TO app;
	CREATE FUNCTION public.echo(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT input $$;
	CREATE FUNCTION public.flow(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
	BEGIN RETURN durable.activity('echo', input); END $$;
	SELECT durable.register_activity('echo', 'public.echo(jsonb)', 'sq', run_as => 'app');
	SELECT durable.register_workflow('flow', 'public.flow(jsonb)', 'sq', run_as => 'app');
	SELECT durable.start_workflow('flow', '{"x": 1}', 'sql-1', 'sq');
});
ok($node->poll_query_until('postgres', q{
	SELECT status = 'completed' FROM durable.workflows WHERE workflow_id = 'sql-1'}),
	'the executors ran the SQL workflow');
is($node->safe_psql('postgres', q{
	SELECT string_agg(format('%s:%s=%s', metric, label, value), ' ' ORDER BY metric, label)
	  FROM durable.metrics
	 WHERE task_queue = 'sq' AND value > 0
	   AND metric IN ('durable_workflows_closed_total', 'durable_activity_tasks_total')}),
	'durable_activity_tasks_total:completed=1 durable_activity_tasks_total:started=1 durable_workflows_closed_total:completed=1',
	'what the executors counted shows in this session');
is($node->safe_psql('postgres', q{
	SELECT value FROM durable.metrics
	 WHERE task_queue = 'sq' AND metric = 'durable_decision_tasks_total' AND label = 'completed'}),
	'2', 'two decision tasks of the SQL workflow completed');

# examples/postgres_exporter.yml: each query runs as the role docs/metrics.md
# "Metrics" says the exporter connects as (pg_monitor, no durable role), and
# returns the columns its metrics list names.
$node->safe_psql('postgres', 'CREATE ROLE durable_exporter LOGIN; GRANT pg_monitor TO durable_exporter');
open(my $yml, "<", "../examples/postgres_exporter.yml") or die "examples/postgres_exporter.yml: $!";
my ($key, $sql, @cols, %queries);
my $in_query = 0;
while (my $line = <$yml>)
{
	if ($line =~ /^([a-z_]+):\s*$/) { $key = $1; $queries{$key} = { sql => '', cols => [] }; $in_query = 0; next; }
	next unless defined $key;
	if ($line =~ /^  query: \|/) { $in_query = 1; next; }
	if ($line =~ /^  metrics:/) { $in_query = 0; next; }
	if ($in_query) { $queries{$key}{sql} .= $line; next; }
	push @{ $queries{$key}{cols} }, $1 if $line =~ /^    - ([a-z_]+):/;
}
close $yml;
ok(keys %queries >= 10, 'the exporter file has its queries');
for my $k (sort keys %queries)
{
	my $q = $queries{$k};
	my ($ret, $out, $err) = $node->psql('postgres',
		"SET ROLE durable_exporter; SELECT count(*) >= 0 FROM ($q->{sql}) q;
		 CREATE TEMP VIEW v AS $q->{sql};
		 SELECT string_agg(attname, ',') FROM pg_attribute WHERE attrelid = 'v'::regclass AND attnum > 0");
	is($ret, 0, "exporter query $k runs as a pg_monitor member") or diag($err);
	my @have = split /,/, (split /\n/, $out)[1] // '';
	my @want = @{ $q->{cols} };
	# A HISTOGRAM column comes with its _bucket, _sum and _count.
	@want = map { my $c = $_; ($q->{sql} =~ /\b${c}_bucket\b/) ? ($c, "${c}_bucket", "${c}_count", "${c}_sum") : ($c) } @want;
	is(join(',', sort @have), join(',', sort @want), "exporter query $k returns the columns it names");
}

# durable.max_metric_queues = 2: 'lq' and 'sq' have rows; a third queue
# counts in the database's row.
$node->safe_psql('postgres', q{SELECT durable.start_workflow('wf', NULL, 'oq-1', 'oq')});
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM durable.metrics WHERE task_queue = 'oq'}), '0', 'no row for a third queue');
is($node->safe_psql('postgres', q{
	SELECT value FROM durable.metrics WHERE namespace IS NULL AND metric = 'durable_workflows_started_total'}),
	'1', 'it counts in the database\'s row');

# A restart: shared memory starts again, counters and pollers too.
$node->restart;
is($node->safe_psql('postgres', q{SELECT count(*) FROM durable.task_queue_pollers()}), '0',
	'pollers are forgotten at a restart');
is($node->safe_psql('postgres', q{
	SELECT COALESCE(sum(value), 0) FROM durable.metrics WHERE metric = 'durable_workflows_started_total'}),
	'0', 'counters start from zero at a restart');

$node->stop;
done_testing();

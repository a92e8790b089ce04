# Metrics without the library in shared_preload_libraries (docs/metrics.md "Metrics"):
# nothing is counted, and durable.metrics and durable.metrics_text() say so
# with durable_metrics_enabled 0 instead of showing nothing, and the text
# still names every family, so that a scraper sees why its series are empty.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('not_preloaded');
$node->init;
# TEMP_CONFIG (test/durable.conf) preloads durable: the last setting wins.
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = ''
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION durable');
is($node->safe_psql('postgres', 'SELECT durable.preloaded()'), 'f', 'the library is not preloaded');

# Work that would count if it were.
$node->safe_psql('postgres', q{
	SELECT durable.start_workflow('wf', NULL, 'np-1', 'nq');
	SELECT durable.complete_decision_task(durable.poll_decision_task('nq')->>'taskToken',
		'[{"decisionType": "CompleteWorkflowExecution"}]');
});
is($node->safe_psql('postgres', q{SELECT status FROM durable.workflows WHERE workflow_id = 'np-1'}),
	'completed', 'the engine runs without it');

is($node->safe_psql('postgres', q{
	SELECT string_agg(format('%s|%s|%s|%s|%s|%s', metric, namespace, task_queue, label, le, value), ' ')
	  FROM durable.metrics}),
	'durable_metrics_enabled|||||0', 'durable.metrics: one row, durable_metrics_enabled 0');

my $text = $node->safe_psql('postgres', 'SELECT durable.metrics_text()');
my @lines = split /\n/, $text;
is_deeply([ @lines[ 0 .. 2 ] ], [
	'# HELP durable_metrics_enabled 1 if durable counts (it is in shared_preload_libraries), 0 if nothing is counted.',
	'# TYPE durable_metrics_enabled gauge',
	'durable_metrics_enabled 0' ], 'the text starts with durable_metrics_enabled 0');
is_deeply([ grep { !/^# (HELP|TYPE) / } @lines ], [ 'durable_metrics_enabled 0' ],
	'and has no other sample');
is_deeply([ map { /^# TYPE (\S+ \S+)$/ ? $1 : () } @lines ], [
	'durable_metrics_enabled gauge',
	'durable_workflows_started_total counter',
	'durable_workflows_closed_total counter',
	'durable_decision_tasks_total counter',
	'durable_activity_tasks_total counter',
	'durable_retries_scheduled_total counter',
	'durable_decision_schedule_to_start_seconds histogram',
	'durable_activity_schedule_to_start_seconds histogram',
	'durable_timers_fired_total counter',
	'durable_timer_lateness_seconds histogram',
	'durable_task_queue_paused gauge',
	'durable_workflows_paused gauge' ], 'a TYPE line for every family docs/metrics.md lists');
is(scalar(grep { /^# HELP / } @lines), 12, 'and a HELP line for each');

# A member of pg_monitor, as a scraper connects, reads the same.
$node->safe_psql('postgres', 'CREATE ROLE scraper LOGIN IN ROLE pg_monitor');
is($node->safe_psql('postgres', 'SELECT durable.metrics_text()', extra_params => [ '-U', 'scraper' ]),
	$text, 'a pg_monitor member reads the same text');

$node->stop;
done_testing();

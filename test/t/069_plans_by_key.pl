# The engine's statements use the index of the key they look up even when
# their table is small when they are planned (src/store/spi.c): a kept plan
# made then would scan the table whole at every later call of the session,
# as the table grows.  A session starts, signals, polls and completes
# workflows after an ANALYZE of a nearly empty schema; auto_explain logs the
# plan of every statement the engine runs, and none scans durable.runs,
# durable.history, durable.activities or durable.timers sequentially.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('plans');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = off
});
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', q{
CREATE EXTENSION durable;
SELECT count(durable.start_workflow('t', NULL, 'seed' || i, 'q')) FROM generate_series(1, 20) i;
ANALYZE;
});

my $log_start = -s $node->logfile;
$node->safe_psql('app', q{
LOAD 'auto_explain';
SET auto_explain.log_min_duration = 0;
SET auto_explain.log_nested_statements = on;
SELECT count(durable.start_workflow('t', NULL, 'w' || i, 'q')) FROM generate_series(1, 30) i;
SELECT count(durable.signal_workflow('w' || i, 's', '1')) FROM generate_series(1, 30) i;
SELECT count(durable.describe_workflow('w' || i)) FROM generate_series(1, 30) i;
DO $$
DECLARE t jsonb;
BEGIN
    FOR i IN 1 .. 30 LOOP
        t := durable.poll_decision_task('q');
        PERFORM durable.complete_decision_task(t->>'taskToken',
            '[{"decisionType": "ScheduleActivityTask", "activityId": "a", "activityType": "x",
               "startToCloseTimeoutSeconds": 60},
              {"decisionType": "StartTimer", "timerId": "t", "startToFireTimeoutSeconds": 60}]');
        t := durable.poll_activity_task('q');
        PERFORM durable.complete_activity(t->>'taskToken', '1');
    END LOOP;
END $$;
SELECT count(durable.terminate_workflow('w' || i, 'done')) FROM generate_series(1, 30) i;
});
my $log = slurp_file($node->logfile, $log_start);

my @plans = ($log =~ /Query Text: (.*?)(?=\n\S|\z)/gs);
cmp_ok(scalar(@plans), '>', 20, 'auto_explain logged the engine\'s statements ('
	  . scalar(@plans) . ')');
my @scans = grep { /Seq Scan on (runs|history|activities|timers|buffered_events|children|user_timers)\b/ } @plans;
is(scalar(@scans), 0, 'no statement scans a table of runs sequentially')
  or diag(join("\n----\n", @scans[0 .. ($#scans < 2 ? $#scans : 2)]));

done_testing();

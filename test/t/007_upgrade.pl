# The upgrade from 0.1.0 (shipped) to the current version.  A database created
# at 0.1.0 runs workflows under the new library (its executors idle), then
# ALTER EXTENSION durable UPDATE: the version is the control file's, the
# executors start, the old workflows carry on to completion through the
# worker API and durable.tick(), a SQL workflow runs there, and the upgraded
# schema is exactly that of a fresh CREATE EXTENSION (pg_dump --schema-only,
# of the extension and of its objects).  Namespace privileges: none before
# the update, the existing namespaces open to PUBLIC after it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = on
durable.worker_max_sleep = 1
max_worker_processes = 16
});
$node->start;

# The test's clock: far ahead of the wall clock, so that the timer worker
# (which fires against the wall clock) leaves these timers to durable.tick().
my $t0 = q{SET durable.test_time = '2030-01-01 00:00:00+00';};

sub executors
{
	my ($db) = @_;
	return qq{SELECT count(*) FROM pg_stat_activity
	           WHERE backend_type = 'durable executor' AND datname = '$db'};
}

$node->safe_psql('postgres', 'CREATE DATABASE old');
my $log_offset = -s $node->logfile;
$node->safe_psql('old', q{CREATE EXTENSION durable VERSION '0.1.0'});
is($node->safe_psql('old', q{SELECT extversion FROM pg_extension WHERE extname = 'durable'}),
	'0.1.0', 'created at 0.1.0');
$node->wait_for_log(qr/durable executors idle: the extension durable is older than 0\.2\.0/,
	$log_offset);
ok($node->poll_query_until('postgres', executors('old'), '0'),
	'at 0.1.0 the executors found nothing to run and idle');

# Workflows under 0.1.0: one with a pending activity, one with a pending
# timer, one whose first decision task waits for a delay.
$node->safe_psql('old', $t0 . q{
SELECT durable.start_workflow('legacy', '{"n": 1}', 'act', task_queue => 'q_act');
SELECT durable.complete_decision_task(durable.poll_decision_task('q_act')->>'taskToken',
    '[{"decisionType": "ScheduleActivityTask", "activityId": "a1", "activityType": "legacy_act",
       "input": {"n": 1}, "startToCloseTimeoutSeconds": 3600}]');
SELECT durable.start_workflow('legacy', NULL, 'tmr', task_queue => 'q_tmr');
SELECT durable.complete_decision_task(durable.poll_decision_task('q_tmr')->>'taskToken',
    '[{"decisionType": "StartTimer", "timerId": "t1", "startToFireTimeoutSeconds": 60}]');
SELECT durable.start_workflow('legacy', NULL, 'later', task_queue => 'q_later', delay => '1 hour');
});
is($node->safe_psql('old', q{
	SELECT string_agg(workflow_id || ':' || (durable.describe_workflow(workflow_id)->>'status'), ','
	                  ORDER BY workflow_id)
	  FROM unnest(ARRAY['act', 'later', 'tmr']) workflow_id}),
	'act:running,later:running,tmr:running', 'three workflows wait at 0.1.0');

# Namespace privileges (0.3.0) are not checked before the update: a client
# acts in every namespace, as it did.
$node->safe_psql('old', q{
CREATE ROLE legacy_client;
GRANT durable_client TO legacy_client;
SELECT durable.create_namespace('team');
SET ROLE legacy_client;
SELECT durable.start_workflow('legacy', NULL, 'team-1', 'q_team', 'team');
});
is($node->safe_psql('old', q{SET ROLE legacy_client;
	SELECT durable.describe_workflow('team-1', 'team')->>'status'}),
	'running', 'before the update a client acts in every namespace');

# The update.
$node->safe_psql('old', 'ALTER EXTENSION durable UPDATE');
my $default = $node->safe_psql('old', q{
	SELECT default_version FROM pg_available_extensions WHERE name = 'durable'});
isnt($default, '0.1.0', "the control file's default version is newer ($default)");
is($node->safe_psql('old', q{SELECT extversion FROM pg_extension WHERE extname = 'durable'}),
	$default, 'ALTER EXTENSION UPDATE reaches it');
ok($node->poll_query_until('postgres', executors('old'), '2'),
	'the executors start once the update commits');

# The old workflows carry on.
$node->safe_psql('old', $t0 . q{
SELECT durable.complete_activity(durable.poll_activity_task('q_act')->>'taskToken', '"charged"');
SELECT durable.complete_decision_task(durable.poll_decision_task('q_act')->>'taskToken',
    '[{"decisionType": "CompleteWorkflowExecution", "result": "act done"}]');
});
$node->safe_psql('old', q{
SET durable.test_time = '2030-01-01 01:00:00+00';
SELECT durable.tick();
SELECT durable.complete_decision_task(durable.poll_decision_task('q_tmr')->>'taskToken',
    '[{"decisionType": "CompleteWorkflowExecution", "result": "tmr done"}]');
SELECT durable.complete_decision_task(durable.poll_decision_task('q_later')->>'taskToken',
    '[{"decisionType": "CompleteWorkflowExecution", "result": "later done"}]');
});
is($node->safe_psql('old', q{
	SELECT string_agg(workflow_id || ':' || (d->>'status') || ':' || (d->>'result'), ','
	                  ORDER BY workflow_id)
	  FROM unnest(ARRAY['act', 'later', 'tmr']) workflow_id,
	       durable.describe_workflow(workflow_id) d}),
	'act:completed:act done,later:completed:later done,tmr:completed:tmr done',
	'the three complete after the update');
is($node->safe_psql('old', q{
	SELECT string_agg(event_type, ',' ORDER BY event_id) FROM durable.get_history('act')}),
	'WorkflowExecutionStarted,DecisionTaskScheduled,DecisionTaskStarted,DecisionTaskCompleted,'
	  . 'ActivityTaskScheduled,ActivityTaskStarted,ActivityTaskCompleted,DecisionTaskScheduled,'
	  . 'DecisionTaskStarted,DecisionTaskCompleted,WorkflowExecutionCompleted',
	'the activity workflow\'s history runs on across the update');
is($node->safe_psql('old', q{
	SELECT count(*) FROM durable.get_history('tmr') WHERE event_type = 'TimerFired'}),
	'1', 'the timer set at 0.1.0 fired after it');
is($node->safe_psql('old', q{SELECT count(*) FROM durable.ready_tasks WHERE namespace = 'default'}),
	'0', 'no task is left');

# The upgraded schema is the fresh one.
$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION durable');
is($node->safe_psql('fresh', q{SELECT extversion FROM pg_extension WHERE extname = 'durable'}),
	$default, 'a fresh CREATE EXTENSION is at the same version');

# pg_dump --schema-only of a database, without comments, blank lines and the
# random keys of \restrict.
sub schema_dump
{
	my ($db) = @_;
	my ($stdout, $stderr) = run_command(
		[ 'pg_dump', '--schema-only', '--no-owner', '-d', $node->connstr($db) ]);
	is($stderr, '', "pg_dump of $db says nothing on stderr");
	return join("\n",
		grep { $_ ne '' && !/^--/ && !/^\\(un)?restrict / }
		map { s/\s+$//r } split(/\n/, $stdout));
}

my $fresh_dump = schema_dump('fresh');
like($fresh_dump, qr/CREATE EXTENSION IF NOT EXISTS durable/, 'the dump has the extension');
is(schema_dump('old'), $fresh_dump, 'pg_dump --schema-only: upgraded = fresh');

# pg_dump leaves an extension's objects out.  To compare those too, copies of
# both databases forget that the objects belong to the extension, and their
# initial privileges, so that every object and every GRANT is dumped (catalog
# surgery, on throwaway copies).
foreach my $db ('old', 'fresh')
{
	$node->safe_psql('postgres', "CREATE DATABASE ${db}_loose TEMPLATE $db");
	$node->safe_psql("${db}_loose", q{
		DELETE FROM pg_depend
		 WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
		   AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'durable');
		DELETE FROM pg_init_privs WHERE privtype = 'e';
		DELETE FROM pg_extension WHERE extname = 'durable';
	});
}
my $fresh_objects = schema_dump('fresh_loose');
like($fresh_objects, qr/CREATE TABLE durable\.registrations/,
	'the loose dump has the extension\'s objects');
like($fresh_objects, qr/CREATE FUNCTION durable\.start_workflow/, 'and its functions');
is(schema_dump('old_loose'), $fresh_objects,
	'pg_dump --schema-only of every object of the extension: upgraded = fresh');
$node->safe_psql('postgres', 'DROP DATABASE old_loose');
$node->safe_psql('postgres', 'DROP DATABASE fresh_loose');

# A SQL workflow runs in the upgraded database, by its executors.
$node->safe_psql('old', q{
CREATE ROLE app_role;
CREATE FUNCTION double(input jsonb) RETURNS jsonb LANGUAGE sql
    AS $$ SELECT to_jsonb((input->>'n')::int * 2) $$;
CREATE FUNCTION flow(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    RETURN durable.activity('double', input);
END $$;
SELECT durable.register_workflow('flow', 'flow(jsonb)', run_as => 'app_role');
SELECT durable.register_activity('double', 'double(jsonb)', run_as => 'app_role');
SELECT durable.start_workflow('flow', '{"n": 21}', 'sql-1');
});
ok($node->poll_query_until('old', q{
	SELECT durable.describe_workflow('sql-1')->>'status' = 'completed'}),
	'a SQL workflow completes in the upgraded database');
is($node->safe_psql('old', q{SELECT durable.describe_workflow('sql-1')->>'result'}), '42',
	'with its activity\'s result');

# The namespaces that existed are granted to PUBLIC: their users see no
# change.  A namespace created after the update is closed to them.
is($node->safe_psql('old', q{SET ROLE legacy_client;
	SELECT durable.describe_workflow('team-1', 'team')->>'status';
	SELECT durable.start_workflow('legacy', NULL, 'default-1') IS NOT NULL;
	SELECT count(*) FROM durable.workflows WHERE workflow_id = 'team-1'}),
	"running\nt\n1", 'after it the same client still acts in default and in its namespace');
$node->safe_psql('old', q{SELECT durable.create_namespace('closed')});
my ($rc, $out, $err) = $node->psql('old', q{SET ROLE legacy_client;
	SELECT durable.start_workflow('legacy', NULL, 'c-1', 'q', 'closed')});
like($err, qr/permission denied for namespace "closed": privilege client required/,
	'a namespace created after the update is closed to it');
$node->safe_psql('old', q{SELECT durable.revoke_namespace('team', 'PUBLIC', 'client')});
($rc, $out, $err) = $node->psql('old', q{SET ROLE legacy_client;
	SELECT durable.describe_workflow('team-1', 'team')});
like($err, qr/permission denied for namespace "team"/,
	'an admin can revoke what the update granted');

$node->stop;
done_testing();

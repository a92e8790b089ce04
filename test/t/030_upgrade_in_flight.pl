# The upgrades from each shipped version since 0.2.0 (0.2.0 to 0.11.0) to the
# current version, in a database of its own each.  A database created at
# the old version has work in flight: an activity an external worker has
# not completed yet, a timer, a SQL workflow waiting for a signal.  After
# ALTER EXTENSION durable UPDATE it all completes, and the default
# namespace's users, roles that have only durable_client or durable_worker,
# go on working without a new grant.
#
# To extend it: add work in flight to "Before the update" and its end to
# "After the update"; what a role may do after the update goes in the checks
# made with as_role (a psql session as that role, which must succeed).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('upgrade_in_flight');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = on
durable.worker_max_sleep = 1
# A timer worker and two executors for each database of the loop below and
# for postgres, with room to spare: a database left without its executors
# would leave its SQL workflow waiting.
max_worker_processes = 52
});
$node->start;

my $old;	# the database of the version being updated

# Run $sql as $role in database $old; it must succeed.  Returns its output.
sub as_role
{
	my ($role, $sql) = @_;
	return $node->safe_psql($old, $sql, extra_params => [ '-U', $role ]);
}

sub status_of
{
	my ($wid) = @_;
	return $node->safe_psql($old, qq{SELECT durable.describe_workflow('$wid')->>'status'});
}

foreach my $from ('0.2.0', '0.3.0', '0.4.0', '0.5.0', '0.6.0', '0.7.0', '0.8.0', '0.9.0', '0.10.0', '0.11.0')
{
	$old = "old_$from";

	$node->safe_psql('postgres', qq{CREATE DATABASE "$old"});
	$node->safe_psql($old, qq{CREATE EXTENSION durable VERSION '$from'});
	is($node->safe_psql($old, q{SELECT extversion FROM pg_extension WHERE extname = 'durable'}),
		$from, "created at $from");

	# The default namespace's users: roles with one group role each, as
	# docs/privileges.md "Privileges" sets them up (the group roles come with the first
	# CREATE EXTENSION).
	$node->safe_psql($old, q{
	CREATE ROLE app_client LOGIN IN ROLE durable_client;
	CREATE ROLE app_worker LOGIN IN ROLE durable_worker;
	}) if $from eq '0.2.0';

	$node->safe_psql($old, q{
	CREATE FUNCTION double(input jsonb) RETURNS jsonb LANGUAGE sql
	    AS $$ SELECT to_jsonb((input->>'n')::int * 2) $$;
	CREATE FUNCTION waiter(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
	BEGIN
	    RETURN durable.activity('double', durable.wait_signal('go'));
	END $$;
	});

	# ---- Before the update: work in flight at $from ----
	as_role('app_worker', q{
	SELECT durable.register_workflow('waiter', 'waiter(jsonb)', task_queue => 'sq');
	SELECT durable.register_activity('double', 'double(jsonb)', task_queue => 'sq');
	});
	as_role('app_client', q{
	SELECT durable.start_workflow('waiter', NULL, 'sql-wait', task_queue => 'sq');
	SELECT durable.start_workflow('legacy', '{"n": 1}', 'act', task_queue => 'q_act');
	SELECT durable.start_workflow('legacy', NULL, 'tmr', task_queue => 'q_tmr');
	SELECT durable.start_workflow('legacy', NULL, 'late', task_queue => 'q_late',
	    delay => '1 hour', run_timeout => '2 hours');
	});
	as_role('app_worker', q{
	SELECT durable.complete_decision_task(durable.poll_decision_task('q_act')->>'taskToken',
	    '[{"decisionType": "ScheduleActivityTask", "activityId": "a1", "activityType": "legacy_act",
	       "input": {"n": 1}, "startToCloseTimeoutSeconds": 3600}]');
	SELECT durable.complete_decision_task(durable.poll_decision_task('q_tmr')->>'taskToken',
	    '[{"decisionType": "StartTimer", "timerId": "t1", "startToFireTimeoutSeconds": 60}]');
	});
	# A decider in a crash loop: two failed attempts of its decision task.
	# At 0.2.0 each attempt is written (its tokens have no secret to tell two
	# attempts of a transient task apart); from 0.3.0 the retries are
	# transient (Cadence): only the first failure is in history.
	as_role('app_client', q{SELECT durable.start_workflow('legacy', NULL, 'crash', task_queue => 'q_crash')});
	as_role('app_worker', q{
	SELECT durable.fail_decision_task(durable.poll_decision_task('q_crash')->>'taskToken', 'WorkflowWorkerUnhandledFailure');
	SELECT durable.fail_decision_task(durable.poll_decision_task('q_crash')->>'taskToken', 'WorkflowWorkerUnhandledFailure');
	});
	is($node->safe_psql($old, q{SELECT count(*) FROM durable.get_history('crash')}),
		$from eq '0.2.0' ? '8' : '4',
		"at $from the crash loop's history: " .
		($from eq '0.2.0' ? 'every attempt' : 'the first failure'));
	ok($node->poll_query_until($old, q{
		SELECT count(*) = 1 FROM durable.get_history('sql-wait')
		 WHERE event_type = 'DecisionTaskCompleted'}),
		"at $from the executors run the SQL workflow up to its wait for a signal");
	is(join(',', map { status_of($_) } ('act', 'sql-wait', 'tmr')), 'running,running,running',
		"three workflows wait at $from");

	# ---- The update ----
	$node->safe_psql($old, 'ALTER EXTENSION durable UPDATE');
	my $default = $node->safe_psql($old, q{
		SELECT default_version FROM pg_available_extensions WHERE name = 'durable'});
	is($node->safe_psql($old, q{SELECT extversion FROM pg_extension WHERE extname = 'durable'}),
		$default, "ALTER EXTENSION UPDATE reaches the default version, $default");

	# ---- After the update: the work in flight completes ----
	# A run whose first decision task still waits for its delay:
	# a signal is recorded and waits with it.
	as_role('app_client', q{SELECT durable.signal_workflow('late', 'early')});
	is($node->safe_psql($old, q{
		SELECT string_agg(event_type, ',' ORDER BY event_id) FROM durable.get_history('late')}),
		'WorkflowExecutionStarted,WorkflowExecutionSignaled',
		"the delayed run started at $from gets a signal without a decision task");
	as_role('app_worker', q{
	SELECT durable.complete_activity(durable.poll_activity_task('q_act')->>'taskToken', '"charged"');
	SELECT durable.complete_decision_task(durable.poll_decision_task('q_act')->>'taskToken',
	    '[{"decisionType": "CompleteWorkflowExecution", "result": "act done"}]');
	});
	# The timer (60 s) fires by durable.tick() at a test time past it (a
	# superuser's setting), whether or not the timer worker got there first.
	$node->safe_psql($old, q{
	SET durable.test_time = '2100-01-01 00:00:00+00';
	SELECT durable.tick();
	SELECT durable.complete_decision_task(durable.poll_decision_task('q_tmr')->>'taskToken',
	    '[{"decisionType": "CompleteWorkflowExecution", "result": "tmr done"}]');
	});
	is(as_role('app_worker', q{
		SELECT t AS task, t->>'attempt' AS attempt FROM durable.poll_decision_task('q_crash') t \gset
		SELECT :'attempt' || '|' || count(*) FROM durable.complete_decision_task(:'task'::jsonb->>'taskToken',
		    '[{"decisionType": "CompleteWorkflowExecution", "result": "crash done"}]');}),
		"3|1", 'the crash loop\'s attempt 3 completes after the update');
	is($node->safe_psql($old, q{
		SELECT string_agg(event_id || ':' || event_type || COALESCE(':' || (attributes->>'attempt'), ''), ','
		                  ORDER BY event_id)
		  FROM durable.get_history('crash') WHERE event_id > 4}),
		$from eq '0.2.0'
		? '5:DecisionTaskScheduled:2,6:DecisionTaskStarted,7:DecisionTaskFailed,8:DecisionTaskScheduled:3,9:DecisionTaskStarted,10:DecisionTaskCompleted,11:WorkflowExecutionCompleted'
		: '5:DecisionTaskScheduled:3,6:DecisionTaskStarted,7:DecisionTaskCompleted,8:WorkflowExecutionCompleted',
		"its history after the first failure, from $from");
	as_role('app_client', q{SELECT durable.signal_workflow('sql-wait', 'go', '{"n": 21}')});
	ok($node->poll_query_until($old, q{
		SELECT durable.describe_workflow('sql-wait')->>'status' = 'completed'}),
		'signaled after the update, the SQL workflow completes');
	is(as_role('app_client', q{
		SELECT string_agg(workflow_id || ':' || (d->>'status') || ':' || (d->>'result'), ','
		                  ORDER BY workflow_id)
		  FROM unnest(ARRAY['act', 'sql-wait', 'tmr']) workflow_id,
		       durable.describe_workflow(workflow_id) d}),
		'act:completed:act done,sql-wait:completed:42,tmr:completed:tmr done',
		'the three complete, as app_client sees them');
	is(status_of('late'), 'timed_out',
		"the delayed run started at $from timed out by the clock of 2100");
	is($node->safe_psql($old, q{SELECT count(*) FROM durable.ready_tasks}), '0', 'no task is left');

	# ---- After the update: a run of before it is reset ----
	is(as_role('app_client', q{
		SELECT durable.reset_workflow('act', 'reset after the update') IS NOT NULL;
		SELECT string_agg(event_type || COALESCE(':' || (attributes->>'cause'), ''), ',' ORDER BY event_id)
		  FROM durable.get_history('act') WHERE event_id >= 9;
		SELECT durable.describe_workflow('act')->>'resetFrom' = durable.describe_workflow('act')->>'firstRunId';}),
		"t\nDecisionTaskStarted,DecisionTaskFailed:ResetWorkflow,DecisionTaskScheduled\nt",
		"app_client resets a workflow of $from to its last DecisionTaskCompleted");
	as_role('app_worker', q{
	SELECT durable.complete_decision_task(durable.poll_decision_task('q_act')->>'taskToken',
	    '[{"decisionType": "CompleteWorkflowExecution", "result": "act again"}]');
	});
	is(status_of('act'), 'completed', 'the reset run completes');
	# Its input, given at $from, is shown for both runs (kept in the run row
	# before 0.11.0, in WorkflowExecutionStarted only since).
	is(as_role('app_client', q{
		SELECT string_agg(input::text, ',' ORDER BY start_time) FROM durable.workflows WHERE workflow_id = 'act';
		SELECT string_agg(input::text, ',') FROM durable.list_workflows(workflow_id_prefix => 'act');}),
		"{\"n\": 1},{\"n\": 1}\n{\"n\": 1},{\"n\": 1}",
		"the input of a workflow started at $from, and of its reset run, in durable.workflows and list_workflows");

	# ---- After the update: the roles go on working, without a new grant ----
	is(as_role('app_client', q{
		SELECT durable.start_workflow('legacy', NULL, 'after', task_queue => 'q_after') IS NOT NULL;
		SELECT count(*) FROM durable.workflows WHERE workflow_id = 'after';
		SELECT count(*) FROM durable.get_history('after');}),
		"t\n1\n2", 'app_client starts a workflow, sees it in durable.workflows and its history');
	is(as_role('app_worker', q{
		SELECT durable.poll_decision_task('q_after')->>'workflowId';}),
		'after', 'app_worker polls its decision task');
	as_role('app_worker', q{
	SELECT durable.register_activity('double', 'double(jsonb)', task_queue => 'sq');
	SELECT durable.register_activity('double', 'double(jsonb)', task_queue => 'sq2');
	});
	is($node->safe_psql($old, q{
		SELECT string_agg(task_queue || ':' || registered_by, ',' ORDER BY task_queue)
		  FROM durable.registrations WHERE type_name = 'double'}),
		'sq:app_worker,sq2:app_worker',
		"app_worker replaces the binding it made at $from and makes a new one");

}

$node->stop;
done_testing();

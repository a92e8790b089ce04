# Crashes lose nothing and do nothing twice.  A load of workflows, each with
# two activities that fail twice before they succeed, runs under SQL workers
# while we kill -9 the timer worker, then a worker backend, then stop the
# server in immediate mode.  Afterwards every workflow completes, every
# activity's side effect (written in the same transaction as its completion)
# exists exactly once, every completion is in history exactly once, and no
# timer or task is left behind.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use IPC::Run;
use Test::More;

my $workflows = 60;

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = on
durable.worker_max_sleep = 1
restart_after_crash = on
max_worker_processes = 16
});
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION durable;

-- The side effects of activities, written with their completion.
CREATE TABLE effects (workflow_id text, activity_id text, attempt int,
                      PRIMARY KEY (workflow_id, activity_id));

-- The decisions for a decision task: two activities in turn, then done.
CREATE FUNCTION decide(task jsonb) RETURNS jsonb LANGUAGE sql AS $$
    WITH h AS (SELECT e->>'eventType' AS t FROM jsonb_array_elements(task->'history') e),
         c AS (SELECT count(*) FILTER (WHERE t = 'ActivityTaskCompleted') AS done,
                      count(*) FILTER (WHERE t = 'ActivityTaskScheduled') AS scheduled FROM h)
    SELECT CASE
        WHEN done = 2 THEN '[{"decisionType": "CompleteWorkflowExecution", "result": "ok"}]'::jsonb
        WHEN scheduled = done THEN jsonb_build_array(jsonb_build_object(
            'decisionType', 'ScheduleActivityTask', 'activityId', 'a' || (done + 1),
            'activityType', 'flaky', 'startToCloseTimeoutSeconds', 2,
            'retryPolicy', jsonb_build_object('initialIntervalInSeconds', 0.2,
                                              'backoffCoefficient', 1.5,
                                              'maximumAttempts', 20)))
        ELSE '[]'::jsonb END
    FROM c
$$;

-- A worker: answers decision tasks, runs activities (failing the first two
-- attempts), one transaction per call, until stop seconds have passed.
CREATE PROCEDURE work(seconds float8) LANGUAGE plpgsql AS $$
DECLARE
    t jsonb;
    deadline timestamptz := clock_timestamp() + seconds * interval '1 second';
BEGIN
    WHILE clock_timestamp() < deadline LOOP
        t := durable.poll_decision_task(wait => '50 milliseconds');
        COMMIT;
        IF t IS NOT NULL THEN
            PERFORM durable.complete_decision_task(t->>'taskToken', decide(t));
            COMMIT;
        END IF;
        t := durable.poll_activity_task(wait => '50 milliseconds');
        COMMIT;
        IF t IS NOT NULL THEN
            IF (t->>'attempt')::int < 3 THEN
                PERFORM durable.fail_activity(t->>'taskToken', 'flaky');
            ELSE
                INSERT INTO effects VALUES (t->>'workflowId', t->>'activityId', (t->>'attempt')::int);
                PERFORM durable.complete_activity(t->>'taskToken', '"done"');
            END IF;
            COMMIT;
        END IF;
    END LOOP;
END
$$;
});
$node->safe_psql('postgres', qq{
	SELECT count(durable.start_workflow('load', NULL, 'w' || i, decision_timeout => '2 seconds'))
	  FROM generate_series(1, $workflows) i});

# Start n workers for a while; returns their IPC::Run handles.
sub start_workers
{
	my ($n, $seconds) = @_;
	my @h;
	foreach (1 .. $n)
	{
		my ($out, $err) = ('', '');
		push @h, IPC::Run::start(
			[ 'psql', '-X', '-q', '-d', $node->connstr('postgres'),
			  '-c', "CALL work($seconds)" ],
			'>', \$out, '2>', \$err);
	}
	return @h;
}

sub finish_workers
{
	foreach my $h (@_)
	{
		eval { $h->finish; };
	}
}

sub completed
{
	return $node->safe_psql('postgres',
		q{SELECT count(*) FROM durable.runs WHERE status = 'completed'});
}

# 1. kill -9 the timer worker in the middle of the load.
my @w = start_workers(2, 4);
sleep(1);
my $timer_pid = $node->safe_psql('postgres', q{
	SELECT pid FROM pg_stat_activity WHERE backend_type = 'durable timer worker'});
ok($timer_pid =~ /^\d+$/, 'the timer worker runs');
kill 'KILL', $timer_pid;
finish_workers(@w);
ok($node->poll_query_until('postgres', 'SELECT true'), 'the server is back after kill -9 of the timer worker');
my $after_first = completed();
cmp_ok($after_first, '<', $workflows, "the load was under way ($after_first done)");

# 2. kill -9 a worker backend in the middle of its work.
@w = start_workers(2, 4);
sleep(1);
my $backend_pid = $node->safe_psql('postgres', q{
	SELECT pid FROM pg_stat_activity WHERE query LIKE 'CALL work%' LIMIT 1});
ok($backend_pid =~ /^\d+$/, 'a worker backend runs');
kill 'KILL', $backend_pid;
finish_workers(@w);
ok($node->poll_query_until('postgres', 'SELECT true'), 'the server is back after kill -9 of a backend');

# 3. An immediate shutdown in the middle of the load, and a restart.
@w = start_workers(2, 4);
sleep(1);
$node->stop('immediate');
finish_workers(@w);
$node->start;

# Then the load runs to its end.
my $done = 0;
foreach my $round (1 .. 30)
{
	@w = start_workers(2, 3);
	finish_workers(@w);
	$done = completed();
	last if $done == $workflows;
}
is($done, $workflows, 'every workflow completed');

is($node->safe_psql('postgres', 'SELECT count(*) FROM effects'), 2 * $workflows,
	'every activity has its side effect once');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM durable.history
	 WHERE event_type = 'ActivityTaskCompleted'}), 2 * $workflows,
	'every activity completion is in history once');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM (
	    SELECT run_id, attributes->>'scheduledEventId'
	      FROM durable.history
	     WHERE event_type IN ('ActivityTaskCompleted', 'ActivityTaskFailed',
	                          'ActivityTaskTimedOut', 'ActivityTaskCanceled')
	     GROUP BY 1, 2 HAVING count(*) > 1) d}), '0',
	'no activity has two outcomes');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM durable.history
	 WHERE event_type = 'WorkflowExecutionCompleted'}), $workflows,
	'every workflow completed once');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM durable.activity_attempts
	 WHERE outcome = 'completed'}), 2 * $workflows,
	'one completed attempt per activity');
# Two attempts of each activity fail; an attempt cut short by a crash times out
# (StartToClose) instead and is retried the same way.
cmp_ok($node->safe_psql('postgres', q{
	SELECT count(*) FROM durable.activity_attempts
	 WHERE outcome IN ('failed', 'timed_out')}),
	'>=', 4 * $workflows, 'the failed attempts were retried by the timers');
is($node->safe_psql('postgres', 'SELECT count(*) FROM durable.timers'), '0',
	'no timer is left');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM durable.activities}), '0', 'no activity is left pending');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM durable.history h
	  JOIN durable.runs r USING (run_id)
	 WHERE h.event_id > r.last_event_id}), '0',
	'every run knows its last event');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM (
	    SELECT run_id FROM durable.history GROUP BY run_id
	    HAVING max(event_id) <> count(*)) gaps}), '0',
	'no history has a gap');

$node->stop;
done_testing();

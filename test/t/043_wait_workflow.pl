# durable.wait_workflow() across sessions: a committed close wakes a waiting
# call at once, through retries and ContinueAsNew, while it holds no xmin;
# REPEATABLE READ refuses to wait; the NOTIFY on channel
# durable_workflow_closed that durable.notify_workflow_closed turns on; and
# which calls may drop their xmin: constants and parameters as arguments
# (EXECUTE of a generic plan, the extended protocol) may, a function or a
# subquery in the arguments may not, and a function in the arguments that
# itself waits and then reads a table sees the rows of its statement's
# snapshot.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use IPC::Run;
use Test::More;
use DurableTest::LongPoll;

my $node = PostgreSQL::Test::Cluster->new('wait');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = off
});
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', 'CREATE EXTENSION durable');

# A session waiting in wait_workflow (application_name $name): a SQL statement
# run by psql, or a command.  Its wait (300 s) is far longer than the test lets
# it run (60 s): a call that returned only when its wait ran out fails the test.
my $lp = DurableTest::LongPoll->new($node, 'app');
sub start_waiter
{
	my ($name, $cmd) = @_;
	$lp->start($name, $cmd, what => "$name: wait_workflow sleeps", timeout => 60);
}

sub xmin_of
{
	my ($name) = @_;
	return $node->safe_psql('app', qq{
		SELECT COALESCE(backend_xmin::text, 'NULL') FROM pg_stat_activity
		 WHERE application_name = '$name'});
}

# Answer the next decision task of a queue.
sub decide
{
	my ($queue, $decisions) = @_;
	$node->safe_psql('app', qq{
		SELECT durable.complete_decision_task(durable.poll_decision_task('$queue')->>'taskToken',
			'$decisions')});
}

# A transaction with an xid stays open meanwhile, so that a snapshot's xmin
# would show.
my $holder_in = "BEGIN;\nSELECT txid_current();\n";
my $holder_out = '';
my $holder = IPC::Run::start(
	[ 'psql', '-X', '-A', '-t', '-f', '-', '-d', $node->connstr('app') ],
	'<', \$holder_in, '>', \$holder_out, '2>', \my $holder_err);
$holder->pump until $holder_out =~ /\d+/;

# 1. A close committed while wait_workflow waits wakes it at once; no xmin meanwhile.
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'order-1', 'q')});
start_waiter('w_one', q{SELECT durable.wait_workflow('order-1', wait => '300 seconds') - 'runId' - 'closeTime'});
is(xmin_of('w_one'), 'NULL', 'backend_xmin of a waiting wait_workflow is NULL');
decide('q', '[{"decisionType": "CompleteWorkflowExecution", "result": {"ok": true}}]');
is($lp->finish('w_one'), qq({"result": {"ok": true}, "status": "completed", "failure": null}),
	'the committed close wakes it, with the result');

# 2. Through a retry: the continued run wakes it, it follows the chain and sleeps
# again (without an xmin) until the retry closes.
$node->safe_psql('app', q{
	SELECT durable.start_workflow('t', NULL, 'order-2', 'q',
		retry_policy => durable.retry_policy('1 second', maximum_attempts => 2))});
start_waiter('w_retry', q{SELECT durable.wait_workflow('order-2', wait => '300 seconds')->>'status'});
decide('q', '[{"decisionType": "FailWorkflowExecution", "reason": "flaky"}]');
ok($node->poll_query_until('app', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE application_name = 'w_retry' AND wait_event_type = 'Extension'
	   AND (SELECT count(*) FROM durable.runs WHERE workflow_id = 'order-2') = 2}),
	'the retry: still waiting');
is(xmin_of('w_retry'), 'NULL', 'without an xmin');
$node->safe_psql('app', q{
	UPDATE durable.timers SET due_at = now() - interval '1 second';
	SELECT durable.tick()});
decide('q', '[{"decisionType": "CompleteWorkflowExecution", "result": 2}]');
is($lp->finish('w_retry'), 'completed', 'the retry\'s close wakes it');

# 3. ContinueAsNew from another session, then a terminate.
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'order-3', 'q')});
start_waiter('w_can', q{SELECT durable.wait_workflow('order-3', wait => '300 seconds')->>'status'});
decide('q', '[{"decisionType": "ContinueAsNewWorkflowExecution"}]');
$node->safe_psql('app', q{SELECT durable.terminate_workflow('order-3', 'done here')});
is($lp->finish('w_can'), 'terminated', 'ContinueAsNew, then terminate: the last run\'s close');

# 4. The wait passes: NULL.
$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'order-4', 'q')});
is($node->safe_psql('app', q{SELECT durable.wait_workflow('order-4', wait => '10 milliseconds') IS NULL}),
	't', 'NULL when the wait passes');

# 5. REPEATABLE READ cannot see a later close: waiting is refused, not slept through.
my ($ret, $out, $err) = $node->psql('app', q{
	BEGIN ISOLATION LEVEL REPEATABLE READ;
	SELECT durable.wait_workflow('order-4', wait => '300 seconds');});
like($err, qr/cannot wait in a REPEATABLE READ or SERIALIZABLE transaction/,
	'REPEATABLE READ: refused');
is($node->safe_psql('app', q{
	BEGIN ISOLATION LEVEL REPEATABLE READ;
	SELECT durable.wait_workflow('order-1', wait => '300 seconds')->>'status';
	COMMIT;}), 'completed', 'a closed chain is still returned there');

$holder_in .= "COMMIT;\n\\q\n";
$holder->finish;

# 6. NOTIFY durable_workflow_closed: off by default; on, one a closed run, at commit.
($ret, $out, $err) = $node->psql('app', q{
	LISTEN durable_workflow_closed;
	SELECT durable.terminate_workflow('order-4');});
unlike($out . $err, qr/Asynchronous notification/, 'off by default: no NOTIFY');

$node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, id, 'q')
	FROM unnest('{n-1,n-2,n-3}'::text[]) id});
($ret, $out, $err) = $node->psql('app', q{
	SET durable.notify_workflow_closed = on;
	LISTEN durable_workflow_closed;
	BEGIN;
	SAVEPOINT s;
	SELECT durable.terminate_workflow('n-1');
	ROLLBACK TO s;
	SELECT durable.terminate_workflow('n-2');
	COMMIT;});
my $rid = $node->safe_psql('app', q{SELECT durable.resolve_run_id('n-2')});
my @notes = ($out =~ /Asynchronous notification "durable_workflow_closed" with payload "(.*)" received/g);
is_deeply(\@notes,
	[ qq({"namespace":"default","workflowId":"n-2","runId":"$rid","status":"terminated"}) ],
	'one NOTIFY, for the close that committed (not the rolled-back one)');

my $long_id = "\x01" x 1000;
$node->safe_psql('app', qq{
	SELECT durable.create_namespace(repeat(chr(1), 1000));
	SELECT durable.start_workflow('t', NULL, repeat(chr(1), 1000), 'q', repeat(chr(1), 1000))});
($ret, $out, $err) = $node->psql('app', q{
	SET durable.notify_workflow_closed = on;
	LISTEN durable_workflow_closed;
	SELECT durable.terminate_workflow(repeat(chr(1), 1000), namespace => repeat(chr(1), 1000));});
is($ret, 0, 'ids of 1000 bytes that take 6000 each in JSON: the close commits');
$rid = $node->safe_psql('app', q{
	SELECT durable.resolve_run_id(repeat(chr(1), 1000), repeat(chr(1), 1000))});
@notes = ($out =~ /Asynchronous notification "durable_workflow_closed" with payload "(.*)" received/g);
is_deeply(\@notes, [ qq({"runId":"$rid","status":"terminated","truncated":true}) ],
	'and the NOTIFY leaves the ids out to stay under 8000 bytes');

$node->safe_psql('app', q{
	CREATE ROLE app_client LOGIN;
	GRANT durable_client TO app_client;});
($ret, $out, $err) = $node->psql('app', q{
	SET ROLE app_client;
	SET durable.notify_workflow_closed = on;});
like($err, qr/permission denied to set parameter "durable.notify_workflow_closed"/,
	'only a superuser turns it on');

# ALTER DATABASE: every session of the database notifies, the timer worker's too.
$node->safe_psql('app', q{
	ALTER DATABASE app SET durable.notify_workflow_closed = on;
	SELECT durable.start_workflow('t', NULL, 'n-3b', 'q', run_timeout => '1 second');});
($ret, $out, $err) = $node->psql('app', q{
	LISTEN durable_workflow_closed;
	SELECT pg_sleep(1.5);
	SELECT durable.tick() > 0;
	SELECT 1;});
like($out, qr/"workflowId":"n-3b","runId":"[-0-9a-f]+","status":"timed_out"/,
	'ALTER DATABASE SET: a run timeout fired by tick() notifies');

# 7. Which calls sleep without an xmin.  The waiting call must be the statement
# itself with constants or parameters as arguments: then nothing of the
# statement runs after it with the statement's snapshot.
$node->safe_psql('app', q{
	ALTER DATABASE app RESET durable.notify_workflow_closed;
	CREATE TABLE items (id int PRIMARY KEY, note text);
	INSERT INTO items VALUES (1, 'kept by the snapshot');
	CREATE FUNCTION workflow_named(id text) RETURNS text
		LANGUAGE plpgsql AS $$ BEGIN RETURN id; END $$;
	-- Waits for a workflow, then reads items with its caller's snapshot (a
	-- STABLE function takes no snapshot of its own).
	CREATE FUNCTION items_after_waiting(id text) RETURNS text
		LANGUAGE plpgsql STABLE AS $$
		DECLARE n bigint;
		BEGIN
			PERFORM durable.wait_workflow(id, wait => '300 seconds');
			SELECT count(*) INTO n FROM items;
			RAISE NOTICE 'items seen after the wait: %', n;
			RETURN 'nested-closed';
		END $$;
	GRANT durable_client TO CURRENT_USER;
	SELECT durable.start_workflow('t', NULL, id, 'q')
	  FROM unnest('{x-const,x-prep,x-ext,x-fn,x-sub,x-inner,nested-closed}'::text[]) id;
	SELECT durable.terminate_workflow('nested-closed');
	});

# A waiter's xmin while it sleeps, then its close wakes it.
sub xmin_while_waiting
{
	my ($name, $id, $start) = @_;
	$start->();
	my $xmin = xmin_of($name);
	$node->safe_psql('app', qq{SELECT durable.terminate_workflow('$id')});
	my $out = $lp->finish($name);
	if ($lp->session($name)->{pgbench})
	{
		like($out, qr{number of transactions actually processed: 1/1},
			"$name: woken by the close");
	}
	else
	{
		is($out, 'terminated', "$name: woken by the close");
	}
	return $xmin;
}

is(xmin_while_waiting('x_const', 'x-const', sub {
	start_waiter('x_const', q{
		SELECT durable.wait_workflow('x-const', 'default', NULL, '300 seconds')->>'status'});
	}), 'NULL', 'constant arguments: no xmin while it waits');

is(xmin_while_waiting('x_prep', 'x-prep', sub {
	start_waiter('x_prep', q{
		SET plan_cache_mode = force_generic_plan;
		PREPARE w(text, interval) AS SELECT durable.wait_workflow($1, wait => $2)->>'status';
		EXECUTE w('x-prep', '300 seconds');});
	}), 'NULL', 'EXECUTE of a generic plan, the arguments parameters: no xmin');

# The extended protocol, with a prepared statement's generic plan: pgbench -M prepared.
my $script = $node->basedir . '/wait.sql';
PostgreSQL::Test::Utils::append_to_file($script,
	"SELECT durable.wait_workflow(:id, wait => '300 seconds')->>'status';\n");
{
	local $ENV{PGOPTIONS} = '-c plan_cache_mode=force_generic_plan';
	is(xmin_while_waiting('x_ext', 'x-ext', sub {
		start_waiter('x_ext', [ 'pgbench', '-n', '-t', '1', '-M', 'prepared',
			'-D', 'id=x-ext', '-f', $script, $node->connstr('app') ]);
		$lp->session('x_ext')->{pgbench} = 1;
		}), 'NULL', 'the extended protocol, bind parameters: no xmin');
}

isnt(xmin_while_waiting('x_fn', 'x-fn', sub {
	start_waiter('x_fn', q{
		SELECT durable.wait_workflow(workflow_named('x-fn'), wait => '300 seconds')->>'status'});
	}), 'NULL', 'a function call as an argument: the xmin is kept');

isnt(xmin_while_waiting('x_sub', 'x-sub', sub {
	start_waiter('x_sub', q{
		SELECT durable.wait_workflow((SELECT 'x-sub'), wait => '300 seconds')->>'status'});
	}), 'NULL', 'a subquery as an argument: the xmin is kept');

# The function in the arguments waits itself, then reads items: the row deleted
# and vacuumed meanwhile is still in its snapshot, so VACUUM must not remove it.
start_waiter('x_nested', q{
	SELECT durable.wait_workflow(items_after_waiting('x-inner'))->>'status'});
isnt(xmin_of('x_nested'), 'NULL', 'the wait inside an argument keeps the xmin');
$node->safe_psql('app', q{DELETE FROM items});
$node->safe_psql('app', q{VACUUM items});
$node->safe_psql('app', q{SELECT durable.terminate_workflow('x-inner')});
is($lp->finish('x_nested'), 'terminated', 'the nested wait returns, then the outer call');
like($lp->session('x_nested')->{err}, qr/items seen after the wait: 1\b/,
	'the function reads the row of its snapshot (not 0 rows after VACUUM)');

$node->stop;
done_testing();

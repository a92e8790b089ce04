# The check of CREATE OR REPLACE FUNCTION and DROP FUNCTION of a function that running
# SQL workflows use (docs/sql-workflows.md "The check of CREATE OR REPLACE",
# durable.replay_check_on_replace in docs/configuration.md), through the ProcessUtility
# hook of a preloaded durable:
#
# 1. A replace that the running workflow still replays with is silent.
# 2. One that it does not replay with: a WARNING naming the type, the workflow, its run
#    and the event where they part, with a hint naming replay_check(); the replace is
#    done.
# 3. Under 'error' the replace is refused, and the old function still runs the workflow
#    to its end.
# 4. A replace of a function no workflow uses is silent, under 'error' too; so is a
#    replace where durable is not installed, or is older than 0.7.0.
# 5. DROP FUNCTION of the workflow's function: a WARNING, or under 'error' refused.
# 6. A role without the privileges of the role the type runs as: its code is not run as
#    that role; a WARNING says the runs were not checked.
# 7. Runs kept on the function by register_workflow(..., running => 'keep') count too:
#    a replace is checked against them, a drop warns or is refused with a hint naming
#    move_runs(); once they are moved the function may go.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('replace_guard');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = off
lc_messages = 'C'
});
$node->start;

# A workflow that runs an activity, then sleeps a day.
my $setup = q{
CREATE SCHEMA app;
GRANT USAGE ON SCHEMA app TO app;
CREATE FUNCTION app.echo(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT input $$;
CREATE FUNCTION app.flow(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM durable.activity('echo', '"a"');
    PERFORM durable.sleep('1 day');
    RETURN '"v1"';
END $$;
SELECT durable.register_activity('echo', 'app.echo(jsonb)', run_as => 'app');
SELECT durable.register_workflow('flow', 'app.flow(jsonb)', run_as => 'app');
SELECT durable.start_workflow('flow', NULL, 'flow-1') IS NOT NULL;
SELECT durable.run_tasks();
};
$node->safe_psql('postgres', q{
CREATE ROLE app;
CREATE EXTENSION durable;
ALTER DATABASE postgres SET durable.test_time = '2026-01-01 00:00:00+00';
});
$node->safe_psql('postgres', $setup);
is($node->safe_psql('postgres', q{SELECT durable.describe_workflow('flow-1')->>'status'}),
	'running', 'flow-1 sleeps');
my $run_id = $node->safe_psql('postgres', q{SELECT durable.resolve_run_id('flow-1')});

# Run SQL; its stderr (and whether it succeeded).
sub run_sql
{
	my ($db, $sql) = @_;
	my ($ret, $out, $err) = $node->psql($db, $sql, on_error_stop => 1);
	return ($ret, $out, $err);
}

my $same = q{
CREATE OR REPLACE FUNCTION app.flow(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
    day constant interval := '1 day';
BEGIN
    PERFORM durable.activity('echo', '"a"');
    PERFORM durable.sleep(day);
    RETURN '"v1"';
END $$;
};
my $diverging = q{
CREATE OR REPLACE FUNCTION app.flow(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    PERFORM durable.activity('audit', '"first"');
    PERFORM durable.activity('echo', '"a"');
    PERFORM durable.sleep('1 day');
    RETURN '"v2"';
END $$;
};

# 1. Compatible.
my ($ret, $out, $err) = run_sql('postgres', $same);
is($ret, 0, 'a replace the running workflow replays with succeeds');
is($err, '', 'and is silent');

# 2. Diverging, under the default 'warning'.
($ret, $out, $err) = run_sql('postgres', qq{
BEGIN;
$diverging
SELECT prosrc LIKE '%audit%' FROM pg_proc WHERE oid = 'app.flow(jsonb)'::regprocedure;
ROLLBACK;
});
is($ret, 0, 'a replace that parts from a running workflow succeeds under warning');
is($out, 't', 'the new code is in place');
like($err, qr/WARNING:  the new app\.flow\(jsonb\) does not replay workflow "flow-1" of type "flow"/,
	'a WARNING names the function, the workflow and its type');
like($err,
	qr/DETAIL:  Run \Q$run_id\E \(namespace "default", task queue "default"\) parts from its history at event 5: command 1 is activity echo in history, but the workflow issued activity audit\./,
	'its detail names the run and the event where it parts from its history');
like($err, qr/HINT:  SELECT \* FROM durable\.replay_check\('flow', 'app\.flow\(jsonb\)', 'default'\) shows every run; keep the old code for the running workflows with durable\.get_version\(\), or roll the change back\./,
	'its hint points to replay_check() and get_version()');

# 3. Under 'error': refused, the old function stays.
($ret, $out, $err) = run_sql('postgres', qq{
SET durable.replay_check_on_replace = 'error';
$diverging
});
isnt($ret, 0, 'under error the replace fails');
like($err, qr/ERROR:  the new app\.flow\(jsonb\) does not replay workflow "flow-1" of type "flow"/,
	'with the same message as an ERROR');
is($node->safe_psql('postgres', q{
	SELECT prosrc LIKE '%audit%' FROM pg_proc WHERE oid = 'app.flow(jsonb)'::regprocedure}),
	'f', 'and the old function is still there');

# 4. Other functions: silent.
($ret, $out, $err) = run_sql('postgres', q{
SET durable.replay_check_on_replace = 'error';
CREATE FUNCTION app.helper(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT input $$;
CREATE OR REPLACE FUNCTION app.helper(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT '1'::jsonb $$;
CREATE FUNCTION app.other(n int) RETURNS int LANGUAGE sql AS $$ SELECT n $$;
CREATE OR REPLACE FUNCTION app.other(n int) RETURNS int LANGUAGE sql AS $$ SELECT n + 1 $$;
CREATE OR REPLACE FUNCTION app.echo(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT input $$;
});
is($ret, 0, 'replaces of functions that no workflow runs with succeed under error');
is($err, '', 'silently (an activity\'s function included)');

# 5. DROP FUNCTION.
($ret, $out, $err) = run_sql('postgres', q{
SET durable.replay_check_on_replace = 'error';
DROP FUNCTION app.flow(jsonb);
});
isnt($ret, 0, 'under error a drop of the function of running workflows fails');
like($err, qr/ERROR:  cannot drop function app\.flow\(jsonb\): running workflows of type "flow" use it/,
	'naming the function and the type');
like($err, qr/DETAIL:  1 running workflows of type "flow" on task queue "default" in namespace "default" run with it\./,
	'and how many run with it');
($ret, $out, $err) = run_sql('postgres', q{
BEGIN;
DROP FUNCTION app.flow(jsonb);
ROLLBACK;
});
is($ret, 0, 'under warning the drop succeeds');
like($err, qr/WARNING:  dropped function app\.flow\(jsonb\), which running workflows of type "flow" use/,
	'with a WARNING');
like($err, qr/HINT:  Register the type to another function with durable\.register_workflow\(\)/,
	'whose hint says what to do');
($ret, $out, $err) = run_sql('postgres', q{
SET durable.replay_check_on_replace = 'error';
BEGIN;
DROP FUNCTION app.helper(jsonb), app.other(int);
ROLLBACK;
});
is($err, '', 'a drop of other functions is silent under error');

# 6. A role that may not run code as app: not checked.
($ret, $out, $err) = run_sql('postgres', qq{
CREATE ROLE dev IN ROLE durable_client;
BEGIN;
ALTER FUNCTION app.flow(jsonb) OWNER TO dev;
GRANT CREATE ON SCHEMA app TO dev;
SET LOCAL ROLE dev;
$diverging
ROLLBACK;
});
is($ret, 0, 'a replace by a role without the privileges of run_as succeeds');
unlike($err, qr/does not replay/, 'its code is not replayed as app');
like($err,
	qr/WARNING:  running workflows of type "flow" on task queue "default" in namespace "default" were not checked against the new app\.flow\(jsonb\)\nDETAIL:  Role "dev" has not the privileges of role "app", which the type runs as\./,
	'a WARNING says the runs were not checked, and why');

# 3, continued: the old function completes the workflow.
$node->safe_psql('postgres', q{
ALTER DATABASE postgres SET durable.test_time = '2026-01-02 00:00:00+00'});
is($node->safe_psql('postgres', q{
	SELECT durable.tick() + durable.run_tasks();
	SELECT format('%s %s', d->>'status', d->'result') FROM durable.describe_workflow('flow-1') d}),
	"2\ncompleted \"v1\"", 'flow-1 completes on the old function');

# 7. Kept runs.
$node->safe_psql('postgres', q{
CREATE FUNCTION app.flow_v2(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT '"v2"'::jsonb $$;
SELECT durable.start_workflow('flow', NULL, 'flow-2') IS NOT NULL;
SELECT durable.run_tasks();
SELECT durable.register_workflow('flow', 'app.flow_v2(jsonb)', run_as => 'app', running => 'keep');
});
my $run2 = $node->safe_psql('postgres', q{SELECT durable.resolve_run_id('flow-2')});
($ret, $out, $err) = run_sql('postgres', qq{
BEGIN;
$diverging
ROLLBACK;
});
like($err,
	qr/WARNING:  the new app\.flow\(jsonb\) does not replay workflow "flow-2" of type "flow"\nDETAIL:  Run \Q$run2\E .* parts from its history at event 5: .*\. They are kept on it by a registration of the type to another function with running => 'keep'\./,
	'a replace of the function that kept runs use replays them');
($ret, $out, $err) = run_sql('postgres', q{
SET durable.replay_check_on_replace = 'error';
DROP FUNCTION app.flow(jsonb);
});
like($err, qr/ERROR:  cannot drop function app\.flow\(jsonb\): running workflows of type "flow" use it\nDETAIL:  1 running workflows of type "flow" on task queue "default" in namespace "default" are kept on it/,
	'under error, a drop of the function that kept runs use is refused');
like($err, qr/HINT:  Move them to the type's registered function first with SELECT durable\.move_runs\('flow', 'app\.flow\(jsonb\)', namespace => 'default'\)/,
	'with a hint naming move_runs()');
my $oid = $node->safe_psql('postgres', q{SELECT 'app.flow(jsonb)'::regprocedure::oid});
($ret, $out, $err) = run_sql('postgres', q{
BEGIN;
DROP FUNCTION app.flow(jsonb);
ROLLBACK;
});
like($err, qr/WARNING:  dropped function app\.flow\(jsonb\), which running workflows of type "flow" use\n.*\nHINT:  Move them to the type's registered function with SELECT durable\.move_runs\('flow', '$oid', namespace => 'default'\)/,
	'under warning, a WARNING whose hint names move_runs() with the function\'s oid');
($ret, $out, $err) = run_sql('postgres', q{
SET durable.replay_check_on_replace = 'error';
SELECT durable.move_runs('flow', 'app.flow(jsonb)');
DROP FUNCTION app.flow(jsonb);
});
is($ret . $out . $err, '01', 'once they are moved, the function may go');

# 4, continued: no durable, or durable 0.6.0: nothing is checked.
$node->safe_psql('postgres', 'CREATE DATABASE plain');
($ret, $out, $err) = run_sql('plain', qq{
SET durable.replay_check_on_replace = 'error';
CREATE SCHEMA app;
CREATE FUNCTION app.flow(input jsonb) RETURNS jsonb LANGUAGE sql AS \$\$ SELECT input \$\$;
$diverging
});
is($ret . $err, '0', 'without durable, a replace is not checked');
$node->safe_psql('postgres', 'CREATE DATABASE old');
$node->safe_psql('old', q{
CREATE EXTENSION durable VERSION '0.6.0';
ALTER DATABASE old SET durable.test_time = '2026-01-01 00:00:00+00';
});
$node->safe_psql('old', $setup);
($ret, $out, $err) = run_sql('old', qq{
SET durable.replay_check_on_replace = 'error';
$diverging
DROP FUNCTION app.flow(jsonb);
});
is($ret . $err, '0', 'with durable 0.6.0, a replace and a drop are not checked');

done_testing();

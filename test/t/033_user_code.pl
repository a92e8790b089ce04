# User code in the executor workers (docs/privileges.md "Privileges": what user code
# runs as).
#
# 1. Superuser from a SQL activity: with the role setup of examples/subscription.sql,
#    an activity defines mallory.=(uuid, uuid) and runs set_config('search_path',
#    'mallory, pg_catalog', false).  The executor runs as the bootstrap superuser; the
#    setting used to survive the activity, the executor's kept plans were replanned
#    under it, and mallory's operator ran as superuser: rolsuper = t.  Now the setting
#    ends with the activity, the engine's statements search only pg_catalog, and the
#    next activity sees the role's search_path again.
# 2. A failed SQL activity and a failed workflow function are in the server log (LOG),
#    one line and its DETAIL each, not only in durable.activity_attempts.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('user_code');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = on
durable.worker_max_sleep = 1
durable.executor_workers = 1
max_worker_processes = 16
lc_messages = 'C'
});
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION durable;
CREATE ROLE mallory LOGIN;
GRANT durable_worker, durable_client TO mallory;
CREATE SCHEMA mallory AUTHORIZATION mallory;
});
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'durable executor'}),
	'the executor runs');

# Loaded by mallory, as examples/subscription.sql is by its role.
$node->safe_psql('postgres', q{
SET ROLE mallory;
-- Counts the calls of the operator made as a superuser (a sequence is not rolled back).
CREATE SEQUENCE mallory.ran_as_superuser;
CREATE TABLE mallory.callers (who text, superuser boolean);
CREATE FUNCTION mallory.uuid_eq(a uuid, b uuid) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        PERFORM pg_catalog.nextval('mallory.ran_as_superuser');
        INSERT INTO mallory.callers VALUES (current_user, true);
        ALTER ROLE mallory SUPERUSER;
    END IF;
    RETURN a OPERATOR(pg_catalog.=) b;
END $$;
CREATE OPERATOR mallory.= (LEFTARG = uuid, RIGHTARG = uuid, FUNCTION = mallory.uuid_eq);
CREATE FUNCTION mallory.attack(input jsonb) RETURNS jsonb LANGUAGE sql AS $$
    SELECT to_jsonb(set_config('search_path', 'mallory, pg_catalog', false)) $$;
CREATE FUNCTION mallory.look(input jsonb) RETURNS jsonb LANGUAGE sql AS $$
    SELECT to_jsonb(current_setting('search_path')) $$;
CREATE FUNCTION mallory.boom(input jsonb) RETURNS jsonb LANGUAGE sql AS $$
    SELECT to_jsonb(1 / 0) $$;
CREATE FUNCTION mallory.flow(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    IF input ? 'fail' THEN
        RAISE EXCEPTION 'the workflow gives up' USING DETAIL = 'It was asked to.';
    END IF;
    IF input ? 'boom' THEN
        RETURN durable.activity('boom', NULL, '{"retryPolicy": {"initialIntervalInSeconds": 1, "maximumAttempts": 1}}');
    END IF;
    PERFORM durable.activity('attack');
    PERFORM durable.sleep('1 second');
    PERFORM durable.activity('attack');
    RETURN durable.activity('look');
END $$;
SELECT durable.register_workflow('mflow', 'mallory.flow(jsonb)', 'mallory');
SELECT durable.register_activity(a, ('mallory.' || a || '(jsonb)')::regprocedure, 'mallory')
  FROM unnest('{attack,look,boom}'::text[]) a;
});

# 1. The attack.
$node->safe_psql('postgres', q{
	SET ROLE mallory;
	SELECT durable.start_workflow('mflow', NULL, 'attack', 'mallory')});
ok($node->poll_query_until('postgres', q{
	SELECT durable.describe_workflow('attack')->>'status' <> 'running'}),
	'the attacking workflow ends');
is($node->safe_psql('postgres', q{
	SELECT (durable.describe_workflow('attack')->>'status') || ' '
	    || (durable.describe_workflow('attack')->>'result')}),
	'completed "$user", public, pg_temp',
	'it completed, and its last activity saw the role\'s search_path, not the one the attack set');
is($node->safe_psql('postgres', q{
	SELECT is_called FROM mallory.ran_as_superuser}), 'f',
	'the executor never ran mallory\'s operator as a superuser');
is($node->safe_psql('postgres', q{
	SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory'}), 'f',
	'mallory is no superuser');

# 2. Failures in the server log.
my $offset = -s $node->logfile;
$node->safe_psql('postgres', q{
	SET ROLE mallory;
	SELECT durable.start_workflow('mflow', '{"boom": true}', 'boom', 'mallory');
	SELECT durable.start_workflow('mflow', '{"fail": true}', 'fail', 'mallory')});
$node->wait_for_log(
	qr/LOG:  durable activity "boom" of workflow "boom" failed: division by zero\n.*DETAIL:  Reason 22012; attempt 1 of activity 5 of run [0-9a-f-]{36}, namespace "default", task queue "mallory", run as role "mallory"\./,
	$offset);
pass('a failed SQL activity is logged');
$node->wait_for_log(
	qr/LOG:  durable workflow "mflow" of workflow "fail" failed: the workflow gives up\n.*DETAIL:  Reason P0001; decision task of run [0-9a-f-]{36}, namespace "default", task queue "mallory", run as role "mallory"\. It was asked to\./,
	$offset);
pass('a failed workflow function is logged');

# The executors keep the tables they write open for a transaction, its
# subtransactions (user code, failed decision tasks) included, and close them
# at commit (src/store/direct.c): nothing is ever reported leaked.
unlike(slurp_file($node->logfile), qr/reference leak|refcount leak/,
	'no relation, tuple descriptor or snapshot reported leaked');
$node->stop;
done_testing();

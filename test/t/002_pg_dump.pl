# pg_dump keeps workflows: a dump of a database with running and closed
# workflows restores into a new database with every run, event, timer and
# ready task, and the engine carries on there.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('dump');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'durable'");
$node->start;

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', q{
    CREATE EXTENSION durable;
    SET durable.test_time = '2026-05-01 00:00:00+00';
    INSERT INTO durable.namespaces (name, retention) VALUES ('billing', '30 days');
    SELECT durable.start_workflow('order', '{"n": 1}', 'running-1');
    SELECT durable.signal_workflow('running-1', 'paid', '{"amount": 10}');
    SELECT durable.start_workflow('order', NULL, 'delayed-1', delay => '1 hour');
    SELECT durable.start_workflow('order', NULL, 'done-1', namespace => 'billing',
                                  retry_policy => durable.retry_policy('1s', maximum_attempts => 3));
    SELECT durable.terminate_workflow('done-1', 'finished', '{"ok": true}', 'billing');
    SELECT durable.start_workflow('order', NULL, 'slow-1', run_timeout => '1 minute');
    SET durable.test_time = '2026-05-01 00:01:00+00';
    SELECT durable.tick();
    SELECT durable.cancel_workflow('running-1', 'please stop');
    CREATE ROLE dump_app;
    SELECT durable.grant_namespace('billing', 'dump_app', 'client');
    SELECT durable.grant_namespace('default', 'dump_app', 'worker');
});

# A canonical text of everything the engine keeps.
my $state_sql = q{
    SELECT string_agg(t, E'\n' ORDER BY t) FROM (
        SELECT 'ns ' || name || ' ' || retention || ' ' || activity_retry_policy::text
               || ' ' || owner::text AS t FROM durable.namespaces
        UNION ALL SELECT 'grant ' || namespace || ' ' || grantee::text || ' ' || privilege
          FROM durable.namespace_grants
        UNION ALL SELECT 'run ' || row_to_json(r)::text FROM durable.runs r
        UNION ALL SELECT 'event ' || row_to_json(h)::text FROM durable.history h
        UNION ALL SELECT 'timer ' || kind || ' ' || due_at || ' ' || run_id FROM durable.timers
        UNION ALL SELECT 'ready ' || kind::text || ' ' || run_id || ' ' || scheduled_event_id FROM durable.ready_tasks
    ) s
};
my $before = $node->safe_psql('src', $state_sql);
like($before, qr/"status":"terminated"/, 'source has a terminated run');
like($before, qr/"status":"timed_out"/, 'source has a timed-out run');
like($before, qr/timer first_decision/, 'source has a pending timer');

my $dump = $node->basedir . '/src.dump';
$node->command_ok(
    [ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('src') ],
    'pg_dump of a database with workflows');
$node->safe_psql('postgres', 'CREATE DATABASE dst');
$node->command_ok(
    [ 'pg_restore', '--exit-on-error', '-d', $node->connstr('dst'), $dump ],
    'pg_restore into a new database');

my $after = $node->safe_psql('dst', $state_sql);
like($before, qr/grant billing dump_app client/, 'source has a namespace grant');
is($after, $before,
	'runs, history, timers, ready tasks, namespaces and their grants survive the round trip');
is($node->safe_psql('dst', q{SELECT count(*) FROM durable.namespaces WHERE name = 'default'}),
    '1', 'the default namespace exists once');

# The engine carries on in the restored database.
$node->safe_psql('dst', q{
    SET durable.test_time = '2026-05-01 01:00:00+00';
    SELECT durable.tick();
    SELECT durable.start_workflow('order', NULL, 'new-1');
    SELECT durable.start_workflow('order', NULL, 'done-1', namespace => 'billing');
});
is($node->safe_psql('dst', q{
    SELECT string_agg(event_type, ',' ORDER BY event_id) FROM durable.get_history('delayed-1')}),
    'WorkflowExecutionStarted,DecisionTaskScheduled',
    'a restored timer fires');
is($node->safe_psql('dst', q{
    SELECT count(DISTINCT run_seq) = count(*) FROM durable.runs}),
    't', 'run sequence restored: new runs do not collide');
is($node->safe_psql('dst', q{
    SELECT max(event_id) FROM durable.get_history('running-1')}),
    '4', 'history of the restored running workflow is intact');
$node->safe_psql('dst', q{SELECT durable.signal_workflow('running-1', 'again')});
is($node->safe_psql('dst', q{
    SELECT event_type FROM durable.get_history('running-1') ORDER BY event_id DESC LIMIT 1}),
    'WorkflowExecutionSignaled', 'a restored running workflow takes signals');

$node->stop;
done_testing();

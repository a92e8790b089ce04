# A history larger than shared_buffers read by a decision poll.  With
# shared_buffers = 128kB (16 pages), the pages a history scan has passed are
# evicted and reused while it goes on: every value read from one must have been
# copied.  A run gets 400 signals of ~650 bytes (inline, uncompressed jsonb),
# each with distinct content; the decision task's history must hold each signal's
# input exactly as sent, and the server must not crash.  Then a SQL workflow
# replays the same history (durable.run_tasks) and sees every signal intact too.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('small_buffers');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_buffers = 128kB
max_connections = 20
# Nothing else competes for the 16 buffers.
autovacuum = off
});
$node->start;
is($node->safe_psql('postgres', 'SHOW shared_buffers'), '128kB', 'shared_buffers is 128kB');

$node->safe_psql('postgres', q{
CREATE EXTENSION durable;
-- The input of signal i: about 650 bytes, distinct for each i.
CREATE FUNCTION sig(i int) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_build_object('i', i, 'pad',
        (SELECT string_agg(md5(i || ':' || k), '') FROM generate_series(1, 19) k)) $$;
SELECT durable.start_workflow('ext', NULL, 'many', 'many');
});
# One transaction a signal, as clients send them.
$node->safe_psql('postgres',
	join('', map { "SELECT durable.signal_workflow('many', 's', sig($_));\n" } 1 .. 400));
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM durable.get_history('many') WHERE event_type = 'WorkflowExecutionSignaled'}),
	'400', '400 signals are in history');

my $log_offset = -s $node->logfile;
# The poll and the checks in one statement: the task is not stored (a table of it
# would need more of the 16 buffers than the test is about).
my ($ret, $out, $err) = $node->psql('postgres', q{
	WITH task AS MATERIALIZED (SELECT durable.poll_decision_task('many') AS t),
	signals AS (
		SELECT e->'attributes'->'input' AS input,
		       row_number() OVER (ORDER BY (e->>'eventId')::int) AS n
		  FROM task, jsonb_array_elements(t->'history') e
		 WHERE e->>'eventType' = 'WorkflowExecutionSignaled')
	SELECT (SELECT count(*) || ' ' || count(*) FILTER (WHERE input = sig(n::int)) FROM signals)
	    -- the statement's snapshot does not see the DecisionTaskStarted the poll wrote
	    || ' ' || ((SELECT jsonb_agg(e ORDER BY (e->>'eventId')::int)
	                  FROM task, jsonb_array_elements(t->'history') e
	                 WHERE (e->>'eventId')::int < (t->>'startedEventId')::int) =
	               (SELECT jsonb_agg(jsonb_build_object('eventId', event_id, 'eventTime', event_time,
	                                                    'eventType', event_type, 'attributes', attributes)
	                                 ORDER BY event_id)
	                  FROM durable.get_history('many')))});
is($ret, 0, 'the decision poll succeeds') or diag($err);
is($out, '400 400 true',
	'the task has the 400 signals, each with the input sent, and is the history get_history reads');

# A SQL workflow that waits for 400 signals and returns how many were intact;
# every decision task replays the whole history through the same scan.
$node->safe_psql('postgres', q{
CREATE ROLE app_role;
CREATE FUNCTION count_signals(input jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
    intact int := 0;
    s jsonb;
BEGIN
    FOR i IN 1..400 LOOP
        s := durable.wait_signal('s');
        IF s = (SELECT jsonb_build_object('i', i, 'pad',
                   (SELECT string_agg(md5(i || ':' || k), '') FROM generate_series(1, 19) k))) THEN
            intact := intact + 1;
        END IF;
    END LOOP;
    RETURN to_jsonb(intact);
END $$;
GRANT EXECUTE ON FUNCTION count_signals(jsonb) TO app_role;
SELECT durable.register_workflow('count_signals', 'count_signals(jsonb)', run_as => 'app_role');
SELECT durable.start_workflow('count_signals', NULL, 'replayed');
});
$node->safe_psql('postgres', 'SELECT durable.run_tasks()');
$node->safe_psql('postgres',
	join('', map { "SELECT durable.signal_workflow('replayed', 's', sig($_));\n" } 1 .. 400));
$node->safe_psql('postgres', 'SELECT durable.run_tasks()');
is($node->safe_psql('postgres', q{
	SELECT durable.describe_workflow('replayed')->>'status'
	    || ' ' || (durable.describe_workflow('replayed')->>'result')}),
	'completed 400', 'a SQL workflow replaying that history sees the 400 signals intact');

my $log = slurp_file($node->logfile, $log_offset);
unlike($log, qr/terminated by signal|PANIC|TRAP:/, 'the server did not crash');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server is up');

$node->stop;
done_testing();

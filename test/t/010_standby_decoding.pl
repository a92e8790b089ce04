# What a statement does that durable's direct writes (src/store/direct.c) must do too,
# where it needs server settings: on a hot standby every durable function that
# writes is refused with 25006, before it touches anything, while the readers
# work; and logical decoding sees the rows durable writes without the executor
# (history, ready tasks, the run's row), since it reads the heap's WAL.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 'logical');
$primary->append_conf('postgresql.conf', "shared_preload_libraries = 'durable'");
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION durable');

# Logical decoding of the direct writes.
$primary->safe_psql('postgres',
    "SELECT pg_create_logical_replication_slot('s', 'test_decoding')");
$primary->safe_psql('postgres',
    "SELECT durable.start_workflow('t', workflow_id => 'w', task_queue => 'q')");
$primary->safe_psql('postgres', "SELECT durable.poll_decision_task('q')");
my $changes = $primary->safe_psql('postgres',
    "SELECT string_agg(data, E'\\n') FROM pg_logical_slot_get_changes('s', NULL, NULL)");
like($changes, qr/table durable\.history: INSERT: .*event_type\[text\]:'DecisionTaskStarted'/,
    'a history event written directly is decoded');
like($changes, qr/table durable\.ready_tasks: INSERT: /, 'a ready task written directly is decoded');
like($changes, qr/table durable\.ready_tasks: DELETE: /, 'and its claim');
like($changes, qr/table durable\.runs: UPDATE: .*decision_started_id\[bigint\]:3/,
    'an update of the run written directly is decoded');
$primary->safe_psql('postgres', "SELECT pg_drop_replication_slot('s')");

# A hot standby.
$primary->safe_psql('postgres',
    "SELECT durable.start_workflow('t', workflow_id => 'w2', task_queue => 'q')");
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->start;
$primary->wait_for_catchup($standby);

my @writers = (
    ["durable.start_workflow('t', workflow_id => 'x')", 'durable.start_workflow()'],
    ["durable.signal_workflow('w2', 's')", 'durable.signal_workflow()'],
    ["durable.poll_decision_task('q')", 'durable.poll_decision_task()'],
    ["durable.poll_decision_task('q', wait => '1 hour')", 'durable.poll_decision_task()'],
    ["durable.poll_activity_task('q')", 'durable.poll_activity_task()'],
    ["durable.tick()", 'durable.tick()'],
    ["durable.purge()", 'durable.purge()'],
    ["durable.run_tasks()", 'durable.run_tasks()'],
    ["durable.create_namespace('n')", 'durable.create_namespace()'],
);
foreach my $w (@writers)
{
    my ($ret, $out, $err) = $standby->psql('postgres',
        "\\set VERBOSITY verbose\nSELECT $w->[0]");
    like($err, qr/ERROR:  25006: cannot execute \Q$w->[1]\E in a read-only transaction/,
        "on a standby $w->[0] is refused with 25006");
}
is($standby->safe_psql('postgres', "SELECT durable.describe_workflow('w2')->>'status'"),
    'running', 'describe_workflow works on a standby');
is($standby->safe_psql('postgres', "SELECT count(*) FROM durable.get_history('w2')"),
    '2', 'get_history works on a standby');
unlike(slurp_file($standby->logfile), qr/TRAP:|PANIC:/, 'no crash on the standby');

$standby->stop;
$primary->stop;
done_testing();

# The timer worker's low-water mark of due times (src/store/due_mark.c, docs/performance.md
# "A held vacuum horizon").
#
# While a REPEATABLE READ session holds its snapshot, the index entries of
# timers deleted before they were due stay in timers_due.  The worker's rounds
# must not walk them again and again, and no timer may be passed over on the
# way: one written below the mark by a transaction still in progress while the
# worker goes round, the same in a prepared transaction, one committed below
# it, and one written by something else than durable (a restore), which the
# worker's walk from the beginning (durable.timer_full_scan_interval) finds,
# and one restored by COPY.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('primary');
$node->init;
# The walk from the beginning is put off for an hour, so that a timer found
# below here was found through the mark.
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = on
durable.timer_full_scan_interval = 3600
max_prepared_transactions = 4
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION durable');

# The worker is up once a delayed start is fired by it.
my $kicks = 0;

# Make the worker go round once: a workflow started with a short delay on
# queue kick, whose first decision task the worker schedules; claimed here.
sub kick
{
	$kicks++;
	$node->safe_psql('postgres',
		"SELECT durable.start_workflow('t', NULL, 'kick-$kicks', 'kick', delay => '10 ms')");
	return wait_task('kick', 20) eq "kick-$kicks";
}

# The workflow id of a decision task of queue q, waiting up to secs seconds for
# the worker to schedule one; '' if none came.  The workflow is terminated, so
# that its decision task does not time out and come back.
sub wait_task
{
	my ($q, $secs) = @_;
	my $id = $node->safe_psql('postgres',
		"SELECT coalesce(durable.poll_decision_task('$q', 'w', wait => '$secs s')->>'workflowId', '')");
	$node->safe_psql('postgres', "SELECT durable.terminate_workflow('$id')")
	  if $id ne '';
	return $id;
}

ok(kick(), 'the timer worker fires a delayed start');

# timers_due's scans and entries read so far, by every backend and worker.
sub due_index_reads
{
	# Backends flush their statistics at most once a second; the worker after
	# a round: wait, and make it go round once more.
	usleep(1_100_000);
	kick();
	usleep(1_100_000);
	my ($scans, $reads) = split /\|/, $node->safe_psql('postgres', q{
		SELECT pg_stat_clear_snapshot();
		SELECT idx_scan, idx_tup_read FROM pg_stat_user_indexes
		 WHERE schemaname = 'durable' AND indexrelname = 'timers_due'});
	return ($scans, $reads);
}

# 1. Under a held horizon, 1,000 timers due in the past are deleted before
# they fire (their workflows are terminated).  Their entries stay.  The first
# round walks them once; the rounds after it read a few entries a scan.
my $holder = $node->background_psql('postgres');
$holder->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$holder->query_safe('SELECT count(*) FROM durable.timers');

$node->safe_psql('postgres', q{
	BEGIN;
	SET LOCAL durable.test_time = '2001-01-01 00:00:00+00';
	SELECT count(durable.start_workflow('t', NULL, 'dead-' || i, 'dead', delay => '1 hour'))
	  FROM generate_series(1, 1000) i;
	COMMIT;
	SELECT count(durable.terminate_workflow('dead-' || i)) FROM generate_series(1, 1000) i;
});
is($node->safe_psql('postgres', q{SELECT count(*) FROM durable.timers t
	JOIN durable.runs r USING (run_id) WHERE r.workflow_id LIKE 'dead-%'}), '0',
	'the 1,000 timers are deleted');
ok(kick(), 'a round walks past them');
my ($scans0, $reads0) = due_index_reads();
ok(kick(), "round $_") for 1 .. 10;
my ($scans1, $reads1) = due_index_reads();
cmp_ok($scans1 - $scans0, '>=', 10, 'the rounds scanned timers_due');
cmp_ok(($reads1 - $reads0) / ($scans1 - $scans0), '<', 50,
	'a scan reads a few entries, not the 1,000 dead ones');

# 2. A timer due in the past (below the mark), written by a transaction that
# stays open while the worker goes round: fired once it commits.
my $writer = $node->background_psql('postgres');
$writer->query_safe('BEGIN');
$writer->query_safe(q{SET LOCAL durable.test_time = '2001-01-01 00:00:00+00'});
$writer->query_safe(q{SELECT durable.start_workflow('t', NULL, 'open-writer', 'late', delay => '1 second')});
ok(kick(), "round $_ while the writer is open") for 1 .. 3;
$writer->query_safe('COMMIT');
is(wait_task('late', 20), 'open-writer',
	'the timer of a transaction open during the rounds fires after its commit');

# 3. The same in a prepared transaction, committed from another session after
# the worker went round.
$writer->query_safe('BEGIN');
$writer->query_safe(q{SET LOCAL durable.test_time = '2001-01-01 00:00:00+00'});
$writer->query_safe(q{SELECT durable.start_workflow('t', NULL, 'prepared-writer', 'late', delay => '1 second')});
$writer->query_safe(q{PREPARE TRANSACTION 'due_mark'});
ok(kick(), "round $_ while it is prepared") for 1 .. 3;
$node->safe_psql('postgres', q{COMMIT PREPARED 'due_mark'});
is(wait_task('late', 20), 'prepared-writer',
	'the timer of a prepared transaction fires after COMMIT PREPARED');
ok(kick(), 'with no transaction prepared any more, the worker goes on');

# 4. A timer committed below the mark, after the rounds moved it.
$node->safe_psql('postgres', q{
	BEGIN;
	SET LOCAL durable.test_time = '2001-01-01 00:00:00+00';
	SELECT durable.start_workflow('t', NULL, 'committed-below', 'late', delay => '1 second');
	COMMIT;
});
is(wait_task('late', 20), 'committed-below', 'a timer committed below the mark fires');

# 5. A restore (pg_restore writes durable.timers with COPY) after the rounds
# moved the mark: a restored timer due in the past fires at once.
my $copy = $node->basedir . '/timers.copy';
$node->safe_psql('postgres', q{
	SELECT durable.start_workflow('t', NULL, 'copied', 'late', delay => '1 day')});
$node->safe_psql('postgres', qq{
	COPY (SELECT run_id, kind, ref_id, '2001-01-01 00:00:00+00'::timestamptz, attempt, payload
	        FROM durable.timers WHERE run_id =
	             (SELECT run_id FROM durable.runs WHERE workflow_id = 'copied'))
	  TO '$copy';
	DELETE FROM durable.timers
	 WHERE run_id = (SELECT run_id FROM durable.runs WHERE workflow_id = 'copied');
});
ok(kick(), 'a round');
$node->safe_psql('postgres',
	"COPY durable.timers (run_id, kind, ref_id, due_at, attempt, payload) FROM '$copy'");
is(wait_task('late', 20), 'copied', 'a timer restored with COPY fires');

# 6. A timer row that durable did not write and no COPY brought (an UPDATE by
# hand) is found by the walk from the beginning.
$node->safe_psql('postgres', q{
	SELECT durable.start_workflow('t', NULL, 'restored', 'late', delay => '1 day')});
ok(kick(), 'a round');
$node->safe_psql('postgres', q{
	UPDATE durable.timers SET due_at = '2001-01-01 00:00:00+00'
	 WHERE run_id = (SELECT run_id FROM durable.runs WHERE workflow_id = 'restored')});
$node->safe_psql('postgres', q{
	ALTER SYSTEM SET durable.timer_full_scan_interval = 1; SELECT pg_reload_conf()});
ok(kick(), 'a round after the reload');
is(wait_task('late', 30), 'restored',
	'a timer row written outside durable fires after a walk from the beginning');

$holder->query_safe('COMMIT');
$holder->quit;
$writer->quit;

# Nothing fired twice: each late workflow got one decision task.
is($node->safe_psql('postgres', q{SELECT count(*) FROM durable.ready_tasks}), '0',
	'no task is left over');
$node->stop;
done_testing();

# A batch operation survives an immediate restart (docs/operations.md "Batch
# operations"): the timer worker works through a terminate of a few thousand
# runs a slice per transaction; the server is stopped in immediate mode
# mid-way, with a slice under way; after the restart the worker goes on from
# the position of the last slice committed, and every run is terminated
# exactly once (a second terminate of a run would count as skipped, and write
# a second event).  Then a run kept locked by another session: the worker
# waits a second at most for it, records its error and goes on.  Last, the
# worker purges a finished job past its namespace's retention.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use IPC::Run;
use Test::More;

my $runs = 4000;

my $node = PostgreSQL::Test::Cluster->new('batch');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = on
durable.worker_max_sleep = 1
});
$node->start;

$node->safe_psql('postgres', qq{
CREATE EXTENSION durable;
CREATE ROLE ops LOGIN IN ROLE durable_client;
SELECT durable.create_namespace('bulk');
SELECT durable.grant_namespace('bulk', 'ops', 'client');
SELECT durable.start_workflow('job', NULL, 'w-' || i, 'q', 'bulk') FROM generate_series(1, $runs) i;
SELECT durable.start_workflow('other', NULL, 'o-' || i, 'q', 'bulk') FROM generate_series(1, 10) i;
});

is($node->safe_psql('postgres', q{
	SET ROLE ops;
	SELECT durable.preview_batch('terminate', 'bulk', status => 'running', workflow_type => 'job',
	                             reason => 'bad release')}),
	$runs, 'the dry run counts the runs');
my $batch = $node->safe_psql('postgres', q{
	SET ROLE ops;
	SELECT durable.start_batch('terminate', 'bulk', status => 'running', workflow_type => 'job',
	                           reason => 'bad release')});

# The worker is under way: some slices committed, not all.
ok($node->poll_query_until('postgres', qq{
	SELECT touched >= 400 FROM durable.batches WHERE batch_id = '$batch'}),
	'the timer worker works through the batch');
my $before = $node->safe_psql('postgres', qq{
	SELECT touched FROM durable.batches WHERE batch_id = '$batch'});
$node->stop('immediate');
cmp_ok($before, '<', $runs, "stopped mid-way, after $before runs");
$node->start;

ok($node->poll_query_until('postgres', qq{
	SELECT state = 'completed' FROM durable.batches WHERE batch_id = '$batch'}),
	'the batch resumes and completes after the restart');
is($node->safe_psql('postgres', qq{
	SELECT touched || '/' || skipped || '/' || failed || '/' || total
	  FROM durable.batches WHERE batch_id = '$batch'}),
	"$runs/0/0/$runs", 'every run touched once: none skipped, none failed');
is($node->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE n = 1) || '/' || count(*) FILTER (WHERE n <> 1)
	  FROM (SELECT r.run_id, count(h.event_id) AS n FROM durable.runs r
	          LEFT JOIN durable.history h ON h.run_id = r.run_id
	           AND h.event_type = 'WorkflowExecutionTerminated'
	         WHERE r.workflow_type = 'job' GROUP BY r.run_id) c}),
	"$runs/0", 'each run has exactly one WorkflowExecutionTerminated');
is($node->safe_psql('postgres', q{
	SELECT string_agg(DISTINCT attributes->>'identity' || ':' || (attributes->>'reason'), ',')
	  FROM durable.history WHERE event_type = 'WorkflowExecutionTerminated'}),
	'ops:bad release', 'as the role that started the batch, with its reason');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM durable.runs WHERE workflow_type = 'other' AND status = 'running'}),
	'10', 'the runs the filter does not match are untouched');

# A run locked elsewhere for longer than the worker waits (a second).
$node->safe_psql('postgres', q{
	SELECT durable.start_workflow('locked', NULL, 'l-' || i, 'q', 'bulk') FROM generate_series(1, 5) i});
my ($in, $out, $err) = ('', '', '');
my $holder = IPC::Run::start(
	[ 'psql', '-X', '-q', '-A', '-t', '-d', $node->connstr('postgres') . ' application_name=holder',
	  '-c', q{SELECT 1 FROM durable.runs WHERE workflow_id = 'l-3' FOR UPDATE; SELECT pg_sleep(120)} ],
	'<', \$in, '>', \$out, '2>', \$err);
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'holder'
	   AND query LIKE '%pg_sleep%' AND state = 'active'}), 'another session locks the run of l-3');
my $locked = $node->safe_psql('postgres', q{
	SET ROLE ops;
	SELECT durable.start_batch('terminate', 'bulk', workflow_type => 'locked', reason => 'locked')});
ok($node->poll_query_until('postgres', qq{
	SELECT state = 'completed' FROM durable.batches WHERE batch_id = '$locked'}),
	'the batch completes while the run is locked');
is($node->safe_psql('postgres', qq{
	SELECT touched || '/' || failed || ' ' || (SELECT string_agg(workflow_id || ':' || sqlstate, ',')
	                                             FROM durable.batch_errors WHERE batch_id = '$locked')
	  FROM durable.batches WHERE batch_id = '$locked'}),
	'4/1 l-3:55P03', 'the locked run failed with a lock timeout, the others were terminated');
$node->safe_psql('postgres', q{
	SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'holder'});
eval { $holder->finish; };

# Retention (docs/operations.md "Batch operations"): the timer worker's purge, which
# runs as it starts and then every minute, removes a finished job closed longer ago
# than its namespace's retention (bulk: 7 days), with its errors, and keeps the
# others.  The job of the locked run is made to have closed 8 days ago.
my $first = $node->safe_psql('postgres', qq{
	SELECT batch_id FROM durable.batch_jobs WHERE batch_id <> '$locked'});
$node->safe_psql('postgres', qq{
	UPDATE durable.batch_jobs SET close_time = now() - interval '8 days'
	 WHERE batch_id = '$locked'});
$node->restart;
ok($node->poll_query_until('postgres', qq{
	SELECT count(*) = 0 FROM durable.batch_jobs WHERE batch_id = '$locked'}),
	'the timer worker purges the job closed 8 days ago');
is($node->safe_psql('postgres', qq{
	SELECT count(*) FROM durable.batch_job_errors WHERE batch_id = '$locked'}),
	'0', 'with its error');
is($node->safe_psql('postgres', q{SELECT string_agg(batch_id::text, ',') FROM durable.batch_jobs}),
	$first, 'the job closed today is kept');

$node->stop;
done_testing();

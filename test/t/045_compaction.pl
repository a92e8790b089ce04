# The queue tables' indexes rebuilt after a held vacuum horizon (docs/performance.md "A
# held vacuum horizon", src/store/compaction.c).
#
# While a REPEATABLE READ session holds its snapshot, 30,000 queued tasks come
# and go: ready_tasks' index grows, and VACUUM never gives index pages back.
# The timer worker says in the log that the horizon is held, then that it
# moves again, and rebuilds the index, which shrinks; no task is lost.  The
# same growth without a held horizon is left alone (a queue whose indexes are
# large in its normal work is never rebuilt).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('primary');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = on
durable.compaction_interval = 2
autovacuum = off
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION durable');

# Queue n tasks (workflows started on queue q) and take them away again
# (terminated), 500 a transaction, each far shorter than the worker's
# interval between two looks (a transaction that runs through two looks holds
# the horizon).
sub churn
{
	my ($prefix, $n) = @_;
	my $sql = '';
	for (my $from = 1; $from <= $n; $from += 500)
	{
		my $to = $from + 499;
		$sql .= "SELECT count(durable.start_workflow('t', NULL, '$prefix-' || i, 'q'))"
		  . " FROM generate_series($from, $to) i;\n";
	}
	for (my $from = 1; $from <= $n; $from += 500)
	{
		my $to = $from + 499;
		$sql .= "SELECT count(durable.terminate_workflow('$prefix-' || i))"
		  . " FROM generate_series($from, $to) i;\n";
	}
	$node->safe_psql('postgres', $sql);
}

sub index_bytes
{
	return $node->safe_psql('postgres',
		q{SELECT pg_indexes_size('durable.ready_tasks')});
}

# Wait for a line of the server log after offset; true if it came.
sub wait_log
{
	my ($re, $offset) = @_;
	for (1 .. 300)
	{
		return 1 if slurp_file($node->logfile, $offset) =~ $re;
		usleep(100_000);
	}
	return 0;
}
my $small = index_bytes();

# 1. A held horizon: the worker says so once it has not moved between two looks.
my $log = -s $node->logfile;
my $holder = $node->background_psql('postgres');
$holder->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$holder->query_safe('SELECT count(*) FROM durable.ready_tasks');
churn('held', 30000);
ok(wait_log(qr/the vacuum horizon of database "postgres" has not moved/, $log),
	'the worker logs that the vacuum horizon is held');
my $grown = index_bytes();
cmp_ok($grown, '>', $small + 1024 * 1024, 'ready_tasks\' indexes grew');

# 2. The snapshot closes: the worker says so and rebuilds the grown indexes.
$log = -s $node->logfile;
$holder->query_safe('COMMIT');
$holder->quit;
ok(wait_log(qr/the vacuum horizon of database "postgres" moves again/, $log),
	'the worker logs that the horizon moves again');
ok(wait_log(qr/rebuilt the indexes of durable\.ready_tasks after a held vacuum horizon/, $log),
	'and rebuilds the indexes of ready_tasks');
cmp_ok(index_bytes(), '<', $grown / 4, 'which shrink');

# The queue works on: a task queued now is claimed once.
$node->safe_psql('postgres', q{SELECT durable.start_workflow('t', NULL, 'after', 'q')});
is($node->safe_psql('postgres',
	q{SELECT durable.poll_decision_task('q', 'w', wait => '0')->>'workflowId'}),
	'after', 'a task queued after the rebuild is claimed');
is($node->safe_psql('postgres',
	q{SELECT durable.poll_decision_task('q', 'w', wait => '0') IS NULL}),
	't', 'once');

# 3. The same growth with nothing holding the horizon is left alone.
$log = -s $node->logfile;
churn('free', 30000);
$node->safe_psql('postgres', 'VACUUM durable.ready_tasks');
$grown = index_bytes();
# Three looks of the worker at least (waiting here: a statement that waits
# would hold the horizon itself): each logs nothing, rebuilds nothing.
Time::HiRes::sleep(7);
unlike(slurp_file($node->logfile, $log), qr/rebuilt the indexes|vacuum horizon/,
	'no rebuild and no horizon message without a held horizon');
is(index_bytes(), $grown, 'the indexes keep their size');

$node->stop;
done_testing();

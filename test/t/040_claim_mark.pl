# Claims under a held vacuum horizon (docs/performance.md "A held vacuum horizon",
# src/store/claim_mark.c).
#
# While a REPEATABLE READ session holds its snapshot, the index entries of
# claimed tasks cannot be removed.  A poll must not walk all of them (each
# claim would cost O(tasks claimed since)), and no task may be lost on the way:
# one committed after later tasks were claimed, one whose claim rolled back,
# the same for the executors' claims of SQL workflows' tasks, and, after a server restart (which empties shared memory), tasks below and
# above the point the claims had reached are all still delivered, once each.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('primary');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = off
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION durable');

# Start n workflows on queue q (each queues a decision task), one transaction each.
sub start_workflows
{
	my ($q, $prefix, $n) = @_;
	$node->safe_psql('postgres', join('',
		map { "SELECT durable.start_workflow('t', NULL, '$prefix-$_', '$q');\n" } 1 .. $n));
}

# Claim decision tasks of queue q, one poll a transaction, until none is left;
# returns the workflow ids in the order they came.
sub drain
{
	my ($q) = @_;
	my @got;
	while (1)
	{
		my $id = $node->safe_psql('postgres',
			"SELECT durable.poll_decision_task('$q', 'w', wait => '0')->>'workflowId'");
		last if $id eq '';
		push @got, $id;
	}
	return @got;
}

# A session that holds the vacuum horizon: a read in REPEATABLE READ.
my $holder = $node->background_psql('postgres');
$holder->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$holder->query_safe('SELECT count(*) FROM durable.runs');

# 1. 300 tasks claimed under the held horizon: their entries stay in the index.
# The next claim reads a few index entries, not 300 (counted by the statistics
# of the claim's own transaction).
start_workflows('walk', 'w', 300);
is(scalar(drain('walk')), 300, '300 tasks claimed one by one');
start_workflows('walk', 'last', 1);
my $read = $node->safe_psql('postgres', q{
	BEGIN;
	SELECT durable.poll_decision_task('walk', 'w', wait => '0')->>'workflowId';
	SELECT pg_stat_get_xact_tuples_returned('durable.ready_tasks_pkey'::regclass);
	COMMIT;});
my ($claimed, $entries) = split /\n/, $read;
is($claimed, 'last-1', 'the new task is claimed');
cmp_ok($entries, '<', 50,
	"the claim walked $entries index entries, not the 300 claimed before it");

# 1b. From the mark a claim reads a window of task ids first, then the rest of
# the queue (src/store/claim_mark.c, ClaimWindowKeys): tasks of one queue whose
# ids lie 80 apart, another queue's tasks between them, are all delivered, in
# their order.
start_workflows('gap', 'g', 2);
start_workflows('between', 'b', 80);
start_workflows('gap', 'h', 1);
start_workflows('between', 'c', 80);
start_workflows('gap', 'i', 1);
is_deeply([ drain('gap') ], [ 'g-1', 'g-2', 'h-1', 'i-1' ],
	'tasks 80 ids apart are claimed, in order');
is(scalar(drain('between')), 160, "and the other queue's, all of them");

# 2. A task committed after later tasks were claimed.  Its transaction took its
# task id first and commits last; meanwhile the tasks after it are claimed.
my $slow = $node->background_psql('postgres');
$slow->query_safe('BEGIN');
$slow->query_safe(q{SELECT durable.start_workflow('t', NULL, 'slow', 'order')});
start_workflows('order', 'fast', 20);
is_deeply([ sort(drain('order')) ], [ sort map { "fast-$_" } 1 .. 20 ],
	'the committed tasks are claimed while the slow one is not committed');
start_workflows('order', 'after', 5);
is(scalar(drain('order')), 5, 'and the ones after them');
$slow->query_safe('COMMIT');
$slow->quit;
is_deeply([ drain('order') ], ['slow'],
	'the task committed last, with an older id, is still delivered');

# 3. A claim that rolls back: its task comes back, although later tasks were
# claimed (and the claims moved on) meanwhile.
start_workflows('undo', 'u', 1);
my $undo = $node->background_psql('postgres');
$undo->query_safe('BEGIN');
is($undo->query_safe(
	"SELECT durable.poll_decision_task('undo', 'w', wait => '0')->>'workflowId'"),
	'u-1', 'a claim in a transaction left open');
start_workflows('undo', 'v', 20);
is(scalar(drain('undo')), 20, 'later tasks are claimed meanwhile');
start_workflows('undo', 'x', 5);
is(scalar(drain('undo')), 5, 'and more after them');
$undo->query_safe('ROLLBACK');
$undo->quit;
is_deeply([ drain('undo') ], ['u-1'], 'the task of the rolled back claim is delivered');

# 3b. The same inside one transaction that goes on claiming: tasks claimed and
# then rolled back to a savepoint look claimed to that transaction's own later
# claims, but are not.  (Other sessions commit in between, as on a busy server.)
start_workflows('sp', 's', 4);
my $sp = $node->background_psql('postgres');
$sp->query_safe('BEGIN');
$sp->query_safe('SAVEPOINT a');
my @sp_got;
for (1 .. 3)
{
	push @sp_got, $sp->query_safe(
		"SELECT durable.poll_decision_task('sp', 'w', wait => '0')->>'workflowId'");
	start_workflows('elsewhere', "e$_", 1);
}
is_deeply(\@sp_got, [ 's-1', 's-2', 's-3' ], 'three claims in one transaction');
$sp->query_safe('ROLLBACK TO SAVEPOINT a');
is($sp->query_safe(
	"SELECT durable.poll_decision_task('sp', 'w', wait => '0')->>'workflowId'"),
	's-1', 'after ROLLBACK TO SAVEPOINT, its next claim gets the oldest task again');
$sp->query_safe('COMMIT');
$sp->quit;
is_deeply([ drain('sp') ], [ 's-2', 's-3', 's-4' ], 'and the others are still there');
is(scalar(drain('elsewhere')), 3, 'the tasks of the other sessions too');

# 3c. The executors' claims (SQL workflows, here run by durable.run_tasks())
# have marks of their own, in their own index: 300 decision tasks run under
# the held horizon, then the next claim reads a few entries of that index, not
# 300; and a task committed after later ones were run is still run.
$node->safe_psql('postgres', q{
	CREATE ROLE xapp;
	CREATE FUNCTION public.xwf(input jsonb) RETURNS jsonb LANGUAGE sql AS 'SELECT input';
	SELECT durable.register_workflow('xwf', 'public.xwf(jsonb)', 'xq', run_as => 'xapp');});

# Start n SQL workflows on queue xq, one transaction each.
sub start_sql_workflows
{
	my ($prefix, $n) = @_;
	$node->safe_psql('postgres', join('',
		map { "SELECT durable.start_workflow('xwf', '{}', '$prefix-$_', 'xq');\n" } 1 .. $n));
}

# Run the executor tasks one a transaction until none is left; returns how many ran.
sub run_all
{
	my $ran = 0;
	while ($node->safe_psql('postgres', 'SELECT durable.run_tasks(1)') == 1)
	{
		$ran++;
	}
	return $ran;
}

start_sql_workflows('sx', 300);
is(run_all(), 300, '300 executor tasks run one by one');
start_sql_workflows('xlast', 1);
$read = $node->safe_psql('postgres', q{
	BEGIN;
	SELECT durable.run_tasks(1);
	SELECT pg_stat_get_xact_tuples_returned('durable.ready_tasks_executor_queue'::regclass);
	COMMIT;});
($claimed, $entries) = split /\n/, $read;
is($claimed, '1', 'the new executor task is run');
cmp_ok($entries, '<', 50,
	"the executors' claim read $entries entries of their index, not the 300 run before it");
my $xslow = $node->background_psql('postgres');
$xslow->query_safe('BEGIN');
$xslow->query_safe(q{SELECT durable.start_workflow('xwf', '{}', 'xslow', 'xq')});
start_sql_workflows('xfast', 20);
is(run_all(), 20, 'the committed executor tasks run while the slow one is not committed');
$xslow->query_safe('COMMIT');
$xslow->quit;
is(run_all(), 1, 'the executor task committed last, with an older id, is still run');
# Executor tasks 80 ids apart, other queues' tasks between them (the window)
start_sql_workflows('xgap-a', 2);
start_workflows('xbetween', 'xb', 80);
start_sql_workflows('xgap-b', 1);
start_workflows('xbetween', 'xc', 80);
start_sql_workflows('xgap-c', 1);
is(run_all(), 4, 'executor tasks 80 ids apart all run');
is(scalar(drain('xbetween')), 160, "and the other queue's tasks are all claimed");
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM durable.runs WHERE workflow_type = 'xwf' AND status = 'completed'}),
	'326', 'every SQL workflow completed, once');

# 4. A restart empties shared memory.  Tasks queued before the claims got past
# them (held back in an open transaction), tasks claimed, and tasks queued after:
# every one not claimed is delivered after the restart, once.
my $old = $node->background_psql('postgres');
$old->query_safe('BEGIN');
$old->query_safe(q{SELECT durable.start_workflow('t', NULL, 'below', 'restart')});
start_workflows('restart', 'r', 50);
is(scalar(drain('restart')), 50, '50 tasks claimed before the restart');
$old->query_safe('COMMIT');
$old->quit;
start_workflows('restart', 'above', 3);
$holder->quit;
$node->restart;
is_deeply([ sort(drain('restart')) ], [ sort('below', map { "above-$_" } 1 .. 3) ],
	'after the restart, the task below and the tasks above are delivered once each');
is($node->safe_psql('postgres', 'SELECT count(*) FROM durable.ready_tasks'), '0',
	'no task is left behind');

# 5. The extension dropped and created again: its sequence hands out task ids
# from 1 again, below where the claims of the old queue had got.
start_workflows('again', 'old', 10);
is(scalar(drain('again')), 10, 'claims of a queue move on');
$node->safe_psql('postgres', 'DROP EXTENSION durable CASCADE');
$node->safe_psql('postgres', 'CREATE EXTENSION durable');
start_workflows('again', 'new', 2);
is_deeply([ drain('again') ], [ 'new-1', 'new-2' ],
	'the tasks of the re-created extension are delivered');

$node->stop;
done_testing();

# Tasks restored into the same database below the claims' low-water marks
# (src/store/claim_mark.c, docs/operations.md "What durable's tables support").
#
# Claims start at a mark in shared memory that only moves up, since task ids
# only grow.  A data-only restore breaks that: it brings back tasks with
# their old ids (COPY, or INSERT as pg_dump --inserts writes them), and sets
# durable.ready_task_seq back with setval, after which new tasks take ids the
# claims have passed.  Each kind of restored task must still be delivered,
# without a restart.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('restore');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = off
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION durable');

# Start n workflows on queue q, one transaction each.
sub start_workflows
{
	my ($q, $prefix, $n) = @_;
	$node->safe_psql('postgres', join('',
		map { "SELECT durable.start_workflow('t', NULL, '$prefix-$_', '$q');\n" } 1 .. $n));
}

# Claim decision tasks of queue q, one poll a transaction, until none is
# left; the workflow ids in the order they came.
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

# The tasks of the first workflows are saved and deleted (as a dump taken
# then and a loss would leave them), later tasks are claimed so that the
# mark passes the saved ids.
start_workflows('rq', 'old', 3);
$node->safe_psql('postgres', q{
	CREATE TABLE saved AS SELECT * FROM durable.ready_tasks WHERE task_queue = 'rq';
	DELETE FROM durable.ready_tasks WHERE task_queue = 'rq';
});
start_workflows('rq', 'new', 20);
is(scalar(drain('rq')), 20, 'the later tasks are claimed');
my $max_claimed = $node->safe_psql('postgres', q{SELECT last_value FROM durable.ready_task_seq});

# 1. COPY FROM, as pg_restore writes a table's rows.
my $file = $node->basedir . '/ready_tasks.copy';
$node->safe_psql('postgres', qq{
	COPY (SELECT * FROM saved WHERE run_id IN
	        (SELECT run_id FROM durable.runs WHERE workflow_id = 'old-1')) TO '$file';
	COPY durable.ready_tasks FROM '$file';
});
is(join(',', drain('rq')), 'old-1', 'a task restored with COPY is delivered');

# Tasks claimed after the restore move the queue's mark past every id
# claimed so far again.
sub move_mark
{
	my ($prefix) = @_;
	start_workflows('rq', $prefix, 3);
	is(join(',', drain('rq')), "$prefix-1,$prefix-2,$prefix-3", "then tasks queued later come in order ($prefix)");
}
move_mark('mid');

# 2. INSERT with the old ids, as pg_dump --inserts writes them.
$node->safe_psql('postgres', q{
	INSERT INTO durable.ready_tasks SELECT * FROM saved WHERE run_id IN
	  (SELECT run_id FROM durable.runs WHERE workflow_id IN ('old-2', 'old-3'));
});
is(join(',', drain('rq')), 'old-2,old-3', 'tasks restored with INSERT are delivered, oldest first');

# 3. The sequence set back (pg_dump writes setval after the data): new tasks
# take ids below the ones claimed.
move_mark('mid2');
$max_claimed = $node->safe_psql('postgres', q{SELECT last_value FROM durable.ready_task_seq});
$node->safe_psql('postgres', q{SELECT setval('durable.ready_task_seq', 5)});
start_workflows('rq', 'after', 3);
ok($node->safe_psql('postgres', q{
	SELECT max(task_id) FROM durable.ready_tasks WHERE task_queue = 'rq'}) < $max_claimed,
	'the new tasks have ids below the claimed ones');
is(join(',', drain('rq')), 'after-1,after-2,after-3',
	'tasks queued after setval set the sequence back are delivered');

# And after all that, the marks move again: tasks queued later come in order.
start_workflows('rq', 'later', 3);
is(join(',', drain('rq')), 'later-1,later-2,later-3', 'later tasks come in order');

$node->stop;
done_testing();

# A queue that was never paused or limited skips the probes of its pause and
# limits (src/store/queue_controls.c): a session learns which queues of its
# database have controls once, and then a pause that arrives later, however it
# is written, still holds its queue back.  In each database a session first
# starts and claims a task of queue q1 (and so learns that q1 has no
# controls), then q1 is paused by another session: with pause_task_queue(), a
# plain INSERT into durable.paused_task_queues as a data-only restore writes
# it, a COPY FROM, an INSERT in a WITH, an UPDATE that moves another queue's
# pause to q1; and after a restart, the pause made before it.  The first
# session's next poll of q1 gets nothing, while q2's task is claimed.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('queue_controls');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = off
});
$node->start;

my %pause = (
	engine => q{SELECT durable.pause_task_queue('q1')},
	insert => q{INSERT INTO durable.paused_task_queues
	              (namespace, task_queue, paused_at, paused_by)
	            VALUES ('default', 'q1', now(), 'restore')},
	copy => q{\copy durable.paused_task_queues (namespace, task_queue, paused_at, paused_by) from program 'echo default,q1,2026-01-01,restore' with (format csv)},
	cte => q{WITH p AS (INSERT INTO durable.paused_task_queues
	                      (namespace, task_queue, paused_at, paused_by)
	                    VALUES ('default', 'q1', now(), 'restore') RETURNING 1)
	         SELECT count(*) FROM p},
	update => q{UPDATE durable.paused_task_queues SET task_queue = 'q1'
	             WHERE task_queue = 'q0'},
);

# The task a poll of the queue gets at once: its workflow id, or '' for none.
sub poll_sql
{
	my ($queue) = @_;
	return qq{SELECT coalesce(durable.poll_decision_task('$queue', 'w', 'default', '0s')->>'workflowId', '')};
}

foreach my $how (sort keys %pause)
{
	my $db = "db_$how";
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, 'CREATE EXTENSION durable');
	# The queue whose pause the UPDATE moves to q1
	$node->safe_psql($db, q{SELECT durable.pause_task_queue('q0')})
	  if $how eq 'update';

	my $session = $node->background_psql($db);
	$session->query_safe(q{SELECT durable.start_workflow('t', NULL, 'a', 'q1')});
	is($session->query_safe(poll_sql('q1')), 'a', "$how: q1's first task is claimed");

	$node->safe_psql($db, $pause{$how});
	is($node->safe_psql($db, q{
		SELECT count(*) FROM durable.paused_task_queues WHERE task_queue = 'q1'}),
		'1', "$how: q1 is paused");

	$session->query_safe(q{
		SELECT durable.start_workflow('t', NULL, 'b', 'q1');
		SELECT durable.start_workflow('t', NULL, 'c', 'q2');
	});
	is($session->query_safe(poll_sql('q1')), '',
		"$how: the session that learned q1 had no controls claims nothing of it now");
	is($session->query_safe(poll_sql('q2')), 'c', "$how: q2's task is claimed");
	$session->quit;
}

# A restart forgets what was learned: the pause is read from the table.
$node->safe_psql('postgres', 'CREATE DATABASE db_restart');
$node->safe_psql('db_restart', q{
CREATE EXTENSION durable;
SELECT durable.pause_task_queue('q1');
SELECT durable.start_workflow('t', NULL, 'b', 'q1');
SELECT durable.start_workflow('t', NULL, 'c', 'q2');
});
$node->restart;
is($node->safe_psql('db_restart', poll_sql('q1')), '',
	'restart: the queue paused before it stays paused');
is($node->safe_psql('db_restart', poll_sql('q2')), 'c',
	'restart: the other queue\'s task is claimed');

done_testing();

# The server-wide tables of shared memory shared fairly between tenants
# (docs/task-queues.md, docs/metrics.md): a namespace that counts on many task
# queues, or polls with ever new identities, fills them with its own entries
# only, and another namespace's new queue still gets its own row of
# durable.metrics and its poller stays listed; the counts of a transaction
# that touches more queues than a backend keeps apart all go somewhere (the
# database's row); a long identity of multibyte characters is cut on a
# character boundary.  The tables are the server's: a tenant of another
# database is kept apart the same way.  Small tables, set at server start,
# make it quick.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('slots');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = off
durable.max_metric_queues = 16
durable.max_pollers = 16
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION durable;
	SELECT durable.create_namespace('a');
	SELECT durable.create_namespace('b');
	SELECT durable.create_namespace('c');
});

# The total of a metric over every row of this database.
sub total
{
	my ($metric) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT COALESCE(sum(value), 0) FROM durable.metrics WHERE metric = '$metric'});
}

# Tenant b has a worker polling its queue, and so has the tenant of another
# database (the tables are the server's).
$node->safe_psql('postgres', q{
	SELECT durable.poll_decision_task('bq', identity => 'b-worker', namespace => 'b', wait => '0')});
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('other', q{
	CREATE EXTENSION durable;
	SELECT durable.poll_decision_task('oq', identity => 'other-worker', wait => '0');
});

# Tenant b counts on a queue it will not use again: the oldest row.
$node->safe_psql('postgres', q{SELECT durable.start_workflow('w', NULL, 'b-0', 'bq-old', namespace => 'b')});

# Tenant a starts workflows on 300 queues (100 a transaction) and polls with
# 300 identities.
for my $t (0 .. 2)
{
	$node->safe_psql('postgres', qq{
		SELECT count(durable.start_workflow('w', NULL, 'a-' || i, 'aq-' || i, namespace => 'a'))
		  FROM generate_series($t * 100 + 1, $t * 100 + 100) i});
}
$node->safe_psql('postgres', q{
	SELECT count(durable.poll_activity_task('aq', identity => 'a-worker-' || i, namespace => 'a', wait => '0'))
	  FROM generate_series(1, 300) i});
is(total('durable_workflows_started_total'), '301', 'tenant a\'s 300 starts are all counted');
ok($node->safe_psql('postgres', q{
	SELECT count(DISTINCT task_queue) FROM durable.metrics WHERE namespace = 'a'}) < 16,
	'tenant a does not hold every row');
ok($node->safe_psql('postgres', q{SELECT count(*) FROM durable.task_queue_pollers() WHERE namespace = 'a'}) > 0,
	'tenant a\'s pollers are listed');

# Tenant b's new queue gets a row of its own; its worker is still listed.
$node->safe_psql('postgres', q{SELECT durable.start_workflow('w', NULL, 'b-1', 'bq', namespace => 'b')});
is($node->safe_psql('postgres', q{
	SELECT value FROM durable.metrics
	 WHERE namespace = 'b' AND task_queue = 'bq' AND metric = 'durable_workflows_started_total'}),
	'1', 'tenant b\'s new queue has its own row');
is($node->safe_psql('postgres', q{
	SELECT string_agg(p->>'identity', ',') FROM durable.task_queues, jsonb_array_elements(pollers) p
	 WHERE namespace = 'b' AND task_queue = 'bq'}),
	'b-worker', 'tenant b\'s worker is still listed');
is($node->safe_psql('postgres', q{
	SELECT durable.describe_workflow('b-1', namespace => 'b')->'taskQueueWithoutPollers'}),
	'false', 'describe_workflow: tenant b\'s queue has a poller');

$node->safe_psql('other', q{SELECT durable.start_workflow('w', NULL, 'o-1', 'oq')});
is($node->safe_psql('other', q{
	SELECT string_agg(identity, ',') FROM durable.task_queue_pollers() WHERE task_queue = 'oq'}),
	'other-worker', 'the other database\'s worker is still listed');
is($node->safe_psql('other', q{
	SELECT value FROM durable.metrics
	 WHERE task_queue = 'oq' AND metric = 'durable_workflows_started_total'}),
	'1', 'and its queue has its own row');

# 200 starts on 200 queues in one statement: all counted (the queues a
# backend cannot keep apart count in the database's row).
$node->safe_psql('postgres', q{
	SELECT count(durable.start_workflow('w', NULL, 'c-' || i, 'cq-' || i, namespace => 'c'))
	  FROM generate_series(1, 200) i});
is(total('durable_workflows_started_total'), '502', 'the 200 starts of one statement are all counted');

# A poller identity of 200 two-byte characters (400 bytes) is kept cut to
# whole characters.
$node->safe_psql('postgres', q{
	SELECT durable.poll_decision_task('bq2', identity => repeat('é', 200), namespace => 'b', wait => '0')});
is($node->safe_psql('postgres', q{
	SELECT p->>'identity' = repeat('é', 63) FROM durable.task_queues, jsonb_array_elements(pollers) p
	 WHERE namespace = 'b' AND task_queue = 'bq2'}),
	't', 'a long multibyte identity reads back cut to 63 characters');

# Rows are reused, fairly.  A row whose queue counted nothing for longer
# than durable.metric_idle_timeout (10 min, by durable.now(): the test clock
# moves it) may go to a new queue of its own namespace that gets no free
# row, its counts added to the database's row first; a database dropped
# frees its rows for everyone.  No other tenant's row is taken, no counter
# a scraper sees goes down, and the database's totals never do.

# Every sample of metrics_text(), by series.
sub samples
{
	my ($db) = @_;
	my %s;
	for my $line (split /\n/, $node->safe_psql($db, 'SELECT durable.metrics_text()'))
	{
		next if $line =~ /^#/;
		my ($series, $value) = $line =~ /^(.*) (\S+)$/;
		$s{$series} = $value;
	}
	return \%s;
}

# The value of one queue's durable_workflows_started_total, '' if it has no row.
sub started
{
	my ($db, $ns, $tq) = @_;
	return $node->safe_psql($db, qq{
		SELECT value FROM durable.metrics
		 WHERE namespace = '$ns' AND task_queue = '$tq' AND metric = 'durable_workflows_started_total'});
}

my $later = q{SET durable.test_time = '2099-01-01 00:00:00+00';};

# Tenant a is at its share: its new queue counts in the database's row.
$node->safe_psql('postgres', q{SELECT durable.start_workflow('w', NULL, 'an-0', 'an-0', namespace => 'a')});
is(started('postgres', 'a', 'an-0'), '', 'tenant a at its share: a new queue gets no row');

# Much later, tenant b counts on its queue; tenant a's rows are all idle.
$node->safe_psql('postgres', qq{$later
	SELECT durable.start_workflow('w', NULL, 'b-2', 'bq', namespace => 'b')});
my $before = samples('postgres');
my $total_before = total('durable_workflows_started_total');
my $other_before = started('other', 'default', 'oq');

$node->safe_psql('postgres', qq{$later
	SELECT durable.start_workflow('w', NULL, 'an-1', 'an-1', namespace => 'a');
	SELECT durable.start_workflow('w', NULL, 'an-2', 'an-2', namespace => 'a');});
is(started('postgres', 'a', 'an-1') . ',' . started('postgres', 'a', 'an-2'), '1,1',
	'tenant a\'s new queues take the rows of its idle ones');
is(started('postgres', 'b', 'bq'), '2', 'tenant b\'s row is not taken');
is(started('postgres', 'b', 'bq-old'), '1', 'nor its idle one, older than tenant a\'s');
is(started('other', 'default', 'oq'), $other_before, 'nor the other database\'s');
is(total('durable_workflows_started_total'), $total_before + 2,
	'the counts of the freed rows are in the database\'s row');
my $after = samples('postgres');
my @down = grep { exists $after->{$_} && $after->{$_} < $before->{$_} } sort keys %$before;
is("@down", '', 'no sample of metrics_text() goes down');
my @gone = grep { !exists $after->{$_} } sort keys %$before;
ok(@gone > 0 && !grep({ !/namespace="a"/ } @gone), 'only rows of tenant a were freed');

# A session that counted a queue in the database's row (no row of its own
# idle then) looks for a row again later: once tenant a's rows are idle, the
# same session's next start on that queue takes one.
$node->safe_psql('postgres', qq{$later
	SELECT count(durable.start_workflow('w', NULL, 'ax-' || i, 'ax-' || i, namespace => 'a'))
	  FROM generate_series(1, 16) i;
	SELECT durable.start_workflow('w', NULL, 'late-1', 'late', namespace => 'a');
	SET durable.test_time = '2099-01-02 00:00:00+00';
	SELECT durable.start_workflow('w', NULL, 'late-2', 'late', namespace => 'a');});
is(started('postgres', 'a', 'late'), '1',
	'its second start takes an idle row of tenant a: the first is in the database\'s row');

# The rows of a dropped database go to the others: database third takes
# the last free row, then is dropped.
$node->safe_psql('postgres', 'CREATE DATABASE third');
$node->safe_psql('third', q{
	CREATE EXTENSION durable;
	SELECT durable.start_workflow('w', NULL, 'x1', 'q1');
	SELECT durable.start_workflow('w', NULL, 'x2', 'q2');});
is($node->safe_psql('third', q{
	SELECT string_agg(DISTINCT task_queue, ',') FROM durable.metrics WHERE namespace IS NOT NULL}),
	'q1', 'database third takes the last free row');
$node->safe_psql('other', q{
	SELECT durable.create_namespace('o2');
	SELECT durable.start_workflow('w', NULL, 'o-2', 'o2q', namespace => 'o2');});
is(started('other', 'o2', 'o2q'), '', 'the table is full: no row for the other database');
$node->safe_psql('postgres', 'DROP DATABASE third');
$node->safe_psql('other', q{SELECT durable.start_workflow('w', NULL, 'o-3', 'o2q', namespace => 'o2')});
is(started('other', 'o2', 'o2q'), '1', 'once third is dropped, its row goes to another database');
is($node->safe_psql('other', q{
	SELECT sum(value) FROM durable.metrics WHERE metric = 'durable_workflows_started_total'}),
	'3', 'and every start of the other database is counted');

# So do the rows of a database whose extension is dropped.
$node->safe_psql('postgres', q{
	SELECT durable.create_namespace('d');
	SELECT durable.start_workflow('w', NULL, 'd-1', 'dq', namespace => 'd');});
is(started('postgres', 'd', 'dq'), '', 'the table is full: no row for namespace d');
$node->safe_psql('other', 'DROP EXTENSION durable CASCADE');
$node->safe_psql('postgres', q{SELECT durable.start_workflow('w', NULL, 'd-2', 'dq', namespace => 'd')});
is(started('postgres', 'd', 'dq'), '1', 'once the other database drops the extension, its rows go to others');

# Rows reused while counts flow: four sessions start workflows on 40 queues
# of a new namespace e, at random times hours apart, so that its few rows
# keep going from one queue to another while the sessions' remembered rows
# are reused under them.  Every start is counted, in a row or in the
# database's row.
$node->safe_psql('postgres', q{
	SELECT durable.create_namespace('e');
	CREATE SEQUENCE e_ids;});
$total_before = total('durable_workflows_started_total');
$node->pgbench('--no-vacuum --client=4 --jobs=2 --transactions=200', 0,
	[qr{processed: 800/800}], [qr{^$}], 'starts on reused rows from four sessions',
	{ 'reuse' => q{
\set q random(1, 40)
\set m random(0, 100000)
SELECT set_config('durable.test_time', ('2100-01-01 00:00+00'::timestamptz + :m * interval '1 minute')::text, false);
SELECT durable.start_workflow('w', NULL, 'e-' || nextval('e_ids'), 'eq-' || :q, namespace => 'e');
} });
is(total('durable_workflows_started_total'), $total_before + 800,
	'all 800 starts are counted');
ok($node->safe_psql('postgres', q{
	SELECT count(DISTINCT task_queue) FROM durable.metrics WHERE namespace = 'e'}) >= 1,
	'namespace e has rows of its own');

$node->stop;
done_testing();

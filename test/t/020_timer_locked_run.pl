# The timer worker does not spin while a due timer's run is locked elsewhere:
# the timer is skipped (SKIP LOCKED) and stays due, and the worker must not go
# round again at once.  Once the lock is released, the timer fires by itself.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);
use POSIX ();

my $node = PostgreSQL::Test::Cluster->new('primary');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = on
durable.worker_max_sleep = 10
max_worker_processes = 16
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION durable');
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE backend_type = 'durable timer worker' AND datname = 'postgres'}),
	'the timer worker runs');
my $worker = $node->safe_psql('postgres', q{
	SELECT pid FROM pg_stat_activity
	 WHERE backend_type = 'durable timer worker' AND datname = 'postgres'});

# CPU time (user + system, in clock ticks) the process has used so far.
sub cpu_ticks
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/stat") or die "cannot read /proc/$pid/stat: $!";
	my $line = <$fh>;
	close($fh);
	# The command name (field 2) is in parentheses and may hold spaces.
	$line =~ s/^.*\)\s+//;
	my @f = split(/\s+/, $line);
	# Fields 14 and 15 (utime, stime), counted from the state, field 3.
	return $f[11] + $f[12];
}

# A run whose run timeout (1 s) comes due while a session holds its row.
my $run = $node->safe_psql('postgres', q{
	SELECT durable.start_workflow('t', NULL, 'locked', run_timeout => '1 second')});
my $holder = $node->background_psql('postgres');
$holder->query_safe('BEGIN');
$holder->query_safe(qq{SELECT 1 FROM durable.runs WHERE run_id = '$run' FOR UPDATE});
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM durable.timers
	 WHERE kind = 'run_timeout' AND due_at < now() - interval '200 ms'}),
	'the run timeout is due while the run is locked');

# The worker's CPU over a few seconds with that timer due.  A worker that waits
# for its next try (a pass, about a millisecond, at most every second once its
# pause has grown) uses a fraction of a percent of that time.  One that goes
# round again at once uses all the CPU the scheduler gives it: on a loaded
# 2-core machine running 8 test clusters at once that is still a good share of
# a core, far more than 5%.  The bound is on behaviour (spinning or not), not
# on speed.
my $hz = POSIX::sysconf(POSIX::_SC_CLK_TCK()) || 100;
my $t0 = time();
my $c0 = cpu_ticks($worker);
sleep(5);
my $c1 = cpu_ticks($worker);
my $elapsed_ticks = (time() - $t0) * $hz;
my $share = ($c1 - $c0) / $elapsed_ticks;
cmp_ok($share, '<', 0.05,
	sprintf('the timer worker idles while the run is locked (%.1f%% CPU)', 100 * $share));
is($node->safe_psql('postgres', q{SELECT durable.describe_workflow('locked')->>'status'}),
	'running', 'the timer has not fired through the lock');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM pg_stat_activity
	 WHERE backend_type = 'durable timer worker' AND datname = 'postgres'}),
	'1', 'the worker is still there');

# Meanwhile the timers of other runs fire: a delayed start gets its decision task.
$node->safe_psql('postgres', q{
	SELECT durable.start_workflow('t', NULL, 'other', delay => '1 second')});
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 2 FROM durable.get_history('other')}),
	'the timer of another run fires while the locked one waits');
is($node->safe_psql('postgres', q{SELECT durable.describe_workflow('locked')->>'status'}),
	'running', 'the locked run is still waiting for its lock');

# Released: the timer fires by itself, soon.
$holder->query_safe('COMMIT');
$holder->quit;
ok($node->poll_query_until('postgres', q{
	SELECT durable.describe_workflow('locked')->>'status' = 'timed_out'}),
	'once the lock is released the timer fires');
$node->stop;
done_testing();

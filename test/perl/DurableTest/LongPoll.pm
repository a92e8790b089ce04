# DurableTest::LongPoll: sessions of the TAP tests (test/t/*.pl) that wait in
# durable in the background -- a long poll (poll_decision_task,
# poll_activity_task with a wait), a wait_workflow -- while the test commits
# what should wake them; each found in pg_stat_activity by its
# application_name, then finished to read what it printed.
#
#   my $lp = DurableTest::LongPoll->new($node, 'app');
#   $lp->start_poller('p1', 'wq');           # an ok(): it polls wq and sleeps
#   $node->safe_psql('app', q{SELECT durable.start_workflow('t', NULL, 'a', 'wq')});
#   is($lp->finish('p1'), 'a', 'p1 got the task');
#
# scripts/test.sh runs prove with -I test/perl.
package DurableTest::LongPoll;

use strict;
use warnings;
use IPC::Run;
use Test::More;

# The sessions of $node's database $dbname (default app).
sub new
{
	my ($class, $node, $dbname) = @_;
	return bless { node => $node, dbname => $dbname // 'app', sessions => {} }, $class;
}

# Start session $name: $cmd is a SQL statement run by psql, or a command (an
# array) run as is; its application_name is $name (in psql's connection string,
# and PGAPPNAME for any client).  Then an ok() that it sleeps in durable (wait
# event type Extension), named $opt{what}.  $opt{timeout} (seconds) bounds the
# whole session: a call that returns only when its own long wait runs out
# fails the test rather than holding it up.
sub start
{
	my ($self, $name, $cmd, %opt) = @_;
	my $s = { in => '', out => '', err => '' };
	$cmd = [ 'psql', '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-c', $cmd, '-d',
			 $self->{node}->connstr($self->{dbname}) . " application_name=$name" ]
	  unless ref $cmd;
	local $ENV{PGAPPNAME} = $name;
	$s->{h} = IPC::Run::start($cmd,
		'<', \$s->{in}, '>', \$s->{out}, '2>', \$s->{err},
		$opt{timeout} ? (IPC::Run::timeout($opt{timeout})) : ());
	$self->{sessions}{$name} = $s;
	ok($self->{node}->poll_query_until($self->{dbname}, qq{
		SELECT count(*) = 1 FROM pg_stat_activity
		 WHERE application_name = '$name' AND wait_event_type = 'Extension'}),
		$opt{what} // "$name sleeps in durable");
	return $s;
}

# A long poll of $queue by session $name (its identity too) with a wait of 300 s,
# far longer than a test runs, printing the workflow id of the task it gets.
# $opt{kind}: 'decision' (the default) or 'activity'.
sub start_poller
{
	my ($self, $name, $queue, %opt) = @_;
	my $kind = $opt{kind} // 'decision';
	return $self->start($name,
		qq{SELECT durable.poll_${kind}_task('$queue', '$name', wait => '300 seconds')->>'workflowId'},
		what => "$name polls $queue and sleeps", %opt);
}

# Wait for session $name to end; what it printed, without the last newline.
# Its stderr is noted, and kept in session($name)->{err}.
sub finish
{
	my ($self, $name) = @_;
	my $s = $self->{sessions}{$name};
	eval { $s->{h}->finish; };
	note("$name: stderr: $s->{err}") if $s->{err} ne '';
	chomp(my $out = $s->{out});
	return $out;
}

# The session's hash: {out}, {err}, and what a test notes in it.
sub session
{
	my ($self, $name) = @_;
	return $self->{sessions}{$name};
}

# The sessions among @names still running a statement, sorted, space-separated.
sub waiting
{
	my ($self, @names) = @_;
	return $self->{node}->safe_psql($self->{dbname}, _active_sql(@names));
}

# An ok(), named $what, that exactly the sessions @$left of @$names are still
# running a statement, once the others have returned.
sub wait_until_waiting
{
	my ($self, $names, $left, $what) = @_;
	my $want = join(' ', sort @$left);
	ok($self->{node}->poll_query_until($self->{dbname}, _active_sql(@$names), $want),
		$what) or diag('waiting: ' . $self->waiting(@$names));
}

sub _active_sql
{
	my $list = join(', ', map { "'$_'" } @_);
	return qq{
		SELECT coalesce(string_agg(application_name, ' ' ORDER BY application_name), '')
		  FROM pg_stat_activity
		 WHERE application_name IN ($list) AND state = 'active'};
}

1;

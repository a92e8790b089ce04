# The examples of README.md and of the pages under docs/ run as written, in one fixed
# order, as one story, on a fresh cluster set up the way README.md says, as the roles
# the examples name: each page's examples are run the way a reader would run them after
# reading the pages before it.
#
# The files, in the order they run (@files below; test/README.md lists it too):
#
#   README.md, docs/api.md, docs/sql-workflows.md, docs/task-queues.md, docs/metrics.md,
#   docs/dashboard.md, docs/errors.md, docs/configuration.md, docs/privileges.md,
#   docs/background-workers.md, docs/operations.md, docs/testing.md,
#   docs/performance.md, docs/cadence-differences.md, docs/engine-rules.md, docs/citus.md
#
# An example may use what an example of an earlier file, or earlier in its own file,
# made, never what a later one makes: README.md makes the extension and role app, and
# its tour the workflow order-17 that docs/task-queues.md describes; docs/privileges.md
# makes the billing roles before it grants them namespace billing.  Every docs/*.md must
# be in the list, so that a new page is not left out by mistake.
#
# The convention (test/README.md says it too).  A code block of one of these files
# (indented by four spaces, or fenced with ```) is an example when the last non-blank
# line before it is an HTML comment, which GitHub does not show:
#
#   <!-- example: sql as ROLE -->             run by psql -X -v ON_ERROR_STOP=1 as ROLE in
#   <!-- example: sql as ROLE in DB -->       database app (or DB), from the repository's
#                                             top directory (so `\i examples/x.sql` works),
#                                             one psql session a block; it fails on an
#                                             error, a WARNING or a non-zero exit
#   <!-- example: python as ROLE -->          run by python3 (with psycopg, Debian's
#                                             python3-psycopg) with PGHOST, PGPORT and
#                                             PGUSER=ROLE set; the code names the database
#   <!-- example: postgresql.conf -->         appended to postgresql.conf before the
#                                             server starts
#   <!-- example: output -->                  what the previous example printed contains
#                                             these lines, one after another; `...` in a
#                                             line matches any text, trailing blanks are
#                                             ignored
#   <!-- example: server log -->              the server log has these lines (`...` alike)
#   <!-- example: not run (WHY) -->           an SQL block that cannot run here
#
# The superuser's steps (CREATE EXTENSION, CREATE ROLE ...) are examples "as postgres"
# like any other.  The only thing done here that the files do not show is CREATE
# DATABASE app, and the server's settings start from PostgreSQL's defaults where
# test/durable.conf changes them (the background workers on, max_worker_processes = 8).
#
# A block without a marker whose first line looks like SQL (SELECT, CREATE, a psql
# \command, a -- comment, ...) fails the test, so that a new example cannot be left out
# by mistake: mark it, or mark it "not run" and say why.  Every examples/*.sql must be
# loaded by an example of one of the files (\i examples/NAME.sql).  Each check and
# failure names the FILE:LINE where the block starts (README.md:45, docs/api.md:80).
#
# At the end, with the extension in one database and max_worker_processes = 8, the
# background workers running are those docs/background-workers.md "Background worker
# slots" counts: 1 + (1 + 2) + 1 = 5.
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use File::Temp qw(tempfile);
use IPC::Run;
use Time::HiRes qw(usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $top = abs_path(dirname(abs_path(__FILE__)) . '/../..');

# The files whose examples run, in this order, as one story.  README_EXAMPLES_FILE (one
# or more paths, absolute or from the top directory, separated by blanks) runs those
# instead.
my @files = qw(
  README.md
  docs/api.md
  docs/sql-workflows.md
  docs/task-queues.md
  docs/metrics.md
  docs/dashboard.md
  docs/errors.md
  docs/configuration.md
  docs/privileges.md
  docs/background-workers.md
  docs/operations.md
  docs/testing.md
  docs/performance.md
  docs/cadence-differences.md
  docs/engine-rules.md
  docs/citus.md
);
if (defined $ENV{README_EXAMPLES_FILE})
{
	@files = split ' ', $ENV{README_EXAMPLES_FILE};
}
else
{
	# Every page under docs/ is in the list.
	for my $f (sort glob("$top/docs/*.md"))
	{
		my $name = 'docs/' . (split m{/}, $f)[-1];
		ok((grep { $_ eq $name } @files),
			"$name is in the list of files whose examples run (\@files)");
	}
}

# Read the code blocks of a file (its name as the list gives it), each with its file,
# first line, text and marker.
sub code_blocks
{
	my ($file) = @_;
	my $path = $file =~ m{^/} ? $file : "$top/$file";
	open my $fh, '<', $path or die "cannot read $path: $!";
	my @lines = <$fh>;
	close $fh;
	chomp @lines;
	my @blocks;
	my $i = 0;
	while ($i < @lines)
	{
		my ($start, @text);
		if ($lines[$i] =~ /^(\s*)(```+|~~~+)/)
		{
			my ($indent, $fence) = ($1, $2);
			$start = $i + 1;
			$i++;
			while ($i < @lines && $lines[$i] !~ /^\s*\Q$fence\E\s*$/)
			{
				(my $l = $lines[$i]) =~ s/^\Q$indent\E//;
				push @text, $l;
				$i++;
			}
			$i++;
		}
		elsif ($lines[$i] =~ /^ {4,}\S/ && ($i == 0 || $lines[$i - 1] =~ /^\s*$/))
		{
			# The block goes on while lines are blank or indented by four spaces or
			# more, and loses the least indentation of its lines (a block in a list
			# item is indented more than four).
			my $least = 1000;
			$start = $i;
			while ($i < @lines && ($lines[$i] =~ /^ {4}/ || $lines[$i] =~ /^\s*$/))
			{
				if ($lines[$i] =~ /^( *)\S/)
				{
					$least = length $1 if length $1 < $least;
				}
				push @text, $lines[$i];
				$i++;
			}
			pop @text while @text && $text[-1] =~ /^\s*$/;
			s/^ {0,$least}// for @text;
		}
		else
		{
			$i++;
			next;
		}
		my $marker;
		my $j = $start - 1;
		$j-- while $j >= 0 && $lines[$j] =~ /^\s*$/;
		$marker = $1 if $j >= 0 && $lines[$j] =~ /^\s*<!--\s*example:\s*(.*?)\s*-->\s*$/;
		push @blocks,
		  {
			where => "$file:" . ($start + 1),
			text => join("\n", @text) . "\n",
			marker => $marker
		  };
	}
	return @blocks;
}

# Whether actual output contains the expected lines in a row ("..." matches any text).
sub output_has
{
	my ($actual, $expected) = @_;
	my @act = map { s/\s+$//r } split /\n/, $actual;
	my @exp = map { s/\s+$//r } split /\n/, $expected;
	my @re = map {
		my $e = $_;
		my $p = join '.*', map { quotemeta } split /\.\.\./, $e, -1;
		qr/^$p$/
	} @exp;
	for my $s (0 .. @act - @exp)
	{
		my $all = 1;
		for my $k (0 .. $#re)
		{
			if ($act[ $s + $k ] !~ $re[$k]) { $all = 0; last; }
		}
		return 1 if $all;
	}
	return 0;
}

my $looks_like_sql = qr/^\s*(?:(?:SELECT|CREATE|ALTER|DROP|GRANT|REVOKE|SET|RESET|INSERT|UPDATE|DELETE|WITH|BEGIN|COMMIT|ROLLBACK|CALL|DO|TABLE|VALUES|COPY|EXPLAIN|LISTEN|NOTIFY|VACUUM|ANALYZE)(?:\s|;|$)|\\[a-z]|--)/i;

my @blocks = map { code_blocks($_) } @files;
my @examples;
for my $b (@blocks)
{
	my $where = $b->{where};
	if (!defined $b->{marker})
	{
		ok($b->{text} !~ $looks_like_sql, "$where: a block without a marker is not SQL")
		  or diag("$where: this block looks like SQL: mark it <!-- example: sql as ROLE -->, "
			  . "or <!-- example: not run (WHY) --> (see the head of this test)");
		next;
	}
	my $m = $b->{marker};
	if ($m =~ /^sql as (\w+)(?: in (\w+))?$/)
	{
		push @examples, { %$b, kind => 'sql', role => $1, db => $2 // 'app' };
	}
	elsif ($m =~ /^python as (\w+)$/)
	{
		push @examples, { %$b, kind => 'python', role => $1 };
	}
	elsif ($m =~ /^(postgresql\.conf|output|server log)$/)
	{
		push @examples, { %$b, kind => $1 };
	}
	elsif ($m =~ /^not run \(.+\)$/)
	{
		next;
	}
	else
	{
		fail("$where: unknown example marker \"$m\"");
	}
}
ok(scalar(grep { $_->{kind} eq 'sql' } @examples) > 0, 'the files have SQL examples');

# Every examples/*.sql is loaded by an example.
for my $f (sort glob("$top/examples/*.sql"))
{
	my $name = 'examples/' . (split m{/}, $f)[-1];
	ok( (grep { $_->{kind} eq 'sql' && $_->{text} =~ /^\\i\s+\Q$name\E\s*$/m }
			@examples),
		"$name is run by an example (\\i $name)");
}

my $python;
for my $py ('/usr/bin/python3', 'python3')
{
	if (IPC::Run::run([ $py, '-c', 'import psycopg' ], '>', \my $o, '2>', \my $e))
	{
		$python = $py;
		last;
	}
}

my $node = PostgreSQL::Test::Cluster->new('readme');
$node->init;
# PostgreSQL's and durable's defaults where test/durable.conf changes them.
$node->append_conf('postgresql.conf', q{
durable.worker_enabled = on
max_worker_processes = 8
});
for my $ex (grep { $_->{kind} eq 'postgresql.conf' } @examples)
{
	$node->append_conf('postgresql.conf', "# $ex->{where}\n$ex->{text}");
}
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');

my $timeout = $PostgreSQL::Test::Utils::timeout_default;
my ($last_out, $last_where) = ('', 'nothing');
for my $ex (@examples)
{
	my $where = $ex->{where};
	my ($out, $err, $ok) = ('', '');
	if ($ex->{kind} eq 'sql')
	{
		my ($fh, $file) = tempfile('readme_XXXX', SUFFIX => '.sql', TMPDIR => 1, UNLINK => 1);
		print $fh $ex->{text};
		close $fh;
		$ok = eval {
			IPC::Run::run(
				[
					'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1',
					'-h', $node->host, '-p', $node->port,
					'-U', $ex->{role}, '-d', $ex->{db}, '-f', $file
				],
				init => sub { chdir $top or die "chdir $top: $!" },
				'<', \undef, '>', \$out, '2>', \$err,
				IPC::Run::timeout($timeout));
		};
		$err .= $@ if $@;
		$ok = 0 if $err =~ /\b(?:ERROR|WARNING|FATAL|PANIC):/;
		ok($ok, "$where: sql as $ex->{role} runs without an error or a warning")
		  or diag("$where: the example failed.\n--- example ---\n$ex->{text}--- stderr ---\n$err--- stdout ---\n$out");
		($last_out, $last_where) = ($out, $where);
	}
	elsif ($ex->{kind} eq 'python')
	{
		if (!defined $python)
		{
			if ($ENV{CI})
			{
				fail("$where: python3 with psycopg (Debian's python3-psycopg) is installed");
			}
			else
			{
				diag("$where: skipped: no python3 with psycopg (apt-get install python3-psycopg)");
			}
			($last_out, $last_where) = (undef, $where);
			next;
		}
		local $ENV{PGHOST} = $node->host;
		local $ENV{PGPORT} = $node->port;
		local $ENV{PGUSER} = $ex->{role};
		$ok = eval {
			IPC::Run::run([ $python, '-' ], init => sub { chdir $top or die "chdir $top: $!" },
				'<', \$ex->{text}, '>', \$out, '2>', \$err, IPC::Run::timeout($timeout));
		};
		$err .= $@ if $@;
		ok($ok, "$where: python as $ex->{role} runs without an error")
		  or diag("$where: the example failed.\n--- example ---\n$ex->{text}--- stderr ---\n$err--- stdout ---\n$out");
		($last_out, $last_where) = ($out, $where);
	}
	elsif ($ex->{kind} eq 'output')
	{
		next unless defined $last_out;    # its example was skipped
		ok(output_has($last_out, $ex->{text}),
			"$where: the output of the example at $last_where is the one shown")
		  or diag("$where: expected, in a row:\n$ex->{text}--- the example at $last_where printed ---\n$last_out");
	}
	elsif ($ex->{kind} eq 'server log')
	{
		my $found = 0;
		for (1 .. 10 * $timeout)
		{
			$found = output_has(
				join("\n", map { s/^.*?\b(?=(?:LOG|WARNING|ERROR|NOTICE):)//r }
					  split /\n/, slurp_file($node->logfile)),
				$ex->{text});
			last if $found;
			usleep(100_000);
		}
		ok($found, "$where: the server log has the lines shown")
		  or diag("$where: expected in " . $node->logfile . ":\n$ex->{text}");
	}
}

# docs/background-workers.md "Background worker slots": the extension in one database, the default
# settings: the durable launcher, a timer worker and 2 executors, and the logical
# replication launcher, 5 of the 8 slots.
ok( $node->poll_query_until(
		'postgres', q{
	SELECT pg_catalog.count(*) = 5
	   AND pg_catalog.count(*) FILTER (WHERE backend_type = 'durable executor') = 2
	  FROM pg_catalog.pg_stat_activity
	 WHERE backend_type IN ('durable launcher', 'durable timer worker',
	                        'durable executor', 'logical replication launcher')}),
	'docs/background-workers.md "Background worker slots": 1 + (1 + 2) + 1 = 5 background workers');

$node->stop;
done_testing();

#!/usr/bin/perl
# test/fuzz/fuzz.pl: the fuzzer of `make fuzz` (scripts/fuzz.sh builds durable, starts a
# throwaway cluster with the background workers on, and runs this against it).
#
# FUZZ_CLIENTS processes (4) call durable's API for FUZZ_SECONDS (60) seconds:
#   - every function of schema durable (read from pg_proc, so new ones are covered),
#     with random and edge arguments: NULLs, empty and 2 MB strings, 'infinity',
#     NaN, negative and enormous intervals and integers, deep and huge jsonb,
#     malformed decisions, well-formed but wrong task tokens;
#   - as each group role (durable_client, durable_worker, durable_admin, none, superuser);
#   - in autocommit, in a transaction, in a savepoint rolled back, READ ONLY (a call that
#     succeeds there must not have written: txid_current_if_assigned() stays NULL), in
#     an aborted transaction, and in REPEATABLE READ / SERIALIZABLE;
#   - in realistic sequences: start, poll, complete with random decisions, activities
#     completed, failed, heartbeaten, canceled, eager dispatch (start_workflow_eager,
#     eager activities, the next decision task in an answer, partial histories: what
#     comes back is answered in turn), signals, cancel, terminate, tick and
#     purge with durable.test_time moved around, SQL workflows (test/fuzz/setup.sql)
#     run by run_tasks() and by the executor workers, and, rarely, DROP EXTENSION and
#     CREATE EXTENSION while the others carry on.
# Meanwhile sqlsmith (if installed) sends random queries over the whole catalog for the
# first FUZZ_SQLSMITH_SECONDS (half the time) as role fuzz_smith.
#
# At the end it reads the server log and prints: crashes (terminated by signal, PANIC,
# TRAP), every XX000, and every error whose SQLSTATE is not one a call may legitimately
# raise (expected_codes below), each once with a count, and writes a reproducer for each
# to <out>/findings.sql.  Exit status 1 if there is any.  FUZZ_SEED makes the generated
# calls repeatable (each client seeds with FUZZ_SEED + its number); the engine's answers
# (run ids, tokens, races) are not.  FUZZ_ALLOW='22P02 40001' adds SQLSTATEs to accept.
use strict;
use warnings;
use utf8;
use DBI;
use DBD::Pg;
use JSON::PP;
use POSIX qw(strftime :sys_wait_h);
use Time::HiRes qw(time sleep);
use Getopt::Long;

my %opt = (
	host => $ENV{PGHOST} // '/tmp',
	port => $ENV{PGPORT} // 5432,
	db => 'fuzz',
	seconds => $ENV{FUZZ_SECONDS} // 60,
	seed => $ENV{FUZZ_SEED} // int(time()) % 1000000,
	clients => $ENV{FUZZ_CLIENTS} // 4,
	smith_seconds => $ENV{FUZZ_SQLSMITH_SECONDS},
	drop => $ENV{FUZZ_DROP_EXTENSION} // 1,
	out => 'tmp_check/fuzz',
	show => undef,
	log => undef,
	src => 'src',
	setup => undef);
GetOptions(\%opt, 'host=s', 'port=i', 'db=s', 'seconds=i', 'seed=i', 'clients=i',
	'smith_seconds=i', 'drop=i', 'out=s', 'show=s', 'log=s', 'src=s', 'setup=s')
  or die "bad options\n";
$opt{smith_seconds} //= int($opt{seconds} / 2);
$opt{show} //= $opt{out};
binmode STDOUT, ':utf8';
binmode STDERR, ':utf8';
$opt{setup} //= do { (my $d = $0) =~ s{[^/]*$}{}; ($d || './') . 'setup.sql' };

my %allow = map { $_ => 1 } split ' ', ($ENV{FUZZ_ALLOW} // '');
my $JSON = JSON::PP->new->canonical->allow_nonref;
my $T0 = time();
my $DEADLINE = $T0 + $opt{seconds};
my $DROP_STAMP = "$opt{out}/drop.stamp";

# ---------------------------------------------------------------- connections

sub connect_db
{
	my ($app, $tries) = @_;
	$tries //= 300;
	for (1 .. $tries)
	{
		# A server restarting after a crash may accept and then drop the connection.
		my $dbh = eval {
			my $d = DBI->connect("dbi:Pg:dbname=$opt{db};host=$opt{host};port=$opt{port}",
				undef, undef,
				{ AutoCommit => 1, RaiseError => 1, PrintError => 0, PrintWarn => 0,
				  pg_server_prepare => 0 });
			$d->do("SET application_name = '$app'");
			$d->do("SET statement_timeout = '5s'");
			$d->do("SET client_min_messages = error");
			$d;
		};
		return $dbh if $dbh;
		sleep 0.2;
	}
	die "cannot connect to the fuzz database\n";
}

my $SETUP_SQL = do { open my $f, '<', $opt{setup} or die "$opt{setup}: $!"; local $/; <$f> };

sub run_setup
{
	my ($dbh) = @_;
	$dbh->do('CREATE EXTENSION IF NOT EXISTS durable');
	$dbh->do($SETUP_SQL);

	# The other clients drop namespaces at random: one dropped between its
	# creation and the registrations in it (WF002) is made again.
	for my $try (1 .. 5)
	{
		last if eval { setup_namespaces($dbh); 1 };
		die $@ if $@ !~ /does not exist/ || $try == 5;
	}
}

sub setup_namespaces
{
	my ($dbh) = @_;
	for my $ns (['fz1', '1 second'], ['fz2', '1 day'])
	{
		$dbh->do("SELECT durable.create_namespace('$ns->[0]', '$ns->[1]')
		          WHERE NOT EXISTS (SELECT 1 FROM durable.namespaces WHERE name = '$ns->[0]')");
	}
	for my $ns (qw(default fz1))
	{
		$dbh->do("SELECT durable.register_workflow('fzwf', 'fz.wf_main(jsonb)', 'sq', '$ns', 'fuzz_app')");
		for my $a (qw(echo null raise slow big spin))
		{
			$dbh->do("SELECT durable.register_activity('$a', 'fz.act_$a(jsonb)', 'sq', '$ns', 'fuzz_app')");
		}
	}
}

# ---------------------------------------------------------------- random values

sub pick { return $_[ int(rand(@_)) ]; }
sub chance { return rand() < $_[0]; }
sub lit { my ($s) = @_; return 'NULL' unless defined $s; $s =~ s/'/''/g; return "'$s'"; }
sub rint { my ($lo, $hi) = @_; return $lo + int(rand($hi - $lo + 1)); }

# Pools of names shared across calls so that calls meet: ids collide across clients.
my @QUEUES = qw(default q1 q2 sq);
my @NAMESPACES = qw(default default default fz1 fz2);
my @SIGNALS = qw(go stop go);
my @TYPES = qw(ext ext fzwf other);
my @ACT_TYPES = qw(echo raise slow null big spin ext_act);
my @REUSE = qw(allow_duplicate_failed_only allow_duplicate reject_duplicate
  terminate_if_running AllowDuplicate RejectDuplicate bogus);
my @ROLES = qw(fuzz_client fuzz_worker fuzz_admin fuzz_none);

my (@wids, @run_ids, @dtokens, @atokens, @old_tokens, @activity_ids, @timer_ids);

sub remember
{
	my ($list, $v, $max) = @_;
	return unless defined $v;
	push @$list, $v;
	splice(@$list, 0, @$list - ($max // 200)) if @$list > ($max // 200);
}

sub wid { return @wids && chance(0.6) ? pick(@wids) : 'w' . rint(0, 40); }

sub huge_text { return pick("repeat('x', 2097152)", "repeat('é', 700000)", "repeat('ab', 600)"); }

# An SQL expression of type text for an argument named $name.
sub gen_text
{
	my ($name) = @_;
	my $r = rand();
	return 'NULL' if $r < 0.06;
	return "''" if $r < 0.10;
	return huge_text() if $r < 0.13;
	return lit(pick("a'b", "\\", "\t\n", 'ü✓', ' ', 'NULL', '%s%n', '"')) if $r < 0.17;
	$name //= '';
	return gen_token() if $name eq 'task_token';
	return lit(wid()) if $name eq 'workflow_id';
	return lit(pick(@QUEUES)) if $name eq 'task_queue';
	return lit(pick(@NAMESPACES, 'nope')) if $name eq 'namespace' || $name eq 'name';
	return lit(pick(@SIGNALS)) if $name eq 'signal_name';
	return lit(pick(@TYPES)) if $name eq 'workflow_type';
	return lit(pick(@ACT_TYPES)) if $name eq 'activity_type';
	return lit(pick(@REUSE)) if $name eq 'id_reuse_policy';
	return lit(gen_cron()) if $name eq 'cron_schedule' || $name eq 'schedule';
	return lit(pick('UnknownWorkflowType', 'BadScheduleActivityAttributes', 'x')) if $name eq 'cause';
	return lit(pick('1', 'a:1', '')) if $name eq 'handle';
	return lit(pick('boom', 'durable:Generic', '57014', 'r' x rint(1, 5)));
}

sub gen_cron
{
	return pick('* * * * *', '*/15 * * * *', '@daily', '@hourly', '@weekly', '@monthly',
		'@yearly', '0 0 31 2 *', '0 0 30 2 *', '59 23 31 12 *', '*/0 * * * *', '61 * * * *',
		'1-100 * * * *', '@reboot', '* * * *', '* * * * * *', '0 0 29 2 1', '5-1 * * * *',
		'*/1000000000000 * * * *', '0-59/59 0-23 1-31 1-12 0-7', '', 'x' x 2000);
}

my @INTERVALS = ('0', '1 second', '1 microsecond', '-1 microsecond', '0.5 seconds',
	'10 seconds', '1 hour', '-5 days', '100000000 years', '178000000 years',
	'-178000000 years', '2147483647 days', '-2147483648 days', '2147483647 hours',
	'2147483647 months', '1 year', '30 days', '1 mon -30 days', '9223372036854 seconds',
	'-9223372036854 seconds');

sub gen_interval
{
	my ($name) = @_;
	$name //= '';
	return 'NULL' if chance(0.1);
	if ($name eq 'wait')
	{
		return pick(lit('0'), lit('0'), lit('0.05 seconds'), lit('-1 second'), lit('100000000 years'),
			lit('1 microsecond'), lit('0.2 seconds'));
	}
	return lit(pick(@INTERVALS)) . '::interval';
}

sub gen_int
{
	return pick('NULL', '0', '-1', '1', '2', '10', '1000', '2147483647', '-2147483648',
		'100000', rint(0, 50));
}

sub gen_float
{
	return pick('NULL', lit('NaN'), lit('Infinity'), lit('-Infinity'), '0', '-1', '1', '2.0',
		'1e308', '1e-308', '0.5', '1000000') . '::float8';
}

sub gen_ts
{
	return pick('NULL', lit('infinity'), lit('-infinity'), lit('4713-01-01 00:00:00+00 BC'),
		lit('294276-12-31 23:59:59+00'), 'now()', lit('2026-02-28 23:59:59+00'),
		lit('2000-01-01 00:00:00+00')) . '::timestamptz';
}

sub gen_uuid
{
	return 'NULL' if chance(0.3);
	return lit(pick(@run_ids)) . '::uuid' if @run_ids && chance(0.7);
	return pick(lit('00000000-0000-0000-0000-000000000000'), 'gen_random_uuid()') . '::uuid';
}

sub gen_text_array
{
	return pick('NULL', lit('{}'), lit('{NULL}'), lit('{boom,57014}'), "ARRAY[repeat('x', 2097152)]",
		"(SELECT array_agg(i::text) FROM generate_series(1, 10000) i)") . '::text[]';
}

sub gen_regproc
{
	return lit(pick('fz.wf_main(jsonb)', 'fz.act_echo(jsonb)', 'fz.act_raise(jsonb)',
		'fz.bad_text(text)', 'fz.bad_setof(jsonb)', 'pg_catalog.now()',
		'durable.describe_workflow(text,text,uuid)', 'pg_catalog.jsonb_strip_nulls(jsonb)')) .
	  '::regprocedure';
}

sub gen_regrole
{
	return 'NULL' if chance(0.2);
	return lit(pick('fuzz_app', 'fuzz_none', 'fuzz_client', 'durable_admin', 'pg_monitor',
		'postgres', 'fuzz_worker')) . '::regrole';
}

# A random JSON value (a Perl structure), with edge numbers.
sub rand_json
{
	my ($depth) = @_;
	$depth //= 0;
	my $r = rand();
	return undef if $r < 0.1;
	return pick(0, -1, 1, 1.5, 1e300, 2147483648, 9.3e18, '1e1000') if $r < 0.3;
	return pick('', 'x', 'NaN', 'Infinity', "\x{1F600}", 'a' x 100) if $r < 0.5;
	return pick(JSON::PP::true, JSON::PP::false) if $r < 0.55;
	return [map { rand_json($depth + 1) } 1 .. rint(0, 3)] if $r < 0.75 && $depth < 3;
	return { map { pick('k', 'input', 'code', 'x' . $_) => rand_json($depth + 1) } 1 .. rint(0, 3) }
	  if $depth < 3;
	return 'leaf';
}

# A jsonb expression for a payload argument.
sub gen_payload
{
	my $r = rand();
	return 'NULL' if $r < 0.1;
	return lit("null") . '::jsonb' if $r < 0.15;
	return "(repeat('[', 10000) || repeat(']', 10000))::jsonb" if $r < 0.17;
	return "jsonb_build_object('big', repeat('x', 2097152))" if $r < 0.19;
	return "jsonb_build_object('big', repeat('x', 1048576))" if $r < 0.20;
	return "(SELECT jsonb_agg(i) FROM generate_series(1, 100000) i)" if $r < 0.21;
	return "(SELECT jsonb_object_agg('k' || i, i) FROM generate_series(1, 20000) i)" if $r < 0.22;
	return lit('1e1000') . '::jsonb' if $r < 0.24;
	return lit(jenc(rand_json())) . '::jsonb';
}

# JSON text of a Perl value; numbers given as strings like '1e1000' are written raw.
sub jenc
{
	my ($v) = @_;
	my $s = $JSON->encode($v);
	$s =~ s/"(1e1000|-1e1000|1e-1000)"/$1/g;
	return $s;
}

# A number for a *Seconds field: mostly sane, sometimes extreme or of the wrong type.
our $SANE = 0;    # set: generate well-formed decisions, to get deep into the engine
our $EAGER = 0;   # set: answer as an eager worker does (eager activities, the next task back)

sub secs
{
	return rint(1, 30) if $SANE;
	my $r = rand();
	return rint(1, 30) if $r < 0.6;
	return pick(0, -1, 0.000001, 1e300, '1e1000', 2147483648, 9.3e18, 86400 * 365 * 1e6,
		'NaN', 'Infinity', '10', undef, [], {}, JSON::PP::true);
}

sub gen_policy_json
{
	return undef if chance(0.4);
	my %p;
	$p{initialIntervalInSeconds} = secs() if chance(0.9);
	$p{backoffCoefficient} = pick(1, 2.0, 0.5, 1e300, '1e1000', 'NaN', -1, 100) if chance(0.5);
	$p{maximumIntervalInSeconds} = secs() if chance(0.4);
	$p{expirationIntervalInSeconds} = secs() if chance(0.3);
	$p{maximumAttempts} = pick(0, 1, 3, 10, -1, 2147483647, 2147483648, 1e300, 'x') if chance(0.8);
	$p{nonRetriableErrorReasons} = pick([], ['boom'], ['57014', 'P0001'], 'boom', [1]) if chance(0.3);
	$p{bogus} = 1 if chance(0.05);
	return \%p;
}

sub gen_policy
{
	my $p = gen_policy_json();
	return pick('NULL', lit('[]') . '::jsonb', lit('"x"') . '::jsonb') if !$p && chance(0.3);
	return 'NULL' unless $p;
	return lit(jenc($p)) . '::jsonb';
}

# A task token: a real one, a stale one, or a mutation of one.
sub gen_token
{
	my $r = rand();
	my @all = (@dtokens, @atokens, @old_tokens);
	return 'NULL' if $r < 0.05;
	return lit(pick(@all)) if @all && $r < 0.35;
	return lit(mutate_token(pick(@all))) if @all && $r < 0.85;
	my $z = '00000000-0000-0000-0000-000000000000';
	return lit(pick('', 'D:', 'A:x', "D:$z:1:1", "A:$z:1:1",
		'D:zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz:1:1',
		"D:$z:9223372036854775807:9223372036854775807",
		"D:$z:99999999999999999999:1", "D:$z:-1:-1", "A:$z:1:1:1", "D:$z: 1: 1",
		"D:$z:0x10:1", 'D1:', 'A1:0:', 'D1:1001:x', "D1:7:default:1:x:$z:1:1:0000000000000000",
		"A1:7:default:1:x:$z:1:2147483648:0000000000000000",
		"A1:7:default:1:x:$z:1:1:000000000000000", "D1:7:default:99:x:$z:1:1:0000000000000000",
		"D1:7:default:1:x:$z:9223372036854775808:1:0000000000000000",
		"D1:7:default:1:x:$z:1:1:FFFFFFFFFFFFFFFF"));
}

# The parts of a token of 0.3.0 (kind, namespace, workflow id, run id, scheduled id,
# started id or attempt, secret; the names as UTF-8 bytes), or () for another.
sub split_token
{
	my ($t) = @_;
	utf8::encode($t) if utf8::is_utf8($t);
	return () unless $t =~ /^([DA])1:/;
	my ($k, $p, @names) = ($1, 3);
	for (1 .. 2)
	{
		return () unless substr($t, $p) =~ /^(\d+):/;
		$p += length($1) + 1;
		push @names, substr($t, $p, $1);
		$p += $1;
		return () unless substr($t, $p, 1) eq ':';
		$p++;
	}
	return () unless substr($t, $p) =~ /^([0-9a-f-]{36}):(\d+):(\d+):([0-9a-f]{16})$/;
	return ($k, @names, $1, $2, $3, $4);
}

# A token of 0.3.0 from its parts (names as UTF-8 bytes), as a Perl string.
sub join_token
{
	my ($k, $ns, $wid, $u, $a, $b, $s) = @_;
	my $t = sprintf('%s1:%d:%s:%d:%s:%s:%s:%s:%s', $k, length($ns), $ns, length($wid), $wid, $u, $a, $b, $s);
	utf8::decode($t);
	return $t;
}

# A token changed in one part: kind, run id, event ids, attempt, secret (another, one
# digit, another token's), namespace, workflow id, lengths, the 0.2.0 format, or cut.
sub mutate_token
{
	my ($t) = @_;
	my ($k, $ns, $wid, $u, $a, $b, $s) = split_token($t);
	if (!defined $k)
	{
		return $t unless $t =~ /^([DA]):([0-9a-f-]{36}):(-?\d+):(-?\d+)$/;
		($k, $u, $a, $b) = ($1, $2, $3, $4);
		my $m = rint(0, 9);
		$k = $k eq 'D' ? 'A' : 'D' if $m == 0;
		$u = pick(@run_ids) if $m == 1 && @run_ids;
		$u = '00000000-0000-0000-0000-000000000000' if $m == 2;
		$a += pick(-1, 1, 2, 1000) if $m == 3;
		$b += pick(-1, 1, 2, 1000) if $m == 4;
		$a = pick('9223372036854775807', '9223372036854775808', '0') if $m == 5;
		$b = pick('9223372036854775807', '2147483648', '0') if $m == 6;
		return uc("$k:$u:$a:$b") if $m == 7;
		return "$k:$u:$a:$b:1" if $m == 8;
		return "$k:$u:$a:$b";
	}
	my $m = rint(0, 15);
	$k = $k eq 'D' ? 'A' : 'D' if $m == 0;
	$u = pick(@run_ids) if $m == 1 && @run_ids;
	$u = '00000000-0000-0000-0000-000000000000' if $m == 2;
	$a += pick(-1, 1, 2, 1000) if $m == 3;
	$b += pick(-1, 1, 2, 1000) if $m == 4;
	$a = pick('9223372036854775807', '9223372036854775808', '0') if $m == 5;
	$b = pick('9223372036854775807', '2147483648', '0') if $m == 6;
	$s = sprintf('%08x%08x', rint(0, 0xffffffff), rint(0, 0xffffffff)) if $m == 7;
	substr($s, rint(0, 15), 1) = pick(0 .. 9, 'a' .. 'f') if $m == 8;
	if ($m == 9)
	{
		my @other = split_token(pick(@dtokens, @atokens, @old_tokens));
		$s = $other[6] if @other;
	}
	$ns = pick('default', 'fuzz', '', 'x' x 1001) if $m == 10;
	if ($m == 11)
	{
		$wid = pick(@wids) // 'w';
		utf8::encode($wid) if utf8::is_utf8($wid);
	}
	return "$k:$u:$a:$b" if $m == 12;    # forged from the ids, in 0.2.0's format
	my $tok = join_token($k, $ns, $wid, $u, $a, $b, $s);
	return substr($tok, 0, rint(0, length($tok) - 1)) if $m == 13;
	$tok =~ s/^([DA]1:)(\d+)/$1 . ($2 + pick(-1, 1))/e if $m == 14;
	return uc($tok) if $m == 15;
	return $tok;
}

# ---------------------------------------------------------------- decisions

my @DECISION_TYPES = qw(ScheduleActivityTask RequestCancelActivityTask StartTimer CancelTimer
  CompleteWorkflowExecution FailWorkflowExecution CancelWorkflowExecution
  ContinueAsNewWorkflowExecution RecordMarker UpsertWorkflowSearchAttributes
  StartChildWorkflowExecution SignalExternalWorkflowExecution
  RequestCancelExternalWorkflowExecution);

# Replace a field's value by a wrong one, sometimes.
sub wrong { return pick(undef, 1e300, '1e1000', -1, [], {}, JSON::PP::true, '', 'x' x 1100, 'NaN'); }

sub id_value
{
	my ($pool) = @_;
	return 'u' . rint(0, 1000000) if $SANE && chance(0.8);
	return @$pool && chance(0.5) ? pick(@$pool) : pick('a', 'b', 't1', 'c' . rint(0, 5));
}

sub gen_decision
{
	my ($closing_ok) = @_;
	my $type = $SANE ? ($closing_ok ? pick(@DECISION_TYPES)
			: pick(qw(ScheduleActivityTask ScheduleActivityTask ScheduleActivityTask StartTimer
				RequestCancelActivityTask CancelTimer RecordMarker UpsertWorkflowSearchAttributes
				StartChildWorkflowExecution SignalExternalWorkflowExecution
				RequestCancelExternalWorkflowExecution)))
	  : chance(0.03) ? pick('Bogus', '', undef, 5) : pick(@DECISION_TYPES);
	my %d;
	$d{decisionType} = $type unless !$SANE && chance(0.02);
	$type //= '';
	if ($type eq 'ScheduleActivityTask')
	{
		%d = (%d, activityId => id_value(\@activity_ids), activityType => pick(@ACT_TYPES),
			input => { code => pick('57014', '40P01', 'P0001', 'XX000', '22023'), secs => 0.1 });
		$d{taskQueue} = pick(@QUEUES) if chance(0.5);
		$d{$_} = secs() for grep { chance(0.4) } qw(scheduleToStartTimeoutSeconds
		  startToCloseTimeoutSeconds scheduleToCloseTimeoutSeconds heartbeatTimeoutSeconds);
		$d{retryPolicy} = gen_policy_json() if chance(0.4);
		$d{priority} = pick(1, 3, 5, 0, 9, 2.5, '1') if chance(0.15);
		$d{concurrencyKey} = pick('k1', 'k2', '', 'x' x 300) if chance(0.15);
		$d{requestEagerExecution} = pick(JSON::PP::true, JSON::PP::true, JSON::PP::false) if chance(0.35);
		if ($EAGER && chance(0.9))
		{
			$d{requestEagerExecution} = JSON::PP::true;
			delete $d{taskQueue};
		}
		remember(\@activity_ids, $d{activityId}, 20);
	}
	elsif ($type eq 'RequestCancelActivityTask')
	{
		$d{activityId} = id_value(\@activity_ids);
	}
	elsif ($type eq 'StartTimer' || $type eq 'CancelTimer')
	{
		$d{timerId} = id_value(\@timer_ids);
		$d{startToFireTimeoutSeconds} = secs() if $type eq 'StartTimer' || chance(0.2);
		remember(\@timer_ids, $d{timerId}, 20);
	}
	elsif ($type eq 'CompleteWorkflowExecution') { $d{result} = rand_json(); }
	elsif ($type eq 'FailWorkflowExecution')
	{
		$d{reason} = pick('boom', '', undef, 'x' x 2000);
		$d{details} = rand_json();
	}
	elsif ($type eq 'CancelWorkflowExecution') { $d{details} = rand_json(); }
	elsif ($type eq 'ContinueAsNewWorkflowExecution')
	{
		$d{input} = rand_json();
		$d{workflowType} = pick(@TYPES) if chance(0.5);
		$d{taskQueue} = pick(@QUEUES) if chance(0.5);
		$d{$_} = secs() for grep { chance(0.3) } qw(workflowRunTimeoutSeconds
		  taskStartToCloseTimeoutSeconds backoffStartIntervalInSeconds);
		$d{retryPolicy} = gen_policy_json() if chance(0.3);
		$d{cronSchedule} = gen_cron() if chance(0.1);
		$d{memo} = rand_json() if chance(0.2);
	}
	elsif ($type eq 'RecordMarker')
	{
		$d{markerName} = pick('SideEffect', 'Version', 'm', '');
		$d{details} = rand_json();
		$d{header} = rand_json() if chance(0.3);
	}
	elsif ($type eq 'UpsertWorkflowSearchAttributes') { $d{searchAttributes} = rand_json(); }
	elsif ($type eq 'StartChildWorkflowExecution')
	{
		$d{workflowType} = pick(@TYPES);
		$d{workflowId} = wid() if chance(0.7);
		$d{namespace} = pick(@NAMESPACES, 'nope') if chance(0.3);
		$d{taskQueue} = pick(@QUEUES) if chance(0.5);
		$d{input} = rand_json();
		$d{retryPolicy} = gen_policy_json() if chance(0.2);
		$d{$_} = secs() for grep { chance(0.3) } qw(workflowExecutionTimeoutSeconds
		  workflowRunTimeoutSeconds taskStartToCloseTimeoutSeconds);
		$d{parentClosePolicy} = pick('TERMINATE', 'REQUEST_CANCEL', 'ABANDON', 'x') if chance(0.6);
		$d{workflowIdReusePolicy} = pick(@REUSE) if chance(0.3);
		$d{cronSchedule} = gen_cron() if chance(0.05);
		$d{memo} = rand_json() if chance(0.2);
		$d{control} = rand_json() if chance(0.2);
		$d{priority} = pick(1, 4, 7) if chance(0.1);
		$d{concurrencyKey} = pick('k1', 'k3', '') if chance(0.1);
	}
	elsif ($type eq 'SignalExternalWorkflowExecution'
		|| $type eq 'RequestCancelExternalWorkflowExecution')
	{
		$d{workflowId} = wid();
		$d{namespace} = pick(@NAMESPACES) if chance(0.3);
		$d{runId} = pick(@run_ids, 'x', '00000000-0000-0000-0000-000000000000') if chance(0.3) && @run_ids;
		$d{signalName} = pick(@SIGNALS) if $type =~ /^Signal/;
		$d{input} = rand_json() if $type =~ /^Signal/;
		$d{control} = rand_json() if chance(0.2);
		$d{childWorkflowOnly} = pick(JSON::PP::true, JSON::PP::false, 'x') if chance(0.3);
	}
	# Break one field, or add an unknown one.
	if (!$SANE && chance(0.15))
	{
		my @k = grep { $_ ne 'decisionType' } keys %d;
		if (@k && chance(0.5)) { delete $d{ pick(@k) }; }
		elsif (@k) { $d{ pick(@k) } = wrong(); }
		else { $d{unknownField} = 1; }
	}
	return \%d;
}

# A jsonb expression for durable.receive_external's request: a relayed request of each
# kind (a signal or cancel, a child's start, a child's close, a close policy, or an
# unknown kind), aimed at workflows and runs of this database, its fields now and then
# missing or wrong.
sub gen_request
{
	my $maybe = sub { my ($v) = @_; return chance(0.15) ? wrong() : $v; };
	my $run = sub { return @run_ids && chance(0.7) ? pick(@run_ids) : pick('00000000-0000-0000-0000-000000000001', 'nope'); };
	my $kind = pick(undef, 'start_child', 'start_child', 'child_closed', 'child_closed', 'close_policy', 'launch');
	my %r;
	$r{kind} = $kind if defined $kind;
	$r{namespace} = $maybe->(pick(@NAMESPACES));
	$r{workflowId} = $maybe->(wid());
	$r{initiator} = $maybe->({ namespace => 'default', workflowId => wid(), runId => $maybe->($run->()),
		initiatedEventId => $maybe->(rint(1, 40)) });
	if (!defined $kind)
	{
		$r{cancel} = $maybe->(chance(0.5) ? JSON::PP::true : JSON::PP::false);
		$r{signalName} = $maybe->(pick(@SIGNALS));
		$r{input} = rand_json() if chance(0.5);
	}
	elsif ($kind eq 'start_child')
	{
		$r{workflowType} = $maybe->(pick(@TYPES));
		$r{taskQueue} = $maybe->(pick(@QUEUES));
		$r{workflowIdReusePolicy} = $maybe->(pick(@REUSE));
		$r{parentClosePolicy} = $maybe->(pick('TERMINATE', 'REQUEST_CANCEL', 'ABANDON'));
		$r{$_} = $maybe->(secs()) for grep { chance(0.5) } qw(workflowExecutionTimeoutSeconds workflowRunTimeoutSeconds taskStartToCloseTimeoutSeconds);
		$r{priority} = $maybe->(rint(1, 5)) if chance(0.5);
		$r{memo} = rand_json() if chance(0.2);
		$r{retryPolicy} = rand_json() if chance(0.2);
		$r{parentClosed} = JSON::PP::true if chance(0.2);
	}
	elsif ($kind eq 'child_closed')
	{
		$r{parentRunId} = $maybe->($run->());
		$r{parentInitiatedEventId} = $maybe->(rint(1, 40));
		$r{eventType} = $maybe->(pick('ChildWorkflowExecutionCompleted', 'ChildWorkflowExecutionFailed',
			'ChildWorkflowExecutionTerminated', 'WorkflowExecutionSignaled'));
		$r{attributes} = $maybe->({ result => rand_json(), namespace => 'default', workflowId => wid() });
	}
	elsif ($kind eq 'close_policy')
	{
		$r{runId} = $maybe->($run->());
		$r{policy} = $maybe->(pick('TERMINATE', 'REQUEST_CANCEL', 'ABANDON', 'EXPLODE'));
		$r{parent} = $maybe->({ namespace => 'default', workflowId => wid() });
	}
	return lit(jenc(\%r)) . '::jsonb';
}

# A jsonb expression for the decisions argument.
sub gen_decisions
{
	my $r = rand();
	return 'NULL' if $r < 0.03;
	return pick(lit('{}'), lit('1'), lit('"x"'), lit('null'), lit('[1]'), lit('[[]]'), lit('[null]')) . '::jsonb'
	  if $r < 0.08;
	return "(SELECT jsonb_agg(jsonb_build_object('decisionType', 'RecordMarker', 'markerName', 'm' || i)) FROM generate_series(1, 5000) i)"
	  if $r < 0.09;
	my @d = map { gen_decision(1) } 1 .. rint(0, 4);
	return lit(jenc(\@d)) . '::jsonb';
}

# A random program for fz.wf_main.
sub gen_ops
{
	my ($depth) = @_;
	$depth //= 0;
	my @ops;
	for (1 .. rint(0, 5))
	{
		my $k = rint(0, 17);
		my $opts = chance(0.5) ? undef : {
			(chance(0.5) ? (startToCloseTimeoutSeconds => secs()) : ()),
			(chance(0.3) ? (scheduleToCloseTimeoutSeconds => secs()) : ()),
			(chance(0.2) ? (heartbeatTimeoutSeconds => secs()) : ()),
			(chance(0.3) ? (retryPolicy => gen_policy_json()) : ()),
			(chance(0.2) ? (taskQueue => pick(@QUEUES)) : ()),
			(chance(0.05) ? (bogus => 1) : ()) };
		my $code = pick('57014', '40P01', '40001', '53200', 'XX000', 'P0001', '22023',
			'WF007', 'WF008', '55P03', '25006', '0A000', '23505', '08006', '57P01');
		my $atype = pick('echo', 'echo', 'raise', 'slow', 'null', 'big', 'spin', 'ext_act', '');
		push @ops,
		    $k <= 2 ? { op => 'act', type => $atype, input => { code => $code, secs => pick(0, 0.05, 0.2) }, options => $opts }
		  : $k == 3 ? { op => 'act_catch', type => $atype, input => { code => $code }, options => $opts }
		  : $k == 4 ? { op => 'start', type => $atype, input => { code => $code } }
		  : $k == 5 ? { op => 'await' }
		  : $k == 6 ? { op => 'sleep', secs => pick('1 second', '0', '-1 second', '100000000 years', '0.001 seconds', '10 seconds') }
		  : $k == 7 ? { op => 'signal', name => pick(@SIGNALS), timeout => pick(undef, '1 second', '0', '-5 days', '178000000 years') }
		  : $k == 8 && $depth < 1 ? { op => pick('child', 'child_catch'), type => pick('fzwf', 'ext', 'fzwf'),
			  input => { ops => gen_ops($depth + 1) },
			  options => { (chance(0.5) ? (workflowId => wid()) : ()),
				parentClosePolicy => pick('TERMINATE', 'REQUEST_CANCEL', 'ABANDON'),
				(chance(0.3) ? (workflowRunTimeoutSeconds => secs()) : ()) } }
		  : $k == 9 ? { op => 'side', value => rand_json() }
		  : $k == 10 ? { op => 'info' }
		  : $k == 11 ? { op => 'raise', code => $code }
		  : $k == 12 ? { op => 'catch_all', code => $code }
		  : $k == 13 ? { op => 'write' }
		  : $k == 14 ? { op => 'random' }
		  : $k == 15 ? { op => 'pg_sleep', secs => pick(0.01, 0.3) }
		  : $k == 16 ? { op => 'await_bad', handle => pick('1', '99', 'x', '') }
		  :            { op => 'now' };
	}
	return \@ops;
}

# ---------------------------------------------------------------- the client

# SQLSTATEs any API call may raise: validation and engine conditions, privileges,
# read-only and aborted transactions.  Everything else is a finding.
my %EXPECTED = map { $_ => 1 } qw(22004 22023 42501 25006 25P02 55000 55006 42710
  WF001 WF002 WF003 WF005 WF006 WF007 WF008 54001);
# Per function, on top: cron_next refuses an infinite or unreachable fire time with 22008;
# grant_namespace and revoke_namespace name a role, 42704 when there is no such role;
# wait_workflow refuses to wait in REPEATABLE READ or SERIALIZABLE with 25000, and one
# called with its default wait (30 s) on an open chain is cut by the fuzzer's own
# statement_timeout (5 s) with 57014, as a client's would be.
my %EXPECTED_FOR = (cron_next => { '22008' => 1 }, grant_namespace => { '42704' => 1 },
	revoke_namespace => { '42704' => 1 }, wait_workflow => { '25000' => 1, '57014' => 1 });

my ($dbh, $client, $current_role, $clock, $backend_pid, @ring, %stats, @findings);
my $in_read_only = 0;
my $txn_mode = 'auto';

sub log_stmt
{
	my ($sql) = @_;
	push @ring, $sql;
	shift @ring if @ring > 40;
}

# The statements that set this session up as it is now: role and clock.
sub preamble
{
	my @p;
	push @p, "SET durable.test_time = " . lit($clock) . ";" if defined $clock;
	push @p, "SET ROLE $current_role;" if $current_role;
	return @p;
}

sub recent_drop
{
	my @s = stat($DROP_STAMP);
	return @s && time() - $s[9] < 15;
}

sub record_finding
{
	my (%f) = @_;
	# A clock past year 9999 or infinite (durable.test_time, superuser only) is its own class.
	$f{kind} .= ' (edge test_time)'
	  if defined $clock && ($clock !~ /^(\d+)-/ || $1 > 9999) && $f{kind} ne 'connection lost';
	$f{client} = $client;
	$f{pid} = $backend_pid;
	$f{context} = [@ring];
	$f{preamble} = [preamble()];
	push @findings, \%f;
}

sub reconnect
{
	$dbh = connect_db("durable_fuzz_$client");
	($backend_pid) = $dbh->selectrow_array('SELECT pg_backend_pid()');
	$current_role = undef;
	$clock = undef;
	$txn_mode = 'auto';
}

# Run one statement; returns (ok, rows, sqlstate, message).  $func names the API
# function called (undef for plumbing such as BEGIN), for stats and classification.
sub sql
{
	my ($stmt, $func, %o) = @_;
	log_stmt($stmt);
	my $rows = eval {
		$stmt =~ /^\s*(SELECT|WITH|VALUES)\b/i
		  ? $dbh->selectall_arrayref($stmt)
		  : ($dbh->do($stmt) && []);
	};
	if ($rows)
	{
		if ($func) { $stats{$func}{calls}++; $stats{$func}{ok}++; }
		return (1, $rows);
	}
	my $state = $dbh->state // '';
	my $full = $dbh->errstr // $@ // '';
	$full =~ s/\s+$//;
	my ($msg) = split /\n/, $full;
	$msg //= '';
	$msg =~ s/^ERROR:\s+//;
	my $lost = $state =~ /^(08|57P0)/ || !$dbh->ping;
	if ($func)
	{
		$stats{$func}{calls}++;
		$stats{$func}{codes}{ $state || 'conn' }++;
		$stats{$func}{ex}{ $state || 'conn' } //= substr($msg, 0, 200);
	}
	if ($lost)
	{
		record_finding(kind => 'connection lost', sqlstate => $state, func => $func // '',
			message => $msg, full => $full, stmt => $stmt);
		reconnect();
		return (0, undef, 'conn', $msg);
	}
	return (0, undef, $state, $msg) unless $func;
	return (0, undef, $state, $msg) if $o{expect} && $o{expect}{$state};
	my $kind;
	if ($state =~ /^XX/) { $kind = 'XX000'; }
	elsif ($EXPECTED{$state} || $allow{$state} || ($EXPECTED_FOR{$func} // {})->{$state}) { }
	elsif ($state eq '57014' && ($func =~ /^poll_/ || $o{may_time_out})) { }
	elsif ($state =~ /^(40001|40P01)$/ && $txn_mode eq 'serial') { }
	# DROP EXTENSION takes an AccessExclusiveLock on every table: calls in its window may
	# find nothing, or wait for it (57014) or deadlock with it (40P01).
	elsif ($state =~ /^(3F000|42883|42P01|42704|57014|40P01)$/ && ($opt{drop} && recent_drop())) { }
	else { $kind = 'unexpected SQLSTATE'; }
	# What a timed-out or deadlocked call waited for.
	if ($kind && $state =~ /^(57014|40P01)$/)
	{
		my $w = eval {
			$dbh->selectall_arrayref(q{
				SELECT pid, backend_type, state, wait_event_type || ':' || wait_event,
				       round(extract(epoch FROM clock_timestamp() - xact_start)::numeric, 1),
				       left(query, 300)
				  FROM pg_stat_activity
				 WHERE pid <> pg_backend_pid() AND state IS DISTINCT FROM 'idle'
				   AND backend_type IN ('client backend', 'durable executor', 'durable timer worker')});
		};
		$full .= "\nother sessions then: " . join("\n  ", '', map { join(' | ', map { $_ // '' } @$_) } @{ $w // [] });
	}
	record_finding(kind => $kind, sqlstate => $state, func => $func, message => $msg, full => $full,
		stmt => $stmt)
	  if $kind;
	return (0, undef, $state, $msg);
}

sub plumbing { my ($s) = @_; my @r = sql($s); return $r[0]; }

sub set_role
{
	my ($role) = @_;
	return if ($current_role // '') eq ($role // '');
	plumbing($role ? "SET ROLE $role" : 'RESET ROLE');
	$current_role = $role;
}

sub move_clock
{
	set_role(undef);
	my $r = rand();
	if ($r < 0.08)
	{
		plumbing('RESET durable.test_time');
		$clock = undef;
		return;
	}
	if ($r < 0.1)
	{
		# Edge clocks, set for one call only.
		my $t = pick('infinity', '-infinity', '294276-12-31 00:00:00+00', '4713-01-01 00:00:00+00 BC');
		plumbing("SET durable.test_time = '$t'");
		$clock = $t;
		return;
	}
	my $base = defined $clock && $clock =~ /^\d{4}-/ ? $clock : undef;
	my $secs = pick(0, 1, 2, 5, 11, 61, 600, 3600, 86400, 86400 * 8, -30, -86400, 86400 * 366);
	my $new = $base
	  ? "(timestamptz '$base' + interval '$secs seconds')"
	  : "(now() + interval '$secs seconds')";
	my ($ok, $rows) = sql("SELECT to_char($new AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00'");
	return unless $ok;
	$clock = $rows->[0][0];
	plumbing("SET durable.test_time = '$clock'");
}

# Call $stmt (an API call) in a random transaction mode.  Returns what sql() returns.
sub call
{
	my ($stmt, $func, %o) = @_;
	my $r = $o{mode} // rand();
	if ($r < 0.6)
	{
		return sql($stmt, $func, %o);
	}
	if ($r < 0.7)
	{
		$txn_mode = 'ro';
		plumbing('BEGIN READ ONLY');
		my @res = sql($stmt, $func, %o, expect => { '25006' => 1 });
		if ($res[0])
		{
			my ($ok, $rows) = sql('SELECT txid_current_if_assigned()');
			if ($ok && defined $rows->[0][0])
			{
				record_finding(kind => 'write in a READ ONLY transaction', sqlstate => '',
					func => $func, message => 'the call succeeded and assigned a transaction id',
					stmt => "BEGIN READ ONLY;\n$stmt;\nSELECT txid_current_if_assigned();");
			}
		}
		plumbing('ROLLBACK');
		$txn_mode = 'auto';
		return @res;
	}
	if ($r < 0.77)
	{
		$txn_mode = 'aborted';
		plumbing('BEGIN');
		sql('SELECT 1/0');
		my @res = sql($stmt, $func, %o);
		if ($res[0])
		{
			record_finding(kind => 'ran in an aborted transaction', sqlstate => '', func => $func,
				message => 'the call succeeded after an error', stmt => "BEGIN;\nSELECT 1/0;\n$stmt;");
		}
		plumbing('ROLLBACK');
		$txn_mode = 'auto';
		return @res;
	}
	if ($r < 0.87)
	{
		$txn_mode = 'sp';
		plumbing('BEGIN');
		plumbing('SAVEPOINT s');
		my @res = sql($stmt, $func, %o);
		plumbing(chance(0.5) ? 'ROLLBACK TO SAVEPOINT s' : 'RELEASE SAVEPOINT s') if $res[0];
		plumbing('ROLLBACK TO SAVEPOINT s') unless $res[0];
		random_call(mode => 0) if chance(0.5);
		plumbing(chance(0.7) ? 'COMMIT' : 'ROLLBACK');
		$txn_mode = 'auto';
		return @res;
	}
	if ($r < 0.92)
	{
		$txn_mode = 'serial';
		plumbing('BEGIN ISOLATION LEVEL ' . pick('REPEATABLE READ', 'SERIALIZABLE'));
		my @res = sql($stmt, $func, %o);
		plumbing('COMMIT');
		$txn_mode = 'auto';
		return @res;
	}
	$txn_mode = 'txn';
	plumbing('BEGIN');
	my @res = sql($stmt, $func, %o);
	plumbing(chance(0.8) ? 'COMMIT' : 'ROLLBACK');
	$txn_mode = 'auto';
	return @res;
}

# ---------------------------------------------------------------- random calls

my @FUNCS;    # [name, [argnames], [argtypes], ndefaults, retset]

sub load_functions
{
	my $rows = $dbh->selectall_arrayref(q{
		SELECT p.proname, COALESCE(p.proargnames, '{}'),
		       p.proargtypes::oid[]::regtype[]::text[], p.pronargdefaults, p.proretset
		  FROM pg_proc p
		 WHERE p.pronamespace = 'durable'::regnamespace
		   AND p.prorettype <> 'trigger'::regtype
		   -- a planner support function (internal) cannot be called from SQL
		   AND p.prorettype <> 'internal'::regtype
		 ORDER BY 1});
	# Right after a DROP EXTENSION there are none: keep the old list.
	@FUNCS = @$rows if @$rows;
}

sub gen_arg
{
	my ($type, $name) = @_;
	return gen_text($name) if $type eq 'text';
	if ($type eq 'jsonb')
	{
		return gen_decisions() if $name eq 'decisions';
		return gen_request() if $name eq 'request' && chance(0.8);
		return gen_policy() if $name =~ /retry_policy/;
		return "jsonb_build_object('ops', " . lit(jenc(gen_ops())) . "::jsonb)" if $name eq 'input' && chance(0.2);
		return gen_payload();
	}
	return gen_interval($name) if $type eq 'interval';
	return gen_int() if $type eq 'integer';
	return pick(gen_int(), '9223372036854775807', '-9223372036854775808') if $type eq 'bigint';
	return gen_float() if $type eq 'double precision';
	return gen_uuid() if $type eq 'uuid';
	return gen_ts() if $type eq 'timestamp with time zone';
	return gen_text_array() if $type eq 'text[]';
	return gen_regproc() if $type eq 'regprocedure';
	return gen_regrole() if $type eq 'regrole';
	return 'NULL';
}

sub random_role { return chance(0.4) ? undef : pick(@ROLES); }

# One call of a random API function with random arguments, as a random role.
sub random_call
{
	my (%co) = @_;
	return unless @FUNCS;
	my $f = pick(@FUNCS);
	my ($name, $argnames, $argtypes, $ndef, $retset) = @$f;
	my @args;
	for my $i (0 .. $#$argtypes)
	{
		my $an = $argnames->[$i] // "a$i";
		my $optional = $i >= @$argtypes - $ndef;
		next if $optional && chance(0.4);
		push @args, "$an => " . gen_arg($argtypes->[$i], $an);
	}
	my $call = "durable.$name(" . join(', ', @args) . ")";
	my $stmt = $retset ? "SELECT count(*) FROM $call" : "SELECT $call";
	$stmt = "SELECT length(${call}::text)" if !$retset && chance(0.5);
	set_role(random_role()) if $txn_mode eq 'auto';
	my @r = call($stmt, $name, %co, may_time_out => ($name =~ /^(run_tasks|tick|purge)$/ ? 1 : 0));
	return @r;
}

# ---------------------------------------------------------------- sequences

sub as { set_role($_[0]) if $txn_mode eq 'auto'; }

sub rand_start_opts
{
	my @o;
	push @o, "retry_policy => " . gen_policy() if chance(0.3);
	push @o, "id_reuse_policy => " . lit(pick(@REUSE)) if chance(0.3);
	push @o, "execution_timeout => " . lit(pick('30 seconds', '1 hour', '5 seconds', @INTERVALS)) . '::interval' if chance(0.15);
	push @o, "run_timeout => " . lit(pick('20 seconds', '1 hour', @INTERVALS)) . '::interval' if chance(0.15);
	push @o, "decision_timeout => " . lit(pick('1 second', '10 seconds', @INTERVALS)) . '::interval' if chance(0.15);
	push @o, "cron_schedule => " . lit(gen_cron()) if chance(0.05);
	push @o, "delay => " . lit(pick('1 second', '1 minute', @INTERVALS)) . '::interval' if chance(0.1);
	push @o, "memo => " . gen_payload() if chance(0.1);
	push @o, "priority => " . pick(1, 2, 3, 4, 5, 0, 6, -1, 2147483647, 'NULL') if chance(0.2);
	push @o, "concurrency_key => " . lit(pick('k1', 'k2', 'k3', '', 'x' x 300)) if chance(0.2);
	return @o ? ', ' . join(', ', @o) : '';
}

sub start_one
{
	my ($type, $queue, $ns, $input) = @_;
	my $w = wid();
	as(pick('fuzz_client', 'fuzz_admin', undef));
	my $fn = chance(0.2) ? 'signal_with_start' : 'start_workflow';
	my $stmt = $fn eq 'start_workflow'
	  ? "SELECT durable.start_workflow(" . lit($type) . ", $input, " . lit($w) . ", " . lit($queue) . ", " . lit($ns) . rand_start_opts() . ")"
	  : "SELECT durable.signal_with_start(" . lit($type) . ", " . lit($w) . ", " . lit(pick(@SIGNALS)) . ", " . gen_payload()
	  . ", $input, " . lit($queue) . ", " . lit($ns) . rand_start_opts() . ")";
	my ($ok, $rows) = call($stmt, $fn);
	if ($ok)
	{
		remember(\@wids, $w, 60);
		remember(\@run_ids, $rows->[0][0], 60);
	}
}

sub poll_decision
{
	my ($queue, $ns) = @_;
	as(pick('fuzz_worker', 'fuzz_worker', 'fuzz_admin', undef));
	my ($ok, $rows) = call("SELECT durable.poll_decision_task(" . lit($queue) . ", 'fuzz', " . lit($ns)
		  . ", " . pick(lit('0'), lit('0.05 seconds')) . ")", 'poll_decision_task', mode => chance(0.9) ? 0 : undef);
	return unless $ok && defined $rows->[0][0];
	my $t = eval { decode_json($rows->[0][0]) } or return;
	answer_decision_task($t, 0);
}

# The eager dispatch arguments of complete_decision_task and complete_activity
# (return_new_task, max_eager_activities, history_after), now and then: the
# task's own events, other events and edge values.
sub eager_args
{
	my ($t, $decision) = @_;
	if ($EAGER && chance(0.9))
	{
		return ', return_new_task => true' . ($decision ? ', max_eager_activities => ' . rint(1, 3) : '')
		  . (chance(0.8) ? ', history_after => ' . ($t->{startedEventId} // 'NULL') : '');
	}
	return '' unless chance(0.5);
	my @o;
	push @o, 'return_new_task => ' . (chance(0.05) ? 'NULL' : pick('true', 'true', 'false')) if chance(0.8);
	push @o, 'max_eager_activities => ' . pick(1, 1, 2, 5, 0, -1, 'NULL', 2147483647)
	  if $decision && chance(0.7);
	push @o, 'history_after => '
	  . pick($t->{startedEventId} // 'NULL', $t->{previousStartedEventId} // 'NULL', rint(0, 12), -1, 'NULL',
		'9223372036854775807')
	  if chance(0.6);
	return @o ? ', ' . join(', ', @o) : '';
}

# What an eager answer brought back: the next decision task and the activity
# tasks started for the caller are answered in turn, a few levels deep.
sub follow_eager_answer
{
	my ($json, $depth) = @_;
	return unless defined $json && $depth < 4;
	my $a = eval { decode_json($json) } or return;
	return unless ref $a eq 'HASH';
	answer_activity_task($_, $depth + 1) for grep { ref $_ eq 'HASH' } @{ $a->{activityTasks} // [] };
	answer_decision_task($a->{decisionTask}, $depth + 1) if ref $a->{decisionTask} eq 'HASH';
}

# Complete, fail or leave a decision task (polled, or handed back eagerly).
sub answer_decision_task
{
	my ($t, $depth) = @_;
	remember(\@dtokens, $t->{taskToken}, 20);
	remember(\@run_ids, $t->{runId}, 60);
	for my $e (@{ $t->{history} // [] })
	{
		my $a = $e->{attributes} // {};
		remember(\@activity_ids, $a->{activityId}, 20) if defined $a->{activityId};
		remember(\@timer_ids, $a->{timerId}, 20) if defined $a->{timerId};
	}
	my $r = $EAGER ? rand(0.85) : rand();
	as($EAGER ? pick('fuzz_worker', 'fuzz_admin', undef) : pick('fuzz_worker', 'fuzz_worker', 'fuzz_admin', undef, 'fuzz_client'));
	if ($r < 0.8)
	{
		my $decisions;
		if (chance($EAGER ? 0.9 : 0.6))
		{
			local $SANE = 1;
			my @d = map { gen_decision(0) } 1 .. rint(0, 3);
			push @d, gen_decision(1) if chance(0.3);
			$decisions = lit(jenc(\@d)) . '::jsonb';
		}
		else { $decisions = chance(0.8) ? gen_decisions() : lit(jenc([gen_decision(1)])) . '::jsonb'; }
		my ($cok, $rows) = call("SELECT durable.complete_decision_task(" . lit($t->{taskToken}) . ", $decisions, 'fuzz'"
			  . eager_args($t, 1) . ")", 'complete_decision_task');
		remember(\@old_tokens, $t->{taskToken}, 40) if $cok;
		follow_eager_answer($rows->[0][0], $depth) if $cok;
	}
	elsif ($r < 0.9)
	{
		call("SELECT durable.fail_decision_task(" . lit($t->{taskToken}) . ", "
			  . lit(pick('UnknownWorkflowType', 'BadBinary', 'x', '')) . ", " . gen_payload() . ")", 'fail_decision_task');
	}
	# Else leave it to time out.
}

# A workflow started with its first decision task in hand (start_workflow_eager),
# which is answered at once; most of the time as an eager worker answers, taking
# back the activities it schedules and the decision tasks that follow.
sub start_eager
{
	my ($type, $queue, $ns, $input) = @_;
	my $w = wid();
	local $EAGER = chance(0.6);
	as(pick('fuzz_admin', 'fuzz_admin', undef, 'fuzz_worker', 'fuzz_client'));
	my ($ok, $rows) = call("SELECT durable.start_workflow_eager(" . lit($type) . ", $input, " . lit($w) . ", "
		  . lit($queue) . ", " . lit($ns) . (chance(0.3) ? rand_start_opts() : '')
		  . ", identity => " . lit(chance(0.9) ? 'fuzz' : pick('', 'x' x 300)) . ")",
		'start_workflow_eager');
	return unless $ok && defined $rows->[0][0];
	remember(\@wids, $w, 60);
	my $a = eval { decode_json($rows->[0][0]) } or return;
	remember(\@run_ids, $a->{runId}, 60) if defined $a->{runId};
	answer_decision_task($a->{decisionTask}, 0) if ref $a->{decisionTask} eq 'HASH';
}

sub poll_activity
{
	my ($queue, $ns) = @_;
	as(pick('fuzz_worker', 'fuzz_worker', 'fuzz_admin', undef));
	my $many = chance(0.3);
	my $stmt = $many
	  ? "SELECT * FROM durable.poll_activity_tasks(" . lit($queue) . ", 'fuzz', " . lit($ns) . ", '0', " . pick(1, 3, 10, 0, -1) . ")"
	  : "SELECT durable.poll_activity_task(" . lit($queue) . ", 'fuzz', " . lit($ns) . ", " . pick(lit('0'), lit('0.05 seconds')) . ")";
	my ($ok, $rows) = call($stmt, $many ? 'poll_activity_tasks' : 'poll_activity_task', mode => chance(0.9) ? 0 : undef);
	return unless $ok;
	for my $row (@$rows)
	{
		next unless defined $row->[0];
		my $t = eval { decode_json($row->[0]) } or next;
		answer_activity_task($t, 0);
	}
}

# Complete, fail, heartbeat, report canceled or leave an activity task (polled,
# or started eagerly by a decision task's completion).
sub answer_activity_task
{
	my ($t, $depth) = @_;
	my $tok = $t->{taskToken};
	remember(\@atokens, $tok, 20);
	as(pick('fuzz_worker', 'fuzz_worker', 'fuzz_admin', undef));
	my $r = $EAGER && chance(0.7) ? 0 : rand();
	my ($done, $rows, $fn, $s);
	if ($r < 0.35)
	{
		($fn, $s) = ('complete_activity', "SELECT durable.complete_activity(" . lit($tok) . ", " . gen_payload()
			  . eager_args($t, 0) . ")");
	}
	elsif ($r < 0.65)
	{
		($fn, $s) = ('fail_activity', "SELECT durable.fail_activity(" . lit($tok) . ", " . gen_text('reason') . ", "
			  . gen_payload() . ", " . gen_interval() . ")");
	}
	elsif ($r < 0.85)
	{
		($fn, $s) = ('heartbeat_activity', "SELECT durable.heartbeat_activity(" . lit($tok) . ", " . gen_payload() . ")");
	}
	elsif ($r < 0.93)
	{
		($fn, $s) = ('report_activity_canceled', "SELECT durable.report_activity_canceled(" . lit($tok) . ", " . gen_payload() . ")");
	}
	if ($s)
	{
		($done, $rows) = call($s, $fn);
		remember(\@old_tokens, $tok, 40) if $done && $fn ne 'heartbeat_activity';
		follow_eager_answer($rows->[0][0], $depth) if $done && $fn eq 'complete_activity';
	}
}

# Cursors of list_workflows seen so far, reused as they are or altered.
my @cursors;

# list_workflows, count_workflows or count_workflows_by_status with random filters.
sub list_op
{
	my ($ns) = @_;
	my %f = (
		namespace => chance(0.9) ? lit($ns) : gen_text('namespace'),
		status => chance(0.5) ? 'NULL' : chance(0.8)
		? lit(pick(qw(running completed failed canceled terminated continued_as_new timed_out)))
		: gen_text('status'),
		workflow_type => chance(0.7) ? 'NULL' : gen_text('workflow_type'),
		task_queue => chance(0.8) ? 'NULL' : gen_text('task_queue'),
		workflow_id_prefix => chance(0.7) ? 'NULL' : chance(0.5) ? lit(pick('w', 'w1', 'x_%', '\\')) : gen_text(),
		started_since => chance(0.8) ? 'NULL' : gen_ts(),
		started_before => chance(0.8) ? 'NULL' : gen_ts(),
		closed_since => chance(0.85) ? 'NULL' : gen_ts(),
		closed_before => chance(0.85) ? 'NULL' : gen_ts(),
		search_attributes => chance(0.7) ? 'NULL' : gen_payload(),
		memo => chance(0.8) ? 'NULL' : gen_payload());
	my @keys = grep { $f{$_} ne 'NULL' || $_ eq 'namespace' } sort keys %f;
	my $r = rand();
	if ($r < 0.7)
	{
		my $after = 'NULL';
		if (@cursors && chance(0.6))
		{
			$after = pick(@cursors);
			if (chance(0.3))
			{
				my $i = rint(0, length($after) - 1);
				substr($after, $i, 1) = pick('0', 'f', 'g', '', "'", 'zz');
			}
			$after = lit($after);
		}
		elsif (chance(0.1)) { $after = gen_text(); }
		my $args = join(', ', (map { "$_ => $f{$_}" } @keys), 'page_size => ' . (chance(0.7) ? rint(1, 5) : gen_int()),
			"after => $after");
		my ($ok, $rows) = call("SELECT count(*), min(cursor) FROM durable.list_workflows($args)", 'list_workflows');
		remember(\@cursors, $rows->[0][1], 20) if $ok && $rows && $rows->[0][1];
	}
	elsif ($r < 0.85)
	{
		call("SELECT durable.count_workflows(" . join(', ', map { "$_ => $f{$_}" } @keys) . ")", 'count_workflows');
	}
	else
	{
		call("SELECT count(*) FROM durable.count_workflows_by_status("
			  . join(', ', map { "$_ => $f{$_}" } grep { $_ ne 'status' } @keys) . ")",
			'count_workflows_by_status');
	}
}

sub client_op
{
	my $w = wid();
	my $ns = pick(@NAMESPACES);
	as(pick('fuzz_client', 'fuzz_admin', undef, 'fuzz_client'));
	my $run = chance(0.2) ? gen_uuid() : 'NULL';
	my $r = rand();
	if ($r < 0.4)
	{
		call("SELECT durable.signal_workflow(" . lit($w) . ", " . lit(pick(@SIGNALS)) . ", " . gen_payload() . ", " . lit($ns)
			  . ", $run)", 'signal_workflow');
	}
	elsif ($r < 0.55)
	{
		call("SELECT durable.cancel_workflow(" . lit($w) . ", " . gen_text('reason') . ", " . lit($ns) . ", $run)",
			'cancel_workflow');
	}
	elsif ($r < 0.65)
	{
		call("SELECT durable.terminate_workflow(" . lit($w) . ", " . gen_text('reason') . ", " . gen_payload() . ", "
			  . lit($ns) . ", $run)", 'terminate_workflow');
	}
	elsif ($r < 0.71)
	{
		# Reset to a DecisionTaskCompleted of the run (or the default, or any number).
		my $event = pick('NULL', gen_int(),
			"(SELECT max(event_id) FROM durable.get_history(" . lit($w) . ", " . lit($ns) . ", $run)"
			  . " WHERE event_type = 'DecisionTaskCompleted' AND event_id < " . rint(2, 40) . ")");
		call("SELECT durable.reset_workflow(" . lit($w) . ", " . gen_text('reason') . ", " . lit($ns)
			  . ", $run, $event)", 'reset_workflow');
	}
	elsif ($r < 0.75)
	{
		call("SELECT durable.restart_workflow(" . lit($w) . ", " . gen_text('reason') . ", " . lit($ns)
			  . ", $run, " . (chance(0.5) ? 'NULL' : gen_payload()) . ")", 'restart_workflow');
	}
	elsif ($r < 0.78)
	{
		call("SELECT durable.describe_workflow(" . lit($w) . ", " . lit($ns) . ", $run)", 'describe_workflow');
	}
	elsif ($r < 0.83)
	{
		# Short waits only (an open chain waits them out); the bad ones fail first.
		call("SELECT durable.wait_workflow(" . lit($w) . ", " . lit($ns) . ", $run, "
			  . pick(lit('0'), lit('0.05 seconds'), 'NULL', lit('-1 second'), lit('36526 days'),
				lit('1000000 months -29999999 days')) . ")", 'wait_workflow');
	}
	elsif ($r < 0.88)
	{
		list_op($ns);
	}
	elsif ($r < 0.92)
	{
		# The monitoring views and the exposition text, while the others work.
		my $q = pick(
			['SELECT count(*), sum(ready_tasks), max(oldest_ready_age) FROM durable.task_queues', 'task_queue_pollers'],
			['SELECT count(*), sum(value) FROM durable.metrics', 'metric_values'],
			['SELECT length(durable.metrics_text())', 'metrics_text']);
		call($q->[0], $q->[1]);
	}
	else
	{
		call("SELECT count(*), max(length(attributes::text)) FROM durable.get_history(" . lit($w) . ", " . lit($ns) . ", $run)",
			'get_history');
	}
}

sub engine_op
{
	my $r = rand();
	if ($r < 0.3) { move_clock(); }
	as(pick('fuzz_admin', undef));
	if ($r < 0.55)
	{
		call("SELECT durable.tick(" . pick(10, 1000, 1) . ")", 'tick', may_time_out => 1);
	}
	elsif ($r < 0.8)
	{
		call("SELECT durable.run_tasks(" . pick(5, 50, 1) . ")", 'run_tasks', may_time_out => 1);
	}
	elsif ($r < 0.9)
	{
		call("SELECT durable.purge(" . pick(10, 1000) . ")", 'purge', may_time_out => 1);
	}
	elsif ($r < 0.94)
	{
		limits_or_batch_op();
	}
	else
	{
		# Namespaces come and go; retention and policies with edge values.
		my $n = 'fzn' . rint(0, 3);
		my $s = pick(
			"SELECT durable.create_namespace(" . lit($n) . ", " . gen_interval() . ", " . gen_policy() . ", 'fuzz')",
			"SELECT durable.alter_namespace(" . lit(pick($n, 'fz1', 'fz2')) . ", " . gen_interval() . ", " . gen_policy() . ")",
			"SELECT durable.drop_namespace(" . lit($n) . ")",
			"SELECT durable." . pick('grant_namespace', 'revoke_namespace') . "("
			  . lit(pick($n, 'fz1', 'fz2')) . ", "
			  . lit(pick('fuzz_client', 'fuzz_worker', 'fuzz_app', 'PUBLIC')) . ", "
			  . lit(pick('client', 'worker')) . ")");
		my ($fn) = $s =~ /durable\.(\w+)\(/;
		call($s, $fn);
	}
}

# Jobs started by start_batch, for cancel_batch.
my @batch_ids;

# Limits of queues and of concurrency keys (often removed again: a limit that never
# lets a task through would starve the other sequences), and batch jobs over the
# fuzz's own workflows, previewed, started and canceled.
sub limits_or_batch_op
{
	my $ns = pick(@NAMESPACES);
	my $q = pick(@QUEUES);
	my $kind = lit(chance(0.95) ? pick('decision', 'activity') : pick('both', '', undef));
	my $lim = sub {
		return chance(0.5) ? '' : join('', map { ", $_->[0] => " . pick(@{ $_->[1] }) } @_);
	};
	my @max = ('max_concurrent', ['NULL', 1, 3, 100, 0, -1, 2147483647]);
	my @rate = ('rate', ['NULL', 5, 1000, 0.5, 0, -1, "'NaN'", "'Infinity'", '1e308']);
	my @burst = ('burst', ['NULL', 1, 10, 0, -1]);
	my $r = rand();
	if ($r < 0.25)
	{
		as(pick('fuzz_admin', undef, 'fuzz_worker'));
		call("SELECT durable.set_task_queue_limits(" . lit($q) . ", $kind" . $lim->(\@max, \@rate, \@burst)
			  . ", namespace => " . lit($ns) . ")", 'set_task_queue_limits');
	}
	elsif ($r < 0.45)
	{
		as(pick('fuzz_admin', undef, 'fuzz_worker'));
		call("SELECT durable.set_task_key_limits(" . lit($q) . ", $kind, " . lit(pick('k1', 'k2', 'k3', undef, ''))
			  . $lim->(\@max, \@rate, \@burst, ['weight', ['NULL', 1, 5, 0, -1, 1000000]])
			  . ", namespace => " . lit($ns) . ")", 'set_task_key_limits');
	}
	elsif ($r < 0.9)
	{
		as(pick('fuzz_admin', undef, 'fuzz_client', 'fuzz_worker'));
		my $op = pick(qw(terminate cancel signal reset restart pause resume), 'bogus');
		my @f;
		push @f, 'status => ' . lit(pick('running', 'completed', 'failed', 'x')) if chance(0.5);
		push @f, 'workflow_type => ' . lit(pick(@TYPES)) if chance(0.5);
		push @f, 'task_queue => ' . lit(pick(@QUEUES)) if chance(0.3);
		push @f, 'workflow_id_prefix => ' . lit(pick('w1', 'w', 'u', '%')) if chance(0.4);
		push @f, 'started_since => ' . gen_ts() if chance(0.1);
		push @f, 'search_attributes => ' . gen_payload() if chance(0.1);
		push @f, 'reason => ' . (chance(0.9) ? lit('fuzz batch') : gen_text('reason'));
		push @f, 'signal_name => ' . lit(pick(@SIGNALS)) if $op eq 'signal' || chance(0.1);
		push @f, 'input => ' . gen_payload() if chance(0.3);
		push @f, 'reset_to => ' . lit(pick('last_decision', 'first_decision', 'x')) if $op eq 'reset' && chance(0.5);
		my $fn = chance(0.4) ? 'preview_batch' : 'start_batch';
		my ($ok, $rows) = call("SELECT durable.$fn(" . lit($op) . ", " . lit($ns) . ", " . join(', ', @f) . ")", $fn);
		if ($ok && $fn eq 'start_batch' && defined $rows->[0][0])
		{
			remember(\@batch_ids, $rows->[0][0], 10);
			# Canceled at once, before or while the timer worker runs it.
			call("SELECT durable.cancel_batch(" . lit($rows->[0][0]) . "::uuid)", 'cancel_batch', mode => 0)
			  if chance(0.5);
		}
	}
	else
	{
		as(pick('fuzz_admin', undef, 'fuzz_client'));
		call("SELECT durable.cancel_batch(" . (@batch_ids && chance(0.8) ? lit(pick(@batch_ids)) . '::uuid' : gen_uuid()) . ")",
			'cancel_batch');
	}
}

sub sql_workflow
{
	my $ns = pick('default', 'default', 'fz1');
	my $input = "jsonb_build_object('ops', " . lit(jenc(gen_ops())) . "::jsonb)";
	start_one('fzwf', 'sq', $ns, $input);
	if (chance(0.5))
	{
		as(pick('fuzz_admin', undef));
		call("SELECT durable.run_tasks(" . pick(1, 5, 20) . ")", 'run_tasks', may_time_out => 1);
	}
}

sub register_op
{
	as(pick('fuzz_worker', 'fuzz_admin', undef, 'fuzz_none'));
	my $what = pick('workflow', 'activity');
	my $type = $what eq 'workflow' ? pick('ext', 'fzwf', 'other') : pick('ext_act', 'echo', 'raise');
	my $q = pick('q1', 'q2', 'sq');
	if (chance(0.5))
	{
		my $fn = $what eq 'workflow' ? 'fz.wf_main(jsonb)' : pick('fz.act_echo(jsonb)', 'fz.act_raise(jsonb)');
		call("SELECT durable.register_$what(" . lit($type) . ", " . lit(pick($fn, $fn, 'fz.bad_text(text)')) . "::regprocedure, "
			  . lit($q) . ", 'default', " . gen_regrole() . ")", "register_$what");
	}
	else
	{
		call("SELECT durable.unregister_$what(" . lit($type) . ", " . lit($q) . ", 'default')", "unregister_$what");
	}
}

# Drop and recreate the extension while the other clients carry on.
sub drop_extension
{
	set_role(undef);
	open my $fh, '>', $DROP_STAMP; close $fh;
	my ($ok) = sql('DROP EXTENSION durable CASCADE', 'DROP EXTENSION', may_time_out => 1,
		expect => { '57014' => 1, '55006' => 1, '40P01' => 1 });
	utime(undef, undef, $DROP_STAMP);
	eval { run_setup($dbh) };
	if ($@)
	{
		record_finding(kind => 'unexpected SQLSTATE', sqlstate => $dbh->state // '', func => 'CREATE EXTENSION',
			message => "$@", stmt => 'CREATE EXTENSION durable; -- and test/fuzz/setup.sql');
		$dbh->do('ROLLBACK') if !$dbh->{AutoCommit};
	}
	open $fh, '>', $DROP_STAMP; close $fh;
	load_functions();
}

sub client_main
{
	($client) = @_;
	srand($opt{seed} + 1000 * $client);
	reconnect();
	load_functions();
	my $last_drop = time();
	my $n = 0;
	while (time() < $DEADLINE)
	{
		$n++;
		my $r = rand();
		eval {
			if ($r < 0.26) { random_call(); }
			elsif ($r < 0.32) { start_one(pick('ext', 'ext', 'other'), pick('q1', 'q2', 'default'), pick(@NAMESPACES), gen_payload()); }
			elsif ($r < 0.40) { start_eager(pick('ext', 'ext', 'other'), pick('q1', 'q2', 'default'), pick(@NAMESPACES), gen_payload()); }
			elsif ($r < 0.55) { poll_decision(pick('q1', 'q2', 'default', 'sq'), pick(@NAMESPACES)); }
			elsif ($r < 0.65) { poll_activity(pick('q1', 'q2', 'default', 'sq'), pick(@NAMESPACES)); }
			elsif ($r < 0.75) { client_op(); }
			elsif ($r < 0.86) { engine_op(); }
			elsif ($r < 0.96) { sql_workflow(); }
			elsif ($r < 0.99) { register_op(); }
			elsif ($opt{drop} && $client == 0 && time() - $last_drop > 20) { drop_extension(); $last_drop = time(); }
			1;
		} or do {
			my $e = $@;
			# A bug of the fuzzer itself, or a dead connection: start the session afresh.
			warn "client $client: $e" unless $e =~ /cannot connect/;
			reconnect();
		};
		# Edge clocks last for one step only.
		if (defined $clock && $clock !~ /^\d{4}-/ && $txn_mode eq 'auto')
		{
			set_role(undef);
			plumbing('RESET durable.test_time');
			$clock = undef;
		}
	}
	my $out = "$opt{out}/client-$client.json";
	open my $fh, '>', $out or die "$out: $!";
	print $fh encode_json({ steps => $n, stats => \%stats, findings => \@findings });
	close $fh;
	exit 0;
}

# ---------------------------------------------------------------- sqlsmith

sub sqlsmith_main
{
	my $bin = `command -v sqlsmith 2>/dev/null`;
	chomp $bin;
	exit 0 unless $bin;
	my $end = $T0 + $opt{smith_seconds};
	my $i = 0;
	open my $log, '>>', "$opt{out}/sqlsmith.log";
	while (time() < $end)
	{
		my $seed = $opt{seed} + $i++;
		my $pid = fork();
		if ($pid == 0)
		{
			open STDOUT, '>>', "$opt{out}/sqlsmith.log";
			open STDERR, '>&', \*STDOUT;
			exec($bin, "--target=host=$opt{host} port=$opt{port} dbname=$opt{db} user=fuzz_smith application_name=sqlsmith",
				"--seed=$seed", '--max-queries=20000', '--exclude-catalog');
			exit 127;
		}
		print $log "== sqlsmith --seed=$seed (pid $pid)\n";
		while (waitpid($pid, WNOHANG) == 0)
		{
			if (time() >= $end) { kill 'TERM', $pid; waitpid($pid, 0); last; }
			sleep 0.5;
		}
		sleep 1;
	}
	exit 0;
}

# ---------------------------------------------------------------- server log

# (function, file) pairs defined in durable's C sources: an error whose LOCATION is one
# of them was raised by durable, not by core PostgreSQL.
sub durable_functions
{
	my %f;
	for my $file (glob("$opt{src}/*.c"), glob("$opt{src}/*/*.c"))
	{
		(my $base = $file) =~ s{.*/}{};
		open my $fh, '<', $file or next;
		while (<$fh>) { $f{"$1,$base"} = 1 if /^([A-Za-z_]\w*)\(/; }
		close $fh;
	}
	return \%f;
}

# Records of the server log: crashes, and errors with their LOCATION and STATEMENT.
sub scan_log
{
	my ($dfuncs) = @_;
	my (@crashes, @errors);
	open my $fh, '<', $opt{log} or return ([], []);
	my $cur;
	my $prefix = qr/^\S+ \S+ \S+ \[(\d+)\] (\S{5}) \[(.*?)\] (\S*) \[(.*?)\] (\w+):  (.*)$/;
	while (my $line = <$fh>)
	{
		chomp $line;
		if ($line =~ /^TRAP: /)
		{
			push @crashes, { what => $line, stmt => '' };
			next;
		}
		if ($line =~ $prefix)
		{
			my ($pid, $state, $btype, $user, $app, $level, $text) = ($1, $2, $3, $4, $5, $6, $7);
			if ($level =~ /^(ERROR|FATAL|PANIC|WARNING)$/)
			{
				$cur = { pid => $pid, state => $state, btype => $btype, user => $user, app => $app, level => $level,
					msg => $text, location => '', stmt => '' };
				push @errors, $cur;
				push @crashes, { what => "PANIC: $text", stmt => '' } if $level eq 'PANIC';
			}
			elsif ($level eq 'LOG' && $text =~ /terminated by (signal|exception)/)
			{
				$cur = { crash => 1, what => $text, stmt => '' };
				push @crashes, $cur;
			}
			elsif ($cur && $pid eq ($cur->{pid} // '') && $level eq 'LOCATION') { $cur->{location} = $text; }
			elsif ($cur && $pid eq ($cur->{pid} // '') && $level eq 'STATEMENT') { $cur->{stmt} = $text; }
			elsif ($cur && $cur->{crash} && $level eq 'DETAIL' && $text =~ /^Failed process was running: (.*)/)
			{
				$cur->{stmt} = $1;
			}
			elsif ($level eq 'LOG') { $cur = undef; }
			next;
		}
		# A continuation line of a multi-line statement.
		$cur->{stmt} .= "\n$line" if $cur && length($cur->{stmt}) < 4000;
	}
	close $fh;
	for my $e (@errors)
	{
		my ($func, $file) = $e->{location} =~ /^(\w+), ([\w.]+):\d+/;
		$e->{durable} = defined $func && $dfuncs->{"$func,$file"} ? 1 : 0;
	}
	return (\@crashes, \@errors);
}

# ---------------------------------------------------------------- main

sub normalize
{
	my ($m) = @_;
	$m //= '';
	$m =~ s/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/<uuid>/gi;
	$m =~ s/"[^"]{60,}"/"<long>"/g;
	$m =~ s/\d+/N/g;
	$m =~ s/\s+/ /g;
	return substr($m, 0, 300);
}

sub main
{
	mkdir $opt{out};
	unlink glob("$opt{out}/client-*.json"), $DROP_STAMP;
	my $admin = connect_db('durable_fuzz_setup');
	run_setup($admin);
	$admin->disconnect;
	printf "==> fuzzing for %d s: %d clients, seed %d%s\n", $opt{seconds}, $opt{clients}, $opt{seed},
	  $opt{smith_seconds} > 0 ? ", sqlsmith for the first $opt{smith_seconds} s" : '';
	my @pids;
	for my $c (0 .. $opt{clients} - 1)
	{
		my $pid = fork() // die "fork: $!";
		client_main($c) if $pid == 0;
		push @pids, $pid;
	}
	my $smith;
	if ($opt{smith_seconds} > 0)
	{
		$smith = fork() // die "fork: $!";
		sqlsmith_main() if $smith == 0;
	}
	for my $pid (@pids) { waitpid($pid, 0); }
	if ($smith) { kill 'TERM', $smith if time() > $T0 + $opt{smith_seconds} + 30; waitpid($smith, 0); }

	# Is the engine still serving?  A fresh SQL workflow must complete through the
	# executor workers, and a fresh external one through the worker API.
	my @health;
	my $h = eval { connect_db('durable_fuzz_health', 50) };
	if ($h)
	{
		eval {
			$h->do("SET statement_timeout = '30s'");
			$h->do('CREATE EXTENSION IF NOT EXISTS durable');
			run_setup($h);
			# The clients pause queues at random (pause_task_queue), 'sq' among
			# them: a paused queue hands nothing out by design, so the check
			# resumes them first and asks whether the engine serves.  It removes
			# the limits they set (set_task_queue_limits) too: a rate of one
			# task a day on 'health' would hold the check back just as well.
			$h->do(q{SELECT durable.resume_task_queue(task_queue, namespace)
			           FROM durable.paused_task_queues});
			$h->do(q{SELECT durable.set_task_queue_limits(task_queue, kind, namespace => namespace)
			           FROM durable.task_queue_limits});
			# And the limits of concurrency keys (set_task_key_limits, 0.9.0).
			$h->do(q{SELECT durable.set_task_key_limits(task_queue, kind, NULLIF(concurrency_key, ''),
			                                            namespace => namespace)
			           FROM durable.task_key_limits})
			  if $h->selectrow_array(q{SELECT to_regclass('durable.task_key_limits') IS NOT NULL});
			$h->do(q{SELECT durable.start_workflow('fzwf', '{"ops": [{"op": "act", "type": "echo", "input": 1}]}',
			          'health-sql', 'sq', id_reuse_policy => 'allow_duplicate')});
			my $done;
			for (1 .. 60)
			{
				$done = $h->selectrow_array(q{SELECT durable.describe_workflow('health-sql')->>'status'});
				last if $done ne 'running';
				sleep 0.5;
			}
			push @health, "the executor workers did not complete a fresh SQL workflow in 30 s (status $done)"
			  if $done ne 'completed';
			$h->do(q{SELECT durable.start_workflow('ext', NULL, 'health-ext', 'health', id_reuse_policy => 'allow_duplicate')});
			my $t = $h->selectrow_array(q{SELECT durable.poll_decision_task('health')->>'taskToken'});
			if (!defined $t) { push @health, 'a fresh decision task could not be polled'; }
			else
			{
				$h->do("SELECT durable.complete_decision_task(?, '[{\"decisionType\": \"CompleteWorkflowExecution\"}]')", undef, $t);
			}
			1;
		} or push @health, 'health check failed: ' . ($h->errstr // $@);
	}
	else { push @health, 'cannot connect after the run'; }

	# Gather.
	my (%stats, @findings, $steps);
	for my $c (0 .. $opt{clients} - 1)
	{
		my $f = "$opt{out}/client-$c.json";
		open my $fh, '<', $f or do { push @findings, { kind => 'fuzz client died', client => $c, message => "no $f", sqlstate => '', func => '' }; next; };
		local $/;
		my $d = decode_json(<$fh>);
		close $fh;
		$steps += $d->{steps};
		push @findings, @{ $d->{findings} };
		for my $fn (keys %{ $d->{stats} })
		{
			my $s = $d->{stats}{$fn};
			$stats{$fn}{calls} += $s->{calls} // 0;
			$stats{$fn}{ok} += $s->{ok} // 0;
			$stats{$fn}{codes}{$_} += $s->{codes}{$_} for keys %{ $s->{codes} // {} };
			$stats{$fn}{ex}{$_} //= $s->{ex}{$_} for keys %{ $s->{ex} // {} };
		}
	}

	my ($crashes, $errors) = scan_log(durable_functions());
	my (%smith_codes, @log_findings);
	for my $e (@$errors)
	{
		next if $e->{msg} =~ /fuzz raise/;
		if ($e->{user} eq 'fuzz_smith')
		{
			$smith_codes{ $e->{state} }++ if $e->{level} eq 'ERROR';
			if ($e->{durable} && !$EXPECTED{ $e->{state} } && !$allow{ $e->{state} }
				&& $e->{state} !~ /^(57014|22008)$/)
			{
				push @log_findings, { kind => ($e->{state} =~ /^XX/ ? 'XX000' : 'unexpected SQLSTATE') . ' (sqlsmith)', %$e };
			}
			elsif ($e->{state} =~ /^XX/ && $e->{stmt} =~ /durable/)
			{
				push @log_findings, { kind => 'XX000 in core, query touches durable (sqlsmith; review)', review => 1, %$e };
			}
			next;
		}
		next if $e->{app} =~ /^durable_fuzz/;    # counted by the clients
		# Background workers (timer worker, executors, launcher).
		next if $e->{state} =~ /^(57P0[123]|00000|01000)$/;
		if ($e->{state} =~ /^(XX|23|22003|22008|22015)/)
		{
			push @log_findings, { kind => "background worker $e->{level} $e->{state}", %$e };
		}
		else
		{
			push @log_findings, { kind => "background worker $e->{level} (review)", review => 1, %$e };
		}
	}

	# Distinct findings.
	my %distinct;
	my @order;
	for my $f (@findings, @log_findings)
	{
		my $key = join '|', $f->{kind}, $f->{sqlstate} // $f->{state} // '', $f->{func} // '',
		  normalize($f->{message} // $f->{msg});
		$f->{location} //= '';
		push @order, $key unless $distinct{$key};
		$distinct{$key}{count}++;
		$distinct{$key}{first} //= $f;
	}
	my %crash_distinct;
	for my $c (@$crashes)
	{
		my $key = normalize($c->{what}) . '|' . normalize($c->{stmt});
		$crash_distinct{$key}{count}++;
		$crash_distinct{$key}{first} //= $c;
	}

	# Report.
	open my $rep, '>:utf8', "$opt{out}/findings.sql" or die;
	print $rep "-- durable fuzz findings, seed $opt{seed}, $opt{seconds} s, $opt{clients} clients\n";
	print $rep "-- Each: the statement as the client sent it, after the session's SET ROLE / test_time;\n";
	print $rep "-- then the last statements of that client before it, for context.\n\n";
	my ($n_crash, $n_xx, $n_unexp, $n_review) = (0, 0, 0, 0);
	print "\n";
	for my $key (sort keys %crash_distinct)
	{
		my $c = $crash_distinct{$key};
		$n_crash++;
		printf "CRASH (%dx): %s\n    running: %s\n", $c->{count}, $c->{first}{what}, substr($c->{first}{stmt}, 0, 400);
		print $rep "-- CRASH ($c->{count}x): $c->{first}{what}\n$c->{first}{stmt};\n";
		# The fuzz client whose backend it was: what it did before.
		my ($pid) = $c->{first}{what} =~ /\(PID (\d+)\)/;
		my ($lost) = grep { $_->{kind} eq 'connection lost' && ($_->{pid} // '') eq ($pid // 'none') } @findings;
		if ($lost)
		{
			print $rep "-- the session (client $lost->{client}) before it, oldest first:\n";
			print $rep "$_\n" for @{ $lost->{preamble} // [] };
			print $rep "--   " . (substr($_, 0, 2000) =~ s/\n/\n--   /gr) . "\n" for @{ $lost->{context} };
		}
		print $rep "\n";
	}
	for my $key (@order)
	{
		my $d = $distinct{$key};
		my $f = $d->{first};
		my $state = $f->{sqlstate} // $f->{state} // '';
		next if $f->{kind} eq 'connection lost' && %crash_distinct;    # the crash says it
		if ($f->{review}) { $n_review++; }
		elsif ($f->{kind} =~ /XX000/ || $state =~ /^XX/) { $n_xx++; }
		else { $n_unexp++; }
		my $msg = $f->{message} // $f->{msg} // '';
		my $full = $f->{full} // $msg;
		$msg =~ s/(\d{12})\d{9,}/$1.../g;
		my $stmt = $f->{stmt} // '';
		printf "%s%s (%dx) %s %s: %s\n    %s%s\n", $f->{review} ? 'REVIEW ' : '', $f->{kind}, $d->{count},
		  $state, $f->{func} // $f->{btype} // '', substr($msg, 0, 300),
		  substr($stmt =~ s/\s+/ /gr, 0, 300), $f->{location} ? "\n    LOCATION: $f->{location}" : '';
		print $rep "-- $f->{kind} ($d->{count}x) $state " . ($f->{func} // $f->{btype} // '') . "\n";
		print $rep "-- $_\n" for split /\n/, $full;
		print $rep "-- LOCATION: $f->{location}\n" if $f->{location};
		print $rep "$_\n" for @{ $f->{preamble} // [] };
		print $rep "$stmt;\n";
		if ($f->{context} && @{ $f->{context} })
		{
			print $rep "-- context (client $f->{client}, oldest first):\n";
			print $rep "--   " . (substr($_, 0, 2000) =~ s/\n/\n--   /gr) . "\n" for @{ $f->{context} };
		}
		print $rep "\n";
	}
	for my $hmsg (@health) { $n_unexp++; print "ENGINE: $hmsg\n"; print $rep "-- ENGINE: $hmsg\n"; }
	close $rep;

	# Coverage: every function called, how often it got past validation.
	my %called = map { $_ => 1 } keys %stats;
	my $fdbh = connect_db('durable_fuzz_report', 20);
	my $all = $fdbh->selectcol_arrayref(q{SELECT proname FROM pg_proc WHERE pronamespace = 'durable'::regnamespace
	                                       AND prorettype <> 'trigger'::regtype
	                                       AND prorettype <> 'internal'::regtype ORDER BY 1});
	my @never = grep { !$called{$_} } @$all;
	# The calls of workflow functions (durable.activity() ...) raise 55000 outside one:
	# fz.wf_main exercises them inside.
	my @never_ok = grep { $called{$_} && !$stats{$_}{ok} && !$stats{$_}{codes}{'55000'} } @$all;
	open my $st, '>:utf8', "$opt{out}/stats.txt";
	for my $fn (sort keys %stats)
	{
		my $s = $stats{$fn};
		printf $st "%-28s %7d calls %7d ok  %s\n", $fn, $s->{calls}, $s->{ok} // 0,
		  join(' ', map { "$_:$s->{codes}{$_}" } sort keys %{ $s->{codes} // {} });
		printf $st "    %s e.g. %s\n", $_, $s->{ex}{$_} for sort keys %{ $s->{ex} // {} };
	}
	printf $st "sqlsmith errors by SQLSTATE: %s\n", join(' ', map { "$_:$smith_codes{$_}" } sort keys %smith_codes);
	close $st;
	my $calls = 0;
	$calls += $_->{calls} for values %stats;
	print "\nper-function calls and SQLSTATEs: $opt{show}/stats.txt; reproducers: $opt{show}/findings.sql\n";
	print "functions never called: @never\n" if @never;
	print "functions that never succeeded: @never_ok\n" if @never_ok;
	printf "sqlsmith: %d errors logged (%s)\n", scalar(map { 1 } grep { $_->{user} eq 'fuzz_smith' && $_->{level} eq 'ERROR' } @$errors),
	  join(' ', map { "$_:$smith_codes{$_}" } grep { defined } (sort { $smith_codes{$b} <=> $smith_codes{$a} } keys %smith_codes)[0 .. 7]
		  ) if %smith_codes;
	my $failed = $n_crash + $n_xx + $n_unexp;
	printf "fuzz: seed %d, %d s, %d API calls: %d crashes, %d XX000, %d unexpected, %d to review -- %s\n",
	  $opt{seed}, $opt{seconds}, $calls, $n_crash, $n_xx, $n_unexp, $n_review, $failed ? 'FAILED' : 'ok';
	exit($failed ? 1 : 0);
}

main();

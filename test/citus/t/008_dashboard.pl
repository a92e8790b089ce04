# The dashboard (ui/, docs/dashboard.md) pointed at the coordinator of a cluster
# (docs/citus.md, "The dashboard"): it finds durable_citus and shows the workflows of
# both workers, their counts and their pages through durable_citus's functions (the
# coordinator holds no workflow), pages through the list across nodes with its cursor,
# and an action posted to it (a signal, a terminate) takes effect on the owning worker.
# Needs node and ui/node_modules (scripts/test-citus.sh runs npm ci when it can); skipped
# without node.
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use HTTP::Tiny;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CitusCluster;

my $root = abs_path(dirname(__FILE__) . '/../../..');
my $node_bin = `command -v node 2>/dev/null`;
chomp $node_bin;
plan skip_all => 'node (Node.js) is not installed: the dashboard cannot run'
  if $node_bin eq '';
if (system("cd '$root/ui' && '$node_bin' -e \"require('pg')\" >/dev/null 2>&1") != 0)
{
	# node is there but not the dashboard's packages: a failure, not a skip
	BAIL_OUT("ui/node_modules lacks pg: run `npm ci` in ui/ (scripts/test-citus.sh does when npm is installed)");
}

my ($coord, $w1, $w2) = citus_cluster();

my $on1 = id_owned_by($coord, $w1, 'dash');
my $on2 = id_owned_by($coord, $w2, 'dash');
my ($n1, $n2) = (0, 0);
foreach my $i (1 .. 60)
{
	my $id = "dash-$i";
	$coord->safe_psql('postgres', qq{SELECT durable_citus.start_workflow('dash', NULL, '$id', 'dashq')});
	owner_port($coord, 'default', $id) eq $w1->port ? $n1++ : $n2++;
}
ok($n1 > 0 && $n2 > 0, "60 workflows started, $n1 owned by worker 1 and $n2 by worker 2");
is($w1->safe_psql('postgres', q{SELECT count(*) FROM durable.workflows}) . '|'
	  . $w2->safe_psql('postgres', q{SELECT count(*) FROM durable.workflows}) . '|'
	  . $coord->safe_psql('postgres', q{SELECT count(*) FROM durable.workflows}),
	"$n1|$n2|0", 'each worker holds its own runs, the coordinator none');

# The dashboard on the coordinator, as its superuser, on a free port.
my $ui_port = $ENV{UI_PORT} || PostgreSQL::Test::Cluster::get_free_port();
my $ui_log = "$PostgreSQL::Test::Utils::log_path/008_dashboard_ui.log";
my $ui = do
{
	local $ENV{PGHOST} = $coord->host;
	local $ENV{PGPORT} = $coord->port;
	local $ENV{PGDATABASE} = 'postgres';
	IPC::Run::start([ $node_bin, "$root/ui/server.js", '--host', '127.0.0.1', '--port', $ui_port,
		'--sample-seconds', '60' ], '<', \undef, '>', $ui_log, '2>&1');
};
my $base = "http://127.0.0.1:$ui_port";
my $http = HTTP::Tiny->new(timeout => 30, max_redirect => 0);

sub get_page
{
	my ($path) = @_;
	my $r = $http->get("$base$path");
	is($r->{status}, 200, "GET $path answers 200") or diag($r->{content});
	return $r;
}

my $up;
foreach (1 .. 300)
{
	$up = $http->get("$base/static/style.css");
	last if $up->{status} == 200;
	select(undef, undef, undef, 0.1);
}
is($up->{status}, 200, 'the dashboard listens') or diag(slurp_file($ui_log));

# The list: the rows of both workers, the nodes, the counts of the cluster.
my $r = get_page('/workflows?namespace=default');
my $page1 = $r->{content};
like($page1, qr/Citus coordinator/, 'the header says it is a Citus coordinator');
like($page1, qr/class="node">127\.0\.0\.1:@{[ $w1->port ]}</, 'the list names worker 1');
like($page1, qr/class="node">127\.0\.0\.1:@{[ $w2->port ]}</, 'the list names worker 2');
like($page1, qr/>all\s*<b>60<\/b>/, 'the count of all runs is the cluster\'s');
like($page1, qr/>running <b>60<\/b>/, 'the count of running runs is the cluster\'s');
my %seen;
$seen{$1}++ while $page1 =~ /workflow_id=(dash-\d+)&amp;run_id/g;
is(scalar(keys %seen), 50, 'the first page shows 50 runs');
ok((grep { owner_port($coord, 'default', $_) eq $w1->port } keys %seen)
	  && (grep { owner_port($coord, 'default', $_) eq $w2->port } keys %seen),
	'the first page shows runs of both workers');
my ($next) = $page1 =~ /rel="next" href="([^"]+)"/;
ok(defined $next, 'the first page links the next');
$next =~ s/&amp;/&/g;
$r = get_page($next);
$seen{$1}++ while $r->{content} =~ /workflow_id=(dash-\d+)&amp;run_id/g;
is(join(',', scalar(keys %seen), grep { $seen{$_} > 1 } sort keys %seen), '60',
	'the next page, by the cursor across nodes, shows the other 10, none twice');

# A workflow page of each worker's run: its description and history.
foreach my $id ($on1, $on2)
{
	$r = get_page("/workflow?namespace=default&workflow_id=$id");
	like($r->{content}, qr/WorkflowExecutionStarted/, "the page of $id shows its history");
	like($r->{content}, qr/DecisionTaskScheduled/, "the page of $id shows its pending decision");
	like($r->{content}, qr/Runs of $id/, "the page of $id lists its runs");
	unlike($r->{content}, qr/class="error"/, "the page of $id shows no error")
	  or diag($r->{content} =~ /(<div class="error".*?<\/div>)/s);
}

# Actions through the dashboard's form: a session cookie, its CSRF token, our origin.
$r = get_page("/workflow?namespace=default&workflow_id=$on2");
my ($sid) = ($r->{headers}{'set-cookie'} // '') =~ /durable_ui_sid=([0-9a-f]+)/;
my ($csrf) = $r->{content} =~ /name="csrf-token" content="([0-9a-f]+)"/;
ok(defined $sid && defined $csrf, 'the page gives a session and its token');

sub post_action
{
	my (%form) = @_;
	return $http->post_form("$base/workflow/action", { csrf => $csrf, namespace => 'default', %form },
		{ headers => { Cookie => "durable_ui_sid=$sid", Origin => $base } });
}

$r = post_action(action => 'signal', workflow_id => $on2, signal_name => 'poke',
	input => '{"n": 1}');
is($r->{status}, 303, 'the signal posted to the dashboard is done') or diag($r->{content});
is($w2->safe_psql('postgres', qq{
	SELECT attributes->>'signalName' || ' ' || (attributes->'input')::text
	  FROM durable.get_history('$on2') WHERE event_type = 'WorkflowExecutionSignaled'}),
	'poke {"n": 1}', 'the signal is in the history on worker 2, which owns the workflow');
$r = get_page("/workflow?namespace=default&workflow_id=$on2");
like($r->{content}, qr/WorkflowExecutionSignaled/, 'the dashboard shows the signal');

$r = post_action(action => 'terminate', workflow_id => $on1, reason => 'from the dashboard');
is($r->{status}, 303, 'the terminate posted to the dashboard is done') or diag($r->{content});
is($w1->safe_psql('postgres', qq{SELECT status FROM durable.workflows WHERE workflow_id = '$on1'}),
	'terminated', 'the run is terminated on worker 1, which owns it');
$r = get_page('/workflows?namespace=default');
like($r->{content}, qr/>terminated <b>1<\/b>/, 'the counts show the terminated run');

# A form without the token is refused, and changes nothing.
$r = $http->post_form("$base/workflow/action",
	{ namespace => 'default', workflow_id => $on2, action => 'terminate', reason => 'x' },
	{ headers => { Cookie => "durable_ui_sid=$sid", Origin => $base } });
is($r->{status}, 403, 'a form without the CSRF token is refused');
is($w2->safe_psql('postgres', qq{SELECT status FROM durable.workflows WHERE workflow_id = '$on2'}),
	'running', 'and the run on worker 2 is still running');

# The task queues of every node; what is per node says so.
$r = get_page('/task-queues');
like($r->{content}, qr/127\.0\.0\.1:@{[ $w1->port ]}<\/td><td>default<\/td><td>dashq<\/td>/,
	'the task queues page shows the queue on worker 1');
like($r->{content}, qr/127\.0\.0\.1:@{[ $w2->port ]}<\/td><td>default<\/td><td>dashq<\/td>/,
	'the task queues page shows the queue on worker 2');
like($r->{content}, qr/per node on a Citus cluster.*durable_citus\.nodes\(\)/s,
	'the task queues page says the keys and stuck tasks are per node');
$r = get_page('/metrics');
like($r->{content}, qr/durable\.metrics is per node/, 'the metrics page says the metrics are per node');
$r = get_page('/batches');
unlike($r->{content}, qr/class="error"/, 'the batches page (durable_citus.batches()) shows no error')
  or diag($r->{content} =~ /(<div class="error".*?<\/div>)/s);
like($r->{content}, qr/durable\.batch_errors is per node/, 'the batches page says the errors are per node');

$ui->kill_kill;
unlike(slurp_file($ui_log), qr/internal error|TypeError|ReferenceError/,
	'the dashboard logged no internal error');

done_testing();

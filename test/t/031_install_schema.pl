# Installation into a schema named durable that exists already (docs/privileges.md
# "Privileges").  A database owner who creates the
# schema before a superuser runs CREATE EXTENSION durable could put there an
# operator, e.g. durable.=(uuid, uuid), that the extension's SECURITY DEFINER
# functions would then run as a superuser.  CREATE EXTENSION, and ALTER
# EXTENSION UPDATE, refuse such a schema with 42501 and leave nothing behind;
# a schema a superuser made, empty, is fine.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('install');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = off
});
$node->start;

# psql as a role; returns (exit code, stdout, stderr), errors verbose (SQLSTATE).
sub run_as
{
	my ($db, $role, $sql) = @_;
	my ($stdout, $stderr);
	my $ret = $node->psql($db, "\\set VERBOSITY verbose\n" . $sql,
		stdout => \$stdout, stderr => \$stderr,
		extra_params => [ '-U', $role ]);
	return ($ret, $stdout, $stderr);
}

my $super = $node->safe_psql('postgres', 'SELECT current_user');
my $default = $node->safe_psql('postgres', q{
	SELECT default_version FROM pg_available_extensions WHERE name = 'durable'});

# What a database has of durable: the extension's version and the objects of
# schema durable (its own or anyone's).
sub footprint
{
	my ($db) = @_;
	return $node->safe_psql($db, q{
		SELECT coalesce((SELECT extversion FROM pg_extension WHERE extname = 'durable'), 'none')
		       || ' ' || (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		                   WHERE n.nspname = 'durable')
		       || ' ' || (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		                   WHERE n.nspname = 'durable')});
}

$node->safe_psql('postgres', q{
CREATE ROLE mallory LOGIN;
CREATE DATABASE shared OWNER mallory;
CREATE DATABASE granted;
CREATE DATABASE leftover;
CREATE DATABASE precreated;
CREATE DATABASE old OWNER mallory;
});

# The attack: the database owner makes the schema and an operator in it that
# records whether it ran as a superuser.
my $plant = q{
CREATE SCHEMA durable;
CREATE TABLE public.loot (rolsuper boolean);
CREATE FUNCTION durable.steal(a uuid, b uuid) RETURNS boolean LANGUAGE sql AS $$
    INSERT INTO public.loot SELECT rolsuper FROM pg_roles WHERE rolname = current_user;
    SELECT a::text = b::text $$;
CREATE OPERATOR durable.= (LEFTARG = uuid, RIGHTARG = uuid, FUNCTION = durable.steal);
};
my ($ret, $out, $err) = run_as('shared', 'mallory', $plant);
is($ret, 0, 'the database owner creates schema durable and an operator in it') or diag $err;

($ret, $out, $err) = run_as('shared', $super, 'CREATE EXTENSION durable');
isnt($ret, 0, 'CREATE EXTENSION durable refuses a schema that a non-superuser owns');
like($err, qr/ERROR:  42501: schema "durable" is owned by role "mallory", which is not a superuser/,
	'with 42501, naming the owner');
like($err, qr/HINT:  Drop the schema and let CREATE EXTENSION durable create it/, 'and a hint');
is(footprint('shared'), 'none 0 1', 'nothing is created: the schema holds only mallory\'s function');
is($node->safe_psql('shared', 'SELECT count(*) FROM public.loot'), '0',
	'and mallory\'s operator never ran');

# A superuser's schema in which others may create objects.
$node->safe_psql('granted', q{
CREATE SCHEMA durable;
GRANT CREATE ON SCHEMA durable TO mallory, PUBLIC;
});
($ret, $out, $err) = run_as('granted', $super, 'CREATE EXTENSION durable');
like($err,
	qr/ERROR:  42501: roles that are not superusers may create objects in schema "durable": (mallory, PUBLIC|PUBLIC, mallory)/,
	'a schema where non-superusers have CREATE is refused, naming them');
is(footprint('granted'), 'none 0 0', 'nothing is created');

# A superuser's schema that holds something already.
$node->safe_psql('leftover', q{
CREATE SCHEMA durable;
CREATE TABLE durable.leftover (x int);
});
($ret, $out, $err) = run_as('leftover', $super, 'CREATE EXTENSION durable');
like($err,
	qr/ERROR:  42501: schema "durable" holds objects that are not part of the extension: table durable\.leftover/,
	'a schema that holds other objects is refused, naming them');
is(footprint('leftover'), 'none 1 0', 'nothing is created');

# A superuser's empty schema is fine.
$node->safe_psql('precreated', 'CREATE SCHEMA durable');
($ret, $out, $err) = run_as('precreated', $super, 'CREATE EXTENSION durable');
is($ret, 0, 'an empty schema a superuser created is used') or diag $err;
is($node->safe_psql('precreated', q{SELECT extversion FROM pg_extension WHERE extname = 'durable'}),
	$default, "at the default version ($default)");

# The update: durable 0.2.0 installed into mallory's schema (before 0.3.0 the
# install did not check), then ALTER EXTENSION UPDATE refuses until a
# superuser owns the schema and only the extension's objects are in it.
($ret, $out, $err) = run_as('old', 'mallory', $plant);
is($ret, 0, 'the owner of another database plants the same operator') or diag $err;
($ret, $out, $err) = run_as('old', $super, q{CREATE EXTENSION durable VERSION '0.2.0'});
is($ret, 0, 'durable 0.2.0 installs there') or diag $err;
($ret, $out, $err) = run_as('old', $super, 'ALTER EXTENSION durable UPDATE');
like($err, qr/ERROR:  42501: schema "durable" is owned by role "mallory", which is not a superuser/,
	'ALTER EXTENSION UPDATE refuses the schema mallory owns');
is($node->safe_psql('old', q{SELECT extversion FROM pg_extension WHERE extname = 'durable'}),
	'0.2.0', 'the extension stays at 0.2.0');
$node->safe_psql('old', 'ALTER SCHEMA durable OWNER TO CURRENT_USER');
($ret, $out, $err) = run_as('old', $super, 'ALTER EXTENSION durable UPDATE');
like($err,
	qr/ERROR:  42501: schema "durable" holds objects that are not part of the extension: .*function durable\.steal\(pg_catalog\.uuid,pg_catalog\.uuid\)/,
	'then it names the objects left in the schema');
$node->safe_psql('old', 'DROP FUNCTION durable.steal(uuid, uuid) CASCADE');
($ret, $out, $err) = run_as('old', $super, 'ALTER EXTENSION durable UPDATE');
is($ret, 0, 'once they are gone, the update runs') or diag $err;
is($node->safe_psql('old', q{SELECT extversion FROM pg_extension WHERE extname = 'durable'}),
	$default, "to $default");
is($node->safe_psql('old', 'SELECT count(*) FROM public.loot'), '0',
	'mallory\'s operator never ran');

$node->stop;
done_testing();

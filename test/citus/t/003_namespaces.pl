# Namespaces, their grants and durable's privileges across a Citus cluster: a namespace
# created, altered, granted, revoked or dropped once on the coordinator is so on every
# node, in one transaction (a refusal on one node leaves every node as it was); a role
# that may not start workflows in a namespace may not through durable_citus either, and
# one without durable_client may not call its client functions at all.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CitusCluster;

my ($coord, $w1, $w2) = citus_cluster();
my @all = ($coord, $w1, $w2);

sub on_every_node
{
	my ($sql) = @_;
	return join('|', map { $_->safe_psql('postgres', $sql) } @all);
}

# Roles made on the coordinator reach the workers (Citus propagates them).
$coord->safe_psql('postgres', q{
	CREATE ROLE ops LOGIN IN ROLE durable_admin;
	CREATE ROLE billing_app LOGIN IN ROLE durable_client;
	CREATE ROLE other_app LOGIN IN ROLE durable_client;
	CREATE ROLE nobody LOGIN;});
is($w2->safe_psql('postgres', q{SELECT pg_has_role('billing_app', 'durable_client', 'member')}),
	't', 'roles and their memberships are on the workers');

# create, alter, grant: everywhere.
$coord->safe_psql('postgres', q{SELECT durable_citus.create_namespace('billing', retention => '3 days')},
	extra_params => [ '-U', 'ops' ]);
is(on_every_node(q{SELECT retention FROM durable.namespaces WHERE name = 'billing'}),
	'3 days|3 days|3 days', 'create_namespace makes the namespace on every node');
$coord->safe_psql('postgres', q{SELECT durable_citus.alter_namespace('billing', description => 'the money')},
	extra_params => [ '-U', 'ops' ]);
is(on_every_node(q{SELECT description FROM durable.namespaces WHERE name = 'billing'}),
	'the money|the money|the money', 'alter_namespace changes it on every node');
$coord->safe_psql('postgres', q{SELECT durable_citus.grant_namespace('billing', 'billing_app', 'client')},
	extra_params => [ '-U', 'ops' ]);

# Privileges hold through the wrappers.
is(sqlstate_of($coord, q{SELECT durable_citus.start_workflow('invoice', NULL, 'inv-1', namespace => 'billing')},
	user => 'other_app'), '42501', 'a role without the client privilege of the namespace gets 42501');
is(sqlstate_of($coord, q{SELECT durable_citus.start_workflow('invoice', NULL, 'inv-1', namespace => 'billing')},
	user => 'nobody'), '42501', 'a role without durable_client gets 42501');
is(sqlstate_of($coord, q{SELECT * FROM durable_citus.node_start_workflow(durable_citus.route_key('billing', 'inv-1'),
	'invoice', NULL, 'inv-1', 'default', 'billing', NULL, 'allow_duplicate_failed_only', NULL, NULL,
	'10 seconds', NULL, NULL, NULL, NULL, NULL, NULL)}, user => 'other_app'),
	'42501', 'so does a direct call of the node function');
is(holders(\@all, 'billing', 'inv-1'), '', 'none of them started anything');
is(sqlstate_of($coord, q{SELECT durable_citus.start_workflow('invoice', NULL, 'inv-1', namespace => 'billing')},
	user => 'billing_app'), '', 'the granted role starts it');
is(holders(\@all, 'billing', 'inv-1'), owner_port($coord, 'billing', 'inv-1'), 'on its owner');
is(sqlstate_of($coord, q{SELECT durable_citus.describe_workflow('inv-1', 'billing')}, user => 'other_app'),
	'42501', 'another role may not describe it');
is(sqlstate_of($coord, q{SELECT * FROM durable_citus.list_workflows('billing')}, user => 'other_app'),
	'42501', 'nor list the namespace');
is($coord->safe_psql('postgres', q{SELECT count(*) FROM durable_citus.list_workflows('billing')},
	extra_params => [ '-U', 'billing_app' ]), '1', 'the granted role lists it');
is(sqlstate_of($coord, q{SELECT durable_citus.grant_namespace('billing', 'other_app', 'client')},
	user => 'billing_app'), '42501', 'a client of the namespace may not grant it');
is(sqlstate_of($coord, q{SELECT durable_citus.create_namespace('mine')}, user => 'billing_app'),
	'42501', 'nor create namespaces');

# revoke: everywhere.
$coord->safe_psql('postgres', q{SELECT durable_citus.revoke_namespace('billing', 'billing_app', 'client')},
	extra_params => [ '-U', 'ops' ]);
is(sqlstate_of($coord, q{SELECT durable_citus.signal_workflow('inv-1', 'paid', namespace => 'billing')},
	user => 'billing_app'), '42501', 'revoke_namespace takes the privilege back on the owner');
is(on_every_node(q{SELECT count(*) FROM durable.namespace_grants WHERE namespace = 'billing'}),
	'0|0|0', 'and on every node');

# Errors keep their SQLSTATE, and a refusal on one node changes no node.
is(sqlstate_of($coord, q{SELECT durable_citus.create_namespace('billing')}, user => 'ops'),
	'42710', 'creating an existing namespace gets 42710');
$w2->safe_psql('postgres', q{SELECT durable.create_namespace('clash')});
is(sqlstate_of($coord, q{SELECT durable_citus.create_namespace('clash')}, user => 'ops'),
	'42710', 'a namespace that exists on one worker only gets 42710 from it');
is(on_every_node(q{SELECT count(*) FROM durable.namespaces WHERE name = 'clash'}),
	'0|0|1', 'and the coordinator and the other worker were left as they were');
is(sqlstate_of($coord, q{
	BEGIN;
	SELECT durable_citus.create_namespace('in_tx');
	SELECT durable_citus.start_workflow('t', NULL, 'in-tx-1', namespace => 'in_tx');
	COMMIT;}, user => 'ops'), '', 'a namespace created in a transaction is used in the same transaction');
is(holders(\@all, 'in_tx', 'in-tx-1'), owner_port($coord, 'in_tx', 'in-tx-1'), 'on the owner of the workflow');
is(sqlstate_of($coord, q{SELECT durable_citus.drop_namespace('in_tx')}, user => 'ops'),
	'55006', 'drop_namespace of a namespace with runs gets 55006 from the node that has them');
$coord->safe_psql('postgres', q{SELECT durable_citus.terminate_workflow('inv-1', 'test', namespace => 'billing')});
is(sqlstate_of($coord, q{SELECT durable_citus.drop_namespace('nope')}, user => 'ops'),
	'WF002', 'an unknown namespace gets WF002');
$coord->safe_psql('postgres', q{SELECT durable_citus.create_namespace('empty')}, extra_params => [ '-U', 'ops' ]);
$coord->safe_psql('postgres', q{SELECT durable_citus.drop_namespace('empty')}, extra_params => [ '-U', 'ops' ]);
is(on_every_node(q{SELECT count(*) FROM durable.namespaces WHERE name = 'empty'}),
	'0|0|0', 'drop_namespace drops it on every node');
is(sqlstate_of($coord, q{SELECT durable_citus.create_namespace(NULL)}, user => 'ops'),
	'22004', 'a NULL name gets 22004');

# The functions are SECURITY INVOKER with a fixed search_path.
is($coord->safe_psql('postgres', q{
	SELECT count(*) FROM pg_proc p
	 WHERE p.pronamespace = 'durable_citus'::regnamespace AND p.prokind = 'f'
	   AND (p.prosecdef OR p.proconfig IS NULL
	        OR NOT 'search_path=pg_catalog, durable_citus, durable, pg_temp' = ANY (p.proconfig))}),
	'0', 'every function of durable_citus is SECURITY INVOKER with search_path pg_catalog, durable_citus, durable, pg_temp');
is($coord->safe_psql('postgres', q{
	SELECT count(*) FROM pg_proc p
	 WHERE p.pronamespace = 'durable_citus'::regnamespace AND has_function_privilege('nobody', p.oid, 'EXECUTE')
	   AND p.proname NOT IN ('route_key', 'token_route_key', 'box', 'unbox', 'owner_group', 'check_route',
	                         'check_node_key', 'nodes', 'task_queues', 'node_task_queues',
	                         'refuse_shard_transfer', 'new_workflow_id')}),
	'0', 'PUBLIC may call only the routing helpers');

done_testing();

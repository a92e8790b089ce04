# A session keeps the descriptions of durable's indexes from one call to the
# next (src/store/index_info.c), and they follow the indexes a user adds or
# changes meanwhile.  One session starts workflows in a loop, a transaction
# each, while another builds an index of durable.runs with CREATE INDEX
# CONCURRENTLY: the session sees the index first not ready for inserts, then
# ready; once it is valid, every run the session started is in it (amcheck's
# heapallindexed).  An index whose predicate calls a function a user wrote
# gets its entries too, and one dropped and made again with another
# predicate gets the entries of the new one.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('index_info');
# amcheck is PostgreSQL's contrib module: Debian's server package has it, the
# assert-enabled build of make test-cassert does not.
plan skip_all => 'amcheck is not installed'
  unless -e $node->config_data('--pkglibdir') . '/amcheck.so';
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'durable'
durable.worker_enabled = off
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION durable;
CREATE EXTENSION amcheck;
CREATE FUNCTION user_pick(id text) RETURNS boolean
    LANGUAGE sql IMMUTABLE AS $$ SELECT id LIKE '%7' $$;
CREATE INDEX runs_user_pred ON durable.runs (workflow_id) WHERE user_pick(workflow_id);
});

# The loop stops 50 starts after the concurrent index became valid.
my $session = $node->background_psql('postgres');
$session->query_until(qr/looping/, q{
\echo looping
DO $$
DECLARE
    i int := 0;
    after_valid int := 0;
BEGIN
    LOOP
        i := i + 1;
        PERFORM durable.start_workflow('t', NULL, 'w' || i, 'q');
        COMMIT;
        IF EXISTS (SELECT FROM pg_index
                   WHERE indexrelid = to_regclass('durable.runs_user_cic')
                     AND indisvalid) THEN
            after_valid := after_valid + 1;
        END IF;
        EXIT WHEN after_valid >= 50 OR i >= 200000;
    END LOOP;
END
$$;
});
$node->poll_query_until('postgres',
	q{SELECT count(*) >= 200 FROM durable.runs}) or die 'the loop did not start';
$node->safe_psql('postgres', q{
CREATE INDEX CONCURRENTLY runs_user_cic ON durable.runs ((workflow_id || '!'))
    WHERE task_queue = 'q';
});
$session->query_safe('SELECT 1');

my $started = $node->safe_psql('postgres', 'SELECT count(*) FROM durable.runs');
cmp_ok($started, '>', 250, "the session started runs before and after the index ($started)");
is($node->safe_psql('postgres', q{
SELECT indisvalid AND indisready FROM pg_index
 WHERE indexrelid = 'durable.runs_user_cic'::regclass}),
	't', 'the concurrent index is valid');
is($node->psql('postgres',
		q{SELECT bt_index_check('durable.runs_user_cic', true)}),
	0, 'every run started while and after the index was built is in it');
is($node->psql('postgres',
		q{SELECT bt_index_check('durable.runs_user_pred', true)}),
	0, 'the index whose predicate calls a user function has every run it picks');

# Dropped and made again with another predicate, in the middle of a session
# that has used the old one.
$session->query_safe(q{SELECT durable.start_workflow('t', NULL, 'x7', 'q')});
$node->safe_psql('postgres', q{
DROP INDEX durable.runs_user_pred;
CREATE INDEX runs_user_pred ON durable.runs (workflow_id) WHERE workflow_id LIKE 'y%';
});
$session->query_safe(q{
SELECT durable.start_workflow('t', NULL, 'y' || i, 'q') FROM generate_series(1, 20) i;
SELECT durable.start_workflow('t', NULL, 'z7', 'q');
});
is($node->psql('postgres',
		q{SELECT bt_index_check('durable.runs_user_pred', true)}),
	0, 'the index made again has the runs its new predicate picks');
$session->quit;

done_testing();

-- The privilege model: nothing for PUBLIC but the pure functions; client,
-- worker and admin groups; no table writable except through the API.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS durable;
RESET client_min_messages;
SET durable.test_time = '2026-03-01 00:00:00+00';

CREATE ROLE durable_test_app LOGIN;
CREATE ROLE durable_test_nobody LOGIN;
GRANT durable_client TO durable_test_app;

-- No table or sequence is writable by PUBLIC, and the API is not callable.
SELECT c.relname, p.privilege_type
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'durable'
  CROSS JOIN (VALUES ('INSERT'), ('UPDATE'), ('DELETE'), ('TRUNCATE'), ('SELECT')) p(privilege_type)
 WHERE c.relkind IN ('r', 'v', 'S')
   AND has_table_privilege('durable_test_nobody', c.oid, p.privilege_type)
 ORDER BY 1, 2;
SELECT p.proname
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace AND n.nspname = 'durable'
 WHERE has_function_privilege('durable_test_nobody', p.oid, 'EXECUTE')
 ORDER BY 1;
-- Every function that touches tables runs with a fixed search_path.
SELECT p.proname
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace AND n.nspname = 'durable'
 WHERE p.prosecdef AND NOT ('search_path=durable, pg_catalog, pg_temp' = ANY (p.proconfig)
                            OR 'search_path=pg_catalog, durable, pg_temp' = ANY (p.proconfig))
 ORDER BY 1;

SET ROLE durable_test_nobody;
SELECT durable.start_workflow('t');
SELECT * FROM durable.runs;
INSERT INTO durable.history VALUES (gen_random_uuid(), 1, now(), 'X', '{}');
SELECT durable.now() IS NOT NULL AS now_is_public;
SELECT durable.retry_policy('1 second', maximum_attempts => 2) IS NOT NULL AS retry_policy_is_public;
SET durable.test_time = '2030-01-01';
RESET ROLE;

-- A client starts, signals, reads; identity records the calling role.
SET ROLE durable_test_app;
SELECT durable.start_workflow('t', NULL, 'priv-1') IS NOT NULL AS started;
SELECT durable.signal_workflow('priv-1', 'go');
SELECT event_type, attributes->>'identity' AS identity FROM durable.get_history('priv-1');
SELECT status FROM durable.workflows WHERE workflow_id = 'priv-1';
-- ... but writes no table directly, and does not tick.
UPDATE durable.runs SET status = 'completed';
DELETE FROM durable.history;
SELECT durable.tick();
RESET ROLE;

-- The admin group has the client's rights and tick().
GRANT durable_admin TO durable_test_nobody;
SET ROLE durable_test_nobody;
SELECT durable.tick() >= 0 AS admin_ticks;
SELECT durable.terminate_workflow('priv-1', 'cleanup');
RESET ROLE;

DROP OWNED BY durable_test_app, durable_test_nobody;
DROP ROLE durable_test_app;
DROP ROLE durable_test_nobody;

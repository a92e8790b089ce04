-- The search_path of the extension's functions (docs/privileges.md "Privileges"):
-- every SECURITY DEFINER function, and every function
-- that sets a search_path at all (the API functions, which src/base/caller.c runs
-- as the extension's owner, all do), puts pg_catalog first and pg_temp last, so
-- that no object of another schema (or a temporary one) stands in for a
-- built-in operator or function while the engine runs as the extension's owner.
BEGIN;
SELECT plan(4);

CREATE TEMP VIEW ext_functions AS
    SELECT p.oid::regprocedure::text AS fn, p.prosecdef,
           (SELECT substr(c, length('search_path=') + 1) FROM unnest(p.proconfig) c
             WHERE c LIKE 'search_path=%') AS path
      FROM pg_proc p
      JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
       AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
      JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'durable';

SELECT cmp_ok((SELECT count(*) FROM ext_functions WHERE path IS NOT NULL), '>=', 23::bigint,
    'the functions that run as the extension''s owner (src/base/caller.c) are there to check');
SELECT is_empty($$ SELECT fn FROM ext_functions WHERE prosecdef AND path IS NULL $$,
    'every SECURITY DEFINER function sets its search_path');
SELECT is_empty($$ SELECT fn || ': ' || path FROM ext_functions
                    WHERE path IS NOT NULL AND path NOT LIKE 'pg_catalog,%' $$,
    'every search_path of a durable function starts with pg_catalog');
SELECT is_empty($$ SELECT fn || ': ' || path FROM ext_functions
                    WHERE path IS NOT NULL AND path NOT LIKE '%, pg_temp' $$,
    'and ends with pg_temp, named explicitly');

SELECT * FROM finish();
ROLLBACK;

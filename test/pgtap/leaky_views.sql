-- A function of the caller's in a WHERE clause sees no row of a namespace the
-- caller may not read (docs/privileges.md "Privileges"): the views are security barriers,
-- and the set-returning functions filter before they return.  The attack: a
-- plpgsql function, declared very cheap so that the planner would run it
-- before the views' own filter, that writes down every value it is given.
-- Role lv_stranger has client and worker in namespace tb only; namespace ta
-- belongs to another tenant.  Every column of every view of the extension,
-- and of the set-returning functions, is given to the function in turn.
-- No BEGIN: the counters of durable.metrics count at commit, so every
-- statement commits (the database is this file's own; the roles, which are
-- the cluster's, are dropped at the end).
SELECT plan(52);
SET durable.test_time = '2026-01-01 00:00:00+00';

CREATE ROLE lv_stranger;
GRANT durable_client, durable_worker TO lv_stranger;
SELECT durable.create_namespace('ta');
SELECT durable.create_namespace('tb');
SELECT durable.grant_namespace('tb', 'lv_stranger', 'client');
SELECT durable.grant_namespace('tb', 'lv_stranger', 'worker');

-- In each namespace: a run with an activity that failed once and is being
-- retried, its attempt in durable.activity_attempts, a poller, a stuck task
-- and counters.  ta's values differ from tb's wherever they can.
SELECT durable.start_workflow('ta-pay', '{"ssn": "078-05-1120"}', 'ta-wf', 'ta-q', 'ta',
                              memo => '{"card": "4111-1111"}');
SELECT durable.start_workflow('ta-pay', '{"ssn": "219-09-9999"}', 'ta-wf2', 'ta-q2', 'ta');
SELECT durable.start_workflow('tb-pay', '{"mine": 1}', 'tb-wf', 'tb-q', 'tb',
                              memo => '{"mine": 2}');
-- A task with a concurrency key, and the key's limits (durable.task_queue_keys).
SELECT durable.start_workflow(ns || '-pay', NULL, ns || '-keyed', ns || '-kq', ns,
                              concurrency_key => ns || '-customer-' || n,
                              priority => n)
  FROM (VALUES ('ta', 1), ('tb', 4)) v (ns, n);
SELECT durable.set_task_key_limits(ns || '-kq', 'decision', ns || '-customer-' || n,
                                   max_concurrent => n + 6, weight => n, namespace => ns)
  FROM (VALUES ('ta', 1), ('tb', 4)) v (ns, n);
SELECT durable.complete_decision_task(
    durable.poll_decision_task(ns || '-q', ns || '-decider', ns)->>'taskToken',
    jsonb_build_array(jsonb_build_object('decisionType', 'ScheduleActivityTask',
        'activityId', ns || '-act', 'activityType', ns || '-charge', 'taskQueue', ns || '-q',
        'retryPolicy', '{"initialIntervalInSeconds": 1, "maximumAttempts": 5}'::jsonb)))
  FROM unnest(ARRAY['ta', 'tb']) ns;
SELECT durable.fail_activity(
    durable.poll_activity_task(ns || '-q', ns || '-host', ns)->>'taskToken',
    ns || ' card declined', next_retry_delay => '0')
  FROM unnest(ARRAY['ta', 'tb']) ns;
SELECT durable.tick();
INSERT INTO durable.ready_tasks (namespace, task_queue, kind, run_id, scheduled_event_id,
                                 failures, last_error, not_before)
    SELECT namespace, namespace || '-stuck', 'w', run_id, 1, 3, namespace || ' engine error',
           '2100-01-01'
      FROM durable.runs;
-- A batch job in each, canceled at once (the timer worker leaves it be), with an error.
SELECT durable.cancel_batch(durable.start_batch('signal', ns, workflow_id_prefix => ns || '-wf',
           reason => ns || ' nudge', signal_name => ns || '-sig', input => jsonb_build_object(ns, 1)))
  FROM unnest(ARRAY['ta', 'tb']) ns;
INSERT INTO durable.batch_job_errors
    SELECT b.batch_id, r.run_id, r.workflow_id, 'XX000', b.namespace || ' error', now()
      FROM durable.batch_jobs b JOIN durable.runs r ON r.namespace = b.namespace;

-- The attacker's function, owned by the attacker.  STABLE, so that the
-- planner may push it into the branches of a UNION ALL or into a subquery;
-- it writes through a volatile helper.
CREATE SCHEMA lv;
GRANT USAGE, CREATE ON SCHEMA lv TO lv_stranger;
CREATE UNLOGGED TABLE lv.seen (tag text, val text);
GRANT INSERT ON lv.seen TO lv_stranger;
SET ROLE lv_stranger;
CREATE FUNCTION lv.note(tag text, val text) RETURNS void LANGUAGE plpgsql VOLATILE AS
    $$ BEGIN INSERT INTO lv.seen VALUES (tag, val); END $$;
CREATE FUNCTION lv.leak(tag text, val anyelement) RETURNS boolean
    LANGUAGE plpgsql STABLE COST 0.0000001 AS
    $$ BEGIN PERFORM lv.note(tag, val::text); RETURN true; END $$;
-- The same, raising instead: for calls that must fail before it runs.
CREATE FUNCTION lv.trip(val anyelement) RETURNS boolean
    LANGUAGE plpgsql STABLE COST 0.0000001 AS
    $$ BEGIN RAISE SQLSTATE 'LVLK0' USING MESSAGE = 'leaked: ' || val::text; END $$;
RESET ROLE;

-- What a superuser reads (every namespace) and what lv_stranger reads, per
-- source and column.  A value the leaky function wrote down that is in the
-- first and not in the second is a leak.
CREATE TABLE lv.everything (src text, col text, val text);
CREATE TABLE lv.visible (src text, col text, val text);
GRANT INSERT ON lv.visible TO lv_stranger;

-- For each column of SRC (read as lv_stranger; OWNER_SRC is what a superuser
-- reads), record the values each may read, then run the attack on that column.
CREATE FUNCTION lv.attack(src text, owner_src text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE c text;
BEGIN
    EXECUTE format('CREATE TEMP VIEW lv_cols AS SELECT * FROM %s', src);
    FOR c IN SELECT attname FROM pg_attribute
              WHERE attrelid = 'lv_cols'::regclass AND attnum > 0 ORDER BY attnum LOOP
        EXECUTE format('INSERT INTO lv.everything SELECT %L, %L, s.%I::text FROM %s s',
                       src, c, c, COALESCE(owner_src, src));
        SET LOCAL ROLE lv_stranger;
        EXECUTE format('INSERT INTO lv.visible SELECT %L, %L, s.%I::text FROM %s s',
                       src, c, c, src);
        EXECUTE format('SELECT count(*) FROM %s s WHERE lv.leak(%L, s.%I)',
                       src, src || '/' || c, c);
        RESET ROLE;
    END LOOP;
    DROP VIEW lv_cols;
END $$;

-- The values of other namespaces the function saw, as "column=value".
CREATE FUNCTION lv.leaked(src text) RETURNS text[] LANGUAGE sql AS $$
    SELECT COALESCE(array_agg(DISTINCT s.col || '=' || s.val ORDER BY s.col || '=' || s.val), '{}')
      FROM (SELECT split_part(tag, '/', 2) AS col, val FROM lv.seen
             WHERE split_part(tag, '/', 1) = src) s
     WHERE (s.col, s.val) IN (SELECT col, val FROM lv.everything e WHERE e.src = leaked.src)
       AND (s.col, s.val) NOT IN (SELECT col, val FROM lv.visible v
                                   WHERE v.src = leaked.src AND v.val IS NOT NULL) $$;
-- How many values the function saw at all: it did run, on the caller's rows.
CREATE FUNCTION lv.calls(src text) RETURNS bigint LANGUAGE sql AS
    $$ SELECT count(*) FROM lv.seen WHERE split_part(tag, '/', 1) = src $$;

-- The outcome of a statement as lv_stranger: 'ok' or its SQLSTATE.
CREATE FUNCTION lv.try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE outcome text;
BEGIN
    BEGIN
        SET LOCAL ROLE lv_stranger;
        EXECUTE stmt;
        outcome := 'ok';
    EXCEPTION WHEN OTHERS THEN
        outcome := SQLSTATE;
    END;
    RESET ROLE;
    RETURN outcome;
END $$;

CREATE VIEW lv.ext_views AS
    SELECT c.oid::regclass::text AS v, c.reloptions
      FROM pg_depend d JOIN pg_class c ON c.oid = d.objid
     WHERE d.classid = 'pg_class'::regclass AND d.deptype = 'e' AND c.relkind = 'v'
       AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'durable');

SELECT is(ARRAY(SELECT v FROM lv.ext_views ORDER BY 1),
          '{durable.activity_attempts,durable.batch_errors,durable.batches,durable.metrics,durable.stuck_tasks,durable.task_queue_keys,durable.task_queues,durable.workflows}',
          'the views of the extension');
-- CREATE OR REPLACE VIEW drops the option unless it says it again.
SELECT is(ARRAY(SELECT v FROM lv.ext_views
                 WHERE NOT COALESCE('security_barrier=true' = ANY (reloptions), false) ORDER BY 1),
          '{}', 'every view of the extension is a security barrier');

CREATE TABLE lv.sources (src text PRIMARY KEY);
INSERT INTO lv.sources SELECT v FROM lv.ext_views;
INSERT INTO lv.sources VALUES ($$durable.list_workflows('tb')$$),
    ($$durable.count_workflows_by_status('tb')$$), ($$durable.get_history('tb-wf', 'tb')$$),
    ($$durable.replay_histories('tb-pay', 'tb')$$),
    ('durable.task_queue_pollers()'), ('durable.metric_values()');
-- A superuser reads ta's rows of a function through the same call for ta.
SELECT lv.attack(src, CASE WHEN src LIKE '%''tb''%'
                           THEN replace(replace(replace(src, '''tb''', '''ta'''), 'tb-wf', 'ta-wf'),
                                        'tb-pay', 'ta-pay') END)
  FROM lv.sources ORDER BY src;

-- For each source: a superuser reads values of ta there that lv_stranger does
-- not (something to leak), the function ran on lv_stranger's own rows, and it
-- saw nothing of ta.
SELECT ok(EXISTS (SELECT col, val FROM lv.everything e WHERE e.src = s.src
                  EXCEPT SELECT col, val FROM lv.visible v WHERE v.src = s.src),
          format('setup: %s has values lv_stranger may not read', src))
  FROM lv.sources s ORDER BY src;
SELECT ok(lv.calls(src) > 0, format('the leaky function ran on the rows of %s', src))
  FROM lv.sources ORDER BY src;
SELECT is(lv.leaked(src), '{}', format('a leaky qualifier on %s sees nothing of ta', src))
  FROM lv.sources ORDER BY src;

-- The functions that check the namespace fail before the caller's function
-- sees a row (a function inlined into the query would not).
SELECT is(lv.try($$SELECT count(*) FROM durable.list_workflows('ta') s WHERE lv.trip(s.input)$$),
          '42501', 'list_workflows of ta: 42501 before a qualifier sees a row');
SELECT is(lv.try($$SELECT count(*) FROM durable.count_workflows_by_status('ta') s
                    WHERE lv.trip(s.count)$$),
          '42501', 'count_workflows_by_status of ta: 42501 before a qualifier sees a row');
SELECT is(lv.try($$SELECT count(*) FROM durable.get_history('ta-wf', 'ta') s
                    WHERE lv.trip(s.attributes)$$),
          '42501', 'get_history of ta: 42501 before a qualifier sees a row');
SELECT is(lv.try($$SELECT count(*) FROM durable.replay_histories('ta-pay', 'ta') s
                    WHERE lv.trip(s.history)$$),
          '42501', 'replay_histories of ta: 42501 before a qualifier sees a row');
SELECT is(lv.try($$SELECT count(*) FROM durable.poll_activity_tasks('ta-q', NULL, 'ta') s(task)
                    WHERE lv.trip(s.task)$$),
          '42501', 'poll_activity_tasks of ta: 42501 before a qualifier sees a task');

-- A barrier lets the caller's leakproof qualifiers (=, < on text, uuid,
-- timestamps) below it: the indexes of durable.runs still serve them.
CREATE FUNCTION lv.plan(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE line text; p text := '';
BEGIN
    SET LOCAL ROLE lv_stranger;
    SET LOCAL enable_seqscan = off;
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || stmt LOOP
        p := p || line || E'\n';
    END LOOP;
    RESET ROLE;
    RESET enable_seqscan;
    RETURN p;
END $$;
SELECT matches(lv.plan($$SELECT * FROM durable.workflows WHERE workflow_id = 'tb-wf'$$),
               'Index Cond: .*workflow_id = ''tb-wf''',
               'durable.workflows by workflow_id: an index scan');
SELECT matches(lv.plan($$SELECT * FROM durable.workflows WHERE namespace = 'tb' AND status = 'running'$$),
               'Index Cond: .*namespace = ''tb''',
               'durable.workflows by namespace and status: an index scan');
SELECT matches(lv.plan($$SELECT * FROM durable.workflows
                          WHERE run_id = '00000000-0000-0000-0000-000000000000'$$),
               'Index Cond: .*run_id = ',
               'durable.workflows by run_id: an index scan');

DROP SCHEMA lv CASCADE;
DROP OWNED BY lv_stranger;
DROP ROLE lv_stranger;
SELECT * FROM finish();

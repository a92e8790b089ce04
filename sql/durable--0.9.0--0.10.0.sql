-- durable 0.9.0 -> 0.10.0: limits enforced for the executors too, and
-- fewer commits per workflow.
--
-- The schema check of sql/durable--0.2.0--0.3.0.sql is not repeated here:
-- since 0.3.0 the schema is owned by a superuser and only superusers may
-- create objects in it, and only a superuser can change that.  Objects are
-- schema-qualified and operators spelled OPERATOR(pg_catalog.x) as in the
-- earlier scripts.  Each section says what it is for.
--
-- An API function (re-)created here is SECURITY INVOKER with
-- SET search_path = pg_catalog, durable, pg_temp, as 0.5.0 made them all, and its name
-- is in engine_functions of src/base/caller.c, which runs it as the
-- extension's owner after noting its caller.

\echo Use "ALTER EXTENSION durable UPDATE TO '0.10.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- The executors claim by task queue, under the queue's and its keys' limits
-- (src/store/executor_share.c): their partial index of ready executor tasks
-- is on (namespace, task_queue, kind, priority, task_id), so that a loose
-- scan finds each queue and kind of a namespace that has executor tasks
-- ready, with its first task in the claim order, and the claim takes it
-- through the queue's limits as a poll does.  A queue held back by its
-- limits is passed over whole, not task by task.
-- ---------------------------------------------------------------------------
DROP INDEX durable.ready_tasks_executor_namespace;
CREATE INDEX ready_tasks_executor_queue
    ON durable.ready_tasks (namespace, task_queue, kind, priority, task_id)
    WHERE kind IN ('w', 'x') AND not_before IS NULL;

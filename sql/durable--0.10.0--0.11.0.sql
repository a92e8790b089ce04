-- durable 0.10.0 -> 0.11.0: fewer commits and less space per workflow, and
-- workflows that cross the nodes of a Citus cluster.
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

\echo Use "ALTER EXTENSION durable UPDATE TO '0.11.0'" to load this file. \quit

------------------------------------------------------------------------------------
-- Signals and cancels across the nodes of a cluster (src/store/router.c,
-- src/engine/children.c "Across nodes", docs/citus.md "Signals and cancels across
-- nodes").  Where each workflow id is owned by one of several nodes that each run
-- durable (a Citus cluster with durable_citus), an extension that knows which node
-- owns which id registers a router: the one row of durable.router names a function
-- that says whether another node owns a workflow id and one that relays a signal or
-- cancel request to that node, where durable.receive_external() delivers it.  A
-- decision whose target is owned elsewhere is written to an external timer (the
-- outbox), relayed when it fires.  Only a superuser writes the table; the engine
-- calls the functions as the extension's owner, and refuses functions that a
-- superuser does not own.  Without a row the engine works as on a single server.
------------------------------------------------------------------------------------

CREATE TABLE durable.router (
    single          boolean PRIMARY KEY DEFAULT true CHECK (single),
    name            text NOT NULL,
    owned_elsewhere regprocedure NOT NULL,
    relay           regprocedure NOT NULL,
    registered_at   timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE durable.router IS
    'the router of a node that shares its workflows with other nodes (docs/citus.md); written by superusers only';
-- Every backend keeps the row in memory (src/store/router.c).
CREATE TRIGGER router_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON durable.router
    FOR EACH STATEMENT EXECUTE FUNCTION durable.cached_table_changed();
GRANT SELECT ON durable.router TO durable_admin;

-- The requests relayed here from other nodes and delivered, so that a relay tried
-- again (a failure between the two nodes' commits) delivers nothing twice.  Purged
-- with the run they reached.
CREATE TABLE durable.received_requests (
    initiator_run_id   uuid NOT NULL,
    initiated_event_id bigint NOT NULL,
    target_run_id      uuid NOT NULL,
    received_at        timestamptz NOT NULL,
    PRIMARY KEY (initiator_run_id, initiated_event_id)
);
CREATE INDEX received_requests_target ON durable.received_requests (target_run_id);
SELECT pg_catalog.pg_extension_config_dump('durable.received_requests', '');
GRANT SELECT ON durable.received_requests TO durable_admin;

-- Deliver a request relayed from another node (an external timer's payload) to its
-- target here; returns {"outcome": "done" | "not_found" | "busy", "runId": ...}.
-- Granted to no one: the relay calls it as the extension's owner.
CREATE FUNCTION durable.receive_external(request jsonb) RETURNS jsonb
    AS 'MODULE_PATHNAME', 'durable_receive_external'
    LANGUAGE C VOLATILE
    SECURITY INVOKER SET search_path = pg_catalog, durable, pg_temp;
REVOKE ALL ON FUNCTION durable.receive_external(jsonb) FROM PUBLIC;

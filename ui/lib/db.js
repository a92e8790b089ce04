'use strict';
// Every statement the dashboard sends to the database is in this file.
//
// The dashboard talks to durable only through its SQL API and views, as the role it
// connects as: the database decides what that role may see and do.  Functions of
// durable 0.4.0 (list_workflows, count_workflows_by_status, reset_workflow,
// restart_workflow, the task_queues and metrics views) are used where the database has
// them; features() says which exist and which the role may use, and the pages fall back
// to the 0.3.0 views, or say what is missing, where they do not.
//
// On the coordinator of a Citus cluster where durable_citus is installed (docs/citus.md)
// the coordinator holds no workflow: the calls go to durable_citus's functions of the
// same names and arguments, which run on the node that owns the workflow or ask every
// node and merge (f.cluster; API below).  What durable_citus has no function for
// (metrics, stuck tasks, activity attempts, task queue keys, batch errors) the pages
// say is per node.

const { Pool, types } = require('pg');

// bigint counts as numbers (a page never shows counts past 2^53).
types.setTypeParser(20, (v) => Number(v));

const FUNCTIONS = [
  'describe_workflow', 'get_history', 'signal_workflow', 'cancel_workflow',
  'terminate_workflow', 'reset_workflow', 'restart_workflow', 'list_workflows',
  'count_workflows', 'count_workflows_by_status', 'may_read_namespace',
  // 0.7.0 (a queue's pause) and 0.8.0 (a run's)
  'pause_workflow', 'resume_workflow', 'pause_task_queue', 'resume_task_queue',
];
const RELATIONS = [
  'workflows', 'activity_attempts', 'stuck_tasks', 'task_queues', 'metrics', 'namespaces',
  'batches', 'batch_errors', 'task_queue_keys',
];
// The functions that durable_citus wraps (in its own schema, same names and arguments);
// the others of FUNCTIONS are durable's on the coordinator.
const CLUSTER_FUNCTIONS = FUNCTIONS.filter((n) => n !== 'may_read_namespace');
const STATUSES = ['running', 'completed', 'failed', 'canceled', 'terminated',
  'continued_as_new', 'timed_out'];

function createPool(connectionString) {
  const pool = new Pool({
    connectionString: connectionString || undefined,
    max: Number(process.env.DURABLE_UI_POOL || 5),
    application_name: 'durable dashboard',
    // A page never waits long for the database: a slow statement fails with 57014,
    // shown like any other error.
    statement_timeout: Number(process.env.DURABLE_UI_STATEMENT_TIMEOUT_MS || 15000),
  });
  pool.on('error', () => {});   // an idle client's lost connection: the next query says it
  return pool;
}

// Whether the database has durable_citus (a Citus coordinator): asked once a pool.
const clusterOf = new WeakMap();
async function isCluster(pool) {
  if (!clusterOf.has(pool)) {
    const { rows } = await pool.query(`
      SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'durable_citus') AS c`);
    clusterOf.set(pool, rows[0].c);
  }
  return clusterOf.get(pool);
}

// The schema of the API functions the pool calls: durable_citus on a coordinator
// (known once features() has run, which every page does first).
function api(pool) { return clusterOf.get(pool) ? 'durable_citus' : 'durable'; }

// What this database has and what this role may do, cached for a few seconds (an
// ALTER EXTENSION UPDATE or a GRANT shows on the next pages); one entry a pool, as
// each pool is a role.
const cache = new WeakMap();
async function features(pool) {
  const hit = cache.get(pool);
  if (hit && Date.now() - hit.at < 5000) return hit.f;
  const cluster = await isCluster(pool);
  const { rows } = await pool.query(`
    SELECT current_user AS role, current_database() AS database,
           (SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'durable') AS version,
           (SELECT pg_catalog.jsonb_object_agg(proname, ok) FROM (
                SELECT p.proname, bool_or(pg_catalog.has_function_privilege(p.oid, 'EXECUTE')) AS ok
                  FROM pg_catalog.pg_proc p
                 WHERE p.pronamespace = pg_catalog.to_regnamespace(
                           CASE WHEN p.proname = ANY ($3::text[]) THEN 'durable_citus' ELSE 'durable' END)
                   AND p.proname = ANY ($1::text[])
                 GROUP BY p.proname) f) AS functions,
           (SELECT pg_catalog.jsonb_object_agg(r, pg_catalog.has_table_privilege(c, 'SELECT'))
              FROM pg_catalog.unnest($2::text[]) r,
                   LATERAL pg_catalog.to_regclass('durable.' || r) c
             WHERE c IS NOT NULL) AS relations,
           (SELECT pg_catalog.array_agg(attname::text) FROM pg_catalog.pg_attribute
             WHERE attrelid = pg_catalog.to_regclass('durable.workflows')
               AND attnum > 0 AND NOT attisdropped) AS workflow_columns,
           (SELECT pg_catalog.array_agg(attname::text) FROM pg_catalog.pg_attribute
             WHERE attrelid = pg_catalog.to_regclass('durable.workflow_list_entry')
               AND attnum > 0 AND NOT attisdropped) AS list_columns,
           pg_catalog.has_schema_privilege(pg_catalog.to_regnamespace('durable'), 'USAGE')
             AS schema_usage,
           pg_catalog.has_schema_privilege(pg_catalog.to_regnamespace('durable_citus'), 'USAGE')
             AS cluster_usage,
           -- durable_citus 0.3.0's batches(): every node's batch jobs
           CASE WHEN $4 THEN (SELECT pg_catalog.has_function_privilege(p, 'EXECUTE')
                                FROM pg_catalog.to_regprocedure('durable_citus.batches()') p
                               WHERE p IS NOT NULL) END AS cluster_batches`,
  [FUNCTIONS, RELATIONS, cluster ? CLUSTER_FUNCTIONS : [], cluster]);
  const r = rows[0];
  const fns = r.functions || {};
  const rels = r.relations || {};
  const cols = new Set(r.workflow_columns || []);
  const usage = !!r.schema_usage;
  // exists: the database has it; may: this role may use it.
  const fn = (name) => ({
    exists: name in fns,
    may: usage && fns[name] === true && (!cluster || name === 'may_read_namespace' || !!r.cluster_usage),
  });
  const rel = (name) => ({ exists: name in rels, may: usage && rels[name] === true });
  const f = {
    role: r.role, database: r.database, version: r.version,
    installed: r.version !== null,
    cluster,
    // on a coordinator: durable_citus.batches() (exists: not null; may: true)
    clusterBatches: { exists: r.cluster_batches !== null, may: r.cluster_batches === true && !!r.cluster_usage },
    fn: Object.fromEntries(FUNCTIONS.map((n) => [n, fn(n)])),
    rel: Object.fromEntries(RELATIONS.map((n) => [n, rel(n)])),
    columns: cols,
    listColumns: new Set(r.list_columns || []),
  };
  cache.set(pool, { f, at: Date.now() });
  return f;
}

function forgetFeatures(pool) { cache.delete(pool); }

// The nodes of the cluster (durable_citus.nodes(): the workers that own workflows).
async function nodes(pool) {
  const { rows } = await pool.query(`
    SELECT node_name, node_port, shards FROM durable_citus.nodes() ORDER BY group_id`);
  return rows;
}

// The namespaces this role may read, when it may read the namespaces table (admins);
// otherwise null and the page asks for a name.
async function namespaces(pool, f) {
  if (!f.rel.namespaces.may || !f.fn.may_read_namespace.may) return null;
  const { rows } = await pool.query(`
    SELECT name FROM durable.namespaces
     WHERE durable.may_read_namespace(name) ORDER BY name LIMIT 500`);
  return rows.map((r) => r.name);
}

const LIST_COLUMNS = `namespace, workflow_id, run_id, workflow_type, task_queue, status,
    attempt, start_time, close_time, failure`;

// One page of runs, newest start first: { rows, next } where next is the cursor of the
// following page (null on the last).  Filters: see filtersFromQuery in pages.js.
async function listWorkflows(pool, f, flt, pageSize, after) {
  // on a coordinator always durable_citus's function: its views hold nothing
  if (f.cluster || f.fn.list_workflows.may || (f.fn.list_workflows.exists && !f.rel.workflows.may)) {
    // the pause of each run: in list_workflows' rows since 0.9.0
    const paused = f.listColumns.has('paused_at') ? ', paused_at' : ', NULL::timestamptz AS paused_at';
    const { rows } = await pool.query(`
      SELECT ${LIST_COLUMNS}${paused}, cursor FROM ${api(pool)}.list_workflows(
          namespace => $1, status => $2, workflow_type => $3, task_queue => $4,
          workflow_id_prefix => $5, started_since => $6, started_before => $7,
          closed_since => $8, closed_before => $9, search_attributes => $10::jsonb,
          memo => $11::jsonb, page_size => $12, after => $13)`,
    [flt.namespace, flt.status, flt.type, flt.queue, flt.prefix, flt.startedSince,
      flt.startedBefore, flt.closedSince, flt.closedBefore, flt.searchAttributes,
      flt.memo, pageSize + 1, after || null]);
    const more = rows.length > pageSize;
    const page = rows.slice(0, pageSize);
    return { rows: page, next: more ? page[page.length - 1].cursor : null };
  }
  // 0.3.0 (or a role that may read the view but not call list_workflows): the view,
  // with a keyset cursor of our own (start_time, run_id).
  if (flt.searchAttributes && !f.columns.has('search_attributes')) {
    throw notAvailable('filtering by search attributes', "durable 0.4.0's list_workflows");
  }
  const { where, params } = viewFilter(flt, true);
  if (after) {
    const m = /^(.+)\|([0-9a-f-]{36})$/.exec(Buffer.from(after, 'base64url').toString());
    if (!m) throw badArgument('after', 'the page cursor is not one of this dashboard');
    params.push(m[1], m[2]);
    where.push(`(start_time, run_id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`);
  }
  params.push(pageSize + 1);
  // the pause of each run: in the view since 0.8.0
  const paused = f.columns.has('paused_at') ? ', paused_at' : ', NULL::timestamptz AS paused_at';
  const { rows } = await pool.query(`
    SELECT ${LIST_COLUMNS}${paused}, start_time::text AS start_text FROM durable.workflows
     WHERE ${where.join(' AND ')}
     ORDER BY start_time DESC, run_id DESC LIMIT $${params.length}`, params);
  const more = rows.length > pageSize;
  const page = rows.slice(0, pageSize);
  const last = page[page.length - 1];
  return {
    rows: page,
    next: more ? Buffer.from(`${last.start_text}|${last.run_id}`).toString('base64url') : null,
  };
}

// The priority and concurrency key of the runs of a page (the columns of durable.workflows
// of 0.9.0, which list_workflows does not return): Map run_id -> { priority,
// concurrency_key }; empty where the view lacks them or the role may not read it.
async function runOrder(pool, f, runIds) {
  if (!runIds.length || f.cluster || !f.columns.has('priority') || !f.rel.workflows.may) return new Map();
  const { rows } = await pool.query(`
    SELECT run_id, priority, concurrency_key FROM durable.workflows
     WHERE run_id = ANY ($1::uuid[])`, [runIds]);
  return new Map(rows.map((r) => [r.run_id, r]));
}

// The WHERE clause over durable.workflows for the filters (0.3.0's fallback).
function viewFilter(flt, withStatus) {
  const where = ['namespace = $1'];
  const params = [flt.namespace];
  const add = (sql, v) => { params.push(v); where.push(sql.replace('?', `$${params.length}`)); };
  if (withStatus && flt.status) add('status = ?', flt.status);
  if (flt.type) add('workflow_type = ?', flt.type);
  if (flt.queue) add('task_queue = ?', flt.queue);
  if (flt.prefix) add("starts_with(workflow_id, ?)", flt.prefix);
  if (flt.startedSince) add('start_time >= ?::timestamptz', flt.startedSince);
  if (flt.startedBefore) add('start_time < ?::timestamptz', flt.startedBefore);
  if (flt.closedSince) add('close_time >= ?::timestamptz', flt.closedSince);
  if (flt.closedBefore) add('close_time < ?::timestamptz', flt.closedBefore);
  if (flt.memo) add('memo @> ?::jsonb', flt.memo);
  if (flt.searchAttributes) add('search_attributes @> ?::jsonb', flt.searchAttributes);
  return { where, params };
}

// Counts by status for the filters (the status filter left out): { status: n }.
async function countByStatus(pool, f, flt) {
  let rows;
  if (f.cluster || f.fn.count_workflows_by_status.may ||
      (f.fn.count_workflows_by_status.exists && !f.rel.workflows.may)) {
    ({ rows } = await pool.query(`
      SELECT status, count FROM ${api(pool)}.count_workflows_by_status(
          namespace => $1, workflow_type => $2, task_queue => $3,
          workflow_id_prefix => $4, started_since => $5, started_before => $6,
          closed_since => $7, closed_before => $8, search_attributes => $9::jsonb,
          memo => $10::jsonb)`,
    [flt.namespace, flt.type, flt.queue, flt.prefix, flt.startedSince, flt.startedBefore,
      flt.closedSince, flt.closedBefore, flt.searchAttributes, flt.memo]));
  } else {
    if (flt.searchAttributes && !f.columns.has('search_attributes')) return null;
    const { where, params } = viewFilter(flt, false);
    ({ rows } = await pool.query(`
      SELECT status, count(*) AS count FROM durable.workflows
       WHERE ${where.join(' AND ')} GROUP BY status`, params));
  }
  const out = Object.fromEntries(STATUSES.map((s) => [s, 0]));
  for (const r of rows) out[r.status] = Number(r.count);
  return out;
}

async function describe(pool, ns, workflowId, runId) {
  const { rows } = await pool.query(
    `SELECT ${api(pool)}.describe_workflow($1, $2, $3::uuid) AS d`, [workflowId, ns, runId || null]);
  return rows[0].d;
}

// The runs of a workflow id, newest first (the chain, retries, resets and restarts).
async function runsOf(pool, f, ns, workflowId) {
  if (f.cluster) {
    // list_workflows by prefix, this id's runs kept (a run's links to the others are
    // in its node's durable.workflows, which list_workflows does not return); at most
    // 10 pages, so that an id that prefixes many others does not walk the whole list
    const runs = [];
    let after = null;
    let pages = 0;
    do {
      const { rows } = await pool.query(`
        SELECT run_id, status, attempt, start_time, close_time, cursor, workflow_id
          FROM durable_citus.list_workflows(namespace => $1, workflow_id_prefix => $2,
                                            page_size => 200, after => $3)`,
      [ns, workflowId, after]);
      runs.push(...rows.filter((r) => r.workflow_id === workflowId));
      after = rows.length === 200 ? rows[rows.length - 1].cursor : null;
    } while (after && runs.length < 50 && ++pages < 10);
    return runs.slice(0, 50);
  }
  const extra = ['origin', 'reset_from', 'restarted_from'].filter((c) => f.columns.has(c));
  const { rows } = await pool.query(`
    SELECT run_id, status, attempt, start_time, close_time, continued_from, continued_to,
           first_run_id, cron_schedule ${extra.map((c) => `, ${c}`).join('')}
      FROM durable.workflows
     WHERE namespace = $1 AND workflow_id = $2
     ORDER BY start_time DESC, run_id DESC LIMIT 50`, [ns, workflowId]);
  return rows;
}

// Events [from, from + count) of a run's history.
async function history(pool, ns, workflowId, runId, from, count) {
  const { rows } = await pool.query(`
    SELECT event_id, event_time, event_type, attributes
      FROM ${api(pool)}.get_history($1, $2, $3::uuid)
     WHERE event_id >= $4 ORDER BY event_id LIMIT $5`,
  [workflowId, ns, runId, from, count]);
  return rows;
}

// The code versions a run recorded (RecordMarker "Version": get_version, patched,
// deprecate_patch; docs/sql-workflows.md "Changing workflow code"), in history order.
async function codeVersions(pool, ns, workflowId, runId) {
  const { rows } = await pool.query(`
    SELECT event_id, attributes->'details' AS details
      FROM ${api(pool)}.get_history($1, $2, $3::uuid)
     WHERE event_type = 'MarkerRecorded' AND attributes->>'markerName' = 'Version'
     ORDER BY event_id`, [workflowId, ns, runId]);
  return rows;
}

// The decision task failure since the run's last completed decision task, if any:
// a run whose code no longer replays its history shows NonDeterministicWorkflow here.
async function decisionFailure(pool, ns, workflowId, runId) {
  const { rows } = await pool.query(`
    WITH h AS (SELECT event_id, event_type, attributes FROM ${api(pool)}.get_history($1, $2, $3::uuid))
    SELECT event_id, attributes FROM h
     WHERE event_type = 'DecisionTaskFailed'
       AND event_id > coalesce((SELECT max(event_id) FROM h WHERE event_type = 'DecisionTaskCompleted'), 0)
     ORDER BY event_id DESC LIMIT 1`, [workflowId, ns, runId]);
  return rows[0] || null;
}

async function event(pool, ns, workflowId, runId, eventId) {
  const { rows } = await pool.query(`
    SELECT event_id, event_time, event_type, attributes
      FROM ${api(pool)}.get_history($1, $2, $3::uuid) WHERE event_id = $4`,
  [workflowId, ns, runId, eventId]);
  return rows[0] || null;
}

// The run's DecisionTaskCompleted events, a reset's possible points (the newest 200).
async function resetPoints(pool, ns, workflowId, runId) {
  const { rows } = await pool.query(`
    SELECT event_id, event_time FROM ${api(pool)}.get_history($1, $2, $3::uuid)
     WHERE event_type = 'DecisionTaskCompleted' ORDER BY event_id DESC LIMIT 200`,
  [workflowId, ns, runId]);
  return rows;
}

// The ActivityTaskScheduled events of the pending activities (their retry policy).
async function scheduledEvents(pool, ns, workflowId, runId, eventIds) {
  if (!eventIds.length) return [];
  const { rows } = await pool.query(`
    SELECT event_id, attributes FROM ${api(pool)}.get_history($1, $2, $3::uuid)
     WHERE event_type = 'ActivityTaskScheduled'
       AND attributes->>'activityId' = ANY ($4::text[])`,
  [workflowId, ns, runId, eventIds]);
  return rows;
}

async function activityAttempts(pool, runId) {
  const { rows } = await pool.query(`
    SELECT scheduled_event_id, activity_id, activity_type, attempt, outcome, failure_reason,
           failure_details, worker_identity, scheduled_time, started_time, end_time,
           next_retry_time
      FROM durable.activity_attempts WHERE run_id = $1
     ORDER BY scheduled_event_id, attempt LIMIT 500`, [runId]);
  return rows;
}

async function children(pool, runId) {
  const { rows } = await pool.query(`
    SELECT namespace, workflow_id, run_id, workflow_type, status, start_time, close_time
      FROM durable.workflows WHERE parent_run_id = $1
     ORDER BY start_time LIMIT 200`, [runId]);
  return rows;
}

// Actions: each returns the run to show afterwards.
async function signal(pool, ns, workflowId, runId, name, input) {
  await pool.query(`SELECT ${api(pool)}.signal_workflow(workflow_id => $1, signal_name => $2,
      input => $3::jsonb, namespace => $4, run_id => $5::uuid)`,
  [workflowId, name, input, ns, runId]);
  return runId;
}

async function cancel(pool, ns, workflowId, runId, reason) {
  await pool.query(`SELECT ${api(pool)}.cancel_workflow(workflow_id => $1, reason => $2,
      namespace => $3, run_id => $4::uuid)`, [workflowId, reason, ns, runId]);
  return runId;
}

async function terminate(pool, ns, workflowId, runId, reason) {
  await pool.query(`SELECT ${api(pool)}.terminate_workflow(workflow_id => $1, reason => $2,
      namespace => $3, run_id => $4::uuid)`, [workflowId, reason, ns, runId]);
  return runId;
}

// A run's pause (0.8.0): whether it changed anything (false: already paused, or not
// paused).
async function pauseWorkflow(pool, ns, workflowId, runId, reason) {
  const { rows } = await pool.query(`SELECT ${api(pool)}.pause_workflow(workflow_id => $1,
      run_id => $2::uuid, reason => $3, namespace => $4) AS changed`,
  [workflowId, runId, reason, ns]);
  return rows[0].changed;
}

async function resumeWorkflow(pool, ns, workflowId, runId) {
  const { rows } = await pool.query(`SELECT ${api(pool)}.resume_workflow(workflow_id => $1,
      run_id => $2::uuid, namespace => $3) AS changed`, [workflowId, runId, ns]);
  return rows[0].changed;
}

// A task queue's pause (0.7.0), the same way.
async function pauseQueue(pool, ns, queue, reason) {
  const { rows } = await pool.query(`SELECT ${api(pool)}.pause_task_queue(task_queue => $1,
      namespace => $2, reason => $3) AS changed`, [queue, ns, reason]);
  return rows[0].changed;
}

async function resumeQueue(pool, ns, queue) {
  const { rows } = await pool.query(`SELECT ${api(pool)}.resume_task_queue(task_queue => $1,
      namespace => $2) AS changed`, [queue, ns]);
  return rows[0].changed;
}

async function reset(pool, ns, workflowId, runId, reason, eventId) {
  const { rows } = await pool.query(`SELECT ${api(pool)}.reset_workflow(workflow_id => $1,
      reason => $2, namespace => $3, run_id => $4::uuid, event_id => $5::bigint) AS r`,
  [workflowId, reason, ns, runId, eventId]);
  return rows[0].r;
}

async function restart(pool, ns, workflowId, runId, reason, input) {
  const { rows } = await pool.query(`SELECT ${api(pool)}.restart_workflow(workflow_id => $1,
      reason => $2, namespace => $3, run_id => $4::uuid, input => $5::jsonb) AS r`,
  [workflowId, reason, ns, runId, input]);
  return rows[0].r;
}

async function taskQueues(pool, f) {
  if (f && f.cluster) {
    // durable_citus.task_queues(): each node's queues with its name and port, fewer
    // columns than the view (no executors, age or limits)
    const { rows } = await pool.query(`
      SELECT node_name, node_port, namespace, task_queue, kind, ready_tasks, oldest_ready_time,
             extract(epoch FROM pg_catalog.now() - oldest_ready_time)::float8 AS oldest_ready_age,
             waiting_on_timer, pollers, last_poll_time, NULL::text[] AS executor_types,
             paused_at::text AS paused_at, NULL::text AS paused_by, NULL::text AS pause_reason,
             held_tasks, NULL::integer AS max_concurrent, started_tasks,
             NULL::float8 AS rate_limit, NULL::integer AS rate_burst
        FROM durable_citus.task_queues()
       ORDER BY namespace, task_queue, kind, node_port LIMIT 1000`);
    return rows;
  }
  const { rows } = await pool.query(`
    SELECT namespace, task_queue, kind, ready_tasks, oldest_ready_time,
           extract(epoch FROM oldest_ready_age)::float8 AS oldest_ready_age,
           waiting_on_timer, pollers, last_poll_time, executor_types,
           -- the pause of the queue (0.7.0) and the held tasks of paused runs
           -- (0.8.0), NULL before
           pg_catalog.to_jsonb(q)->>'paused_at' AS paused_at,
           pg_catalog.to_jsonb(q)->>'paused_by' AS paused_by,
           pg_catalog.to_jsonb(q)->>'pause_reason' AS pause_reason,
           (pg_catalog.to_jsonb(q)->>'held_tasks')::bigint AS held_tasks,
           -- the limits of the queue (0.8.0), NULL before and without limits
           (pg_catalog.to_jsonb(q)->>'max_concurrent')::integer AS max_concurrent,
           (pg_catalog.to_jsonb(q)->>'started_tasks')::bigint AS started_tasks,
           (pg_catalog.to_jsonb(q)->>'rate_limit')::float8 AS rate_limit,
           (pg_catalog.to_jsonb(q)->>'rate_burst')::integer AS rate_burst
      FROM durable.task_queues q
     ORDER BY namespace, task_queue, kind LIMIT 1000`);
  return rows;
}

// The concurrency keys of the queues (durable.task_queue_keys, 0.9.0): those with ready
// or started tasks or limits of their own, with their limits and weight.
async function taskQueueKeys(pool) {
  const { rows } = await pool.query(`
    SELECT namespace, task_queue, kind, concurrency_key, ready_tasks, top_priority,
           started_tasks, max_concurrent, rate_limit, rate_burst, weight
      FROM durable.task_queue_keys
     ORDER BY namespace, task_queue, kind, concurrency_key LIMIT 1000`);
  return rows;
}

async function stuckTasks(pool) {
  const { rows } = await pool.query(`
    SELECT namespace, workflow_id, run_id, workflow_type, task_type, activity_type,
           task_queue, attempt, failures, last_error, next_attempt_time
      FROM durable.stuck_tasks ORDER BY next_attempt_time LIMIT 200`);
  return rows;
}

// The batch operations this role may see (durable.batches, 0.8.0), newest first, and
// the errors kept of them.
async function batches(pool, f) {
  if (f && f.cluster) {
    // durable_citus.batches() (0.3.0): each node's jobs with its name and port
    const { rows } = await pool.query(`
      SELECT node_name, node_port, batch_id, namespace, operation, state, filters, reason,
             signal_name, reset_to, started_by, total, touched, skipped, failed, done,
             start_time, update_time, close_time, canceled_by
        FROM durable_citus.batches() ORDER BY start_time DESC, batch_id LIMIT 200`);
    return rows;
  }
  const { rows } = await pool.query(`
    SELECT batch_id, namespace, operation, state, filters, reason, signal_name, reset_to,
           started_by, total, touched, skipped, failed, done, start_time, update_time,
           close_time, canceled_by
      FROM durable.batches ORDER BY start_time DESC, batch_id LIMIT 200`);
  return rows;
}

async function batchErrors(pool) {
  const { rows } = await pool.query(`
    SELECT batch_id, namespace, run_id, workflow_id, sqlstate, message, error_time
      FROM durable.batch_errors ORDER BY error_time DESC, batch_id, run_id LIMIT 200`);
  return rows;
}

// One sample of durable.metrics (the sampler in metrics.js keeps the last minutes).
async function metricValues(pool) {
  const { rows } = await pool.query(`
    SELECT metric, namespace, task_queue, label, le::text AS le, value::float8 AS value
      FROM durable.metrics`);
  return rows;
}

// The errors the dashboard raises itself look like the database's: a SQLSTATE and a
// message.
function notAvailable(what, needs) {
  const e = new Error(`${what} needs ${needs}, which this database does not have`);
  e.code = '0A000';
  e.hint = 'ALTER EXTENSION durable UPDATE brings it.';
  return e;
}

function badArgument(name, msg) {
  const e = new Error(`${name}: ${msg}`);
  e.code = '22023';
  return e;
}

module.exports = {
  createPool, features, forgetFeatures, nodes, namespaces, listWorkflows, runOrder, countByStatus,
  describe, runsOf, history, codeVersions, decisionFailure, event, resetPoints, scheduledEvents, activityAttempts,
  children, signal, cancel, terminate, pauseWorkflow, resumeWorkflow, pauseQueue, resumeQueue,
  reset, restart, taskQueues, taskQueueKeys, stuckTasks, batches, batchErrors,
  metricValues, notAvailable, badArgument, STATUSES,
};

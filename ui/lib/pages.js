'use strict';
// The pages.  Each handler returns { body } (or { redirect }); every value shown goes
// through html`` (lib/html.js), which escapes it.

const db = require('./db');
const { html, url, json, time, seconds } = require('./html');
const { chart } = require('./metrics');

const PAGE_SIZE = 50;
const EVENTS_PER_PAGE = 100;

// ---------------------------------------------------------------- layout and errors

function layout(ctx, f, title, body, { live = false, nav = '' } = {}) {
  const who = f ? html`<span class="who" title="the database role the dashboard connects as">
      ${f.role}@${f.database}${f.version ? html` · durable ${f.version}` : ''}${f.cluster ? html` · Citus coordinator` : ''}</span>` : '';
  const link = (href, label, show) => (show ? html`<a href="${href}" ${nav === href ? html`aria-current="page"` : ''}>${label}</a>` : '');
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="${ctx.csrf}">
<title>${title} · durable</title>
<link rel="stylesheet" href="/static/style.css">
<script src="/static/app.js" defer></script>
</head><body>
<a class="skip" href="#main">Skip to content</a>
<header><nav aria-label="Pages">
  <strong class="brand">durable</strong>
  ${link('/workflows', 'Workflows', !f || f.rel.workflows.may || (f.cluster && f.fn.list_workflows.may))}
  ${link('/task-queues', 'Task queues', !f || f.cluster || !f.rel.task_queues.exists || f.rel.task_queues.may || f.rel.stuck_tasks.may)}
  ${link('/batches', 'Batches', !!f && (f.cluster ? f.clusterBatches.may : f.rel.batches.exists && f.rel.batches.may))}
  ${link('/metrics', 'Metrics', !f || !f.rel.metrics.exists || f.rel.metrics.may)}
</nav>${who}</header>
<main id="main" tabindex="-1" ${live ? html`data-live="1"` : ''}>
<h1>${title}</h1>
${body}
</main></body></html>`;
}

// A database error: its SQLSTATE and message, and its detail and hint.
function errorBox(e) {
  const code = e.code || (e.errno ? String(e.errno) : 'error');
  return html`<div class="error" role="alert"><p><strong>ERROR ${code}</strong>:
    <span class="message">${e.message}</span></p>
    ${e.detail ? html`<p>DETAIL: ${e.detail}</p>` : ''}
    ${e.hint ? html`<p>HINT: ${e.hint}</p>` : ''}</div>`;
}

function missing(what, needs) {
  return html`<p class="missing" role="note">${what} needs ${needs}, which this database
    does not have (<code>ALTER EXTENSION durable UPDATE</code> brings it).</p>`;
}

// On a Citus coordinator (f.cluster): what durable_citus does not gather from the nodes.
function perNode(what) {
  return html`<p class="missing per-node" role="note">${what} is per node on a Citus cluster:
    point the dashboard at a node to see it (<code>SELECT * FROM durable_citus.nodes()</code>
    lists them).</p>`;
}

function statusBadge(s) {
  return html`<span class="status status-${s}">${s}</span>`;
}

function wfLink(ns, wid, runId, label) {
  return html`<a href="${url('/workflow', { namespace: ns, workflow_id: wid, run_id: runId })}">${label || wid}</a>`;
}

async function featuresOrError(ctx) {
  try {
    return { f: await db.features(ctx.pool) };
  } catch (e) {
    return { err: e };
  }
}

// ---------------------------------------------------------------- routing

async function get(ctx, pathname) {
  const { f, err } = await featuresOrError(ctx);
  if (err) return { status: 503, body: layout(ctx, null, 'Cannot reach the database', errorBox(err)) };
  if (!f.installed) {
    return { status: 503, body: layout(ctx, f, 'durable is not installed', html`<p>The database
      ${f.database} has no extension durable: <code>CREATE EXTENSION durable</code>.</p>`) };
  }
  switch (pathname) {
    case '/': return { redirect: '/workflows' };
    case '/workflows': return workflowsPage(ctx, f);
    case '/workflow': return workflowPage(ctx, f);
    case '/workflow/event': return eventJson(ctx, f);
    case '/task-queues': return taskQueuesPage(ctx, f);
    case '/batches': return batchesPage(ctx, f);
    case '/metrics': return metricsPage(ctx, f);
    default: return { status: 404, body: layout(ctx, f, 'Not found', html`<p>No page ${pathname}.</p>`) };
  }
}

async function post(ctx, pathname) {
  const { f, err } = await featuresOrError(ctx);
  if (err) return { status: 503, body: layout(ctx, null, 'Cannot reach the database', errorBox(err)) };
  if (pathname === '/workflow/action') return action(ctx, f);
  if (pathname === '/task-queue/action') return queueAction(ctx, f);
  return { status: 404, body: layout(ctx, f, 'Not found', html`<p>No action ${pathname}.</p>`) };
}

async function refused(ctx, why) {
  let f = null;
  try { f = await db.features(ctx.pool); } catch (e) { /* shown without */ }
  return { status: 403, body: layout(ctx, f, 'Refused', html`<div class="error" role="alert">
    <p><strong>Refused</strong>: ${why}.</p></div>`) };
}

// ---------------------------------------------------------------- workflows

// The filters of the workflows page from its query string; times given in the
// browser's zone come with its offset (tz, minutes west of UTC, set by app.js).
function filtersFromQuery(q) {
  const s = (k) => { const v = (q.get(k) || '').trim(); return v === '' ? null : v; };
  const tz = Number(q.get('tz') || 0);
  const t = (k) => {
    const v = s(k);
    if (!v) return null;
    if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(v)) {
      // datetime-local: the browser's wall time; tz is its offset (minutes west of UTC)
      const d = new Date(`${v}Z`);
      if (Number.isNaN(d.getTime())) return v;
      return new Date(d.getTime() + (Number.isFinite(tz) ? tz : 0) * 60000).toISOString();
    }
    return v;
  };
  return {
    namespace: s('namespace') || 'default',
    status: s('status'), type: s('type'), queue: s('queue'), prefix: s('prefix'),
    startedSince: t('started_since'), startedBefore: t('started_before'),
    closedSince: t('closed_since'), closedBefore: t('closed_before'),
    searchAttributes: s('search_attributes'), memo: s('memo'),
  };
}

async function workflowsPage(ctx, f) {
  const q = ctx.url.searchParams;
  const flt = filtersFromQuery(q);
  const after = q.get('after');
  const keep = {};
  for (const k of ['namespace', 'type', 'queue', 'prefix', 'started_since', 'started_before',
    'closed_since', 'closed_before', 'tz', 'search_attributes', 'memo']) keep[k] = q.get(k);
  let nsList = null;
  try { nsList = await db.namespaces(ctx.pool, f); } catch (e) { nsList = null; }

  const parts = [];
  const saOk = f.fn.list_workflows.exists || f.columns.has('search_attributes');
  const field = (name, label, value, extra) => html`<label>${label}
      <input name="${name}" value="${value || ''}" ${extra || ''}></label>`;
  const tfield = (name, label) => html`<label>${label}
      <input name="${name}" type="datetime-local" step="1" value="${q.get(name) || ''}"></label>`;
  parts.push(html`<form class="filters" method="get" action="/workflows" role="search">
    ${nsList ? html`<label>Namespace <select name="namespace">${nsList.map((n) => html`<option ${n === flt.namespace ? html`selected` : ''}>${n}</option>`)}</select></label>`
    : field('namespace', 'Namespace', flt.namespace)}
    <label>Status <select name="status"><option value="">any</option>
      ${db.STATUSES.map((s) => html`<option ${s === flt.status ? html`selected` : ''}>${s}</option>`)}</select></label>
    ${field('type', 'Workflow type', flt.type)}
    ${field('queue', 'Task queue', flt.queue)}
    ${field('prefix', 'Workflow id prefix', flt.prefix)}
    ${tfield('started_since', 'Started since')}
    ${tfield('started_before', 'Started before')}
    ${tfield('closed_since', 'Closed since')}
    ${tfield('closed_before', 'Closed before')}
    ${saOk ? field('search_attributes', 'Search attributes (JSON)', flt.searchAttributes, html`placeholder='{"CustomerId": "c-42"}'`)
    : html`<p class="missing">Search attributes: need durable 0.4.0's list_workflows.</p>`}
    ${field('memo', 'Memo (JSON)', flt.memo, html`placeholder='{"team": "billing"}'`)}
    <input type="hidden" name="tz" value="${q.get('tz') || ''}">
    <div class="buttons"><button type="submit">Filter</button>
      <a href="/workflows">Clear</a></div>
  </form>`);

  if (f.cluster) {
    // the nodes asked, so that a missing one shows
    try {
      const nodes = await db.nodes(ctx.pool);
      parts.push(html`<p class="muted cluster-nodes">The workflows of every node of the Citus
        cluster: ${nodes.map((n, i) => html`${i ? ', ' : ''}<span class="node">${n.node_name}:${n.node_port}</span>`)}.</p>`);
    } catch (e) { parts.push(errorBox(e)); }
  }
  if (f.cluster ? !f.fn.list_workflows.may : !f.rel.workflows.may && !f.fn.list_workflows.may) {
    parts.push(html`<p class="missing">The role ${f.role} may not read workflows
      (it needs <code>durable_client</code>).</p>`);
    return { body: layout(ctx, f, 'Workflows', parts, { nav: '/workflows' }) };
  }
  try {
    const counts = await db.countByStatus(ctx.pool, f, flt);
    if (counts) {
      parts.push(html`<nav class="counts" aria-label="Counts by status"><ul>
        <li><a href="${url('/workflows', { ...keep })}" ${!flt.status ? html`aria-current="true"` : ''}>all
          <b>${Object.values(counts).reduce((a, b) => a + b, 0)}</b></a></li>
        ${db.STATUSES.map((s) => html`<li><a class="status-${s}" href="${url('/workflows', { ...keep, status: s })}"
          ${flt.status === s ? html`aria-current="true"` : ''}>${s} <b>${counts[s]}</b></a></li>`)}
      </ul></nav>`);
    }
  } catch (e) {
    parts.push(errorBox(e));
  }
  try {
    const started = process.hrtime.bigint();
    const { rows, next } = await db.listWorkflows(ctx.pool, f, flt, PAGE_SIZE, after);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    // The priority column (durable 0.9.0's durable.workflows), read for the page's runs.
    const withPriority = !f.cluster && f.columns.has('priority') && f.rel.workflows.may;
    let order = new Map();
    if (withPriority) {
      try { order = await db.runOrder(ctx.pool, f, rows.map((r) => r.run_id)); } catch (e) { parts.push(errorBox(e)); }
    }
    const priorityCell = (r) => {
      const o = order.get(r.run_id);
      if (!o) return html`<td class="priority"></td>`;
      return html`<td class="priority">${o.priority}${o.concurrency_key !== null && o.concurrency_key !== undefined ? html`<div class="muted concurrency-key" title="concurrency key">${o.concurrency_key}</div>` : ''}</td>`;
    };
    if (!rows.length) {
      parts.push(html`<p class="empty">No workflow matches.</p>`);
    } else {
      parts.push(html`<div class="table-wrap"><table class="runs">
        <caption class="visually-hidden">Workflow runs, newest start first</caption>
        <thead><tr><th scope="col">Workflow id</th><th scope="col">Status</th><th scope="col">Type</th>
          <th scope="col">Task queue</th>${withPriority ? html`<th scope="col" title="1 is claimed first; the concurrency key below it">Priority</th>` : ''}<th scope="col">Attempt</th><th scope="col">Started</th>
          <th scope="col">Closed</th><th scope="col">Failure</th></tr></thead>
        <tbody>${rows.map((r) => html`<tr>
          <td>${wfLink(r.namespace, r.workflow_id, r.run_id)}<div class="run-id">${r.run_id}</div></td>
          <td>${statusBadge(r.status)}${r.paused_at ? html` <span class="warn paused" title="paused at ${new Date(r.paused_at).toISOString()}">paused</span>` : ''}</td><td>${r.workflow_type}</td><td>${r.task_queue}</td>
          ${withPriority ? priorityCell(r) : ''}<td>${r.attempt}</td><td>${time(r.start_time)}</td><td>${time(r.close_time)}</td>
          <td class="failure">${r.failure ? (r.failure.reason || JSON.stringify(r.failure)) : ''}</td></tr>`)}
        </tbody></table></div>`);
    }
    parts.push(html`<nav class="pager" aria-label="Pages of runs">
      ${after ? html`<a href="${url('/workflows', { ...keep, status: flt.status })}">First page</a>` : ''}
      ${next ? html`<a rel="next" href="${url('/workflows', { ...keep, status: flt.status, after: next })}">Next ${PAGE_SIZE} →</a>` : ''}
      <span class="muted" data-render-ms="${ms.toFixed(1)}">page read in ${ms.toFixed(1)} ms${f.fn.list_workflows.exists ? '' : ' (durable.workflows view: durable 0.4.0\'s list_workflows is faster)'}</span>
    </nav>`);
  } catch (e) {
    parts.push(errorBox(e));
  }
  return { body: layout(ctx, f, 'Workflows', parts, { nav: '/workflows' }) };
}

// ---------------------------------------------------------------- one workflow

const KEY_ATTRIBUTES = ['workflowType', 'taskQueue', 'activityId', 'activityType', 'timerId',
  'signalName', 'reason', 'cause', 'identity', 'attempt', 'initiator', 'workflowId',
  'startToFireTimeoutSeconds', 'newExecutionRunId', 'scheduledEventId', 'markerName',
  'priority', 'concurrencyKey'];

function eventSummary(e) {
  const a = e.attributes || {};
  const bits = [];
  for (const k of KEY_ATTRIBUTES) {
    if (a[k] === undefined || a[k] === null || typeof a[k] === 'object') continue;
    bits.push(html`<span class="attr"><span class="k">${k}</span> ${String(a[k])}</span>`);
  }
  for (const k of ['input', 'result', 'details', 'failure']) {
    if (a[k] === undefined || a[k] === null) continue;
    let s = JSON.stringify(a[k]);
    if (s.length > 120) s = `${s.slice(0, 117)}...`;
    bits.push(html`<span class="attr"><span class="k">${k}</span> <code>${s}</code></span>`);
  }
  return bits;
}

function workflowIdentity(q) {
  return {
    ns: q.get('namespace') || 'default',
    wid: q.get('workflow_id'),
    runId: /^[0-9a-f-]{36}$/i.test(q.get('run_id') || '') ? q.get('run_id') : null,
  };
}

async function workflowPage(ctx, f) {
  const q = ctx.url.searchParams;
  const { ns, wid } = workflowIdentity(q);
  let { runId } = workflowIdentity(q);
  if (!wid) return { status: 400, body: layout(ctx, f, 'Workflow', html`<p>Which workflow? (workflow_id)</p>`) };
  const parts = [];
  const flash = q.get('done');
  if (flash) parts.push(html`<div class="flash" role="status">${flash}</div>`);
  let d;
  try {
    d = await db.describe(ctx.pool, ns, wid, runId);
    runId = d.runId;
  } catch (e) {
    parts.push(errorBox(e));
    return { status: e.code === 'WF002' ? 404 : 200, body: layout(ctx, f, `Workflow ${wid}`, parts) };
  }
  const running = d.status === 'running';
  let start = new Date(d.startTime).getTime();

  // The code versions it recorded, and a divergence from its code (a failed
  // decision task's NonDeterministicWorkflow since its last completed one).
  let versions = [];
  let diverged = null;
  try {
    versions = await db.codeVersions(ctx.pool, ns, wid, runId);
    const f = running ? await db.decisionFailure(ctx.pool, ns, wid, runId) : null;
    if (f && f.attributes && f.attributes.cause === 'NonDeterministicWorkflow') diverged = f;
  } catch (e) { parts.push(errorBox(e)); }

  // Summary
  const kv = (k, v) => html`<dt>${k}</dt><dd>${v}</dd>`;
  const links = [];
  if (d.parent) links.push(kv('Parent', wfLink(d.parent.namespace, d.parent.workflowId, d.parent.runId, `${d.parent.workflowId}`)));
  for (const [k, label] of [['continuedFrom', 'Continued from'], ['continuedTo', 'Continued as'],
    ['resetFrom', 'Reset from'], ['resetTo', 'Reset to'], ['restartedFrom', 'Restarted from'],
    ['restartedTo', 'Restarted as']]) {
    if (d[k]) links.push(kv(label, wfLink(ns, wid, d[k], d[k])));
  }
  parts.push(html`<section aria-labelledby="summary-h" class="live-part" id="summary">
    <h2 id="summary-h">Summary</h2>
    <dl class="summary">
      ${kv('Status', html`${statusBadge(d.status)}${d.cancelRequested ? html` <span class="muted">cancel requested</span>` : ''}`)}
      ${kv('Namespace', d.namespace)}
      ${kv('Workflow id', html`<span class="wid">${d.workflowId}</span>`)}
      ${kv('Run id', d.runId)}
      ${kv('Type', d.workflowType)}
      ${d.function ? kv('Function', html`${d.function}${d.functionPinned ? html` <span class="muted">kept on it (registered with running =&gt; keep)</span>` : ''}`) : ''}
      ${versions.length ? kv('Code versions', versions.map((v, i) => html`${i ? ', ' : ''}<span class="version">${v.details && v.details.changeId}: ${v.details && v.details.version}${v.details && v.details.deprecated ? ' (deprecated)' : ''}</span>`)) : ''}
      ${d.paused ? kv('Paused', html`<span class="warn paused">paused</span> by ${d.paused.by || '?'} at ${time(d.paused.at)}${d.paused.reason ? html`: <span class="pause-reason">${d.paused.reason}</span>` : ''} <span class="muted">(no task of this run is handed out until it is resumed)</span>`) : ''}
      ${kv('Task queue', html`${d.taskQueue}${d.taskQueuePaused === true ? html` <span class="warn paused">queue paused</span>` : ''}${d.taskQueueWithoutPollers === true ? html` <span class="warn">no poller for a minute</span>` : ''}`)}
      ${d.priority !== undefined && d.priority !== null ? kv('Priority', html`<span class="priority">${d.priority}</span> <span class="muted">(1 is claimed first, 3 by default)</span>`) : ''}
      ${d.concurrencyKey !== undefined && d.concurrencyKey !== null ? kv('Concurrency key', html`<span class="concurrency-key">${d.concurrencyKey}</span>`) : ''}
      ${kv('Attempt', d.attempt)}
      ${kv('Started', time(d.startTime))}
      ${kv('Closed', time(d.closeTime))}
      ${kv('History', `${d.historyLength} events`)}
      ${d.cronSchedule ? kv('Cron', d.cronSchedule) : ''}
      ${d.origin ? kv('Origin', html`${d.origin.kind} by ${d.origin.identity || '?'} at ${time(d.origin.time)}: ${d.origin.reason || ''}`) : ''}
      ${links}
    </dl>
    ${diverged ? html`<h3>Diverged from its code</h3><div class="failure-box" id="divergence"><p class="reason">Its code no longer replays its history (NonDeterministicWorkflow, event ${diverged.event_id}); the decision task is retried until code that replays it is deployed.</p>${json(diverged.attributes && diverged.attributes.details)}</div>` : ''}
    ${d.failure ? html`<h3>Failure</h3><div class="failure-box">${d.failure.reason ? html`<p class="reason">${d.failure.reason}</p>` : ''}${json(d.failure)}</div>` : ''}
    ${d.result !== null && d.result !== undefined ? html`<h3>Result</h3>${json(d.result)}` : ''}
    ${d.taskFailure ? html`<h3>Engine failure, retried</h3>${json(d.taskFailure)}` : ''}
    ${d.memo ? html`<h3>Memo</h3>${json(d.memo)}` : ''}
    ${d.searchAttributes ? html`<h3>Search attributes</h3>${json(d.searchAttributes)}` : ''}
  </section>`);

  // Input: from the first event
  let first = [];
  try { first = await db.history(ctx.pool, ns, wid, runId, 1, 1); } catch (e) { parts.push(errorBox(e)); }
  if (first.length) {
    // a reset run's copied events are older than its start: count from event 1
    start = new Date(first[0].event_time).getTime();
    const a = first[0].attributes || {};
    parts.push(html`<section aria-labelledby="input-h"><h2 id="input-h">Input</h2>
      ${a.initiator ? html`<p>Initiator: ${a.initiator}</p>` : ''}${json(a.input === undefined ? null : a.input)}</section>`);
  }

  // Actions
  parts.push(await actionsSection(ctx, f, d, ns, wid, runId));

  // Runs of this workflow id
  try {
    const runs = await db.runsOf(ctx.pool, f, ns, wid);
    parts.push(html`<section aria-labelledby="runs-h"><h2 id="runs-h">Runs of ${wid}</h2>
      <div class="table-wrap"><table><thead><tr><th scope="col">Run</th><th scope="col">How it began</th>
      <th scope="col">Status</th><th scope="col">Attempt</th><th scope="col">Started</th><th scope="col">Closed</th></tr></thead>
      <tbody>${runs.map((r, i) => html`<tr ${r.run_id === runId ? html`class="current" aria-current="true"` : ''}>
        <td>${wfLink(ns, wid, r.run_id, r.run_id)}</td><td>${f.cluster ? html`<span class="muted">see its history</span>` : initiator(r, runs[i + 1])}</td>
        <td>${statusBadge(r.status)}</td><td>${r.attempt}</td><td>${time(r.start_time)}</td><td>${time(r.close_time)}</td></tr>`)}
      </tbody></table></div></section>`);
  } catch (e) {
    parts.push(errorBox(e));
  }

  // Pending activities, attempts, timers, children: the part that updates itself
  const live = [];
  let scheduled = new Map();
  try {
    const evs = await db.scheduledEvents(ctx.pool, ns, wid, runId, (d.pendingActivities || []).map((a) => a.activityId));
    scheduled = new Map(evs.map((e) => [e.attributes.activityId, e.attributes]));
  } catch (e) { live.push(errorBox(e)); }
  const pend = d.pendingActivities || [];
  live.push(html`<section aria-labelledby="pa-h"><h2 id="pa-h">Pending activities (${pend.length})</h2>
    ${pend.length ? html`<div class="table-wrap"><table><thead><tr><th scope="col">Activity</th><th scope="col">State</th>
      <th scope="col">Attempt</th><th scope="col">Last failure</th><th scope="col">Next attempt</th>
      <th scope="col">Heartbeat</th></tr></thead><tbody>
      ${pend.map((a) => {
    const pol = (scheduled.get(a.activityId) || {}).retryPolicy;
    const max = pol && pol.maximumAttempts ? pol.maximumAttempts : null;
    return html`<tr><td>${a.activityId}<div class="muted">${a.activityType}</div></td><td>${a.state}</td>
        <td>${a.attempt}${max ? html` of ${max}` : ''}</td>
        <td>${a.lastFailureReason ? html`<span class="reason">${a.lastFailureReason}</span>` : ''}${a.lastFailureDetails ? json(a.lastFailureDetails) : ''}</td>
        <td>${time(a.nextAttemptScheduledTime)}</td>
        <td>${a.lastHeartbeatTime ? html`${time(a.lastHeartbeatTime)}${json(a.heartbeatDetails)}` : html`<span class="muted">none</span>`}</td></tr>`;
  })}</tbody></table></div>` : html`<p class="muted">None.</p>`}</section>`);
  if (f.cluster) {
    live.push(html`<section aria-labelledby="aa-h"><h2 id="aa-h">Activity attempts</h2>
      ${perNode('durable.activity_attempts')}</section>`);
  } else if (f.rel.activity_attempts.may) {
    try {
      const att = await db.activityAttempts(ctx.pool, runId);
      live.push(html`<section aria-labelledby="aa-h"><h2 id="aa-h">Activity attempts (${att.length})</h2>
        ${att.length ? html`<div class="table-wrap"><table class="attempts"><thead><tr><th scope="col">Activity</th>
          <th scope="col">Attempt</th><th scope="col">Outcome</th><th scope="col">Error</th><th scope="col">Worker</th>
          <th scope="col">Started</th><th scope="col">Ended</th><th scope="col">Next retry</th></tr></thead><tbody>
          ${att.map((a) => html`<tr><td>${a.activity_id}<div class="muted">${a.activity_type}</div></td><td>${a.attempt}</td>
            <td>${a.outcome}</td><td>${a.failure_reason ? html`<span class="reason">${a.failure_reason}</span>` : ''}${a.failure_details ? json(a.failure_details) : ''}</td>
            <td>${a.worker_identity || ''}</td><td>${time(a.started_time)}</td><td>${time(a.end_time)}</td><td>${time(a.next_retry_time)}</td></tr>`)}
        </tbody></table></div>` : html`<p class="muted">None.</p>`}</section>`);
    } catch (e) { live.push(errorBox(e)); }
  }
  const timers = d.pendingTimers || [];
  live.push(html`<section aria-labelledby="pt-h"><h2 id="pt-h">Pending timers (${timers.length})</h2>
    ${timers.length ? html`<ul>${timers.map((t) => html`<li>${t.timerId}: fires ${time(t.fireTime)}</li>`)}</ul>` : html`<p class="muted">None.</p>`}</section>`);
  try {
    // on a coordinator the pending children only (describe_workflow's): a child's run is
    // on the node that owns its id
    const kids = f.cluster ? [] : await db.children(ctx.pool, runId);
    const pendingKids = (d.pendingChildren || []).filter((c) => !kids.some((k) => k.run_id === c.runId));
    live.push(html`<section aria-labelledby="ch-h"><h2 id="ch-h">Children (${kids.length + pendingKids.length})</h2>
      ${kids.length + pendingKids.length ? html`<ul>${kids.map((c) => html`<li>${wfLink(c.namespace, c.workflow_id, c.run_id)}
        ${c.workflow_type} ${statusBadge(c.status)}</li>`)}${pendingKids.map((c) => html`<li>${c.workflowId} ${c.workflowType} <span class="muted">initiated</span></li>`)}</ul>`
    : html`<p class="muted">None.</p>`}</section>`);
  } catch (e) { live.push(errorBox(e)); }
  parts.push(html`<div id="live" ${running ? html`data-running="1"` : ''}>${live}</div>`);

  // History, a page of events
  const total = Number(d.historyLength) || 0;
  let from = Number(q.get('from'));
  if (!Number.isInteger(from) || from < 1) from = 1;
  try {
    const evs = await db.history(ctx.pool, ns, wid, runId, from, EVENTS_PER_PAGE);
    const base = { namespace: ns, workflow_id: wid, run_id: runId };
    const lastFrom = Math.max(1, total - EVENTS_PER_PAGE + 1);
    const pager = html`<nav class="pager" aria-label="Pages of history">
      ${from > 1 ? html`<a href="${url('/workflow', { ...base, from: 1 })}#history-h">First</a>
        <a rel="prev" href="${url('/workflow', { ...base, from: Math.max(1, from - EVENTS_PER_PAGE) })}#history-h">← Previous</a>` : ''}
      <span>events ${evs.length ? `${evs[0].event_id}–${evs[evs.length - 1].event_id}` : 'none'} of ${total}</span>
      ${from + EVENTS_PER_PAGE <= total ? html`<a rel="next" href="${url('/workflow', { ...base, from: from + EVENTS_PER_PAGE })}#history-h">Next →</a>
        <a href="${url('/workflow', { ...base, from: lastFrom })}#history-h">Last</a>` : ''}</nav>`;
    parts.push(html`<section aria-labelledby="history-h"><h2 id="history-h">History</h2>${pager}
      <ol class="timeline" start="${from}">${evs.map((e) => html`<li id="event-${e.event_id}">
        <div class="ev-head"><span class="ev-id">${e.event_id}</span>
          <span class="ev-time" title="${new Date(e.event_time).toISOString()}">${sinceStart(new Date(e.event_time).getTime() - start)}</span>
          <span class="ev-type ev-${e.event_type}">${e.event_type}</span></div>
        <div class="ev-attrs">${eventSummary(e)}</div>
        <details class="ev-json" data-src="${url('/workflow/event', { ...base, event_id: e.event_id })}">
          <summary>Full JSON</summary><a href="${url('/workflow/event', { ...base, event_id: e.event_id })}">open the event's JSON</a></details>
      </li>`)}</ol>${pager}</section>`);
  } catch (e) {
    parts.push(errorBox(e));
  }
  return { body: layout(ctx, f, `Workflow ${wid}`, parts, { live: running }) };
}

function sinceStart(ms) {
  return ms < 0 ? seconds(ms / 1000) : `+${seconds(ms / 1000)}`;
}

// How a run began, from the links of the view (and the run before it in the chain).
function initiator(r, older) {
  if (r.origin && r.origin.kind) return `${r.origin.kind}${r.origin.reason ? `: ${r.origin.reason}` : ''}`;
  if (r.reset_from) return 'reset';
  if (r.restarted_from) return 'restart';
  if (!r.continued_from) return 'started';
  if (older && older.run_id === r.continued_from && r.attempt > older.attempt) return 'retry (RetryPolicy)';
  if (r.cron_schedule) return 'cron';
  return 'ContinueAsNew';
}

async function eventJson(ctx, f) {
  const q = ctx.url.searchParams;
  const { ns, wid, runId } = workflowIdentity(q);
  try {
    const e = await db.event(ctx.pool, ns, wid, runId, Number(q.get('event_id')) || 0);
    if (!e) return { status: 404, type: 'application/json', body: JSON.stringify({ error: 'no such event' }) };
    return { type: 'application/json; charset=utf-8', body: JSON.stringify({ eventId: e.event_id, eventTime: e.event_time, eventType: e.event_type, attributes: e.attributes }, null, 2) };
  } catch (e) {
    return { status: 400, type: 'application/json; charset=utf-8', body: JSON.stringify({ sqlstate: e.code, error: e.message }) };
  }
}

// The actions the role may take on this run: buttons only for the functions it may
// execute (the database refuses the others anyway).
async function actionsSection(ctx, f, d, ns, wid, runId) {
  const running = d.status === 'running';
  const hidden = html`<input type="hidden" name="csrf" value="${ctx.csrf}">
    <input type="hidden" name="namespace" value="${ns}"><input type="hidden" name="workflow_id" value="${wid}">
    <input type="hidden" name="run_id" value="${runId}">`;
  const reason = (id) => html`<label>Reason <input name="reason" id="${id}" required maxlength="1000"></label>`;
  const forms = [];
  const notes = [];
  if (running && f.fn.signal_workflow.may) {
    forms.push(html`<details class="action"><summary>Signal…</summary>
      <form method="post" action="/workflow/action">${hidden}<input type="hidden" name="action" value="signal">
      <label>Signal name <input name="signal_name" required maxlength="1000"></label>
      <label>Input (JSON) <textarea name="input" rows="3" placeholder="null"></textarea></label>
      <button type="submit">Send signal</button></form></details>`);
  }
  if (running && f.fn.cancel_workflow.may) {
    forms.push(html`<details class="action"><summary>Cancel…</summary>
      <form method="post" action="/workflow/action">${hidden}<input type="hidden" name="action" value="cancel">
      ${reason('cancel-reason')}<button type="submit">Request cancellation</button></form></details>`);
  }
  if (running && f.fn.terminate_workflow.may) {
    forms.push(html`<details class="action"><summary>Terminate…</summary>
      <form method="post" action="/workflow/action">${hidden}<input type="hidden" name="action" value="terminate">
      ${reason('terminate-reason')}<button type="submit" class="danger">Terminate now</button></form></details>`);
  }
  // A run's pause (0.8.0): Pause while it is not paused, Resume while it is.
  if (running && !d.paused && f.fn.pause_workflow.may) {
    forms.push(html`<details class="action"><summary>Pause…</summary>
      <form method="post" action="/workflow/action">${hidden}<input type="hidden" name="action" value="pause">
      <label>Reason <input name="reason" id="pause-reason" maxlength="1000"></label>
      <button type="submit">Pause: hand out none of its tasks</button></form></details>`);
  }
  if (running && d.paused && f.fn.resume_workflow.may) {
    forms.push(html`<form method="post" action="/workflow/action" class="action resume">${hidden}<input type="hidden" name="action" value="resume">
      <button type="submit">Resume</button></form>`);
  }
  if (!f.fn.reset_workflow.exists) {
    if (f.fn.terminate_workflow.may) notes.push(missing('Reset', "durable 0.4.0's reset_workflow"));
  } else if (f.fn.reset_workflow.may) {
    let points = [];
    try { points = await db.resetPoints(ctx.pool, ns, wid, runId); } catch (e) { notes.push(errorBox(e)); }
    if (points.length) {
      forms.push(html`<details class="action"><summary>Reset…</summary>
        <form method="post" action="/workflow/action">${hidden}<input type="hidden" name="action" value="reset">
        <label>To the decision task completed at <select name="event_id">
          ${points.map((p) => html`<option value="${p.event_id}">event ${p.event_id} (${new Date(p.event_time).toISOString()})</option>`)}</select></label>
        ${reason('reset-reason')}<button type="submit">Reset</button></form></details>`);
    }
  }
  if (!f.fn.restart_workflow.exists) {
    if (f.fn.terminate_workflow.may) notes.push(missing('Restart', "durable 0.4.0's restart_workflow"));
  } else if (f.fn.restart_workflow.may && !running) {
    forms.push(html`<details class="action"><summary>Restart…</summary>
      <form method="post" action="/workflow/action">${hidden}<input type="hidden" name="action" value="restart">
      <label>Input (JSON; empty: the same input) <textarea name="input" rows="3"></textarea></label>
      ${reason('restart-reason')}<button type="submit">Restart</button></form></details>`);
  }
  if (!forms.length && !notes.length) return '';
  return html`<section aria-labelledby="actions-h" class="actions"><h2 id="actions-h">Actions</h2>
    <div class="action-list">${forms}</div>${notes}</section>`;
}

async function action(ctx, f) {
  const form = ctx.form;
  const ns = form.get('namespace') || 'default';
  const wid = form.get('workflow_id') || '';
  const runId = form.get('run_id') || null;
  const reason = form.get('reason');
  const jsonOrNull = (s) => (s && s.trim() !== '' ? s : null);
  const act = form.get('action');
  let target, msg;
  try {
    switch (act) {
      case 'signal':
        target = await db.signal(ctx.pool, ns, wid, runId, form.get('signal_name'), jsonOrNull(form.get('input')));
        msg = `Signal ${form.get('signal_name')} sent.`;
        break;
      case 'cancel':
        target = await db.cancel(ctx.pool, ns, wid, runId, reason);
        msg = 'Cancellation requested.';
        break;
      case 'terminate':
        target = await db.terminate(ctx.pool, ns, wid, runId, reason);
        msg = 'Terminated.';
        break;
      case 'pause':
        if (!f.fn.pause_workflow.exists) throw db.notAvailable('pause', "durable 0.8.0's pause_workflow");
        msg = (await db.pauseWorkflow(ctx.pool, ns, wid, runId, reason || null))
          ? 'Paused: none of its tasks is handed out until it is resumed.' : 'It was paused already.';
        target = runId;
        break;
      case 'resume':
        if (!f.fn.resume_workflow.exists) throw db.notAvailable('resume', "durable 0.8.0's resume_workflow");
        msg = (await db.resumeWorkflow(ctx.pool, ns, wid, runId)) ? 'Resumed.' : 'It was not paused.';
        target = runId;
        break;
      case 'reset':
        if (!f.fn.reset_workflow.exists) throw db.notAvailable('reset', "durable 0.4.0's reset_workflow");
        target = await db.reset(ctx.pool, ns, wid, runId, reason, form.get('event_id'));
        msg = `Reset: this is the new run, from run ${runId}.`;
        break;
      case 'restart':
        if (!f.fn.restart_workflow.exists) throw db.notAvailable('restart', "durable 0.4.0's restart_workflow");
        target = await db.restart(ctx.pool, ns, wid, runId, reason, jsonOrNull(form.get('input')));
        msg = `Restarted: this is the new run, from run ${runId}.`;
        break;
      default:
        throw db.badArgument('action', `unknown action ${act}`);
    }
  } catch (e) {
    const back = url('/workflow', { namespace: ns, workflow_id: wid, run_id: runId });
    return { status: e.code === '42501' ? 403 : 400, body: layout(ctx, f, `Could not ${act}`, html`${errorBox(e)}
      <p><a href="${back}">Back to the workflow</a></p>`) };
  }
  return { redirect: url('/workflow', { namespace: ns, workflow_id: wid, run_id: target, done: msg }) };
}

// ---------------------------------------------------------------- task queues

// A queue's limits (docs/task-queues.md "Limits"): "2 / 5 started, 100/s (burst 20)".
function limitsText(r) {
  const parts = [];
  if (r.max_concurrent !== null && r.max_concurrent !== undefined) {
    parts.push(`${r.started_tasks ?? 0} / ${r.max_concurrent} started`);
  }
  if (r.rate_limit !== null && r.rate_limit !== undefined) {
    parts.push(`${r.rate_limit}/s (burst ${r.rate_burst})`);
  }
  return parts.join(', ');
}

// The concurrency keys of the queues (docs/task-queues.md "Priorities and fairness"):
// their ready and started tasks, the best priority ready, their limits and weight.
async function keysSection(ctx, f) {
  const head = html`<h2 id="keys-h">Concurrency keys</h2>`;
  if (!f.rel.task_queue_keys.exists) {
    return html`<section aria-labelledby="keys-h" class="queue-keys">${head}
      ${missing('The concurrency keys of the queues', "durable 0.9.0's durable.task_queue_keys")}</section>`;
  }
  if (!f.rel.task_queue_keys.may) {
    return html`<section aria-labelledby="keys-h" class="queue-keys">${head}
      <p class="missing">The role ${f.role} may not read durable.task_queue_keys.</p></section>`;
  }
  let rows;
  try { rows = await db.taskQueueKeys(ctx.pool); } catch (e) {
    return html`<section aria-labelledby="keys-h" class="queue-keys">${head}${errorBox(e)}</section>`;
  }
  return html`<section aria-labelledby="keys-h" class="queue-keys">${head}
    <p class="muted">Within a priority, a queue's claims go round its keys, each taking as many
      tasks in a row as its weight; a key's limits hold back its own tasks only.</p>
    ${rows.length ? html`<div class="table-wrap"><table class="keys"><thead><tr>
      <th scope="col">Namespace</th><th scope="col">Task queue</th><th scope="col">Kind</th>
      <th scope="col">Concurrency key</th><th scope="col" class="num">Ready</th>
      <th scope="col" class="num" title="the best priority among its ready tasks (1 is claimed first)">Top priority</th>
      <th scope="col" class="num" title="counted under a concurrency limit">Started</th>
      <th scope="col">Limits</th><th scope="col" class="num">Weight</th></tr></thead><tbody>
      ${rows.map((r) => html`<tr><td>${r.namespace}</td><td>${r.task_queue}</td><td>${r.kind}</td>
        <td class="concurrency-key">${r.concurrency_key}</td><td class="num">${r.ready_tasks}</td>
        <td class="num">${r.top_priority ?? ''}</td><td class="num">${r.started_tasks}</td>
        <td class="limits">${limitsText(r)}</td><td class="num">${r.weight}</td></tr>`)}</tbody></table></div>`
    : html`<p class="empty">No queue has tasks under a concurrency key, or limits of a key.</p>`}</section>`;
}

// Pause and resume of a queue (0.7.0), in the first row of the queue (its decision and
// activity rows share the pause): only for the functions the role may execute.
function queuePauseForm(ctx, f, r) {
  const hidden = html`<input type="hidden" name="csrf" value="${ctx.csrf}">
    <input type="hidden" name="namespace" value="${r.namespace}"><input type="hidden" name="task_queue" value="${r.task_queue}">`;
  if (r.paused_at && f.fn.resume_task_queue.may) {
    return html`<form method="post" action="/task-queue/action" class="queue-action" data-queue="${r.namespace}/${r.task_queue}">${hidden}
      <input type="hidden" name="action" value="resume"><button type="submit">Resume</button></form>`;
  }
  if (!r.paused_at && f.fn.pause_task_queue.may) {
    return html`<details class="action queue-action" data-queue="${r.namespace}/${r.task_queue}"><summary>Pause…</summary>
      <form method="post" action="/task-queue/action">${hidden}<input type="hidden" name="action" value="pause">
      <label>Reason <input name="reason" maxlength="1000"></label>
      <button type="submit">Pause the queue</button></form></details>`;
  }
  return '';
}

async function queueAction(ctx, f) {
  const form = ctx.form;
  const ns = form.get('namespace') || 'default';
  const queue = form.get('task_queue') || '';
  const reason = form.get('reason');
  const act = form.get('action');
  let msg;
  try {
    switch (act) {
      case 'pause':
        if (!f.fn.pause_task_queue.exists) throw db.notAvailable('pausing a queue', "durable 0.7.0's pause_task_queue");
        msg = (await db.pauseQueue(ctx.pool, ns, queue, reason || null))
          ? `Task queue ${queue} paused: none of its tasks is handed out until it is resumed.`
          : `Task queue ${queue} was paused already.`;
        break;
      case 'resume':
        if (!f.fn.resume_task_queue.exists) throw db.notAvailable('resuming a queue', "durable 0.7.0's resume_task_queue");
        msg = (await db.resumeQueue(ctx.pool, ns, queue))
          ? `Task queue ${queue} resumed.` : `Task queue ${queue} was not paused.`;
        break;
      default:
        throw db.badArgument('action', `unknown action ${act}`);
    }
  } catch (e) {
    return { status: e.code === '42501' ? 403 : 400, body: layout(ctx, f, `Could not ${act} the task queue`, html`${errorBox(e)}
      <p><a href="/task-queues">Back to the task queues</a></p>`) };
  }
  return { redirect: url('/task-queues', { done: msg }) };
}

async function taskQueuesPage(ctx, f) {
  const parts = [];
  const flash = ctx.url.searchParams.get('done');
  if (flash) parts.push(html`<div class="flash" role="status">${flash}</div>`);
  if (f.cluster) {
    try {
      const rows = await db.taskQueues(ctx.pool, f);
      parts.push(rows.length ? html`<div class="table-wrap"><table class="cluster-queues"><thead><tr>
        <th scope="col">Node</th><th scope="col">Namespace</th><th scope="col">Task queue</th><th scope="col">Kind</th>
        <th scope="col">Ready</th><th scope="col">Oldest ready</th><th scope="col">Waiting on a timer</th>
        <th scope="col">Pollers (last poll)</th><th scope="col">Started</th><th scope="col">Paused</th></tr></thead><tbody>
        ${rows.map((r, i) => html`<tr${r.paused_at ? html` class="paused-queue"` : ''}><td>${r.node_name}:${r.node_port}</td><td>${r.namespace}</td><td>${r.task_queue}</td><td>${r.kind}</td>
          <td>${r.ready_tasks}${Number(r.held_tasks) > 0 ? html` <span class="muted held">(${r.held_tasks} held: paused workflows)</span>` : ''}</td><td>${r.oldest_ready_age !== null ? html`${seconds(r.oldest_ready_age)} <span class="muted">(${time(r.oldest_ready_time)})</span>` : ''}</td>
          <td>${r.waiting_on_timer}</td>
          <td>${(r.pollers || []).length ? html`<ul class="pollers">${r.pollers.map((p) => html`<li>${p.identity} ${time(p.lastPollTime)}</li>`)}</ul>` : html`<span class="warn">none</span>`}</td>
          <td>${r.started_tasks}</td>
          <td>${r.paused_at ? html`<span class="warn paused">paused</span> at ${time(r.paused_at)}` : ''}
            ${i === 0 || rows[i - 1].namespace !== r.namespace || rows[i - 1].task_queue !== r.task_queue ? queuePauseForm(ctx, f, r) : ''}</td></tr>`)}</tbody></table></div>
        <p class="muted">A queue's pause and resume are made on every node (durable_citus.pause_task_queue).</p>`
        : html`<p class="empty">No queue has tasks or pollers on any node.</p>`);
    } catch (e) { parts.push(errorBox(e)); }
    parts.push(html`<h2>Concurrency keys, stuck tasks</h2>
      ${perNode('durable.task_queue_keys and durable.stuck_tasks: each')}`);
    return { body: layout(ctx, f, 'Task queues', parts, { nav: '/task-queues' }) };
  }
  if (!f.rel.task_queues.exists) {
    parts.push(missing('The task queue view (backlog, pollers, executor types)', "durable 0.4.0's durable.task_queues"));
  } else if (!f.rel.task_queues.may) {
    parts.push(html`<p class="missing">The role ${f.role} may not read durable.task_queues.</p>`);
  } else {
    try {
      const rows = await db.taskQueues(ctx.pool);
      parts.push(rows.length ? html`<div class="table-wrap"><table><thead><tr>
        <th scope="col">Namespace</th><th scope="col">Task queue</th><th scope="col">Kind</th>
        <th scope="col">Ready</th><th scope="col">Oldest ready</th><th scope="col">Waiting on a timer</th>
        <th scope="col">Pollers (last poll)</th><th scope="col">Executor types</th><th scope="col">Limits</th><th scope="col">Paused</th></tr></thead><tbody>
        ${rows.map((r, i) => html`<tr${r.paused_at ? html` class="paused-queue"` : ''}><td>${r.namespace}</td><td>${r.task_queue}</td><td>${r.kind}</td>
          <td>${r.ready_tasks}${Number(r.held_tasks) > 0 ? html` <span class="muted held">(${r.held_tasks} held: paused workflows)</span>` : ''}</td><td>${r.oldest_ready_age !== null ? html`${seconds(r.oldest_ready_age)} <span class="muted">(${time(r.oldest_ready_time)})</span>` : ''}</td>
          <td>${r.waiting_on_timer}</td>
          <td>${(r.pollers || []).length ? html`<ul class="pollers">${r.pollers.map((p) => html`<li>${p.identity} ${time(p.lastPollTime)}</li>`)}</ul>` : html`<span class="warn">none</span>`}</td>
          <td>${(r.executor_types || []).join(', ')}</td>
          <td class="limits">${limitsText(r)}</td>
          <td>${r.paused_at ? html`<span class="warn paused">paused</span> by ${r.paused_by || '?'} at ${time(r.paused_at)}${r.pause_reason ? html`: <span class="pause-reason">${r.pause_reason}</span>` : ''}` : ''}
            ${i === 0 || rows[i - 1].namespace !== r.namespace || rows[i - 1].task_queue !== r.task_queue ? queuePauseForm(ctx, f, r) : ''}</td></tr>`)}</tbody></table></div>`
        : html`<p class="empty">No queue has tasks, pollers or executor types.</p>`);
    } catch (e) { parts.push(errorBox(e)); }
  }
  if (f.rel.task_queues.exists) parts.push(await keysSection(ctx, f));
  if (f.rel.stuck_tasks.may) {
    try {
      const rows = await db.stuckTasks(ctx.pool);
      parts.push(html`<h2>Stuck tasks (${rows.length})</h2>
        <p class="muted">SQL workflow and activity tasks that failed in the engine and are being retried.</p>
        ${rows.length ? html`<div class="table-wrap"><table><thead><tr><th scope="col">Workflow</th><th scope="col">Task</th>
          <th scope="col">Queue</th><th scope="col">Failures</th><th scope="col">Last error</th><th scope="col">Next attempt</th></tr></thead><tbody>
          ${rows.map((r) => html`<tr><td>${wfLink(r.namespace, r.workflow_id, r.run_id)}</td>
            <td>${r.task_type}${r.activity_type ? ` ${r.activity_type}` : ''}</td><td>${r.task_queue}</td>
            <td>${r.failures}</td><td>${r.last_error}</td><td>${time(r.next_attempt_time)}</td></tr>`)}</tbody></table></div>` : ''}`);
    } catch (e) { parts.push(errorBox(e)); }
  }
  return { body: layout(ctx, f, 'Task queues', parts, { nav: '/task-queues' }) };
}

// ---------------------------------------------------------------- batch operations

// The jobs of durable.start_batch (docs/operations.md "Batch operations") and their
// errors, as the role sees them (its namespaces).  Read-only: a batch is started and
// canceled in SQL.
async function batchesPage(ctx, f) {
  const parts = [];
  if (f.cluster && !f.clusterBatches.exists) {
    parts.push(perNode('durable.batches'));
    return { body: layout(ctx, f, 'Batches', parts, { nav: '/batches' }) };
  }
  if (f.cluster && !f.clusterBatches.may) {
    parts.push(html`<p class="missing">The role ${f.role} may not call durable_citus.batches().</p>`);
    return { body: layout(ctx, f, 'Batches', parts, { nav: '/batches' }) };
  }
  if (!f.cluster && !f.rel.batches.exists) {
    parts.push(missing('Batch operations', "durable 0.8.0's durable.batches"));
    return { body: layout(ctx, f, 'Batches', parts, { nav: '/batches' }) };
  }
  if (!f.cluster && !f.rel.batches.may) {
    parts.push(html`<p class="missing">The role ${f.role} may not read durable.batches.</p>`);
    return { body: layout(ctx, f, 'Batches', parts, { nav: '/batches' }) };
  }
  try {
    const rows = await db.batches(ctx.pool, f);
    parts.push(rows.length ? html`<div class="table-wrap"><table class="batches"><thead><tr>
      ${f.cluster ? html`<th scope="col">Node</th>` : ''}<th scope="col">Started</th><th scope="col">Namespace</th><th scope="col">Operation</th>
      <th scope="col">Filters</th><th scope="col">Reason</th><th scope="col">State</th>
      <th scope="col" class="num">Done / total</th><th scope="col" class="num">Touched</th>
      <th scope="col" class="num">Skipped</th><th scope="col" class="num">Failed</th>
      <th scope="col">By</th><th scope="col">Id</th></tr></thead><tbody>
      ${rows.map((r) => html`<tr>${f.cluster ? html`<td>${r.node_name}:${r.node_port}</td>` : ''}<td>${time(r.start_time)}</td><td>${r.namespace}</td>
        <td>${r.operation}${r.signal_name ? ` ${r.signal_name}` : ''}${r.reset_to ? ` to ${r.reset_to}` : ''}</td>
        <td><code>${JSON.stringify(r.filters)}</code></td><td>${r.reason}</td>
        <td>${statusBadge(r.state)}${r.close_time ? html` <span class="muted">${time(r.close_time)}</span>` : ''}</td>
        <td class="num"><progress max="${Math.max(Number(r.total), 1)}" value="${Math.min(Number(r.done), Math.max(Number(r.total), 1))}"></progress>
          ${r.done} / ${r.total}</td>
        <td class="num">${r.touched}</td><td class="num">${r.skipped}</td><td class="num">${r.failed}</td>
        <td>${r.started_by}${r.canceled_by ? html` <span class="muted">(canceled by ${r.canceled_by})</span>` : ''}</td>
        <td><code>${r.batch_id}</code></td></tr>`)}</tbody></table></div>`
      : html`<p class="empty">No batch operation.</p>`);
  } catch (e) { parts.push(errorBox(e)); }
  if (f.cluster) {
    parts.push(html`<h2>Errors</h2>${perNode('durable.batch_errors')}`);
  } else if (f.rel.batch_errors.may) {
    try {
      const rows = await db.batchErrors(ctx.pool);
      parts.push(html`<h2>Errors (${rows.length})</h2>
        <p class="muted">The first 1000 runs of each batch that failed are kept.</p>
        ${rows.length ? html`<div class="table-wrap"><table class="batch-errors"><thead><tr><th scope="col">Batch</th>
          <th scope="col">Workflow</th><th scope="col">SQLSTATE</th><th scope="col">Message</th><th scope="col">At</th></tr></thead><tbody>
          ${rows.map((r) => html`<tr><td><code>${r.batch_id}</code></td><td>${wfLink(r.namespace, r.workflow_id, r.run_id)}</td>
            <td>${r.sqlstate}</td><td>${r.message}</td><td>${time(r.error_time)}</td></tr>`)}</tbody></table></div>` : ''}`);
    } catch (e) { parts.push(errorBox(e)); }
  }
  return { body: layout(ctx, f, 'Batches', parts, { nav: '/batches', live: true }) };
}

// ---------------------------------------------------------------- metrics

async function metricsPage(ctx, f) {
  const parts = [];
  if (f.cluster) {
    parts.push(perNode('durable.metrics'));
    return { body: layout(ctx, f, 'Metrics', parts, { nav: '/metrics' }) };
  }
  if (!f.rel.metrics.exists) {
    parts.push(missing('Metrics', "durable 0.4.0's durable.metrics view"));
    return { body: layout(ctx, f, 'Metrics', parts, { nav: '/metrics' }) };
  }
  if (!f.rel.metrics.may) {
    parts.push(html`<p class="missing">The role ${f.role} may not read durable.metrics.</p>`);
    return { body: layout(ctx, f, 'Metrics', parts, { nav: '/metrics' }) };
  }
  const s = ctx.sampler;
  if (s.lastError) parts.push(errorBox(s.lastError));
  const m = (name, label) => (r) => r.metric === name && (label === undefined || r.label === label);
  parts.push(html`<p class="muted">Sampled every ${ctx.opts.sampleMs / 1000} s since the
    dashboard started; ${s.samples.length} samples, the last ${Math.round(s.keepMs / 60000)} minutes kept.</p>
    <div class="charts">
    ${chart('Workflows', 'per s', [
    { name: 'started', points: s.rate(m('durable_workflows_started_total')) },
    { name: 'completed', points: s.rate(m('durable_workflows_closed_total', 'completed')) },
    { name: 'failed', points: s.rate(m('durable_workflows_closed_total', 'failed')) },
  ])}
    ${chart('Tasks', 'per s', [
    { name: 'decision tasks completed', points: s.rate(m('durable_decision_tasks_total', 'completed')) },
    { name: 'activity tasks completed', points: s.rate(m('durable_activity_tasks_total', 'completed')) },
    { name: 'activity tasks failed', points: s.rate(m('durable_activity_tasks_total', 'failed')) },
    { name: 'retries scheduled', points: s.rate(m('durable_retries_scheduled_total')) },
  ])}
    ${chart('Schedule-to-start latency', 's', [
    { name: 'decision p50', points: s.quantile('durable_decision_schedule_to_start_seconds', 0.5) },
    { name: 'decision p95', points: s.quantile('durable_decision_schedule_to_start_seconds', 0.95) },
    { name: 'activity p50', points: s.quantile('durable_activity_schedule_to_start_seconds', 0.5) },
    { name: 'activity p95', points: s.quantile('durable_activity_schedule_to_start_seconds', 0.95) },
  ])}
    ${chart('Timer lateness', 's', [
    { name: 'p50', points: s.quantile('durable_timer_lateness_seconds', 0.5) },
    { name: 'p95', points: s.quantile('durable_timer_lateness_seconds', 0.95) },
  ])}
    </div>`);
  try {
    const rows = (await db.metricValues(ctx.pool)).filter((r) => !r.metric.endsWith('_bucket') && r.value > 0);
    parts.push(html`<h2>Counters now</h2><div class="table-wrap"><table><thead><tr><th scope="col">Metric</th>
      <th scope="col">Namespace</th><th scope="col">Task queue</th><th scope="col">Label</th><th scope="col" class="num">Value</th></tr></thead><tbody>
      ${rows.map((r) => html`<tr><td>${r.metric}</td><td>${r.namespace || ''}</td><td>${r.task_queue || ''}</td>
        <td>${r.label || ''}</td><td class="num">${Number.isInteger(r.value) ? r.value : r.value.toFixed(3)}</td></tr>`)}
      </tbody></table></div>`);
  } catch (e) { parts.push(errorBox(e)); }
  return { body: layout(ctx, f, 'Metrics', parts, { nav: '/metrics' }) };
}

module.exports = { get, post, refused, filtersFromQuery, initiator };

#!/usr/bin/env node
'use strict';
// The dashboard in a real browser (the `ui` layer of scripts/test.sh).
//
// Needs a cluster with durable (PGHOST, PGPORT, PGDATABASE; a superuser, and the
// background worker on, so that retry timers fire) and Chromium (CHROMIUM, default
// /usr/bin/chromium).  Starts workflows served by a worker of its own (in this process),
// starts the dashboard on UI_PORT (18490) as an operator role and on UI_PORT+1 as a
// read-only role, and drives headless Chromium through the pages with puppeteer-core.
// Screenshots go to UI_OUT (tmp_check/ui).  Prints TAP.

const assert = require('assert');
const fs = require('fs');
const http = require('http');
const path = require('path');
const { Client } = require('pg');
const puppeteer = require('puppeteer-core');
const { createServer } = require('../server');

const OUT = process.env.UI_OUT || path.join(__dirname, '..', '..', 'tmp_check', 'ui');
const PORT = Number(process.env.UI_PORT || 18490);
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const QUEUE = 'ui';
const XSS_ID = '<img src=x onerror="window.__xss=1">';

let n = 0, failed = 0;
async function step(name, fn) {
  n++;
  try {
    await fn();
    console.log(`ok ${n} - ${name}`);
  } catch (e) {
    failed++;
    console.log(`not ok ${n} - ${name}`);
    console.log(`# ${String(e && e.stack || e).split('\n').join('\n# ')}`);
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(what, fn, ms = 30000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

// ------------------------------------------------------------------ the worker
const worker = { fixed: false, stop: false, held: [] };

function decide(t) {
  const h = t.history;
  const has = (type, pred) => h.some((e) => e.eventType === type && (!pred || pred(e.attributes || {})));
  const started = h[0].attributes || {};
  const input = started.input;
  switch (t.workflowType) {
    case 'greet':
      return [{ decisionType: 'CompleteWorkflowExecution', result: { greeting: `hello ${input && input.name}` } }];
    case 'charge':
      if (has('ActivityTaskCompleted')) return [{ decisionType: 'CompleteWorkflowExecution', result: { charged: true } }];
      if (has('ActivityTaskFailed')) {
        const f = h.filter((e) => e.eventType === 'ActivityTaskFailed').pop().attributes;
        return [{ decisionType: 'FailWorkflowExecution', reason: 'payment failed', details: { activityReason: f.reason } }];
      }
      if (has('ActivityTaskScheduled')) return [];
      return [{ decisionType: 'ScheduleActivityTask', activityId: 'charge', activityType: 'charge_card',
        input, startToCloseTimeoutSeconds: 60,
        retryPolicy: { initialIntervalInSeconds: 1, backoffCoefficient: 1, maximumAttempts: 2 } }];
    case 'sync_inventory':
      if (has('ActivityTaskScheduled')) return [];
      return [{ decisionType: 'ScheduleActivityTask', activityId: 'sync', activityType: 'sync',
        startToCloseTimeoutSeconds: 60,
        retryPolicy: { initialIntervalInSeconds: 3600, backoffCoefficient: 2, maximumAttempts: 5 } }];
    case 'export_report':
      if (has('ActivityTaskScheduled')) return [];
      return [{ decisionType: 'ScheduleActivityTask', activityId: 'export', activityType: 'export',
        startToCloseTimeoutSeconds: 7200, heartbeatTimeoutSeconds: 3600 }];
    case 'parent':
      if (has('ChildWorkflowExecutionCompleted')) return [{ decisionType: 'CompleteWorkflowExecution', result: 'children done' }];
      if (has('StartChildWorkflowExecutionInitiated')) return [];
      return [{ decisionType: 'StartChildWorkflowExecution', workflowId: `${t.workflowId}-child`,
        workflowType: 'greet', input: { name: 'child' } }];
    case 'waiter': {
      const sig = h.filter((e) => e.eventType === 'WorkflowExecutionSignaled' && e.attributes.signalName === 'approve').pop();
      if (sig) return [{ decisionType: 'CompleteWorkflowExecution', result: { approvedBy: sig.attributes.input } }];
      if (has('TimerStarted')) return [];
      return [{ decisionType: 'StartTimer', timerId: 'reminder', startToFireTimeoutSeconds: 3600 }];
    }
    case 'versioned':
      // Records the version of a change of its code, then waits (decisionLoop
      // fails its task as non-deterministic once it is poked).
      if (has('TimerStarted')) return [];
      return [{ decisionType: 'RecordMarker', markerName: 'Version',
        details: { id: 1, changeId: 'gift-wrap', version: 1 } },
      { decisionType: 'StartTimer', timerId: '2', startToFireTimeoutSeconds: 3600 }];
    default:
      return [{ decisionType: 'FailWorkflowExecution', reason: `unknown type ${t.workflowType}` }];
  }
}

async function decisionLoop(c) {
  while (!worker.stop) {
    const { rows } = await c.query(`SELECT durable.poll_decision_task($1, 'ui-test-decider',
        wait => '0.5 seconds') AS t`, [QUEUE]);
    const t = rows[0].t;
    if (!t) continue;
    if (t.workflowType === 'versioned' &&
        t.history.some((e) => e.eventType === 'WorkflowExecutionSignaled')) {
      // New code that no longer replays the run: the first attempt fails as
      // non-deterministic (a DecisionTaskFailed), later ones are left to time out.
      if (t.attempt === 1) {
        await c.query(`SELECT durable.fail_decision_task($1, 'NonDeterministicWorkflow', $2::jsonb)`,
          [t.taskToken, JSON.stringify({ message: 'history has TimerStarted (timerId 2) at event 6, but the code issued ScheduleActivityTask activityId 2 at number 2' })]);
      }
      continue;
    }
    await c.query('SELECT durable.complete_decision_task($1, $2::jsonb)', [t.taskToken, JSON.stringify(decide(t))]);
  }
}

async function activityLoop(c) {
  while (!worker.stop) {
    const { rows } = await c.query(`SELECT durable.poll_activity_task($1, 'ui-test-activities',
        wait => '0.5 seconds') AS t`, [QUEUE]);
    const t = rows[0].t;
    if (!t) continue;
    if (t.activityType === 'charge_card') {
      if (worker.fixed) await c.query(`SELECT durable.complete_activity($1, '{"chargeId": "ch_1"}')`, [t.taskToken]);
      else {
        await c.query(`SELECT durable.fail_activity($1, 'card declined',
            '{"gateway": "<b>bank</b> said no"}')`, [t.taskToken]);
      }
    } else if (t.activityType === 'sync') {
      await c.query(`SELECT durable.fail_activity($1, 'inventory service unavailable')`, [t.taskToken]);
    } else if (t.activityType === 'export') {
      await c.query(`SELECT durable.heartbeat_activity($1, '{"rowsDone": 420}')`, [t.taskToken]);
      worker.held.push(t.taskToken);   // never finishes: a running activity with a heartbeat
    }
  }
}

// ------------------------------------------------------------------ helpers
async function status(c, wid) {
  const { rows } = await c.query(`SELECT status FROM durable.workflows WHERE workflow_id = $1
      ORDER BY start_time DESC LIMIT 1`, [wid]);
  return rows.length ? rows[0].status : null;
}

function request(port, method, pathname, { headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: pathname, headers }, (res) => {
      let data = '';
      res.on('data', (d) => { data += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
    });
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}

async function main() {
  fs.mkdirSync(OUT, { recursive: true });
  console.log('TAP version 13');
  const admin = new Client();
  await admin.connect();
  const dc = new Client(); await dc.connect();
  const ac = new Client(); await ac.connect();
  const loops = [decisionLoop(dc), activityLoop(ac)].map((p) => p.catch((e) => {
    if (!worker.stop) console.log(`# worker: ${e.message}`);
  }));

  const fns = (await admin.query(`SELECT proname FROM pg_proc
      WHERE pronamespace = 'durable'::regnamespace`)).rows.map((r) => r.proname);
  const has = (f) => fns.includes(f);
  console.log(`# durable functions of 0.4.0 here: ${['list_workflows', 'reset_workflow', 'restart_workflow']
    .map((f) => `${f} ${has(f) ? 'yes' : 'no'}`).join(', ')}`);

  await admin.query(`
    DROP ROLE IF EXISTS ui_operator; DROP ROLE IF EXISTS ui_viewer;
    CREATE ROLE ui_operator LOGIN; GRANT durable_client TO ui_operator;
    -- read-only: the views and describe/history, none of the actions
    CREATE ROLE ui_viewer LOGIN;
    GRANT USAGE ON SCHEMA durable TO ui_viewer;
    GRANT SELECT ON durable.workflows, durable.activity_attempts TO ui_viewer;
    GRANT EXECUTE ON FUNCTION durable.describe_workflow(text, text, uuid),
                              durable.get_history(text, text, uuid) TO ui_viewer;`);
  for (const f of ['list_workflows', 'count_workflows_by_status']) {
    if (has(f)) await admin.query(`GRANT EXECUTE ON FUNCTION durable.${f} TO ui_viewer`);
  }

  const start = (type, wid, input) => admin.query(`SELECT durable.start_workflow($1, $2::jsonb,
      workflow_id => $3, task_queue => $4)`, [type, JSON.stringify(input), wid, QUEUE]);
  await start('greet', 'greet-1', { name: 'ada' });
  await start('charge', 'charge-1', { amount: 42 });
  await start('charge', 'charge-2', { amount: 7 });
  await start('sync_inventory', 'sync-1', null);
  await start('export_report', 'export-1', null);
  await start('parent', 'order-7', null);
  await start('waiter', 'approval-1', { order: 7 });
  await start('waiter', 'long-1', null);
  await start('greet', XSS_ID, { name: '<script>window.__xss=2</script>' });
  await start('versioned', 'versioned-1', null);
  // A SQL workflow: its page names the function that runs it.
  await admin.query(`
    DROP ROLE IF EXISTS ui_sql_app; CREATE ROLE ui_sql_app;
    CREATE OR REPLACE FUNCTION public.ui_sqlgreet(input jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT input $$;
    SELECT durable.register_workflow('sqlgreet', 'public.ui_sqlgreet(jsonb)', 'ui_sql', run_as => 'ui_sql_app');
    SELECT durable.start_workflow('sqlgreet', '{"hi": 1}', 'sqlgreet-1', 'ui_sql');`);
  await until('the workflows to settle', async () =>
    (await status(admin, 'charge-1')) === 'failed' && (await status(admin, 'charge-2')) === 'failed' &&
    (await status(admin, 'order-7')) === 'completed' && (await status(admin, 'greet-1')) === 'completed' &&
    (await status(admin, 'sqlgreet-1')) === 'completed' &&
    (await admin.query(`SELECT 1 FROM durable.get_history('versioned-1') WHERE event_type = 'TimerStarted'`)).rows.length > 0 &&
    (await admin.query(`SELECT 1 FROM durable.activity_attempts WHERE workflow_id = 'sync-1'
        AND outcome = 'failed'`)).rows.length > 0 &&
    worker.held.length > 0, 60000);
  await admin.query(`SELECT durable.signal_workflow('long-1', 'ping', pg_catalog.to_jsonb(i))
      FROM generate_series(1, 150) i`);

  const opSrv = createServer({ connection: 'postgresql:///?user=ui_operator', host: '127.0.0.1', port: PORT, sampleMs: 1000 });
  const viewSrv = createServer({ connection: 'postgresql:///?user=ui_viewer', host: '127.0.0.1', port: PORT + 1, sampleMs: 1000 });
  // a page of another site that posts a form to the dashboard
  const evil = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(`<form id="f" method="post" action="http://127.0.0.1:${PORT}/workflow/action">
      <input name="action" value="terminate"><input name="workflow_id" value="export-1">
      <input name="namespace" value="default"><input name="reason" value="forged"></form>
      <script>document.getElementById('f').submit()</script>`);
  });
  await Promise.all([[opSrv.server, PORT], [viewSrv.server, PORT + 1], [evil, PORT + 2]].map(([s, p]) =>
    new Promise((r) => s.listen(p, '127.0.0.1', r))));
  opSrv.sampler.start();

  const profile = path.join(OUT, 'chrome-profile');
  fs.rmSync(profile, { recursive: true, force: true });
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM, headless: true, userDataDir: profile,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--no-first-run'],
  });
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const dialogs = [];
  page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  const base = `http://127.0.0.1:${PORT}`;
  const shot = (name) => page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: true });
  const text = (sel) => page.$eval(sel, (e) => e.textContent);
  const go = async (p) => { const r = await page.goto(base + p, { waitUntil: 'load' }); return r; };
  const submit = (sel) => Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click(sel)]);
  const summaryStatus = () => page.$eval('#summary .status', (e) => e.textContent);

  await step('workflows page lists runs with counts by status', async () => {
    await go('/workflows');
    const body = await text('main');
    assert.match(body, /charge-1/);
    assert.match(body, /greet-1/);
    assert.match(await text('.counts'), /failed\s*2/);
    await shot('workflows');
  });

  await step('filter to failed workflows', async () => {
    await page.select('select[name=status]', 'failed');
    await submit('form.filters button[type=submit]');
    assert.match(page.url(), /status=failed/);
    const statuses = await page.$$eval('table.runs tbody .status', (es) => es.map((e) => e.textContent));
    assert.deepStrictEqual([...new Set(statuses)], ['failed']);
    assert.strictEqual(statuses.length, 2);
    assert.doesNotMatch(await text('table.runs'), /greet-1/);
    await shot('workflows-failed');
  });

  let charge1Url;
  await step('open a failed workflow: its failure and an attempt\'s error', async () => {
    await submit('table.runs a[href*="workflow_id=charge-1"]');
    charge1Url = page.url();
    assert.match(await text('.failure-box'), /payment failed/);
    const attempts = await text('table.attempts');
    assert.match(attempts, /card declined/);
    assert.match(attempts, /<b>bank<\/b> said no/);   // shown as text, not markup
    assert.match(await text('ol.timeline'), /ActivityTaskFailed/);
    await shot('workflow-failed');
  });

  await step('restart a failed workflow and see the new run complete', async () => {
    worker.fixed = true;   // the bug is fixed
    if (!has('restart_workflow')) {
      assert.match(await text('.actions'), /needs durable 0\.4\.0's restart_workflow/);
      console.log('# restart_workflow is not in this database: the page says so');
      return;
    }
    await page.click('details.action:has(input[value=restart]) summary');
    await page.type('details.action:has(input[value=restart]) input[name=reason]', 'card fixed');
    await submit('details.action:has(input[value=restart]) button[type=submit]');
    assert.match(await text('.flash'), /Restarted/);
    assert.notStrictEqual(new URL(page.url()).searchParams.get('run_id'), new URL(charge1Url).searchParams.get('run_id'));
    await page.waitForFunction(() => document.querySelector('#summary .status').textContent === 'completed', { timeout: 30000 });
    await shot('workflow-restarted');
  });

  await step('reset a failed workflow to its first decision and see the new run complete', async () => {
    await go('/workflow?namespace=default&workflow_id=charge-2');
    if (!has('reset_workflow')) {
      assert.match(await text('.actions'), /needs durable 0\.4\.0's reset_workflow/);
      console.log('# reset_workflow is not in this database: the page says so');
      return;
    }
    await page.click('details.action:has(input[value=reset]) summary');
    const first = await page.$$eval('select[name=event_id] option', (os) => os.map((o) => o.value).sort((a, b) => a - b)[0]);
    await page.select('select[name=event_id]', first);
    await page.type('details.action:has(input[value=reset]) input[name=reason]', 'decider fixed');
    await submit('details.action:has(input[value=reset]) button[type=submit]');
    assert.match(await text('.flash'), /Reset/);
    await page.waitForFunction(() => document.querySelector('#summary .status').textContent === 'completed', { timeout: 30000 });
    assert.match(await text('ol.timeline'), /ResetWorkflow/);
    await shot('workflow-reset');
  });

  await step('signal a waiting workflow from the page', async () => {
    await go('/workflow?namespace=default&workflow_id=approval-1');
    assert.strictEqual(await summaryStatus(), 'running');
    assert.match(await text('main'), /reminder/);   // its pending timer
    await page.click('details.action:has(input[value=signal]) summary');
    await page.type('input[name=signal_name]', 'approve');
    await page.type('textarea[name=input]', '{"by": "ops"}');
    await submit('details.action:has(input[value=signal]) button[type=submit]');
    assert.match(await text('.flash'), /Signal approve sent/);
    await page.waitForFunction(() => document.querySelector('#summary .status').textContent === 'completed', { timeout: 30000 });
    assert.match(await text('#summary'), /"by": "ops"/);
    await shot('workflow-signaled');
  });

  await step('code versions and a divergence from the code; the function of a SQL workflow', async () => {
    await go('/workflow?namespace=default&workflow_id=versioned-1');
    assert.match(await text('#summary'), /Code versions\s*gift-wrap: 1/);
    assert.strictEqual(await page.$('#divergence'), null, 'no divergence while its code replays it');
    await admin.query(`SELECT durable.signal_workflow('versioned-1', 'poke')`);
    await until('the non-deterministic failure', async () => (await admin.query(`SELECT 1
        FROM durable.get_history('versioned-1') WHERE event_type = 'DecisionTaskFailed'`)).rows.length > 0);
    await go('/workflow?namespace=default&workflow_id=versioned-1');
    assert.match(await text('#divergence'), /NonDeterministicWorkflow/);
    assert.match(await text('#divergence'), /history has TimerStarted \(timerId 2\) at event 6/);
    await shot('workflow-diverged');
    await go('/workflow?namespace=default&workflow_id=sqlgreet-1');
    assert.match(await text('#summary'), /Function\s*(public\.)?ui_sqlgreet\(jsonb\)/);
  });

  await step('a retrying activity: attempt of maximum, last failure, next attempt', async () => {
    await go('/workflow?namespace=default&workflow_id=sync-1');
    const pa = await text('#pa-h + .table-wrap');
    assert.match(pa, /inventory service unavailable/);
    assert.match(pa, /2 of 5/);
    await shot('workflow-retrying');
  });

  await step('a running activity\'s heartbeat details', async () => {
    await go('/workflow?namespace=default&workflow_id=export-1');
    assert.match(await text('#pa-h + .table-wrap'), /"rowsDone": 420/);
    assert.ok(await page.$('#live[data-running]'), 'a running workflow\'s page updates itself');
  });

  await step('a parent links its child, the child its parent', async () => {
    await go('/workflow?namespace=default&workflow_id=order-7');
    await submit('a[href*="workflow_id=order-7-child"]');
    assert.match(await text('#summary'), /Parent\s*order-7/);
    await shot('workflow-child');
  });

  await step('a long history is paged', async () => {
    await go('/workflow?namespace=default&workflow_id=long-1');
    assert.match(await text('.pager'), /events 1–100 of \d+/);
    assert.strictEqual((await page.$$('ol.timeline > li')).length, 100);
    await submit('nav.pager a[rel=next]');
    assert.match(await text('.pager'), /events 101–/);
    await page.click('#event-101 details summary');
    await page.waitForFunction(() => /"eventId": 101/.test(document.querySelector('#event-101 pre.json')?.textContent || ''));
    await shot('workflow-history-page-2');
  });

  await step('workflow ids and inputs are text, never markup (XSS)', async () => {
    await go(`/workflows?prefix=${encodeURIComponent('<img')}`);
    assert.match(await text('table.runs'), /<img src=x onerror=/);
    await submit('table.runs tbody a');
    assert.match(await text('h1'), /<img src=x/);
    assert.match(await text('main'), /<script>window.__xss=2<\/script>/);
    assert.strictEqual(await page.evaluate(() => window.__xss), undefined);
    assert.deepStrictEqual(dialogs, []);
  });

  await step('a database error is shown with its SQLSTATE', async () => {
    await go('/workflows?memo=%7B');
    assert.match(await text('.error'), /22P02/);
    await go('/workflow?namespace=default&workflow_id=no-such-workflow');
    assert.match(await text('.error'), /WF002/);
  });

  await step('task queues page', async () => {
    await go('/task-queues');
    if (has('task_queue_pollers') || (await admin.query("SELECT to_regclass('durable.task_queues') r")).rows[0].r) {
      assert.match(await text('main'), /ui-test-decider|ui-test-activities/);
    } else {
      assert.match(await text('main'), /needs durable 0\.4\.0's durable\.task_queues/);
    }
    await shot('task-queues');
  });

  await step('batches page', async () => {
    if (!has('start_batch')) {
      console.log('# no batch operations in this version');
      return;
    }
    // A terminate of greet-1, which has completed: the timer worker runs it and skips the run.
    await admin.query(`SELECT durable.start_batch('terminate', 'default',
        workflow_id_prefix => 'greet-1', reason => 'ui batch')`);
    await until('the batch to complete', async () => (await admin.query(
      "SELECT 1 FROM durable.batches WHERE reason = 'ui batch' AND state = 'completed'")).rows.length > 0);
    await go('/batches');
    const t = await text('table.batches');
    assert.match(t, /terminate/);
    assert.match(t, /ui batch/);
    assert.match(t, /completed/);
    assert.match(t, /1 \/ 1/);
    await shot('batches');
    // The read-only role has no grant on durable.batches: no link, and the page says so.
    const vp = await browser.newPage();
    await vp.goto(`http://127.0.0.1:${PORT + 1}/batches`);
    assert.match(await vp.$eval('main', (e) => e.innerText), /may not read durable\.batches/);
    assert.strictEqual(await vp.$('nav a[href="/batches"]'), null);
    await vp.close();
  });

  await step('a paused queue and a paused workflow show as paused, with who, when and why', async () => {
    if (!has('pause_workflow') || !has('pause_task_queue')) {
      console.log('# no pause_workflow here: skipped');
      return;
    }
    await admin.query(`SELECT durable.start_workflow('greet', NULL, 'paused-1', 'ui_hold');
      SELECT durable.pause_workflow('paused-1', reason => 'checking the order');
      SELECT durable.pause_task_queue('ui_hold', reason => 'provider <b>down</b>');`);
    const who = (await admin.query('SELECT current_user AS u')).rows[0].u;
    await go('/task-queues');
    const row = await page.$$eval('tr.paused-queue', (es) => es.map((e) => e.textContent).join('\n'));
    assert.match(row, /ui_hold/);
    assert.match(row, new RegExp(`paused by ${who} at \\S`));
    assert.match(row, /provider <b>down<\/b>/, 'the reason, escaped');
    assert.match(row, /1 held: paused workflows/);
    await shot('task-queues-paused');
    await go('/workflow?namespace=default&workflow_id=paused-1');
    const summary = await text('#summary');
    assert.match(summary, new RegExp(`paused by ${who} at \\S.*: checking the order`));
    assert.match(summary, /queue paused/);
    await shot('workflow-paused');
    await admin.query(`SELECT durable.resume_workflow('paused-1');
      SELECT durable.resume_task_queue('ui_hold');
      SELECT durable.terminate_workflow('paused-1', 'ui test done');`);
    await go('/workflow?namespace=default&workflow_id=paused-1');
    assert.doesNotMatch(await text('#summary'), /paused by/);
  });

  await step('pause and resume a workflow and a task queue from the pages', async () => {
    if (!has('pause_workflow') || !has('pause_task_queue')) {
      console.log('# no pause_workflow here: skipped');
      return;
    }
    // a run whose decision task nobody polls: it stays running
    await admin.query(`SELECT durable.start_workflow('greet', NULL, 'pausable-1', 'ui_pause')`);
    await go('/workflow?namespace=default&workflow_id=pausable-1');
    assert.strictEqual(await page.$('form.resume'), null, 'no Resume while not paused');
    await page.click('details.action:has(input[value=pause]) summary');
    await page.type('#pause-reason', 'checking <i>it</i>');
    await submit('details.action:has(input[value=pause]) button[type=submit]');
    assert.match(await text('.flash'), /Paused/);
    assert.match(await text('#summary'), /paused by ui_operator at \S.*: checking <i>it<\/i>/);
    assert.strictEqual(await page.$('details.action:has(input[value=pause])'), null, 'no Pause while paused');
    const paused = await admin.query(`SELECT paused_by, pause_reason FROM durable.workflows
        WHERE workflow_id = 'pausable-1'`);
    assert.deepStrictEqual(paused.rows[0], { paused_by: 'ui_operator', pause_reason: 'checking <i>it</i>' });
    await shot('workflow-paused-by-page');
    // the list shows it paused, and the runs that are not paused without the mark
    await go('/workflows?prefix=pausable-');
    assert.match(await text('table.runs tbody'), /pausable-1[\s\S]*running\s+paused/);
    await go('/workflows?status=running');
    const marked = await page.$$eval('table.runs tbody tr', (rs) => rs
      .filter((r) => r.querySelector('.paused')).map((r) => r.querySelector('a').textContent));
    assert.deepStrictEqual(marked, ['pausable-1']);
    await shot('workflows-paused');
    await go('/workflow?namespace=default&workflow_id=pausable-1');
    await submit('form.resume button[type=submit]');
    assert.match(await text('.flash'), /Resumed/);
    assert.doesNotMatch(await text('#summary'), /paused by/);
    assert.ok(await page.$('details.action:has(input[value=pause])'), 'Pause again');

    // the queue: Pause… with a reason in its row, then Resume
    await go('/task-queues');
    const q = 'default/ui_pause';
    assert.strictEqual(await page.$(`form.queue-action[data-queue="${q}"]`), null, 'no Resume while not paused');
    await page.click(`details.queue-action[data-queue="${q}"] summary`);
    await page.type(`details.queue-action[data-queue="${q}"] input[name=reason]`, 'provider down');
    await submit(`details.queue-action[data-queue="${q}"] button[type=submit]`);
    assert.match(await text('.flash'), /Task queue ui_pause paused/);
    const row = await page.$$eval('tr.paused-queue', (es) => es.map((e) => e.textContent)
      .filter((t) => t.includes('ui_pause')).join('\n'));
    assert.match(row, /paused by ui_operator at \S.*: provider down/);
    assert.strictEqual((await admin.query(`SELECT count(*)::int AS n FROM durable.task_queues
        WHERE task_queue = 'ui_pause' AND paused_at IS NOT NULL`)).rows[0].n > 0, true);
    await shot('task-queues-paused-by-page');
    await submit(`form.queue-action[data-queue="${q}"] button[type=submit]`);
    assert.match(await text('.flash'), /Task queue ui_pause resumed/);
    assert.strictEqual(await page.$$eval('tr.paused-queue', (es) => es
      .filter((e) => e.textContent.includes('ui_pause')).length), 0);
    assert.ok(await page.$(`details.queue-action[data-queue="${q}"]`), 'Pause again');
    await admin.query(`SELECT durable.terminate_workflow('pausable-1', 'ui test done')`);

    // a role that may not: no buttons on the task queues page either
    const vp = await browser.newPage();
    await vp.goto(`http://127.0.0.1:${PORT + 1}/task-queues`);
    assert.strictEqual((await vp.$$('form[action="/task-queue/action"]')).length, 0);
    await vp.close();
  });

  await step('a queue with limits shows them', async () => {
    if (!has('set_task_queue_limits')) {
      console.log('# no set_task_queue_limits here: skipped');
      return;
    }
    await admin.query(`SELECT durable.set_task_queue_limits('ui_limited', 'activity',
        max_concurrent => 3, rate => 5, burst => 5)`);
    await go('/task-queues');
    const row = await page.$$eval('tr', (es) => es.map((e) => e.textContent)
      .filter((t) => t.includes('ui_limited')).join('\n'));
    assert.match(row, /activity/);
    assert.match(row, /0 \/ 3 started, 5\/s \(burst 5\)/);
    await admin.query(`SELECT durable.set_task_queue_limits('ui_limited', 'activity')`);
  });

  await step('priorities and concurrency keys: the workflow page, the list, the keys of the queues', async () => {
    if (!has('set_task_key_limits')) {
      await go('/task-queues');
      assert.match(await text('.queue-keys'), /needs durable 0\.9\.0's durable\.task_queue_keys/);
      console.log('# no priorities here: the page says so');
      return;
    }
    // A run on the worker's queue (it waits on its timer), and one on a queue no one polls.
    await admin.query(`SELECT durable.start_workflow('waiter', NULL, 'prio-1', $1,
        priority => 1, concurrency_key => 'vip <b>1</b>')`, [QUEUE]);
    await admin.query(`SELECT durable.start_workflow('greet', NULL, 'prio-2', 'ui_keyed',
        priority => 2, concurrency_key => 'tenant-b');
      SELECT durable.set_task_key_limits('ui_keyed', 'activity', 'tenant-a', max_concurrent => 2, weight => 5);`);
    await until('prio-1 waits on its timer', async () => (await admin.query(`SELECT 1
        FROM durable.get_history('prio-1') WHERE event_type = 'TimerStarted'`)).rows.length > 0);
    await go('/workflow?namespace=default&workflow_id=prio-1');
    const summary = await text('#summary');
    assert.match(summary, /Priority\s*1/);
    assert.match(summary, /Concurrency key\s*vip <b>1<\/b>/, 'the key, escaped');
    assert.match(await text('#event-1'), /priority\s*1\s*concurrencyKey\s*vip <b>1<\/b>/, 'in its started event');
    await shot('workflow-priority');
    await go('/workflow?namespace=default&workflow_id=approval-1');
    assert.doesNotMatch(await text('#summary'), /Priority|Concurrency key/, 'nothing for priority 3 without a key');

    await go('/workflows?prefix=prio-');
    const heads = await page.$$eval('table.runs thead th', (es) => es.map((e) => e.textContent));
    assert.ok(heads.includes('Priority'), `columns: ${heads}`);
    const cells = await page.$$eval('table.runs tbody tr', (es) => es.map((e) =>
      `${e.querySelector('td a').textContent} ${e.querySelector('td.priority').textContent}`));
    assert.deepStrictEqual(cells.sort(), ['prio-1 1vip <b>1</b>', 'prio-2 2tenant-b']);
    await go('/workflows?prefix=greet-1');
    assert.strictEqual(await page.$eval('table.runs tbody td.priority', (e) => e.textContent), '3');

    await go('/task-queues');
    const keys = await page.$$eval('table.keys tbody tr', (es) => es.map((e) =>
      [...e.querySelectorAll('td')].map((c) => c.textContent.trim()).join('|')));
    assert.ok(keys.includes('default|ui_keyed|activity|tenant-a|0||0|0 / 2 started|5'), keys.join('\n'));
    assert.ok(keys.includes('default|ui_keyed|decision|tenant-b|1|2|0||1'), keys.join('\n'));
    await shot('task-queues-keys');
    await admin.query(`SELECT durable.terminate_workflow('prio-1', 'ui test done');
      SELECT durable.terminate_workflow('prio-2', 'ui test done');
      SELECT durable.set_task_key_limits('ui_keyed', 'activity', 'tenant-a');`);
  });

  await step('metrics page', async () => {
    const hasMetrics = (await admin.query("SELECT to_regclass('durable.metrics') r")).rows[0].r;
    if (hasMetrics) {
      await until('three samples', () => opSrv.sampler.samples.length >= 3, 20000);
      await start('greet', 'greet-2', { name: 'bob' });
      await until('greet-2', async () => (await status(admin, 'greet-2')) === 'completed');
      await sleep(2500);
      await go('/metrics');
      assert.ok(await page.$('figure.chart svg polyline, figure.chart svg circle'), 'a chart is drawn');
      assert.match(await text('main'), /durable_workflows_closed_total/);
    } else {
      await go('/metrics');
      assert.match(await text('main'), /needs durable 0\.4\.0's durable\.metrics/);
    }
    await shot('metrics');
  });

  await step('phone width', async () => {
    await page.setViewport({ width: 390, height: 844, isMobile: true });
    await go('/workflows');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `the page is ${overflow}px wider than the phone`);
    await shot('workflows-phone');
    await go('/workflow?namespace=default&workflow_id=sync-1');
    await shot('workflow-phone');
    await page.setViewport({ width: 1280, height: 900 });
  });

  await step('keyboard: the skip link and the filter form are reachable by Tab', async () => {
    await go('/workflows');
    await page.keyboard.press('Tab');
    assert.strictEqual(await page.evaluate(() => document.activeElement.className), 'skip');
    await page.keyboard.press('Enter');
    for (let i = 0; i < 20 && !(await page.evaluate(() => document.activeElement.name === 'status')); i++) await page.keyboard.press('Tab');
    assert.strictEqual(await page.evaluate(() => document.activeElement.name), 'status');
  });

  await step('a read-only role gets no action buttons', async () => {
    const vp = await browser.newPage();
    await vp.goto(`http://127.0.0.1:${PORT + 1}/workflow?namespace=default&workflow_id=export-1`);
    assert.match(await vp.$eval('#summary', (e) => e.textContent), /running/);
    assert.strictEqual((await vp.$$('form[action="/workflow/action"]')).length, 0);
    assert.strictEqual(await vp.$('#actions-h'), null);
    await vp.screenshot({ path: path.join(OUT, 'workflow-read-only.png'), fullPage: true });
    // its own page's token, the same origin: the database refuses
    const token = await vp.$eval('meta[name=csrf-token]', (m) => m.content);
    const status = await vp.evaluate(async (tok) => {
      const r = await fetch('/workflow/action', { method: 'POST', body: new URLSearchParams({
        csrf: tok, action: 'terminate', namespace: 'default', workflow_id: 'export-1', reason: 'not allowed' }) });
      return [r.status, await r.text()];
    }, token);
    assert.strictEqual(status[0], 403);
    assert.match(status[1], /42501/);
    await vp.close();
    assert.strictEqual(await status_(admin, 'export-1'), 'running');
  });

  await step('a forged POST is refused', async () => {
    // another site's page posting a form: no session cookie (SameSite), another Origin
    await page.goto(`http://localhost:${PORT + 2}/`);
    await page.waitForFunction(() => /Refused/.test(document.body.textContent), { timeout: 10000 });
    await shot('forged-post-refused');
    // no token
    const r1 = await request(PORT, 'POST', '/workflow/action', {
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'action=terminate&namespace=default&workflow_id=export-1&reason=x',
    });
    assert.strictEqual(r1.status, 403);
    // a valid session and token, but from another origin
    const g = await request(PORT, 'GET', '/workflows');
    const sid = /durable_ui_sid=([0-9a-f]+)/.exec(g.headers['set-cookie'][0])[1];
    const token = /name="csrf-token" content="([0-9a-f]+)"/.exec(g.body)[1];
    const body = `csrf=${token}&action=terminate&namespace=default&workflow_id=export-1&reason=x`;
    const r2 = await request(PORT, 'POST', '/workflow/action', {
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: `durable_ui_sid=${sid}`, Origin: 'http://evil.example' },
      body,
    });
    assert.strictEqual(r2.status, 403);
    assert.strictEqual(await status_(admin, 'export-1'), 'running');
    // the same request from our origin is done (the operator may terminate)
    const r3 = await request(PORT, 'POST', '/workflow/action', {
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: `durable_ui_sid=${sid}`, Origin: `http://127.0.0.1:${PORT}` },
      body,
    });
    assert.strictEqual(r3.status, 303);
    assert.strictEqual(await status_(admin, 'export-1'), 'terminated');
  });

  await step('no script error on any page', async () => {
    assert.deepStrictEqual(pageErrors, []);
  });

  await browser.close();
  worker.stop = true;
  await Promise.all(loops);
  for (const s of [opSrv.server, viewSrv.server, evil]) { s.closeAllConnections(); s.close(); }
  opSrv.sampler.stop(); viewSrv.sampler.stop();
  await Promise.all([opSrv.pool.end(), viewSrv.pool.end(), admin.end(), dc.end(), ac.end()]);
  console.log(`1..${n}`);
  console.log(`# screenshots in ${OUT}`);
  if (failed) console.log(`# ${failed} of ${n} failed`);
  process.exit(failed ? 1 : 0);
}

const status_ = status;

main().catch((e) => {
  console.log(`not ok ${n + 1} - setup`);
  console.log(`# ${String(e.stack || e).split('\n').join('\n# ')}`);
  console.log(`1..${n + 1}`);
  process.exit(1);
});

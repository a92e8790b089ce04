#!/usr/bin/env node
'use strict';
// The dashboard's Host check (DNS rebinding) whatever address it is bound to (the `ui`
// layer of scripts/test.sh; plain HTTP requests, no browser).
//
// A page of another site whose name its DNS answers with the dashboard's address
// (127.0.0.2, a LAN address, any address of a server bound to 0.0.0.0) is, to the
// browser, of the same origin as that name: it could read the dashboard's pages and
// their CSRF token and post its forms.  Only the Host header tells such a request apart.
//
// Needs a cluster with durable (PGHOST, PGPORT, PGDATABASE as a superuser).  Starts the
// dashboard on UI_PORT bound to 127.0.0.2, on UI_PORT+1 bound to 0.0.0.0, and on
// UI_PORT+2 bound to 127.0.0.2 with names allowed by --allowed-host and
// DURABLE_UI_ALLOWED_HOSTS.  Prints TAP.

const assert = require('assert');
const http = require('http');
const net = require('net');
const { Client } = require('pg');
const { createServer, parseArgs } = require('../server');

const PORT = Number(process.env.UI_PORT || 18490);
const EVIL = 'rebind.attacker.example';
const WID = 'host-guard-1';

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

// A request to address:port with the given Host header (as a browser sends it after
// DNS answered that name with this address).
function request(address, port, method, pathname, { host, headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: address, port, method, path: pathname,
      headers: { ...headers, Host: host } }, (res) => {
      let data = '';
      res.on('data', (d) => { data += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
    });
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}

// An HTTP/1.0 request without a Host header, over a socket of our own (node's client
// always sends one).
function http10(address, port, pathname) {
  return new Promise((resolve, reject) => {
    // written without closing our side: the server closes the connection after its answer
    const s = net.connect(port, address, () => s.write(`GET ${pathname} HTTP/1.0\r\n\r\n`));
    s.setTimeout(15000, () => s.destroy(new Error('no answer to an HTTP/1.0 request')));
    let data = '';
    s.on('data', (d) => { data += d; });
    s.on('end', () => {
      const [head, ...rest] = data.split('\r\n\r\n');
      const m = /^HTTP\/1\.[01] (\d+)/.exec(head);
      if (!m) reject(new Error(`not an HTTP answer: ${JSON.stringify(data.slice(0, 200))}`));
      else resolve({ status: Number(m[1]), head, body: rest.join('\r\n\r\n') });
    });
    s.on('error', reject);
  });
}

const TOKEN_RE = /name="csrf-token" content="([0-9a-f]+)"/;

function assertRefused(r, what) {
  assert.strictEqual(r.status, 421, `${what}: status ${r.status}, body ${r.body.slice(0, 200)}`);
  assert.doesNotMatch(r.body, /csrf/i, `${what}: no token in a refusal`);
  assert.strictEqual(r.headers && r.headers['set-cookie'], undefined, `${what}: no session cookie`);
}

async function main() {
  console.log('TAP version 13');
  const admin = new Client();
  await admin.connect();
  // a workflow nobody serves: it stays running until someone terminates it
  await admin.query(`SELECT durable.start_workflow('idle', '{}'::jsonb, workflow_id => $1,
      task_queue => 'host-guard')`, [WID]);
  const status = async () => (await admin.query(`SELECT status FROM durable.workflows
      WHERE workflow_id = $1 ORDER BY start_time DESC LIMIT 1`, [WID])).rows[0].status;

  // the options as the command line and the environment give them
  let configured;
  await step('--allowed-host (repeatable, commas) and DURABLE_UI_ALLOWED_HOSTS', async () => {
    const saved = process.env.DURABLE_UI_ALLOWED_HOSTS;
    process.env.DURABLE_UI_ALLOWED_HOSTS = 'Dash.Example.com, ';
    try {
      configured = parseArgs(['--host', '127.0.0.2', '--port', String(PORT + 2),
        '--allowed-host', 'proxy.example:8443', '--allowed-host', 'other.example,[fd00::5]:8080']);
      assert.throws(() => parseArgs(['--allowed-host', 'https://dash.example.com/']),
        /--allowed-host: "https:\/\/dash.example.com\/" is not a host name/);
    } finally {
      if (saved === undefined) delete process.env.DURABLE_UI_ALLOWED_HOSTS;
      else process.env.DURABLE_UI_ALLOWED_HOSTS = saved;
    }
    assert.deepStrictEqual(configured.allowedHosts,
      ['dash.example.com', 'proxy.example:8443', 'other.example', '[fd00::5]:8080']);
  });

  const servers = [
    ['127.0.0.2', PORT, createServer({ host: '127.0.0.2', port: PORT, sampleMs: 60000 })],
    ['0.0.0.0', PORT + 1, createServer({ host: '0.0.0.0', port: PORT + 1, sampleMs: 60000 })],
  ];
  if (configured) servers.push(['127.0.0.2', PORT + 2, createServer({ ...configured, sampleMs: 60000 })]);
  await Promise.all(servers.map(([h, p, s]) => new Promise((resolve, reject) => {
    s.server.once('error', reject);
    s.server.listen(p, h, resolve);
  })));
  // where to connect to each: the 0.0.0.0 one answers on every address
  const [a, b] = [['127.0.0.2', PORT], ['127.0.0.1', PORT + 1]];

  await step('a foreign Host gets 421 and no page, token or cookie (bound to 127.0.0.2)', async () => {
    for (const p of ['/', '/workflows', `/workflow?namespace=default&workflow_id=${WID}`, '/static/app.js']) {
      const r = await request(...a, 'GET', p, { host: `${EVIL}:${PORT}` });
      assertRefused(r, p);
    }
    const r = await request(...a, 'GET', '/workflows', { host: `${EVIL}:${PORT}` });
    assert.match(r.body, new RegExp(`Host "${EVIL.replace(/\./g, '\\.')}:${PORT}" is not allowed`));
    assert.match(r.body, /--allowed-host/);
    assert.match(r.body, /DURABLE_UI_ALLOWED_HOSTS/);
  });

  await step('a foreign Host gets 421 (bound to 0.0.0.0), the wildcard address too', async () => {
    for (const host of [`${EVIL}:${PORT + 1}`, EVIL, `0.0.0.0:${PORT + 1}`, `127.0.0.2:${PORT + 1}`]) {
      assertRefused(await request(...b, 'GET', '/workflows', { host }), host);
    }
  });

  await step('a request without Host (HTTP/1.0) is refused', async () => {
    for (const [addr, port] of [a, b]) {
      const r = await http10(addr, port, '/workflows');
      assert.strictEqual(r.status, 421, r.head);
      assert.doesNotMatch(r.body, /csrf/i);
      assert.doesNotMatch(r.head, /set-cookie/i);
      assert.match(r.body, /without a Host header/);
    }
  });

  await step('a forged POST with a foreign Host terminates nothing, even with a valid session', async () => {
    // the strongest case: a session cookie and its token as if the attacker had them
    for (const [addr, port] of [a, b]) {
      const g = await request(addr, port, 'GET', '/workflows', { host: `localhost:${port}` });
      assert.strictEqual(g.status, 200);
      const sid = /durable_ui_sid=([0-9a-f]+)/.exec(g.headers['set-cookie'][0])[1];
      const token = TOKEN_RE.exec(g.body)[1];
      const r = await request(addr, port, 'POST', '/workflow/action', {
        host: `${EVIL}:${port}`,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: `durable_ui_sid=${sid}`,
          Origin: `http://${EVIL}:${port}` },
        body: `csrf=${token}&action=terminate&namespace=default&workflow_id=${WID}&reason=forged`,
      });
      assertRefused(r, `POST to ${addr}:${port}`);
      assert.strictEqual(await status(), 'running');
    }
  });

  await step('the loopback names and the bound address are answered', async () => {
    const cases = [
      [a, [`localhost:${PORT}`, `127.0.0.1:${PORT}`, `[::1]:${PORT}`, `127.0.0.2:${PORT}`, `LOCALHOST:${PORT}`]],
      [b, [`localhost:${PORT + 1}`, `127.0.0.1:${PORT + 1}`, `[::1]:${PORT + 1}`]],
    ];
    for (const [[addr, port], hosts] of cases) {
      for (const host of hosts) {
        const r = await request(addr, port, 'GET', '/workflows', { host });
        assert.strictEqual(r.status, 200, `${host}: ${r.status} ${r.body.slice(0, 200)}`);
        assert.match(r.body, TOKEN_RE, host);
      }
    }
    // another port of a loopback name is another site
    assertRefused(await request(...a, 'GET', '/workflows', { host: `localhost:${PORT + 7}` }), 'other port');
  });

  await step('configured names are answered, only with their port; others still refused', async () => {
    assert.ok(configured, 'parseArgs gave the options');
    const c = ['127.0.0.2', PORT + 2];
    for (const host of ['dash.example.com', 'proxy.example:8443', 'other.example', '[fd00::5]:8080',
      `localhost:${PORT + 2}`, `127.0.0.2:${PORT + 2}`]) {
      const r = await request(...c, 'GET', '/workflows', { host });
      assert.strictEqual(r.status, 200, `${host}: ${r.status} ${r.body.slice(0, 200)}`);
    }
    for (const host of ['dash.example.com:9999', 'proxy.example', `${EVIL}:${PORT + 2}`]) {
      assertRefused(await request(...c, 'GET', '/workflows', { host }), host);
    }
  });

  await step('through a configured name: a POST of another Origin is refused, its own is done', async () => {
    const c = ['127.0.0.2', PORT + 2];
    const g = await request(...c, 'GET', '/workflows', { host: 'dash.example.com' });
    const sid = /durable_ui_sid=([0-9a-f]+)/.exec(g.headers['set-cookie'][0])[1];
    const token = TOKEN_RE.exec(g.body)[1];
    const post = (origin) => request(...c, 'POST', '/workflow/action', {
      host: 'dash.example.com',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: `durable_ui_sid=${sid}`, Origin: origin },
      body: `csrf=${token}&action=terminate&namespace=default&workflow_id=${WID}&reason=by+the+operator`,
    });
    for (const origin of [`http://${EVIL}:${PORT + 2}`, 'null', 'https://dash.example.com.evil.example']) {
      const r = await post(origin);
      assert.strictEqual(r.status, 403, `${origin}: ${r.status}`);
      assert.match(r.body, /another site/);
      assert.strictEqual(await status(), 'running');
    }
    const r = await post('https://dash.example.com');
    assert.strictEqual(r.status, 303, `${r.status} ${r.body.slice(0, 300)}`);
    assert.strictEqual(await status(), 'terminated');
  });

  for (const [, , s] of servers) {
    s.server.closeAllConnections();
    s.server.close();
    s.sampler.stop();
    await s.pool.end();
  }
  await admin.end();
  console.log(`1..${n}`);
  if (failed) console.log(`# ${failed} of ${n} failed`);
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.log(`not ok ${n + 1} - setup`);
  console.log(`# ${String(e.stack || e).split('\n').join('\n# ')}`);
  console.log(`1..${n + 1}`);
  process.exit(1);
});

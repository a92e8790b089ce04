#!/usr/bin/env node
'use strict';
// durable's dashboard: node ui/server.js [connection string] [--host H] [--port P]
//                      [--allowed-host NAME[:PORT]]...
//
// Connects to the database as the role of the connection string (or of the usual PG*
// environment variables: PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD) and serves
// server-rendered pages on http://127.0.0.1:8080 by default.  It has no users of its
// own: what a visitor sees and may do is what that role may (put it behind a reverse
// proxy that authenticates, see docs/dashboard.md).

const http = require('http');
const net = require('net');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const db = require('./lib/db');
const pages = require('./lib/pages');
const { Sampler } = require('./lib/metrics');

function parseArgs(argv) {
  const o = {
    host: process.env.DURABLE_UI_HOST || '127.0.0.1',
    port: Number(process.env.DURABLE_UI_PORT || 8080),
    origin: process.env.DURABLE_UI_ORIGIN || null,
    sampleMs: Number(process.env.DURABLE_UI_SAMPLE_MS || 5000),
    connection: process.env.DATABASE_URL || null,
    allowedHosts: splitHosts(process.env.DURABLE_UI_ALLOWED_HOSTS || ''),
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--host') o.host = val();
    else if (a === '--port') o.port = Number(val());
    else if (a === '--origin') o.origin = val();
    else if (a === '--allowed-host') o.allowedHosts.push(...splitHosts(val()));
    else if (a === '--sample-seconds') o.sampleMs = Number(val()) * 1000;
    else if (a === '-h' || a === '--help') o.help = true;
    else if (a.startsWith('-')) throw new Error(`unknown option ${a}`);
    else o.connection = a;
  }
  if (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535) throw new Error('--port: not a port number');
  if (!(o.sampleMs >= 1000)) throw new Error('--sample-seconds: at least 1');
  for (const h of o.allowedHosts) {
    if (!validHost(h)) {
      throw new Error(`--allowed-host: "${h}" is not a host name with an optional port (name[:port], [v6 address][:port])`);
    }
  }
  if (o.origin) {
    let u = null;
    try { u = new URL(o.origin); } catch (e) { /* below */ }
    if (!u || !['http:', 'https:'].includes(u.protocol)) throw new Error(`--origin: "${o.origin}" is not an http(s) origin`);
  }
  return o;
}

// DURABLE_UI_ALLOWED_HOSTS and --allowed-host: names separated by commas.
function splitHosts(s) {
  return s.split(',').map((h) => h.trim().toLowerCase()).filter((h) => h !== '');
}

// A Host header's value: a name or an IPv4 address, or an IPv6 address in brackets,
// with an optional port.
function validHost(h) {
  return /^(?:[a-z0-9](?:[a-z0-9_.-]*[a-z0-9])?|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?$/i.test(h);
}

const USAGE = `usage: node ui/server.js [CONNECTION_STRING] [--host 127.0.0.1] [--port 8080]
                      [--origin https://durable.example.com] [--sample-seconds 5]
                      [--allowed-host durable.example.com[:port]]...
Without a connection string, the PG* environment variables (PGHOST, PGDATABASE, PGUSER...)
say where to connect.  --origin is the public origin when behind a reverse proxy.
Only requests whose Host is localhost, 127.0.0.1 or [::1] with the port, the bound IP
address with the port, the host of --origin, or a name given with --allowed-host
(repeatable, or DURABLE_UI_ALLOWED_HOSTS=name[:port],...) are answered.
`;

const STATIC = {
  '/static/app.js': ['app.js', 'text/javascript; charset=utf-8'],
  '/static/style.css': ['style.css', 'text/css; charset=utf-8'],
};

function createServer(opts) {
  const pool = db.createPool(opts.connection);
  const sampler = new Sampler(pool, { intervalMs: opts.sampleMs });
  const secret = crypto.randomBytes(32);
  const ctxBase = { pool, sampler, opts };

  const server = http.createServer(async (req, res) => {
    const u = new URL(req.url, 'http://dashboard');
    const headers = {
      'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; " +
        "img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'same-origin',
      'X-Frame-Options': 'DENY',
      'Cache-Control': 'no-store',
    };
    const send = (status, type, body, extra) => {
      res.writeHead(status, { ...headers, 'Content-Type': type, ...(extra || {}) });
      res.end(body);
    };
    try {
      // Only our own names in Host, whatever address we are bound to: a page of another
      // site whose name resolves to our address (DNS rebinding) gets nothing, neither a
      // page nor a token nor an action.
      const allowed = allowedHosts(opts, server);
      const host = (req.headers.host || '').toLowerCase();
      if (!allowed.has(host)) {
        return send(421, 'text/plain; charset=utf-8', hostRefusal(req.headers.host, allowed));
      }
      if (STATIC[u.pathname] && req.method === 'GET') {
        const [file, type] = STATIC[u.pathname];
        const body = fs.readFileSync(path.join(__dirname, 'public', file));
        return send(200, type, body, { 'Cache-Control': 'max-age=300' });
      }
      // A session: a random cookie, and a CSRF token derived from it that every form
      // carries.
      let sid = cookie(req.headers.cookie, 'durable_ui_sid');
      const setCookie = {};
      if (!sid || !/^[0-9a-f]{64}$/.test(sid)) {
        sid = crypto.randomBytes(32).toString('hex');
        setCookie['Set-Cookie'] = `durable_ui_sid=${sid}; Path=/; HttpOnly; SameSite=Strict`;
      }
      const csrf = crypto.createHmac('sha256', secret).update(sid).digest('hex');
      const ctx = { ...ctxBase, req, url: u, csrf };
      let out;
      if (req.method === 'POST') {
        const refusal = refusePost(req, allowed, opts, csrf, await readForm(req));
        if (refusal.error) {
          ctx.status = 403;
          out = await pages.refused(ctx, refusal.error);
        } else {
          ctx.form = refusal.form;
          out = await pages.post(ctx, u.pathname);
        }
      } else if (req.method === 'GET' || req.method === 'HEAD') {
        out = await pages.get(ctx, u.pathname);
      } else {
        return send(405, 'text/plain; charset=utf-8', 'method not allowed\n', { Allow: 'GET, HEAD, POST' });
      }
      if (out.redirect) {
        res.writeHead(303, { ...headers, ...setCookie, Location: out.redirect });
        return res.end();
      }
      return send(out.status || 200, out.type || 'text/html; charset=utf-8',
        req.method === 'HEAD' ? '' : String(out.body), setCookie);
    } catch (e) {
      console.error(e);
      return send(500, 'text/plain; charset=utf-8', `internal error: ${e.message}\n`);
    }
  });
  server.on('close', () => { sampler.stop(); pool.end().catch(() => {}); });
  return { server, sampler, pool };
}

// The values of Host the dashboard answers: the loopback names with its port, the IP
// address it is bound to with its port (not the wildcard 0.0.0.0 or ::, which would let
// any name in), the host of --origin, and the names of --allowed-host.
function allowedHosts(opts, server) {
  const a = server.address();
  const port = opts.port || (a && a.port);
  const names = new Set();
  const add = (h) => {
    names.add(`${h}:${port}`);
    if (port === 80) names.add(h);
  };
  ['localhost', '127.0.0.1', '[::1]'].forEach(add);
  const bind = String(opts.host || '').replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const ip = net.isIP(bind);
  if (ip && bind !== '0.0.0.0' && bind !== '::') add(ip === 6 ? `[${bind}]` : bind);
  if (opts.origin) names.add(new URL(opts.origin).host.toLowerCase());
  for (const h of opts.allowedHosts || []) names.add(h.toLowerCase());
  return names;
}

function hostRefusal(host, allowed) {
  const which = host === undefined ? 'A request without a Host header (HTTP/1.0) is not allowed'
    : `Host ${JSON.stringify(host.slice(0, 200))} is not allowed`;
  return `${which}: this dashboard answers only to ${[...allowed].join(', ')}.\n` +
    'To allow another name (say that of a reverse proxy), start it with --allowed-host NAME[:PORT]\n' +
    '(repeatable) or DURABLE_UI_ALLOWED_HOSTS=NAME[:PORT],... (docs/dashboard.md, "Allowed hosts").\n';
}

function cookie(header, name) {
  for (const part of (header || '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return null;
}

// A POST is done only if it comes from a page of ours: its Origin (or Referer) is
// http(s) on one of the allowed hosts (or --origin), and it carries this session's CSRF
// token.
function refusePost(req, allowed, opts, csrf, form) {
  const ours = (o) => {
    if (opts.origin && o === new URL(opts.origin).origin) return true;
    let u;
    try { u = new URL(o); } catch (e) { return false; }
    return ['http:', 'https:'].includes(u.protocol) && u.origin === o && allowed.has(u.host.toLowerCase());
  };
  const origin = req.headers.origin;
  if (origin !== undefined) {
    if (!ours(origin)) return { error: `a form of another site (Origin ${origin}) may not act here` };
  } else if (req.headers.referer) {
    let o;
    try { o = new URL(req.headers.referer).origin; } catch (e) { o = 'invalid'; }
    if (!ours(o)) return { error: `a form of another site (Referer ${o}) may not act here` };
  }
  const token = form.get('csrf') || '';
  const a = Buffer.from(token), b = Buffer.from(csrf);
  if (a.length !== b.length || !crypto.timingSafeEqual(a, b)) {
    return { error: 'the form is not one of this session (missing or wrong CSRF token): reload the page and try again' };
  }
  return { form };
}

function readForm(req) {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks = [];
    req.on('data', (c) => {
      size += c.length;
      if (size > 1024 * 1024) { reject(new Error('form too large')); req.destroy(); return; }
      chunks.push(c);
    });
    req.on('end', () => {
      const type = (req.headers['content-type'] || '').split(';')[0].trim();
      const body = Buffer.concat(chunks).toString('utf8');
      resolve(type === 'application/x-www-form-urlencoded' ? new URLSearchParams(body) : new URLSearchParams());
    });
    req.on('error', reject);
  });
}

if (require.main === module) {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${e.message}\n${USAGE}`);
    process.exit(2);
  }
  if (opts.help) { process.stdout.write(USAGE); process.exit(0); }
  const { server, sampler } = createServer(opts);
  server.listen(opts.port, opts.host, () => {
    const a = server.address();
    const h = a.family === 'IPv6' ? `[${a.address}]` : a.address;
    console.log(`durable dashboard on http://${h}:${a.port}/`);
    sampler.start();
  });
  const stop = () => { server.close(() => process.exit(0)); server.closeAllConnections(); };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

module.exports = { createServer, parseArgs, allowedHosts };

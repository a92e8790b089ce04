#!/usr/bin/env node
'use strict';
// durable's dashboard: node ui/server.js [connection string] [--host H] [--port P]
//
// Connects to the database as the role of the connection string (or of the usual PG*
// environment variables: PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD) and serves
// server-rendered pages on http://127.0.0.1:8080 by default.  It has no users of its
// own: what a visitor sees and may do is what that role may (put it behind a reverse
// proxy that authenticates, see README "Dashboard").

const http = require('http');
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
    else if (a === '--sample-seconds') o.sampleMs = Number(val()) * 1000;
    else if (a === '-h' || a === '--help') o.help = true;
    else if (a.startsWith('-')) throw new Error(`unknown option ${a}`);
    else o.connection = a;
  }
  if (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535) throw new Error('--port: not a port number');
  if (!(o.sampleMs >= 1000)) throw new Error('--sample-seconds: at least 1');
  return o;
}

const USAGE = `usage: node ui/server.js [CONNECTION_STRING] [--host 127.0.0.1] [--port 8080]
                      [--origin https://durable.example.com] [--sample-seconds 5]
Without a connection string, the PG* environment variables (PGHOST, PGDATABASE, PGUSER...)
say where to connect.  --origin is the public origin when behind a reverse proxy.
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

  const loopback = ['127.0.0.1', 'localhost', '::1'].includes(opts.host);

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
      // On loopback, only our own names in Host: a page of another site whose name
      // resolves to 127.0.0.1 (DNS rebinding) gets nothing.
      if (loopback && !hostAllowed(req.headers.host, opts)) {
        return send(421, 'text/plain; charset=utf-8', 'unknown Host\n');
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
        const refusal = refusePost(req, opts, csrf, await readForm(req));
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

function hostAllowed(host, opts) {
  if (!host) return false;
  const names = [`127.0.0.1:${opts.port}`, `localhost:${opts.port}`, `[::1]:${opts.port}`];
  if (opts.port === 80) names.push('127.0.0.1', 'localhost', '[::1]');
  if (opts.origin) names.push(new URL(opts.origin).host);
  return names.includes(host.toLowerCase());
}

function cookie(header, name) {
  for (const part of (header || '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return null;
}

// A POST is done only if it comes from a page of ours: its Origin (or Referer) is this
// server, and it carries this session's CSRF token.
function refusePost(req, opts, csrf, form) {
  const host = req.headers.host;
  const own = new Set([`http://${host}`, `https://${host}`]);
  if (opts.origin) own.add(new URL(opts.origin).origin);
  const origin = req.headers.origin;
  if (origin !== undefined) {
    if (!own.has(origin)) return { error: `a form of another site (Origin ${origin}) may not act here` };
  } else if (req.headers.referer) {
    let o;
    try { o = new URL(req.headers.referer).origin; } catch (e) { o = 'invalid'; }
    if (!own.has(o)) return { error: `a form of another site (Referer ${o}) may not act here` };
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

module.exports = { createServer, parseArgs };

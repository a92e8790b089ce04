'use strict';
// HTML with escaping by default: html`<p>${text}</p>` escapes every interpolated value
// unless it is itself the result of html`` (or raw()), and joins arrays.  Every page is
// built with it, so that workflow ids, inputs and error messages (user data) can never
// become markup.

class Safe {
  constructor(s) { this.s = s; }
  toString() { return this.s; }
}

const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

function escape(v) {
  return String(v).replace(/[&<>"'`]/g, (c) => ESC[c]);
}

function render(v) {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Safe) return v.s;
  if (Array.isArray(v)) return v.map(render).join('');
  return escape(v);
}

function html(strings, ...values) {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new Safe(out);
}

// Markup made by our own code (never user data).
function raw(s) { return new Safe(String(s)); }

// A URL with its query, for href attributes (html`` escapes it once more).
function url(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

// JSON pretty-printed, as escaped text for a <pre>.
function json(v) {
  return html`<pre class="json">${JSON.stringify(v, null, 2)}</pre>`;
}

// A time: UTC in the markup (and on hover); the browser's script shows it in its zone.
function time(v) {
  if (v === null || v === undefined) return html`<span class="muted">—</span>`;
  const d = v instanceof Date ? v : new Date(v);
  if (Number.isNaN(d.getTime())) return html`${String(v)}`;
  const iso = d.toISOString();
  return html`<time datetime="${iso}" title="${iso.replace('T', ' ').replace('Z', ' UTC')}">${iso.replace('T', ' ').replace('Z', ' UTC')}</time>`;
}

// A duration in seconds as "1h 2m 3.4s".
function seconds(s) {
  if (s === null || s === undefined || Number.isNaN(s)) return '';
  const neg = s < 0; s = Math.abs(s);
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  let out = '';
  if (h) out += `${h}h `;
  if (h || m) out += `${m}m `;
  out += `${sec < 10 && (h || m) ? '0' : ''}${sec.toFixed(sec >= 100 || Number.isInteger(sec) ? 0 : 3)}s`;
  return (neg ? '-' : '') + out;
}

// An interval as node-postgres returns it (an object) in seconds.
function intervalSeconds(iv) {
  if (iv === null || iv === undefined) return null;
  if (typeof iv === 'number') return iv;
  if (typeof iv === 'string') return Number(iv);
  return (iv.days || 0) * 86400 + (iv.hours || 0) * 3600 + (iv.minutes || 0) * 60 +
    (iv.seconds || 0) + (iv.milliseconds || 0) / 1000;
}

module.exports = { html, raw, escape, url, json, time, seconds, intervalSeconds, Safe };

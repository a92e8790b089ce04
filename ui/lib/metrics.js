'use strict';
// The metrics page's history: the server reads durable.metrics every few seconds and
// keeps the last minutes in memory (nothing is written to the database), and draws
// charts of rates and schedule-to-start latency as SVG.

const db = require('./db');
const { html, raw, escape } = require('./html');

class Sampler {
  constructor(pool, { intervalMs = 5000, keepMs = 15 * 60 * 1000 } = {}) {
    this.pool = pool;
    this.intervalMs = intervalMs;
    this.keepMs = keepMs;
    this.samples = [];      // [{ t: ms, values: Map key -> value }]
    this.lastError = null;
    this.timer = null;
  }

  start() {
    const tick = async () => {
      try {
        const f = await db.features(this.pool);
        if (f.rel.metrics.may) {
          const rows = await db.metricValues(this.pool);
          this.add(Date.now(), rows);
          this.lastError = null;
        }
      } catch (e) {
        this.lastError = e;
      }
      this.timer = setTimeout(tick, this.intervalMs);
      this.timer.unref();
    };
    tick();
  }

  stop() { if (this.timer) clearTimeout(this.timer); }

  add(t, rows) {
    const values = new Map();
    for (const r of rows) values.set(key(r), r);
    this.samples.push({ t, values });
    while (this.samples.length && this.samples[0].t < t - this.keepMs) this.samples.shift();
  }

  // Per interval between two samples: the rate per second of the rows matching pred.
  rate(pred) {
    const out = [];
    for (let i = 1; i < this.samples.length; i++) {
      const a = this.samples[i - 1], b = this.samples[i];
      const dt = (b.t - a.t) / 1000;
      let d = 0;
      for (const [k, r] of b.values) {
        if (!pred(r)) continue;
        const prev = a.values.get(k);
        const delta = r.value - (prev ? prev.value : 0);
        if (delta > 0) d += delta;   // a restart resets counters: never negative
      }
      out.push([b.t, d / dt]);
    }
    return out;
  }

  // Per interval: quantile q of the histogram `metric` (its _bucket rows, every queue).
  quantile(metric, q) {
    const out = [];
    for (let i = 1; i < this.samples.length; i++) {
      const a = this.samples[i - 1], b = this.samples[i];
      const buckets = new Map();   // le -> delta count (cumulative)
      for (const [k, r] of b.values) {
        if (r.metric !== `${metric}_bucket`) continue;
        const prev = a.values.get(k);
        const delta = Math.max(0, r.value - (prev ? prev.value : 0));
        const le = r.le === 'Infinity' ? Infinity : Number(r.le);
        buckets.set(le, (buckets.get(le) || 0) + delta);
      }
      const les = [...buckets.keys()].sort((x, y) => x - y);
      const total = les.length ? buckets.get(les[les.length - 1]) : 0;
      if (!total) { out.push([b.t, null]); continue; }
      const target = q * total;
      let value = null, lower = 0, lowerCount = 0;
      for (const le of les) {
        const c = buckets.get(le);
        if (c >= target) {
          // linear within the bucket, as Prometheus's histogram_quantile
          value = le === Infinity ? lower : lower + (le - lower) * ((target - lowerCount) / Math.max(c - lowerCount, 1e-9));
          break;
        }
        lower = le; lowerCount = c;
      }
      out.push([b.t, value]);
    }
    return out;
  }

  latest() {
    return this.samples.length ? this.samples[this.samples.length - 1] : null;
  }
}

function key(r) {
  return [r.metric, r.namespace, r.task_queue, r.label, r.le].join('\u0000');
}

const COLORS = ['#1f6feb', '#d1242f', '#1a7f37', '#9a6700', '#8250df', '#bf3989'];

// A line chart: series [{ name, points: [[ms, value|null]] }].
function chart(title, unit, series, { width = 640, height = 200 } = {}) {
  const pad = { l: 56, r: 12, t: 12, b: 28 };
  const all = series.flatMap((s) => s.points).filter((p) => p[1] !== null);
  const id = title.replace(/[^a-z0-9]+/gi, '-').toLowerCase();
  if (all.length < 1) {
    return html`<figure class="chart"><figcaption>${title}</figcaption>
      <p class="muted">No samples yet: the dashboard samples durable.metrics every few
      seconds since it started.</p></figure>`;
  }
  const t0 = Math.min(...all.map((p) => p[0])), t1 = Math.max(...all.map((p) => p[0]));
  const vmax = Math.max(...all.map((p) => p[1]), 0) * 1.1 || 1;
  const x = (t) => pad.l + (t1 === t0 ? 0 : ((t - t0) / (t1 - t0)) * (width - pad.l - pad.r));
  const y = (v) => height - pad.b - (v / vmax) * (height - pad.t - pad.b);
  const fmt = (v) => (v >= 100 ? v.toFixed(0) : v >= 1 ? v.toFixed(1) : v.toPrecision(2));
  let g = '';
  for (let i = 0; i <= 4; i++) {
    const v = (vmax * i) / 4;
    g += `<line x1="${pad.l}" x2="${width - pad.r}" y1="${y(v)}" y2="${y(v)}" stroke="#d0d7de" stroke-width="1"/>`;
    g += `<text x="${pad.l - 6}" y="${y(v) + 4}" text-anchor="end" font-size="11" fill="#57606a">${escape(fmt(v))}</text>`;
  }
  const mins = (t1 - t0) / 60000;
  g += `<text x="${pad.l}" y="${height - 8}" font-size="11" fill="#57606a">-${escape(mins.toFixed(1))} min</text>`;
  g += `<text x="${width - pad.r}" y="${height - 8}" text-anchor="end" font-size="11" fill="#57606a">now</text>`;
  series.forEach((s, i) => {
    const segs = [];
    let cur = [];
    for (const [t, v] of s.points) {
      if (v === null) { if (cur.length) segs.push(cur); cur = []; continue; }
      cur.push(`${x(t).toFixed(1)},${y(v).toFixed(1)}`);
    }
    if (cur.length) segs.push(cur);
    for (const seg of segs) {
      if (seg.length === 1) {
        const [cx, cy] = seg[0].split(',');
        g += `<circle cx="${cx}" cy="${cy}" r="2.5" fill="${COLORS[i % COLORS.length]}"/>`;
      } else {
        g += `<polyline fill="none" stroke="${COLORS[i % COLORS.length]}" stroke-width="2" points="${seg.join(' ')}"/>`;
      }
    }
  });
  const last = (s) => { const p = s.points.filter((q) => q[1] !== null).pop(); return p ? fmt(p[1]) : '—'; };
  return html`<figure class="chart" aria-labelledby="${id}">
    <figcaption id="${id}">${title} <span class="muted">(${unit})</span></figcaption>
    <svg viewBox="0 0 ${width} ${height}" role="img" aria-label="${title}" preserveAspectRatio="none">${raw(g)}</svg>
    <ul class="legend">${series.map((s, i) => html`<li><span class="swatch swatch-${i % COLORS.length}"></span>${s.name}: ${last(s)} ${unit}</li>`)}</ul>
  </figure>`;
}

module.exports = { Sampler, chart };

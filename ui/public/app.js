// durable dashboard: the little script of its pages (no build step).  Everything works
// without it; with it, times show in the browser's zone, the filter form sends that zone,
// an event's JSON loads when opened, and a running workflow's page updates itself.
'use strict';

function localizeTimes(root) {
  for (const t of root.querySelectorAll('time[datetime]')) {
    const d = new Date(t.getAttribute('datetime'));
    if (Number.isNaN(d.getTime())) continue;
    t.textContent = d.toLocaleString(undefined, {
      year: 'numeric', month: 'short', day: 'numeric',
      hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    // the title (UTC) stays, shown on hover
  }
}

function filterZone() {
  const form = document.querySelector('form.filters');
  if (!form) return;
  form.addEventListener('submit', () => {
    form.elements.tz.value = String(new Date().getTimezoneOffset());
    // empty fields stay out of the URL
    for (const el of form.elements) {
      if (el.name && el.value === '' && el.tagName !== 'BUTTON') el.disabled = true;
    }
  });
}

function lazyJson() {
  document.addEventListener('toggle', async (ev) => {
    const d = ev.target;
    if (!(d instanceof HTMLDetailsElement) || !d.open || !d.dataset.src || d.dataset.loaded) return;
    d.dataset.loaded = '1';
    const pre = document.createElement('pre');
    pre.className = 'json';
    pre.textContent = 'loading…';
    d.appendChild(pre);
    try {
      const r = await fetch(d.dataset.src, { headers: { Accept: 'application/json' } });
      pre.textContent = JSON.stringify(await r.json(), null, 2);
    } catch (e) {
      pre.textContent = `could not load: ${e}`;
    }
  }, true);
}

function liveUpdate() {
  const live = document.getElementById('live');
  if (!live || !live.dataset.running) return;
  const every = 3000;
  const tick = async () => {
    if (document.visibilityState === 'visible') {
      try {
        const r = await fetch(location.href, { headers: { Accept: 'text/html' } });
        if (r.ok) {
          const doc = new DOMParser().parseFromString(await r.text(), 'text/html');
          const newLive = doc.getElementById('live');
          if (newLive && !newLive.dataset.running) {
            location.reload();   // it closed: the whole page (actions, history) changes
            return;
          }
          for (const id of ['live', 'summary']) {
            const a = document.getElementById(id), b = doc.getElementById(id);
            if (a && b) { a.replaceWith(b); localizeTimes(b); }
          }
        }
      } catch (e) { /* try again */ }
    }
    setTimeout(tick, every);
  };
  setTimeout(tick, every);
}

document.addEventListener('DOMContentLoaded', () => {
  localizeTimes(document);
  filterZone();
  lazyJson();
  liveUpdate();
});

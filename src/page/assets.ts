// The usage page (GET /olp/): one HTML file, its stylesheet and its script, served by olp itself
// (no CDN, no external fonts: it works offline on a LAN). The key is pasted once, kept in the
// tab's sessionStorage and sent as a bearer token; the page draws what /olp/me/usage (and, for an
// owner, /olp/usage and /health) return. Data only ever reaches the page as text (textContent).
// An owner of several instances behind one front door pastes each instance's owner key: the door
// routes each key's calls to its instance, and the family table rolls them up.

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>olp usage</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/olp/app.css">
<script src="/olp/app.js" defer></script>
</head>
<body>
<header><h1>olp usage</h1><button id="forget" hidden>Forget key</button></header>
<form id="login">
  <label for="key">Your olp key <span class="muted">(several instances: each one's owner key, separated by spaces)</span></label>
  <input id="key" type="password" autocomplete="off" placeholder="olpk_…" required>
  <button type="submit">Show my usage</button>
  <p class="hint">The key stays in this tab only (never in the address or a cookie).</p>
</form>
<p id="error" role="alert" hidden></p>
<main id="bill" hidden>
  <section class="cards">
    <div class="card"><h2>Today</h2><p><span id="today-tokens">0</span> tokens</p><p><span id="today-requests">0</span> requests</p><div class="bar"><div id="today-bar"></div></div><p class="muted" id="today-budget"></p></div>
    <div class="card"><h2>This month</h2><p><span id="month-tokens">0</span> tokens</p><p><span id="month-requests">0</span> requests</p><div class="bar"><div id="month-bar"></div></div><p class="muted" id="month-budget"></p></div>
  </section>
  <section><h2>Last 30 days</h2><svg id="chart" viewBox="0 0 300 100" role="img" aria-label="tokens per day"></svg></section>
  <section><h2>By model</h2><table><thead><tr><th>model</th><th>requests</th><th>prompt</th><th>completion</th></tr></thead><tbody id="models"></tbody></table></section>
  <section><h2>Conversations</h2><table><thead><tr><th>CLI</th><th>started</th><th>turns</th><th>last used</th></tr></thead><tbody id="sessions"></tbody></table></section>
  <section><h2>Subscription window</h2><p class="muted" id="served-by"></p><ul id="plan"></ul></section>
  <section id="family" hidden>
    <h2>Family</h2>
    <table><thead><tr><th>key</th><th>instance</th><th>role</th><th>login</th><th>today</th><th>daily budget</th><th>this month</th><th>monthly budget</th></tr></thead><tbody id="members"></tbody></table>
    <h2>CLIs and load</h2><ul id="health"></ul>
  </section>
</main>
</body>
</html>
`;

export const PAGE_CSS = `[hidden]{display:none!important}
:root{font-family:system-ui,sans-serif;color:#1d2733;background:#f6f7f9}
section{overflow-x:auto}
body{max-width:52rem;margin:0 auto;padding:1rem}
header{display:flex;justify-content:space-between;align-items:center}
h1{font-size:1.4rem}h2{font-size:1rem;margin:1.2rem 0 .4rem}
form{display:grid;gap:.5rem;max-width:26rem}
input,button{font:inherit;padding:.5rem;border-radius:.4rem;border:1px solid #b8c0cc}
button{background:#2f6fde;color:#fff;border:none;cursor:pointer}
.hint,.muted{color:#64707d;font-size:.85rem}
#error{background:#fde8e8;color:#8a1c1c;padding:.6rem;border-radius:.4rem}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:.8rem}
.card{background:#fff;border-radius:.6rem;padding:.8rem;box-shadow:0 1px 2px #0001}
.card p{margin:.2rem 0}
.bar{height:.5rem;background:#e3e7ed;border-radius:.25rem;overflow:hidden;margin-top:.4rem}
.bar div{height:100%;width:0;background:#2f6fde}
.bar div.full{background:#d0342c}
table{width:100%;border-collapse:collapse;background:#fff}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #e3e7ed;font-size:.9rem}
svg{width:100%;height:8rem;background:#fff;border-radius:.6rem}
svg rect{fill:#2f6fde}
`;

export const PAGE_JS = `'use strict';
const $ = (id) => document.getElementById(id);
const fmt = (n) => Number(n).toLocaleString('en');
function text(tag, value) { const el = document.createElement(tag); el.textContent = value; return el; }
function row(cells) { const tr = document.createElement('tr'); for (const c of cells) tr.append(text('td', c)); return tr; }
async function api(path, key) {
  const res = await fetch(path, { headers: { authorization: 'Bearer ' + key }, cache: 'no-store' });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error((body.error && body.error.message) || ('HTTP ' + res.status));
  return body;
}
function budget(part, used, limit) {
  const bar = $(part + '-bar');
  const share = limit ? Math.min(1, used / limit) : 0;
  bar.style.width = (share * 100).toFixed(1) + '%';
  bar.className = share >= 1 ? 'full' : '';
  $(part + '-budget').textContent = limit ? fmt(used) + ' of ' + fmt(limit) + ' tokens (' + Math.round(share * 100) + ' %)' : 'no budget set';
}
function chart(rows, days) {
  const svg = $('chart');
  svg.replaceChildren();
  const byDay = new Map();
  for (const r of rows) byDay.set(r.day, (byDay.get(r.day) || 0) + r.promptTokens + r.completionTokens);
  const today = new Date();
  const series = [];
  for (let i = days - 1; i >= 0; i--) {
    const d = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - i)).toISOString().slice(0, 10);
    series.push([d, byDay.get(d) || 0]);
  }
  const max = Math.max(1, ...series.map((s) => s[1]));
  const w = 300 / series.length;
  series.forEach(([d, n], i) => {
    const h = (n / max) * 96;
    const rect = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
    rect.setAttribute('x', String(i * w + 0.5));
    rect.setAttribute('y', String(100 - h));
    rect.setAttribute('width', String(Math.max(1, w - 1)));
    rect.setAttribute('height', String(h));
    rect.setAttribute('data-day', d);
    rect.append(text('title', d + ': ' + fmt(n) + ' tokens'));
    svg.append(rect);
  });
}
function models(rows) {
  const by = new Map();
  for (const r of rows) {
    const m = by.get(r.model) || { requests: 0, prompt: 0, completion: 0 };
    m.requests += r.requests; m.prompt += r.promptTokens; m.completion += r.completionTokens;
    by.set(r.model, m);
  }
  $('models').replaceChildren(...[...by].map(([m, v]) => row([m, fmt(v.requests), fmt(v.prompt), fmt(v.completion)])));
}
function plan(p) {
  const items = Object.entries(p || {}).map(([cli, s]) => text('li', cli + ': ' + s.status + (s.window ? ' (' + s.window + ')' : '') + (s.utilization != null ? ', ' + Math.round(s.utilization * 100) + ' % used' : '') + (s.resetsAt ? ', resets ' + new Date(s.resetsAt).toLocaleString() : '') + (s.overage ? ', on paid extra usage' : '')));
  $('plan').replaceChildren(...(items.length ? items : [text('li', 'no report yet')]));
}
async function family(keys) {
  const instances = await Promise.all(keys.map(async (key) => {
    const [all, health] = await Promise.all([api('/olp/usage?days=30', key), api('/health', key)]);
    return { all, health, tag: (health.instance && health.instance.tag) || '-' };
  }));
  const members = [];
  const total = { today: 0, month: 0 };
  const lines = [];
  for (const { all, health, tag } of instances) {
    for (const k of all.keys) {
      members.push(row([k.name, tag, k.role, k.login, fmt(k.today.tokens), k.today.budget ? fmt(k.today.budget) : '-', fmt(k.month.tokens), k.month.budget ? fmt(k.month.budget) : '-']));
      total.today += k.today.tokens;
      total.month += k.month.tokens;
    }
    const at = instances.length > 1 ? 'instance ' + tag + ', ' : '';
    for (const [id, b] of Object.entries(health.backends || {})) lines.push(at + id + ': ' + (b.ready ? 'ready' : 'not ready') + (b.version ? ' (' + b.version + ')' : ''));
    if (health.cli) lines.push(at + 'CLI runs: ' + health.cli.running + ' running, ' + health.cli.queued + ' waiting (at most ' + health.cli.maxConcurrent + ' at once)');
    if (health.processes) lines.push(at + 'CLI processes: ' + health.processes.live + ' (at most ' + health.processes.max + ' at once)');
    if (health.workers) lines.push(at + 'live CLIs kept for conversations: ' + (health.workers.live || []).length + ' (at most ' + health.workers.max + ')');
  }
  if (instances.length > 1) members.push(row(['all ' + instances.length + ' instances', '', '', '', fmt(total.today), '', fmt(total.month), '']));
  $('members').replaceChildren(...members);
  $('health').replaceChildren(...lines.map((l) => text('li', l)));
  $('family').hidden = false;
}
async function show(typed) {
  $('error').hidden = true;
  const keys = typed.split(/\s+/).filter(Boolean);
  const key = keys[0];
  try {
    const me = await api('/olp/me/usage?days=30', key);
    sessionStorage.setItem('olp-key', keys.join(' '));
    $('today-tokens').textContent = fmt(me.today.tokens);
    $('today-requests').textContent = fmt(me.today.requests);
    $('month-tokens').textContent = fmt(me.month.tokens);
    $('month-requests').textContent = fmt(me.month.requests);
    budget('today', me.today.tokens, me.today.budget);
    budget('month', me.month.tokens, me.month.budget);
    chart(me.rows, me.days);
    models(me.rows);
    $('sessions').replaceChildren(...me.sessions.map((s) => row([s.backend, s.started_at ? new Date(s.started_at).toLocaleString() : '-', String(s.turns), s.last_used_at ? new Date(s.last_used_at).toLocaleString() : '-'])));
    plan(me.plan);
    $('served-by').textContent = me.login === 'machine' ? "Served by the machine's own login" : 'Served by the login ' + me.login;
    $('login').hidden = true;
    $('forget').hidden = false;
    $('bill').hidden = false;
    document.body.dataset.role = me.role;
    if (me.role === 'owner') await family(keys);
    document.body.dataset.ready = 'true';
  } catch (err) {
    sessionStorage.removeItem('olp-key');
    $('error').textContent = 'Could not load the usage: ' + err.message;
    $('error').hidden = false;
    document.body.dataset.ready = 'error';
  }
}
$('login').addEventListener('submit', (e) => { e.preventDefault(); show($('key').value.trim()); });
$('forget').addEventListener('click', () => { sessionStorage.removeItem('olp-key'); location.reload(); });
const saved = sessionStorage.getItem('olp-key');
if (saved) show(saved);
`;

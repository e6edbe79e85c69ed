// The usage page's script, part 1 (GET /olp/app.js is parts 1 to 4): helpers and what every key
// sees of itself. Data only ever reaches the page as text (textContent), never as markup.

export const MEMBER_JS = `'use strict';
const $ = (id) => document.getElementById(id);
const fmt = (n) => Number(n).toLocaleString('en');
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const dayLabel = (iso) => {
  const d = new Date(iso + 'T00:00:00Z');
  return d.getUTCDate() + ' ' + MONTHS[d.getUTCMonth()];
};
const clock = (d) => String(d.getHours()).padStart(2, '0') + ':' + String(d.getMinutes()).padStart(2, '0');
function when(iso) {
  const d = new Date(iso);
  return d.toDateString() === new Date().toDateString()
    ? 'today ' + clock(d)
    : d.getDate() + ' ' + MONTHS[d.getMonth()] + ' ' + clock(d);
}
const plural = (n, one, many) => fmt(n) + ' ' + (n === 1 ? one : many || one + 's');
const short = (n) => n >= 1e6 ? +(n / 1e6).toFixed(1) + 'M' : n >= 1e3 ? +(n / 1e3).toFixed(1) + 'k' : String(n);
const SVG = 'http://www.w3.org/2000/svg';
function text(tag, value, cls) {
  const el = document.createElement(tag);
  el.textContent = value;
  if (cls) el.className = cls;
  return el;
}
function svg(tag, attrs, label) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (label !== undefined) el.textContent = label;
  return el;
}
function row(cells, labels) {
  const tr = document.createElement('tr');
  cells.forEach((c, i) => {
    const td = typeof c === 'string' ? text('td', c) : c;
    if (labels) td.dataset.label = labels[i];
    tr.append(td);
  });
  return tr;
}
async function api(path, key, method, body) {
  const init = { method: method || 'GET', headers: { authorization: 'Bearer ' + key }, cache: 'no-store' };
  if (body !== undefined) { init.headers['content-type'] = 'application/json'; init.body = JSON.stringify(body); }
  const res = await fetch(path, init);
  const data = await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new Error((data.error && data.error.message) || ('HTTP ' + res.status));
    err.status = res.status; err.param = data.error && data.error.param; err.body = data;
    throw err;
  }
  return data;
}
/**
 * A destructive button's second click: the first one arms it (it asks \`question\`, for 8 s) and
 * answers false; a click while armed answers true.
 */
function confirmed(btn, question) {
  if (btn.dataset.armed === 'true') return true;
  btn.dataset.armed = 'true'; btn.dataset.label = btn.textContent;
  btn.textContent = question; btn.classList.add('armed');
  setTimeout(() => {
    if (btn.isConnected) { btn.dataset.armed = ''; btn.textContent = btn.dataset.label; btn.classList.remove('armed'); }
  }, 8000);
  return false;
}
/** Share of a budget used: 0 without one. */
const shareOf = (used, limit) => limit ? used / limit : 0;
const level = (share) => share >= 1 ? 'full' : share >= 0.8 ? 'near' : '';
function fillBar(bar, share) {
  bar.style.width = (Math.min(1, share) * 100).toFixed(1) + '%';
  bar.className = level(share);
}
function budget(part, used, limit) {
  const share = shareOf(used, limit);
  fillBar($(part + '-bar'), share);
  $(part + '-budget').textContent = limit
    ? fmt(used) + ' of ' + fmt(limit) + ' tokens (' + Math.round(share * 100) + ' %)'
    : 'no limit';
}
const REASONS = {
  budget_exceeded: 'over the token budget', model_not_allowed: 'a model this key may not use',
  rate_limit_exceeded: 'too many requests in one minute', concurrency_limit_exceeded: 'too many requests at once',
  key_disabled: 'the key was switched off', key_expired: 'the key had expired',
  plan_limit_reached: "the Claude plan's limit was reached",
  server_busy: 'olp was too busy', queue_timeout: 'waited too long for a free CLI',
  model_not_found: 'a model olp does not know', context_length_exceeded: 'the conversation was too long',
  client_aborted: 'the app stopped waiting', timeout: 'the answer took too long',
  invalid_request: 'the app sent something olp could not use', backend_rate_limited: 'the CLI was asked too often',
  backend_timeout: 'the CLI took too long', backend_not_logged_in: 'the CLI is not logged in',
  login_refused: 'your login was refused and needs renewing',
  own_login_required: 'your own login was not connected yet',
};
const reason = (code) => REASONS[code] || (code.startsWith('backend_') ? 'the CLI failed' : 'something went wrong');
let lastChart = null;
function chart(rows, days) {
  lastChart = [rows, days];
  const byDay = new Map();
  for (const r of rows) {
    const d = byDay.get(r.day) || { tokens: 0, requests: 0 };
    d.tokens += r.promptTokens + r.completionTokens; d.requests += r.requests;
    byDay.set(r.day, d);
  }
  const now = new Date();
  const series = [];
  for (let i = days - 1; i >= 0; i--) {
    const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - i))
      .toISOString().slice(0, 10);
    series.push({ day, ...(byDay.get(day) || { tokens: 0, requests: 0 }) });
  }
  $('chart-rows').replaceChildren(...series.map((s) => row([s.day, fmt(s.tokens), fmt(s.requests)])));
  $('chart-empty').hidden = series.some((s) => s.requests > 0);
  const W = Math.max(260, $('chart-box').clientWidth - 8), H = 176, L = 42, R = 8, T = 10, B = 22;
  const max = Math.max(...series.map((s) => s.tokens));
  // A round top tick (10 at least) whose half is a whole number too.
  const mag = Math.pow(10, Math.floor(Math.log10(Math.max(10, max))));
  const top = [1, 2, 4, 6, 10].map((m) => m * mag).find((v) => v >= max);
  const el = $('chart');
  el.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
  const y = (v) => T + (H - T - B) * (1 - v / top);
  const parts = [];
  for (const v of [0, top / 2, top]) {
    parts.push(svg('line', { x1: L, x2: W - R, y1: y(v), y2: y(v) }));
    parts.push(svg('text', { x: L - 5, y: y(v) + 4, 'text-anchor': 'end', class: 'y-label' }, short(v)));
  }
  const w = (W - L - R) / series.length;
  series.forEach((s, i) => {
    const h = y(0) - y(s.tokens);
    const rect = svg('rect', {
      x: L + i * w + 1, y: y(0) - h, width: Math.max(1, w - 2), height: h,
      class: 'day' + (i === series.length - 1 ? ' today' : ''), 'data-day': s.day
    });
    rect.append(svg('title', {}, dayLabel(s.day) + ': ' + fmt(s.tokens) + ' tokens, ' + plural(s.requests, 'request')));
    parts.push(rect);
  });
  const mid = Math.floor(series.length / 2);
  parts.push(svg('text', { x: L, y: H - 6, 'text-anchor': 'start', class: 'x-label' }, dayLabel(series[0].day)));
  if (series.length > 6) parts.push(svg('text',
    { x: L + (mid + 0.5) * w, y: H - 6, 'text-anchor': 'middle', class: 'x-label' }, dayLabel(series[mid].day)));
  parts.push(svg('text', { x: W - R, y: H - 6, 'text-anchor': 'end', class: 'x-label' },
    dayLabel(series[series.length - 1].day)));
  el.replaceChildren(...parts);
}
addEventListener('resize', () => { if (lastChart) chart(...lastChart); });
function models(list, errors) {
  $('models').replaceChildren(...list.map((m) =>
    row([m.model, fmt(m.requests), fmt(m.promptTokens), fmt(m.completionTokens)])));
  $('models-table').hidden = !list.length;
  $('models-empty').hidden = list.length > 0;
  const failed = errors.reduce((n, e) => n + e.requests, 0);
  $('failures-count').textContent = plural(failed, 'request') + ' failed:';
  $('failure-codes').replaceChildren(...errors.map((e) =>
    text('li', e.code + ' (' + e.status + '), ' + plural(e.requests, 'time') + ': ' + reason(e.code))));
  $('failures').hidden = failed === 0;
}
function conversations(list) {
  $('conversations').replaceChildren(...list.map((c) =>
    row([when(c.started_at), when(c.last_at), fmt(c.turns)], ['started', 'last message', 'turns'])));
  $('conv-table').hidden = !list.length;
  $('conv-empty').hidden = list.length > 0;
}
const CLI_NAMES = { claude: 'Claude', codex: 'Codex' };
const loginWords = (login) => login === 'machine' ? "this machine's login" : 'login ' + login;
function planLine(cli, login, s) {
  const parts = [(CLI_NAMES[cli] || cli) + ' plan (' + loginWords(login) + '): '];
  parts.push(s.status === 'rejected' ? 'used up'
    : s.utilization != null ? Math.round(s.utilization * 100) + ' % used'
    : s.status === 'allowed_warning' ? 'close to its limit'
    : 'within its limit');
  if (s.window) parts.push(' (' + s.window.replace(/_/g, ' ') + ' window)');
  if (s.resetsAt) parts.push(', resets ' + (when(s.resetsAt).startsWith('today')
    ? 'at ' + clock(new Date(s.resetsAt))
    : 'on ' + when(s.resetsAt)));
  if (s.overage) parts.push(', now on paid extra usage');
  return text('li', parts.join(''), s.status === 'rejected' ? 'full' : '');
}
const PROVIDERS = { claude: 'Anthropic', codex: 'OpenAI' };
/** The CLIs whose login the provider refused, in words ('' when none). */
function refusedWords(refused) {
  return Object.entries(refused || {}).map(([cli, r]) =>
    (PROVIDERS[cli] || cli) + ' refused the ' + (CLI_NAMES[cli] || cli) + ' login ' + when(r.at) +
    (r.detail ? ' (' + r.detail + ')' : '')).join('; ');
}
let refusedNotice = '';
const noPlan = () => text('li', 'Claude plan: no limit reported by the CLI yet', 'muted');
function member(me) {
  $('hello').textContent = 'Hello, ' + me.key;
  $('served-by').textContent = me.login === 'machine'
    ? "Served by this machine's login"
    : "Served by your own login '" + me.login + "'";
  const refused = refusedWords(me.login_refused);
  $('login-refused').hidden = !refused;
  refusedNotice = refused;
  $('login-refused').textContent = refused
    ? refused + ': your login needs renewing. ' + (me.role === 'owner'
      ? 'Renew it with olp logins rotate ' + me.login + ' --' + Object.keys(me.login_refused)[0] + '.'
      : 'Ask the owner of this olp to renew it; until then your requests on it are refused.')
    : '';
  $('today-tokens').textContent = fmt(me.today.tokens);
  $('today-requests').textContent = fmt(me.today.requests);
  $('month-tokens').textContent = fmt(me.month.tokens);
  $('month-requests').textContent = fmt(me.month.requests);
  $('today-empty').hidden = me.today.requests > 0;
  $('month-empty').hidden = me.month.requests > 0;
  budget('today', me.today.tokens, me.today.budget);
  budget('month', me.month.tokens, me.month.budget);
  $('bill').hidden = false;
  chart(me.rows, me.days);
  models(me.models || [], me.errors || []);
  conversations(me.conversations || []);
  const plans = Object.entries(me.plan || {}).map(([cli, s]) => planLine(cli, me.login, s));
  $('plan').replaceChildren(...(plans.length ? plans : [noPlan()]));
}
`;

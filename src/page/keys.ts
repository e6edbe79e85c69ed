// The usage page's script, part 4: key management for an owner (/olp/keys: create, set limits,
// disable, rotate, revoke; the last changes), and the start-up that picks the views a key may see.
// Destructive actions take a second click on the same button (no window.confirm dialogs).

export const KEYS_JS = `
let typedKeys = [];
let myName = '';
const ownerKey = () => typedKeys[0];
// Empty is no limit (null); anything but a whole number is undefined, never NaN: JSON turns NaN
// into null, which would lift the limit instead of refusing the typo.
const numberOrNull = (v) => {
  const s = v.replace(/[ ,_]/g, '');
  return s === '' ? null : /^[0-9]+$/.test(s) ? Number(s) : undefined;
};
/** The form's token limits, or undefined after showing the error next to the first unreadable one. */
function readLimits(form) {
  const out = {};
  for (const f of ['dailyTokens', 'monthlyTokens']) {
    out[f] = numberOrNull(form.elements[f].value);
    if (out[f] === undefined) {
      showFieldError(form, { param: f, message: 'a whole number of tokens, or empty for no limit' });
      return undefined;
    }
  }
  return out;
}
function showFieldError(form, err) {
  for (const el of form.querySelectorAll('.field-error')) el.textContent = '';
  const last = String(err.param || '').split('.').pop();
  const spot = form.querySelector('[data-param="' + CSS.escape(last) + '"]') || form.querySelector('[data-param=""]');
  spot.textContent = err.message;
}
function showToken(name, token) {
  $('token-for').textContent = name;
  $('token-value').value = token;
  $('token-box').hidden = false;
  $('token-value').select();
}
function limitsText(k) {
  const p = k.policy, u = k.usage;
  return 'today ' + fmt(u.tokens_today) + (p.dailyTokens ? ' of ' + fmt(p.dailyTokens) : '') +
    ' tokens, this month ' + fmt(u.tokens_this_month) + (p.monthlyTokens ? ' of ' + fmt(p.monthlyTokens) : '') +
    (p.models ? '; models: ' + p.models.join(', ') : '') + (p.rpm ? '; ' + p.rpm + ' a minute' : '');
}
function button(label, act, name, cls) {
  const b = text('button', label, cls);
  b.type = 'button';
  b.dataset.act = act;
  b.dataset.name = name;
  return b;
}
function keyItem(k) {
  const li = document.createElement('li');
  li.dataset.key = k.name;
  li.append(text('strong', k.name), text('span', k.role, 'tag'));
  if (k.name === myName) li.append(text('span', 'you', 'tag'));
  if (!k.policy.enabled) li.append(text('span', 'disabled', 'tag off'));
  li.append(text('p', (k.login === 'machine' ? "this machine's login" : 'login ' + k.login +
    (STATE_WORDS[k.loginState] || '')) +
    (k.token_hint ? ', key ' + k.token_hint : ''), 'muted'));
  li.append(text('p', limitsText(k)));
  const actions = text('div', '', 'actions');
  actions.append(button('Limits', 'limits', k.name, 'quiet'));
  // olp refuses to let a key disable or revoke itself (the page would lock its owner out).
  if (k.name !== myName) actions.append(button(k.policy.enabled ? 'Disable' : 'Enable',
    k.policy.enabled ? 'disable' : 'enable', k.name, 'quiet'));
  actions.append(button('Rotate', 'rotate', k.name, 'quiet'));
  if (k.name !== myName) actions.append(button('Revoke', 'revoke', k.name, 'danger'));
  li.append(actions);
  const form = document.createElement('form');
  form.hidden = true; form.className = 'limits'; form.noValidate = true;
  const error = (param) => { const e = text('span', '', 'field-error'); e.dataset.param = param; return e; };
  const field = (label, name, value) => {
    const l = text('label', label);
    const i = document.createElement('input');
    i.name = name; i.inputMode = 'numeric'; i.placeholder = 'no limit';
    i.value = value == null ? '' : String(value);
    l.append(i);
    return [l, error(name)];
  };
  form.append(...field('Tokens a day', 'dailyTokens', k.policy.dailyTokens),
    ...field('Tokens a month', 'monthlyTokens', k.policy.monthlyTokens), text('button', 'Save'), error(''));
  form.querySelector('button').type = 'submit';
  form.addEventListener('submit', (e) => { e.preventDefault(); saveLimits(k, form); });
  li.append(form);
  return li;
}
async function saveLimits(k, form) {
  const limits = readLimits(form);
  if (!limits) return;
  const policy = {};
  for (const [f, v] of Object.entries(limits)) if (v !== (k.policy[f] ?? null)) policy[f] = v;
  if (!Object.keys(policy).length) { form.hidden = true; return; }
  try { await api('/olp/keys/' + encodeURIComponent(k.name), ownerKey(), 'PATCH', { policy }); await refresh(); }
  catch (err) { showFieldError(form, err); }
}
const CONFIRM = {
  revoke: (n) => 'Revoke ' + n + '? This cannot be undone',
  rotate: (n) => 'Give ' + n + ' a new key? The old one stops working'
};
async function act(btn) {
  const name = btn.dataset.name, act = btn.dataset.act, path = '/olp/keys/' + encodeURIComponent(name);
  if (act === 'limits') { const f = btn.closest('li').querySelector('form'); f.hidden = !f.hidden; return; }
  if (CONFIRM[act] && !confirmed(btn, CONFIRM[act](name))) return;
  $('keys-error').textContent = '';
  try {
    if (act === 'disable' || act === 'enable') await api(path, ownerKey(), 'PATCH',
      { policy: { enabled: act === 'enable' } });
    if (act === 'rotate') {
      const r = await api(path + '/rotate', ownerKey(), 'POST');
      // One's own key: the old token is dead from now on, so the page (and a reload) goes on with the new one.
      if (name === myName) { typedKeys[0] = r.token; sessionStorage.setItem('olp-key', typedKeys.join(' ')); }
      showToken(name, r.token);
    }
    if (act === 'revoke') await api(path, ownerKey(), 'DELETE');
    await refresh();
  } catch (err) { $('keys-error').textContent = name + ': ' + err.message; }
}
const VERBS = {
  key_created: 'added', key_updated: 'changed', key_rotated: 'gave a new key to', key_revoked: 'revoked'
};
/** A member's own sign-ins on the page, in words: 'connected Claude (setup-token) to the login alice'. */
const LOGIN_WORDS = {
  login_connect: (c, t) => 'connected ' + (CLI_NAMES[c.cli] || c.cli) + ' (' + c.kind + ') to the login ' + t,
  login_remove: (c, t) => 'removed ' + (CLI_NAMES[c.cli] || c.cli) + ' from the login ' + t,
  login_device_start: (c, t) => 'started a ChatGPT sign-in for the login ' + t,
  login_device_end: (c, t) => 'ended a ChatGPT sign-in for the login ' + t + ': ' + c.result +
    (c.error ? ' (' + c.error + ')' : '')
};
const FIELDS = {
  dailyTokens: 'tokens a day', monthlyTokens: 'tokens a month', rpm: 'requests a minute',
  concurrency: 'requests at once', expiresAt: 'expires'
};
function changeWords(changes) {
  const flat = { ...changes, ...(changes.policy || {}) };
  delete flat.policy;
  return Object.entries(flat).map(([f, v]) => f === 'enabled' ? (v ? 'enabled' : 'disabled')
    : (FIELDS[f] || f) + ' ' + (v === null ? 'no limit' : typeof v === 'number' ? fmt(v)
      : Array.isArray(v) ? v.join(', ') : String(v))).join(', ');
}
async function recentChanges() {
  try {
    const r = await api('/olp/admin-actions?limit=50', ownerKey());
    const list = (Array.isArray(r) ? r : r.data || []).slice(0, 8);
    $('changes').replaceChildren(...list.map((a) => text('li',
      when(a.at) + ': ' + a.actor + ' ' + (LOGIN_WORDS[a.action] ? LOGIN_WORDS[a.action](a.changes || {}, a.target)
        : (VERBS[a.action] || a.action) + ' ' + a.target +
          (a.action === 'key_updated' && a.changes ? ' (' + changeWords(a.changes) + ')' : '')))));
    $('changes-box').hidden = list.length === 0;
  } catch { $('changes-box').hidden = true; }
}
async function loadKeys(tag) {
  const r = await api('/olp/keys', ownerKey());
  $('keylist').replaceChildren(...r.data.map(keyItem));
  $('keys-where').textContent = typedKeys.length > 1 ? '(instance ' + tag + ')' : '';
  $('keys').hidden = false;
  await recentChanges();
}
$('keylist').addEventListener('click', (e) => { const b = e.target.closest('button[data-act]'); if (b) act(b); });
$('create').addEventListener('submit', async (e) => {
  e.preventDefault();
  const f = e.target.elements;
  const limits = readLimits(e.target);
  if (!limits) return;
  const policy = {};
  for (const [n, v] of Object.entries(limits)) if (v !== null) policy[n] = v;
  const body = {
    name: f.namedItem('name').value.trim(), role: f.role.value,
    ...(f.login.value.trim() ? { login: f.login.value.trim() } : {}),
    ...(Object.keys(policy).length ? { policy } : {})
  };
  try {
    const r = await api('/olp/keys', ownerKey(), 'POST', body);
    e.target.reset(); showFieldError(e.target, { message: '' });
    showToken(r.key.name, r.token);
    await refresh();
  } catch (err) { showFieldError(e.target, err); }
});
$('copy').addEventListener('click', async () => {
  const v = $('token-value');
  try { await navigator.clipboard.writeText(v.value); } catch { v.select(); document.execCommand('copy'); }
  $('copy').textContent = 'Copied';
  setTimeout(() => { $('copy').textContent = 'Copy'; }, 2000);
});
$('token-done').addEventListener('click', () => { $('token-value').value = ''; $('token-box').hidden = true; });
let renders = 0;
async function refresh() {
  const me = await api('/olp/me/usage?days=30', ownerKey());
  member(me);
  myName = me.key;
  await loadMyLogin();
  document.body.dataset.role = me.role;
  if (me.role === 'owner') await loadKeys(await family(typedKeys));
  document.body.dataset.renders = String(++renders);
}
async function show(typed) {
  $('error').hidden = true;
  typedKeys = typed.split(/\\s+/).filter(Boolean);
  try {
    await refresh();
    sessionStorage.setItem('olp-key', typedKeys.join(' '));
    $('login').hidden = true;
    $('forget').hidden = false;
    document.body.dataset.ready = 'true';
  } catch (err) {
    sessionStorage.removeItem('olp-key');
    $('bill').hidden = true;
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

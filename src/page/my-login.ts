// The usage page's script, part 3: "Your login", where a member connects their own CLI login with
// nothing but their key (GET/PUT/DELETE /olp/me/login…): a Claude setup token or API key pasted in a
// password field, a ChatGPT device sign-in (the code shown here, entered on their phone or laptop),
// or an OpenAI API key. Secrets go up once and never come back; a running sign-in is cancelled when
// the page goes away.

export const MY_LOGIN_JS = `
const KIND_WORDS = {
  'setup-token': 'Claude subscription (setup token)', 'api-key': 'API key',
  chatgpt: 'ChatGPT sign-in', 'access-token': 'access token'
};
const CLI_TITLES = { claude: 'Claude', codex: 'ChatGPT (codex)' };
let myLogin = null;
let device = null;
let devicePoll = null;
/** A member this olp refuses until they connect a login of their own (--member-logins required). */
const mustConnect = (v) => v.policy === 'required' && v.role !== 'owner' && !v.login;
function loginStatusWords(v) {
  if (!v.login) return v.role === 'owner'
    ? "Your key runs on this machine's own CLI logins."
    : mustConnect(v) ? 'Your requests are refused until you connect a login of your own.'
    : "Your requests run on this machine's login, not one of your own.";
  const connected = ['claude', 'codex'].filter((c) => v.login[c]);
  return "Your own login '" + v.login.name + "'" + (connected.length
    ? ' serves your ' + connected.map((c) => CLI_TITLES[c]).join(' and ') + ' requests.'
    : ': nothing connected yet.');
}
function connectedItem(v, cli) {
  const c = v.login && v.login[cli];
  const li = text('li', CLI_TITLES[cli] + ': ');
  li.dataset.cli = cli;
  if (!c) { li.append(text('span', v.clis[cli] && v.clis[cli].installed === false
    ? 'not installed on this machine' : 'not connected', 'muted')); return li; }
  li.append(text('strong', KIND_WORDS[c.kind] || c.kind));
  if (c.refused) li.append(text('span', ' refused ' + when(c.refused.at) + ': needs renewing', 'tag off'));
  if (c.plan) li.append(text('span', planLine(cli, v.login.name, c.plan).textContent, 'muted'));
  if (v.canChange) {
    const remove = button('Remove', 'remove', cli, 'danger');
    li.append(' ', button('Replace', 'replace', cli, 'quiet'), ' ', remove);
  }
  return li;
}
function renderMyLogin(v) {
  myLogin = v;
  $('ml-banner').hidden = !v.banner && !mustConnect(v);
  $('ml-banner').textContent = mustConnect(v)
    ? 'This olp asks each member to use their own login: connect your Claude or ChatGPT login below. ' +
      'Until then your requests are refused.'
    : v.banner ? "You are on this machine's login. Connect your own Claude or ChatGPT login below: each " +
      'person should run on their own subscription.' : '';
  $('ml-status').textContent = loginStatusWords(v);
  if (mustConnect(v)) $('served-by').textContent = 'Not served until you connect your own login';
  // A member who may change their login renews a refused one here, not through the owner.
  if (refusedNotice && v.role !== 'owner' && v.canChange) $('login-refused').textContent = refusedNotice +
    ': your login needs renewing. Replace it under "Your login" below; until then your requests on it are refused.';
  $('ml-clis').replaceChildren(connectedItem(v, 'claude'), connectedItem(v, 'codex'));
  $('ml-keys').textContent = v.login && v.login.keys.length
    ? 'Keys on this login: ' + v.login.keys.join(', ') + (v.login.shared ? ' (shared)' : '') : '';
  $('ml-locked').hidden = v.canChange;
  $('ml-locked').textContent = v.canChange ? '' : (v.whyNot || 'Only the owner can change this login.');
  $('ml-forms').hidden = !v.canChange;
  for (const cli of ['claude', 'codex']) {
    const missing = v.clis[cli] && v.clis[cli].installed === false;
    $('ml-' + cli).hidden = missing || (!!(v.login && v.login[cli]) && $('ml-' + cli).dataset.open !== 'true');
  }
  if (v.device && v.device.state === 'waiting' && !device) showDevice(v.device);
  $('my-login').hidden = false;
}
async function loadMyLogin() {
  try { renderMyLogin(await api('/olp/me/login', ownerKey())); }
  catch (err) { $('ml-status').textContent = 'Could not read your login: ' + err.message; $('my-login').hidden = false; }
}
function openForm(cli, open) {
  $('ml-' + cli).dataset.open = open ? 'true' : '';
  $('ml-' + cli).hidden = !open;
}
$('ml-clis').addEventListener('click', async (e) => {
  const b = e.target.closest('button[data-act]');
  if (!b) return;
  const cli = b.dataset.name;
  if (b.dataset.act === 'replace') { openForm(cli, true); return; }
  if (!confirmed(b, 'Remove your ' + CLI_TITLES[cli] + ' login?')) return;
  try { openForm(cli, false); renderMyLogin(await api('/olp/me/login/' + cli, ownerKey(), 'DELETE')); }
  catch (err) { $('ml-error').textContent = err.message; }
});
function claudeKind() { return $('ml-claude').elements.kind.value; }
$('ml-claude').addEventListener('change', () => {
  const sub = claudeKind() === 'token';
  $('ml-claude-how').hidden = !sub;
  $('ml-claude').elements.secret.placeholder = sub ? 'sk-ant-oat…' : 'sk-ant-api…';
  $('ml-claude').querySelector('.field-error').dataset.param = sub ? 'token' : 'apiKey';
});
async function saveSecret(form, cli, body, done) {
  showFieldError(form, { message: '' });
  const btn = form.querySelector('button[type=submit]');
  btn.disabled = true; const label = btn.textContent; btn.textContent = 'Checking…';
  try {
    const v = await api('/olp/me/login/' + cli, ownerKey(), 'PUT', body);
    form.reset(); openForm(cli, false); renderMyLogin(v);
    $('ml-said').textContent = done;
  } catch (err) { showFieldError(form, err); }
  finally { btn.disabled = false; btn.textContent = label; }
}
$('ml-claude').addEventListener('submit', (e) => {
  e.preventDefault();
  const f = e.target.elements, field = claudeKind() === 'token' ? 'token' : 'apiKey';
  saveSecret(e.target, 'claude', { [field]: f.secret.value.trim(), check: f.check.checked },
    'Claude is connected: your next requests run on it.');
});
$('ml-codex-key').addEventListener('submit', (e) => {
  e.preventDefault();
  saveSecret(e.target, 'codex', { apiKey: e.target.elements.apiKey.value.trim() },
    'Your OpenAI API key is connected: codex requests run on it.');
});
const DEVICE_WORDS = {
  waiting: 'Waiting for you to enter the code…', connected: 'ChatGPT is connected: codex requests now run on it.',
  cancelled: 'Cancelled.', expired: 'The code expired before it was entered. Start again for a new one.',
  failed: 'The sign-in did not work'
};
function showDevice(d) {
  device = d;
  $('ml-device').hidden = false;
  $('ml-device-code').textContent = d.code || '';
  const url = d.url && /^https?:\\/\\//.test(d.url) ? d.url : '';
  $('ml-device-url').textContent = url; $('ml-device-url').href = url || '#';
  $('ml-device-expires').textContent = d.expiresAt ? 'It expires at ' + clock(new Date(d.expiresAt)) + '.' : '';
  $('ml-device-steps').hidden = d.state !== 'waiting';
  $('ml-device-state').textContent = (DEVICE_WORDS[d.state] || d.state) +
    (d.state === 'failed' && d.error ? ': ' + d.error.message : '');
  $('ml-device-state').className = d.state === 'connected' ? 'ok' : d.state === 'waiting' ? '' : 'field-error';
  $('ml-device-cancel').hidden = d.state !== 'waiting';
  $('ml-device-start').hidden = d.state === 'waiting';
  clearTimeout(devicePoll);
  if (d.state === 'waiting') devicePoll = setTimeout(pollDevice, 2000);
  else { device = null; if (d.state === 'connected') loadMyLogin(); }
}
async function pollDevice() {
  try { showDevice((await api('/olp/me/login/codex/device', ownerKey())).device); }
  catch (err) { if (err.status === 404) { device = null; $('ml-device').hidden = true; $('ml-device-start').hidden = false; }
    else devicePoll = setTimeout(pollDevice, 4000); }
}
$('ml-device-start').addEventListener('click', async () => {
  $('ml-device-error').textContent = '';
  $('ml-device-start').disabled = true;
  try { showDevice((await api('/olp/me/login/codex/device', ownerKey(), 'POST', {})).device); }
  catch (err) { $('ml-device-error').textContent = err.message; }
  finally { $('ml-device-start').disabled = false; }
});
$('ml-device-cancel').addEventListener('click', async () => {
  try { showDevice((await api('/olp/me/login/codex/device', ownerKey(), 'DELETE')).device); }
  catch (err) { $('ml-device-error').textContent = err.message; }
});
// Leaving the page ends a sign-in still waiting for its code (keepalive: the request outlives the page).
addEventListener('pagehide', () => {
  if (!device || device.state !== 'waiting') return;
  fetch('/olp/me/login/codex/device', { method: 'DELETE', keepalive: true,
    headers: { authorization: 'Bearer ' + ownerKey() } }).catch(() => {});
});
`;

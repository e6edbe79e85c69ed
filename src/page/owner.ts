// The usage page's script, part 2: what an owner's key adds — every member side by side (over
// several instances when several owner keys are given), the CLIs' health and the plan windows.

export const OWNER_JS = `
const MEMBER_LABELS = ['name', 'instance', 'role', 'login', 'today', 'daily budget', 'this month', 'monthly budget'];
function budgetCell(used, limit) {
  const td = document.createElement('td');
  if (!limit) { td.textContent = 'no limit'; return td; }
  const share = shareOf(used, limit);
  const bar = text('div', ''); const box = text('div', '', 'bar');
  fillBar(bar, share); box.append(bar);
  td.append(text('span', Math.round(share * 100) + ' % of ' + fmt(limit)), box);
  return td;
}
/** How a key's login is held, after its name: its own, or one several keys share. */
const STATE_WORDS = { own: ' · own', shared: ' · shared' };
function memberRow(k, tag) {
  const share = Math.max(shareOf(k.today.tokens, k.today.budget), shareOf(k.month.tokens, k.month.budget));
  const tr = row([k.name, tag, k.role + (k.enabled === false ? ' · disabled' : ''),
    (k.login === 'machine' ? "this machine's" : k.login + (STATE_WORDS[k.loginState] || '')) + (k.login_refused
      ? ' · refused by ' + Object.keys(k.login_refused).map((c) => PROVIDERS[c] || c).join(', ')
      : ''),
    fmt(k.today.tokens), budgetCell(k.today.tokens, k.today.budget),
    fmt(k.month.tokens), budgetCell(k.month.tokens, k.month.budget)], MEMBER_LABELS);
  tr.className = [level(share), k.enabled === false ? 'off' : '', k.login_refused ? 'refused' : ''].join(' ').trim();
  if (level(share)) tr.title = share >= 1 ? 'budget spent' : 'close to the budget';
  if (k.login_refused) tr.title = refusedWords(k.login_refused) + ': renew it with olp logins rotate ' + k.login;
  return tr;
}
const count = (n, one, many) => plural(n, one, many);
function healthLines(health, at) {
  const lines = [];
  if (health.status === 'draining') lines.push(at +
    'stopping (draining): finishing the answers under way, taking no new questions');
  for (const [id, b] of Object.entries(health.backends || {})) {
    const state = b.ready ? 'ready'
      : !b.found ? 'not installed'
      : b.login === 'not_logged_in' ? 'not logged in'
      : 'not ready';
    lines.push(at + (CLI_NAMES[id] || id) + ': ' + state + (b.version ? ', version ' + b.version : ''));
  }
  const cli = health.cli;
  if (cli) lines.push(at + (cli.running === 1 ? '1 conversation is' : fmt(cli.running) + ' conversations are') +
    ' being answered, ' + fmt(cli.queued) + ' waiting (room for ' + fmt(cli.maxConcurrent) + ' at once)');
  if (health.workers && health.workers.max) lines.push(at + count((health.workers.live || []).length, 'CLI') +
    ' kept warm for quick replies (room for ' + fmt(health.workers.max) + ')');
  if (health.parked && health.parked.turns) lines.push(at + count(health.parked.turns, 'tool call') +
    ' waiting for its app');
  return lines;
}
// A draining instance answers /health with 503 and the same owner JSON: still worth showing.
async function healthOf(key) {
  try { return await api('/health', key); }
  catch (err) { if (err.status === 503 && err.body && err.body.status === 'draining') return err.body; throw err; }
}
async function family(keys) {
  const instances = await Promise.all(keys.map(async (key) => {
    const [all, health] = await Promise.all([api('/olp/usage?days=30', key), healthOf(key)]);
    return { all, health, tag: (health.instance && health.instance.tag) || '-' };
  }));
  const members = [], lines = [], plans = [];
  const total = { today: 0, month: 0 };
  for (const { all, health, tag } of instances) {
    const at = instances.length > 1 ? 'Instance ' + tag + ': ' : '';
    for (const k of all.keys) {
      members.push(memberRow(k, tag));
      total.today += k.today.tokens; total.month += k.month.tokens;
    }
    lines.push(...healthLines(health, at));
    for (const p of all.plans || []) { const li = planLine(p.backend, p.login, p); li.prepend(at); plans.push(li); }
  }
  if (instances.length > 1) members.push(row(['all ' + instances.length + ' instances', '', '', '',
    fmt(total.today), '', fmt(total.month), ''], MEMBER_LABELS));
  $('members').replaceChildren(...members);
  $('members-table').classList.toggle('one-instance', instances.length === 1);
  $('health').replaceChildren(...lines.map((l) => text('li', l)));
  $('plans').replaceChildren(...(plans.length ? plans : [noPlan()]));
  $('family').hidden = false;
  return instances[0].tag;
}
`;

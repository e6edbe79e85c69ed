// A key connects its own CLI login from the usage page (/olp/me/login): each route against a running
// olp on the fake CLIs, every error code, who may change what, the device sign-in (approve, deny,
// expire, cancel, shutdown), the per-key limit on sign-ins, that no secret reaches the log, the
// admin actions or an answer, and the --member-logins policy on the three wire formats.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { loginPaths, writeSecret } from '../../src/logins/index.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { isAlive, waitGone } from '../support/procs.js';
import { waitFor } from '../support/wait.js';

const TOKEN = `sk-ant-oat01-${'t'.repeat(40)}SECRETTOKEN`;
const API_KEY = `sk-ant-api03-${'k'.repeat(40)}SECRETAPIKEY`;
const OPENAI_KEY = `sk-proj-${'o'.repeat(30)}SECRETOPENAI`;
const SECRETS = ['SECRETTOKEN', 'SECRETAPIKEY', 'SECRETOPENAI'];

const scratch = mkdtempSync(join(tmpdir(), 'olp-my-login-'));
const waitFile = join(scratch, 'device');
let t: TestDaemon;
before(async () => {
  t = await startTestDaemon({ codexEnv: { FAKE_CODEX_DEVICE_WAIT_FILE: waitFile } });
});
after(async () => {
  await t.close();
  rmSync(scratch, { recursive: true, force: true });
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const member = (name: string, login: string | null = null, d = t) =>
  d.daemon.store.keys.add(name, 'member', {}, login).token;
const me = (token: string, d = t) => ({
  get: () => request(d.url).get('/olp/me/login').set(bearer(token)),
  put: (cli: string, body: unknown) =>
    request(d.url)
      .put(`/olp/me/login/${cli}`)
      .set(bearer(token))
      .send(body as object),
  remove: (cli: string) => request(d.url).delete(`/olp/me/login/${cli}`).set(bearer(token)),
  start: (body?: object) => {
    const r = request(d.url).post('/olp/me/login/codex/device').set(bearer(token));
    return body ? r.send(body) : r;
  },
  device: () => request(d.url).get('/olp/me/login/codex/device').set(bearer(token)),
  cancel: () => request(d.url).delete('/olp/me/login/codex/device').set(bearer(token)),
});
const errOf = (res: request.Response) => {
  const e = (res.body as { error: { code: string; param: string | null; type: string } }).error;
  return [res.status, e.code, e.param];
};
const actions = () =>
  t.daemon.store.adminActions.latest(500) as { action: string; actor: string; target: string; changes: object }[];
/** The fake codex's decision for the running device sign-in, then waits for its view to leave `waiting`. */
async function decide(token: string, what: 'approve' | 'deny' | 'expire') {
  writeFileSync(waitFile, what);
  let view: { state: string; error: { code: string } | null } | undefined;
  await waitFor(async () => {
    view = (await me(token).device()).body.device;
    return view?.state !== 'waiting';
  });
  rmSync(waitFile, { force: true });
  rmSync(`${waitFile}.pid`, { force: true });
  return view!;
}

describe('GET /olp/me/login', () => {
  it("shows a member on the machine's login: the banner under preferred, no login, CLIs installed", async () => {
    const res = await me(member('ann')).get().expect(200);
    assert.deepEqual(res.body, {
      key: 'ann',
      role: 'member',
      policy: 'preferred',
      banner: true,
      canChange: true,
      whyNot: null,
      login: null,
      clis: { claude: { installed: true }, codex: { installed: true } },
      device: null,
    });
    assert.equal((await me(t.token).get()).body.banner, false, 'never for an owner');
    assert.equal(res.headers['cache-control'], 'no-store');
  });
  it('needs a key', async () => {
    assert.equal((await request(t.url).get('/olp/me/login')).status, 401);
  });
});

describe('PUT /olp/me/login/claude', () => {
  it('stores a setup token in a new login named after the key, binds the key, and records it without the secret', async () => {
    const key = member('bea');
    const res = await me(key).put('claude', { token: TOKEN }).expect(200);
    assert.equal(res.body.banner, false);
    assert.deepEqual(res.body.login, {
      name: 'bea',
      keys: ['bea'],
      shared: false,
      claude: { kind: 'setup-token', refused: null, plan: null },
      codex: null,
    });
    assert.equal(t.daemon.store.keys.get('bea')?.login, 'bea');
    assert.equal(statSync(loginPaths(t.stateDir, 'bea').claudeToken).mode & 0o777, 0o600);
    const mine = actions().filter((a) => a.actor === 'bea');
    assert.deepEqual(
      mine.map((a) => [a.action, a.target, a.changes]),
      [
        ['login_connect', 'bea', { cli: 'claude', kind: 'setup-token', checked: false }],
        ['key_updated', 'bea', { login: 'bea' }],
      ],
    );
    const keys = (await request(t.url).get('/olp/keys').set(bearer(t.token))).body.data;
    assert.equal(keys.find((k: { name: string }) => k.name === 'bea').loginState, 'own');
    // Its requests now run on its own login.
    await request(t.url)
      .post('/v1/chat/completions')
      .set(bearer(key))
      .send({ model: 'sonnet', messages: [{ role: 'user', content: 'hi' }] })
      .expect(200);
  });

  it('stores an API key after one tiny request (check: true); its runs answer', async () => {
    const key = member('cal');
    const res = await me(key).put('claude', { apiKey: API_KEY, check: true }).expect(200);
    assert.deepEqual(res.body.login.claude, { kind: 'api-key', refused: null, plan: null });
    assert.ok(existsSync(loginPaths(t.stateDir, 'cal').claudeApiKey));
    assert.ok(!existsSync(loginPaths(t.stateDir, 'cal').claudeToken));
    await request(t.url)
      .post('/v1/chat/completions')
      .set(bearer(key))
      .send({ model: 'sonnet', messages: [{ role: 'user', content: 'hi' }] })
      .expect(200);
  });

  it('refuses a credential claude does not take (422 login_rejected) and stores nothing', async () => {
    const key = member('dot');
    const revoked = `sk-ant-api03-${'r'.repeat(20)}revoked`;
    assert.deepEqual(errOf(await me(key).put('claude', { apiKey: revoked, check: true })), [
      422,
      'login_rejected',
      'apiKey',
    ]);
    const token = `sk-ant-oat01-${'r'.repeat(20)}revoked`;
    assert.deepEqual(errOf(await me(key).put('claude', { token })), [422, 'login_rejected', 'token']);
    assert.equal(t.daemon.store.keys.get('dot')?.login, null);
    assert.equal(t.daemon.store.logins.get('dot'), undefined);
    assert.ok(!existsSync(loginPaths(t.stateDir, 'dot').dir));
  });

  it("names the login <key>-2 when the key's name is taken by another login", async () => {
    t.daemon.store.logins.set('eve', 'codex', 'api-key');
    const res = await me(member('eve')).put('claude', { token: TOKEN }).expect(200);
    assert.equal(res.body.login.name, 'eve-2');
  });

  it('answers 400 naming the field for a bad body, and never repeats the secret', async () => {
    const key = member('fay');
    const cases: [unknown, string][] = [
      [{ token: TOKEN, apiKey: API_KEY }, 'apiKey'],
      [{}, 'token'],
      [{ token: TOKEN, extra: 1 }, 'extra'],
      [{ token: 'sk-ant-xyz-SECRETTOKEN' }, 'token'],
      [{ token: API_KEY }, 'token'],
      [{ apiKey: 'sk-wrong-SECRETAPIKEY' }, 'apiKey'],
      [{ token: TOKEN, check: 'yes' }, 'check'],
    ];
    for (const [body, param] of cases) {
      const res = await me(key).put('claude', body);
      assert.deepEqual(errOf(res), [400, 'invalid_request', param], JSON.stringify(body));
      for (const s of SECRETS) assert.ok(!res.text.includes(s));
    }
    assert.deepEqual(errOf(await me(key).put('codex', { apiKey: 'a', accessToken: 'b' })), [
      400,
      'invalid_request',
      'accessToken',
    ]);
    assert.deepEqual(errOf(await me(key).put('codex', { apiKey: 'two words' })), [400, 'invalid_request', 'apiKey']);
    assert.deepEqual(errOf(await me(key).start({ issuer: 'x' })), [400, 'invalid_request', 'issuer']);
  });

  it('limits a key to 5 sign-ins in 10 minutes (429 rate_limited with Retry-After)', async () => {
    const key = member('gus');
    for (let i = 0; i < 5; i++) await me(key).put('claude', { token: TOKEN }).expect(200);
    const res = await me(key).put('claude', { token: TOKEN });
    assert.deepEqual(errOf(res), [429, 'rate_limited', null]);
    assert.ok(Number(res.headers['retry-after']) > 500);
  });
});

describe('PUT and DELETE /olp/me/login/codex', () => {
  it('stores an API key through the staged codex login; removing the last credential gives the key back to the machine', async () => {
    const key = member('hal');
    const res = await me(key).put('codex', { apiKey: OPENAI_KEY }).expect(200);
    assert.deepEqual(res.body.login.codex, { kind: 'api-key', refused: null, plan: null });
    const p = loginPaths(t.stateDir, 'hal');
    assert.ok(existsSync(p.codexAuth));
    assert.ok(!existsSync(`${p.codexHome}.new`));
    const gone = await me(key).remove('codex').expect(200);
    assert.equal(gone.body.login, null);
    assert.equal(t.daemon.store.keys.get('hal')?.login, null);
    assert.equal(t.daemon.store.logins.get('hal'), undefined);
    assert.ok(!existsSync(p.dir));
    assert.deepEqual(errOf(await me(key).remove('codex')), [404, 'not_found', null]);
    assert.ok(actions().some((a) => a.actor === 'hal' && a.action === 'login_remove'));
  });
  it('keeps the login while another credential is left', async () => {
    const key = member('ida');
    await me(key).put('codex', { apiKey: OPENAI_KEY }).expect(200);
    await me(key).put('claude', { token: TOKEN }).expect(200);
    const res = await me(key).remove('claude').expect(200);
    assert.equal(res.body.login.claude, null);
    assert.equal(res.body.login.codex.kind, 'api-key');
    assert.deepEqual(errOf(await me(key).remove('claude')), [404, 'not_found', null]);
  });
  it('refuses an access token codex does not take (422 login_rejected)', async () => {
    assert.deepEqual(errOf(await me(member('jon')).put('codex', { accessToken: 'not-a-token' })), [
      422,
      'login_rejected',
      'accessToken',
    ]);
    assert.equal(t.daemon.store.logins.get('jon'), undefined);
  });
});

describe('shared logins', () => {
  it('a member cannot change a login it shares (403 login_shared); an owner key can', async () => {
    t.daemon.store.logins.set('family', 'claude', 'setup-token');
    const kid = member('kid', 'family');
    member('kid2', 'family');
    const view = (await me(kid).get().expect(200)).body;
    assert.equal(view.canChange, false);
    assert.match(view.whyNot, /owner/);
    assert.equal(view.login.shared, true);
    assert.deepEqual(errOf(await me(kid).put('claude', { token: TOKEN })), [403, 'login_shared', null]);
    assert.deepEqual(errOf(await me(kid).remove('claude')), [403, 'login_shared', null]);
    assert.deepEqual(errOf(await me(kid).start()), [403, 'login_shared', null]);
    const boss = t.daemon.store.keys.add('boss', 'owner', {}, 'family').token;
    await me(boss).put('claude', { token: TOKEN }).expect(200);
    const rows = (await request(t.url).get('/olp/usage').set(bearer(t.token))).body.keys;
    assert.equal(rows.find((k: { name: string }) => k.name === 'kid').loginState, 'shared');
    assert.equal(rows.find((k: { name: string }) => k.name === 'tester').loginState, 'machine');
    t.daemon.store.logins.setRefused('family', 'claude', { at: new Date().toISOString(), detail: 'x' });
    const keys = (await request(t.url).get('/olp/keys').set(bearer(t.token))).body.data;
    assert.equal(keys.find((k: { name: string }) => k.name === 'kid').loginState, 'refused');
  });
});

describe('the device sign-in', () => {
  it('answers 202 with the code and link codex printed; approved, the login is stored and bound', async () => {
    const key = member('kim');
    assert.deepEqual(errOf(await me(key).device()), [404, 'not_found', null]);
    const res = await me(key).start().expect(202);
    const d = res.body.device;
    assert.equal(d.state, 'waiting');
    assert.equal(d.code, 'FAKE-12345');
    assert.equal(d.url, 'https://auth.openai.com/codex/device');
    assert.equal(Date.parse(d.expiresAt) - Date.parse(d.startedAt), 15 * 60_000);
    assert.deepEqual(errOf(await me(key).start()), [409, 'device_auth_running', null]);
    assert.deepEqual(errOf(await me(key).put('codex', { apiKey: OPENAI_KEY })), [409, 'device_auth_running', null]);
    assert.equal((await me(key).get()).body.device.state, 'waiting');
    assert.equal((await decide(key, 'approve')).state, 'connected');
    const view = (await me(key).get()).body;
    assert.equal(view.login.name, 'kim');
    assert.equal(view.login.codex.kind, 'chatgpt');
    assert.equal(view.device.state, 'connected');
    assert.deepEqual(
      actions()
        .filter((a) => a.actor === 'kim')
        .map((a) => a.action)
        .reverse(),
      ['login_device_start', 'key_updated', 'login_connect', 'login_device_end'],
    );
  });
  it('denied or expired: the state and error say so, and no login is left behind', async () => {
    for (const [what, state, code] of [
      ['deny', 'failed', 'device_auth_refused'],
      ['expire', 'expired', 'device_auth_expired'],
    ] as const) {
      const key = member(`lee-${what}`);
      await me(key).start().expect(202);
      const view = await decide(key, what);
      assert.equal(view.state, state);
      assert.equal(view.error?.code, code);
      assert.equal(t.daemon.store.logins.get(`lee-${what}`), undefined);
      assert.ok(!existsSync(loginPaths(t.stateDir, `lee-${what}`).dir));
      assert.equal(t.daemon.store.keys.get(`lee-${what}`)?.login, null);
    }
  });
  it('DELETE cancels it: codex is killed, nothing is left, and the cancelled view stays readable', async () => {
    const key = member('max');
    await me(key).start().expect(202);
    await waitFor(() => existsSync(`${waitFile}.pid`));
    const pid = Number(readFileSync(`${waitFile}.pid`, 'utf8'));
    assert.ok(isAlive(pid));
    const res = await me(key).cancel().expect(200);
    assert.equal(res.body.device.state, 'cancelled');
    assert.deepEqual(await waitGone([pid]), []);
    assert.ok(!existsSync(loginPaths(t.stateDir, 'max').dir), 'no staging dir, no login dir');
    assert.deepEqual(errOf(await me(key).cancel()), [404, 'not_found', null]);
    assert.equal((await me(key).device().expect(200)).body.device.state, 'cancelled');
    rmSync(`${waitFile}.pid`, { force: true });
  });
});

describe('secrets', () => {
  it('no secret is in the log, the admin actions or any answer', async () => {
    const all = JSON.stringify(t.logs) + JSON.stringify(actions());
    for (const s of SECRETS) assert.ok(!all.includes(s), s);
    const dirs = readdirSync(join(t.stateDir, 'logins'));
    assert.ok(dirs.includes('bea'));
  });
});

const chat = { model: 'sonnet', messages: [{ role: 'user', content: 'hi' }] };
const messages = { model: 'sonnet', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] };

describe('--member-logins required', () => {
  let r: TestDaemon;
  before(async () => {
    r = await startTestDaemon({ config: { memberLogins: 'required' }, codexEnv: { FAKE_CODEX_DEVICE_AUTH: 'fail' } });
  });
  after(async () => r.close());

  it("refuses a member on the machine's login on all three wire formats, each in its own envelope, before any CLI runs", async () => {
    const key = member('nia', null, r);
    const chatRes = await request(r.url).post('/v1/chat/completions').set(bearer(key)).send(chat);
    assert.deepEqual(errOf(chatRes), [403, 'own_login_required', null]);
    assert.equal(chatRes.body.error.type, 'permission_error');
    assert.match(chatRes.body.error.message, new RegExp(`http://127\\.0\\.0\\.1:${r.daemon.port}/olp`));
    const resp = await request(r.url).post('/v1/responses').set(bearer(key)).send({ model: 'sonnet', input: 'hi' });
    assert.deepEqual(errOf(resp), [403, 'own_login_required', null]);
    const msg = await request(r.url)
      .post('/v1/messages')
      .set({ 'x-api-key': key, 'anthropic-version': '2023-06-01' })
      .send(messages);
    assert.equal(msg.status, 403);
    assert.equal(msg.body.type, 'error');
    assert.equal(msg.body.error.type, 'permission_error');
    assert.match(msg.body.error.message, /Your login/);
    assert.equal(readdirSync(r.recordDir).length, 0, 'no CLI was started');
    // count_tokens and the model list are not refused.
    await request(r.url)
      .post('/v1/messages/count_tokens')
      .set({ 'x-api-key': key, 'anthropic-version': '2023-06-01' })
      .send(messages)
      .expect(200);
    await request(r.url).get('/v1/models').set(bearer(key)).expect(200);
    // Each refusal left its ledger row, as other refusals do.
    const usage = (await request(r.url).get('/olp/me/usage').set(bearer(key))).body;
    assert.deepEqual(
      usage.errors.map((e: { code: string; status: number; requests: number }) => [e.code, e.status, e.requests]),
      [['own_login_required', 403, 3]],
    );
  });
  it('serves owner keys and members with their own login', async () => {
    await request(r.url).post('/v1/chat/completions').set(bearer(r.token)).send(chat).expect(200);
    r.daemon.store.logins.set('oli', 'claude', 'setup-token');
    writeSecret(loginPaths(r.stateDir, 'oli').claudeToken, `${TOKEN}\n`);
    const key = member('oli', 'oli', r);
    await request(r.url).post('/v1/chat/completions').set(bearer(key)).send(chat).expect(200);
    assert.equal((await me(key, r).get()).body.banner, false);
  });
  it('a device sign-in whose codex fails before a code answers 502 device_auth_failed with its line', async () => {
    const res = await me(member('pat', null, r), r).start();
    assert.deepEqual(errOf(res), [502, 'device_auth_failed', null]);
    assert.match(res.body.error.message, /Error logging in: error sending request/);
    assert.equal(r.daemon.store.logins.get('pat'), undefined);
  });
});

describe('--member-logins off', () => {
  let o: TestDaemon;
  before(async () => {
    o = await startTestDaemon({
      config: { memberLogins: 'off', claudeBin: '/nonexistent/claude', codexBin: '/nonexistent/codex' },
    });
  });
  after(async () => o.close());

  it('members cannot connect (403 member_logins_off) and see no banner; owner keys still can', async () => {
    const key = member('quin', null, o);
    const view = (await me(key, o).get().expect(200)).body;
    assert.equal(view.banner, false);
    assert.equal(view.canChange, false);
    assert.equal(view.policy, 'off');
    assert.deepEqual(view.clis, { claude: { installed: false }, codex: { installed: false } });
    assert.deepEqual(errOf(await me(key, o).put('claude', { token: TOKEN })), [403, 'member_logins_off', null]);
    assert.deepEqual(errOf(await me(key, o).put('codex', { apiKey: OPENAI_KEY })), [403, 'member_logins_off', null]);
    assert.deepEqual(errOf(await me(key, o).start()), [403, 'member_logins_off', null]);
    assert.deepEqual(errOf(await me(key, o).cancel()), [403, 'member_logins_off', null]);
    assert.deepEqual(errOf(await me(key, o).remove('claude')), [403, 'member_logins_off', null]);
    // An owner is let through, to the CLI that is not installed here.
    assert.deepEqual(errOf(await me(o.token, o).put('claude', { token: TOKEN })), [503, 'backend_not_installed', null]);
    assert.deepEqual(errOf(await me(o.token, o).start()), [503, 'backend_not_installed', null]);
    await request(o.url).post('/v1/chat/completions').set(bearer(key)).send(chat).expect(503);
  });
});

describe('shutdown', () => {
  it('cancels every running device sign-in: codex does not outlive the daemon, and nothing is left', async () => {
    const file = join(scratch, 'shutdown');
    const s = await startTestDaemon({ codexEnv: { FAKE_CODEX_DEVICE_WAIT_FILE: file } });
    const key = member('ray', null, s);
    await me(key, s).start().expect(202);
    await waitFor(() => existsSync(`${file}.pid`));
    const pid = Number(readFileSync(`${file}.pid`, 'utf8'));
    const dir = loginPaths(s.stateDir, 'ray').dir;
    await s.close(true);
    assert.deepEqual(await waitGone([pid]), []);
    assert.ok(!existsSync(dir));
    rmSync(s.base, { recursive: true, force: true });
  });
});

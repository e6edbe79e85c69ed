// The owner's key management as JSON (`/olp/keys`): each action round trip against a running olp,
// what a changed key does to the official client at once, who may call it, the 400s naming their
// field, an owner that may not lock itself out, and the admin log (lines and the recorded rows).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import request from 'supertest';
import { runKeys } from '../../src/cli/keys.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { fakeCliProcesses, waitGone } from '../support/procs.js';

let t: TestDaemon;
let member: string;
before(async () => {
  t = await startTestDaemon({ config: { corsOrigins: ['http://localhost:5173'] } });
  member = t.daemon.store.keys.add('member1', 'member').token;
  t.daemon.store.logins.set('alice', 'claude', 'setup-token');
});
after(async () => t.close());

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const api = (token = t.token) => ({
  create: (body: unknown) =>
    request(t.url)
      .post('/olp/keys')
      .set(bearer(token))
      .send(body as object),
  update: (name: string, body: unknown) =>
    request(t.url)
      .patch(`/olp/keys/${name}`)
      .set(bearer(token))
      .send(body as object),
  rotate: (name: string) => request(t.url).post(`/olp/keys/${name}/rotate`).set(bearer(token)),
  revoke: (name: string) => request(t.url).delete(`/olp/keys/${name}`).set(bearer(token)),
  actions: (q = '') => request(t.url).get(`/olp/admin-actions${q}`).set(bearer(token)),
});
const ask = (token: string) =>
  new OpenAI({ baseURL: t.baseURL, apiKey: token, maxRetries: 0 }).chat.completions.create({
    model: 'sonnet',
    messages: [{ role: 'user', content: 'hi' }],
  });
const statusOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return 200;
  } catch (e) {
    return (e as { status: number }).status;
  }
};
/** An error reply's code and param. */
const errOf = (res: request.Response) => {
  const e = (res.body as { error: { code: string; param: string | null; type: string } }).error;
  return [res.status, e.code, e.param];
};

describe('POST /olp/keys', () => {
  it('creates a member key with its policy; the token works with the openai client, and GET /olp/keys shows the same view', async () => {
    const res = await api().create({
      name: 'kid',
      login: 'alice',
      policy: { models: ['claude-*', ' sonnet ', ''], dailyTokens: 50_000, expiresAt: '2099-01-01', overage: 'deny' },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const body = res.body as { key: Record<string, unknown> & { policy: Record<string, unknown> }; token: string };
    assert.match(body.token, /^olpk_/);
    assert.equal(body.key.name, 'kid');
    assert.equal(body.key.role, 'member', 'member unless it is the first key');
    assert.equal(body.key.login, 'alice');
    assert.deepEqual(body.key.policy.models, ['claude-*', 'sonnet']);
    assert.equal(body.key.policy.dailyTokens, 50_000);
    assert.equal(body.key.policy.expiresAt, '2099-01-01T00:00:00.000Z');
    assert.equal(body.key.policy.overage, 'deny');
    assert.equal(body.key.token_hint, `${body.token.slice(0, 9)}…`);
    const list = await request(t.url).get('/olp/keys').set(bearer(t.token));
    assert.deepEqual(
      (list.body as { data: { name: string }[] }).data.find((k) => k.name === 'kid'),
      body.key,
    );
  });

  it('a key made here answers the official client, and once disabled gets 403 key_disabled', async () => {
    const made = await api().create({ name: 'laptop', policy: { rpm: 60 } });
    assert.equal(made.status, 201);
    const token = (made.body as { token: string }).token;
    const ok = await ask(token);
    assert.equal(ok.choices[0]?.message.content, 'Hello from fake claude. You said: hi');
    const off = await api().update('laptop', { policy: { enabled: false } });
    assert.equal(off.status, 200);
    assert.equal((off.body as { key: { policy: { enabled: boolean } } }).key.policy.enabled, false);
    await assert.rejects(
      ask(token),
      (e: { status: number; code: string }) => e.status === 403 && e.code === 'key_disabled',
    );
    const on = await api().update('laptop', { policy: { enabled: true } });
    assert.equal(on.status, 200);
    assert.equal(await statusOf(ask(token)), 200);
  });

  it('refuses bad bodies naming the field', async () => {
    const cases: [unknown, string | null][] = [
      [{}, 'name'],
      [{ name: 'bad name!' }, 'name'],
      [{ name: 'member1' }, 'name'],
      [{ name: 'x1', role: 'admin' }, 'role'],
      [{ name: 'x1', login: 'nobody' }, 'login'],
      [{ name: 'x1', policy: { dailyTokens: 0 } }, 'policy.dailyTokens'],
      [{ name: 'x1', policy: { rpm: 1.5 } }, 'policy.rpm'],
      [{ name: 'x1', policy: { concurrency: '3' } }, 'policy.concurrency'],
      [{ name: 'x1', policy: { expiresAt: 'soon' } }, 'policy.expiresAt'],
      [{ name: 'x1', policy: { overage: 'maybe' } }, 'policy.overage'],
      [{ name: 'x1', policy: { models: 'claude-*' } }, 'policy.models'],
      [{ name: 'x1', policy: { enabled: 'no' } }, 'policy.enabled'],
      [{ name: 'x1', colour: 'red' }, 'colour'],
      [{ name: 'x1', policy: { dailyTokenz: 5 } }, 'policy.dailyTokenz'],
      [[1, 2], null],
    ];
    for (const [body, param] of cases) {
      const res = await api().create(body);
      assert.deepEqual(errOf(res), [400, 'invalid_request', param], JSON.stringify(body));
    }
    assert.equal(t.daemon.store.keys.get('x1'), undefined, 'nothing made');
    const bad = await request(t.url)
      .post('/olp/keys')
      .set(bearer(t.token))
      .set('content-type', 'application/json')
      .send('{"name":');
    assert.deepEqual(errOf(bad), [400, 'invalid_json', null]);
  });
});

describe('PATCH, rotate and DELETE /olp/keys/:name', () => {
  it('changes role, login and policy, and clears a limit with null', async () => {
    await api().create({ name: 'phone', policy: { concurrency: 2 } });
    const res = await api().update('phone', {
      role: 'owner',
      login: 'machine',
      policy: { concurrency: null, rpm: 10 },
    });
    assert.equal(res.status, 200);
    const key = (res.body as { key: { role: string; login: string; policy: Record<string, unknown> } }).key;
    assert.deepEqual([key.role, key.login, key.policy.concurrency, key.policy.rpm], ['owner', 'machine', null, 10]);
    assert.deepEqual(errOf(await api().update('phone', {})), [400, 'invalid_request', null]);
    assert.deepEqual(errOf(await api().update('phone', { policy: { monthlyTokens: -1 } })), [
      400,
      'invalid_request',
      'policy.monthlyTokens',
    ]);
    assert.deepEqual(errOf(await api().update('nobody', { role: 'member' })), [404, 'not_found', null]);
  });

  it('rotate: the old token 401, the new one 200', async () => {
    const made = await api().create({ name: 'tablet' });
    const old = (made.body as { token: string }).token;
    assert.equal(await statusOf(ask(old)), 200);
    const res = await api().rotate('tablet');
    assert.equal(res.status, 200);
    const body = res.body as { key: { name: string; token_hint: string }; token: string };
    assert.equal(body.key.name, 'tablet');
    assert.notEqual(body.token, old);
    assert.equal(body.key.token_hint, `${body.token.slice(0, 9)}…`);
    assert.equal(await statusOf(ask(old)), 401);
    assert.equal(await statusOf(ask(body.token)), 200);
    assert.deepEqual(errOf(await api().rotate('nobody')), [404, 'not_found', null]);
  });

  it('revoke: 200, then the token is 401 and the name is free again', async () => {
    const made = await api().create({ name: 'old-pc' });
    const token = (made.body as { token: string }).token;
    const res = await api().revoke('old-pc');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { name: 'old-pc', revoked: true });
    assert.equal(await statusOf(ask(token)), 401);
    assert.deepEqual(errOf(await api().revoke('old-pc')), [404, 'not_found', null]);
    assert.equal((await api().create({ name: 'old-pc' })).status, 201);
  });

  it('an owner may not revoke, disable, demote or expire the key it calls with', async () => {
    const me = 'tester';
    const refused = [
      await api().revoke(me),
      await api().update(me, { policy: { enabled: false } }),
      await api().update(me, { role: 'member' }),
      await api().update(me, { policy: { expiresAt: '2001-01-01T00:00:00Z' } }),
      // Two seconds ahead locks the owner out as surely as an expiry now.
      await api().update(me, { policy: { expiresAt: new Date(Date.now() + 2000).toISOString() } }),
      await api().update(me, { policy: { expiresAt: new Date(Date.now() + 9 * 60_000).toISOString() } }),
    ];
    assert.deepEqual(
      refused.map((r) => errOf(r)),
      [
        [400, 'invalid_request', null],
        [400, 'invalid_request', 'policy.enabled'],
        [400, 'invalid_request', 'role'],
        [400, 'invalid_request', 'policy.expiresAt'],
        [400, 'invalid_request', 'policy.expiresAt'],
        [400, 'invalid_request', 'policy.expiresAt'],
      ],
    );
    assert.match(
      (refused[4]!.body as { error: { message: string } }).error.message,
      /cannot set an expiry less than 10 minutes away on the key you are calling with/,
    );
    for (const r of refused)
      assert.match((r.body as { error: { message: string } }).error.message, /another owner key, or `olp keys`/);
    assert.equal(await statusOf(ask(t.token)), 200, 'still works');
    assert.equal((await api().update(me, { policy: { rpm: 1000 } })).status, 200, 'other changes to itself are fine');
    const later = new Date(Date.now() + 11 * 60_000).toISOString();
    assert.equal(
      (await api().update(me, { policy: { expiresAt: later } })).status,
      200,
      'an expiry past 10 minutes is',
    );
    assert.equal(await statusOf(ask(t.token)), 200);
  });
});

describe('who may call', () => {
  it('a member key gets 403 owner_only on every action, before its body is looked at', async () => {
    const m = api(member);
    for (const res of [
      await m.create({ name: 'sneaky' }),
      await m.create('{"broken'),
      await m.update('member1', { role: 'owner' }),
      await m.rotate('tester'),
      await m.revoke('tester'),
      await m.actions(),
    ])
      assert.deepEqual(errOf(res), [403, 'owner_only', null]);
    assert.equal(t.daemon.store.keys.get('member1')?.role, 'member');
    assert.equal(t.daemon.store.keys.get('sneaky'), undefined);
  });

  it('no key: 401', async () => {
    const res = await request(t.url).post('/olp/keys').send({ name: 'anon' });
    assert.equal(res.status, 401);
  });

  it('CORS: a preflight for PATCH and DELETE from an allowed origin; nothing for another origin', async () => {
    for (const method of ['PATCH', 'DELETE']) {
      const pre = await request(t.url)
        .options('/olp/keys/kid')
        .set('origin', 'http://localhost:5173')
        .set('access-control-request-method', method)
        .set('access-control-request-headers', 'authorization, content-type');
      assert.equal(pre.status, 204);
      assert.equal(pre.headers['access-control-allow-origin'], 'http://localhost:5173');
      assert.match(pre.headers['access-control-allow-methods'] ?? '', new RegExp(`\\b${method}\\b`));
      assert.equal(pre.headers['access-control-allow-credentials'], undefined, 'no cookies, ever');
    }
    const other = await request(t.url)
      .options('/olp/keys/kid')
      .set('origin', 'http://evil.example')
      .set('access-control-request-method', 'DELETE');
    assert.equal(other.headers['access-control-allow-origin'], undefined);
    assert.equal(other.headers['access-control-allow-methods'], undefined);
    const real = await api()
      .update('kid', { policy: { rpm: 5 } })
      .set('origin', 'http://evil.example');
    assert.equal(real.status, 200, 'a bearer token is what authorises; the browser just cannot read it');
    assert.equal(real.headers['access-control-allow-origin'], undefined);
  });
});

describe('the admin log', () => {
  it('one admin_action line per change and a row in /olp/admin-actions, newest first; no token material', async () => {
    const made = await api().create({ name: 'audit-me', policy: { dailyTokens: 7 } });
    const token = (made.body as { token: string }).token;
    await api().update('audit-me', { policy: { dailyTokens: 8 } });
    const rotated = (await api().rotate('audit-me')).body as { token: string };
    await api().revoke('audit-me');
    const lines = t.logs.filter((l) => l.event === 'admin_action' && l.target === 'audit-me');
    assert.deepEqual(
      lines.map((l) => [l.actor, l.action, l.changes]),
      [
        ['tester', 'key_created', { role: 'member', login: 'machine', policy: { dailyTokens: 7 } }],
        ['tester', 'key_updated', { policy: { dailyTokens: 8 } }],
        ['tester', 'key_rotated', {}],
        ['tester', 'key_revoked', {}],
      ],
    );
    const rows = await api().actions('?limit=4');
    assert.equal(rows.status, 200);
    const data = (rows.body as { data: { actor: string; action: string; target: string; at: string }[] }).data;
    assert.deepEqual(
      data.map((r) => [r.actor, r.action, r.target]),
      [
        ['tester', 'key_revoked', 'audit-me'],
        ['tester', 'key_rotated', 'audit-me'],
        ['tester', 'key_updated', 'audit-me'],
        ['tester', 'key_created', 'audit-me'],
      ],
    );
    assert.ok(data.every((r) => !Number.isNaN(Date.parse(r.at))));
    assert.deepEqual(errOf(await api().actions('?limit=0')), [400, 'invalid_request', 'limit']);
    const logged = JSON.stringify(t.logs);
    for (const secret of [token, rotated.token, t.token, member])
      assert.ok(!logged.includes(secret.slice(9)), 'no token in the logs');
    assert.ok(!logged.includes('olpk_'), 'not even a hint');
    assert.ok(!JSON.stringify(data).includes('olpk_'));
  });

  it('`olp keys` changes are recorded too, as the actor cli', async () => {
    const said: string[] = [];
    const keys = (sub: string, values: Record<string, string | boolean> = {}) =>
      runKeys(
        t.daemon.store,
        sub,
        ['by-cli'],
        values,
        (s) => said.push(s),
        (s) => said.push(s),
      );
    keys('add', { 'daily-tokens': '100', login: 'alice' });
    keys('set', { disable: true });
    keys('rotate');
    keys('revoke');
    const data = (
      (await api().actions('?limit=4')).body as { data: { actor: string; action: string; changes: unknown }[] }
    ).data;
    assert.deepEqual(data.map((r) => [r.actor, r.action, r.changes]).reverse(), [
      ['cli', 'key_created', { role: 'member', login: 'alice', policy: { dailyTokens: 100 } }],
      ['cli', 'key_updated', { policy: { enabled: false } }],
      ['cli', 'key_rotated', {}],
      ['cli', 'key_revoked', {}],
    ]);
  });
});

describe('live CLIs', () => {
  it('disabling or revoking a key through the API stops its live CLIs, as `olp keys` does', async () => {
    const w = await startTestDaemon({ config: { workers: true } });
    try {
      const owner = (path: string, method: 'post' | 'patch' | 'delete', body?: object) =>
        request(w.url)[method](path).set(bearer(w.token)).send(body);
      for (const [name, stop, reason] of [
        ['worker-a', () => owner('/olp/keys/worker-a', 'patch', { policy: { enabled: false } }), 'disabled'],
        ['worker-b', () => owner('/olp/keys/worker-b', 'delete'), 'revoked'],
      ] as const) {
        const made = await owner('/olp/keys', 'post', { name });
        const token = (made.body as { token: string }).token;
        const before = new Set(fakeCliProcesses(w.recordDir));
        const client = new OpenAI({ baseURL: w.baseURL, apiKey: token, maxRetries: 0 });
        await client.chat.completions.create({ model: 'sonnet', messages: [{ role: 'user', content: 'hi' }] });
        const end = Date.now() + 5000;
        let live: number[] = [];
        while ((live = fakeCliProcesses(w.recordDir).filter((p) => !before.has(p))).length === 0 && Date.now() < end)
          await new Promise((r) => setTimeout(r, 20));
        assert.ok(live.length > 0, 'the key has a live CLI');
        // Let the standing watch (every 250 ms) see the key in good standing first.
        await new Promise((r) => setTimeout(r, 400));
        assert.equal((await stop()).status, 200);
        assert.deepEqual(await waitGone(live, 5000), [], `${name}'s live CLI stopped`);
        assert.ok(w.logs.some((l) => l.event === 'key_clis_retired' && l.reason === reason));
      }
    } finally {
      await w.close();
    }
  });
});

// The JSON behind the usage page: a member's own bill, the owner's view of every key, bounds.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';

let t: TestDaemon;
let kid: string;
let mum: string;
before(async () => {
  t = await startTestDaemon();
  kid = t.daemon.store.keys.add('kid', 'member', { dailyTokens: 100_000, monthlyTokens: 1_000_000 }).token;
  mum = t.daemon.store.keys.add('mum', 'member').token;
});
after(async () => t.close());

const get = (path: string, token: string) => request(t.url).get(path).set('authorization', `Bearer ${token}`);
const chat = (token: string, content: string, model = 'sonnet') =>
  request(t.url)
    .post('/v1/chat/completions')
    .set('authorization', `Bearer ${token}`)
    .send({ model, messages: [{ role: 'user', content }] });

describe('GET /olp/me/usage', () => {
  it('an unused key: zeros, its budgets, no rows, no sessions', async () => {
    const res = await get('/olp/me/usage', mum);
    assert.equal(res.status, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.deepEqual(
      { ...res.body, plan: undefined },
      {
        object: 'usage',
        key: 'mum',
        login: 'machine',
        role: 'member',
        days: 30,
        today: { tokens: 0, requests: 0, budget: null },
        month: { tokens: 0, requests: 0, budget: null },
        rows: [],
        models: [],
        errors: [],
        conversations: [],
        sessions: [],
        plan: undefined,
      },
    );
  });

  it("a member's own numbers only: today and this month against budgets, rows per day and model, sessions", async () => {
    assert.equal((await chat(kid, 'first')).status, 200);
    assert.equal((await chat(kid, 'second', 'codex')).status, 200);
    assert.equal((await chat(mum, 'not yours')).status, 200);
    await new Promise((r) => setTimeout(r, 50));
    const res = await get('/olp/me/usage?days=7', kid);
    assert.equal(res.status, 200);
    const b = res.body as {
      days: number;
      today: { tokens: number; requests: number; budget: number };
      month: { budget: number };
      rows: { day: string; model: string; requests: number; promptTokens: number; key?: string }[];
      sessions: { backend: string; turns: number }[];
    };
    assert.equal(b.days, 7);
    assert.equal(b.today.requests, 2);
    assert.ok(b.today.tokens > 0);
    assert.equal(b.today.budget, 100_000);
    assert.equal(b.month.budget, 1_000_000);
    const today = new Date().toISOString().slice(0, 10);
    assert.deepEqual(
      b.rows.map((r) => [r.day, r.model, r.requests]),
      [
        [today, 'codex', 1],
        [today, 'sonnet', 1],
      ],
    );
    assert.ok(
      b.rows.every((r) => r.key === undefined),
      'no key names in a member’s rows',
    );
    assert.deepEqual(b.sessions.map((s) => [s.backend, s.turns]).sort(), [
      ['claude', 1],
      ['codex', 1],
    ]);
    // The tokens the rows add up to are the ledger's.
    const ledger = [...t.daemon.store.usage.export({ scope: { all: true } })].filter((r) => r.key_name === 'kid');
    assert.equal(
      b.rows.reduce((n, r) => n + r.promptTokens, 0),
      ledger.reduce((n, r) => n + r.usage.prompt_tokens, 0),
    );
  });

  it('bad days are a 400 naming the param; no key is a 401', async () => {
    for (const d of ['0', '367', 'abc', '1.5', '-3']) {
      const res = await get(`/olp/me/usage?days=${d}`, kid);
      assert.equal(res.status, 400, d);
      assert.equal(res.body.error.param, 'days');
    }
    assert.equal((await request(t.url).get('/olp/me/usage')).status, 401);
  });
});

describe('GET /olp/usage', () => {
  it('owners see every key side by side; members are refused', async () => {
    const res = await get('/olp/usage?days=30', t.token);
    assert.equal(res.status, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    const b = res.body as { keys: { name: string; today: { requests: number } }[]; rows: { key: string }[] };
    assert.deepEqual(b.keys.map((k) => [k.name, k.today.requests]).sort(), [
      ['kid', 2],
      ['mum', 1],
      ['tester', 0],
    ]);
    assert.deepEqual([...new Set(b.rows.map((r) => r.key))].sort(), ['kid', 'mum']);
    const refused = await get('/olp/usage', kid);
    assert.equal(refused.status, 403);
  });
});

describe('the usage page breakdown', () => {
  it('models count answered requests only, failures come by code, conversations are CLI sessions', async () => {
    const ann = t.daemon.store.keys.add('ann', 'member', { models: ['sonnet'] }).token;
    const send = (messages: { role: string; content: string }[], model = 'sonnet') =>
      request(t.url).post('/v1/chat/completions').set('authorization', `Bearer ${ann}`).send({ model, messages });
    const q1 = { role: 'user', content: 'a first question' };
    const a1 = await send([q1]);
    assert.equal(a1.status, 200);
    const a2 = await send([
      q1,
      { role: 'assistant', content: a1.body.choices[0].message.content },
      { role: 'user', content: 'more' },
    ]);
    assert.equal(a2.status, 200);
    assert.equal((await send([{ role: 'user', content: 'another thing' }])).status, 200);
    for (const model of ['gpt-4o', 'codex']) assert.equal((await send([q1], model)).status, 403);
    await new Promise((r) => setTimeout(r, 50));
    const b = (await get('/olp/me/usage', ann)).body as {
      models: { model: string; requests: number }[];
      errors: { code: string; status: number; requests: number }[];
      conversations: { turns: number; started_at: string; last_at: string }[];
    };
    assert.deepEqual(
      b.models.map((m) => [m.model, m.requests]),
      [['sonnet', 3]],
    );
    assert.deepEqual(b.errors, [{ code: 'model_not_allowed', status: 403, requests: 2 }]);
    // Two conversations: the question carried on (two turns, one session), and a new one.
    const ledger = [...t.daemon.store.usage.export({ scope: { all: true } })].filter(
      (r) => r.key_name === 'ann' && r.outcome === 'ok',
    );
    assert.equal(new Set(ledger.map((r) => r.session_id)).size, 2);
    assert.deepEqual(b.conversations.map((c) => c.turns).sort(), [1, 2]);
    assert.equal(b.conversations[0]!.turns, 1, 'the latest first');
    assert.ok(b.conversations.every((c) => c.started_at <= c.last_at));
    t.daemon.store.keys.update('ann', { policy: { enabled: false } });
    const all = (await get('/olp/usage', t.token)).body as {
      keys: { name: string; enabled: boolean }[];
      plans: unknown[];
    };
    assert.deepEqual(
      all.keys.filter((k) => !k.enabled).map((k) => k.name),
      ['ann'],
    );
    assert.deepEqual(all.plans, []);
    t.daemon.store.keys.revoke('ann');
  });
});

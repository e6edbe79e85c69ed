// GET /olp/usage/export: the ledger's rows as `olp usage export` writes them, to owner keys only,
// filtered as the CLI filters, streamed at the client's pace and stopped when it leaves.
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import type { UsageRow } from '../../src/store/index.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';

let t: TestDaemon;
let member: string;
const DAY = 86_400_000;
const NOW = Date.now();

function rowOf(i: number, key: { id: string; name: string }, ts: number): UsageRow {
  return {
    requestId: `req_export_${String(i).padStart(5, '0')}`,
    ts,
    keyId: key.id,
    keyName: key.name,
    backend: 'claude',
    model: 'sonnet',
    servedModel: 'sonnet',
    outcome: i % 4 === 0 ? 'error' : 'ok',
    errorCode: null,
    status: 200,
    queueMs: 0,
    ttftMs: 5,
    durationMs: 9,
    promptTokens: 100 + i,
    completionTokens: 7,
    cachedTokens: 50,
    reasoningTokens: 0,
    rawUsage: { input_tokens: 50, cache_read_input_tokens: 50 + i, output_tokens: 7 },
    partial: false,
    costUsd: i % 3 ? 0.001 * i : null,
    sessionId: `session-${i}-${'x'.repeat(200)}`,
    sessionMode: 'ephemeral',
    rotationReason: null,
  };
}

before(async () => {
  t = await startTestDaemon();
  const store = t.daemon.store;
  const added = store.keys.add('bob', 'member');
  member = added.token;
  const owner = store.keys.list().find((k) => k.name === 'tester')!;
  // Ten days back to today, two keys.
  for (let i = 0; i < 20; i++) store.usage.record(rowOf(i, i % 2 ? added.key : owner, NOW - (10 - (i >> 1)) * DAY));
});
after(async () => t.close());

const get = (path: string, token?: string) => {
  const r = request(t.url).get(path);
  return token === undefined ? r : r.set('authorization', `Bearer ${token}`);
};
const linesOf = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { request_id: string; key_name: string; time: string });

describe('GET /olp/usage/export', () => {
  it('an owner key: every row in the export schema, as NDJSON, never cached', async () => {
    const res = await get('/olp/usage/export', t.token)
      .buffer(true)
      .parse((r, cb) => {
        let s = '';
        r.on('data', (c: Buffer) => (s += c.toString('utf8')));
        r.on('end', () => cb(null, s));
      });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/x-ndjson');
    assert.equal(res.headers['cache-control'], 'no-store');
    const want = [...t.daemon.store.usage.export({ scope: { all: true } })].map((r) => `${JSON.stringify(r)}\n`);
    assert.equal(want.length, 20);
    assert.equal(res.body, want.join(''), 'the same lines `olp usage export` writes');
  });

  it('a member key: 403 owner_only, as the other owner routes; no key: 401', async () => {
    const res = await get('/olp/usage/export', member);
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'owner_only');
    assert.equal(res.body.error.type, 'permission_error');
    assert.equal((await get('/olp/usage', member)).status, 403);
    assert.equal((await get('/olp/usage/export')).status, 401);
  });

  it('since, until (dates, ISO times, durations) and key narrow the rows as the CLI does', async () => {
    const ids = async (q: string) => linesOf((await get(`/olp/usage/export?${q}`, t.token)).text);
    const byKey = await ids('key=bob');
    assert.equal(byKey.length, 10);
    assert.ok(byKey.every((r) => r.key_name === 'bob'));
    const recent = await ids('since=3d');
    assert.ok(recent.length > 0 && recent.length < 20);
    assert.ok(recent.every((r) => Date.parse(r.time) >= NOW - 3 * DAY - 60_000));
    const from = new Date(NOW - 5 * DAY).toISOString();
    const until = new Date(NOW - 2 * DAY).toISOString().slice(0, 10);
    const window = await ids(`since=${encodeURIComponent(from)}&until=${until}&key=tester`);
    assert.ok(window.length > 0);
    for (const r of window) {
      assert.equal(r.key_name, 'tester');
      assert.ok(Date.parse(r.time) >= Date.parse(from) && Date.parse(r.time) < Date.parse(`${until}T00:00:00Z`));
    }
    assert.deepEqual(await ids('until=2000-01-01'), []);
  });

  for (const [q, param] of [
    ['since=yesterday', 'since'],
    ['until=7x', 'until'],
    ['since=1d&since=2d', 'since'],
    ['key=nobody', 'key'],
  ] as const) {
    it(`?${q}: 400 invalid_request_error naming '${param}'`, async () => {
      const res = await get(`/olp/usage/export?${q}`, t.token);
      assert.equal(res.status, 400);
      assert.equal(res.body.error.type, 'invalid_request_error');
      assert.equal(res.body.error.param, param);
      assert.match(res.body.error.message, new RegExp(`'${param}'`));
    });
  }

  it('key names every key of that name: one made again after a revoke, and the revoked one', async () => {
    const store = t.daemon.store;
    const first = store.keys.add('carol', 'member').key;
    store.usage.record(rowOf(90000, first, NOW - 2 * DAY));
    store.keys.revoke('carol');
    const again = store.keys.add('carol', 'member').key;
    store.usage.record(rowOf(90001, again, NOW - DAY));
    const res = await get('/olp/usage/export?key=carol', t.token);
    assert.equal(res.status, 200);
    assert.deepEqual(
      linesOf(res.text).map((r) => r.request_id),
      ['req_export_90000', 'req_export_90001'],
    );
  });

  it('a large ledger is read at the client’s pace, and the store serves others while the client waits', async () => {
    const store = t.daemon.store;
    const bob = store.keys.list().find((k) => k.name === 'bob')!;
    // Some 25 MB of rows: more than the loopback sockets take in (a few MB), so the export must wait.
    const long = 'm'.repeat(8000);
    for (let i = 100; i < 3100; i++)
      store.usage.record({ ...rowOf(i, bob, NOW - DAY), model: long, servedModel: long });
    const res = await firstChunk();
    await new Promise((r) => setTimeout(r, 200));
    // Written while the client waits, after every other row in time: an export that had read the
    // ledger ahead of its client (into memory or the socket) would not have it; and a read left
    // open across the wait would have made the connection refuse the write.
    store.usage.record({ ...rowOf(9999, bob, NOW + 60_000), requestId: 'req_export_late' });
    const chat = await request(t.url)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${t.token}`)
      .send({ model: 'sonnet', messages: [{ role: 'user', content: 'while it waits' }] });
    assert.equal(chat.status, 200);
    let rest = res.first;
    res.message.setEncoding('utf8');
    res.message.on('data', (c: string) => (rest += c));
    res.message.resume();
    await new Promise((r) => res.message.once('end', r));
    const rows = linesOf(rest);
    assert.ok(rows.length >= 3021, `${rows.length} rows`);
    assert.equal(rows.at(-1)!.request_id, 'req_export_late');
  });

  it('a client that leaves mid-export ends it', async () => {
    // Some 50 MB of rows: more than the loopback sockets hold, so the export is still writing.
    const bob = t.daemon.store.keys.list().find((k) => k.name === 'bob')!;
    const long = 'm'.repeat(8000);
    for (let i = 10_000; i < 13_000; i++)
      t.daemon.store.usage.record({ ...rowOf(i, bob, NOW + 120_000), model: long, servedModel: long });
    const res = await firstChunk();
    res.message.destroy();
    const left = () =>
      t.logs.find((l) => l.event === 'request' && l.path === '/olp/usage/export' && l.outcome === 'client_aborted');
    for (let i = 0; i < 100 && !left(); i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(left(), 'the export was logged as ended by its client');
    assert.equal((await get('/olp/usage/export?until=2000-01-01', t.token)).status, 200);
  });
});

/** An export's response once its first bytes came, paused there. */
function firstChunk(): Promise<{ message: IncomingMessage; first: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${t.url}/olp/usage/export`, { headers: { authorization: `Bearer ${t.token}` } });
    req.on('response', (message) => {
      message.once('data', (c: Buffer) => {
        message.pause();
        resolve({ message, first: c.toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

// Per-key policy and admission: every limit at its boundary, live changes, budgets across a
// restart, fairness between keys, and a queued client that leaves.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import request from 'supertest';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { OLP_BIN } from '../support/paths.js';
import { releaseHeld } from '../support/held.js';

const body = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'sonnet',
  messages: [{ role: 'user', content }],
  ...extra,
});
// `.then` sends at once: a supertest request is lazy until someone awaits it.
const chat = (t: TestDaemon, token: string, b: object): Promise<request.Response> =>
  request(t.url)
    .post('/v1/chat/completions')
    .set('authorization', `Bearer ${token}`)
    .send(b)
    .then((r) => r);

function is429(res: request.Response, code: string) {
  assert.equal(res.status, 429, JSON.stringify(res.body));
  assert.equal(res.body.error.code, code);
  assert.equal(res.body.error.type, 'rate_limit_error');
  assert.ok(Number(res.headers['retry-after']) >= 1, 'Retry-After');
}

async function until(cond: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('per-key limits at their boundary', () => {
  it('requests per minute: the 4th of rpm 3 gets 429 with x-ratelimit headers', async () => {
    const t = await startTestDaemon();
    try {
      const { token } = t.daemon.store.keys.add('kid', 'member', { rpm: 3 });
      for (let i = 0; i < 3; i++) {
        const ok = await chat(t, token, body(`r${i}`));
        assert.equal(ok.status, 200);
        assert.equal(ok.headers['x-ratelimit-limit-requests'], '3');
        assert.equal(ok.headers['x-ratelimit-remaining-requests'], String(2 - i));
      }
      const res = await chat(t, token, body('one too many'));
      is429(res, 'rate_limit_exceeded');
      assert.equal(res.headers['x-ratelimit-limit-requests'], '3');
      assert.equal(res.headers['x-ratelimit-remaining-requests'], '0');
      assert.match(res.headers['x-ratelimit-reset-requests'] ?? '', /^(\d+m)?\d+s$/);
      assert.equal(res.headers['x-should-retry'], 'true');
      // Another key is unaffected.
      assert.equal((await chat(t, t.token, body('owner'))).status, 200);
    } finally {
      await t.close();
    }
  });

  it('concurrency: the 3rd request in flight of a limit of 2 gets 429 at once', async () => {
    const t = await startTestDaemon();
    try {
      const { token } = t.daemon.store.keys.add('kid', 'member', { concurrency: 2 });
      // Two runs held open until the third request has been refused, however busy the machine.
      const slow = [0, 1].map((i) =>
        chat(t, token, {
          model: 'sonnet',
          messages: [
            { role: 'system', content: '[[fake:held]]' },
            { role: 'user', content: `slow ${i}` },
          ],
        }),
      );
      await until(
        async () =>
          (await request(t.url).get('/health').set('authorization', `Bearer ${t.token}`)).body.cli.running === 2,
      );
      is429(await chat(t, token, body('third')), 'concurrency_limit_exceeded');
      releaseHeld(t.recordDir);
      for (const r of await Promise.all(slow)) assert.equal(r.status, 200);
      assert.equal((await chat(t, token, body('after'))).status, 200, 'slots come back');
    } finally {
      await t.close();
    }
  });

  it('models: a model outside the key policy gets 403; globs match', async () => {
    const t = await startTestDaemon();
    try {
      const { token } = t.daemon.store.keys.add('kid', 'member', { models: ['haiku', 'claude-haiku-*'] });
      const res = await chat(t, token, body('x'));
      assert.equal(res.status, 403);
      assert.deepEqual(
        [res.body.error.code, res.body.error.type, res.body.error.param],
        ['model_not_allowed', 'permission_error', 'model'],
      );
      assert.equal((await chat(t, token, { ...body('x'), model: 'haiku' })).status, 200);
      assert.equal((await chat(t, token, { ...body('x'), model: 'claude-haiku-4-5' })).status, 200);
    } finally {
      await t.close();
    }
  });

  it('daily token budget: refused once spent, failures do not count, and it holds across a restart', async () => {
    let t = await startTestDaemon();
    const base = t.base;
    try {
      const { token } = t.daemon.store.keys.add('kid', 'member');
      const first = await chat(t, token, body('same prompt'));
      const size = first.body.usage.total_tokens as number;
      assert.ok(size > 0);
      // Live change, no restart: a budget of exactly two such requests.
      t.daemon.store.keys.update('kid', { policy: { dailyTokens: 2 * size } });
      assert.equal((await chat(t, token, body('[[fake:exit-nonzero]]'))).status, 502, 'a failure…');
      const second = await chat(t, token, body('same prompt'));
      assert.equal(second.status, 200, '…does not count against the budget');
      assert.equal(second.headers['x-ratelimit-limit-tokens'], String(2 * size));
      const third = await chat(t, token, body('same prompt'));
      is429(third, 'budget_exceeded');
      assert.match(
        third.body.error.message,
        /daily token budget of \d+ is spent\. It resets at \d{4}-\d\d-\d\dT00:00:00\.000Z/,
      );
      assert.equal(third.headers['x-ratelimit-remaining-tokens'], '0');
      assert.match(third.headers['x-ratelimit-reset-tokens'] ?? '', /^(\d+h)?(\d+m)?\d+s$/);
      assert.equal(third.headers['x-should-retry'], 'false');

      await t.close(true);
      t = await startTestDaemon({ base });
      is429(await chat(t, token, body('same prompt')), 'budget_exceeded');
    } finally {
      await t.close();
    }
  });

  it('concurrent requests cannot overshoot a budget by more than one request', async () => {
    const t = await startTestDaemon();
    try {
      const { token } = t.daemon.store.keys.add('kid', 'member');
      const size = (await chat(t, token, body('x'.repeat(4000)))).body.usage.total_tokens as number;
      // Room for about three more; ten arrive at once. Reservations (prompt + 1024) keep most out.
      t.daemon.store.keys.update('kid', { policy: { dailyTokens: 4 * size } });
      const results = await Promise.all(Array.from({ length: 10 }, () => chat(t, token, body('x'.repeat(4000)))));
      const ok = results.filter((r) => r.status === 200).length;
      // Refused while the budget is held by the others in flight (they may yet spend it), or spent.
      for (const r of results.filter((r) => r.status !== 200))
        is429(r, r.body.error.code === 'budget_exceeded' ? 'budget_exceeded' : 'concurrency_limit_exceeded');
      const used = t.daemon.store.usage.tokensSince(t.daemon.store.keys.get('kid')!.id, 0);
      assert.ok(used <= 4 * size + size, `used ${used} of ${4 * size}, ${ok} admitted`);
    } finally {
      await t.close();
    }
  });
});

describe('key lifecycle without restart', () => {
  it('rotate and revoke from the CLI take effect on the next request; disabled and expired keys are refused', async () => {
    const t = await startTestDaemon();
    try {
      const add = spawnSync(
        process.execPath,
        [OLP_BIN, 'keys', 'add', 'mum', '--state-dir', t.stateDir, '--rpm', '100', '--models', 'sonnet,haiku'],
        { encoding: 'utf8' },
      );
      assert.equal(add.status, 0, add.stderr);
      const old = add.stdout.trim().split('\n').at(-1)!;
      assert.equal((await chat(t, old, body('hi'))).status, 200);
      const rotate = spawnSync(process.execPath, [OLP_BIN, 'keys', 'rotate', 'mum', '--state-dir', t.stateDir], {
        encoding: 'utf8',
      });
      const fresh = rotate.stdout.trim().split('\n').at(-1)!;
      assert.notEqual(fresh, old);
      assert.equal((await chat(t, old, body('hi'))).status, 401);
      assert.equal((await chat(t, fresh, body('hi'))).status, 200);

      spawnSync(process.execPath, [OLP_BIN, 'keys', 'set', 'mum', '--disable', '--state-dir', t.stateDir]);
      const disabled = await chat(t, fresh, body('hi'));
      assert.deepEqual([disabled.status, disabled.body.error.code], [403, 'key_disabled']);
      spawnSync(process.execPath, [
        OLP_BIN,
        'keys',
        'set',
        'mum',
        '--enable',
        '--expires',
        '2000-01-01',
        '--state-dir',
        t.stateDir,
      ]);
      const expired = await chat(t, fresh, body('hi'));
      assert.deepEqual([expired.status, expired.body.error.code], [401, 'key_expired']);
      spawnSync(process.execPath, [OLP_BIN, 'keys', 'set', 'mum', '--expires', 'never', '--state-dir', t.stateDir]);
      assert.equal((await chat(t, fresh, body('hi'))).status, 200);

      const showKey = spawnSync(process.execPath, [OLP_BIN, 'keys', 'show', 'mum', '--state-dir', t.stateDir], {
        encoding: 'utf8',
      });
      assert.match(showKey.stdout, /requests\/min\s+100/);
      assert.match(showKey.stdout, /models\s+sonnet, haiku/);
      assert.match(showKey.stdout, /daily tokens\s+\d+ used of -/);
      assert.ok(!showKey.stdout.includes(fresh));

      spawnSync(process.execPath, [OLP_BIN, 'keys', 'revoke', 'mum', '--state-dir', t.stateDir]);
      assert.equal((await chat(t, fresh, body('hi'))).status, 401);
    } finally {
      await t.close();
    }
  });

  it('owner-only endpoints refuse member keys; every key sees its own usage', async () => {
    const t = await startTestDaemon();
    try {
      const { token } = t.daemon.store.keys.add('kid', 'member', { dailyTokens: 5000 });
      await chat(t, token, body('hello'));
      const denied = await request(t.url).get('/olp/keys').set('authorization', `Bearer ${token}`);
      assert.deepEqual(
        [denied.status, denied.body.error.code, denied.body.error.type],
        [403, 'owner_only', 'permission_error'],
      );
      const me = await request(t.url).get('/olp/me').set('authorization', `Bearer ${token}`);
      assert.equal(me.body.name, 'kid');
      assert.ok(me.body.usage.tokens_today > 0);
      assert.equal(me.body.policy.dailyTokens, 5000);
      const all = await request(t.url).get('/olp/keys').set('authorization', `Bearer ${t.token}`);
      assert.equal(all.status, 200);
      assert.deepEqual(all.body.data.map((k: { name: string }) => k.name).sort(), ['kid', 'tester']);
      assert.ok(!JSON.stringify(all.body).includes(token));
    } finally {
      await t.close();
    }
  });
});

describe('the shared queue', () => {
  it('is fair: key B waits for at most one slot while key A has 20 queued', async (ctx) => {
    const t = await startTestDaemon({ config: { maxConcurrency: 2 }, claudeEnv: { FAKE_CLAUDE_DELAY_MS: '40' } });
    try {
      const a = t.daemon.store.keys.add('a').token;
      const b = t.daemon.store.keys.add('b').token;
      const admitted = () => t.logs.filter((l) => l.event === 'admitted').map((l) => l.key as string);
      await request(t.url).get('/health'); // warm the CLI detection cache
      const burst = Array.from({ length: 30 }, (_, i) => chat(t, a, body(`a${i}`)));
      await until(
        async () =>
          (await request(t.url).get('/health').set('authorization', `Bearer ${t.token}`)).body.cli.queued >= 20,
      );
      const aBefore = admitted().filter((k) => k === 'a').length;
      const single = await chat(t, b, body('b alone'));
      assert.equal(single.status, 200);
      const order = admitted();
      const aAhead = order.slice(0, order.indexOf('b')).filter((k) => k === 'a').length - aBefore;
      ctx.diagnostic(
        `fairness: ${aAhead} of key A's queued requests were admitted between B's arrival and B's admission (A had 20 queued)`,
      );
      assert.ok(aAhead <= 1, `B waited behind ${aAhead} of A's requests`);
      for (const r of await Promise.all(burst)) assert.equal(r.status, 200);
    } finally {
      await t.close();
    }
  });

  it('a queued client that disconnects leaves the queue at once and frees its place', async () => {
    const t = await startTestDaemon({ config: { maxConcurrency: 1 } });
    try {
      const stats = async () =>
        (await request(t.url).get('/health').set('authorization', `Bearer ${t.token}`)).body.cli as {
          running: number;
          queued: number;
        };
      const running = chat(t, t.token, {
        model: 'sonnet',
        messages: [
          { role: 'system', content: '[[fake:held]]' },
          { role: 'user', content: 'hold the slot' },
        ],
      });
      await until(async () => (await stats()).running === 1);
      const controller = new AbortController();
      const queued = fetch(`${t.baseURL}/chat/completions`, {
        method: 'POST',
        signal: controller.signal,
        headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body('waiting')),
      }).catch((err: Error) => err.name);
      await until(async () => (await stats()).queued === 1);
      controller.abort();
      assert.equal(await queued, 'AbortError');
      // It leaves while the slot is still held: nothing but its own leaving empties the queue.
      await until(async () => (await stats()).queued === 0);
      assert.equal((await stats()).running, 1);
      releaseHeld(t.recordDir);
      assert.equal((await running).status, 200);
      assert.deepEqual(await stats(), { running: 0, queued: 0, maxConcurrent: 1 });
      assert.equal((await chat(t, t.token, body('next'))).status, 200);
      const row = t.logs.find((l) => l.event === 'request' && l.outcome === 'client_aborted');
      assert.ok(row, 'the queued request that left is logged as client_aborted');
    } finally {
      await t.close();
    }
  });

  it('a full queue answers 429 server_busy; a long wait answers 429 queue_timeout', async () => {
    const t = await startTestDaemon({ config: { maxConcurrency: 1, queueSize: 1, queueTimeout: 1, idleTimeout: 3 } });
    try {
      const hold = chat(t, t.token, {
        model: 'sonnet',
        messages: [
          { role: 'system', content: '[[fake:hang]]' },
          { role: 'user', content: 'x' },
        ],
      });
      await until(
        async () =>
          (await request(t.url).get('/health').set('authorization', `Bearer ${t.token}`)).body.cli.running === 1,
      );
      const waiting = chat(t, t.token, body('queued'));
      await until(
        async () =>
          (await request(t.url).get('/health').set('authorization', `Bearer ${t.token}`)).body.cli.queued === 1,
      );
      is429(await chat(t, t.token, body('no room')), 'server_busy');
      is429(await waiting, 'queue_timeout');
      assert.equal((await hold).status, 504);
    } finally {
      await t.close();
    }
  });
});

// What a request costs and counts when it does not end normally: a client that leaves mid-stream,
// a client that stops reading, requests without a key, absurdly long strings, bad requests.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { describe, it } from 'node:test';
import request from 'supertest';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';

const body = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'sonnet',
  messages: [{ role: 'user', content }],
  ...extra,
});

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Streams a request, reads `deltas` content chunks, then drops the connection; returns the text it got. */
async function cutAfter(t: TestDaemon, token: string, content: string, deltas: number): Promise<string> {
  const controller = new AbortController();
  const res = await fetch(`${t.baseURL}/chat/completions`, {
    method: 'POST',
    signal: controller.signal,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body(content, { stream: true })),
  });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let got = 0;
  let buf = '';
  while (got < deltas) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    for (;;) {
      const end = buf.indexOf('\n\n');
      if (end === -1) break;
      const ev = buf.slice(0, end);
      buf = buf.slice(end + 2);
      const piece = /"content":"((?:[^"\\]|\\.)*)"/.exec(ev)?.[1];
      if (piece) {
        text += piece;
        got++;
      }
    }
  }
  controller.abort();
  return text;
}

function rows(t: TestDaemon) {
  return [...t.daemon.store.usage.export({ scope: { all: true } })];
}

describe('a client that leaves mid-stream', () => {
  it('is charged what it was sent (estimated when the CLI reported nothing), and its reservation is released at once', async () => {
    // The CLI ignores SIGTERM, so tearing the run down takes the whole kill grace (2 s).
    const t = await startTestDaemon({
      claudeEnv: {
        FAKE_CLAUDE_IGNORE_TERM: '1',
        FAKE_CLAUDE_DELAY_MS: '40',
        FAKE_CLAUDE_REPLY: 'once upon a time '.repeat(100),
      },
    });
    try {
      // Each request reserves its prompt plus 1024 tokens: with a budget of 1000 a held reservation blocks the next.
      const { token, key } = t.daemon.store.keys.add('kid', 'member', { dailyTokens: 1000 });
      const sent = await cutAfter(t, token, '[[fake:slow]] tell me a long story about budgets and aborts', 5);
      assert.ok(sent.length >= 30);
      // At once, while the first run is still being killed: the next request is admitted.
      const next = await request(t.url)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${token}`)
        .send(body('and now?'));
      assert.equal(next.status, 200, JSON.stringify(next.body));

      await until(() => rows(t).length === 2);
      const aborted = rows(t).find((r) => r.outcome === 'client_aborted')!;
      assert.ok(aborted, JSON.stringify(rows(t)));
      assert.equal(aborted.usage.estimated, true);
      assert.ok(aborted.usage.completion_tokens >= Math.ceil(sent.length / 4), JSON.stringify(aborted.usage));
      assert.ok(aborted.usage.prompt_tokens > 0);
      // The budget counts it.
      const spent = t.daemon.store.usage.tokensSince(key.id, Date.now() - 3600_000);
      const ok = rows(t).find((r) => r.outcome === 'ok')!;
      assert.equal(spent, aborted.usage.total_tokens + ok.usage.total_tokens);
    } finally {
      await t.close();
    }
  });

  it('streams cut short one after another spend a small budget', async () => {
    const t = await startTestDaemon({ claudeEnv: { FAKE_CLAUDE_DELAY_MS: '20' } });
    try {
      const { token } = t.daemon.store.keys.add('kid', 'member', { dailyTokens: 100 });
      let refused = 0;
      for (let i = 0; i < 8 && refused === 0; i++) {
        const res = await fetch(`${t.baseURL}/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(
            body('[[fake:slow]] a reply long enough to have many deltas in it, please', { stream: true }),
          ),
        });
        if (res.status === 429) {
          refused++;
          assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'budget_exceeded');
          break;
        }
        await res.body!.cancel();
        const n = i + 1;
        await until(() => rows(t).length >= n);
      }
      assert.equal(refused, 1, 'the budget ran out although every stream was cut');
      assert.ok(rows(t).every((r) => r.outcome === 'client_aborted' || r.outcome === 'rejected'));
    } finally {
      await t.close();
    }
  });
});

describe('a client that stops reading', () => {
  /** Streams a big reply, leaving it unread for `pauseMs` after the headers; returns the whole body. */
  function pausedRead(t: TestDaemon, pauseMs: number): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        `${t.baseURL}/chat/completions`,
        { method: 'POST', headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' } },
        (res) => {
          res.pause();
          const chunks: Buffer[] = [];
          setTimeout(() => {
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
            res.on('error', () =>
              resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
            );
            res.resume();
          }, pauseMs);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(body('[[fake:big-output]] go', { stream: true })));
    });
  }

  // An idle timeout a busy machine's CLI does not run into by itself (a fake CLI starved of CPU can
  // be silent for a second), and pauses well past it and past the client timeout.
  const config = { idleTimeout: 3, clientTimeout: 8 };
  const claudeEnv = { FAKE_CLAUDE_REPLY_BYTES: String(12 * 1024 * 1024), FAKE_CLAUDE_PIECE_BYTES: String(16 * 1024) };

  it('is not blamed on the CLI: a pause longer than the idle timeout still gets the whole reply', async () => {
    const t = await startTestDaemon({ config, claudeEnv });
    try {
      const r = await pausedRead(t, 5500);
      assert.equal(r.status, 200);
      assert.doesNotMatch(r.text, /backend_timeout/);
      assert.match(r.text, /data: \[DONE\]/);
    } finally {
      await t.close();
    }
  });

  it('gets its own error past --client-timeout', async () => {
    const t = await startTestDaemon({ config, claudeEnv });
    try {
      const r = await pausedRead(t, 11_000);
      assert.equal(r.status, 200);
      assert.match(r.text, /"code":"client_read_timeout"/);
      assert.doesNotMatch(r.text, /data: \[DONE\]/);
      await until(() => rows(t).length === 1);
      assert.equal(rows(t)[0]!.error_code, 'client_read_timeout');
      await until(() => t.daemon.children === 0);
    } finally {
      await t.close();
    }
  });
});

describe('what olp stores and counts for bad requests', () => {
  it('requests without a valid key write no ledger row', async () => {
    const t = await startTestDaemon();
    try {
      for (const auth of [undefined, 'Bearer olpk_wrong']) {
        const req = request(t.url).post('/v1/chat/completions').send(body('hi'));
        const res = await (auth ? req.set('authorization', auth) : req);
        assert.equal(res.status, 401);
      }
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(rows(t), []);
    } finally {
      await t.close();
    }
  });

  it('a 1 MB model id is cut in the ledger row, the log line and the error message', async () => {
    const t = await startTestDaemon();
    try {
      const model = `m${'x'.repeat(1024 * 1024)}`;
      const res = await request(t.url)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${t.token}`)
        .send({ model, messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(res.status, 404);
      assert.ok(res.body.error.message.length < 1000, 'the error message is bounded');
      await until(() => rows(t).length === 1);
      const row = rows(t)[0]!;
      assert.ok(row.requested_model!.length < 400, `stored ${row.requested_model!.length} chars`);
      assert.match(row.requested_model!, /…\[cut \d+ chars\]$/);
      const line = t.logs.find((l) => l.event === 'request' && l.status === 404)!;
      assert.ok(String(line.model).length < 400);
      assert.ok(JSON.stringify(t.logs).length < 200_000, 'no log line carries the whole string');
    } finally {
      await t.close();
    }
  });

  it("a key's requests that fail validation count against its requests per minute", async () => {
    const t = await startTestDaemon();
    try {
      const { token } = t.daemon.store.keys.add('kid', 'member', { rpm: 3 });
      const send = (b: object) =>
        request(t.url).post('/v1/chat/completions').set('authorization', `Bearer ${token}`).send(b);
      assert.equal((await send({ model: 'sonnet' })).status, 400);
      assert.equal((await send(body('hi', { model: 'no-such-model' }))).status, 404);
      assert.equal((await send(body('fine'))).status, 200);
      const res = await send(body('one too many'));
      assert.equal(res.status, 429);
      assert.equal(res.body.error.code, 'rate_limit_exceeded');
      // Over the limit, even a bad request is refused before anything else.
      assert.equal((await send({ model: 'sonnet' })).status, 429);
    } finally {
      await t.close();
    }
  });
});

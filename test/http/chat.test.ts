import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { recordedPids, readRecord, waitGone } from '../support/procs.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';

let t: TestDaemon;
before(async () => {
  t = await startTestDaemon({
    config: { idleTimeout: 2, timeout: 20, bodyLimit: 64 * 1024 * 1024, contextTokens: { claude: 100_000_000 } },
  });
});
after(async () => {
  await t.close();
});

const chat = (body: unknown, token = t.token) =>
  request(t.url)
    .post('/v1/chat/completions')
    .set('authorization', `Bearer ${token}`)
    .send(body as object);
const ask = (content: string, extra: Record<string, unknown> = {}) =>
  chat({ model: 'sonnet', messages: [{ role: 'user', content }], ...extra });
const withSystem = (system: string, extra: Record<string, unknown> = {}) =>
  chat({
    model: 'sonnet',
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: 'hi' },
    ],
    ...extra,
  });

function envelope(res: request.Response, status: number, code: string, type?: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.error.code, code);
  if (type) assert.equal(res.body.error.type, type);
  assert.equal(typeof res.body.error.message, 'string');
  assert.ok('param' in res.body.error);
  assert.match(res.headers['x-request-id'] ?? '', /^req_[0-9a-f]{32}$/);
}

describe('health', () => {
  it('/health needs no key; with the owner key it says whether claude is found', async () => {
    const res = await request(t.url).get('/health');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ok' });
    const full = await request(t.url).get('/health').set('authorization', `Bearer ${t.token}`);
    assert.equal(full.body.backends.claude.found, true);
  });
});

describe('bad input never gets a 500', () => {
  it('unknown model → 404 model_not_found listing valid ids', async () => {
    const res = await chat({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] });
    envelope(res, 404, 'model_not_found', 'invalid_request_error');
    assert.match(res.body.error.message, /sonnet/);
  });
  it('a model the CLI does not know → 404 from the CLI result', async () => {
    envelope(
      await chat({ model: 'claude-nonexistent-9', messages: [{ role: 'user', content: '[[fake:unknown-model]]' }] }),
      404,
      'model_not_found',
    );
  });
});

describe('CLI failures map to the error catalogue', () => {
  it('not logged in → 503, no retry, says how to fix', async () => {
    const res = await ask('[[fake:not-logged-in]]');
    envelope(res, 503, 'backend_not_logged_in');
    assert.match(res.body.error.message, /claude auth login/);
    assert.equal(res.headers['x-should-retry'], 'false');
  });
  it('rate limited → 429 with Retry-After', async () => {
    const res = await ask('[[fake:rate-limited]]');
    envelope(res, 429, 'backend_rate_limited');
    assert.ok(Number(res.headers['retry-after']) > 0);
    assert.equal(res.headers['x-should-retry'], 'true');
  });
  it('exit before reading stdin → 502', async () => {
    envelope(await withSystem('[[fake:exit-early]]'), 502, 'backend_error');
  });
  it('stdin closed unread → 502', async () => {
    envelope(await withSystem('[[fake:close-stdin]]'), 502, 'backend_error');
  });
  it('non-zero exit → 502 quoting stderr', async () => {
    const res = await ask('[[fake:exit-nonzero]]');
    envelope(res, 502, 'backend_error');
    assert.match(res.body.error.message, /something went wrong/);
  });
  it('garbage output → 502 backend_bad_output', async () => {
    envelope(await ask('[[fake:garbage]]'), 502, 'backend_bad_output');
  });
  it('garbage around a valid run is tolerated', async () => {
    const res = await ask('[[fake:garbage-mixed]] still fine');
    assert.equal(res.status, 200);
    assert.match(res.body.choices[0].message.content, /still fine/);
  });
  it('crash mid-stream, non-streaming → 502', async () => {
    envelope(await ask('[[fake:crash-mid-stream]] a longer reply so there are deltas'), 502, 'backend_error');
  });
  it('silent CLI → 504 after the idle timeout, and its process is gone', async () => {
    const res = await ask('[[fake:hang]]');
    envelope(res, 504, 'backend_timeout');
    const pids = recordedPids(t.recordDir).runs.filter((pid) => readRecord(t.recordDir, pid).stdinBytes !== undefined);
    assert.deepEqual(await waitGone(pids), []);
  });
  it('a CLI that ignores SIGTERM is SIGKILLed', async () => {
    envelope(await ask('[[fake:hang-hard]]'), 504, 'backend_timeout');
    assert.deepEqual(await waitGone(recordedPids(t.recordDir).runs), []);
  });
  it('EPIPE: a CLI that exits at once while a multi-megabyte prompt is written → clean 5xx, server keeps serving', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await chat({
        model: 'sonnet',
        messages: [
          { role: 'system', content: '[[fake:exit-early]]' },
          { role: 'user', content: 'y'.repeat(8 * 1024 * 1024) },
        ],
      });
      envelope(res, 502, 'backend_error');
    }
    assert.ok(
      t.logs.some((l) => l.event === 'stdin_write_error' && l.code === 'EPIPE'),
      'the EPIPE happened and was logged, not thrown',
    );
    assert.equal((await ask('still alive?')).status, 200);
  });
});

describe('logging', () => {
  it('one line per finished request with key, model, status, duration and tokens; no token in any line', async () => {
    const res = await ask('log me');
    const id = res.headers['x-request-id'];
    const lines = t.logs.filter((l) => l.requestId === id && l.event === 'request');
    assert.equal(lines.length, 1);
    const line = lines[0] as {
      key: string;
      model: string;
      status: number;
      durationMs: number;
      tokens: { prompt: number };
    };
    assert.deepEqual([line.key, line.model, line.status], ['tester', 'sonnet', 200]);
    assert.ok(line.durationMs >= 0 && line.tokens.prompt > 0);
    assert.ok(!JSON.stringify(t.logs).includes(t.token));
  });
});

describe('a missing or broken CLI binary', () => {
  it('not found → 503 backend_not_installed; /health says so', async () => {
    const d = await startTestDaemon({ config: { claudeBin: '/nonexistent/claude', codexBin: '/nonexistent/codex' } });
    try {
      const res = await request(d.url)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${d.token}`)
        .send({ model: 'sonnet', messages: [{ role: 'user', content: 'x' }] });
      envelope(res, 503, 'backend_not_installed', 'server_error');
      assert.match(res.body.error.message, /--claude-bin/);
      assert.equal(res.headers['x-should-retry'], 'false');
      const health = await request(d.url).get('/health').set('authorization', `Bearer ${d.token}`);
      assert.deepEqual([health.body.status, health.body.backends.claude.found], ['degraded', false]);
      assert.equal(d.daemon.store.keys.activeCount(), 1);
    } finally {
      await d.close();
    }
  });
  it('not executable → 503 backend_not_installed', async () => {
    const bin = join(mkdtempSync(join(tmpdir(), 'olp-noexec-')), 'claude');
    writeFileSync(bin, '#!/bin/sh\necho hi\n', { mode: 0o644 });
    const d = await startTestDaemon({ config: { claudeBin: bin } });
    try {
      const res = await request(d.url)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${d.token}`)
        .send({ model: 'sonnet', messages: [{ role: 'user', content: 'x' }] });
      envelope(res, 503, 'backend_not_installed');
    } finally {
      await d.close();
    }
  });
});

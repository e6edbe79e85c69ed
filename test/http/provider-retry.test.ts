// A CLI that cannot reach its provider: it retries (claude's api_retry, codex's Reconnecting…)
// instead of answering. Retries are not progress, a run that only retries is bounded, and a CLI
// olp knows is logged out is not started at all.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { recordedPids } from '../support/procs.js';

async function ask(
  t: TestDaemon,
  model: string,
  content: string,
): Promise<{ status: number; body: { error?: { code: string; message: string } }; ms: number; headers: Headers }> {
  const t0 = performance.now();
  const res = await fetch(`${t.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
  });
  return {
    status: res.status,
    body: (await res.json()) as { error?: { code: string; message: string } },
    ms: performance.now() - t0,
    headers: res.headers,
  };
}

for (const [backend, model, scenario] of [
  ['claude', 'sonnet', 'api-retry-forever'],
  ['codex', 'codex', 'reconnect-forever'],
] as const) {
  describe(`${backend}: retrying its provider`, () => {
    it('retry lines do not reset the idle timeout; the answer names the provider problem', async () => {
      const t = await startTestDaemon({ config: { idleTimeout: 1, retryTimeout: 60 } });
      try {
        const r = await ask(t, model, `[[fake:${scenario}]] hi`);
        assert.equal(r.status, 503, JSON.stringify(r.body));
        assert.equal(r.body.error?.code, 'backend_unavailable');
        assert.match(r.body.error!.message, /provider/);
        assert.match(r.body.error!.message, backend === 'claude' ? /attempt \d+\/10: HTTP 529/ : /Reconnecting/);
        assert.ok(r.ms < 4000, `took ${r.ms} ms`);
        assert.equal(r.headers.get('retry-after'), '30');
      } finally {
        await t.close();
      }
    });

    it('a run that only retries is stopped at --retry-timeout', async () => {
      const t = await startTestDaemon({ config: { idleTimeout: 30, retryTimeout: 1 } });
      try {
        const r = await ask(t, model, `[[fake:${scenario}]] hi`);
        assert.equal(r.status, 503, JSON.stringify(r.body));
        assert.equal(r.body.error?.code, 'backend_unavailable');
        assert.ok(r.ms < 4000, `took ${r.ms} ms`);
      } finally {
        await t.close();
      }
    });
  });
}

describe('a CLI olp knows is logged out', () => {
  it('answers 503 backend_not_logged_in at once, without starting the CLI', async () => {
    const t = await startTestDaemon({ codexEnv: { FAKE_CODEX_LOGGED_IN: '0' } });
    try {
      // The status check (what /health and start-up run) finds codex logged out.
      const health = await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } });
      const detail = (await health.json()) as { backends: Record<string, { login: string }> };
      assert.equal(detail.backends.codex?.login, 'not_logged_in');
      const before = recordedPids(t.recordDir).runs.length;
      // Even a run that would retry for minutes is not started.
      const r = await ask(t, 'codex', '[[fake:reconnect-forever]] hi');
      assert.equal(r.status, 503);
      assert.equal(r.body.error?.code, 'backend_not_logged_in');
      assert.match(r.body.error!.message, /codex login/);
      assert.ok(r.ms < 500, `took ${r.ms} ms`);
      assert.equal(recordedPids(t.recordDir).runs.length, before, 'no CLI was started');
      // claude, logged in, still answers.
      assert.equal((await ask(t, 'sonnet', 'hello')).status, 200);
    } finally {
      await t.close();
    }
  });
});

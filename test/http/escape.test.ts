// CLIs whose children escape: a grandchild that holds stdout (in the CLI's process group or in a
// session of its own), one that leaves quietly, and one that keeps a hung run's pipes open.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { leftoverWorkspaces, recordedPids, waitGone } from '../support/procs.js';
import { waitFor } from '../support/wait.js';

// The idle timeout is long enough that "answered long before it" holds on a busy machine (a
// 2-core one at a load of 20 takes seconds where a quiet one takes 100 ms): an answer that waited
// for it would take IDLE_S or more.
const IDLE_S = 20;
const PROMPTLY_MS = (IDLE_S * 1000) / 2;
let t: TestDaemon;
before(async () => {
  t = await startTestDaemon({ config: { idleTimeout: IDLE_S, timeout: 120 } });
});
after(async () => t.close());

async function ask(directive: string, stream = false): Promise<{ status: number; body: string; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(`${t.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sonnet', stream, messages: [{ role: 'user', content: `${directive} hello` }] }),
  });
  const body = await res.text();
  return { status: res.status, body, ms: performance.now() - t0 };
}

/** Grandchildren recorded since `seen`. */
function newGrandchildren(seen: Set<number>): number[] {
  const now = recordedPids(t.recordDir).grandchildren.filter((p) => !seen.has(p));
  for (const p of now) seen.add(p);
  return now;
}

describe('escaping grandchildren', () => {
  const seen = new Set<number>();

  for (const scenario of ['grandchild-stdout', 'setsid-stdout', 'setsid-quiet']) {
    for (const stream of [false, true]) {
      it(`${scenario}${stream ? ' (stream)' : ''}: answered as soon as the result is read; the grandchild is killed`, async (ctx) => {
        const r = await ask(`[[fake:${scenario}]]`, stream);
        ctx.diagnostic(`${scenario}: answered in ${r.ms.toFixed(0)} ms`);
        assert.equal(r.status, 200, r.body);
        assert.match(r.body, stream ? /"content":"Hello fr"/ : /Hello from fake claude/);
        // Answering must not wait for the idle timeout (nor for the grandchild's 300 s).
        assert.ok(r.ms < PROMPTLY_MS, `took ${r.ms} ms`);
        const pids = newGrandchildren(seen);
        assert.equal(pids.length, 1);
        assert.deepEqual(await waitGone(pids), [], 'the grandchild was killed');
      });
    }
  }

  it('a hung CLI whose setsid grandchild holds its pipes still times out, and both are killed', async () => {
    // Its own daemon, with a short idle timeout to run into (and a total one far beyond it).
    const h = await startTestDaemon({ config: { idleTimeout: 3, timeout: 120 } });
    try {
      const res = await fetch(`${h.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: '[[fake:setsid-hang]] hello' }] }),
      });
      const body = await res.text();
      assert.equal(res.status, 504, body);
      assert.equal(JSON.parse(body).error.code, 'backend_timeout');
      assert.match(JSON.parse(body).error.message, /produced no output for 3 s/, 'the idle timeout, not the total one');
      const pids = recordedPids(h.recordDir).grandchildren;
      assert.deepEqual(await waitGone(pids), []);
      await h.daemon.settled();
      assert.deepEqual(leftoverWorkspaces(h.stateDir), []);
    } finally {
      await h.close();
    }
  });
});

describe('shutdown with an escaped grandchild in flight', () => {
  it('completes within the grace plus a few seconds and leaves nothing running', async (ctx) => {
    const d = await startTestDaemon({ config: { idleTimeout: 60, timeout: 120, shutdownGrace: 1 } });
    const pending = fetch(`${d.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${d.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: '[[fake:setsid-hang]] hi' }] }),
    }).then(
      (res) => res.status,
      () => 'closed',
    );
    await waitFor(() => recordedPids(d.recordDir).grandchildren.length > 0, undefined, 'the grandchild');
    const { runs, grandchildren } = recordedPids(d.recordDir);
    assert.equal(grandchildren.length, 1);
    const t0 = performance.now();
    await d.close(true);
    const ms = performance.now() - t0;
    ctx.diagnostic(`shutdown took ${ms.toFixed(0)} ms with a setsid grandchild holding the CLI's stdout`);
    // The grace and a kill (a few seconds at most on a busy machine), not the 60 s idle timeout.
    assert.ok(ms < 1000 + 15_000, `shutdown took ${ms} ms`);
    assert.ok([503, 'closed'].includes(await pending));
    assert.deepEqual(await waitGone([...runs, ...grandchildren]), []);
    assert.deepEqual(leftoverWorkspaces(d.stateDir), []);
    await d.close();
  });
});

describe('codex: the same guarantees', () => {
  it('setsid-stdout: answered at turn.completed; the grandchild is killed', async () => {
    const seen = new Set(recordedPids(t.recordDir).grandchildren);
    const t0 = performance.now();
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'codex', messages: [{ role: 'user', content: '[[fake:setsid-stdout]] hi' }] }),
    });
    const text = await res.text();
    const ms = performance.now() - t0;
    assert.equal(res.status, 200, text);
    assert.match(text, /Hello from fake codex/);
    assert.ok(ms < PROMPTLY_MS, `took ${ms} ms`);
    const pids = newGrandchildren(seen);
    assert.equal(pids.length, 1);
    assert.deepEqual(await waitGone(pids), []);
  });
});

describe("a failing CLI's stderr", () => {
  it('reaches the client and the log with secrets redacted and without the echoed prompt', async () => {
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'sonnet',
        messages: [{ role: 'user', content: '[[fake:stderr-secret]] my bank PIN is 4921, keep it between us' }],
      }),
    });
    const text = await res.text();
    assert.equal(res.status, 502, text);
    assert.doesNotMatch(text, /olpk_abcdef|sk-ant-api03|PIN is 4921/);
    assert.match(text, /\[REDACTED\]/);
    const logged = JSON.stringify(t.logs);
    assert.doesNotMatch(logged, /olpk_abcdef|sk-ant-api03|PIN is 4921/);
  });
});

describe('one enormous output line', () => {
  it('stops the CLI past 64 MiB with 502 backend_bad_output, without stalling other requests', async () => {
    const big = fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: '[[fake:huge-line]] hi' }] }),
    });
    // Meanwhile a normal request is answered promptly.
    const small = await ask('quick one');
    assert.equal(small.status, 200);
    assert.ok(small.ms < PROMPTLY_MS, `a request beside the huge line took ${small.ms} ms`);
    const res = await big;
    const body = (await res.json()) as { error: { code: string; message: string } };
    assert.equal(res.status, 502);
    assert.equal(body.error.code, 'backend_bad_output');
    assert.match(body.error.message, /64 MiB/);
  });
});

// 200 requests that end in every way a request can end, then a count of what is left:
// workspaces on disk and CLI processes (and their grandchildren) alive, checked by pid.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { leftoverWorkspaces, recordedPids, waitGone } from '../support/procs.js';

let t: TestDaemon;
before(async () => {
  t = await startTestDaemon({ config: { idleTimeout: 1, timeout: 20 } });
});
after(async () => t.close());

type Kind = 'ok' | 'ok-stream' | 'cli-error' | 'timeout' | 'client-abort' | 'crash-mid-stream' | 'grandchild';
const KINDS: Kind[] = ['ok', 'ok-stream', 'cli-error', 'timeout', 'client-abort', 'crash-mid-stream', 'grandchild'];

async function one(kind: Kind): Promise<string> {
  const directive = {
    ok: '',
    'ok-stream': '',
    'cli-error': '[[fake:exit-nonzero]]',
    timeout: '[[fake:hang]]',
    'client-abort': '[[fake:slow]]',
    'crash-mid-stream': '[[fake:crash-mid-stream]]',
    grandchild: '[[fake:grandchild]]',
  }[kind];
  const stream = kind === 'ok-stream' || kind === 'client-abort' || kind === 'crash-mid-stream';
  const controller = new AbortController();
  const res = await fetch(`${t.baseURL}/chat/completions`, {
    method: 'POST',
    signal: controller.signal,
    headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'sonnet',
      stream,
      messages: [
        { role: 'system', content: directive || 'plain' },
        { role: 'user', content: `leak test ${kind}, long enough for several deltas` },
      ],
    }),
  });
  if (kind === 'client-abort') {
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    return 'aborted';
  }
  await res.text();
  return String(res.status);
}

it('200 mixed requests leave zero workspaces and zero processes behind', async (ctx) => {
  const jobs = Array.from({ length: 200 }, (_, i) => KINDS[i % KINDS.length]!);
  const statuses: Record<string, number> = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: 12 }, async () => {
      while (next < jobs.length) {
        const kind = jobs[next++]!;
        const status = await one(kind).catch((err: Error) => `error:${err.name}`);
        statuses[`${kind}:${status}`] = (statuses[`${kind}:${status}`] ?? 0) + 1;
      }
    }),
  );
  // Every kind ended the way it should.
  for (const key of Object.keys(statuses)) {
    assert.match(
      key,
      /^(ok|ok-stream|grandchild|crash-mid-stream):200$|^cli-error:502$|^timeout:504$|^client-abort:aborted$/,
      JSON.stringify(statuses),
    );
  }
  // The last aborted request may still be being torn down: wait for in-flight work to end.
  const deadline = Date.now() + 10_000;
  while (t.daemon.children > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));

  await t.daemon.settled();
  const { runs, grandchildren } = recordedPids(t.recordDir);
  const aliveRuns = await waitGone(runs);
  const aliveGrandchildren = await waitGone(grandchildren);
  const workspaces = leftoverWorkspaces(t.stateDir);
  ctx.diagnostic(`statuses ${JSON.stringify(statuses)}`);
  ctx.diagnostic(
    `spawned ${runs.length} CLI processes and ${grandchildren.length} grandchildren; alive after: ${aliveRuns.length} + ${aliveGrandchildren.length}; leftover workspaces: ${workspaces.length}`,
  );
  assert.equal(runs.length, 200);
  assert.ok(grandchildren.length >= 28);
  assert.deepEqual(aliveRuns, []);
  assert.deepEqual(aliveGrandchildren, []);
  assert.deepEqual(workspaces, []);
  assert.equal(t.daemon.children, 0);
});

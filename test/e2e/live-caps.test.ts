// What bounds the live CLIs a key holds beside its running turns (workers, spares, parked
// tool-call turns): revoking, disabling or expiring the key stops them at once.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { OLP_BIN } from '../support/paths.js';
import { isAlive, recordedPids, waitGone } from '../support/procs.js';

type Msg = OpenAI.ChatCompletionMessageParam;

const WEATHER: OpenAI.ChatCompletionTool = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };
/** A user message that makes the fake model call get_weather. */
const asking = (city: string): Msg => ({ role: 'user', content: `Weather in ${city}? [[fake-tools:${JSON.stringify([{ name: 'get_weather', arguments: { city } }])}]]` });

async function waitFor(cond: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

function olp(t: TestDaemon, args: string[]): void {
  const r = spawnSync(process.execPath, [OLP_BIN, ...args, '--state-dir', t.stateDir], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: t.operatorHome } });
  assert.equal(r.status, 0, r.stderr);
}

interface Live {
  pid: number;
  slot: string;
  state: string;
}

async function liveClis(t: TestDaemon): Promise<Live[]> {
  const h = (await (await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } })).json()) as { workers: { live: Live[] } };
  return h.workers.live;
}

/**
 * Gives the key a live worker (a finished turn), a spare that is up (started after it) and a
 * parked tool-call turn; returns the three pids.
 */
async function holdClis(t: TestDaemon, token: string, name: string): Promise<{ worker: number; spare: number; parked: number }> {
  const client = new OpenAI({ baseURL: t.baseURL, apiKey: token, maxRetries: 0 });
  await client.chat.completions.create({ model: 'sonnet', messages: [{ role: 'user', content: `hello from ${name}` }] });
  const keyId = t.daemon.store.keys.get(name)!.id;
  const mine = async () => (await liveClis(t)).filter((w) => w.slot.startsWith(`${keyId}/`));
  await waitFor(async () => (await mine()).some((w) => w.state === 'spare') && (await mine()).some((w) => w.state === 'idle'));
  const live = await mine();
  const before = new Set(recordedPids(t.recordDir).runs);
  const r = await client.chat.completions.create({ model: 'sonnet', messages: [asking(name)], tools: [WEATHER] });
  assert.equal(r.choices[0]!.finish_reason, 'tool_calls');
  const parked = recordedPids(t.recordDir).runs.find((p) => !before.has(p))!;
  assert.ok(isAlive(parked), 'the tool-call turn waits, parked');
  return { worker: live.find((w) => w.state === 'idle')!.pid, spare: live.find((w) => w.state === 'spare')!.pid, parked };
}

describe("a key's live CLIs when the key stops", () => {
  for (const [how, args] of [
    ['revoked', (name: string) => ['keys', 'revoke', name]],
    ['disabled', (name: string) => ['keys', 'set', name, '--disable']],
  ] as const) {
    it(`olp keys ${how === 'revoked' ? 'revoke' : 'set --disable'} (another process): its worker, spare and parked turn are gone within a second; other keys' stay`, async () => {
      const t = await startTestDaemon({ config: { workers: true, prestart: true } });
      try {
        const alice = t.daemon.store.keys.add('alice', 'member').token;
        const mine = await holdClis(t, alice, 'alice');
        const theirs = await holdClis(t, t.token, 'tester');
        const started = Date.now();
        olp(t, args('alice'));
        const left = await waitGone([mine.worker, mine.spare, mine.parked], 1500);
        assert.deepEqual(left, [], `alice's CLIs gone ${Date.now() - started} ms after the command started`);
        for (const pid of [theirs.worker, theirs.spare, theirs.parked]) assert.ok(isAlive(pid), `another key's CLI ${pid} is untouched`);
        assert.ok(t.logs.some((l) => l.event === 'key_clis_retired' && l.reason === how));
      } finally {
        await t.close();
      }
    });
  }

  it('a key whose expiry passes loses its live CLIs within a second of it, with no write to notice', async () => {
    const t = await startTestDaemon({ config: { workers: true, prestart: true } });
    try {
      const expiresAt = new Date(Date.now() + 2500).toISOString();
      const bob = t.daemon.store.keys.add('bob', 'member', { expiresAt }).token;
      const mine = await holdClis(t, bob, 'bob');
      const theirs = await holdClis(t, t.token, 'tester');
      const wait = Date.parse(expiresAt) - Date.now();
      assert.ok(wait > 0, 'set up before the expiry');
      await new Promise((r) => setTimeout(r, wait));
      const left = await waitGone([mine.worker, mine.spare, mine.parked], 1000);
      assert.deepEqual(left, []);
      for (const pid of [theirs.worker, theirs.spare, theirs.parked]) assert.ok(isAlive(pid));
      assert.ok(t.logs.some((l) => l.event === 'key_clis_retired' && l.reason === 'expired'));
    } finally {
      await t.close();
    }
  });
});

// A key's session pool follows its conversations going on at once (an agent's sub-agents and
// parallel threads): each keeps its slot and its live worker instead of rotating another's.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { OLP_BIN } from '../support/paths.js';
import { recordedPids } from '../support/procs.js';

type Msg = OpenAI.ChatCompletionMessageParam;

/** Runs `n` conversations of one key, `turns` turns each, a round of every one's next turn at a time (at most `parallel` at once); returns each turn's request id by conversation. */
async function interleave(t: TestDaemon, token: string, n: number, turns: number, parallel = n): Promise<string[][]> {
  const client = new OpenAI({ baseURL: t.baseURL, apiKey: token, maxRetries: 0 });
  const chats: Msg[][] = Array.from({ length: n }, (_, c) => [{ role: 'system', content: `agent ${c}` }]);
  const ids: string[][] = chats.map(() => []);
  for (let turn = 0; turn < turns; turn++) {
    for (let from = 0; from < n; from += parallel)
      await Promise.all(
        chats.slice(from, from + parallel).map(async (messages, i) => {
          const c = from + i;
          messages.push({ role: 'user', content: `conversation ${c}, step ${turn}` });
          const { data, response } = await client.chat.completions.create({ model: 'sonnet', messages }).withResponse();
          messages.push({ role: 'assistant', content: data.choices[0]!.message.content! });
          ids[c]!.push(response.headers.get('x-request-id')!);
        }),
      );
  }
  return ids;
}

async function rowsOf(t: TestDaemon, count: number) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const rows = [...t.daemon.store.usage.export({ scope: { all: true } })];
    if (rows.length >= count || Date.now() > deadline) return new Map(rows.map((r) => [r.request_id, r]));
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('session slots follow the conversations going on', () => {
  it('eight interleaved conversations of one key: after the first turn of each, every turn runs warm on its own CLI; a key limited to 2 at once keeps --session-pool slots', async () => {
    const t = await startTestDaemon({
      config: { workers: true, prestart: false, maxConcurrency: 8, maxWorkers: 8, maxProcesses: 16 },
    });
    try {
      const ids = await interleave(t, t.token, 8, 4);
      const rows = await rowsOf(t, 32);
      const how = ids.map((turns) =>
        turns.map((id) => {
          const r = rows.get(id)!;
          return r.run_mode === 'warm' ? 'warm' : `${r.session_mode}/${r.rotation_reason ?? '-'}`;
        }),
      );
      for (const [c, modes] of how.entries())
        assert.deepEqual(modes, ['fresh/initial', 'warm', 'warm', 'warm'], `conversation ${c}: ${modes.join(' ')}`);
      assert.equal(recordedPids(t.recordDir).runs.length, 8, 'one claude process a conversation, started once');
      const mine = t.daemon.store.slots.list().filter((s) => s.backend === 'claude');
      assert.deepEqual(
        mine.map((s) => [s.slot, s.turns, s.rotations]),
        Array.from({ length: 8 }, (_, i) => [i, 4, 1]),
      );
      // The operator sees the eight slots and their workers.
      const health = (await (
        await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } })
      ).json()) as { workers: { live: { slot: string; turns: number }[] } };
      assert.deepEqual(
        health.workers.live.map((w) => [w.slot.split('/').at(-1), w.turns]).sort(),
        Array.from({ length: 8 }, (_, i) => [String(i), 4]),
      );
      const list = spawnSync(
        process.execPath,
        [OLP_BIN, 'sessions', 'list', '--key', 'tester', '--state-dir', t.stateDir],
        { encoding: 'utf8' },
      );
      assert.equal(list.status, 0, list.stderr);
      const lines = list.stdout.trim().split('\n').slice(1);
      assert.deepEqual(
        lines.map((l) => l.split(/\s+/)[2]),
        ['0', '1', '2', '3', '4', '5', '6', '7'],
      );
      for (const l of lines)
        assert.match(l, /^tester\s+claude\s+\d\s+[0-9a-f]{8}…\s+\S+\s+\S+\s+4\s+1\s+initial\s+ready/);

      // A key limited to two requests at once: its pool stays at --session-pool (3).
      const pair = t.daemon.store.keys.add('pair', 'member', { concurrency: 2 }).token;
      const pairId = t.daemon.store.keys.get('pair')!.id;
      await interleave(t, pair, 8, 2, 2);
      assert.equal(t.daemon.store.slots.list().filter((s) => s.keyId === pairId).length, 3);
    } finally {
      await t.close();
    }
  });
});

// Live workers: a continued conversation is answered by the claude process kept from its last turn.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { isAlive, leftoverWorkspaces, readRecord, recordedPids } from '../support/procs.js';

type Msg = OpenAI.ChatCompletionMessageParam;

interface History {
  historyTurns: number;
  said: string[];
  pid: number;
  turn: number;
}

const startWorkers = (config: Record<string, unknown> = {}, claudeEnv: Record<string, string> = {}) => startTestDaemon({ config: { workers: true, ...config }, claudeEnv });

function runModes(t: TestDaemon): string[] {
  return t.logs.filter((l) => l.event === 'request' && l.path === '/v1/chat/completions').map((l) => String(l.run ?? '-'));
}

async function waitFor(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A conversation whose fake CLI answers each turn with what it remembers (see the fake's report-history). */
function conversation(t: TestDaemon, token = t.token) {
  const client = new OpenAI({ baseURL: t.baseURL, apiKey: token, maxRetries: 0 });
  const messages: Msg[] = [{ role: 'system', content: '[[fake:report-history]]' }];
  return {
    client,
    messages,
    async say(text: string, extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}): Promise<History> {
      messages.push({ role: 'user', content: text });
      const r = await client.chat.completions.create({ model: 'sonnet', messages, ...extra });
      const reply = r.choices[0]!.message.content!;
      messages.push({ role: 'assistant', content: reply });
      return JSON.parse(reply) as History;
    },
  };
}

describe('live workers', () => {
  it('a 6-turn conversation starts one claude process; turns 2-6 go to it with only the new text', async () => {
    const t = await startWorkers();
    try {
      const c = conversation(t);
      const pids = new Set<number>();
      for (let i = 1; i <= 6; i++) {
        const h = await c.say(`question ${i}`);
        assert.equal(h.historyTurns, i - 1, 'the process remembers the conversation');
        assert.equal(h.turn, i, 'turn i of one process');
        pids.add(h.pid);
      }
      assert.equal(pids.size, 1);
      assert.equal(recordedPids(t.recordDir).runs.length, 1, 'one claude process started in all');
      const rec = readRecord(t.recordDir, [...pids][0]!);
      assert.equal(rec.stdin, 'question 6', 'only the new user turn is written');
      await waitFor(() => runModes(t).length === 6);
      assert.deepEqual(runModes(t), ['cold', 'warm', 'warm', 'warm', 'warm', 'warm']);
      const rows = [...t.daemon.store.usage.export({ scope: { all: true } })];
      assert.deepEqual(rows.map((r) => r.run_mode), ['cold', 'warm', 'warm', 'warm', 'warm', 'warm']);
      assert.ok(isAlive([...pids][0]!), 'the worker waits for the next turn');
      assert.equal(leftoverWorkspaces(t.stateDir).length, 1, "the worker's workspace lives with it");
    } finally {
      await t.close(true);
    }
    // Shutdown: the worker is gone, and so is its workspace.
    const pid = recordedPids(t.recordDir).runs[0]!;
    assert.ok(!isAlive(pid));
    assert.deepEqual(leftoverWorkspaces(t.stateDir), []);
    await t.close();
  });
});

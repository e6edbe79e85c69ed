// A stop sequence on a live codex worker (app-server): the streamed reply ends before the
// sequence, olp interrupts the worker's turn (turn/interrupt) instead of stopping the process,
// and the same process answers the conversation's next turn.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { isAlive, readRecord, recordedPids } from '../support/procs.js';
import { waitFor } from '../support/wait.js';

/** A message long enough that a worker slowed to 40 ms a delta is still answering at the sequence. */
const LONG = `alpha STOPHERE beta ${'and then a great deal more '.repeat(6)}`;
const BEFORE = 'Hello from fake codex. You said: alpha ';

/** The codex app-server workers the fake recorded (pids, oldest first). */
function appServers(t: TestDaemon): number[] {
  return recordedPids(t.recordDir).runs.filter((p) => readRecord(t.recordDir, p).argv[0] === 'app-server');
}

/** Waits for an idle codex worker that has served no turn yet (the app-server that loaded the thread). */
async function idleWorker(t: TestDaemon): Promise<void> {
  await waitFor(
    async () => {
      const res = await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } });
      const { live } = ((await res.json()) as { workers: { live: { slot: string; state: string; turns: number }[] } })
        .workers;
      return live.some((w) => w.slot.includes('/codex/') && w.state === 'idle' && w.turns === 0);
    },
    undefined,
    'the codex worker',
  );
}

describe('a stop sequence on a live codex worker', () => {
  it('interrupts its turn: the reply ends at the sequence; the same worker answers the next turn', async () => {
    const t = await startTestDaemon({
      config: { workers: true, prestart: false },
      codexEnv: { FAKE_CODEX_DELAY_MS: '40' },
    });
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'hello there' }];
      const a = await client.chat.completions.create({ model: 'codex', messages });
      await idleWorker(t);
      const [worker] = appServers(t);
      messages.push({ role: 'assistant', content: a.choices[0]!.message.content! }, { role: 'user', content: LONG });

      const stream = await client.chat.completions.create({
        model: 'codex',
        messages,
        stop: ['STOPHERE'],
        stream: true,
      });
      let text = '';
      const reasons: (string | null)[] = [];
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        if (chunk.choices[0]?.finish_reason) reasons.push(chunk.choices[0].finish_reason);
      }
      assert.equal(text, BEFORE);
      assert.deepEqual(reasons, ['stop']);
      const runs = () =>
        t.logs.filter((l) => l.event === 'request' && l.path === '/v1/chat/completions').map((l) => String(l.run));
      await waitFor(() => runs().length === 2, undefined, 'two request lines');
      assert.deepEqual(runs(), ['cold', 'warm']);
      assert.ok(isAlive(worker!), 'the worker lives on');
      assert.ok(!t.logs.some((l) => l.event === 'worker_retired'), 'no worker was retired');

      // codex 0.171 reports no usage for a turn it interrupted: the row charges what was sent.
      const all = () => [...t.daemon.store.usage.export({ scope: { all: true } })];
      await waitFor(() => all().length === 2, undefined, 'the usage rows');
      const row = all()[1]!;
      assert.equal(row.outcome, 'ok');
      assert.equal(row.http_status, 200);
      assert.equal(row.usage.estimated, true);

      messages.push({ role: 'assistant', content: text }, { role: 'user', content: 'go on' });
      const c = await client.chat.completions.create({ model: 'codex', messages });
      assert.equal(c.choices[0]!.message.content, 'Hello from fake codex. You said: go on');
      // The turn's own share of the thread's total: the interrupted turn added nothing to it.
      assert.equal(c.usage!.completion_tokens, 10);
      await waitFor(() => runs().length === 3, undefined, 'three request lines');
      assert.equal(runs()[2], 'warm');
      assert.deepEqual(appServers(t), [worker], 'one app-server in all');
      const rec = readRecord(t.recordDir, worker!) as unknown as { stdin: string; turn: number; historyTurns: number };
      assert.deepEqual([rec.stdin, rec.turn], ['go on', 2], "the worker's second turn");
    } finally {
      await t.close();
    }
  });
});

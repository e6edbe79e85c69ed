// codex workers on the real binary (pinned devDependency) against a loopback stand-in for the
// OpenAI Responses API: after a cold `codex exec` turn, `codex app-server` loads the thread and
// answers the conversation's next turns, with the history, the developer instructions and each
// turn's own usage; a stop sequence interrupts a worker's turn and the worker answers the next;
// a failed turn retires it.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { assertUnderstood } from '../support/real.js';
import { REAL_CODEX } from '../support/paths.js';
import { isAlive, leftoverWorkspaces } from '../support/procs.js';
import { waitFor } from '../support/wait.js';
import {
  codexStandInConfig,
  CODEX_STAND_IN_ENV,
  startResponsesStandIn,
  type ResponsesStandIn,
} from '../support/responses-stand-in.js';

let api: ResponsesStandIn;
let t: TestDaemon;
let client: OpenAI;

before(async () => {
  assert.ok(existsSync(REAL_CODEX), `the real codex CLI is missing at ${REAL_CODEX}: run npm ci`);
  api = await startResponsesStandIn();
  t = await startTestDaemon({
    config: {
      codexBin: REAL_CODEX,
      timeout: 60,
      idleTimeout: 30,
      workers: true,
      codexConfig: codexStandInConfig(api.url),
    },
    codexEnv: CODEX_STAND_IN_ENV,
  });
  client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
});
after(async () => {
  const logs = t?.logs ?? [];
  await t?.close();
  await api?.close();
  assertUnderstood(logs);
});

interface Live {
  pid: number;
  state: string;
  slot: string;
  turns: number;
}

/** Waits for a codex worker that has just loaded its thread (no turn served yet) and returns it. */
async function codexWorker(): Promise<Live> {
  for (let i = 0; i < 300; i++) {
    const res = await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } });
    const live = ((await res.json()) as { workers: { live: Live[] } }).workers.live;
    const w = live.find((l) => l.slot.includes('/codex/') && l.state === 'idle' && l.turns === 0);
    if (w) return w;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no codex worker came up');
}

/** The usage ledger's rows, oldest first. */
function rows() {
  return [...t.daemon.store.usage.export({ scope: { all: true } })];
}

function runModes(): string[] {
  return t.logs
    .filter((l) => l.event === 'request' && l.path === '/v1/chat/completions')
    .map((l) => String(l.run ?? '-'));
}

describe('real codex app-server as a live worker', () => {
  it('turns 2-4 go to the app-server: history and developer instructions kept, deltas streamed, each turn its own usage', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'system', content: 'Be brief. CODEX-WORKER-MARK' }];
    const modesBefore = runModes().length;
    let worker: Live | undefined;
    for (let i = 1; i <= 4; i++) {
      if (i === 2) worker = await codexWorker();
      messages.push({ role: 'user', content: `codex turn ${i}` });
      const before = api.requests.length;
      const res = await client.chat.completions.create({ model: 'codex', messages });
      assert.equal(res.choices[0]!.message.content, `responses stand-in heard: codex turn ${i}`);
      messages.push({ role: 'assistant', content: res.choices[0]!.message.content! });
      const sent = JSON.stringify(api.requests.slice(before).at(-1)!);
      for (let j = 1; j < i; j++) assert.match(sent, new RegExp(`codex turn ${j}\\b`), `turn ${i} carries turn ${j}`);
      assert.match(sent, /CODEX-WORKER-MARK/, 'the developer instructions are still there');
      // The stand-in reports the same counts for every request: a turn's own share, not the thread's total.
      if (i > 1)
        assert.ok(
          res.usage!.prompt_tokens > 0 && res.usage!.prompt_tokens < 3 * 1200,
          `turn ${i} usage ${JSON.stringify(res.usage)}`,
        );
    }
    assert.deepEqual(runModes().slice(modesBefore), ['cold', 'warm', 'warm', 'warm']);
    assert.ok(worker && isAlive(worker.pid));
  });

  it("a stop sequence mid-stream interrupts the worker's turn (turn/interrupt); the same worker answers the next turn warm", async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'a codex chat to be cut short' }];
    const r1 = await client.chat.completions.create({ model: 'codex', messages });
    messages.push(
      { role: 'assistant', content: r1.choices[0]!.message.content! },
      { role: 'user', content: 'alpha STOPHERE beta and then a good deal more text' },
    );
    const worker = await codexWorker();
    const modesBefore = runModes().length;
    const rowsBefore = rows().length;
    // 150 ms between 6-character deltas: the interrupt lands mid-stream.
    api.deltas = true;
    api.deltaMs = 150;
    let text = '';
    try {
      const stream = await client.chat.completions.create({
        model: 'codex',
        messages,
        stop: ['STOPHERE'],
        stream: true,
      });
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    } finally {
      api.deltas = false;
      api.deltaMs = 0;
    }
    assert.equal(text, 'responses stand-in heard: alpha ');
    assert.ok(isAlive(worker.pid), 'the worker lives on');
    // codex reports no usage for the turn it interrupted: the row charges what was sent.
    await waitFor(() => rows().length === rowsBefore + 1, undefined, 'the usage row');
    assert.equal(rows().at(-1)!.usage.estimated, true);
    messages.push({ role: 'assistant', content: text }, { role: 'user', content: 'go on after the cut' });
    const r3 = await client.chat.completions.create({ model: 'codex', messages });
    assert.equal(r3.choices[0]!.message.content, 'responses stand-in heard: go on after the cut');
    // Its own share of the thread's total (the stand-in's counts for one request), not the thread's.
    assert.deepEqual([r3.usage!.prompt_tokens, r3.usage!.completion_tokens], [1200, 12]);
    assert.deepEqual(runModes().slice(modesBefore), ['warm', 'warm']);
    const res = await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } });
    const live = ((await res.json()) as { workers: { live: Live[] } }).workers.live;
    assert.ok(
      live.some((w) => w.pid === worker.pid && w.turns === 2),
      'the same process served both turns',
    );
  });

  it('a failed turn retires the app-server worker; the retried turn runs cold', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'codex failing chat one' }];
    const r1 = await client.chat.completions.create({ model: 'codex', messages });
    messages.push(
      { role: 'assistant', content: r1.choices[0]!.message.content! },
      { role: 'user', content: 'codex failing chat two' },
    );
    const worker = await codexWorker();
    api.mode = '500';
    try {
      await assert.rejects(
        client.chat.completions.create({ model: 'codex', messages }),
        (err: unknown) => err instanceof OpenAI.APIError && err.status >= 500,
      );
    } finally {
      api.mode = 'text';
    }
    for (let i = 0; i < 100 && isAlive(worker.pid); i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(!isAlive(worker.pid), 'the failed worker is retired');
    const r2 = await client.chat.completions.create({ model: 'codex', messages });
    assert.ok(r2.choices[0]!.message.content!.startsWith('responses stand-in heard:'));
  });

  it("the effort reaches the model from exec (-c) and from the app-server (thread/resume's config); the summary comes back", async () => {
    const live = async () => {
      const res = await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } });
      return ((await res.json()) as { workers: { live: Live[] } }).workers.live;
    };
    const seen = new Set((await live()).map((w) => w.pid));
    const messages: OpenAI.ChatCompletionMessageParam[] = [];
    const say = async (text: string, effort: OpenAI.ReasoningEffort) => {
      messages.push({ role: 'user', content: text });
      const res = await client.chat.completions.create({ model: 'codex', messages, reasoning_effort: effort });
      messages.push({ role: 'assistant', content: res.choices[0]!.message.content! });
      const upstream = api.requests.at(-1)!.reasoning?.effort;
      return { upstream, thought: (res.choices[0]!.message as { reasoning_content?: string }).reasoning_content };
    };
    const modesBefore = runModes().length;
    api.reasoning = 'Weighing it up.';
    try {
      assert.deepEqual(await say('effortful codex turn 1', 'high'), { upstream: 'high', thought: 'Weighing it up.' });
      await waitFor(
        async () => (await live()).some((w) => !seen.has(w.pid) && w.slot.includes('/codex/') && w.state === 'idle'),
        undefined,
        'the app-server worker up',
      );
      // Streamed by the app-server as summary deltas; the thread's effort came with thread/resume.
      assert.deepEqual(await say('effortful codex turn 2', 'high'), { upstream: 'high', thought: 'Weighing it up.' });
      assert.deepEqual(await say('effortful codex turn 3', 'low'), { upstream: 'low', thought: 'Weighing it up.' });
      assert.deepEqual(runModes().slice(modesBefore), ['cold', 'warm', 'resumed']);
    } finally {
      api.reasoning = undefined;
    }
  });

  it('stopping olp stops every app-server and leaves no workspace', async () => {
    const res = await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } });
    const worker = ((await res.json()) as { workers: { live: Live[] } }).workers.live.find((l) =>
      l.slot.includes('/codex/'),
    )!;
    await t.close(true);
    assert.ok(!isAlive(worker.pid));
    assert.deepEqual(leftoverWorkspaces(t.stateDir), []);
  });
});

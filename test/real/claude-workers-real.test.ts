// Live workers on the real `claude` binary (pinned devDependency) against a loopback stand-in for
// the Anthropic Messages API: a continued conversation is written to the process kept from its
// last turn (stream-json input), the context lives in that process, and a failed turn retires it.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { claudeStandInEnv, startAnthropicStandIn, type StandIn } from '../support/anthropic-stand-in.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { assertNoClaudeTmp, assertUnderstood, claudeTmp } from '../support/real.js';
import { REAL_CLAUDE, REAL_CLAUDE_VERSION } from '../support/paths.js';
import { isAlive, leftoverWorkspaces, sessionFileHolds } from '../support/procs.js';

let api: StandIn;
let t: TestDaemon;
let client: OpenAI;

const tmpBefore = claudeTmp();
before(async () => {
  assert.ok(existsSync(REAL_CLAUDE), `the real claude CLI is missing at ${REAL_CLAUDE}: run npm ci`);
  api = await startAnthropicStandIn();
  t = await startTestDaemon({
    config: { claudeBin: REAL_CLAUDE, timeout: 60, idleTimeout: 30, workers: true },
    claudeEnv: claudeStandInEnv(api.url),
  });
  client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
});
after(async () => {
  const logs = t?.logs ?? [];
  await t?.close(true);
  const pids = spawned();
  await t?.close();
  await api?.close();
  for (const pid of pids) assert.ok(!isAlive(pid), `claude ${pid} is gone after olp stopped`);
  assertUnderstood(logs);
  assertNoClaudeTmp(tmpBefore);
});

/** The pids of every claude olp started, from its debug log. */
function spawned(): number[] {
  return t.logs.filter((l) => l.event === 'spawned').map((l) => Number(l.pid));
}

interface Live {
  pid: number;
  state: string;
  turns: number;
  slot: string;
}

/** The live CLIs /health lists (workers and spares). */
async function live(): Promise<Live[]> {
  const res = await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } });
  return ((await res.json()) as { workers: { live: Live[] } }).workers.live;
}

function runModes(): string[] {
  return t.logs
    .filter((l) => l.event === 'request' && l.path === '/v1/chat/completions')
    .map((l) => String(l.run ?? '-'));
}

describe(`real claude ${REAL_CLAUDE_VERSION} as a live worker`, () => {
  it('a 6-turn conversation starts one claude; turns 2-6 carry the history the process kept', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'system', content: 'Be brief. WORKER-SYSTEM' }];
    const spawnedBefore = spawned().length;
    const modesBefore = runModes().length;
    for (let i = 1; i <= 6; i++) {
      messages.push({ role: 'user', content: `turn number ${i}` });
      const before = api.requests.length;
      const res = await client.chat.completions.create({ model: 'sonnet', messages });
      const reply = res.choices[0]!.message.content!;
      assert.equal(reply, `stand-in heard: turn number ${i}`);
      messages.push({ role: 'assistant', content: reply });
      const sent = api.requests.slice(before).find((r) => r.path === '/v1/messages' && r.body.stream)!;
      const texts = JSON.stringify(sent.body.messages);
      for (let j = 1; j < i; j++) assert.match(texts, new RegExp(`turn number ${j}\\b`), `turn ${i} carries turn ${j}`);
      assert.match(JSON.stringify(sent.body.system), /WORKER-SYSTEM/);
    }
    assert.equal(spawned().length - spawnedBefore, 1, 'one claude process for six turns');
    assert.deepEqual(runModes().slice(modesBefore), ['cold', 'warm', 'warm', 'warm', 'warm', 'warm']);
  });

  it("a stop sequence mid-stream interrupts the worker's turn (control request); the worker answers the next turn warm", async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'a chat to be cut short' }];
    const r1 = await client.chat.completions.create({ model: 'sonnet', messages });
    messages.push(
      { role: 'assistant', content: r1.choices[0]!.message.content! },
      { role: 'user', content: 'alpha STOPHERE beta and then a good deal more text to stream' },
    );
    const worker = (await live()).filter((w) => w.state === 'idle' && w.turns === 1).at(-1)!.pid;
    const modesBefore = runModes().length;
    api.mode = 'slow'; // 200 ms between deltas: the interrupt lands mid-stream
    let text = '';
    try {
      const stream = await client.chat.completions.create({
        model: 'sonnet',
        messages,
        stop: ['STOPHERE'],
        stream: true,
      });
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    } finally {
      api.mode = 'text';
    }
    assert.equal(text, 'stand-in heard: alpha ');
    assert.ok(isAlive(worker), 'the worker lives on');
    messages.push({ role: 'assistant', content: text }, { role: 'user', content: 'go on after the cut' });
    const r3 = await client.chat.completions.create({ model: 'sonnet', messages });
    assert.equal(r3.choices[0]!.message.content, 'stand-in heard: go on after the cut');
    assert.deepEqual(runModes().slice(modesBefore), ['warm', 'warm']);
    assert.ok(
      (await live()).some((w) => w.pid === worker),
      'the same process',
    );
  });

  it('a turn the provider fails retires the worker; the retried turn runs cold with the whole conversation', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'first of a failing chat' }];
    const r1 = await client.chat.completions.create({ model: 'sonnet', messages });
    messages.push(
      { role: 'assistant', content: r1.choices[0]!.message.content! },
      { role: 'user', content: 'second of a failing chat' },
    );
    const worker = (await live()).filter((w) => w.state === 'idle' && w.turns === 1).at(-1)!.pid;
    api.mode = '500';
    try {
      await assert.rejects(
        client.chat.completions.create({ model: 'sonnet', messages }),
        (err: unknown) => err instanceof OpenAI.APIError && err.status === 502,
      );
    } finally {
      api.mode = 'text';
    }
    for (let i = 0; i < 100 && isAlive(worker); i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(!isAlive(worker), 'the failed worker is retired');
    const before = api.requests.length;
    const r2 = await client.chat.completions.create({ model: 'sonnet', messages });
    assert.ok(r2.choices[0]!.message.content!.startsWith('stand-in heard:'));
    assert.ok(!(await live()).some((w) => w.pid === worker), 'a new process');
    const sent = JSON.stringify(api.requests.slice(before).find((r) => r.body.stream)!.body.messages);
    assert.match(sent, /first of a failing chat/, 'the whole conversation went to the new session');
    assert.match(sent, /second of a failing chat/);
  });

  it("a new conversation's first turn goes to a pre-started claude: initialize sets the system prompt; the session is kept", async () => {
    let spares: Live[] = [];
    for (let i = 0; i < 200 && spares.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      spares = (await live()).filter((w) => w.state === 'spare');
    }
    const spare = spares[0]!.pid;
    assert.ok(spare > 0 && isAlive(spare), 'a spare claude is up');
    await new Promise((r) => setTimeout(r, 1500)); // let it settle (its ping answered)
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'You are terse. SPARE-SYSTEM' },
      { role: 'user', content: 'first words to a spare' },
    ];
    const modesBefore = runModes().length;
    const before = api.requests.length;
    const started = performance.now();
    const r1 = await client.chat.completions.create({ model: 'sonnet', messages });
    const firstMs = performance.now() - started;
    assert.equal(r1.choices[0]!.message.content, 'stand-in heard: first words to a spare');
    const sent = api.requests.slice(before).find((r) => r.path === '/v1/messages' && r.body.stream)!;
    assert.match(JSON.stringify(sent.body.system), /SPARE-SYSTEM/, 'the system prompt came with initialize');
    messages.push(
      { role: 'assistant', content: r1.choices[0]!.message.content! },
      { role: 'user', content: 'second words' },
    );
    const r2 = await client.chat.completions.create({ model: 'sonnet', messages });
    assert.equal(r2.choices[0]!.message.content, 'stand-in heard: second words');
    assert.deepEqual(
      runModes().slice(modesBefore),
      ['prestarted', 'warm'],
      `first turn took ${Math.round(firstMs)} ms`,
    );
    // The session the spare created is on disk in the slot: after it is killed, a cold resume
    // continues it. (claude writes a turn to its session file some ms after its `result`: a
    // SIGKILL before that loses the turn, so wait for it as a crash long after would.)
    for (let i = 0; i < 200 && !sessionFileHolds(t.stateDir, 'second words'); i++)
      await new Promise((r) => setTimeout(r, 25));
    process.kill(spare, 'SIGKILL');
    for (let i = 0; i < 100 && isAlive(spare); i++) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 200));
    messages.push(
      { role: 'assistant', content: r2.choices[0]!.message.content! },
      { role: 'user', content: 'third words' },
    );
    const before3 = api.requests.length;
    const r3 = await client.chat.completions.create({ model: 'sonnet', messages });
    assert.equal(r3.choices[0]!.message.content, 'stand-in heard: third words');
    assert.equal(runModes().at(-1), 'resumed', JSON.stringify({ modes: runModes(), live: await live(), spare }));
    const sent3 = JSON.stringify(api.requests.slice(before3).find((r) => r.body.stream)!.body.messages);
    assert.match(sent3, /first words to a spare/, 'the resumed session holds the spare’s turns');
    assert.match(sent3, /second words/);
  });

  it('stopping olp stops every worker and leaves no workspace', async () => {
    const alive = [...spawned(), ...t.logs.filter((l) => l.event === 'spare_started').map((l) => Number(l.pid))].filter(
      isAlive,
    );
    assert.ok(alive.length >= 1, 'workers are alive before shutdown');
    await t.close(true);
    for (const pid of alive) assert.ok(!isAlive(pid), `${pid} stopped`);
    assert.deepEqual(leftoverWorkspaces(t.stateDir), []);
  });
});

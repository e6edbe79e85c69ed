// Live workers on the real `claude` binary (pinned devDependency) against a loopback stand-in for
// the Anthropic Messages API: a continued conversation is written to the process kept from its
// last turn (stream-json input), the context lives in that process, and a failed turn retires it.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startAnthropicStandIn, type StandIn } from '../support/anthropic-stand-in.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { REAL_CLAUDE } from '../support/paths.js';
import { isAlive, leftoverWorkspaces } from '../support/procs.js';

let api: StandIn;
let t: TestDaemon;
let client: OpenAI;

before(async () => {
  assert.ok(existsSync(REAL_CLAUDE), `the real claude CLI is missing at ${REAL_CLAUDE}: run npm ci`);
  api = await startAnthropicStandIn();
  t = await startTestDaemon({
    config: { claudeBin: REAL_CLAUDE, timeout: 60, idleTimeout: 30, workers: true },
    claudeEnv: { ANTHROPIC_BASE_URL: api.url, ANTHROPIC_API_KEY: 'sk-ant-dummy-000', CLAUDE_CODE_MAX_RETRIES: '0' },
  });
  client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
});
after(async () => {
  await t?.close(true);
  const pids = spawned();
  await t?.close();
  await api?.close();
  for (const pid of pids) assert.ok(!isAlive(pid), `claude ${pid} is gone after olp stopped`);
});

/** The pids of every claude olp started, from its debug log. */
function spawned(): number[] {
  return t.logs.filter((l) => l.event === 'spawned').map((l) => Number(l.pid));
}

function runModes(): string[] {
  return t.logs.filter((l) => l.event === 'request' && l.path === '/v1/chat/completions').map((l) => String(l.run ?? '-'));
}

describe('real claude CLI as a live worker', () => {
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

  it('a turn the provider fails retires the worker; the retried turn runs cold with the whole conversation', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'first of a failing chat' }];
    const r1 = await client.chat.completions.create({ model: 'sonnet', messages });
    messages.push({ role: 'assistant', content: r1.choices[0]!.message.content! }, { role: 'user', content: 'second of a failing chat' });
    const worker = spawned().at(-1)!;
    api.mode = '500';
    try {
      await assert.rejects(client.chat.completions.create({ model: 'sonnet', messages }), (err: unknown) => err instanceof OpenAI.APIError && err.status === 502);
    } finally {
      api.mode = 'text';
    }
    for (let i = 0; i < 100 && isAlive(worker); i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(!isAlive(worker), 'the failed worker is retired');
    const before = api.requests.length;
    const r2 = await client.chat.completions.create({ model: 'sonnet', messages });
    assert.ok(r2.choices[0]!.message.content!.startsWith('stand-in heard:'));
    assert.notEqual(spawned().at(-1), worker, 'a new process');
    const sent = JSON.stringify(api.requests.slice(before).find((r) => r.body.stream)!.body.messages);
    assert.match(sent, /first of a failing chat/, 'the whole conversation went to the new session');
    assert.match(sent, /second of a failing chat/);
  });

  it('stopping olp stops every worker and leaves no workspace', async () => {
    const alive = spawned().filter(isAlive);
    assert.ok(alive.length >= 1, 'workers are alive before shutdown');
    await t.close(true);
    for (const pid of alive) assert.ok(!isAlive(pid), `${pid} stopped`);
    assert.deepEqual(leftoverWorkspaces(t.stateDir), []);
  });
});

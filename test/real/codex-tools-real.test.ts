// Tool calling on the real `codex` binary (pinned devDependency) against a loopback stand-in for
// the Responses API that calls olp's MCP tools when they are offered: the client's functions reach
// the model through olp's MCP server, parallel calls come back as tool_calls, and the client's
// results continue the same codex process (one spawn per round trip).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startedWorkerIdle, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { assertUnderstood } from '../support/real.js';
import { REAL_CODEX } from '../support/paths.js';
import { isAlive, leftoverWorkspaces } from '../support/procs.js';
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
      codexConfig: codexStandInConfig(api.url),
      workers: true,
      prestart: false,
    },
    codexEnv: CODEX_STAND_IN_ENV,
  });
  client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
});
after(async () => {
  const logs = t?.logs ?? [];
  await t?.close(true);
  assert.deepEqual(leftoverWorkspaces(t.stateDir), []);
  await t?.close();
  await api?.close();
  assertUnderstood(logs);
});

const WEATHER: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

function spawned(): number[] {
  return t.logs.filter((l) => l.event === 'spawned').map((l) => Number(l.pid));
}

describe('real codex CLI with the client’s functions', () => {
  it('the model sees the function itself; parallel calls, then the results continue the same process', async () => {
    api.toolCalls = [
      { name: 'get_weather', arguments: { city: 'Paris' } },
      { name: 'get_weather', arguments: { city: 'Oslo' } },
    ];
    try {
      const before = spawned().length;
      const requestsBefore = api.requests.length;
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'weather in Paris and Oslo?' }];
      const first = await client.chat.completions.create({ model: 'codex', messages, tools: [WEATHER] });
      const choice = first.choices[0]!;
      assert.equal(choice.finish_reason, 'tool_calls');
      const calls = choice.message.tool_calls!.filter((c) => c.type === 'function');
      // codex starts parallel calls in either order.
      assert.deepEqual(
        calls
          .map((c) => [c.function.name, JSON.parse(c.function.arguments)])
          .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
        [
          ['get_weather', { city: 'Oslo' }],
          ['get_weather', { city: 'Paris' }],
        ],
      );
      // What the model was offered: the client's function in olp's namespace, as a function of its
      // own (not only reachable from inside codex's code-mode tool).
      const req = api.requests[requestsBefore]!;
      const offered = JSON.stringify([
        req.tools ?? [],
        (req.input as { type?: string }[]).filter((i) => i.type === 'additional_tools'),
      ]);
      assert.match(offered, /"type":"namespace","name":"mcp__olp"[^\]]*"type":"function","name":"get_weather"/);
      const pid = spawned().at(-1)!;
      assert.ok(isAlive(pid), 'codex waits for the results');
      messages.push(choice.message);
      for (const c of calls)
        messages.push({
          role: 'tool',
          tool_call_id: c.id,
          content: `weather for ${(JSON.parse(c.function.arguments) as { city: string }).city}`,
        });
      const res = await client.chat.completions.create({ model: 'codex', messages, tools: [WEATHER] });
      assert.equal(res.choices[0]!.finish_reason, 'stop');
      const text = res.choices[0]!.message.content ?? '';
      assert.match(text, /^responses stand-in got: /);
      assert.match(text, /weather for Paris/);
      assert.match(text, /weather for Oslo/);
      assert.ok((res.usage?.prompt_tokens ?? 0) > 0, 'the continuation carries the turn’s usage');
      assert.equal(spawned().length - before, 1, 'one codex for the round trip');
      for (let i = 0; i < 100 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok(!isAlive(pid), 'the turn ended and codex with it');
    } finally {
      api.toolCalls = undefined;
    }
  });

  it('every user turn of an agent conversation calls the functions again, with earlier rounds in the history', async () => {
    api.toolCalls = [
      { name: 'get_weather', arguments: { city: 'Paris' } },
      { name: 'get_weather', arguments: { city: 'Oslo' } },
    ];
    try {
      const messages: OpenAI.ChatCompletionMessageParam[] = [];
      const spawnsBefore = spawned().length;
      const startsBefore = t.logs.filter((l) => l.event === 'worker_starting').length;
      const chats = () => t.logs.filter((l) => l.event === 'request' && l.path === '/v1/chat/completions');
      const requestsBefore = chats().length;
      for (const turn of [1, 2, 3]) {
        // The app-server that follows the first turn is up before the second (one that comes
        // first runs `codex exec resume` instead).
        if (turn === 2) await startedWorkerIdle(t, startsBefore);
        messages.push({ role: 'user', content: `weather in Paris and Oslo? (turn ${turn})` });
        const first: OpenAI.ChatCompletion = await client.chat.completions.create({
          model: 'codex',
          messages,
          tools: [WEATHER],
        });
        const calls = (first.choices[0]!.message.tool_calls ?? []).filter((c) => c.type === 'function');
        assert.equal(
          first.choices[0]!.finish_reason,
          'tool_calls',
          `turn ${turn}: ${JSON.stringify(first.choices[0])}`,
        );
        assert.equal(calls.length, 2, `turn ${turn}`);
        messages.push(first.choices[0]!.message);
        for (const c of calls)
          messages.push({ role: 'tool', tool_call_id: c.id, content: `turn ${turn} ${c.function.arguments}` });
        const res: OpenAI.ChatCompletion = await client.chat.completions.create({
          model: 'codex',
          messages,
          tools: [WEATHER],
        });
        assert.equal(res.choices[0]!.finish_reason, 'stop', `turn ${turn}`);
        const text = res.choices[0]!.message.content ?? '';
        assert.match(text, /^responses stand-in got: /, `turn ${turn}`);
        assert.equal(text.split(`turn ${turn} `).length, 3, `turn ${turn}: this turn's two results: ${text}`);
        assert.doesNotMatch(text, new RegExp(`turn ${turn - 1} `), `turn ${turn}: not an earlier turn's`);
        messages.push(res.choices[0]!.message);
      }
      // codex exec for the first user turn; one app-server, with the same tools, for the others.
      assert.equal(spawned().length - spawnsBefore, 1);
      assert.equal(t.logs.filter((l) => l.event === 'worker_starting').length - startsBefore, 1);
      const modes = chats()
        .slice(requestsBefore)
        .map((l) => l.run);
      assert.deepEqual(modes, ['cold', 'parked', 'warm', 'parked', 'warm', 'parked']);
    } finally {
      api.toolCalls = undefined;
    }
  });
});

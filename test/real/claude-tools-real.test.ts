// Tool calling on the real `claude` binary (pinned devDependency) against a loopback stand-in for
// the Anthropic Messages API that answers with tool_use when offered tools: the client's functions
// reach the model through olp's MCP server, parallel calls come back as tool_calls, and the
// client's results continue the same CLI process (one spawn per round trip).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { claudeStandInEnv, startAnthropicStandIn, type StandIn } from '../support/anthropic-stand-in.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { assertNoClaudeTmp, assertUnderstood, claudeTmp } from '../support/real.js';
import { REAL_CLAUDE, REAL_CLAUDE_VERSION } from '../support/paths.js';
import { isAlive } from '../support/procs.js';

let api: StandIn;
let t: TestDaemon;
let client: OpenAI;

const tmpBefore = claudeTmp();
before(async () => {
  assert.ok(existsSync(REAL_CLAUDE), `the real claude CLI is missing at ${REAL_CLAUDE}: run npm ci`);
  api = await startAnthropicStandIn();
  t = await startTestDaemon({
    config: { claudeBin: REAL_CLAUDE, timeout: 60, idleTimeout: 30, workers: true, prestart: false },
    claudeEnv: claudeStandInEnv(api.url),
  });
  client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
});
after(async () => {
  const logs = t?.logs ?? [];
  await t?.close();
  await api?.close();
  assertUnderstood(logs);
  assertNoClaudeTmp(tmpBefore);
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

describe(`real claude ${REAL_CLAUDE_VERSION} with the client’s functions`, () => {
  it('parallel tool calls, then the results continue the same process', async () => {
    api.toolCalls = [
      { name: 'get_weather', input: { city: 'Paris' } },
      { name: 'get_weather', input: { city: 'Tokyo' } },
    ];
    try {
      const before = spawned().length;
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'weather in Paris and Tokyo?' }];
      const stream = await client.chat.completions.create({
        model: 'sonnet',
        messages,
        tools: [WEATHER],
        stream: true,
      });
      const calls: { id: string; name: string; arguments: string }[] = [];
      let finish: string | null = null;
      for await (const ch of stream) {
        for (const d of ch.choices[0]?.delta.tool_calls ?? []) {
          if (d.id) calls[d.index] = { id: d.id, name: d.function?.name ?? '', arguments: '' };
          calls[d.index]!.arguments += d.function?.arguments ?? '';
        }
        finish = ch.choices[0]?.finish_reason ?? finish;
      }
      assert.equal(finish, 'tool_calls');
      assert.deepEqual(
        calls.map((c) => [c.name, JSON.parse(c.arguments)]),
        [
          ['get_weather', { city: 'Paris' }],
          ['get_weather', { city: 'Tokyo' }],
        ],
      );
      const offered = api.requests.filter((r) => r.body.stream).at(-1)!.body.tools as { name: string }[];
      assert.deepEqual(
        offered.map((x) => x.name),
        ['mcp__olp__get_weather'],
        'only the client’s function is offered',
      );
      const pid = spawned().at(-1)!;
      assert.ok(isAlive(pid), 'the CLI waits for the results');
      messages.push({
        role: 'assistant',
        content: null,
        tool_calls: calls.map((c) => ({
          id: c.id,
          type: 'function' as const,
          function: { name: c.name, arguments: c.arguments },
        })),
      });
      messages.push(
        { role: 'tool', tool_call_id: calls[0]!.id, content: 'sunny in Paris' },
        { role: 'tool', tool_call_id: calls[1]!.id, content: 'rain in Tokyo' },
      );
      const started = performance.now();
      const res = await client.chat.completions.create({ model: 'sonnet', messages, tools: [WEATHER] });
      const ms = performance.now() - started;
      assert.equal(
        res.choices[0]!.message.content,
        'echo: sunny in Paris | rain in Tokyo',
        `continuation after ${Math.round(ms)} ms`,
      );
      assert.equal(spawned().length - before, 1, 'one claude for the round trip');
    } finally {
      api.toolCalls = undefined;
    }
  });

  it('every user turn of an agent conversation calls the functions again, with earlier rounds in the history', async () => {
    api.toolCalls = [
      { name: 'get_weather', input: { city: 'Paris' } },
      { name: 'get_weather', input: { city: 'Tokyo' } },
    ];
    try {
      const messages: OpenAI.ChatCompletionMessageParam[] = [];
      for (const turn of [1, 2, 3]) {
        messages.push({ role: 'user', content: `weather in Paris and Tokyo? (turn ${turn})` });
        const first: OpenAI.ChatCompletion = await client.chat.completions.create({
          model: 'sonnet',
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
          messages.push({ role: 'tool', tool_call_id: c.id, content: `${turn}: ${c.function.arguments}` });
        const res: OpenAI.ChatCompletion = await client.chat.completions.create({
          model: 'sonnet',
          messages,
          tools: [WEATHER],
        });
        assert.equal(res.choices[0]!.finish_reason, 'stop', `turn ${turn}`);
        assert.equal(
          res.choices[0]!.message.content,
          `echo: ${turn}: {"city":"Paris"} | ${turn}: {"city":"Tokyo"}`,
          `turn ${turn}: only this turn's results are answered`,
        );
        messages.push(res.choices[0]!.message);
      }
    } finally {
      api.toolCalls = undefined;
    }
  });
});

describe(`real claude ${REAL_CLAUDE_VERSION}: an agent conversation on one process`, () => {
  it('3 user turns, each with a tool round trip: one claude, the earlier rounds sent to the model natively', async () => {
    api.toolCalls = [{ name: 'get_weather', input: { city: 'Oslo' } }];
    try {
      const before = spawned().length;
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'system', content: 'You are an agent.' }];
      for (let i = 1; i <= 3; i++) {
        messages.push({ role: 'user', content: `question ${i}` });
        const ask: OpenAI.ChatCompletion = await client.chat.completions.create({
          model: 'sonnet',
          messages,
          tools: [WEATHER],
        });
        assert.equal(ask.choices[0]!.finish_reason, 'tool_calls', `turn ${i}`);
        const call = ask.choices[0]!.message.tool_calls![0]!;
        messages.push(ask.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: `fog ${i}` });
        const res: OpenAI.ChatCompletion = await client.chat.completions.create({
          model: 'sonnet',
          messages,
          tools: [WEATHER],
        });
        assert.equal(res.choices[0]!.message.content, `echo: fog ${i}`);
        messages.push({ role: 'assistant', content: res.choices[0]!.message.content });
      }
      assert.equal(spawned().length - before, 1, 'one claude for the whole conversation');
      // The last model call carries the earlier rounds as the model's own tool_use/tool_result blocks.
      const last = api.requests.filter((r) => r.body.stream).at(-1)!.body.messages as {
        role: string;
        content: unknown;
      }[];
      const blocks = last.flatMap((m) => (Array.isArray(m.content) ? (m.content as { type: string }[]) : []));
      assert.equal(blocks.filter((b) => b.type === 'tool_use').length, 3);
      assert.equal(blocks.filter((b) => b.type === 'tool_result').length, 3);
      assert.ok(!JSON.stringify(last).includes('<tool_result'), 'nothing rendered as text');
      const modes = t.logs
        .filter((l) => l.event === 'request' && l.path === '/v1/chat/completions')
        .slice(-6)
        .map((l) => l.run);
      assert.deepEqual(modes, ['cold', 'parked', 'warm', 'parked', 'warm', 'parked']);
    } finally {
      api.toolCalls = undefined;
    }
  });
});

// Conversations that answer nothing are refused before any CLI is spawned.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { recordedPids } from '../support/procs.js';

let t: TestDaemon;
before(async () => {
  t = await startTestDaemon();
});
after(async () => {
  await t.close();
});

const chat = (body: unknown) =>
  request(t.url)
    .post('/v1/chat/completions')
    .set('authorization', `Bearer ${t.token}`)
    .send(body as object);
const responses = (body: unknown) =>
  request(t.url)
    .post('/v1/responses')
    .set('authorization', `Bearer ${t.token}`)
    .send(body as object);
const post = (path: string, text: string) =>
  request(t.url)
    .post(path)
    .set('authorization', `Bearer ${t.token}`)
    .set('content-type', 'application/json')
    .send(text);

/**
 * A body with a JSON schema `levels` objects deep where it has the string DEEP (~130 KB at 3,000:
 * what gave a 500 from JSON.stringify); written as text, since JSON.stringify cannot write it.
 */
function withDeepSchema(body: unknown, levels: number): string {
  const deep = `${'{"type":"object","properties":{"a":'.repeat(levels)}{"type":"string"}${'}}'.repeat(levels)}`;
  return JSON.stringify(body).replace('"DEEP"', deep);
}

describe('refused before a spawn', () => {
  const cases: [string, unknown, string][] = [
    [
      'only an orphan tool message',
      { model: 'sonnet', messages: [{ role: 'tool', tool_call_id: 'call_1', content: 'r' }] },
      'messages.0.tool_call_id',
    ],
    [
      'only an orphan function message',
      { model: 'sonnet', messages: [{ role: 'function', name: 'f', content: 'r' }] },
      'messages.0.name',
    ],
    ['only an assistant message', { model: 'sonnet', messages: [{ role: 'assistant', content: 'hi' }] }, 'messages'],
    [
      'logit_bias garbage',
      { model: 'sonnet', messages: [{ role: 'user', content: 'hi' }], logit_bias: 'garbage' },
      'logit_bias',
    ],
  ];
  for (const [name, body, param] of cases) {
    it(`${name} → 400 naming ${param}, no CLI spawned`, async () => {
      const before = recordedPids(t.recordDir).runs.length;
      const res = await chat(body);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.error.type, 'invalid_request_error');
      assert.equal(res.body.error.param, param);
      assert.equal(recordedPids(t.recordDir).runs.length, before, 'no CLI was spawned');
      assert.equal(t.daemon.children, 0);
    });
  }
  it('a well-formed tool history is still answered', async () => {
    const before = recordedPids(t.recordDir).runs.length;
    const res = await chat({
      model: 'sonnet',
      messages: [
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'rain' },
      ],
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(recordedPids(t.recordDir).runs.length, before + 1);
  });
});

describe('bad input is a 400 naming the param on both endpoints, before a spawn', () => {
  const deep = (body: unknown) => withDeepSchema(body, 3_000);
  const user = [{ role: 'user', content: 'hi' }];
  const cases: [string, 'chat' | 'responses', unknown, string, RegExp][] = [
    [
      'a 3,000-level json_schema in response_format',
      'chat',
      deep({
        model: 'sonnet',
        messages: user,
        response_format: { type: 'json_schema', json_schema: { name: 's', schema: 'DEEP' } },
      }),
      'response_format.json_schema.schema',
      /levels deep/,
    ],
    [
      'a 3,000-level json_schema in text.format',
      'responses',
      deep({ model: 'sonnet', input: 'hi', text: { format: { type: 'json_schema', name: 's', schema: 'DEEP' } } }),
      'text.format.schema',
      /levels deep/,
    ],
    [
      "a 3,000-level tool's parameters (chat)",
      'chat',
      deep({
        model: 'sonnet',
        messages: user,
        tools: [{ type: 'function', function: { name: 'f', parameters: 'DEEP' } }],
      }),
      'tools[0].function.parameters',
      /levels deep/,
    ],
    [
      "a 3,000-level tool's parameters (Responses)",
      'responses',
      deep({ model: 'sonnet', input: 'hi', tools: [{ type: 'function', name: 'f', parameters: 'DEEP' }] }),
      'tools[0].parameters',
      /levels deep/,
    ],
    [
      'stream: "yes" (chat)',
      'chat',
      { model: 'sonnet', messages: user, stream: 'yes' },
      'stream',
      /^Invalid type for 'stream': expected a boolean, but got a string instead\.$/,
    ],
    [
      'stream: "yes" (Responses)',
      'responses',
      { model: 'sonnet', input: 'hi', stream: 'yes' },
      'stream',
      /^Invalid type for 'stream': expected a boolean, but got a string instead\.$/,
    ],
    [
      'model: 5 (chat)',
      'chat',
      { model: 5, messages: user },
      'model',
      /^Invalid type for 'model': expected a string, but got an integer instead\.$/,
    ],
    [
      'model: 5 (Responses)',
      'responses',
      { model: 5, input: 'hi' },
      'model',
      /^Invalid type for 'model': expected a string, but got an integer instead\.$/,
    ],
    [
      'a function_call_output without its function_call',
      'responses',
      {
        model: 'sonnet',
        input: [
          { role: 'user', content: 'q' },
          { type: 'function_call_output', call_id: 'call_nobody', output: 'r' },
        ],
      },
      'input.1.call_id',
      /No tool call found for function call output with call_id 'call_nobody'/,
    ],
    // Reply caps: none is over 128K (the most any model writes), nor over the model's own.
    ['max_tokens: 1e12', 'chat', { model: 'sonnet', messages: user, max_tokens: 1e12 }, 'max_tokens', /at most 128000/],
    [
      'max_completion_tokens: 1e12',
      'chat',
      { model: 'sonnet', messages: user, max_completion_tokens: 1e12 },
      'max_completion_tokens',
      /at most 128000/,
    ],
    [
      "max_completion_tokens over claude-haiku-4-5's 64K",
      'chat',
      { model: 'claude-haiku-4-5', messages: user, max_completion_tokens: 100_000 },
      'max_completion_tokens',
      /100000 is more than claude-haiku-4-5 writes \(64000 output tokens at most\)/,
    ],
    [
      'max_output_tokens: 1e12',
      'responses',
      { model: 'sonnet', input: 'hi', max_output_tokens: 1e12 },
      'max_output_tokens',
      /at most 128000/,
    ],
    [
      "max_output_tokens over claude-haiku-4-5's 64K",
      'responses',
      { model: 'claude-haiku-4-5', input: 'hi', max_output_tokens: 64_001 },
      'max_output_tokens',
      /64001 is more than claude-haiku-4-5 writes/,
    ],
    // Responses tools as OpenAI takes them: a namespace holds functions and custom tools, and its
    // name follows the rule for tool names; a custom tool's grammar is a string.
    [
      'a namespace inside a namespace',
      'responses',
      {
        model: 'sonnet',
        input: 'hi',
        tools: [{ type: 'namespace', name: 'outer', tools: [{ type: 'namespace', name: 'inner', tools: [] }] }],
      },
      'tools.0.tools.0.type',
      /not another namespace/,
    ],
    [
      'a namespace name of 65 characters',
      'responses',
      { model: 'sonnet', input: 'hi', tools: [{ type: 'namespace', name: 'n'.repeat(65), tools: [] }] },
      'tools.0.name',
      /1 to 64 letters, digits, underscores or dashes/,
    ],
    [
      'a namespace name with a space',
      'responses',
      { model: 'sonnet', input: 'hi', tools: [{ type: 'namespace', name: 'my tools', tools: [] }] },
      'tools.0.name',
      /1 to 64 letters, digits, underscores or dashes/,
    ],
    [
      "a custom tool whose grammar's definition is not a string",
      'responses',
      {
        model: 'sonnet',
        input: 'hi',
        tools: [{ type: 'custom', name: 'edit', format: { type: 'grammar', syntax: 'lark', definition: 42 } }],
      },
      'tools.0.format.definition',
      /^Invalid type for 'tools\.0\.format\.definition': expected a string/,
    ],
    [
      'a custom tool in a namespace whose grammar has no definition',
      'responses',
      {
        model: 'sonnet',
        input: 'hi',
        tools: [
          {
            type: 'namespace',
            name: 'ns',
            tools: [{ type: 'custom', name: 'edit', format: { type: 'grammar', syntax: 'regex' } }],
          },
        ],
      },
      'tools.0.tools.0.format.definition',
      /^Missing required parameter/,
    ],
    [
      'a custom tool grammar of an unknown syntax',
      'responses',
      {
        model: 'sonnet',
        input: 'hi',
        tools: [{ type: 'custom', name: 'edit', format: { type: 'grammar', syntax: 'peg', definition: 'x' } }],
      },
      'tools.0.format.syntax',
      /expected 'lark' or 'regex'/,
    ],
  ];
  for (const [name, endpoint, body, param, message] of cases) {
    it(`${name} → 400 naming ${param}`, async () => {
      const before = recordedPids(t.recordDir).runs.length;
      const path = endpoint === 'chat' ? '/v1/chat/completions' : '/v1/responses';
      const res = await (typeof body === 'string'
        ? post(path, body)
        : endpoint === 'chat'
          ? chat(body)
          : responses(body));
      assert.equal(res.status, 400, JSON.stringify(res.body).slice(0, 400));
      assert.equal(res.body.error.type, 'invalid_request_error');
      assert.equal(res.body.error.code, 'invalid_request');
      assert.equal(res.body.error.param, param);
      assert.match(res.body.error.message, message);
      assert.equal(recordedPids(t.recordDir).runs.length, before, 'no CLI was spawned');
    });
  }
  it("a function_call_output answering the previous response's call is still answered", async () => {
    const ask = `Weather? [[fake-tools:${JSON.stringify([{ name: 'get_weather', arguments: { city: 'Paris' } }])}]]`;
    const tools = [
      {
        type: 'function',
        name: 'get_weather',
        parameters: { type: 'object', properties: { city: { type: 'string' } } },
      },
    ];
    const first = await responses({ model: 'sonnet', input: ask, tools });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const call = (first.body.output as { type: string; call_id: string }[]).find((o) => o.type === 'function_call')!;
    const second = await responses({
      model: 'sonnet',
      previous_response_id: first.body.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny' }],
      tools,
    });
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.equal(second.body.output_text, 'echo: sunny');
  });
});

describe('tool_choice allowed_tools on /v1/responses', () => {
  it('is served: the allowed function is called, and the choice is echoed as sent', async () => {
    const ask = `Weather? [[fake-tools:${JSON.stringify([{ name: 'get_weather', arguments: { city: 'Oslo' } }])}]]`;
    const tools = [
      {
        type: 'function',
        name: 'get_weather',
        parameters: { type: 'object', properties: { city: { type: 'string' } } },
      },
      { type: 'function', name: 'get_time' },
    ];
    const tool_choice = { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'get_weather' }] };
    const res = await responses({ model: 'sonnet', input: ask, tools, tool_choice });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.tool_choice, tool_choice);
    assert.deepEqual(
      (res.body.output as { type: string; name?: string }[])
        .filter((o) => o.type === 'function_call')
        .map((o) => o.name),
      ['get_weather'],
    );
  });
});

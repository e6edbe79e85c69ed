// The official Anthropic SDK (@anthropic-ai/sdk) against a real listening olp on the fake claude:
// messages.create, messages.stream, a tool loop and count_tokens, as an application using the
// Messages API would call olp.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';

const MODEL = 'claude-sonnet-4-5';

const WEATHER: Anthropic.Tool = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('the Anthropic SDK through olp', () => {
  let t: TestDaemon;
  let client: Anthropic;
  before(async () => {
    t = await startTestDaemon();
    // The SDK appends /v1/messages to its base URL; an API key goes as x-api-key.
    client = new Anthropic({ baseURL: t.url, apiKey: t.token, maxRetries: 0 });
  });
  after(async () => t?.close());

  it('messages.create: one assistant message with the reply, end_turn and usage', async () => {
    const m = await client.messages.create({
      model: MODEL,
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'hello' }],
    });
    assert.equal(m.type, 'message');
    assert.equal(m.role, 'assistant');
    assert.equal(m.stop_reason, 'end_turn');
    assert.equal(m.content[0]?.type, 'text');
    assert.match((m.content[0] as Anthropic.TextBlock).text, /Hello from fake claude\. You said: hello/);
    assert.ok(m.usage.input_tokens > 0 && m.usage.output_tokens > 0, JSON.stringify(m.usage));
    // One usage row, as the OpenAI endpoints leave, tagged with the endpoint.
    await new Promise((r) => setTimeout(r, 50));
    const rows = [...t.daemon.store.usage.export({ scope: { all: true } })].filter((r) => r.endpoint === 'messages');
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.outcome, 'ok');
    assert.equal(rows[0]!.usage.completion_tokens, m.usage.output_tokens);
    assert.deepEqual([rows[0]!.api, rows[0]!.provider], ['cli', 'claude-cli']);
  });

  it('a bearer token (authToken) is accepted as well as x-api-key; a wrong key is a 401 authentication_error', async () => {
    const bearer = new Anthropic({ baseURL: t.url, authToken: t.token, apiKey: null, maxRetries: 0 });
    const m = await bearer.messages.create({
      model: MODEL,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(m.type, 'message');
    const wrong = new Anthropic({ baseURL: t.url, apiKey: 'olpk_wrong', maxRetries: 0 });
    await assert.rejects(
      wrong.messages.create({ model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }),
      (e: unknown) => e instanceof Anthropic.AuthenticationError && e.status === 401,
    );
  });

  it('messages.stream: the deltas make the final message’s text; message_start first, message_stop last', async () => {
    const stream = client.messages.stream({
      model: MODEL,
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'stream me' }],
    });
    const types: string[] = [];
    let text = '';
    stream.on('streamEvent', (e) => types.push(e.type));
    stream.on('text', (d) => (text += d));
    const final = await stream.finalMessage();
    assert.equal(types.filter((e) => e !== 'ping')[0], 'message_start');
    assert.equal(types.at(-1), 'message_stop');
    assert.match(text, /Hello from fake claude\. You said: stream me/);
    assert.equal((final.content[0] as Anthropic.TextBlock).text, text);
    assert.equal(final.stop_reason, 'end_turn');
  });

  it('a tool loop: the model calls the tool, the tool_result continues the conversation', async () => {
    const content = `Weather in Paris? [[fake-tools:${JSON.stringify([{ name: 'get_weather', arguments: { city: 'Paris' } }])}]]`;
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content }];
    const first = await client.messages.create({ model: MODEL, max_tokens: 1024, tools: [WEATHER], messages });
    assert.equal(first.stop_reason, 'tool_use');
    const use = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
    assert.ok(use, JSON.stringify(first.content));
    assert.equal(use.name, 'get_weather');
    assert.deepEqual(use.input, { city: 'Paris' });
    messages.push({ role: 'assistant', content: first.content });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '18°C and sunny' }] });
    const second = await client.messages.create({ model: MODEL, max_tokens: 1024, tools: [WEATHER], messages });
    assert.equal(second.stop_reason, 'end_turn');
    assert.match((second.content[0] as Anthropic.TextBlock).text, /echo: 18°C and sunny/);
  });

  it('count_tokens: a positive input_tokens for a prompt, more for a longer one', async () => {
    const short = await client.messages.countTokens({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    const long = await client.messages.countTokens({
      model: MODEL,
      messages: [{ role: 'user', content: 'hi '.repeat(500) }],
    });
    assert.ok(short.input_tokens > 0, JSON.stringify(short));
    assert.ok(long.input_tokens > short.input_tokens, `${long.input_tokens} > ${short.input_tokens}`);
  });
});

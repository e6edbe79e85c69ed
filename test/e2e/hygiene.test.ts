// Real clients send more than text: images and tool histories, end to end through the openai client.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { readRecord, recordedPids } from '../support/procs.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

let t: TestDaemon;
let client: OpenAI;
before(async () => {
  t = await startTestDaemon();
  client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
});
after(async () => t.close());

function latest(before: Set<number>) {
  const pid = recordedPids(t.recordDir)
    .runs.filter((p) => !before.has(p))
    .at(-1)!;
  return readRecord(t.recordDir, pid) as ReturnType<typeof readRecord> & {
    images?: { media_type?: string; bytes: number }[];
  };
}

describe('images', () => {
  for (const model of ['sonnet', 'codex']) {
    it(`${model}: an image_url data URL reaches the CLI as an image`, async () => {
      const before = new Set(recordedPids(t.recordDir).runs);
      const res = await client.chat.completions.create({
        model,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what colour is this pixel?' },
              { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
            ],
          },
        ],
      });
      assert.match(res.choices[0]!.message.content!, /what colour is this pixel\? \(and 1 image/);
      const run = latest(before);
      assert.equal(run.images?.length, 1);
      assert.equal(run.images![0]!.bytes, Buffer.from(PNG, 'base64').length);
      if (model === 'sonnet') assert.ok(run.argv.includes('stream-json') && run.argv.includes('--input-format'));
    });
  }

  it('an undecodable image is a 400 naming the part; a remote URL is refused unless enabled', async () => {
    await assert.rejects(
      client.chat.completions.create({
        model: 'sonnet',
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'c' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
            ],
          },
        ],
      }),
      (err: unknown) =>
        err instanceof OpenAI.BadRequestError && err.param === 'messages.2.content.1' && err.code === 'invalid_image',
    );
    await assert.rejects(
      client.chat.completions.create({
        model: 'sonnet',
        messages: [
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] },
        ],
      }),
      (err: unknown) =>
        err instanceof OpenAI.BadRequestError &&
        err.param === 'messages.0.content.0' &&
        /not fetched/.test(err.message),
    );
  });
});

describe('tool histories', () => {
  it('an agent history with tool calls and results is rendered as delimited text and answered', async () => {
    const before = new Set(recordedPids(t.recordDir).runs);
    const res = await client.chat.completions.create({
      model: 'sonnet',
      messages: [
        { role: 'system', content: 'You can call tools.' },
        { role: 'user', content: 'What is the weather in Oslo?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_abc.1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_abc.1', content: '{"temp":4,"sky":"rain"}' },
        { role: 'user', content: 'So, umbrella?' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
    });
    assert.match(res.choices[0]!.message.content!, /umbrella/);
    const stdin = latest(before).stdin ?? '';
    assert.match(stdin, /<tool_call id="call_abc_1" name="get_weather">\n\{"city":"Oslo"\}\n<\/tool_call>/);
    assert.match(stdin, /<tool_result id="call_abc_1" name="get_weather">\n\{"temp":4,"sky":"rain"\}\n<\/tool_result>/);
    assert.match(stdin, /<user>\nSo, umbrella\?\n<\/user>\n<\/conversation>$/);
  });

  it('a conversation over the model’s budget is refused with context_length_exceeded', async () => {
    const small = await startTestDaemon({ config: { contextTokens: { claude: 1000 } } });
    try {
      const c = new OpenAI({ baseURL: small.baseURL, apiKey: small.token, maxRetries: 0 });
      await assert.rejects(
        c.chat.completions.create({ model: 'sonnet', messages: [{ role: 'user', content: 'x'.repeat(10_000) }] }),
        (err: unknown) => err instanceof OpenAI.BadRequestError && err.code === 'context_length_exceeded',
      );
    } finally {
      await small.close();
    }
  });
});

// Structured outputs: a json_schema response format is enforced by the CLI itself (claude's
// StructuredOutput tool via `initialize`, codex's --output-schema in the strict form), the reply
// is the JSON alone, and JSON replies lose the code fences a model wraps them in.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { readRecord, recordedPids } from '../support/procs.js';

const WEATHER_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, temp: { type: 'number' }, note: { type: 'string' } },
  required: ['city', 'temp'],
};
const FORMAT = { type: 'json_schema' as const, json_schema: { name: 'weather', schema: WEATHER_SCHEMA } };
const asking = (obj: unknown, extra = '') => `weather please ${extra}[[fake-json:${JSON.stringify(obj)}]]`;

let t: TestDaemon;
let client: OpenAI;
before(async () => {
  t = await startTestDaemon();
  client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
});
after(async () => {
  await t.close();
});

const lastRun = (dir = t.recordDir) =>
  readRecord(dir, recordedPids(dir).runs.at(-1)!) as ReturnType<typeof readRecord> & {
    jsonSchema?: unknown;
    system?: string;
  };

describe('structured outputs (claude)', () => {
  it('the schema goes to the CLI (never argv, no prompt instruction); the reply is the checked JSON alone', async () => {
    const res = await client.chat.completions.create({
      model: 'sonnet',
      messages: [{ role: 'user', content: asking({ city: 'Paris', temp: 21.5 }, '[[fake:structured-prose]] ') }],
      response_format: FORMAT,
    });
    assert.equal(res.choices[0]!.finish_reason, 'stop');
    assert.deepEqual(JSON.parse(res.choices[0]!.message.content!), { city: 'Paris', temp: 21.5 });
    const run = lastRun();
    assert.deepEqual(run.jsonSchema, WEATHER_SCHEMA);
    assert.ok(!run.argv.some((a) => a.includes('"properties"')), 'the schema is not on the command line');
    assert.doesNotMatch(run.system ?? '', /Reply with one valid JSON/);
  });

  it('streamed: the JSON arrives without the prose around it', async () => {
    const stream = await client.chat.completions.create({
      model: 'sonnet',
      messages: [{ role: 'user', content: asking({ city: 'Oslo', temp: -3 }, '[[fake:structured-prose]] ') }],
      response_format: FORMAT,
      stream: true,
    });
    let text = '';
    for await (const ch of stream) text += ch.choices[0]?.delta.content ?? '';
    assert.deepEqual(JSON.parse(text), { city: 'Oslo', temp: -3 });
  });

  it('a model that never calls the tool: its text is the reply; one that keeps failing the schema: a 502 that says so', async () => {
    const prose = await client.chat.completions.create({
      model: 'sonnet',
      messages: [{ role: 'user', content: 'weather [[fake:structured-refuse]]' }],
      response_format: FORMAT,
    });
    assert.equal(prose.choices[0]!.message.content, 'Here is what I found. ');
    await assert.rejects(
      client.chat.completions.create({
        model: 'sonnet',
        messages: [{ role: 'user', content: 'weather [[fake:structured-invalid]]' }],
        response_format: FORMAT,
      }),
      (err: unknown) =>
        err instanceof OpenAI.APIError && err.status === 502 && /valid structured output/.test(err.message),
    );
  });

  it('a continued conversation keeps its schema on the live worker; another schema needs another process', async () => {
    const u = await startTestDaemon({ config: { workers: true, prestart: false } });
    try {
      const c = new OpenAI({ baseURL: u.baseURL, apiKey: u.token, maxRetries: 0 });
      const messages: OpenAI.ChatCompletionMessageParam[] = [
        { role: 'user', content: asking({ city: 'Rome', temp: 30 }) },
      ];
      const r1 = await c.chat.completions.create({ model: 'sonnet', messages, response_format: FORMAT });
      messages.push(
        { role: 'assistant', content: r1.choices[0]!.message.content! },
        { role: 'user', content: asking({ city: 'Lima', temp: 18 }) },
      );
      const r2 = await c.chat.completions.create({ model: 'sonnet', messages, response_format: FORMAT });
      assert.deepEqual(JSON.parse(r2.choices[0]!.message.content!), { city: 'Lima', temp: 18 });
      const runs = () => u.logs.filter((l) => l.event === 'request').map((l) => l.run);
      assert.deepEqual(runs(), ['cold', 'warm']);
      messages.push(
        { role: 'assistant', content: r2.choices[0]!.message.content! },
        { role: 'user', content: asking({ n: 1 }) },
      );
      const other = {
        type: 'json_schema' as const,
        json_schema: { name: 'n', schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } },
      };
      const r3 = await c.chat.completions.create({ model: 'sonnet', messages, response_format: other });
      assert.deepEqual(JSON.parse(r3.choices[0]!.message.content!), { n: 1 });
      assert.notEqual(runs().at(-1), 'warm');
      assert.deepEqual(lastRun(u.recordDir).jsonSchema, other.json_schema.schema);
    } finally {
      await u.close();
    }
  });
});

describe('structured outputs (codex)', () => {
  it('an ordinary schema is rewritten to the strict form codex sends; the reply fits the client’s schema again', async () => {
    // Under the strict form the optional `note` came back null: it is left out, as the client's schema has it.
    const res = await client.chat.completions.create({
      model: 'codex',
      messages: [{ role: 'user', content: asking({ city: 'Kyiv', temp: 4, note: null }) }],
      response_format: FORMAT,
    });
    assert.deepEqual(JSON.parse(res.choices[0]!.message.content!), { city: 'Kyiv', temp: 4 });
    const argv = lastRun().argv;
    assert.ok(argv.includes('--output-schema'), argv.join(' '));
  });

  it('on /v1/responses, text.format json_schema does the same', async () => {
    const res = await client.responses.create({
      model: 'codex',
      input: asking({ city: 'Quito', temp: 15 }),
      text: { format: { type: 'json_schema', name: 'weather', schema: WEATHER_SCHEMA } },
    });
    assert.deepEqual(JSON.parse(res.output_text), { city: 'Quito', temp: 15 });
  });
});

describe('JSON replies lose their code fences', () => {
  it('json_object: a fenced reply comes back bare, whole and streamed', async () => {
    const u = await startTestDaemon({
      claudeEnv: { FAKE_CLAUDE_REPLY: '```json\n{"answer": 42, "list": [1, 2]}\n```\n', FAKE_CLAUDE_PIECE_BYTES: '3' },
    });
    try {
      const c = new OpenAI({ baseURL: u.baseURL, apiKey: u.token, maxRetries: 0 });
      const whole = await c.chat.completions.create({
        model: 'sonnet',
        messages: [{ role: 'user', content: 'json please' }],
        response_format: { type: 'json_object' },
      });
      assert.equal(whole.choices[0]!.message.content, '{"answer": 42, "list": [1, 2]}');
      const stream = await c.chat.completions.create({
        model: 'sonnet',
        messages: [{ role: 'user', content: 'json please' }],
        response_format: { type: 'json_object' },
        stream: true,
      });
      let text = '';
      for await (const ch of stream) text += ch.choices[0]?.delta.content ?? '';
      assert.equal(text, '{"answer": 42, "list": [1, 2]}');
      // Plain text keeps its fences.
      const plain = await c.chat.completions.create({
        model: 'sonnet',
        messages: [{ role: 'user', content: 'json please' }],
      });
      assert.match(plain.choices[0]!.message.content!, /^```json/);
    } finally {
      await u.close();
    }
  });
});

// Structured outputs on the real CLIs (pinned devDependencies) against loopback stand-ins for
// their APIs: claude gets the schema with the `initialize` control request (its system prompt
// still from the file) and offers the model its StructuredOutput tool, on a continued turn too;
// codex sends the schema, rewritten to the strict form, as the Responses API's text.format.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { claudeStandInEnv, startAnthropicStandIn, type StandIn } from '../support/anthropic-stand-in.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { assertNoClaudeTmp, assertUnderstood, claudeTmp } from '../support/real.js';
import { REAL_CLAUDE, REAL_CLAUDE_VERSION, REAL_CODEX } from '../support/paths.js';
import {
  codexStandInConfig,
  CODEX_STAND_IN_ENV,
  startResponsesStandIn,
  type ResponsesStandIn,
} from '../support/responses-stand-in.js';

let claudeApi: StandIn;
let codexApi: ResponsesStandIn;
let t: TestDaemon;
let client: OpenAI;

const SCHEMA = {
  type: 'object',
  properties: { heard: { type: 'string' }, mood: { type: 'string' } },
  required: ['heard'],
};
const FORMAT = { type: 'json_schema' as const, json_schema: { name: 'heard', schema: SCHEMA } };

const tmpBefore = claudeTmp();
before(async () => {
  assert.ok(existsSync(REAL_CLAUDE) && existsSync(REAL_CODEX), 'the real CLIs are missing: run npm ci');
  claudeApi = await startAnthropicStandIn();
  codexApi = await startResponsesStandIn();
  t = await startTestDaemon({
    config: {
      claudeBin: REAL_CLAUDE,
      codexBin: REAL_CODEX,
      timeout: 60,
      idleTimeout: 30,
      workers: true,
      prestart: false,
      codexConfig: codexStandInConfig(codexApi.url),
    },
    claudeEnv: claudeStandInEnv(claudeApi.url),
    codexEnv: CODEX_STAND_IN_ENV,
  });
  client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
});
after(async () => {
  const logs = t?.logs ?? [];
  await t?.close();
  await claudeApi?.close();
  await codexApi?.close();
  assertUnderstood(logs);
  assertNoClaudeTmp(tmpBefore);
});

describe(`structured outputs on the real CLIs (claude ${REAL_CLAUDE_VERSION})`, () => {
  it('claude: the model is offered StructuredOutput with the schema, the system prompt is kept, and a continued turn keeps the schema', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'Answer in JSON. SCHEMA-SYSTEM' },
      { role: 'user', content: 'first structured words' },
    ];
    const before = claudeApi.requests.length;
    const r1 = await client.chat.completions.create({ model: 'sonnet', messages, response_format: FORMAT });
    assert.deepEqual(JSON.parse(r1.choices[0]!.message.content!), { heard: 'first structured words' });
    const sent = claudeApi.requests
      .slice(before)
      .find((r) => r.body.stream && Array.isArray(r.body.tools) && r.body.tools.length > 0)!;
    const tool = (sent.body.tools as { name: string; input_schema: unknown }[]).find(
      (x) => x.name === 'StructuredOutput',
    );
    assert.deepEqual(tool?.input_schema, SCHEMA);
    assert.match(JSON.stringify(sent.body.system), /SCHEMA-SYSTEM/, 'the system prompt from the file is still there');
    messages.push(
      { role: 'assistant', content: r1.choices[0]!.message.content! },
      { role: 'user', content: 'second structured words' },
    );
    const stream = await client.chat.completions.create({
      model: 'sonnet',
      messages,
      response_format: FORMAT,
      stream: true,
    });
    let text = '';
    for await (const ch of stream) text += ch.choices[0]?.delta.content ?? '';
    assert.deepEqual(JSON.parse(text), { heard: 'second structured words' });
    const runs = t.logs.filter((l) => l.event === 'request' && l.model === 'sonnet').map((l) => l.run);
    assert.deepEqual(runs.slice(-2), ['cold', 'warm'], 'the second turn went to the live worker, its schema kept');
  });

  it('codex: text.format carries the schema in the strict form', async () => {
    const before = codexApi.requests.length;
    const res = await client.chat.completions.create({
      model: 'codex',
      messages: [{ role: 'user', content: 'codex structured words' }],
      response_format: FORMAT,
    });
    assert.deepEqual(JSON.parse(res.choices[0]!.message.content!), { heard: 'codex structured words' });
    const format = codexApi.requests.slice(before).find((r) => r.text?.format)!.text!.format!;
    assert.equal(format.type, 'json_schema');
    assert.equal(format.strict, true);
    assert.deepEqual(format.schema, {
      type: 'object',
      properties: { heard: { type: 'string' }, mood: { type: ['string', 'null'] } },
      required: ['heard', 'mood'],
      additionalProperties: false,
    });
  });
});

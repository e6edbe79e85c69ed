// The real `codex` binary (pinned devDependency, the native executable) through olp, against a
// loopback stand-in for the OpenAI Responses API: flags, stdin prompt, profile-file instructions,
// event parsing, usage mapping and thread resume on the binary users run. No login, nothing leaves the machine.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { assertUnderstood } from '../support/real.js';
import { REAL_CODEX } from '../support/paths.js';
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
      // The operator's way to point codex at another Responses endpoint: a model provider.
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

describe('real codex CLI through olp', () => {
  it('answers, with the system prompt as developer instructions, no shell tool, and usage mapped', async () => {
    api.mode = 'text';
    const before = api.requests.length;
    const res = await client.chat.completions.create({
      model: 'codex',
      messages: [
        { role: 'system', content: 'SYSTEM-MARK-9 be brief' },
        { role: 'user', content: 'what is 2+2' },
      ],
    });
    assert.equal(res.choices[0]?.message.content, 'responses stand-in heard: what is 2+2');
    const sent = api.requests.slice(before)[0]!;
    assert.match(JSON.stringify(sent), /SYSTEM-MARK-9/, 'developer instructions reached the model');
    const tools = JSON.stringify(sent.tools ?? []);
    assert.ok(!/"(shell|exec_command|local_shell)"/.test(tools), `no shell tool offered: ${tools.slice(0, 300)}`);
    assert.deepEqual(
      [
        res.usage?.prompt_tokens,
        res.usage?.prompt_tokens_details?.cached_tokens,
        res.usage?.completion_tokens,
        res.usage?.completion_tokens_details?.reasoning_tokens,
      ],
      [1200, 200, 12, 4],
    );
  });

  it('streams', async () => {
    const stream = await client.chat.completions.create({
      model: 'codex',
      messages: [{ role: 'user', content: 'stream it' }],
      stream: true,
    });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    assert.equal(text, 'responses stand-in heard: stream it');
  });

  it('resumes the thread on the next turn and reports that turn’s usage, not the running total', async () => {
    const first = await client.chat.completions.create({
      model: 'codex',
      messages: [{ role: 'user', content: 'remember KIWI' }],
    });
    const before = api.requests.length;
    const { data, response } = await client.chat.completions
      .create({
        model: 'codex',
        messages: [
          { role: 'user', content: 'remember KIWI' },
          { role: 'assistant', content: first.choices[0]!.message.content! },
          { role: 'user', content: 'which fruit?' },
        ],
      })
      .withResponse();
    assert.equal(response.headers.get('x-olp-session-mode'), 'resumed');
    assert.equal(data.choices[0]?.message.content, 'responses stand-in heard: which fruit?');
    assert.match(
      JSON.stringify(api.requests.slice(before)[0]?.input),
      /remember KIWI/,
      'codex supplied the thread history itself',
    );
    assert.equal(data.usage?.prompt_tokens, 1200, 'the thread total was 2400; this turn used 1200');
  });

  it('/v1/responses streams through the real codex', async () => {
    const stream = await client.responses.create({ model: 'codex', input: 'respond please', stream: true });
    let text = '';
    let usage: OpenAI.Responses.ResponseUsage | undefined;
    for await (const ev of stream) {
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.completed') usage = ev.response.usage;
    }
    assert.equal(text, 'responses stand-in heard: respond please');
    assert.ok(usage && usage.input_tokens > 0);
  });

  it('a refused API key → 503 saying to run codex login; a usage limit → 429', async () => {
    try {
      api.mode = '401';
      await assert.rejects(
        client.chat.completions.create({ model: 'codex', messages: [{ role: 'user', content: 'x' }] }),
        (err: unknown) => err instanceof OpenAI.APIError && err.status === 503 && /codex login/.test(err.message),
      );
      api.mode = '429';
      await assert.rejects(
        client.chat.completions.create({ model: 'codex', messages: [{ role: 'user', content: 'y' }] }),
        (err: unknown) => err instanceof OpenAI.APIError && err.status === 429,
      );
    } finally {
      api.mode = 'text';
    }
  });
});

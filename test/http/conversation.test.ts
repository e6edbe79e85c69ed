// The conversation core in-process: no listening daemon, the app from composeDaemon(deps) under
// supertest, and openConversation driven directly, on the fake CLIs. One core behind two wire
// formats: the same conversation gives the same answer, rows and session behaviour on both.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import request from 'supertest';
import { parseConfig } from '../../src/config/index.js';
import { openConversation, type ConversationEvent, type ConversationResult } from '../../src/conversation/index.js';
import { createLogger } from '../../src/log/index.js';
import { toCoreMessages } from '../../src/wire/index.js';
import { composeDaemon } from '../../src/serve.js';
import { FAKE_CLAUDE, FAKE_CODEX } from '../support/paths.js';

const base = mkdtempSync(join(tmpdir(), 'olp-core-'));
const config = parseConfig({
  readFile: false,
  env: {},
  overrides: {
    stateDir: join(base, 'state'),
    claudeBin: FAKE_CLAUDE,
    codexBin: FAKE_CODEX,
    logLevel: 'silent',
    fallbacks: { 'claude-opus-4-8': ['codex'] },
  },
});
const core = composeDaemon({
  config,
  logger: createLogger('silent'),
  hostEnv: { PATH: process.env.PATH ?? '', HOME: join(base, 'home') },
});
const { key, token } = core.store.keys.add('me', 'owner');
const principal = { keyId: key.id, name: key.name, role: key.role, policy: key.policy, login: key.login };
let n = 0;
const meta = (stream = false) => ({
  requestId: `req_core${n++}`,
  endpoint: 'chat.completions' as const,
  stream,
  log: createLogger('silent'),
  startedAt: Date.now(),
  started: performance.now(),
});

after(async () => {
  await core.close();
  rmSync(base, { recursive: true, force: true });
});

async function drain(
  gen: AsyncGenerator<ConversationEvent, ConversationResult>,
): Promise<{ events: ConversationEvent[]; result: ConversationResult }> {
  const events: ConversationEvent[] = [];
  let step = await gen.next();
  while (!step.done) {
    events.push(step.value);
    step = await gen.next();
  }
  return { events, result: step.value };
}

async function row(requestId: string) {
  for (let i = 0; i < 100; i++) {
    const r = core.store.usage.get(requestId);
    if (r) return r;
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new Error(`no row for ${requestId}`);
}

describe('the conversation core, driven directly', () => {
  it('yields started once, then the text; its result carries usage, session and status; one ledger row', async () => {
    const m = meta();
    const conv = openConversation(core.conversation, principal, m);
    const { events, result } = await drain(
      conv.run(
        { model: 'sonnet', messages: toCoreMessages([{ role: 'user', content: 'core hello' }]) },
        new AbortController().signal,
      ),
    );
    assert.equal(events[0]?.type, 'started');
    assert.equal(events.filter((e) => e.type === 'started').length, 1);
    assert.equal(
      events
        .filter((e) => e.type === 'text')
        .map((e) => (e.type === 'text' ? e.text : ''))
        .join(''),
      'Hello from fake claude. You said: core hello',
    );
    assert.deepEqual(
      [result.outcome, result.status, result.backend, result.servedModel, result.error],
      ['ok', 200, 'claude', 'sonnet', null],
    );
    assert.ok(result.usage && result.usage.promptTokens > 0);
    assert.equal(result.session?.mode, 'fresh');
    assert.equal(conv.result, result);
    assert.ok(Object.isFrozen(result));
    const r = await row(m.requestId);
    assert.deepEqual(
      [r.outcome, r.endpoint, r.provider, r.usage.total_tokens],
      ['ok', 'chat.completions', 'claude-cli', result.usage.totalTokens],
    );
  });

  it('falls back before any output and says which model answered', async () => {
    const conv = openConversation(core.conversation, principal, meta());
    const { events, result } = await drain(
      conv.run(
        {
          model: 'claude-opus-4-8',
          messages: toCoreMessages([
            { role: 'system', content: '[[fake-claude:not-logged-in]]' },
            { role: 'user', content: 'fall back please' },
          ]),
        },
        new AbortController().signal,
      ),
    );
    const started = events.find((e) => e.type === 'started');
    assert.equal(started?.type === 'started' && started.model, 'codex');
    assert.deepEqual(
      [result.outcome, result.backend, result.servedModel, result.model],
      ['ok', 'codex', 'codex', 'claude-opus-4-8'],
    );
  });

  it('shown thinking commits a streamed answer (no fallback after it, the error in-band); unshown, it falls back', async () => {
    const input = {
      model: 'claude-opus-4-8',
      messages: toCoreMessages([
        { role: 'system', content: '[[fake-claude:thinking-rate-limited]]' },
        { role: 'user', content: 'think, then fail' },
      ]),
    };
    const shows = { ...input, reasoning: { shown: true } };
    const messages = await drain(
      openConversation(core.conversation, principal, { ...meta(true), endpoint: 'messages' }).run(
        shows,
        new AbortController().signal,
      ),
    );
    const types = messages.events.map((e) => e.type);
    assert.deepEqual([types[0], new Set(types.slice(1))], ['started', new Set(['thinking'])]);
    assert.deepEqual(messages.events.at(-1), { type: 'thinking', text: '', signature: 'sig-fake' });
    assert.deepEqual(
      [messages.result.backend, messages.result.error?.code, messages.result.status],
      ['claude', 'backend_rate_limited', 200],
    );
    for (const m of [meta(true), { ...meta(false), endpoint: 'messages' as const }, meta(false)]) {
      const other = await drain(
        openConversation(core.conversation, principal, m).run(
          m.endpoint === 'messages' ? shows : input,
          new AbortController().signal,
        ),
      );
      const shown = other.events.some((e) => e.type === 'thinking');
      if (m.endpoint === 'messages') {
        // Held until the turn ends (answered in one body): nothing was sent, yet the turn is committed as text commits it.
        assert.equal(shown, true);
        assert.equal(other.result.error?.code, 'backend_rate_limited');
      } else {
        assert.equal(shown, false);
        assert.deepEqual([other.result.outcome, other.result.backend], ['ok', 'codex']);
      }
    }
  });

  it('a refused request never throws: the result holds the error and the row says rejected', async () => {
    const m = meta();
    const conv = openConversation(core.conversation, principal, m);
    const { events, result } = await drain(
      conv.run(
        { model: 'no-such-model', messages: toCoreMessages([{ role: 'user', content: 'x' }]) },
        new AbortController().signal,
      ),
    );
    assert.deepEqual(events, []);
    assert.deepEqual([result.outcome, result.status, result.error?.code], ['rejected', 404, 'model_not_found']);
    assert.equal((await row(m.requestId)).outcome, 'rejected');
  });

  it('a caller that aborts ends the run as client_aborted, charged what was sent', async () => {
    const m = meta(true);
    const conv = openConversation(core.conversation, principal, m);
    const stop = new AbortController();
    const gen = conv.run(
      {
        model: 'sonnet',
        messages: toCoreMessages([
          { role: 'system', content: '[[fake:slow]]' },
          { role: 'user', content: 'a long enough message to get several slow deltas' },
        ]),
      },
      stop.signal,
    );
    let texts = 0;
    for (let step = await gen.next(); !step.done; step = await gen.next()) {
      if (step.value.type === 'text' && ++texts === 2) stop.abort('client_disconnect');
    }
    assert.equal(conv.result?.outcome, 'client_aborted');
    assert.equal(conv.result?.status, 499);
    const r = await row(m.requestId);
    assert.ok(r.usage.completion_tokens > 0);
  });
});

describe('two wire formats, one core (createApp in-process)', () => {
  it('chat and responses give the same answer for the same conversation, and rows per endpoint', async () => {
    const chat = await request(core.app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${token}`)
      .send({
        model: 'codex',
        messages: [
          { role: 'system', content: 'be kind' },
          { role: 'user', content: 'same question' },
        ],
      });
    const resp = await request(core.app)
      .post('/v1/responses')
      .set('authorization', `Bearer ${token}`)
      .send({ model: 'codex', instructions: 'be kind', input: 'same question' });
    assert.equal(chat.status, 200);
    assert.equal(resp.status, 200);
    assert.equal(resp.body.output_text, chat.body.choices[0].message.content);
    assert.equal(resp.body.usage.input_tokens, chat.body.usage.prompt_tokens);
    const chatRow = await row(chat.headers['x-request-id']!);
    const respRow = await row(resp.headers['x-request-id']!);
    assert.deepEqual([chatRow.endpoint, respRow.endpoint], ['chat.completions', 'responses']);
    assert.deepEqual([chatRow.provider, respRow.provider], ['codex', 'codex']);
  });

  it('a failure before output is the same error envelope on both', async () => {
    const chat = await request(core.app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${token}`)
      .send({ model: 'sonnet', messages: [{ role: 'user', content: '[[fake:rate-limited]] x' }] });
    const resp = await request(core.app)
      .post('/v1/responses')
      .set('authorization', `Bearer ${token}`)
      .send({ model: 'sonnet', input: '[[fake:rate-limited]] x' });
    assert.equal(chat.status, 429);
    assert.deepEqual(resp.status, chat.status);
    assert.equal(resp.body.error.code, chat.body.error.code);
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { isAlive, readRecord, recordedPids, type RunRecord } from '../support/procs.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';

let t: TestDaemon;
before(async () => {
  t = await startTestDaemon({ config: { anthropicModels: { 'my-anthropic-*': 'sonnet' } } });
});
after(async () => {
  await t.close();
});

const spawns = () => recordedPids(t.recordDir).runs.length;
const post = (path: string, body: unknown) =>
  request(t.url)
    .post(path)
    .set('x-api-key', t.token)
    .set('anthropic-version', '2023-06-01')
    .set('anthropic-beta', 'claude-code-20250219,some-future-beta')
    .send(body as object);
const ask = (content: string, extra: Record<string, unknown> = {}) =>
  post('/v1/messages', { model: 'sonnet', max_tokens: 1024, messages: [{ role: 'user', content }], ...extra });

/** The request's ledger row (written just after the response). */
async function usageRow(requestId: string) {
  for (let i = 0; i < 100; i++) {
    const r = t.daemon.store.usage.get(requestId);
    if (r) return r;
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new Error(`no row for ${requestId}`);
}

/** An Anthropic stream event, as far as these tests read it. */
interface Frame {
  type: string;
  index?: number;
  content_block?: { type: string };
  delta?: { type: string; thinking?: string; text?: string; signature?: string };
}

/** Anthropic's error envelope, with its status and type. */
function anthropicError(res: request.Response, status: number, type: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.type, 'error', JSON.stringify(res.body));
  assert.equal(res.body.error.type, type);
  assert.equal(typeof res.body.error.message, 'string');
  assert.equal(res.body.error.code, undefined);
}

describe('POST /v1/messages', () => {
  it('answers a message by x-api-key, as JSON, and with ?beta=true as Claude Code asks', async () => {
    for (const path of ['/v1/messages', '/v1/messages?beta=true']) {
      const res = await post(path, {
        model: 'sonnet',
        max_tokens: 1024,
        system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hello there' }] }],
        metadata: { user_id: 'u1' },
        thinking: { type: 'enabled', budget_tokens: 1024 },
        some_new_field: { from: 'a newer client' },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.type, 'message');
      assert.equal(res.body.role, 'assistant');
      assert.match(res.body.id, /^msg_/);
      assert.match(res.body.content[0].text, /hello there/);
      const row = await usageRow(res.headers['x-request-id']!);
      assert.equal(row.endpoint, 'messages');
    }
  });

  it('streams Anthropic events when stream is true', async () => {
    const res = await ask('stream me', { stream: true })
      .buffer(true)
      .parse((r, cb) => {
        let text = '';
        r.on('data', (c: Buffer) => (text += c.toString('utf8')));
        r.on('end', () => cb(null, text));
      });
    assert.equal(res.status, 200);
    assert.match(res.headers['content-type'] ?? '', /text\/event-stream/);
    const body = String(res.body);
    assert.match(body, /^event: message_start\n/);
    const text = [...body.matchAll(/"text_delta","text":("(?:[^"\\]|\\.)*")/g)]
      .map((m) => JSON.parse(m[1]!) as string)
      .join('');
    assert.match(text, /stream me/);
    assert.match(body, /event: message_stop/);
  });

  it("the model's thinking (fake claude: a thinking block before the text) streams as a thinking block first", async () => {
    const res = await ask('[[fake:thinking]] think first', { stream: true })
      .buffer(true)
      .parse((r, cb) => {
        let text = '';
        r.on('data', (c: Buffer) => (text += c.toString('utf8')));
        r.on('end', () => cb(null, text));
      });
    assert.equal(res.status, 200);
    const events = String(res.body)
      .split('\n\n')
      .filter((f) => f.startsWith('event: ') && !f.startsWith('event: ping'))
      .map((f) => JSON.parse(f.split('\n')[1]!.slice('data: '.length)) as Frame);
    const shape = events.map((e) =>
      e.type === 'content_block_start'
        ? `start:${e.index}:${e.content_block!.type}`
        : e.type === 'content_block_delta'
          ? `delta:${e.index}:${e.delta!.type}`
          : e.type === 'content_block_stop'
            ? `stop:${e.index}`
            : e.type,
    );
    const firstText = shape.indexOf('start:1:text');
    assert.deepEqual(shape.slice(0, 2), ['message_start', 'start:0:thinking'], shape.join(' '));
    assert.deepEqual(shape.slice(firstText - 2, firstText + 1), ['delta:0:signature_delta', 'stop:0', 'start:1:text']);
    assert.deepEqual(shape.slice(-4), ['delta:1:text_delta', 'stop:1', 'message_delta', 'message_stop']);
    assert.deepEqual(events[1]!.content_block, { type: 'thinking', thinking: '' });
    const thinking = events.filter((e) => e.delta?.type === 'thinking_delta').map((e) => e.delta!.thinking!);
    assert.match(thinking.join(''), /^Thinking about: Hello from fake claude/);
    assert.equal(events[firstText - 2]!.delta!.signature, 'sig-fake');
    const text = events.filter((e) => e.delta?.type === 'text_delta').map((e) => e.delta!.text!);
    assert.match(text.join(''), /think first/);
    assert.doesNotMatch(text.join(''), /Thinking about/);
  });

  it('thinking: the whole Message has the thinking block first; chat completions never show it', async () => {
    const res = await ask('[[fake:thinking]] think first');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.content.map((c: { type: string }) => c.type),
      ['thinking', 'text'],
    );
    assert.match(res.body.content[0].thinking, /^Thinking about: Hello from fake claude/);
    assert.equal(res.body.content[0].signature, 'sig-fake');
    assert.match(res.body.content[1].text, /think first/);
    // Sent back in history, as Claude Code sends it, the block is taken (and left out of the prompt).
    const next = await post('/v1/messages', {
      model: 'sonnet',
      max_tokens: 1024,
      messages: [
        { role: 'user', content: '[[fake:thinking]] think first' },
        { role: 'assistant', content: res.body.content },
        { role: 'user', content: 'and again' },
      ],
    });
    assert.equal(next.status, 200, JSON.stringify(next.body));
    for (const stream of [false, true]) {
      const chat = await request(t.url)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${t.token}`)
        .send({ model: 'sonnet', stream, messages: [{ role: 'user', content: '[[fake:thinking]] think first' }] })
        .buffer(true)
        .parse((r, cb) => {
          let text = '';
          r.on('data', (c: Buffer) => (text += c.toString('utf8')));
          r.on('end', () => cb(null, text));
        });
      assert.equal(chat.status, 200);
      const body = String(chat.body);
      if (!stream) assert.match(JSON.parse(body).choices[0].message.content, /^Hello from fake claude.*think first$/);
      else assert.match(body, /"finish_reason":"stop"/);
      assert.doesNotMatch(body, /Thinking about|sig-fake/);
    }
  });

  it('a key in both headers that disagree is refused; none at all too; in Anthropic envelopes', async () => {
    const both = await request(t.url)
      .post('/v1/messages')
      .set('x-api-key', t.token)
      .set('authorization', 'Bearer sk-olp-something-else')
      .send({ model: 'sonnet', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
    anthropicError(both, 401, 'authentication_error');
    const same = await request(t.url)
      .post('/v1/messages')
      .set('x-api-key', t.token)
      .set('anthropic-version', '2023-06-01')
      .set('authorization', `Bearer ${t.token}`)
      .send({ model: 'sonnet', max_tokens: 10, messages: [{ role: 'user', content: 'same key' }] });
    assert.equal(same.status, 200);
    const none = await request(t.url).post('/v1/messages').send({});
    anthropicError(none, 401, 'authentication_error');
    const wrong = await request(t.url).post('/v1/messages').set('x-api-key', 'sk-olp-wrong').send({});
    anthropicError(wrong, 401, 'authentication_error');
  });

  it('validation, unknown models and unknown paths are Anthropic errors', async () => {
    anthropicError(
      await post('/v1/messages', { model: 'sonnet', messages: [{ role: 'user', content: 'x' }] }),
      400,
      'invalid_request_error',
    );
    anthropicError(await ask('x', { model: 'no-such-model' }), 404, 'not_found_error');
    anthropicError(
      await ask('x', {
        messages: [
          {
            role: 'user',
            content: [{ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }],
          },
        ],
      }),
      400,
      'invalid_request_error',
    );
    anthropicError(await post('/v1/messages/batches', {}), 404, 'not_found_error');
  });

  it("a PDF document reaches the claude CLI's stdin as Anthropic's document block; codex refuses it naming the part", async () => {
    const pdf = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\n%%EOF\n', 'latin1');
    const body = (model: string) => ({
      model,
      max_tokens: 1024,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'summarise this' },
            {
              type: 'document',
              source: { type: 'base64', media_type: 'application/pdf', data: pdf.toString('base64') },
            },
          ],
        },
      ],
    });
    const res = await post('/v1/messages', body('sonnet'));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.match(res.body.content[0].text, /summarise this \(and 1 document: application\/pdf\)/);
    const got = recordedPids(t.recordDir)
      .runs.map((pid) => readRecord(t.recordDir, pid) as RunRecord & { documents?: unknown[] })
      .filter((r) => r.documents);
    assert.deepEqual(got.at(-1)?.documents, [
      { source_type: 'base64', media_type: 'application/pdf', bytes: pdf.length },
    ]);
    assert.equal(got.at(-1)?.stdin, 'summarise this');

    // The next turn re-sends the document in its history: the same turns, so the CLI session continues.
    const next = body('sonnet');
    next.messages.push(
      { role: 'assistant', content: [{ type: 'text', text: res.body.content[0].text }] },
      { role: 'user', content: [{ type: 'text', text: 'and page two?' }] },
    );
    const before = new Set(recordedPids(t.recordDir).runs);
    const again = await post('/v1/messages', next);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.headers['x-olp-session-mode'], 'resumed');
    const resumed = recordedPids(t.recordDir)
      .runs.filter((pid) => !before.has(pid))
      .map((pid) => readRecord(t.recordDir, pid) as RunRecord & { documents?: unknown[] });
    assert.deepEqual(
      resumed.map((r) => [r.session, r.stdin, r.documents]),
      [['resume', 'and page two?', undefined]],
    );

    const codex = await post('/v1/messages', body('gpt-5.5'));
    anthropicError(codex, 400, 'invalid_request_error');
    assert.match(codex.body.error.message, /messages\.0\.content\.1.*codex takes no documents/);
  });

  it('a streamed request that fails before its first byte, and a body that is not JSON, get the envelope too', async () => {
    const res = await ask('[[fake:not-logged-in]]', { stream: true });
    anthropicError(res, 503, 'api_error');
    const broken = await request(t.url)
      .post('/v1/messages')
      .set('x-api-key', t.token)
      .set('anthropic-version', '2023-06-01')
      .set('content-type', 'application/json')
      .send('{"model": ');
    anthropicError(broken, 400, 'invalid_request_error');
  });

  // Not 401/403: on those Claude Code asks its user to run /login, which does nothing for the CLI
  // login on the machine running olp. The 503 of the OpenAI routes, with x-should-retry: false,
  // which Claude Code reads before the status (test/clients/claude-code-client.test.ts).
  it('a CLI that is not logged in is the 503 of every wire format, says not to retry and what to do', async () => {
    const res = await ask('[[fake:not-logged-in]]');
    anthropicError(res, 503, 'api_error');
    assert.match(res.body.error.message, /On the machine running olp, run `claude auth login`/);
    assert.equal(res.headers['x-should-retry'], 'false');
  });

  it('server tools are not offered and are named in x-olp-tools-dropped', async () => {
    const res = await ask('search please', {
      tools: [
        { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
        { name: 'get_weather', description: 'weather', input_schema: { type: 'object', properties: {} } },
      ],
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.headers['x-olp-tools-dropped'], 'web_search_20250305');
  });

  it('anthropicModels maps a glob of Anthropic ids to a served model, on /v1/messages only', async () => {
    const res = await ask('mapped', { model: 'my-anthropic-model-1' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const chat = await request(t.url)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${t.token}`)
      .send({ model: 'my-anthropic-model-1', messages: [{ role: 'user', content: 'x' }] });
    assert.equal(chat.status, 404);
  });

  it("a tool_result continues the CLI parked on the model's tool_use, with no new spawn", async () => {
    const tools = [
      {
        name: 'get_weather',
        description: 'The weather in a city',
        input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        cache_control: { type: 'ephemeral' },
      },
    ];
    const question = {
      role: 'user',
      content: `Weather? [[fake-tools:${JSON.stringify([{ name: 'get_weather', arguments: { city: 'Paris' } }])}]]`,
    };
    const before = spawns();
    const first = await post('/v1/messages', { model: 'sonnet', max_tokens: 1024, tools, messages: [question] });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.stop_reason, 'tool_use');
    const use = first.body.content.find((b: { type: string }) => b.type === 'tool_use');
    assert.deepEqual([use.name, use.input], ['get_weather', { city: 'Paris' }]);
    const pid = recordedPids(t.recordDir).runs.at(-1)!;
    assert.ok(isAlive(pid), 'the CLI waits, parked');
    const second = await post('/v1/messages', {
      model: 'sonnet',
      max_tokens: 1024,
      tools,
      messages: [
        question,
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'hm', signature: 's' }, ...first.body.content] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny in Paris' }] },
      ],
    });
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.equal(second.body.content[0].text, 'echo: sunny in Paris');
    assert.equal(spawns() - before, 1, 'one CLI for the whole round trip');
  });
});

describe('POST /v1/messages/count_tokens', () => {
  it('answers from olp estimate at once, starting no CLI', async () => {
    const before = spawns();
    const res = await post('/v1/messages/count_tokens', {
      model: 'sonnet',
      system: 'x'.repeat(400),
      messages: [{ role: 'user', content: 'y'.repeat(400) }],
      tools: [{ name: 'Bash', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }],
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.ok(res.body.input_tokens >= 200 && res.body.input_tokens < 400, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body), ['input_tokens']);
    assert.equal(spawns(), before);
  });

  it('refuses a bad body in an Anthropic envelope', async () => {
    anthropicError(
      await post('/v1/messages/count_tokens', { model: 'sonnet', messages: 'no' }),
      400,
      'invalid_request_error',
    );
  });
});

// What Anthropic refuses, olp refuses too, in Anthropic's envelope, and before any CLI starts.
describe('refused as Anthropic refuses it', () => {
  const paths = ['/v1/messages', '/v1/messages/count_tokens'];
  const body = (extra: Record<string, unknown> = {}) => ({
    model: 'sonnet',
    max_tokens: 1024,
    messages: [{ role: 'user', content: 'x' }],
    ...extra,
  });
  /** A POST with these headers only (beside the key), and the body as text. */
  const raw = (path: string, headers: Record<string, string>, text = JSON.stringify(body())) =>
    request(t.url).post(path).set('x-api-key', t.token).set(headers).send(text);
  const json = { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' };

  it('max_tokens of 1e12, or over the model’s own output cap: 400 naming max_tokens', async () => {
    const before = spawns();
    for (const path of paths) {
      const huge = await post(path, body({ max_tokens: 1e12 }));
      anthropicError(huge, 400, 'invalid_request_error');
      assert.match(huge.body.error.message, /'max_tokens'.*at most 128000/);
      // claude-haiku-4-5 writes 64K at most (Anthropic's model page); sonnet (claude-sonnet-5) 128K.
      const haiku = await post(path, body({ model: 'claude-haiku-4-5', max_tokens: 100_000 }));
      anthropicError(haiku, 400, 'invalid_request_error');
      assert.match(haiku.body.error.message, /'max_tokens': 100000 is more than claude-haiku-4-5 writes \(64000/);
    }
    assert.equal((await post('/v1/messages/count_tokens', body({ max_tokens: 100_000 }))).status, 200);
    assert.equal(spawns(), before);
  });

  it('a body not sent as application/json (text/plain, form encoding, none): 415', async () => {
    for (const path of paths) {
      for (const type of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded']) {
        const res = await raw(path, { ...json, 'content-type': type });
        anthropicError(res, 415, 'invalid_request_error');
        assert.match(res.body.error.message, /Content-Type: application\/json/);
      }
      const none = await request(t.url)
        .post(path)
        .set('x-api-key', t.token)
        .set('anthropic-version', '2023-06-01')
        .send(Buffer.from(JSON.stringify(body())));
      anthropicError(none, 415, 'invalid_request_error');
      const charset = await raw(path, { ...json, 'content-type': 'application/json; charset=utf-8' });
      assert.equal(charset.status, 200, JSON.stringify(charset.body));
    }
  });

  it('an anthropic-version that is not a date, or none: 400 naming the header', async () => {
    for (const path of paths) {
      for (const version of ['latest', '2023-06', '2023-13-01', '1', '2023-06-01x']) {
        const res = await raw(path, { ...json, 'anthropic-version': version });
        anthropicError(res, 400, 'invalid_request_error');
        assert.match(res.body.error.message, /^anthropic-version: .* is not a version/);
      }
      const none = await raw(path, { 'content-type': 'application/json' });
      anthropicError(none, 400, 'invalid_request_error');
      assert.match(none.body.error.message, /^anthropic-version: header is required/);
    }
  });

  it('the OpenAI endpoints still read a text/plain or form-encoded body as JSON (curl -d)', async () => {
    const res = await request(t.url)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${t.token}`)
      .set('content-type', 'application/x-www-form-urlencoded')
      .send(JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: 'form' }] }));
    assert.equal(res.status, 200, JSON.stringify(res.body));
  });
});

describe('models and the root', () => {
  it('GET /v1/models is Anthropic-shaped with anthropic-version, OpenAI-shaped without', async () => {
    const a = await request(t.url).get('/v1/models').set('x-api-key', t.token).set('anthropic-version', '2023-06-01');
    assert.equal(a.status, 200);
    assert.equal(a.body.has_more, false);
    assert.equal(a.body.data[0].type, 'model');
    assert.equal(typeof a.body.data[0].display_name, 'string');
    assert.ok(!Number.isNaN(Date.parse(a.body.data[0].created_at)));
    assert.equal(a.body.first_id, a.body.data[0].id);
    assert.equal(a.body.last_id, a.body.data.at(-1).id);
    const one = await request(t.url)
      .get('/v1/models/sonnet')
      .set('x-api-key', t.token)
      .set('anthropic-version', '2023-06-01');
    assert.deepEqual([one.body.type, one.body.id], ['model', 'sonnet']);
    const mapped = await request(t.url)
      .get('/v1/models/my-anthropic-model-1')
      .set('x-api-key', t.token)
      .set('anthropic-version', '2023-06-01');
    assert.deepEqual([mapped.status, mapped.body.id], [200, 'my-anthropic-model-1']);
    const o = await request(t.url).get('/v1/models').set('authorization', `Bearer ${t.token}`);
    assert.equal(o.body.object, 'list');
    assert.equal(o.body.data[0].object, 'model');
  });

  it('HEAD / and GET / answer 200 without a key', async () => {
    assert.equal((await request(t.url).head('/')).status, 200);
    assert.equal((await request(t.url).get('/')).status, 200);
  });
});

// Last: the spent window is remembered, and refuses every later claude request.
describe('plan limits', () => {
  it('a spent plan window is a 429 rate_limit_error with retry-after and the reset in its message', async () => {
    const res = await ask('[[fake:plan-spent]]');
    anthropicError(res, 429, 'rate_limit_error');
    assert.ok(Number(res.headers['retry-after']) > 60, res.headers['retry-after']);
    assert.match(res.body.error.message, /reset/i);
  });
});

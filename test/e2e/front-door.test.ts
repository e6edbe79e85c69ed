// Two olp instances behind the real nginx, configured by `olp front nginx` itself (a bare URL asked its
// tag with an owner key from OLP_OWNER_KEYS): the official clients' requests land on their key's
// instance, streams pass as they come, the client's request id reaches olp, and an instance that is
// down answers 503 in its API's envelope while the other goes on.
import Anthropic from '@anthropic-ai/sdk';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { findNginx, freePort, NGINX_MISSING, startNginx, type RunningNginx } from '../support/nginx.js';
import { OLP_BIN } from '../support/paths.js';

const nginx = findNginx();
if (!nginx) console.log(`# front-door tests skipped: ${NGINX_MISSING}`);

describe('the front door: nginx from olp front nginx, two instances', { skip: nginx ? false : NGINX_MISSING }, () => {
  let a: TestDaemon;
  let b: TestDaemon;
  let door: RunningNginx;
  let conf: string;
  let doorURL: string;
  const token = { a: '', b: '' };
  const openai = (key: string, headers: Record<string, string> = {}) =>
    new OpenAI({ baseURL: `${doorURL}/v1`, apiKey: key, maxRetries: 0, defaultHeaders: headers });
  const anthropic = (key: string) => new Anthropic({ baseURL: doorURL, apiKey: key, maxRetries: 0 });
  /** The `request` log records of one daemon for one key. */
  const served = (t: TestDaemon, key: string) => t.logs.filter((l) => l.event === 'request' && l.key === key);

  before(async () => {
    a = await startTestDaemon({ config: { instanceTag: 'a1' } });
    b = await startTestDaemon({ config: { instanceTag: 'b2' } });
    token.a = a.daemon.store.keys.add('alice').token;
    token.b = b.daemon.store.keys.add('bob').token;
    const port = await freePort();
    doorURL = `http://127.0.0.1:${port}`;
    // a1 is asked its tag (its owner key among OLP_OWNER_KEYS); b2 is given.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [OLP_BIN, 'front', 'nginx', '--instance', a.url, '--instance', `b2=${b.url}`, '--listen', `127.0.0.1:${port}`],
      { env: { PATH: process.env.PATH ?? '', OLP_OWNER_KEYS: `${b.token} ${a.token}` } },
    );
    conf = stdout;
    door = await startNginx(nginx!, conf, `${doorURL}/health`);
  });
  after(async () => {
    await door?.stop();
    await a?.close();
    await b?.close();
  });

  it('the config routes a1 and b2 and holds none of the keys', () => {
    assert.match(conf, /a1 olp_a1;\n\s+b2 olp_b2;/);
    assert.match(a.token, /^olpk_a1_/);
    for (const k of [a.token, b.token, token.a, token.b]) assert.ok(!conf.includes(k));
  });

  it('chat, non-streamed and streamed: each key on its own instance', async () => {
    const c = await openai(token.a).chat.completions.create({
      model: 'sonnet',
      messages: [{ role: 'user', content: 'to a1' }],
    });
    assert.equal(c.choices[0]!.message.content, 'Hello from fake claude. You said: to a1');
    let text = '';
    for await (const ch of await openai(token.b).chat.completions.create({
      model: 'sonnet',
      messages: [{ role: 'user', content: 'to b2' }],
      stream: true,
    }))
      text += ch.choices[0]?.delta.content ?? '';
    assert.equal(text, 'Hello from fake claude. You said: to b2');
    assert.equal(served(a, 'alice').length, 1);
    assert.equal(served(b, 'bob').length, 1);
    assert.equal(served(a, 'bob').length + served(b, 'alice').length, 0);
    assert.equal(
      a.daemon.store.usage.summarize({ scope: { all: true } }, 'key').find((g) => g.group === 'alice')?.requests,
      1,
    );
  });

  it('Responses with a Bearer key, Messages with x-api-key', async () => {
    const r = await openai(token.b).responses.create({ model: 'sonnet', input: 'responses to b2' });
    assert.equal(r.output_text, 'Hello from fake claude. You said: responses to b2');
    const m = await anthropic(token.a).messages.create({
      model: 'sonnet',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'messages to a1' }],
    });
    assert.equal((m.content[0] as Anthropic.TextBlock).text, 'Hello from fake claude. You said: messages to a1');
    assert.deepEqual(
      served(b, 'bob')
        .map((l) => l.path)
        .at(-1),
      '/v1/responses',
    );
    assert.deepEqual(
      served(a, 'alice')
        .map((l) => l.path)
        .at(-1),
      '/v1/messages',
    );
  });

  it('a tool round trip: the call comes back, and its result continues the CLI parked on the same instance', async () => {
    const client = openai(token.b);
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: 'function',
        function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
      },
    ];
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      {
        role: 'user',
        content: `Weather? [[fake-tools:${JSON.stringify([{ name: 'get_weather', arguments: { city: 'Oslo' } }])}]]`,
      },
    ];
    const first = await client.chat.completions.create({ model: 'sonnet', messages, tools });
    const call = first.choices[0]!.message.tool_calls![0]!;
    assert.equal(first.choices[0]!.finish_reason, 'tool_calls');
    messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: 'snow in Oslo' });
    const second = await client.chat.completions.create({ model: 'sonnet', messages, tools });
    assert.equal(second.choices[0]!.message.content, 'echo: snow in Oslo');
    assert.deepEqual(
      served(b, 'bob')
        .slice(-2)
        .map((l) => l.run),
      ['cold', 'parked'],
    );
  });

  it('streams as they come: the first token arrives long before the stream ends', async () => {
    const started = performance.now();
    const stream = await openai(token.a).chat.completions.create({
      model: 'sonnet',
      stream: true,
      // The slow fake claude: 150 ms before each 8-character delta (about a second for this answer).
      messages: [
        { role: 'system', content: '[[fake:slow]]' },
        { role: 'user', content: 'a reply that takes a while to come' },
      ],
    });
    let first: number | undefined;
    let text = '';
    for await (const ch of stream) {
      const piece = ch.choices[0]?.delta.content ?? '';
      if (piece && first === undefined) first = performance.now() - started;
      text += piece;
    }
    const total = performance.now() - started;
    assert.equal(text, 'Hello from fake claude. You said: a reply that takes a while to come');
    assert.ok(
      first !== undefined && total - first > 500,
      `first token at ${first?.toFixed(0)} ms, end at ${total.toFixed(0)} ms`,
    );
  });

  it("the client's x-request-id reaches olp (nginx makes one when there is none)", async () => {
    await openai(token.a, { 'x-request-id': 'front-test-1234' }).chat.completions.create({
      model: 'sonnet',
      messages: [{ role: 'user', content: 'id' }],
    });
    assert.equal(served(a, 'alice').at(-1)!.forwardedId, 'front-test-1234');
    await openai(token.a).chat.completions.create({ model: 'sonnet', messages: [{ role: 'user', content: 'no id' }] });
    assert.match(String(served(a, 'alice').at(-1)!.forwardedId), /^[0-9a-f]{32}$/);
  });

  it('without a key: the first instance; an untagged or unknown key: 401 in the envelope of its path', async () => {
    assert.equal((await fetch(`${doorURL}/health`)).status, 200);
    const log = readFileSync(join(door.dir, 'access.log'), 'utf8').trim().split('\n').at(-1)!;
    assert.match(log, new RegExp(`"GET /health HTTP/1.1" 200 .*tag=-none up=${a.url.slice('http://'.length)}`));
    const legacy = `olpk_${'x'.repeat(43)}`;
    await assert.rejects(
      openai(legacy).models.list(),
      (e) =>
        e instanceof OpenAI.AuthenticationError &&
        e.code === 'invalid_api_key' &&
        /rotate it on its instance/.test(e.message),
    );
    await assert.rejects(
      anthropic(`olpk_zz_${'x'.repeat(43)}`).messages.create({
        model: 'sonnet',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'x' }],
      }),
      (e) =>
        e instanceof Anthropic.AuthenticationError &&
        (e.error as { error: { type: string } }).error.type === 'authentication_error',
    );
  });

  it('olp usage --from both instances adds up to the sum of their ledgers, per key', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [OLP_BIN, 'usage', '--from', a.url, '--from', b.url, '--by', 'key', '--json'],
      { env: { PATH: process.env.PATH ?? '', HOME: a.base, OLP_OWNER_KEYS: `${a.token} ${b.token}` } },
    );
    const { groups } = JSON.parse(stdout) as {
      groups: { group: string; requests: number; promptTokens: number; completionTokens: number }[];
    };
    const ledger = (t: TestDaemon, tag: string) =>
      t.daemon.store.usage
        .summarize({ scope: { all: true } }, 'key')
        .map((g) => ({ ...g, group: `${g.group}@${tag}` }));
    const expected = [...ledger(a, 'a1'), ...ledger(b, 'b2')];
    assert.ok(groups.some((g) => g.group === 'alice@a1') && groups.some((g) => g.group === 'bob@b2'));
    const total = (gs: typeof groups) =>
      gs.reduce(
        (n, g) => ({ requests: n.requests + g.requests, tokens: n.tokens + g.promptTokens + g.completionTokens }),
        {
          requests: 0,
          tokens: 0,
        },
      );
    assert.deepEqual(total(groups), total(expected));
    for (const g of expected) {
      const got = groups.find((x) => x.group === g.group);
      assert.equal(got?.requests, g.requests, g.group);
      assert.equal(got?.promptTokens, g.promptTokens, g.group);
    }
  });

  it("an instance down: its keys get 503 with Retry-After in their envelope; the other's keep working", async () => {
    await b.close();
    await assert.rejects(
      openai(token.b).chat.completions.create({ model: 'sonnet', messages: [{ role: 'user', content: 'x' }] }),
      (e) => {
        assert.ok(e instanceof OpenAI.APIError && e.status === 503, String(e));
        assert.equal(e.code, 'instance_unavailable');
        assert.equal(e.headers?.get('retry-after'), '5');
        assert.equal(e.headers?.get('x-should-retry'), 'true');
        return true;
      },
    );
    await assert.rejects(
      anthropic(token.b).messages.create({
        model: 'sonnet',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'x' }],
      }),
      (e) =>
        e instanceof Anthropic.APIError &&
        e.status === 503 &&
        (e.error as { error: { type: string } }).error.type === 'api_error',
    );
    const c = await openai(token.a).chat.completions.create({
      model: 'sonnet',
      messages: [{ role: 'user', content: 'still here' }],
    });
    assert.equal(c.choices[0]!.message.content, 'Hello from fake claude. You said: still here');
  });
});

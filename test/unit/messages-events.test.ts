// The Anthropic Messages adapter's response side: the stream mapper alone (the core's events in,
// Anthropic's stream events out), then the writers on a tiny express app read by raw fetch and by
// the official @anthropic-ai/sdk client (its stream parser and MessageStream accumulator), then
// the usage mapping and the error table over the whole catalogue.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { toClaudeUsage, toCodexUsage, type Usage } from '../../src/backends/index.js';
import type { ConversationEvent, ConversationResult } from '../../src/conversation/index.js';
import {
  backendFailed,
  backendNotLoggedIn,
  contextLengthExceeded,
  ERROR_CATALOGUE,
  limitExceeded,
  type ErrorCode,
  type ProxyError,
} from '../../src/errors/index.js';
import { createProxyError } from '../../src/errors/proxy-error.js';
import { errorHeaders, planLimitReached } from '../../src/errors/index.js';
import {
  ANTHROPIC_ERRORS,
  createMessagesStreamState,
  fromAnthropicToolId,
  toAnthropicError,
  toAnthropicToolId,
  toAnthropicUsage,
  toMessagesStreamEnd,
  toMessagesStreamEvents,
  type MessagesStreamEvent,
} from '../../src/wire/index.js';
import { startScriptedMessages, type MessagesScript, type ScriptedMessages } from '../support/scripted-messages.js';
import { ROOT } from '../support/paths.js';

const usage: Usage = {
  promptTokens: 2105,
  completionTokens: 7,
  totalTokens: 2112,
  cachedTokens: 2000,
  reasoningTokens: 0,
  raw: { input_tokens: 5, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000, output_tokens: 7 },
};
const result = (extra: Partial<ConversationResult> = {}): ConversationResult => ({
  outcome: 'ok',
  error: null,
  stopReason: { type: 'end' },
  usage,
  estimated: false,
  model: 'sonnet',
  backend: 'claude',
  servedModel: 'claude-sonnet-5',
  session: null,
  run: null,
  overage: false,
  queueMs: 0,
  firstTokenMs: 1,
  durationMs: 2,
  status: 200,
  headers: { 'x-from-result': '1' },
  ...extra,
});
const failed = (error: ProxyError) => result({ outcome: 'error', error, usage: null, status: error.status });
const started: ConversationEvent = {
  type: 'started',
  model: 'claude-sonnet-5',
  backend: 'claude',
  session: { mode: 'ephemeral' },
  headers: { 'x-from-start': '1' },
  promptTokens: 2100,
};
const text = (t: string): ConversationEvent => ({ type: 'text', text: t });
const call = (index: number, id: string, name: string): ConversationEvent => ({ type: 'tool_call', index, id, name });
const args = (index: number, t: string): ConversationEvent => ({ type: 'tool_args', index, text: t });
const think = (t: string): ConversationEvent => ({ type: 'thinking', text: t });
const signed = (signature: string): ConversationEvent => ({ type: 'thinking', text: '', signature });

/** Two parallel calls, each block streamed whole before the next starts (as claude and codex give them). */
const parallelCalls: ConversationEvent[] = [
  started,
  call(0, 'toolu_01A', 'Read'),
  args(0, '{"file_path":'),
  args(0, '"/a.ts"}'),
  call(1, 'call_Zx-9_q', 'Grep'),
  args(1, '{"pattern":"x"}'),
];

function map(events: ConversationEvent[], end: ConversationResult) {
  const s = createMessagesStreamState({ id: 'msg_1', model: 'sonnet' });
  const out: MessagesStreamEvent[] = [];
  const starts: Readonly<Record<string, string>>[] = [];
  for (const m of [...events.map((ev) => toMessagesStreamEvents(s, ev)), toMessagesStreamEnd(s, end)]) {
    if (m.start) starts.push(m.start);
    out.push(...m.events);
  }
  return { events: out, starts, shape: out.map(describeEvent) };
}

/** An event as a short description: its type, block index and delta or block type. */
function describeEvent(e: MessagesStreamEvent): string {
  switch (e.type) {
    case 'content_block_start':
      return `start:${e.index}:${e.content_block.type}`;
    case 'content_block_delta':
      return `delta:${e.index}:${e.delta.type}`;
    case 'content_block_stop':
      return `stop:${e.index}`;
    case 'message_delta':
      return `message_delta:${e.delta.stop_reason}`;
    default:
      return e.type;
  }
}

describe('Messages stream mapper', () => {
  const table: { name: string; events: ConversationEvent[]; end: ConversationResult; shape: string[] }[] = [
    {
      name: 'text',
      events: [started, text('he'), text('llo')],
      end: result(),
      shape: [
        'message_start',
        'start:0:text',
        'delta:0:text_delta',
        'delta:0:text_delta',
        'stop:0',
        'message_delta:end_turn',
        'message_stop',
      ],
    },
    {
      name: 'parallel tool calls',
      events: parallelCalls,
      end: result({ stopReason: { type: 'tool_use' } }),
      shape: [
        'message_start',
        'start:0:tool_use',
        'delta:0:input_json_delta',
        'delta:0:input_json_delta',
        'stop:0',
        'start:1:tool_use',
        'delta:1:input_json_delta',
        'stop:1',
        'message_delta:tool_use',
        'message_stop',
      ],
    },
    {
      name: 'text then a tool call',
      events: [started, text('Let me look.'), call(0, 'toolu_01B', 'Read'), args(0, '{}')],
      end: result({ stopReason: { type: 'tool_use' } }),
      shape: [
        'message_start',
        'start:0:text',
        'delta:0:text_delta',
        'stop:0',
        'start:1:tool_use',
        'delta:1:input_json_delta',
        'stop:1',
        'message_delta:tool_use',
        'message_stop',
      ],
    },
    {
      name: 'thinking, its signature, then text and a call',
      events: [started, think('Let me'), think(' see.'), signed('sig'), text('Reading.'), call(0, 'toolu_01C', 'Read')],
      end: result({ stopReason: { type: 'tool_use' } }),
      shape: [
        'message_start',
        'start:0:thinking',
        'delta:0:thinking_delta',
        'delta:0:thinking_delta',
        'delta:0:signature_delta',
        'stop:0',
        'start:1:text',
        'delta:1:text_delta',
        'stop:1',
        'start:2:tool_use',
        'stop:2',
        'message_delta:tool_use',
        'message_stop',
      ],
    },
    {
      name: 'thinking without a signature (the text closes it); a second thinking after a signature is its own block',
      events: [started, think('a'), signed('s1'), think('b'), text('x')],
      end: result(),
      shape: [
        'message_start',
        'start:0:thinking',
        'delta:0:thinking_delta',
        'delta:0:signature_delta',
        'stop:0',
        'start:1:thinking',
        'delta:1:thinking_delta',
        'stop:1',
        'start:2:text',
        'delta:2:text_delta',
        'stop:2',
        'message_delta:end_turn',
        'message_stop',
      ],
    },
    {
      name: 'max_tokens',
      events: [started, text('cut')],
      end: result({ stopReason: { type: 'output_cap' } }),
      shape: [
        'message_start',
        'start:0:text',
        'delta:0:text_delta',
        'stop:0',
        'message_delta:max_tokens',
        'message_stop',
      ],
    },
    {
      name: 'no events: the end announces, no empty block',
      events: [],
      end: result(),
      shape: ['message_start', 'message_delta:end_turn', 'message_stop'],
    },
    {
      name: 'a failure after text: one error event',
      events: [started, text('x')],
      end: failed(backendFailed('claude', 'exited with code 1')),
      shape: ['message_start', 'start:0:text', 'delta:0:text_delta', 'error'],
    },
  ];
  for (const t of table)
    it(t.name, () => {
      assert.deepEqual(map(t.events, t.end).shape, t.shape);
    });

  it('message_start carries the served model and the prompt estimate; message_delta the CLI’s usage', () => {
    const { events, starts } = map([started, text('hi')], result());
    assert.deepEqual(events[0], {
      type: 'message_start',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-5',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 2100, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
      },
    });
    assert.deepEqual(events.at(-2), {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { input_tokens: 5, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000, output_tokens: 7 },
    });
    assert.deepEqual(starts, [{ 'x-from-start': '1' }]);
  });

  it('tool_use blocks carry the call id, name and an empty input; the deltas the JSON as given', () => {
    const { events } = map(parallelCalls, result({ stopReason: { type: 'tool_use' } }));
    assert.deepEqual(events[1], {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: 'toolu_01A', name: 'Read', input: {} },
    });
    assert.deepEqual(events[5], {
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'tool_use', id: 'call_Zx-9_q', name: 'Grep', input: {} },
    });
    const json = events.flatMap((e) =>
      e.type === 'content_block_delta' && e.delta.type === 'input_json_delta' ? [e.delta.partial_json] : [],
    );
    assert.deepEqual(json, ['{"file_path":', '"/a.ts"}', '{"pattern":"x"}']);
  });

  it('a reply that made calls stops for tool_use even when the CLI said stop', () => {
    assert.deepEqual(map(parallelCalls, result()).shape.at(-2), 'message_delta:tool_use');
  });
});

describe('tool ids', () => {
  it('ids matching Anthropic’s pattern go out as they are; others reversibly', () => {
    for (const id of ['toolu_01ABCdef', 'call_Zx-9_qAbCdEfGh']) assert.equal(toAnthropicToolId(id), id);
    for (const id of ['call.1', 'a b/c', 'toolu_olp_looks-encoded', 'é']) {
      const sent = toAnthropicToolId(id);
      assert.match(sent, /^[a-zA-Z0-9_-]+$/);
      assert.equal(fromAnthropicToolId(sent), id);
    }
    assert.equal(fromAnthropicToolId('toolu_01ABCdef'), 'toolu_01ABCdef');
  });
});

describe('usage mapping', () => {
  it('claude: Anthropic’s own counts come back exactly', () => {
    const raw = { input_tokens: 5, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000, output_tokens: 7 };
    assert.deepEqual(toAnthropicUsage(toClaudeUsage(raw)), raw);
  });
  it('codex: input_tokens includes the cached ones, so the cache read and write come off it', () => {
    const raw = {
      input_tokens: 1200,
      cached_input_tokens: 200,
      cache_write_input_tokens: 50,
      output_tokens: 12,
      reasoning_output_tokens: 4,
    };
    assert.deepEqual(toAnthropicUsage(toCodexUsage(raw)), {
      input_tokens: 950,
      cache_creation_input_tokens: 50,
      cache_read_input_tokens: 200,
      output_tokens: 12,
    });
  });
  it('none reported: zeros', () => {
    assert.deepEqual(toAnthropicUsage(null), {
      input_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 0,
    });
  });
});

// --- the writers, over HTTP --------------------------------------------------------------------

describe('Messages writers', () => {
  let script: MessagesScript;
  let keepalive = 0;
  let server: ScriptedMessages;
  let client: Anthropic;
  const params = { model: 'sonnet', max_tokens: 100, messages: [{ role: 'user' as const, content: 'hi' }] };
  const post = (stream: boolean) =>
    fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...params, stream }),
    });

  before(async () => {
    server = await startScriptedMessages(() => script, { keepaliveMs: () => keepalive });
    client = new Anthropic({ baseURL: server.url, apiKey: 'test-key', maxRetries: 0 });
  });
  after(() => server.close());

  it('streams the exact event sequence with event names, headers and request-id', async () => {
    script = { steps: [started, text('Hello'), text(' there')], end: result() };
    keepalive = 0;
    const res = await post(true);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal(res.headers.get('request-id'), 'req_test');
    assert.equal(res.headers.get('x-from-start'), '1');
    const frames = (await res.text()).split('\n\n').filter(Boolean);
    const names = frames.map((f) => /^event: (.+)$/m.exec(f)?.[1]);
    assert.deepEqual(names, [
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    for (const f of frames) {
      const [ev, data] = f.split('\n');
      assert.equal(JSON.parse(data!.slice('data: '.length)).type, ev!.slice('event: '.length));
    }
  });

  it('the SDK accumulates a streamed text reply into the Message', async () => {
    script = { steps: [started, text('Hello'), text(' there')], end: result() };
    const message = await client.messages.stream(params).finalMessage();
    assert.match(message.id, /^msg_test\d+$/);
    assert.equal(message.model, 'claude-sonnet-5');
    assert.deepEqual(message.content, [{ type: 'text', text: 'Hello there' }]);
    assert.equal(message.stop_reason, 'end_turn');
    assert.deepEqual(
      {
        input_tokens: message.usage.input_tokens,
        cache_creation_input_tokens: message.usage.cache_creation_input_tokens,
        cache_read_input_tokens: message.usage.cache_read_input_tokens,
        output_tokens: message.usage.output_tokens,
      },
      usage.raw,
    );
  });

  it('the SDK accumulates parallel tool calls into tool_use blocks with parsed input', async () => {
    script = {
      steps: [started, text('Reading.'), ...parallelCalls.slice(1)],
      end: result({ stopReason: { type: 'tool_use' } }),
    };
    const message = await client.messages.stream(params).finalMessage();
    assert.equal(message.stop_reason, 'tool_use');
    assert.deepEqual(
      message.content.map((b) => (b.type === 'tool_use' ? { id: b.id, name: b.name, input: b.input } : b)),
      [
        { type: 'text', text: 'Reading.' },
        { id: 'toolu_01A', name: 'Read', input: { file_path: '/a.ts' } },
        { id: 'call_Zx-9_q', name: 'Grep', input: { pattern: 'x' } },
      ],
    );
  });

  it('a silent wait gets ping events (before message_start too), and the SDK still parses the reply', async () => {
    keepalive = 30;
    script = { steps: [200, started, 150, text('late'), 150], end: result({ stopReason: { type: 'output_cap' } }) };
    const raw = await (await post(true)).text();
    const names = raw
      .split('\n\n')
      .filter(Boolean)
      .map((f) => /^event: (.+)$/m.exec(f)?.[1]);
    const first = names.indexOf('message_start');
    assert.ok(first > 0 && names.slice(0, first).every((n) => n === 'ping'), names.join(' '));
    assert.ok(names.filter((n) => n === 'ping').length >= 6, names.join(' '));
    assert.ok(raw.includes('event: ping\ndata: {"type": "ping"}\n\n'));
    assert.ok(!raw.includes(': keepalive'));

    script = { steps: [200, started, 150, text('late'), 150], end: result({ stopReason: { type: 'output_cap' } }) };
    const message = await client.messages.stream(params).finalMessage();
    assert.deepEqual(message.content, [{ type: 'text', text: 'late' }]);
    assert.equal(message.stop_reason, 'max_tokens');
    keepalive = 0;
  });

  it('an error before the first byte is its status, retry headers and Anthropic’s envelope', async () => {
    const error = backendNotLoggedIn('claude', 'Not logged in', 'run `claude auth login` on the olp machine');
    script = { steps: [], end: failed(error) };
    const res = await post(true);
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('x-should-retry'), 'false');
    assert.equal(res.headers.get('request-id'), 'req_test');
    assert.equal(res.headers.get('x-from-result'), '1');
    assert.deepEqual(await res.json(), {
      type: 'error',
      error: { type: 'api_error', message: error.message },
    });

    script = { steps: [], end: failed(limitExceeded('server_busy', 'olp is busy', 3)) };
    await assert.rejects(client.messages.stream(params).finalMessage(), (err: unknown) => {
      assert.ok(err instanceof Anthropic.APIError);
      assert.equal(err.status, 529);
      assert.equal(err.headers?.get('retry-after'), '3');
      assert.equal((err.error as { error?: { type?: string } }).error?.type, 'overloaded_error');
      return true;
    });
  });

  it('an error after the first byte is one in-band `event: error`, which the SDK throws', async () => {
    script = { steps: [started, text('par')], end: failed(backendFailed('claude', 'exited with code 1')) };
    const raw = await (await post(true)).text();
    const last = raw.split('\n\n').filter(Boolean).at(-1)!;
    assert.equal(last.split('\n')[0], 'event: error');
    assert.deepEqual(JSON.parse(last.split('\n')[1]!.slice('data: '.length)), {
      type: 'error',
      error: { type: 'api_error', message: 'The claude CLI failed: exited with code 1' },
    });

    script = { steps: [started, text('par')], end: failed(backendFailed('claude', 'exited with code 1')) };
    await assert.rejects(client.messages.stream(params).finalMessage(), (err: unknown) => {
      assert.ok(err instanceof Anthropic.APIError);
      assert.equal((err.error as { error?: { type?: string } }).error?.type, 'api_error');
      return true;
    });
  });

  it('non-streaming: the whole Message, text then tool calls with parsed input', async () => {
    script = {
      steps: [started, text('Reading.'), ...parallelCalls.slice(1)],
      end: result({ stopReason: { type: 'tool_use' } }),
    };
    const res = await post(false);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('request-id'), 'req_test');
    const body = (await res.json()) as { id: string };
    assert.match(body.id, /^msg_test\d+$/);
    assert.deepEqual(body, {
      id: body.id,
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-5',
      content: [
        { type: 'text', text: 'Reading.' },
        { type: 'tool_use', id: 'toolu_01A', name: 'Read', input: { file_path: '/a.ts' } },
        { type: 'tool_use', id: 'call_Zx-9_q', name: 'Grep', input: { pattern: 'x' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: usage.raw,
    });
  });

  it('thinking: the SDK accumulates the streamed thinking block, signature and all, before the text', async () => {
    script = { steps: [started, think('Let me'), think(' see.'), signed('sig'), text('Hello')], end: result() };
    const message = await client.messages.stream(params).finalMessage();
    assert.deepEqual(message.content, [
      { type: 'thinking', thinking: 'Let me see.', signature: 'sig' },
      { type: 'text', text: 'Hello' },
    ]);
  });

  it('thinking, non-streaming: the thinking block first, with its signature (empty when none came)', async () => {
    script = {
      steps: [started, think('Let me'), think(' see.'), signed('sig'), think('More.'), text('Hello')],
      end: result(),
    };
    const m = await client.messages.create(params);
    assert.deepEqual(m.content, [
      { type: 'thinking', thinking: 'Let me see.', signature: 'sig' },
      { type: 'thinking', thinking: 'More.', signature: '' },
      { type: 'text', text: 'Hello' },
    ]);
  });

  it('non-streaming through the SDK: text, and max_tokens', async () => {
    script = { steps: [started, text('Hello'), text(' there')], end: result() };
    const m = await client.messages.create(params);
    assert.deepEqual(m.content, [{ type: 'text', text: 'Hello there' }]);
    assert.equal(m.stop_reason, 'end_turn');
    script = { steps: [started, text('cut')], end: result({ stopReason: { type: 'output_cap' } }) };
    assert.equal((await client.messages.create(params)).stop_reason, 'max_tokens');
  });

  it('non-streaming error: status and envelope', async () => {
    script = {
      steps: [],
      end: failed(
        planLimitReached(
          'The 5-hour window is spent. It resets at 2026-12-04T20:00:00.000Z.',
          Date.now() + 7_200_000,
          Date.now(),
        ),
      ),
    };
    await assert.rejects(client.messages.create(params), (err: unknown) => {
      assert.ok(err instanceof Anthropic.RateLimitError);
      assert.equal(err.headers?.get('x-should-retry'), 'false');
      assert.ok(Number(err.headers?.get('retry-after')) > 7000);
      return true;
    });
  });
});

// --- errors ------------------------------------------------------------------------------------

/** One error of `code`, as its factory would make it (a Retry-After where the code's varies). */
const errorOf = (code: ErrorCode, retryAfter = 30) =>
  (createProxyError as (c: ErrorCode, m: string, x: object) => ProxyError)(code, `an error of ${code}`, {
    retryAfter,
  });

describe('toAnthropicError over the whole catalogue', () => {
  const codes = Object.keys(ERROR_CATALOGUE) as ErrorCode[];
  const ANTHROPIC_STATUS: Record<string, number> = {
    invalid_request_error: 400,
    authentication_error: 401,
    permission_error: 403,
    not_found_error: 404,
    request_too_large: 413,
    rate_limit_error: 429,
    api_error: 500,
    timeout_error: 504,
    overloaded_error: 529,
  };

  const CLI_LOGIN = new Set<string>([
    'backend_not_installed',
    'backend_not_logged_in',
    'login_not_set_up',
    'login_refused',
  ]);

  it('every code is mapped, to one of Anthropic’s types with its status (other 4xx: invalid_request_error)', () => {
    for (const code of codes) {
      const { status, body } = toAnthropicError(errorOf(code));
      const expected = ANTHROPIC_STATUS[body.error.type];
      assert.ok(expected !== undefined, `${code}: ${body.error.type}`);
      if (body.error.type === 'invalid_request_error') assert.ok(status >= 400 && status < 500, code);
      // A CLI login on the machine running olp: the 503 of every wire format, never retried.
      else if (CLI_LOGIN.has(code)) assert.deepEqual([status, body.error.type], [503, 'api_error'], code);
      else assert.equal(status, expected, code);
      assert.equal(body.type, 'error');
    }
  });

  it('a deterministic failure is never overloaded, and a 5xx one says x-should-retry: false (Claude Code reads it before the status)', () => {
    for (const code of codes) {
      const e = errorOf(code);
      const { status, body } = toAnthropicError(e);
      assert.equal(errorHeaders(e)['x-should-retry'], String(e.retryable), code);
      if (body.error.type === 'overloaded_error') assert.ok(e.retryable, `${code} is overloaded but not retryable`);
      if (ERROR_CATALOGUE[code].status < 500 || e.retryable) continue;
      // Not retryable and 5xx in OpenAI's terms: bad CLI output stays a 500, a CLI login a 503.
      if (code === 'backend_bad_output') assert.equal(status, 500);
      else if (CLI_LOGIN.has(code)) assert.equal(status, 503, code);
      else assert.ok(status < 500, `${code} → ${status}`);
    }
    for (const code of ['model_not_found', 'invalid_request'] as const)
      assert.ok(toAnthropicError(errorOf(code)).status < 500, code);
  });

  it('the codes Claude Code acts on', () => {
    // The status and envelope the Messages paths send, and the headers every error response carries.
    const pick = (e: ProxyError) => {
      const a = toAnthropicError(e);
      const h = errorHeaders(e);
      return [a.status, a.body.error.type, h['retry-after'], h['x-should-retry']];
    };
    assert.deepEqual(pick(limitExceeded('server_busy', 'busy', 2)), [529, 'overloaded_error', '2', 'true']);
    assert.deepEqual(pick(limitExceeded('queue_timeout', 'waited', 5)), [529, 'overloaded_error', '5', 'true']);
    assert.deepEqual(pick(errorOf('backend_overloaded')), [529, 'overloaded_error', '10', 'true']);
    assert.deepEqual(pick(errorOf('model_not_found')), [404, 'not_found_error', undefined, 'false']);
    assert.deepEqual(pick(errorOf('invalid_api_key')), [401, 'authentication_error', undefined, 'false']);
    assert.deepEqual(pick(errorOf('request_too_large')), [413, 'request_too_large', undefined, 'false']);
    // A spent window: 429 with Retry-After counting down to the reset, the message saying when.
    const now = Date.now();
    assert.deepEqual(pick(planLimitReached('resets soon', now + 30_000, now)), [429, 'rate_limit_error', '30', 'true']);
    const spent = planLimitReached(
      'The 5-hour window is spent. It resets at 2026-12-04T20:00:00.000Z.',
      now + 3_600_000,
      now,
    );
    assert.deepEqual(pick(spent), [429, 'rate_limit_error', '3600', 'false']);
    assert.match(toAnthropicError(spent).body.error.message, /resets at 2026-12-04T20:00:00/);
    assert.ok(errorHeaders(spent)['x-olp-plan-reset']);
    // Over the model's context: a 413 naming the context window, which Claude Code compacts on.
    const ctx = toAnthropicError(contextLengthExceeded('about 250000 tokens, the budget is 200000'));
    assert.deepEqual([ctx.status, ctx.body.error.type], [413, 'request_too_large']);
    assert.match(ctx.body.error.message, /context window/);
    assert.match(ctx.body.error.message.toLowerCase(), /prompt is too long/);
    assert.match(ctx.body.error.message, /250000 tokens/);
  });

  it('docs/errors.md lists every code once, under its Messages status and type', () => {
    const doc = readFileSync(join(ROOT, 'docs/errors.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## On the Messages API'));
    const listed: string[] = [];
    for (const row of section.split('\n').filter((l) => /^\| \d/.test(l))) {
      const [, statuses, type, codesText] = row.split('|').map((c) => c.trim());
      for (const code of [...codesText!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]! as ErrorCode)) {
        listed.push(code);
        assert.equal(ANTHROPIC_ERRORS[code]?.type, type, code);
        assert.ok(statuses!.split(', ').includes(String(ANTHROPIC_ERRORS[code]?.status)), code);
      }
    }
    assert.deepEqual([...listed].sort(), [...codes].sort());
  });
});

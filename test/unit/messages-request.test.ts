import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { authorizationOf } from '../../src/auth/index.js';
import { ProxyError } from '../../src/errors/index.js';
import { mapModel } from '../../src/wire/index.js';
import { ANTHROPIC_ERRORS, toAnthropicError } from '../../src/wire/index.js';
import { toolRequest } from '../../src/tools/index.js';
import { MAX_JSON_DEPTH, parseMessagesRequest } from '../../src/wire/index.js';
import { errorHeaders, invalidRequest, planLimitReached } from '../../src/errors/index.js';
import { createBackends } from '../../src/backends/index.js';
import { toUserLine } from '../../src/backends/claude/invocation.js';
import { parseConfig } from '../../src/config/index.js';
import { toChain } from '../../src/sessions/index.js';
import {
  DEFAULT_IMAGE_LIMITS,
  toPrompt,
  toPromptOf,
  toTranscript,
  type ImageLimits,
} from '../../src/transcript/index.js';

const { backends } = createBackends(parseConfig({ readFile: false, env: {} }), {});
const policyFor = (id: string, limits: ImageLimits) => backends.find((b) => b.id === id)!.transcriptPolicy(limits);

const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\n%%EOF\n', 'latin1').toString('base64');
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const base = { model: 'claude-sonnet-4-5', max_tokens: 1024 };
const user = (content: unknown) => ({ role: 'user', content });
const parse = (extra: Record<string, unknown>) => parseMessagesRequest({ ...base, ...extra });

function rejects(body: unknown, param?: string | null, pattern?: RegExp): ProxyError {
  try {
    parseMessagesRequest(body);
  } catch (err) {
    assert.ok(err instanceof ProxyError, `expected a ProxyError, got ${String(err)}`);
    assert.equal(err.status, 400, err.message);
    if (param !== undefined) assert.equal(err.param, param, err.message);
    if (pattern) assert.match(err.message, pattern);
    return err;
  }
  assert.fail('expected a 400');
}

describe('parseMessagesRequest: messages', () => {
  it('a string content is a user message; top-level system (string or cached text blocks) comes first', () => {
    assert.deepEqual(parse({ system: 'be brief', messages: [user('hi')] }).messages, [
      { role: 'system', parts: [{ type: 'text', text: 'be brief' }] },
      { role: 'user', parts: [{ type: 'text', text: 'hi' }] },
    ]);
    const blocks = parse({
      system: [
        { type: 'text', text: 'one', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'two' },
      ],
      messages: [user('hi')],
    });
    assert.deepEqual(blocks.messages[0], { role: 'system', parts: [{ type: 'text', text: 'one\ntwo' }] });
  });

  it('a system message inside messages (claude 2.1.332 sends one) is system text', () => {
    const r = parse({ messages: [{ role: 'system', content: [{ type: 'text', text: 'reminder' }] }, user('hi')] });
    assert.deepEqual(r.messages, [
      { role: 'system', parts: [{ type: 'text', text: 'reminder' }] },
      { role: 'user', parts: [{ type: 'text', text: 'hi' }] },
    ]);
  });

  it('images: a base64 source becomes a data URL, a url source the URL itself; a file source is refused', () => {
    const r = parse({
      messages: [
        user([
          { type: 'text', text: 'look' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
        ]),
      ],
    });
    assert.deepEqual(r.messages[0], {
      role: 'user',
      parts: [
        { type: 'text', text: 'look' },
        { type: 'image', url: `data:image/png;base64,${PNG}`, at: 'messages.0.content.1' },
        { type: 'image', url: 'https://example.com/a.png', at: 'messages.0.content.2' },
      ],
    });
    rejects(
      { ...base, messages: [user([{ type: 'image', source: { type: 'file', file_id: 'f_1' } }])] },
      'messages.0.content.0.source',
    );
    rejects(
      {
        ...base,
        messages: [user([{ type: 'image', source: { type: 'base64', media_type: 'image/tiff', data: 'x' } }])],
      },
      'messages.0.content.0.source.media_type',
    );
  });

  it('tool_use blocks become the assistant message tool calls, thinking its reasoning; redacted thinking is left out', () => {
    const r = parse({
      messages: [
        user('weather?'),
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'let me see', signature: 'sig' },
            { type: 'redacted_thinking', data: 'xyz' },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: {} },
          ],
        },
        user([
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'noon' }], is_error: true },
        ]),
      ],
    });
    assert.deepEqual(r.messages.slice(1), [
      {
        role: 'assistant',
        parts: [
          { type: 'reasoning', text: 'let me see', signature: 'sig' },
          { type: 'text', text: 'Checking.' },
          { type: 'tool_call', id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { type: 'tool_call', id: 'toolu_2', name: 'get_time', arguments: '{}' },
        ],
      },
      {
        role: 'user',
        parts: [
          { type: 'tool_result', callId: 'toolu_1', content: 'sunny' },
          { type: 'tool_result', callId: 'toolu_2', content: 'noon', isError: true },
        ],
      },
    ]);
    // The model reads a failed result as it did when results were chat tool messages; the thinking is not sent.
    const text = toPrompt(r.messages).text;
    assert.match(text, /<tool_result id="toolu_1" name="get_weather">\nsunny\n<\/tool_result>/);
    assert.match(text, /<tool_result id="toolu_2" name="get_time">\nError: noon\n<\/tool_result>/);
    assert.doesNotMatch(text, /let me see/);
  });

  it("tool results come before the user's other content, in order; a result's image goes with that content", () => {
    const r = parse({
      messages: [
        user('read it'),
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { file: 'a.png' } }] },
        user([
          { type: 'text', text: 'and then?' },
          {
            type: 'tool_result',
            tool_use_id: 't1',
            content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }],
          },
        ]),
      ],
    });
    assert.deepEqual(
      r.messages[2]!.parts.map((p) => p.type),
      ['text', 'tool_result', 'text', 'image'],
    );
    assert.deepEqual(r.messages[2]!.parts[3], {
      type: 'image',
      url: `data:image/png;base64,${PNG}`,
      at: 'messages.2.content.1.content.0',
    });
    // Rendered as before: the result its own turn, then the user's text with the image's line, and the image.
    const t = toTranscript(r.messages, policyFor('claude', DEFAULT_IMAGE_LIMITS));
    assert.deepEqual(
      t.turns.slice(2).map((x) => [x.role, x.text, x.images?.length ?? 0]),
      [
        ['tool', '<tool_result id="t1" name="Read">\n\n</tool_result>', 0],
        ['user', 'and then?\n(an image returned by tool call t1)', 1],
      ],
    );
  });

  it("Claude Code 2.1.332's ToolSearch: a deferred tool is offered, and a tool_reference result is words for the model", () => {
    const r = parse({
      tools: [
        { name: 'ToolSearch', description: 'find tools', input_schema: { type: 'object' } },
        { name: 'WebFetch', description: 'fetch', input_schema: { type: 'object' }, defer_loading: true },
      ],
      messages: [
        user('fetch it'),
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'ToolSearch', input: { query: 'web' } }] },
        user([
          { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'tool_reference', tool_name: 'WebFetch' }] },
          { type: 'text', text: 'Tool loaded.' },
        ]),
      ],
    });
    assert.deepEqual(r.messages[2], {
      role: 'user',
      parts: [
        { type: 'tool_result', callId: 't1', content: '(tool WebFetch is available)' },
        { type: 'text', text: 'Tool loaded.' },
      ],
    });
    const offered = toolRequest(r.tools);
    assert.deepEqual(
      offered?.tools.map((t) => t.name),
      ['ToolSearch', 'WebFetch'],
    );
  });

  it('an assistant message of thinking only is reasoning alone: no turn of the transcript', () => {
    const r = parse({
      messages: [
        user('a'),
        { role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: 's' }] },
        user('b'),
      ],
    });
    assert.deepEqual(r.messages[1], { role: 'assistant', parts: [{ type: 'reasoning', text: 't', signature: 's' }] });
    assert.deepEqual(
      toTranscript(r.messages).turns.map((t) => [t.role, t.text]),
      [
        ['user', 'a'],
        ['user', 'b'],
      ],
    );
  });

  it("documents: text sources (and base64 text/plain) are text; a base64 PDF is the core's document part; others refused naming the block", () => {
    const r = parse({
      messages: [
        user([
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'the doc' } },
          {
            type: 'document',
            source: { type: 'base64', media_type: 'text/plain', data: Buffer.from('plain bytes').toString('base64') },
          },
          { type: 'document', title: 'Report', source: { type: 'base64', media_type: 'application/pdf', data: PDF } },
        ]),
      ],
    });
    assert.deepEqual(r.messages[0], {
      role: 'user',
      parts: [
        { type: 'text', text: 'the doc' },
        { type: 'text', text: 'plain bytes' },
        { type: 'document', url: `data:application/pdf;base64,${PDF}`, at: 'messages.0.content.2' },
      ],
    });
    for (const source of [
      { type: 'url', url: 'https://example.com/a.pdf' },
      { type: 'file', file_id: 'file_1' },
      { type: 'base64', media_type: 'application/msword', data: 'AAAA' },
    ])
      rejects(
        {
          ...base,
          messages: [
            user([
              { type: 'text', text: 'x' },
              { type: 'document', source },
            ]),
          ],
        },
        'messages.0.content.1',
        /document/,
      );
  });

  it('a PDF document reaches claude as a document block, within the image limits; codex refuses it naming the part', () => {
    const doc = (data: string) =>
      parse({
        messages: [
          user([
            { type: 'text', text: 'summarise' },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data } },
          ]),
        ],
      }).messages;
    const t = toTranscript(doc(PDF), policyFor('claude', DEFAULT_IMAGE_LIMITS));
    const sent = t.turns[0]!.images!;
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.mediaType, 'application/pdf');
    assert.deepEqual(sent[0]!.data, Buffer.from(PDF, 'base64'));
    const line = JSON.parse(toUserLine(toPromptOf(t.system, t.turns)));
    assert.deepEqual(line.message.content, [
      { type: 'text', text: 'summarise' },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF } },
    ]);
    // A document is part of the turn's fingerprint as an image is: the same one continues a session, another does not.
    const other = Buffer.from('%PDF-1.7\nother\n', 'latin1').toString('base64');
    assert.deepEqual(
      toChain(toTranscript(doc(PDF), policyFor('claude', DEFAULT_IMAGE_LIMITS)).turns),
      toChain(t.turns),
    );
    assert.notDeepEqual(
      toChain(toTranscript(doc(other), policyFor('claude', DEFAULT_IMAGE_LIMITS)).turns),
      toChain(t.turns),
    );

    const refused = (data: string, backend: string, limits = DEFAULT_IMAGE_LIMITS) => {
      try {
        toTranscript(doc(data), policyFor(backend, limits));
      } catch (err) {
        assert.ok(err instanceof ProxyError && err.status === 400, String(err));
        assert.equal(err.param, 'messages.0.content.1');
        return err;
      }
      assert.fail('expected a 400');
    };
    const big = refused(PDF, 'claude', { ...DEFAULT_IMAGE_LIMITS, maxBytes: 8 });
    assert.equal(big.code, 'invalid_document');
    assert.match(big.message, /document is larger than 8 bytes/);
    const many = refused(PDF, 'claude', { ...DEFAULT_IMAGE_LIMITS, maxCount: 0 });
    assert.match(many.message, /at most 0 images and documents/);
    assert.match(refused(Buffer.from('not a pdf').toString('base64'), 'claude').message, /not a PDF/);
    const codex = refused(PDF, 'codex');
    assert.equal(codex.code, 'unsupported_content');
    assert.match(codex.message, /codex takes no documents/);
  });

  it('a tool_result must answer an earlier tool_use', () => {
    rejects(
      { ...base, messages: [user([{ type: 'tool_result', tool_use_id: 'nope', content: 'x' }])] },
      'messages.0',
      /tool_use_id/,
    );
  });

  it('refuses blocks in the wrong place, unknown block types and roles', () => {
    rejects(
      { ...base, messages: [user([{ type: 'tool_use', id: 'a', name: 'b', input: {} }])] },
      'messages.0.content.0',
    );
    rejects({ ...base, messages: [user([{ type: 'hologram' }])] }, 'messages.0.content.0.type', /content block/);
    rejects({ ...base, messages: [{ role: 'tool', content: 'x' }] }, 'messages.0.role');
    rejects({ ...base, messages: [{ role: 'assistant', content: 'only me' }] }, 'messages', /user message/);
  });
});

describe('parseMessagesRequest: fields', () => {
  it('model and max_tokens are required; malformed types are 400 naming the field', () => {
    rejects({ model: 'x', messages: [user('hi')] }, 'max_tokens');
    rejects({ max_tokens: 5, messages: [user('hi')] }, 'model');
    rejects({ ...base, messages: 'hi' }, 'messages');
    rejects({ ...base, messages: [user('hi')], temperature: 1.5 }, 'temperature');
    rejects({ ...base, messages: [user('hi')], stream: 'yes' }, 'stream');
    rejects({ ...base, messages: [user('hi')], stop_sequences: 'END' }, 'stop_sequences');
    rejects([], null);
  });

  it('max_tokens over 128K (the most any model writes) is refused, as Anthropic refuses it', () => {
    rejects({ ...base, max_tokens: 1e12, messages: [user('hi')] }, 'max_tokens', /at most 128000/);
    rejects({ ...base, max_tokens: 128_001, messages: [user('hi')] }, 'max_tokens', /at most 128000/);
    rejects({ ...base, max_tokens: 0, messages: [user('hi')] }, 'max_tokens');
    assert.equal(parse({ max_tokens: 128_000, messages: [user('hi')] }).body.max_tokens, 128_000);
  });

  it('sampling, metadata, thinking, service_tier, container and unknown fields are accepted and ignored', () => {
    const r = parse({
      messages: [user('hi')],
      temperature: 0.5,
      top_p: 0.9,
      top_k: 40,
      stop_sequences: ['END'],
      metadata: { user_id: 'abc' },
      thinking: { type: 'enabled', budget_tokens: 2048 },
      service_tier: 'auto',
      container: 'cont_1',
      context_management: { edits: [] },
      brand_new_field: true,
    });
    assert.equal(r.messages.length, 1);
    assert.ok(!('brand_new_field' in r.body));
    assert.deepEqual(r.dropped, []);
  });

  it('custom tools become functions (cache_control ignored); server tools and mcp_servers are dropped and named', () => {
    const r = parse({
      messages: [user('hi')],
      tools: [
        {
          name: 'Bash',
          description: 'run',
          input_schema: { type: 'object', properties: {} },
          cache_control: { type: 'ephemeral' },
        },
        { type: 'custom', name: 'Read', input_schema: { type: 'object', properties: {} } },
        { type: 'web_search_20250305', name: 'web_search' },
        { type: 'bash_20250124', name: 'bash' },
        { name: `mcp__${'x'.repeat(70)}`, input_schema: { type: 'object', properties: {} } },
      ],
      mcp_servers: [{ type: 'url', url: 'https://mcp.example.com', name: 'x' }],
    });
    assert.deepEqual(r.dropped, ['web_search_20250305', 'bash_20250124', `mcp__${'x'.repeat(70)}`, 'mcp_servers']);
    const t = toolRequest(r.tools)!;
    assert.deepEqual(
      t.tools.map((x) => x.name),
      ['Bash', 'Read'],
    );
    assert.equal(t.tools[0]!.description, 'run');
    assert.equal(t.choice, 'auto');
  });

  it('tool_choice: auto, any → required, tool → that function, none; disable_parallel_tool_use', () => {
    const tools = [{ name: 'f', input_schema: { type: 'object', properties: {} } }];
    const choice = (tool_choice: unknown) => toolRequest(parse({ messages: [user('hi')], tools, tool_choice }).tools);
    assert.equal(choice({ type: 'auto' })!.choice, 'auto');
    assert.equal(choice({ type: 'any' })!.choice, 'required');
    assert.deepEqual(choice({ type: 'tool', name: 'f' })!.choice, { name: 'f' });
    assert.equal(choice({ type: 'none' }), undefined);
    assert.equal(choice({ type: 'auto', disable_parallel_tool_use: true })!.parallel, false);
    assert.equal(choice({ type: 'auto' })!.parallel, true);
    assert.throws(() => choice({ type: 'tool', name: 'g' }), /no function named 'g'/);
    rejects({ ...base, messages: [user('hi')], tools, tool_choice: { type: 'sometimes' } }, 'tool_choice.type');
  });

  it("a tool's faults are named in the Messages shape (its input_schema, its index)", () => {
    const bad = (tools: unknown[]) => {
      try {
        toolRequest(parse({ messages: [user('hi')], tools }).tools);
      } catch (err) {
        return err as ProxyError;
      }
      assert.fail('expected a 400');
    };
    const ok = { name: 'ok', input_schema: { type: 'object' } };
    const schema = bad([ok, { name: 'f', input_schema: { type: 'string' } }]);
    assert.equal(schema.param, 'tools.1.input_schema');
    assert.match(schema.message, /'tools\.1\.input_schema'|type: "object"/);
    assert.equal(bad([ok, { ...ok }]).param, 'tools.1.name');
  });

  it('output_format json_schema becomes the core response format', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const r = parse({ messages: [user('hi')], output_format: { type: 'json_schema', schema } });
    assert.deepEqual(r.responseFormat, { type: 'json_schema', json_schema: { name: 'output', schema } });
  });

  it('a body nested too deep is refused before it is walked', () => {
    let deep: unknown = {};
    for (let i = 0; i < MAX_JSON_DEPTH + 5; i++) deep = { a: deep };
    rejects({ ...base, messages: [user('hi')], metadata: deep }, 'metadata');
  });
});

describe('the Messages adapter glue', () => {
  it('anthropicModels: the first matching glob maps the id; others pass through', () => {
    const map = { 'claude-haiku-*': 'sonnet', 'claude-*': 'codex' };
    assert.equal(mapModel('claude-haiku-4-5', map), 'sonnet');
    assert.equal(mapModel('claude-opus-5-5', map), 'codex');
    assert.equal(mapModel('gpt-5', map), 'gpt-5');
    assert.equal(mapModel('claude-opus-5-5'), 'claude-opus-5-5');
  });

  it('x-api-key is a bearer key; both headers naming different keys are refused', () => {
    assert.equal(authorizationOf({ 'x-api-key': 'k1' }), 'Bearer k1');
    assert.equal(authorizationOf({ authorization: 'Bearer k1' }), 'Bearer k1');
    assert.equal(authorizationOf({ authorization: 'Bearer k1', 'x-api-key': 'k1' }), 'Bearer k1');
    assert.equal(authorizationOf({}), undefined);
    assert.throws(
      () => authorizationOf({ authorization: 'Bearer k1', 'x-api-key': 'k2' }),
      (e: unknown) => e instanceof ProxyError && e.status === 401,
    );
  });

  it('every error code has an Anthropic status and type; a CLI login is the 503 of every wire format', () => {
    for (const code of ['backend_not_logged_in', 'login_not_set_up', 'backend_not_installed', 'login_refused'] as const)
      assert.deepEqual(ANTHROPIC_ERRORS[code], { status: 503, type: 'api_error' }, code);
    assert.ok(ANTHROPIC_ERRORS.model_not_found.status < 500);
    assert.deepEqual(ANTHROPIC_ERRORS.context_length_exceeded, { status: 413, type: 'request_too_large' });
    assert.deepEqual(ANTHROPIC_ERRORS.server_busy, { status: 529, type: 'overloaded_error' });
    const e = toAnthropicError(invalidRequest('bad', 'messages'));
    assert.deepEqual(e.body, { type: 'error', error: { type: 'invalid_request_error', message: 'bad' } });
    const planError = planLimitReached('spent; resets soon', Date.now() + 30_000, Date.now());
    const plan = toAnthropicError(planError);
    assert.equal(plan.status, 429);
    assert.equal(plan.body.error.type, 'rate_limit_error');
    assert.equal(errorHeaders(planError)['retry-after'], '30');
    assert.equal(errorHeaders(planError)['x-should-retry'], 'true');
  });
});

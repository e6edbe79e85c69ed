import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProxyError } from '../../src/errors/index.js';
import { offeredTools, toolRequest } from '../../src/tools/index.js';
import {
  MAX_JSON_DEPTH,
  checkCallOutputs,
  parseChatRequest,
  parseResponsesRequest,
  toToolOffer,
} from '../../src/wire/index.js';

const ok = { model: 'sonnet', messages: [{ role: 'user', content: 'hi' }] };

function rejects(body: unknown): ProxyError {
  try {
    parseChatRequest(body);
  } catch (err) {
    assert.ok(err instanceof ProxyError, `expected a ProxyError, got ${String(err)}`);
    assert.equal(err.status, 400);
    assert.equal(err.type, 'invalid_request_error');
    return err;
  }
  assert.fail('expected a 400');
}

describe('parseChatRequest', () => {
  it('accepts a minimal request and strips unknown keys', () => {
    const r = parseChatRequest({ ...ok, vendor_extension: 1 });
    assert.equal(r.model, 'sonnet');
    assert.ok(!('vendor_extension' in r));
  });

  it('accepts every documented shape', () => {
    parseChatRequest({
      model: 'sonnet',
      messages: [
        { role: 'developer', content: 'be kind' },
        { role: 'system', content: [{ type: 'text', text: 'sys' }] },
        { role: 'user', content: [{ type: 'text', text: 'a' }], name: 'bob' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'result' },
        { role: 'user', content: 'go on' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.2,
      top_p: 1,
      n: 1,
      max_tokens: 100,
      stop: ['x'],
      response_format: { type: 'json_object' },
      tools: [{ type: 'function', function: { name: 'f' } }],
      tool_choice: 'auto',
      user: 'u',
      seed: 3,
    });
  });

  const accepted: [string, unknown][] = [
    ['logit_bias null', { ...ok, logit_bias: null }],
    ['logit_bias token ids to biases', { ...ok, logit_bias: { '50256': -100, '1': 100, '42': 0.5 } }],
    [
      'a tool result for a call two assistant turns back',
      {
        model: 'sonnet',
        messages: [
          { role: 'user', content: 'q' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
          { role: 'assistant', content: 'thinking' },
          { role: 'tool', tool_call_id: 'c1', content: 'late' },
        ],
      },
    ],
    [
      'a function result answering a tool call of that name',
      {
        model: 'sonnet',
        messages: [
          { role: 'user', content: 'q' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
          { role: 'function', name: 'f', content: 'r' },
        ],
      },
    ],
    [
      'a system message and an assistant message',
      {
        model: 'sonnet',
        messages: [
          { role: 'system', content: 's' },
          { role: 'assistant', content: 'Once upon' },
        ],
      },
    ],
  ];
  for (const [name, body] of accepted) {
    it(`accepts ${name}`, () => {
      parseChatRequest(body);
    });
  }
  it('keeps logit_bias as sent', () => {
    assert.deepEqual(parseChatRequest({ ...ok, logit_bias: { '7': 5 } }).logit_bias, { '7': 5 });
  });

  const cases: [string, unknown, string | null][] = [
    ['body not an object', [1, 2], null],
    ['missing model', { messages: ok.messages }, 'model'],
    ['model not a string', { ...ok, model: 5 }, 'model'],
    ['missing messages', { model: 'sonnet' }, 'messages'],
    ['empty messages', { model: 'sonnet', messages: [] }, 'messages'],
    ['messages not an array', { model: 'sonnet', messages: 'hi' }, 'messages'],
    ['unknown role', { model: 'sonnet', messages: [{ role: 'wizard', content: 'x' }] }, 'messages.0.role'],
    ['content wrong type', { model: 'sonnet', messages: [{ role: 'user', content: 5 }] }, 'messages.0.content'],
    ['empty user content', { model: 'sonnet', messages: [{ role: 'user', content: '  ' }] }, 'messages.0.content'],
    [
      'empty second message',
      {
        model: 'sonnet',
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: '' },
        ],
      },
      'messages.1.content',
    ],
    ['only a system message', { model: 'sonnet', messages: [{ role: 'system', content: 'a' }] }, 'messages'],
    [
      'bad part type',
      { model: 'sonnet', messages: [{ role: 'user', content: [{ type: 'video', url: 'x' }] }] },
      'messages.0.content.0.type',
    ],
    ['temperature too high', { ...ok, temperature: 3 }, 'temperature'],
    ['temperature not a number', { ...ok, temperature: 'hot' }, 'temperature'],
    ['top_p out of range', { ...ok, top_p: 1.5 }, 'top_p'],
    ['n zero', { ...ok, n: 0 }, 'n'],
    ['n above one', { ...ok, n: 2 }, 'n'],
    ['stream not boolean', { ...ok, stream: 'yes' }, 'stream'],
    ['max_tokens zero', { ...ok, max_tokens: 0 }, 'max_tokens'],
    ['too many stops', { ...ok, stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
    [
      'only an orphan tool message',
      { model: 'sonnet', messages: [{ role: 'tool', tool_call_id: 'c1', content: 'r' }] },
      'messages.0.tool_call_id',
    ],
    [
      'only an orphan function message',
      { model: 'sonnet', messages: [{ role: 'function', name: 'f', content: 'r' }] },
      'messages.0.name',
    ],
    [
      'system and an orphan tool message',
      {
        model: 'sonnet',
        messages: [
          { role: 'system', content: 's' },
          { role: 'tool', tool_call_id: 'c1', content: 'r' },
        ],
      },
      'messages.1.tool_call_id',
    ],
    [
      'a tool result before any call',
      {
        model: 'sonnet',
        messages: [
          { role: 'user', content: 'q' },
          { role: 'tool', tool_call_id: 'c1', content: 'r' },
          { role: 'user', content: 'q2' },
        ],
      },
      'messages.1.tool_call_id',
    ],
    [
      'a tool result answering an id nobody called',
      {
        model: 'sonnet',
        messages: [
          { role: 'user', content: 'q' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'c2', content: 'r' },
        ],
      },
      'messages.2.tool_call_id',
    ],
    [
      'a tool result before its call',
      {
        model: 'sonnet',
        messages: [
          { role: 'user', content: 'q' },
          { role: 'tool', tool_call_id: 'c1', content: 'r' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
        ],
      },
      'messages.1.tool_call_id',
    ],
    [
      'a function result of a function nobody called',
      {
        model: 'sonnet',
        messages: [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } },
          { role: 'function', name: 'g', content: 'r' },
        ],
      },
      'messages.2.name',
    ],
    ['only an assistant message', { model: 'sonnet', messages: [{ role: 'assistant', content: 'hello' }] }, 'messages'],
    ['logit_bias not an object', { ...ok, logit_bias: 'garbage' }, 'logit_bias'],
    ['logit_bias an array', { ...ok, logit_bias: [1, 2] }, 'logit_bias'],
    ['logit_bias key not a token id', { ...ok, logit_bias: { hello: 1 } }, 'logit_bias.hello'],
    ['logit_bias value out of range', { ...ok, logit_bias: { '50256': 101 } }, 'logit_bias.50256'],
    ['logit_bias value not a number', { ...ok, logit_bias: { '50256': 'ban' } }, 'logit_bias.50256'],
    ['presence_penalty out of range', { ...ok, presence_penalty: -3 }, 'presence_penalty'],
    ['frequency_penalty out of range', { ...ok, frequency_penalty: 2.5 }, 'frequency_penalty'],
    ['seed not an integer', { ...ok, seed: 1.5 }, 'seed'],
    ['logprobs not boolean', { ...ok, logprobs: 'yes' }, 'logprobs'],
    ['top_logprobs above 20', { ...ok, top_logprobs: 21 }, 'top_logprobs'],
    [
      'json_schema name with spaces',
      { ...ok, response_format: { type: 'json_schema', json_schema: { name: 'my schema' } } },
      'response_format.json_schema.name',
    ],
  ];
  for (const [name, body, param] of cases) {
    it(`400 for ${name} (param ${param})`, () => {
      const err = rejects(body);
      assert.equal(err.param, param);
      assert.ok(err.message.length > 10);
    });
  }
});

/** A JSON schema `levels` objects deep, as `{type, properties: {a: …}}` (two JSON levels each). */
function deepSchema(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < levels; i++) schema = { type: 'object', properties: { a: schema } };
  return schema;
}

function rejection(run: () => unknown): ProxyError {
  try {
    run();
  } catch (err) {
    assert.ok(err instanceof ProxyError, `expected a ProxyError, got ${String(err)}`);
    assert.equal(err.status, 400);
    assert.equal(err.type, 'invalid_request_error');
    return err;
  }
  assert.fail('expected a 400');
}

describe('nesting depth is bounded before anything walks the body', () => {
  const deep = deepSchema(3_000);
  const cases: [string, () => unknown, string][] = [
    [
      'chat response_format schema',
      () =>
        parseChatRequest({ ...ok, response_format: { type: 'json_schema', json_schema: { name: 's', schema: deep } } }),
      'response_format.json_schema.schema',
    ],
    [
      'chat tool parameters',
      () =>
        parseChatRequest({
          ...ok,
          tools: [
            { type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { x: deep } } } },
          ],
        }),
      'tools[0].function.parameters',
    ],
    [
      'chat legacy functions',
      () => parseChatRequest({ ...ok, functions: [{ name: 'f', parameters: deep }] }),
      'functions[0].parameters',
    ],
    [
      'chat message content',
      () =>
        parseChatRequest({
          model: 'sonnet',
          messages: [{ role: 'user', content: [{ type: 'text', text: 'x', extra: deep }] }],
        }),
      'messages.0',
    ],
    ['chat metadata', () => parseChatRequest({ ...ok, metadata: { a: deep } }), 'metadata'],
    [
      'Responses text.format schema',
      () =>
        parseResponsesRequest({
          model: 'sonnet',
          input: 'hi',
          text: { format: { type: 'json_schema', name: 's', schema: deep } },
        }),
      'text.format.schema',
    ],
    [
      'Responses tool parameters',
      () =>
        parseResponsesRequest({
          model: 'sonnet',
          input: 'hi',
          tools: [{ type: 'function', name: 'f', parameters: deep }],
        }),
      'tools[0].parameters',
    ],
    [
      'Responses input item',
      () =>
        parseResponsesRequest({
          model: 'sonnet',
          input: [
            { role: 'user', content: 'x' },
            { type: 'function_call_output', call_id: 'c', output: [deep] },
          ],
        }),
      'input.1',
    ],
    [
      'a bare nested array',
      () => parseChatRequest({ ...ok, vendor: JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`) as unknown }),
      'vendor',
    ],
  ];
  for (const [name, run, param] of cases) {
    it(`${name}: 400 naming ${param}, no RangeError`, () => {
      const err = rejection(run);
      assert.equal(err.param, param);
      assert.match(err.message, new RegExp(`more than ${MAX_JSON_DEPTH} levels`));
    });
  }
  it('a schema nested as deep as OpenAI allows in strict mode (and well past it) is accepted', () => {
    parseChatRequest({
      ...ok,
      response_format: { type: 'json_schema', json_schema: { name: 's', schema: deepSchema(40) } },
    });
    parseResponsesRequest({
      model: 'sonnet',
      input: 'hi',
      text: { format: { type: 'json_schema', name: 's', schema: deepSchema(40) } },
    });
  });
});

describe("wrong types are named as such, in OpenAI's words", () => {
  const cases: [string, () => unknown, string, string][] = [
    [
      'chat stream',
      () => parseChatRequest({ ...ok, stream: 'yes' }),
      'stream',
      "Invalid type for 'stream': expected a boolean, but got a string instead.",
    ],
    [
      'chat model',
      () => parseChatRequest({ ...ok, model: 5 }),
      'model',
      "Invalid type for 'model': expected a string, but got an integer instead.",
    ],
    [
      'chat temperature',
      () => parseChatRequest({ ...ok, temperature: 'hot' }),
      'temperature',
      "Invalid type for 'temperature': expected a number, but got a string instead.",
    ],
    [
      'chat messages',
      () => parseChatRequest({ model: 'sonnet', messages: { role: 'user' } }),
      'messages',
      "Invalid type for 'messages': expected an array, but got an object instead.",
    ],
    [
      'Responses stream',
      () => parseResponsesRequest({ model: 'sonnet', input: 'hi', stream: 'yes' }),
      'stream',
      "Invalid type for 'stream': expected a boolean, but got a string instead.",
    ],
    [
      'Responses model',
      () => parseResponsesRequest({ model: 5, input: 'hi' }),
      'model',
      "Invalid type for 'model': expected a string, but got an integer instead.",
    ],
    [
      'Responses store',
      () => parseResponsesRequest({ model: 'sonnet', input: 'hi', store: 1.5 }),
      'store',
      "Invalid type for 'store': expected a boolean, but got a decimal instead.",
    ],
    [
      'Responses call_id',
      () =>
        parseResponsesRequest({
          model: 'sonnet',
          input: [
            { role: 'user', content: 'q' },
            { type: 'function_call', call_id: 7, name: 'f', arguments: '{}' },
          ],
        }),
      'input.1.call_id',
      "Invalid type for 'input.1.call_id': expected a string, but got an integer instead.",
    ],
  ];
  for (const [name, run, param, message] of cases) {
    it(name, () => {
      const err = rejection(run);
      assert.equal(err.param, param);
      assert.equal(err.message, message);
    });
  }
  it('a field left out is still a missing parameter', () => {
    assert.equal(
      rejection(() => parseChatRequest({ messages: ok.messages })).message,
      "Missing required parameter: 'model'.",
    );
    assert.equal(
      rejection(() => parseResponsesRequest({ model: 'sonnet' })).message,
      "Missing required parameter: 'input'.",
    );
  });
});

describe('checkCallOutputs', () => {
  const call = { type: 'function_call' as const, call_id: 'c1', name: 'f', arguments: '{}' };
  const output = (id: string) => ({ type: 'function_call_output' as const, call_id: id, output: 'r' });
  const user = {
    type: 'message' as const,
    role: 'user' as const,
    content: [{ type: 'input_text' as const, text: 'q' }],
  };
  it('an output after its call in the input, or answering the previous response, passes', () => {
    checkCallOutputs([user, call, output('c1')], new Set());
    checkCallOutputs([output('c9')], new Set(['c9']));
  });
  it('an output answering nothing is a 400 naming its call_id', () => {
    const err = rejection(() => checkCallOutputs([user, call, output('c2')], new Set(['c9'])));
    assert.equal(err.param, 'input.2.call_id');
    assert.match(err.message, /No tool call found for function call output with call_id 'c2'/);
  });
  it('an output before its call is a 400', () => {
    assert.equal(rejection(() => checkCallOutputs([user, output('c1'), call], new Set())).param, 'input.1.call_id');
  });
});

describe('Responses tool_choice in the Responses shape', () => {
  const tools = [
    { type: 'function', name: 'a' },
    { type: 'function', name: 'b' },
  ];
  const parse = (tool_choice: unknown) =>
    toolRequest(toToolOffer(parseResponsesRequest({ model: 'sonnet', input: 'hi', tools, tool_choice }).body).offer);
  it('allowed_tools {mode, tools: [{type, name}]} offers only those, with the mode', () => {
    const t = parse({ type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'b' }] })!;
    assert.deepEqual([offeredTools(t).map((x) => x.name), t.choice], [['b'], 'required']);
    assert.deepEqual(parse({ type: 'function', name: 'a' })!.choice, { name: 'a' });
  });
  it('the Agents SDK tools are named by type alone: {type: "shell"} forces the shell function', () => {
    const sdk = (tool_choice: unknown) =>
      toolRequest(
        toToolOffer(
          parseResponsesRequest({
            model: 'sonnet',
            input: 'hi',
            tools: [{ type: 'shell', environment: { type: 'local' } }, { type: 'apply_patch' }],
            tool_choice,
          }).body,
        ).offer,
      )!;
    assert.deepEqual(sdk({ type: 'shell' }).choice, { name: 'shell' });
    const t = sdk({ type: 'allowed_tools', mode: 'required', tools: [{ type: 'apply_patch' }] });
    assert.deepEqual([offeredTools(t).map((x) => x.name), t.choice], [['apply_patch'], 'required']);
  });
  const cases: [string, unknown, string, RegExp][] = [
    [
      'an unknown choice, answered with the Responses shapes',
      { type: 'nonsense' },
      'tool_choice',
      /\{"type": "function" \| "custom", "name": …\}, \{"type": "shell" \| "apply_patch"\} or \{"type": "allowed_tools", "mode"/,
    ],
    ['a hosted tool forced', { type: 'web_search' }, 'tool_choice', /cannot force the hosted tool 'web_search'/],
    [
      'allowed_tools in the chat shape',
      { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [] } },
      'tool_choice.mode',
      /expected 'auto' or 'required'/,
    ],
    [
      'allowed_tools without tools',
      { type: 'allowed_tools', mode: 'auto', tools: [] },
      'tool_choice.tools',
      /non-empty array/,
    ],
    [
      'allowed_tools naming a function without its name',
      { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function' }] },
      'tool_choice.tools.0.name',
      /Missing required parameter/,
    ],
    [
      'allowed_tools naming a function not given',
      { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'zz' }] },
      'tool_choice',
      /named 'zz'/,
    ],
  ];
  for (const [name, choice, param, message] of cases) {
    it(`${name}: 400 naming ${param}`, () => {
      const err = rejection(() => parse(choice));
      assert.equal(err.param, param);
      assert.match(err.message, message);
      assert.doesNotMatch(err.message, /"function": \{"name"/, 'no chat shape quoted');
    });
  }
});

describe('the Agents SDK tool items in a Responses input', () => {
  const parse = (input: unknown[]) =>
    parseResponsesRequest({ model: 'sonnet', input: [{ role: 'user', content: 'q' }, ...input] });
  it("a shell_call is the model's call of `shell`, with the arguments it gave; its output is each command's result", () => {
    const p = parse([
      {
        type: 'shell_call',
        id: 'sh_1',
        call_id: 'c1',
        status: 'completed',
        action: { commands: ['ls', 'pwd'], timeout_ms: 100, max_output_length: null },
        environment: null,
      },
      {
        type: 'shell_call_output',
        call_id: 'c1',
        output: [
          { stdout: 'a\n', stderr: '', outcome: { type: 'exit', exit_code: 0 } },
          { stdout: '', stderr: '', outcome: { type: 'timeout' } },
        ],
        max_output_length: 4096,
      },
    ]);
    assert.deepEqual(p.messages.slice(1), [
      {
        role: 'assistant',
        parts: [
          { type: 'tool_call', id: 'c1', name: 'shell', arguments: '{"commands":["ls","pwd"],"timeout_ms":100}' },
        ],
      },
      {
        role: 'user',
        parts: [
          {
            type: 'tool_result',
            callId: 'c1',
            content: 'Command 1 exited with code 0.\nstdout:\na\n\n\nCommand 2 timed out.\n(no output)',
          },
        ],
      },
    ]);
    assert.deepEqual(
      p.items.map((i) => i.type),
      ['message', 'shell_call', 'shell_call_output'],
    );
  });
  it('an apply_patch_call is a call of `apply_patch` (a delete without a diff); a failed output says so', () => {
    const p = parse([
      { type: 'apply_patch_call', call_id: 'c2', status: 'completed', operation: { type: 'delete_file', path: 'x' } },
      { type: 'apply_patch_call_output', call_id: 'c2', status: 'failed' },
    ]);
    const [call, result] = p.messages.slice(1);
    assert.deepEqual(call!.parts, [
      { type: 'tool_call', id: 'c2', name: 'apply_patch', arguments: '{"type":"delete_file","path":"x"}' },
    ]);
    assert.deepEqual(result!.parts, [{ type: 'tool_result', callId: 'c2', content: 'The patch failed.' }]);
  });
  it('an output answering no call is a 400; a bad operation names its field', () => {
    const p = parse([{ type: 'shell_call_output', call_id: 'c9', output: [] }]);
    assert.equal(rejection(() => checkCallOutputs(p.items, new Set())).param, 'input.1.call_id');
    const err = rejection(() =>
      parse([{ type: 'apply_patch_call', call_id: 'c2', operation: { type: 'rename_file', path: 'x' } }]),
    );
    assert.equal(err.param, 'input.1.operation.type');
  });
});

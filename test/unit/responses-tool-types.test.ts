// The fate of every Responses tool type and input item type a current client sends, in one table
// each: offered to the model (and under which name), left out, or refused by name.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isProxyError } from '../../src/errors/index.js';
import { offeredTools, toolRequest } from '../../src/tools/index.js';
import { parseResponsesRequest, toToolOffer } from '../../src/wire/index.js';

const fn = (name: string) => ({ type: 'function', name, parameters: { type: 'object', properties: {} } });

/** The names the model is offered, the wire entries by name, and the types left out. */
function fate(tools: unknown[]) {
  const r = toToolOffer(parseResponsesRequest({ model: 'sonnet', input: 'hi', tools }).body);
  const t = toolRequest(r.offer);
  return { offered: t ? offeredTools(t).map((x) => x.name) : [], wire: Object.fromEntries(r.wire), dropped: r.dropped };
}

describe('Responses tool types', () => {
  const cases: [string, unknown, { offered: string[]; wire?: Record<string, unknown>; dropped?: string[] }][] = [
    ['function', fn('get_weather'), { offered: ['get_weather'] }],
    [
      'namespace (its functions; a custom tool inside too)',
      {
        type: 'namespace',
        name: 'multi_agent_v1',
        tools: [fn('spawn_agent'), { type: 'custom', name: 'note' }, { type: 'web_search' }],
      },
      {
        offered: ['multi_agent_v1__spawn_agent', 'multi_agent_v1__note'],
        wire: {
          multi_agent_v1__spawn_agent: { type: 'function', name: 'spawn_agent', namespace: 'multi_agent_v1' },
          multi_agent_v1__note: { type: 'custom', name: 'note', namespace: 'multi_agent_v1' },
        },
        dropped: ['web_search'],
      },
    ],
    [
      'custom (freeform, with a grammar)',
      { type: 'custom', name: 'apply_patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: x' } },
      { offered: ['apply_patch'], wire: { apply_patch: { type: 'custom', name: 'apply_patch' } } },
    ],
    ['custom (text format)', { type: 'custom', name: 'scribble', format: { type: 'text' } }, { offered: ['scribble'] }],
    ...[
      'web_search',
      'web_search_preview',
      'file_search',
      'code_interpreter',
      'image_generation',
      'computer_use_preview',
      'mcp',
      'tool_search',
      'local_shell',
    ].map((type): [string, unknown, { offered: string[]; dropped: string[] }] => [
      type,
      { type },
      { offered: [], dropped: [type] },
    ]),
  ];
  for (const [name, tool, want] of cases)
    it(`${name}: ${want.offered.length ? `offered as ${want.offered.join(', ')}` : 'left out'}`, () => {
      const got = fate([tool]);
      assert.deepEqual(got.offered, want.offered);
      assert.deepEqual(got.dropped, want.dropped ?? []);
      if (want.wire) assert.deepEqual(got.wire, want.wire);
    });

  it('a custom tool is offered as a function of one string, its grammar in its description', () => {
    const r = toToolOffer(
      parseResponsesRequest({
        model: 'sonnet',
        input: 'hi',
        tools: [
          {
            type: 'custom',
            name: 'apply_patch',
            description: 'Edits files.',
            format: { type: 'grammar', syntax: 'lark', definition: 'start: begin_patch' },
          },
        ],
      }).body,
    );
    const spec = toolRequest(r.offer)!.tools[0]!;
    assert.deepEqual(spec.parameters.required, ['input']);
    assert.match(spec.description!, /^Edits files\.[^]*lark grammar:\nstart: begin_patch$/);
  });

  it('a namespace whose qualified names would be too long gets unique shortened ones', () => {
    const long = 'n'.repeat(60);
    const got = fate([{ type: 'namespace', name: long, tools: [fn('a'), fn('b')] }]);
    assert.equal(got.offered.length, 2);
    assert.ok(got.offered.every((n) => /^[A-Za-z0-9_-]{1,64}$/.test(n)) && got.offered[0] !== got.offered[1]);
  });
});

describe('Responses input item types', () => {
  const user = { role: 'user', content: 'go on' };
  const kept: [string, unknown[], unknown[]][] = [
    [
      'function_call with a namespace, and its output',
      [
        { type: 'function_call', call_id: 'c1', name: 'spawn_agent', namespace: 'ma', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'ok' },
      ],
      [
        { role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'ma__spawn_agent', arguments: '{}' }] },
        { role: 'user', parts: [{ type: 'tool_result', callId: 'c1', content: 'ok' }] },
      ],
    ],
    [
      'custom_tool_call and custom_tool_call_output (text parts)',
      [
        { type: 'custom_tool_call', call_id: 'c2', name: 'apply_patch', input: 'P' },
        { type: 'custom_tool_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'done' }] },
      ],
      [
        {
          role: 'assistant',
          parts: [{ type: 'tool_call', id: 'c2', name: 'apply_patch', arguments: '{"input":"P"}' }],
        },
        { role: 'user', parts: [{ type: 'tool_result', callId: 'c2', content: 'done' }] },
      ],
    ],
  ];
  for (const [name, items, messages] of kept)
    it(`${name}: kept`, () => {
      const p = parseResponsesRequest({ model: 'sonnet', input: [user, ...items] });
      assert.deepEqual(p.messages.slice(1), messages);
    });

  const dropped = [
    { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'E' },
    { type: 'compaction', encrypted_content: 'E' },
    { type: 'compaction_trigger' },
    { type: 'web_search_call', id: 'ws', status: 'completed', action: { type: 'search' } },
    { type: 'file_search_call', id: 'fs' },
    { type: 'tool_search_call', call_id: 'ts', arguments: {} },
    { type: 'tool_search_output', call_id: 'ts', tools: [] },
    { type: 'image_generation_call', id: 'ig' },
    { type: 'code_interpreter_call', id: 'ci' },
    { type: 'computer_call', id: 'cc' },
    { type: 'computer_call_output', call_id: 'cc', output: {} },
    { type: 'local_shell_call', id: 'ls', call_id: 'ls', action: {} },
    { type: 'local_shell_call_output', id: 'ls', output: '{}' },
    { type: 'mcp_list_tools', id: 'm' },
    { type: 'mcp_call', id: 'm' },
    { type: 'mcp_approval_request', id: 'm' },
    { type: 'mcp_approval_response', approval_request_id: 'm', approve: true },
  ];
  for (const item of dropped)
    it(`${item.type}: left out`, () => {
      const p = parseResponsesRequest({ model: 'sonnet', input: [item, user] });
      assert.deepEqual(p.messages, [{ role: 'user', parts: [{ type: 'text', text: 'go on' }] }]);
    });

  it('any other item type: 400 naming it', () => {
    try {
      parseResponsesRequest({ model: 'sonnet', input: [{ type: 'mystery' }, user] });
      assert.fail('accepted');
    } catch (err) {
      assert.ok(isProxyError(err) && err.param === 'input.0.type');
    }
  });
});

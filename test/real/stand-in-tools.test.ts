// The stand-in APIs' tool rule with native history (what a live CLI sends once a conversation's
// earlier tool rounds are its own tool_use/tool_result or function_call/function_call_output
// items): a new user turn is answered with the tool calls again, a tool result with text about
// that round's results only.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startAnthropicStandIn, type StandIn } from '../support/anthropic-stand-in.js';
import { startResponsesStandIn, type ResponsesStandIn } from '../support/responses-stand-in.js';

let anthropic: StandIn;
let responses: ResponsesStandIn;
before(async () => {
  anthropic = await startAnthropicStandIn();
  anthropic.toolCalls = [{ name: 'get_weather', input: { city: 'Paris' } }];
  responses = await startResponsesStandIn();
  responses.toolCalls = [{ name: 'get_weather', arguments: { city: 'Paris' } }];
});
after(async () => {
  await anthropic?.close();
  await responses?.close();
});

async function post(url: string, body: unknown): Promise<string> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return res.text();
}

describe('stand-in APIs with native tool history', () => {
  const round = (n: number) => [
    { role: 'user', content: [{ type: 'text', text: `weather? (turn ${n})` }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: `t${n}`, name: 'mcp__olp__get_weather', input: {} }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${n}`, content: `sunny ${n}` }] },
  ];
  const messages = (body: unknown[]) => ({
    model: 'sonnet',
    stream: true,
    tools: [{ name: 'mcp__olp__get_weather', input_schema: { type: 'object' } }],
    messages: body,
  });

  it('Anthropic: a later user turn calls the tools again; its results are answered alone', async () => {
    const history = [...round(1), { role: 'assistant', content: [{ type: 'text', text: 'echo: sunny 1' }] }];
    const next = await post(
      `${anthropic.url}/v1/messages`,
      messages([...history, { role: 'user', content: [{ type: 'text', text: 'and now? (turn 2)' }] }]),
    );
    assert.match(next, /"type":"tool_use"/);
    const answered = await post(`${anthropic.url}/v1/messages`, messages([...history, ...round(2)]));
    assert.doesNotMatch(answered, /"type":"tool_use"/);
    assert.equal(
      [...answered.matchAll(/"text":"([^"]*)"/g)].map((m) => m[1]).join(''),
      'echo: sunny 2',
      'only the last round is answered',
    );
  });

  const item = (n: number) => [
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: `weather? (turn ${n})` }] },
    { type: 'function_call', call_id: `c${n}`, name: 'get_weather', namespace: 'mcp__olp', arguments: '{}' },
    { type: 'function_call_output', call_id: `c${n}`, output: `sunny ${n}` },
  ];
  const input = (body: unknown[]) => ({
    model: 'codex',
    tools: [{ type: 'namespace', name: 'mcp__olp', tools: [{ type: 'function', name: 'get_weather' }] }],
    input: body,
  });

  it('Responses: a later user turn calls the tools again; its outputs are answered alone', async () => {
    const history = [
      ...item(1),
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'got sunny 1' }] },
    ];
    const next = await post(
      `${responses.url}/v1/responses`,
      input([...history, { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'and now?' }] }]),
    );
    assert.match(next, /"type":"function_call"/);
    const answered = await post(`${responses.url}/v1/responses`, input([...history, ...item(2)]));
    assert.doesNotMatch(answered, /"type":"function_call"/);
    assert.match(answered, /responses stand-in got: sunny 2"/, 'only the last round is answered');
  });
});

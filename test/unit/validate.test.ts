import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProxyError } from '../../src/errors/index.js';
import { parseChatRequest } from '../../src/validate/index.js';

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
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
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
    ['empty second message', { model: 'sonnet', messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: '' }] }, 'messages.1.content'],
    ['only a system message', { model: 'sonnet', messages: [{ role: 'system', content: 'a' }] }, 'messages'],
    ['bad part type', { model: 'sonnet', messages: [{ role: 'user', content: [{ type: 'video', url: 'x' }] }] }, 'messages.0.content.0.type'],
    ['temperature too high', { ...ok, temperature: 3 }, 'temperature'],
    ['temperature not a number', { ...ok, temperature: 'hot' }, 'temperature'],
    ['top_p out of range', { ...ok, top_p: 1.5 }, 'top_p'],
    ['n zero', { ...ok, n: 0 }, 'n'],
    ['n above one', { ...ok, n: 2 }, 'n'],
    ['stream not boolean', { ...ok, stream: 'yes' }, 'stream'],
    ['max_tokens zero', { ...ok, max_tokens: 0 }, 'max_tokens'],
    ['too many stops', { ...ok, stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
    ['forced tool call', { ...ok, tools: [{ type: 'function' }], tool_choice: 'required' }, 'tool_choice'],
  ];
  for (const [name, body, param] of cases) {
    it(`400 for ${name} (param ${param})`, () => {
      const err = rejects(body);
      assert.equal(err.param, param);
      assert.ok(err.message.length > 10);
    });
  }
});

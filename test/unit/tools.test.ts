import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/log/index.js';
import { choiceInstruction, createToolBridge, offeredTools } from '../../src/tools/index.js';
import { parseChatTools } from '../../src/wire/index.js';
import { waitFor } from '../support/wait.js';

const fn = (name: string, parameters?: unknown) => ({
  type: 'function',
  function: { name, ...(parameters ? { parameters } : {}) },
});

describe('parseChatTools', () => {
  it('reads tools, tool_choice and parallel_tool_calls; none offers nothing', () => {
    const t = parseChatTools({
      tools: [fn('a', { type: 'object', properties: { x: { type: 'string' } } }), fn('b')],
      tool_choice: { type: 'function', function: { name: 'b' } },
      parallel_tool_calls: false,
    })!;
    assert.deepEqual(t.choice, { name: 'b' });
    assert.equal(t.parallel, false);
    assert.deepEqual(
      offeredTools(t).map((x) => x.name),
      ['b'],
    );
    assert.deepEqual(
      t.tools[1]!.parameters,
      { type: 'object', properties: {} },
      'no parameters: an empty object schema',
    );
    assert.match(choiceInstruction(t)!, /"b"/);
    assert.equal(parseChatTools({ tools: [fn('a')], tool_choice: 'none' }), undefined);
    assert.equal(parseChatTools({}), undefined);
    assert.equal(
      choiceInstruction(parseChatTools({ tools: [fn('a')], tool_choice: 'required' })!)?.includes('must'),
      true,
    );
  });

  it('allowed_tools offers only the functions it names, with its mode', () => {
    const t = parseChatTools({
      tools: [fn('a'), fn('b'), fn('c')],
      tool_choice: {
        type: 'allowed_tools',
        allowed_tools: {
          mode: 'required',
          tools: [
            { type: 'function', function: { name: 'c' } },
            { type: 'function', function: { name: 'a' } },
          ],
        },
      },
    })!;
    assert.deepEqual(
      offeredTools(t).map((x) => x.name),
      ['a', 'c'],
    );
    assert.equal(t.choice, 'required');
    assert.match(choiceInstruction(t)!, /must answer by calling/);
    const auto = parseChatTools({
      tools: [fn('a'), fn('b')],
      tool_choice: {
        type: 'allowed_tools',
        allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'b' } }] },
      },
    })!;
    assert.deepEqual([offeredTools(auto).map((x) => x.name), auto.choice], [['b'], 'auto']);
  });

  it('maps the legacy functions / function_call the same way', () => {
    const t = parseChatTools({
      functions: [{ name: 'legacy', description: 'd' }],
      function_call: { name: 'legacy' },
    })!;
    assert.deepEqual([t.tools[0]!.name, t.tools[0]!.description, t.choice], ['legacy', 'd', { name: 'legacy' }]);
  });

  it('refuses what OpenAI refuses, naming the param', () => {
    const param = (req: Record<string, unknown>) => {
      try {
        parseChatTools(req);
      } catch (err) {
        return (err as { param?: string }).param;
      }
      return 'accepted';
    };
    assert.equal(param({ tools: 'x' }), 'tools');
    assert.equal(param({ tools: [{ type: 'web_search' }] }), 'tools[0].type');
    assert.equal(param({ tools: [{ type: 'function' }] }), 'tools[0].function');
    assert.equal(param({ tools: [fn('has space')] }), 'tools[0].function.name');
    assert.equal(param({ tools: [fn('a'), fn('a')] }), 'tools[1].function.name');
    assert.equal(param({ tools: [fn('a', [1])] }), 'tools[0].function.parameters');
    assert.equal(param({ tools: [fn('a', { type: 'array' })] }), 'tools[0].function.parameters');
    assert.equal(param({ tools: [fn('a')], tool_choice: 'sometimes' }), 'tool_choice');
    assert.equal(
      param({ tools: [fn('a')], tool_choice: { type: 'function', function: { name: 'z' } } }),
      'tool_choice',
    );
    assert.equal(param({ tool_choice: 'required' }), 'tool_choice');
    const allowed = (spec: unknown) => ({
      tools: [fn('a')],
      tool_choice: { type: 'allowed_tools', allowed_tools: spec },
    });
    assert.equal(param(allowed(undefined)), 'tool_choice.allowed_tools');
    assert.equal(
      param(allowed({ mode: 'sometimes', tools: [{ type: 'function', function: { name: 'a' } }] })),
      'tool_choice.allowed_tools.mode',
    );
    assert.equal(param(allowed({ mode: 'auto', tools: [] })), 'tool_choice.allowed_tools.tools');
    assert.equal(
      param(allowed({ mode: 'auto', tools: [{ type: 'function', name: 'a' }] })),
      'tool_choice.allowed_tools.tools[0]',
    );
    assert.equal(
      param(allowed({ mode: 'auto', tools: [{ type: 'function', function: { name: 'z' } }] })),
      'tool_choice',
    );
    assert.equal(param({ functions: [{ name: 'f' }], function_call: { name: 'g' } }), 'function_call');
  });
});

describe('the MCP bridge', () => {
  const logger = createLogger('error', new Writable({ write: (_c, _e, cb) => cb() }));

  async function rpc(
    url: string,
    method: string,
    params: Record<string, unknown> = {},
    id = 1,
  ): Promise<{ result?: Record<string, unknown>; error?: unknown }> {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
    return (await res.json()) as { result?: Record<string, unknown> };
  }

  it('lists only its run’s functions, holds a call until its result comes, and answers at once when the result came first', async () => {
    const bridge = createToolBridge(logger);
    await bridge.start();
    try {
      const s = bridge.open([{ name: 'get_weather', parameters: { type: 'object' } }]);
      const other = bridge.open([{ name: 'secret', parameters: { type: 'object' } }]);
      assert.match(s.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp\/[A-Za-z0-9_-]{32}$/);
      assert.equal(
        (await rpc(s.url, 'initialize', { protocolVersion: '2025-06-18' })).result?.protocolVersion,
        '2025-06-18',
      );
      assert.deepEqual(
        ((await rpc(s.url, 'tools/list')).result?.tools as { name: string }[]).map((t) => t.name),
        ['get_weather'],
      );
      s.expect([
        { id: 'tu1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { id: 'tu2', name: 'get_weather', arguments: '{"city":"Tokyo"}' },
      ]);
      // No _meta: matched by name and arguments, not order.
      const tokyo = rpc(s.url, 'tools/call', { name: 'get_weather', arguments: { city: 'Tokyo' } });
      await waitFor(() => s.waiting.length === 1, undefined, 'the call to arrive');
      assert.deepEqual(s.waiting, [{ toolUseId: 'tu2', name: 'get_weather' }]);
      s.provide(
        new Map([
          ['tu1', 'sunny'],
          ['tu2', 'rain'],
        ]),
      );
      assert.deepEqual((await tokyo).result, { content: [{ type: 'text', text: 'rain' }] });
      // The result was there first: answered at once.
      assert.deepEqual(
        (
          await rpc(s.url, 'tools/call', {
            name: 'get_weather',
            arguments: { city: 'Paris' },
            _meta: { 'claudecode/toolUseId': 'tu1' },
          })
        ).result,
        { content: [{ type: 'text', text: 'sunny' }] },
      );
      // A function this run did not offer, and a wrong token.
      assert.equal((await rpc(s.url, 'tools/call', { name: 'secret', arguments: {} })).result?.isError, true);
      assert.equal(
        (await fetch(s.url.replace(/\/mcp\/.*/, '/mcp/wrong-token-wrong-token-wrong'), { method: 'POST', body: '{}' }))
          .status,
        404,
      );
      // Closing answers waiting calls with an error and refuses later ones.
      other.expect([{ id: 'x', name: 'secret', arguments: '{}' }]);
      const waiting = rpc(other.url, 'tools/call', { name: 'secret', arguments: {} });
      await waitFor(() => other.waiting.length === 1, undefined, 'the call to arrive');
      other.close();
      assert.equal((await waiting).result?.isError, true);
      assert.equal((await fetch(other.url, { method: 'POST', body: '{}' })).status, 404);
      s.close();
    } finally {
      await bridge.close();
    }
  });

  it('calls that come before their report (codex) wait, and are matched on their arguments only: parallel calls of one function never swap results', async () => {
    const bridge = createToolBridge(logger);
    await bridge.start();
    try {
      const s = bridge.open([{ name: 'get_weather', parameters: { type: 'object' } }]);
      // Both calls reach the bridge before olp read either report, in the other order.
      const oslo = rpc(s.endpoint, 'tools/call', {
        name: 'get_weather',
        arguments: { city: 'Oslo' },
        _meta: { callId: 'call_x' },
      }).catch(() => undefined);
      const bearer = (method: string, params: Record<string, unknown>) =>
        fetch(s.endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${s.token}` },
          body: JSON.stringify({ jsonrpc: '2.0', id: 2, method, params }),
        }).then((r) => r.json() as Promise<{ result?: Record<string, unknown> }>);
      const osloB = bearer('tools/call', { name: 'get_weather', arguments: { city: 'Oslo' } });
      const parisB = bearer('tools/call', { name: 'get_weather', arguments: { city: 'Paris' } });
      await waitFor(() => s.early === 2, undefined, 'both calls to arrive');
      s.expect([{ id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' }], { exact: true });
      assert.equal(s.unasked, 0, 'the Paris call was already there');
      s.expect([{ id: 'c2', name: 'get_weather', arguments: '{"city":"Oslo"}' }], { exact: true });
      s.provide(
        new Map([
          ['c1', 'sunny in Paris'],
          ['c2', 'snow in Oslo'],
        ]),
      );
      assert.deepEqual((await parisB).result, { content: [{ type: 'text', text: 'sunny in Paris' }] });
      assert.deepEqual((await osloB).result, { content: [{ type: 'text', text: 'snow in Oslo' }] });
      assert.equal(await oslo, undefined, 'a call without the token never reached the session');
      s.close();
    } finally {
      await bridge.close();
    }
  });
});

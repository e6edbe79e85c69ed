// The client's functions as the model's own tools (claude through olp's MCP bridge): calls come
// back as tool_calls (streamed argument deltas too), the CLI waits parked, and the client's next
// request with the results is answered by that same process.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { isAlive, leftoverWorkspaces, readRecord, recordedPids } from '../support/procs.js';
import { waitFor } from '../support/wait.js';

type Msg = OpenAI.ChatCompletionMessageParam;

const WEATHER: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
const TIME: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } },
};

/** A user message that makes the fake model call these functions. */
const asking = (calls: { name: string; arguments: Record<string, unknown> }[], text = 'What is the weather?'): Msg => ({
  role: 'user',
  content: `${text} [[fake-tools:${JSON.stringify(calls)}]]`,
});
const PARIS_TOKYO = [
  { name: 'get_weather', arguments: { city: 'Paris' } },
  { name: 'get_weather', arguments: { city: 'Tokyo' } },
];

let t: TestDaemon;
let client: OpenAI;
before(async () => {
  t = await startTestDaemon();
  client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
});
after(async () => {
  await t.close(true);
  for (const pid of recordedPids(t.recordDir).runs) assert.ok(!isAlive(pid), `${pid} stopped with olp`);
  assert.deepEqual(leftoverWorkspaces(t.stateDir), []);
  await t.close();
});

const spawns = () => recordedPids(t.recordDir).runs.length;
const modes = () =>
  t.logs.filter((l) => l.event === 'request' && l.path === '/v1/chat/completions').map((l) => String(l.run ?? '-'));

describe('tool calling (claude)', () => {
  it('parallel calls come back as tool_calls; the results continue the same CLI, with no new spawn', async () => {
    const messages: Msg[] = [asking(PARIS_TOKYO)];
    const before = spawns();
    const first = await client.chat.completions.create({ model: 'sonnet', messages, tools: [WEATHER, TIME] });
    const choice = first.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, null);
    const calls = choice.message.tool_calls!.filter((c) => c.type === 'function');
    assert.deepEqual(
      calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)]),
      [
        ['get_weather', { city: 'Paris' }],
        ['get_weather', { city: 'Tokyo' }],
      ],
    );
    assert.ok(first.usage!.prompt_tokens > 0 && first.usage!.completion_tokens === 7, JSON.stringify(first.usage));
    const pid = recordedPids(t.recordDir).runs.at(-1)!;
    assert.ok(isAlive(pid), 'the CLI waits, parked');
    const argv = readRecord(t.recordDir, pid).argv;
    assert.ok(
      argv.includes('--mcp-config') &&
        argv.some((a) => a === '--allowedTools=mcp__olp__get_weather,mcp__olp__get_time'),
      argv.join(' '),
    );
    messages.push(
      choice.message,
      ...calls.map((c, i) => ({
        role: 'tool' as const,
        tool_call_id: c.id,
        content: i === 0 ? 'sunny in Paris' : 'rain in Tokyo',
      })),
    );
    const second = await client.chat.completions.create({ model: 'sonnet', messages, tools: [WEATHER, TIME] });
    assert.equal(second.choices[0]!.message.content, 'echo: sunny in Paris | rain in Tokyo');
    assert.equal(second.choices[0]!.finish_reason, 'stop');
    assert.equal(spawns() - before, 1, 'one CLI for the whole round trip');
    assert.ok(second.usage!.completion_tokens === 5, `the continuation's own usage: ${JSON.stringify(second.usage)}`);
    await waitFor(() => modes().length >= 2);
    assert.deepEqual(modes().slice(-2), ['cold', 'parked']);
    await waitFor(() => !isAlive(pid));
  });

  it('streams the calls as deltas: id, type and name first, then the arguments in pieces', async () => {
    const messages: Msg[] = [asking(PARIS_TOKYO)];
    const stream = await client.chat.completions.create({
      model: 'sonnet',
      messages,
      tools: [WEATHER],
      stream: true,
      stream_options: { include_usage: true },
    });
    const deltas: OpenAI.ChatCompletionChunk.Choice.Delta.ToolCall[] = [];
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const ch of stream) {
      deltas.push(...(ch.choices[0]?.delta.tool_calls ?? []));
      finish = ch.choices[0]?.finish_reason ?? finish;
      usage = ch.usage ?? usage;
    }
    assert.equal(finish, 'tool_calls');
    assert.ok(usage && usage.completion_tokens === 7);
    const firsts = deltas.filter((d) => d.id);
    assert.deepEqual(
      firsts.map((d) => [d.index, d.type, d.function?.name]),
      [
        [0, 'function', 'get_weather'],
        [1, 'function', 'get_weather'],
      ],
    );
    const args = [0, 1].map((i) =>
      deltas
        .filter((d) => d.index === i)
        .map((d) => d.function?.arguments ?? '')
        .join(''),
    );
    assert.deepEqual(
      args.map((a) => JSON.parse(a)),
      [{ city: 'Paris' }, { city: 'Tokyo' }],
    );
    assert.ok(deltas.filter((d) => d.index === 0 && !d.id).length > 1, 'arguments arrive in several pieces');
    // The continuation streams too.
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: firsts.map((d, i) => ({
        id: d.id!,
        type: 'function',
        function: { name: 'get_weather', arguments: args[i]! },
      })),
    });
    messages.push(
      { role: 'tool', tool_call_id: firsts[0]!.id!, content: 'warm' },
      { role: 'tool', tool_call_id: firsts[1]!.id!, content: 'cold' },
    );
    const cont = await client.chat.completions.create({ model: 'sonnet', messages, tools: [WEATHER], stream: true });
    let text = '';
    for await (const ch of cont) text += ch.choices[0]?.delta.content ?? '';
    assert.equal(text, 'echo: warm | cold');
  });

  it('without a parked turn (another key, or gone) the results go into a fresh turn, tools still offered', async () => {
    const messages: Msg[] = [asking([{ name: 'get_weather', arguments: { city: 'Oslo' } }])];
    const first = await client.chat.completions.create({ model: 'sonnet', messages, tools: [WEATHER] });
    const call = first.choices[0]!.message.tool_calls![0]!;
    messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: 'snow in Oslo' });
    // Another key sends the same continuation: it never reaches the first key's CLI.
    const other = new OpenAI({
      baseURL: t.baseURL,
      apiKey: t.daemon.store.keys.add('other-tools', 'member').token,
      maxRetries: 0,
    });
    const before = spawns();
    const theirs = await other.chat.completions.create({ model: 'sonnet', messages, tools: [WEATHER] });
    assert.equal(spawns() - before, 1, 'a fresh CLI');
    const argv = readRecord(t.recordDir, recordedPids(t.recordDir).runs.at(-1)!).argv;
    assert.ok(argv.includes('--mcp-config'), 'the tools are still offered');
    assert.match(
      theirs.choices[0]!.message.content ?? '',
      /snow in Oslo/,
      'the rendered tool result reached the model',
    );
    // The owner's parked turn is still there for the owner.
    const mine = await client.chat.completions.create({ model: 'sonnet', messages, tools: [WEATHER] });
    assert.equal(mine.choices[0]!.message.content, 'echo: snow in Oslo');
  });

  it('a CLI that died while parked: the continuation runs fresh and still answers', async () => {
    const u = await startTestDaemon({ claudeEnv: { FAKE_CLAUDE_DIE_PARKED: '1' } });
    try {
      const c = new OpenAI({ baseURL: u.baseURL, apiKey: u.token, maxRetries: 0 });
      const messages: Msg[] = [asking([{ name: 'get_weather', arguments: { city: 'Rome' } }])];
      const first = await c.chat.completions.create({ model: 'sonnet', messages, tools: [WEATHER] });
      const call = first.choices[0]!.message.tool_calls![0]!;
      await waitFor(() => recordedPids(u.recordDir).runs.every((p) => !isAlive(p)));
      messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: 'hot in Rome' });
      const second = await c.chat.completions.create({ model: 'sonnet', messages, tools: [WEATHER] });
      assert.match(second.choices[0]!.message.content ?? '', /hot in Rome/);
      assert.equal(recordedPids(u.recordDir).runs.length, 2);
    } finally {
      await u.close();
    }
  });

  it("tool_choice 'none' offers no tools; a named choice offers only that function", async () => {
    const before = spawns();
    const plain = await client.chat.completions.create({
      model: 'sonnet',
      messages: [{ role: 'user', content: 'hello there' }],
      tools: [WEATHER, TIME],
      tool_choice: 'none',
    });
    assert.equal(plain.choices[0]!.finish_reason, 'stop');
    const argvNone = readRecord(t.recordDir, recordedPids(t.recordDir).runs.at(-1)!).argv;
    assert.ok(!argvNone.includes('--mcp-config'));
    await client.chat.completions.create({
      model: 'sonnet',
      messages: [{ role: 'user', content: 'time please' }],
      tools: [WEATHER, TIME],
      tool_choice: { type: 'function', function: { name: 'get_time' } },
    });
    const argvNamed = readRecord(t.recordDir, recordedPids(t.recordDir).runs.at(-1)!).argv;
    assert.ok(argvNamed.includes('--allowedTools=mcp__olp__get_time'), argvNamed.join(' '));
    assert.equal(spawns() - before, 2);
  });

  it('bad tools are a 400 naming the param', async () => {
    const bad = async (body: Record<string, unknown>, param: string) => {
      const res = await fetch(`${t.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: 'x' }], ...body }),
      });
      assert.equal(res.status, 400);
      const err = ((await res.json()) as { error: { param: string } }).error;
      assert.equal(err.param, param);
    };
    await bad({ tools: [{ type: 'function', function: { name: 'bad name!' } }] }, 'tools[0].function.name');
    await bad({ tools: [{ type: 'code_interpreter' }] }, 'tools[0].type');
    await bad({ tools: [WEATHER], tool_choice: { type: 'function', function: { name: 'nope' } } }, 'tool_choice');
    await bad(
      { tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'string' } } }] },
      'tools[0].function.parameters',
    );
    await bad({ tool_choice: 'required' }, 'tool_choice');
  });
});

describe('tool calling (codex)', () => {
  it('parallel calls come back as tool_calls (whole, no argument deltas); the results continue the same codex, with no new spawn', async () => {
    const messages: Msg[] = [asking(PARIS_TOKYO)];
    const before = spawns();
    const first = await client.chat.completions.create({ model: 'codex', messages, tools: [WEATHER, TIME] });
    const choice = first.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    const calls = choice.message.tool_calls!.filter((c) => c.type === 'function');
    assert.deepEqual(
      calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)]),
      PARIS_TOKYO.map((c) => [c.name, c.arguments]),
    );
    assert.ok(calls.every((c) => /^call_/.test(c.id)) && new Set(calls.map((c) => c.id)).size === 2);
    const run = readRecord(t.recordDir, recordedPids(t.recordDir).runs.at(-1)!);
    const argv = run.argv.join(' ');
    assert.match(argv, /mcp_servers\.olp\.url="http:\/\/127\.0\.0\.1:\d+\/mcp"/);
    assert.ok(!/\/mcp\/[A-Za-z0-9_-]{20,}/.test(argv), 'the bridge token is not in argv');
    assert.match(argv, /mcp_servers\.olp\.omit_tools_from=\["code_mode"\]/);
    messages.push(
      choice.message,
      { role: 'tool', tool_call_id: calls[0]!.id, content: 'sunny' },
      { role: 'tool', tool_call_id: calls[1]!.id, content: 'rainy' },
    );
    const cont = await client.chat.completions.create({
      model: 'codex',
      messages,
      tools: [WEATHER, TIME],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const ch of cont) {
      text += ch.choices[0]?.delta.content ?? '';
      usage = ch.usage ?? usage;
    }
    assert.equal(text, 'echo: sunny | rainy');
    assert.ok((usage?.prompt_tokens ?? 0) > 0, 'the continuation carries the turn’s usage');
    assert.equal(spawns() - before, 1, 'one codex for the whole round trip');
    assert.deepEqual(modes().slice(-2), ['cold', 'parked']);
  });

  it('streamed: each call arrives as one delta with id, name and its whole arguments', async () => {
    const stream = await client.chat.completions.create({
      model: 'codex',
      messages: [asking(PARIS_TOKYO)],
      tools: [WEATHER],
      stream: true,
    });
    const deltas: OpenAI.ChatCompletionChunk.Choice.Delta.ToolCall[] = [];
    let finish: string | null = null;
    for await (const ch of stream) {
      deltas.push(...(ch.choices[0]?.delta.tool_calls ?? []));
      finish = ch.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(finish, 'tool_calls');
    const byIndex = [0, 1].map((i) => deltas.filter((d) => d.index === i));
    assert.deepEqual(
      byIndex.map((ds) => ds[0]!.function?.name),
      ['get_weather', 'get_weather'],
    );
    assert.deepEqual(
      byIndex.map((ds) => JSON.parse(ds.map((d) => d.function?.arguments ?? '').join(''))),
      [{ city: 'Paris' }, { city: 'Tokyo' }],
    );
  });

  it('a codex that died while parked, or results from another key: a fresh codex turn with the tools still offered', async () => {
    const u = await startTestDaemon({ codexEnv: { FAKE_CODEX_DIE_PARKED: '1' } });
    try {
      const c = new OpenAI({ baseURL: u.baseURL, apiKey: u.token, maxRetries: 0 });
      const messages: Msg[] = [asking([{ name: 'get_weather', arguments: { city: 'Rome' } }])];
      const first = await c.chat.completions.create({ model: 'codex', messages, tools: [WEATHER] });
      const call = first.choices[0]!.message.tool_calls![0]!;
      await waitFor(() => recordedPids(u.recordDir).runs.every((p) => !isAlive(p)));
      messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: 'hot in Rome' });
      const second = await c.chat.completions.create({ model: 'codex', messages, tools: [WEATHER] });
      assert.match(second.choices[0]!.message.content ?? '', /hot in Rome/);
      const runs = recordedPids(u.recordDir).runs;
      assert.equal(runs.length, 2);
      assert.match(
        readRecord(u.recordDir, runs.at(-1)!).argv.join(' '),
        /mcp_servers\.olp\.url=/,
        'the tools are still offered',
      );
    } finally {
      await u.close();
    }
  });
});

describe('parked turns expire', () => {
  it('a turn parked past --tool-park-timeout is retired; its results go to a fresh turn', async () => {
    const u = await startTestDaemon({ config: { toolParkTimeout: 5 } });
    try {
      const c = new OpenAI({ baseURL: u.baseURL, apiKey: u.token, maxRetries: 0 });
      const messages: Msg[] = [asking([{ name: 'get_weather', arguments: { city: 'Lima' } }])];
      const first = await c.chat.completions.create({ model: 'sonnet', messages, tools: [WEATHER] });
      const parked = recordedPids(u.recordDir).runs.at(-1)!;
      assert.ok(isAlive(parked), 'parked');
      await waitFor(() => !isAlive(parked));
      await waitFor(() => leftoverWorkspaces(u.stateDir).length === 0); // its workspace goes with it
      const call = first.choices[0]!.message.tool_calls![0]!;
      messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: 'mild in Lima' });
      const second = await c.chat.completions.create({ model: 'sonnet', messages, tools: [WEATHER] });
      assert.match(second.choices[0]!.message.content ?? '', /mild in Lima/);
      assert.equal(recordedPids(u.recordDir).runs.length, 2);
    } finally {
      await u.close();
    }
  });
});

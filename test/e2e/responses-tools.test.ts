// Every tool type a Responses client sends gets a deliberate answer (codex 0.171's default tools
// included): functions, a namespace's functions (called back with their namespace), freeform
// custom tools (a custom_tool_call with its string input, answered by custom_tool_call_output),
// and hosted tools olp cannot run, left out and named in a header. Input items of another
// provider's making are left out, and fields olp does not serve are refused by name.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { readRecord, recordedPids } from '../support/procs.js';

let t: TestDaemon;
let client: OpenAI;
before(async () => {
  t = await startTestDaemon();
  client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
});
after(async () => t.close());

const PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n';

/** What codex 0.171 offers with a gpt-* model (captured): functions, a namespace, custom apply_patch, hosted tools. */
const CODEX_TOOLS = [
  {
    type: 'function',
    name: 'exec_command',
    description: 'Runs a command',
    strict: false,
    parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
  },
  {
    type: 'namespace',
    name: 'multi_agent_v1',
    description: 'Sub-agents.',
    tools: [
      {
        type: 'function',
        name: 'spawn_agent',
        strict: false,
        parameters: { type: 'object', properties: { task: { type: 'string' } }, required: ['task'] },
      },
    ],
  },
  {
    type: 'custom',
    name: 'apply_patch',
    description: 'Edits files. This is a FREEFORM tool.',
    format: { type: 'grammar', syntax: 'lark', definition: 'start: begin_patch hunk+ end_patch' },
  },
  { type: 'tool_search', execution: 'client', description: 'Searches deferred tools.', parameters: {} },
  { type: 'web_search', external_web_access: false },
] as unknown as OpenAI.Responses.Tool[];

/** A user turn that makes the fake model call these tools (their names as the model is offered them). */
const asking = (calls: { name: string; arguments: Record<string, unknown> }[]) =>
  `Do it [[fake-tools:${JSON.stringify(calls)}]]`;

const newestArgv = () => {
  const runs = recordedPids(t.recordDir).runs;
  return readRecord(t.recordDir, runs.at(-1)!).argv;
};

describe('Responses tool types', () => {
  it("codex's default tools: hosted ones left out and named, the rest offered to the model", async () => {
    const { data, response } = await client.responses
      .create({ model: 'sonnet', input: 'hello', tools: CODEX_TOOLS })
      .withResponse();
    assert.equal(data.status, 'completed');
    assert.equal(response.headers.get('x-olp-tools-dropped'), 'tool_search, web_search');
    const allowed = newestArgv().find((a) => a.startsWith('--allowedTools='));
    assert.equal(
      allowed,
      '--allowedTools=mcp__olp__exec_command,mcp__olp__multi_agent_v1__spawn_agent,mcp__olp__apply_patch',
    );
    // The tools are echoed back as they were sent.
    assert.deepEqual(
      data.tools.map((x) => x.type),
      ['function', 'namespace', 'custom', 'tool_search', 'web_search'],
    );
    assert.ok(t.logs.some((l) => l.event === 'tools_dropped'));
  });

  it('a custom tool: its call is a custom_tool_call with the string input; custom_tool_call_output continues the parked CLI', async () => {
    const ask = asking([{ name: 'apply_patch', arguments: { input: PATCH } }]);
    const stream = await client.responses.create({ model: 'sonnet', input: ask, tools: CODEX_TOOLS, stream: true });
    const types: string[] = [];
    let input = '';
    let done: OpenAI.Responses.Response | undefined;
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'response.custom_tool_call_input.delta') input += ev.delta;
      if (ev.type === 'response.completed') done = ev.response;
    }
    assert.equal(input, PATCH, 'the input streams as the string itself, not JSON');
    assert.ok(types.includes('response.custom_tool_call_input.done'));
    assert.ok(!types.includes('response.function_call_arguments.delta'));
    const call = done!.output.find((o) => o.type === 'custom_tool_call');
    assert.ok(call && call.type === 'custom_tool_call');
    assert.deepEqual([call.name, call.input, /^call_|^toolu_/.test(call.call_id)], ['apply_patch', PATCH, true]);
    const spawned = recordedPids(t.recordDir).runs.length;
    const next = await client.responses.create({
      model: 'sonnet',
      tools: CODEX_TOOLS,
      input: [
        { role: 'user', content: ask },
        { type: 'custom_tool_call', call_id: call.call_id, name: 'apply_patch', input: call.input },
        { type: 'custom_tool_call_output', call_id: call.call_id, output: 'Success. Updated: A hello.txt' },
      ] as OpenAI.Responses.ResponseInput,
    });
    assert.equal(next.output_text, 'echo: Success. Updated: A hello.txt');
    assert.equal(recordedPids(t.recordDir).runs.length, spawned, 'the parked CLI went on');
  });

  it("a namespace's function: a function_call naming its namespace, sent back the same way", async () => {
    const ask = asking([{ name: 'multi_agent_v1__spawn_agent', arguments: { task: 'look around' } }]);
    const r = await client.responses.create({ model: 'sonnet', input: ask, tools: CODEX_TOOLS });
    const call = r.output.find((o) => o.type === 'function_call');
    assert.ok(call && call.type === 'function_call');
    assert.deepEqual(
      [call.name, (call as { namespace?: string }).namespace, JSON.parse(call.arguments)],
      ['spawn_agent', 'multi_agent_v1', { task: 'look around' }],
    );
    const spawned = recordedPids(t.recordDir).runs.length;
    const next = await client.responses.create({
      model: 'sonnet',
      tools: CODEX_TOOLS,
      input: [
        { role: 'user', content: ask },
        { ...call, status: 'completed' },
        { type: 'function_call_output', call_id: call.call_id, output: 'agent a1 started' },
      ] as OpenAI.Responses.ResponseInput,
    });
    assert.equal(next.output_text, 'echo: agent a1 started');
    assert.equal(recordedPids(t.recordDir).runs.length, spawned, 'the parked CLI went on');
  });

  it('previous_response_id after a custom tool call: the stored call replays, the output continues it', async () => {
    const ask = asking([{ name: 'apply_patch', arguments: { input: PATCH } }]);
    const first = await client.responses.create({ model: 'sonnet', input: ask, tools: CODEX_TOOLS });
    const call = first.output.find((o) => o.type === 'custom_tool_call')!;
    assert.ok(call.type === 'custom_tool_call');
    const next = await client.responses.create({
      model: 'sonnet',
      tools: CODEX_TOOLS,
      previous_response_id: first.id,
      input: [{ type: 'custom_tool_call_output', call_id: call.call_id, output: 'patched' }],
    });
    assert.equal(next.output_text, 'echo: patched');
  });

  it('input items of another provider (reasoning, compaction) and of hosted tools are left out', async () => {
    const r = await client.responses.create({
      model: 'sonnet',
      input: [
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA…' },
        { type: 'compaction', encrypted_content: 'gAAAA…' },
        { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'x' } },
        { type: 'tool_search_call', call_id: 'c_ts', execution: 'client', arguments: { query: 'x' } },
        { type: 'tool_search_output', call_id: 'c_ts', execution: 'client', tools: [] },
        { type: 'local_shell_call', id: 'lsh_1', call_id: 'c_ls', action: { type: 'exec', command: ['ls'], env: {} } },
        { type: 'local_shell_call_output', id: 'c_ls', output: '{}' },
        { role: 'user', content: 'still here' },
      ] as unknown as OpenAI.Responses.ResponseInput,
    });
    assert.match(r.output_text, /You said: still here/);
  });

  const refused: [string, Record<string, unknown>, number, string][] = [
    ['conversation', { conversation: 'conv_123' }, 404, 'conversation'],
    ['conversation as an object', { conversation: { id: 'conv_123' } }, 404, 'conversation'],
    ['prompt', { prompt: { id: 'pmpt_1' } }, 400, 'prompt'],
    ['background', { background: true }, 400, 'background'],
    ['a hosted tool forced', { tools: CODEX_TOOLS, tool_choice: { type: 'web_search' } }, 400, 'tool_choice'],
  ];
  for (const [name, extra, status, param] of refused)
    it(`${name}: ${status} naming ${param}`, async () => {
      const res = await fetch(`${t.baseURL}/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sonnet', input: 'x', ...extra }),
      });
      const body = (await res.json()) as { error: { param: string; message: string } };
      assert.equal(res.status, status, JSON.stringify(body));
      assert.equal(body.error.param, param);
    });
});

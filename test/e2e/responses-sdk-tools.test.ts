// The OpenAI Agents SDK's `shell` and `apply_patch` tools: offered to the model as functions, their
// calls sent back as shell_call and apply_patch_call items (whole, with no delta events), their
// outputs (and the calls echoed back) continuing the parked CLI, and stored calls replayed by
// previous_response_id.
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

/** What the Agents SDK sends for shellTool() and applyPatchTool(). */
const SDK_TOOLS: OpenAI.Responses.Tool[] = [
  { type: 'shell', environment: { type: 'local' } },
  { type: 'apply_patch' },
] as OpenAI.Responses.Tool[];

const SHELL_ARGS = { commands: ['echo hi', 'ls missing'], timeout_ms: 5000 };
const PATCH_ARGS = { type: 'create_file', path: 'notes/hello.txt', diff: '+hello\n+world\n' };

/** A user turn that makes the fake model call these tools (their names as the model is offered them). */
const asking = (calls: { name: string; arguments: Record<string, unknown> }[]) =>
  `Do it [[fake-tools:${JSON.stringify(calls)}]]`;

const runs = () => recordedPids(t.recordDir).runs.length;

describe('Responses: the Agents SDK shell and apply_patch tools', () => {
  it('are offered to the model as the functions shell and apply_patch; nothing is dropped', async () => {
    const { data, response } = await client.responses
      .create({ model: 'sonnet', input: 'hello', tools: SDK_TOOLS })
      .withResponse();
    assert.equal(data.status, 'completed');
    assert.equal(response.headers.get('x-olp-tools-dropped'), null);
    const argv = readRecord(t.recordDir, recordedPids(t.recordDir).runs.at(-1)!).argv;
    assert.equal(
      argv.find((a) => a.startsWith('--allowedTools=')),
      '--allowedTools=mcp__olp__shell,mcp__olp__apply_patch',
    );
    assert.deepEqual(
      data.tools.map((x) => x.type),
      ['shell', 'apply_patch'],
    );
  });

  it('a hosted container shell is not offered: it runs at OpenAI, and is named in the header', async () => {
    const { response } = await client.responses
      .create({
        model: 'sonnet',
        input: 'hello',
        tools: [{ type: 'shell', environment: { type: 'container_auto' } }, { type: 'apply_patch' }],
      } as OpenAI.Responses.ResponseCreateParamsNonStreaming)
      .withResponse();
    assert.equal(response.headers.get('x-olp-tools-dropped'), 'shell');
    const argv = readRecord(t.recordDir, recordedPids(t.recordDir).runs.at(-1)!).argv;
    assert.equal(
      argv.find((a) => a.startsWith('--allowedTools=')),
      '--allowedTools=mcp__olp__apply_patch',
    );
  });

  it('a shell call is a shell_call item; its echo and shell_call_output continue the parked CLI', async () => {
    const ask = asking([{ name: 'shell', arguments: SHELL_ARGS }]);
    const r = await client.responses.create({ model: 'sonnet', input: ask, tools: SDK_TOOLS });
    assert.equal(r.status, 'completed');
    const call = r.output.find((o) => o.type === 'shell_call');
    assert.ok(call && call.type === 'shell_call', JSON.stringify(r.output));
    assert.ok(/^call_|^toolu_/.test(call.call_id));
    assert.equal(typeof call.id, 'string');
    assert.deepEqual(
      { action: call.action, environment: call.environment, status: call.status },
      {
        action: { commands: ['echo hi', 'ls missing'], timeout_ms: 5000, max_output_length: null },
        environment: null,
        status: 'completed',
      },
    );
    const spawned = runs();
    // As the Agents SDK sends them back: the call echoed, then one result per command.
    const next = await client.responses.create({
      model: 'sonnet',
      tools: SDK_TOOLS,
      input: [
        { role: 'user', content: ask },
        { type: 'shell_call', id: call.id, call_id: call.call_id, status: 'completed', action: call.action },
        {
          type: 'shell_call_output',
          call_id: call.call_id,
          output: [
            { stdout: 'hi\n', stderr: '', outcome: { type: 'exit', exit_code: 0 } },
            { stdout: '', stderr: 'ls: missing: No such file\n', outcome: { type: 'exit', exit_code: 2 } },
          ],
        },
      ] as OpenAI.Responses.ResponseInput,
    });
    assert.equal(
      next.output_text,
      'echo: Command 1 exited with code 0.\nstdout:\nhi\n\n\nCommand 2 exited with code 2.\nstderr:\nls: missing: No such file\n',
    );
    assert.equal(runs(), spawned, 'the parked CLI went on');
  });

  it('an apply_patch call is an apply_patch_call item; its echo and apply_patch_call_output continue the parked CLI', async () => {
    const ask = asking([{ name: 'apply_patch', arguments: PATCH_ARGS }]);
    const r = await client.responses.create({ model: 'sonnet', input: ask, tools: SDK_TOOLS });
    const call = r.output.find((o) => o.type === 'apply_patch_call');
    assert.ok(call && call.type === 'apply_patch_call', JSON.stringify(r.output));
    assert.deepEqual([call.operation, call.status], [PATCH_ARGS, 'completed']);
    const spawned = runs();
    const next = await client.responses.create({
      model: 'sonnet',
      tools: SDK_TOOLS,
      input: [
        { role: 'user', content: ask },
        {
          type: 'apply_patch_call',
          id: call.id,
          call_id: call.call_id,
          status: 'completed',
          operation: call.operation,
        },
        { type: 'apply_patch_call_output', call_id: call.call_id, status: 'failed', output: 'notes/ does not exist' },
      ] as OpenAI.Responses.ResponseInput,
    });
    assert.equal(next.output_text, 'echo: The patch failed: notes/ does not exist');
    assert.equal(runs(), spawned, 'the parked CLI went on');
  });

  it('on codex too: a shell call, answered, continues the parked CLI', async () => {
    const ask = asking([{ name: 'shell', arguments: { commands: ['date'] } }]);
    const r = await client.responses.create({ model: 'codex', input: ask, tools: SDK_TOOLS });
    const call = r.output.find((o) => o.type === 'shell_call');
    assert.ok(call && call.type === 'shell_call', JSON.stringify(r.output));
    assert.deepEqual(call.action.commands, ['date']);
    const spawned = runs();
    const next = await client.responses.create({
      model: 'codex',
      tools: SDK_TOOLS,
      input: [
        { role: 'user', content: ask },
        { type: 'shell_call', id: call.id, call_id: call.call_id, status: 'completed', action: call.action },
        {
          type: 'shell_call_output',
          call_id: call.call_id,
          output: [{ stdout: 'Fri\n', stderr: '', outcome: { type: 'exit', exit_code: 0 } }],
        },
      ] as OpenAI.Responses.ResponseInput,
    });
    assert.match(next.output_text, /Command 1 exited with code 0\.\nstdout:\nFri/);
    assert.equal(runs(), spawned, 'the parked CLI went on');
  });

  it('a delete_file call carries no diff', async () => {
    const ask = asking([{ name: 'apply_patch', arguments: { type: 'delete_file', path: 'old.txt' } }]);
    const r = await client.responses.create({ model: 'sonnet', input: ask, tools: SDK_TOOLS });
    const call = r.output.find((o) => o.type === 'apply_patch_call');
    assert.ok(call && call.type === 'apply_patch_call');
    assert.deepEqual(call.operation, { type: 'delete_file', path: 'old.txt' });
  });

  it('streamed: each call is announced and done whole, with no argument deltas', async () => {
    const ask = asking([
      { name: 'shell', arguments: { commands: ['pwd'] } },
      { name: 'apply_patch', arguments: PATCH_ARGS },
    ]);
    const stream = await client.responses.create({ model: 'sonnet', input: ask, tools: SDK_TOOLS, stream: true });
    const types: string[] = [];
    const added: string[] = [];
    const done: OpenAI.Responses.ResponseOutputItem[] = [];
    let final: OpenAI.Responses.Response | undefined;
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'response.output_item.added')
        added.push(`${ev.item.type}:${(ev.item as { status?: string }).status}`);
      if (ev.type === 'response.output_item.done') done.push(ev.item);
      if (ev.type === 'response.completed') final = ev.response;
    }
    assert.ok(!types.some((x) => x.startsWith('response.function_call_arguments')), types.join(' '));
    assert.ok(!types.some((x) => x.startsWith('response.custom_tool_call_input')), types.join(' '));
    assert.deepEqual(added, ['shell_call:in_progress', 'apply_patch_call:in_progress']);
    const shell = done.find((o) => o.type === 'shell_call');
    const patch = done.find((o) => o.type === 'apply_patch_call');
    assert.ok(shell?.type === 'shell_call' && patch?.type === 'apply_patch_call');
    assert.deepEqual(shell.action, { commands: ['pwd'], timeout_ms: null, max_output_length: null });
    assert.deepEqual(patch.operation, PATCH_ARGS);
    assert.deepEqual(
      final!.output.map((o) => o.type),
      ['shell_call', 'apply_patch_call'],
    );
    assert.deepEqual(final!.output[0], shell);
  });

  it('previous_response_id after a shell call: the stored call replays, the output continues it', async () => {
    const ask = asking([{ name: 'shell', arguments: { commands: ['uname'] } }]);
    const first = await client.responses.create({ model: 'sonnet', input: ask, tools: SDK_TOOLS });
    const call = first.output.find((o) => o.type === 'shell_call');
    assert.ok(call && call.type === 'shell_call');
    const spawned = runs();
    const next = await client.responses.create({
      model: 'sonnet',
      tools: SDK_TOOLS,
      previous_response_id: first.id,
      input: [
        {
          type: 'shell_call_output',
          call_id: call.call_id,
          output: [{ stdout: 'Linux\n', stderr: '', outcome: { type: 'timeout' } }],
        },
      ],
    });
    assert.equal(next.output_text, 'echo: Command 1 timed out.\nstdout:\nLinux\n');
    assert.equal(runs(), spawned, 'the parked CLI went on');
    const items = await client.responses.inputItems.list(next.id);
    assert.equal(items.data[0]?.type, 'shell_call_output');
  });

  it('previous_response_id after an apply_patch call: the stored call replays', async () => {
    const ask = asking([{ name: 'apply_patch', arguments: PATCH_ARGS }]);
    const first = await client.responses.create({ model: 'sonnet', input: ask, tools: SDK_TOOLS });
    const call = first.output.find((o) => o.type === 'apply_patch_call');
    assert.ok(call && call.type === 'apply_patch_call');
    const next = await client.responses.create({
      model: 'sonnet',
      tools: SDK_TOOLS,
      previous_response_id: first.id,
      input: [
        {
          type: 'apply_patch_call_output',
          call_id: call.call_id,
          status: 'completed',
          output: 'Created notes/hello.txt',
        },
      ],
    });
    assert.equal(next.output_text, 'echo: Created notes/hello.txt');
  });

  it('tool_choice {type: "shell"} forces the shell function; naming it without the tool is a 400', async () => {
    const ok = await client.responses.create({
      model: 'sonnet',
      input: 'hello',
      tools: SDK_TOOLS,
      tool_choice: { type: 'shell' },
    } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
    assert.equal(ok.status, 'completed');
    const res = await fetch(`${t.baseURL}/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'sonnet',
        input: 'x',
        tools: [{ type: 'apply_patch' }],
        tool_choice: { type: 'shell' },
      }),
    });
    const body = (await res.json()) as { error: { param: string } };
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(body.error.param, 'tool_choice');
  });

  it('a malformed shell_call_output is a 400 naming the field', async () => {
    const res = await fetch(`${t.baseURL}/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'sonnet',
        tools: SDK_TOOLS,
        input: [
          { role: 'user', content: 'x' },
          { type: 'shell_call', call_id: 'call_1', action: { commands: ['ls'] } },
          { type: 'shell_call_output', call_id: 'call_1', output: 'not a list' },
        ],
      }),
    });
    const body = (await res.json()) as { error: { param: string } };
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(body.error.param, 'input.2.output');
  });
});

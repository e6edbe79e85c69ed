// POST /v1/responses through the official openai client, on both fake CLIs: answers, streaming
// events, usage, previous_response_id riding the session pool, retrieve, input_items, delete,
// and stored responses private to their key.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { MAX_ITEM_REFERENCES } from '../../src/wire/index.js';
import { toFinalResponse, toResponse, type ResponseMeta } from '../../src/wire/index.js';
import { readRecord, recordedPids } from '../support/procs.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';

let t: TestDaemon;
let client: OpenAI;
before(async () => {
  t = await startTestDaemon();
  client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
});
after(async () => t.close());

/** stdin of the newest CLI run. */
function lastStdin(): { bytes: number; text: string; session: string | undefined } {
  const runs = recordedPids(t.recordDir)
    .runs.map((pid) => readRecord(t.recordDir, pid))
    .filter((r) => r.stdinBytes !== undefined);
  const newest = runs.sort((a, b) => a.pid - b.pid).at(-1)!;
  return { bytes: newest.stdinBytes!, text: newest.stdin ?? '', session: newest.session };
}

describe('the Responses API', () => {
  for (const model of ['sonnet', 'codex']) {
    it(`${model}: a completed Response with output_text and usage`, async () => {
      const r = await client.responses.create({ model, input: 'ping', instructions: 'Be brief.' });
      assert.match(r.id, /^resp_/);
      assert.equal(r.object, 'response');
      assert.equal(r.status, 'completed');
      assert.equal(r.model, model);
      assert.match(r.output_text, /You said: ping/);
      const item = r.output[0]!;
      assert.equal(item.type, 'message');
      assert.ok(item.type === 'message' && item.id.startsWith('msg_') && item.content[0]?.type === 'output_text');
      assert.ok(r.usage && r.usage.input_tokens > 0 && r.usage.output_tokens > 0);
      assert.equal(r.usage.total_tokens, r.usage.input_tokens + r.usage.output_tokens);
      assert.equal(r.instructions, 'Be brief.');
    });

    it(`${model}: streaming events in order, with increasing sequence numbers`, async () => {
      const stream = await client.responses.create({
        model,
        input: [{ role: 'user', content: [{ type: 'input_text', text: 'stream me a reply' }] }],
        stream: true,
      });
      const types: string[] = [];
      let seq = -1;
      let text = '';
      let completed: OpenAI.Responses.Response | undefined;
      for await (const ev of stream) {
        types.push(ev.type);
        assert.ok(ev.sequence_number > seq, 'sequence numbers increase');
        seq = ev.sequence_number;
        if (ev.type === 'response.output_text.delta') text += ev.delta;
        if (ev.type === 'response.completed') completed = ev.response;
      }
      assert.deepEqual(types.slice(0, 4), [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
      ]);
      assert.deepEqual(types.slice(-4), [
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]);
      assert.ok(types.includes('response.output_text.delta'));
      assert.equal(completed?.output_text ?? '', text);
      assert.ok(completed?.usage && completed.usage.output_tokens > 0);
    });
  }

  it('previous_response_id resumes the CLI session: only the new input is sent', async () => {
    const first = await client.responses.create({
      model: 'sonnet',
      input: 'My name is Ada. Remember it, this is a long first message.',
      instructions: 'You are terse.',
    });
    const firstStdin = lastStdin();
    let previous = first.id;
    const sizes: number[] = [];
    for (let i = 0; i < 4; i++) {
      const next = await client.responses.create({
        model: 'sonnet',
        input: `question ${i}`,
        previous_response_id: previous,
        instructions: 'You are terse.',
      });
      assert.equal(next.previous_response_id, previous);
      const s = lastStdin();
      assert.equal(s.session, 'resume', `turn ${i} resumed`);
      assert.doesNotMatch(s.text, /My name is Ada/, 'no history on the wire');
      sizes.push(s.bytes);
      previous = next.id;
    }
    assert.ok(
      sizes.every((b) => b < firstStdin.bytes + 20),
      JSON.stringify({ sizes, first: firstStdin.bytes }),
    );
  });

  it('retrieve, input_items and delete; a stored response is private to its key', async () => {
    const made = await client.responses.create({ model: 'sonnet', input: [{ role: 'user', content: 'keep this' }] });
    const got = await client.responses.retrieve(made.id);
    assert.equal(got.id, made.id);
    assert.equal(got.output_text, made.output_text);
    const items = await client.responses.inputItems.list(made.id);
    assert.equal(items.data.length, 1);
    const item = items.data[0]!;
    assert.ok(item.type === 'message' && item.role === 'user');

    const other = new OpenAI({
      baseURL: t.baseURL,
      apiKey: t.daemon.store.keys.add('other', 'member').token,
      maxRetries: 0,
    });
    await assert.rejects(other.responses.retrieve(made.id), (e: unknown) => e instanceof OpenAI.NotFoundError);
    await assert.rejects(
      other.responses.create({ model: 'sonnet', input: 'hi', previous_response_id: made.id }),
      (e: unknown) => e instanceof OpenAI.NotFoundError && e.param === 'previous_response_id',
    );

    await client.responses.delete(made.id);
    await assert.rejects(client.responses.retrieve(made.id), (e: unknown) => e instanceof OpenAI.NotFoundError);
  });

  it('store: false keeps nothing', async () => {
    const r = await client.responses.create({ model: 'sonnet', input: 'forget me', store: false });
    assert.equal((r as { store?: boolean }).store, false);
    await assert.rejects(client.responses.retrieve(r.id), (e: unknown) => e instanceof OpenAI.NotFoundError);
  });

  it('the ledger row says which endpoint, with the CLI tags', async () => {
    const { response } = await client.responses.create({ model: 'sonnet', input: 'ledger' }).withResponse();
    const id = response.headers.get('x-request-id')!;
    let row;
    for (let i = 0; i < 100 && !row; i++) {
      row = t.daemon.store.usage.get(id);
      if (!row) await new Promise((r) => setTimeout(r, 10));
    }
    assert.deepEqual([row?.endpoint, row?.api, row?.provider, row?.outcome], ['responses', 'cli', 'claude-cli', 'ok']);
  });

  it('bad input is a 400 naming the param', async () => {
    const bad = async (body: Record<string, unknown>, param: string | null) => {
      const res = await fetch(`${t.baseURL}/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const json = (await res.json()) as { error: { param: string | null; type: string } };
      assert.equal(res.status, 400, JSON.stringify(json));
      assert.equal(json.error.type, 'invalid_request_error');
      assert.equal(json.error.param, param, JSON.stringify(json));
    };
    await bad({ model: 'sonnet' }, 'input');
    await bad({ model: 'sonnet', input: [] }, 'input');
    await bad({ model: 'sonnet', input: [{ type: 'mystery_call', call_id: 'x', output: 'y' }] }, 'input.0.type');
    await bad({ model: 'sonnet', input: [{ type: 'item_reference', id: 'msg_nobody_made_this' }] }, 'input.0.id');
    await bad(
      { model: 'sonnet', input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] },
      'input.0.content.0',
    );
    await bad({ model: 'sonnet', input: [{ role: 'tool', content: 'x' }] }, 'input.0.role');
    await bad({ model: 'sonnet', input: 'x', tools: [{ name: 'no_type' }] }, 'tools.0.type');
    await bad({ model: 'sonnet', input: 'x', tools: [{ type: 'function', name: 'bad name' }] }, 'tools.0.name');
    await bad({ model: 'sonnet', input: 'x', prompt: { id: 'pmpt_1' } }, 'prompt');
    await bad({ model: 'sonnet', input: 'x', background: true }, 'background');
    await bad({ model: 'sonnet', input: 'x', temperature: 7 }, 'temperature');
    await bad({ model: 'sonnet', input: [{ role: 'system', content: 'only instructions' }] }, 'input');
  });

  it('item_reference: 2,000 references against 20 stored 0.7 MB responses are looked up by index, and bounded', async () => {
    // 23 s of a blocked event loop when each reference scanned the key's stored bodies (instr, then JSON.parse).
    const keyId = t.daemon.store.keys.list().find((k) => k.name === 'tester')!.id;
    const small: string[] = [];
    const big: string[] = [];
    for (let r = 0; r < 20; r++) {
      const output = Array.from({ length: 100 }, (_, i) => ({
        id: `msg_ref${r}x${i}${'q'.repeat(24)}`,
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: i === 0 ? 'x'.repeat(700_000) : `earlier ${r}.${i}`, annotations: [] }],
      }));
      big.push(output[0]!.id);
      small.push(...output.slice(1).map((o) => o.id));
      t.daemon.store.responses.save({
        id: `resp_ref${r}`,
        keyId,
        createdAt: Date.now() - 60_000 + r,
        previousResponseId: null,
        items: [],
        messages: [],
        outputText: '',
        body: { id: `resp_ref${r}`, output },
      });
    }
    const post = (input: unknown[]) =>
      fetch(`${t.baseURL}/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sonnet', input }),
      });
    const refs = (ids: string[], n: number) =>
      Array.from({ length: n }, (_, i) => ({ type: 'item_reference', id: ids[i % ids.length] }));
    const started = performance.now();
    const ok = await post([
      { role: 'user', content: 'first' },
      ...refs(small.slice(0, 1_000), 2_000),
      { role: 'user', content: 'go on' },
    ]);
    const ms = performance.now() - started;
    assert.equal(ok.status, 200, await ok.clone().text());
    assert.match(((await ok.json()) as { output_text: string }).output_text, /go on/);
    // Generous: the indexed look-up takes tens of milliseconds here.
    assert.ok(ms < 5_000, `2,000 references took ${Math.round(ms)} ms`);

    const over = await post([{ role: 'user', content: 'q' }, ...refs(small, MAX_ITEM_REFERENCES + 1)]);
    assert.equal(over.status, 400);
    const overBody = (await over.json()) as { error: { param: string; message: string } };
    assert.equal(overBody.error.param, 'input');
    assert.match(overBody.error.message, new RegExp(`at most ${MAX_ITEM_REFERENCES} items of type 'item_reference'`));
    // What references expand to is bounded like a body (10 MB here): 15 of the 0.7 MB items are past it.
    const expands = await post([{ role: 'user', content: 'q' }, ...refs(big, 15)]);
    assert.equal(expands.status, 400);
    assert.match(
      ((await expands.json()) as { error: { message: string } }).error.message,
      /add up to more than \d+ bytes/,
    );
  });

  it("olp's builders produce the SDK's types", () => {
    const meta: ResponseMeta = {
      id: 'resp_x',
      createdAt: 1,
      model: 'sonnet',
      instructions: null,
      previousResponseId: null,
      store: true,
      maxOutputTokens: null,
      metadata: {},
      format: { type: 'text' },
      temperature: null,
      topP: null,
      truncation: 'disabled',
      parallelToolCalls: true,
      tools: [],
      toolChoice: 'auto',
      reasoningEffort: null,
      reasoningSummary: null,
      clientTimeoutMs: 1000,
    };
    // Assignments, not `satisfies` on SDK-typed values: these fail to compile if a builder drifts.
    const inProgress: OpenAI.Responses.Response = toResponse(meta, 'in_progress', []);
    const done: OpenAI.Responses.Response = toFinalResponse(meta, 'msg_x', 'hi', {
      outcome: 'ok',
      error: null,
      stopReason: { type: 'end' },
      usage: null,
      estimated: false,
      model: 'sonnet',
      backend: 'claude',
      servedModel: 'sonnet',
      session: null,
      run: null,
      overage: false,
      queueMs: 0,
      firstTokenMs: 1,
      durationMs: 2,
      status: 200,
      headers: {},
    });
    const created: OpenAI.Responses.ResponseStreamEvent = {
      type: 'response.created',
      sequence_number: 0,
      response: inProgress,
    };
    assert.equal(created.response.status, 'in_progress');
    assert.equal(done.output_text, 'hi');
  });
});

describe('olp responses', () => {
  it('lists stored responses and prunes them by age', async () => {
    const { spawnSync } = await import('node:child_process');
    const { OLP_BIN } = await import('../support/paths.js');
    await client.responses.create({ model: 'sonnet', input: 'list me' });
    const olp = (...args: string[]) =>
      spawnSync(process.execPath, [OLP_BIN, 'responses', ...args, '--state-dir', t.stateDir], { encoding: 'utf8' });
    const list = olp('list');
    assert.equal(list.status, 0, list.stderr);
    assert.match(list.stdout, /^ID\s+KEY\s+MODEL/);
    assert.match(list.stdout, /resp_\w+\s+tester\s+sonnet\s+completed/);
    assert.match(olp('prune', '--older-than', '30').stdout, /deleted 0 stored/);
    assert.equal(olp('prune').status, 2, 'prune needs --older-than');
    assert.equal(olp('--help').status, 0);
  });

  it('function tools: calls as function_call items (streamed argument deltas), the results continue the parked CLI', async () => {
    const tools: OpenAI.Responses.FunctionTool[] = [
      {
        type: 'function',
        name: 'get_weather',
        description: 'weather',
        parameters: { type: 'object', properties: { city: { type: 'string' } } },
        strict: false,
      },
    ];
    const ask = `Weather? [[fake-tools:${JSON.stringify([
      { name: 'get_weather', arguments: { city: 'Paris' } },
      { name: 'get_weather', arguments: { city: 'Oslo' } },
    ])}]]`;
    const first = await client.responses.create({ model: 'sonnet', input: ask, tools });
    const calls = first.output.filter(
      (o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call',
    );
    assert.deepEqual(
      calls.map((c) => [c.name, JSON.parse(c.arguments)]),
      [
        ['get_weather', { city: 'Paris' }],
        ['get_weather', { city: 'Oslo' }],
      ],
    );
    assert.equal(
      first.output.some((o) => o.type === 'message'),
      false,
      'no empty message item',
    );
    assert.deepEqual(
      first.tools.map((x) => (x as { name: string }).name),
      ['get_weather'],
    );
    const second = await client.responses.create({
      model: 'sonnet',
      previous_response_id: first.id,
      input: calls.map((c, i) => ({
        type: 'function_call_output' as const,
        call_id: c.call_id,
        output: i === 0 ? 'sunny' : 'snow',
      })),
      tools,
    });
    assert.equal(second.output_text, 'echo: sunny | snow');
    // Streaming: output_item.added for each call, then argument deltas, then done events.
    const stream = await client.responses.create({ model: 'sonnet', input: ask, tools, stream: true });
    const types: string[] = [];
    let args = '';
    let done: OpenAI.Responses.Response | undefined;
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'response.function_call_arguments.delta' && ev.output_index === 0) args += ev.delta;
      if (ev.type === 'response.completed') done = ev.response;
    }
    assert.deepEqual(JSON.parse(args), { city: 'Paris' });
    assert.equal(types.filter((x) => x === 'response.output_item.added').length, 2);
    assert.ok(
      types.indexOf('response.function_call_arguments.delta') < types.indexOf('response.function_call_arguments.done'),
    );
    assert.equal(done!.output.filter((o) => o.type === 'function_call').length, 2);
    // Without previous_response_id: the calls and results travel in the input (as the AI SDK sends them).
    const streamedCalls = done!.output.filter(
      (o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call',
    );
    const third = await client.responses.create({
      model: 'sonnet',
      input: [
        { role: 'user', content: ask },
        ...streamedCalls.map((c) => ({
          type: 'function_call' as const,
          call_id: c.call_id,
          name: c.name,
          arguments: c.arguments,
        })),
        ...streamedCalls.map((c) => ({
          type: 'function_call_output' as const,
          call_id: c.call_id,
          output: `out-${c.call_id.slice(-4)}`,
        })),
      ],
      tools,
    });
    assert.match(third.output_text, /^echo: out-/);
  });
});

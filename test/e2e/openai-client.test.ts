import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { toChatCompletion, toChunk, toUsageChunk } from '../../src/wire/index.js';
import { readRecord, recordedPids, waitGone } from '../support/procs.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';

/** An SDK type without the one field whose typing differs from the wire (see below). */
type Sdk<T> = Omit<T, 'system_fingerprint'>;

let t: TestDaemon;
let client: OpenAI;
before(async () => {
  t = await startTestDaemon({ config: { idleTimeout: 2 } });
  client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
});
after(async () => {
  await t.close();
});

describe('the official openai client against a running olp', () => {
  it('non-streaming completion with usage', async () => {
    const res = await client.chat.completions.create({
      model: 'sonnet',
      messages: [{ role: 'user', content: 'ping' }],
    });
    assert.match(res.id, /^chatcmpl-/);
    assert.equal(res.object, 'chat.completion');
    assert.equal(res.model, 'sonnet');
    assert.equal(res.choices[0]?.message.content, 'Hello from fake claude. You said: ping');
    assert.equal(res.choices[0]?.finish_reason, 'stop');
    // fake usage: input ceil(bytes/4) + cache creation 3 + cache read 5
    assert.equal(res.usage?.prompt_tokens_details?.cached_tokens, 5);
    assert.equal(res.usage?.total_tokens, (res.usage?.prompt_tokens ?? 0) + (res.usage?.completion_tokens ?? 0));
    assert.match(res._request_id ?? '', /^req_/);
  });

  it('streaming deltas concatenate to the non-streaming text', async () => {
    const content = 'tell me something long enough to need several deltas';
    const whole = await client.chat.completions.create({ model: 'sonnet', messages: [{ role: 'user', content }] });
    const stream = await client.chat.completions.create({
      model: 'sonnet',
      messages: [{ role: 'user', content }],
      stream: true,
    });
    let text = '';
    let chunks = 0;
    let finish: string | null = null;
    let role: string | undefined;
    for await (const chunk of stream) {
      chunks++;
      role ??= chunk.choices[0]?.delta.role;
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      assert.equal('usage' in chunk, false, 'no usage field without include_usage');
    }
    assert.equal(text, whole.choices[0]?.message.content);
    assert.equal(role, 'assistant');
    assert.equal(finish, 'stop');
    assert.ok(chunks > 4);
  });

  it('include_usage: every chunk has usage null, then one usage-only chunk', async () => {
    const stream = await client.chat.completions.create({
      model: 'sonnet',
      messages: [{ role: 'user', content: 'usage please' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    const last = chunks.at(-1)!;
    assert.deepEqual(last.choices, []);
    assert.ok(last.usage && last.usage.prompt_tokens > 0 && last.usage.completion_tokens > 0);
    assert.equal(last.usage.prompt_tokens_details?.cached_tokens, 5);
    for (const c of chunks.slice(0, -1)) assert.equal(c.usage, null);
    assert.equal(new Set(chunks.map((c) => c.id)).size, 1, 'one id for all chunks');
  });

  it('401 is an AuthenticationError', async () => {
    const bad = new OpenAI({ baseURL: t.baseURL, apiKey: 'olpk_nope', maxRetries: 0 });
    await assert.rejects(
      bad.chat.completions.create({ model: 'sonnet', messages: [{ role: 'user', content: 'x' }] }),
      (err: unknown) => err instanceof OpenAI.AuthenticationError && err.code === 'invalid_api_key',
    );
  });

  it('400 is a BadRequestError naming the param', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: 'sonnet', messages: [{ role: 'user', content: 'x' }], temperature: 9 }),
      (err: unknown) =>
        err instanceof OpenAI.BadRequestError && err.param === 'temperature' && err.type === 'invalid_request_error',
    );
  });

  it('404 for an unknown model is a NotFoundError', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }),
      (err: unknown) => err instanceof OpenAI.NotFoundError && err.code === 'model_not_found',
    );
  });

  it('an in-band stream error becomes an APIError in the client', async () => {
    const stream = await client.chat.completions.create({
      model: 'sonnet',
      messages: [{ role: 'user', content: '[[fake:crash-mid-stream]] enough text for a few deltas' }],
      stream: true,
    });
    await assert.rejects(async () => {
      for await (const _ of stream) {
        // drain
      }
    }, OpenAI.APIError);
  });

  it("olp's own builders give the SDK's chat types", () => {
    // Assignments, not `satisfies` on SDK-typed values: these fail to compile if a builder drifts.
    // One field is left out: the API sends `system_fingerprint: null` (so does olp), which
    // openai-node types as `string | undefined`.
    const meta = { id: 'chatcmpl-x', created: 1, model: 'sonnet', includeUsage: true };
    const tokens = { promptTokens: 3, completionTokens: 2, totalTokens: 5 };
    const counts = { ...tokens, cachedTokens: 1, reasoningTokens: 0, raw: {} };
    const call = { id: 'call_1', type: 'function' as const, function: { name: 'f', arguments: '{}' } };
    const whole: Sdk<OpenAI.ChatCompletion> = toChatCompletion(meta, 'hi', 'stop', counts);
    const calls: Sdk<OpenAI.ChatCompletion> = toChatCompletion(meta, '', 'tool_calls', null, [call]);
    const first: Sdk<OpenAI.ChatCompletionChunk> = toChunk(meta, { role: 'assistant', content: '' });
    const started = { index: 0, id: 'call_1', type: 'function' as const, function: { name: 'f', arguments: '' } };
    const delta: Sdk<OpenAI.ChatCompletionChunk> = toChunk(meta, { tool_calls: [started] });
    const last: Sdk<OpenAI.ChatCompletionChunk> = toChunk(meta, {}, 'length');
    const counted: Sdk<OpenAI.ChatCompletionChunk> = toUsageChunk(meta, counts);
    assert.equal(whole.choices[0]?.message.content, 'hi');
    assert.equal(calls.choices[0]?.message.content, null);
    assert.deepEqual([first.usage, delta.usage, last.choices[0]?.finish_reason], [null, null, 'length']);
    assert.equal(counted.usage?.total_tokens, 5);
  });

  it('models.list works through the SDK', async () => {
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    assert.ok(ids.includes('sonnet'));
  });

  it('8 concurrent requests all succeed with their own answers', async () => {
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        client.chat.completions.create({ model: 'sonnet', messages: [{ role: 'user', content: `question ${i}` }] }),
      ),
    );
    answers.forEach((a, i) =>
      assert.equal(a.choices[0]?.message.content, `Hello from fake claude. You said: question ${i}`),
    );
  });

  it('a user message that starts with -- is answered as text, never read as a flag', async () => {
    const res = await client.chat.completions.create({
      model: 'sonnet',
      messages: [{ role: 'user', content: '--help --dangerously-skip-permissions' }],
    });
    assert.equal(
      res.choices[0]?.message.content,
      'Hello from fake claude. You said: --help --dangerously-skip-permissions',
    );
    const pids = recordedPids(t.recordDir).runs;
    for (const pid of pids)
      assert.ok(!readRecord(t.recordDir, pid).argv.some((a) => a.includes('dangerously')), 'prompt text never in argv');
  });

  it('aborting a stream mid-way kills the CLI; the next request succeeds', async () => {
    const before = new Set(recordedPids(t.recordDir).runs);
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      {
        model: 'sonnet',
        messages: [
          { role: 'system', content: '[[fake:slow]]' },
          { role: 'user', content: 'a slow and rather long answer please, with many many deltas in it' },
        ],
        stream: true,
      },
      { signal: controller.signal },
    );
    let got = 0;
    try {
      for await (const _ of stream) {
        if (++got === 2) controller.abort();
      }
    } catch (err) {
      assert.ok(err instanceof OpenAI.APIUserAbortError, String(err));
    }
    assert.equal(got, 2, 'the stream stopped at the abort');
    const mine = recordedPids(t.recordDir).runs.filter((p) => !before.has(p));
    assert.equal(mine.length, 1);
    assert.deepEqual(await waitGone(mine), [], 'the aborted CLI process is gone');
    const next = await client.chat.completions.create({
      model: 'sonnet',
      messages: [{ role: 'user', content: 'after abort' }],
    });
    assert.match(next.choices[0]?.message.content ?? '', /after abort/);
    const aborted = t.logs.find((l) => l.outcome === 'client_aborted');
    assert.ok(aborted, 'the aborted request is logged as client_aborted');
  });

  it('a timed-out request leaves no process behind', async () => {
    const before = new Set(recordedPids(t.recordDir).runs);
    await assert.rejects(
      client.chat.completions.create({ model: 'sonnet', messages: [{ role: 'user', content: '[[fake:hang]]' }] }),
      (err: unknown) => err instanceof OpenAI.APIError && err.status === 504,
    );
    const mine = recordedPids(t.recordDir).runs.filter((p) => !before.has(p));
    assert.equal(mine.length, 1);
    assert.deepEqual(await waitGone(mine), []);
  });
});

// A request's effort reaches the CLI (claude's --effort and MAX_THINKING_TOKENS, codex's
// model_reasoning_effort), a live CLI started with another effort is not reused, and the CLI's
// thinking comes back in each format's own shape: chat's reasoning_content, Responses' reasoning
// items, Messages' thinking blocks. The fakes think as the real CLIs do when given an effort.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { isAlive, readRecord, recordedPids } from '../support/procs.js';
import { waitFor } from '../support/wait.js';

type Msg = OpenAI.ChatCompletionMessageParam;
type Record = ReturnType<typeof readRecord> & { effort?: string; maxThinkingTokens?: string; turn?: number };

let t: TestDaemon;
let client: OpenAI;
before(async () => {
  t = await startTestDaemon({ config: { workers: true, prestart: false } });
  client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
});
after(async () => t?.close());

const record = (pid: number) => readRecord(t.recordDir, pid) as Record;
const reasoningOf = (r: OpenAI.ChatCompletion) =>
  (r.choices[0]!.message as { reasoning_content?: string }).reasoning_content;

describe('effort and thinking, end to end on the fake CLIs', () => {
  it("claude: chat's reasoning_effort is --effort; a worker started with another effort is not reused", async () => {
    const messages: Msg[] = [{ role: 'system', content: '[[fake:report-history]]' }];
    const say = async (text: string, effort?: OpenAI.ReasoningEffort) => {
      messages.push({ role: 'user', content: text });
      const r = await client.chat.completions.create({
        model: 'sonnet',
        messages,
        ...(effort ? { reasoning_effort: effort } : {}),
      });
      messages.push({ role: 'assistant', content: r.choices[0]!.message.content! });
      return { r, pid: (JSON.parse(r.choices[0]!.message.content!) as { pid: number }).pid };
    };
    const one = await say('one', 'high');
    assert.deepEqual(record(one.pid).argv.slice(record(one.pid).argv.indexOf('--effort'))[1], 'high');
    assert.match(reasoningOf(one.r) ?? '', /^Thinking \(effort high\) about:/);
    const two = await say('two', 'high');
    assert.equal(two.pid, one.pid, 'the same effort: the warm worker');
    const three = await say('three', 'low');
    assert.notEqual(three.pid, one.pid, 'another effort: another process');
    assert.equal(record(three.pid).effort, 'low');
    assert.equal(record(three.pid).session, 'resume');
    await waitFor(() => !isAlive(one.pid));
    const four = await say('four', 'low');
    assert.equal(four.pid, three.pid);
    // No reasoning_effort: the CLI's default, and no thinking shown (a worker of the default effort).
    const five = await say('five');
    assert.notEqual(five.pid, three.pid);
    assert.equal(record(five.pid).effort, undefined);
    assert.equal(reasoningOf(five.r), undefined);
    // none: claude's least effort with thinking off, and nothing shown.
    const six = await say('six', 'none');
    assert.deepEqual([record(six.pid).effort, record(six.pid).maxThinkingTokens], ['low', '0']);
    assert.equal(reasoningOf(six.r), undefined);
  });

  it('Messages: output_config.effort and thinking, as Claude Code sends them; thinking off shows none', async () => {
    const ask = async (extra: { [k: string]: unknown }, stream = false) => {
      const res = await fetch(`${t.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': t.token, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'claude-sonnet-5',
          max_tokens: 64000,
          stream,
          messages: [{ role: 'user', content: `hello ${JSON.stringify(extra)}` }],
          ...extra,
        }),
      });
      assert.equal(res.status, 200);
      return res;
    };
    const before = new Set(recordedPids(t.recordDir).runs);
    const main = await ask({ thinking: { type: 'adaptive' }, output_config: { effort: 'medium' } }, true);
    const body = await main.text();
    const thought = [...body.matchAll(/"thinking_delta","thinking":("(?:[^"\\]|\\.)*")/g)]
      .map((m) => JSON.parse(m[1]!) as string)
      .join('');
    assert.match(thought, /^Thinking \(effort medium\) about:/);
    assert.match(body, /"signature_delta","signature":"sig-fake"/);
    const title = (await (await ask({ thinking: { type: 'disabled' } })).json()) as { content: { type: string }[] };
    assert.deepEqual(
      title.content.map((c) => c.type),
      ['text'],
    );
    const runs = recordedPids(t.recordDir)
      .runs.filter((p) => !before.has(p))
      .map(record);
    assert.deepEqual(
      runs.map((r) => [r.effort, r.maxThinkingTokens]),
      [
        ['medium', undefined],
        [undefined, '0'],
      ],
    );
  });

  it("codex: Responses' reasoning.effort is model_reasoning_effort; a summary asked for brings reasoning items", async () => {
    const before = new Set(recordedPids(t.recordDir).runs);
    const shown = await client.responses.create({
      model: 'codex',
      input: 'think it over',
      reasoning: { effort: 'high', summary: 'auto' },
      store: false,
    });
    assert.deepEqual(
      shown.output.map((o) => o.type),
      ['reasoning', 'message'],
    );
    const item = shown.output[0] as OpenAI.Responses.ResponseReasoningItem;
    assert.deepEqual(item.summary, [{ type: 'summary_text', text: '**Answering** (effort high)' }]);
    assert.deepEqual(shown.reasoning, { effort: 'high', summary: 'auto' });
    const hidden = await client.responses.create({ model: 'codex', input: 'quietly', reasoning: { effort: 'low' } });
    assert.deepEqual(
      hidden.output.map((o) => o.type),
      ['message'],
    );
    const stream = await client.responses.create({
      model: 'codex',
      input: 'stream it',
      reasoning: { effort: 'minimal', summary: 'detailed' },
      stream: true,
    });
    const types: string[] = [];
    let summary = '';
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === 'response.reasoning_summary_text.delta') summary += e.delta;
    }
    assert.equal(summary, '**Answering** (effort minimal)');
    assert.deepEqual(types.slice(2, 5), [
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
    ]);
    const runs = recordedPids(t.recordDir)
      .runs.filter((p) => !before.has(p))
      .map(record)
      .filter((r) => r.argv[0] === 'exec');
    assert.deepEqual(
      runs.map((r) => r.effort),
      ['high', 'low', 'minimal'],
    );
  });

  it('codex: the app-server is resumed with the effort, streams its reasoning, and serves only that effort', async () => {
    const messages: Msg[] = [{ role: 'system', content: 'Be brief.' }];
    const say = async (text: string, effort: OpenAI.ReasoningEffort) => {
      messages.push({ role: 'user', content: text });
      const r = await client.chat.completions.create({ model: 'codex', messages, reasoning_effort: effort });
      messages.push({ role: 'assistant', content: r.choices[0]!.message.content! });
      return r;
    };
    const runs = () =>
      t.logs.filter((l) => l.event === 'request' && l.path === '/v1/chat/completions' && l.model === 'codex');
    const one = await say('first', 'xhigh');
    assert.equal(reasoningOf(one), '**Answering** (effort xhigh)');
    // The app-server resumed with the effort is up (idle in /health) before the next turn.
    const up = async () => {
      const health = (await (
        await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } })
      ).json()) as { workers: { live: { pid: number; state: string }[] } };
      return health.workers.live.some(
        (w) => w.state === 'idle' && record(w.pid).argv[0] === 'app-server' && record(w.pid).effort === 'xhigh',
      );
    };
    await waitFor(up, undefined, 'the app-server worker up');
    const two = await say('second', 'xhigh');
    assert.equal(reasoningOf(two), '**Answering** (effort xhigh)', 'the summary streamed by the app-server');
    const three = await say('third', 'medium');
    assert.equal(reasoningOf(three), '**Answering** (effort medium)');
    await waitFor(() => runs().length >= 3);
    assert.deepEqual(
      runs()
        .slice(-3)
        .map((l) => l.run),
      ['cold', 'warm', 'resumed'],
    );
  });
});

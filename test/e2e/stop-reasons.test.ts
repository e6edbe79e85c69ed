// Why an answer ended, in each wire format's own words: stop sequences served (the reply ends
// before the first, the CLI of a streamed reply is stopped, Messages names the sequence), and the
// stop reasons chat has no word for (the context window filling up, a refusal) reach Anthropic
// clients as they are, chat as `length` / `content_filter`, Responses as `incomplete_details`.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { isAlive, recordedPids, waitGone } from '../support/procs.js';
import { waitFor } from '../support/wait.js';

let t: TestDaemon;
let openai: OpenAI;
let anthropic: Anthropic;

before(async () => {
  t = await startTestDaemon();
  openai = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: t.url, apiKey: t.token, maxRetries: 0 });
});
after(async () => {
  await t?.close();
});

const SAID = 'alpha STOPHERE beta';
/** A message long enough that a CLI slowed to 40 ms a delta is still answering at the sequence. */
const LONG = `${SAID} ${'and then a great deal more '.repeat(6)}`;

/** A streamed chat completion's text, cut at `STOPHERE`. */
async function streamCut(client: OpenAI, messages: OpenAI.ChatCompletionMessageParam[]): Promise<string> {
  const r = await client.chat.completions.create({ model: 'sonnet', messages, stop: ['STOPHERE'], stream: true });
  let text = '';
  for await (const chunk of r) text += chunk.choices[0]?.delta.content ?? '';
  return text;
}

/** A daemon whose fake claude says its reply slowly, with live workers when asked. */
function slowDaemon(workers = false): Promise<TestDaemon> {
  const config = workers ? { workers: true, prestart: false } : {};
  return startTestDaemon({ config, claudeEnv: { FAKE_CLAUDE_DELAY_MS: '40' } });
}
const BEFORE = 'Hello from fake claude. You said: alpha ';

describe('stop sequences', () => {
  it('Messages: the reply ends before the sequence, and says which one (body and stream)', async () => {
    const body = {
      model: 'claude-sonnet-4-5',
      max_tokens: 256,
      stop_sequences: ['NEVER', 'STOPHERE'],
      messages: [{ role: 'user' as const, content: SAID }],
    };
    const msg = await anthropic.messages.create(body);
    assert.deepEqual(msg.content, [{ type: 'text', text: BEFORE }]);
    assert.equal(msg.stop_reason, 'stop_sequence');
    assert.equal(msg.stop_sequence, 'STOPHERE');

    const stream = anthropic.messages.stream(body);
    const deltas: unknown[] = [];
    stream.on('streamEvent', (e) => {
      if (e.type === 'message_delta') deltas.push(e.delta);
    });
    const final = await stream.finalMessage();
    assert.equal(final.content.map((b) => (b.type === 'text' ? b.text : '')).join(''), BEFORE);
    assert.deepEqual(deltas, [{ stop_reason: 'stop_sequence', stop_sequence: 'STOPHERE' }]);
  });

  it('chat: `stop` as a string or a list ends the reply before it, finish_reason stop (body and stream)', async () => {
    const messages = [{ role: 'user' as const, content: SAID }];
    const one = await openai.chat.completions.create({ model: 'sonnet', messages, stop: 'STOPHERE' });
    assert.equal(one.choices[0]!.message.content, BEFORE);
    assert.equal(one.choices[0]!.finish_reason, 'stop');
    // A sequence split across the CLI's deltas is found; the earliest of several wins.
    const many = await openai.chat.completions.create({
      model: 'sonnet',
      messages,
      stop: ['beta', 'HERE', 'STOP'],
      stream: true,
    });
    let text = '';
    const reasons: (string | null)[] = [];
    for await (const chunk of many) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.choices[0]?.finish_reason) reasons.push(chunk.choices[0].finish_reason);
    }
    assert.equal(text, BEFORE);
    assert.deepEqual(reasons, ['stop']);
  });

  it('a sequence that never comes changes nothing; text that only starts one is sent in the end', async () => {
    const r = await openai.chat.completions.create({
      model: 'sonnet',
      messages: [{ role: 'user', content: 'ends with STOPHER' }],
      stop: ['STOPHERE'],
      stream: true,
    });
    let text = '';
    for await (const chunk of r) text += chunk.choices[0]?.delta.content ?? '';
    assert.equal(text, 'Hello from fake claude. You said: ends with STOPHER');
  });

  it('a streamed reply cut at its sequence stops the CLI mid-turn; its row charges what was sent', async () => {
    const slow = await slowDaemon();
    try {
      const client = new OpenAI({ baseURL: slow.baseURL, apiKey: slow.token, maxRetries: 0 });
      assert.equal(await streamCut(client, [{ role: 'user', content: LONG }]), BEFORE);
      const [pid] = recordedPids(slow.recordDir).runs;
      assert.deepEqual(await waitGone([pid!]), [], 'the CLI is stopped');
      // The fake CLI notes when it printed its result: it never got that far.
      assert.equal(existsSync(join(slow.recordDir, `${pid}.result-at`)), false, 'stopped before its result');
      const all = () => [...slow.daemon.store.usage.export({ scope: { all: true } })];
      await waitFor(() => all().length === 1, undefined, 'the usage row');
      const row = all()[0]!;
      assert.equal(row.http_status, 200);
      assert.equal(row.outcome, 'ok');
      assert.equal(row.usage.estimated, true);
      assert.ok(
        row.usage.completion_tokens > 0 && row.usage.completion_tokens < 20,
        String(row.usage.completion_tokens),
      );
    } finally {
      await slow.close();
    }
  });
});

describe('a stop sequence before the model calls the tools', () => {
  const WEATHER: OpenAI.ChatCompletionTool = {
    type: 'function',
    function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
  };
  const content = `[[fake-say-first:alpha STOPHERE beta]] [[fake-tools:[{"name":"get_weather","arguments":{"city":"Paris"}}]]]`;
  for (const stream of [false, true]) {
    it(`${stream ? 'streamed' : 'in one body'}: the reply ends there, without the calls, and no turn waits on them`, async () => {
      const before = recordedPids(t.recordDir).runs.length;
      const body = {
        model: 'sonnet',
        messages: [{ role: 'user' as const, content }],
        tools: [WEATHER],
        stop: 'STOPHERE',
      };
      let text: string;
      if (stream) {
        text = '';
        const r = await openai.chat.completions.create({ ...body, stream: true });
        for await (const chunk of r) {
          assert.equal(chunk.choices[0]?.delta.tool_calls, undefined);
          if (chunk.choices[0]?.finish_reason) assert.equal(chunk.choices[0].finish_reason, 'stop');
          text += chunk.choices[0]?.delta.content ?? '';
        }
      } else {
        const r = await openai.chat.completions.create(body);
        assert.equal(r.choices[0]!.finish_reason, 'stop');
        assert.equal(r.choices[0]!.message.tool_calls, undefined);
        text = r.choices[0]!.message.content ?? '';
      }
      assert.equal(text, 'alpha ');
      const pids = recordedPids(t.recordDir).runs.slice(before);
      assert.equal(pids.length, 1);
      // Not parked until --tool-park-timeout: the calls can never be answered, so the CLI goes now.
      assert.deepEqual(await waitGone(pids), [], 'the CLI is stopped');
    });
  }
});

describe('a stop sequence on a live CLI', () => {
  it("interrupts the worker's turn instead of ending it: its usage stands, and it answers the next turn warm", async () => {
    const w = await slowDaemon(true);
    try {
      const client = new OpenAI({ baseURL: w.baseURL, apiKey: w.token, maxRetries: 0 });
      const first = [{ role: 'user' as const, content: 'hello there' }];
      const a = await client.chat.completions.create({ model: 'sonnet', messages: first });
      const said = a.choices[0]!.message.content!;
      const second = [
        ...first,
        { role: 'assistant' as const, content: said },
        { role: 'user' as const, content: LONG },
      ];
      const text = await streamCut(client, second);
      assert.equal(text, BEFORE);
      const runs = () => w.logs.filter((l) => l.event === 'request').map((l) => String(l.run));
      await waitFor(() => runs().length === 2, undefined, 'two request lines');
      assert.deepEqual(runs(), ['cold', 'warm']);
      const [pid] = recordedPids(w.recordDir).runs;
      assert.equal(recordedPids(w.recordDir).runs.length, 1, 'one CLI in all');
      assert.ok(isAlive(pid!), 'the worker lives on');
      const all = () => [...w.daemon.store.usage.export({ scope: { all: true } })];
      await waitFor(() => all().length === 2, undefined, 'the usage rows');
      assert.equal(all()[1]!.usage.estimated, false, "the interrupted turn's own usage");
      const third = [
        ...second,
        { role: 'assistant' as const, content: text },
        { role: 'user' as const, content: 'go on' },
      ];
      const c = await client.chat.completions.create({ model: 'sonnet', messages: third });
      assert.match(c.choices[0]!.message.content!, /go on/);
      await waitFor(() => runs().length === 3, undefined, 'three request lines');
      assert.equal(runs()[2], 'warm');
      assert.equal(recordedPids(w.recordDir).runs.length, 1, 'still one CLI');
    } finally {
      await w.close();
    }
  });
});

describe('a stop sequence on the first turn of a conversation live workers serve', () => {
  it("interrupts the cold CLI's turn, which is kept as the slot's worker for the next turn", async () => {
    const w = await slowDaemon(true);
    try {
      const client = new OpenAI({ baseURL: w.baseURL, apiKey: w.token, maxRetries: 0 });
      const first = [{ role: 'user' as const, content: LONG }];
      const text = await streamCut(client, first);
      assert.equal(text, BEFORE);
      const next = [
        ...first,
        { role: 'assistant' as const, content: text },
        { role: 'user' as const, content: 'go on' },
      ];
      const c = await client.chat.completions.create({ model: 'sonnet', messages: next });
      assert.match(c.choices[0]!.message.content!, /go on/);
      const runs = () => w.logs.filter((l) => l.event === 'request').map((l) => String(l.run));
      await waitFor(() => runs().length === 2, undefined, 'two request lines');
      assert.deepEqual(runs(), ['cold', 'warm']);
      assert.equal(recordedPids(w.recordDir).runs.length, 1, 'one CLI in all');
    } finally {
      await w.close();
    }
  });
});

describe('stop reasons chat has no word for', () => {
  const cases = [
    {
      scenario: 'context-window',
      anthropic: 'model_context_window_exceeded',
      chat: 'length',
      responses: 'max_output_tokens',
    },
    { scenario: 'refusal', anthropic: 'refusal', chat: 'content_filter', responses: 'content_filter' },
    { scenario: 'max-tokens', anthropic: 'max_tokens', chat: 'length', responses: 'max_output_tokens' },
  ] as const;
  for (const c of cases) {
    it(`${c.scenario}: Messages ${c.anthropic}, chat ${c.chat}, Responses incomplete (${c.responses})`, async () => {
      const content = `[[fake:${c.scenario}]] hello`;
      const msg = await anthropic.messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 256,
        messages: [{ role: 'user', content }],
      });
      assert.equal(msg.stop_reason, c.anthropic);
      assert.equal(msg.stop_sequence, null);
      const chat = await openai.chat.completions.create({ model: 'sonnet', messages: [{ role: 'user', content }] });
      assert.equal(chat.choices[0]!.finish_reason, c.chat);
      const resp = await openai.responses.create({ model: 'sonnet', input: content });
      assert.equal(resp.status, 'incomplete');
      assert.deepEqual(resp.incomplete_details, { reason: c.responses });
      // Streamed, Messages says it in its message_delta.
      const stream = anthropic.messages.stream({
        model: 'claude-sonnet-4-5',
        max_tokens: 256,
        messages: [{ role: 'user', content }],
      });
      assert.equal((await stream.finalMessage()).stop_reason, c.anthropic);
    });
  }
});

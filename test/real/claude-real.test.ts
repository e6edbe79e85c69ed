// The real `claude` binary (pinned devDependency) through olp, against a loopback stand-in for the
// Anthropic Messages API: proves flags, stdin prompt, event parsing, usage mapping and EPIPE
// handling on the binary users run. No login, nothing leaves the machine.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { claudeStandInEnv, startAnthropicStandIn, type StandIn } from '../support/anthropic-stand-in.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { assertNoClaudeTmp, assertUnderstood, claudeTmp } from '../support/real.js';
import { REAL_CLAUDE, REAL_CLAUDE_VERSION } from '../support/paths.js';

let api: StandIn;
let t: TestDaemon;
let client: OpenAI;

const tmpBefore = claudeTmp();
before(async () => {
  assert.ok(existsSync(REAL_CLAUDE), `the real claude CLI is missing at ${REAL_CLAUDE}: run npm ci`);
  api = await startAnthropicStandIn();
  t = await startTestDaemon({
    config: { claudeBin: REAL_CLAUDE, timeout: 60, idleTimeout: 30 },
    // The operator's opt-in path for API-key users and stand-ins.
    claudeEnv: claudeStandInEnv(api.url),
  });
  client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
});
after(async () => {
  const logs = t?.logs ?? [];
  await t?.close();
  await api?.close();
  assertUnderstood(logs);
  assertNoClaudeTmp(tmpBefore);
});

describe(`real claude ${REAL_CLAUDE_VERSION} through olp`, () => {
  it('answers a non-streaming request; the system prompt and the stdin prompt arrive; no tools are offered', async () => {
    api.mode = 'text';
    const before = api.requests.length;
    const res = await client.chat.completions.create({
      model: 'sonnet',
      messages: [
        { role: 'system', content: 'You are terse. SYSTEM-MARK-1' },
        { role: 'user', content: 'what is two plus two' },
      ],
    });
    assert.equal(res.choices[0]?.message.content, 'stand-in heard: what is two plus two');
    const sent = api.requests.slice(before).find((r) => r.path === '/v1/messages' && r.body.stream);
    assert.ok(sent, 'claude called the Messages API');
    assert.match(JSON.stringify(sent.body.system), /SYSTEM-MARK-1/);
    assert.deepEqual(sent.body.tools ?? [], [], 'no built-in tools in chat mode');
    // The stand-in reports input 21 + cache creation 7 + cache read 11, output 9.
    assert.deepEqual(
      [
        res.usage?.prompt_tokens,
        res.usage?.completion_tokens,
        res.usage?.prompt_tokens_details?.cached_tokens,
        res.usage?.total_tokens,
      ],
      [39, 9, 11, 48],
    );
  });

  it('streams deltas as they arrive and sends the usage chunk', async () => {
    const stream = await client.chat.completions.create({
      model: 'sonnet',
      messages: [{ role: 'user', content: 'stream this' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let deltas = 0;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const c of stream) {
      if (c.choices[0]?.delta.content) deltas++;
      text += c.choices[0]?.delta.content ?? '';
      if (c.usage) usage = c.usage;
    }
    assert.equal(text, 'stand-in heard: stream this');
    assert.ok(deltas > 1, 'more than one delta');
    assert.equal(usage?.prompt_tokens, 39);
  });

  it('a prompt that starts with -- is text to the real CLI too', async () => {
    const res = await client.chat.completions.create({
      model: 'sonnet',
      messages: [{ role: 'user', content: '--help --version' }],
    });
    assert.equal(res.choices[0]?.message.content, 'stand-in heard: --help --version');
  });

  it('multi-turn history is rendered into one prompt', async () => {
    const res = await client.chat.completions.create({
      model: 'sonnet',
      messages: [
        { role: 'user', content: 'my name is Ada' },
        { role: 'assistant', content: 'Hello Ada' },
        { role: 'user', content: 'what is my name' },
      ],
    });
    const last = api.requests.filter((r) => r.body.stream).at(-1)!;
    const sentText = JSON.stringify(last.body.messages);
    assert.match(sentText, /my name is Ada/);
    assert.match(sentText, /Hello Ada/);
    assert.ok(res.choices[0]?.message.content);
  });

  it('resumes its own session on the next turn: only the new text is sent, the CLI supplies the history', async () => {
    const first = await client.chat.completions.create({
      model: 'sonnet',
      messages: [{ role: 'user', content: 'remember the word BANANA' }],
    });
    const reply = first.choices[0]!.message.content!;
    const before = api.requests.length;
    const { data, response } = await client.chat.completions
      .create({
        model: 'sonnet',
        messages: [
          { role: 'user', content: 'remember the word BANANA' },
          { role: 'assistant', content: reply },
          { role: 'user', content: 'which word?' },
        ],
      })
      .withResponse();
    assert.equal(response.headers.get('x-olp-session-mode'), 'resumed');
    assert.equal(data.choices[0]?.message.content, 'stand-in heard: which word?');
    const sent = api.requests.slice(before).find((r) => r.body.stream)!;
    const texts = JSON.stringify(sent.body.messages);
    assert.match(texts, /remember the word BANANA/, 'the real CLI prepended the stored history');
    assert.match(texts, new RegExp(reply));
    assert.ok(!/<conversation>/.test(texts), 'history came from the session, not from a re-sent transcript');
  });

  it('/v1/responses: answers with usage, and previous_response_id resumes the real session', async () => {
    api.mode = 'text';
    const first = await client.responses.create({
      model: 'sonnet',
      input: 'remember MANGO',
      instructions: 'You are terse.',
    });
    assert.equal(first.output_text, 'stand-in heard: remember MANGO');
    assert.deepEqual(
      [first.usage?.input_tokens, first.usage?.output_tokens, first.usage?.input_tokens_details.cached_tokens],
      [39, 9, 11],
    );
    const before = api.requests.length;
    const next = await client.responses.create({
      model: 'sonnet',
      input: 'which fruit?',
      previous_response_id: first.id,
      instructions: 'You are terse.',
    });
    assert.equal(next.output_text, 'stand-in heard: which fruit?');
    const sent = api.requests.slice(before).find((r) => r.path === '/v1/messages' && r.body.stream);
    // The CLI resumed its session: it sent the earlier turn to the API itself.
    assert.match(JSON.stringify(sent?.body.messages), /remember MANGO/);
  });

  it('an image travels to the Messages API as an image block (stream-json input)', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const before = api.requests.length;
    const res = await client.chat.completions.create({
      model: 'sonnet',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'describe the picture' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
          ],
        },
      ],
    });
    assert.equal(res.choices[0]?.message.content, 'stand-in heard: describe the picture');
    const sent = JSON.stringify(api.requests.slice(before).find((r) => r.body.stream)?.body.messages);
    assert.match(sent, /"type":"image"/);
    assert.ok(sent.includes(png), 'the image data arrived intact');
  });

  it('an API key the provider refuses → 503 that says how to log in', async () => {
    api.mode = '401';
    try {
      await assert.rejects(
        client.chat.completions.create({ model: 'sonnet', messages: [{ role: 'user', content: 'x' }] }),
        (err: unknown) => err instanceof OpenAI.APIError && err.status === 503 && err.code === 'backend_not_logged_in',
      );
    } finally {
      api.mode = 'text';
    }
  });

  it('a provider 500 → 502 backend_error', async () => {
    api.mode = '500';
    try {
      await assert.rejects(
        client.chat.completions.create({ model: 'sonnet', messages: [{ role: 'user', content: 'x' }] }),
        (err: unknown) => err instanceof OpenAI.APIError && err.status === 502,
      );
    } finally {
      api.mode = 'text';
    }
  });

  it('a multi-megabyte prompt is written without crashing the daemon, which keeps serving', async () => {
    const big = `${'lorem ipsum '.repeat(300_000)}\nfinal line`;
    const res = await client.chat.completions
      .create({ model: 'sonnet', messages: [{ role: 'user', content: big }] })
      .then(
        (r) => r.choices[0]?.message.content,
        (err: unknown) => `${(err as { status?: number }).status} ${(err as { code?: string }).code}`,
      );
    // Either answered, or refused cleanly: claude itself rejects a prompt this far over its context window.
    assert.ok(
      res === 'stand-in heard: final line' || res === '400 context_length_exceeded' || /^5\d\d /.test(String(res)),
      String(res),
    );
    const after = await client.chat.completions.create({
      model: 'sonnet',
      messages: [{ role: 'user', content: 'still there?' }],
    });
    assert.equal(after.choices[0]?.message.content, 'stand-in heard: still there?');
  });
  it('takes the effort and thinking upstream (output_config.effort, thinking), and brings the thinking back', async () => {
    const sent = (from: number) => api.requests.slice(from).find((r) => r.path === '/v1/messages' && r.body.stream)!;
    api.thinking = 'Weighing it up.';
    try {
      let from = api.requests.length;
      const chat = await client.chat.completions.create({
        model: 'sonnet',
        messages: [{ role: 'user', content: 'effort please' }],
        reasoning_effort: 'xhigh',
      });
      // --effort xhigh: the adaptive model's effort (2.1.197 and 2.1.332 alike).
      assert.equal(sent(from).body.output_config?.effort, 'xhigh');
      assert.equal((chat.choices[0]!.message as { reasoning_content?: string }).reasoning_content, 'Weighing it up.');
      assert.equal(chat.choices[0]!.message.content, 'stand-in heard: effort please');
      from = api.requests.length;
      const response = await client.responses.create({
        model: 'sonnet',
        input: 'summarise',
        reasoning: { effort: 'low', summary: 'auto' },
        store: false,
      });
      assert.equal(sent(from).body.output_config?.effort, 'low');
      const [reasoning, message] = response.output;
      assert.deepEqual((reasoning as OpenAI.Responses.ResponseReasoningItem).summary, [
        { type: 'summary_text', text: 'Weighing it up.' },
      ]);
      assert.equal(message?.type, 'message');
      // A budget model takes MAX_THINKING_TOKENS as its budget, and 0 as thinking off.
      const messages = async (thinking: Record<string, unknown>) => {
        from = api.requests.length;
        const res = await fetch(`${t.url}/v1/messages`, {
          method: 'POST',
          headers: { 'x-api-key': t.token, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
          body: JSON.stringify({
            model: 'claude-sonnet-4-5',
            max_tokens: 8000,
            thinking,
            messages: [{ role: 'user', content: 'think about it' }],
          }),
        });
        assert.equal(res.status, 200);
        return { body: (await res.json()) as { content: { type: string }[] }, upstream: sent(from).body.thinking };
      };
      const budgeted = await messages({ type: 'enabled', budget_tokens: 2048 });
      assert.equal(budgeted.upstream?.budget_tokens, 2048);
      assert.deepEqual(
        budgeted.body.content.map((c) => c.type),
        ['thinking', 'text'],
      );
      const off = await messages({ type: 'disabled' });
      assert.equal(off.upstream?.type, 'disabled');
      assert.deepEqual(
        off.body.content.map((c) => c.type),
        ['text'],
      );
    } finally {
      api.thinking = undefined;
    }
  });
});

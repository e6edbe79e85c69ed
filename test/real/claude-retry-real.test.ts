// The provider's stream cut once in the middle of a message (connection reset, malformed SSE
// event), the real `claude` retrying and answering: the client must never get the cut attempt's
// text glued to the real answer. Chat and Responses, streamed and not, cold and warm (live worker).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { claudeStandInEnv, standInReply, startAnthropicStandIn, type StandIn } from '../support/anthropic-stand-in.js';
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
    config: { claudeBin: REAL_CLAUDE, timeout: 60, idleTimeout: 30, workers: true },
    // Retries on, as claude runs by default: the cut attempt is retried.
    claudeEnv: { ...claudeStandInEnv(api.url), CLAUDE_CODE_MAX_RETRIES: '2' },
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

function runModes(): string[] {
  return t.logs.filter((l) => l.event === 'request').map((l) => String(l.run ?? '-'));
}

/** Turns written to a live claude that answered this conversation's turn before. */
function warmTurns(): number {
  return t.logs.filter((l) => l.event === 'worker_turn' && l.mode === 'warm').length;
}

/** Cuts the next streamed reply once, after two text deltas ("stand-in hea"). */
function cutOnce(how: 'reset' | 'malformed'): void {
  api.cut = { how, afterDeltas: 2, times: 1 };
}

function assertCut(): void {
  assert.equal(api.cut?.times, 0, 'the stand-in cut a reply');
}

/** A streamed chat completion read off the wire: its text, and the in-band error if it ended in one. */
async function streamChat(messages: OpenAI.ChatCompletionMessageParam[]): Promise<{ text: string; error?: { code: string; message: string }; done: boolean }> {
  const res = await fetch(`${t.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sonnet', messages, stream: true }),
  });
  assert.equal(res.status, 200);
  let text = '';
  let error: { code: string; message: string } | undefined;
  let done = false;
  for (const block of (await res.text()).split('\n\n')) {
    const data = block.split('\n').find((l) => l.startsWith('data: '))?.slice(6);
    if (!data) continue;
    if (data === '[DONE]') {
      done = true;
      continue;
    }
    const chunk = JSON.parse(data) as { error?: { code: string; message: string }; choices?: { delta: { content?: string } }[] };
    if (chunk.error) error = chunk.error;
    text += chunk.choices?.[0]?.delta.content ?? '';
  }
  return { text, ...(error ? { error } : {}), done };
}

/**
 * A streamed reply after a cut: never text of two attempts. Either the whole answer, or (the cut
 * attempt's text already sent) what was sent of it and then the retryable in-band error.
 */
function assertNotGlued(r: { text: string; error?: { code: string }; done: boolean }, answer: string): void {
  assert.ok(answer.startsWith(r.text), `the streamed text is one attempt's, not two glued: ${JSON.stringify(r.text)}`);
  if (r.error) assert.equal(r.error.code, 'backend_retry_mid_stream');
  else assert.equal(r.text, answer);
}

describe(`real claude ${REAL_CLAUDE_VERSION}: the provider stream cut mid-message, the CLI retries`, () => {
  for (const how of ['reset', 'malformed'] as const) {
    it(`chat, not streamed, cold then warm (${how}): the reply is the CLI's final answer`, async () => {
      const modes = runModes().length;
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: `first cut turn ${how}` }];
      cutOnce(how);
      const r1 = await client.chat.completions.create({ model: 'sonnet', messages });
      assertCut();
      assert.equal(r1.choices[0]?.message.content, standInReply(`first cut turn ${how}`));
      messages.push({ role: 'assistant', content: r1.choices[0]!.message.content! }, { role: 'user', content: `second cut turn ${how}` });
      cutOnce(how);
      const r2 = await client.chat.completions.create({ model: 'sonnet', messages });
      assertCut();
      assert.equal(r2.choices[0]?.message.content, standInReply(`second cut turn ${how}`));
      assert.equal(runModes().slice(modes)[1], 'warm', `the second turn ran on the live worker: ${runModes().slice(modes).join(', ')}`);
    });

    it(`chat, streamed, cold and warm (${how}): one attempt's text, or the retryable in-band error`, async () => {
      const cold = `cold streamed cut ${how}`;
      cutOnce(how);
      assertNotGlued(await streamChat([{ role: 'user', content: cold }]), standInReply(cold));
      assertCut();
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: `warm-up ${how}` }];
      const r1 = await client.chat.completions.create({ model: 'sonnet', messages });
      messages.push({ role: 'assistant', content: r1.choices[0]!.message.content! }, { role: 'user', content: `warm streamed cut ${how}` });
      cutOnce(how);
      const warm = warmTurns();
      assertNotGlued(await streamChat(messages), standInReply(`warm streamed cut ${how}`));
      assertCut();
      assert.equal(warmTurns(), warm + 1, 'the cut streamed turn ran on the live worker');
      // The conversation goes on: the client's retry is answered (by a new session that is sent
      // the whole conversation when the cut turn ended the worker's).
      const before = api.requests.length;
      const again = await client.chat.completions.create({ model: 'sonnet', messages });
      assert.match(again.choices[0]?.message.content ?? '', /^stand-in heard: /);
      assert.match(JSON.stringify(api.requests.slice(before).find((r) => r.body.stream)?.body.messages), new RegExp(`warm streamed cut ${how}`));
    });

    it(`/v1/responses, not streamed and streamed (${how})`, async () => {
      cutOnce(how);
      const whole = await client.responses.create({ model: 'sonnet', input: `responses cut ${how}` });
      assertCut();
      assert.equal(whole.output_text, standInReply(`responses cut ${how}`));
      cutOnce(how);
      const stream = await client.responses.create({ model: 'sonnet', input: `responses streamed cut ${how}`, stream: true });
      let text = '';
      let end: OpenAI.Responses.Response | undefined;
      for await (const ev of stream) {
        if (ev.type === 'response.output_text.delta') text += ev.delta;
        if (ev.type === 'response.completed' || ev.type === 'response.failed') end = ev.response;
      }
      assertCut();
      const answer = standInReply(`responses streamed cut ${how}`);
      assert.ok(answer.startsWith(text), `one attempt's text: ${JSON.stringify(text)}`);
      if (end?.status === 'failed') assert.match(end.error?.message ?? '', /started the answer again/);
      else assert.equal(text, answer);
    });
  }
});

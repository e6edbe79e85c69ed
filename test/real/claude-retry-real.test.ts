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

/** What the cut attempt said before the cut, when it is not the retried answer's start. */
const OTHER = 'partial reply echo: an attempt that is not the answer';

/**
 * Cuts the next streamed reply once, after two text deltas: of the real answer (the retry says
 * the same again), or of another text (`other`).
 */
function cutOnce(how: 'reset' | 'malformed', other = false): void {
  api.cut = { how, afterDeltas: 2, times: 1, ...(other ? { text: OTHER } : {}) };
}

function assertCut(): void {
  assert.equal(api.cut?.times, 0, 'the stand-in cut a reply');
}

/** A streamed chat completion read off the wire: its text, and the in-band error if it ended in one. */
async function streamChat(
  messages: OpenAI.ChatCompletionMessageParam[],
): Promise<{ text: string; error?: { code: string; message: string }; done: boolean }> {
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
    const data = block
      .split('\n')
      .find((l) => l.startsWith('data: '))
      ?.slice(6);
    if (!data) continue;
    if (data === '[DONE]') {
      done = true;
      continue;
    }
    const chunk = JSON.parse(data) as {
      error?: { code: string; message: string };
      choices?: { delta: { content?: string } }[];
    };
    if (chunk.error) error = chunk.error;
    text += chunk.choices?.[0]?.delta.content ?? '';
  }
  return { text, ...(error ? { error } : {}), done };
}

/**
 * A streamed reply after a cut: never text of two attempts. A retry that says again what the
 * client has goes on seamlessly; one that says something else ends the stream with the retryable
 * in-band error, after only what the client already had.
 */
function assertStreamed(
  r: { text: string; error?: { code: string }; done: boolean },
  answer: string,
  other: boolean,
): void {
  if (!other) {
    assert.deepEqual(r, { text: answer, done: true }, 'the retry said the same again: the stream went on');
    return;
  }
  // On a busy machine the CLI may not have passed the cut attempt's deltas on before the cut
  // (the stand-in gives them 50 ms): nothing of it reached the client, so the retry's answer is
  // the whole reply, and still never glued to the other text.
  if (!r.error && !r.text.includes(OTHER.slice(0, 12))) {
    assert.deepEqual(r, { text: answer, done: true }, 'no text of the cut attempt was sent');
    return;
  }
  assert.equal(r.error?.code, 'backend_retry_mid_stream', JSON.stringify(r));
  assert.equal(r.done, false);
  assert.equal(r.text, OTHER.slice(0, 12), 'only what the cut attempt had sent');
}

describe(`real claude ${REAL_CLAUDE_VERSION}: the provider stream cut mid-message, the CLI retries`, () => {
  for (const how of ['reset', 'malformed'] as const) {
    it(`chat, not streamed, cold then warm (${how}): the reply is the CLI's final answer`, async () => {
      const modes = runModes().length;
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: `first cut turn ${how}` }];
      cutOnce(how, true);
      const r1 = await client.chat.completions.create({ model: 'sonnet', messages });
      assertCut();
      assert.equal(r1.choices[0]?.message.content, standInReply(`first cut turn ${how}`));
      messages.push(
        { role: 'assistant', content: r1.choices[0]!.message.content! },
        { role: 'user', content: `second cut turn ${how}` },
      );
      cutOnce(how, true);
      const r2 = await client.chat.completions.create({ model: 'sonnet', messages });
      assertCut();
      assert.equal(r2.choices[0]?.message.content, standInReply(`second cut turn ${how}`));
      assert.equal(
        runModes().slice(modes)[1],
        'warm',
        `the second turn ran on the live worker: ${runModes().slice(modes).join(', ')}`,
      );
    });

    for (const other of [false, true]) {
      const retry = other ? 'a retry that says something else' : 'a retry that says the same again';
      it(`chat, streamed, cold and warm (${how}, ${retry})`, async () => {
        const cold = `cold streamed cut ${how} ${other}`;
        cutOnce(how, other);
        assertStreamed(await streamChat([{ role: 'user', content: cold }]), standInReply(cold), other);
        assertCut();
        const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: `warm-up ${how} ${other}` }];
        const r1 = await client.chat.completions.create({ model: 'sonnet', messages });
        messages.push(
          { role: 'assistant', content: r1.choices[0]!.message.content! },
          { role: 'user', content: `warm streamed cut ${how} ${other}` },
        );
        cutOnce(how, other);
        const warm = warmTurns();
        assertStreamed(await streamChat(messages), standInReply(`warm streamed cut ${how} ${other}`), other);
        assertCut();
        assert.equal(warmTurns(), warm + 1, 'the cut streamed turn ran on the live worker');
        // The conversation goes on: the client's retry (or next turn) is answered.
        if (other) {
          const before = api.requests.length;
          const again = await client.chat.completions.create({ model: 'sonnet', messages });
          assert.match(again.choices[0]?.message.content ?? '', /^stand-in heard: /);
          assert.match(
            JSON.stringify(api.requests.slice(before).find((r) => r.body.stream)?.body.messages),
            new RegExp(`warm streamed cut ${how}`),
          );
        } else {
          messages.push(
            { role: 'assistant', content: standInReply(`warm streamed cut ${how} ${other}`) },
            { role: 'user', content: 'and after it' },
          );
          const next = await client.chat.completions.create({ model: 'sonnet', messages });
          assert.equal(next.choices[0]?.message.content, standInReply('and after it'));
          assert.equal(warmTurns(), warm + 2, 'the worker goes on with the conversation');
        }
      });
    }

    it(`/v1/responses, not streamed and streamed (${how})`, async () => {
      cutOnce(how, true);
      const whole = await client.responses.create({ model: 'sonnet', input: `responses cut ${how}` });
      assertCut();
      assert.equal(whole.output_text, standInReply(`responses cut ${how}`));
      for (const other of [false, true]) {
        cutOnce(how, other);
        const stream = await client.responses.create({
          model: 'sonnet',
          input: `responses streamed cut ${how} ${other}`,
          stream: true,
        });
        let text = '';
        let end: OpenAI.Responses.Response | undefined;
        for await (const ev of stream) {
          if (ev.type === 'response.output_text.delta') text += ev.delta;
          if (ev.type === 'response.completed' || ev.type === 'response.failed') end = ev.response;
        }
        assertCut();
        // As in assertStreamed: a busy CLI may not have passed the cut attempt on before the cut.
        if (other && !text.includes(OTHER.slice(0, 12))) {
          assert.equal(end?.status, 'completed', 'no text of the cut attempt was sent');
          assert.equal(text, standInReply(`responses streamed cut ${how} ${other}`));
        } else if (other) {
          assert.equal(end?.status, 'failed');
          assert.match(end?.error?.message ?? '', /started the answer again/);
          assert.equal(text, OTHER.slice(0, 12));
        } else {
          assert.equal(end?.status, 'completed');
          assert.equal(text, standInReply(`responses streamed cut ${how} ${other}`));
          assert.equal(end?.output_text, text);
        }
      }
    });
  }
});

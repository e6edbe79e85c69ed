// The Responses stream cut once (connection reset), the real `codex` retrying (`Reconnecting...`)
// and answering: the client never gets the cut attempt's text glued to the answer. Cold turns
// (`codex exec`) and warm ones (the app-server worker), chat and Responses, streamed and not.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { assertUnderstood } from '../support/real.js';
import { REAL_CODEX } from '../support/paths.js';
import {
  codexStandInConfig,
  CODEX_STAND_IN_ENV,
  startResponsesStandIn,
  type ResponsesStandIn,
} from '../support/responses-stand-in.js';

let api: ResponsesStandIn;
let t: TestDaemon;
let client: OpenAI;

before(async () => {
  assert.ok(existsSync(REAL_CODEX), `the real codex CLI is missing at ${REAL_CODEX}: run npm ci`);
  api = await startResponsesStandIn();
  api.deltas = true;
  t = await startTestDaemon({
    // Stream retries on, as codex runs by default.
    config: {
      codexBin: REAL_CODEX,
      timeout: 60,
      idleTimeout: 30,
      workers: true,
      prestart: false,
      codexConfig: codexStandInConfig(api.url, 2),
    },
    codexEnv: CODEX_STAND_IN_ENV,
  });
  client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
});
after(async () => {
  const logs = t?.logs ?? [];
  await t?.close();
  await api?.close();
  assertUnderstood(logs);
});

const heard = (text: string) => `responses stand-in heard: ${text}`;

/** Cuts the next reply once, mid-message (after two deltas) or after the message is done. */
function cutOnce(where: 'mid-message' | 'after-message'): void {
  api.cut = {
    how: 'reset',
    afterDeltas: where === 'mid-message' ? 2 : 1000,
    times: 1,
    text: 'partial reply echo: abandoned attempt',
  };
}

function assertCut(): void {
  assert.equal(api.cut?.times, 0, 'the stand-in cut a reply');
}

/** The codex workers olp holds: pid and state. */
async function codexWorkers(): Promise<{ pid: number; state: string; turns: number }[]> {
  const res = await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } });
  const live = (
    (await res.json()) as { workers: { live: { pid: number; slot: string; state: string; turns: number }[] } }
  ).workers.live;
  return live.filter((l) => l.slot.includes('/codex/'));
}

/** Runs a cold turn, then waits until the codex worker that loads its thread is up (and no other is starting). */
async function coldThenWorker<T>(turn: () => Promise<T>): Promise<T> {
  const before = new Set((await codexWorkers()).map((w) => w.pid));
  const out = await turn();
  for (let i = 0; i < 300; i++) {
    const now = await codexWorkers();
    if (now.every((w) => w.state === 'idle') && now.some((w) => !before.has(w.pid) && w.turns === 0)) return out;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no codex worker came up');
}

function warmTurns(): number {
  return t.logs.filter((l) => l.event === 'worker_turn' && l.mode === 'warm').length;
}

/** A streamed chat completion off the wire: its text and its in-band error, if any. */
async function streamChat(
  messages: OpenAI.ChatCompletionMessageParam[],
): Promise<{ text: string; error?: { code: string }; done: boolean }> {
  const res = await fetch(`${t.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'codex', messages, stream: true }),
  });
  assert.equal(res.status, 200);
  let text = '';
  let error: { code: string } | undefined;
  let done = false;
  for (const block of (await res.text()).split('\n\n')) {
    const data = block
      .split('\n')
      .find((l) => l.startsWith('data: '))
      ?.slice(6);
    if (!data) continue;
    if (data === '[DONE]') done = true;
    else {
      const chunk = JSON.parse(data) as { error?: { code: string }; choices?: { delta: { content?: string } }[] };
      if (chunk.error) error = chunk.error;
      text += chunk.choices?.[0]?.delta.content ?? '';
    }
  }
  return { text, ...(error ? { error } : {}), done };
}

/** One attempt's text: the whole answer, or what was sent of the abandoned one and the retryable error. */
function assertNotGlued(r: { text: string; error?: { code: string }; done: boolean }, answer: string): void {
  if (r.error) {
    assert.equal(r.error.code, 'backend_retry_mid_stream');
    assert.ok(
      'partial reply echo: abandoned attempt'.startsWith(r.text),
      `only the abandoned attempt's text: ${JSON.stringify(r.text)}`,
    );
  } else assert.equal(r.text, answer);
}

describe('real codex: the Responses stream cut once, codex retries', () => {
  for (const where of ['mid-message', 'after-message'] as const) {
    it(`chat, not streamed, cold then warm (cut ${where}): the reply is codex's final answer`, async () => {
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: `cold cut ${where}` }];
      cutOnce(where);
      const r1 = await coldThenWorker(() => client.chat.completions.create({ model: 'codex', messages }));
      assertCut();
      assert.equal(r1.choices[0]?.message.content, heard(`cold cut ${where}`));
      messages.push(
        { role: 'assistant', content: r1.choices[0]!.message.content! },
        { role: 'user', content: `warm cut ${where}` },
      );
      cutOnce(where);
      const warm = warmTurns();
      const r2 = await client.chat.completions.create({ model: 'codex', messages });
      assertCut();
      assert.equal(warmTurns(), warm + 1, 'the second turn went to the app-server');
      assert.equal(r2.choices[0]?.message.content, heard(`warm cut ${where}`));
    });

    it(`chat, streamed, cold and warm (cut ${where}): one attempt's text, or the retryable in-band error`, async () => {
      cutOnce(where);
      assertNotGlued(
        await streamChat([{ role: 'user', content: `cold streamed ${where}` }]),
        heard(`cold streamed ${where}`),
      );
      assertCut();
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: `warm-up ${where}` }];
      const r1 = await coldThenWorker(() => client.chat.completions.create({ model: 'codex', messages }));
      messages.push(
        { role: 'assistant', content: r1.choices[0]!.message.content! },
        { role: 'user', content: `warm streamed ${where}` },
      );
      cutOnce(where);
      const warm = warmTurns();
      assertNotGlued(await streamChat(messages), heard(`warm streamed ${where}`));
      assertCut();
      assert.equal(warmTurns(), warm + 1, 'the streamed turn went to the app-server');
    });

    it(`/v1/responses, not streamed and streamed (cut ${where})`, async () => {
      cutOnce(where);
      const whole = await client.responses.create({ model: 'codex', input: `responses cut ${where}` });
      assertCut();
      assert.equal(whole.output_text, heard(`responses cut ${where}`));
      cutOnce(where);
      const stream = await client.responses.create({
        model: 'codex',
        input: `responses streamed ${where}`,
        stream: true,
      });
      let text = '';
      let end: OpenAI.Responses.Response | undefined;
      for await (const ev of stream) {
        if (ev.type === 'response.output_text.delta') text += ev.delta;
        if (ev.type === 'response.completed' || ev.type === 'response.failed') end = ev.response;
      }
      assertCut();
      if (end?.status === 'failed') assert.ok('partial reply echo: abandoned attempt'.startsWith(text), text);
      else assert.equal(text, heard(`responses streamed ${where}`));
    });
  }
});

// A model message claude abandons when its provider's stream breaks (the fake CLI prints the
// captured shapes of 2.1.332 and 2.1.197): the client never gets that attempt's text glued to the
// answer, on a cold turn and on a live worker's.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';

let t: TestDaemon;
let client: OpenAI;

before(async () => {
  t = await startTestDaemon({ config: { workers: true, prestart: false } });
  client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
});
after(async () => {
  await t?.close();
});

function runModes(): string[] {
  return t.logs.filter((l) => l.event === 'request').map((l) => String(l.run ?? '-'));
}

const answer = (said: string) => `Hello from fake claude. You said: ${said}`;

/** A streamed chat completion off the wire: its text and its in-band error, if any. */
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
    if (data === '[DONE]') done = true;
    else {
      const chunk = JSON.parse(data) as { error?: { code: string; message: string }; choices?: { delta: { content?: string } }[] };
      if (chunk.error) error = chunk.error;
      text += chunk.choices?.[0]?.delta.content ?? '';
    }
  }
  return { text, ...(error ? { error } : {}), done };
}

describe('a message claude abandons mid-stream and answers again', () => {
  for (const scenario of ['stream-cut-retry', 'stream-cut-fallback']) {
    it(`${scenario}: non-streamed, cold then warm: the reply is the CLI's final answer, and the worker's session is kept`, async () => {
      const modes = runModes().length;
      const messages: OpenAI.ChatCompletionMessageParam[] = [];
      for (const said of [`[[fake:${scenario}]] first`, `[[fake:${scenario}]] second`, 'third, not cut']) {
        messages.push({ role: 'user', content: said });
        const r = await client.chat.completions.create({ model: 'sonnet', messages });
        assert.equal(r.choices[0]?.message.content, answer(said));
        messages.push({ role: 'assistant', content: r.choices[0]!.message.content! });
      }
      // The slot remembered the kept answer, not the glued text: the third turn is warm too.
      assert.deepEqual(runModes().slice(modes), ['cold', 'warm', 'warm']);
    });

    it(`${scenario}: streamed, cold and warm: the sent part of the abandoned attempt, then the retryable in-band error`, async () => {
      const cold = `[[fake:${scenario}]] streamed cold`;
      const r1 = await streamChat([{ role: 'user', content: cold }]);
      assert.equal(r1.error?.code, 'backend_retry_mid_stream', JSON.stringify(r1));
      assert.match(r1.error?.message ?? '', /send the request again/);
      assert.equal(r1.done, false);
      assert.ok(`partial reply echo: ${answer(cold)}`.startsWith(r1.text) && !r1.text.includes('Hello from fake claude. You said: [[fake'), `only the abandoned attempt's text: ${r1.text}`);
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'warm up' }];
      const w = await client.chat.completions.create({ model: 'sonnet', messages });
      const modes = runModes().length;
      messages.push({ role: 'assistant', content: w.choices[0]!.message.content! }, { role: 'user', content: `[[fake:${scenario}]] streamed warm` });
      const warmTurns = () => t.logs.filter((l) => l.event === 'worker_turn' && l.mode === 'warm').length;
      const warmBefore = warmTurns();
      const r2 = await streamChat(messages);
      assert.equal(r2.error?.code, 'backend_retry_mid_stream', JSON.stringify(r2));
      assert.ok(r2.text.startsWith('partial reply echo: ') && !r2.text.includes('You said: [[fake'), r2.text);
      assert.equal(warmTurns(), warmBefore + 1, 'the streamed turn went to the live worker');
      // The client's retry of the same request is answered whole.
      const again = await client.chat.completions.create({ model: 'sonnet', messages: [...messages.slice(0, -1), { role: 'user', content: 'streamed warm, retried' }] });
      assert.equal(again.choices[0]?.message.content, answer('streamed warm, retried'));
      assert.equal(runModes().length - modes, 2);
    });

    it(`${scenario}: /v1/responses, not streamed and streamed`, async () => {
      const whole = await client.responses.create({ model: 'sonnet', input: `[[fake:${scenario}]] responses` });
      assert.equal(whole.output_text, answer(`[[fake:${scenario}]] responses`));
      const stream = await client.responses.create({ model: 'sonnet', input: `[[fake:${scenario}]] responses streamed`, stream: true });
      let text = '';
      let end: OpenAI.Responses.Response | undefined;
      for await (const ev of stream) {
        if (ev.type === 'response.output_text.delta') text += ev.delta;
        if (ev.type === 'response.completed' || ev.type === 'response.failed') end = ev.response;
      }
      assert.equal(end?.status, 'failed');
      assert.match(end?.error?.message ?? '', /started the answer again/);
      assert.ok(text.startsWith('partial reply echo: ') && !text.includes('You said: [[fake'), text);
    });
  }
});

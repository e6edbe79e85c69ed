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

function warmTurns(): number {
  return t.logs.filter((l) => l.event === 'worker_turn' && l.mode === 'warm').length;
}

/** A streamed chat completion off the wire: its text and its in-band error, if any. */
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
    if (data === '[DONE]') done = true;
    else {
      const chunk = JSON.parse(data) as {
        error?: { code: string; message: string };
        choices?: { delta: { content?: string } }[];
      };
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

    it(`${scenario}: streamed, cold and warm, a retry that says something else: the sent part of the abandoned attempt, then the retryable in-band error`, async () => {
      const cold = `[[fake:${scenario}]] streamed cold`;
      const r1 = await streamChat([{ role: 'user', content: cold }]);
      assert.equal(r1.error?.code, 'backend_retry_mid_stream', JSON.stringify(r1));
      assert.match(r1.error?.message ?? '', /send the request again/);
      assert.equal(r1.done, false);
      assert.equal(
        r1.text,
        `partial reply echo: ${answer(cold).slice(0, 20)}`,
        'only the abandoned attempt, nothing of the retry',
      );
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'warm up' }];
      const w = await client.chat.completions.create({ model: 'sonnet', messages });
      messages.push(
        { role: 'assistant', content: w.choices[0]!.message.content! },
        { role: 'user', content: `[[fake:${scenario}]] streamed warm` },
      );
      const warmBefore = warmTurns();
      const r2 = await streamChat(messages);
      assert.equal(r2.error?.code, 'backend_retry_mid_stream', JSON.stringify(r2));
      assert.equal(r2.text, `partial reply echo: ${answer(`[[fake:${scenario}]] streamed warm`).slice(0, 20)}`);
      assert.equal(warmTurns(), warmBefore + 1, 'the streamed turn went to the live worker');
      // The client's retry is answered whole.
      const again = await client.chat.completions.create({
        model: 'sonnet',
        messages: [...messages.slice(0, -1), { role: 'user', content: 'streamed warm, retried' }],
      });
      assert.equal(again.choices[0]?.message.content, answer('streamed warm, retried'));
    });

    it(`${scenario}-same: streamed, cold and warm, a retry that says the same again: the stream goes on, whole and once`, async () => {
      const cold = `[[fake:${scenario}-same]] streamed cold`;
      assert.deepEqual(await streamChat([{ role: 'user', content: cold }]), { text: answer(cold), done: true });
      const modes = runModes().length;
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'warm up' }];
      for (const said of [`[[fake:${scenario}-same]] streamed warm`, 'after it']) {
        const w = await client.chat.completions.create({ model: 'sonnet', messages });
        messages.push({ role: 'assistant', content: w.choices[0]!.message.content! }, { role: 'user', content: said });
        assert.deepEqual(await streamChat(messages), { text: answer(said), done: true });
        messages.push({ role: 'assistant', content: answer(said) }, { role: 'user', content: 'and on' });
      }
      assert.deepEqual(
        runModes().slice(modes),
        ['cold', 'warm', 'warm', 'warm'],
        'the worker goes on through the cut turn',
      );
    });

    it(`${scenario}: /v1/responses, not streamed and streamed`, async () => {
      const whole = await client.responses.create({ model: 'sonnet', input: `[[fake:${scenario}]] responses` });
      assert.equal(whole.output_text, answer(`[[fake:${scenario}]] responses`));
      for (const same of ['', '-same']) {
        const input = `[[fake:${scenario}${same}]] responses streamed`;
        const stream = await client.responses.create({ model: 'sonnet', input, stream: true });
        let text = '';
        let end: OpenAI.Responses.Response | undefined;
        for await (const ev of stream) {
          if (ev.type === 'response.output_text.delta') text += ev.delta;
          if (ev.type === 'response.completed' || ev.type === 'response.failed') end = ev.response;
        }
        if (same) {
          assert.equal(end?.status, 'completed');
          assert.equal(text, answer(input));
        } else {
          assert.equal(end?.status, 'failed');
          assert.match(end?.error?.message ?? '', /started the answer again/);
          assert.equal(text, `partial reply echo: ${answer(input).slice(0, 20)}`);
        }
      }
    });
  }

  it('a retry that starts like the sent text and then says something else, or says less than was sent: the retryable in-band error, nothing of the retry sent', async () => {
    for (const variant of ['diverge', 'longer']) {
      const said = `[[fake:stream-cut-retry-${variant}]] streamed`;
      const r = await streamChat([{ role: 'user', content: said }]);
      assert.equal(r.error?.code, 'backend_retry_mid_stream', `${variant}: ${JSON.stringify(r)}`);
      assert.equal(r.text, variant === 'diverge' ? `${answer(said).slice(0, 12)}ZZZZ` : `${answer(said)} and more`);
    }
  });
});

describe('a response codex asks for again after its stream broke', () => {
  const heard = (said: string) => `Hello from fake codex. You said: ${said}`;
  it('non-streamed, cold (exec) then warm (app-server): the reply is the kept message; streamed: the retryable in-band error', async () => {
    const codexWarm = () => t.logs.filter((l) => l.event === 'worker_turn' && l.mode === 'warm').length;
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'user', content: '[[fake:stream-cut-retry]] codex first' },
    ];
    const r1 = await client.chat.completions.create({ model: 'codex', messages });
    assert.equal(r1.choices[0]?.message.content, heard('[[fake:stream-cut-retry]] codex first'));
    // The app-server worker loads the thread after the cold turn.
    for (let i = 0; i < 200; i++) {
      const res = await fetch(`${t.url}/health`, { headers: { authorization: `Bearer ${t.token}` } });
      const live = ((await res.json()) as { workers: { live: { slot: string; state: string }[] } }).workers.live;
      if (live.some((l) => l.slot.includes('/codex/') && l.state === 'idle')) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    messages.push(
      { role: 'assistant', content: r1.choices[0]!.message.content! },
      { role: 'user', content: '[[fake:stream-cut-retry]] codex second' },
    );
    const warm = codexWarm();
    const r2 = await client.chat.completions.create({ model: 'codex', messages });
    assert.equal(r2.choices[0]?.message.content, heard('[[fake:stream-cut-retry]] codex second'));
    assert.equal(codexWarm(), warm + 1, 'the second turn went to the app-server');
    const cold = '[[fake:stream-cut-retry]] codex streamed';
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'codex', messages: [{ role: 'user', content: cold }], stream: true }),
    });
    const body = await res.text();
    assert.match(body, /"code":"backend_retry_mid_stream"/);
    assert.ok(!body.includes('You said: [[fake:stream-cut-retry]] codex streamed"'), 'nothing of the retried message');
  });
});

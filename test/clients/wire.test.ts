// The wire details OpenAI clients trip on, checked on the raw stream: a client library hides some
// of them, and a stricter one (or a hand-written client) breaks on each.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';

let t: TestDaemon;
before(async () => {
  t = await startTestDaemon();
});
after(async () => t.close());

type Chunk = {
  object: string;
  choices: {
    index: number;
    delta: { role?: string; content?: string; tool_calls?: { index?: number; id?: string }[] };
    finish_reason: string | null;
  }[];
  usage?: unknown;
};

async function chunks(body: Record<string, unknown>): Promise<Chunk[]> {
  const res = await fetch(`${t.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sonnet', stream: true, ...body }),
  });
  assert.equal(res.status, 200);
  const text = await res.text();
  assert.ok(text.trimEnd().endsWith('data: [DONE]'));
  return text
    .split('\n\n')
    .filter((e) => e.startsWith('data: {'))
    .map((e) => JSON.parse(e.slice(6)) as Chunk);
}

describe('the chat stream on the wire', () => {
  it("the first chunk carries role 'assistant'; finish_reason only on the last choice chunk; no usage chunk unless asked", async () => {
    const list = await chunks({ messages: [{ role: 'user', content: 'hello' }] });
    assert.equal(list[0]!.choices[0]!.delta.role, 'assistant');
    const finishes = list.map((c) => c.choices[0]?.finish_reason ?? null);
    assert.deepEqual(
      finishes.slice(0, -1).filter((f) => f !== null),
      [],
    );
    assert.equal(finishes.at(-1), 'stop');
    assert.ok(
      list.every((c) => c.object === 'chat.completion.chunk' && c.choices.length === 1 && !('usage' in c && c.usage)),
      'no usage anywhere',
    );
  });

  it('include_usage: one last chunk with empty choices and the usage; usage null before it', async () => {
    const list = await chunks({
      messages: [{ role: 'user', content: 'hello' }],
      stream_options: { include_usage: true },
    });
    const last = list.at(-1)!;
    assert.deepEqual(last.choices, []);
    assert.ok(last.usage && typeof (last.usage as { total_tokens: number }).total_tokens === 'number');
    assert.ok(list.slice(0, -1).every((c) => c.usage === null));
  });

  it('every tool_calls delta carries its index', async () => {
    const tools = [
      {
        type: 'function',
        function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
      },
    ];
    const content = `weather? [[fake-tools:${JSON.stringify([
      { name: 'get_weather', arguments: { city: 'Paris' } },
      { name: 'get_weather', arguments: { city: 'Rome' } },
    ])}]]`;
    const list = await chunks({ messages: [{ role: 'user', content }], tools });
    const deltas = list.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    assert.ok(deltas.length > 2);
    assert.ok(deltas.every((d) => typeof d.index === 'number'));
    assert.equal(list.at(-1)!.choices[0]!.finish_reason, 'tool_calls');
  });

  it("takes a 'developer' message and max_completion_tokens", async () => {
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'sonnet',
        max_completion_tokens: 200,
        messages: [
          { role: 'developer', content: 'Be terse.' },
          { role: 'user', content: 'hi' },
        ],
      }),
    });
    assert.equal(res.status, 200);
  });

  it('/v1/models entries have id, object, created and owned_by', async () => {
    const res = await fetch(`${t.baseURL}/models`, { headers: { authorization: `Bearer ${t.token}` } });
    const body = (await res.json()) as { object: string; data: Record<string, unknown>[] };
    assert.equal(body.object, 'list');
    assert.ok(body.data.length > 0);
    for (const m of body.data) {
      assert.equal(typeof m.id, 'string');
      assert.equal(m.object, 'model');
      assert.equal(typeof m.created, 'number');
      assert.equal(typeof m.owned_by, 'string');
    }
  });
});

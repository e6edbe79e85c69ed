// The Responses route's wire on a scripted conversation (no daemon, no CLI): the stream's events
// in order with increasing sequence numbers, and errors before and after its first byte.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import request from 'supertest';
import { createScriptedApp } from '../support/scripted.js';

const t = createScriptedApp();
after(() => t.close());

const create = (input: string, extra: Record<string, unknown> = {}) =>
  request(t.app)
    .post('/v1/responses')
    .set('authorization', `Bearer ${t.token}`)
    .send({ model: 'sonnet', input, ...extra });

/** The `event:` names and `data:` payloads of an SSE body. */
function events(text: string): {
  event: string;
  data: { type: string; sequence_number: number; response?: { status: string; output_text: string } };
}[] {
  return text
    .trim()
    .split('\n\n')
    .map((block) => {
      const lines = block.split('\n');
      return { event: lines[0]!.replace(/^event: /, ''), data: JSON.parse(lines[1]!.replace(/^data: /, '')) };
    });
}

describe('the Responses stream on the wire', () => {
  it('created, in_progress, the message, completed; names match types, sequence numbers from 0', async () => {
    const res = await create('hi', { stream: true });
    assert.equal(res.status, 200);
    assert.match(res.headers['content-type'] ?? '', /text\/event-stream/);
    assert.match(res.headers['x-request-id'] ?? '', /^req_[0-9a-f]{32}$/);
    const got = events(res.text);
    assert.deepEqual(
      got.slice(0, 4).map((e) => e.event),
      ['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added'],
    );
    assert.equal(got.at(-1)!.event, 'response.completed');
    assert.ok(got.every((e) => e.event === e.data.type));
    assert.deepEqual(
      got.map((e) => e.data.sequence_number),
      got.map((_, i) => i),
    );
    assert.equal(got.at(-1)!.data.response?.output_text, 'Hello from fake claude. You said: hi');
  });

  it('the stored response is the one that was streamed', async () => {
    const res = await create('keep me', { stream: true });
    const done = events(res.text).at(-1)!.data.response as unknown as { id: string; output_text: string };
    const stored = await request(t.app).get(`/v1/responses/${done.id}`).set('authorization', `Bearer ${t.token}`);
    assert.equal(stored.status, 200);
    assert.equal(stored.body.output_text, done.output_text);
  });

  it('a failure before any output: a status and the error envelope, no stream', async () => {
    const res = await create('[[fake:not-logged-in]]', { stream: true });
    assert.equal(res.status, 503);
    assert.match(res.headers['content-type'] ?? '', /^application\/json/);
    assert.equal(res.body.error.code, 'backend_not_logged_in');
    assert.equal(res.headers['x-should-retry'], 'false');
  });

  it('a failure after text: the deltas, then response.failed, and the end', async () => {
    const res = await create('[[fake:crash-mid-stream]] a longer reply so there are deltas', { stream: true });
    assert.equal(res.status, 200);
    const got = events(res.text);
    assert.ok(got.some((e) => e.event === 'response.output_text.delta'));
    assert.equal(got.at(-1)!.event, 'response.failed');
    assert.equal(got.at(-1)!.data.response?.status, 'failed');
    assert.ok(!got.some((e) => e.event === 'response.completed'));
  });

  it('bad input is a 400 naming the param before anything runs', async () => {
    const res = await request(t.app)
      .post('/v1/responses')
      .set('authorization', `Bearer ${t.token}`)
      .send({ model: 'sonnet' });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'input');
  });
});

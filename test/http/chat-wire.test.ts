// The chat route's wire on a scripted conversation (no daemon, no CLI): auth, bad input, the
// error envelope and its headers, and errors before and after a stream's first byte.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import request from 'supertest';
import { createScriptedApp } from '../support/scripted.js';

const t = createScriptedApp();
after(() => t.close());

const chat = (body: unknown, token = t.token) =>
  request(t.app)
    .post('/v1/chat/completions')
    .set('authorization', `Bearer ${token}`)
    .send(body as object);
const ask = (content: string, extra: Record<string, unknown> = {}) =>
  chat({ model: 'sonnet', messages: [{ role: 'user', content }], ...extra });

function envelope(res: request.Response, status: number, code: string, type?: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.error.code, code);
  if (type) assert.equal(res.body.error.type, type);
  assert.equal(typeof res.body.error.message, 'string');
  assert.ok('param' in res.body.error);
  assert.match(res.headers['x-request-id'] ?? '', /^req_[0-9a-f]{32}$/);
}

describe('auth', () => {
  it('401 without a bearer token, with the OpenAI envelope', async () => {
    envelope(await request(t.app).get('/v1/models'), 401, 'invalid_api_key', 'authentication_error');
  });
  it('401 with a wrong token', async () => {
    envelope(await ask('hi').set('authorization', 'Bearer olpk_wrong'), 401, 'invalid_api_key');
  });
  it('a revoked key stops working at once', async () => {
    const { token } = t.store.keys.add('temp');
    assert.equal((await request(t.app).get('/v1/models').set('authorization', `Bearer ${token}`)).status, 200);
    t.store.keys.revoke('temp');
    envelope(await request(t.app).get('/v1/models').set('authorization', `Bearer ${token}`), 401, 'invalid_api_key');
  });
});

describe('models', () => {
  it('lists the claude models, aliases included', async () => {
    const res = await request(t.app).get('/v1/models').set('authorization', `Bearer ${t.token}`);
    assert.equal(res.body.object, 'list');
    const ids = res.body.data.map((m: { id: string }) => m.id);
    for (const id of ['sonnet', 'opus', 'haiku', 'claude-sonnet-5']) assert.ok(ids.includes(id), id);
    assert.deepEqual(Object.keys(res.body.data[0]).sort(), ['created', 'id', 'object', 'owned_by']);
  });
  it('GET /v1/models/{id}, and 404 for an unknown one', async () => {
    const one = await request(t.app).get('/v1/models/opus').set('authorization', `Bearer ${t.token}`);
    assert.deepEqual([one.body.id, one.body.object, one.body.owned_by], ['opus', 'model', 'claude-cli']);
    envelope(
      await request(t.app).get('/v1/models/no-such-model').set('authorization', `Bearer ${t.token}`),
      404,
      'model_not_found',
    );
  });
  it('unknown routes get a 404 envelope', async () => {
    envelope(
      await request(t.app).post('/v1/completions').set('authorization', `Bearer ${t.token}`).send({}),
      404,
      'not_found',
    );
  });
});

describe('bad input never gets a 500', () => {
  it('malformed JSON → 400 invalid_json', async () => {
    const res = await request(t.app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${t.token}`)
      .set('content-type', 'application/json')
      .send('{"model": "sonnet", ');
    envelope(res, 400, 'invalid_json', 'invalid_request_error');
  });
  it('a JSON body that is not an object → 400', async () => {
    envelope(
      await request(t.app)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${t.token}`)
        .set('content-type', 'application/json')
        .send('"hello"'),
      400,
      'invalid_request',
    );
  });
  it('form-encoded curl default is still read as JSON', async () => {
    const res = await request(t.app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${t.token}`)
      .set('content-type', 'application/x-www-form-urlencoded')
      .send(JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: 'form' }] }));
    assert.equal(res.status, 200);
  });
  it('missing messages → 400 with param', async () => {
    const res = await chat({ model: 'sonnet' });
    envelope(res, 400, 'invalid_request');
    assert.equal(res.body.error.param, 'messages');
    assert.equal(res.headers['x-should-retry'], 'false');
  });
  it('body over the limit → 413', async () => {
    const small = createScriptedApp({ config: { bodyLimit: 2048 } });
    try {
      const res = await request(small.app)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${small.token}`)
        .send({ model: 'sonnet', messages: [{ role: 'user', content: 'x'.repeat(5000) }] });
      envelope(res, 413, 'request_too_large');
    } finally {
      small.close();
    }
  });
});

describe('errors before and after the first byte', () => {
  it('crash mid-stream, streaming → deltas then one in-band error event, no [DONE]', async () => {
    const res = await ask('[[fake:crash-mid-stream]] a longer reply so there are deltas', { stream: true });
    assert.equal(res.status, 200);
    assert.match(res.headers['content-type'] ?? '', /text\/event-stream/);
    const events = res.text.trim().split('\n\n');
    const last = JSON.parse(events.at(-1)!.replace(/^data: /, ''));
    assert.equal(last.error.code, 'backend_error');
    assert.ok(!res.text.includes('[DONE]'));
    assert.ok(events.length >= 3, 'the deltas before the crash were forwarded');
  });
  it('a CLI failure before any output in a stream still gets a status and an envelope', async () => {
    envelope(await ask('[[fake:not-logged-in]]', { stream: true }), 503, 'backend_not_logged_in');
  });
});

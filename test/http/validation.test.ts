// Conversations that answer nothing are refused before any CLI is spawned.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { recordedPids } from '../support/procs.js';

let t: TestDaemon;
before(async () => {
  t = await startTestDaemon();
});
after(async () => {
  await t.close();
});

const chat = (body: unknown) => request(t.url).post('/v1/chat/completions').set('authorization', `Bearer ${t.token}`).send(body as object);

describe('refused before a spawn', () => {
  const cases: [string, unknown, string][] = [
    ['only an orphan tool message', { model: 'sonnet', messages: [{ role: 'tool', tool_call_id: 'call_1', content: 'r' }] }, 'messages.0.tool_call_id'],
    ['only an orphan function message', { model: 'sonnet', messages: [{ role: 'function', name: 'f', content: 'r' }] }, 'messages.0.name'],
    ['only an assistant message', { model: 'sonnet', messages: [{ role: 'assistant', content: 'hi' }] }, 'messages'],
    ['logit_bias garbage', { model: 'sonnet', messages: [{ role: 'user', content: 'hi' }], logit_bias: 'garbage' }, 'logit_bias'],
  ];
  for (const [name, body, param] of cases) {
    it(`${name} → 400 naming ${param}, no CLI spawned`, async () => {
      const before = recordedPids(t.recordDir).runs.length;
      const res = await chat(body);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.error.type, 'invalid_request_error');
      assert.equal(res.body.error.param, param);
      assert.equal(recordedPids(t.recordDir).runs.length, before, 'no CLI was spawned');
      assert.equal(t.daemon.children, 0);
    });
  }
  it('a well-formed tool history is still answered', async () => {
    const before = recordedPids(t.recordDir).runs.length;
    const res = await chat({
      model: 'sonnet',
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'rain' },
      ],
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(recordedPids(t.recordDir).runs.length, before + 1);
  });
});

// The opt-in SSE keepalive: a comment line while the CLI is silent, which proxies that cut idle
// streams take as traffic and every SSE client skips.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';

let t: TestDaemon;
before(async () => {
  // The fake's first words come 1.5 s after it starts; the keepalive is every second.
  t = await startTestDaemon({ config: { sseKeepalive: 1 }, claudeEnv: { FAKE_CLAUDE_DELAY_MS: '1500' } });
});
after(async () => t.close());

describe('--sse-keepalive', () => {
  it('sends a comment line during a silence; the stream still parses in the openai client', async () => {
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'sonnet',
        stream: true,
        messages: [{ role: 'user', content: 'take your time [[fake:slow]]' }],
      }),
    });
    assert.equal(res.status, 200);
    const body = await res.text();
    assert.ok(
      body.indexOf(': keepalive\n\n') !== -1 && body.indexOf(': keepalive\n\n') < body.indexOf('data: '),
      'a keepalive came before the first event',
    );
    assert.ok(body.trimEnd().endsWith('data: [DONE]'));
    const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
    let text = '';
    let role: string | undefined;
    for await (const ch of await client.chat.completions.create({
      model: 'sonnet',
      stream: true,
      messages: [{ role: 'user', content: 'again [[fake:slow]]' }],
    })) {
      role ??= ch.choices[0]?.delta.role;
      text += ch.choices[0]?.delta.content ?? '';
    }
    assert.equal(role, 'assistant', 'the first chunk still announces the role');
    assert.match(text, /Hello from fake claude/);
  });

  it('a stream the keepalive started reports a later failure in-band', async () => {
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'sonnet',
        stream: true,
        messages: [{ role: 'user', content: 'x [[fake:api-retry-forever]]' }],
      }),
    });
    assert.equal(res.status, 200, 'the keepalive started the stream');
    const reader = res.body!.getReader();
    const { value } = await reader.read();
    assert.match(new TextDecoder().decode(value), /^: keepalive/);
    await reader.cancel();
  });
});

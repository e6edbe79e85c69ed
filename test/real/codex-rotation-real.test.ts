// The real `codex` (pinned) across olp's session rotations, against the loopback Responses
// stand-in: past the turn cap the slot forks the thread (`codex exec fork`), so the thread's history
// goes on and only the new turn is sent; the fork's usage is the turn's own (codex carries the old
// thread's running total into the fork), and the old rollout stays, which the fork reads on every
// later resume.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { it } from 'node:test';
import OpenAI from 'openai';
import { startTestDaemon } from '../support/daemon.js';
import { assertUnderstood } from '../support/real.js';
import { REAL_CODEX } from '../support/paths.js';
import { codexStandInConfig, CODEX_STAND_IN_ENV, startResponsesStandIn } from '../support/responses-stand-in.js';

for (const workers of [false, true]) {
  it(`real codex: seven turns with a turn cap of 2 fork the thread three times and keep its history (${workers ? 'live workers' : 'a process a turn'})`, async () => {
    assert.ok(existsSync(REAL_CODEX), `the real codex CLI is missing at ${REAL_CODEX}: run npm ci`);
    const api = await startResponsesStandIn();
    const t = await startTestDaemon({
      config: {
        codexBin: REAL_CODEX,
        timeout: 60,
        idleTimeout: 30,
        sessionPool: 1,
        sessionTurnCap: 2,
        codexConfig: codexStandInConfig(api.url),
        ...(workers ? { workers: true, prestart: false } : {}),
      },
      codexEnv: CODEX_STAND_IN_ENV,
    });
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'system', content: 'be brief' }];
      for (let i = 1; i <= 7; i++) {
        messages.push({ role: 'user', content: `word number ${i}` });
        const before = api.requests.length;
        const res = await client.chat.completions.create({ model: 'codex', messages });
        assert.equal(res.choices[0]!.message.content, `responses stand-in heard: word number ${i}`);
        // The stand-in reports 1,200 input tokens a call: each turn's own, not the thread's running total.
        assert.equal(res.usage?.prompt_tokens, 1200, `turn ${i}'s usage`);
        const sent = JSON.stringify(api.requests.slice(before).at(-1)?.input);
        for (let j = 1; j <= i; j++)
          assert.match(sent, new RegExp(`word number ${j}\\b`), `turn ${i} carried turn ${j}`);
        assert.doesNotMatch(sent, /<conversation>/, 'never re-sent');
        messages.push({ role: 'assistant', content: res.choices[0]!.message.content! });
      }
      const rotations = t.logs.filter((l) => l.event === 'request').map((l) => l.rotation ?? null);
      assert.deepEqual(rotations, ['initial', null, 'turn_cap', null, 'turn_cap', null, 'turn_cap']);
      assertUnderstood(t.logs);
    } finally {
      await t.close();
      await api.close();
    }
  });
}

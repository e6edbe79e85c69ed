// Plan limits on the real `claude` binary (pinned devDependency) with a subscription-style login
// (CLAUDE_CODE_OAUTH_TOKEN) against a loopback stand-in that sends the Anthropic API's unified
// rate-limit headers: the CLI's rate_limit_event becomes olp's plan state, a spent window is one
// 429 that says when to come back, and no CLI starts (nor reaches the API) until then.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { claudeStandInEnv, startAnthropicStandIn, type StandIn } from '../support/anthropic-stand-in.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { assertNoClaudeTmp, assertUnderstood, claudeTmp } from '../support/real.js';
import { REAL_CLAUDE, REAL_CLAUDE_VERSION } from '../support/paths.js';

let api: StandIn;
let t: TestDaemon;

const tmpBefore = claudeTmp();
before(async () => {
  assert.ok(existsSync(REAL_CLAUDE), `the real claude CLI is missing at ${REAL_CLAUDE}: run npm ci`);
  api = await startAnthropicStandIn();
  t = await startTestDaemon({
    config: { claudeBin: REAL_CLAUDE, timeout: 60, idleTimeout: 30 },
    claudeEnv: claudeStandInEnv(api.url, 'oauth'),
  });
});
after(async () => {
  const logs = t?.logs ?? [];
  await t?.close();
  await api?.close();
  assertUnderstood(logs);
  assertNoClaudeTmp(tmpBefore);
});

const ask = (content: string) =>
  fetch(`${t.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content }] }),
  });

describe(`real claude ${REAL_CLAUDE_VERSION} on a subscription plan`, () => {
  it('a window past its warning threshold: the answer carries its status, window, reset and utilization', async () => {
    api.plan = {
      status: 'allowed_warning',
      claim: 'five_hour',
      resetInS: 4 * 3600,
      utilization: 0.91,
      surpassedThreshold: 0.9,
    };
    const res = await ask('how much is left?');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-olp-plan-status'), 'allowed_warning');
    assert.equal(res.headers.get('x-olp-plan-window'), 'five_hour');
    assert.equal(res.headers.get('x-olp-plan-utilization'), '0.91');
    assert.ok(Date.parse(res.headers.get('x-olp-plan-reset')!) > Date.now() + 3.9 * 3600_000);
    assert.ok(t.logs.some((l) => l.event === 'plan_utilization' && l.threshold === 0.8));
  });

  it('a spent window: one 429 with Retry-After to the reset and the CLI’s words; then no CLI and no API call until it resets', async () => {
    api.plan = { status: 'rejected', claim: 'five_hour', resetInS: 3600 };
    const res = await ask('one more?');
    assert.equal(res.status, 429);
    const retryAfter = Number(res.headers.get('retry-after'));
    assert.ok(retryAfter > 3590 && retryAfter <= 3600, `Retry-After ${retryAfter}`);
    assert.equal(res.headers.get('x-should-retry'), 'false');
    const body = (await res.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'plan_limit_reached');
    assert.match(body.error.message, /the 5-hour window is spent.*You've hit your (session|5-hour) limit · resets/);
    const calls = api.requests.length;
    const spawns = t.logs.filter((l) => l.event === 'spawned').length;
    const again = await ask('and now?');
    assert.equal(again.status, 429);
    assert.equal(api.requests.length, calls, 'the API was not asked again');
    assert.equal(t.logs.filter((l) => l.event === 'spawned').length, spawns, 'no CLI started');
  });
});

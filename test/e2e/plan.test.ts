// Plan limits: what the CLI says of its subscription window becomes a 429 that says when to come
// back (and no CLI is started until then), headers on every answer, and a guard on paid extra usage.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { recordedPids } from '../support/procs.js';

const post = (t: TestDaemon, body: Record<string, unknown>, token = t.token) =>
  fetch(`${t.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sonnet', ...body }),
  });
const ask = (t: TestDaemon, content: string, extra: Record<string, unknown> = {}, token?: string) =>
  post(t, { messages: [{ role: 'user', content }], ...extra }, token);

describe('a spent plan window', () => {
  it('is one 429 that says when it resets; until then no CLI starts, streamed or not; the state survives a restart', async () => {
    let t = await startTestDaemon();
    try {
      const started = Date.now();
      const first = await ask(t, 'hello [[fake:plan-spent]]');
      assert.equal(first.status, 429);
      const retryAfter = Number(first.headers.get('retry-after'));
      assert.ok(retryAfter > 3590 && retryAfter <= 3600, `Retry-After ${retryAfter}`);
      assert.equal(first.headers.get('x-should-retry'), 'false');
      const reset = Date.parse(first.headers.get('x-olp-plan-reset')!);
      assert.ok(Math.abs(reset - (started + 3600_000)) < 5000);
      const body = (await first.json()) as { error: { code: string; type: string; message: string } };
      assert.equal(body.error.code, 'plan_limit_reached');
      assert.equal(body.error.type, 'rate_limit_error');
      assert.match(body.error.message, /the 5-hour window is spent\. It resets at \d{4}-\d\d-\d\dT/);
      assert.match(body.error.message, /You've hit your session limit · resets \d+:\d\d[ap]m \(UTC\)/);
      const spawns = recordedPids(t.recordDir).runs.length;

      const again = await ask(t, 'hello again');
      assert.equal(again.status, 429);
      assert.equal(((await again.json()) as { error: { code: string } }).error.code, 'plan_limit_reached');
      assert.equal(again.headers.get('x-olp-plan-status'), 'rejected');
      const streamed = await ask(t, 'streamed', { stream: true });
      assert.equal(streamed.status, 429, 'the status and envelope come before any SSE bytes');
      assert.match(streamed.headers.get('content-type') ?? '', /application\/json/);
      assert.equal(recordedPids(t.recordDir).runs.length, spawns, 'no CLI started while the window is spent');

      const me = (await (
        await fetch(`${t.url}/olp/me`, { headers: { authorization: `Bearer ${t.token}` } })
      ).json()) as { plan: Record<string, { status: string; window: string; resetsAt: string }> };
      assert.equal(me.plan.claude?.status, 'rejected');
      assert.equal(me.plan.claude?.window, 'five_hour');
      await new Promise((r) => setTimeout(r, 50));
      const rows = [...t.daemon.store.usage.export({ scope: { all: true } })].filter(
        (r) => r.error_code === 'plan_limit_reached',
      );
      assert.equal(rows.length, 3);
      assert.ok(
        rows.every((r) => r.usage.total_tokens === 0),
        'nothing charged',
      );

      // A restart remembers the spent window.
      const base = t.base;
      const token = t.token;
      await t.close(true);
      t = await startTestDaemon({ base });
      t.token = token;
      const afterRestart = await ask(t, 'after a restart');
      assert.equal(afterRestart.status, 429);
      assert.equal(recordedPids(t.recordDir).runs.length, spawns);
    } finally {
      await t.close();
    }
  });

  it('lifts at its reset (told to retry when that is under a minute away); a fallback chain goes to the other CLI meanwhile', async () => {
    const t = await startTestDaemon({
      claudeEnv: { FAKE_CLAUDE_PLAN_RESET_S: '2' },
      config: { fallbacks: { opus: ['codex'] } },
    });
    try {
      const first = await ask(t, 'hi [[fake:plan-spent]]');
      assert.equal(first.status, 429);
      assert.ok(Number(first.headers.get('retry-after')) <= 2);
      assert.equal(first.headers.get('x-should-retry'), 'true');
      const viaCodex = await post(t, { model: 'opus', messages: [{ role: 'user', content: 'to the fallback' }] });
      assert.equal(viaCodex.status, 200);
      assert.match(
        ((await viaCodex.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content,
        /fake codex/,
      );
      await new Promise((r) => setTimeout(r, 2100));
      const later = await ask(t, 'after the reset');
      assert.equal(later.status, 200);
    } finally {
      await t.close();
    }
  });
});

describe('plan state on every answer', () => {
  it('shows status, window, reset and utilization once the CLI reported them, and warns past 80 %', async () => {
    const t = await startTestDaemon({
      claudeEnv: { FAKE_CLAUDE_PLAN: JSON.stringify({ status: 'allowed', utilization: 0.86, resetsIn: 7200 }) },
    });
    try {
      const client = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
      const { response } = await client.chat.completions
        .create({ model: 'sonnet', messages: [{ role: 'user', content: 'hi' }] })
        .withResponse();
      assert.equal(response.headers.get('x-olp-plan-status'), 'allowed');
      assert.equal(response.headers.get('x-olp-plan-window'), 'five_hour');
      assert.equal(response.headers.get('x-olp-plan-utilization'), '0.86');
      assert.ok(Date.parse(response.headers.get('x-olp-plan-reset')!) > Date.now() + 7000_000);
      const { response: streamed } = await client.chat.completions
        .create({ model: 'sonnet', messages: [{ role: 'user', content: 'hi' }], stream: true })
        .withResponse();
      assert.equal(
        streamed.headers.get('x-olp-plan-utilization'),
        '0.86',
        'streamed answers carry the last-known state',
      );
      assert.equal(t.logs.filter((l) => l.event === 'plan_utilization').length, 1, 'warned once for the window');
    } finally {
      await t.close();
    }
  });
});

describe('paid extra usage', () => {
  it('a member key may not draw on it unless allowed; an owner may; the turns that did are tagged', async () => {
    // As claude 2.1.197 reports it: the window rejected, extra usage allowed and in use.
    const t = await startTestDaemon({
      claudeEnv: {
        FAKE_CLAUDE_PLAN: JSON.stringify({
          status: 'rejected',
          overageStatus: 'allowed',
          isUsingOverage: true,
          overageInUse: true,
          rateLimitType: 'five_hour',
          resetsIn: 3600,
        }),
      },
    });
    try {
      const member = t.daemon.store.keys.add('kid', 'member').token;
      // The owner's turn is where olp learns the plan is on extra usage.
      const owners = await ask(t, 'owner first');
      assert.equal(owners.status, 200);
      assert.equal(owners.headers.get('x-olp-plan-overage'), 'true');
      const spawns = recordedPids(t.recordDir).runs.length;
      const refused = await ask(t, 'member now', {}, member);
      assert.equal(refused.status, 429);
      const err = ((await refused.json()) as { error: { code: string; message: string } }).error;
      assert.equal(err.code, 'plan_limit_reached');
      assert.match(err.message, /only paid extra usage left.*may not draw on it/);
      assert.equal(recordedPids(t.recordDir).runs.length, spawns, 'no CLI started for the member');
      assert.equal((await ask(t, 'owner again')).status, 200);
      t.daemon.store.keys.update('kid', { policy: { overage: 'allow' } });
      assert.equal((await ask(t, 'member allowed', {}, member)).status, 200);
      await new Promise((r) => setTimeout(r, 50));
      const ok = [...t.daemon.store.usage.export({ scope: { all: true } })].filter((r) => r.outcome === 'ok');
      assert.ok(ok.length === 3 && ok.every((r) => r.overage), 'turns on extra usage are tagged in the ledger');
    } finally {
      await t.close();
    }
  });
});

describe('codex usage limits', () => {
  it('a spent ChatGPT limit is plan_limit_reached with the reset from its words; no codex starts until then', async () => {
    const t = await startTestDaemon();
    try {
      const first = await post(t, { model: 'codex', messages: [{ role: 'user', content: 'hi [[fake:usage-limit]]' }] });
      assert.equal(first.status, 429);
      const retryAfter = Number(first.headers.get('retry-after'));
      assert.ok(retryAfter > 3500 && retryAfter <= 3600, `Retry-After ${retryAfter}`);
      const err = ((await first.json()) as { error: { code: string; message: string } }).error;
      assert.equal(err.code, 'plan_limit_reached');
      assert.match(err.message, /You’ve hit your usage limit/);
      const spawns = recordedPids(t.recordDir).runs.length;
      const again = await post(t, { model: 'codex', messages: [{ role: 'user', content: 'again' }] });
      assert.equal(again.status, 429);
      assert.equal(recordedPids(t.recordDir).runs.length, spawns);
      // claude's login is another plan: untouched.
      assert.equal((await ask(t, 'claude still works')).status, 200);
    } finally {
      await t.close();
    }
  });

  it("an app-server worker reports the plan's windows: the headers show the fuller one", async () => {
    const limits = {
      primary: { usedPercent: 43, windowDurationMins: 300, resetsAt: Math.floor(Date.now() / 1000) + 3600 },
      secondary: { usedPercent: 81, windowDurationMins: 10080, resetsAt: Math.floor(Date.now() / 1000) + 86400 },
    };
    const t = await startTestDaemon({
      config: { workers: true, prestart: false },
      codexEnv: { FAKE_CODEX_RATE_LIMITS: JSON.stringify(limits) },
    });
    try {
      const messages = [{ role: 'user', content: 'first' }];
      const r1 = await post(t, { model: 'codex', messages });
      const reply = ((await r1.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
      for (let i = 0; i < 100 && !t.logs.some((l) => l.event === 'worker_ready' || l.event === 'worker_started'); i++)
        await new Promise((r) => setTimeout(r, 30));
      await new Promise((r) => setTimeout(r, 300));
      const r2 = await post(t, {
        model: 'codex',
        messages: [...messages, { role: 'assistant', content: reply }, { role: 'user', content: 'second' }],
      });
      assert.equal(r2.status, 200);
      assert.equal(t.logs.filter((l) => l.event === 'request').at(-1)?.run, 'warm');
      const r3 = await post(t, { model: 'codex', messages: [{ role: 'user', content: 'third' }] });
      assert.equal(r3.headers.get('x-olp-plan-window'), 'seven_day');
      assert.equal(r3.headers.get('x-olp-plan-utilization'), '0.81');
      assert.equal(r3.headers.get('x-olp-plan-status'), 'allowed_warning');
    } finally {
      await t.close();
    }
  });
});

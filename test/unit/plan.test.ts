import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createClaudeParser, createCodexParser } from '../../src/backends/index.js';
import { toCodexPlanReport } from '../../src/backends/codex/live.js';
import { createLogger } from '../../src/log/index.js';
import { createPlans, resetFromText } from '../../src/plan/index.js';
import { openStore } from '../../src/store/index.js';
import { REFERENCE } from '../support/paths.js';
import { Writable } from 'node:stream';

const exit = { reason: 'exit' as const, exitCode: 1, signal: null, stderr: '', pid: 1, durationMs: 5 };

function parse(file: string) {
  const p = createClaudeParser();
  const events = readFileSync(join(REFERENCE, file), 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((l) => p.push(l));
  return {
    plans: events.filter((e) => e.type === 'plan').map((e) => (e as { report: unknown }).report),
    outcome: p.finish(exit),
  };
}

describe("claude's plan reports", () => {
  it('2.1.197 allowed: status, window and reset; no utilization', () => {
    assert.deepEqual(parse('claude-2.1.197-stream-rate-limit-allowed-oauth.jsonl').plans, [
      { status: 'allowed', window: 'five_hour', resetsAt: 1796230971000, utilization: null, overage: false },
    ]);
  });
  it('2.1.332 allowed: the window’s utilization and warning status from unifiedWindows', () => {
    assert.deepEqual(parse('claude-2.1.332-stream-rate-limit-allowed-oauth.jsonl').plans, [
      { status: 'allowed_warning', window: 'five_hour', resetsAt: 1796230973000, utilization: 0.93, overage: false },
    ]);
  });
  for (const v of ['2.1.197', '2.1.332']) {
    it(`${v} rejected: the CLI's words join the report, and the turn is plan_limit_reached, not a rate limit`, () => {
      const { plans, outcome } = parse(`claude-${v}-stream-rate-limit-rejected-oauth.jsonl`);
      const last = plans.at(-1) as { status: string; message: string; resetsAt: number };
      assert.equal(last.status, 'rejected');
      assert.match(last.message, /^You've hit your (session|5-hour) limit · resets 5:02pm \(UTC\)$/);
      assert.equal(outcome.ok, false);
      const err = (outcome as { error: { code: string; headers: Record<string, string>; message: string } }).error;
      assert.equal(err.code, 'plan_limit_reached');
      assert.equal(err.headers['x-olp-plan-reset'], new Date(last.resetsAt).toISOString());
    });
  }
});

describe('reset times in the CLIs’ words', () => {
  const now = Date.UTC(2026, 11, 3, 10, 30);
  it('the next such time, in UTC', () => {
    assert.equal(
      resetFromText("You've hit your session limit · resets 4:19pm (UTC)", now),
      Date.UTC(2026, 11, 3, 16, 19),
    );
    assert.equal(resetFromText("You've hit your usage limit… try again at 9:05 AM.", now), Date.UTC(2026, 11, 4, 9, 5));
    assert.equal(resetFromText('resets 12am (UTC)', now), Date.UTC(2026, 11, 4, 0, 0));
  });
  it('dates: claude’s weekly reset (UTC) and codex’s later days (local time)', () => {
    assert.equal(
      resetFromText("You've hit your weekly limit · resets Dec 6, 7:28am (UTC)", now),
      Date.UTC(2026, 11, 6, 7, 28),
    );
    assert.equal(resetFromText('try again at Dec 5th, 2026 3:04 PM.', now), new Date(2026, 11, 5, 15, 4).getTime());
    assert.equal(
      resetFromText('resets Jan 2, 1am (UTC)', now),
      Date.UTC(2027, 0, 2, 1, 0),
      'a date past this year’s is next year’s',
    );
  });
  it('none for another time zone or no time', () => {
    assert.equal(resetFromText('resets 4pm (Europe/Berlin)', now), undefined);
    assert.equal(resetFromText('rate limited', now), undefined);
  });
});

describe("codex's usage limit", () => {
  it('exec: the error line is a rejected plan report and the turn is plan_limit_reached', () => {
    const p = createCodexParser();
    const message =
      'You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 8:30 AM.';
    const events = [
      JSON.stringify({ type: 'thread.started', thread_id: 't1' }),
      JSON.stringify({ type: 'turn.started' }),
      JSON.stringify({ type: 'error', message }),
      JSON.stringify({ type: 'turn.failed', error: { message } }),
    ].flatMap((l) => p.push(l));
    const plans = events.filter((e) => e.type === 'plan');
    assert.equal(plans.length, 1);
    assert.equal((plans[0] as { report: { status: string } }).report.status, 'rejected');
    const outcome = p.finish(exit);
    assert.equal(!outcome.ok && outcome.error.code, 'plan_limit_reached');
  });
  it('app-server: rateLimits/updated gives the fuller window', () => {
    assert.deepEqual(
      toCodexPlanReport({
        primary: { usedPercent: 43, windowDurationMins: 300, resetsAt: 100 },
        secondary: { usedPercent: 17, windowDurationMins: 10080, resetsAt: 200 },
      }),
      { status: 'allowed', window: 'five_hour', resetsAt: 100_000, utilization: 0.43, overage: false },
    );
    assert.equal(toCodexPlanReport({ primary: null, secondary: null }), undefined);
  });
});

describe('plan state', () => {
  const quiet = () => createLogger('silent', new Writable({ write: (_c, _e, cb) => cb() }));
  it('refuses while spent, lifts at the reset (by the clock given), and is read back after a restart', () => {
    const dir = mkdtempSync(join(tmpdir(), 'olp-plan-'));
    let clock = Date.UTC(2026, 11, 3, 12);
    const store = openStore(dir);
    const plans = createPlans({ store: store.plans, logger: quiet(), now: () => clock });
    plans.report('claude', {
      status: 'rejected',
      window: 'seven_day',
      resetsAt: clock + 90_000,
      utilization: 1,
      overage: false,
      message: "You've hit your weekly limit",
    });
    const err = plans.refusal('claude', 'allow')!;
    assert.equal(err.code, 'plan_limit_reached');
    assert.equal(err.retryAfter, 90);
    assert.equal(err.retryable, false);
    assert.match(err.message, /the weekly window is spent/);
    assert.equal(plans.refusal('codex', 'allow'), undefined);
    store.close();
    const again = openStore(dir);
    const restarted = createPlans({ store: again.plans, logger: quiet(), now: () => clock });
    assert.equal(restarted.refusal('claude', 'allow')?.retryAfter, 90);
    clock += 30_000;
    assert.equal(restarted.refusal('claude', 'allow')?.retryable, true, 'a minute or less away: worth a retry');
    clock += 60_000;
    assert.equal(restarted.refusal('claude', 'allow'), undefined);
    assert.deepEqual(restarted.headers('claude'), {});
    again.close();
  });
  it('a spent per-model window (weekly Opus) does not hold the other models back; a reset never said expires in an hour', () => {
    let clock = 1_000_000;
    const store = openStore(mkdtempSync(join(tmpdir(), 'olp-plan-')));
    const plans = createPlans({ store: store.plans, logger: quiet(), now: () => clock });
    plans.report('claude', {
      status: 'rejected',
      window: 'seven_day_opus',
      resetsAt: clock + 86_400_000,
      utilization: 1,
      overage: false,
    });
    assert.equal(plans.refusal('claude', 'allow'), undefined);
    assert.equal(plans.headers('claude')['x-olp-plan-status'], 'rejected');
    plans.report('codex', {
      status: 'rejected',
      window: null,
      resetsAt: null,
      utilization: null,
      overage: false,
      message: 'You’ve hit your usage limit.',
    });
    assert.equal(plans.refusal('codex', 'allow'), undefined, 'no known reset: the CLI is asked');
    assert.equal(plans.view(null).codex?.status, 'rejected');
    clock += 3600_000;
    assert.equal(plans.view(null).codex, undefined, 'shown as spent for an hour at most');
    store.close();
  });
  it('overage: refused only for keys that deny it; utilization kept across reports of the same window', () => {
    const store = openStore(mkdtempSync(join(tmpdir(), 'olp-plan-')));
    const plans = createPlans({ store: store.plans, logger: quiet(), now: () => 1000 });
    plans.report('claude', {
      status: 'allowed',
      window: 'five_hour',
      resetsAt: 10_000_000,
      utilization: 0.5,
      overage: false,
    });
    plans.report('claude', {
      status: 'allowed',
      window: 'five_hour',
      resetsAt: 10_000_000,
      utilization: null,
      overage: true,
    });
    assert.equal(plans.headers('claude')['x-olp-plan-utilization'], '0.5');
    assert.equal(plans.refusal('claude', 'allow'), undefined);
    assert.match(plans.refusal('claude', 'deny')!.message, /paid extra usage/);
    store.close();
  });
});

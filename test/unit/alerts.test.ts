// Alerts as pure parts: which thresholds a share has reached, the budget and plan alerts with their
// periods, each format's request, the once-a-period claim in the store, the settings, and the
// delivery's bounded queue and clean stop.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  createAlertDelivery,
  createAlerts,
  reachedThresholds,
  toAlertRequest,
  toBudgetAlerts,
  toPlanAlerts,
  type Alert,
} from '../../src/alerts/index.js';
import { parseConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import { openMemoryStore, openStore, type PlanRow } from '../../src/store/index.js';

const NOW = Date.UTC(2026, 11, 4, 21, 30);
const DAY = Date.UTC(2026, 11, 4);
const MONTH = Date.UTC(2026, 11, 1);

function sink() {
  const lines: Record<string, unknown>[] = [];
  const out = new Writable({
    write(c: Buffer, _e, cb) {
      for (const l of c.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { lines, logger: createLogger('info', out) };
}

const plan = (p: Partial<PlanRow>): PlanRow => ({
  backend: 'claude',
  status: 'allowed',
  window: 'five_hour',
  resetsAt: NOW + 2 * 3600_000,
  utilization: null,
  overage: false,
  message: null,
  updatedAt: NOW,
  ...p,
});

describe('alert thresholds and periods', () => {
  it('a share reaches the thresholds at or below it, exactly at the percent', () => {
    for (const [share, want] of [
      [0.79, []],
      [0.8, [80]],
      [0.999, [80]],
      [1, [80, 100]],
      [1.4, [80, 100]],
    ] as const)
      assert.deepEqual(reachedThresholds(share, [80, 100]), want, `share ${share}`);
  });

  it("budget alerts: the day's and the month's, each with its period, the message a person reads", () => {
    const spent: Record<number, number> = { [DAY]: 41_500, [MONTH]: 100_000 };
    const got = toBudgetAlerts({
      keyId: 'k1',
      keyName: 'kid',
      policy: { dailyTokens: 50_000, monthlyTokens: 1_000_000 },
      tokensSince: (id, since) => (id === 'k1' ? spent[since]! : 0),
      thresholds: [80, 100],
      now: NOW,
    });
    assert.deepEqual(
      got.map((p) => [p.id, p.periodEnd]),
      [['budget k1 day 80', DAY + 86400_000]],
      'the month is at 10 %',
    );
    const a = got[0]!.alert;
    assert.equal(a.message, 'kid has used 83 % of the daily budget (41,500 of 50,000 tokens); it resets at 00:00 UTC');
    assert.deepEqual(a.period, {
      name: 'day',
      start: '2026-12-04T00:00:00.000Z',
      resets_at: '2026-12-05T00:00:00.000Z',
    });
    assert.deepEqual([a.used, a.limit, a.share, a.subject], [41_500, 50_000, 0.83, { key: 'kid' }]);

    spent[MONTH] = 1_000_000;
    spent[DAY] = 60_000;
    const all = toBudgetAlerts({
      keyId: 'k1',
      keyName: 'kid',
      policy: { dailyTokens: 50_000, monthlyTokens: 1_000_000 },
      tokensSince: (_id, since) => spent[since]!,
      thresholds: [80, 100],
      now: NOW,
    });
    assert.deepEqual(
      all.map((p) => p.id),
      ['budget k1 day 80', 'budget k1 day 100', 'budget k1 month 80', 'budget k1 month 100'],
    );
    assert.equal(
      all[1]!.alert.message,
      'kid has spent the daily budget (60,000 of 50,000 tokens); it resets at 00:00 UTC',
    );
    assert.equal(
      all[3]!.alert.message,
      'kid has spent the monthly budget (1,000,000 of 1,000,000 tokens); it resets on 2027-01-01 at 00:00 UTC',
    );
    assert.equal(all[3]!.periodEnd, Date.UTC(2027, 0, 1));
  });

  it('a key without a budget has none', () => {
    assert.deepEqual(
      toBudgetAlerts({ keyId: 'k', keyName: 'k', policy: {}, tokensSince: () => 1e9, thresholds: [80], now: NOW }),
      [],
    );
  });

  it('plan alerts: the share said, a spent window at 100 %, its period its reset, the login named', () => {
    assert.deepEqual(toPlanAlerts('claude', plan({ utilization: 0.5 }), [90, 100], NOW), []);
    assert.deepEqual(toPlanAlerts('claude', plan({ utilization: null }), [90, 100], NOW), [], 'no share said');
    const at92 = toPlanAlerts('claude@alice', plan({ utilization: 0.92 }), [90, 100], NOW);
    assert.deepEqual(
      at92.map((p) => [p.id, p.periodEnd]),
      [['plan claude@alice five_hour 90', NOW + 2 * 3600_000]],
    );
    const a = at92[0]!.alert;
    assert.deepEqual(a.subject, { login: 'alice', cli: 'claude' });
    assert.equal(a.message, 'claude (login alice) has used 92 % of the 5-hour window; it resets at 23:30 UTC');
    assert.deepEqual(a.period, {
      name: 'window',
      start: null,
      resets_at: '2026-12-04T23:30:00.000Z',
      window: 'five_hour',
    });

    const spent = toPlanAlerts(
      'codex',
      plan({ status: 'rejected', window: 'seven_day', utilization: 0.97 }),
      [90, 100],
      NOW,
    );
    assert.deepEqual(
      spent.map((p) => p.id),
      ['plan codex seven_day 90', 'plan codex seven_day 100'],
    );
    assert.deepEqual(spent[1]!.alert.subject, { login: null, cli: 'codex' });
    assert.equal(spent[1]!.alert.share, 1);
    assert.equal(
      spent[1]!.alert.message,
      "codex (the machine's login) has spent the weekly window; it resets at 23:30 UTC",
    );

    const unknown = toPlanAlerts('claude', plan({ status: 'rejected', resetsAt: null }), [100], NOW);
    assert.equal(unknown[0]!.periodEnd, NOW + 3600_000, 'a reset not said: an hour');
    assert.equal(unknown[0]!.alert.period.resets_at, null);
  });
});

describe('alert bodies', () => {
  const alert = (threshold: number): Alert =>
    toBudgetAlerts({
      keyId: 'k1',
      keyName: 'kid',
      policy: { dailyTokens: 100 },
      tokensSince: () => threshold,
      thresholds: [threshold],
      now: NOW,
    })[0]!.alert;

  it('json is the alert; slack and discord the message; ntfy plain text with its headers', () => {
    const a = alert(80);
    const json = toAlertRequest('json', a);
    assert.deepEqual(JSON.parse(json.body), a);
    assert.equal(json.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(toAlertRequest('slack', a).body), { text: a.message });
    assert.deepEqual(JSON.parse(toAlertRequest('discord', a).body), { content: a.message });
    const ntfy = toAlertRequest('ntfy', a);
    assert.equal(ntfy.body, a.message);
    assert.deepEqual(
      [ntfy.headers.title, ntfy.headers.priority, ntfy.headers.tags],
      ['olp: key kid at 80 % of its daily budget', 'default', 'warning'],
    );
    const full = toAlertRequest('ntfy', alert(100));
    assert.deepEqual(
      [full.headers.title, full.headers.priority, full.headers.tags],
      ['olp: key kid reached its daily budget', 'high', 'rotating_light'],
    );
  });
});

describe('alerts sent, in the store', () => {
  it('one claim per period across two processes on one state dir; a new period claims again', () => {
    const dir = mkdtempSync(join(tmpdir(), 'olp-alerts-'));
    const a = openStore(dir);
    const b = openStore(dir);
    try {
      assert.equal(a.alerts.claim('budget k1 day 80', DAY + 86400_000, NOW), true);
      assert.equal(b.alerts.claim('budget k1 day 80', DAY + 86400_000, NOW + 1), false);
      assert.equal(a.alerts.claim('budget k1 day 80', DAY + 86400_000, NOW + 2), false);
      assert.equal(b.alerts.claim('budget k1 day 100', DAY + 86400_000, NOW), true, 'another threshold');
      // A window's reset said a second later is the same window.
      assert.equal(a.alerts.claim('plan claude five_hour 90', NOW + 7200_000, NOW), true);
      assert.equal(b.alerts.claim('plan claude five_hour 90', NOW + 7201_000, NOW + 5000), false);
      const tomorrow = DAY + 86400_000 + 60_000;
      assert.equal(b.alerts.claim('budget k1 day 80', DAY + 2 * 86400_000, tomorrow), true, 'the next day');
      assert.equal(a.alerts.claim('budget k1 day 80', DAY + 2 * 86400_000, tomorrow), false);
    } finally {
      a.close();
      b.close();
    }
  });
});

describe('alert settings', () => {
  it('off by default; thresholds as percent lists; the webhook an http(s) URL', () => {
    const d = parseConfig({ env: {}, readFile: false });
    assert.equal(d.alertWebhook, undefined);
    assert.deepEqual([d.alertFormat, d.alertBudgetThresholds, d.alertPlanThresholds], ['json', [80, 100], [90, 100]]);
    const c = parseConfig({
      env: {
        OLP_ALERT_WEBHOOK: 'https://ntfy.sh/olp-family',
        OLP_ALERT_FORMAT: 'ntfy',
        OLP_ALERT_BUDGET_THRESHOLDS: '100,50,50',
      },
      flags: { alertPlanThresholds: '75' },
      readFile: false,
    });
    assert.deepEqual(
      [c.alertWebhook, c.alertFormat, c.alertBudgetThresholds, c.alertPlanThresholds],
      ['https://ntfy.sh/olp-family', 'ntfy', [50, 100], [75]],
    );
    assert.throws(() => parseConfig({ env: { OLP_ALERT_WEBHOOK: 'ftp://x/y' }, readFile: false }), /OLP_ALERT_WEBHOOK/);
    assert.throws(
      () => parseConfig({ env: { OLP_ALERT_BUDGET_THRESHOLDS: '80,120' }, readFile: false }),
      /OLP_ALERT_BUDGET_THRESHOLDS/,
    );
    assert.throws(() => parseConfig({ env: { OLP_ALERT_FORMAT: 'email' }, readFile: false }), /OLP_ALERT_FORMAT/);
  });
});

describe('alert delivery', () => {
  const a = (threshold: number): Alert => ({
    type: 'olp.alert',
    kind: 'budget',
    subject: { key: 'kid' },
    threshold,
    used: 1,
    limit: 1,
    share: 1,
    period: { name: 'day', start: null, resets_at: null },
    message: 'm',
    at: new Date(NOW).toISOString(),
  });

  it('keeps at most maxPending alerts, drops beyond with a log line, and stops at once on close', async () => {
    const { lines, logger } = sink();
    let calls = 0;
    // A webhook that never answers: each try ends only when it is aborted.
    const hang: typeof fetch = (_url, init) => {
      calls++;
      return new Promise((_r, reject) => init!.signal!.addEventListener('abort', () => reject(init!.signal!.reason)));
    };
    const d = createAlertDelivery({
      url: 'https://hooks.slack.test/services/T0/B0/SECRET',
      logger,
      fetch: hang,
      maxPending: 3,
      closeGraceMs: 50,
    });
    const sent = [1, 2, 3, 4, 5].map((n) => d.send(a(n), { headers: {}, body: '' }));
    assert.deepEqual(sent, [true, true, true, false, false]);
    assert.equal(lines.filter((l) => l.event === 'alert_dropped').length, 2);
    const at = performance.now();
    await d.close();
    assert.ok(performance.now() - at < 1000, 'close does not wait for the webhook');
    assert.equal(calls, 1, 'one at a time');
    assert.equal(d.send(a(9), { headers: {}, body: '' }), false, 'closed');
    const text = JSON.stringify(lines);
    assert.ok(!text.includes('SECRET') && !text.includes('/services/'), text);
    assert.ok(lines.some((l) => l.event === 'alert_failed' && l.host === 'hooks.slack.test'));
  });

  it('a try that gets no answer ends at its timeout, however often memory is collected meanwhile', async () => {
    // Node's `AbortSignal.timeout` inside `AbortSignal.any` can be collected before it fires:
    // the webhook's try would then never end, and no alert after it would be sent.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const { lines, logger } = sink();
    const hang: typeof fetch = (_url, init) =>
      new Promise((_r, reject) => init!.signal!.addEventListener('abort', () => reject(init!.signal!.reason)));
    const d = createAlertDelivery({
      url: 'http://127.0.0.1:9/x',
      logger,
      fetch: hang,
      timeoutMs: 200,
      retryDelayMs: 10,
    });
    d.send(a(80), { headers: {}, body: '' });
    const end = Date.now() + 20_000;
    while (!lines.some((l) => l.event === 'alert_failed') && Date.now() < end) {
      gc();
      await new Promise((r) => setTimeout(r, 20));
    }
    await d.close();
    const failed = lines.find((l) => l.event === 'alert_failed');
    assert.ok(failed, 'the tries ended');
    assert.equal(failed.tries, 2);
    assert.equal(failed.reason, 'no answer in 0.2 s');
  });

  it('tries once more after a failure; a 4xx that will say the same is not tried again', async () => {
    const { lines, logger } = sink();
    const statuses = [503, 200, 404];
    const seen: number[] = [];
    const f: typeof fetch = async () => {
      const s = statuses.shift()!;
      seen.push(s);
      return new Response('x', { status: s });
    };
    const d = createAlertDelivery({ url: 'http://127.0.0.1:9/x', logger, fetch: f, retryDelayMs: 10 });
    d.send(a(80), { headers: {}, body: '' });
    d.send(a(100), { headers: {}, body: '' });
    for (let i = 0; i < 100 && seen.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
    await d.close();
    assert.deepEqual(seen, [503, 200, 404]);
    assert.deepEqual(
      lines
        .filter((l) => l.event === 'alert_sent' || l.event === 'alert_failed')
        .map((l) => [l.event, l.threshold, l.status]),
      [
        ['alert_sent', 80, 200],
        ['alert_failed', 100, 404],
      ],
    );
  });
});

describe('alerts, composed', () => {
  it('a plan window alerts once, its reset said a second later is the same window, a new window alerts again; a key without a budget reads nothing', async () => {
    const { logger } = sink();
    const store = openMemoryStore();
    let t = NOW;
    const posted: string[] = [];
    let reads = 0;
    const alerts = createAlerts({
      webhook: 'https://ntfy.test/topic',
      format: 'ntfy',
      budgetThresholds: [80, 100],
      planThresholds: [90, 100],
      store: {
        alerts: store.alerts,
        usage: {
          tokensSince: () => {
            reads++;
            return 0;
          },
        },
      },
      logger,
      now: () => t,
      delivery: {
        fetch: async (_u: unknown, init?: RequestInit) => {
          posted.push(String(init?.body));
          return new Response('ok');
        },
      },
    });
    try {
      const reset = NOW + 3600_000;
      alerts.afterPlanReport('claude@bob', plan({ utilization: 0.91, resetsAt: reset }));
      alerts.afterPlanReport('claude@bob', plan({ utilization: 0.93, resetsAt: reset + 1000 }));
      t = reset + 60_000;
      alerts.afterPlanReport('claude@bob', plan({ utilization: 0.95, resetsAt: reset + 5 * 3600_000 }));
      alerts.afterUsage({ keyId: 'k', name: 'k', policy: {} });
      alerts.afterUsage({ keyId: 'k', name: 'k', policy: { dailyTokens: null, monthlyTokens: null } });
      for (let i = 0; i < 50 && posted.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(posted, [
        'claude (login bob) has used 91 % of the 5-hour window; it resets at 22:30 UTC',
        'claude (login bob) has used 95 % of the 5-hour window; it resets at 03:30 UTC',
      ]);
      assert.equal(reads, 0, 'no usage read for a key without a budget');
    } finally {
      await alerts.close();
      store.close();
    }
  });
});

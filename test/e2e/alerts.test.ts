// Alerts: a key's budget and a login's plan window crossing a threshold reach the owner's webhook
// once a period (however many requests cross it at once, and across a restart), in the chosen
// format; a webhook that is down or never answers slows no request and is logged by host only.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import type { Alert } from '../../src/alerts/index.js';
import { saveClaudeToken } from '../../src/logins/index.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
}

/** A webhook on loopback: records each POST; `hang` never answers. */
async function startReceiver(mode: 'ok' | 'hang' = 'ok') {
  const got: Received[] = [];
  /** When each request's connection closed (a hung one: when olp gave up on it). */
  const closed: number[] = [];
  const server: Server = createServer((req, res) => {
    req.socket.once('close', () => closed.push(performance.now()));
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      got.push({ headers: req.headers, body });
      if (mode === 'ok') res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    got,
    closed,
    port,
    url: `http://127.0.0.1:${port}/hooks/SECRET-abc123`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const ask = (t: TestDaemon, token: string, content = 'hello') =>
  fetch(`${t.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sonnet', max_tokens: 16, messages: [{ role: 'user', content }] }),
  });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** The tokens one plain request of the fake claude is charged (the budget is sized from it). */
async function tokensPerRequest(t: TestDaemon): Promise<number> {
  const r = await ask(t, t.token);
  const u = ((await r.json()) as { usage: { prompt_tokens: number; completion_tokens: number } }).usage;
  return u.prompt_tokens + u.completion_tokens;
}

/** Sends waves of `n` concurrent requests of the key until its budget is spent; returns each request's duration. */
async function spendBudget(t: TestDaemon, token: string, n = 20): Promise<number[]> {
  const took: number[] = [];
  for (let wave = 0; wave < 20; wave++) {
    const codes = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const at = performance.now();
        const r = await ask(t, token, `hello ${wave}.${i}`);
        took.push(performance.now() - at);
        return r.ok ? 'ok' : ((await r.json()) as { error: { code: string } }).error.code;
      }),
    );
    if (codes.includes('budget_exceeded')) return took;
  }
  throw new Error('the budget was never spent');
}

describe('alerts', () => {
  it('json: 20 concurrent requests crossing 80 % and 100 % of a daily budget send one alert each, not again after a restart', async () => {
    const hook = await startReceiver();
    let t = await startTestDaemon({ config: { alertWebhook: hook.url } });
    try {
      const per = await tokensPerRequest(t);
      const { token } = t.daemon.store.keys.add('kid', 'member', { dailyTokens: per * 10 });
      await spendBudget(t, token);
      await until('two alerts', () => hook.got.length >= 2);
      await sleep(500);
      assert.equal(hook.got.length, 2, hook.got.map((g) => g.body).join('\n'));
      const bodies = hook.got.map((g) => JSON.parse(g.body) as Alert);
      assert.deepEqual(
        bodies.map((b) => b.threshold),
        [80, 100],
      );
      for (const g of hook.got) assert.equal(g.headers['content-type'], 'application/json');
      const [b80, b100] = bodies as [Alert, Alert];
      assert.equal(b80.type, 'olp.alert');
      assert.equal(b80.kind, 'budget');
      assert.deepEqual(b80.subject, { key: 'kid' });
      assert.equal(b80.limit, per * 10);
      assert.ok(b80.used >= per * 8 && b80.share >= 0.8, JSON.stringify(b80));
      assert.equal(b80.period.name, 'day');
      const day = new Date();
      assert.equal(
        b80.period.start,
        new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate())).toISOString(),
      );
      assert.equal(Date.parse(b80.period.resets_at!) - Date.parse(b80.period.start!), 86400_000);
      assert.match(
        b80.message,
        /^kid has used \d+ % of the daily budget \([\d,]+ of [\d,]+ tokens\); it resets at 00:00 UTC$/,
      );
      assert.match(
        b100.message,
        /^kid has spent the daily budget \([\d,]+ of [\d,]+ tokens\); it resets at 00:00 UTC$/,
      );
      assert.ok(b100.used >= b100.limit);
      assert.ok(!Number.isNaN(Date.parse(b80.at)));
      process.stdout.write(`# json body: ${hook.got[0]!.body}\n`);

      // Another process on the same state: the day's alerts are taken. The key's new monthly
      // budget, as spent as its day, shows the check runs there: its alerts come, the day's do not.
      await t.close(true);
      t = await startTestDaemon({ base: t.base, config: { alertWebhook: hook.url } });
      t.daemon.store.keys.update('kid', { policy: { monthlyTokens: per * 10 } });
      const again = await ask(t, token);
      assert.equal(again.status, 429);
      await until('the month alerts', () => hook.got.length >= 4);
      await ask(t, token);
      await sleep(500);
      const after = hook.got.slice(2).map((g) => JSON.parse(g.body) as Alert);
      assert.deepEqual(
        after.map((b) => [b.period.name, b.threshold]),
        [
          ['month', 80],
          ['month', 100],
        ],
        'the day alerts are not sent again after the restart',
      );
      assert.ok(!JSON.stringify(t.logs).includes('SECRET-abc123'), 'the webhook path is never logged');
    } finally {
      await t.close();
      await hook.close();
    }
  });

  it('slack and discord: the message as text, content', async () => {
    for (const format of ['slack', 'discord'] as const) {
      const hook = await startReceiver();
      const t = await startTestDaemon({
        config: { alertWebhook: hook.url, alertFormat: format, alertBudgetThresholds: [50] },
      });
      try {
        const per = await tokensPerRequest(t);
        const { token } = t.daemon.store.keys.add('kid', 'member', { dailyTokens: per * 2 });
        assert.equal((await ask(t, token)).status, 200);
        await until('an alert', () => hook.got.length >= 1);
        await ask(t, token);
        await sleep(300);
        assert.equal(hook.got.length, 1);
        const body = JSON.parse(hook.got[0]!.body) as Record<string, string>;
        assert.deepEqual(Object.keys(body), [format === 'slack' ? 'text' : 'content']);
        assert.match(Object.values(body)[0]!, /^kid has used 50 % of the daily budget/);
        process.stdout.write(`# ${format} body: ${hook.got[0]!.body}\n`);
      } finally {
        await t.close();
        await hook.close();
      }
    }
  });

  it("ntfy: a plan window at 90 % and then spent alerts once each per window, naming a login other than the machine's", async () => {
    const hook = await startReceiver();
    const t = await startTestDaemon({
      config: { alertWebhook: hook.url, alertFormat: 'ntfy' },
      claudeEnv: { FAKE_CLAUDE_PLAN: JSON.stringify({ status: 'allowed', utilization: 0.92, resetsIn: 7200 }) },
    });
    try {
      // Three reports of the same window, their resets a second or so apart as the CLI says them.
      for (let i = 0; i < 3; i++) {
        assert.equal((await ask(t, t.token)).status, 200);
        if (i === 0) await sleep(1100);
      }
      await until('the 90 % alert', () => hook.got.length >= 1);
      const spent = await ask(t, t.token, 'hello [[fake:plan-spent]]');
      assert.equal(spent.status, 429);
      await until('the spent alert', () => hook.got.length >= 2);
      assert.equal((await ask(t, t.token)).status, 429, 'refused without a CLI: no new report');

      saveClaudeToken(t.stateDir, 'alice', `sk-ant-oat01-alice-${'x'.repeat(20)}`);
      t.daemon.store.logins.set('alice', 'claude', 'setup-token');
      const alice = t.daemon.store.keys.add('alice', 'member', {}, 'alice').token;
      assert.equal((await ask(t, alice)).status, 200);
      assert.equal((await ask(t, alice)).status, 200);
      await until('the login alert', () => hook.got.length >= 3);
      await sleep(500);
      assert.equal(hook.got.length, 3, hook.got.map((g) => g.body).join('\n'));

      const [at90, at100, login] = hook.got as [Received, Received, Received];
      assert.equal(at90.headers.title, 'olp: claude at 90 % of its plan window');
      assert.equal(at90.headers.priority, 'default');
      assert.equal(at90.headers.tags, 'warning');
      assert.match(at90.headers['content-type'] ?? '', /^text\/plain/);
      assert.match(
        at90.body,
        /^claude \(the machine's login\) has used 92 % of the 5-hour window; it resets at \d\d:\d\d UTC$/,
      );
      assert.equal(at100.headers.title, 'olp: claude reached its plan window');
      assert.equal(at100.headers.priority, 'high');
      assert.equal(at100.headers.tags, 'rotating_light');
      assert.match(at100.body, /^claude \(the machine's login\) has spent the 5-hour window; it resets at/);
      assert.equal(login.headers.title, 'olp: claude (login alice) at 90 % of its plan window');
      assert.match(login.body, /^claude \(login alice\) has used 92 % of the 5-hour window/);
      process.stdout.write(
        `# ntfy: Title: ${at100.headers.title} | Priority: ${at100.headers.priority} | Tags: ${at100.headers.tags} | ${at100.body}\n`,
      );
    } finally {
      await t.close();
      await hook.close();
    }
  });

  it('json plan body names the login and the window', async () => {
    const hook = await startReceiver();
    const t = await startTestDaemon({
      config: { alertWebhook: hook.url },
      claudeEnv: { FAKE_CLAUDE_PLAN: JSON.stringify({ status: 'allowed', utilization: 0.95, resetsIn: 7200 }) },
    });
    try {
      saveClaudeToken(t.stateDir, 'alice', `sk-ant-oat01-alice-${'x'.repeat(20)}`);
      t.daemon.store.logins.set('alice', 'claude', 'setup-token');
      const alice = t.daemon.store.keys.add('alice', 'member', {}, 'alice').token;
      assert.equal((await ask(t, alice)).status, 200);
      await until('the alert', () => hook.got.length >= 1);
      const b = JSON.parse(hook.got[0]!.body) as Alert;
      assert.equal(b.kind, 'plan');
      assert.deepEqual(b.subject, { login: 'alice', cli: 'claude' });
      assert.equal(b.threshold, 90);
      assert.equal(b.share, 0.95);
      assert.equal(b.period.name, 'window');
      assert.equal(b.period.window, 'five_hour');
      assert.ok(Math.abs(Date.parse(b.period.resets_at!) - (Date.now() + 7200_000)) < 10_000);
      process.stdout.write(`# json plan body: ${hook.got[0]!.body}\n`);
    } finally {
      await t.close();
      await hook.close();
    }
  });

  it('a webhook that never answers delays no request; one that is down is logged by its host only', async () => {
    const slow = await startReceiver('hang');
    let t = await startTestDaemon({ config: { alertWebhook: slow.url } });
    try {
      const per = await tokensPerRequest(t);
      const { token } = t.daemon.store.keys.add('kid', 'member', { dailyTokens: per * 10 });
      const took = await spendBudget(t, token);
      await until('the webhook asked', () => slow.got.length >= 1);
      // With the webhook hanging (olp gives up on it after 5 s), a request is answered before it
      // gives up: a request that waited for the webhook could only be answered after. (A bound on
      // the requests' time would be one on the machine's load: 20 at once take seconds on a busy one.)
      // Sent as a new attempt starts to hang, it has those 5 s to be answered, which even a busy
      // machine gives it. A second key crossing its budget queues alerts of its own, so a new
      // attempt comes however many of the first key's were already tried while it spent.
      const attempts = slow.got.length;
      const kid2 = t.daemon.store.keys.add('kid2', 'member', { dailyTokens: per * 2 });
      assert.equal((await ask(t, kid2.token)).status, 200);
      assert.equal((await ask(t, kid2.token)).status, 200);
      await until('the next webhook attempt', () => slow.got.length > attempts, 60_000);
      const closedBefore = slow.closed.length;
      const asked = await ask(t, t.token, 'while the webhook hangs');
      assert.equal(asked.status, 200);
      assert.equal(slow.closed.length, closedBefore, 'answered while the webhook attempt still hung');
      const worst = Math.max(...took);
      const closing = performance.now();
      await t.close();
      // Close waits at most 1 s for deliveries: it never waits out the webhook's 5 s (and its retry).
      assert.ok(performance.now() - closing < 4500, 'closing does not wait out the webhook');
      process.stdout.write(
        `# requests with a hanging webhook: slowest ${Math.round(worst)} ms; close ${Math.round(performance.now() - closing)} ms\n`,
      );

      const down = await startReceiver();
      const url = down.url;
      await down.close();
      t = await startTestDaemon({ config: { alertWebhook: url } });
      const kid = t.daemon.store.keys.add('kid', 'member', { dailyTokens: per * 2 });
      assert.equal((await ask(t, kid.token)).status, 200);
      assert.equal((await ask(t, kid.token)).status, 200);
      await until('alert_failed', () => t.logs.some((l) => l.event === 'alert_failed'), 8000);
      const failed = t.logs.filter((l) => l.event === 'alert_failed');
      assert.equal(failed[0]!.host, `127.0.0.1:${down.port}`);
      assert.equal(failed[0]!.tries, 2, 'tried once more');
      assert.ok(!JSON.stringify(t.logs).includes('SECRET-abc123'), 'the webhook path is never logged');
      assert.ok(!JSON.stringify(t.logs).includes('/hooks/'), 'the webhook path is never logged');
    } finally {
      await t.close();
      await slow.close();
    }
  });
});

// A member connects their own Claude login on the usage page (in Chromium), with the real `claude`
// (pinned devDependency) against a loopback stand-in of the Anthropic API that records the
// credential of every call: olp's check (`claude auth status`, and the one tiny request the member
// agreed to) and then the member's own requests carry the member's credential, never the machine's;
// a second member connects an Anthropic API key the same way.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import type { Browser, Page } from 'playwright-core';
import { claudeStandInEnv, startAnthropicStandIn, type StandIn } from '../support/anthropic-stand-in.js';
import { CHROMIUM, launchChromium, NO_CHROMIUM, openPage, SCREENSHOTS } from '../support/browser.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { REAL_CLAUDE, REAL_CLAUDE_VERSION } from '../support/paths.js';
import { assertNoClaudeTmp, assertUnderstood, claudeTmp } from '../support/real.js';
import { waitFor } from '../support/wait.js';

const present = existsSync(REAL_CLAUDE);
const skip = !present ? `no claude at ${REAL_CLAUDE}` : CHROMIUM ? false : NO_CHROMIUM;
const MACHINE_KEY = claudeStandInEnv('').ANTHROPIC_API_KEY!;
let api: StandIn;
let t: TestDaemon;
let browser: Browser | undefined;

const tmpBefore = claudeTmp();
before(async () => {
  if (skip) return;
  api = await startAnthropicStandIn();
  t = await startTestDaemon({
    config: { claudeBin: REAL_CLAUDE, timeout: 60, idleTimeout: 30 },
    claudeEnv: claudeStandInEnv(api.url),
  });
  browser = await launchChromium();
});
after(async () => {
  if (skip) return;
  await browser?.close();
  const logs = t?.logs ?? [];
  await t?.close();
  await api?.close();
  assertUnderstood(logs);
  assertNoClaudeTmp(tmpBefore);
});

/** Connects a Claude credential on the member's page, with the tiny check request. */
async function connect(page: Page, kind: 'token' | 'apiKey', secret: string): Promise<void> {
  await page.waitForSelector('#my-login:not([hidden])');
  await page.check(`#ml-claude input[name=kind][value=${kind}]`);
  await page.fill('#ml-claude input[name=secret]', secret);
  await page.check('#ml-claude input[name=check]');
  await page.click('#ml-claude button[type=submit]');
  await waitFor(
    async () => /Claude is connected/.test((await page.textContent('#ml-said')) ?? ''),
    undefined,
    'the page to say Claude is connected',
  );
}

/** The credentials of the stand-in's calls whose text has the marker. */
const carried = (marker: string) =>
  api.requests.filter((r) => JSON.stringify(r.body).includes(marker)).map((r) => r.credential);

describe(`the page's "Your login" on real claude ${REAL_CLAUDE_VERSION}`, { skip }, () => {
  it("a member's pasted token (and another's API key) carry their requests, not the machine's key", async () => {
    const members = {
      alice: { kind: 'token' as const, secret: `sk-ant-oat01-alice-real-${'r'.repeat(24)}` },
      bob: { kind: 'apiKey' as const, secret: `sk-ant-api03-bob-real-${'s'.repeat(24)}` },
    };
    for (const [name, m] of Object.entries(members)) {
      const key = t.daemon.store.keys.add(name, 'member').token;
      const before = api.requests.length;
      const { page, errors } = await openPage(browser!, t.url, key, 'desktop');
      await connect(page, m.kind, m.secret);
      // The check's one tiny request went to the provider with the member's credential.
      const checks = api.requests.slice(before);
      assert.ok(checks.length >= 1, `${name}: the check made a request`);
      assert.deepEqual([...new Set(checks.map((r) => r.credential))], [m.secret], `${name}: the check's credential`);
      if (name === 'alice')
        await page.screenshot({ path: join(SCREENSHOTS, 'my-login-real-claude-connected.png'), fullPage: true });
      assert.deepEqual(errors, []);
      await page.close();

      const client = new OpenAI({ baseURL: t.baseURL, apiKey: key, maxRetries: 0 });
      const a = await client.chat.completions.create({
        model: 'sonnet',
        messages: [{ role: 'user', content: `[${name}] on my own login` }],
      });
      assert.equal(a.choices[0]!.message.content, `stand-in heard: [${name}] on my own login`);
      assert.deepEqual([...new Set(carried(`[${name}]`))], [m.secret], `${name}'s requests carry ${name}'s credential`);
    }
    const owner = new OpenAI({ baseURL: t.baseURL, apiKey: t.token, maxRetries: 0 });
    await owner.chat.completions.create({ model: 'sonnet', messages: [{ role: 'user', content: '[owner] mine' }] });
    assert.deepEqual([...new Set(carried('[owner]'))], [MACHINE_KEY], "the owner's key stays on the machine's");
    const secrets = Object.values(members).map((m) => m.secret);
    assert.equal(
      secrets.some((s) => JSON.stringify(t.logs).includes(s)),
      false,
      'no secret in the log',
    );
    console.log(
      `claude ${REAL_CLAUDE_VERSION} page logins: ${api.requests.length} API calls, credentials ${JSON.stringify(
        [...new Set(api.requests.map((r) => r.credential))].map((c) =>
          c === MACHINE_KEY ? 'machine' : c?.includes('alice') ? 'alice' : c?.includes('bob') ? 'bob' : c,
        ),
      )}`,
    );
  });
});

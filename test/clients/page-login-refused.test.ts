// The usage page when a member's own login was refused by its provider: the member reads it on
// their page (and that the owner renews it), the owner sees it beside the login in the family.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import request from 'supertest';
import { saveClaudeToken } from '../../src/logins/index.js';
import { CHROMIUM, launchChromium, NO_CHROMIUM, openPage, SCREENSHOTS, scrollsSideways } from '../support/browser.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';

let t: TestDaemon;
let browser: Browser | undefined;
let bob: string;

before(async () => {
  t = await startTestDaemon();
  saveClaudeToken(t.stateDir, 'bob', `sk-ant-oat01-revoked-bob-${'x'.repeat(20)}`);
  t.daemon.store.logins.set('bob', 'claude', 'setup-token');
  bob = t.daemon.store.keys.add('bob', 'member', {}, 'bob').token;
  const r = await request(t.url)
    .post('/v1/chat/completions')
    .set('authorization', `Bearer ${bob}`)
    .send({ model: 'sonnet', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(r.status, 503);
  if (CHROMIUM) browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await t.close();
});

describe('the usage page with a refused login', { skip: CHROMIUM ? false : NO_CHROMIUM }, () => {
  it("tells the member their login needs renewing and who does it, and marks it in the owner's family", async () => {
    const member = await openPage(browser!, t.url, bob, 'phone');
    await member.page.waitForSelector('#login-refused:not([hidden])');
    await member.page.waitForSelector('#my-login:not([hidden])');
    const notice = (await member.page.textContent('#login-refused')) ?? '';
    assert.match(notice, /^Anthropic refused the Claude login .*\(401: Invalid API key/);
    assert.match(notice, /your login needs renewing\. Replace it under "Your login" below/);
    assert.match(
      (await member.page.textContent('#failures')) ?? '',
      /login_refused \(503\), 1 time: your login was refused and needs renewing/,
    );
    assert.equal(await scrollsSideways(member.page), false);
    await member.page.screenshot({ path: join(SCREENSHOTS, 'usage-page-login-refused-phone.png'), fullPage: true });
    await member.page.close();
    const owner = await openPage(browser!, t.url, t.token, 'desktop');
    await owner.page.waitForSelector('#family:not([hidden])');
    const rows = await owner.page.$$eval('#members tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')),
    );
    const row = rows.find((r) => r[0] === 'bob');
    assert.equal(row?.[3], 'bob · refused by Anthropic');
    assert.equal(rows.find((r) => r[0] === 'tester')?.[3], "this machine's");
    // The owner's own page has no notice: the machine's login was not refused.
    assert.equal(await owner.page.isHidden('#login-refused'), true);
    await owner.page.screenshot({ path: join(SCREENSHOTS, 'usage-page-login-refused-owner.png'), fullPage: true });
    await owner.page.close();
    assert.deepEqual([...member.errors, ...owner.errors], []);
  });
});

// "Your login" on the usage page in Chromium: a member with nothing but their key connects a Claude
// setup token (and their next request runs on it), connects ChatGPT by a device code (the fake
// codex waits for the code to be "entered"), and leaving the page mid-sign-in ends codex's
// process; the owner sees each member's login state. The secret never comes back to the page.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { CHROMIUM, launchChromium, NO_CHROMIUM, openPage, SCREENSHOTS, scrollsSideways } from '../support/browser.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { waitGone } from '../support/procs.js';
import { waitFor } from '../support/wait.js';

const TOKEN = `sk-ant-oat01-alice-page-${'q'.repeat(24)}`;
const CODE = 'WXYZ-98765';
let t: TestDaemon;
let browser: Browser | undefined;
let alice: string;
let waitFile: string;

before(async () => {
  const scratch = join(SCREENSHOTS, '..', 'my-login-scratch');
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  waitFile = join(scratch, 'device-decision');
  t = await startTestDaemon({
    codexEnv: { FAKE_CODEX_DEVICE_WAIT_FILE: waitFile, FAKE_CODEX_DEVICE_CODE: CODE },
  });
  alice = t.daemon.store.keys.add('alice', 'member').token;
  if (CHROMIUM) browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await t.close();
  rmSync(join(SCREENSHOTS, '..', 'my-login-scratch'), { recursive: true, force: true });
});

/** The claude runs the fake recorded, with the credential each was given. */
function claudeCredentials(): (string | null)[] {
  return readdirSync(t.recordDir)
    .filter((f) => f.endsWith('.json'))
    .map(
      (f) =>
        JSON.parse(readFileSync(join(t.recordDir, f), 'utf8')) as {
          backend?: string;
          credential?: { oauthToken: string | null };
        },
    )
    .filter((r) => r.backend !== 'codex' && r.credential)
    .map((r) => r.credential!.oauthToken);
}

/** Waits until the element's text matches. */
async function until(page: Page, selector: string, re: RegExp): Promise<void> {
  await waitFor(async () => re.test((await page.textContent(selector)) ?? ''), undefined, `${selector} to say ${re}`);
}

describe('a member connects their own login on the page', { skip: CHROMIUM ? false : NO_CHROMIUM }, () => {
  it('pastes a Claude setup token, and their next request runs on it', async () => {
    const { page, errors } = await openPage(browser!, t.url, alice, 'phone');
    await page.waitForSelector('#my-login:not([hidden])');
    assert.match((await page.textContent('#ml-banner')) ?? '', /You are on this machine's login/);
    assert.match((await page.textContent('#ml-status')) ?? '', /run on this machine's login/);
    await page.screenshot({ path: join(SCREENSHOTS, 'my-login-banner-phone.png'), fullPage: true });

    // An API key where the subscription token goes: olp says so next to the field.
    await page.fill('#ml-claude input[name=secret]', 'sk-ant-api03-not-a-token');
    await page.click('#ml-claude button[type=submit]');
    await until(page, '#ml-claude .field-error[data-param="token"]', /API key/);

    await page.fill('#ml-claude input[name=secret]', TOKEN);
    await page.click('#ml-claude button[type=submit]');
    await until(page, '#ml-status', /Your own login 'alice'/);
    assert.match((await page.textContent('#ml-status')) ?? '', /serves your Claude requests/);
    assert.match(
      (await page.textContent('#ml-clis li[data-cli=claude]')) ?? '',
      /Claude: Claude subscription \(setup token\)/,
    );
    assert.equal(await page.isHidden('#ml-banner'), true);
    assert.match((await page.textContent('#ml-said')) ?? '', /Claude is connected/);
    assert.equal((await page.content()).includes(TOKEN), false, 'the token never comes back to the page');
    assert.equal(await scrollsSideways(page), false);
    await page.screenshot({ path: join(SCREENSHOTS, 'my-login-claude-connected-phone.png'), fullPage: true });

    const r = await request(t.url)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${alice}`)
      .send({ model: 'sonnet', messages: [{ role: 'user', content: 'hi on my own login' }] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual([...new Set(claudeCredentials())], [TOKEN]);
    assert.equal(JSON.stringify(t.logs).includes(TOKEN), false, 'the token is in no log line');
    // The browser notes the refused API key (the 400 the page showed) as a failed load: nothing else.
    assert.deepEqual(
      errors.filter((e) => !/status of 400/.test(e)),
      [],
    );
    await page.close();
  });

  it('connects ChatGPT with the code the page shows, entered elsewhere', async () => {
    const { page, errors } = await openPage(browser!, t.url, alice, 'desktop');
    await page.waitForSelector('#my-login:not([hidden])');
    await page.click('#ml-device-start');
    await until(page, '#ml-device-code', new RegExp(`^${CODE}$`));
    assert.equal(await page.textContent('#ml-device-url'), 'https://auth.openai.com/codex/device');
    assert.equal(await page.getAttribute('#ml-device-url', 'href'), 'https://auth.openai.com/codex/device');
    assert.match((await page.textContent('#ml-device-state')) ?? '', /Waiting for you to enter the code/);
    assert.match((await page.textContent('#ml-device-expires')) ?? '', /^It expires at \d\d:\d\d\.$/);
    await page.screenshot({ path: join(SCREENSHOTS, 'my-login-device-code-desktop.png'), fullPage: true });

    writeFileSync(waitFile, 'approve');
    await until(page, '#ml-device-state', /ChatGPT is connected/);
    await until(page, '#ml-clis li[data-cli=codex]', /ChatGPT \(codex\): ChatGPT sign-in/);
    await page.screenshot({ path: join(SCREENSHOTS, 'my-login-connected-desktop.png'), fullPage: true });
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('ends a sign-in still waiting for its code when the page goes away', async () => {
    rmSync(waitFile, { force: true });
    rmSync(`${waitFile}.pid`, { force: true });
    const { page } = await openPage(browser!, t.url, alice, 'desktop');
    await page.waitForSelector('#my-login:not([hidden])');
    await page.click('#ml-clis li[data-cli=codex] button[data-act=replace]');
    await page.click('#ml-device-start');
    await until(page, '#ml-device-code', new RegExp(`^${CODE}$`));
    await waitFor(() => existsSync(`${waitFile}.pid`), undefined, "the fake codex's pid file");
    const pid = Number(readFileSync(`${waitFile}.pid`, 'utf8'));
    await page.goto('about:blank');
    assert.deepEqual(await waitGone([pid]), [], 'codex is stopped once the page is gone');
    // The page's DELETE answers once codex is gone and its staging removed: the state follows.
    const state = async () =>
      (await request(t.url).get('/olp/me/login/codex/device').set('authorization', `Bearer ${alice}`)).body.device
        ?.state;
    await waitFor(async () => (await state()) === 'cancelled', undefined, 'the sign-in to be cancelled');
    // The login codex had before stays connected.
    const me = await request(t.url).get('/olp/me/login').set('authorization', `Bearer ${alice}`);
    assert.equal(me.body.login?.codex?.kind, 'chatgpt');
    await page.close();
  });

  it("shows the owner each member's login", async () => {
    t.daemon.store.keys.add('bob', 'member');
    const { page, errors } = await openPage(browser!, t.url, t.token, 'desktop');
    await page.waitForSelector('#family:not([hidden])');
    const rows = await page.$$eval('#members tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')),
    );
    assert.equal(rows.find((r) => r[0] === 'alice')?.[3], 'alice · own');
    assert.equal(rows.find((r) => r[0] === 'bob')?.[3], "this machine's");
    assert.match((await page.textContent('#keylist li[data-key=alice]')) ?? '', /login alice · own/);
    const changes = await page.$$eval('#changes li', (lis) => lis.map((li) => li.textContent ?? ''));
    assert.ok(
      changes.some((c) => /: alice connected Claude \(setup-token\) to the login alice$/.test(c)),
      changes.join('\n'),
    );
    assert.ok(
      changes.some((c) => /: alice ended a ChatGPT sign-in for the login alice: cancelled$/.test(c)),
      changes.join('\n'),
    );
    await page.screenshot({ path: join(SCREENSHOTS, 'my-login-owner-desktop.png'), fullPage: true });
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('under --member-logins required, tells a member their requests are refused until they connect one', async () => {
    const strict = await startTestDaemon({ config: { memberLogins: 'required' } });
    try {
      const key = strict.daemon.store.keys.add('rin', 'member').token;
      const r = await request(strict.url)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${key}`)
        .send({ model: 'sonnet', messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(r.status, 403);
      const { page, errors } = await openPage(browser!, strict.url, key, 'phone');
      await page.waitForSelector('#my-login:not([hidden])');
      assert.match((await page.textContent('#ml-banner')) ?? '', /Until then your requests are refused/);
      assert.match((await page.textContent('#ml-status')) ?? '', /refused until you connect a login of your own/);
      assert.equal(await page.textContent('#served-by'), 'Not served until you connect your own login');
      assert.match(
        (await page.textContent('#failures')) ?? '',
        /own_login_required \(403\), 1 time: your own login was not connected yet/,
      );
      await page.screenshot({ path: join(SCREENSHOTS, 'my-login-required-phone.png'), fullPage: true });
      await page.fill('#ml-claude input[name=secret]', TOKEN);
      await page.click('#ml-claude button[type=submit]');
      await until(page, '#ml-status', /Your own login 'rin'/);
      assert.equal(await page.isHidden('#ml-banner'), true);
      assert.deepEqual(errors, []);
      await page.close();
    } finally {
      await strict.close();
    }
  });
});

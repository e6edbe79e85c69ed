// Key management from the usage page, in headless Chromium, checked with the official openai
// client: an owner creates a key (its token shown once works), sets a daily budget, disables and
// enables it, rotates it (the old token stops working) and revokes it; destructive actions take a
// second click; a field's error shows next to it, also for a number the page cannot read (nothing
// is sent); rotating one's own key keeps the page on the new key; a member sees none of it and is
// refused directly.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { CHROMIUM, NO_CHROMIUM, openPage, SCREENSHOTS, scrollsSideways } from '../support/browser.js';

const skip = CHROMIUM ? false : NO_CHROMIUM;
let t: TestDaemon;
let browser: Browser | undefined;
let kid: string;

before(async () => {
  t = await startTestDaemon();
  kid = t.daemon.store.keys.add('kid', 'member').token;
  if (CHROMIUM) browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
  mkdirSync(SCREENSHOTS, { recursive: true });
});
after(async () => {
  await browser?.close();
  await t.close();
});

/** What the openai client gets for one question with this token: 200, or the error's status. */
async function ask(token: string): Promise<number> {
  const client = new OpenAI({ baseURL: t.baseURL, apiKey: token, maxRetries: 0 });
  try {
    await client.chat.completions.create({ model: 'sonnet', messages: [{ role: 'user', content: 'hello' }] });
    return 200;
  } catch (err) {
    if (err instanceof OpenAI.APIError && err.status) return err.status;
    throw err;
  }
}

/** Runs a page action and waits until the page has drawn again after it. */
async function andRedraw(page: Page, action: () => Promise<unknown>): Promise<void> {
  const before = await page.getAttribute('body', 'data-renders');
  await action();
  await page.waitForSelector(`body:not([data-renders="${before}"])`);
}

/** Runs a page action and waits until the error spot `error` shows something or the page has drawn again. */
async function erredOrRedrawn(page: Page, error: string, action: () => Promise<unknown>): Promise<void> {
  const before = await page.getAttribute('body', 'data-renders');
  await action();
  await page.waitForSelector(`body:not([data-renders="${before}"]), ${error}:not(:empty)`);
}

const button = (name: string, act: string) => `#keylist li[data-key="${name}"] button[data-act="${act}"]`;

describe('key management on the usage page', { skip }, () => {
  it('an owner creates, limits, disables, enables, rotates and revokes a key; the openai client agrees', async () => {
    const { page, errors } = await openPage(browser!, t.url, t.token, 'desktop');
    await page.waitForSelector('#keys:not([hidden])');
    assert.equal(
      await page.$$eval(`${button('tester', 'revoke')}, ${button('tester', 'disable')}`, (b) => b.length),
      0,
      'no locking oneself out',
    );

    await andRedraw(page, async () => {
      await page.fill('#create input[name=name]', 'cousin');
      await page.fill('#create input[name=dailyTokens]', '20,000');
      await page.click('#create button[type=submit]');
    });
    assert.equal(await page.isVisible('#token-box'), true);
    assert.match((await page.textContent('#token-box')) ?? '', /cousin: the new key is shown only now/);
    const token = await page.inputValue('#token-value');
    assert.match(token, /^olpk_/);
    assert.equal(await ask(token), 200, 'the token shown works');
    assert.equal(t.daemon.store.keys.get('cousin')?.policy.dailyTokens, 20_000);
    await page.screenshot({ path: join(SCREENSHOTS, 'usage-page-keys-desktop.png'), fullPage: true });
    await page.click('#token-done');
    assert.equal(await page.isHidden('#token-box'), true);

    // A name in use: the server's message shows next to the name field.
    await page.fill('#create input[name=name]', 'cousin');
    await page.click('#create button[type=submit]');
    await page.waitForSelector('#create [data-param="name"]:not(:empty)');
    assert.match((await page.textContent('#create [data-param="name"]')) ?? '', /cousin/);

    // A daily budget, set in the key's limits form.
    await page.click(button('cousin', 'limits'));
    await andRedraw(page, async () => {
      await page.fill('#keylist li[data-key="cousin"] input[name=dailyTokens]', '1000000');
      await page.click('#keylist li[data-key="cousin"] form button[type=submit]');
    });
    assert.equal(t.daemon.store.keys.get('cousin')?.policy.dailyTokens, 1_000_000);
    assert.match((await page.textContent('#keylist li[data-key="cousin"]')) ?? '', /of 1,000,000 tokens/);

    await andRedraw(page, () => page.click(button('cousin', 'disable')));
    assert.match((await page.textContent('#keylist li[data-key="cousin"]')) ?? '', /disabled/);
    assert.equal(await ask(token), 403, 'a disabled key is refused');
    await andRedraw(page, () => page.click(button('cousin', 'enable')));
    assert.equal(await ask(token), 200, 'enabled again');

    // Rotate: the first click only asks.
    await page.click(button('cousin', 'rotate'));
    assert.equal(
      await page.textContent(button('cousin', 'rotate')),
      'Give cousin a new key? The old one stops working',
    );
    assert.equal(await ask(token), 200, 'nothing happened yet');
    await andRedraw(page, () => page.click(button('cousin', 'rotate')));
    const rotated = await page.inputValue('#token-value');
    assert.notEqual(rotated, token);
    assert.equal(await ask(token), 401, 'the old token stopped working');
    assert.equal(await ask(rotated), 200, 'the new one works');

    await page.click(button('cousin', 'revoke'));
    assert.equal(await page.textContent(button('cousin', 'revoke')), 'Revoke cousin? This cannot be undone');
    await andRedraw(page, () => page.click(button('cousin', 'revoke')));
    assert.equal(await page.$('#keylist li[data-key="cousin"]'), null);
    assert.equal(await ask(rotated), 401, 'a revoked key is refused');

    const changes = await page.$$eval('#changes li', (l) => l.map((e) => e.textContent ?? ''));
    assert.match(changes[0]!, /tester revoked cousin$/);
    assert.ok(changes.some((c) => /tester added cousin/.test(c)));
    assert.ok(
      changes.some((c) => /tester changed cousin \(tokens a day 1,000,000\)$/.test(c)),
      changes.join('\n'),
    );
    assert.ok(changes.some((c) => /tester changed cousin \(disabled\)$/.test(c)));
    // The one failed call the browser logs is the refused second 'cousin'.
    assert.deepEqual(errors, ['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
    await page.close();
  });

  it('an owner rotating its own key keeps the page working on the new key, also after a reload', async () => {
    const boss = t.daemon.store.keys.add('boss', 'owner').token;
    const { page, errors } = await openPage(browser!, t.url, boss, 'desktop');
    await page.waitForSelector('#keys:not([hidden])');
    await page.click(button('boss', 'rotate'));
    await erredOrRedrawn(page, '#keys-error', () => page.click(button('boss', 'rotate')));
    assert.equal(await page.textContent('#keys-error'), '');
    const rotated = await page.inputValue('#token-value');
    assert.notEqual(rotated, boss);
    assert.equal(await page.evaluate('sessionStorage.getItem("olp-key")'), rotated);
    assert.equal(await page.isVisible('#family'), true);
    assert.equal(await ask(boss), 401, 'the old token stopped working');
    assert.equal(await ask(rotated), 200, 'the new one works');
    await page.reload();
    await page.waitForSelector('body[data-ready]');
    assert.equal(await page.getAttribute('body', 'data-ready'), 'true', (await page.textContent('#error')) ?? '');
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('a daily budget the page cannot read shows an error and changes nothing', async () => {
    t.daemon.store.keys.add('niece', 'member', { dailyTokens: 5000 });
    const { page, errors } = await openPage(browser!, t.url, t.token, 'desktop');
    await page.waitForSelector('#keys:not([hidden])');
    const li = '#keylist li[data-key="niece"]';
    await page.click(button('niece', 'limits'));
    await page.fill(`${li} input[name=dailyTokens]`, '50k');
    await erredOrRedrawn(page, `${li} [data-param="dailyTokens"]`, () => page.click(`${li} form button[type=submit]`));
    assert.equal(t.daemon.store.keys.get('niece')?.policy.dailyTokens, 5000, 'the budget stays');
    assert.match((await page.textContent(`${li} [data-param="dailyTokens"]`)) ?? '', /whole number/);

    await page.fill('#create input[name=name]', 'nephew');
    await page.fill('#create input[name=dailyTokens]', '50k');
    await erredOrRedrawn(page, '#create [data-param="dailyTokens"]', () => page.click('#create button[type=submit]'));
    assert.equal(t.daemon.store.keys.get('nephew'), undefined, 'no key without its limit');
    assert.match((await page.textContent('#create [data-param="dailyTokens"]')) ?? '', /whole number/);
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('on a phone the key list and forms fit the screen', async () => {
    const { page, errors } = await openPage(browser!, t.url, t.token, 'phone');
    await page.waitForSelector('#keys:not([hidden])');
    await page.click(button('kid', 'limits'));
    await page.click(button('kid', 'revoke'));
    assert.equal(await scrollsSideways(page), false);
    await page.screenshot({ path: join(SCREENSHOTS, 'usage-page-keys-phone.png'), fullPage: true });
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('a member sees no key management, and calling it directly is refused with 403', async () => {
    const { page, errors } = await openPage(browser!, t.url, kid, 'phone');
    assert.equal(await page.getAttribute('body', 'data-role'), 'member');
    assert.equal(await page.isHidden('#keys'), true);
    assert.equal(await page.$$eval('button[data-act]', (b) => b.length), 0);
    const statuses = await page.evaluate(async (key) => {
      const call = (method: string, path: string, body?: unknown) =>
        fetch(path, {
          method,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        }).then((r) => r.status);
      return [
        await call('POST', '/olp/keys', { name: 'sneaky' }),
        await call('PATCH', '/olp/keys/kid', { policy: { dailyTokens: null } }),
        await call('POST', '/olp/keys/tester/rotate'),
        await call('DELETE', '/olp/keys/tester'),
        await call('GET', '/olp/keys'),
        await call('GET', '/olp/usage'),
      ];
    }, kid);
    assert.deepEqual(statuses, [403, 403, 403, 403, 403, 403]);
    assert.equal(t.daemon.store.keys.get('sneaky'), undefined);
    assert.deepEqual(
      errors.filter((e) => !/status of 403/.test(e)),
      [],
    );
    await page.close();
  });
});

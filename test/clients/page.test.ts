// The usage page in a real browser (headless Chromium driven by playwright-core): a member sees
// their own bill, matching the ledger; an owner also sees the family; a wrong key is an error.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import request from 'supertest';
import { PAGE_BYTES } from '../../src/page/index.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ROOT } from '../support/paths.js';

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((p) =>
  existsSync(p),
);
const skip = CHROMIUM
  ? false
  : 'no Chromium on this machine (Debian: apt-get install chromium); the page is not tried in a browser';
const OUT = join(ROOT, 'dist', 'test-output');

let t: TestDaemon;
let browser: Browser | undefined;
let kid: string;
before(async () => {
  t = await startTestDaemon();
  kid = t.daemon.store.keys.add('kid', 'member', { dailyTokens: 50_000 }).token;
  const mum = t.daemon.store.keys.add('mum', 'member').token;
  for (const [token, model] of [
    [kid, 'sonnet'],
    [kid, 'codex'],
    [mum, 'sonnet'],
  ] as const) {
    const r = await request(t.url)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${token}`)
      .send({ model, messages: [{ role: 'user', content: 'a billed question' }] });
    assert.equal(r.status, 200);
  }
  await new Promise((r) => setTimeout(r, 50));
  if (CHROMIUM) browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
});
after(async () => {
  await browser?.close();
  await t.close();
});

async function open(key: string) {
  const page = await browser!.newPage({ viewport: { width: 390, height: 844 } }); // a phone
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  const started = performance.now();
  await page.goto(`${t.url}/olp/`);
  const loadMs = performance.now() - started;
  await page.fill('#key', key);
  await page.click('button[type=submit]');
  await page.waitForSelector('body[data-ready]');
  return { page, errors, loadMs };
}

describe('the usage page in a browser', { skip }, () => {
  it("a member sees their own numbers, as the ledger has them, and nobody else's", async () => {
    const { page, errors, loadMs } = await open(kid);
    assert.equal(await page.getAttribute('body', 'data-ready'), 'true');
    const ledger = [...t.daemon.store.usage.export({ scope: { all: true } })].filter(
      (r) => r.key_name === 'kid' && r.outcome === 'ok',
    );
    const tokens = ledger.reduce((n, r) => n + r.usage.total_tokens, 0);
    assert.equal(await page.textContent('#today-tokens'), tokens.toLocaleString('en'));
    assert.equal(await page.textContent('#today-requests'), '2');
    assert.match(
      (await page.textContent('#today-budget')) ?? '',
      new RegExp(`${tokens.toLocaleString('en')} of 50,000 tokens`),
    );
    const models = await page.$$eval('#models tr td:first-child', (tds) => tds.map((td) => td.textContent));
    assert.deepEqual(models.sort(), ['codex', 'sonnet']);
    assert.equal(await page.$$eval('#chart rect', (r) => r.length), 30);
    assert.equal(await page.isHidden('#family'), true, 'a member sees no family');
    assert.ok(!(await page.content()).includes('mum'), "another member's name is nowhere on the page");
    mkdirSync(OUT, { recursive: true });
    await page.screenshot({ path: join(OUT, 'usage-page-member.png'), fullPage: true });
    assert.deepEqual(errors, []);
    console.log(
      `usage page: ${PAGE_BYTES} bytes in all; loaded in ${loadMs.toFixed(0)} ms; screenshot ${join(OUT, 'usage-page-member.png')}`,
    );
    await page.close();
  });

  it('an owner also sees every member side by side and the CLIs', async () => {
    const { page, errors } = await open(t.token);
    await page.waitForSelector('#family:not([hidden])');
    const names = await page.$$eval('#members tr td:first-child', (tds) => tds.map((td) => td.textContent));
    assert.deepEqual(names.sort(), ['kid', 'mum', 'tester']);
    assert.match((await page.textContent('#health')) ?? '', /Claude: ready/);
    await page.screenshot({ path: join(OUT, 'usage-page-owner.png'), fullPage: true });
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('a wrong key shows an error and nothing else', async () => {
    const { page } = await open('olpk_not-a-real-key-at-all-000000000000000000');
    assert.equal(await page.getAttribute('body', 'data-ready'), 'error');
    assert.match((await page.textContent('#error')) ?? '', /Could not load the usage/);
    assert.equal(await page.isHidden('#bill'), true);
    await page.close();
  });
});

// The usage page through a front door (the real nginx from `olp front nginx`) in a real browser:
// an owner of two instances pastes both owner keys and sees every instance's members side by
// side, each with its instance, and their total, as the two ledgers have them.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { findNginx, freePort, NGINX_MISSING, startNginx, type RunningNginx } from '../support/nginx.js';
import { OLP_BIN, ROOT } from '../support/paths.js';

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((p) =>
  existsSync(p),
);
const nginx = findNginx();
const skip = !CHROMIUM
  ? 'no Chromium on this machine (Debian: apt-get install chromium)'
  : nginx
    ? false
    : NGINX_MISSING;
const OUT = join(ROOT, 'dist', 'test-output');

describe('the usage page of two instances through the front door', { skip }, () => {
  let a: TestDaemon;
  let b: TestDaemon;
  let door: RunningNginx;
  let doorURL: string;
  let browser: Browser;

  before(async () => {
    a = await startTestDaemon({ config: { instanceTag: 'a1' } });
    b = await startTestDaemon({ config: { instanceTag: 'b2' } });
    const port = await freePort();
    doorURL = `http://127.0.0.1:${port}`;
    const conf = execFileSync(
      process.execPath,
      [
        OLP_BIN,
        'front',
        'nginx',
        '--instance',
        `a1=${a.url}`,
        '--instance',
        `b2=${b.url}`,
        '--listen',
        `127.0.0.1:${port}`,
      ],
      { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } },
    );
    door = await startNginx(nginx!, conf, `${doorURL}/health`);
    const alice = a.daemon.store.keys.add('alice').token;
    const bob = b.daemon.store.keys.add('bob').token;
    for (const key of [alice, bob, bob]) {
      const res = await fetch(`${doorURL}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sonnet', messages: [{ role: 'user', content: 'a billed question' }] }),
      });
      assert.equal(res.status, 200);
    }
    browser = await chromium.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox', '--disable-gpu'] });
  });
  after(async () => {
    await browser?.close();
    await door?.stop();
    await a?.close();
    await b?.close();
  });

  it("lists both instances' keys with their instance, and the total of both ledgers", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${doorURL}/olp/`);
    await page.fill('#key', `${a.token}   ${b.token}`);
    await page.click('button[type=submit]');
    await page.waitForSelector('body[data-ready]');
    assert.equal(await page.getAttribute('body', 'data-ready'), 'true', (await page.textContent('#error')) ?? '');
    await page.waitForSelector('#family:not([hidden])');
    const rows = await page.$$eval('#members tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')),
    );
    const byName = new Map(rows.map((r) => [r[0], r]));
    assert.equal(byName.get('alice')?.[1], 'a1');
    assert.equal(byName.get('bob')?.[1], 'b2');
    assert.deepEqual(rows.map((r) => `${r[0]}@${r[1]}`).sort(), [
      'alice@a1',
      'all 2 instances@',
      'bob@b2',
      'tester@a1',
      'tester@b2',
    ]);
    const ledgerTokens = (t: TestDaemon) =>
      [...t.daemon.store.usage.export({ scope: { all: true } })].reduce((n, r) => n + r.usage.total_tokens, 0);
    const total = ledgerTokens(a) + ledgerTokens(b);
    assert.ok(total > 0);
    assert.equal(byName.get('all 2 instances')?.[4], total.toLocaleString('en'), 'today, all instances');
    assert.match((await page.textContent('#health')) ?? '', /Instance a1: Claude: ready.*Instance b2: Claude: ready/s);
    mkdirSync(OUT, { recursive: true });
    await page.screenshot({ path: join(OUT, 'usage-page-two-instances.png'), fullPage: true });
    assert.deepEqual(errors, []);
    await page.close();
  });
});

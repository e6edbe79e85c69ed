// The owner's view while its instance drains (stopping: /health answers 503 with the same owner
// JSON): the page still shows the family and says in plain words that the instance is stopping.
// The daemon is composed in-process so that its lifecycle can be set draining while it serves.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { parseConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import { composeDaemon } from '../../src/serve.js';
import { CHROMIUM, NO_CHROMIUM, openPage } from '../support/browser.js';
import { FAKE_CLAUDE, FAKE_CODEX } from '../support/paths.js';

const skip = CHROMIUM ? false : NO_CHROMIUM;
const base = mkdtempSync(join(tmpdir(), 'olp-page-drain-'));
let parts: ReturnType<typeof composeDaemon>;
let server: Server;
let url: string;
let token: string;
let browser: Browser | undefined;

before(async () => {
  const overrides = { stateDir: join(base, 'state'), claudeBin: FAKE_CLAUDE, codexBin: FAKE_CODEX, logLevel: 'silent' };
  parts = composeDaemon({
    config: parseConfig({ readFile: false, env: {}, overrides }),
    logger: createLogger('silent'),
    hostEnv: { PATH: process.env.PATH ?? '', HOME: join(base, 'home') },
  });
  token = parts.store.keys.add('tester', 'owner').token;
  server = createServer(parts.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  if (CHROMIUM) browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
});
after(async () => {
  await browser?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await parts?.close();
  rmSync(base, { recursive: true, force: true });
});

describe('the usage page while its instance drains', { skip }, () => {
  it('shows the family and says the instance is stopping', async () => {
    parts.lifecycle.drain();
    const health = await fetch(`${url}/health`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(health.status, 503);
    assert.equal(((await health.json()) as { status: string }).status, 'draining');

    const { page, errors } = await openPage(browser!, url, token, 'desktop');
    assert.equal(await page.getAttribute('body', 'data-ready'), 'true', (await page.textContent('#error')) ?? '');
    await page.waitForSelector('#family:not([hidden])');
    const names = await page.$$eval('#members tr td:first-child', (tds) => tds.map((td) => td.textContent));
    assert.deepEqual(names, ['tester']);
    assert.match((await page.textContent('#health')) ?? '', /stopping \(draining\)/);
    // The one refused call the browser logs is the draining /health itself.
    assert.deepEqual(
      errors.filter((e) => !/status of 503/.test(e)),
      [],
    );
    await page.close();
  });
});

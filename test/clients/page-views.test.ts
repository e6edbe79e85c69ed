// The usage page as a family member and as the owner see it, on a phone and on a desktop, in
// headless Chromium: the numbers, the 30-day chart and its table, failed requests kept apart from
// the models, conversations as the ledger has them, empty states, and the family with its marks.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import request from 'supertest';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import {
  CHROMIUM,
  dayLabel,
  NO_CHROMIUM,
  openPage,
  SCREENSHOTS,
  scrollsSideways,
  SIZES,
  type Size,
} from '../support/browser.js';

const skip = CHROMIUM ? false : NO_CHROMIUM;
let t: TestDaemon;
let browser: Browser | undefined;
const tokens: Record<string, string> = {};
const shots: string[] = [];

async function chat(key: string, model: string, messages: { role: string; content: string }[]) {
  return request(t.url).post('/v1/chat/completions').set('authorization', `Bearer ${key}`).send({ model, messages });
}

before(async () => {
  t = await startTestDaemon();
  const keys = t.daemon.store.keys;
  tokens.kid = keys.add('kid', 'member', { dailyTokens: 50_000, models: ['sonnet', 'codex'] }).token;
  tokens.newbie = keys.add('newbie', 'member').token;
  tokens.gran = keys.add('gran', 'member').token;
  tokens.dad = keys.add('dad', 'member').token;
  keys.add('old', 'member', { enabled: false });
  // kid: one conversation of two turns, one of one turn on codex, and a model kid may not use.
  const first = await chat(tokens.kid, 'sonnet', [{ role: 'user', content: 'what is a comet?' }]);
  assert.equal(first.status, 200);
  const second = await chat(tokens.kid, 'sonnet', [
    { role: 'user', content: 'what is a comet?' },
    { role: 'assistant', content: first.body.choices[0].message.content as string },
    { role: 'user', content: 'and a meteor?' },
  ]);
  assert.equal(second.status, 200);
  assert.equal((await chat(tokens.kid, 'codex', [{ role: 'user', content: 'hello' }])).status, 200);
  assert.equal((await chat(tokens.kid, 'gpt-4o', [{ role: 'user', content: 'hi' }])).status, 403);
  // gran near her daily budget (90 %), dad over his.
  for (const name of ['gran', 'dad']) {
    const r = await chat(tokens[name]!, 'sonnet', [{ role: 'user', content: `a question from ${name}` }]);
    assert.equal(r.status, 200);
    const used = r.body.usage.total_tokens as number;
    keys.update(name, { policy: { dailyTokens: name === 'gran' ? Math.ceil(used / 0.9) : used } });
  }
  await new Promise((r) => setTimeout(r, 50));
  if (CHROMIUM) browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
  mkdirSync(SCREENSHOTS, { recursive: true });
});
after(async () => {
  await browser?.close();
  await t.close();
  if (shots.length) console.log(`usage page screenshots:\n${shots.join('\n')}`);
});

async function shoot(page: Page, name: string) {
  const path = join(SCREENSHOTS, `usage-page-${name}.png`);
  await page.screenshot({ path, fullPage: true });
  shots.push(path);
}

const cells = (page: Page, sel: string) =>
  page.$$eval(`${sel} tr`, (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));

describe('the usage page, member and owner views', { skip }, () => {
  for (const size of Object.keys(SIZES) as Size[]) {
    it(`${size}: a member sees their own bill in plain words, as the ledger has it`, async () => {
      const { page, errors } = await openPage(browser!, t.url, tokens.kid!, size);
      assert.equal(await page.getAttribute('body', 'data-ready'), 'true');
      assert.equal(await page.textContent('#hello'), 'Hello, kid');
      assert.equal(await page.textContent('#served-by'), "Served by this machine's login");
      const ledger = [...t.daemon.store.usage.export({ scope: { all: true } })].filter((r) => r.key_name === 'kid');
      const ok = ledger.filter((r) => r.outcome === 'ok');
      const okTokens = ok.reduce((n, r) => n + r.usage.total_tokens, 0);
      assert.equal(await page.textContent('#today-tokens'), okTokens.toLocaleString('en'));
      assert.equal(await page.textContent('#today-requests'), String(ledger.length));
      assert.match(
        (await page.textContent('#today-budget')) ?? '',
        new RegExp(`${okTokens.toLocaleString('en')} of 50,000 tokens`),
      );
      assert.equal(await page.isHidden('#today-empty'), true);
      // The chart: 30 bars with tooltips, dates along the bottom, tick values on the side, and its table.
      assert.equal(await page.$$eval('#chart rect.day title', (r) => r.length), 30);
      const xLabels = await page.$$eval('#chart .x-label', (l) => l.map((e) => e.textContent));
      assert.equal(xLabels[0], dayLabel(29));
      assert.equal(xLabels.at(-1), dayLabel(0));
      const yLabels = await page.$$eval('#chart .y-label', (l) => l.map((e) => e.textContent));
      assert.equal(yLabels[0], '0');
      assert.equal(yLabels.length, 3);
      const table = await cells(page, '#chart-rows');
      assert.equal(table.length, 30);
      const today = ledger.reduce((n, r) => n + r.usage.prompt_tokens + r.usage.completion_tokens, 0);
      assert.deepEqual(table.at(-1), [
        new Date().toISOString().slice(0, 10),
        today.toLocaleString('en'),
        String(ledger.length),
      ]);
      assert.ok(table.slice(0, -1).every((r) => r[1] === '0' && r[2] === '0'));
      const box = await page.$eval('#chart', (svg) => {
        const w = Number(svg.getAttribute('viewBox')!.split(' ')[2]);
        return {
          w,
          right: Math.max(
            ...[...svg.querySelectorAll('rect')].map(
              (r) => Number(r.getAttribute('x')) + Number(r.getAttribute('width')),
            ),
          ),
        };
      });
      assert.ok(box.right <= box.w, `bars end at ${box.right} within the chart's ${box.w}`);
      // By model: answered requests only; the refused one is counted apart with its code and a reason.
      const models = await cells(page, '#models');
      assert.deepEqual(models.map((r) => r[0]).sort(), ['codex', 'sonnet']);
      assert.equal(models.find((r) => r[0] === 'sonnet')?.[1], '2');
      const refused = ledger.filter((r) => r.outcome !== 'ok');
      assert.deepEqual(
        refused.map((r) => r.error_code),
        ['model_not_allowed'],
      );
      assert.equal(await page.textContent('#failures-count'), '1 request failed:');
      assert.match(
        (await page.textContent('#failure-codes')) ?? '',
        /model_not_allowed \(403\), 1 time: a model this key may not use/,
      );
      // Conversations: one per CLI session in the ledger, with its turns.
      const sessions = new Map<string, number>();
      for (const r of ok) sessions.set(r.session_id!, (sessions.get(r.session_id!) ?? 0) + 1);
      const conv = await cells(page, '#conversations');
      assert.deepEqual(conv.map((r) => r[2]).sort(), [...sessions.values()].map(String).sort());
      assert.deepEqual(conv.map((r) => r[2]).sort(), ['1', '2']);
      assert.match(conv[0]![0]!, /^today \d\d:\d\d$/);
      assert.equal(await page.textContent('#plan'), 'Claude plan: no limit reported by the CLI yet');
      assert.equal(await page.isHidden('#family'), true, 'a member sees no family');
      assert.equal(await page.isHidden('#keys'), true, 'a member sees no key management');
      const html = await page.content();
      for (const other of ['gran', 'dad', 'newbie'])
        assert.ok(!html.includes(other), `${other} is nowhere on the page`);
      assert.equal(await scrollsSideways(page), false);
      await shoot(page, `member-${size}`);
      assert.deepEqual(errors, []);
      await page.close();
    });

    it(`${size}: a fresh key sees plain empty states`, async () => {
      const { page, errors } = await openPage(browser!, t.url, tokens.newbie!, size);
      assert.equal(await page.textContent('#hello'), 'Hello, newbie');
      for (const [id, words] of [
        ['#today-empty', 'Nothing yet today'],
        ['#month-empty', 'Nothing yet this month'],
        ['#chart-empty', 'Nothing in the last 30 days'],
        ['#models-empty', 'No answered requests yet'],
        ['#conv-empty', 'No conversations yet'],
      ]) {
        assert.equal(await page.isVisible(id!), true, id);
        assert.equal(await page.textContent(id!), words);
      }
      assert.equal(await page.textContent('#today-budget'), 'no limit');
      assert.equal(await page.isHidden('#failures'), true);
      assert.equal(await page.isHidden('#models-table'), true);
      assert.equal(await scrollsSideways(page), false);
      await shoot(page, `empty-${size}`);
      assert.deepEqual(errors, []);
      await page.close();
    });

    it(`${size}: the owner sees every member side by side, near and spent budgets marked, and the CLIs in plain words`, async () => {
      const { page, errors } = await openPage(browser!, t.url, t.token, size);
      await page.waitForSelector('#family:not([hidden])');
      const rows = await page.$$eval('#members tr', (trs) =>
        trs.map((tr) => ({
          cls: tr.className,
          cells: [...tr.querySelectorAll('td')].map((td) => td.textContent ?? ''),
        })),
      );
      const by = new Map(rows.map((r) => [r.cells[0], r]));
      assert.deepEqual([...by.keys()].sort(), ['dad', 'gran', 'kid', 'newbie', 'old', 'tester']);
      assert.equal(by.get('gran')!.cls, 'near');
      assert.match(by.get('gran')!.cells[5]!, /^90 % of /);
      assert.equal(by.get('dad')!.cls, 'full');
      assert.equal(by.get('kid')!.cls, '');
      assert.equal(by.get('old')!.cls, 'off');
      assert.equal(by.get('old')!.cells[2], 'member · disabled');
      assert.equal(by.get('kid')!.cells[3], "this machine's");
      const health = (await page.$$eval('#health li', (l) => l.map((e) => e.textContent))).join('\n');
      assert.match(health, /^Claude: ready, version \S+/m);
      assert.match(health, /^0 conversations are being answered, 0 waiting \(room for \d+ at once\)$/m);
      assert.doesNotMatch(health, /live CLIs|processes/);
      assert.equal(await scrollsSideways(page), false);
      await shoot(page, `owner-${size}`);
      const tolerated = (await adminActionsExist()) ? [] : errors.filter((e) => /status of 404/.test(e));
      assert.deepEqual(
        errors.filter((e) => !tolerated.includes(e)),
        [],
      );
      await page.close();
    });
  }
});

/** The recent-changes list is read only where olp has it (the page tolerates its absence). */
async function adminActionsExist(): Promise<boolean> {
  return (
    (await request(t.url).get('/olp/admin-actions?limit=1').set('authorization', `Bearer ${t.token}`)).status !== 404
  );
}

describe('the usage page, logins and plan windows in plain words', { skip }, () => {
  it('a member learns whose login serves them and how much of the plan window is used', async () => {
    const p = await startTestDaemon({
      claudeEnv: { FAKE_CLAUDE_PLAN: JSON.stringify({ status: 'allowed', utilization: 0.93, resetsIn: 1800 }) },
    });
    try {
      p.daemon.store.logins.set('alice', 'claude', 'setup-token');
      const ann = p.daemon.store.keys.add('ann', 'member', {}, 'alice').token;
      const ben = p.daemon.store.keys.add('ben', 'member').token;
      const r = await request(p.url)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${ben}`)
        .send({ model: 'sonnet', messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(r.status, 200);
      const reset = new Date(Date.parse(r.headers['x-olp-plan-reset'] as string));
      const clock = `${String(reset.getHours()).padStart(2, '0')}:${String(reset.getMinutes()).padStart(2, '0')}`;
      // Half an hour ahead may be tomorrow: the page then names the day.
      const at = reset.toDateString() === new Date().toDateString() ? `at ${clock}` : `on \\d{1,2} \\w+ ${clock}`;
      const { page, errors } = await openPage(browser!, p.url, ben, 'phone');
      assert.equal(await page.textContent('#served-by'), "Served by this machine's login");
      const plan = (await page.textContent('#plan')) ?? '';
      assert.match(
        plan,
        new RegExp(`^Claude plan \\(this machine's login\\): 93 % used \\(five hour window\\), resets ${at}$`),
      );
      await shoot(page, 'plan-phone');
      await page.close();
      const alice = await openPage(browser!, p.url, ann, 'phone');
      assert.equal(await alice.page.textContent('#served-by'), "Served by your own login 'alice'");
      assert.equal(await alice.page.textContent('#plan'), 'Claude plan: no limit reported by the CLI yet');
      await alice.page.close();
      const owner = await openPage(browser!, p.url, p.token, 'desktop');
      await owner.page.waitForSelector('#family:not([hidden])');
      assert.match((await owner.page.textContent('#plans')) ?? '', /Claude plan \(this machine's login\): 93 % used/);
      await owner.page.close();
      assert.deepEqual([...errors, ...alice.errors, ...owner.errors], []);
    } finally {
      await p.close();
    }
  });
});

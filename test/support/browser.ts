// The usage page in headless Chromium (playwright-core): finding a browser, opening the page at a
// phone's or a desktop's size with a key, and collecting the page's errors.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ROOT } from './paths.js';

export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((p) =>
  existsSync(p),
);
export const NO_CHROMIUM =
  'no Chromium on this machine (Debian: apt-get install chromium); the page is not tried in a browser';
export const SCREENSHOTS = join(ROOT, 'dist', 'test-output');

export const SIZES = {
  phone: { width: 390, height: 844 },
  desktop: { width: 1280, height: 900 },
} as const;
export type Size = keyof typeof SIZES;

/**
 * Headless Chromium as the tests run it (no background connections: this machine's network is
 * closed), with the screenshots' folder made.
 */
export async function launchChromium(): Promise<Browser> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM!,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
}

/** Opens the page at `url`, signs in with `key` and waits until it has drawn (or failed). */
export async function openPage(
  browser: Browser,
  url: string,
  key: string,
  size: Size,
): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: SIZES[size] });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await page.goto(`${url}/olp/`);
  await page.fill('#key', key);
  await page.click('button[type=submit]');
  await page.waitForSelector('body[data-ready]');
  return { page, errors };
}

/** Whether the page scrolls sideways (it must not, even on a phone). */
export async function scrollsSideways(page: Page): Promise<boolean> {
  return page.$eval('html', (html) => html.scrollWidth > html.clientWidth);
}

/** The date label the page writes under its chart for a UTC day `daysAgo` before today ("4 Dec"). */
export function dayLabel(daysAgo: number): string {
  const now = new Date();
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - daysAgo));
  return `${d.getUTCDate()} ${d.toLocaleString('en', { month: 'short', timeZone: 'UTC' })}`;
}

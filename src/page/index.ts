import type { Request, Response } from 'express';
import { PAGE_CSS, PAGE_HTML, PAGE_JS } from './assets.js';

/** The page's own scripts and styles only, and fetches to olp itself. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const FILES = {
  html: { type: 'text/html; charset=utf-8', body: PAGE_HTML },
  js: { type: 'text/javascript; charset=utf-8', body: PAGE_JS },
  css: { type: 'text/css; charset=utf-8', body: PAGE_CSS },
} as const;

/** GET /olp/, /olp/app.js, /olp/app.css: the usage page (no data in it: that needs a key). */
export function pageRoute(file: keyof typeof FILES) {
  const f = FILES[file];
  const bytes = Buffer.from(f.body, 'utf8');
  return (_req: Request, res: Response): void => {
    res.setHeader('content-type', f.type);
    res.setHeader('content-security-policy', CSP);
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('referrer-policy', 'no-referrer');
    res.setHeader('x-frame-options', 'DENY');
    res.setHeader('cache-control', 'no-cache');
    res.end(bytes);
  };
}

/** The page's size in bytes, all three files. */
export const PAGE_BYTES = Object.values(FILES).reduce((n, f) => n + Buffer.byteLength(f.body, 'utf8'), 0);

import type { NextFunction, Request, Response } from 'express';

/** Response headers a browser client may read: ids, retry advice, limits, the session mode. */
const EXPOSED = [
  'x-request-id',
  'x-should-retry',
  'retry-after',
  'x-olp-session-mode',
  'x-olp-plan-status',
  'x-olp-plan-window',
  'x-olp-plan-reset',
  'x-olp-plan-utilization',
  'x-olp-plan-overage',
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-reset-requests',
  'x-ratelimit-limit-tokens',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-tokens',
].join(', ');

/**
 * CORS for browser chat front ends on other origins (`--cors-origins`): preflights from an
 * allowed origin are answered without a key; real responses carry the headers the browser needs.
 * With no origins configured nothing is added, and browsers keep refusing cross-origin calls.
 */
export function createCors(origins: readonly string[]) {
  const any = origins.includes('*');
  const allowed = new Set(origins.filter((o) => o !== '*').map((o) => new URL(o).origin));
  return (req: Request, res: Response, next: NextFunction): void => {
    const origin = req.headers.origin;
    if (!origin || (!any && !allowed.has(origin))) {
      next();
      return;
    }
    // Keys travel as bearer tokens, never cookies: no credentials mode, so `*` stays safe to send.
    res.setHeader('access-control-allow-origin', any ? '*' : origin);
    if (!any) res.append('vary', 'Origin');
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
      res.setHeader('access-control-allow-methods', 'GET, POST, PATCH, DELETE, OPTIONS');
      res.setHeader(
        'access-control-allow-headers',
        req.headers['access-control-request-headers'] ?? 'authorization, content-type',
      );
      res.setHeader('access-control-max-age', '600');
      res.append('vary', 'Access-Control-Request-Headers');
      res.status(204).end();
      return;
    }
    res.setHeader('access-control-expose-headers', EXPOSED);
    next();
  };
}

import { limitExceeded } from '../errors/index.js';
import type { Admittee } from './types.js';

/** prompt + completion tokens a key used (successful requests) since a time. */
export type TokensSince = (keyId: string, sinceMs: number) => number;

/** A key's tightest token budget: its limit, what is left of it, and when its period ends. */
export interface Budget {
  limit: number;
  remaining: number;
  resetsAt: number;
  period: 'daily' | 'monthly';
}

/** One key's admissions as they stand. */
export interface KeyState {
  /** Requests admitted and not yet released (queued or running). */
  inflight: number;
  /** Tokens reserved by those requests. */
  reserved: number;
  /** Admission times within the last minute. */
  window: number[];
}

const MINUTE = 60_000;

/** OpenAI's reset format: `1s`, `6m0s`, `2h3m4s`. */
export function toResetDuration(ms: number): string {
  let s = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  return h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
}

/** Start of the current UTC day and month, and when each ends. */
export function budgetPeriods(now: number) {
  const d = new Date(now);
  const dayStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  const monthStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  return {
    day: { start: dayStart, end: dayStart + 24 * 3600_000 },
    month: { start: monthStart, end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) },
  };
}

/** Remaining budget in the tightest period, with its limit and end. */
export function budget(who: Admittee, s: KeyState, t: number, tokensSince: TokensSince): Budget | undefined {
  const periods = budgetPeriods(t);
  let tightest: Budget | undefined;
  for (const [period, limit, p] of [
    ['daily', who.policy.dailyTokens, periods.day],
    ['monthly', who.policy.monthlyTokens, periods.month],
  ] as const) {
    if (limit == null) continue;
    const remaining = limit - tokensSince(who.keyId, p.start) - s.reserved;
    if (!tightest || remaining < tightest.remaining) tightest = { limit, remaining, resetsAt: p.end, period };
  }
  return tightest;
}

/** Drops admissions older than a minute from the key's window. */
export function prune(s: KeyState, t: number): void {
  while (s.window.length > 0 && s.window[0]! <= t - MINUTE) s.window.shift();
}

/** Throws the 429 for a key at its requests-per-minute. */
export function checkRate(
  who: Admittee,
  s: KeyState,
  t: number,
  b: Budget | undefined,
  tokensSince: TokensSince,
): void {
  if (who.policy.rpm != null && s.window.length >= who.policy.rpm) {
    const wait = s.window[0]! + MINUTE - t;
    throw limitExceeded(
      'rate_limit_exceeded',
      `Rate limit reached for this key: ${who.policy.rpm} requests per minute. Try again in ${toResetDuration(wait)}.`,
      wait / 1000,
      headersFor(who, s, t, b ?? budget(who, s, t, tokensSince)),
    );
  }
}

/** The key's `x-ratelimit-*` headers. */
export function headersFor(who: Admittee, s: KeyState, t: number, b: Budget | undefined): Record<string, string> {
  const h: Record<string, string> = {};
  const rpm = who.policy.rpm;
  if (rpm != null) {
    h['x-ratelimit-limit-requests'] = String(rpm);
    h['x-ratelimit-remaining-requests'] = String(Math.max(0, rpm - s.window.length));
    h['x-ratelimit-reset-requests'] = toResetDuration(s.window.length ? s.window[0]! + MINUTE - t : 0);
  }
  if (b) {
    h['x-ratelimit-limit-tokens'] = String(b.limit);
    h['x-ratelimit-remaining-tokens'] = String(Math.max(0, b.remaining));
    h['x-ratelimit-reset-tokens'] = toResetDuration(b.resetsAt - t);
  }
  return h;
}

/**
 * Throws the 429 for a key at one of its own limits, in this order: its concurrency, its requests per
 * minute (unless `counted` already), its token budget taken up by its requests in flight, its budget spent.
 */
export function checkKeyLimits(
  who: Admittee,
  s: KeyState,
  t: number,
  b: Budget | undefined,
  counted: boolean,
  tokensSince: TokensSince,
): void {
  const limit = who.policy.concurrency;
  if (limit != null && s.inflight >= limit) {
    throw limitExceeded(
      'concurrency_limit_exceeded',
      `This key already has ${s.inflight} request(s) in flight, its limit. Wait for one to finish.`,
      1,
      headersFor(who, s, t, b),
    );
  }
  if (!counted) checkRate(who, s, t, b, tokensSince);
  // Spent only by what requests in flight may still use: not spent, and free again soon.
  if (b && b.remaining <= 0 && b.remaining + s.reserved > 0) {
    throw limitExceeded(
      'concurrency_limit_exceeded',
      `This key's ${b.period} token budget of ${b.limit} is taken up by its ${s.inflight} request(s) in flight ` +
        `(${s.reserved} tokens held until they finish). Try again when one is done.`,
      1,
      headersFor(who, s, t, b),
    );
  }
  if (b && b.remaining <= 0) {
    throw limitExceeded(
      'budget_exceeded',
      `This key's ${b.period} token budget of ${b.limit} is spent. It resets at ${new Date(b.resetsAt).toISOString()}.`,
      (b.resetsAt - t) / 1000,
      headersFor(who, s, t, b),
    );
  }
}

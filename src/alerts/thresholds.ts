import { budgetPeriods } from '../admit/index.js';
import { windowName } from '../plan/index.js';
import type { PlanRow } from '../store/index.js';
import type { PendingAlert } from './types.js';

/** A key's budgets as its policy sets them. */
export interface BudgetPolicy {
  dailyTokens?: number | null | undefined;
  monthlyTokens?: number | null | undefined;
}

/** How long a plan window whose reset the CLI did not say counts as one period. */
const UNKNOWN_RESET_MS = 3600_000;

/** The thresholds (percents, ascending) that a share (0–1 and beyond) has reached. */
export function reachedThresholds(share: number, thresholds: readonly number[]): number[] {
  // Rounded to a hundredth of a percent: 0.8 * 100 is 80.00000000000001 in floating point.
  const percent = Math.round(share * 10_000) / 100;
  return thresholds.filter((t) => percent >= t);
}

/** Whether a key's policy sets any token budget (a key without one costs nothing to watch). */
export function hasBudget(policy: BudgetPolicy): boolean {
  return policy.dailyTokens != null || policy.monthlyTokens != null;
}

/** The budget alerts a key has reached in its current day and month (sent or not: the store decides). */
export function toBudgetAlerts(o: {
  keyId: string;
  keyName: string;
  policy: BudgetPolicy;
  tokensSince: (keyId: string, sinceMs: number) => number;
  thresholds: readonly number[];
  now: number;
}): PendingAlert[] {
  const periods = budgetPeriods(o.now);
  const out: PendingAlert[] = [];
  for (const [name, limit, p] of [
    ['day', o.policy.dailyTokens, periods.day],
    ['month', o.policy.monthlyTokens, periods.month],
  ] as const) {
    if (limit == null || limit <= 0) continue;
    const used = o.tokensSince(o.keyId, p.start);
    const share = used / limit;
    for (const threshold of reachedThresholds(share, o.thresholds)) {
      out.push({
        id: `budget ${o.keyId} ${name} ${threshold}`,
        periodEnd: p.end,
        alert: {
          type: 'olp.alert',
          kind: 'budget',
          subject: { key: o.keyName },
          threshold,
          used,
          limit,
          share: round2(share),
          period: { name, start: iso(p.start), resets_at: iso(p.end) },
          message: budgetMessage(o.keyName, name, used, limit, p.end, o.now),
          at: iso(o.now),
        },
      });
    }
  }
  return out;
}

/** The plan alerts a login's window has reached, from the CLI's last report (`scope`: `claude`, `claude@alice`). */
export function toPlanAlerts(scope: string, row: PlanRow, thresholds: readonly number[], now: number): PendingAlert[] {
  const spent = row.status === 'rejected';
  // A spent window is at its limit whatever share was last said; a report without one says nothing.
  const share = spent ? Math.max(1, row.utilization ?? 1) : row.utilization;
  if (share === null) return [];
  const at = scope.indexOf('@');
  const cli = at < 0 ? scope : scope.slice(0, at);
  const login = at < 0 ? null : scope.slice(at + 1);
  const end = row.resetsAt ?? now + UNKNOWN_RESET_MS;
  return reachedThresholds(share, thresholds).map((threshold) => ({
    id: `plan ${scope} ${row.window ?? '-'} ${threshold}`,
    periodEnd: end,
    alert: {
      type: 'olp.alert',
      kind: 'plan',
      subject: { login, cli },
      threshold,
      used: Math.round(share * 100),
      limit: 100,
      share: round2(share),
      period: {
        name: 'window',
        start: null,
        resets_at: row.resetsAt === null ? null : iso(row.resetsAt),
        window: row.window,
      },
      message: planMessage(cli, login, row, share, spent, now),
      at: iso(now),
    },
  }));
}

/** "kid has used 83 % of the daily budget (41,500 of 50,000 tokens); it resets at 00:00 UTC". */
function budgetMessage(key: string, period: 'day' | 'month', used: number, limit: number, end: number, now: number) {
  const which = period === 'day' ? 'daily' : 'monthly';
  const tokens = `(${n(used)} of ${n(limit)} tokens)`;
  const head =
    used >= limit
      ? `${key} has spent the ${which} budget ${tokens}`
      : `${key} has used ${Math.floor((used / limit) * 100)} % of the ${which} budget ${tokens}`;
  return `${head}; it resets ${whenText(end, now)}`;
}

/** "claude (login alice) has used 92 % of the 5-hour window; it resets at 16:19 UTC". */
function planMessage(cli: string, login: string | null, row: PlanRow, share: number, spent: boolean, now: number) {
  const who = login === null ? `${cli} (the machine's login)` : `${cli} (login ${login})`;
  const head = spent
    ? `${who} has spent ${windowName(row.window)}${row.overage ? '; turns now draw on paid extra usage' : ''}`
    : `${who} has used ${Math.floor(share * 100)} % of ${windowName(row.window)}`;
  return row.resetsAt === null ? head : `${head}; it resets ${whenText(row.resetsAt, now)}`;
}

/** "at 16:19 UTC" within a day, else "on 2027-01-01 at 00:00 UTC". */
function whenText(t: number, now: number): string {
  const s = iso(t);
  const clock = `at ${s.slice(11, 16)} UTC`;
  return t - now < 24 * 3600_000 ? clock : `on ${s.slice(0, 10)} ${clock}`;
}

const iso = (t: number) => new Date(t).toISOString();
const round2 = (x: number) => Math.round(x * 100) / 100;
const n = (x: number) => x.toLocaleString('en-US');

// The alerts of a key's token budgets: each threshold its day's or month's use has reached.
import { budgetPeriods } from '../admit/index.js';
import { iso, reachedThresholds, round2, whenText } from './thresholds.js';
import type { PendingAlert } from './types.js';

/** A key's budgets as its policy sets them. */
export interface BudgetPolicy {
  dailyTokens?: number | null | undefined;
  monthlyTokens?: number | null | undefined;
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

const n = (x: number) => x.toLocaleString('en-US');

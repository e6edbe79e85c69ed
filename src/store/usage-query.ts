import type { Database } from 'better-sqlite3';
import { totalsOf } from './usage-source.js';
import { addCompensated, type CompensatedSum, compensatedTotal } from './compensated-sum.js';
import type { UsageFilter } from './usage-where.js';

export { type Scope, type UsageFilter, where } from './usage-where.js';

/** One UTC day's totals of one key on one model. */
export interface DailyRow {
  day: string;
  key: string;
  model: string;
  requests: number;
  ok: number;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  costUsd: number | null;
}

export interface UsageGroup {
  group: string;
  requests: number;
  ok: number;
  errors: number;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  /** cached / prompt of successful requests, null without any. */
  cacheHitShare: number | null;
  costUsd: number | null;
}

// Each group over the running totals (usage-rollup.ts), as the ledger's rows group: the key's name
// (coalesce(key_name, '(no key)')), the UTC day of the arrival time, the model that answered else the
// one asked for (coalesce(served_model, model, '(none)')), and the login (rows written before logins
// existed were all served by the machine's own; '(no CLI)' for requests no CLI ran).
const GROUP_BY = {
  key: "CASE WHEN key_name = '' THEN '(no key)' ELSE key_name END",
  day: 'day',
  model: 'model',
  login: 'login',
} as const;

/**
 * `olp_cost(cost, cost_err)`: the sum of the cost totals, each carried with the error term of the
 * compensated sum that made it, added as SQLite's sum() adds (usage-tally.ts), so that a total over
 * many days reads as the sum over the rows did, to the last bit in all but rare cases.
 */
export function defineCostSum(db: Database): void {
  const step = (acc: CompensatedSum | null, cost: number | null, err: number | null) => {
    if (cost === null) return acc;
    const sum = acc ?? { sum: 0, err: 0 };
    addCompensated(sum, cost);
    if (err) addCompensated(sum, err);
    return sum;
  };
  db.aggregate<CompensatedSum | null>('olp_cost', {
    start: () => null,
    // Two arguments (the typings know of one; better-sqlite3 passes each of the call's).
    step: step as unknown as (acc: CompensatedSum | null) => CompensatedSum | null,
    result: (acc) => (acc === null ? null : compensatedTotal(acc)),
    deterministic: true,
  });
}

/** What usage totals can be grouped by. */
export type GroupBy = keyof typeof GROUP_BY;

/** Totals grouped by key, UTC day, model or login, within the scope. */
export function summarizeUsage(db: Database, filter: UsageFilter, by: GroupBy): UsageGroup[] {
  const src = totalsOf('totals', filter);
  const rows = db
    .prepare(
      `SELECT ${GROUP_BY[by]} AS grp, sum(requests) AS requests, sum(ok) AS ok, sum(requests) - sum(ok) AS errors,
           sum(prompt) AS prompt, sum(cached) AS cached, sum(completion) AS completion,
           sum(ok_prompt) AS ok_prompt, sum(ok_cached) AS ok_cached, olp_cost(cost, cost_err) AS cost
         FROM (${src.sql}) GROUP BY grp ORDER BY grp`,
    )
    .all(...src.params) as {
    grp: string;
    requests: number;
    ok: number;
    errors: number;
    prompt: number;
    cached: number;
    completion: number;
    ok_prompt: number;
    ok_cached: number;
    cost: number | null;
  }[];
  return rows.map((r) => ({
    group: r.grp,
    requests: r.requests,
    ok: r.ok,
    errors: r.errors,
    promptTokens: r.prompt,
    cachedTokens: r.cached,
    completionTokens: r.completion,
    cacheHitShare: r.ok_prompt > 0 ? r.ok_cached / r.ok_prompt : null,
    costUsd: r.cost,
  }));
}

/** Totals per UTC day, key and model within the scope, oldest day first (the usage page's rows). */
export function dailyUsage(db: Database, filter: UsageFilter): DailyRow[] {
  const src = totalsOf('totals', filter);
  const rows = db
    .prepare(
      `SELECT day, ${GROUP_BY.key} AS key, model, sum(requests) AS requests, sum(ok) AS ok, sum(prompt) AS prompt,
           sum(cached) AS cached, sum(completion) AS completion, olp_cost(cost, cost_err) AS cost
         FROM (${src.sql}) GROUP BY day, key, model ORDER BY day, key, model`,
    )
    .all(...src.params) as {
    day: string;
    key: string;
    model: string;
    requests: number;
    ok: number;
    prompt: number;
    cached: number;
    completion: number;
    cost: number | null;
  }[];
  return rows.map((r) => ({
    day: r.day,
    key: r.key,
    model: r.model,
    requests: r.requests,
    ok: r.ok,
    promptTokens: r.prompt,
    cachedTokens: r.cached,
    completionTokens: r.completion,
    costUsd: r.cost,
  }));
}

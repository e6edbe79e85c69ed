import type { Database } from 'better-sqlite3';

/**
 * Whose rows a query may see: every key (an owner, the CLI) or one key (a member's own view).
 * Every read takes one, so no query can forget the restriction.
 */
export type Scope = { all: true } | { keyId: string };

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

export interface UsageFilter {
  scope: Scope;
  /** Narrow an all-keys scope to one key. */
  keyId?: string;
  /**
   * Narrow it to the rows of the keys of this name (one made again after a revoke included), as `--by key`
   * groups them.
   */
  keyName?: string;
  sinceMs?: number;
  untilMs?: number;
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

/**
 * The SQL clause and parameters that restrict a query to a filter's rows, and to the conditions in
 * `also` (they come last, so the parameters of their own follow the filter's).
 */
export function where(f: UsageFilter, ...also: string[]): { sql: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  if ('keyId' in f.scope) {
    clauses.push('key_id = ?');
    params.push(f.scope.keyId);
  } else if (f.keyId) {
    clauses.push('key_id = ?');
    params.push(f.keyId);
  }
  if (f.keyName !== undefined) {
    clauses.push('key_name = ?');
    params.push(f.keyName);
  }
  if (f.sinceMs !== undefined) {
    clauses.push('ts >= ?');
    params.push(f.sinceMs);
  }
  if (f.untilMs !== undefined) {
    clauses.push('ts < ?');
    params.push(f.untilMs);
  }
  clauses.push(...also);
  return { sql: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', params };
}

const GROUP_BY = {
  key: "coalesce(key_name, '(no key)')",
  day: "strftime('%Y-%m-%d', ts / 1000, 'unixepoch')",
  model: "coalesce(served_model, model, '(none)')",
  // Rows written before logins existed were all served by the machine's own.
  login: "CASE WHEN backend IS NULL THEN '(no CLI)' ELSE coalesce(login, 'machine') END",
} as const;

/** What usage totals can be grouped by. */
export type GroupBy = keyof typeof GROUP_BY;

/** Totals grouped by key, UTC day, model or login, within the scope. */
export function summarizeUsage(db: Database, filter: UsageFilter, by: GroupBy): UsageGroup[] {
  const w = where(filter);
  const rows = db
    .prepare(
      `SELECT ${GROUP_BY[by]} AS grp, count(*) AS requests,
           sum(outcome = 'ok') AS ok, sum(outcome <> 'ok') AS errors,
           sum(prompt_tokens) AS prompt, sum(cached_tokens) AS cached, sum(completion_tokens) AS completion,
           sum(CASE WHEN outcome = 'ok' THEN prompt_tokens ELSE 0 END) AS ok_prompt,
           sum(CASE WHEN outcome = 'ok' THEN cached_tokens ELSE 0 END) AS ok_cached,
           sum(cost_usd) AS cost
         FROM usage ${w.sql} GROUP BY grp ORDER BY grp`,
    )
    .all(...w.params) as {
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
  const w = where(filter);
  const rows = db
    .prepare(
      `SELECT ${GROUP_BY.day} AS day, coalesce(key_name, '(no key)') AS key, ${GROUP_BY.model} AS model,
           count(*) AS requests, sum(outcome = 'ok') AS ok, sum(prompt_tokens) AS prompt,
           sum(cached_tokens) AS cached, sum(completion_tokens) AS completion, sum(cost_usd) AS cost
         FROM usage ${w.sql} GROUP BY day, key, model ORDER BY day, key, model`,
    )
    .all(...w.params) as {
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

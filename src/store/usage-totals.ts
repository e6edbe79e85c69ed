import type { Database } from 'better-sqlite3';
import { type UsageFilter, where } from './usage-query.js';

/** Successful requests' totals of one model (failed requests are counted apart, by error code). */
export interface ModelTotals {
  model: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
}

/** How many requests failed with one error code (or, without a code, one outcome). */
export interface ErrorCount {
  code: string;
  status: number;
  requests: number;
}

/** Per-model totals of the successful requests within the filter, most used first. */
export function modelTotals(db: Database, filter: UsageFilter): ModelTotals[] {
  const w = where(filter, "outcome = 'ok'");
  return db
    .prepare(
      `SELECT coalesce(served_model, model, '(none)') AS model, count(*) AS requests,
           sum(prompt_tokens) AS promptTokens, sum(completion_tokens) AS completionTokens
         FROM usage ${w.sql} GROUP BY 1 ORDER BY requests DESC, model`,
    )
    .all(...w.params) as ModelTotals[];
}

/** Failed requests within the filter counted by error code, most frequent first. */
export function errorCounts(db: Database, filter: UsageFilter): ErrorCount[] {
  const w = where(filter, "outcome <> 'ok'");
  return db
    .prepare(
      `SELECT coalesce(error_code, outcome) AS code, max(status) AS status, count(*) AS requests
         FROM usage ${w.sql} GROUP BY 1 ORDER BY requests DESC, code`,
    )
    .all(...w.params) as ErrorCount[];
}

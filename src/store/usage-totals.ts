import type { Database } from 'better-sqlite3';
import type { UsageFilter } from './usage-where.js';
import { totalsOf } from './usage-source.js';

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
  const src = totalsOf('totals', filter);
  return db
    .prepare(
      `SELECT model, sum(ok) AS requests, sum(ok_prompt) AS promptTokens, sum(ok_completion) AS completionTokens
         FROM (${src.sql}) GROUP BY 1 HAVING sum(ok) > 0 ORDER BY requests DESC, model`,
    )
    .all(...src.params) as ModelTotals[];
}

/** Failed requests within the filter counted by error code, most frequent first. */
export function errorCounts(db: Database, filter: UsageFilter): ErrorCount[] {
  const src = totalsOf('errors', filter);
  return db
    .prepare(
      `SELECT code, max(status) AS status, sum(requests) AS requests
         FROM (${src.sql}) GROUP BY 1 ORDER BY requests DESC, code`,
    )
    .all(...src.params) as ErrorCount[];
}

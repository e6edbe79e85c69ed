import type { Database } from 'better-sqlite3';

/** One request's accounting row (the ledger grows more columns over time; see docs/usage-ledger.md). */
export interface UsageRow {
  requestId: string;
  /** ms since the epoch, when the request arrived. */
  ts: number;
  keyId: string | null;
  keyName: string | null;
  backend: string | null;
  model: string | null;
  /** `ok`, `error`, `client_aborted`, `timeout`, `rejected`. */
  outcome: string;
  errorCode: string | null;
  status: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

/** The usage ledger: written once per request, read for budgets and reports. */
export function createUsageStore(db: Database) {
  const insert = db.prepare(
    `INSERT INTO usage (request_id, ts, key_id, key_name, backend, model, outcome, error_code, status, prompt_tokens, completion_tokens, cached_tokens)
     VALUES (@requestId, @ts, @keyId, @keyName, @backend, @model, @outcome, @errorCode, @status, @promptTokens, @completionTokens, @cachedTokens)`,
  );
  // Budgets count only turns that succeeded: a failed request costs the member nothing.
  const spent = db.prepare<[string, number], { n: number | null }>(
    "SELECT sum(prompt_tokens + completion_tokens) AS n FROM usage WHERE key_id = ? AND ts >= ? AND outcome = 'ok'",
  );
  return {
    record(row: UsageRow): void {
      insert.run(row);
    },
    /** prompt + completion tokens of a key's successful requests since `sinceMs`. */
    tokensSince(keyId: string, sinceMs: number): number {
      return spent.get(keyId, sinceMs)?.n ?? 0;
    },
  };
}

export type UsageStore = ReturnType<typeof createUsageStore>;

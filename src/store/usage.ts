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
  sessionId: string | null;
  /** `fresh`, `resumed` or `ephemeral`. */
  sessionMode: string | null;
  rotationReason: string | null;
}

/** UTC calendar day of a time, as stored in the daily totals (`2026-12-02`). */
export function toDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * The usage ledger: written once per request, read for budgets and reports. Successful requests
 * also add to a per-key, per-UTC-day total in the same transaction, so a budget check reads at
 * most 31 small rows instead of summing the whole ledger.
 */
export function createUsageStore(db: Database) {
  const insert = db.prepare(
    `INSERT INTO usage (request_id, ts, key_id, key_name, backend, model, outcome, error_code, status, prompt_tokens, completion_tokens, cached_tokens, session_id, session_mode, rotation_reason)
     VALUES (@requestId, @ts, @keyId, @keyName, @backend, @model, @outcome, @errorCode, @status, @promptTokens, @completionTokens, @cachedTokens, @sessionId, @sessionMode, @rotationReason)`,
  );
  const addDaily = db.prepare(
    `INSERT INTO usage_daily (key_id, day, tokens) VALUES (?, ?, ?)
     ON CONFLICT (key_id, day) DO UPDATE SET tokens = tokens + excluded.tokens`,
  );
  // Budgets count only turns that succeeded: a failed request costs the member nothing.
  const spent = db.prepare<[string, string], { n: number | null }>('SELECT sum(tokens) AS n FROM usage_daily WHERE key_id = ? AND day >= ?');
  const write = db.transaction((row: UsageRow) => {
    insert.run(row);
    const tokens = row.promptTokens + row.completionTokens;
    if (row.outcome === 'ok' && row.keyId && tokens > 0) addDaily.run(row.keyId, toDay(row.ts), tokens);
  });
  const cacheShare = db.prepare<[string], { cached: number | null; prompt: number | null }>(
    "SELECT sum(cached_tokens) AS cached, sum(prompt_tokens) AS prompt FROM usage WHERE key_id = ? AND outcome = 'ok'",
  );
  return {
    /** Share of a key's prompt tokens served from the provider's prompt cache (null before any usage). */
    cacheHitShare(keyId: string): number | null {
      const r = cacheShare.get(keyId);
      return r?.prompt ? (r.cached ?? 0) / r.prompt : null;
    },
    record(row: UsageRow): void {
      write(row);
    },
    /** prompt + completion tokens of a key's successful requests since the UTC day that contains `sinceMs`. */
    tokensSince(keyId: string, sinceMs: number): number {
      return spent.get(keyId, toDay(sinceMs))?.n ?? 0;
    },
  };
}

export type UsageStore = ReturnType<typeof createUsageStore>;

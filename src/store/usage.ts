import type { Database } from 'better-sqlite3';
import {
  CLIENT_NAME,
  type DbRow,
  LEDGER_SCHEMA_VERSION,
  type LedgerRecord,
  toDay,
  toLedgerRecord,
  type UsageRow,
} from './usage-row.js';
import {
  dailyUsage,
  type DailyRow,
  defineCostSum,
  type GroupBy,
  summarizeUsage,
  type UsageFilter,
  type UsageGroup,
  where,
} from './usage-query.js';
import { recentConversations } from './usage-recent.js';
import { createRollup } from './usage-rollup.js';
import { errorCounts, modelTotals } from './usage-totals.js';
import type { WriteBehind } from './write-behind.js';

/** Rows an export reads per query. */
const EXPORT_PAGE = 500;

export { CLIENT_NAME, LEDGER_SCHEMA_VERSION, toDay, toLedgerRecord } from './usage-row.js';
export type { LedgerRecord, UsageRow } from './usage-row.js';
export type { DailyRow, GroupBy, Scope, UsageFilter, UsageGroup } from './usage-query.js';
export { parseWhen, WHEN_FORMS } from './usage-filter.js';
export { usageGroupOf } from './usage-group.js';
export { createUsageTally, type UsageTally } from './usage-tally.js';

/** The ledger's statements, and the one transaction that writes a request's row with its daily total. */
function prepareUsageStatements(db: Database, behind: WriteBehind) {
  const insert = db.prepare(
    `INSERT INTO usage (request_id, ts, key_id, key_name, endpoint, backend, model, served_model, outcome,
       error_code, status, queue_ms, ttft_ms, duration_ms, prompt_tokens, completion_tokens, cached_tokens,
       reasoning_tokens, raw_usage, partial, estimated, cost_usd, session_id, session_mode, rotation_reason,
       run_mode, overage, login, api, provider, client_name, schema_version)
     VALUES (@requestId, @ts, @keyId, @keyName, @endpoint, @backend, @model, @servedModel, @outcome,
       @errorCode, @status, @queueMs, @ttftMs, @durationMs, @promptTokens, @completionTokens, @cachedTokens,
       @reasoningTokens, @rawUsage, @partial, @estimated, @costUsd, @sessionId, @sessionMode, @rotationReason,
       @runMode, @overage, @login, @api, @provider, @clientName, @schemaVersion)`,
  );
  const addDaily = db.prepare(
    `INSERT INTO usage_daily (key_id, day, tokens) VALUES (?, ?, ?)
     ON CONFLICT (key_id, day) DO UPDATE SET tokens = tokens + excluded.tokens`,
  );
  const rollup = createRollup(db);
  const write = db.transaction(({ billable, ...row }: UsageRow) => {
    // The request's slot state, saved as its turn ended, commits with its row.
    behind.drain();
    const cli = row.backend !== null;
    const { lastInsertRowid } = insert.run({
      ...row,
      endpoint: row.endpoint ?? 'chat.completions',
      rawUsage: row.rawUsage ? JSON.stringify(row.rawUsage) : null,
      partial: row.partial ? 1 : 0,
      estimated: row.estimated ? 1 : 0,
      runMode: row.runMode ?? null,
      overage: row.overage ? 1 : 0,
      login: row.login ?? null,
      api: cli ? 'cli' : null,
      provider: cli ? (row.provider ?? row.backend) : null,
      clientName: CLIENT_NAME,
      schemaVersion: LEDGER_SCHEMA_VERSION,
    });
    rollup.added(lastInsertRowid);
    const tokens = row.promptTokens + row.completionTokens;
    if ((billable ?? row.outcome === 'ok') && row.keyId && tokens > 0) addDaily.run(row.keyId, toDay(row.ts), tokens);
  });
  return {
    write,
    rollup,
    // Budgets count what reached members: replies, and the part of one a client was sent before it left.
    spent: db.prepare<[string, string], { n: number | null }>(
      'SELECT sum(tokens) AS n FROM usage_daily WHERE key_id = ? AND day >= ?',
    ),
    cacheShare: db.prepare<[string], { cached: number | null; prompt: number | null }>(
      'SELECT sum(ok_cached) AS cached, sum(ok_prompt) AS prompt FROM usage_totals WHERE key_id = ?',
    ),
    pruneRows: db.prepare('DELETE FROM usage WHERE ts < ?'),
    pruneDaily: db.prepare('DELETE FROM usage_daily WHERE day < ?'),
  };
}

/**
 * Every row in the scope, oldest first, in the exported shape, read a page at a time (see the store's
 * `export`).
 */
function* exportUsage(db: Database, filter: UsageFilter): Generator<LedgerRecord> {
  // `since` is where the paging starts ((ts, id) > (since, '') is ts >= since), so that every page
  // seeks to its own start in the index rather than scanning from `since` again.
  const { sinceMs, ...rest } = filter;
  const w = where(rest, '(ts, request_id) > (?, ?)');
  const page = db.prepare(`SELECT * FROM usage ${w.sql} ORDER BY ts, request_id LIMIT ${EXPORT_PAGE}`);
  let after: { ts: number; id: string } = { ts: sinceMs ?? -Infinity, id: '' };
  for (;;) {
    const rows = page.all(...w.params, after.ts, after.id) as DbRow[];
    for (const r of rows) yield toLedgerRecord(r);
    const last = rows.at(-1);
    if (!last || rows.length < EXPORT_PAGE) return;
    after = { ts: last.ts, id: last.request_id };
  }
}

/**
 * The usage ledger: one row per request, read for budgets, reports and export. Successful
 * requests also add to a per-key, per-UTC-day total in the same transaction, so a budget check
 * reads at most 31 small rows instead of summing the whole ledger.
 */
export function createUsageStore(db: Database, behind: WriteBehind) {
  defineCostSum(db);
  const { write, rollup, spent, cacheShare, pruneRows, pruneDaily } = prepareUsageStatements(db, behind);
  return {
    /** Writes one request's row (one transaction: the row and the daily total, or neither). */
    record(row: UsageRow): void {
      write(row);
    },
    /** Writes many rows in one transaction, each as `record` writes it (imports, the ledger benchmark). */
    recordMany: db.transaction((rows: readonly UsageRow[]) => {
      for (const row of rows) write(row);
    }),
    /** prompt + completion tokens of a key's successful requests since the UTC day that contains `sinceMs`. */
    tokensSince(keyId: string, sinceMs: number): number {
      return spent.get(keyId, toDay(sinceMs))?.n ?? 0;
    },
    /** Share of a key's prompt tokens served from the provider's prompt cache (null before any usage). */
    cacheHitShare(keyId: string): number | null {
      const r = cacheShare.get(keyId);
      return r?.prompt ? (r.cached ?? 0) / r.prompt : null;
    },
    /** Totals grouped by key, UTC day or model, within the scope. */
    summarize(filter: UsageFilter, by: GroupBy): UsageGroup[] {
      return summarizeUsage(db, filter, by);
    },
    /** Totals per UTC day, key and model within the scope, oldest day first (the usage page's rows). */
    daily(filter: UsageFilter): DailyRow[] {
      return dailyUsage(db, filter);
    },
    /** The usage page's breakdown: successful requests per model, failures per code, recent conversations. */
    breakdown(filter: UsageFilter, conversations: number) {
      return {
        models: modelTotals(db, filter),
        errors: errorCounts(db, filter),
        conversations: recentConversations(db, filter, conversations),
      };
    },
    /**
     * Every row in the scope, oldest first, in the exported shape; read a page at a time, never loaded
     * at once. No statement stays open between pages: a reader that waits on its client (the HTTP
     * export) between rows would otherwise keep the connection busy and fail every other query on it.
     */
    *export(filter: UsageFilter): Generator<LedgerRecord> {
      yield* exportUsage(db, filter);
    },
    /** One request's row, or undefined. */
    get(requestId: string): LedgerRecord | undefined {
      const r = db.prepare('SELECT * FROM usage WHERE request_id = ?').get(requestId) as DbRow | undefined;
      return r && toLedgerRecord(r);
    },
    /** Deletes rows older than the cutoff (and daily totals of days before it); returns how many rows went. */
    prune(olderThanMs: number): number {
      return db.transaction(() => {
        const n = pruneRows.run(olderThanMs).changes;
        rollup.pruned(olderThanMs);
        // Daily totals of the current month stay: the monthly budgets are computed from them.
        const d = new Date();
        pruneDaily.run(toDay(Math.min(olderThanMs, Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1))));
        return n;
      })();
    },
  };
}

export type UsageStore = ReturnType<typeof createUsageStore>;

import type { Database } from 'better-sqlite3';
import type { WriteBehind } from './watch.js';

/** Version of the row shape in docs/usage-ledger.md; bumped on any change a consumer could notice. */
export const LEDGER_SCHEMA_VERSION = 4;

/** The backfill tags of a CLI-served turn: a consumer keyed on `api` or on `provider` excludes it. */
export const CLIENT_NAME = 'olp';

/** One request's accounting row (docs/usage-ledger.md). */
export interface UsageRow {
  requestId: string;
  /** ms since the epoch, when the request arrived. */
  ts: number;
  keyId: string | null;
  keyName: string | null;
  /** The API the request came in on: `chat.completions` or `responses` (default chat). */
  endpoint?: string;
  backend: string | null;
  /** The CLI's provider tag (`claude-cli`, `codex`: the backend's own); defaults to the backend id. */
  provider?: string | null;
  /** The model the client asked for. */
  model: string | null;
  /** The model that answered (differs after a fallback). */
  servedModel: string | null;
  /** `ok`, `error`, `client_aborted`, `timeout`, `rejected`. */
  outcome: string;
  errorCode: string | null;
  status: number;
  queueMs: number | null;
  ttftMs: number | null;
  durationMs: number | null;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  /** The counts exactly as the CLI reported them for this turn. */
  rawUsage: Record<string, number> | null;
  /** The usage is what a failed or aborted run reported before it ended. */
  partial: boolean;
  /** The usage is olp's estimate (an aborted run that reported none): prompt and sent text, 4 characters a token. */
  estimated?: boolean;
  /** The tokens count against the key's budgets (the reply, or part of it, reached the client); default: outcome `ok`. */
  billable?: boolean;
  costUsd: number | null;
  /** The CLI's native session or thread id. */
  sessionId: string | null;
  /** `fresh`, `resumed` or `ephemeral`. */
  sessionMode: string | null;
  rotationReason: string | null;
  /** How the CLI turn ran: `cold`, `resumed` (a new process resuming from disk) or `warm` (a live worker). */
  runMode?: string | null;
  /** The turn drew on the plan's paid extra usage. */
  overage?: boolean;
}

/** A row as exported: the documented, versioned shape with the backfill tags. */
export interface LedgerRecord {
  schema_version: number;
  request_id: string;
  time: string;
  key_id: string | null;
  key_name: string | null;
  endpoint: string;
  backend: string | null;
  requested_model: string | null;
  served_model: string | null;
  outcome: string;
  error_code: string | null;
  http_status: number;
  queue_ms: number | null;
  ttft_ms: number | null;
  duration_ms: number | null;
  session_id: string | null;
  session_mode: string | null;
  rotation_reason: string | null;
  run_mode: string | null;
  /** The turn drew on the login's paid extra usage (subscription plans). */
  overage: boolean;
  cost_usd: number | null;
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    cached_tokens: number;
    reasoning_tokens: number;
    partial: boolean;
    estimated: boolean;
    raw: Record<string, number> | null;
  };
  api: 'cli' | null;
  provider: string | null;
  client_name: string;
}

interface DbRow {
  request_id: string;
  ts: number;
  key_id: string | null;
  key_name: string | null;
  endpoint: string | null;
  backend: string | null;
  model: string | null;
  served_model: string | null;
  outcome: string;
  error_code: string | null;
  status: number;
  queue_ms: number | null;
  ttft_ms: number | null;
  duration_ms: number | null;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  raw_usage: string | null;
  partial: number;
  estimated: number;
  cost_usd: number | null;
  session_id: string | null;
  session_mode: string | null;
  rotation_reason: string | null;
  run_mode: string | null;
  overage: number;
  api: string | null;
  provider: string | null;
  client_name: string | null;
}

export function toLedgerRecord(r: DbRow): LedgerRecord {
  return {
    schema_version: LEDGER_SCHEMA_VERSION,
    request_id: r.request_id,
    time: new Date(r.ts).toISOString(),
    key_id: r.key_id,
    key_name: r.key_name,
    endpoint: r.endpoint ?? 'chat.completions',
    backend: r.backend,
    requested_model: r.model,
    served_model: r.served_model,
    outcome: r.outcome,
    error_code: r.error_code,
    http_status: r.status,
    queue_ms: r.queue_ms,
    ttft_ms: r.ttft_ms,
    duration_ms: r.duration_ms,
    session_id: r.session_id,
    session_mode: r.session_mode,
    rotation_reason: r.rotation_reason,
    run_mode: r.run_mode ?? null,
    overage: r.overage === 1,
    cost_usd: r.cost_usd,
    usage: {
      prompt_tokens: r.prompt_tokens,
      completion_tokens: r.completion_tokens,
      total_tokens: r.prompt_tokens + r.completion_tokens,
      cached_tokens: r.cached_tokens,
      reasoning_tokens: r.reasoning_tokens,
      partial: r.partial === 1,
      estimated: r.estimated === 1,
      raw: r.raw_usage === null ? null : (JSON.parse(r.raw_usage) as Record<string, number>),
    },
    api: r.api === 'cli' ? 'cli' : null,
    provider: r.provider,
    client_name: r.client_name ?? CLIENT_NAME,
  };
}

/** UTC calendar day of a time, as stored in the daily totals (`2026-12-02`). */
export function toDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

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

function where(f: UsageFilter): { sql: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  if ('keyId' in f.scope) {
    clauses.push('key_id = ?');
    params.push(f.scope.keyId);
  } else if (f.keyId) {
    clauses.push('key_id = ?');
    params.push(f.keyId);
  }
  if (f.sinceMs !== undefined) {
    clauses.push('ts >= ?');
    params.push(f.sinceMs);
  }
  if (f.untilMs !== undefined) {
    clauses.push('ts < ?');
    params.push(f.untilMs);
  }
  return { sql: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', params };
}

const GROUP_BY = {
  key: "coalesce(key_name, '(no key)')",
  day: "strftime('%Y-%m-%d', ts / 1000, 'unixepoch')",
  model: "coalesce(served_model, model, '(none)')",
} as const;

/**
 * The usage ledger: one row per request, read for budgets, reports and export. Successful
 * requests also add to a per-key, per-UTC-day total in the same transaction, so a budget check
 * reads at most 31 small rows instead of summing the whole ledger.
 */
export function createUsageStore(db: Database, behind: WriteBehind) {
  const insert = db.prepare(
    `INSERT INTO usage (request_id, ts, key_id, key_name, endpoint, backend, model, served_model, outcome, error_code, status, queue_ms, ttft_ms, duration_ms,
       prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens, raw_usage, partial, estimated, cost_usd, session_id, session_mode, rotation_reason, run_mode, overage,
       api, provider, client_name, schema_version)
     VALUES (@requestId, @ts, @keyId, @keyName, @endpoint, @backend, @model, @servedModel, @outcome, @errorCode, @status, @queueMs, @ttftMs, @durationMs,
       @promptTokens, @completionTokens, @cachedTokens, @reasoningTokens, @rawUsage, @partial, @estimated, @costUsd, @sessionId, @sessionMode, @rotationReason, @runMode, @overage,
       @api, @provider, @clientName, @schemaVersion)`,
  );
  const addDaily = db.prepare(
    `INSERT INTO usage_daily (key_id, day, tokens) VALUES (?, ?, ?)
     ON CONFLICT (key_id, day) DO UPDATE SET tokens = tokens + excluded.tokens`,
  );
  // Budgets count what reached members: replies, and the part of one a client was sent before it left.
  const spent = db.prepare<[string, string], { n: number | null }>('SELECT sum(tokens) AS n FROM usage_daily WHERE key_id = ? AND day >= ?');
  const cacheShare = db.prepare<[string], { cached: number | null; prompt: number | null }>(
    "SELECT sum(cached_tokens) AS cached, sum(prompt_tokens) AS prompt FROM usage WHERE key_id = ? AND outcome = 'ok'",
  );
  const pruneRows = db.prepare('DELETE FROM usage WHERE ts < ?');
  const pruneDaily = db.prepare('DELETE FROM usage_daily WHERE day < ?');
  const write = db.transaction(({ billable, ...row }: UsageRow) => {
    // The request's slot state, saved as its turn ended, commits with its row.
    behind.drain();
    const cli = row.backend !== null;
    insert.run({
      ...row,
      endpoint: row.endpoint ?? 'chat.completions',
      rawUsage: row.rawUsage ? JSON.stringify(row.rawUsage) : null,
      partial: row.partial ? 1 : 0,
      estimated: row.estimated ? 1 : 0,
      runMode: row.runMode ?? null,
      overage: row.overage ? 1 : 0,
      api: cli ? 'cli' : null,
      provider: cli ? (row.provider ?? row.backend) : null,
      clientName: CLIENT_NAME,
      schemaVersion: LEDGER_SCHEMA_VERSION,
    });
    const tokens = row.promptTokens + row.completionTokens;
    if ((billable ?? row.outcome === 'ok') && row.keyId && tokens > 0) addDaily.run(row.keyId, toDay(row.ts), tokens);
  });

  return {
    /** Writes one request's row (one transaction: the row and the daily total, or neither). */
    record(row: UsageRow): void {
      write(row);
    },
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
    summarize(filter: UsageFilter, by: keyof typeof GROUP_BY): UsageGroup[] {
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
        .all(...w.params) as { grp: string; requests: number; ok: number; errors: number; prompt: number; cached: number; completion: number; ok_prompt: number; ok_cached: number; cost: number | null }[];
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
    },
    /** Totals per UTC day, key and model within the scope, oldest day first (the usage page's rows). */
    daily(filter: UsageFilter): DailyRow[] {
      const w = where(filter);
      const rows = db
        .prepare(
          `SELECT ${GROUP_BY.day} AS day, coalesce(key_name, '(no key)') AS key, ${GROUP_BY.model} AS model, count(*) AS requests,
             sum(outcome = 'ok') AS ok, sum(prompt_tokens) AS prompt, sum(cached_tokens) AS cached, sum(completion_tokens) AS completion, sum(cost_usd) AS cost
           FROM usage ${w.sql} GROUP BY day, key, model ORDER BY day, key, model`,
        )
        .all(...w.params) as { day: string; key: string; model: string; requests: number; ok: number; prompt: number; cached: number; completion: number; cost: number | null }[];
      return rows.map((r) => ({ day: r.day, key: r.key, model: r.model, requests: r.requests, ok: r.ok, promptTokens: r.prompt, cachedTokens: r.cached, completionTokens: r.completion, costUsd: r.cost }));
    },
    /** Every row in the scope, oldest first, in the exported shape; streamed, not loaded at once. */
    *export(filter: UsageFilter): Generator<LedgerRecord> {
      const w = where(filter);
      for (const r of db.prepare(`SELECT * FROM usage ${w.sql} ORDER BY ts, request_id`).iterate(...w.params)) yield toLedgerRecord(r as DbRow);
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
        // Daily totals of the current month stay: the monthly budgets are computed from them.
        const d = new Date();
        pruneDaily.run(toDay(Math.min(olderThanMs, Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1))));
        return n;
      })();
    },
  };
}

export type UsageStore = ReturnType<typeof createUsageStore>;

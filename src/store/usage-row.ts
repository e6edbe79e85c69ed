// A usage row as olp writes it, and as the ledger exports it (docs/usage-ledger.md).

/** Version of the row shape in docs/usage-ledger.md; bumped on any change a consumer could notice. */
export const LEDGER_SCHEMA_VERSION = 5;

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
  /**
   * The tokens count against the key's budgets (the reply, or part of it, reached the client); default:
   * outcome `ok`.
   */
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
  /** The login that served it (`olp logins`); null for the machine's own. */
  login?: string | null;
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
  /** The login whose CLI served the turn; null for the machine's own. */
  login: string | null;
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

export interface DbRow {
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
  login: string | null;
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
    login: r.login ?? null,
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

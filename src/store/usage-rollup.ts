import type { Database } from 'better-sqlite3';

// Running totals of the ledger, kept as its rows are written so that no view scans the whole
// ledger: per UTC day, key, model and login (the summaries and the usage pages), per day, key and
// failure code (the failures), and per day, key and CLI session (the conversations). Each table's
// rows are what its SELECT below computes from the ledger's rows: the row writer adds one row's
// share in the same transaction as the row, the schema step that made the tables added up the rows
// already there, a prune recomputes the day it cut into, and a query over part of a day adds up the
// ledger's own rows of that part. A missing key id or name is '' (never a key's name).

const DAY_OF = "strftime('%Y-%m-%d', ts / 1000, 'unixepoch')";
const KEY = "coalesce(key_id, '') AS key_id, coalesce(key_name, '') AS key_name";

/** The totals' columns in table order: the group's, then the sums. */
export const TOTALS_COLUMNS =
  'day, key_id, key_name, model, login, requests, ok, prompt, cached, completion, ok_prompt, ok_cached, ok_completion, cost, cost_err';
export const ERRORS_COLUMNS = 'day, key_id, key_name, code, requests, status';
export const SESSIONS_COLUMNS =
  'day, key_id, key_name, session_id, backend, served_model, model, first_ts, last_ts, turns';

/** The totals of the ledger's rows that `where` selects, one row per group. */
export function totalsSelect(where: string): string {
  return `SELECT ${DAY_OF} AS day, ${KEY}, coalesce(served_model, model, '(none)') AS model,
      CASE WHEN backend IS NULL THEN '(no CLI)' ELSE coalesce(login, 'machine') END AS login,
      count(*) AS requests, sum(outcome = 'ok') AS ok, sum(prompt_tokens) AS prompt,
      sum(cached_tokens) AS cached, sum(completion_tokens) AS completion,
      sum(CASE WHEN outcome = 'ok' THEN prompt_tokens ELSE 0 END) AS ok_prompt,
      sum(CASE WHEN outcome = 'ok' THEN cached_tokens ELSE 0 END) AS ok_cached,
      sum(CASE WHEN outcome = 'ok' THEN completion_tokens ELSE 0 END) AS ok_completion,
      sum(cost_usd) AS cost, 0.0 AS cost_err
    FROM usage ${where} GROUP BY 1, 2, 3, 4, 5`;
}

/** The failures (every outcome but `ok`) of the rows that `where` selects, by code. */
export function errorsSelect(where: string): string {
  return `SELECT ${DAY_OF} AS day, ${KEY}, coalesce(error_code, outcome) AS code, count(*) AS requests,
      max(status) AS status
    FROM usage ${and(where, "outcome <> 'ok'")} GROUP BY 1, 2, 3, 4`;
}

/** The conversations (successful rows with a CLI session id) of the rows that `where` selects. */
export function sessionsSelect(where: string): string {
  return `SELECT ${DAY_OF} AS day, ${KEY}, session_id, min(backend) AS backend, min(served_model) AS served_model,
      min(model) AS model, min(ts) AS first_ts, max(ts) AS last_ts, count(*) AS turns
    FROM usage ${and(where, "outcome = 'ok'", 'session_id IS NOT NULL')} GROUP BY 1, 2, 3, 4`;
}

function and(where: string, ...also: string[]): string {
  return where ? `${where} AND ${also.join(' AND ')}` : `WHERE ${also.join(' AND ')}`;
}

/** SQL's min() of two values of which either may be NULL, as the aggregate min() ignores NULLs. */
const least = (c: string) =>
  `${c} = CASE WHEN ${c} IS NULL THEN excluded.${c} WHEN excluded.${c} IS NULL THEN ${c} ELSE min(${c}, excluded.${c}) END`;
const add = (c: string) => `${c} = ${c} + excluded.${c}`;

/** One table: its SELECT, the group it is keyed by, and how one more group's row merges into it. */
const TABLES = [
  {
    name: 'usage_totals',
    select: totalsSelect,
    columns: TOTALS_COLUMNS,
    key: 'day, key_id, key_name, model, login',
    merge: [
      ...['requests', 'ok', 'prompt', 'cached', 'completion', 'ok_prompt', 'ok_cached', 'ok_completion'].map(add),
      // A compensated sum, as SQLite's sum() adds (kahanBabuskaNeumaierStep in its func.c).
      'cost = CASE WHEN cost IS NULL THEN excluded.cost WHEN excluded.cost IS NULL THEN cost ELSE cost + excluded.cost END',
      `cost_err = CASE WHEN cost IS NULL THEN excluded.cost_err WHEN excluded.cost IS NULL THEN cost_err
         WHEN abs(cost) > abs(excluded.cost) THEN cost_err + ((cost - (cost + excluded.cost)) + excluded.cost)
         ELSE cost_err + ((excluded.cost - (cost + excluded.cost)) + cost) END`,
    ],
  },
  {
    name: 'usage_errors',
    select: errorsSelect,
    columns: ERRORS_COLUMNS,
    key: 'day, key_id, key_name, code',
    merge: [add('requests'), 'status = max(status, excluded.status)'],
  },
  {
    name: 'usage_sessions',
    select: sessionsSelect,
    columns: SESSIONS_COLUMNS,
    key: 'day, key_id, key_name, session_id',
    merge: [
      least('backend'),
      least('served_model'),
      least('model'),
      'first_ts = min(first_ts, excluded.first_ts)',
      'last_ts = max(last_ts, excluded.last_ts)',
      add('turns'),
    ],
  },
] as const;

/** Adds the groups of the rows `where` selects to every table (the SELECT's WHERE keeps the upsert unambiguous). */
function upserts(where: string): string[] {
  return TABLES.map(
    (t) =>
      `INSERT INTO ${t.name} (${t.columns}) SELECT * FROM (${t.select(where)}) WHERE true
       ON CONFLICT (${t.key}) DO UPDATE SET ${t.merge.join(', ')}`,
  );
}

/** The schema step that makes the tables and adds up the rows already in the ledger. */
export const ROLLUP_MIGRATION = `CREATE TABLE usage_totals (
     day TEXT NOT NULL, key_id TEXT NOT NULL, key_name TEXT NOT NULL, model TEXT NOT NULL, login TEXT NOT NULL,
     requests INTEGER NOT NULL, ok INTEGER NOT NULL, prompt INTEGER NOT NULL, cached INTEGER NOT NULL,
     completion INTEGER NOT NULL, ok_prompt INTEGER NOT NULL, ok_cached INTEGER NOT NULL,
     ok_completion INTEGER NOT NULL, cost REAL, cost_err REAL NOT NULL,
     PRIMARY KEY (day, key_id, key_name, model, login)
   ) WITHOUT ROWID;
   CREATE INDEX usage_totals_key ON usage_totals (key_id, day);
   CREATE TABLE usage_errors (
     day TEXT NOT NULL, key_id TEXT NOT NULL, key_name TEXT NOT NULL, code TEXT NOT NULL,
     requests INTEGER NOT NULL, status INTEGER NOT NULL,
     PRIMARY KEY (day, key_id, key_name, code)
   ) WITHOUT ROWID;
   CREATE INDEX usage_errors_key ON usage_errors (key_id, day);
   CREATE TABLE usage_sessions (
     day TEXT NOT NULL, key_id TEXT NOT NULL, key_name TEXT NOT NULL, session_id TEXT NOT NULL,
     backend TEXT, served_model TEXT, model TEXT, first_ts INTEGER NOT NULL, last_ts INTEGER NOT NULL,
     turns INTEGER NOT NULL,
     PRIMARY KEY (day, key_id, key_name, session_id)
   ) WITHOUT ROWID;
   CREATE INDEX usage_sessions_last ON usage_sessions (key_id, last_ts);
   CREATE INDEX usage_sessions_id ON usage_sessions (session_id);
   ${upserts('')
     .map((s) => `${s};`)
     .join('\n')}`;

/** Keeps the tables in step with the ledger: one written row, and a prune. */
export function createRollup(db: Database) {
  const one = upserts('WHERE rowid = ?').map((s) => db.prepare(s));
  const days = upserts('WHERE ts >= ? AND ts < ?').map((s) => db.prepare(s));
  const dropBefore = TABLES.map((t) => db.prepare(`DELETE FROM ${t.name} WHERE day < ?`));
  const dropDay = TABLES.map((t) => db.prepare(`DELETE FROM ${t.name} WHERE day = ?`));
  return {
    /** Adds the ledger row of this rowid (in the transaction that wrote it). */
    added(rowid: number | bigint): void {
      for (const s of one) s.run(rowid);
    },
    /** After the rows before `cutoffMs` were deleted: drops the days before it and recomputes its own. */
    pruned(cutoffMs: number): void {
      const start = cutoffMs - (((cutoffMs % 86_400_000) + 86_400_000) % 86_400_000);
      const day = new Date(start).toISOString().slice(0, 10);
      for (const s of dropBefore) s.run(day);
      for (const s of dropDay) s.run(day);
      for (const s of days) s.run(start, start + 86_400_000);
    },
  };
}

export type Rollup = ReturnType<typeof createRollup>;

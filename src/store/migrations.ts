import type BetterSqlite3 from 'better-sqlite3';
import { ROLLUP_MIGRATION } from './usage-rollup.js';

// The state database's schema, as the steps that made it: `user_version` counts the steps taken.

export const MIGRATIONS: string[] = [
  `CREATE TABLE keys (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     role TEXT NOT NULL CHECK (role IN ('owner', 'member')),
     token_hash BLOB NOT NULL UNIQUE,
     hint TEXT NOT NULL,
     created_at TEXT NOT NULL,
     revoked_at TEXT
   );
   CREATE UNIQUE INDEX keys_active_name ON keys (name) WHERE revoked_at IS NULL;`,
  `ALTER TABLE keys ADD COLUMN models TEXT;
   ALTER TABLE keys ADD COLUMN concurrency INTEGER;
   ALTER TABLE keys ADD COLUMN rpm INTEGER;
   ALTER TABLE keys ADD COLUMN daily_tokens INTEGER;
   ALTER TABLE keys ADD COLUMN monthly_tokens INTEGER;
   ALTER TABLE keys ADD COLUMN enabled INTEGER NOT NULL DEFAULT 1;
   ALTER TABLE keys ADD COLUMN expires_at TEXT;
   CREATE TABLE usage (
     request_id TEXT PRIMARY KEY,
     ts INTEGER NOT NULL,
     key_id TEXT,
     key_name TEXT,
     backend TEXT,
     model TEXT,
     outcome TEXT NOT NULL,
     error_code TEXT,
     status INTEGER NOT NULL,
     prompt_tokens INTEGER NOT NULL DEFAULT 0,
     completion_tokens INTEGER NOT NULL DEFAULT 0,
     cached_tokens INTEGER NOT NULL DEFAULT 0
   );
   CREATE INDEX usage_key_ts ON usage (key_id, ts);`,
  `CREATE TABLE usage_daily (
     key_id TEXT NOT NULL,
     day TEXT NOT NULL,
     tokens INTEGER NOT NULL,
     PRIMARY KEY (key_id, day)
   ) WITHOUT ROWID;
   INSERT INTO usage_daily (key_id, day, tokens)
     SELECT key_id, strftime('%Y-%m-%d', ts / 1000, 'unixepoch'), sum(prompt_tokens + completion_tokens)
     FROM usage WHERE outcome = 'ok' AND key_id IS NOT NULL GROUP BY 1, 2;`,
  `CREATE TABLE slots (
     key_id TEXT NOT NULL,
     backend TEXT NOT NULL,
     slot INTEGER NOT NULL,
     session_id TEXT,
     created_at INTEGER,
     last_used_at INTEGER,
     turns INTEGER NOT NULL DEFAULT 0,
     msg_count INTEGER NOT NULL DEFAULT 0,
     fingerprint TEXT,
     system_hash TEXT,
     dirty INTEGER NOT NULL DEFAULT 0,
     leased INTEGER NOT NULL DEFAULT 0,
     last_reason TEXT,
     rotations INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (key_id, backend, slot)
   ) WITHOUT ROWID;
   ALTER TABLE usage ADD COLUMN session_id TEXT;
   ALTER TABLE usage ADD COLUMN session_mode TEXT;
   ALTER TABLE usage ADD COLUMN rotation_reason TEXT;`,
  `ALTER TABLE slots ADD COLUMN usage_base TEXT;`,
  `ALTER TABLE usage ADD COLUMN served_model TEXT;
   ALTER TABLE usage ADD COLUMN queue_ms INTEGER;
   ALTER TABLE usage ADD COLUMN ttft_ms INTEGER;
   ALTER TABLE usage ADD COLUMN duration_ms INTEGER;
   ALTER TABLE usage ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE usage ADD COLUMN raw_usage TEXT;
   ALTER TABLE usage ADD COLUMN partial INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE usage ADD COLUMN cost_usd REAL;
   ALTER TABLE usage ADD COLUMN api TEXT;
   ALTER TABLE usage ADD COLUMN provider TEXT;
   ALTER TABLE usage ADD COLUMN client_name TEXT;
   ALTER TABLE usage ADD COLUMN schema_version INTEGER NOT NULL DEFAULT 1;
   CREATE INDEX usage_ts ON usage (ts);`,
  `ALTER TABLE usage ADD COLUMN estimated INTEGER NOT NULL DEFAULT 0;`,
  `ALTER TABLE usage ADD COLUMN endpoint TEXT;`,
  `CREATE TABLE responses (
     id TEXT PRIMARY KEY,
     key_id TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     previous_response_id TEXT,
     items TEXT NOT NULL,
     messages TEXT NOT NULL,
     output_text TEXT NOT NULL,
     body TEXT NOT NULL
   );
   CREATE INDEX responses_key_created ON responses (key_id, created_at);
   CREATE INDEX responses_created ON responses (created_at);`,
  `ALTER TABLE usage ADD COLUMN run_mode TEXT;`,
  `CREATE TABLE plan_state (
     backend TEXT PRIMARY KEY,
     status TEXT NOT NULL,
     plan_window TEXT,
     resets_at INTEGER,
     utilization REAL,
     overage INTEGER NOT NULL DEFAULT 0,
     message TEXT,
     updated_at INTEGER NOT NULL
   );
   ALTER TABLE keys ADD COLUMN overage TEXT;
   ALTER TABLE usage ADD COLUMN overage INTEGER NOT NULL DEFAULT 0;`,
  // Output items by id (what item_reference names) and in order per response (the function calls a
  // previous_response_id chain replays), so neither look-up reads a stored Response body. A rowid
  // table: an item can be 1 MB, and WITHOUT ROWID B-trees with rows that large made 2,000 primary
  // key look-ups 4 times slower (14 ms against 3.5).
  `CREATE TABLE response_items (
     key_id TEXT NOT NULL,
     item_id TEXT NOT NULL,
     response_id TEXT NOT NULL,
     seq INTEGER NOT NULL,
     type TEXT,
     item TEXT NOT NULL,
     PRIMARY KEY (key_id, item_id)
   );
   CREATE INDEX response_items_response ON response_items (response_id, seq);
   INSERT OR IGNORE INTO response_items (key_id, item_id, response_id, seq, type, item)
     SELECT r.key_id, json_extract(o.value, '$.id'), r.id, o.key, json_extract(o.value, '$.type'), o.value
     FROM responses r, json_each(r.body, '$.output') o
     WHERE o.type = 'object' AND json_type(o.value, '$.id') = 'text';
   CREATE TRIGGER responses_items_gone AFTER DELETE ON responses BEGIN
     DELETE FROM response_items WHERE response_id = old.id;
   END;`,
  // Logins: each CLI's credential kind (the secrets are files under <state>/logins/<name>/); a key
  // bound to one (NULL: the machine's own), and the login each usage row was served by.
  `CREATE TABLE logins (
     name TEXT PRIMARY KEY,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL,
     claude TEXT,
     codex TEXT
   );
   ALTER TABLE keys ADD COLUMN login TEXT;
   ALTER TABLE usage ADD COLUMN login TEXT;`,
  // The state dir's own settings that every command must agree on (the instance tag its keys carry).
  `CREATE TABLE settings (
     name TEXT PRIMARY KEY,
     value TEXT NOT NULL
   );`,
  // Changes to keys by an owner key (`/olp/keys`) or the operator (`olp keys`, actor `cli`), for the
  // page's recent changes: who, what, which key, the fields set (never token material).
  `CREATE TABLE admin_actions (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     at TEXT NOT NULL,
     actor TEXT NOT NULL,
     action TEXT NOT NULL,
     target TEXT NOT NULL,
     changes TEXT NOT NULL
   );`,
  // Alerts sent to the owner's webhook: one row per subject, kind, period and threshold, holding
  // the current period's end, so a restart or a second process never sends the same one twice.
  `CREATE TABLE alerts_sent (
     id TEXT PRIMARY KEY,
     period_end INTEGER NOT NULL,
     sent_at INTEGER NOT NULL
   );`,
  // Paging the ledger in (ts, request_id) order (the export) walks an index instead of sorting the
  // rest of the table for every page; the new indexes take over the old ones' prefixes.
  `CREATE INDEX usage_ts_id ON usage (ts, request_id);
   DROP INDEX usage_ts;
   CREATE INDEX usage_key_ts_id ON usage (key_id, ts, request_id);
   DROP INDEX usage_key_ts;`,
  // When a login's credential was last refused by its provider (a 401 on a run), per CLI, and what
  // the CLI said; cleared by a new credential or the login's next answered run. The page shows it.
  `ALTER TABLE logins ADD COLUMN claude_refused TEXT;
   ALTER TABLE logins ADD COLUMN codex_refused TEXT;`,
  // Running totals of the ledger per day, key, model and login, per failure code and per CLI session,
  // kept as rows are written, so that no view scans the ledger (usage-rollup.ts); made here from the
  // rows already in it.
  ROLLUP_MIGRATION,
];

/** Takes the database through the steps it has not taken yet, in one transaction. */
export function migrate(db: BetterSqlite3.Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length)
    throw new Error(`olp.db has schema version ${current}, newer than this olp understands (${MIGRATIONS.length})`);
  const run = db.transaction(() => {
    for (let v = current; v < MIGRATIONS.length; v++) db.exec(MIGRATIONS[v]!);
    db.pragma(`user_version = ${MIGRATIONS.length}`);
  });
  run();
}

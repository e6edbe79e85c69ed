import { chmodSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { createKeyStore, type KeyStore } from './keys.js';
import { createLoginStore, type LoginStore } from './logins.js';
import { createPlanStore, type PlanRow, type PlanStore } from './plans.js';
import { createResponseStore, type ResponseStore } from './responses.js';
import { createSlotStore, type SlotStore } from './slots.js';
import { createWriteBehind, createWriteWatch } from './watch.js';
import { createUsageStore, type UsageStore } from './usage.js';
import { ensurePrivateDir } from './fs.js';

export { ensurePrivateDir } from './fs.js';
export { findLockHolder, lockStateDir, StateDirLocked, type LockHolder, type StateLock } from './lock.js';
export {
  TOKEN_PREFIX,
  KEY_NAME,
  DEFAULT_POLICY,
  hashToken,
  type KeyRecord,
  type KeyStanding,
  type KeyStore,
  type Policy,
  type Role,
} from './keys.js';
export {
  LEDGER_SCHEMA_VERSION,
  CLIENT_NAME,
  type DailyRow,
  type LedgerRecord,
  type Scope,
  type UsageFilter,
  type UsageGroup,
  type UsageRow,
  type UsageStore,
} from './usage.js';
export type { SlotRecord, SlotStore } from './slots.js';
export type { PlanRow, PlanStore } from './plans.js';
export type { CredentialKind, LoginCli, LoginRecord, LoginStore } from './logins.js';
export { MAX_CHAIN, type ResponseStore, type StoredResponse, type ReferencedItem } from './responses.js';

const MIGRATIONS: string[] = [
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
];

/** The state store: one SQLite database (WAL) in the state directory; the only module that knows it is SQLite. */
export interface Store {
  readonly keys: KeyStore;
  readonly usage: UsageStore;
  readonly slots: SlotStore;
  readonly responses: ResponseStore;
  readonly plans: PlanStore;
  readonly logins: LoginStore;
  /** `PRAGMA integrity_check`: 'ok' for a sound database. */
  check(): string;
  close(): void;
}

/** Opens (creating and migrating if needed) `<stateDir>/olp.db`, files 0600 in a 0700 directory. */
export function openStore(stateDir: string): Store {
  ensurePrivateDir(stateDir);
  const file = join(stateDir, 'olp.db');
  const fresh = !existsSync(file);
  const db = new BetterSqlite3(file);
  if (fresh) chmodSync(file, 0o600);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  migrate(db);
  for (const extra of ['-wal', '-shm']) if (existsSync(file + extra)) chmodSync(file + extra, 0o600);
  return storeOn(db);
}

/** A store in memory, gone when closed: for tests that compose an app without a state directory. */
export function openMemoryStore(): Store {
  const db = new BetterSqlite3(':memory:');
  migrate(db);
  return storeOn(db);
}

/** The store's parts over one migrated database. */
function storeOn(db: BetterSqlite3.Database): Store {
  // One look at other processes' writes serves both caches.
  const watch = createWriteWatch(db);
  const behind = createWriteBehind(db);
  return {
    keys: createKeyStore(db, watch),
    usage: createUsageStore(db, behind),
    slots: createSlotStore(db, watch, behind),
    responses: createResponseStore(db),
    plans: createPlanStore(db),
    logins: createLoginStore(db, watch),
    check: () => String(db.pragma('integrity_check', { simple: true })),
    close: () => {
      behind.flush();
      db.close();
    },
  };
}

/** The plan states of a state dir's database, read only, without migrating it (none when it is missing or older). */
export function readPlanStates(stateDir: string): PlanRow[] {
  const file = join(stateDir, 'olp.db');
  if (!existsSync(file)) return [];
  try {
    const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
    try {
      return createPlanStore(db).list();
    } finally {
      db.close();
    }
  } catch {
    return [];
  }
}

function migrate(db: BetterSqlite3.Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length)
    throw new Error(`olp.db has schema version ${current}, newer than this olp understands (${MIGRATIONS.length})`);
  const run = db.transaction(() => {
    for (let v = current; v < MIGRATIONS.length; v++) db.exec(MIGRATIONS[v]!);
    db.pragma(`user_version = ${MIGRATIONS.length}`);
  });
  run();
}

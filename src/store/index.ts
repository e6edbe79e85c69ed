import { chmodSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { createAdminActionStore, type AdminActionStore } from './admin-actions.js';
import { createAlertStore, type AlertStore } from './alerts.js';
import { createKeyStore, TOKEN_PREFIX, type KeyStore } from './keys.js';
import { createLoginStore, type LoginRecord, type LoginStore } from './logins.js';
import { createPlanStore, type PlanRow, type PlanStore } from './plans.js';
import { createResponseStore, type ResponseStore } from './responses.js';
import { createSlotStore, type SlotStore } from './slots.js';
import { createWriteWatch } from './watch.js';
import { createWriteBehind } from './write-behind.js';
import { createUsageStore, type UsageStore } from './usage.js';
import { ensurePrivateDir } from './fs.js';
import { migrate } from './migrations.js';

export { ensurePrivateDir } from './fs.js';
export { findLockHolder, lockStateDir, StateDirLocked, type LockHolder, type StateLock } from './lock.js';
export {
  TOKEN_PREFIX,
  INSTANCE_TAG,
  tokenTag,
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
  createUsageTally,
  parseWhen,
  usageGroupOf,
  WHEN_FORMS,
  type DailyRow,
  type GroupBy,
  type LedgerRecord,
  type Scope,
  type UsageFilter,
  type UsageGroup,
  type UsageRow,
  type UsageStore,
  type UsageTally,
} from './usage.js';
export type { AdminAction, AdminActionKind, AdminActionStore } from './admin-actions.js';
export type { SlotRecord, SlotStore } from './slots.js';
export type { PlanRow, PlanStore } from './plans.js';
export type { AlertStore } from './alerts.js';
export type { CredentialKind, LoginCli, LoginRecord, LoginRefusal, LoginStore } from './logins.js';
export { MAX_CHAIN, type ResponseStore, type StoredResponse, type ReferencedItem } from './responses.js';

/** The state store: one SQLite database (WAL) in the state directory; the only module that knows it is SQLite. */
export interface Store {
  /** The tag this state dir's keys carry: the one given last (`instanceTag`), remembered; null: none. */
  readonly instanceTag: string | null;
  readonly keys: KeyStore;
  readonly usage: UsageStore;
  readonly slots: SlotStore;
  readonly responses: ResponseStore;
  readonly plans: PlanStore;
  readonly logins: LoginStore;
  /** Changes made to keys, for the owner's page. */
  readonly adminActions: AdminActionStore;
  /** The alerts sent to the owner's webhook (src/alerts). */
  readonly alerts: AlertStore;
  /** `PRAGMA integrity_check`: 'ok' for a sound database. */
  check(): string;
  close(): void;
}

export interface StoreOptions {
  /**
   * The instance's tag (`instanceTag`), minted into every key made or rotated through this store;
   * remembered in the state dir, so a command run without it still mints it.
   */
  instanceTag?: string | null | undefined;
}

/** Opens (creating and migrating if needed) `<stateDir>/olp.db`, files 0600 in a 0700 directory. */
export function openStore(stateDir: string, opts: StoreOptions = {}): Store {
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
  return storeOn(db, opts);
}

/** A store in memory, gone when closed: for tests that compose an app without a state directory. */
export function openMemoryStore(opts: StoreOptions = {}): Store {
  const db = new BetterSqlite3(':memory:');
  migrate(db);
  return storeOn(db, opts);
}

/** The store's parts over one migrated database. */
function storeOn(db: BetterSqlite3.Database, opts: StoreOptions): Store {
  // One look at other processes' writes serves both caches.
  const watch = createWriteWatch(db);
  const behind = createWriteBehind(db);
  const instanceTag = rememberTag(db, opts.instanceTag);
  return {
    instanceTag,
    keys: createKeyStore(db, watch, instanceTag),
    usage: createUsageStore(db, behind),
    slots: createSlotStore(db, watch, behind),
    responses: createResponseStore(db),
    plans: createPlanStore(db),
    logins: createLoginStore(db, watch),
    adminActions: createAdminActionStore(db),
    alerts: createAlertStore(db),
    check: () => String(db.pragma('integrity_check', { simple: true })),
    close: () => {
      behind.flush();
      db.close();
    },
  };
}

const TAG_SETTING = 'instance_tag';

/** The instance tag given now (then remembered), else the one remembered; null when there is none. */
function rememberTag(db: BetterSqlite3.Database, given: string | null | undefined): string | null {
  if (given) {
    db.prepare(
      'INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
    ).run(TAG_SETTING, given);
    return given;
  }
  return readTag(db);
}

function readTag(db: BetterSqlite3.Database): string | null {
  return (
    db.prepare<[string], { value: string }>('SELECT value FROM settings WHERE name = ?').get(TAG_SETTING)?.value ?? null
  );
}

/** The instance tag a state dir remembers, read only (for `olp doctor`); null when none or no database. */
export function readInstanceTag(stateDir: string): string | null {
  return readOnly(stateDir, readTag, null);
}

/** Reads a state dir's database read only, without migrating it; `fallback` when it is missing or older. */
function readOnly<T>(stateDir: string, read: (db: BetterSqlite3.Database) => T, fallback: T): T {
  const file = join(stateDir, 'olp.db');
  if (!existsSync(file)) return fallback;
  try {
    const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
    try {
      return read(db);
    } finally {
      db.close();
    }
  } catch {
    return fallback;
  }
}

/** The plan states of a state dir (none when its database is missing or older). */
export function readPlanStates(stateDir: string): PlanRow[] {
  return readOnly(stateDir, (db) => createPlanStore(db).list(), []);
}

/** A state dir's logins and which active keys each serves (`machine`: keys with no login). */
export function readLogins(stateDir: string): {
  logins: LoginRecord[];
  keys: Map<string, string[]>;
  /** Member keys on the machine's own login. */
  sharing: string[];
} {
  return readOnly(
    stateDir,
    (db) => {
      const keys = new Map<string, string[]>();
      const rows = db
        .prepare<[], { name: string; login: string | null; role: string }>(
          'SELECT name, login, role FROM keys WHERE revoked_at IS NULL ORDER BY name',
        )
        .all();
      for (const r of rows) keys.set(r.login ?? 'machine', [...(keys.get(r.login ?? 'machine') ?? []), r.name]);
      const sharing = rows.filter((r) => r.login === null && r.role === 'member').map((r) => r.name);
      return { logins: createLoginStore(db, createWriteWatch(db)).list(), keys, sharing };
    },
    { logins: [], keys: new Map(), sharing: [] },
  );
}

/**
 * The active keys whose tokens do not carry `tag` (made before the instance had it, or under
 * another), read only, for `olp doctor`: a front door routes such keys only with `--untagged`.
 */
export function keysWithoutTag(stateDir: string, tag: string): string[] {
  const tagged = (hint: string) =>
    hint.startsWith(`${TOKEN_PREFIX}${tag}_`) && hint.length === TOKEN_PREFIX.length + tag.length + 5;
  return readOnly(
    stateDir,
    (db) =>
      db
        .prepare<[], { name: string; hint: string }>(
          'SELECT name, hint FROM keys WHERE revoked_at IS NULL ORDER BY name',
        )
        .all()
        .filter((k) => !tagged(k.hint))
        .map((k) => k.name),
    [],
  );
}
export { checkLoginName, MACHINE_LOGIN } from './login-names.js';

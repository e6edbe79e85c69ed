import { timingSafeEqual } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { sha256 } from '../ids/index.js';
import { createToken, hashToken, hintOf, KEY_NAME } from './token.js';
import type { WriteWatch } from './watch.js';
import { v4 as uuidv4 } from 'uuid';
import { DEFAULT_POLICY, type Policy } from './key-policy.js';
import { toRecord, type KeyRecord, type KeyRow, type Role } from './key-record.js';

export { DEFAULT_POLICY, type Policy } from './key-policy.js';
export type { KeyRecord, Role } from './key-record.js';
export { createToken, hashToken, INSTANCE_TAG, KEY_NAME, TOKEN_PREFIX, tokenTag } from './token.js';

/** The key store's prepared statements. */
function prepareKeyStatements(db: Database) {
  return {
    insert: db.prepare(
      `INSERT INTO keys (id, name, role, token_hash, hint, created_at, models, concurrency, rpm, daily_tokens,
         monthly_tokens, enabled, expires_at, overage, login)
       VALUES (@id, @name, @role, @token_hash, @hint, @created_at, @models, @concurrency, @rpm, @daily_tokens,
         @monthly_tokens, @enabled, @expires_at, @overage, @login)`,
    ),
    byHash: db.prepare<[Buffer], KeyRow>('SELECT * FROM keys WHERE token_hash = ? AND revoked_at IS NULL'),
    byName: db.prepare<[string], KeyRow>('SELECT * FROM keys WHERE name = ? AND revoked_at IS NULL'),
    all: db.prepare<[], KeyRow>('SELECT * FROM keys ORDER BY created_at, name'),
    revoke: db.prepare('UPDATE keys SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL'),
    rotate: db.prepare('UPDATE keys SET token_hash = ?, hint = ? WHERE name = ? AND revoked_at IS NULL'),
    update: db.prepare(
      `UPDATE keys SET role = @role, models = @models, concurrency = @concurrency, rpm = @rpm,
         daily_tokens = @daily_tokens, monthly_tokens = @monthly_tokens, enabled = @enabled,
         expires_at = @expires_at, overage = @overage, login = @login
       WHERE name = @name AND revoked_at IS NULL`,
    ),
    activeCount: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM keys WHERE revoked_at IS NULL'),
    // A key bound to a login that is gone (`olp logins remove`) may run nothing either.
    standingOf: db.prepare<[string], Pick<KeyRow, 'revoked_at' | 'enabled' | 'expires_at'> & { orphan: number }>(
      `SELECT k.revoked_at, k.enabled, k.expires_at, (k.login IS NOT NULL AND l.name IS NULL) AS orphan
       FROM keys k LEFT JOIN logins l ON l.name = k.login WHERE k.id = ?`,
    ),
  };
}

type KeyStatements = ReturnType<typeof prepareKeyStatements>;

/** What a key store keeps between calls. */
interface KeyState {
  readonly sql: KeyStatements;
  readonly instanceTag: string | null;
  /** Looked-up keys by token hash (hex). */
  readonly recent: Map<string, { at: number; key: KeyRecord }>;
  /** `recent`, emptied first when another process has written since. */
  readonly fresh: () => Map<string, { at: number; key: KeyRecord }>;
  /** This process's own writes to keys (another process's are seen by the watch). */
  written: number;
}

/** A policy as the keys table's columns. */
function policyColumns(p: Policy) {
  return {
    models: p.models === null ? null : JSON.stringify(p.models),
    concurrency: p.concurrency,
    rpm: p.rpm,
    daily_tokens: p.dailyTokens,
    monthly_tokens: p.monthlyTokens,
    enabled: p.enabled ? 1 : 0,
    expires_at: p.expiresAt,
    overage: p.overage,
  };
}

function addKey(
  state: KeyState,
  name: string,
  role: Role,
  policy: Partial<Policy>,
  login: string | null,
): { key: KeyRecord; token: string } {
  const { sql } = state;
  if (!KEY_NAME.test(name)) throw new Error(`invalid key name '${name}': use 1-64 letters, digits, '.', '_' or '-'`);
  if (sql.byName.get(name)) throw new Error(`a key named '${name}' already exists`);
  const token = createToken(state.instanceTag);
  sql.insert.run({
    id: uuidv4(),
    name,
    role,
    token_hash: hashToken(token),
    hint: hintOf(token),
    created_at: new Date().toISOString(),
    ...policyColumns({ ...DEFAULT_POLICY, ...policy }),
    login,
  });
  return { key: toRecord(sql.byName.get(name)!), token };
}

function updateKey(
  state: KeyState,
  name: string,
  patch: { role?: Role; policy?: Partial<Policy>; login?: string | null },
): KeyRecord {
  state.recent.clear();
  state.written++;
  const current = state.sql.byName.get(name);
  if (!current) throw new Error(`no active key named '${name}'`);
  const rec = toRecord(current);
  state.sql.update.run({
    name,
    role: patch.role ?? rec.role,
    ...policyColumns({ ...rec.policy, ...patch.policy }),
    login: patch.login === undefined ? rec.login : patch.login,
  });
  return toRecord(state.sql.byName.get(name)!);
}

function standingOfKey(sql: KeyStatements, id: string, now: number): KeyStanding {
  const row = sql.standingOf.get(id);
  if (!row || row.revoked_at !== null) return { stopped: 'revoked' };
  if (row.enabled !== 1) return { stopped: 'disabled' };
  if (row.orphan === 1) return { stopped: 'login removed' };
  const until = row.expires_at === null ? null : Date.parse(row.expires_at);
  if (until !== null && until <= now) return { stopped: 'expired' };
  return { stopped: null, until };
}

function authenticateKey(state: KeyState, token: string): KeyRecord | undefined {
  // Keys are served from memory until the database changes: a change from this process clears
  // the cache at once, one from another (`olp keys` while olp serves) within `WATCH_MS`.
  const now = Date.now();
  const id = sha256(token);
  const hit = state.fresh().get(id);
  if (hit && now - hit.at < KEY_CACHE_MS) return hit.key;
  const hash = Buffer.from(id, 'hex');
  const row = state.sql.byHash.get(hash);
  const key = row && timingSafeEqual(row.token_hash, hash) ? toRecord(row) : undefined;
  if (state.recent.size >= KEY_CACHE_SIZE) state.recent.clear();
  if (key) state.recent.set(id, { at: now, key });
  return key;
}

/** Key storage: names, roles, policies and token hashes. Tokens are returned once and never stored. */
export function createKeyStore(db: Database, watch: WriteWatch, instanceTag: string | null = null) {
  const recent = new Map<string, { at: number; key: KeyRecord }>();
  const state: KeyState = {
    sql: prepareKeyStatements(db),
    instanceTag,
    recent,
    fresh: watch.guard(recent),
    written: 0,
  };
  const { sql } = state;
  return {
    /** Adds a key and returns its record and the token (shown to the operator once). */
    add(
      name: string,
      role: Role = 'member',
      policy: Partial<Policy> = {},
      login: string | null = null,
    ): { key: KeyRecord; token: string } {
      return addKey(state, name, role, policy, login);
    },
    get(name: string): KeyRecord | undefined {
      const row = sql.byName.get(name);
      return row && toRecord(row);
    },
    list(): KeyRecord[] {
      return sql.all.all().map(toRecord);
    },
    /** Changes a key's role, policy or login; takes effect on its next request. */
    update(name: string, patch: { role?: Role; policy?: Partial<Policy>; login?: string | null }): KeyRecord {
      return updateKey(state, name, patch);
    },
    /** Replaces a key's token; the old one stops working at once. Returns the new token. */
    rotate(name: string): string {
      recent.clear();
      const token = createToken(instanceTag);
      if (sql.rotate.run(hashToken(token), hintOf(token), name).changes === 0)
        throw new Error(`no active key named '${name}'`);
      return token;
    },
    /** Revokes the active key with this name; false if there is none. */
    revoke(name: string): boolean {
      recent.clear();
      state.written++;
      return sql.revoke.run(new Date().toISOString(), name).changes > 0;
    },
    /** A number that changes whenever a key may have changed, by this process or another. */
    version(): number {
      return state.written + watch.generation();
    },
    /**
     * Whether the key (by id) may still run anything: why not (`revoked` also for a key that is
     * gone), or until when (its expiry in ms, null for none).
     */
    standing(id: string, now = Date.now()): KeyStanding {
      return standingOfKey(sql, id, now);
    },
    activeCount(): number {
      return sql.activeCount.get()?.n ?? 0;
    },
    /** The active key whose token this is, compared in constant time; undefined otherwise. */
    authenticate(token: string): KeyRecord | undefined {
      return authenticateKey(state, token);
    },
  };
}

export type KeyStore = ReturnType<typeof createKeyStore>;

/** A key's standing for its live CLIs: stopped and why, or usable until its expiry (ms; null for none). */
export type KeyStanding =
  | { stopped: 'revoked' | 'disabled' | 'expired' | 'login removed' }
  | { stopped: null; until: number | null };

/** How long a looked-up key is reused at most, and how many are kept. */
const KEY_CACHE_MS = 60_000;
const KEY_CACHE_SIZE = 1024;

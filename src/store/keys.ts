import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { v4 as uuidv4 } from 'uuid';

/** Every olp token starts with this, so secret scanners and people recognise a leaked one. */
export const TOKEN_PREFIX = 'olpk_';

export type Role = 'owner' | 'member';

export interface KeyRecord {
  id: string;
  name: string;
  role: Role;
  /** The first characters of the token, safe to show (`olpk_AbC…`). */
  hint: string;
  createdAt: string;
  revokedAt: string | null;
}

export const KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** sha256 of a token; the only form in which tokens are stored. */
export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

export function createToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

interface KeyRow {
  id: string;
  name: string;
  role: Role;
  token_hash: Buffer;
  hint: string;
  created_at: string;
  revoked_at: string | null;
}

function toRecord(row: KeyRow): KeyRecord {
  return { id: row.id, name: row.name, role: row.role, hint: row.hint, createdAt: row.created_at, revokedAt: row.revoked_at };
}

/** Key storage: names, roles and token hashes. Tokens themselves are returned once and never stored. */
export function createKeyStore(db: Database) {
  const insert = db.prepare('INSERT INTO keys (id, name, role, token_hash, hint, created_at) VALUES (?, ?, ?, ?, ?, ?)');
  const byHash = db.prepare<[Buffer], KeyRow>('SELECT * FROM keys WHERE token_hash = ? AND revoked_at IS NULL');
  const byName = db.prepare<[string], KeyRow>('SELECT * FROM keys WHERE name = ? AND revoked_at IS NULL');
  const all = db.prepare<[], KeyRow>('SELECT * FROM keys ORDER BY created_at, name');
  const revoke = db.prepare('UPDATE keys SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL');
  const activeCount = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM keys WHERE revoked_at IS NULL');

  return {
    /** Adds a key and returns its record and the token (shown to the operator once). */
    add(name: string, role: Role = 'member'): { key: KeyRecord; token: string } {
      if (!KEY_NAME.test(name)) throw new Error(`invalid key name '${name}': use 1-64 letters, digits, '.', '_' or '-'`);
      if (byName.get(name)) throw new Error(`a key named '${name}' already exists`);
      const token = createToken();
      const row: KeyRow = {
        id: uuidv4(),
        name,
        role,
        token_hash: hashToken(token),
        hint: token.slice(0, TOKEN_PREFIX.length + 4),
        created_at: new Date().toISOString(),
        revoked_at: null,
      };
      insert.run(row.id, row.name, row.role, row.token_hash, row.hint, row.created_at);
      return { key: toRecord(row), token };
    },
    list(): KeyRecord[] {
      return all.all().map(toRecord);
    },
    /** Revokes the active key with this name; false if there is none. */
    revoke(name: string): boolean {
      return revoke.run(new Date().toISOString(), name).changes > 0;
    },
    activeCount(): number {
      return activeCount.get()?.n ?? 0;
    },
    /** The active key whose token this is, compared in constant time; undefined otherwise. */
    authenticate(token: string): KeyRecord | undefined {
      const hash = hashToken(token);
      const row = byHash.get(hash);
      if (!row || !timingSafeEqual(row.token_hash, hash)) return undefined;
      return toRecord(row);
    },
  };
}

export type KeyStore = ReturnType<typeof createKeyStore>;

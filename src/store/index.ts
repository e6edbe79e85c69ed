import { chmodSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { createKeyStore, type KeyStore } from './keys.js';
import { ensurePrivateDir } from './fs.js';

export { ensurePrivateDir } from './fs.js';
export { TOKEN_PREFIX, KEY_NAME, hashToken, type KeyRecord, type KeyStore, type Role } from './keys.js';

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
];

/** The state store: one SQLite database (WAL) in the state directory; the only module that knows it is SQLite. */
export interface Store {
  readonly keys: KeyStore;
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
  return {
    keys: createKeyStore(db),
    close: () => db.close(),
  };
}

function migrate(db: BetterSqlite3.Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) throw new Error(`olp.db has schema version ${current}, newer than this olp understands (${MIGRATIONS.length})`);
  const run = db.transaction(() => {
    for (let v = current; v < MIGRATIONS.length; v++) db.exec(MIGRATIONS[v]!);
    db.pragma(`user_version = ${MIGRATIONS.length}`);
  });
  run();
}

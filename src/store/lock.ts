import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { ensurePrivateDir } from './fs.js';

/**
 * One `olp serve` per state dir. The lock is SQLite's own file lock (fcntl) on `<state>/serve.lock`,
 * held in EXCLUSIVE locking mode for the daemon's life: the kernel drops it when the process ends
 * however it ends (a SIGKILL, a crash), so a stale lock cannot exist and no pid has to be guessed
 * alive; SQLite also counts two connections of one process as two holders. better-sqlite3 is
 * already olp's store, so this needs no native code of its own and no fallback.
 * `<state>/serve.json` says who holds it (pid, port, version) for the instance that is refused
 * and for `olp doctor`; it is read only while the lock is held, so a stale one says nothing.
 */

const LOCK_FILE = 'serve.lock';
const HOLDER_FILE = 'serve.json';
/** How long taking the lock waits out a reader's momentary probe (`olp doctor`) before it counts as held. */
const TAKE_WAIT_MS = 250;
/**
 * The connections that hold a lock, kept reachable here: a connection the garbage collector takes
 * is closed by better-sqlite3, which would drop the lock while its holder runs on.
 */
const held = new Set<BetterSqlite3.Database>();

/** The running olp that holds a state dir, as it describes itself. */
export interface LockHolder {
  pid: number;
  /** null while it has not started listening yet. */
  port: number | null;
  url: string | null;
  version: string | null;
  startedAt: string;
}

/** Another olp serves this state dir; `holder` is null when it has not said who it is yet. */
export class StateDirLocked extends Error {
  constructor(
    readonly stateDir: string,
    readonly holder: LockHolder | null,
  ) {
    super(toLockedMessage(stateDir, holder));
    this.name = 'StateDirLocked';
  }
}

/** The one line a refused `olp serve` prints. */
function toLockedMessage(stateDir: string, h: LockHolder | null): string {
  const at =
    h === null
      ? ''
      : h.url === null
        ? ` (pid ${h.pid}, still starting)`
        : ` (pid ${h.pid}, port ${h.port}: ${h.url}/v1)`;
  return `the state dir ${stateDir} is in use by another olp${at}; stop that one first, or use another --state-dir`;
}

export interface StateLock {
  /** Says who holds the lock, for a refused instance and `olp doctor`. */
  publish(info: { port: number | null; url: string | null; version: string | null }): void;
  /** Lets the lock go (the kernel does the same if the process dies first). */
  release(): void;
}

function isBusy(err: unknown): boolean {
  return (err as { code?: string }).code === 'SQLITE_BUSY' || (err as { code?: string }).code === 'SQLITE_LOCKED';
}

/** What the holder wrote of itself; null when missing or unreadable. */
function readHolder(stateDir: string): LockHolder | null {
  try {
    const h = JSON.parse(readFileSync(join(stateDir, HOLDER_FILE), 'utf8')) as LockHolder;
    return typeof h.pid === 'number' ? h : null;
  } catch {
    return null;
  }
}

/**
 * Takes the state dir's lock, or throws StateDirLocked naming the olp that has it. Taken before
 * anything that assumes no other olp runs on the dir (the start-up sweep, slot recovery).
 */
export function lockStateDir(stateDir: string): StateLock {
  ensurePrivateDir(stateDir);
  const db = new BetterSqlite3(join(stateDir, LOCK_FILE), { timeout: TAKE_WAIT_MS });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('journal_mode = MEMORY');
    // A write transaction: in EXCLUSIVE locking mode its lock is kept after the commit.
    db.exec('BEGIN EXCLUSIVE; COMMIT');
  } catch (err) {
    db.close();
    if (isBusy(err)) throw new StateDirLocked(stateDir, readHolder(stateDir));
    throw err;
  }
  held.add(db);
  const startedAt = new Date().toISOString();
  let released = false;
  const write = (h: LockHolder) => {
    const tmp = join(stateDir, `${HOLDER_FILE}.${process.pid}`);
    writeFileSync(tmp, `${JSON.stringify(h)}\n`, { mode: 0o600 });
    renameSync(tmp, join(stateDir, HOLDER_FILE));
  };
  // At once, so a stale file of a killed run is never read as this one's.
  write({ pid: process.pid, port: null, url: null, version: null, startedAt });
  return {
    publish(info) {
      if (!released) write({ pid: process.pid, ...info, startedAt });
    },
    release() {
      if (released) return;
      released = true;
      rmSync(join(stateDir, HOLDER_FILE), { force: true });
      held.delete(db);
      db.close();
    },
  };
}

/**
 * The olp holding the state dir's lock, without taking it (a momentary shared read that a
 * starting olp waits out); null when no olp runs there. For `olp doctor`.
 */
export function findLockHolder(stateDir: string): { holder: LockHolder | null } | null {
  let db: BetterSqlite3.Database;
  try {
    db = new BetterSqlite3(join(stateDir, LOCK_FILE), { readonly: true, fileMustExist: true, timeout: 0 });
  } catch {
    return null; // never locked here (or not readable: nothing to say)
  }
  try {
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return null;
  } catch (err) {
    return isBusy(err) ? { holder: readHolder(stateDir) } : null;
  } finally {
    db.close();
  }
}

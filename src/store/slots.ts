import type { Database } from 'better-sqlite3';
import type { WriteWatch } from './watch.js';
import type { WriteBehind } from './write-behind.js';

/** A session slot: identifiers and hashes only, never conversation content. */
export interface SlotRecord {
  keyId: string;
  backend: string;
  slot: number;
  /** The CLI's session id, null before the first turn or after an operator rotation. */
  sessionId: string | null;
  createdAt: number | null;
  lastUsedAt: number | null;
  turns: number;
  /** Number of conversation turns (user, assistant, tool) the fingerprint covers. */
  msgCount: number;
  /** Hash chain over those turns. */
  fingerprint: string | null;
  /** Hash of the system prompt the session was started and continued with. */
  systemHash: string | null;
  /** The last run failed or was aborted: the CLI's session state is unknown. */
  dirty: boolean;
  lastReason: string | null;
  rotations: number;
  /** The session's running usage total after its last turn (CLIs that report totals, like codex). */
  usageBase: Record<string, number> | null;
}

interface Row {
  key_id: string;
  backend: string;
  slot: number;
  session_id: string | null;
  created_at: number | null;
  last_used_at: number | null;
  turns: number;
  msg_count: number;
  fingerprint: string | null;
  system_hash: string | null;
  dirty: number;
  leased: number;
  last_reason: string | null;
  rotations: number;
  usage_base: string | null;
}

const toRecord = (r: Row): SlotRecord => ({
  keyId: r.key_id,
  backend: r.backend,
  slot: r.slot,
  sessionId: r.session_id,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  turns: r.turns,
  msgCount: r.msg_count,
  fingerprint: r.fingerprint,
  systemHash: r.system_hash,
  dirty: r.dirty === 1,
  lastReason: r.last_reason,
  rotations: r.rotations,
  usageBase: r.usage_base === null ? null : (JSON.parse(r.usage_base) as Record<string, number>),
});

const cacheKey = (keyId: string, backend: string) => `${keyId}\u0000${backend}`;
const copies = (records: SlotRecord[]) => records.map((r) => ({ ...r }));

const OPERATOR_ROTATE = `UPDATE slots SET session_id = NULL, fingerprint = NULL, usage_base = NULL, msg_count = 0,
  turns = 0, dirty = 0, last_reason = 'operator'`;

function prepareSlotStatements(db: Database) {
  return {
    ensure: db.prepare('INSERT OR IGNORE INTO slots (key_id, backend, slot) VALUES (?, ?, ?)'),
    forKey: db.prepare<[string, string], Row>('SELECT * FROM slots WHERE key_id = ? AND backend = ? ORDER BY slot'),
    all: db.prepare<[], Row>('SELECT * FROM slots ORDER BY key_id, backend, slot'),
    lease: db.prepare('UPDATE slots SET leased = ? WHERE key_id = ? AND backend = ? AND slot = ?'),
    save: db.prepare(
      `UPDATE slots SET session_id = @sessionId, created_at = @createdAt, last_used_at = @lastUsedAt,
         turns = @turns, msg_count = @msgCount, fingerprint = @fingerprint, system_hash = @systemHash,
         dirty = @dirty, last_reason = @lastReason, rotations = @rotations, usage_base = @usageBase, leased = 0
       WHERE key_id = @keyId AND backend = @backend AND slot = @slot`,
    ),
    operatorRotate: db.prepare(`${OPERATOR_ROTATE} WHERE key_id = ?`),
    operatorRotateAll: db.prepare(OPERATOR_ROTATE),
    // A slot that was leased when the process died: its CLI session may be half-written.
    recover: db.prepare('UPDATE slots SET dirty = 1, leased = 0 WHERE leased = 1'),
  };
}

/** A key's slots for a backend from the table, its first `size` created empty if missing. */
function readPool(
  db: Database,
  sql: ReturnType<typeof prepareSlotStatements>,
  keyId: string,
  backend: string,
  size: number,
): SlotRecord[] {
  let rows = sql.forKey.all(keyId, backend);
  if (rows[size - 1]?.slot !== size - 1) {
    db.transaction(() => {
      for (let i = 0; i < size; i++) sql.ensure.run(keyId, backend, i);
    })();
    rows = sql.forKey.all(keyId, backend);
  }
  return rows.map(toRecord);
}

/**
 * Persistent session-slot state for the per-key pools. Every request reads its key's pool, so the
 * pools are kept in memory in front of the table: this process's writes go to both, and a write
 * by another process (`olp sessions rotate` while olp serves) empties the cache within
 * `WATCH_MS` (see watch.ts). Reading the pool from the table cost 40–80 µs a request.
 *
 * A slot's state after its turn is written behind (see `createWriteBehind`), in the transaction
 * of the request's ledger row; every other write of the table first writes what waits. A
 * `kill -9` before that leaves the slot marked leased, so the next start marks it dirty and its
 * next turn starts a fresh session, as after a crash mid-turn.
 */
export function createSlotStore(db: Database, watch: WriteWatch, behind: WriteBehind) {
  /** A key's pool for a backend, by key and backend; the arrays are never handed out, only copies. */
  const cache = new Map<string, SlotRecord[]>();
  const cached = watch.guard(cache);
  const sql = prepareSlotStatements(db);
  const { all, lease, save, operatorRotate, operatorRotateAll, recover } = sql;
  return {
    /**
     * A key's slots for a backend below index `most`: its first `size`, created empty if missing,
     * and those it grew to (`add`).
     */
    pool(keyId: string, backend: string, size: number, most = size): SlotRecord[] {
      let records = cached().get(cacheKey(keyId, backend));
      // Sorted by index, so the first `size` are there when the one at `size - 1` is.
      if (records?.[size - 1]?.slot !== size - 1) {
        behind.flush();
        records = readPool(db, sql, keyId, backend, size);
        cache.set(cacheKey(keyId, backend), records);
      }
      return copies(records.filter((r) => r.slot < most));
    },
    /** Adds an empty slot to a key's pool (one more conversation going on at once). */
    add(s: Pick<SlotRecord, 'keyId' | 'backend' | 'slot'>): void {
      behind.flush();
      sql.ensure.run(s.keyId, s.backend, s.slot);
      // Read again with it on the next `pool`.
      cache.delete(cacheKey(s.keyId, s.backend));
    },
    list(): SlotRecord[] {
      behind.flush();
      return all.all().map(toRecord);
    },
    markLeased(s: Pick<SlotRecord, 'keyId' | 'backend' | 'slot'>, leased: boolean): void {
      behind.flush();
      lease.run(leased ? 1 : 0, s.keyId, s.backend, s.slot);
    },
    save(s: SlotRecord): void {
      const row = {
        ...s,
        dirty: s.dirty ? 1 : 0,
        usageBase: s.usageBase === null ? null : JSON.stringify(s.usageBase),
      };
      behind.later(() => save.run(row));
      const records = cached().get(cacheKey(s.keyId, s.backend));
      const i = records?.findIndex((r) => r.slot === s.slot) ?? -1;
      if (i !== -1) records![i] = { ...s };
    },
    /**
     * Forgets the sessions of one key (or all): the next request of each slot rotates with reason
     * `operator`.
     */
    rotate(keyId?: string): number {
      behind.flush();
      cache.clear();
      return (keyId ? operatorRotate.run(keyId) : operatorRotateAll.run()).changes;
    },
    /** At startup: slots leased by a process that died are marked dirty. Returns how many. */
    recover(): number {
      behind.flush();
      cache.clear();
      return recover.run().changes;
    },
  };
}

export type SlotStore = ReturnType<typeof createSlotStore>;

import type { Database } from 'better-sqlite3';

/** How often, at most, olp looks for writes by another process (`olp keys`, `olp sessions` while it serves). */
export const WATCH_MS = 5;

/**
 * Notices writes to the database by other processes, for the caches kept in front of it (keys,
 * session slots); this process's own writes update those caches directly. SQLite's data_version
 * changes when another connection commits. Reading it takes a read lock like any statement
 * (10–25 µs here), so it is read at most every `WATCH_MS`: one read serves a request's key
 * lookup and its session pool, and a key revoked or a slot rotated by another process applies
 * to every lookup from `WATCH_MS` after the previous one (`olp keys revoke` still takes effect on
 * the next request: the command alone takes longer than that).
 */
export function createWriteWatch(db: Database, everyMs = WATCH_MS, now: () => number = Date.now) {
  const dataVersion = db.prepare('PRAGMA data_version').pluck();
  let seen = dataVersion.get() as number;
  let lookedAt = now();
  let generation = 0;
  /** A number that changes each time another process's write has been noticed. */
  function generationNow(): number {
    const t = now();
    if (t - lookedAt >= everyMs) {
      lookedAt = t;
      const version = dataVersion.get() as number;
      if (version !== seen) {
        seen = version;
        generation++;
      }
    }
    return generation;
  }
  return {
    generation: generationNow,
    /**
     * A cache in front of the database: the returned function hands it out, emptied first
     * whenever another process has written since it was last handed out.
     */
    guard<C extends { clear(): void }>(cache: C): () => C {
      let seenGeneration = generationNow();
      return () => {
        const g = generationNow();
        if (g !== seenGeneration) {
          cache.clear();
          seenGeneration = g;
        }
        return cache;
      };
    },
  };
}

export type WriteWatch = ReturnType<typeof createWriteWatch>;

/**
 * Writes that may wait for the next turn of the event loop, so that they share a transaction
 * with what is written then: a session slot's new state, saved as its turn ends, goes into the
 * transaction of the request's ledger row a moment later (one commit instead of two: each costs
 * a write lock and a WAL frame). What waits is written, in order, before any other write of the
 * same rows (`flush`), inside the next transaction that drains it (`drain`), or once the loop has
 * run what was queued with it (two `setImmediate`s: after the ledger's own), whichever comes
 * first. A `kill -9` in between loses the waiting writes: a loop turn's worth at most.
 */
export function createWriteBehind(db: Database) {
  const pending: (() => void)[] = [];
  let scheduled = false;
  // Each write in a savepoint of its own: one that fails (the slot's row then still says leased,
  // so the next start marks the slot dirty) does not take the ledger row it rides with along.
  const alone = db.transaction((write: () => void) => write());
  const inOne = db.transaction(() => drain());
  function drain(): void {
    for (const write of pending.splice(0)) {
      try {
        alone(write);
      } catch {
        // Recovered as said above; the daemon's memory has the slot's state meanwhile.
      }
    }
  }
  function flush(): void {
    if (pending.length > 0) inOne();
  }
  return {
    /** Queues a write (`flush` runs it at the latest). */
    later(write: () => void): void {
      pending.push(write);
      if (scheduled) return;
      scheduled = true;
      setImmediate(() =>
        setImmediate(() => {
          scheduled = false;
          flush();
        }),
      );
    },
    /** Runs the waiting writes in a transaction of their own. */
    flush,
    /** Runs the waiting writes inside the caller's transaction. */
    drain,
  };
}

export type WriteBehind = ReturnType<typeof createWriteBehind>;

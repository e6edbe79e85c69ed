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

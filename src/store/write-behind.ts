import type { Database } from 'better-sqlite3';

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

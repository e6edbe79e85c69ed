import type { Logger } from '../log/index.js';
import type { KeyStanding } from '../store/index.js';

/** Something that holds live CLIs of keys: the worker pool, the parked tool-call turns. */
export interface KeyHolder {
  keyIds(): Iterable<string>;
  retireKey(keyId: string, reason: 'revoked'): void;
}

export interface StandingOptions {
  keys: { version(): number; standing(id: string, now?: number): KeyStanding };
  holders: readonly KeyHolder[];
  /** How often the holders' keys are looked at. */
  everyMs: number;
  logger: Logger;
  now?: () => number;
}

/**
 * Retires every live CLI (worker, spare, parked turn) of a key that is revoked, disabled or has
 * expired, within `everyMs`. `olp keys` writes from another process, so this looks: each tick,
 * only when some key holds a live CLI, and it reads a held key's row only when the key store
 * changed since (a data_version read; see store/watch.ts) or the key's known expiry has passed.
 */
export function watchKeyStanding(o: StandingOptions) {
  const now = o.now ?? Date.now;
  /** What each held key's row said when last read: until when it may run (null: no expiry). */
  const known = new Map<string, number | null>();
  let seenVersion = -1;

  function check(): void {
    const held = new Set<string>();
    for (const h of o.holders) for (const id of h.keyIds()) held.add(id);
    for (const id of known.keys()) if (!held.has(id)) known.delete(id);
    if (held.size === 0) return;
    const version = o.keys.version();
    const changed = version !== seenVersion;
    seenVersion = version;
    const t = now();
    for (const id of held) {
      const until = known.get(id);
      if (!changed && until !== undefined && (until === null || until > t)) continue;
      const s = o.keys.standing(id, t);
      if (s.stopped === null) {
        known.set(id, s.until);
        continue;
      }
      known.delete(id);
      o.logger.info({ event: 'key_clis_retired', reason: s.stopped }, `a key's live CLIs are stopped: ${s.stopped}`);
      for (const h of o.holders) h.retireKey(id, 'revoked');
    }
  }

  const timer = setInterval(check, o.everyMs);
  timer.unref();
  return {
    check,
    stop(): void {
      clearInterval(timer);
    },
  };
}

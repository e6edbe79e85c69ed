import { readFileSync, statSync } from 'node:fs';
import type { Backend, Turn } from '../backends/index.js';

// One refresher per login file. A refreshable login (codex's ChatGPT login, a claude login file)
// rotates its refresh token when a CLI refreshes it: CLIs that start together on a token about to
// expire all spend the same refresh token, one wins, the others get "refresh token already used"
// (codex 0.171, observed with five at once: one refresh succeeded, four were refused), and the
// provider may log the whole login out for the reuse. So while a login file's access token is
// within its CLI's refresh margin, its runs start one at a time: each waits until the one before
// it has refreshed the file (its contents change), has exited, or has had `HOLD_MS`.

/**
 * A CLI refreshes a token this long before it expires (codex 0.171: 5 minutes), plus a margin for
 * the time from olp's look to the CLI's. A run gated inside the margin may not refresh: the next
 * waits for its exit or its hold, a few seconds once per token lifetime.
 */
const REFRESH_WITHIN_MS = 5 * 60_000 + 5_000;
/** How long one starting run may hold its login's turn to refresh. */
const HOLD_MS = 10_000;
/** How often a held file is looked at. */
const LOOK_MS = 100;

/** A run's turn to start; `started` once its process is up (or gone), `release` if none was started. */
export interface Turnstile {
  started(exit: Promise<unknown>): void;
  release(): void;
}

/** The run stage's side of the gate: one refresher per login file. */
export interface RefreshGate {
  /** Waits for the turn's login file to be free to refresh, if it needs refreshing; undefined when it does not. */
  enter(backend: Backend, turn: Turn, signal?: AbortSignal): Promise<Turnstile | undefined>;
  /** Whether a run of this turn's login would have to wait (background starts then do not start). */
  busy(backend: Backend, turn: Turn): boolean;
}

export function createRefreshGate(o: { now?: () => number; holdMs?: number } = {}): RefreshGate {
  const now = o.now ?? Date.now;
  const holdMs = o.holdMs ?? HOLD_MS;
  /** The run refreshing each file now: resolves when its turn ends. */
  const held = new Map<string, Promise<void>>();

  /** The file whose token is about to expire, if the turn's credential is such a file. */
  function expiring(backend: Backend, turn: Turn): string | undefined {
    const r = backend.refreshable?.(turn);
    if (!r) return undefined;
    let text: string;
    try {
      text = readFileSync(r.file, 'utf8');
    } catch {
      return undefined;
    }
    const at = r.expiresAt(text);
    return at !== null && at - now() < REFRESH_WITHIN_MS ? r.file : undefined;
  }

  function signature(file: string): string {
    try {
      const s = statSync(file);
      return `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch {
      return 'gone';
    }
  }

  return {
    async enter(backend, turn, signal) {
      for (;;) {
        const file = expiring(backend, turn);
        if (!file) return undefined;
        const busy = held.get(file);
        if (!busy) return take(file);
        await Promise.race([busy, new Promise((r) => signal?.addEventListener('abort', r, { once: true }))]);
        if (signal?.aborted) return undefined;
      }
    },
    busy(backend, turn) {
      const file = expiring(backend, turn);
      return file !== undefined && held.has(file);
    },
  };

  function take(file: string): Turnstile {
    let done!: () => void;
    const mine = new Promise<void>((r) => {
      done = r;
    });
    held.set(file, mine);
    const before = signature(file);
    let timer: NodeJS.Timeout | undefined;
    const release = () => {
      clearInterval(timer);
      if (held.get(file) === mine) held.delete(file);
      done();
    };
    return {
      started(exit) {
        const end = now() + holdMs;
        timer = setInterval(() => {
          if (signature(file) !== before || now() >= end) release();
        }, LOOK_MS);
        void exit.then(release, release);
      },
      release,
    };
  }
}

import { signInsRateLimited } from '../errors/index.js';

// How often one key may start a sign-in from the page (a setup token or key checked, a device
// code asked for): each starts a CLI, and a device code is a request to the provider.

/** Sign-ins one key may start within `windowMs`. */
const MAX = 5;
const WINDOW_MS = 10 * 60_000;

/** Per key, the times of its recent sign-ins; `take` throws 429 rate_limited past the limit. */
export function createSignInLimit(o: { max?: number; windowMs?: number; now?: () => number } = {}) {
  const max = o.max ?? MAX;
  const windowMs = o.windowMs ?? WINDOW_MS;
  const now = o.now ?? Date.now;
  const recent = new Map<string, number[]>();
  return {
    /** Counts one sign-in of the key, or throws with when the oldest leaves the window. */
    take(keyId: string): void {
      const t = now();
      const times = (recent.get(keyId) ?? []).filter((at) => at > t - windowMs);
      if (times.length >= max) throw signInsRateLimited(max, windowMs / 60_000, (times[0]! + windowMs - t) / 1000);
      times.push(t);
      recent.set(keyId, times);
    },
  };
}

export type SignInLimit = ReturnType<typeof createSignInLimit>;

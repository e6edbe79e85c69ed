import { limitExceeded, modelNotAllowed } from '../errors/index.js';
import { createWaitQueue, roundRobin, type WaitQueue } from '../queue/index.js';
import { modelAllowed } from './glob.js';
import { budget, checkKeyLimits, checkRate, headersFor, type KeyState, prune } from './limits.js';
import type { Admittee, AdmissionOptions, Permit, RateCounted } from './types.js';

export { modelAllowed } from './glob.js';
export { budgetPeriods, toResetDuration } from './limits.js';
export type { Admittee, AdmissionOptions, Permit, RateCounted } from './types.js';

/** One admission's state: its options, each key's counts, the CLI slots taken and the requests waiting. */
interface AdmissionState {
  readonly opts: AdmissionOptions;
  readonly now: () => number;
  readonly keys: Map<string, KeyState>;
  readonly queue: WaitQueue;
  running: number;
}

function keyState(a: AdmissionState, keyId: string): KeyState {
  let s = a.keys.get(keyId);
  if (!s) {
    s = { inflight: 0, reserved: 0, window: [] };
    a.keys.set(keyId, s);
  }
  return s;
}

/** Gives free CLI slots to the requests waiting, in the queue's order. */
function dispatch(a: AdmissionState): void {
  while (a.running < a.opts.maxConcurrent && a.queue.size > 0) a.queue.serveNext();
}

/** One admitted request's hold on its key: the permit, once it has a slot, and what a wait given up returns. */
function holdFor(a: AdmissionState, s: KeyState, headers: Record<string, string>, estimateTokens: number) {
  s.inflight++;
  let reserved = estimateTokens;
  s.reserved += reserved;
  let released = false;
  const permit = (waitedMs: number): Permit => ({
    waitedMs,
    headers,
    release() {
      if (released) return;
      released = true;
      a.running--;
      s.inflight--;
      s.reserved -= reserved;
      dispatch(a);
    },
    reserve(tokens: number) {
      if (released) return;
      s.reserved += tokens - reserved;
      reserved = tokens;
    },
  });
  const giveBack = () => {
    s.inflight--;
    s.reserved -= reserved;
  };
  return { permit, giveBack };
}

/** The key's parked turns hold CLIs too: at its limit, its oldest are retired to admit a newer request. */
function shedHeld(a: AdmissionState, who: Admittee, s: KeyState): void {
  const limit = who.policy.concurrency;
  // A newer request of the key at its limit shows the client has moved on from the oldest.
  if (limit == null || !a.opts.held) return;
  while (s.inflight + a.opts.held.countFor(who.keyId) >= limit && a.opts.held.shedOldest(who.keyId, 'key_concurrency'));
}

/** Admits a request or throws a 429; see `Admission.admit`. */
async function admit(
  a: AdmissionState,
  who: Admittee,
  estimateTokens: number,
  signal: AbortSignal,
  rate?: RateCounted,
): Promise<Permit> {
  const { opts, queue } = a;
  const t = a.now();
  const s = keyState(a, who.keyId);
  const counted = rate?.counted === true;
  prune(s, t);
  const b = budget(who, s, t, opts.tokensSince);
  checkKeyLimits(who, s, t, b, counted, opts.tokensSince);
  if (a.running >= opts.maxConcurrent && queue.full) {
    throw limitExceeded(
      'server_busy',
      `All ${opts.maxConcurrent} CLI slots are busy and ${queue.size} requests are waiting. Try again shortly.`,
      2,
      headersFor(who, s, t, b),
    );
  }
  shedHeld(a, who, s);
  if (!counted) s.window.push(t);
  const headers = headersFor(who, s, t, b && { ...b, remaining: b.remaining - estimateTokens });
  const { permit, giveBack } = holdFor(a, s, headers, estimateTokens);
  if (a.running < opts.maxConcurrent && queue.size === 0) {
    a.running++;
    return permit(0);
  }
  return queue.wait({
    key: who.keyId,
    signal,
    timeoutMs: opts.queueTimeoutMs,
    timeoutError: () =>
      limitExceeded(
        'queue_timeout',
        `Waited ${Math.round(opts.queueTimeoutMs / 1000)} s for a free CLI slot. ` +
          'The server is busy; try again shortly.',
        5,
        headers,
      ),
    grant: () => {
      a.running++;
      return permit(a.now() - t);
    },
    cancelled: giveBack,
  });
}

/**
 * Admission control in front of every spawn: per-key model policy, concurrency, requests per
 * minute and token budgets (from the stored usage plus in-flight reservations), then a global cap
 * on CLI processes with a bounded wait queue that serves keys round-robin, so one key's burst
 * delays another key's request by at most one slot's turn.
 */
export function createAdmission(opts: AdmissionOptions) {
  const a: AdmissionState = {
    opts,
    now: opts.now ?? Date.now,
    keys: new Map(),
    queue: createWaitQueue({ policy: roundRobin(), bound: opts.queueSize }),
    running: 0,
  };
  return {
    /** Refuses a model the key's policy does not allow (403). */
    checkModel(who: Admittee, model: string): void {
      if (who.policy.models && !modelAllowed(who.policy.models, model)) throw modelNotAllowed(model, who.policy.models);
    },

    /**
     * Counts a request against the key's requests-per-minute before anything else is done with it
     * (a request that then fails validation still counts), or throws the 429. Pass the result to
     * `admit` so the request is not counted twice.
     */
    countRequest(who: Admittee): RateCounted {
      const t = a.now();
      const s = keyState(a, who.keyId);
      prune(s, t);
      checkRate(who, s, t, undefined, opts.tokensSince);
      s.window.push(t);
      return { counted: true };
    },

    /**
     * Admits a request or throws a 429 that says which limit and when it frees. Resolves once a
     * CLI slot is free; rejects with ClientAbortedError if the signal fires while it waits.
     */
    admit: (who: Admittee, estimateTokens: number, signal: AbortSignal, rate?: RateCounted): Promise<Permit> =>
      admit(a, who, estimateTokens, signal, rate),

    /** Current load, for /health and tests. */
    stats(): { running: number; queued: number; maxConcurrent: number } {
      return { running: a.running, queued: a.queue.size, maxConcurrent: opts.maxConcurrent };
    },
  };
}

export type Admission = ReturnType<typeof createAdmission>;

/**
 * The most of a reply's cap held against budgets while it runs: agents ask for caps of 64,000 to
 * 128,000 tokens (Claude Code) and write a few hundred, and a cap held whole kept their concurrent
 * requests (sub-agents) out of any small budget. What the turn used is charged once it ends.
 */
export const RESERVED_REPLY_MAX = 8192;

/**
 * What a request may cost, reserved against budgets while it runs: the prompt's tokens plus the reply
 * cap (at most `RESERVED_REPLY_MAX`).
 */
export function estimateTokens(promptTokens: number, maxOutputTokens: number | undefined): number {
  return promptTokens + Math.min(maxOutputTokens ?? 1024, RESERVED_REPLY_MAX);
}

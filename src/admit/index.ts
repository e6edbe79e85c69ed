import { limitExceeded, modelNotAllowed } from '../errors/index.js';
import { ClientAbortedError } from '../errors/index.js';
import { modelAllowed } from './glob.js';
import { budget as budgetOf, checkRate, headersFor, type KeyState, prune } from './limits.js';
import type { Admittee, AdmissionOptions, Permit, RateCounted } from './types.js';

export { modelAllowed } from './glob.js';
export { budgetPeriods, toResetDuration } from './limits.js';
export type { Admittee, AdmissionOptions, Permit, RateCounted } from './types.js';

interface Waiter {
  keyId: string;
  grant(): void;
}

/**
 * Admission control in front of every spawn: per-key model policy, concurrency, requests per
 * minute and token budgets (from the stored usage plus in-flight reservations), then a global cap
 * on CLI processes with a bounded wait queue that serves keys round-robin, so one key's burst
 * delays another key's request by at most one slot's turn.
 */
export function createAdmission(opts: AdmissionOptions) {
  const now = opts.now ?? Date.now;
  const keys = new Map<string, KeyState>();
  const queues = new Map<string, Waiter[]>();
  /** Keys with waiters, in the order they will be served. */
  const order: string[] = [];
  let running = 0;
  let queued = 0;

  function state(keyId: string): KeyState {
    let s = keys.get(keyId);
    if (!s) {
      s = { inflight: 0, reserved: 0, window: [] };
      keys.set(keyId, s);
    }
    return s;
  }

  /** The key's tightest token budget, counting what its requests in flight reserved. */
  function budget(who: Admittee, s: KeyState, t: number) {
    return budgetOf(who, s, t, opts.tokensSince);
  }

  function dispatch(): void {
    while (running < opts.maxConcurrent && order.length > 0) {
      const keyId = order.shift()!;
      const q = queues.get(keyId)!;
      const w = q.shift()!;
      if (q.length > 0) order.push(keyId);
      else queues.delete(keyId);
      queued--;
      running++;
      w.grant();
    }
  }

  function dequeue(w: Waiter): void {
    const q = queues.get(w.keyId);
    const i = q ? q.indexOf(w) : -1;
    if (!q || i === -1) return;
    q.splice(i, 1);
    queued--;
    if (q.length === 0) {
      queues.delete(w.keyId);
      order.splice(order.indexOf(w.keyId), 1);
    }
  }

  return {
    /** Refuses a model the key's policy does not allow (403). */
    checkModel(who: Admittee, model: string): void {
      if (who.policy.models && !modelAllowed(who.policy.models, model)) throw modelNotAllowed(model, who.policy.models);
    },

    /**
     * Admits a request or throws a 429 that says which limit and when it frees. Resolves once a
     * CLI slot is free; rejects with ClientAbortedError if the signal fires while it waits.
     */
    /**
     * Counts a request against the key's requests-per-minute before anything else is done with it
     * (a request that then fails validation still counts), or throws the 429. Pass the result to
     * `admit` so the request is not counted twice.
     */
    countRequest(who: Admittee): RateCounted {
      const t = now();
      const s = state(who.keyId);
      prune(s, t);
      checkRate(who, s, t, undefined, opts.tokensSince);
      s.window.push(t);
      return { counted: true };
    },

    async admit(who: Admittee, estimateTokens: number, signal: AbortSignal, rate?: RateCounted): Promise<Permit> {
      const t = now();
      const s = state(who.keyId);
      const counted = rate?.counted === true;
      prune(s, t);
      const b = budget(who, s, t);
      const limit = who.policy.concurrency;
      if (limit != null && s.inflight >= limit) {
        throw limitExceeded(
          'concurrency_limit_exceeded',
          `This key already has ${s.inflight} request(s) in flight, its limit. Wait for one to finish.`,
          1,
          headersFor(who, s, t, b),
        );
      }
      if (!counted) checkRate(who, s, t, b, opts.tokensSince);
      // Spent only by what requests in flight may still use: not spent, and free again soon.
      if (b && b.remaining <= 0 && b.remaining + s.reserved > 0) {
        throw limitExceeded(
          'concurrency_limit_exceeded',
          `This key's ${b.period} token budget of ${b.limit} is taken up by its ${s.inflight} request(s) in flight (${s.reserved} tokens held until they finish). Try again when one is done.`,
          1,
          headersFor(who, s, t, b),
        );
      }
      if (b && b.remaining <= 0) {
        throw limitExceeded(
          'budget_exceeded',
          `This key's ${b.period} token budget of ${b.limit} is spent. It resets at ${new Date(b.resetsAt).toISOString()}.`,
          (b.resetsAt - t) / 1000,
          headersFor(who, s, t, b),
        );
      }
      if (running >= opts.maxConcurrent && queued >= opts.queueSize) {
        throw limitExceeded(
          'server_busy',
          `All ${opts.maxConcurrent} CLI slots are busy and ${queued} requests are waiting. Try again shortly.`,
          2,
          headersFor(who, s, t, b),
        );
      }

      // The key's parked turns hold CLIs too. A newer request of the key at its limit shows the
      // client has moved on from the oldest: it is retired, and this request admitted.
      if (limit != null && opts.held) {
        while (
          s.inflight + opts.held.countFor(who.keyId) >= limit &&
          opts.held.shedOldest(who.keyId, 'key_concurrency')
        );
      }
      if (!counted) s.window.push(t);
      s.inflight++;
      let reserved = estimateTokens;
      s.reserved += reserved;
      const headers = headersFor(who, s, t, b && { ...b, remaining: b.remaining - estimateTokens });
      let released = false;
      const permit = (waitedMs: number): Permit => ({
        waitedMs,
        headers,
        release() {
          if (released) return;
          released = true;
          running--;
          s.inflight--;
          s.reserved -= reserved;
          dispatch();
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

      if (running < opts.maxConcurrent && queued === 0) {
        running++;
        return permit(0);
      }
      return new Promise<Permit>((resolve, reject) => {
        const waiter: Waiter = {
          keyId: who.keyId,
          grant() {
            clearTimeout(timer);
            signal.removeEventListener('abort', onAbort);
            resolve(permit(now() - t));
          },
        };
        const fail = (err: Error) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          dequeue(waiter);
          giveBack();
          reject(err);
        };
        const onAbort = () => fail(new ClientAbortedError());
        const timer = setTimeout(
          () =>
            fail(
              limitExceeded(
                'queue_timeout',
                `Waited ${Math.round(opts.queueTimeoutMs / 1000)} s for a free CLI slot. The server is busy; try again shortly.`,
                5,
                headers,
              ),
            ),
          opts.queueTimeoutMs,
        );
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        let q = queues.get(who.keyId);
        if (!q) {
          q = [];
          queues.set(who.keyId, q);
          order.push(who.keyId);
        }
        q.push(waiter);
        queued++;
      });
    },

    /** Current load, for /health and tests. */
    stats(): { running: number; queued: number; maxConcurrent: number } {
      return { running, queued, maxConcurrent: opts.maxConcurrent };
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

/** What a request may cost, reserved against budgets while it runs: the prompt's tokens plus the reply cap (at most `RESERVED_REPLY_MAX`). */
export function estimateTokens(promptTokens: number, maxOutputTokens: number | undefined): number {
  return promptTokens + Math.min(maxOutputTokens ?? 1024, RESERVED_REPLY_MAX);
}

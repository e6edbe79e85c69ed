import { randomUUID } from 'node:crypto';
import type { SlotRecord } from '../store/index.js';
import { toAssistantTurn, type Fitted, type Transcript } from '../transcript/index.js';
import { ClientAbortedError } from '../errors/index.js';
import { nextLink, systemHash, toChain } from './fingerprint.js';
import { chooseSlot, emptySlot, leastValuable, slotBound, type Hashes, type PoolOptions } from './choose.js';
import { asWhole, previousOf, wholePlan } from './rotation.js';
import type { Lease, SessionPlan } from './types.js';

export { systemHash, toChain } from './fingerprint.js';
export type { RotationReason } from './rotation.js';
export { leastValuable, slotBound, toolResultsOnly, type PoolOptions } from './choose.js';

export type { Lease, SessionMode, SessionPlan } from './types.js';

/** Who holds a pool: a key, and the limit that bounds how far its pool grows. */
export interface PoolOwner {
  keyId: string;
  policy: { concurrency: number | null };
}

/**
 * Per-key session pools (ARCHITECTURE section 4). A request that is exactly a free slot's
 * history plus new user turns resumes that slot's CLI session and sends only the new turns;
 * anything else takes a new slot while the key's conversations go on at once (up to its bound),
 * else rotates the least valuable free slot. A slot is never leased twice.
 */
export function createSessionPool(o: PoolOptions) {
  const now = o.now ?? Date.now;
  const busy = new Set<string>();
  const waiters = new Map<string, (() => void)[]>();
  const id = (s: Pick<SlotRecord, 'keyId' | 'backend' | 'slot'>) => `${s.keyId}/${s.backend}/${s.slot}`;
  const group = (keyId: string, backend: string) => `${keyId}/${backend}`;
  /** Each key's bound as of its last request, for `nextFresh`, which is asked without its key's limit. */
  const bounds = new Map<string, number>();

  /** A key's free slots, and the slot it may add (below its bound), if any. */
  function candidates(keyId: string, backend: string, most: number): { free: SlotRecord[]; grow?: SlotRecord } {
    const all = o.store.pool(keyId, backend, o.size, most);
    const free = all.filter((s) => !busy.has(id(s)));
    if (all.length >= most) return { free };
    const taken = new Set(all.map((s) => s.slot));
    let next = 0;
    while (taken.has(next)) next++;
    return { free, grow: emptySlot(keyId, backend, next) };
  }

  /** A released slot can serve one waiter: wake the longest-waiting one, not every one. */
  function wake(keyId: string, backend: string): void {
    const list = waiters.get(group(keyId, backend));
    const first = list?.shift();
    if (list && list.length === 0) waiters.delete(group(keyId, backend));
    first?.();
  }

  function lease(
    slot: SlotRecord,
    plan: SessionPlan,
    transcript: Transcript,
    { chain, sys }: Hashes,
    whole: Fitted,
  ): Lease {
    const key = id(slot);
    busy.add(key);
    o.store.markLeased(slot, true);
    let current = plan;
    let released = false;
    let committed = false;
    return {
      get plan() {
        return current;
      },
      rotate(reason) {
        current = {
          mode: 'fresh',
          sessionId: randomUUID(),
          slot: slot.slot,
          ...wholePlan(whole),
          reason,
          ...previousOf(slot, o.forks?.(slot.backend)),
        };
      },
      commit(result) {
        committed = true;
        const t = now();
        const rotated = current.mode === 'fresh';
        // Some CLIs pick the id of a new session themselves (codex threads): keep the one it reported.
        const id = (result.ok && result.sessionId) || current.sessionId!;
        const next: SlotRecord = rotated
          ? {
              ...slot,
              sessionId: id,
              createdAt: t,
              turns: 0,
              rotations: slot.rotations + 1,
              lastReason: current.reason ?? 'initial',
            }
          : { ...slot };
        if (result.ok) {
          // The chain of the request's turns, then the reply.
          Object.assign(next, {
            fingerprint: nextLink(
              chain[chain.length - 1]!,
              toAssistantTurn([result.reply], result.calls ?? []) ?? { role: 'assistant', text: result.reply },
            ),
            msgCount: transcript.turns.length + 1,
            systemHash: sys,
            turns: next.turns + 1,
            lastUsedAt: t,
            dirty: false,
            usageBase: result.rawUsage ?? null,
          });
        } else {
          // The CLI's copy of this session is now unknown: keep the fingerprint so the same
          // conversation finds this slot again, and rotate it then.
          Object.assign(next, { dirty: true, lastUsedAt: t, lastReason: result.aborted ? 'aborted' : 'failed' });
        }
        o.store.save(next);
      },
      release() {
        if (released) return;
        released = true;
        // The slot is free in memory whatever the store says (a failed write is recovered at start).
        busy.delete(key);
        try {
          if (!committed) o.store.markLeased(slot, false);
        } finally {
          wake(slot.keyId, slot.backend);
        }
      },
    };
  }

  return {
    /** The slot a new conversation of this key would take now (the least valuable free one, or a new one). */
    nextFresh(keyId: string, backend: string): number | undefined {
      const { free, grow } = candidates(keyId, backend, bounds.get(group(keyId, backend)) ?? o.size);
      return leastValuable(free, now(), o.activeMs, grow)?.slot;
    },
    /**
     * Leases a slot for this conversation (a new one when the key's others are busy or going on,
     * below its bound), waiting up to `waitMs` for one to free; if none does, the plan is
     * ephemeral (whole transcript, no session persistence) and nothing is leased.
     * `whole` is the conversation as it is sent when it is sent whole (trimmed to the model's
     * context, or the reason it cannot be): a plan that needs it throws its error, before any lease.
     */
    async acquire(
      owner: PoolOwner,
      backend: string,
      transcript: Transcript,
      signal: AbortSignal,
      whole: Fitted = asWhole(transcript),
    ): Promise<Lease> {
      const { keyId } = owner;
      const deadline = now() + o.waitMs;
      const hashes: Hashes = { chain: toChain(transcript.turns), sys: systemHash(transcript.system) };
      const most = slotBound(o.size, o.maxSlots, owner.policy.concurrency);
      bounds.set(group(keyId, backend), most);
      for (;;) {
        const { free, grow } = candidates(keyId, backend, most);
        const picked = chooseSlot(free, backend, transcript, hashes, whole, now(), o, grow);
        if (picked) {
          if (picked.slot === grow) o.store.add(grow);
          return lease(picked.slot, picked.plan, transcript, hashes, whole);
        }
        const left = deadline - now();
        if (left <= 0) return ephemeral(transcript, whole);
        await new Promise<void>((resolve, reject) => {
          const g = group(keyId, backend);
          const leave = () => {
            clearTimeout(timer);
            signal.removeEventListener('abort', onAbort);
            const list = waiters.get(g);
            const i = list ? list.indexOf(done) : -1;
            if (i !== -1) list!.splice(i, 1);
            if (list && list.length === 0) waiters.delete(g);
          };
          const done = () => {
            leave();
            resolve();
          };
          const onAbort = () => {
            leave();
            reject(new ClientAbortedError());
          };
          const timer = setTimeout(done, left);
          if (signal.aborted) return onAbort();
          signal.addEventListener('abort', onAbort, { once: true });
          const list = waiters.get(g);
          if (list) list.push(done);
          else waiters.set(g, [done]);
        });
      }
    },
  };
}

/** No slot: the whole transcript (as fitted to the model), no persistence. */
export function ephemeral(transcript: Transcript, whole: Fitted = asWhole(transcript)): Lease {
  const plan: SessionPlan = { mode: 'ephemeral', ...wholePlan(whole) };
  return { plan, rotate() {}, commit() {}, release() {} };
}

export type SessionPool = ReturnType<typeof createSessionPool>;

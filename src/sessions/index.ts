import type { Fitted, Transcript } from '../transcript/index.js';
import { systemHash, toChain } from './fingerprint.js';
import { chooseSlot, leastValuable, slotBound, type Hashes, type PoolOptions } from './choose.js';
import { candidates, groupOf, leaseSlot, type PoolState, waitForSlot } from './lease.js';
import { divergence } from './divergence.js';
import { asWhole, wholePlan } from './rotation.js';
import type { Lease, SessionPlan } from './types.js';

export { systemHash, toChain } from './fingerprint.js';
export type { RotationReason } from './rotation.js';
export { leastValuable, slotBound, answersCalls, type PoolOptions } from './choose.js';

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
 * else rotates the least valuable free slot. A slot is never leased twice. `spareActive` (a
 * sub-agent's conversation): a new conversation takes no slot whose conversation is going on.
 */
export function createSessionPool(o: PoolOptions) {
  const s: PoolState = {
    o,
    now: o.now ?? Date.now,
    busy: new Set(),
    waiters: new Map(),
    bounds: new Map(),
    seen: new Map(),
  };
  const { now, bounds } = s;
  return {
    /**
     * The slot a new conversation of this key would take now (the least valuable free one, or a new
     * one).
     */
    nextFresh(keyId: string, backend: string): number | undefined {
      const { free, grow } = candidates(s, keyId, backend, bounds.get(groupOf(keyId, backend)) ?? o.size);
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
      { spareActive = false }: { spareActive?: boolean } = {},
    ): Promise<Lease> {
      const { keyId } = owner;
      const deadline = now() + o.waitMs;
      const hashes: Hashes = { chain: toChain(transcript.turns), sys: systemHash(transcript.system) };
      const most = slotBound(o.size, o.maxSlots, owner.policy.concurrency);
      bounds.set(groupOf(keyId, backend), most);
      for (;;) {
        const { free, grow } = candidates(s, keyId, backend, most);
        const seen = s.seen.get(groupOf(keyId, backend));
        const systemOf = (slot: number) => seen?.get(slot)?.system;
        const picked = chooseSlot(
          free,
          backend,
          transcript,
          hashes,
          whole,
          now(),
          { ...o, spareActive, systemOf },
          grow,
        );
        // A sub-agent's new conversation never takes one going on: with none other free, it runs on its own.
        if (!picked && spareActive && free.length > 0) return ephemeral(transcript, whole);
        if (picked) {
          if (picked.slot === grow) o.store.add(grow);
          if (picked.isNew) {
            const busy = (slot: number) => !free.some((f) => f.slot === slot);
            const parted =
              seen &&
              divergence(
                seen,
                hashes.chain.map((h) => h.slice(0, 16)),
                transcript.turns,
                busy,
              );
            if (parted) picked.plan.diverged = parted;
          }
          return leaseSlot(s, picked.slot, picked.plan, transcript, hashes, whole);
        }
        const left = deadline - now();
        if (left <= 0) return ephemeral(transcript, whole);
        await waitForSlot(s, groupOf(keyId, backend), left, signal);
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

// A pool's leases: the slots in use, the requests waiting for one, and a leased slot's life (rotate,
// commit, release).
import { randomUUID } from 'node:crypto';
import { ClientAbortedError } from '../errors/index.js';
import type { SlotRecord } from '../store/index.js';
import { toAssistantTurn, type CallText, type Fitted, type Transcript } from '../transcript/index.js';
import { emptySlot, type Hashes, type PoolOptions } from './choose.js';
import { nextLink, systemHash } from './fingerprint.js';
import type { Seen } from './divergence.js';
import { previousOf, wholePlan } from './rotation.js';
import type { Lease, SessionPlan } from './types.js';

/** What a session pool holds between requests. */
export interface PoolState {
  readonly o: PoolOptions;
  readonly now: () => number;
  /** Leased slots, by `slotId`. */
  readonly busy: Set<string>;
  /** Requests waiting for a free slot, by `groupOf`, longest-waiting first. */
  readonly waiters: Map<string, (() => void)[]>;
  /** Each key's bound as of its last request, for `nextFresh`, which is asked without its key's limit. */
  readonly bounds: Map<string, number>;
  /** What each slot's conversation was at its last answered turn, by `groupOf` and slot (see divergence.ts). */
  readonly seen: Map<string, Map<number, Seen>>;
}

type CommitResult = Parameters<Lease['commit']>[0];

const slotId = (s: Pick<SlotRecord, 'keyId' | 'backend' | 'slot'>): string => `${s.keyId}/${s.backend}/${s.slot}`;
export const groupOf = (keyId: string, backend: string): string => `${keyId}/${backend}`;

/** A key's free slots, and the slot it may add (below its bound), if any. */
export function candidates(
  s: PoolState,
  keyId: string,
  backend: string,
  most: number,
): { free: SlotRecord[]; grow?: SlotRecord } {
  const all = s.o.store.pool(keyId, backend, s.o.size, most);
  const free = all.filter((r) => !s.busy.has(slotId(r)));
  if (all.length >= most) return { free };
  const taken = new Set(all.map((r) => r.slot));
  let next = 0;
  while (taken.has(next)) next++;
  return { free, grow: emptySlot(keyId, backend, next) };
}

/** A released slot can serve one waiter: wake the longest-waiting one, not every one. */
function wake(s: PoolState, keyId: string, backend: string): void {
  const g = groupOf(keyId, backend);
  const list = s.waiters.get(g);
  const first = list?.shift();
  if (list && list.length === 0) s.waiters.delete(g);
  first?.();
}

/** Waits in line for a slot of the group to free, at most `ms`; rejects when the client goes. */
export function waitForSlot(s: PoolState, g: string, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const leave = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      const list = s.waiters.get(g);
      const i = list ? list.indexOf(done) : -1;
      if (i !== -1) list!.splice(i, 1);
      if (list && list.length === 0) s.waiters.delete(g);
    };
    const done = () => {
      leave();
      resolve();
    };
    const onAbort = () => {
      leave();
      reject(new ClientAbortedError());
    };
    const timer = setTimeout(done, ms);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    const list = s.waiters.get(g);
    if (list) list.push(done);
    else s.waiters.set(g, [done]);
  });
}

/** Holds a slot for one request until it releases it. */
export function leaseSlot(
  s: PoolState,
  slot: SlotRecord,
  plan: SessionPlan,
  transcript: Transcript,
  hashes: Hashes,
  whole: Fitted,
): Lease {
  const key = slotId(slot);
  s.busy.add(key);
  s.o.store.markLeased(slot, true);
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
        ...previousOf(slot, s.o.forks?.(slot.backend)),
      };
    },
    commit(result) {
      committed = true;
      const record = afterTurn(slot, current, result, transcript, hashes, s.now());
      s.o.store.save(record);
      // The reply's link is the record's fingerprint: the chain as its CLI now has it.
      if (result.ok && record.fingerprint)
        remember(s, slot, current.keptSystem ?? transcript.system, transcript, [...hashes.chain, record.fingerprint]);
    },
    release() {
      if (released) return;
      released = true;
      // The slot is free in memory whatever the store says (a failed write is recovered at start).
      s.busy.delete(key);
      try {
        if (!committed) s.o.store.markLeased(slot, false);
      } finally {
        wake(s, slot.keyId, slot.backend);
      }
    },
  };
}

/** The chain's link for the reply that ends it. */
function replyLink(chain: readonly string[], result: { reply: string; calls?: readonly CallText[] }): string {
  const turn = toAssistantTurn([result.reply], result.calls ?? []) ?? {
    role: 'assistant' as const,
    text: result.reply,
  };
  return nextLink(chain[chain.length - 1]!, turn);
}

/** Most turns of a conversation kept in memory to say where a later request parts from it. */
const SEEN_TURNS = 2048;

/** Keeps what a slot's conversation now is (short hashes: they only tell turns apart for the log). */
function remember(
  s: PoolState,
  slot: SlotRecord,
  system: string | null,
  transcript: Transcript,
  chain: readonly string[],
): void {
  const g = groupOf(slot.keyId, slot.backend);
  const roles = [...transcript.turns.map((t) => t.role), 'assistant' as const].slice(0, SEEN_TURNS);
  const seen = { chain: chain.slice(0, SEEN_TURNS + 1).map((h) => h.slice(0, 16)), roles, system };
  const group = s.seen.get(g) ?? new Map<number, Seen>();
  group.set(slot.slot, seen);
  s.seen.set(g, group);
}

/** The slot's record after a turn run on `plan` ended with `result`. */
function afterTurn(
  slot: SlotRecord,
  plan: SessionPlan,
  result: CommitResult,
  transcript: Transcript,
  { chain, sys }: Hashes,
  t: number,
): SlotRecord {
  const rotated = plan.mode === 'fresh';
  // Some CLIs pick the id of a new session themselves (codex threads): keep the one it reported.
  const id = (result.ok && result.sessionId) || plan.sessionId!;
  const next: SlotRecord = rotated
    ? {
        ...slot,
        sessionId: id,
        createdAt: t,
        turns: 0,
        rotations: slot.rotations + 1,
        lastReason: plan.reason ?? 'initial',
      }
    : { ...slot };
  if (!result.ok) {
    // The CLI's copy of this session is now unknown: keep the fingerprint so the same
    // conversation finds this slot again, and rotate it then.
    return Object.assign(next, { dirty: true, lastUsedAt: t, lastReason: result.aborted ? 'aborted' : 'failed' });
  }
  // The chain of the request's turns, then the reply.
  return Object.assign(next, {
    fingerprint: replyLink(chain, result),
    msgCount: transcript.turns.length + 1,
    // A drifted prompt: the session goes on with the one its CLI has.
    systemHash: plan.keptSystem !== undefined ? systemHash(plan.keptSystem) : sys,
    turns: next.turns + 1,
    lastUsedAt: t,
    dirty: false,
    usageBase: result.rawUsage ?? null,
  });
}

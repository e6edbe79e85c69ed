import { randomUUID } from 'node:crypto';
import type { ForkSupport } from '../backends/index.js';
import type { SlotRecord, SlotStore } from '../store/index.js';
import { renderTurns, type Fitted, type Transcript, type Turn } from '../transcript/index.js';
import { FORKABLE, previousOf, wholePlan, type RotationReason } from './rotation.js';
import { driftedFrom } from './system-drift.js';
import type { SessionPlan } from './types.js';

// How a request finds its session slot: the pure choice, given the key's free slots.

/** A request's hash chain over its turns and its system prompt's hash, computed once per request. */
export interface Hashes {
  chain: string[];
  sys: string;
}

export interface PoolOptions {
  store: SlotStore;
  /** Slots per key and backend: what a key's pool starts with. */
  size: number;
  /**
   * The most slots a key's pool may grow to when no key limit says fewer (see `slotBound`); at or
   * below `size` the pool never grows.
   */
  maxSlots: number;
  /**
   * How long after its last turn a slot's conversation counts as going on: a new conversation
   * takes a new slot (up to the bound) rather than rotate such a slot.
   */
  activeMs: number;
  lifetimeMs: number;
  turnCap: number;
  idleMs: number;
  /** How long to wait for a free slot before running ephemeral. */
  waitMs: number;
  /** A new conversation takes no slot used within `activeMs` (a sub-agent's, beside its main one). */
  spareActive?: boolean;
  /** The system prompt a slot's conversation last had, when the pool remembers it (see system-drift.ts). */
  systemOf?: (slot: number) => string | null | undefined;
  /** How a backend's CLI continues a session under a new id, if it can (see `FORKABLE`). */
  forks?: (backend: string) => ForkSupport | undefined;
  now?: () => number;
}

/** The reason a matching slot cannot simply be resumed, if any. */
function staleness(slot: SlotRecord, t: number, o: PoolOptions): RotationReason | undefined {
  if (slot.createdAt !== null && t - slot.createdAt > o.lifetimeMs) return 'lifetime';
  if (slot.turns >= o.turnCap) return 'turn_cap';
  if (slot.lastUsedAt !== null && t - slot.lastUsedAt > o.idleMs) return 'idle';
  return undefined;
}

/** Why a slot with no session, or whose last turn failed, starts over. */
function restartReason(slot: SlotRecord): RotationReason {
  if (slot.sessionId === null) return slot.lastReason === 'operator' ? 'operator' : 'initial';
  return slot.lastReason === 'aborted' ? 'aborted' : 'failed';
}

/**
 * The most slots a key's pool holds: its concurrency limit (it never has more requests in flight)
 * under the global ceiling, and never fewer than the pool starts with.
 */
export function slotBound(size: number, maxSlots: number, concurrency: number | null): number {
  return Math.max(size, Math.min(maxSlots, concurrency ?? maxSlots));
}

/** An empty slot, as the store makes one: no session, no history. */
export function emptySlot(keyId: string, backend: string, slot: number): SlotRecord {
  return {
    keyId,
    backend,
    slot,
    sessionId: null,
    createdAt: null,
    lastUsedAt: null,
    turns: 0,
    msgCount: 0,
    fingerprint: null,
    systemHash: null,
    dirty: false,
    lastReason: null,
    rotations: 0,
    usageBase: null,
  };
}

/**
 * The slot a new (or edited) conversation takes: the least valuable of a key's free slots, or
 * `grow`, a slot the key may add, rather than one whose conversation goes on. Worth nothing: a
 * slot with no session, or whose last turn failed (its conversation starts over anyway); then
 * slots idle for `activeMs` or more; then `grow`; then slots used within `activeMs`. Within each,
 * the one idle longest (idle times within the same power of two of seconds count as alike), then
 * the shortest history (what a rotation makes its conversation re-send whole if it comes back),
 * then the least recently used.
 */
export function leastValuable(
  slots: readonly SlotRecord[],
  t: number,
  activeMs: number,
  grow?: SlotRecord,
): SlotRecord | undefined {
  const idle = (s: SlotRecord) => t - (s.lastUsedAt ?? 0);
  const rank = (s: SlotRecord) => (s === grow ? 2 : s.sessionId === null || s.dirty ? 0 : idle(s) >= activeMs ? 1 : 3);
  const band = (s: SlotRecord) => Math.floor(Math.log2(Math.max(1, idle(s) / 1000)));
  const candidates = grow ? [...slots, grow] : [...slots];
  return candidates.sort(
    (a, b) =>
      rank(a) - rank(b) ||
      band(b) - band(a) ||
      a.msgCount - b.msgCount ||
      (a.lastUsedAt ?? 0) - (b.lastUsedAt ?? 0) ||
      a.slot - b.slot,
  )[0];
}

/**
 * Picks a slot and a plan for this transcript among a key's free slots and `grow`, a slot the key
 * may add (undefined when there is neither): the slot whose conversation it continues (resumed,
 * forked or rotated), else the least valuable one (see `leastValuable`), rotated (`isNew`: the
 * request is a new conversation).
 */
export function chooseSlot(
  slots: readonly SlotRecord[],
  backend: string,
  transcript: Transcript,
  { chain, sys }: Hashes,
  whole: Fitted,
  t: number,
  o: PoolOptions,
  grow?: SlotRecord,
): { slot: SlotRecord; plan: SessionPlan; isNew?: true } | undefined {
  if (slots.length === 0 && !grow) return undefined;
  const { turns } = transcript;
  const full = (slot: SlotRecord, reason: RotationReason) => ({
    slot,
    plan: {
      mode: 'fresh' as const,
      sessionId: randomUUID(),
      slot: slot.slot,
      ...wholePlan(whole),
      reason,
      ...previousOf(slot, o.forks?.(backend)),
    },
  });

  // The slot whose conversation this request continues: same turns, then only new user turns, or
  // the results of the calls its last reply ended in (the turn goes on: see `answersCalls`), with
  // the user's next words after them or not.
  const continued = slots.find((s) => {
    if (s.fingerprint === null || s.msgCount >= turns.length) return false;
    if (chain[s.msgCount] !== s.fingerprint) return false;
    return continues(turns.slice(s.msgCount));
  });
  if (continued) {
    const delta: Turn[] = turns.slice(continued.msgCount);
    const kept =
      continued.systemHash !== sys ? driftedFrom(o.systemOf?.(continued.slot), transcript.system) : undefined;
    const reason = continuedReason(continued, delta, kept === undefined ? sys : continued.systemHash!, t, o);
    if (reason && FORKABLE.has(reason) && !continued.dirty && o.forks?.(backend)) {
      // The CLI's own session (compacted, perhaps) goes on under a new id: only the new turns are
      // sent. A CLI that reports running totals carries the old session's into the fork.
      const usageBase = continued.usageBase ? { usageBase: continued.usageBase } : {};
      return {
        slot: continued,
        plan: {
          mode: 'fresh',
          sessionId: randomUUID(),
          forkOf: continued.sessionId!,
          slot: continued.slot,
          text: renderTurns(delta),
          turns: delta,
          reason,
          ...usageBase,
        },
      };
    }
    if (reason) return full(continued, reason);
    return {
      slot: continued,
      plan: {
        mode: 'resumed',
        sessionId: continued.sessionId!,
        slot: continued.slot,
        text: renderTurns(delta),
        turns: delta,
        ...(continued.usageBase ? { usageBase: continued.usageBase } : {}),
        ...(kept !== undefined ? { keptSystem: kept } : {}),
      },
    };
  }
  // A new or edited conversation: the least valuable free slot, or a new one.
  const goingOn = (s: SlotRecord) => s.sessionId !== null && !s.dirty && t - (s.lastUsedAt ?? 0) < o.activeMs;
  const open = o.spareActive ? slots.filter((s) => !goingOn(s)) : slots;
  const taken = leastValuable(open, t, o.activeMs, grow);
  if (!taken) return undefined;
  return { ...full(taken, taken.sessionId === null || taken.dirty ? restartReason(taken) : 'divergent'), isNew: true };
}

/** Why a slot whose conversation a request continues cannot simply go on, if it cannot. */
function continuedReason(
  slot: SlotRecord,
  delta: readonly Turn[],
  sys: string,
  t: number,
  o: PoolOptions,
): RotationReason | undefined {
  if (slot.sessionId === null || slot.dirty) return restartReason(slot);
  if (answersCalls(delta)) return undefined;
  return slot.systemHash !== sys ? 'system_changed' : staleness(slot, t, o);
}

/** New turns that go on from where the slot's conversation stopped: tool results, then user turns. */
function continues(delta: readonly Turn[]): boolean {
  const firstUser = delta.findIndex((x) => x.role !== 'tool');
  return delta.slice(firstUser === -1 ? delta.length : firstUser).every((x) => x.role === 'user');
}

/**
 * New turns that start with tool results: the middle of a turn (the CLI waits on those calls), so
 * nothing about the session is stale; it goes on, or starts over when its CLI is gone.
 */
export function answersCalls(delta: readonly Turn[]): boolean {
  return delta[0]?.role === 'tool';
}

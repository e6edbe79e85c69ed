import { randomUUID } from 'node:crypto';
import type { ForkSupport } from '../backends/index.js';
import type { SlotRecord, SlotStore } from '../store/index.js';
import { renderTurns, type Fitted, type Transcript, type Turn } from '../transcript/index.js';
import { FORKABLE, previousOf, wholePlan, type RotationReason } from './rotation.js';
import type { SessionPlan } from './types.js';

// How a request finds its session slot: the pure choice, given the key's free slots.

/** A request's hash chain over its turns and its system prompt's hash, computed once per request. */
export interface Hashes {
  chain: string[];
  sys: string;
}

export interface PoolOptions {
  store: SlotStore;
  /** Slots per key and backend. */
  size: number;
  lifetimeMs: number;
  turnCap: number;
  idleMs: number;
  /** How long to wait for a free slot before running ephemeral. */
  waitMs: number;
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
 * Picks a slot and a plan for this transcript among a key's free slots (undefined when none is
 * free): the slot whose conversation it continues (resumed, forked or rotated), else the least
 * recently used one, rotated.
 */
export function chooseSlot(
  slots: readonly SlotRecord[],
  backend: string,
  transcript: Transcript,
  { chain, sys }: Hashes,
  whole: Fitted,
  t: number,
  o: PoolOptions,
): { slot: SlotRecord; plan: SessionPlan } | undefined {
  if (slots.length === 0) return undefined;
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
  // only the results of the calls its last reply ended in (the turn goes on: see `toolResultsOnly`).
  const continued = slots.find((s) => {
    if (s.fingerprint === null || s.msgCount >= turns.length) return false;
    if (chain[s.msgCount] !== s.fingerprint) return false;
    const delta = turns.slice(s.msgCount);
    return delta.every((x) => x.role === 'user') || toolResultsOnly(delta);
  });
  if (continued) {
    const fresh = continued.sessionId === null;
    const reason: RotationReason | undefined =
      fresh || continued.dirty
        ? restartReason(continued)
        : toolResultsOnly(turns.slice(continued.msgCount))
          ? undefined
          : continued.systemHash !== sys
            ? 'system_changed'
            : staleness(continued, t, o);
    const delta: Turn[] = turns.slice(continued.msgCount);
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
      },
    };
  }
  // A new or edited conversation: evict the least recently used free slot.
  const lru = [...slots].sort((a, b) => (a.lastUsedAt ?? 0) - (b.lastUsedAt ?? 0))[0]!;
  return full(lru, lru.sessionId === null || lru.dirty ? restartReason(lru) : 'divergent');
}

/**
 * New turns that are only tool results: the middle of a turn (the CLI waits on those calls), so
 * nothing about the session is stale; it goes on, or starts over when its CLI is gone.
 */
export function toolResultsOnly(delta: readonly Turn[]): boolean {
  return delta.length > 0 && delta.every((x) => x.role === 'tool');
}

import type { Turn } from '../transcript/index.js';

// Why a request was taken for a new conversation: where it parts from the closest conversation
// the key's slots hold (for the log: a client whose every turn starts over shows what it changed).

/** What a slot's conversation was at its last turn: its hash chain (reply included) and its turns' roles. */
export interface Seen {
  chain: readonly string[];
  roles: readonly Turn['role'][];
  /** The system prompt its CLI has (see system-drift.ts). */
  system?: string | null;
}

/** Where a request parts from a slot's conversation: the first turn (of the request's) not shared, and why. */
export interface Divergence {
  slot: number;
  /** The index of the request's first turn the slot's conversation does not have. */
  at: number;
  why: string;
}

const a = (role: string) => (role === 'assistant' ? `an ${role}` : `a ${role}`);

/** Turns two chains share from the start (their roots aside). */
function shared(x: readonly string[], y: readonly string[]): number {
  let k = 0;
  while (k + 1 < x.length && k + 1 < y.length && x[k + 1] === y[k + 1]) k++;
  return k;
}

/**
 * Where this request (its chain and turns) parts from the slot conversation it shares the most
 * turns with; undefined when it shares none with any (a new conversation indeed).
 */
export function divergence(
  seen: ReadonlyMap<number, Seen>,
  chain: readonly string[],
  turns: readonly Turn[],
  busy: (slot: number) => boolean,
): Divergence | undefined {
  let best: { slot: number; s: Seen; k: number } | undefined;
  for (const [slot, s] of seen) {
    const k = shared(chain, s.chain);
    if (k > 0 && (!best || k > best.k)) best = { slot, s, k };
  }
  if (!best) return undefined;
  const { slot, s, k } = best;
  const had = s.roles.length;
  const next = turns[k]?.role;
  if (k === had && next === undefined) return { slot, at: k, why: 'it adds no turn to the conversation' };
  if (k === had && busy(slot)) return { slot, at: k, why: "its conversation's slot was in use" };
  if (k === had) return { slot, at: k, why: `the turns it adds begin with ${a(next!)} turn` };
  if (next === undefined) return { slot, at: k, why: `it ends at turn ${k} of the conversation's ${had}` };
  const was = s.roles[k]!;
  const why =
    next === was ? `its ${next} turn differs` : `it has ${a(next)} turn where the conversation had ${a(was)} one`;
  return { slot, at: k, why };
}

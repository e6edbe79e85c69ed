import type { Queued, WaitPolicy } from './types.js';

/**
 * Keys take turns: the key served next is the one that has waited longest for its turn, and a key served
 * goes to the back while it still has waiters, so one key's burst delays another key's waiter by at most
 * one turn. Within a key, first come first served.
 */
export function roundRobin(): WaitPolicy {
  /** Keys with waiters, in the order they will be served. */
  const order: string[] = [];
  return {
    pick: (waiting) => waiting.findIndex((w) => w.key === order[0]),
    joined(key, ofKey) {
      if (ofKey === 1) order.push(key);
    },
    left(key, ofKey, served) {
      if (served || ofKey === 0) order.splice(order.indexOf(key), 1);
      if (served && ofKey > 0) order.push(key);
    },
  };
}

/** The waiter whose key holds the fewest (by `holds`, asked at each pick), the earliest of those. */
export function fewestHeldFirst(holds: (key: string) => number): WaitPolicy {
  return {
    pick(waiting: readonly Queued[]) {
      let best = 0;
      for (let i = 1; i < waiting.length; i++) if (holds(waiting[i]!.key) < holds(waiting[best]!.key)) best = i;
      return best;
    },
  };
}

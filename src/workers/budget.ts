// The memory budget of the live CLIs at rest and each key's fair share of them (docs/performance.md, "Live workers").
import { memoryPressure, processMemoryBytes } from '../process/index.js';
import { type PoolState, retire } from './state.js';
import type { Worker } from './types.js';

const MB = 1024 * 1024;
/** What one live claude is reckoned to take when nothing better is known (RSS ~255 MB, PSS less). */
export const WORKER_BYTES = 300 * MB;
/** A key counts as active this long after its last turn (its share, and who gets spares). */
const ACTIVE_MS = 10 * 60_000;
/** A spare is started only for a key whose last turn was this recent. */
const SPARE_ACTIVE_MS = 3 * 60_000;
/** A key whose conversations went on for this many warm turns since it last began one keeps no spare. */
const CONTINUED_TURNS = 2;
/** Memory pressure: the share of the last 10 s some task stalled on memory (PSI `some avg10`), in %. */
const PRESSURE_AVG10 = 10;
/** Memory pressure: MemAvailable below this. */
const PRESSURE_FLOOR = 512 * MB;

/**
 * The most `--worker-memory` defaults to: about six idle claude CLIs (~125 MB PSS each beside one
 * another). What the CLIs at rest save is a resume (~0.5 s) on a conversation's next turn; a larger
 * machine keeps them no better, so the default stops growing with the machine here.
 */
const DEFAULT_BUDGET_CAP = 768 * MB;

/** `--worker-memory`'s default: an eighth of the machine's memory, at most 768 MB, never less than two workers. */
export function defaultWorkerMemory(totalBytes: number): number {
  return Math.max(Math.min(Math.floor(totalBytes / 8), DEFAULT_BUDGET_CAP), 2 * WORKER_BYTES);
}

/** Whether the machine is short of memory: PSI `some avg10` over 10 %, or MemAvailable under 512 MB. */
export function underPressure(): boolean {
  const p = memoryPressure();
  return (p.someAvg10 ?? 0) > PRESSURE_AVG10 || (p.availableBytes ?? Number.POSITIVE_INFINITY) < PRESSURE_FLOOR;
}

/**
 * A key's share of the budget: the budget over the keys active in the last 10 minutes, in bytes.
 * A key's CLIs at rest beyond it go, but for its two most valuable, whatever they hold.
 */
export function keyShareBytes(budgetBytes: number, activeKeys: number): number {
  return Math.floor(budgetBytes / Math.max(1, activeKeys));
}

/** A key keeps this many CLIs at rest whatever they hold. */
const KEY_FLOOR = 2;
/** CLIs of a key at rest beyond its session slots and a spare go once idle this long. */
const KEY_SLOTS_GRACE_MS = 20_000;

/** The CLIs at rest a key keeps for long: its session slots and a spare (at least 2). */
function slotCap(s: PoolState): number {
  return Math.max(KEY_FLOOR, s.o.keySlots ?? Number.POSITIVE_INFINITY);
}

/**
 * One key's CLIs at rest within its share: beyond its two most valuable, the least valuable go
 * while they hold more than `shareBytes`; beyond its session slots and a spare, those idle for
 * 20 s go too (conversations going on at once keep theirs while they go on).
 */
function keepShare(s: PoolState, ws: readonly Worker[], recent: ReadonlySet<Worker>, shareBytes: number): void {
  let held = ws.reduce((n, w) => n + (w.memBytes ?? 0), 0);
  const order = byValue(ws, recent);
  const cap = slotCap(s);
  const t = s.now();
  let kept = order.length;
  for (const w of order) {
    if (kept <= KEY_FLOOR) break;
    const overSlots = kept > cap && t - w.lastUsedAt >= KEY_SLOTS_GRACE_MS;
    if (held <= shareBytes && !overSlots) continue;
    void retire(s, w, 'share');
    held -= w.memBytes ?? 0;
    kept--;
  }
}

/** Keys whose last use of the pool was within `ms`. */
export function activeKeys(s: PoolState, ms = s.o.activeMs ?? ACTIVE_MS): Set<string> {
  const since = s.now() - ms;
  return new Set([...s.keySeen].filter(([, at]) => at >= since).map(([k]) => k));
}

/** The live CLIs that run nothing: idle workers and spares. */
function atRest(s: PoolState): Worker[] {
  const idle = [...s.workers.values()].filter((w) => w.state === 'idle');
  return [...idle, ...[...s.spares.values()].map((spare) => spare.worker).filter((w) => w.state === 'spare')];
}

/** Each key's most recently used conversation's worker (busy or idle). */
function mostRecent(s: PoolState): Set<Worker> {
  const best = new Map<string, Worker>();
  for (const w of s.workers.values()) {
    if (w.state !== 'idle' && w.state !== 'busy') continue;
    const b = best.get(w.keyId);
    if (!b || w.lastUsedAt > b.lastUsedAt) best.set(w.keyId, w);
  }
  return new Set(best.values());
}

/**
 * Least valuable first: spares, then workers that served one turn, then the least recently used;
 * each key's most recent conversation last of all (it is the one most likely to go on), and of
 * those too one that served one turn first: when the budget cannot keep every key's, a CLI just
 * started for a conversation resumed goes before the ones that have gone on warm, so the same
 * conversations stay warm rather than each one pushing out the next to be used.
 */
function byValue(ws: readonly Worker[], recent: ReadonlySet<Worker>): Worker[] {
  const rank = (w: Worker) => (w.state === 'spare' ? 0 : (recent.has(w) ? 2 : 0) + (w.turns <= 1 ? 1 : 2));
  return [...ws].sort((a, b) => rank(a) - rank(b) || a.lastUsedAt - b.lastUsedAt);
}

/** Measures the given CLIs (PSS of each one's process group), off the event loop. */
export async function measure(s: PoolState, ws: readonly Worker[]): Promise<void> {
  const read = s.o.measure ?? processMemoryBytes;
  await Promise.all(
    ws.map(async (w) => {
      const b = await read(w.proc.pid);
      if (b === null) return;
      w.memBytes = b;
      w.memAt = s.now();
    }),
  );
}

/**
 * Every key's CLIs at rest within its share, theirs all within the budget (half of it under
 * pressure); no spare of a key inactive for 3 minutes.
 */
export function applyBudget(s: PoolState): void {
  const budget = s.o.memoryBytes;
  if (budget === undefined) return;
  const recent = mostRecent(s);
  // A spare of a key no longer active will not be taken before it idles out.
  const sparing = activeKeys(s, SPARE_ACTIVE_MS);
  for (const w of atRest(s)) if (w.state === 'spare' && !sparing.has(w.keyId)) void retire(s, w, 'unused');
  // One key alone has the whole budget: the budget, below, says what goes.
  const active = activeKeys(s).size;
  const share = active > 1 ? keyShareBytes(budget, active) : Number.POSITIVE_INFINITY;
  const byKey = new Map<string, Worker[]>();
  for (const w of atRest(s)) byKey.set(w.keyId, [...(byKey.get(w.keyId) ?? []), w]);
  for (const ws of byKey.values()) keepShare(s, ws, recent, share);
  const pressed = (s.o.pressure ?? underPressure)();
  const limit = pressed ? budget / 2 : budget;
  const rest = atRest(s);
  let held = rest.reduce((n, w) => n + (w.memBytes ?? 0), 0);
  for (const w of byValue(rest, recent)) {
    // Under pressure only each key's most recent conversation may stay, and that within half the budget.
    if (held <= limit && !(pressed && w.state === 'spare') && !(pressed && !recent.has(w))) break;
    void retire(s, w, 'memory');
    held -= w.memBytes ?? 0;
  }
}

/**
 * Whether a spare for the key may start: the key was active in the last 3 minutes and has begun a
 * conversation since its last two warm turns (see `countTurn`), the machine is not short of
 * memory, and one more CLI fits the budget (`full`: the key is at its share, so the spare must
 * take the place of one of its CLIs at rest).
 */
export function spareFits(s: PoolState, keyId: string): 'yes' | 'full' | 'no' {
  const budget = s.o.memoryBytes;
  if (budget === undefined) return 'yes';
  if (!activeKeys(s, SPARE_ACTIVE_MS).has(keyId)) return 'no';
  if ((s.continued.get(keyId) ?? 0) >= CONTINUED_TURNS) return 'no';
  if ((s.o.pressure ?? underPressure)()) return 'no';
  const rest = atRest(s);
  // One not measured yet (it came to rest a moment ago) is reckoned at a worker's size.
  const measured = rest.filter((w) => w.memBytes !== undefined);
  const each = measured.length ? measured.reduce((n, w) => n + w.memBytes!, 0) / measured.length : WORKER_BYTES;
  const held = rest.reduce((n, w) => n + (w.memBytes ?? each), 0);
  if (held + each > budget) return 'no';
  const own = rest.filter((w) => w.keyId === keyId);
  const ownHeld = own.reduce((n, w) => n + (w.memBytes ?? each), 0);
  const full = own.length >= slotCap(s) || ownHeld + each > keyShareBytes(budget, activeKeys(s).size);
  return full ? 'full' : 'yes';
}

/**
 * Counts a key's turn: a warm turn of a conversation that goes on, or (`began`) the first turn of
 * one. A spare waits for the key's next new conversation; a key that has gone on with its
 * conversations for two warm turns since it last began one is talking, not opening new ones, so
 * its spare is stopped and no new one starts until it begins a conversation again.
 */
export function countTurn(s: PoolState, keyId: string, began: boolean): void {
  if (began) {
    s.continued.delete(keyId);
    return;
  }
  const n = (s.continued.get(keyId) ?? 0) + 1;
  s.continued.set(keyId, n);
  if (n < CONTINUED_TURNS || s.o.memoryBytes === undefined) return;
  for (const spare of [...s.spares.values()])
    if (spare.worker.keyId === keyId && spare.worker.state === 'spare') void retire(s, spare.worker, 'unused');
}

/** For /health and /metrics: the budget, what the CLIs at rest hold, each key's share of it. */
export function budgetInfo(s: PoolState) {
  const budget = s.o.memoryBytes;
  const rest = atRest(s);
  const active = activeKeys(s).size;
  return {
    budgetMb: budget === undefined ? null : Math.round(budget / MB),
    heldMb: Math.round(rest.reduce((n, w) => n + (w.memBytes ?? 0), 0) / MB),
    atRest: rest.length,
    activeKeys: active,
    keyShareMb: budget === undefined ? null : Math.round(keyShareBytes(budget, active) / MB),
  };
}

/** Measures the CLIs at rest every `sampleMs` (default 5 s) and applies the budget. */
export function watchBudget(s: PoolState): () => void {
  if (s.o.memoryBytes === undefined) return () => {};
  const measured = (ws: readonly Worker[]) =>
    measure(s, ws).then(
      () => applyBudget(s),
      (err: unknown) => s.o.logger.warn({ event: 'worker_memory_failed', err }, 'could not measure the live CLIs'),
    );
  const every = s.o.sampleMs ?? 5000;
  // Not on a worker's rest: reading a process's memory costs the daemon's CPU (the kernel walks
  // its pages), and a client opening a conversation a request would pay it on every request.
  s.rested = undefined;
  const timer = setInterval(() => void measured(atRest(s)), every);
  timer.unref();
  return () => clearInterval(timer);
}

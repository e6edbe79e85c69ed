import { stopProcess } from '../process/index.js';
import type { RetireReason, Spare, Worker, WorkerPoolOptions } from './types.js';

/** What a worker pool holds: its workers by slot, its spares, and the retirements still running. */
export interface PoolState {
  readonly o: WorkerPoolOptions;
  readonly now: () => number;
  readonly workers: Map<string, Worker>;
  readonly retiring: Map<string, Set<Promise<void>>>;
  readonly gone: WeakMap<Worker, Promise<void>>;
  readonly idleTimers: Map<Worker, NodeJS.Timeout>;
  /** Pre-started CLIs by slot: at most one per slot, and one per key and backend. */
  readonly spares: Map<string, Spare>;
  /** When each key last took, kept or released a live CLI (its activity, for its share and spares). */
  readonly keySeen: Map<string, number>;
  /** Each key's warm turns of conversations that went on since it last began one (see `keepsSpare`). */
  readonly continued: Map<string, number>;
  /** Called when a CLI comes to rest (idle after a turn, up, adopted): the memory budget measures it. */
  rested?: ((w: Worker) => void) | undefined;
}

/** An empty pool. */
export function createPoolState(o: WorkerPoolOptions): PoolState {
  return {
    o,
    now: o.now ?? Date.now,
    workers: new Map(),
    retiring: new Map(),
    gone: new WeakMap(),
    idleTimers: new Map(),
    spares: new Map(),
    keySeen: new Map(),
    continued: new Map(),
  };
}

/** Notes a key's use of the pool now. */
export function touchKey(s: PoolState, keyId: string): void {
  s.keySeen.set(keyId, s.now());
}

/** Stops a worker's idle timer. */
export function clearIdle(s: PoolState, w: Worker): void {
  const t = s.idleTimers.get(w);
  if (t) clearTimeout(t);
  s.idleTimers.delete(w);
}

/** Retires a worker once it has been idle for `idleMs`, or when it reaches its age. */
export function armIdle(s: PoolState, w: Worker): void {
  clearIdle(s, w);
  const ageLeft = w.startedAt + s.o.maxAgeMs - s.now();
  const ms = Math.max(0, Math.min(s.o.idleMs, ageLeft));
  s.idleTimers.set(w, setTimeout(() => void retire(s, w, ageLeft <= s.o.idleMs ? 'max_age' : 'idle'), ms).unref());
}

/** Stops a worker and removes its workspace; resolves once the process is gone. Safe to call twice. */
export function retire(s: PoolState, w: Worker, reason: RetireReason): Promise<void> {
  const pending = s.gone.get(w);
  if (pending) return pending;
  w.state = 'retiring';
  clearIdle(s, w);
  if (s.workers.get(w.slot) === w) s.workers.delete(w.slot);
  if (s.spares.get(w.slot)?.worker === w) s.spares.delete(w.slot);
  s.o.logger.debug(
    { event: 'worker_retired', slot: w.slot, pid: w.proc.pid, reason, turns: w.turns },
    'worker retired',
  );
  const done = (async () => {
    // A clean end first: the CLI finishes and flushes its session file, then exits.
    w.proc.endInput();
    // A revoked key's CLI gets no grace: nothing of its session is wanted any more.
    const grace = setTimeout(
      () => stopProcess(w.life, reason === 'shutdown' ? 'shutdown' : 'done'),
      reason === 'revoked' ? 0 : s.o.retireGraceMs,
    );
    await w.proc.exit;
    clearTimeout(grace);
    w.tools?.close();
    await w.lines.return?.(undefined);
    // The process is gone, so its session is safe to resume; the folder goes off the event loop.
    w.ws
      .removeLater()
      .catch((err: unknown) =>
        s.o.logger.warn(
          { event: 'workspace_remove_failed', err },
          'could not remove a workspace (the next start sweeps it)',
        ),
      );
  })();
  const set = s.retiring.get(w.slot) ?? new Set<Promise<void>>();
  s.retiring.set(w.slot, set);
  const tracked = done.finally(() => {
    set.delete(tracked);
    if (set.size === 0 && s.retiring.get(w.slot) === set) s.retiring.delete(w.slot);
  });
  set.add(tracked);
  s.gone.set(w, tracked);
  return tracked;
}

/** Room for one more live CLI under the cap: spares go first, then the least recently used idle worker. */
export function makeRoom(s: PoolState): boolean {
  if (s.workers.size + s.spares.size < s.o.max) return true;
  const spare = [...s.spares.values()].sort((a, b) => a.worker.startedAt - b.worker.startedAt)[0]?.worker;
  const lru =
    spare ?? [...s.workers.values()].filter((w) => w.state === 'idle').sort((a, b) => a.lastUsedAt - b.lastUsedAt)[0];
  if (!lru) return false;
  void retire(s, lru, 'evicted');
  return true;
}

/** A worker that exits by itself (crash, OOM, its own idle exit) is dropped and cleaned up. */
export function retireOnExit(s: PoolState, w: Worker): void {
  void w.proc.exit.then(() => {
    if (w.state !== 'retiring') void retire(s, w, 'exited');
  });
}

import { budgetInfo, watchBudget } from './budget.js';
import { rssMb } from './memory.js';
import { spareMethods } from './spares.js';
import { slotWorkerMethods } from './slot-worker.js';
import { createPoolState, makeRoom, type PoolState, retire } from './state.js';
import type { RetireReason, Worker, WorkerInfo, WorkerPoolOptions } from './types.js';

/** For /health and logs: every worker and spare, a spare still starting as `starting`. */
function listWorkers(s: PoolState): WorkerInfo[] {
  const t = s.now();
  const starting = new Set([...s.spares.values()].filter((spare) => !spare.isReady).map((spare) => spare.worker));
  return allWorkers(s).map((w) => ({
    slot: w.slot,
    pid: w.proc.pid,
    state: starting.has(w) ? 'starting' : w.state === 'busy' && w.parked ? 'parked' : w.state,
    model: w.fit.cliModel,
    turns: w.turns,
    ageS: Math.round((t - w.startedAt) / 1000),
    idleS: Math.round((t - w.lastUsedAt) / 1000),
    rssMb: rssMb(w.proc.pid),
    pssMb: w.memBytes === undefined ? null : Math.round(w.memBytes / (1024 * 1024)),
  }));
}

function allWorkers(s: PoolState): Worker[] {
  return [...s.workers.values(), ...[...s.spares.values()].map((spare) => spare.worker)];
}

/**
 * Live CLI processes kept between the turns of one session slot (ARCHITECTURE section 12). A
 * worker belongs to one slot of one key and serves only a turn whose session, model, system
 * prompt and output cap are what it was started with. Anything unusual retires it: an error, an
 * abort, a mismatch, the slot rotating, idle time, age, turn count; the least recently used idle
 * worker makes room for a new one. Retiring closes stdin, then kills after a short grace, then
 * removes the workspace; `settled(slot)` waits for that so a cold run never shares a session
 * with a process still writing it.
 */
export function createWorkerPool(o: WorkerPoolOptions) {
  const s = createPoolState(o);
  const { workers, spares, retiring } = s;
  const all = (): Worker[] => allWorkers(s);
  const unwatch = watchBudget(s);

  return {
    get max(): number {
      return o.max;
    },
    get maxAgeMs(): number {
      return o.maxAgeMs;
    },
    get size(): number {
      return workers.size + spares.size;
    },

    /** Stops a worker and removes its workspace; resolves once the process is gone. Safe to call twice. */
    retire: (w: Worker, reason: RetireReason): Promise<void> => retire(s, w, reason),

    /**
     * Whether a worker could be started now (making room if need be); false at the cap with every worker
     * busy.
     */
    hasRoom(): boolean {
      return o.max > 0 && o.maxTurns > 1 && makeRoom(s);
    },

    ...slotWorkerMethods(s),

    ...spareMethods(s),

    /** Resolves once no retired worker of this slot is still running. */
    async settled(slot: string): Promise<void> {
      await Promise.all([...(retiring.get(slot) ?? [])]);
    },

    /**
     * Every live CLI of a key, idle, starting or spare (its revocation, disabling or expiry); one
     * busy with a turn goes when the turn ends, like the key's cold turns in flight.
     */
    retireKey(keyId: string, reason: RetireReason): void {
      for (const w of all()) {
        if (w.keyId !== keyId) continue;
        if (w.state === 'busy') w.revoked = true;
        else void retire(s, w, reason);
      }
    },

    /** The keys that have a live CLI here. */
    keyIds(): Set<string> {
      return new Set(all().map((w) => w.keyId));
    },

    /** Shutdown: every worker retired (stdin closed, killed after the grace), workspaces removed. */
    async stopAll(): Promise<void> {
      unwatch();
      for (const w of all()) void retire(s, w, 'shutdown');
      await Promise.all([...retiring.values()].flatMap((set) => [...set]));
    },

    /** For /health and logs. */
    list(): WorkerInfo[] {
      return listWorkers(s);
    },

    /** For /health and /metrics: the memory budget, what the CLIs at rest hold, each key's share. */
    memory(): ReturnType<typeof budgetInfo> {
      return budgetInfo(s);
    },
  };
}

export type WorkerPool = ReturnType<typeof createWorkerPool>;

// A slot's worker through its life in the pool: taken for a turn, released after it, adopted after a
// cold turn, started ahead of one, promoted from a spare.
import { countTurn } from './budget.js';
import { armIdle, clearIdle, makeRoom, type PoolState, retire, retireOnExit, touchKey } from './state.js';
import type { LiveRun, RetireReason, Worker, WorkerFit } from './types.js';

/** Whether a worker started with `f` may serve a turn that needs `fit`. */
function fits(f: WorkerFit, fit: WorkerFit): boolean {
  return (
    f.sessionId === fit.sessionId &&
    f.cliModel === fit.cliModel &&
    f.system === fit.system &&
    f.maxOutputTokens === fit.maxOutputTokens &&
    f.tools === fit.tools &&
    f.login === fit.login &&
    f.reasoning === fit.reasoning
  );
}

/** The slot's idle worker, now busy, if it fits the turn; one that does not fit is retired. */
export function takeWorker(s: PoolState, slot: string, fit: WorkerFit): Worker | undefined {
  const w = s.workers.get(slot);
  if (!w || w.state !== 'idle') return undefined;
  const t = s.now();
  if (!fits(w.fit, fit)) {
    void retire(s, w, 'mismatch');
    return undefined;
  }
  if (t - w.startedAt >= s.o.maxAgeMs) {
    void retire(s, w, 'max_age');
    return undefined;
  }
  clearIdle(s, w);
  w.state = 'busy';
  w.lastUsedAt = t;
  touchKey(s, w.keyId);
  return w;
}

/** A warm turn answered: the worker waits for the next one, unless it has served enough. */
export function releaseWorker(s: PoolState, w: Worker, cost: number): void {
  if (w.state !== 'busy') return;
  w.turns++;
  w.cost = cost;
  w.lastUsedAt = s.now();
  touchKey(s, w.keyId);
  countTurn(s, w.keyId, w.turns <= 1);
  w.proc.hold();
  if (w.revoked) void retire(s, w, 'revoked');
  else if (w.turns >= s.o.maxTurns) void retire(s, w, 'max_turns');
  else if (s.now() - w.startedAt >= s.o.maxAgeMs) void retire(s, w, 'max_age');
  else {
    w.state = 'idle';
    armIdle(s, w);
    s.rested?.(w);
  }
}

/** Keeps a process that answered its first turn as the slot's worker; false when there is no room. */
export function adoptWorker(s: PoolState, slot: string, keyId: string, run: LiveRun, fit: WorkerFit): boolean {
  if (s.o.max <= 0 || s.o.maxTurns <= 1) return false;
  const existing = s.workers.get(slot);
  if (existing) void retire(s, existing, 'rotated');
  if (!makeRoom(s)) return false;
  const t = s.now();
  const w: Worker = { ...run, slot, keyId, fit, startedAt: t, lastUsedAt: t, turns: 1, state: 'idle' };
  s.workers.set(slot, w);
  touchKey(s, keyId);
  countTurn(s, keyId, true);
  retireOnExit(s, w);
  armIdle(s, w);
  s.rested?.(w);
  return true;
}

/** A worker started for a slot's session: served once it is up. */
export function addStartingWorker(s: PoolState, w: Worker, ready: Promise<boolean>): void {
  const existing = s.workers.get(w.slot);
  if (existing) void retire(s, existing, 'rotated');
  s.workers.set(w.slot, w);
  touchKey(s, w.keyId);
  w.up = ready;
  void ready.then((ok) => {
    if (w.state !== 'starting') return;
    if (!ok) return void retire(s, w, 'no_answer');
    w.state = 'idle';
    armIdle(s, w);
    s.rested?.(w);
  });
  retireOnExit(s, w);
}

/** A spare's first turn answered: it becomes the slot's worker for its session. */
export function promoteSpare(s: PoolState, w: Worker, sessionId: string, system: string, cost: number): boolean {
  const existing = s.workers.get(w.slot);
  if (existing && existing !== w) void retire(s, existing, 'rotated');
  w.fit = { ...w.fit, sessionId, system };
  s.workers.set(w.slot, w);
  w.turns = 0;
  w.cost = 0;
  releaseWorker(s, w, cost);
  return w.state === 'idle';
}

/** Retires the least recently used idle (or starting) worker, of the key when one is given; false when none. */
export function shedIdleWorker(s: PoolState, keyId?: string): boolean {
  const lru = [...s.workers.values()]
    .filter((w) => (w.state === 'idle' || w.state === 'starting') && (keyId === undefined || w.keyId === keyId))
    .sort((a, b) => a.lastUsedAt - b.lastUsedAt)[0];
  if (!lru) return false;
  void retire(s, lru, 'evicted');
  return true;
}

/** A pool's methods for its slots' workers. */
export function slotWorkerMethods(s: PoolState) {
  return {
    /**
     * The slot's idle worker, now busy, if it fits the turn; a worker that does not fit is retired
     * (await `settled` before running the turn cold).
     */
    take(slot: string, fit: WorkerFit): Worker | undefined {
      return takeWorker(s, slot, fit);
    },

    /**
     * As `take`, but a worker still starting for the slot's session is waited for, up to `ms`: the
     * conversation's next turn often comes while the CLI started after its last one comes up.
     */
    async takeWhenUp(slot: string, fit: WorkerFit, ms: number): Promise<Worker | undefined> {
      const w = s.workers.get(slot);
      if (w?.state === 'starting' && w.up && fits(w.fit, fit)) {
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, ms);
        });
        await Promise.race([w.up, late]).finally(() => clearTimeout(timer));
      }
      return takeWorker(s, slot, fit);
    },

    /**
     * Keeps a process that answered its first turn as the slot's worker. Makes room by retiring
     * the least recently used idle worker; false (the caller lets the process end) when no room.
     */
    adopt(slot: string, keyId: string, run: LiveRun, fit: WorkerFit): boolean {
      return adoptWorker(s, slot, keyId, run, fit);
    },

    release: (w: Worker, cost: number): void => releaseWorker(s, w, cost),

    /**
     * A worker started for a slot's session (after a cold turn): not served until it is up; a turn
     * that comes first waits for it a while (`takeWhenUp`), then runs cold and retires it.
     */
    addStarting(w: Worker, ready: Promise<boolean>): void {
      addStartingWorker(s, w, ready);
    },

    /** A spare's first turn answered: it becomes the slot's worker for its session. */
    promote(w: Worker, sessionId: string, system: string, cost: number): boolean {
      return promoteSpare(s, w, sessionId, system, cost);
    },

    /** Retires the slot's worker, if any (the slot rotated to a new session, or was reset). */
    retireSlot(slot: string, reason: RetireReason): void {
      const w = s.workers.get(slot);
      if (w) void retire(s, w, reason);
    },

    /**
     * Retires the least recently used idle (or starting) worker, of the key when one is given, to
     * free its process for a turn; false when none.
     */
    shedIdle(keyId?: string): boolean {
      return shedIdleWorker(s, keyId);
    },
  };
}

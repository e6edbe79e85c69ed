import { readFileSync } from 'node:fs';
import { freemem } from 'node:os';
import type { Logger } from '../log/index.js';
import type { RunningProcess } from '../process/index.js';
import type { Workspace } from '../workspace/index.js';

/** What a live worker was started with: a turn it serves must ask for exactly the same. */
export interface WorkerFit {
  sessionId: string;
  cliModel: string;
  /** Hash of the system prompt the process was started with. */
  system: string;
  maxOutputTokens: number | undefined;
}

/** A process that just answered a turn and can serve the next one. */
export interface LiveRun {
  proc: RunningProcess;
  lines: AsyncIterator<string>;
  ws: Workspace;
  /** Aborting it stops the process (its reason becomes the exit reason). */
  life: AbortController;
  /** The CLI's running cost figure after the turn (claude reports the process's total). */
  cost: number;
}

export interface Worker extends LiveRun {
  readonly slot: string;
  readonly keyId: string;
  fit: WorkerFit;
  readonly startedAt: number;
  turns: number;
  lastUsedAt: number;
  /** `starting`: started for a slot's session and not up yet; `spare`: started before its conversation. */
  state: 'idle' | 'busy' | 'retiring' | 'spare' | 'starting';
  /** Its key was revoked mid-turn: retired as soon as the turn ends. */
  revoked?: boolean;
}

/** A CLI started before it has a conversation, for a key's next new conversation in one slot. */
export interface Spare {
  worker: Worker;
  backend: string;
  /** Resolves true once the CLI has answered its first control request (it is up). */
  ready: Promise<boolean>;
  isReady: boolean;
}

export type RetireReason = 'failed' | 'aborted' | 'idle' | 'max_age' | 'max_turns' | 'mismatch' | 'rotated' | 'evicted' | 'no_answer' | 'exited' | 'shutdown' | 'superseded' | 'revoked';

export interface WorkerInfo {
  slot: string;
  pid: number | undefined;
  /** `starting`: a spare not up yet. */
  state: Worker['state'] | 'starting';
  model: string;
  turns: number;
  ageS: number;
  idleS: number;
  rssMb: number | null;
}

export interface WorkerPoolOptions {
  /** Most live workers at once; 0 turns workers off. */
  max: number;
  idleMs: number;
  maxAgeMs: number;
  maxTurns: number;
  /** Between closing a retired worker's stdin and killing it. */
  retireGraceMs: number;
  logger: Logger;
  now?: () => number;
}

/** The pool key of a session slot's worker: one key's one backend's one slot. */
export function workerSlot(keyId: string, backend: string, slot: number): string {
  return `${keyId}/${backend}/${slot}`;
}

/** Resident memory of a process in MB, from /proc; null when it is gone. */
function rssMb(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** Memory the system can still hand out (MemAvailable), in bytes. */
export function availableMemory(): number {
  try {
    const m = /MemAvailable:\s+(\d+) kB/.exec(readFileSync('/proc/meminfo', 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch {
    // not Linux
  }
  return freemem();
}

let memorySeen = { at: -Infinity, bytes: 0 };

/**
 * `availableMemory()` read at most every `maxAgeMs`: a pre-start after every request asks, and
 * /proc/meminfo is the kernel adding up its counters each time (about 30 µs).
 */
export function recentAvailableMemory(maxAgeMs = 500): number {
  const now = performance.now();
  if (now - memorySeen.at >= maxAgeMs) memorySeen = { at: now, bytes: availableMemory() };
  return memorySeen.bytes;
}

/** The memory-derived default for `--max-workers`: ~300 MiB each from half the machine, at most 4 per core. */
export function defaultMaxWorkers(totalBytes: number, cpus: number): number {
  return Math.max(0, Math.min(Math.floor(totalBytes / 2 / (300 * 1024 * 1024)), cpus * 4));
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
  const now = o.now ?? Date.now;
  const workers = new Map<string, Worker>();
  const retiring = new Map<string, Set<Promise<void>>>();
  const gone = new WeakMap<Worker, Promise<void>>();
  const idleTimers = new Map<Worker, NodeJS.Timeout>();
  /** Pre-started CLIs by slot: at most one per slot, and one per key and backend. */
  const spares = new Map<string, Spare>();

  function clearIdle(w: Worker): void {
    const t = idleTimers.get(w);
    if (t) clearTimeout(t);
    idleTimers.delete(w);
  }

  function armIdle(w: Worker): void {
    clearIdle(w);
    const ageLeft = w.startedAt + o.maxAgeMs - now();
    const ms = Math.max(0, Math.min(o.idleMs, ageLeft));
    idleTimers.set(
      w,
      setTimeout(() => void retire(w, ageLeft <= o.idleMs ? 'max_age' : 'idle'), ms).unref(),
    );
  }

  /** Stops a worker and removes its workspace; resolves once the process is gone. Safe to call twice. */
  function retire(w: Worker, reason: RetireReason): Promise<void> {
    const pending = gone.get(w);
    if (pending) return pending;
    w.state = 'retiring';
    clearIdle(w);
    if (workers.get(w.slot) === w) workers.delete(w.slot);
    if (spares.get(w.slot)?.worker === w) spares.delete(w.slot);
    o.logger.debug({ event: 'worker_retired', slot: w.slot, pid: w.proc.pid, reason, turns: w.turns }, 'worker retired');
    const done = (async () => {
      // A clean end first: the CLI finishes and flushes its session file, then exits.
      w.proc.endInput();
      // A revoked key's CLI gets no grace: nothing of its session is wanted any more.
      const grace = setTimeout(() => w.life.abort(reason === 'shutdown' ? 'shutdown' : 'done'), reason === 'revoked' ? 0 : o.retireGraceMs);
      await w.proc.exit;
      clearTimeout(grace);
      await w.lines.return?.(undefined);
      // The process is gone, so its session is safe to resume; the folder goes off the event loop.
      w.ws.removeLater().catch((err: unknown) => o.logger.warn({ event: 'workspace_remove_failed', err }, 'could not remove a workspace (the next start sweeps it)'));
    })();
    const set = retiring.get(w.slot) ?? new Set<Promise<void>>();
    retiring.set(w.slot, set);
    const tracked = done.finally(() => {
      set.delete(tracked);
      if (set.size === 0 && retiring.get(w.slot) === set) retiring.delete(w.slot);
    });
    set.add(tracked);
    gone.set(w, tracked);
    return tracked;
  }

  /** Room for one more live CLI under the cap: spares go first, then the least recently used idle worker. */
  function makeRoom(): boolean {
    if (workers.size + spares.size < o.max) return true;
    const spare = [...spares.values()].sort((a, b) => a.worker.startedAt - b.worker.startedAt)[0]?.worker;
    const lru = spare ?? [...workers.values()].filter((w) => w.state === 'idle').sort((a, b) => a.lastUsedAt - b.lastUsedAt)[0];
    if (!lru) return false;
    void retire(lru, 'evicted');
    return true;
  }

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

    /**
     * The slot's idle worker, now busy, if it fits the turn; a worker that does not fit is retired
     * (await `settled` before running the turn cold).
     */
    take(slot: string, fit: WorkerFit): Worker | undefined {
      const w = workers.get(slot);
      if (!w || w.state !== 'idle') return undefined;
      const t = now();
      if (w.fit.sessionId !== fit.sessionId || w.fit.cliModel !== fit.cliModel || w.fit.system !== fit.system || w.fit.maxOutputTokens !== fit.maxOutputTokens) {
        void retire(w, 'mismatch');
        return undefined;
      }
      if (t - w.startedAt >= o.maxAgeMs) {
        void retire(w, 'max_age');
        return undefined;
      }
      clearIdle(w);
      w.state = 'busy';
      w.lastUsedAt = t;
      return w;
    },

    /**
     * Keeps a process that answered its first turn as the slot's worker. Makes room by retiring
     * the least recently used idle worker; false (the caller lets the process end) when no room.
     */
    adopt(slot: string, keyId: string, run: LiveRun, fit: WorkerFit): boolean {
      if (o.max <= 0 || o.maxTurns <= 1) return false;
      const existing = workers.get(slot);
      if (existing) void retire(existing, 'rotated');
      if (!makeRoom()) return false;
      const t = now();
      const w: Worker = { ...run, slot, keyId, fit, startedAt: t, lastUsedAt: t, turns: 1, state: 'idle' };
      workers.set(slot, w);
      // A worker that exits by itself (crash, OOM, its own idle exit) is dropped and cleaned up.
      void w.proc.exit.then(() => {
        if (w.state !== 'retiring') void retire(w, 'exited');
      });
      armIdle(w);
      return true;
    },

    /** A warm turn answered: the worker waits for the next one, unless it has served enough. */
    release(w: Worker, cost: number): void {
      if (w.state !== 'busy') return;
      w.turns++;
      w.cost = cost;
      w.lastUsedAt = now();
      w.proc.hold();
      if (w.revoked) void retire(w, 'revoked');
      else if (w.turns >= o.maxTurns) void retire(w, 'max_turns');
      else if (now() - w.startedAt >= o.maxAgeMs) void retire(w, 'max_age');
      else {
        w.state = 'idle';
        armIdle(w);
      }
    },

    retire,

    /** Whether a worker could be started now (making room if need be); false at the cap with every worker busy. */
    hasRoom(): boolean {
      return o.max > 0 && o.maxTurns > 1 && makeRoom();
    },

    /**
     * A worker started for a slot's session (after a cold turn): not served until it is up; a turn
     * that comes first runs cold and retires it (`retireSlot`).
     */
    addStarting(w: Worker, ready: Promise<boolean>): void {
      const existing = workers.get(w.slot);
      if (existing) void retire(existing, 'rotated');
      workers.set(w.slot, w);
      void ready.then((ok) => {
        if (w.state !== 'starting') return;
        if (!ok) return void retire(w, 'no_answer');
        w.state = 'idle';
        armIdle(w);
      });
      void w.proc.exit.then(() => {
        if (w.state !== 'retiring') void retire(w, 'exited');
      });
    },

    /**
     * Whether a spare may be started now in `slot`: room under the cap, and none yet for this key
     * and backend there. A spare of the key's in another slot is in the wrong place (a conversation
     * took the slot it was started for, or the key's next new conversation will take another one):
     * it is retired so that one starts where it will be used.
     */
    wantsSpare(keyId: string, backend: string, slot?: string): boolean {
      if (o.max <= 0) return false;
      for (const s of spares.values()) {
        if (s.worker.keyId !== keyId || s.backend !== backend) continue;
        if (slot === undefined || s.worker.slot === slot) return false;
        void retire(s.worker, 'superseded');
      }
      return workers.size + spares.size < o.max;
    },

    /** Keeps a pre-started CLI for a slot's next new conversation (idle-bounded like a worker). */
    addSpare(spare: Spare): void {
      const w = spare.worker;
      const old = spares.get(w.slot);
      if (old) void retire(old.worker, 'evicted');
      spares.set(w.slot, spare);
      void spare.ready.then((ok) => {
        spare.isReady = ok;
        if (!ok) void retire(w, 'no_answer');
      });
      void w.proc.exit.then(() => {
        if (w.state !== 'retiring') void retire(w, 'exited');
      });
      armIdle(w);
    },

    /**
     * The slot's spare, now taken, if it was started for this model and is up. One still starting
     * is waited for up to `waitMs` (it was started before this turn came, so it is nearer to up
     * than a cold start would be); one that does not fit or is not up in time is retired, so the
     * key's next spare starts in the slot its next new conversation takes instead of sitting in
     * this one, which a conversation now holds.
     */
    async takeSpare(slot: string, cliModel: string, maxOutputTokens: number | undefined, waitMs = 0): Promise<Worker | undefined> {
      const spare = spares.get(slot);
      if (!spare || spare.worker.state !== 'spare') return undefined;
      if (spare.worker.fit.cliModel !== cliModel || spare.worker.fit.maxOutputTokens !== maxOutputTokens) {
        void retire(spare.worker, 'mismatch');
        return undefined;
      }
      if (!spare.isReady && waitMs > 0) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([spare.ready, new Promise((r) => (timer = setTimeout(r, waitMs)))]);
        clearTimeout(timer);
      }
      if (spares.get(slot) !== spare || spare.worker.state !== 'spare') return undefined;
      if (!spare.isReady) {
        void retire(spare.worker, 'superseded');
        return undefined;
      }
      spares.delete(slot);
      clearIdle(spare.worker);
      spare.worker.state = 'busy';
      spare.worker.lastUsedAt = now();
      return spare.worker;
    },

    /** A spare's first turn answered: it becomes the slot's worker for its session. */
    promote(w: Worker, sessionId: string, system: string, cost: number): boolean {
      const existing = workers.get(w.slot);
      if (existing && existing !== w) void retire(existing, 'rotated');
      w.fit = { ...w.fit, sessionId, system };
      workers.set(w.slot, w);
      w.turns = 0;
      w.cost = 0;
      this.release(w, cost);
      return w.state === 'idle';
    },

    /** Retires the slot's worker, if any (the slot rotated to a new session, or was reset). */
    retireSlot(slot: string, reason: RetireReason): void {
      const w = workers.get(slot);
      if (w) void retire(w, reason);
    },

    /** Retires the oldest spare to free its process for a turn (see `ProcessCap`); false when there is none. */
    shedSpare(): boolean {
      const spare = [...spares.values()].sort((a, b) => a.worker.startedAt - b.worker.startedAt)[0]?.worker;
      if (!spare) return false;
      void retire(spare, 'evicted');
      return true;
    },

    /** Retires the least recently used idle (or still starting) worker to free its process for a turn; false when there is none. */
    shedIdle(): boolean {
      const lru = [...workers.values()].filter((w) => w.state === 'idle' || w.state === 'starting').sort((a, b) => a.lastUsedAt - b.lastUsedAt)[0];
      if (!lru) return false;
      void retire(lru, 'evicted');
      return true;
    },

    /** Resolves once no retired worker of this slot is still running. */
    async settled(slot: string): Promise<void> {
      await Promise.all([...(retiring.get(slot) ?? [])]);
    },

    /**
     * Every live CLI of a key, idle, starting or spare (its revocation, disabling or expiry); one
     * busy with a turn goes when the turn ends, like the key's cold turns in flight.
     */
    retireKey(keyId: string, reason: RetireReason): void {
      for (const w of [...workers.values(), ...[...spares.values()].map((s) => s.worker)]) {
        if (w.keyId !== keyId) continue;
        if (w.state === 'busy') w.revoked = true;
        else void retire(w, reason);
      }
    },

    /** The keys that have a live CLI here. */
    keyIds(): Set<string> {
      return new Set([...workers.values(), ...[...spares.values()].map((s) => s.worker)].map((w) => w.keyId));
    },

    /** Shutdown: every worker retired (stdin closed, killed after the grace), workspaces removed. */
    async stopAll(): Promise<void> {
      for (const w of [...workers.values(), ...[...spares.values()].map((s) => s.worker)]) void retire(w, 'shutdown');
      await Promise.all([...retiring.values()].flatMap((set) => [...set]));
    },

    /** For /health and logs. */
    list(): WorkerInfo[] {
      const t = now();
      const starting = new Set([...spares.values()].filter((s) => !s.isReady).map((s) => s.worker));
      return [...workers.values(), ...[...spares.values()].map((s) => s.worker)].map((w) => ({
        slot: w.slot,
        pid: w.proc.pid,
        state: starting.has(w) ? 'starting' : w.state,
        model: w.fit.cliModel,
        turns: w.turns,
        ageS: Math.round((t - w.startedAt) / 1000),
        idleS: Math.round((t - w.lastUsedAt) / 1000),
        rssMb: rssMb(w.proc.pid),
      }));
    },
  };
}

export type WorkerPool = ReturnType<typeof createWorkerPool>;

export { watchKeyStanding, type KeyHolder } from './standing.js';
export { createProcessCap, defaultMaxProcesses, type ProcessCap, type ProcessTicket } from './cap.js';

import { spareFits } from './budget.js';
import { armIdle, clearIdle, retire, type PoolState, touchKey } from './state.js';
import type { Spare, Worker, WorkerFit } from './types.js';

/** See `wantsSpare` in `spareMethods`. */
function wantsSpare(s: PoolState, keyId: string, backend: string, slot: string | undefined): boolean {
  if (s.o.max <= 0) return false;
  for (const spare of s.spares.values()) {
    if (spare.worker.keyId !== keyId || spare.backend !== backend) continue;
    if (slot === undefined || spare.worker.slot === slot) return false;
    void retire(s, spare.worker, 'superseded');
  }
  const fits = spareFits(s, keyId);
  if (fits === 'no') return false;
  if (fits === 'yes' && s.workers.size + s.spares.size < s.o.max) return true;
  // At the cap or the key's share, the spare takes the place of the key's least recently used idle worker that
  // has served one turn only: a conversation that has not gone on (a client sending a new
  // conversation with every request keeps none). One that went on keeps its worker.
  // Never the key's most recent conversation's: it is the one most likely to go on.
  const own = `${keyId}/${backend}/`;
  const mine = [...s.workers.values()].filter((w) => w.slot.startsWith(own) && w.state !== 'retiring');
  const latest = mine.reduce<Worker | undefined>((a, w) => (!a || w.lastUsedAt > a.lastUsedAt ? w : a), undefined);
  const oneShot = mine
    .filter((w) => w.state === 'idle' && w.turns <= 1 && w !== latest)
    .sort((a, b) => a.lastUsedAt - b.lastUsedAt)[0];
  if (!oneShot) return false;
  void retire(s, oneShot, 'evicted');
  return true;
}

/** What a spare is started with, before its conversation exists: a turn it serves must ask for the same. */
export type SpareFit = Pick<WorkerFit, 'cliModel' | 'maxOutputTokens' | 'login' | 'reasoning'>;

/** See `takeSpare` in `spareMethods`. */
async function takeSpare(s: PoolState, slot: string, want: SpareFit, waitMs: number): Promise<Worker | undefined> {
  const spare = s.spares.get(slot);
  if (!spare || spare.worker.state !== 'spare') return undefined;
  const f = spare.worker.fit;
  if (
    f.cliModel !== want.cliModel ||
    f.maxOutputTokens !== want.maxOutputTokens ||
    f.login !== want.login ||
    f.reasoning !== want.reasoning
  ) {
    void retire(s, spare.worker, 'mismatch');
    return undefined;
  }
  if (!spare.isReady && waitMs > 0) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([spare.ready, new Promise((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
  }
  if (s.spares.get(slot) !== spare || spare.worker.state !== 'spare') return undefined;
  if (!spare.isReady) {
    void retire(s, spare.worker, 'superseded');
    return undefined;
  }
  s.spares.delete(slot);
  clearIdle(s, spare.worker);
  spare.worker.state = 'busy';
  spare.worker.lastUsedAt = s.now();
  touchKey(s, spare.worker.keyId);
  return spare.worker;
}

/** A pool's pre-started CLIs: each waits in the slot a key's next new conversation will take. */
export function spareMethods(s: PoolState) {
  return {
    /**
     * Whether a spare may be started now in `slot`: room under the cap, and none yet for this key
     * and backend there. A spare of the key's in another slot is in the wrong place (a conversation
     * took the slot it was started for, or the key's next new conversation will take another one):
     * it is retired so that one starts where it will be used.
     */
    wantsSpare(keyId: string, backend: string, slot?: string): boolean {
      return wantsSpare(s, keyId, backend, slot);
    },

    /** Keeps a pre-started CLI for a slot's next new conversation (idle-bounded like a worker). */
    addSpare(spare: Spare): void {
      const w = spare.worker;
      const old = s.spares.get(w.slot);
      if (old) void retire(s, old.worker, 'evicted');
      s.spares.set(w.slot, spare);
      void spare.ready.then((ok) => {
        spare.isReady = ok;
        if (!ok) void retire(s, w, 'no_answer');
        else if (w.state === 'spare') s.rested?.(w);
      });
      void w.proc.exit.then(() => {
        if (w.state !== 'retiring') void retire(s, w, 'exited');
      });
      armIdle(s, w);
    },

    /**
     * The slot's spare, now taken, if it was started for this model (and output cap, login and
     * reasoning: `want`, or the turn's whole fit) and is up. One still starting
     * is waited for up to `waitMs` (it was started before this turn came, so it is nearer to up
     * than a cold start would be); one that does not fit or is not up in time is retired, so the
     * key's next spare starts in the slot its next new conversation takes instead of sitting in
     * this one, which a conversation now holds.
     */
    takeSpare(slot: string, want: SpareFit, waitMs = 0): Promise<Worker | undefined> {
      return takeSpare(s, slot, want, waitMs);
    },

    /**
     * Retires the oldest spare to free its process for a turn (see `ProcessCap`); false when there is
     * none.
     */
    shedSpare(): boolean {
      const spare = [...s.spares.values()].sort((a, b) => a.worker.startedAt - b.worker.startedAt)[0]?.worker;
      if (!spare) return false;
      void retire(s, spare, 'evicted');
      return true;
    },
  };
}

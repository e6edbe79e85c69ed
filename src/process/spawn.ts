import type { Logger } from '../log/index.js';
import { createReaper, type Reaper } from './reaper.js';
import type { CallMeta, EndReason, ExitInfo, Invocation, RunLimits, RunningProcess } from './run-types.js';
import { SupervisedRun } from './supervised-run.js';

interface Tracked {
  terminate(reason: EndReason): void;
  exit: Promise<ExitInfo>;
}

/**
 * Owns every CLI child of the daemon: starts them in their own process group, feeds stdin,
 * enforces timeouts, and kills the whole group (and whatever escaped it with the run's HOME) on
 * abort, timeout, exit and shutdown.
 */
export function createProcessSupervisor(logger: Logger, reaper: Reaper = createReaper()) {
  const live = new Set<Tracked>();

  function run(
    inv: Invocation,
    limits: RunLimits,
    signal: AbortSignal,
    log: Logger = logger,
    _call?: CallMeta,
  ): RunningProcess {
    const started = new SupervisedRun(inv, limits, signal, log, reaper);
    const tracked: Tracked = { terminate: started.terminate, exit: started.exit };
    live.add(tracked);
    void started.exit.finally(() => live.delete(tracked));
    return started.handle();
  }

  return {
    run,
    /** Number of CLI children currently alive. */
    get active(): number {
      return live.size;
    },
    /** Terminates every child (SIGTERM, then SIGKILL after the grace) and waits until all are gone. */
    async killAll(): Promise<void> {
      const all = [...live];
      for (const t of all) t.terminate('shutdown');
      await Promise.all(all.map((t) => t.exit));
      reaper.flush();
    },
  };
}

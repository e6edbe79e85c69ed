import type { BackendEvent } from '../backends/index.js';
import type { RunningProcess } from '../process/index.js';
import { costOf, LIVE_EXIT, readTurn, toOutcome, type Retrying } from './read.js';
import { callOf, openWorkspace, spawnIn, waitToStart } from './spawn.js';
import type { ColdPlan, RunDeps, RunInput, RunOutcome } from './types.js';
import { follow, stopProcess } from './stop.js';

/**
 * One turn in a fresh process and workspace. With `plan.live`, the process is started so that it
 * can serve the slot's later turns, and kept as the slot's worker when its turn succeeds;
 * otherwise its workspace is removed and its process group is gone on every path, including a
 * consumer that stops iterating early.
 */
export async function* runCold(
  deps: RunDeps,
  input: RunInput,
  plan: ColdPlan,
): AsyncGenerator<BackendEvent, RunOutcome> {
  const { backend, log } = input;
  const { turn, live, mode: run } = plan;
  const slot = turn.session?.slot;
  const fresh = turn.session?.mode === 'fresh' && !turn.session.forkOf;
  const ws = openWorkspace(deps, backend, turn, {
    keyId: input.keyId,
    requestId: input.requestId,
    ...(slot !== undefined && turn.session?.mode !== 'ephemeral'
      ? {
          slot: `${backend.id}-${slot}`,
          ...(fresh ? { resetSlot: plan.reset ?? { staleSession: turn.session?.previousSessionId } } : {}),
        }
      : {}),
  });
  const life = new AbortController();
  const unfollow = follow(input.signal, life);
  let proc: RunningProcess | undefined;
  let lines: AsyncIterator<string> | undefined;
  let kept = false;
  let room: ((proc?: RunningProcess) => void) | undefined;
  try {
    room = await waitToStart(deps, backend, turn, input.signal, input.keyId);
    // A live process's own timeout bounds its whole life; each turn has its own below.
    const limits = live ? { ...deps.limits, timeoutMs: live.pool.maxAgeMs + deps.limits.timeoutMs } : deps.limits;
    proc = spawnIn(deps, backend, turn, ws, {
      prepared: (w) => backend.prepare(turn, w),
      limits,
      signal: life.signal,
      log,
      record: (p) => callOf(backend, turn, p),
    });
    room(proc);
    log.debug(
      { event: 'spawned', pid: proc.pid, backend: backend.id, model: turn.cliModel, live: Boolean(live) },
      'spawned',
    );
    const parser = backend.createParser();
    lines = proc.lines[Symbol.asyncIterator]();
    const totalTimer = live ? setTimeout(() => stopProcess(life, 'timeout'), deps.limits.timeoutMs) : undefined;
    let retrying: Retrying | undefined;
    try {
      retrying = yield* readTurn(lines, parser, proc, deps, life, log);
    } finally {
      clearTimeout(totalTimer);
    }
    if (live && parser.complete) {
      const outcome = parser.finish(LIVE_EXIT);
      if (outcome.ok) {
        proc.hold();
        unfollow();
        if (live.pool.adopt(live.slot, input.keyId, { proc, lines, ws, life, cost: costOf(outcome) }, live.fit)) {
          kept = true;
          log.debug(
            { event: 'worker_started', pid: proc.pid, slot: live.slot },
            'kept the CLI as the slot’s live worker',
          );
          return { ...outcome, run };
        }
      }
      // Not kept: the CLI finishes by itself once its input ends.
      proc.endInput();
    }
    // The caller has the whole turn (or the output ended): a CLI that lingers gets a short grace.
    await lines.return?.(undefined);
    const exit = await proc.exit;
    log.debug(
      {
        event: 'exited',
        pid: exit.pid,
        code: exit.exitCode,
        signal: exit.signal,
        reason: exit.reason,
        ms: Math.round(exit.durationMs),
      },
      'exited',
    );
    return { ...toOutcome(backend, parser, exit, deps.limits, retrying), run };
  } finally {
    room?.();
    unfollow();
    if (!kept) {
      // Early return (client gone, consumer error): stop the child and wait for its group to die.
      stopProcess(life, 'turn_closed'); // a string reason: no DOMException (and its stack) per request
      if (lines) await lines.return?.(undefined);
      if (proc) await proc.exit;
    }
    // The session a fork copied is read once, at its start: its files go now, whatever the turn's
    // outcome (a failed fork leaves the slot to start over from the whole transcript). A fork
    // that keeps reading its source (codex) leaves it to the slot's next whole reset.
    const forkOf = turn.session?.forkOf;
    if (forkOf && slot !== undefined && proc && !backend.forks?.keepsSource)
      deps.workspaces.pruneSession(input.keyId, `${backend.id}-${slot}`, forkOf);
    if (!kept) {
      // The child is gone; its directory is removed off the event loop, never delaying the response.
      ws.removeLater().catch((err: unknown) =>
        log.warn({ event: 'workspace_remove_failed', err }, 'could not remove a workspace (the next start sweeps it)'),
      );
    }
  }
}

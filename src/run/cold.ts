import type { BackendEvent } from '../backends/index.js';
import type { RunningProcess } from '../process/index.js';
import { costOf, LIVE_EXIT, readTurn, toOutcome, type Retrying } from './read.js';
import { callOf, openWorkspace, spawnIn, waitToStart } from './spawn.js';
import type { ColdPlan, RunDeps, RunInput, RunOutcome } from './types.js';
import { interruptTurn } from './interrupt.js';
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
  const ws = openWorkspace(deps, backend, turn, {
    keyId: input.keyId,
    requestId: input.requestId,
    ...slotOf(plan, backend.id),
  });
  const life = new AbortController();
  const unfollow = follow(input.signal, life);
  let proc: RunningProcess | undefined;
  let lines: AsyncIterator<string> | undefined;
  let kept = false;
  let room: ((proc?: RunningProcess) => void) | undefined;
  try {
    room = await waitToStart(deps, backend, turn, input.signal, input.keyId);
    proc = startCold(deps, input, plan, ws, life);
    room(proc);
    const parser = backend.createParser();
    const started = proc;
    // A process started to serve later turns takes an interrupt on its stdin, as a worker does.
    if (live && input.interrupt) input.interrupt.stop = () => interruptTurn(started, parser, life);
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
    const ms = Math.round(exit.durationMs);
    log.debug(
      { event: 'exited', pid: exit.pid, code: exit.exitCode, signal: exit.signal, reason: exit.reason, ms },
      'exited',
    );
    return { ...toOutcome(backend, parser, exit, deps.limits, retrying), run };
  } finally {
    room?.();
    unfollow();
    if (input.interrupt) input.interrupt.stop = undefined;
    if (!kept) {
      // Early return (client gone, consumer error): stop the child and wait for its group to die.
      stopProcess(life, 'turn_closed'); // a string reason: no DOMException (and its stack) per request
      if (lines) await lines.return?.(undefined);
      if (proc) await proc.exit;
    }
    cleanUp(deps, input, turn, proc !== undefined, kept, ws);
  }
}

/** Spawns a cold turn's CLI in its workspace. */
function startCold(
  deps: RunDeps,
  input: RunInput,
  plan: ColdPlan,
  ws: Parameters<typeof spawnIn>[3],
  life: AbortController,
): RunningProcess {
  const { backend, log } = input;
  const { turn, live } = plan;
  // A live process's own timeout bounds its whole life; each turn has its own.
  const limits = live ? { ...deps.limits, timeoutMs: live.pool.maxAgeMs + deps.limits.timeoutMs } : deps.limits;
  const proc = spawnIn(deps, backend, turn, ws, {
    prepared: (w) => backend.prepare(turn, w),
    limits,
    signal: life.signal,
    log,
    record: (p) => callOf(backend, turn, p),
  });
  const about = { pid: proc.pid, backend: backend.id, model: turn.cliModel, live: Boolean(live) };
  log.debug({ event: 'spawned', ...about }, 'spawned');
  return proc;
}

/** The slot a cold turn's workspace belongs to, and whether it starts the slot over. */
function slotOf(plan: ColdPlan, backend: string) {
  const session = plan.turn.session;
  if (session?.slot === undefined || session.mode === 'ephemeral') return {};
  const fresh = session.mode === 'fresh' && !session.forkOf;
  return {
    slot: `${backend}-${session.slot}`,
    ...(fresh ? { resetSlot: plan.reset ?? { staleSession: session.previousSessionId } } : {}),
  };
}

/** After a cold turn: a fork's source session goes, and a workspace not kept is removed. */
function cleanUp(
  deps: RunDeps,
  input: RunInput,
  turn: ColdPlan['turn'],
  spawned: boolean,
  kept: boolean,
  ws: { removeLater(): Promise<unknown> },
): void {
  const { backend, log } = input;
  const slot = turn.session?.slot;
  // The session a fork copied is read once, at its start: its files go now, whatever the turn's
  // outcome (a failed fork leaves the slot to start over from the whole transcript). A fork
  // that keeps reading its source (codex) leaves it to the slot's next whole reset.
  const forkOf = turn.session?.forkOf;
  if (forkOf && slot !== undefined && spawned && !backend.forks?.keepsSource)
    deps.workspaces.pruneSession(input.keyId, `${backend.id}-${slot}`, forkOf);
  if (kept) return;
  // The child is gone; its directory is removed off the event loop, never delaying the response.
  ws.removeLater().catch((err: unknown) =>
    log.warn({ event: 'workspace_remove_failed', err }, 'could not remove a workspace (the next start sweeps it)'),
  );
}

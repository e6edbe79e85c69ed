import { backendBadOutput, backendTimeout, backendUnavailable, ClientAbortedError, shuttingDown } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { MAX_LINE_BYTES, type ExitInfo, type ProcessSupervisor, type RunLimits, type RunningProcess } from '../process/index.js';
import type { Backend, BackendEvent, EventParser, Turn, TurnOutcome } from '../backends/types.js';
import { systemHash } from '../sessions/index.js';
import { workerSlot, type RunMode, type Worker, type WorkerFit, type WorkerPool } from '../workers/index.js';
import { toChildEnv, type Workspaces } from '../workspace/index.js';

export interface TurnDeps {
  supervisor: ProcessSupervisor;
  workspaces: Workspaces;
  hostEnv: Readonly<Record<string, string | undefined>>;
  limits: RunLimits;
  /** Replay mode: nothing is spawned, so no credential is linked either. */
  replay?: boolean;
  /** Live workers: continued turns of a session slot go to a process kept from its last turn. */
  workers?: WorkerPool;
}

export interface TurnInput {
  keyId: string;
  requestId: string;
  backend: Backend;
  turn: Turn;
  /** Aborted when the client goes away; kills the CLI's process group. */
  signal: AbortSignal;
  log: Logger;
}

export { ClientAbortedError };

/** A turn's outcome, and how it ran. */
export type RunOutcome = TurnOutcome & { run: RunMode };

/** A live worker that shows no sign of life this long after a write is replaced by a cold run. */
const WARM_START_MS = 2000;

/** What a finished turn of a process that is still alive counts as, for the parser. */
const LIVE_EXIT: ExitInfo = { reason: 'done', exitCode: 0, signal: null, stderr: '', pid: undefined, durationMs: 0 };

/** Provider retries seen while reading a turn: not progress, and bounded by `retryTimeoutMs`. */
interface Retrying {
  since: number;
  last: string;
}

/**
 * Reads one turn's lines through the parser, yielding its events, until the turn's final event
 * (the process may live on) or the end of output. A CLI that only retries its provider makes no
 * progress: the idle timer keeps running, and past the retry bound the run is stopped.
 */
async function* readTurn(
  lines: AsyncIterator<string>,
  parser: EventParser,
  proc: RunningProcess,
  limits: RunLimits,
  life: AbortController,
  log: Logger,
  onLine?: () => void,
): AsyncGenerator<BackendEvent, Retrying | undefined> {
  let retrying: Retrying | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  try {
    for (;;) {
      const step = await lines.next();
      if (step.done) return retrying;
      onLine?.();
      const events = parser.push(step.value);
      const retry = events.find((e) => e.type === 'retry');
      if (!retry) {
        proc.progress();
        retrying = undefined;
        if (retryTimer) clearTimeout(retryTimer);
        retryTimer = undefined;
      } else {
        retrying = { since: retrying?.since ?? performance.now(), last: retry.message };
        retryTimer ??= setTimeout(() => life.abort('retry_timeout'), limits.retryTimeoutMs);
        log.debug({ event: 'cli_retry', message: retry.message }, 'the CLI is retrying its provider');
      }
      for (const ev of events) yield ev;
      // The turn is decided: answer now, whatever still holds the CLI's stdout open.
      if (parser.complete) return retrying;
    }
  } finally {
    if (retryTimer) clearTimeout(retryTimer);
  }
}

/** How a turn ended once its process has exited: the parser's verdict, or why olp stopped it. */
function toOutcome(backend: Backend, parser: EventParser, exit: ExitInfo, limits: RunLimits, retrying: Retrying | undefined): TurnOutcome {
  if (exit.reason === 'spawn_error') return { ok: false, error: backend.spawnError(exit), usage: null };
  const outcome = parser.finish(exit);
  if (outcome.ok) return outcome;
  if (retrying && (exit.reason === 'retry_timeout' || exit.reason === 'idle')) {
    return { ...outcome, error: backendUnavailable(backend.id, Math.round((performance.now() - retrying.since) / 1000), retrying.last, outcome.error) };
  }
  switch (exit.reason) {
    case 'aborted':
      throw new ClientAbortedError(outcome.usage);
    case 'shutdown':
      return { ...outcome, error: shuttingDown() };
    case 'timeout':
      return { ...outcome, error: backendTimeout(backend.id, 'total', Math.round(limits.timeoutMs / 1000), outcome.error) };
    case 'idle':
      return { ...outcome, error: backendTimeout(backend.id, 'idle', Math.round(limits.idleTimeoutMs / 1000), outcome.error) };
    case 'line_too_long':
      return { ...outcome, error: backendBadOutput(backend.id, `a single output line was longer than ${MAX_LINE_BYTES / 1024 / 1024} MiB; the CLI was stopped`, outcome.error) };
    default:
      return outcome;
  }
}

/** Aborts `life` when the request's signal aborts, until the returned function is called. */
function follow(signal: AbortSignal, life: AbortController): () => void {
  const onAbort = () => life.abort(signal.reason === 'shutdown' ? 'shutdown' : 'aborted');
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

/** The CLI's running cost after a turn (claude reports the process's total so far). */
function costOf(outcome: TurnOutcome): number {
  return outcome.usage?.costUsd ?? 0;
}

/**
 * Runs one CLI turn: on the slot's live worker when one fits (see `WorkerPool`), else in a fresh
 * process and workspace. Yields backend events as the CLI prints them and returns how the turn
 * ended and ran. A cold process that may serve the slot's next turn is kept as its worker;
 * otherwise its workspace is removed and its process group is gone on every path, including a
 * consumer that stops iterating early.
 */
export async function* runTurn(deps: TurnDeps, input: TurnInput): AsyncGenerator<BackendEvent, RunOutcome> {
  const { backend, turn } = input;
  const session = turn.session;
  const pool = turn.live && backend.live && session?.slot !== undefined && session.sessionId && session.mode !== 'ephemeral' ? deps.workers : undefined;
  if (!pool || !session?.sessionId || session.slot === undefined) return yield* runCold(deps, input, false);
  const slot = workerSlot(input.keyId, backend.id, session.slot);
  const fit: WorkerFit = { sessionId: session.sessionId, cliModel: turn.cliModel, system: systemHash(turn.prompt.system), maxOutputTokens: turn.maxOutputTokens };
  if (session.mode === 'resumed') {
    const worker = pool.take(slot, fit);
    if (worker) {
      const warm = yield* runWarm(deps, input, pool, worker);
      if (warm) return warm;
      input.log.info({ event: 'worker_fallback', slot, pid: worker.proc.pid }, 'the live worker did not answer; running the turn cold');
    }
  } else pool.retireSlot(slot, 'rotated');
  // A retired worker of this slot may still be flushing the session a cold run is about to use.
  await pool.settled(slot);
  return yield* runCold(deps, input, { pool, slot, fit });
}

/**
 * One turn written to a live worker. Returns undefined, having retired the worker, when it
 * showed no sign of life (nothing was yielded: the caller runs the turn cold instead).
 */
async function* runWarm(deps: TurnDeps, input: TurnInput, pool: WorkerPool, w: Worker): AsyncGenerator<BackendEvent, RunOutcome | undefined> {
  const { backend, log } = input;
  const parser = backend.createParser();
  const unfollow = follow(input.signal, w.life);
  let seen = false;
  let totalTimer: NodeJS.Timeout | undefined;
  let startTimer: NodeJS.Timeout | undefined;
  let settled = false;
  try {
    w.proc.expect();
    if (!(await w.proc.write(backend.live!.input(input.turn.prompt)))) {
      await pool.retire(w, 'no_answer');
      settled = true;
      return undefined;
    }
    log.debug({ event: 'worker_turn', pid: w.proc.pid, slot: w.slot, turn: w.turns + 1 }, 'turn written to a live worker');
    startTimer = setTimeout(() => w.life.abort('done'), WARM_START_MS);
    totalTimer = setTimeout(() => w.life.abort('timeout'), deps.limits.timeoutMs);
    const retrying = yield* readTurn(w.lines, parser, w.proc, deps.limits, w.life, log, () => {
      if (!seen) clearTimeout(startTimer);
      seen = true;
    });
    if (parser.complete) {
      const outcome = parser.finish(LIVE_EXIT);
      if (outcome.ok) {
        const cost = costOf(outcome);
        const usage = outcome.usage && outcome.usage.costUsd !== undefined ? { ...outcome.usage, costUsd: Math.max(0, cost - w.cost) } : outcome.usage;
        unfollow();
        pool.release(w, cost);
        settled = true;
        return { ...outcome, usage, run: 'warm' };
      }
    }
    // An error result, or the process ended or was stopped mid-turn: it serves no more turns.
    const retired = pool.retire(w, input.signal.aborted ? 'aborted' : 'failed');
    const exit = await w.proc.exit;
    await retired;
    settled = true;
    if (!seen && !input.signal.aborted && exit.reason !== 'shutdown') return undefined;
    return { ...toOutcome(backend, parser, exit, deps.limits, retrying), run: 'warm' };
  } finally {
    clearTimeout(startTimer);
    clearTimeout(totalTimer);
    unfollow();
    // Closed early by the consumer (client gone): the turn is cut, so is the worker.
    if (!settled) await pool.retire(w, 'aborted');
  }
}

/**
 * One turn in a fresh process and workspace. With `live`, the process is started so that it can
 * serve the slot's later turns, and kept as the slot's worker when its turn succeeds.
 */
async function* runCold(deps: TurnDeps, input: TurnInput, live: { pool: WorkerPool; slot: string; fit: WorkerFit } | false): AsyncGenerator<BackendEvent, RunOutcome> {
  const { backend, log } = input;
  const turn: Turn = live ? input.turn : { ...input.turn, live: false };
  const slot = turn.session?.slot;
  const run: RunMode = turn.session?.mode === 'resumed' ? 'resumed' : 'cold';
  const ws = deps.workspaces.create({
    keyId: input.keyId,
    requestId: input.requestId,
    links: deps.replay ? [] : backend.links(turn),
    ...(backend.homeDirs ? { dirs: backend.homeDirs } : {}),
    ...(slot !== undefined && turn.session?.mode !== 'ephemeral' ? { slot: `${backend.id}-${slot}`, resetSlot: turn.session?.mode === 'fresh' } : {}),
  });
  const life = new AbortController();
  const unfollow = follow(input.signal, life);
  let proc: RunningProcess | undefined;
  let lines: AsyncIterator<string> | undefined;
  let kept = false;
  try {
    const prepared = backend.prepare(turn, ws);
    for (const f of prepared.files) ws.writeFile(f.name, f.content);
    const env = toChildEnv(deps.hostEnv, backend.envPolicy(turn, ws), ws.home);
    const call = { backend: backend.id, model: turn.cliModel, prompt: [prepared.invocation.stdin, ...prepared.files.map((f) => f.content)].join('\u0000') };
    // A live process's own timeout bounds its whole life; each turn has its own below.
    const limits = live ? { ...deps.limits, timeoutMs: live.pool.maxAgeMs + deps.limits.timeoutMs } : deps.limits;
    proc = deps.supervisor.run({ ...prepared.invocation, env, cwd: ws.cwd }, limits, life.signal, log, call);
    log.debug({ event: 'spawned', pid: proc.pid, backend: backend.id, model: turn.cliModel, live: Boolean(live) }, 'spawned');
    const parser = backend.createParser();
    lines = proc.lines[Symbol.asyncIterator]();
    const totalTimer = live ? setTimeout(() => life.abort('timeout'), deps.limits.timeoutMs) : undefined;
    let retrying: Retrying | undefined;
    try {
      retrying = yield* readTurn(lines, parser, proc, deps.limits, life, log);
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
          log.debug({ event: 'worker_started', pid: proc.pid, slot: live.slot }, 'kept the CLI as the slot’s live worker');
          return { ...outcome, run };
        }
      }
      // Not kept: the CLI finishes by itself once its input ends.
      proc.endInput();
    }
    // The caller has the whole turn (or the output ended): a CLI that lingers gets a short grace.
    await lines.return?.(undefined);
    const exit = await proc.exit;
    log.debug({ event: 'exited', pid: exit.pid, code: exit.exitCode, signal: exit.signal, reason: exit.reason, ms: Math.round(exit.durationMs) }, 'exited');
    return { ...toOutcome(backend, parser, exit, deps.limits, retrying), run };
  } finally {
    unfollow();
    if (!kept) {
      // Early return (client gone, consumer error): stop the child and wait for its group to die.
      life.abort('turn_closed'); // a string reason: no DOMException (and its stack) per request
      if (lines) await lines.return?.(undefined);
      if (proc) await proc.exit;
      // The child is gone; its directory is removed off the event loop, never delaying the response.
      ws.removeLater().catch((err: unknown) => log.warn({ event: 'workspace_remove_failed', err }, 'could not remove a workspace (the next start sweeps it)'));
    }
  }
}

export function isClientAbort(err: unknown): boolean {
  return err instanceof ClientAbortedError;
}

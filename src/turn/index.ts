import { randomUUID } from 'node:crypto';
import { backendBadOutput, backendTimeout, backendUnavailable, ClientAbortedError, shuttingDown } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { MAX_LINE_BYTES, type ExitInfo, type ProcessSupervisor, type RunLimits, type RunningProcess } from '../process/index.js';
import type { Backend, BackendEvent, EventParser, Prepared, Turn, TurnOutcome } from '../backends/types.js';
import { systemHash } from '../sessions/index.js';
import { recentAvailableMemory, workerSlot, type ProcessCap, type RunMode, type Worker, type WorkerFit, type WorkerPool } from '../workers/index.js';
import { toChildEnv, type SlotReset, type Workspace, type Workspaces } from '../workspace/index.js';
import type { ToolSpec } from '../tools/index.js';
import { runToolTurn, type ToolParkedTurn, type ToolTurnDeps } from './tools.js';

export interface TurnDeps {
  supervisor: ProcessSupervisor;
  workspaces: Workspaces;
  hostEnv: Readonly<Record<string, string | undefined>>;
  limits: RunLimits;
  /** Replay mode: nothing is spawned, so no credential is linked either. */
  replay?: boolean;
  /** Live workers: continued turns of a session slot go to a process kept from its last turn. */
  workers?: WorkerPool;
  /** The cap on every CLI process olp holds: a spawn waits for room (`supervisor` is its own). */
  cap?: ProcessCap;
  /** The client's functions: olp's MCP bridge and how long a turn may wait for tool results. */
  tools?: ToolTurnDeps;
  /**
   * Pre-started CLIs (with workers): after a key's turn, a spare is started in the slot its next
   * new conversation will take (`nextSlot`, from the session pool), for the model it just used.
   */
  prestart?: { nextSlot(keyId: string, backend: string): number | undefined; minFreeBytes: number };
}

export interface TurnInput {
  keyId: string;
  requestId: string;
  backend: Backend;
  turn: Turn;
  /** Aborted when the client goes away; kills the CLI's process group. */
  signal: AbortSignal;
  log: Logger;
  /** The client's functions offered to the model (claude; see tools.ts). */
  tools?: readonly ToolSpec[];
}

export { ClientAbortedError };

/** A turn's outcome, and how it ran; `parked` when it stopped at calls of the client's functions. */
export type RunOutcome = TurnOutcome & { run: RunMode; parked?: ToolParkedTurn };

/** A live worker that shows no sign of life this long after a write is replaced by a cold run. */
const WARM_START_MS = 2000;

/**
 * How long a new conversation waits for its slot's spare that is still starting: it was started
 * after the key's last turn, so it is usually milliseconds from up, and nearer than a cold start.
 */
const SPARE_WAIT_MS = 2000;

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
export async function* readTurn(
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
      // The turn is decided (or waits for the client's tool results): answer now, whatever
      // still holds the CLI's stdout open.
      if (parser.complete || parser.toolStep) return retrying;
    }
  } finally {
    if (retryTimer) clearTimeout(retryTimer);
    noteUnknown(parser, log);
  }
}

/** Event types already logged as unknown (once per daemon each). */
const loggedUnknown = new Set<string>();

/** Logs, once each, the event types a CLI printed that olp's parser does not know (a newer CLI's). */
function noteUnknown(parser: EventParser, log: Logger): void {
  for (const type of parser.unknown ?? []) {
    if (loggedUnknown.has(type)) continue;
    loggedUnknown.add(type);
    log.warn({ event: 'cli_unknown_event', type }, `the CLI printed an event type olp does not know (${type}); it was ignored`);
  }
}

/** How a turn ended once its process has exited: the parser's verdict, or why olp stopped it. */
export function toOutcome(backend: Backend, parser: EventParser, exit: ExitInfo, limits: RunLimits, retrying: Retrying | undefined): TurnOutcome {
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
export function follow(signal: AbortSignal, life: AbortController): () => void {
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
  // The client's functions: a turn of its own that may park on the calls (see tools.ts).
  if (input.tools && deps.tools) return yield* runToolTurn(deps as TurnDeps & { tools: ToolTurnDeps }, input as TurnInput & { tools: readonly ToolSpec[] });
  const session = turn.session;
  const pool = turn.live && backend.live && session?.slot !== undefined && session.sessionId && session.mode !== 'ephemeral' ? deps.workers : undefined;
  if (!pool || !session?.sessionId || session.slot === undefined) return yield* runCold(deps, input, false);
  const slot = workerSlot(input.keyId, backend.id, session.slot);
  // A claude keeps the schema it was started with: a process fits only turns with the same one.
  const system = turn.outputSchema ? systemHash(`${turn.prompt.system ?? ''}\u0000${JSON.stringify(turn.outputSchema)}`) : systemHash(turn.prompt.system);
  const fit: WorkerFit = { sessionId: session.sessionId, cliModel: turn.cliModel, system, maxOutputTokens: turn.maxOutputTokens };
  const outcome = yield* runPooled(deps, input, pool, slot, fit);
  if (outcome.ok) {
    // Off the response path: a worker for the next turn when the cold process cannot be one
    // (codex), and a spare for this key's next new conversation.
    const live = backend.live!;
    if (!live.coldIsLive && (outcome.run === 'cold' || outcome.run === 'resumed')) {
      const sessionId = outcome.sessionId ?? fit.sessionId;
      setImmediate(() => startResumed(deps, input, pool, slot, { ...fit, sessionId }));
    }
    if (deps.prestart && live.spare) setImmediate(() => startSpare(deps, input, pool));
  }
  return outcome;
}

async function* runPooled(deps: TurnDeps, input: TurnInput, pool: WorkerPool, slot: string, fit: WorkerFit): AsyncGenerator<BackendEvent, RunOutcome> {
  const { backend, turn, log } = input;
  if (turn.session!.mode === 'resumed') {
    const worker = pool.take(slot, fit);
    if (worker) {
      const warm = yield* runLive(deps, input, pool, worker, { write: backend.live!.input(turn.prompt, fit.sessionId, turn.outputSchema), mode: 'warm' });
      if (warm) return warm;
      log.info({ event: 'worker_fallback', slot, pid: worker.proc.pid }, 'the live worker did not answer; running the turn cold');
    }
  } else if (turn.session!.forkOf) {
    // A fork reads the old session's file: its worker must have exited (and flushed it) first.
    pool.retireSlot(slot, 'rotated');
  } else {
    pool.retireSlot(slot, 'rotated');
    const spare = await pool.takeSpare(slot, turn.cliModel, turn.maxOutputTokens, SPARE_WAIT_MS);
    if (spare) {
      // The slot starts over under the spare's feet: its old session's files go, before the first line.
      deps.workspaces.resetSlot(input.keyId, `${backend.id}-${turn.session!.slot}`, backend.links(turn), await freshReset(deps, input, pool, slot));
      const first = yield* runLive(deps, input, pool, spare, { write: backend.live!.spare!.init(turn.prompt.system, turn.outputSchema) + backend.live!.input(turn.prompt, '', turn.outputSchema), mode: 'prestarted', system: fit.system });
      if (first) return first;
      log.info({ event: 'worker_fallback', slot, pid: spare.proc.pid }, 'the pre-started CLI did not answer; running the turn cold');
    }
  }
  // A worker still starting for this slot (codex) must not load a session a resumed turn
  // changes, and a retired one may still be flushing it; a fresh turn's session is new.
  pool.retireSlot(slot, 'superseded');
  let reset: SlotReset | undefined;
  if (turn.session!.mode === 'fresh' && !turn.session!.forkOf) reset = await freshReset(deps, input, pool, slot);
  else await pool.settled(slot);
  return yield* runCold(deps, input, backend.live!.coldIsLive ? { pool, slot, fit } : false, reset);
}

/**
 * How a fresh turn starts its slot over when the slot's old worker was just retired. Where only
 * the old session's files go (its id is known), they go in the background once that worker has
 * exited, and the turn starts at once: a CLI that flushes its session on the way out takes longer
 * than the whole turn of a fast one (1.3 ms of a 5 ms request with a native fake; far more with
 * a real CLI). A whole-store reset renames the directory, so it waits for the worker first.
 */
async function freshReset(deps: TurnDeps, input: TurnInput, pool: WorkerPool, slot: string): Promise<SlotReset> {
  const session = input.turn.session!;
  const staleSession = session.previousSessionId;
  const gone = pool.settled(slot);
  if (deps.workspaces.prunes(input.keyId, `${input.backend.id}-${session.slot}`, staleSession)) return { staleSession, after: gone };
  await gone;
  return { staleSession };
}

/**
 * One turn written to a live CLI: a warm worker's next turn, or a spare's first (`system` set:
 * it becomes the slot's worker under the session id it reports). Returns undefined, having
 * retired the CLI, when it showed no sign of life (nothing was yielded: the caller runs the turn
 * cold instead).
 */
async function* runLive(deps: TurnDeps, input: TurnInput, pool: WorkerPool, w: Worker, opts: { write: string; mode: RunMode; system?: string }): AsyncGenerator<BackendEvent, RunOutcome | undefined> {
  const { backend, log } = input;
  const parser = backend.live?.parser?.() ?? backend.createParser();
  const unfollow = follow(input.signal, w.life);
  let seen = false;
  let totalTimer: NodeJS.Timeout | undefined;
  let startTimer: NodeJS.Timeout | undefined;
  let settled = false;
  try {
    w.proc.expect();
    if (!(await w.proc.write(opts.write))) {
      await pool.retire(w, 'no_answer');
      settled = true;
      return undefined;
    }
    log.debug({ event: 'worker_turn', pid: w.proc.pid, slot: w.slot, turn: w.turns + 1, mode: opts.mode }, 'turn written to a live CLI');
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
        if (opts.system !== undefined) pool.promote(w, outcome.sessionId ?? '', opts.system, cost);
        else pool.release(w, cost);
        settled = true;
        return { ...outcome, usage, run: opts.mode };
      }
    }
    // An error result, or the process ended or was stopped mid-turn: it serves no more turns.
    const retired = pool.retire(w, input.signal.aborted ? 'aborted' : 'failed');
    const exit = await w.proc.exit;
    await retired;
    settled = true;
    if (!seen && !input.signal.aborted && exit.reason !== 'shutdown') return undefined;
    return { ...toOutcome(backend, parser, exit, deps.limits, retrying), run: opts.mode };
  } finally {
    clearTimeout(startTimer);
    clearTimeout(totalTimer);
    unfollow();
    // Closed early by the consumer (client gone): the turn is cut, so is the worker.
    if (!settled) await pool.retire(w, 'aborted');
  }
}

/** How long a starting live CLI (a spare, a resuming worker) may take to come up before it is given up. */
const READY_MS = 30_000;

/**
 * Starts a live CLI off the response path, in a workspace of the slot, and registers it with the
 * pool as `starting` until its output says it is up (`live.ready`). Never throws.
 */
function launch(deps: TurnDeps, input: TurnInput, pool: WorkerPool, turn: Turn, how: { slot: string; index: number; prepare(ws: Workspace): Prepared; fit: WorkerFit; spare: boolean }): void {
  const { backend, log } = input;
  // Started in the background: only into room no turn is waiting for.
  if (deps.cap && !deps.cap.hasRoom()) return;
  try {
    const ws = deps.workspaces.create({ keyId: input.keyId, requestId: `${how.spare ? 'spare' : 'worker'}-${randomUUID()}`, links: backend.links(turn), ...(backend.homeDirs ? { dirs: backend.homeDirs } : {}), slot: `${backend.id}-${how.index}` });
    const life = new AbortController();
    let proc: RunningProcess;
    try {
      const prepared = how.prepare(ws);
      for (const f of prepared.files) ws.writeFile(f.name, f.content);
      const env = toChildEnv(deps.hostEnv, backend.envPolicy(turn, ws), ws.home);
      proc = deps.supervisor.run({ ...prepared.invocation, env, cwd: ws.cwd, live: true }, { ...deps.limits, timeoutMs: pool.maxAgeMs + deps.limits.timeoutMs }, life.signal, log);
    } catch (err) {
      ws.remove();
      throw err;
    }
    const lines = proc.lines[Symbol.asyncIterator]();
    const t = Date.now();
    const worker: Worker = { proc, lines, ws, life, cost: 0, slot: how.slot, keyId: input.keyId, fit: how.fit, startedAt: t, lastUsedAt: t, turns: 0, state: how.spare ? 'spare' : 'starting' };
    const ready = (async () => {
      const timer = setTimeout(() => life.abort('done'), READY_MS);
      try {
        for (;;) {
          const step = await lines.next();
          if (step.done) return false;
          const up = backend.live!.ready(step.value);
          if (up !== undefined) {
            proc.hold();
            return up;
          }
        }
      } finally {
        clearTimeout(timer);
      }
    })().catch(() => false);
    if (how.spare) pool.addSpare({ worker, backend: backend.id, ready, isReady: false });
    else pool.addStarting(worker, ready);
    log.debug({ event: how.spare ? 'spare_started' : 'worker_starting', pid: proc.pid, slot: how.slot, model: turn.cliModel }, how.spare ? 'pre-started a CLI for the next new conversation' : 'starting a live worker for the next turn');
  } catch (err) {
    log.warn({ event: 'live_start_failed', err }, 'could not start a live CLI');
  }
}

/**
 * A spare CLI in the slot a new conversation of this key would take next, for the model it just
 * used: no conversation, no system prompt, up once it answers a ping.
 */
function startSpare(deps: TurnDeps, input: TurnInput, pool: WorkerPool): void {
  const { backend } = input;
  if (!deps.prestart) return;
  const next = deps.prestart.nextSlot(input.keyId, backend.id);
  if (next === undefined || !pool.wantsSpare(input.keyId, backend.id, workerSlot(input.keyId, backend.id, next))) return;
  if (recentAvailableMemory() < deps.prestart.minFreeBytes) return;
  const turn: Turn = { prompt: { system: null, text: '' }, cliModel: input.turn.cliModel, ...(input.turn.maxOutputTokens ? { maxOutputTokens: input.turn.maxOutputTokens } : {}), session: { mode: 'fresh', slot: next }, live: true, prestart: true };
  const fit: WorkerFit = { sessionId: '', cliModel: turn.cliModel, system: '', maxOutputTokens: turn.maxOutputTokens };
  launch(deps, input, pool, turn, { slot: workerSlot(input.keyId, backend.id, next), index: next, prepare: (ws) => backend.prepare(turn, ws), fit, spare: true });
}

/** A worker that loads the session a cold turn just left (codex: `app-server` and `thread/resume`). */
function startResumed(deps: TurnDeps, input: TurnInput, pool: WorkerPool, slot: string, fit: WorkerFit): void {
  const { backend } = input;
  const index = input.turn.session!.slot!;
  if (!backend.live?.resume || !pool.hasRoom()) return;
  const turn: Turn = { ...input.turn, session: { mode: 'resumed', sessionId: fit.sessionId, slot: index } };
  launch(deps, input, pool, turn, { slot, index, prepare: (ws) => backend.live!.resume!(turn, ws), fit, spare: false });
}

/**
 * One turn in a fresh process and workspace. With `live`, the process is started so that it can
 * serve the slot's later turns, and kept as the slot's worker when its turn succeeds.
 */
async function* runCold(deps: TurnDeps, input: TurnInput, live: { pool: WorkerPool; slot: string; fit: WorkerFit } | false, reset?: SlotReset): AsyncGenerator<BackendEvent, RunOutcome> {
  const { backend, log } = input;
  const turn: Turn = live ? input.turn : { ...input.turn, live: false };
  const slot = turn.session?.slot;
  const run: RunMode = turn.session?.mode === 'resumed' ? 'resumed' : 'cold';
  const ws = deps.workspaces.create({
    keyId: input.keyId,
    requestId: input.requestId,
    links: deps.replay ? [] : backend.links(turn),
    ...(backend.homeDirs ? { dirs: backend.homeDirs } : {}),
    ...(slot !== undefined && turn.session?.mode !== 'ephemeral'
      ? { slot: `${backend.id}-${slot}`, ...(turn.session?.mode === 'fresh' && !turn.session.forkOf ? { resetSlot: reset ?? { staleSession: turn.session.previousSessionId } } : {}) }
      : {}),
  });
  const life = new AbortController();
  const unfollow = follow(input.signal, life);
  let proc: RunningProcess | undefined;
  let lines: AsyncIterator<string> | undefined;
  let kept = false;
  let room: (() => void) | undefined;
  try {
    room = await deps.cap?.acquire(input.signal);
    const prepared = backend.prepare(turn, ws);
    for (const f of prepared.files) ws.writeFile(f.name, f.content);
    const env = toChildEnv(deps.hostEnv, backend.envPolicy(turn, ws), ws.home);
    const call = { backend: backend.id, model: turn.cliModel, prompt: [prepared.invocation.stdin, ...prepared.files.map((f) => f.content)].join('\u0000') };
    // A live process's own timeout bounds its whole life; each turn has its own below.
    const limits = live ? { ...deps.limits, timeoutMs: live.pool.maxAgeMs + deps.limits.timeoutMs } : deps.limits;
    proc = deps.supervisor.run({ ...prepared.invocation, env, cwd: ws.cwd }, limits, life.signal, log, call);
    room?.();
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
    room?.();
    unfollow();
    if (!kept) {
      // Early return (client gone, consumer error): stop the child and wait for its group to die.
      life.abort('turn_closed'); // a string reason: no DOMException (and its stack) per request
      if (lines) await lines.return?.(undefined);
      if (proc) await proc.exit;
    }
    // The session a fork copied is read once, at its start: its files go now, whatever the turn's
    // outcome (a failed fork leaves the slot to start over from the whole transcript). A fork
    // that keeps reading its source (codex) leaves it to the slot's next whole reset.
    const forkOf = turn.session?.forkOf;
    if (forkOf && slot !== undefined && proc && !backend.forks?.keepsSource) deps.workspaces.pruneSession(input.keyId, `${backend.id}-${slot}`, forkOf);
    if (!kept) {
      // The child is gone; its directory is removed off the event loop, never delaying the response.
      ws.removeLater().catch((err: unknown) => log.warn({ event: 'workspace_remove_failed', err }, 'could not remove a workspace (the next start sweeps it)'));
    }
  }
}

export function isClientAbort(err: unknown): boolean {
  return err instanceof ClientAbortedError;
}

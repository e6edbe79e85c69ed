import { backendBadOutput, backendTimeout, backendUnavailable, ClientAbortedError, shuttingDown } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { MAX_LINE_BYTES, type ProcessSupervisor, type RunLimits } from '../process/index.js';
import type { Backend, BackendEvent, Turn, TurnOutcome } from '../backends/types.js';
import { toChildEnv, type Workspaces } from '../workspace/index.js';

export interface TurnDeps {
  supervisor: ProcessSupervisor;
  workspaces: Workspaces;
  hostEnv: Readonly<Record<string, string | undefined>>;
  limits: RunLimits;
  /** Replay mode: nothing is spawned, so no credential is linked either. */
  replay?: boolean;
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

/**
 * Runs one CLI turn in a fresh workspace: yields backend events as the CLI prints them and
 * returns how the turn ended. The workspace is removed and the process group is gone on every
 * path, including a consumer that stops iterating early.
 */
export async function* runTurn(deps: TurnDeps, input: TurnInput): AsyncGenerator<BackendEvent, TurnOutcome> {
  const { backend, turn, log } = input;
  const slot = turn.session?.slot;
  const ws = deps.workspaces.create({
    keyId: input.keyId,
    requestId: input.requestId,
    links: deps.replay ? [] : backend.links(turn),
    ...(backend.homeDirs ? { dirs: backend.homeDirs } : {}),
    ...(slot !== undefined && turn.session?.mode !== 'ephemeral' ? { slot: `${backend.id}-${slot}`, resetSlot: turn.session?.mode === 'fresh' } : {}),
  });
  const stop = new AbortController();
  const signal = AbortSignal.any([input.signal, stop.signal]);
  let proc: ReturnType<ProcessSupervisor['run']> | undefined;
  try {
    const prepared = backend.prepare(turn, ws);
    for (const f of prepared.files) ws.writeFile(f.name, f.content);
    const env = toChildEnv(deps.hostEnv, backend.envPolicy(turn, ws), ws.home);
    const call = { backend: backend.id, model: turn.cliModel, prompt: [prepared.invocation.stdin, ...prepared.files.map((f) => f.content)].join('\u0000') };
    proc = deps.supervisor.run({ ...prepared.invocation, env, cwd: ws.cwd }, deps.limits, signal, log, call);
    log.debug({ event: 'spawned', pid: proc.pid, backend: backend.id, model: turn.cliModel }, 'spawned');
    const parser = backend.createParser();
    // A CLI that only retries its provider makes no progress: the idle timer keeps running, and
    // past the retry bound the run is stopped as the provider's problem, not the CLI's.
    let retrying: { since: number; last: string } | undefined;
    let retryTimer: NodeJS.Timeout | undefined;
    try {
      for await (const line of proc.lines) {
        const events = parser.push(line);
        const retry = events.find((e) => e.type === 'retry');
        if (!retry) {
          proc.progress();
          retrying = undefined;
          if (retryTimer) clearTimeout(retryTimer);
          retryTimer = undefined;
        } else {
          retrying = { since: retrying?.since ?? performance.now(), last: retry.message };
          retryTimer ??= setTimeout(() => stop.abort('retry_timeout'), deps.limits.retryTimeoutMs);
          log.debug({ event: 'cli_retry', message: retry.message }, 'the CLI is retrying its provider');
        }
        for (const ev of events) yield ev;
        // The turn is decided: answer now, whatever still holds the CLI's stdout open.
        if (parser.complete) break;
      }
    } finally {
      if (retryTimer) clearTimeout(retryTimer);
    }
    const exit = await proc.exit;
    log.debug({ event: 'exited', pid: exit.pid, code: exit.exitCode, signal: exit.signal, reason: exit.reason, ms: Math.round(exit.durationMs) }, 'exited');
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
        return { ...outcome, error: backendTimeout(backend.id, 'total', Math.round(deps.limits.timeoutMs / 1000), outcome.error) };
      case 'idle':
        return { ...outcome, error: backendTimeout(backend.id, 'idle', Math.round(deps.limits.idleTimeoutMs / 1000), outcome.error) };
      case 'line_too_long':
        return { ...outcome, error: backendBadOutput(backend.id, `a single output line was longer than ${MAX_LINE_BYTES / 1024 / 1024} MiB; the CLI was stopped`, outcome.error) };
      default:
        return outcome;
    }
  } finally {
    // Early return (client gone, consumer error): stop the child and wait for its group to die.
    stop.abort('turn_closed'); // a string reason: no DOMException (and its stack) per request
    if (proc) await proc.exit;
    // The child is gone; its directory is removed off the event loop, never delaying the response.
    ws.removeLater().catch((err: unknown) => log.warn({ event: 'workspace_remove_failed', err }, 'could not remove a workspace (the next start sweeps it)'));
  }
}

export function isClientAbort(err: unknown): boolean {
  return err instanceof ClientAbortedError;
}


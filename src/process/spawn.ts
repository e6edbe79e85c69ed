import type { Logger } from '../log/index.js';
import { sanitizeStderr } from '../log/index.js';
import { createIdleTimer } from './idle.js';
import { createLineSplitter, LineTooLongError } from './lines.js';
import { createReaper, type Reaper } from './reaper.js';
import type { CallMeta, EndReason, ExitInfo, Invocation, RunLimits, RunningProcess } from './run-types.js';
import { signalGroup, startChild } from './start.js';
import { endedWithin, writeAll } from './streams.js';

const STDERR_LIMIT = 16 * 1024;
/** After the caller has the whole turn, how long the CLI may take to exit by itself. */
const DONE_GRACE_MS = 1000;
/** After the leader exits, how long a pipe may stay open with nothing coming through it. */
const DRAIN_MS = 250;
/** After the leader exits, when an open stderr means something outside its group holds the pipes. */
const HOLDER_CHECK_MS = 20;

interface Tracked {
  terminate(reason: EndReason): void;
  exit: Promise<ExitInfo>;
}

/** Kills a whole process group; an empty group (already gone) is the normal case after exit. */
function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid !== undefined) signalGroup(pid, signal);
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
    const started = performance.now();
    let stopping = false;
    let reason: EndReason = 'exit';
    let stderr = '';
    const home = inv.env.HOME;

    // Started without execa on this per-request path: execa's option normalisation, stream
    // wrapping and its AbortSignal per call cost about 2 ms of CPU a run (measured with the native
    // fake in `npm run bench`). Everything it gave is done here.
    let spawnError: NodeJS.ErrnoException | undefined;
    const child = startChild({ command: inv.command, args: inv.args, env: inv.env, cwd: inv.cwd });
    const pid = child.pid;
    // The leader's own exit: stdout may stay open after it when a grandchild inherited it.
    const leaderExit = child.exited.then((r) => {
      if ('spawnError' in r) {
        spawnError = r.spawnError;
        return null;
      }
      return r;
    });

    let forceTimer: NodeJS.Timeout | undefined;
    let doneTimer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;
    let exited = false;
    let linesDone = false;
    const terminate = (why: EndReason): void => {
      // The leader is gone: all that is left to stop is reading a pipe something else holds.
      if (exited) {
        child.stdout?.destroy();
        return;
      }
      if (stopping) return;
      stopping = true;
      reason = why;
      killGroup(pid, 'SIGTERM');
      forceTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), limits.killGraceMs);
    };

    const onAbort = () =>
      terminate(
        signal.reason === 'shutdown' || signal.reason === 'retry_timeout' || signal.reason === 'timeout'
          ? signal.reason
          : 'aborted',
      );
    if (signal.aborted) queueMicrotask(onAbort);
    else signal.addEventListener('abort', onAbort, { once: true });

    const totalTimer = setTimeout(() => terminate('timeout'), limits.timeoutMs);
    // The idle timer measures time without progress (a line the caller counts as progress, see
    // `progress`), and runs only while olp waits for output, never while olp itself holds the CLI
    // back (its consumer, a slow client, has not asked for the next line yet). It stops when the
    // leader exits: the rest of the pipe is then read to its end (the total timeout and an abort
    // still bound that wait).
    // A live run between turns: nothing is expected, so nothing is idle.
    let held = false;
    const idle = createIdleTimer(
      limits.idleTimeoutMs,
      () => terminate('idle'),
      () => exited || held,
    );
    const armIdle = idle.arm;
    const pauseIdle = idle.pause;
    const progress = idle.progress;
    armIdle();

    // The guard must be in place before the first write: a CLI that exits early closes its
    // stdin and the pending write fails with EPIPE, which would otherwise crash the daemon.
    child.stdin?.on('error', (err: NodeJS.ErrnoException) => {
      log.warn({ event: 'stdin_write_error', code: err.code, pid }, 'stdin_write_error');
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_LIMIT);
    });
    child.stderr?.on('error', () => {});
    child.stdout?.on('error', () => {});
    if (child.stdin && pid !== undefined) void writeAll(child.stdin, inv.stdin, inv.live);

    /** Every timer and listener of the run, once the leader is gone and stdout was read. */
    const settle = (): void => {
      clearTimeout(totalTimer);
      if (drainTimer) clearTimeout(drainTimer);
      signal.removeEventListener('abort', onAbort);
    };

    const exit: Promise<ExitInfo> = (async () => {
      const ended = await leaderExit;
      exited = true;
      if (doneTimer) clearTimeout(doneTimer);
      if (forceTimer) clearTimeout(forceTimer);
      pauseIdle();
      // Whatever the leader did, nothing it started may outlive it.
      killGroup(pid, 'SIGKILL');
      if (ended && home) {
        // stderr flows without a consumer: if it stays open, something outside the group holds it.
        if (await endedWithin(child.stderr, HOLDER_CHECK_MS)) reaper.later(home);
        else {
          const escaped = reaper.now(home);
          if (escaped.length)
            log.warn(
              { event: 'escaped_processes_killed', pids: escaped },
              "killed processes that left the CLI's process group",
            );
          // Killed holders close the pipes; one that survived (it changed its HOME) loses them.
          drainTimer = setTimeout(() => child.stdout?.destroy(), DRAIN_MS);
          if (!(await endedWithin(child.stderr, DRAIN_MS))) child.stderr?.destroy();
        }
      }
      if (linesDone || !child.stdout) settle();
      return {
        reason: spawnError ? 'spawn_error' : reason,
        exitCode: ended?.code ?? null,
        signal: ended?.signal ?? null,
        stderr: sanitizeStderr(stderr, inv.stdin),
        ...(spawnError ? { spawnError } : {}),
        pid,
        durationMs: performance.now() - started,
      } satisfies ExitInfo;
    })();

    const tracked: Tracked = { terminate, exit };
    live.add(tracked);
    void exit.finally(() => live.delete(tracked));

    async function* lines(): AsyncGenerator<string> {
      const stdout = child.stdout;
      if (!stdout) return;
      const splitter = createLineSplitter();
      let drained = false;
      try {
        for await (const chunk of stdout as AsyncIterable<Buffer>) {
          let out: string[];
          try {
            out = splitter.push(chunk);
          } catch (err) {
            if (!(err instanceof LineTooLongError)) throw err;
            log.warn(
              { event: 'line_too_long', pid, limit: err.limit },
              'the CLI printed a line past the limit; stopping it',
            );
            terminate('line_too_long');
            return;
          }
          if (out.length > 0) {
            pauseIdle();
            for (const line of out) yield line;
          }
          armIdle();
        }
        drained = true;
        pauseIdle();
        yield* splitter.end();
      } catch (err) {
        // stdout closed by olp after the leader exited (an escaped process held it): the run is over.
        if ((err as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') throw err;
      } finally {
        linesDone = true;
        pauseIdle();
        if (exited) settle();
        if (!drained && !stopping && !exited) {
          // The caller has what it needs (the turn's final event): the CLI may finish by itself.
          doneTimer = setTimeout(() => terminate('done'), DONE_GRACE_MS);
        }
      }
    }

    return {
      pid,
      lines: lines(),
      exit,
      progress,
      write: (data) =>
        child.stdin && !exited && !stopping ? writeAll(child.stdin, data, true) : Promise.resolve(false),
      endInput: () => {
        if (child.stdin && !child.stdin.destroyed && !child.stdin.writableEnded) child.stdin.end();
      },
      hold: () => {
        held = true;
        pauseIdle();
      },
      expect: () => {
        held = false;
        progress();
        armIdle();
      },
      stop: terminate,
    };
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

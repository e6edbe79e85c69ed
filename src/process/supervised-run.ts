// One CLI child from its start to its exit: its group, stdin, timers, stop reason, stderr tail and stdout
// lines. The supervisor (spawn.ts) starts one per run and tracks it until its exit.
import type { Logger } from '../log/index.js';
import { sanitizeStderr } from '../log/index.js';
import { createIdleTimer } from './idle.js';
import { createLineSplitter, LineTooLongError } from './lines.js';
import type { Reaper } from './reaper.js';
import type { EndReason, ExitInfo, Invocation, RunLimits, RunningProcess } from './run-types.js';
import { type Child, signalGroup, startChild } from './start.js';
import { endedWithin, writeAll } from './streams.js';

const STDERR_LIMIT = 16 * 1024;
/** After the caller has the whole turn, how long the CLI may take to exit by itself. */
const DONE_GRACE_MS = 1000;
/** After the leader exits, how long a pipe may stay open with nothing coming through it. */
const DRAIN_MS = 250;
/** After the leader exits, when an open stderr means something outside its group holds the pipes. */
const HOLDER_CHECK_MS = 20;

type LeaderExit = { code: number | null; signal: NodeJS.Signals | null } | null;

/** Kills a whole process group; an empty group (already gone) is the normal case after exit. */
function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid !== undefined) signalGroup(pid, signal);
}

/** What an abort's reason says about why the run ends. */
function abortReason(signal: AbortSignal): EndReason {
  const why = signal.reason;
  return why === 'shutdown' || why === 'retry_timeout' || why === 'timeout' ? why : 'aborted';
}

/** A started CLI run: `handle()` is what the caller gets, `exit` what the supervisor waits for. */
export class SupervisedRun {
  private readonly started = performance.now();
  private stopping = false;
  private reason: EndReason = 'exit';
  private stderr = '';
  private spawnError: NodeJS.ErrnoException | undefined;
  private forceTimer: NodeJS.Timeout | undefined;
  private doneTimer: NodeJS.Timeout | undefined;
  private drainTimer: NodeJS.Timeout | undefined;
  private exited = false;
  private linesDone = false;
  /** A live run between turns: nothing is expected, so nothing is idle. */
  private held = false;
  private readonly inv: Invocation;
  private readonly limits: RunLimits;
  private readonly signal: AbortSignal;
  private readonly log: Logger;
  private readonly reaper: Reaper;
  private readonly child: Child;
  private readonly idle: ReturnType<typeof createIdleTimer>;
  private readonly totalTimer: NodeJS.Timeout;
  readonly pid: number | undefined;
  readonly exit: Promise<ExitInfo>;

  constructor(inv: Invocation, limits: RunLimits, signal: AbortSignal, log: Logger, reaper: Reaper) {
    this.inv = inv;
    this.limits = limits;
    this.signal = signal;
    this.log = log;
    this.reaper = reaper;
    // Started without execa on this per-request path: execa's option normalisation, stream
    // wrapping and its AbortSignal per call cost about 2 ms of CPU a run (measured with the native
    // fake in `npm run bench`). Everything it gave is done here.
    this.child = startChild({ command: inv.command, args: inv.args, env: inv.env, cwd: inv.cwd });
    this.pid = this.child.pid;
    // The leader's own exit: stdout may stay open after it when a grandchild inherited it.
    const leaderExit = this.child.exited.then((r): LeaderExit => {
      if ('spawnError' in r) {
        this.spawnError = r.spawnError;
        return null;
      }
      return r;
    });
    if (signal.aborted) queueMicrotask(this.onAbort);
    else signal.addEventListener('abort', this.onAbort, { once: true });
    this.totalTimer = setTimeout(() => this.terminate('timeout'), limits.timeoutMs);
    // The idle timer measures time without progress (a line the caller counts as progress, see
    // `progress`), and runs only while olp waits for output, never while olp itself holds the CLI
    // back (its consumer, a slow client, has not asked for the next line yet). It stops when the
    // leader exits: the rest of the pipe is then read to its end (the total timeout and an abort
    // still bound that wait).
    this.idle = createIdleTimer(
      limits.idleTimeoutMs,
      () => this.terminate('idle'),
      () => this.exited || this.held,
    );
    this.idle.arm();
    this.guardPipes();
    this.exit = this.awaitExit(leaderExit);
  }

  /** Stops the run: SIGTERM to its group, SIGKILL after the grace; first reason wins. */
  readonly terminate = (why: EndReason): void => {
    // The leader is gone: all that is left to stop is reading a pipe something else holds.
    if (this.exited) {
      this.child.stdout?.destroy();
      return;
    }
    if (this.stopping) return;
    this.stopping = true;
    this.reason = why;
    killGroup(this.pid, 'SIGTERM');
    this.forceTimer = setTimeout(() => killGroup(this.pid, 'SIGKILL'), this.limits.killGraceMs);
  };

  private readonly onAbort = (): void => this.terminate(abortReason(this.signal));

  /** The caller's side of the run. */
  handle(): RunningProcess {
    const { child, idle } = this;
    return {
      pid: this.pid,
      lines: this.lines(),
      exit: this.exit,
      progress: idle.progress,
      write: (data) =>
        child.stdin && !this.exited && !this.stopping ? writeAll(child.stdin, data, true) : Promise.resolve(false),
      endInput: () => {
        if (child.stdin && !child.stdin.destroyed && !child.stdin.writableEnded) child.stdin.end();
      },
      hold: () => {
        this.held = true;
        idle.pause();
      },
      expect: () => {
        this.held = false;
        idle.progress();
        idle.arm();
      },
      stop: this.terminate,
    };
  }

  /** Listeners on the pipes, then the prompt written to stdin. */
  private guardPipes(): void {
    const { child, pid } = this;
    // The guard must be in place before the first write: a CLI that exits early closes its
    // stdin and the pending write fails with EPIPE, which would otherwise crash the daemon.
    child.stdin?.on('error', (err: NodeJS.ErrnoException) => {
      this.log.warn({ event: 'stdin_write_error', code: err.code, pid }, 'stdin_write_error');
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-STDERR_LIMIT);
    });
    child.stderr?.on('error', () => {});
    child.stdout?.on('error', () => {});
    if (child.stdin && pid !== undefined) void writeAll(child.stdin, this.inv.stdin, this.inv.live);
  }

  /** Every timer and listener of the run, once the leader is gone and stdout was read. */
  private settle(): void {
    clearTimeout(this.totalTimer);
    if (this.drainTimer) clearTimeout(this.drainTimer);
    this.signal.removeEventListener('abort', this.onAbort);
  }

  private async awaitExit(leaderExit: Promise<LeaderExit>): Promise<ExitInfo> {
    const ended = await leaderExit;
    this.exited = true;
    if (this.doneTimer) clearTimeout(this.doneTimer);
    if (this.forceTimer) clearTimeout(this.forceTimer);
    this.idle.pause();
    // Whatever the leader did, nothing it started may outlive it.
    killGroup(this.pid, 'SIGKILL');
    const home = this.inv.env.HOME;
    if (ended && home) await this.reapEscaped(home);
    if (this.linesDone || !this.child.stdout) this.settle();
    return {
      reason: this.spawnError ? 'spawn_error' : this.reason,
      exitCode: ended?.code ?? null,
      signal: ended?.signal ?? null,
      stderr: sanitizeStderr(this.stderr, this.inv.stdin),
      ...(this.spawnError ? { spawnError: this.spawnError } : {}),
      pid: this.pid,
      durationMs: performance.now() - this.started,
    } satisfies ExitInfo;
  }

  /** After the leader's exit: kills what escaped its group with the run's HOME, if anything holds the pipes. */
  private async reapEscaped(home: string): Promise<void> {
    const { child } = this;
    // stderr flows without a consumer: if it stays open, something outside the group holds it.
    if (await endedWithin(child.stderr, HOLDER_CHECK_MS)) {
      this.reaper.later(home);
      return;
    }
    const escaped = this.reaper.now(home);
    if (escaped.length)
      this.log.warn(
        { event: 'escaped_processes_killed', pids: escaped },
        "killed processes that left the CLI's process group",
      );
    // Killed holders close the pipes; one that survived (it changed its HOME) loses them.
    this.drainTimer = setTimeout(() => child.stdout?.destroy(), DRAIN_MS);
    if (!(await endedWithin(child.stderr, DRAIN_MS))) child.stderr?.destroy();
  }

  private async *lines(): AsyncGenerator<string> {
    const stdout = this.child.stdout;
    if (!stdout) return;
    const splitter = createLineSplitter();
    let drained = false;
    try {
      for await (const chunk of stdout as AsyncIterable<Buffer>) {
        const out = this.split(splitter, chunk);
        if (out === null) return;
        if (out.length > 0) {
          this.idle.pause();
          for (const line of out) yield line;
        }
        this.idle.arm();
      }
      drained = true;
      this.idle.pause();
      yield* splitter.end();
    } catch (err) {
      // stdout closed by olp after the leader exited (an escaped process held it): the run is over.
      if ((err as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') throw err;
    } finally {
      this.linesDone = true;
      this.idle.pause();
      if (this.exited) this.settle();
      if (!drained && !this.stopping && !this.exited) {
        // The caller has what it needs (the turn's final event): the CLI may finish by itself.
        this.doneTimer = setTimeout(() => this.terminate('done'), DONE_GRACE_MS);
      }
    }
  }

  /** A chunk's whole lines; null when a line ran past the limit (the run is then stopped). */
  private split(splitter: ReturnType<typeof createLineSplitter>, chunk: Buffer): string[] | null {
    try {
      return splitter.push(chunk);
    } catch (err) {
      if (!(err instanceof LineTooLongError)) throw err;
      this.log.warn(
        { event: 'line_too_long', pid: this.pid, limit: err.limit },
        'the CLI printed a line past the limit; stopping it',
      );
      this.terminate('line_too_long');
      return null;
    }
  }
}

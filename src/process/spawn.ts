import type { Writable } from 'node:stream';
import { execa } from 'execa';
import type { Logger } from '../log/index.js';
import { createLineSplitter } from './lines.js';

/** What to run: a backend builds this; nothing here knows which CLI it is. */
export interface Invocation {
  command: string;
  args: readonly string[];
  /** The child's whole environment (never merged with the daemon's). */
  env: Readonly<Record<string, string>>;
  cwd: string;
  /** Written to the child's stdin, then stdin is closed. Prompts travel only this way. */
  stdin: string;
}

/** What a call is, for recording and replay: which backend and model, and everything the CLI was asked. */
export interface CallMeta {
  backend: string;
  model: string;
  /** stdin plus the files written for the run (the system prompt). */
  prompt: string;
}

export interface RunLimits {
  /** Total time the child may run. */
  timeoutMs: number;
  /** Time the child may go without printing to stdout. */
  idleTimeoutMs: number;
  /** Between SIGTERM and SIGKILL of the child's process group. */
  killGraceMs: number;
}

export type EndReason = 'exit' | 'timeout' | 'idle' | 'aborted' | 'shutdown' | 'spawn_error';

export interface ExitInfo {
  reason: EndReason;
  exitCode: number | null;
  signal: string | null;
  /** The last few KB of stderr, for error messages. */
  stderr: string;
  /** Set when the process could not be started (ENOENT, EACCES…). */
  spawnError?: NodeJS.ErrnoException;
  pid: number | undefined;
  durationMs: number;
}

export interface RunningProcess {
  readonly pid: number | undefined;
  /** stdout, one line at a time (without the newline), as it arrives. */
  readonly lines: AsyncIterable<string>;
  /** Resolves once the child is gone and its process group has been killed. Never rejects. */
  readonly exit: Promise<ExitInfo>;
}

const STDERR_LIMIT = 16 * 1024;
const WRITE_CHUNK = 64 * 1024;

interface Tracked {
  terminate(reason: EndReason): void;
  exit: Promise<ExitInfo>;
}

/** Kills a whole process group; ESRCH (already gone) is the normal case after exit. */
function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already empty.
  }
}

/** Writes `data` in chunks, waiting for 'drain' when the pipe is full; stops quietly if stdin closes. */
async function writeAll(stdin: Writable, data: string): Promise<void> {
  const buf = Buffer.from(data, 'utf8');
  for (let off = 0; off < buf.length; off += WRITE_CHUNK) {
    if (stdin.destroyed || stdin.writableEnded) return;
    if (!stdin.write(buf.subarray(off, off + WRITE_CHUNK))) {
      const open = await new Promise<boolean>((resolve) => {
        const done = (ok: boolean) => () => {
          stdin.off('drain', onDrain);
          stdin.off('close', onClose);
          stdin.off('error', onClose);
          resolve(ok);
        };
        const onDrain = done(true);
        const onClose = done(false);
        stdin.once('drain', onDrain);
        stdin.once('close', onClose);
        stdin.once('error', onClose);
      });
      if (!open) return;
    }
  }
  if (!stdin.destroyed) stdin.end();
}

/**
 * Owns every CLI child of the daemon: starts them in their own process group, feeds stdin,
 * enforces timeouts, and kills the whole group on abort, timeout, exit and shutdown.
 */
export function createProcessSupervisor(logger: Logger) {
  const live = new Set<Tracked>();

  function run(inv: Invocation, limits: RunLimits, signal: AbortSignal, log: Logger = logger, _call?: CallMeta): RunningProcess {
    const started = performance.now();
    const cancel = new AbortController();
    let reason: EndReason = 'exit';
    let stderr = '';

    const child = execa(inv.command, inv.args, {
      cwd: inv.cwd,
      env: inv.env,
      extendEnv: false,
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'pipe',
      buffer: false,
      reject: false,
      detached: true, // own process group, so grandchildren can be killed with it
      cleanup: false,
      windowsHide: true,
      cancelSignal: cancel.signal,
      killSignal: 'SIGTERM',
      forceKillAfterDelay: limits.killGraceMs,
    });
    const pid = child.pid;

    let forceTimer: NodeJS.Timeout | undefined;
    const terminate = (why: EndReason): void => {
      if (cancel.signal.aborted) return;
      reason = why;
      cancel.abort(why);
      killGroup(pid, 'SIGTERM');
      forceTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), limits.killGraceMs);
    };

    const onAbort = () => terminate(signal.reason === 'shutdown' ? 'shutdown' : 'aborted');
    if (signal.aborted) queueMicrotask(onAbort);
    else signal.addEventListener('abort', onAbort, { once: true });

    const totalTimer = setTimeout(() => terminate('timeout'), limits.timeoutMs);
    let idleTimer = setTimeout(() => terminate('idle'), limits.idleTimeoutMs);
    const touch = () => {
      idleTimer.refresh();
    };

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
    if (child.stdin && pid !== undefined) void writeAll(child.stdin, inv.stdin);

    const exit: Promise<ExitInfo> = (async () => {
      const result = await child;
      clearTimeout(totalTimer);
      clearTimeout(idleTimer);
      signal.removeEventListener('abort', onAbort);
      // Whatever the leader did, nothing it started may outlive it.
      killGroup(pid, 'SIGKILL');
      if (forceTimer) clearTimeout(forceTimer);
      const cause = (result as { cause?: unknown }).cause as NodeJS.ErrnoException | undefined;
      const spawnError = pid === undefined && cause && typeof cause === 'object' ? cause : undefined;
      return {
        reason: spawnError ? 'spawn_error' : reason,
        exitCode: result.exitCode ?? null,
        signal: result.signal ?? null,
        stderr,
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
      for await (const chunk of stdout as AsyncIterable<Buffer>) {
        touch();
        yield* splitter.push(chunk);
      }
      yield* splitter.end();
    }

    return { pid, lines: lines(), exit };
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
    },
  };
}

/** Runs CLI calls: the real supervisor, or a recording or replaying one in its place. */
export interface ProcessSupervisor {
  run(inv: Invocation, limits: RunLimits, signal: AbortSignal, log?: Logger, call?: CallMeta): RunningProcess;
  readonly active: number;
  killAll(): Promise<void>;
}

export interface CommandResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** The binary could not be started (ENOENT…) or ran past the timeout. */
  failed: 'spawn' | 'timeout' | null;
}

/** Runs a short command (a CLI's --version or login status) to completion, bounded in time. */
export async function runCommand(command: string, args: readonly string[], opts: { env: Readonly<Record<string, string>>; timeoutMs: number; cwd?: string }): Promise<CommandResult> {
  const r = await execa(command, args, {
    env: opts.env,
    extendEnv: false,
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
    stdin: 'ignore',
    reject: false,
    timeout: opts.timeoutMs,
    forceKillAfterDelay: 1000,
    maxBuffer: 1024 * 1024,
  });
  const failed = r.timedOut ? 'timeout' : r.exitCode === undefined && r.failed ? 'spawn' : null;
  return { exitCode: r.exitCode ?? null, stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? ''), failed };
}

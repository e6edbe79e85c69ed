// What a CLI run is asked to do and what it reports: the supervisor's contract.
import type { Logger } from '../log/index.js';

/** What to run: a backend builds this; nothing here knows which CLI it is. */
export interface Invocation {
  command: string;
  args: readonly string[];
  /** The child's whole environment (never merged with the daemon's). */
  env: Readonly<Record<string, string>>;
  cwd: string;
  /** Written to the child's stdin, then stdin is closed (kept open when `live`). Prompts travel only this way. */
  stdin: string;
  /**
   * A process that may serve more turns: stdin stays open after the first write (see
   * `RunningProcess.write`), and the idle timer runs only between `expect()` and `hold()`.
   */
  live?: boolean;
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
  /** Time the child may go without progress (see `RunningProcess.progress`) while olp waits for it. */
  idleTimeoutMs: number;
  /** Time a run may spend only retrying its provider (enforced by the caller, which reads the events). */
  retryTimeoutMs: number;
  /** Between SIGTERM and SIGKILL of the child's process group. */
  killGraceMs: number;
}

export type EndReason =
  | 'exit'
  | 'timeout'
  | 'idle'
  | 'aborted'
  | 'shutdown'
  | 'spawn_error'
  | 'line_too_long'
  | 'done'
  | 'retry_timeout';

export interface ExitInfo {
  /**
   * Why the run ended: `exit` by itself; `done` stopped after its caller had read the whole turn
   * (the CLI lingered past the grace); the rest are olp stopping it.
   */
  reason: EndReason;
  exitCode: number | null;
  signal: string | null;
  /** The last few KB of stderr, secrets redacted and input echoes removed. */
  stderr: string;
  /** Set when the process could not be started (ENOENT, EACCES…). */
  spawnError?: NodeJS.ErrnoException;
  pid: number | undefined;
  durationMs: number;
}

export interface RunningProcess {
  readonly pid: number | undefined;
  /**
   * stdout, one line at a time (without the newline), as it arrives. A consumer that stops
   * early (it has read the turn's final event) gives the CLI a short grace to exit by itself.
   */
  readonly lines: AsyncIterable<string>;
  /**
   * Resolves once the child has exited and its process group, and any process still carrying
   * its HOME, has been killed. Waits for the leader's exit, never for its stdout to close (an
   * escaped grandchild may hold that open). Never rejects.
   */
  readonly exit: Promise<ExitInfo>;
  /**
   * The caller counts the line it just read as progress: the idle timer starts over. Lines it
   * does not count (a CLI retrying its provider) leave the timer running.
   */
  progress(): void;
  /** Live runs: writes more input (one more turn); false when stdin is already closed. */
  write(data: string): Promise<boolean>;
  /** Live runs: closes stdin (the CLI finishes what it is doing and exits). */
  endInput(): void;
  /** Live runs: a turn is over; no output is expected, so the idle timer stops. */
  hold(): void;
  /** Live runs: a turn starts; the idle timer starts over. */
  expect(): void;
  /** Stops the run (SIGTERM to its group, SIGKILL after the grace), recording why. */
  stop(reason: EndReason): void;
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
  /** The binary could not be started (ENOENT…), ran past the timeout, or was stopped by the caller's signal. */
  failed: 'spawn' | 'timeout' | 'canceled' | null;
}

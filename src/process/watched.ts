import { signalGroup, startChild } from './start.js';

// A command that runs a while in the background and says things on the way (`codex login
// --device-auth` waiting for a person to sign in elsewhere): its output as it comes, a stop that
// kills its whole process group, and an end that never rejects.

/** How a watched command ended: its exit, or why it was stopped or never started. */
export interface WatchedEnd {
  exitCode: number | null;
  signal: string | null;
  failed: 'spawn' | 'timeout' | 'canceled' | null;
}

export interface WatchedRun {
  /** Settles once the group is gone; `canceled` when `signal` stopped it (SIGTERM, then SIGKILL a second later). */
  readonly ended: Promise<WatchedEnd>;
}

/** How long a stopped group has between SIGTERM and SIGKILL. */
const KILL_AFTER_MS = 1000;

/**
 * Starts a command in its own process group, stdin closed, its stdout and stderr handed to `onText`
 * as they arrive (UTF-8 decoded); stopped by `signal`, or after `timeoutMs`.
 */
export function startWatched(
  command: string,
  args: readonly string[],
  opts: {
    env: Readonly<Record<string, string>>;
    cwd: string;
    timeoutMs: number;
    signal?: AbortSignal;
    onText(text: string, stream: 'stdout' | 'stderr'): void;
  },
): WatchedRun {
  const child = startChild({ command, args, env: opts.env, cwd: opts.cwd });
  child.stdin?.on('error', () => undefined);
  child.stdin?.end();
  child.stdout?.setEncoding('utf8').on('data', (t: string) => opts.onText(t, 'stdout'));
  child.stderr?.setEncoding('utf8').on('data', (t: string) => opts.onText(t, 'stderr'));
  let why: 'timeout' | 'canceled' | null = null;
  let killTimer: NodeJS.Timeout | undefined;
  const kill = (reason: 'timeout' | 'canceled') => {
    if (why !== null || child.pid === undefined) return;
    why = reason;
    signalGroup(child.pid, 'SIGTERM');
    killTimer = setTimeout(() => signalGroup(child.pid!, 'SIGKILL'), KILL_AFTER_MS);
    killTimer.unref();
  };
  const timer = setTimeout(() => kill('timeout'), opts.timeoutMs);
  timer.unref();
  const onAbort = () => kill('canceled');
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const ended = child.exited.then(async (r): Promise<WatchedEnd> => {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
    if ('spawnError' in r) return { exitCode: null, signal: null, failed: 'spawn' };
    // Grandchildren (the native codex behind its node wrapper) go with the group.
    if (child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
    clearTimeout(killTimer);
    // What it printed last is read before the end is told.
    await Promise.all([streamEnd(child.stdout), streamEnd(child.stderr)]);
    return { exitCode: r.code, signal: r.signal, failed: why };
  });
  if (opts.signal?.aborted) onAbort();
  return { ended };
}

function streamEnd(s: NodeJS.ReadableStream | null): Promise<void> {
  if (!s || (s as { readableEnded?: boolean }).readableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    s.once('end', resolve);
    s.once('close', resolve);
    s.once('error', () => resolve());
  });
}

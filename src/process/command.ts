import { execa } from 'execa';
import type { CommandResult } from './run-types.js';

// The one file that imports execa: short, bounded commands (a CLI's --version, its login status,
// `olp logins`' login commands). CLI runs are started by spawn.ts without it (see there why).

/**
 * Runs a short command (a CLI's --version or login status) to completion, bounded in time.
 * `input` is written to its stdin (a secret for `codex login --with-api-key`: never argv);
 * `signal` stops it early (olp shutting down while its start's status commands run).
 */
export async function runCommand(
  command: string,
  args: readonly string[],
  opts: {
    env: Readonly<Record<string, string>>;
    timeoutMs: number;
    cwd?: string;
    input?: string;
    signal?: AbortSignal;
  },
): Promise<CommandResult> {
  const r = await execa(command, args, {
    env: opts.env,
    extendEnv: false,
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
    ...(opts.signal ? { cancelSignal: opts.signal } : {}),
    ...(opts.input !== undefined ? { input: opts.input } : { stdin: 'ignore' as const }),
    reject: false,
    timeout: opts.timeoutMs,
    forceKillAfterDelay: 1000,
    maxBuffer: 1024 * 1024,
  });
  const failed = r.timedOut
    ? 'timeout'
    : r.isCanceled
      ? 'canceled'
      : r.exitCode === undefined && r.failed
        ? 'spawn'
        : null;
  return { exitCode: r.exitCode ?? null, stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? ''), failed };
}

/**
 * Runs a command that talks to the person at the terminal (`claude setup-token`, `codex login
 * --device-auth`): its stdout and stderr are olp's own, stdin too unless `stdin: 'ignore'`.
 * Ctrl-C reaches it through the terminal; olp itself ignores SIGINT meanwhile, so that it can
 * tidy up and say what happened once the command has gone.
 */
export async function runInteractive(
  command: string,
  args: readonly string[],
  opts: { env: Readonly<Record<string, string>>; timeoutMs: number; cwd?: string; stdin?: 'inherit' | 'ignore' },
): Promise<Omit<CommandResult, 'stdout' | 'stderr'> & { signal: string | null }> {
  const ignore = () => undefined;
  process.on('SIGINT', ignore);
  try {
    const r = await execa(command, args, {
      env: opts.env,
      extendEnv: false,
      ...(opts.cwd ? { cwd: opts.cwd } : {}),
      stdin: opts.stdin ?? 'inherit',
      stdout: 'inherit',
      stderr: 'inherit',
      reject: false,
      timeout: opts.timeoutMs,
      forceKillAfterDelay: 1000,
    });
    const failed = r.timedOut ? 'timeout' : r.exitCode === undefined && r.failed && !r.signal ? 'spawn' : null;
    return { exitCode: r.exitCode ?? null, signal: r.signal ?? null, failed };
  } finally {
    process.off('SIGINT', ignore);
  }
}

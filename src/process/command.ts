import { execa } from 'execa';
import type { CommandResult } from './run-types.js';

// The one file that imports execa: short, bounded commands (a CLI's --version, its login status).
// CLI runs are started by spawn.ts without it (see there why).

/** Runs a short command (a CLI's --version or login status) to completion, bounded in time. */
export async function runCommand(
  command: string,
  args: readonly string[],
  opts: { env: Readonly<Record<string, string>>; timeoutMs: number; cwd?: string },
): Promise<CommandResult> {
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

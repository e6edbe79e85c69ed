import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Backend, LoginUse, Turn } from '../backends/index.js';
import { type CommandResult, runCommand } from '../process/index.js';
import { toChildEnv } from '../workspace/index.js';
import type { CliVerdict } from './said.js';
import { toStatusTimeoutText } from './said.js';

// Where and how a login command runs: a throwaway home, the environment a run of the login gets,
// and what a run that could not finish means.

export type Env = Readonly<Record<string, string | undefined>>;

/** How long a person may take over a login in the browser (codex's device code lasts 15 minutes). */
export const INTERACTIVE_MS = 30 * 60_000;

const PROBE_TURN: Omit<Turn, 'login'> = { prompt: { system: null, text: '' }, cliModel: '' };

/** What the login commands share: the two CLIs, the host's environment and the status timeout. */
export interface LoginCliContext {
  readonly hostEnv: Env;
  readonly statusMs: number;
  readonly claude: Backend;
  readonly codex: Backend;
}

/** A throwaway home (0700) for one command, removed once `work` is done. */
export async function inHome<T>(work: (home: string) => Promise<T>): Promise<T> {
  const home = mkdtempSync(join(tmpdir(), 'olp-login-'));
  try {
    mkdirSync(join(home, 'tmp'), { mode: 0o700 });
    return await work(home);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** The environment a run of this login gets from the backend, in `home`. */
export function envFor(
  c: LoginCliContext,
  b: Backend,
  home: string,
  login: LoginUse,
  extra: Record<string, string> = {},
) {
  const place = { home, persistent: home, cwd: home, path: (n: string) => join(home, n) };
  return { ...toChildEnv(c.hostEnv, b.envPolicy({ ...PROBE_TURN, login }, place), home), ...extra };
}

/**
 * A CLI's status command in a throwaway home, with the environment a run of the login gets: its
 * result, or already a verdict when it could not run or did not answer in time (no verdict on the
 * credential: `ok` null).
 */
export async function runStatusInHome(
  c: LoginCliContext,
  b: Backend,
  args: readonly string[],
  login: LoginUse,
  extra: Record<string, string> = {},
): Promise<{ verdict: CliVerdict } | { result: CommandResult }> {
  const r = await inHome((home) =>
    runCommand(b.bin, args, { env: envFor(c, b, home, login, extra), cwd: home, timeoutMs: c.statusMs }),
  );
  if (r.failed === 'timeout')
    return { verdict: { ok: null, said: toStatusTimeoutText(b.id, [b.id, ...args].join(' '), c.statusMs / 1000) } };
  const why = cannotRun(b, r);
  return why ? { verdict: { ok: false, said: why } } : { result: r };
}

/** Why a CLI's command could not run to its end, if it could not. */
export function cannotRun(b: Backend, r: { failed: string | null; exitCode: number | null }): string | undefined {
  if (r.failed === 'spawn')
    return `could not run ${b.id} ('${b.bin}'): is it installed? (set its path with --${b.id}-bin)`;
  if (r.failed === 'timeout') return `${b.id} did not finish in time`;
  return undefined;
}

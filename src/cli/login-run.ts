import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Backend, LoginUse, Turn } from '../backends/index.js';
import { toChildEnv } from '../workspace/index.js';
import { toStatusTimeoutText } from './readiness.js';

// The CLIs' own login commands, as `olp logins` runs them for one member: `claude setup-token`,
// `codex login …`, and their status commands to check what was stored. Each runs in a throwaway
// home with the environment a run of that login gets (the allowlist, the operator's opted-in
// variables, never the host's provider keys or nested-session markers), so nothing of the
// operator's own login or home is seen or touched.

export type Env = Readonly<Record<string, string | undefined>>;

/** How long a person may take over a login in the browser (codex's device code lasts 15 minutes). */
export const INTERACTIVE_MS = 30 * 60_000;
/** `codex login --with-access-token` asks the server who the token belongs to. */
export const PIPED_MS = 60_000;

/**
 * What the CLI said of a credential, in a few words fit to print: accepted (`ok` true), refused
 * (false), or not known because its status command did not answer in time (null: not a verdict).
 */
export interface CliVerdict {
  ok: boolean | null;
  said: string;
}

/** A failure of a CLI's own login command, with its words (secrets masked). */
export class LoginFailed extends Error {}

const PROBE_TURN: Omit<Turn, 'login'> = { prompt: { system: null, text: '' }, cliModel: '' };

// Anything that looks like a credential, masked in what olp repeats of a CLI's words.
const SECRETISH = /\b(sk-[A-Za-z0-9_*-]{6,}|at-[A-Za-z0-9_-]{6,}|eyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*){0,2})/g;

/** A CLI's output as one short line for olp to repeat: credentials masked, whitespace collapsed. */
export function toSaid(text: string, secrets: readonly string[] = []): string {
  let t = text;
  for (const s of secrets) if (s) t = t.split(s).join('***');
  t = t.replace(SECRETISH, '***').replace(/\s+/g, ' ').trim();
  return t.length > 300 ? `${t.slice(0, 300)}…` : t;
}

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

/** A status command that did not answer in time: no verdict on the credential. */
export function notChecked(
  c: LoginCliContext,
  b: Backend,
  args: readonly string[],
  r: { failed: string | null },
): CliVerdict | undefined {
  return r.failed === 'timeout'
    ? { ok: null, said: toStatusTimeoutText(b.id, [b.id, ...args].join(' '), c.statusMs / 1000) }
    : undefined;
}

/** Why a CLI's command could not run to its end, if it could not. */
export function cannotRun(b: Backend, r: { failed: string | null; exitCode: number | null }): string | undefined {
  if (r.failed === 'spawn')
    return `could not run ${b.id} ('${b.bin}'): is it installed? (set its path with --${b.id}-bin)`;
  if (r.failed === 'timeout') return `${b.id} did not finish in time`;
  return undefined;
}

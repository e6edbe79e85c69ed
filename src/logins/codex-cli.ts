// codex's own login commands for `olp logins`: `codex login` (device code or a secret on stdin) into a
// staging CODEX_HOME that replaces the login's only once codex accepts it, and `codex login status`.
import { chmodSync, existsSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runCommand, runInteractive } from '../process/index.js';
import { type CredentialKind, ensurePrivateDir } from '../store/index.js';
import { cannotRun, envFor, INTERACTIVE_MS, inHome, type LoginCliContext, runStatusInHome } from './cli-run.js';
import { type CliVerdict, LoginFailed, toSaid } from './said.js';

/** `codex login --with-access-token` asks the server who the token belongs to. */
const PIPED_MS = 60_000;

/** `codex login status` in a login's CODEX_HOME. */
export async function codexStatus(c: LoginCliContext, name: string, codexHome: string): Promise<CliVerdict> {
  const run = await runStatusInHome(c, c.codex, ['login', 'status'], { name }, { CODEX_HOME: codexHome });
  if ('verdict' in run) return run.verdict;
  const r = run.result;
  const text = `${r.stdout}\n${r.stderr}`;
  // codex-cli 0.171: "Logged in using ChatGPT" / "… personal access token", "API key configured - sk-***…".
  const how =
    /Logged in using ([^\n]+)/.exec(text)?.[1]?.trim() ?? (/API key configured/.test(text) ? 'an API key' : undefined);
  if (r.exitCode === 0) return { ok: true, said: `logged in${how ? ` (${toSaid(how)})` : ''}` };
  const lines = text.split('\n').filter((l) => l.trim() && !/^WARNING: /.test(l));
  return { ok: false, said: `not logged in: ${toSaid(lines.join(' ')) || `exit ${r.exitCode}`}` };
}

/** One way of logging codex in, run with the staging CODEX_HOME in `env` and a throwaway `home`. */
export type CodexLoginStep = (env: Record<string, string>, home: string) => Promise<void>;

/**
 * Logs codex in for a login, into `codexHome` (made 0700): by device code at the terminal, or with the
 * secret on stdin. The old CODEX_HOME is replaced only once codex has written an auth.json and `codex
 * login status` accepts it; otherwise nothing changes and LoginFailed says why.
 */
export function codexLogin(
  c: LoginCliContext,
  name: string,
  codexHome: string,
  kind: CredentialKind,
  secret?: string,
): Promise<void> {
  return stageCodexLogin(c, name, codexHome, (env, home) =>
    kind === 'chatgpt' ? deviceLogin(c, env, home) : pipedLogin(c, env, home, kind, secret),
  );
}

/**
 * Runs one login `step` into a staging CODEX_HOME beside `codexHome`, and moves its auth.json in only
 * once `codex login status` accepts it. The staging home is removed however it ends.
 */
export async function stageCodexLogin(
  c: LoginCliContext,
  name: string,
  codexHome: string,
  step: CodexLoginStep,
): Promise<void> {
  const staging = `${codexHome}.new`;
  rmSync(staging, { recursive: true, force: true });
  ensurePrivateDir(staging);
  try {
    await inHome((home) => step(envFor(c, c.codex, home, { name }, { CODEX_HOME: staging }), home));
    const auth = join(staging, 'auth.json');
    if (!existsSync(auth)) throw new LoginFailed('codex login finished but wrote no auth.json; nothing was stored');
    chmodSync(auth, 0o600);
    const verdict = await codexStatus(c, name, staging);
    if (verdict.ok === null) throw new LoginFailed(`${verdict.said}, so nothing was stored; try again`);
    if (!verdict.ok) throw new LoginFailed(`codex does not accept the new login: ${verdict.said}`);
    // Renamed over the old one: a run that starts meanwhile links either the old auth.json or
    // the new one, never none. (What else codex left in the staging home is not needed.)
    ensurePrivateDir(codexHome);
    renameSync(auth, join(codexHome, 'auth.json'));
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** `codex login --device-auth` at the terminal. */
async function deviceLogin(c: LoginCliContext, env: Record<string, string>, home: string): Promise<void> {
  const r = await runInteractive(c.codex.bin, ['login', '--device-auth'], {
    env,
    cwd: home,
    timeoutMs: INTERACTIVE_MS,
    stdin: 'ignore',
  });
  const why = cannotRun(c.codex, r);
  if (why) throw new LoginFailed(why);
  if (r.exitCode !== 0)
    throw new LoginFailed(
      `codex login --device-auth failed (${r.signal ?? `exit ${r.exitCode}`}; codex's message is above)`,
    );
}

/** `codex login --with-api-key` or `--with-access-token`, the secret on stdin. */
async function pipedLogin(
  c: LoginCliContext,
  env: Record<string, string>,
  home: string,
  kind: CredentialKind,
  secret: string | undefined,
): Promise<void> {
  const flag = kind === 'api-key' ? '--with-api-key' : '--with-access-token';
  const r = await runCommand(c.codex.bin, ['login', flag], {
    env,
    cwd: home,
    timeoutMs: PIPED_MS,
    input: `${secret ?? ''}\n`,
  });
  const why = cannotRun(c.codex, r);
  if (why) throw new LoginFailed(why);
  if (r.exitCode !== 0) {
    const said = r.stderr
      .split('\n')
      .filter((l) => l.trim() && !/^WARNING: |^Reading .* from stdin/.test(l))
      .join(' ');
    throw new LoginFailed(`codex login ${flag} failed: ${toSaid(said, [secret ?? '']) || `exit ${r.exitCode}`}`);
  }
}

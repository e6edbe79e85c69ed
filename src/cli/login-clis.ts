import { createBackends } from '../backends/index.js';
import type { Config } from '../config/index.js';
import type { CredentialKind } from '../store/index.js';
import { runCommand, runInteractive } from '../process/index.js';
import { codexLogin, codexStatus } from './login-codex.js';
import {
  type CliVerdict,
  cannotRun,
  type Env,
  envFor,
  INTERACTIVE_MS,
  inHome,
  type LoginCliContext,
  LoginFailed,
  notChecked,
} from './login-run.js';

export { type CliVerdict, LoginFailed, toSaid } from './login-run.js';

/** `claude setup-token` at the terminal; the person then pastes the token it printed. */
async function setupToken(c: LoginCliContext, name: string): Promise<void> {
  const { claude } = c;
  const r = await inHome((home) =>
    runInteractive(claude.bin, ['setup-token'], {
      env: envFor(c, claude, home, { name }),
      cwd: home,
      timeoutMs: INTERACTIVE_MS,
    }),
  );
  const why = cannotRun(claude, r);
  if (why) throw new LoginFailed(why);
  if (r.exitCode !== 0)
    throw new LoginFailed(
      `claude setup-token did not finish (${r.signal ?? `exit ${r.exitCode}`}); nothing was stored`,
    );
}

/** `claude auth status` with the token as a run of the login gets it. */
async function claudeStatus(c: LoginCliContext, name: string, token: string): Promise<CliVerdict> {
  const { claude } = c;
  const r = await inHome((home) =>
    runCommand(claude.bin, ['auth', 'status'], {
      env: envFor(c, claude, home, { name, token }),
      cwd: home,
      timeoutMs: c.statusMs,
    }),
  );
  const late = notChecked(c, claude, ['auth', 'status'], r);
  if (late) return late;
  const why = cannotRun(claude, r);
  if (why) return { ok: false, said: why };
  const ok = claude.status.loggedIn(r.exitCode, r.stdout, r.stderr);
  const method = /"authMethod":\s*"([^"]*)"/.exec(r.stdout)?.[1];
  if (!ok) return { ok, said: `not logged in (exit ${r.exitCode}${method ? `, authMethod ${method}` : ''})` };
  // claude 2.1.197 and 2.1.332 answer `auth status` for a token in the environment without
  // asking the server: a revoked or expired token shows only when a request runs.
  const unchecked = method === 'oauth_token' ? '; the server sees it only when a request runs' : '';
  return { ok, said: `logged in${method ? ` (${method})` : ''}${unchecked}` };
}

/** Runs `claude` and `codex` for `olp logins`: the configured binaries, each in a home of its own. */
export function createLoginClis(config: Config, hostEnv: Env) {
  const { backends } = createBackends(config, hostEnv);
  const c: LoginCliContext = {
    hostEnv,
    statusMs: config.statusTimeout * 1000,
    claude: backends.find((b) => b.id === 'claude')!,
    codex: backends.find((b) => b.id === 'codex')!,
  };
  return {
    claudeBin: c.claude.bin,
    /** `codex login status` in a login's CODEX_HOME. */
    codexStatus: (name: string, codexHome: string): Promise<CliVerdict> => codexStatus(c, name, codexHome),
    codexBin: c.codex.bin,
    /** `claude setup-token` at the terminal; the person then pastes the token it printed. */
    setupToken: (name: string): Promise<void> => setupToken(c, name),
    /** `claude auth status` with the token as a run of the login gets it. */
    claudeStatus: (name: string, token: string): Promise<CliVerdict> => claudeStatus(c, name, token),
    /**
     * Logs codex in for a login, into `codexHome` (made 0700): by device code at the terminal, or
     * with the secret on stdin. The old CODEX_HOME is replaced only once codex has written an
     * auth.json and `codex login status` accepts it; otherwise nothing changes and LoginFailed says why.
     */
    codexLogin: (name: string, codexHome: string, kind: CredentialKind, secret?: string): Promise<void> =>
      codexLogin(c, name, codexHome, kind, secret),
  };
}

export type LoginClis = ReturnType<typeof createLoginClis>;

import { createBackends } from '../backends/index.js';
import type { Config } from '../config/index.js';
import type { CredentialKind } from '../store/index.js';
import { claudeStatus, setupToken } from './login-claude.js';
import { codexLogin, codexStatus } from './login-codex.js';
import type { Env, LoginCliContext } from './login-run.js';
import type { CliVerdict } from './login-said.js';

export { type CliVerdict, LoginFailed, toSaid } from './login-said.js';

// The CLIs' own login commands, as `olp logins` runs them for one member: `claude setup-token`,
// `codex login …`, and their status commands to check what was stored. Each runs in a throwaway
// home with the environment a run of that login gets (the allowlist, the operator's opted-in
// variables, never the host's provider keys or nested-session markers), so nothing of the
// operator's own login or home is seen or touched.

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

import { type Backend, createBackends } from '../backends/index.js';
import type { Config } from '../config/index.js';
import type { CredentialKind } from '../store/index.js';
import { type ClaudeSecret, claudeStatus, setupToken } from './claude-cli.js';
import { codexLogin, codexStatus } from './codex-cli.js';
import type { Env, LoginCliContext } from './cli-run.js';
import type { CliVerdict } from './said.js';

// The CLIs' own login commands, as `olp logins` runs them for one member: `claude setup-token`,
// `codex login …`, and their status commands to check what was stored. Each runs in a throwaway
// home with the environment a run of that login gets (the allowlist, the operator's opted-in
// variables, never the host's provider keys or nested-session markers), so nothing of the
// operator's own login or home is seen or touched.

/** The login commands' context from a daemon's (or a command's) backends. */
export function createLoginCliContext(backends: readonly Backend[], hostEnv: Env, statusMs: number): LoginCliContext {
  return {
    hostEnv,
    statusMs,
    claude: backends.find((b) => b.id === 'claude')!,
    codex: backends.find((b) => b.id === 'codex')!,
  };
}

/** Runs `claude` and `codex` for `olp logins`: the configured binaries, each in a home of its own. */
export function createLoginClis(config: Config, hostEnv: Env) {
  const { backends } = createBackends(config, hostEnv);
  const c = createLoginCliContext(backends, hostEnv, config.statusTimeout * 1000);
  return {
    claudeBin: c.claude.bin,
    /** `codex login status` in a login's CODEX_HOME. */
    codexStatus: (name: string, codexHome: string): Promise<CliVerdict> => codexStatus(c, name, codexHome),
    codexBin: c.codex.bin,
    /** `claude setup-token` at the terminal; the person then pastes the token it printed. */
    setupToken: (name: string): Promise<void> => setupToken(c, name),
    /** `claude auth status` with the token (or API key) as a run of the login gets it. */
    claudeStatus: (name: string, secret: ClaudeSecret): Promise<CliVerdict> => claudeStatus(c, name, secret),
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

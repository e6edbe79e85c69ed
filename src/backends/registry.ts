import type { Config } from '../config/index.js';
import { createClaudeBackend, defaultClaudeCredentials } from './claude/index.js';
import { createCodexBackend, defaultCodexAuth } from './codex/index.js';
import { resolveBin, type StatusProbe } from './detect.js';
import type { Backend } from './types.js';

/** The settings the backends are built from. */
export type BackendSettings = Pick<
  Config,
  | 'claudeBin'
  | 'claudeCredentials'
  | 'claudePassEnv'
  | 'claudeEnv'
  | 'codexBin'
  | 'codexAuth'
  | 'codexPassEnv'
  | 'codexEnv'
  | 'codexConfig'
>;

/** Both backends and how to ask each CLI for its version and login, from the configuration. */
export function createBackends(
  config: BackendSettings,
  hostEnv: Readonly<Record<string, string | undefined>>,
): { backends: Backend[]; probes: Map<string, StatusProbe> } {
  // Resolved once, here: a relative path means the directory olp started in, not a run's workspace.
  const claude = createClaudeBackend({
    bin: resolveBin(config.claudeBin, hostEnv.PATH),
    credentials: config.claudeCredentials ?? defaultClaudeCredentials(hostEnv),
    passEnv: config.claudePassEnv,
    env: config.claudeEnv,
  });
  const codex = createCodexBackend({
    bin: resolveBin(config.codexBin, hostEnv.PATH),
    auth: config.codexAuth ?? defaultCodexAuth(hostEnv),
    passEnv: config.codexPassEnv,
    env: config.codexEnv,
    config: config.codexConfig,
  });
  const settings = new Map([
    [claude, { pass: config.claudePassEnv, env: config.claudeEnv, flag: '--claude-bin' }],
    [codex, { pass: config.codexPassEnv, env: config.codexEnv, flag: '--codex-bin' }],
  ]);
  const probes = new Map<string, StatusProbe>();
  for (const [b, s] of settings) {
    // An API key the operator hands to the CLI replaces a login.
    const apiKeyConfigured = b.apiKeyVars.some((n) => (s.pass.includes(n) && hostEnv[n]) || s.env[n]);
    probes.set(b.id, {
      ...b.status,
      loginFix: b.status.loginCommand,
      installFix: `${b.status.installCommand}   (or: olp serve ${s.flag} /path/to/${b.id})`,
      apiKeyConfigured,
    });
  }
  return { backends: [claude, codex], probes };
}

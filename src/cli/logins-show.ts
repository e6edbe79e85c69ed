import { existsSync, readFileSync } from 'node:fs';
import { defaultClaudeCredentials, defaultCodexAuth } from '../backends/index.js';
import type { Config } from '../config/index.js';
import { type CliVerdict, type LoginClis, loginPaths, MACHINE_LOGIN } from '../logins/index.js';
import { describePlans } from '../plan/index.js';
import type { LoginCli, Store } from '../store/index.js';
import { table } from './keys.js';

// `olp logins list` and `status`: what olp knows of each login (kinds, files, keys, plan), never a
// secret; `status` also asks each CLI whether it takes the login's credential.

type Env = Readonly<Record<string, string | undefined>>;

/** The machine's own login files, as the configuration names them. */
function machineFiles(config: Config, env: Env) {
  return {
    claude: config.claudeCredentials ?? defaultClaudeCredentials(env),
    codex: config.codexAuth ?? defaultCodexAuth(env),
  };
}

/** The active keys without a login: the machine's. */
const machineKeys = (store: Store) =>
  store.keys
    .list()
    .filter((k) => k.revokedAt === null && k.login === null)
    .map((k) => k.name);

/** "claude allowed 40 %, codex rejected": the plan states still current for a login's CLIs. */
function planSummary(store: Store, login: string | null, now: number): string {
  const parts = store.plans
    .list()
    .filter((r) => r.resetsAt === null || r.resetsAt > now)
    .flatMap((r) => {
      const cli = (['claude', 'codex'] as const).find((b) => r.backend === (login === null ? b : `${b}@${login}`));
      if (!cli) return [];
      return [`${cli} ${r.status}${r.utilization === null ? '' : ` ${Math.round(r.utilization * 100)} %`}`];
    });
  return parts.length > 0 ? parts.join(', ') : '-';
}

/** `olp logins list`: the machine's own login first, then each login. */
export function toLoginList(store: Store, config: Config, env: Env, now = Date.now()): string {
  const files = machineFiles(config, env);
  return table([
    ['NAME', 'CLAUDE', 'CODEX', 'KEYS', 'PLAN'],
    [
      MACHINE_LOGIN,
      existsSync(files.claude) ? 'login file' : '-',
      existsSync(files.codex) ? 'login file' : '-',
      machineKeys(store).join(',') || '-',
      planSummary(store, null, now),
    ],
    ...store.logins
      .list()
      .map((l) => [
        l.name,
        l.claude ?? '-',
        l.codex ?? '-',
        store.logins.keysOf(l.name).join(',') || '-',
        planSummary(store, l.name, now),
      ]),
  ]);
}

function readToken(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * `olp logins status NAME`: its credentials (kind and file) and what each CLI says of them, its
 * keys and plan; `ok` is false when a credential is missing or refused.
 */
export async function runLoginStatus(
  store: Store,
  config: Config,
  env: Env,
  clis: () => LoginClis,
  name: string,
): Promise<{ text: string; ok: boolean }> {
  const scopes = name === MACHINE_LOGIN ? ['claude', 'codex'] : [`claude@${name}`, `codex@${name}`];
  const plans =
    describePlans(
      store.plans.list().filter((r) => scopes.includes(r.backend)),
      Date.now(),
    ).join('; ') || 'no report yet';
  if (name === MACHINE_LOGIN) {
    const files = machineFiles(config, env);
    const file = (f: string) => `login file ${f}${existsSync(f) ? '' : ' (missing)'}`;
    const text = table([
      ['login', `${MACHINE_LOGIN} (this machine's own CLI logins; olp doctor checks them)`],
      ['claude', file(files.claude)],
      ['codex', file(files.codex)],
      ['keys', machineKeys(store).join(', ') || 'none'],
      ['plan', plans],
    ]);
    return { text, ok: true };
  }
  const row = store.logins.get(name);
  if (!row) throw new Error(`there is no login named '${name}' (olp logins list shows them)`);
  const p = loginPaths(config.stateDir, name);
  let ok = true;
  const verdict = (cli: LoginCli, file: string, v: CliVerdict | undefined): string => {
    const kind = row[cli];
    if (!kind) return `- (add one: olp logins add ${name} --${cli})`;
    if (!v) {
      ok = false;
      return `${kind}, ${file}: MISSING (store it again: olp logins rotate ${name} --${cli})`;
    }
    // Not answered in time: said as it is, and no reason to fail (nothing is missing or refused).
    if (v.ok === null) return `${kind}, ${file}: ${v.said}`;
    ok &&= v.ok;
    const rejected = `REJECTED: ${v.said} (replace it: olp logins rotate ${name} --${cli})`;
    return `${kind}, ${file}: ${v.ok ? v.said : rejected}`;
  };
  const apiKey = row.claude === 'api-key';
  const claudeFile = apiKey ? p.claudeApiKey : p.claudeToken;
  const token = row.claude ? readToken(claudeFile) : undefined;
  const claude = token ? await clis().claudeStatus(name, apiKey ? { apiKey: token } : { token }) : undefined;
  const codex = row.codex && existsSync(p.codexAuth) ? await clis().codexStatus(name, p.codexHome) : undefined;
  const keys = store.logins.keysOf(name);
  const text = table([
    ['login', `${name} (added ${row.createdAt}, changed ${row.updatedAt})`],
    ['claude', verdict('claude', claudeFile, claude)],
    ['codex', verdict('codex', p.codexAuth, codex)],
    ['keys', keys.join(', ') || `none (olp keys set KEY --login ${name})`],
    ['plan', plans],
  ]);
  return { text, ok };
}

import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { defaultClaudeCredentials, defaultCodexAuth, type Detection, type LoginUse } from '../backends/index.js';
import type { Config } from '../config/index.js';
import { loginPaths, MACHINE_LOGIN } from '../logins/index.js';
import { readLogins, type CredentialKind, type LoginRecord } from '../store/index.js';
import { toSeconds } from './output.js';

// `olp doctor`'s logins: which credential each login gives each CLI, whether the CLI takes it, and
// where a refreshable login file is shared by CLIs that could refresh it at once.

const KIND: Record<CredentialKind, string> = {
  'setup-token': 'setup token (long-lived, never refreshed)',
  chatgpt: 'ChatGPT login (refreshed by codex; olp lets one run at a time do it)',
  'api-key': 'API key (never refreshed)',
  'access-token': 'access token (never refreshed)',
};

/** What doctor checks for one login's CLI: the credential a run gets. */
export interface LoginCheck {
  login: string;
  cli: 'claude' | 'codex';
  use: LoginUse;
}

/** The state dir's logins with a credential for each CLI, as runs get them (secrets read from their files). */
export function loginChecks(config: Config): {
  checks: LoginCheck[];
  logins: LoginRecord[];
  keys: Map<string, string[]>;
  sharing: string[];
} {
  const { logins, keys, sharing } = readLogins(config.stateDir);
  const checks: LoginCheck[] = [];
  for (const l of logins) {
    const p = loginPaths(config.stateDir, l.name);
    if (l.claude) {
      const apiKey = l.claude === 'api-key';
      let token = '';
      try {
        token = readFileSync(apiKey ? p.claudeApiKey : p.claudeToken, 'utf8').trim();
      } catch {}
      checks.push({
        login: l.name,
        cli: 'claude',
        use: apiKey ? { name: l.name, apiKey: token } : { name: l.name, token },
      });
    }
    if (l.codex) checks.push({ login: l.name, cli: 'codex', use: { name: l.name, file: p.codexAuth } });
  }
  return { checks, logins, keys, sharing };
}

/** What a codex auth.json holds, as `codex login` writes it (0.171). */
function codexKind(text: string): CredentialKind | undefined {
  try {
    const auth = JSON.parse(text) as {
      auth_mode?: unknown;
      tokens?: { refresh_token?: unknown } | null;
      personal_access_token?: unknown;
    };
    if (auth.tokens?.refresh_token) return 'chatgpt';
    if (auth.auth_mode === 'apikey') return 'api-key';
    if (auth.personal_access_token) return 'access-token';
  } catch {}
  return undefined;
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The machine's own login files: what each holds, and a warning where runs could race on a refresh. */
function machineLines(config: Config, env: Readonly<Record<string, string | undefined>>) {
  const warnings: string[] = [];
  const claudeFile = config.claudeCredentials ?? defaultClaudeCredentials(env);
  const claudeText = read(claudeFile);
  let claude = claudeText === undefined ? `no login file (${claudeFile})` : `login file ${claudeFile}`;
  if (claudeText !== undefined && /"refreshToken"\s*:\s*"[^"]/.test(claudeText)) {
    claude +=
      basename(claudeFile) === '.credentials.json'
        ? " (refreshed by claude; runs share your claude's refresh locks: one refresh at a time)"
        : ' (refreshed by claude)';
    if (basename(claudeFile) !== '.credentials.json')
      warnings.push(
        `claude: ${claudeFile} is linked into every run (its name is not .credentials.json), so concurrent runs ` +
          'can each refresh it and log you out; keep it as .credentials.json in its directory, or give olp setup ' +
          'tokens (olp logins add NAME --claude)',
      );
  }
  const codexFile = config.codexAuth ?? defaultCodexAuth(env);
  const codexText = read(codexFile);
  let codex = codexText === undefined ? `no login file (${codexFile})` : `login file ${codexFile}`;
  const kind = codexText === undefined ? undefined : codexKind(codexText);
  if (kind === 'chatgpt') {
    codex += ' (ChatGPT login, refreshed by codex)';
    warnings.push(
      `codex: ${codexFile} is a ChatGPT login shared by olp's runs and any codex you run yourself; olp's runs ` +
        'refresh it one at a time, but one of yours starting as its token expires can still spend the same refresh ' +
        "token; a login of olp's own (olp logins add NAME --codex) rules that out",
    );
  } else if (kind) codex += ` (${KIND[kind]})`;
  return { claude, codex, warnings };
}

/**
 * The logins section of `olp doctor`: one block per login (the machine's first) with each CLI's
 * credential kind, whether the CLI accepts it (`found`: detections with the login's credential),
 * and the keys it serves. Returns the lines, and fixes and warnings to print with the others.
 */
export function describeLogins(
  config: Config,
  env: Readonly<Record<string, string | undefined>>,
  logins: readonly LoginRecord[],
  keys: ReadonlyMap<string, string[]>,
  sharing: readonly string[],
  found: ReadonlyMap<string, Detection>,
): { lines: string[]; fixes: string[]; warnings: string[] } {
  const machine = machineLines(config, env);
  const served = (name: string) => `keys: ${(keys.get(name) ?? []).join(', ') || 'none'}`;
  const lines = [
    `${MACHINE_LOGIN} (the machine's own; ${served(MACHINE_LOGIN)})`,
    `  claude  ${machine.claude}`,
    `  codex   ${machine.codex}`,
  ];
  const fixes: string[] = [];
  for (const l of logins) {
    lines.push(`${l.name} (${served(l.name)})`);
    for (const cli of ['claude', 'codex'] as const) {
      const kind = l[cli];
      if (!kind) {
        lines.push(`  ${cli.padEnd(6)}  none (olp logins add ${l.name} --${cli})`);
        continue;
      }
      const d = found.get(`${l.name}/${cli}`);
      const state = d?.loginTimeout
        ? `; not checked (its status command did not answer within ${toSeconds(d.loginTimeout.seconds)})`
        : d === undefined || d.login === 'unknown'
          ? ''
          : d.login === 'not_logged_in'
            ? '; NOT accepted by the CLI'
            : '; accepted by the CLI';
      lines.push(`  ${cli.padEnd(6)}  ${KIND[kind]}${state}`);
      if (d?.login === 'not_logged_in') fixes.push(`login ${l.name}: olp logins rotate ${l.name} --${cli}`);
    }
  }
  // The vendors' terms: a login is its owner's; members are served by logins of their own.
  const shared = sharing.length
    ? [
        `member keys on the machine's own login: ${sharing.join(', ')}; both vendors' terms forbid making one ` +
          'account available to others: give each member a login of their own (olp logins add NAME --claude, then ' +
          'olp keys set KEY --login NAME; docs/family.md, Accounts and terms)',
      ]
    : [];
  return { lines, fixes, warnings: [...machine.warnings, ...shared] };
}

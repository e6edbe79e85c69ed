import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LoginUse } from '../backends/index.js';
import { loginNotSetUp, type ProxyError } from '../errors/index.js';
import { ensurePrivateDir, type LoginCli, type LoginStore } from '../store/index.js';

export { createRefreshGate, type RefreshGate, type Turnstile } from './refresh.js';

// A login is one person's CLI credentials (see ARCHITECTURE §13): a claude setup token, a codex
// CODEX_HOME of its own. Its row (which CLIs, what kind) is in the state database; its secrets are
// files under <state>/logins/<name>/ (0600 in 0700 directories), read when a run is started and
// handed to the run through its environment or its home only, never argv.

/** The name `olp logins` and `olp keys --login` use for the machine's own CLI logins (a key with no login). */
export const MACHINE_LOGIN = 'machine';

/** Login names: a letter or digit, then up to 31 letters, digits, '.', '_' or '-'. */
const LOGIN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/;

/** Where a login's secrets live. */
export function loginPaths(stateDir: string, name: string) {
  const dir = join(stateDir, 'logins', name);
  return {
    dir,
    claudeToken: join(dir, 'claude-token'),
    codexHome: join(dir, 'codex'),
    codexAuth: join(dir, 'codex', 'auth.json'),
  };
}

/** A login name a command line may create or name; throws with the rule otherwise. */
export function checkLoginName(name: string): string {
  if (!LOGIN_NAME.test(name))
    throw new Error(`invalid login name '${name}': use 1-32 letters, digits, '.', '_' or '-'`);
  if (name === MACHINE_LOGIN) throw new Error(`'${MACHINE_LOGIN}' is the machine's own login; pick another name`);
  return name;
}

/**
 * A claude setup token as pasted: one line, `sk-ant-oat…` (what `claude setup-token` prints).
 * Throws naming what is wrong (the token itself is never echoed).
 */
export function checkClaudeToken(raw: string): string {
  const token = raw.trim();
  if (token === '') throw new Error('no token was given (paste the one `claude setup-token` printed)');
  if (/\s/.test(token)) throw new Error('the token has spaces or line breaks inside: paste it as one line');
  if (token.startsWith('sk-ant-api'))
    throw new Error('that is an Anthropic API key, not a subscription token: make one with `claude setup-token`');
  if (!token.startsWith('sk-ant-oat'))
    throw new Error("that does not look like a claude setup token (they start 'sk-ant-oat')");
  return token;
}

/** Writes a private file whole (aside, then renamed over), in a 0700 directory. */
export function writeSecret(file: string, content: string): void {
  ensurePrivateDir(join(file, '..'));
  const aside = `${file}.${process.pid}.tmp`;
  writeFileSync(aside, content, { mode: 0o600 });
  renameSync(aside, file);
}

/** Stores a login's claude setup token. */
export function saveClaudeToken(stateDir: string, name: string, token: string): void {
  ensurePrivateDir(join(stateDir, 'logins'));
  writeSecret(loginPaths(stateDir, name).claudeToken, `${checkClaudeToken(token)}\n`);
}

/** Deletes a login's secrets for one CLI, or all of them. */
export function removeLoginFiles(stateDir: string, name: string, cli?: LoginCli): void {
  const p = loginPaths(stateDir, name);
  if (cli === 'claude') rmSync(p.claudeToken, { force: true });
  else if (cli === 'codex') rmSync(p.codexHome, { recursive: true, force: true });
  else rmSync(p.dir, { recursive: true, force: true });
}

/** How a CLI's credential reaches a key's runs: a login's, or undefined for the machine's own. */
export type LoginAnswer = LoginUse | ProxyError | undefined;

/**
 * The daemon's view of the logins: for a key's login and a CLI, the credential its runs get, or
 * why the key cannot run that CLI. Answers are kept until a login changes (by this process or
 * `olp logins` in another).
 */
export function createLogins(o: { stateDir: string; store: LoginStore }) {
  const cache = new Map<string, LoginAnswer>();
  let seen = -1;

  function resolve(name: string, cli: string): LoginAnswer {
    const row = o.store.get(name);
    if (!row)
      return loginNotSetUp(
        `This key is bound to the login '${name}', which olp no longer has. The owner can add it again (olp ` +
          `logins add ${name} --claude, or --codex) or bind the key to another login (olp keys set KEY --login ` +
          'NAME).',
      );
    const p = loginPaths(o.stateDir, name);
    if (cli === 'claude') {
      const token = row.claude === 'setup-token' ? readToken(p.claudeToken) : undefined;
      if (token) return { name, token };
    } else if (cli === 'codex') {
      if (row.codex !== null && existsSync(p.codexAuth)) return { name, file: p.codexAuth };
    } else return undefined;
    return loginNotSetUp(
      `The login '${name}' this key is bound to has no ${cli} credential. The owner can add one (olp logins add ` +
        `${name} --${cli}).`,
    );
  }

  /** The logins' refused credentials (`name\0cli`), read again whenever a login may have changed. */
  let refused = new Set<string>();
  function fresh(): void {
    const version = o.store.version();
    if (version === seen) return;
    cache.clear();
    refused = new Set(
      o.store
        .list()
        .flatMap((r) => (['claude', 'codex'] as const).filter((c) => r.refused[c]).map((c) => `${r.name}\u0000${c}`)),
    );
    seen = o.store.version();
  }

  return {
    /** The credential for the key's login (null: the machine's) and the CLI. */
    use(login: string | null, cli: string): LoginAnswer {
      if (login === null) return undefined;
      fresh();
      const id = `${login}\u0000${cli}`;
      if (!cache.has(id)) cache.set(id, resolve(login, cli));
      return cache.get(id);
    },
    /**
     * How a run on the login ended for the CLI: refused by the provider (its credential needs
     * renewing: the page shows it until then), or answered (a refusal noted before is forgotten).
     * Writes only when that changes what is stored.
     */
    noteRun(login: string, cli: string, refusal: { detail: string } | null): void {
      if (cli !== 'claude' && cli !== 'codex') return;
      fresh();
      const id = `${login}\u0000${cli}`;
      if (refusal === null && !refused.has(id)) return;
      if (!o.store.get(login)) return;
      o.store.setRefused(login, cli, refusal && { at: new Date().toISOString(), detail: refusal.detail.slice(0, 300) });
    },
  };
}

export type Logins = ReturnType<typeof createLogins>;

function readToken(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

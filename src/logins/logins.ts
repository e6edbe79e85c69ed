import { existsSync } from 'node:fs';
import type { LoginUse } from '../backends/index.js';
import { loginNotSetUp, type ProxyError } from '../errors/index.js';
import type { LoginStore } from '../store/index.js';
import { loginPaths, readToken } from './secrets.js';

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
      const apiKey = row.claude === 'api-key' ? readToken(p.claudeApiKey) : undefined;
      if (apiKey) return { name, apiKey };
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

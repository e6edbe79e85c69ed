import type { Database } from 'better-sqlite3';
import type { WriteWatch } from './watch.js';

/** The CLIs a login can hold a credential for. */
export type LoginCli = 'claude' | 'codex';

/**
 * What a login holds for one CLI: `setup-token` (claude's long-lived token), or a codex
 * `CODEX_HOME` logged in with a ChatGPT account (`chatgpt`), an API key or an access token.
 */
export type CredentialKind = 'setup-token' | 'chatgpt' | 'api-key' | 'access-token';

/** A login's credential the provider refused on a run: when, and what the CLI said (never the secret). */
export interface LoginRefusal {
  at: string;
  detail: string;
}

/** A login as stored: its name and the kind of credential it has for each CLI (null: none). */
export interface LoginRecord {
  name: string;
  createdAt: string;
  updatedAt: string;
  claude: CredentialKind | null;
  codex: CredentialKind | null;
  /** Per CLI, the provider's last refusal of the credential since it was set and last worked. */
  refused: Record<LoginCli, LoginRefusal | null>;
}

interface Row {
  name: string;
  created_at: string;
  updated_at: string;
  claude: string | null;
  codex: string | null;
  claude_refused: string | null;
  codex_refused: string | null;
}

const KINDS: readonly string[] = ['setup-token', 'chatgpt', 'api-key', 'access-token'];
const kind = (raw: string | null): CredentialKind | null =>
  raw !== null && KINDS.includes(raw) ? (raw as CredentialKind) : null;

function refusal(raw: string | null): LoginRefusal | null {
  if (raw === null) return null;
  try {
    const v = JSON.parse(raw) as Partial<LoginRefusal>;
    return typeof v.at === 'string' ? { at: v.at, detail: typeof v.detail === 'string' ? v.detail : '' } : null;
  } catch {
    return null;
  }
}

function toRecord(r: Row): LoginRecord {
  return {
    name: r.name,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    claude: kind(r.claude),
    codex: kind(r.codex),
    refused: { claude: refusal(r.claude_refused), codex: refusal(r.codex_refused) },
  };
}

/** The logins' rows: which CLIs each has a credential for. The secrets themselves are files (src/logins). */
export function createLoginStore(db: Database, watch: WriteWatch) {
  const byName = db.prepare<[string], Row>('SELECT * FROM logins WHERE name = ?');
  const all = db.prepare<[], Row>('SELECT * FROM logins ORDER BY name');
  const upsert = (cli: LoginCli) =>
    db.prepare(
      `INSERT INTO logins (name, created_at, updated_at, ${cli}) VALUES (@name, @at, @at, @kind)
       ON CONFLICT (name) DO UPDATE SET ${cli} = excluded.${cli}, ${cli}_refused = NULL,
         updated_at = excluded.updated_at`,
    );
  const set = { claude: upsert('claude'), codex: upsert('codex') };
  const clear = {
    claude: db.prepare('UPDATE logins SET claude = NULL, claude_refused = NULL, updated_at = ? WHERE name = ?'),
    codex: db.prepare('UPDATE logins SET codex = NULL, codex_refused = NULL, updated_at = ? WHERE name = ?'),
  };
  const refuse = {
    claude: db.prepare('UPDATE logins SET claude_refused = ? WHERE name = ?'),
    codex: db.prepare('UPDATE logins SET codex_refused = ? WHERE name = ?'),
  };
  const remove = db.prepare('DELETE FROM logins WHERE name = ?');
  const boundKeys = db.prepare<[string], { name: string }>(
    'SELECT name FROM keys WHERE login = ? AND revoked_at IS NULL ORDER BY name',
  );
  let written = 0;
  return {
    get(name: string): LoginRecord | undefined {
      const row = byName.get(name);
      return row && toRecord(row);
    },
    list(): LoginRecord[] {
      return all.all().map(toRecord);
    },
    /** Records that the login (made if new) now has a credential of this kind for the CLI. */
    set(name: string, cli: LoginCli, k: CredentialKind): LoginRecord {
      written++;
      set[cli].run({ name, at: new Date().toISOString(), kind: k });
      return toRecord(byName.get(name)!);
    },
    /** Forgets the login's credential for one CLI; the login stays. */
    clear(name: string, cli: LoginCli): void {
      written++;
      clear[cli].run(new Date().toISOString(), name);
    },
    /** Notes the provider's refusal of the login's credential for the CLI (null: it worked again). */
    setRefused(name: string, cli: LoginCli, r: LoginRefusal | null): void {
      written++;
      refuse[cli].run(r === null ? null : JSON.stringify(r), name);
    },
    /** Removes the login; false if there was none. Its keys stay bound to the name (and are refused). */
    remove(name: string): boolean {
      written++;
      return remove.run(name).changes > 0;
    },
    /** The active keys bound to a login (by name). */
    keysOf(name: string): string[] {
      return boundKeys.all(name).map((r) => r.name);
    },
    /** A number that changes whenever a login may have changed, by this process or another. */
    version(): number {
      return written + watch.generation();
    },
  };
}

export type LoginStore = ReturnType<typeof createLoginStore>;

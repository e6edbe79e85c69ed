import { join } from 'node:path';
import type { Config } from '../config/index.js';

import {
  checkClaudeApiKey,
  checkClaudeToken,
  checkLoginName,
  createLoginClis,
  loginPaths,
  type LoginClis,
  MACHINE_LOGIN,
  removeLoginFiles,
  saveClaudeApiKey,
  saveClaudeToken,
} from '../logins/index.js';
import { ensurePrivateDir, type CredentialKind, type LoginCli, type LoginRecord, type Store } from '../store/index.js';
import { UsageError } from './usage-error.js';
import { runLoginStatus, toLoginList } from './logins-show.js';
import { askHidden, readPipedSecret } from './secret-input.js';

export { LOGIN_FLAGS, loginsHelp } from './logins-help.js';

type Values = Record<string, string | boolean | undefined>;

/** Where `olp logins` reads secrets and writes what it did. */
export interface LoginsIo {
  env: Readonly<Record<string, string | undefined>>;
  stdin: NodeJS.ReadStream;
  /** Where prompts go (stderr: stdout stays for results). */
  prompt: NodeJS.WritableStream;
  out(s: string): void;
  err(s: string): void;
}

interface Ctx {
  store: Store;
  config: Config;
  io: LoginsIo;
  values: Values;
  clis: () => LoginClis;
}

type Kinds = { codexKind: CredentialKind; claudeKind: CredentialKind };

/** Which CLIs the flags name, and how each is to log in. */
function toWanted(values: Values, sub: string) {
  const apiKey = values['api-key'] === true;
  const accessToken = values['access-token'] === true;
  if (apiKey && accessToken) throw new UsageError('--api-key and --access-token contradict each other');
  if (accessToken && !values.codex) throw new UsageError('--access-token goes with --codex');
  if (apiKey && !values.codex && !values.claude) throw new UsageError('--api-key goes with --claude or --codex');
  if (apiKey && values.claude && values.codex)
    throw new UsageError('--api-key goes with one CLI at a time (--claude or --codex)');
  if (values.stdin && !values.claude) throw new UsageError('--stdin goes with --claude');
  const clis: LoginCli[] = [];
  if (values.claude) clis.push('claude');
  if (values.codex) clis.push('codex');
  if (clis.length === 0) throw new UsageError(`olp logins ${sub}: say which CLI (--claude, --codex)`);
  const codexKind: CredentialKind = apiKey ? 'api-key' : accessToken ? 'access-token' : 'chatgpt';
  const claudeKind: CredentialKind = apiKey ? 'api-key' : 'setup-token';
  return { clis, codexKind, claudeKind };
}

const hint = (kind: CredentialKind) => (kind === 'api-key' ? 'OpenAI API key' : 'access token');

/** An Anthropic API key from stdin (asked for at a terminal). */
async function obtainClaudeApiKey(io: LoginsIo): Promise<string> {
  const raw = io.stdin.isTTY
    ? await askHidden('Paste the Anthropic API key: ', io.stdin, io.prompt)
    : await readPipedSecret(io.stdin);
  return checkClaudeApiKey(raw);
}

/** A claude setup token: made at the terminal with `claude setup-token` and pasted, or read from stdin. */
async function obtainClaudeToken(c: Ctx, name: string): Promise<string> {
  const { io } = c;
  if (!io.stdin.isTTY) return checkClaudeToken(await readPipedSecret(io.stdin));
  if (!c.values.stdin) {
    io.err(`Running ${c.clis().claudeBin} setup-token: sign in with ${name}'s Claude account in the browser.\n`);
    await c.clis().setupToken(name);
  }
  return checkClaudeToken(await askHidden('Paste the token claude printed: ', io.stdin, io.prompt));
}

/** A codex API key or access token from stdin (asked for at a terminal). */
async function obtainCodexSecret(io: LoginsIo, kind: CredentialKind): Promise<string> {
  const raw = io.stdin.isTTY
    ? await askHidden(`Paste the ${hint(kind)}: `, io.stdin, io.prompt)
    : await readPipedSecret(io.stdin);
  const secret = raw.trim();
  if (secret === '') throw new Error(`no ${hint(kind)} was given on stdin`);
  if (/\s/.test(secret)) throw new Error(`the ${hint(kind)} has spaces or line breaks inside: give it as one line`);
  return secret;
}

/** Stores one CLI's credential for a login (new, or replacing the one it has); the row last. */
async function storeCredential(c: Ctx, name: string, cli: LoginCli, kinds: Kinds): Promise<void> {
  const { stateDir } = c.config;
  const codexKind = kinds.codexKind;
  ensurePrivateDir(join(stateDir, 'logins'));
  const p = loginPaths(stateDir, name);
  if (cli === 'claude' && kinds.claudeKind === 'api-key') {
    saveClaudeApiKey(stateDir, name, await obtainClaudeApiKey(c.io));
    c.store.logins.set(name, 'claude', 'api-key');
    c.io.err(`Stored an Anthropic API key for the login '${name}' (${p.claudeApiKey}).\n`);
    return;
  }
  if (cli === 'claude') {
    saveClaudeToken(stateDir, name, await obtainClaudeToken(c, name));
    c.store.logins.set(name, 'claude', 'setup-token');
    c.io.err(`Stored a claude setup token for the login '${name}' (${p.claudeToken}).\n`);
    return;
  }
  const secret = codexKind === 'chatgpt' ? undefined : await obtainCodexSecret(c.io, codexKind);
  if (codexKind === 'chatgpt') c.io.err(`Running ${c.clis().codexBin} login --device-auth for the login '${name}'.\n`);
  await c.clis().codexLogin(name, p.codexHome, codexKind, secret);
  c.store.logins.set(name, 'codex', codexKind);
  c.io.err(`Stored a codex login (${codexKind}) for the login '${name}' (${p.codexAuth}).\n`);
}

function boundKeysLine(c: Ctx, name: string): string {
  const keys = c.store.logins.keysOf(name);
  return keys.length > 0
    ? `Keys on this login: ${keys.join(', ')}.\n`
    : `No key uses it yet: olp keys add KEY --login ${name} (or olp keys set KEY --login ${name}).\n`;
}

async function add(c: Ctx, name: string): Promise<number> {
  checkLoginName(name);
  const { clis, ...kinds } = toWanted(c.values, 'add');
  const row = c.store.logins.get(name);
  for (const cli of clis)
    if (row?.[cli])
      throw new Error(
        `the login '${name}' already has a ${cli} credential (${row[cli]}); replace it with: olp logins rotate ` +
          `${name} --${cli}`,
      );
  if (clis.length === 2 && kinds.codexKind !== 'chatgpt' && !c.io.stdin.isTTY)
    throw new UsageError('both secrets cannot come from one stdin: add --claude and --codex one at a time');
  try {
    for (const cli of clis) await storeCredential(c, name, cli, kinds);
  } finally {
    // Nothing stored for a new login: no empty directory is left behind.
    if (!c.store.logins.get(name)) removeLoginFiles(c.config.stateDir, name);
  }
  c.io.err(boundKeysLine(c, name));
  return 0;
}

function existing(c: Ctx, name: string, doing: string): LoginRecord {
  if (name === MACHINE_LOGIN)
    throw new Error(
      `'${MACHINE_LOGIN}' is this machine's own CLI login: olp does not ${doing} it (use the CLIs' own login ` +
        'commands; olp doctor checks them)',
    );
  const row = c.store.logins.get(name);
  if (!row) throw new Error(`there is no login named '${name}' (olp logins list shows them)`);
  return row;
}

async function rotate(c: Ctx, name: string): Promise<number> {
  const row = existing(c, name, 'rotate');
  const { clis, ...kinds } = toWanted(c.values, 'rotate');
  if (clis.length !== 1) throw new UsageError('olp logins rotate: one CLI at a time (--claude or --codex)');
  const cli = clis[0]!;
  if (!row[cli])
    throw new Error(
      `the login '${name}' has no ${cli} credential to replace; add one with: olp logins add ${name} --${cli}`,
    );
  await storeCredential(c, name, cli, kinds);
  c.io.err(`Replaced. Runs of its keys started from now on use the new ${cli} credential.\n`);
  return 0;
}

function remove(c: Ctx, name: string): number {
  const row = existing(c, name, 'remove');
  if (c.values.claude && c.values.codex)
    throw new UsageError('olp logins remove: one CLI, or neither for the whole login');
  const cli: LoginCli | undefined = c.values.claude ? 'claude' : c.values.codex ? 'codex' : undefined;
  const keys = c.store.logins.keysOf(name);
  if (cli) {
    if (!row[cli]) throw new Error(`the login '${name}' has no ${cli} credential`);
    c.store.logins.clear(name, cli);
    removeLoginFiles(c.config.stateDir, name, cli);
    c.io.out(`removed the ${cli} credential of the login '${name}'\n`);
  } else {
    c.store.logins.remove(name);
    removeLoginFiles(c.config.stateDir, name);
    c.io.out(`removed the login '${name}'\n`);
  }
  if (keys.length > 0) {
    const what = cli ? `${cli} requests` : 'requests';
    c.io.err(
      `Keys still bound to it: ${keys.join(', ')}. Their ${what} are refused (503 login_not_set_up) until it is ` +
        `added again (olp logins add ${name} --${cli ?? 'claude'}) or they are bound elsewhere (olp keys set KEY ` +
        '--login NAME); a running olp stops their live CLIs.\n',
    );
  }
  return 0;
}

/** `olp logins …`: returns the exit code. */
export async function runLogins(
  store: Store,
  config: Config,
  sub: string | undefined,
  positionals: string[],
  values: Values,
  io: LoginsIo,
): Promise<number> {
  let clis: LoginClis | undefined;
  const c: Ctx = { store, config, io, values, clis: () => (clis ??= createLoginClis(config, io.env)) };
  const name = (): string => {
    if (positionals.length !== 1) throw new UsageError(`usage: olp logins ${sub} NAME`);
    return positionals[0]!;
  };
  switch (sub) {
    case 'add':
      return add(c, name());
    case 'rotate':
      return rotate(c, name());
    case 'remove':
      return remove(c, name());
    case 'status': {
      const { text, ok } = await runLoginStatus(store, config, io.env, c.clis, name());
      io.out(text);
      return ok ? 0 : 1;
    }
    case 'list':
      if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
      io.out(toLoginList(store, config, io.env));
      return 0;
    default:
      throw new UsageError(`unknown logins command '${sub ?? ''}' (add, rotate, list, status, remove)`);
  }
}

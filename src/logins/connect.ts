import {
  backendNotInstalled,
  backendTimeout,
  deviceAuthFailed,
  deviceAuthRunning,
  loginPartNotFound,
  loginRejected,
} from '../errors/index.js';
import { findExecutable } from '../process/index.js';
import type { AdminAction, LoginCli, Role, Store } from '../store/index.js';
import { checkLoginName, MACHINE_LOGIN } from '../store/index.js';
import { claudeCheck, claudeStatus, type ClaudeSecret } from './claude-cli.js';
import type { LoginCliContext } from './cli-run.js';
import { codexLogin } from './codex-cli.js';
import type { DeviceView } from './device.js';
import type { DeviceSignIns } from './device-sign-ins.js';
import { LoginFailed } from './said.js';
import type { SignInLimit } from './sign-in-limit.js';
import { loginPaths, removeLoginFiles, saveClaudeApiKey, saveClaudeToken } from './secrets.js';

// A key connecting its own CLI login (the usage page's "Your login"): the login it writes to (its
// own, or a new one named after it and bound to it once something is stored), the CLI's checks
// first, then the secret and the row, each step recorded as an admin action without the secret.

/** The key doing it. */
export interface MemberCaller {
  keyId: string;
  name: string;
  role: Role;
  login: string | null;
}

/** What connecting needs: the store, the state dir, the CLIs, the device sign-ins and the logins busy now. */
export interface ConnectDeps {
  store: Store;
  stateDir: string;
  clis: LoginCliContext;
  devices: DeviceSignIns;
  /** Logins with a sign-in under way in this process (one at a time per login). */
  busy: Set<string>;
  /** Sign-ins per key (429 rate_limited past it). */
  limit: SignInLimit;
  /** Each recorded action, for the log. */
  onAction(a: AdminAction): void;
}

/** A new login's name for a key: the key's own when free and valid, else `<key>-2`, `-3`, … */
export function newLoginName(d: Pick<ConnectDeps, 'store' | 'devices' | 'busy'>, keyName: string): string {
  const base = /^[A-Za-z0-9]/.test(keyName) ? keyName : `k${keyName}`;
  const free = (n: string) => {
    try {
      checkLoginName(n);
    } catch {
      return false;
    }
    return !d.store.logins.get(n) && !d.devices.busy(n) && !d.busy.has(n) && d.store.logins.keysOf(n).length === 0;
  };
  if (free(base.slice(0, 32))) return base.slice(0, 32);
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const name = `${base.slice(0, 32 - suffix.length)}${suffix}`;
    if (free(name)) return name;
  }
}

/** The login a key's sign-in writes to: its own, or a new one to make (bound once something is stored). */
function targetOf(d: ConnectDeps, caller: MemberCaller): { name: string; bind: boolean } {
  if (caller.login !== null) return { name: caller.login, bind: false };
  // A sign-in this key started for a login not made yet holds that login's name.
  return { name: d.devices.runningFor(caller.keyId) ?? newLoginName(d, caller.name), bind: true };
}

/** Binds the key to its new login (recorded as the owner's key changes are). */
function bindKey(d: ConnectDeps, caller: MemberCaller, login: string | null): void {
  d.store.keys.update(caller.name, { policy: {}, login });
  const changes = { login: login ?? MACHINE_LOGIN };
  record(d, { actor: caller.name, action: 'key_updated', target: caller.name, changes });
}

/** Records an action of the key's, and logs it. */
function record(d: ConnectDeps, a: Omit<AdminAction, 'id' | 'at'>): void {
  d.onAction(d.store.adminActions.record(a));
}

/** A sign-in may start on the login: none under way there (409), and the key within its limit (429). */
function claim(d: ConnectDeps, keyId: string, name: string): void {
  if (d.busy.has(name) || d.devices.busy(name)) throw deviceAuthRunning(name);
  d.limit.take(keyId);
}

/** Runs `work` with the login marked busy; a login made for it and left empty is removed after. */
async function withLogin<T>(d: ConnectDeps, keyId: string, name: string, work: () => Promise<T>): Promise<T> {
  claim(d, keyId, name);
  d.busy.add(name);
  try {
    return await work();
  } finally {
    d.busy.delete(name);
    if (!d.store.logins.get(name)) removeLoginFiles(d.stateDir, name);
  }
}

function requireInstalled(d: ConnectDeps, cli: LoginCli): void {
  const b = d.clis[cli];
  if (!findExecutable(b.bin, d.clis.hostEnv.PATH))
    throw backendNotInstalled(cli, b.bin, `install ${cli}, or set its path with --${cli}-bin`);
}

/** Records what was stored, binding a new login's key. */
function stored(d: ConnectDeps, caller: MemberCaller, t: { name: string; bind: boolean }, changes: object): void {
  if (t.bind && d.store.keys.get(caller.name)?.login === null) bindKey(d, caller, t.name);
  record(d, { actor: caller.name, action: 'login_connect', target: t.name, changes: { ...changes } });
}

/** PUT /olp/me/login/claude: checks the setup token or API key with claude, then stores it. */
export async function runConnectClaude(
  d: ConnectDeps,
  caller: MemberCaller,
  secret: ClaudeSecret,
  check: boolean,
): Promise<string> {
  const t = targetOf(d, caller);
  const param = 'token' in secret ? 'token' : 'apiKey';
  requireInstalled(d, 'claude');
  return withLogin(d, caller.keyId, t.name, async () => {
    for (const step of check ? [claudeStatus, claudeCheck] : [claudeStatus]) {
      const v = await step(d.clis, t.name, secret);
      if (v.ok === false) throw loginRejected('claude', v.said, param);
      if (v.ok === null) throw backendTimeout('claude', 'total', d.clis.statusMs / 1000);
    }
    const kind = 'token' in secret ? 'setup-token' : 'api-key';
    if ('token' in secret) saveClaudeToken(d.stateDir, t.name, secret.token);
    else saveClaudeApiKey(d.stateDir, t.name, secret.apiKey);
    d.store.logins.set(t.name, 'claude', kind);
    stored(d, caller, t, { cli: 'claude', kind, checked: check });
    return t.name;
  });
}

/** PUT /olp/me/login/codex: `codex login --with-api-key | --with-access-token`, staged, then stored. */
export async function runConnectCodex(
  d: ConnectDeps,
  caller: MemberCaller,
  kind: 'api-key' | 'access-token',
  secret: string,
): Promise<string> {
  const t = targetOf(d, caller);
  requireInstalled(d, 'codex');
  return withLogin(d, caller.keyId, t.name, async () => {
    try {
      await codexLogin(d.clis, t.name, loginPaths(d.stateDir, t.name).codexHome, kind, secret);
    } catch (err) {
      if (err instanceof LoginFailed)
        throw loginRejected('codex', err.message, kind === 'api-key' ? 'apiKey' : 'accessToken');
      throw err;
    }
    d.store.logins.set(t.name, 'codex', kind);
    stored(d, caller, t, { cli: 'codex', kind, checked: true });
    return t.name;
  });
}

/** POST /olp/me/login/codex/device: starts codex's device sign-in; its view once codex printed its code. */
export async function runStartDevice(d: ConnectDeps, caller: MemberCaller): Promise<DeviceView> {
  const t = targetOf(d, caller);
  requireInstalled(d, 'codex');
  claim(d, caller.keyId, t.name);
  record(d, { actor: caller.name, action: 'login_device_start', target: t.name, changes: { cli: 'codex' } });
  const view = await d.devices.start(t.name, caller.keyId, {
    connected: () => {
      d.store.logins.set(t.name, 'codex', 'chatgpt');
      stored(d, caller, t, { cli: 'codex', kind: 'chatgpt', checked: true });
    },
    ended: (v) => {
      const changes = { cli: 'codex', result: v.state, ...(v.error ? { error: v.error.code } : {}) };
      record(d, { actor: caller.name, action: 'login_device_end', target: t.name, changes });
      if (!d.store.logins.get(t.name)) removeLoginFiles(d.stateDir, t.name);
    },
  });
  if (view.code !== null || view.state === 'connected') return view;
  if (view.error?.code === 'backend_not_installed')
    throw backendNotInstalled('codex', d.clis.codex.bin, 'install codex, or set its path with --codex-bin');
  throw deviceAuthFailed(view.error?.message ?? 'codex ended without a code');
}

/**
 * DELETE /olp/me/login/claude|codex: removes that credential of the key's login; a login left with
 * none and bound to this key only is removed, and the key goes back to the machine's login.
 */
export function runRemoveCredential(d: ConnectDeps, caller: MemberCaller, cli: LoginCli): void {
  const name = caller.login;
  const row = name === null ? undefined : d.store.logins.get(name);
  if (name === null || !row?.[cli]) throw loginPartNotFound(`Your key's login has no ${cli} credential.`);
  if (d.busy.has(name) || (cli === 'codex' && d.devices.busy(name))) throw deviceAuthRunning(name);
  d.store.logins.clear(name, cli);
  removeLoginFiles(d.stateDir, name, cli);
  record(d, { actor: caller.name, action: 'login_remove', target: name, changes: { cli } });
  const left = d.store.logins.get(name);
  const keys = d.store.logins.keysOf(name);
  if (left && !left.claude && !left.codex && keys.every((k) => k === caller.name)) {
    d.store.logins.remove(name);
    removeLoginFiles(d.stateDir, name);
    bindKey(d, caller, null);
  }
}

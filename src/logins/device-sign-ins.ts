import type { LoginCliContext } from './cli-run.js';
import { INTERACTIVE_MS } from './cli-run.js';
import { DeviceFailed, type DevicePrompt, type DeviceView, runDeviceLogin } from './device.js';
import { loginPaths } from './secrets.js';

// The daemon's device sign-ins (codex's ChatGPT login from the usage page): at most one per login,
// each kept a while after it ends for the page to read, all cancelled when the daemon stops.

/** How long a finished sign-in stays readable. */
const KEEP_MS = 10 * 60_000;

/** One sign-in: whose, how it stands, and how to stop it. */
interface Entry {
  login: string;
  keyId: string;
  view: DeviceView;
  stop: AbortController;
  /** Settles once codex is gone and its staging home removed. */
  done: Promise<void>;
}

export interface DeviceSignInOptions {
  stateDir: string;
  clis: () => LoginCliContext;
  /** Tests only: extra arguments of `codex login --device-auth` (a stand-in's issuer). */
  args?: readonly string[];
  timeoutMs?: number;
  now?: () => number;
}

/** What a started sign-in does once it ends: connected (write the row), or not (tidy up). */
export interface DeviceHooks {
  connected(): void;
  ended(view: DeviceView): void;
}

type Entries = Map<string, Entry>;

const running = (e: Entry | undefined) => e !== undefined && e.view.state === 'waiting';

/** The sign-in of this login, or the one started by this key (for a login not made yet). */
function entryOf(entries: Entries, login: string | null, keyId: string): Entry | undefined {
  return (login !== null ? entries.get(login) : undefined) ?? [...entries.values()].find((x) => x.keyId === keyId);
}

/** A sign-in has ended: its view says how, its hooks run, and it is kept a while for the page. */
function finish(entries: Entries, e: Entry, hooks: DeviceHooks, err: unknown): void {
  if (err === undefined) {
    try {
      hooks.connected();
      e.view = { ...e.view, state: 'connected' };
    } catch (thrown) {
      e.view = failed(e.view, 'device_auth_failed', (thrown as Error).message);
    }
  } else if (err instanceof DeviceFailed) {
    const code = err.code;
    e.view = code === 'cancelled' ? { ...e.view, state: 'cancelled' } : failed(e.view, code, err.message);
  } else e.view = failed(e.view, 'device_auth_failed', (err as Error).message ?? String(err));
  hooks.ended(e.view);
  setTimeout(() => {
    if (entries.get(e.login) === e) entries.delete(e.login);
  }, KEEP_MS).unref();
}

/** Starts one sign-in: resolves with its view once codex printed its code, or once it ended without one. */
function startEntry(
  o: DeviceSignInOptions,
  entries: Entries,
  who: { login: string; keyId: string },
  hooks: DeviceHooks,
): Promise<DeviceView> {
  const startedAt = new Date((o.now ?? Date.now)()).toISOString();
  const view: DeviceView = { state: 'waiting', code: null, url: null, startedAt, expiresAt: null, error: null };
  let told!: (v: DeviceView) => void;
  const first = new Promise<DeviceView>((resolve) => (told = resolve));
  const e: Entry = { ...who, view, stop: new AbortController(), done: Promise.resolve() };
  entries.set(who.login, e);
  const onPrompt = (p: DevicePrompt) => {
    const expiresAt = p.minutes === null ? null : new Date(Date.parse(startedAt) + p.minutes * 60_000).toISOString();
    e.view = { ...e.view, code: p.code, url: p.url, expiresAt };
    told(e.view);
  };
  const run = runDeviceLogin(o.clis(), who.login, loginPaths(o.stateDir, who.login).codexHome, {
    args: o.args ?? [],
    timeoutMs: o.timeoutMs ?? INTERACTIVE_MS,
    signal: e.stop.signal,
    onPrompt,
  });
  e.done = run.then(
    () => finish(entries, e, hooks, undefined),
    (err: unknown) => finish(entries, e, hooks, err ?? new Error('sign-in failed')),
  );
  void e.done.then(() => told(e.view));
  return first;
}

export function createDeviceSignIns(o: DeviceSignInOptions) {
  const entries: Entries = new Map();
  return {
    /** The sign-in of this login, or the one started by this key (for a login not made yet). */
    find: (login: string | null, keyId: string): DeviceView | undefined => entryOf(entries, login, keyId)?.view,
    /** The login of a sign-in this key has under way, if any. */
    runningFor: (keyId: string) => [...entries.values()].find((e) => e.keyId === keyId && running(e))?.login,
    /** Whether a sign-in of this login is under way. */
    busy: (login: string) => running(entries.get(login)),
    /**
     * Starts `codex login --device-auth` for the login: resolves with its view once codex printed
     * its code, or once it ended without one.
     */
    start: (login: string, keyId: string, hooks: DeviceHooks): Promise<DeviceView> =>
      startEntry(o, entries, { login, keyId }, hooks),
    /** Cancels the login's running sign-in; its view once codex is gone, undefined when none runs. */
    async cancel(login: string | null, keyId: string): Promise<DeviceView | undefined> {
      const e = entryOf(entries, login, keyId);
      if (!e || !running(e)) return undefined;
      e.stop.abort();
      await e.done;
      return e.view;
    },
    /** Cancels every running sign-in (the daemon stops): resolves once each codex is gone. */
    async cancelAll(): Promise<void> {
      const all = [...entries.values()].filter(running);
      for (const e of all) e.stop.abort();
      await Promise.all(all.map((e) => e.done));
    },
  };
}

export type DeviceSignIns = ReturnType<typeof createDeviceSignIns>;

function failed(v: DeviceView, code: NonNullable<DeviceView['error']>['code'], message: string): DeviceView {
  const state = code === 'device_auth_expired' ? 'expired' : 'failed';
  return { ...v, state, error: { code, message } };
}

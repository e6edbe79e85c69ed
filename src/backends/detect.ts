import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { delimiter, isAbsolute, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findExecutable, runCommand, type CommandResult } from '../process/index.js';
import { toChildEnv, type Workspaces } from '../workspace/index.js';
import type { Backend, LoginUse, Turn } from './types.js';

/** olp's own install: its `node_modules` holds the CLIs pinned for its tests, never the user's. */
const OWN_MODULES = fileURLToPath(new URL('../../../node_modules', import.meta.url));

/**
 * PATH without olp's own `node_modules/.bin` (which `npm start` and `npm run` put first): a
 * CLI name must resolve to the user's CLI, not the copy pinned for olp's test tier.
 */
export function withoutOwnBins(pathEnv: string | undefined): string {
  return (pathEnv ?? '')
    .split(delimiter)
    .filter((dir) => dir && !resolve(dir).startsWith(OWN_MODULES + sep))
    .join(delimiter);
}

/**
 * The executable a configured CLI name means, decided once at start: a path (relative ones
 * against the directory olp was started in), or a name looked up on PATH (olp's own
 * `node_modules/.bin` skipped). A name not found stays a name, reported as not installed.
 */
export function resolveBin(bin: string, pathEnv: string | undefined, cwd = process.cwd()): string {
  if (bin.includes('/')) return isAbsolute(bin) ? bin : resolve(cwd, bin);
  return findExecutable(bin, withoutOwnBins(pathEnv)) ?? bin;
}

const INSTALLED_TTL_MS = 2000;

/** How a backend's CLI reports its version and login (its own status commands). */
export interface StatusProbe {
  versionArgs: readonly string[];
  loginArgs: readonly string[];
  /** Logged in, from the login command's exit code and output. */
  loggedIn(exitCode: number | null, stdout: string, stderr: string): boolean;
  /** Logged in by an API key or token, not by the login file. */
  keyLogin?(stdout: string, stderr: string): boolean;
  /** The command that fixes a missing login. */
  loginFix: string;
  installFix: string;
  /** An API key the operator hands to the CLI replaces a login. */
  apiKeyConfigured: boolean;
}

export interface Detection {
  backend: string;
  bin: string;
  path: string | null;
  version: string | null;
  login: 'logged_in' | 'api_key' | 'not_logged_in' | 'unknown';
  /** Credential files that would be linked into each run, and whether they exist. */
  credentials: { file: string; exists: boolean }[];
  /** Can this backend serve requests? */
  ready: boolean;
  /** Commands that fix what is missing. */
  fixes: string[];
  /**
   * Set when the status commands were not run: olp held `--max-processes` CLIs (version and login
   * then unknown, or as last seen).
   */
  unchecked?: 'process_cap';
  /**
   * Set when the login status command ran but did not answer within its time (a busy machine): the
   * login was not checked, so `login` stays `unknown`; a time-out is never a verdict on the login.
   */
  loginTimeout?: { command: string; seconds: number };
}

/** Room under olp's process cap for a detection's status commands; undefined when there is none now. */
export type ProbeRoom = (commands: number) => (() => void) | undefined;

/** Where status probes run: a throwaway workspace per probe (the daemon's, or one under a private temp dir). */
export type ProbeWorkspaces = Pick<Workspaces, 'create'>;

/** A turn with no session: what a status probe links and sets is what any ephemeral run gets. */
const PROBE_TURN: Turn = { prompt: { system: null, text: '' }, cliModel: '' };
const PROBE_KEY = 'status-probe';

/**
 * Detects each backend's CLI: binary on PATH, version and login via the CLI's own commands
 * (bounded by a timeout), cached briefly so /health stays cheap. The commands run exactly as a
 * real run would: the backend's allow-listed environment, in a throwaway home with only its login
 * files linked, so no host secret (API keys, tokens) and nothing else of the real home reaches them.
 */
export function createDetector(
  hostEnv: Readonly<Record<string, string | undefined>>,
  probes: ReadonlyMap<string, StatusProbe>,
  workspaces: ProbeWorkspaces,
  opts: { timeoutMs: number; ttlMs?: number; room?: ProbeRoom; signal?: AbortSignal },
) {
  const ttl = opts.ttlMs ?? 30_000;
  const cache = new Map<string, { at: number; value: Promise<Detection>; done: boolean }>();
  const settled = new Map<string, { at: number; value: Detection }>();
  const found = new Map<string, { at: number; value: boolean }>();

  /** Runs the backend's status commands in a fresh workspace, removed afterwards. */
  async function runStatus(
    b: Backend,
    path: string,
    p: StatusProbe,
    timeoutMs: number,
    turn: Turn,
  ): Promise<[version: CommandResult, login: CommandResult]> {
    let ws: ReturnType<ProbeWorkspaces['create']>;
    try {
      ws = workspaces.create({
        keyId: PROBE_KEY,
        requestId: `${b.id}-${randomUUID()}`,
        links: b.links(turn),
        ...(b.homeDirs ? { dirs: b.homeDirs } : {}),
      });
    } catch (err) {
      // No place to run it (state dir unwritable): reported as failed commands, never as a crash of /health.
      const failed: CommandResult = { exitCode: null, stdout: '', stderr: (err as Error).message, failed: 'spawn' };
      return [failed, failed];
    }
    try {
      const env = toChildEnv(hostEnv, b.envPolicy(turn, ws), ws.home);
      const run = { env, timeoutMs, cwd: ws.cwd, ...(opts.signal ? { signal: opts.signal } : {}) };
      return await Promise.all([runCommand(path, p.versionArgs, run), runCommand(path, p.loginArgs, run)]);
    } finally {
      await ws.removeLater().catch(() => undefined); // a leftover is swept at the next start
    }
  }

  async function probe(b: Backend, login?: LoginUse): Promise<Detection> {
    const p = probes.get(b.id);
    const path = findExecutable(b.bin, hostEnv.PATH) ?? null;
    const files = login ? (login.file ? [login.file] : []) : b.credentials;
    const credentials = files.map((file) => ({ file, exists: existsSync(file) }));
    const fixes: string[] = [];
    if (!path) {
      if (p) fixes.push(p.installFix);
      return { backend: b.id, bin: b.bin, path, version: null, login: 'unknown', credentials, ready: false, fixes };
    }
    let version: string | null = null;
    let state: Detection['login'] = 'unknown';
    let loginTimeout: Detection['loginTimeout'];
    if (p) {
      // The status commands are CLI processes too: they run only in free room under the cap.
      const release = opts.room ? opts.room(2) : () => undefined;
      if (!release) {
        const last = login ? undefined : settled.get(b.id)?.value;
        return last
          ? { ...last, unchecked: 'process_cap' }
          : { ...detected(b, path, version, state, credentials, fixes), ready: true, unchecked: 'process_cap' };
      }
      let v: CommandResult;
      let l: CommandResult;
      try {
        [v, l] = await runStatus(b, path, p, opts.timeoutMs, login ? { ...PROBE_TURN, login } : PROBE_TURN);
      } finally {
        release();
      }
      version = v.failed ? null : (v.stdout.trim().split('\n')[0] ?? null) || null;
      // A login's runs get its credential only: the operator's API keys do not count for it.
      if (p.apiKeyConfigured && !login) state = 'api_key';
      else if (l.failed === 'timeout')
        loginTimeout = { command: [b.id, ...p.loginArgs].join(' '), seconds: opts.timeoutMs / 1000 };
      else if (!l.failed)
        state = !p.loggedIn(l.exitCode, l.stdout, l.stderr)
          ? 'not_logged_in'
          : p.keyLogin?.(l.stdout, l.stderr)
            ? 'api_key'
            : 'logged_in';
      if (state === 'not_logged_in') fixes.push(login ? `olp logins rotate ${login.name} --${b.id}` : p.loginFix);
    }
    const d = detected(b, path, version, state, credentials, fixes);
    return loginTimeout ? { ...d, loginTimeout } : d;
  }

  /** Asks the backend's CLI again, remembered as the current detection (and, once done, the last seen). */
  function refresh(b: Backend) {
    const entry = { at: Date.now(), value: probe(b), done: false };
    cache.set(b.id, entry);
    void entry.value.then((d) => {
      entry.done = true;
      // Not checked (no room): asked again next time, and what was last seen stays the last seen.
      if (d.unchecked) {
        if (cache.get(b.id) === entry) cache.delete(b.id);
        return;
      }
      settled.set(b.id, { at: entry.at, value: d });
    });
    return entry;
  }

  return {
    /**
     * Full detection (spawns the CLI's status commands; cached for a while, and the last one stands
     * while they run again); `login`: with a login's credential, always asked afresh.
     */
    detect(b: Backend, login?: LoginUse): Promise<Detection> {
      if (login) return probe(b, login);
      let hit = cache.get(b.id);
      if (!hit || Date.now() - hit.at >= ttl) hit = refresh(b);
      // While the CLIs are asked again, the last answer stands: on a busy machine their status
      // commands can take seconds, and /health should not wait on them. Only the first one waits.
      const last = settled.get(b.id);
      return hit.done || !last ? hit.value : Promise.resolve(last.value);
    },
    /** The last finished detection while it is fresh; never spawns anything (for the request path). */
    known(b: Backend): Detection | undefined {
      const hit = settled.get(b.id);
      return hit && Date.now() - hit.at < ttl ? hit.value : undefined;
    },
    /** Cheap check: is the binary there at all (a PATH scan, cached briefly: /v1/models asks per model). */
    installed(b: Backend): boolean {
      const hit = found.get(b.id);
      if (hit && Date.now() - hit.at < INSTALLED_TTL_MS) return hit.value;
      const value = findExecutable(b.bin, hostEnv.PATH) !== undefined;
      found.set(b.id, { at: Date.now(), value });
      return value;
    },
  };
}

export type Detector = ReturnType<typeof createDetector>;

/** A detection as found: ready unless the CLI said it is not logged in. */
function detected(
  b: Backend,
  path: string,
  version: string | null,
  login: Detection['login'],
  credentials: Detection['credentials'],
  fixes: string[],
): Detection {
  return { backend: b.id, bin: b.bin, path, version, login, credentials, ready: login !== 'not_logged_in', fixes };
}

import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { findExecutable, runCommand, type CommandResult } from '../process/index.js';
import { toChildEnv, type Workspaces } from '../workspace/index.js';
import type { Backend, LoginUse, Turn } from './types.js';

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

/** What a probe runs with: the host's environment, each backend's status commands, where and how long they run. */
export interface ProbeSettings {
  hostEnv: Readonly<Record<string, string | undefined>>;
  probes: ReadonlyMap<string, StatusProbe>;
  workspaces: ProbeWorkspaces;
  timeoutMs: number;
  room?: ProbeRoom;
  signal?: AbortSignal;
}

/** A turn with no session: what a status probe links and sets is what any ephemeral run gets. */
const PROBE_TURN: Turn = { prompt: { system: null, text: '' }, cliModel: '' };
const PROBE_KEY = 'status-probe';

/**
 * Detects one backend's CLI now: its binary on PATH, then its version and login from its status
 * commands (`login`: with that login's credential). `last`: what stands when the process cap
 * leaves no room for the commands.
 */
export async function runProbe(
  s: ProbeSettings,
  b: Backend,
  login: LoginUse | undefined,
  last: Detection | undefined,
): Promise<Detection> {
  const p = s.probes.get(b.id);
  const path = findExecutable(b.bin, s.hostEnv.PATH) ?? null;
  const files = login ? (login.file ? [login.file] : []) : b.credentials;
  const credentials = files.map((file) => ({ file, exists: existsSync(file) }));
  if (!path) {
    const fixes = p ? [p.installFix] : [];
    return { backend: b.id, bin: b.bin, path, version: null, login: 'unknown', credentials, ready: false, fixes };
  }
  if (!p) return detected(b, path, null, 'unknown', credentials, []);
  // The status commands are CLI processes too: they run only in free room under the cap.
  const release = s.room ? s.room(2) : () => undefined;
  if (!release) {
    return last
      ? { ...last, unchecked: 'process_cap' }
      : { ...detected(b, path, null, 'unknown', credentials, []), ready: true, unchecked: 'process_cap' };
  }
  let status: [version: CommandResult, login: CommandResult];
  try {
    status = await runStatus(s, b, path, p, login ? { ...PROBE_TURN, login } : PROBE_TURN);
  } finally {
    release();
  }
  return toDetection(s, b, path, p, credentials, status, login);
}

/** Runs the backend's status commands in a fresh workspace, removed afterwards. */
async function runStatus(
  s: ProbeSettings,
  b: Backend,
  path: string,
  p: StatusProbe,
  turn: Turn,
): Promise<[version: CommandResult, login: CommandResult]> {
  let ws: ReturnType<ProbeWorkspaces['create']>;
  try {
    ws = s.workspaces.create({
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
    const env = toChildEnv(s.hostEnv, b.envPolicy(turn, ws), ws.home);
    const run = { env, timeoutMs: s.timeoutMs, cwd: ws.cwd, ...(s.signal ? { signal: s.signal } : {}) };
    return await Promise.all([runCommand(path, p.versionArgs, run), runCommand(path, p.loginArgs, run)]);
  } finally {
    await ws.removeLater().catch(() => undefined); // a leftover is swept at the next start
  }
}

/** A detection from the status commands' answers. */
function toDetection(
  s: ProbeSettings,
  b: Backend,
  path: string,
  p: StatusProbe,
  credentials: Detection['credentials'],
  [v, l]: [version: CommandResult, login: CommandResult],
  login: LoginUse | undefined,
): Detection {
  const version = v.failed ? null : (v.stdout.trim().split('\n')[0] ?? null) || null;
  const state = loginState(p, l, login);
  const fixes = state === 'not_logged_in' ? [login ? `olp logins rotate ${login.name} --${b.id}` : p.loginFix] : [];
  const d = detected(b, path, version, state, credentials, fixes);
  if (state !== 'unknown' || l.failed !== 'timeout') return d;
  return { ...d, loginTimeout: { command: [b.id, ...p.loginArgs].join(' '), seconds: s.timeoutMs / 1000 } };
}

/** The login the status command reports; unknown when it failed or timed out. */
function loginState(p: StatusProbe, l: CommandResult, login: LoginUse | undefined): Detection['login'] {
  // A login's runs get its credential only: the operator's API keys do not count for it.
  if (p.apiKeyConfigured && !login) return 'api_key';
  if (l.failed) return 'unknown';
  if (!p.loggedIn(l.exitCode, l.stdout, l.stderr)) return 'not_logged_in';
  return p.keyLogin?.(l.stdout, l.stderr) ? 'api_key' : 'logged_in';
}

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

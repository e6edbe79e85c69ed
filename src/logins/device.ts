import { startWatched } from '../process/index.js';
import { cannotRun, type LoginCliContext } from './cli-run.js';
import { stageCodexLogin } from './codex-cli.js';
import { LoginFailed, toSaid } from './said.js';

// `codex login --device-auth` run for the usage page: in the background, its code and link read off
// what it prints (codex 0.171 colours them even on a pipe), into a staging CODEX_HOME that replaces
// the login's only once codex accepts it (see stageCodexLogin).

/** How a device sign-in stands. */
export type DeviceState = 'waiting' | 'connected' | 'failed' | 'expired' | 'cancelled';

/** Why a device sign-in did not connect. */
export type DeviceErrorCode =
  | 'device_auth_failed'
  | 'device_auth_expired'
  | 'device_auth_refused'
  | 'backend_not_installed';

/** A device sign-in as the page sees it. */
export interface DeviceView {
  state: DeviceState;
  code: string | null;
  url: string | null;
  startedAt: string;
  expiresAt: string | null;
  error: { code: DeviceErrorCode; message: string } | null;
}

/** What codex printed for the person: the link to open, the code to type, and how long it lasts. */
export interface DevicePrompt {
  url: string;
  code: string;
  minutes: number | null;
}

/** A device sign-in that ended without a login: why, in the page's words. */
export class DeviceFailed extends LoginFailed {
  constructor(
    readonly code: DeviceErrorCode | 'cancelled',
    message: string,
  ) {
    super(message);
  }
}

const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;

/** Text without its ANSI escape sequences. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/**
 * The link and code of codex 0.171's device prompt ("1. Open this link …\n   URL", "2. Enter this
 * one-time code (expires in 15 minutes)\n   CODE"), once both lines are whole; undefined before.
 */
export function parseDevicePrompt(stdout: string): DevicePrompt | undefined {
  const text = stripAnsi(stdout);
  const url = /Open this link[^\n]*\n\s*(https?:\/\/\S+)\s*\n/.exec(text)?.[1];
  const code = /one-time code([^\n]*)\n\s*(\S+)[ \t]*\n/.exec(text);
  if (!url || !code) return undefined;
  const minutes = /expires in (\d+) minutes?/.exec(code[1] ?? '')?.[1];
  return { url, code: code[2]!, minutes: minutes ? Number(minutes) : null };
}

/**
 * What codex's last error line means (0.171): `device auth timed out after 15 minutes` is the
 * code's expiry; `device auth failed with status 4xx` the provider's refusal (denied, expired on
 * its side); anything else a failure.
 */
export function toDeviceError(stderr: string): { code: DeviceErrorCode; message: string } {
  const lines = stripAnsi(stderr)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^WARNING: /.test(l));
  const last = lines.findLast((l) => /^Error/.test(l)) ?? lines.at(-1) ?? 'codex login --device-auth failed';
  const message = toSaid(last);
  if (/timed out/i.test(last)) return { code: 'device_auth_expired', message };
  if (/failed with status 4\d\d/.test(last)) return { code: 'device_auth_refused', message };
  return { code: 'device_auth_failed', message };
}

/** Options of one run: codex's extra arguments (tests: its issuer), its time limit and its stop. */
export interface DeviceRunOptions {
  args: readonly string[];
  timeoutMs: number;
  signal: AbortSignal;
  /** Called once, when codex has printed its link and code. */
  onPrompt(p: DevicePrompt): void;
}

/** `codex login --device-auth` for a login, staged: resolves once its auth.json is in place, else throws DeviceFailed. */
export async function runDeviceLogin(
  c: LoginCliContext,
  name: string,
  codexHome: string,
  o: DeviceRunOptions,
): Promise<void> {
  try {
    await stageCodexLogin(c, name, codexHome, (env, home) => watchDevice(c, env, home, o));
  } catch (err) {
    if (err instanceof DeviceFailed || !(err instanceof LoginFailed)) throw err;
    throw new DeviceFailed('device_auth_failed', err.message);
  }
}

async function watchDevice(
  c: LoginCliContext,
  env: Record<string, string>,
  home: string,
  o: DeviceRunOptions,
): Promise<void> {
  let stdout = '';
  let stderr = '';
  let told = false;
  const run = startWatched(c.codex.bin, ['login', '--device-auth', ...o.args], {
    env,
    cwd: home,
    timeoutMs: o.timeoutMs,
    signal: o.signal,
    onText(text, stream) {
      if (stream === 'stderr') stderr += text;
      else stdout += text;
      const p = told ? undefined : parseDevicePrompt(stdout);
      if (p) {
        told = true;
        o.onPrompt(p);
      }
    },
  });
  const end = await run.ended;
  if (end.failed === 'spawn')
    throw new DeviceFailed('backend_not_installed', cannotRun(c.codex, end) ?? 'codex could not be started');
  if (end.failed === 'canceled') throw new DeviceFailed('cancelled', 'the sign-in was cancelled');
  if (end.failed === 'timeout')
    throw new DeviceFailed('device_auth_expired', 'the code expired before the sign-in was finished');
  if (end.exitCode !== 0) {
    const e = toDeviceError(stderr);
    throw new DeviceFailed(e.code, e.message);
  }
}

import { delimiter, isAbsolute, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { withoutOwnBins } from '../backends/index.js';
import { FIELDS, type ConfigKey } from '../config/index.js';
import { BASE_ENV } from '../workspace/index.js';
import type { Values } from './args.js';
import { UsageError } from './usage-error.js';
import { toLaunchdLabel, type ServiceSpec } from './service-text.js';

// What `olp service install` puts in the unit or plist: the serve flags given, the environment the
// CLIs need as it is now, the state dir; and where the unit, the plist and the log go.

type Env = Readonly<Record<string, string | undefined>>;

/** The machine olp service works on; the bin passes the real one, tests their own. */
export interface ServiceHost {
  platform: NodeJS.Platform;
  env: Env;
  home: string;
  uid: number;
  user: string;
  /** The Node running olp now (process.execPath). */
  node: string;
  /** olp's package root (its dist/src/cli/main.js is the entry). */
  root: string;
}

/** The two service managers olp knows. */
export type ServicePlatform = 'linux' | 'darwin';

/** Settings that are secrets: never written into a unit, which any process of the user can read. */
const SECRET_KEYS: readonly ConfigKey[] = ['alertWebhook'];
/** Variables the CLIs read besides BASE_ENV: where their logins are. */
const CLI_HOMES = ['CLAUDE_CONFIG_DIR', 'CODEX_HOME'];
/** Set by the service manager itself (systemd and launchd give the user's), or meaningless without a terminal. */
const NOT_CAPTURED = new Set(['USER', 'LOGNAME', 'TERM']);

/** `olp` or the name given with --name, checked: it names the unit file, the launchd label and the log. */
export function toServiceName(raw: string | boolean | string[] | undefined): string {
  if (raw === undefined) return 'olp';
  if (typeof raw !== 'string' || !/^[a-z0-9][a-z0-9-]{0,31}$/.test(raw))
    throw new UsageError(`--name must be 1-32 lower-case letters, digits or '-', not '${String(raw)}'`);
  return raw;
}

/** The platform to write for: --platform (with --print only), else this machine's, when it has one of the two. */
export function toServicePlatform(raw: string | boolean | string[] | undefined, host: ServiceHost): ServicePlatform {
  const p = raw ?? host.platform;
  if (p === 'linux' || p === 'darwin') return p;
  if (raw !== undefined) throw new UsageError(`--platform must be linux or darwin, not '${String(raw)}'`);
  throw new UsageError(
    `olp service knows systemd (Linux) and launchd (macOS), not ${host.platform}: ` +
      'olp service install --print --platform linux|darwin writes a unit to adapt',
  );
}

/** serve's flags as given (the state dir aside: it goes into the environment, absolute). */
export function toServeArgs(values: Values): string[] {
  const args = ['serve'];
  for (const [key, field] of Object.entries(FIELDS)) {
    if (!('flag' in field) || key === 'stateDir') continue;
    const v = values[field.flag];
    if (v === undefined) continue;
    if (SECRET_KEYS.includes(key as ConfigKey))
      throw new UsageError(
        `--${field.flag} is a secret, and a unit file is readable by every process of yours: ` +
          `set ${key} in <state-dir>/config.json (olp keeps it 0600) and install without the flag`,
      );
    for (const one of Array.isArray(v) ? v : [String(v)]) args.push(`--${field.flag}`, one);
  }
  return args;
}

/**
 * PATH for the service: without olp's own node_modules/.bin, nor the node_modules/.bin folders and
 * npm's node-gyp-bin that `npm run olp -- service install` (from a checkout) puts first.
 */
function toServicePath(path: string | undefined): string {
  return withoutOwnBins(path)
    .split(delimiter)
    .filter((d) => !/\/node_modules\/\.bin\/?$|\/node-gyp-bin\/?$/.test(d))
    .join(delimiter);
}

/** A proxy URL with a user or password in it: a secret, left out of the unit. */
const hasCredentials = (value: string) => /^[a-z][\w+.-]*:\/\/[^/@\s]*@/i.test(value);

/**
 * The variables the service gets: the CLIs' (PATH without olp's own node_modules/.bin, locale,
 * proxies, CA bundles, where their logins are), the OLP_* settings set now, and OLP_STATE_DIR.
 * Secrets are left out and named in `left`.
 */
export function captureEnv(env: Env, stateDir: string): { env: Record<string, string>; left: string[] } {
  const out: Record<string, string> = {};
  const left: string[] = [];
  for (const name of [...BASE_ENV, ...CLI_HOMES]) {
    const v = name === 'PATH' ? toServicePath(env.PATH) : env[name];
    if (v === undefined || v === '' || NOT_CAPTURED.has(name)) continue;
    if (hasCredentials(v)) left.push(`${name} (it holds a password)`);
    else out[name] = v;
  }
  for (const [key, field] of Object.entries(FIELDS)) {
    if (!('env' in field) || key === 'stateDir') continue;
    const v = env[field.env];
    if (v === undefined) continue;
    if (SECRET_KEYS.includes(key as ConfigKey)) left.push(`${field.env} (a secret: set ${key} in config.json)`);
    else out[field.env] = v;
  }
  out.OLP_STATE_DIR = stateDir;
  return { env: out, left };
}

/** Where the unit (or plist) and, on macOS, the log of the service `name` go. */
export function toServicePaths(
  platform: ServicePlatform,
  name: string,
  host: ServiceHost,
): { file: string; logFile?: string } {
  if (platform === 'darwin')
    return {
      file: join(host.home, 'Library/LaunchAgents', `${toLaunchdLabel(name)}.plist`),
      logFile: join(host.home, 'Library/Logs/olp', `${name}.log`),
    };
  // XDG: a relative XDG_CONFIG_HOME is invalid and ignored.
  const xdg = host.env.XDG_CONFIG_HOME;
  const config = xdg && isAbsolute(xdg) ? xdg : join(host.home, '.config');
  return { file: join(config, 'systemd/user', `${name}.service`) };
}

/** Everything that goes into the unit or plist. */
export function toServiceSpec(opts: {
  name: string;
  platform: ServicePlatform;
  values: Values;
  stateDir: string;
  host: ServiceHost;
  system: boolean;
}): { spec: ServiceSpec; left: string[] } {
  const { host } = opts;
  const captured = captureEnv(host.env, opts.stateDir);
  const logFile = toServicePaths(opts.platform, opts.name, host).logFile;
  const spec: ServiceSpec = {
    name: opts.name,
    node: host.node,
    entry: join(host.root, 'dist/src/cli/main.js'),
    args: toServeArgs(opts.values),
    env: captured.env,
    docs: pathToFileURL(join(host.root, 'docs/service.md')).href,
    ...(opts.system ? { systemUser: host.user } : {}),
    ...(logFile ? { logFile, home: host.home } : {}),
  };
  return { spec, left: captured.left };
}

import { parseArgs } from 'node:util';
import { ConfigError, FIELDS, parseConfig, type Config, type ConfigKey } from '../config/index.js';
import { UsageError } from './usage-error.js';
import { inspectStateDir, prepareStateDir } from './state-dir.js';

export type Options = Readonly<Record<string, { readonly type: 'string' | 'boolean' }>>;
type Env = Readonly<Record<string, string | undefined>>;
export type Values = Record<string, string | boolean | string[] | undefined>;

/** parseArgs options for every config field that has a flag: every command takes them. */
function configFlagOptions() {
  const options: Record<string, { type: 'string'; multiple?: boolean }> = {};
  for (const f of Object.values(FIELDS)) {
    if ('flag' in f) options[f.flag] = { type: 'string', ...(f.kind === 'list' ? { multiple: true } : {}) };
  }
  return options;
}

function toConfigFlags(values: Values): Partial<Record<ConfigKey, string | string[]>> {
  const flags: Partial<Record<ConfigKey, string | string[]>> = {};
  for (const [key, f] of Object.entries(FIELDS)) {
    if ('flag' in f && values[f.flag] !== undefined) flags[key as ConfigKey] = values[f.flag] as string | string[];
  }
  return flags;
}

const HELP = new Set(['--help', '-h']);

/**
 * `--rpm -3` as `--rpm=-3`: parseArgs refuses a value that starts with a dash ("argument is
 * ambiguous"), but a negative number after an option that takes a value can only be its value,
 * and the option's own check then says what is wrong with it.
 */
function joinNegativeValues(argv: string[], options: Options): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const next = argv[i + 1];
    if (
      a.startsWith('--') &&
      !a.includes('=') &&
      options[a.slice(2)]?.type === 'string' &&
      next !== undefined &&
      /^-\d/.test(next)
    ) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/**
 * A command's arguments: the settings' flags, the command's own, and -h/--help. Anything else is a
 * UsageError, unless help was asked for: then the help is shown whatever else is on the line.
 */
export function parseCommandLine(
  raw: string[],
  extra: Options = {},
): { values: Values; positionals: string[]; help: boolean } {
  const options = { ...configFlagOptions(), ...extra, help: { type: 'boolean', short: 'h' } } as const;
  const argv = joinNegativeValues(raw, options);
  try {
    const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
    return { values: values as Values, positionals, help: values.help === true };
  } catch (err) {
    const end = argv.indexOf('--');
    if (argv.slice(0, end < 0 ? undefined : end).some((a) => HELP.has(a))) {
      const { positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: false });
      return { values: {}, positionals, help: true };
    }
    // parseArgs adds a paragraph on '--' after the first sentence; the sentence says it.
    throw new UsageError(
      (err as Error).message
        .replace(/\. To specify a positional argument.*$/s, '')
        .replace(/^Unknown option/, 'unknown option'),
    );
  }
}

/**
 * The configuration for a command that opens the state directory: flag and environment mistakes
 * first, then the directory made ready (a StateDirError saying what to do if it cannot be),
 * then the full configuration with `<state-dir>/config.json`.
 */
export function loadStateConfig(values: Values, env: Env): Config {
  const flags = toConfigFlags(values);
  prepareStateDir(parseConfig({ flags, env, readFile: false }).stateDir);
  return parseConfig({ flags, env });
}

/**
 * The configuration `olp doctor` checks. A state directory so broken that its config.json cannot
 * even be looked for is one of the things doctor reports, not a reason not to run.
 */
export function loadDoctorConfig(values: Values, env: Env): Config {
  const flags = toConfigFlags(values);
  try {
    return parseConfig({ flags, env });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const withoutFile = parseConfig({ flags, env, readFile: false });
    if (inspectStateDir(withoutFile.stateDir).ok) throw err;
    return withoutFile;
  }
}

/** Asked for stack traces: `--log-level debug` (or trace) on the command line or in OLP_LOG_LEVEL. */
export function wantsStack(argv: readonly string[], env: Env): boolean {
  let level = env.OLP_LOG_LEVEL;
  argv.forEach((a, i) => {
    if (a === '--log-level') level = argv[i + 1];
    else if (a.startsWith('--log-level=')) level = a.slice('--log-level='.length);
  });
  return level === 'debug' || level === 'trace';
}

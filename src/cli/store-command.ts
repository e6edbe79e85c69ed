import { ConfigError, type Config } from '../config/index.js';
import { openStore, type Store } from '../store/index.js';
import { loadStateConfig, parseCommandLine, type Options } from './args.js';
import { UsageError } from './usage-error.js';
import { printable, type Sink } from './output.js';
import { toStateDirError } from './state-dir.js';

// How the commands that work on the state store are run: their help, the store opened and closed.

export type Flat = Record<string, string | boolean | undefined>;

export interface Io {
  env: Readonly<Record<string, string | undefined>>;
  stdout: Sink;
  stderr: Sink;
}

/** Opens the store of a ready state dir; a failure to open it is said as what is wrong with the dir. */
export function openStateStore(config: Config): Store {
  try {
    return openStore(config.stateDir, { instanceTag: config.instanceTag });
  } catch (err) {
    throw toStateDirError(err, config.stateDir) ?? err;
  }
}

/**
 * `olp keys|logins SUB NAME… [options]`: its help when asked or bare, else `run` on the opened
 * store; a failure of the action itself is one line and exit 1.
 */
export async function namedCommand(
  argv: string[],
  io: Io,
  flags: Options,
  help: (sub?: string) => string,
  run: (store: Store, config: Config, sub: string, names: string[], values: Flat) => number | Promise<number>,
): Promise<number> {
  const { values, positionals, help: wantsHelp } = parseCommandLine(argv, flags);
  const [sub, ...names] = positionals;
  if (wantsHelp || sub === undefined) {
    io.stdout.write(help(sub));
    return 0;
  }
  const config = loadStateConfig(values, io.env);
  const store = openStateStore(config);
  try {
    return await run(store, config, sub, names, values as Flat);
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) throw err;
    io.stderr.write(`olp: ${printable((err as Error).message)}\n`);
    return 1;
  } finally {
    store.close();
  }
}

/**
 * `olp COMMAND [SUB] [options]` on the state store: its help, at most one sub-command word, and
 * the store opened for `run` and closed however it ends.
 */
export async function storeCommand(
  argv: string[],
  io: Io,
  flags: Options,
  help: string,
  run: (store: Store, sub: string | undefined, values: Flat, config: Config) => number | Promise<number>,
): Promise<number> {
  const { values, positionals, help: wantsHelp } = parseCommandLine(argv, flags);
  if (wantsHelp) {
    io.stdout.write(help);
    return 0;
  }
  const [sub, ...rest] = positionals;
  if (rest.length > 0) throw new UsageError(`unexpected argument '${rest[0]}'`);
  const config = loadStateConfig(values, io.env);
  const store = openStateStore(config);
  try {
    return await run(store, sub, values as Flat, config);
  } finally {
    store.close();
  }
}

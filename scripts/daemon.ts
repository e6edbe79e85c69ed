// The scripts' one way to run an olp daemon of their own: a key in a fresh state dir, then
// `olp serve` on a free port, ready once it prints its base URL.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { OLP_BIN } from '../test/support/paths.js';

type Env = NodeJS.ProcessEnv;

/** Adds a key named `name` to the state dir (made if missing); returns its token. */
export function addKey(stateDir: string, name: string, env: Env, bin = OLP_BIN): string {
  return execFileSync(process.execPath, [bin, 'keys', 'add', name, '--state-dir', stateDir], {
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  })
    .trim()
    .split('\n')
    .at(-1)!;
}

export interface Serving {
  daemon: ChildProcess;
  /** The base URL without `/v1`, once the daemon listens; rejects if it exits first. */
  base: Promise<string>;
}

/**
 * Starts `olp serve --port 0` on a state dir. Its stderr is the caller's to read (or resume), JSON
 * lines unless `env` says otherwise; `nodeArgs` go to Node before the bin (`--cpu-prof`, heap options).
 */
export function serve(opts: {
  stateDir: string;
  env: Env;
  args?: readonly string[];
  nodeArgs?: readonly string[];
  bin?: string;
}): Serving {
  const daemon = spawn(
    process.execPath,
    [
      ...(opts.nodeArgs ?? []),
      opts.bin ?? OLP_BIN,
      'serve',
      '--port',
      '0',
      '--state-dir',
      opts.stateDir,
      ...(opts.args ?? []),
    ],
    { env: { OLP_LOG_FORMAT: 'json', ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const base = new Promise<string>((resolve, reject) => {
    createInterface({ input: daemon.stdout! }).once('line', (l) => {
      daemon.stdout!.resume();
      resolve(l.replace(/\/v1$/, ''));
    });
    daemon.once('exit', (code) => reject(new Error(`olp exited ${code} before listening`)));
  });
  return { daemon, base };
}

import { homedir, userInfo } from 'node:os';
import { runInteractive } from '../process/index.js';
import { packageRoot } from './invocation.js';
import type { ServiceHost, ServiceRunner } from './service.js';

// The real machine for `olp service`: this Node, this olp, this user; commands run with olp's terminal.

type Env = Readonly<Record<string, string | undefined>>;

/** This machine and user, and the olp and Node running now. */
export function createServiceHost(env: Env): ServiceHost {
  return {
    platform: process.platform,
    env,
    home: homedir(),
    uid: process.getuid?.() ?? 0,
    user: userInfo().username,
    node: process.execPath,
    root: packageRoot(),
  };
}

/** Runs systemctl and the like with olp's stdout and stderr, no time limit (`logs -f` runs until Ctrl-C). */
export function createServiceRunner(env: Env): ServiceRunner {
  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) childEnv[k] = v;
  return {
    async run(command, args) {
      const r = await runInteractive(command, args, { env: childEnv, timeoutMs: 0, stdin: 'ignore' });
      if (r.failed === 'spawn') return null;
      return r.exitCode ?? (r.signal ? 130 : 1);
    },
  };
}

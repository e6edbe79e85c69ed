// One olp daemon measured from outside, so the same script measures any build: its CLI behind a
// wrapper bin that logs each start, run modes from `olp usage export`, CPU from /proc.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claudeStandInEnv, type StandIn } from '../test/support/anthropic-stand-in.js';
import { FAKE_CLAUDE, REAL_CLAUDE, REAL_CODEX } from '../test/support/paths.js';
import { CODEX_STAND_IN_ENV, codexStandInConfig, type ResponsesStandIn } from '../test/support/responses-stand-in.js';
import type { Variant } from './agent-client.js';
import { addKey, serve } from './daemon.js';
import { sampleTree } from './proc-tree.js';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Olp {
  url: string;
  pid: number;
  tokens: string[];
  /** CLI processes started so far (version and login checks left out). */
  spawns(): number;
  /** Each request id's run mode, from the usage ledger. */
  runModes(): Map<string, string | null>;
  stop(): Promise<void>;
}

/** A shell script that appends its pid and first arguments to `log`, then becomes `target`. */
function wrapper(dir: string, name: string, target: string, log: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\necho "$$ $1 $2" >> '${log}'\nexec '${target}' "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

export interface Apis {
  claude?: StandIn;
  codex?: ResponsesStandIn;
}

/** An olp of `bin` on a fresh state dir with `keys` keys, its one CLI (of `variant`) behind the wrapper. */
export async function startOlp(
  bin: string,
  variant: Variant,
  apis: Apis,
  keys: number,
  serveArgs: string[],
): Promise<Olp> {
  const dir = mkdtempSync(join(tmpdir(), 'olp-agent-'));
  const stateDir = join(dir, 'state');
  const log = join(dir, 'spawns.log');
  writeFileSync(log, '');
  const target = variant === 'fake' ? FAKE_CLAUDE : variant === 'claude' ? REAL_CLAUDE : REAL_CODEX;
  const cli = wrapper(dir, variant === 'codex' ? 'codex' : 'claude', target, log);
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: dir };
  if (apis.claude) env.OLP_CLAUDE_ENV = JSON.stringify(claudeStandInEnv(apis.claude.url));
  if (apis.codex) {
    env.OLP_CODEX_ENV = JSON.stringify(CODEX_STAND_IN_ENV);
    env.OLP_CODEX_CONFIG = JSON.stringify(codexStandInConfig(apis.codex.url));
  }
  const tokens = Array.from({ length: keys }, (_, i) => addKey(stateDir, `agent${i}`, env, bin));
  const { daemon, base } = serve({
    stateDir,
    env,
    bin,
    args: [variant === 'codex' ? '--codex-bin' : '--claude-bin', cli, ...serveArgs],
  });
  daemon.stderr!.resume();
  const url = await base;
  return {
    url,
    pid: daemon.pid!,
    tokens,
    spawns: () =>
      readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => l && !/ (--version|auth status|login status)\b/.test(l)).length,
    runModes() {
      const out = execFileSync(
        process.execPath,
        [bin, 'usage', 'export', '--format', 'jsonl', '--state-dir', stateDir],
        {
          env,
          encoding: 'utf8',
          maxBuffer: 64 << 20,
        },
      );
      const modes = new Map<string, string | null>();
      for (const line of out.split('\n').filter(Boolean)) {
        const row = JSON.parse(line) as { request_id: string; run_mode?: string | null };
        modes.set(row.request_id, row.run_mode ?? null);
      }
      return modes;
    },
    async stop() {
      const exited = new Promise((r) => daemon.once('exit', r));
      daemon.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Waits until olp's tree has been quiet (under 25 ms of CPU in 250 ms: idle live CLIs take about 1 %
 * of a core each, a CLI starting up a whole one) with no new CLI start, at most 8 s.
 */
export async function settle(olp: Olp): Promise<void> {
  let last = sampleTree(olp.pid).cpuMs;
  let spawns = olp.spawns();
  for (let i = 0; i < 32; i++) {
    await sleep(250);
    const now = sampleTree(olp.pid).cpuMs;
    const s = olp.spawns();
    if (now - last < 25 && s === spawns) return;
    last = now;
    spawns = s;
  }
}

// Two olp builds side by side on the native fake CLI, for changes too small for the bench's
// spread: each runs as its own daemon (sessions on, default logging), and both are driven in
// alternating blocks of requests, the order swapped every block, with each daemon's CPU summed
// over its own blocks. The daemon started second read about 0.2 ms per request less than the
// same build started first (eight runs here, all one way), so each round starts a fresh pair,
// the order of start swapped every round, and the figures are summed over the rounds.
// Usage (after building the other tree, e.g. a `git worktree` of main):
//   npm run pair -- --base ../old/dist/src/cli/main.js [--this OTHER/dist/src/cli/main.js]
//     [--rounds 2] [--blocks 12]
//     [--per 200] [--warmup 2000] [--concurrency 1] [--serve="--prestart false"]
//     [--base-env="OLP_HEAP_TUNING=0"]   (environment for the base daemon only: with --base set to
//                                         this build, it compares a setting instead of a change)
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { OLP_BIN } from '../test/support/paths.js';
import { addKey, serve } from './daemon.js';
import { buildNativeFake, cpuMs, peakRssMb, viaOlp } from './hot-path.js';
import { throughput } from './stats.js';

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    this: { type: 'string', default: OLP_BIN },
    rounds: { type: 'string', default: '2' },
    blocks: { type: 'string', default: '12' },
    per: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '1' },
    serve: { type: 'string', default: '' },
    'base-env': { type: 'string', default: '' },
  },
});
if (!values.base) {
  console.error(
    'usage: node dist/scripts/pair.js --base OTHER/dist/src/cli/main.js [--rounds N] [--blocks N] [--per N] [--concurrency N] [--serve="FLAGS"] [--base-env="K=V ..."]',
  );
  process.exit(2);
}

interface Side {
  name: string;
  bin: string;
  env: Record<string, string>;
  daemon?: ChildProcess;
  url?: string;
  token?: string;
  cpu: number;
  wall: number;
  n: number;
  peakRss: number;
  /** CPU per request in each round. */
  perRound: number[];
}

const dir = mkdtempSync(join(tmpdir(), 'olp-pair-'));
const fake = buildNativeFake(dir);
if (!fake) {
  console.error('needs a C compiler (cc) for the native fake CLI');
  process.exit(1);
}
const sides: Side[] = [
  { name: 'base', bin: values.base, env: envOf(values['base-env']), cpu: 0, wall: 0, n: 0, peakRss: 0, perRound: [] },
  { name: 'this', bin: values.this, env: {}, cpu: 0, wall: 0, n: 0, peakRss: 0, perRound: [] },
];

/** `A=1 B=2` as an environment. */
function envOf(pairs: string): Record<string, string> {
  return Object.fromEntries(
    pairs
      .split(' ')
      .filter(Boolean)
      .map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]),
  );
}

async function start(s: Side, round: number): Promise<void> {
  const stateDir = join(dir, `${s.name}-${round}`);
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: dir,
    OLP_CLAUDE_ENV: JSON.stringify({ FAKE_CLAUDE_REPLY: 'ok' }),
    ...s.env,
  };
  s.token = addKey(stateDir, 'pair', env, s.bin);
  const started = serve({
    stateDir,
    env,
    bin: s.bin,
    args: ['--claude-bin', fake!, ...values.serve.split(' ').filter(Boolean)],
  });
  s.daemon = started.daemon;
  s.daemon.stderr!.resume();
  s.url = await started.base;
}

/** `n` requests through one daemon at the chosen concurrency. */
async function drive(s: Side, n: number): Promise<void> {
  await throughput(n, Number(values.concurrency), () => viaOlp(s.url!, s.token!));
}

async function stop(s: Side): Promise<void> {
  const d = s.daemon;
  s.daemon = undefined;
  if (!d || d.exitCode !== null || d.signalCode !== null) return;
  const exited = new Promise((r) => d.once('exit', r));
  d.kill('SIGTERM');
  await exited;
}

try {
  for (let round = 0; round < Number(values.rounds); round++) {
    const order = round % 2 === 0 ? sides : [...sides].reverse();
    for (const s of order) await start(s, round);
    // Warm both first: a fresh daemon's CPU per request falls by nearly half over its first few
    // thousand requests, as V8 compiles its hot functions.
    for (const s of order) await drive(s, Number(values.warmup));
    const before = sides.map((s) => ({ cpu: s.cpu, n: s.n }));
    for (let b = 0; b < Number(values.blocks); b++) {
      for (const s of b % 2 === 0 ? order : [...order].reverse()) {
        const c0 = cpuMs(s.daemon!.pid!);
        const t0 = performance.now();
        await drive(s, Number(values.per));
        s.wall += performance.now() - t0;
        s.cpu += cpuMs(s.daemon!.pid!) - c0;
        s.n += Number(values.per);
      }
    }
    sides.forEach((s, i) => {
      s.perRound.push((s.cpu - before[i]!.cpu) / (s.n - before[i]!.n));
      s.peakRss = Math.max(s.peakRss, peakRssMb(s.daemon!.pid!));
    });
    for (const s of sides) await stop(s);
  }
  const f = (x: number) => x.toFixed(3);
  for (const s of sides)
    console.log(
      `${s.name.padEnd(4)} CPU ${f(s.cpu / s.n)} ms/request, wall ${f(s.wall / s.n)} ms/request, peak RSS ${s.peakRss.toFixed(1)} MB  (${s.bin})`,
    );
  const [a, b] = sides as [Side, Side];
  const rounds = a.perRound
    .map((x, i) => `${i % 2 === 0 ? 'base' : 'this'} started first ${f(b.perRound[i]! - x)}`)
    .join(', ');
  console.log(`by round: ${rounds}`);
  console.log(
    `this - base: CPU ${f(b.cpu / b.n - a.cpu / a.n)} ms, wall ${f(b.wall / b.n - a.wall / a.n)} ms per request (concurrency ${values.concurrency})`,
  );
} finally {
  await Promise.all(sides.map(stop));
  rmSync(dir, { recursive: true, force: true });
}

// olp's own cost per request, made visible: a native fake CLI (about a millisecond) spawned
// directly and through a separately running olp daemon (sessions on, default logging), in
// alternating runs. Prints p50/p90 latency and their difference, time to first token, the daemon's
// CPU ms per request, throughput at concurrency 16 as a ratio to direct, and the daemon's peak RSS.
// Two daemons: olp's defaults (a key's next new conversation goes to a CLI pre-started after its
// last one, as with the real claude) and `--prestart false` (every new conversation spawns its
// CLI on the request's path: olp's own cost around the same spawn as direct).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../test/support/paths.js';
import { addKey, serve } from './daemon.js';
import { createTimings, throughput } from './stats.js';

const REPLY = 'ok';
/** Requests in the "first after start" CPU figure. */
const FIRST = 300;
/** Requests a daemon serves before the alternating phase, by default (a long-running daemon's state). */
export const DEFAULT_WARMUP = 3000;
const ARGS = [
  '-p',
  '--output-format',
  'stream-json',
  '--verbose',
  '--include-partial-messages',
  '--model',
  'sonnet',
  '--tools=',
];

/** Builds the native fake with the system C compiler; undefined when there is none. */
export function buildNativeFake(dir: string): string | undefined {
  const out = join(dir, 'fast-claude');
  const r = spawnSync('cc', ['-O2', '-o', out, join(ROOT, 'test/fixtures/native/fast-claude.c')], { encoding: 'utf8' });
  return r.status === 0 ? out : undefined;
}

/** The daemon's user + system CPU time so far, in ms (from /proc/<pid>/stat). */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / CLK_TCK;
}
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** Peak resident memory of a process, in MB (VmHWM). */
export function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

function direct(bin: string): Promise<{ total: number; first: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ARGS, {
      env: { PATH: process.env.PATH ?? '', HOME: tmpdir(), FAKE_CLAUDE_REPLY: REPLY },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    let out = '';
    let first = NaN;
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (Number.isNaN(first) && out.includes('"text_delta"')) first = performance.now() - started;
    });
    child.on('error', reject);
    child.on('close', () =>
      out.includes('"type":"result"')
        ? resolve({ total: performance.now() - started, first })
        : reject(new Error('no result')),
    );
    child.stdin.end('say ok');
  });
}

/** One chat request through olp (`url` without `/v1`), its reply checked; total time and time to first text. */
export async function viaOlp(url: string, token: string, stream = false): Promise<{ total: number; first: number }> {
  const started = performance.now();
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sonnet', stream, messages: [{ role: 'user', content: 'say ok' }] }),
  });
  if (!stream) {
    const body = (await res.json()) as { choices?: { message: { content: string } }[] };
    if (body.choices?.[0]?.message.content !== REPLY) throw new Error(`unexpected reply ${JSON.stringify(body)}`);
    return { total: performance.now() - started, first: NaN };
  }
  const reader = res.body!.getReader();
  let first = NaN;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (Number.isNaN(first) && /"content":"[^"]/.test(new TextDecoder().decode(value)))
      first = performance.now() - started;
  }
  return { total: performance.now() - started, first };
}

export const pct = (xs: number[], p: number) => {
  const t = createTimings();
  for (const x of xs) t.record(x);
  return t.p(p);
};

export interface HotPathFigures {
  directP50: number;
  directP90: number;
  olpP50: number;
  olpP90: number;
  addedP50: number;
  ttftDirect: number;
  ttftOlp: number;
  cpuMsPerRequest: number;
  /** The same over the daemon's first `FIRST` requests after start, back to back (JIT warm-up). */
  cpuMsFirst: number;
  /** Requests the daemon served before the alternating phase. */
  warmup: number;
  rpsDirect: number;
  rpsOlp: number;
  throughputRatio: number;
  peakRssMb: number;
  load1: number;
  /** Requests served by a CLI started before they came (olp's `prestarted` runs). */
  prestartedShare: number;
}

/**
 * One alternating run of `runs` requests each way; undefined when no C compiler is available.
 * `prestart: false` starts olp with `--prestart false`.
 */
export async function runHotPath(
  runs: number,
  opts: { prestart: boolean; warmup?: number } = { prestart: true },
): Promise<HotPathFigures | undefined> {
  const warmup = Math.max(FIRST, opts.warmup ?? DEFAULT_WARMUP);
  const dir = mkdtempSync(join(tmpdir(), 'olp-hot-'));
  const bin = buildNativeFake(dir);
  if (!bin) {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  const stateDir = join(dir, 'state');
  // OLP_NATIVE_SPAWN=0 in the bench's environment measures the daemon on Node's child_process.
  const starter = process.env.OLP_NATIVE_SPAWN === undefined ? {} : { OLP_NATIVE_SPAWN: process.env.OLP_NATIVE_SPAWN };
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: dir,
    OLP_CLAUDE_ENV: JSON.stringify({ FAKE_CLAUDE_REPLY: REPLY }),
    ...starter,
  };
  const token = addKey(stateDir, 'bench', env);
  // OLP_BENCH_NODE_ARGS: Node options for the daemon (V8 heap settings, say), to compare.
  const nodeArgs = (process.env.OLP_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const prestart = opts.prestart ? [] : ['--prestart', 'false'];
  const { daemon, base: listening } = serve({ stateDir, env, nodeArgs, args: ['--claude-bin', bin, ...prestart] });
  // Default logging, read: each request's line says how it ran (`"run":"prestarted"`).
  let logged = '';
  let prestarted = 0;
  let counted = 0;
  daemon.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (logged + chunk).split('\n');
    logged = lines.pop()!;
    for (const line of lines) {
      if (!line.includes('"event":"request"')) continue;
      counted++;
      if (line.includes('"run":"prestarted"')) prestarted++;
    }
  });
  try {
    const base = await listening;
    // A fresh daemon runs its first requests in V8's interpreter and compiles its hot functions on
    // background threads: its CPU per request falls by nearly half over the first few thousand
    // (measured: 5.3-6.1 ms over requests 1-300, 3.0-3.5 after 3000). Both are printed: the first
    // requests after start, back to back, then the alternating phase once the daemon is warm.
    const c00 = cpuMs(daemon.pid!);
    for (let i = 0; i < FIRST; i++) await viaOlp(base, token);
    const cpuFirst = (cpuMs(daemon.pid!) - c00) / FIRST;
    for (let i = FIRST; i < warmup; i++) await viaOlp(base, token);
    for (let i = 0; i < 30; i++) {
      await direct(bin);
      await viaOlp(base, token);
    }
    const a: number[] = [];
    const b: number[] = [];
    // The daemon's CPU over the whole phase: what it does after a response (its ledger row, log
    // line, the next pre-started CLI, deleting workspaces) runs while the direct spawn does.
    const counted0 = counted;
    const prestarted0 = prestarted;
    const c0 = cpuMs(daemon.pid!);
    for (let i = 0; i < runs; i++) {
      a.push((await direct(bin)).total);
      b.push((await viaOlp(base, token)).total);
    }
    await new Promise((r) => setTimeout(r, 300)); // the last request's aftermath
    const cpu = cpuMs(daemon.pid!) - c0;
    const share = (prestarted - prestarted0) / Math.max(1, counted - counted0);
    const fa: number[] = [];
    const fb: number[] = [];
    for (let i = 0; i < Math.min(runs, 100); i++) {
      fa.push((await direct(bin)).first);
      fb.push((await viaOlp(base, token, true)).first);
    }
    const n = 320;
    const rpsDirect = await throughput(n, 16, () => direct(bin));
    const rpsOlp = await throughput(n, 16, () => viaOlp(base, token));
    const f: HotPathFigures = {
      directP50: pct(a, 50),
      directP90: pct(a, 90),
      olpP50: pct(b, 50),
      olpP90: pct(b, 90),
      addedP50: pct(b, 50) - pct(a, 50),
      ttftDirect: pct(fa, 50),
      ttftOlp: pct(fb, 50),
      cpuMsPerRequest: cpu / runs,
      cpuMsFirst: cpuFirst,
      warmup,
      rpsDirect,
      rpsOlp,
      throughputRatio: rpsOlp / rpsDirect,
      peakRssMb: peakRssMb(daemon.pid!),
      load1: loadavg()[0]!,
      prestartedShare: share,
    };
    return f;
  } finally {
    daemon.kill('SIGTERM');
    await new Promise((r) => daemon.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The figures as the bench prints them (`key`: the JSON line's name). */
export function printHotPath(f: HotPathFigures, key: 'hotPath' | 'hotPathSpawn' = 'hotPath'): void {
  const r = (x: number, d = 2) => x.toFixed(d);
  const how =
    key === 'hotPath'
      ? `olp's defaults: ${Math.round(f.prestartedShare * 100)} % of new conversations on a pre-started CLI`
      : 'prestart off: every request spawns its CLI, as direct does';
  console.log(
    `native fake CLI (~1 ms), olp as its own process, sessions on, default logging, ${how}; alternating runs`,
  );
  console.log(
    `  latency p50/p90: direct ${r(f.directP50)} / ${r(f.directP90)} ms, through olp ${r(f.olpP50)} / ${r(f.olpP90)} ms; olp adds ${r(f.addedP50)} ms at p50`,
  );
  console.log(`  time to first token (p50): direct ${r(f.ttftDirect)} ms, through olp ${r(f.ttftOlp)} ms`);
  console.log(
    `  daemon CPU per request: ${r(f.cpuMsPerRequest)} ms once warm (after ${f.warmup} requests); ${r(f.cpuMsFirst)} ms over its first ${FIRST} after start`,
  );
  console.log(
    `  throughput at concurrency 16: direct ${r(f.rpsDirect, 1)} req/s, through olp ${r(f.rpsOlp, 1)} req/s (ratio ${r(f.throughputRatio, 3)})`,
  );
  console.log(`  daemon peak RSS: ${r(f.peakRssMb, 1)} MB; load average (1 min): ${r(f.load1)}`);
  console.log(JSON.stringify({ [key]: Object.fromEntries(Object.entries(f).map(([k, v]) => [k, +v.toFixed(3)])) }));
}

// olp's own cost on continued turns (live workers): the native fake kept alive with stream-json
// input and answering one line per turn, driven directly and through olp (a conversation's turns
// 2..n go to its worker), alternating. Prints the same figures as the hot path: p50/p90 latency
// and their difference, the daemon's CPU per turn, throughput at concurrency 16 and peak RSS.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { addKey, serve } from './daemon.js';
import { buildNativeFake, cpuMs, peakRssMb, pct } from './hot-path.js';

const TURNS = 20;

/** A native fake kept alive: one user line in, lines out until its result. */
function liveFake(bin: string): { turn(): Promise<number>; close(): void } {
  const child: ChildProcess = spawn(
    bin,
    ['-p', '--output-format', 'stream-json', '--verbose', '--input-format', 'stream-json'],
    { env: { PATH: process.env.PATH ?? '', HOME: tmpdir() }, stdio: ['pipe', 'pipe', 'ignore'] },
  );
  const rl: Interface = createInterface({ input: child.stdout! });
  let waiting: (() => void) | undefined;
  rl.on('line', (l) => {
    if (l.includes('"type":"result"')) waiting?.();
  });
  return {
    turn() {
      const started = performance.now();
      return new Promise((resolve) => {
        waiting = () => resolve(performance.now() - started);
        child.stdin!.write(
          `${JSON.stringify({ type: 'user', message: { role: 'user', content: 'say ok' }, parent_tool_use_id: null, session_id: '' })}\n`,
        );
      });
    },
    close: () => child.stdin!.end(),
  };
}

type Msg = { role: 'user' | 'assistant'; content: string };

/** A conversation through olp: turn 1 starts (and keeps) a CLI; the rest are timed. */
function conversation(url: string, token: string, n: number) {
  const messages: Msg[] = [];
  let turn = 0;
  return async function next(): Promise<{ ms: number; warm: boolean }> {
    if (turn === n) {
      messages.length = 0;
      turn = 0;
    }
    messages.push({ role: 'user', content: `turn ${turn} of ${n}` });
    const started = performance.now();
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sonnet', messages }),
    });
    const body = (await res.json()) as { choices?: { message: { content: string } }[] };
    if (!body.choices) throw new Error(`olp answered ${res.status}: ${JSON.stringify(body)}`);
    messages.push({ role: 'assistant', content: body.choices[0]!.message.content });
    return { ms: performance.now() - started, warm: turn++ > 0 };
  };
}

/** Turns per second doing `n` turns over 16 lanes, each lane its own process or conversation. */
async function lanes(n: number, fn: (lane: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 16 }, async (_, i) => {
      while (next < n) {
        next++;
        await fn(i);
      }
    }),
  );
  return n / ((performance.now() - started) / 1000);
}

export interface WarmPathFigures {
  directP50: number;
  directP90: number;
  olpP50: number;
  olpP90: number;
  addedP50: number;
  cpuMsPerTurn: number;
  rpsDirect: number;
  rpsOlp: number;
  throughputRatio: number;
  peakRssMb: number;
  load1: number;
}

export async function runWarmPath(runs: number): Promise<WarmPathFigures | undefined> {
  const dir = mkdtempSync(join(tmpdir(), 'olp-warm-'));
  const bin = buildNativeFake(dir);
  if (!bin) {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  const stateDir = join(dir, 'state');
  const env = { PATH: process.env.PATH ?? '', HOME: dir };
  const token = addKey(stateDir, 'bench', env);
  // 16 conversations at once need 16 slots and workers.
  const { daemon, base: listening } = serve({
    stateDir,
    env,
    args: ['--claude-bin', bin, '--session-pool', '17', '--max-workers', '40'],
  });
  daemon.stderr!.resume();
  const direct = liveFake(bin);
  try {
    const base = await listening;
    const olp = conversation(base, token, TURNS);
    for (let i = 0; i < 40; i++) {
      await direct.turn();
      await olp();
    }
    const a: number[] = [];
    const b: number[] = [];
    let cpu = 0;
    while (b.length < runs) {
      a.push(await direct.turn());
      const c0 = cpuMs(daemon.pid!);
      const r = await olp();
      const c = cpuMs(daemon.pid!) - c0;
      if (r.warm) {
        b.push(r.ms);
        cpu += c;
      }
    }
    const fakes = Array.from({ length: 16 }, () => liveFake(bin));
    const rpsDirect = await lanes(640, (i) => fakes[i]!.turn());
    for (const f of fakes) f.close();
    const convs = Array.from({ length: 16 }, () => conversation(base, token, 1000));
    for (const c of convs) await c(); // each conversation's first (cold) turn
    const rpsOlp = await lanes(640, (i) => convs[i]!());
    return {
      directP50: pct(a, 50),
      directP90: pct(a, 90),
      olpP50: pct(b, 50),
      olpP90: pct(b, 90),
      addedP50: pct(b, 50) - pct(a, 50),
      cpuMsPerTurn: cpu / b.length,
      rpsDirect,
      rpsOlp,
      throughputRatio: rpsOlp / rpsDirect,
      peakRssMb: peakRssMb(daemon.pid!),
      load1: loadavg()[0]!,
    };
  } finally {
    direct.close();
    daemon.kill('SIGTERM');
    await new Promise((r) => daemon.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

export function printWarmPath(f: WarmPathFigures): void {
  const r = (x: number, d = 2) => x.toFixed(d);
  console.log('native fake CLI kept alive (live workers): continued turns, olp as its own process; alternating runs');
  console.log(
    `  latency p50/p90: direct ${r(f.directP50)} / ${r(f.directP90)} ms, through olp ${r(f.olpP50)} / ${r(f.olpP90)} ms; olp adds ${r(f.addedP50)} ms at p50`,
  );
  console.log(`  daemon CPU per turn: ${r(f.cpuMsPerTurn)} ms`);
  console.log(
    `  throughput at concurrency 16: direct ${r(f.rpsDirect, 1)} turns/s, through olp ${r(f.rpsOlp, 1)} turns/s (ratio ${r(f.throughputRatio, 3)})`,
  );
  console.log(`  daemon peak RSS: ${r(f.peakRssMb, 1)} MB; load average (1 min): ${r(f.load1)}`);
  console.log(JSON.stringify({ warmPath: Object.fromEntries(Object.entries(f).map(([k, v]) => [k, +v.toFixed(3)])) }));
}

// What the front door costs: two olp instances (tags a1 and b2) on the fake claude, the real nginx in
// front from `olp front nginx`, and the same requests sent to an instance directly and through the
// door, interleaved in blocks (the order swapped every block, each block alternating the instances)
// so that drift on a shared machine falls on both sides alike. Per request: a non-streamed chat's
// latency, and a streamed chat's time to the first byte of the response and to the first token.
// Prints each median with its spread (the lowest and highest block median) and the door's added ms:
// the median of the differences between each door request and the direct one beside it.
// Usage: npm run front-bench -- [--blocks 10] [--per 50] [--warmup 40]
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { findNginx, freePort, NGINX_MISSING, startNginx } from '../test/support/nginx.js';
import { FAKE_CLAUDE, OLP_BIN } from '../test/support/paths.js';
import { addKey, serve } from './daemon.js';
import { buildNativeFake } from './hot-path.js';
import { createTimings } from './stats.js';

const { values } = parseArgs({
  options: {
    blocks: { type: 'string', default: '10' },
    per: { type: 'string', default: '50' },
    warmup: { type: 'string', default: '40' },
  },
});
const BLOCKS = Number(values.blocks);
const PER = Number(values.per);
const nginx = findNginx();
if (!nginx) {
  console.error(`front-bench: ${NGINX_MISSING}`);
  process.exit(1);
}

interface Sample {
  latency: number;
  ttfb: number;
  firstToken: number;
}
type Metric = keyof Sample;
const METRICS: [Metric, string][] = [
  ['latency', 'non-streamed chat, latency'],
  ['ttfb', 'streamed chat, first byte'],
  ['firstToken', 'streamed chat, first token'],
];

const post = (base: string, token: string, stream: boolean) =>
  fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sonnet', stream, messages: [{ role: 'user', content: 'say ok' }] }),
  });

/** One non-streamed and one streamed request to `base` with `token`. */
async function sample(base: string, token: string): Promise<Sample> {
  const t0 = performance.now();
  const plain = await post(base, token, false);
  const body = (await plain.json()) as { choices?: unknown[] };
  if (plain.status !== 200 || !body.choices) throw new Error(`${base}: ${plain.status} ${JSON.stringify(body)}`);
  const latency = performance.now() - t0;
  const t1 = performance.now();
  const res = await post(base, token, true);
  // fetch resolves once the status line and headers are in: the response's first byte.
  const ttfb = performance.now() - t1;
  const reader = res.body!.getReader();
  let firstToken: number | undefined;
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (firstToken === undefined && /"content":"[^"]/.test(decoder.decode(value))) firstToken = performance.now() - t1;
  }
  if (firstToken === undefined) throw new Error(`${base}: a stream without content`);
  return { latency, ttfb, firstToken };
}

const median = (xs: number[]) => {
  const t = createTimings();
  for (const x of xs) t.record(x);
  return t.p(50);
};

/** The median of values that may be negative (differences), which the histogram cannot hold. */
function medianSigned(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const dir = mkdtempSync(join(tmpdir(), 'olp-front-bench-'));
const claude = buildNativeFake(dir) ?? FAKE_CLAUDE;
const started: { kill(): void }[] = [];
let door: Awaited<ReturnType<typeof startNginx>> | undefined;
try {
  const instances = await Promise.all(
    ['a1', 'b2'].map(async (tag) => {
      const stateDir = join(dir, tag);
      const env = { PATH: process.env.PATH ?? '', HOME: dir, OLP_INSTANCE_TAG: tag };
      const token = addKey(stateDir, 'bench', env);
      const s = serve({ stateDir, env, args: ['--claude-bin', claude] });
      started.push(s.daemon);
      s.daemon.stderr!.resume();
      return { tag, token, base: await s.base };
    }),
  );
  const port = await freePort();
  const conf = execFileSync(
    process.execPath,
    [
      OLP_BIN,
      'front',
      'nginx',
      ...instances.flatMap((i) => ['--instance', `${i.tag}=${i.base}`]),
      '--listen',
      `127.0.0.1:${port}`,
    ],
    { encoding: 'utf8' },
  );
  const doorURL = `http://127.0.0.1:${port}`;
  door = await startNginx(nginx, conf, `${doorURL}/health`);
  for (let i = 0; i < Number(values.warmup); i++) {
    const inst = instances[i % 2]!;
    await sample(inst.base, inst.token);
    await sample(doorURL, inst.token);
  }
  const all = { direct: [] as Sample[], door: [] as Sample[] };
  const blocks = { direct: [] as Sample[][], door: [] as Sample[][] };
  for (let b = 0; b < BLOCKS; b++) {
    const block = { direct: [] as Sample[], door: [] as Sample[] };
    for (let i = 0; i < PER; i++) {
      const inst = instances[i % 2]!;
      const order: ('direct' | 'door')[] = b % 2 === 0 ? ['direct', 'door'] : ['door', 'direct'];
      for (const side of order) block[side].push(await sample(side === 'door' ? doorURL : inst.base, inst.token));
    }
    for (const side of ['direct', 'door'] as const) {
      blocks[side].push(block[side]);
      all[side].push(...block[side]);
    }
  }
  console.log(
    `front door bench: ${BLOCKS} blocks x ${PER} requests each way, two instances, ${claude === FAKE_CLAUDE ? 'the Node fake claude' : 'the native fake claude'}, nginx ${nginxVersion(nginx)}`,
  );
  for (const [m, label] of METRICS) {
    const row = (side: 'direct' | 'door') => {
      const per = blocks[side].map((xs) => median(xs.map((s) => s[m])));
      return { med: median(all[side].map((s) => s[m])), lo: Math.min(...per), hi: Math.max(...per) };
    };
    const d = row('direct');
    const f = row('door');
    // Each door request against the direct one beside it: drift on the machine cancels out.
    const diffs = blocks.door.map((xs, b) => xs.map((s, i) => s[m] - blocks.direct[b]![i]![m]));
    const blockDiffs = diffs.map(medianSigned);
    const paired = medianSigned(diffs.flat());
    console.log(
      `  ${label.padEnd(28)} direct ${d.med.toFixed(2)} ms (${d.lo.toFixed(2)}-${d.hi.toFixed(2)})  door ${f.med.toFixed(2)} ms (${f.lo.toFixed(2)}-${f.hi.toFixed(2)})  added ${paired.toFixed(2)} ms (${Math.min(...blockDiffs).toFixed(2)}-${Math.max(...blockDiffs).toFixed(2)}, paired)`,
    );
  }
} finally {
  await door?.stop();
  for (const d of started) d.kill();
  rmSync(dir, { recursive: true, force: true });
}

function nginxVersion(bin: string): string {
  const r = spawnSync(bin, ['-v'], { encoding: 'utf8' });
  return /nginx\/(\S+)/.exec(`${r.stdout}${r.stderr}`)?.[1] ?? '?';
}

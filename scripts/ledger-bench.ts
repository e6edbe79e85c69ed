// The usage ledger at scale: seeds a state dir with N usage rows (default 1,000,000; `--rows 10000000`)
// spread over a year, keys, logins, models, backends and endpoints, written by the store's own row
// writer in big transactions, then times every surface that reads the ledger: the owner's and the
// member's usage views, the keys list, the page's data calls, the export, `olp usage`, the budget
// checks of the alerts and the admission limits, and a chat request's own cost. Prints the median
// (min–max) per surface in ms, the first open's time (the schema steps it takes), and the daemon's
// peak RSS before and after a full export.
//
// Usage: npm run ledger-bench -- [--rows 1000000] [--runs 5] [--dir DIR (reused if seeded)] [--keep]
//        [--skip-full-export (an export of every row takes about 75 s a million rows)]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { budgetPeriods } from '../src/admit/index.js';
import { openStore, type Store, type UsageRow } from '../src/store/index.js';
import { FAKE_CLAUDE, OLP_BIN } from '../test/support/paths.js';
import { serve } from './daemon.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '5' },
    dir: { type: 'string' },
    keep: { type: 'boolean', default: false },
    'skip-full-export': { type: 'boolean', default: false },
  },
});
const ROWS = Number(values.rows);
const RUNS = Number(values.runs);
const DAY = 86_400_000;
const BATCH = 20_000;

/** The household: who sends how much of the traffic, bound to which login, with which budgets. */
const KEYS = [
  { name: 'owner', role: 'owner' as const, share: 0.1, login: null, daily: null, monthly: null },
  { name: 'ci-agent', role: 'member' as const, share: 0.4, login: 'work', daily: 50_000_000, monthly: null },
  { name: 'alice', role: 'member' as const, share: 0.2, login: 'alice', daily: 5_000_000, monthly: 100_000_000 },
  { name: 'bob', role: 'member' as const, share: 0.15, login: null, daily: null, monthly: 50_000_000 },
  { name: 'kid', role: 'member' as const, share: 0.05, login: null, daily: 200_000, monthly: 2_000_000 },
  { name: 'laptop', role: 'member' as const, share: 0.1, login: 'alice', daily: null, monthly: null },
];
const MODELS = {
  claude: ['claude-sonnet-4-5', 'claude-sonnet-4-5', 'claude-opus-4-1', 'claude-haiku-4-5'],
  codex: ['gpt-5-codex', 'gpt-5-codex', 'gpt-5'],
};

/** A small fast seeded generator (mulberry32), so every run seeds the same ledger. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

/** Row `i` of `n`, from a year ago to now, as olp writes one. */
function makeRow(i: number, n: number, now: number, r: () => number, keys: { id: string; name: string }[]) {
  const ts = Math.floor(now - 365 * DAY + ((i + r()) / n) * 365 * DAY);
  let u = r();
  let k = 0;
  while (k < KEYS.length - 1 && u >= KEYS[k]!.share) u -= KEYS[k++]!.share;
  const spec = KEYS[k]!;
  const key = keys[k]!;
  const o = r();
  const outcome =
    o < 0.92 ? 'ok' : o < 0.95 ? 'error' : o < 0.98 ? 'client_aborted' : o < 0.99 ? 'timeout' : 'rejected';
  const backend = outcome === 'rejected' ? null : r() < 0.7 ? 'claude' : 'codex';
  const model = pick(r, MODELS[backend ?? 'claude']);
  const served = backend === null ? null : r() < 0.02 ? pick(r, MODELS[backend]) : model;
  const answered = outcome === 'ok' || outcome === 'client_aborted';
  const prompt = answered ? 500 + Math.floor(r() * 40_000) : 0;
  const completion = answered ? 20 + Math.floor(r() * 2_000) : 0;
  const cached = Math.floor(prompt * r() * 0.9);
  const session = `${backend ?? 'none'}-${key.id.slice(-6)}-${Math.floor(i / 40)}`;
  const row: UsageRow = {
    requestId: `chatcmpl-${i.toString(16).padStart(8, '0')}${Math.floor(r() * 2 ** 32).toString(16)}`,
    ts,
    keyId: key.id,
    keyName: key.name,
    endpoint: r() < 0.7 ? 'chat.completions' : 'responses',
    backend,
    provider: backend === 'claude' ? 'claude-cli' : backend,
    model,
    servedModel: served,
    outcome,
    errorCode:
      ({ error: 'backend_error', timeout: 'backend_timeout', rejected: 'rate_limited' } as Record<string, string>)[
        outcome
      ] ?? null,
    status: ({ ok: 200, error: 502, client_aborted: 499, timeout: 504 } as Record<string, number>)[outcome] ?? 429,
    queueMs: backend ? Math.floor(r() * 20) : null,
    ttftMs: answered ? 300 + Math.floor(r() * 3000) : null,
    durationMs: backend ? 500 + Math.floor(r() * 60_000) : null,
    promptTokens: prompt,
    completionTokens: completion,
    cachedTokens: cached,
    reasoningTokens: backend === 'codex' ? Math.floor(completion * r()) : 0,
    rawUsage: answered
      ? { input_tokens: prompt - cached, cache_read_input_tokens: cached, output_tokens: completion }
      : null,
    partial: outcome === 'client_aborted',
    estimated: outcome === 'client_aborted' && r() < 0.3,
    billable: answered,
    costUsd: backend === 'claude' && answered ? Math.round(prompt * 3 + completion * 15) / 1e6 : null,
    sessionId: backend && answered ? session : null,
    sessionMode: backend ? (i % 40 === 0 ? 'fresh' : 'resumed') : null,
    rotationReason: null,
    runMode: backend ? pick(r, ['warm', 'warm', 'warm', 'resumed', 'cold']) : null,
    overage: false,
    login: backend ? (spec.login ?? null) : null,
  };
  return row;
}

/** Seeds a new state dir: the keys, then the rows in big transactions. */
function seed(stateDir: string, n: number): void {
  const store = openStore(stateDir);
  const keys = KEYS.map((k) => {
    const policy = { ...(k.daily ? { dailyTokens: k.daily } : {}), ...(k.monthly ? { monthlyTokens: k.monthly } : {}) };
    return store.keys.add(k.name, k.role, policy).key;
  });
  const r = random(45);
  const now = Date.now();
  const started = performance.now();
  for (let i = 0; i < n; i += BATCH) {
    const rows: UsageRow[] = [];
    for (let j = i; j < Math.min(n, i + BATCH); j++) rows.push(makeRow(j, n, now, r, keys));
    store.usage.recordMany(rows);
    if ((i / BATCH) % 50 === 49) process.stderr.write(`  seeded ${i + BATCH} rows\n`);
  }
  store.close();
  console.log(`seeded ${n} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

const fmt = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const f = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(0));
  return `${f(s[Math.floor(s.length / 2)]!)} ms (${f(s[0]!)}–${f(s.at(-1)!)})`;
};

async function timeRuns(label: string, fn: () => Promise<unknown> | unknown, runs = RUNS): Promise<void> {
  await fn();
  const xs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    xs.push(performance.now() - t);
  }
  console.log(`  ${label.padEnd(50)} ${fmt(xs)}`);
}

/** The daemon's peak RSS so far, in MB (VmHWM). */
function peakRss(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Math.round(Number(m?.[1] ?? 0) / 1024);
}

const stateDir = values.dir ?? mkdtempSync(join(tmpdir(), 'olp-ledger-bench-'));
if (!existsSync(join(stateDir, 'olp.db'))) seed(stateDir, ROWS);
const dbSize = ['olp.db', 'olp.db-wal'].reduce((s, f) => {
  const p = join(stateDir, f);
  return s + (existsSync(p) ? Number(spawnSync('stat', ['-c', '%s', p], { encoding: 'utf8' }).stdout) : 0);
}, 0);
const opened = performance.now();
const store: Store = openStore(stateDir);
console.log(
  `state dir ${stateDir}: olp.db ${Math.round(dbSize / 1e6)} MB; first open (schema steps) ${Math.round(performance.now() - opened)} ms`,
);
const tokens = new Map<string, string>();
for (const k of KEYS) tokens.set(k.name, store.keys.rotate(k.name));
// The chat key's budgets are checked on every request: high enough here that a year's rows leave them unspent.
store.keys.update('alice', { policy: { dailyTokens: 1e12, monthlyTokens: 1e13 } });

const env = {
  PATH: process.env.PATH ?? '',
  HOME: stateDir,
  OLP_CLAUDE_ENV: JSON.stringify({ FAKE_CLAUDE_REPLY: 'ok' }),
};
const { daemon, base: listening } = serve({
  stateDir,
  env,
  args: ['--claude-bin', FAKE_CLAUDE, '--log-level', 'warn'],
});
daemon.stderr!.resume();
const base = await listening;
const pid = daemon.pid!;

async function get(path: string, key: string): Promise<void> {
  const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${tokens.get(key)}` } });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
}

async function chat(key: string): Promise<void> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tokens.get(key)}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] }),
  });
  if (!res.ok) throw new Error(`chat: ${res.status} ${await res.text()}`);
  await res.json();
}

function cli(args: string[]): void {
  const r = spawnSync(process.execPath, [OLP_BIN, 'usage', ...args, '--state-dir', stateDir], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`olp usage ${args.join(' ')}: ${r.stderr}`);
}

try {
  console.log(`${ROWS} rows, ${RUNS} runs each: median (min–max)`);
  console.log('HTTP (through the daemon):');
  await timeRuns('chat request (alice, budgets checked)', () => chat('alice'));
  await timeRuns('GET /olp/usage (owner, 30 days)', () => get('/olp/usage', 'owner'));
  await timeRuns('GET /olp/usage?days=366 (owner)', () => get('/olp/usage?days=366', 'owner'));
  await timeRuns('GET /olp/me/usage (ci-agent, 40 % of rows)', () => get('/olp/me/usage', 'ci-agent'));
  await timeRuns('GET /olp/me/usage?days=366 (ci-agent)', () => get('/olp/me/usage?days=366', 'ci-agent'));
  await timeRuns('GET /olp/me/usage (kid)', () => get('/olp/me/usage', 'kid'));
  await timeRuns('GET /olp/keys (owner)', () => get('/olp/keys', 'owner'));
  await timeRuns('GET /olp/me (alice)', () => get('/olp/me', 'alice'));
  await timeRuns('GET /olp/admin-actions?limit=50 (page)', () => get('/olp/admin-actions?limit=50', 'owner'));
  await timeRuns('GET /olp/usage/export?since=1d', () => get('/olp/usage/export?since=1d', 'owner'));
  await timeRuns('GET /olp/usage/export?key=kid&since=7d', () => get('/olp/usage/export?key=kid&since=7d', 'owner'));
  await timeRuns('GET /olp/usage/export?since=30d&until=29d', () =>
    get('/olp/usage/export?since=30d&until=29d', 'owner'),
  );
  const before = peakRss(pid);
  if (!values['skip-full-export']) {
    const t = performance.now();
    await get('/olp/usage/export', 'owner');
    console.log(`  ${'GET /olp/usage/export (all rows, once)'.padEnd(50)} ${Math.round(performance.now() - t)} ms`);
  }
  console.log(`  daemon peak RSS: ${before} MB before the full export, ${peakRss(pid)} MB after`);

  console.log('In process (the store queries behind them):');
  const { day, month } = budgetPeriods(Date.now());
  const ids = store.keys.list().map((k) => k.id);
  await timeRuns('budget checks (alerts, limits): all keys', () => {
    for (const id of ids) store.usage.tokensSince(id, day.start) + store.usage.tokensSince(id, month.start);
  });
  await timeRuns('cache hit share (olp sessions): all keys', () => {
    for (const id of ids) store.usage.cacheHitShare(id);
  });
  for (const by of ['key', 'day', 'model', 'login'] as const)
    await timeRuns(`olp usage --by ${by} (query)`, () => store.usage.summarize({ scope: { all: true } }, by));
  const now = Date.now();
  await timeRuns('olp usage --key ci-agent (query)', () =>
    store.usage.summarize({ scope: { all: true }, keyName: 'ci-agent' }, 'key'),
  );
  await timeRuns('olp usage --since 7d --by model (query)', () =>
    store.usage.summarize({ scope: { all: true }, sinceMs: now - 7 * DAY }, 'model'),
  );
  await timeRuns('olp usage --since 90d --until 30d --by day (query)', () =>
    store.usage.summarize({ scope: { all: true }, sinceMs: now - 90 * DAY, untilMs: now - 30 * DAY }, 'day'),
  );

  console.log('olp usage (the command, Node start included):');
  await timeRuns('olp usage', () => cli([]), 3);
  await timeRuns('olp usage --by day', () => cli(['--by', 'day']), 3);
  await timeRuns('olp usage --key alice --since 30d --by model', () =>
    cli(['--key', 'alice', '--since', '30d', '--by', 'model']),
  );
  await timeRuns('olp usage --help (Node start alone)', () => cli(['--help']), 3);
} finally {
  daemon.kill('SIGTERM');
  store.close();
  if (!values.keep && !values.dir) rmSync(stateDir, { recursive: true, force: true });
}

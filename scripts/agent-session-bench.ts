// A coding agent's session through olp, both sides real (test/real/agent-session-real.test.ts as a
// measurement): Claude Code or codex as the client of an olp whose backend is the same real CLI
// against a loopback stand-in playing the model (per user prompt two tool calls through olp's MCP
// bridge, then text); three user turns (`claude -p`, then `claude --continue -p` twice; `codex
// exec`, then `codex exec resume --last` twice). Each session runs N times on a fresh olp. Per
// client request: its kind (main: the agent's conversation; background: a title), the run modes
// olp chose, its wall time through olp, the model's share (the stand-in's time) and the rest (olp
// and its CLI). Per session: the backend CLIs olp started. Against it, a direct cold run of the
// same CLI (one model call, until its result) is what a request costs when a CLI starts for it.
// For each request olp did not continue on a live CLI, what in it differed from the conversation
// olp kept (test/support/session-diff.ts). Prints figures; it is not a test.
// Usage: npm run agent-session-bench -- [--runs 3] [--clients claude,codex] [--claude baseline|current]
//   [--provider-ms 0]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  allLogged,
  backendStarts,
  type ClientRun,
  explainRuns,
  runClaudeCode,
  runCodex,
  type SessionRow,
  sessionPlace,
  sessionRows,
  startClientRecorder,
} from '../test/support/agent-session.js';
import { claudeStandInEnv } from '../test/support/anthropic-stand-in.js';
import { startTestDaemon } from '../test/support/daemon.js';
import { CLAUDE_BASELINE, CLAUDE_CURRENT, REAL_CODEX, ROOT } from '../test/support/paths.js';
import { CODEX_STAND_IN_ENV, codexStandInConfig } from '../test/support/responses-stand-in.js';
import { explainDivergences } from '../test/support/session-diff.js';
import {
  claudeScript,
  codexScript,
  type SessionModel,
  startClaudeSessionModel,
  startCodexSessionModel,
} from '../test/support/session-model.js';
import { waitFor } from '../test/support/wait.js';

type Client = 'claude' | 'codex';

interface SessionRun {
  rows: SessionRow[];
  starts: number;
  /** The client processes' wall time, all three turns. */
  clientMs: number;
  ok: boolean;
  why: Map<number, string>;
}

interface ClientFigures {
  client: Client;
  label: string;
  sessions: SessionRun[];
  /** Direct cold runs of the backend CLI, one model call each, until its result (ms). */
  coldMs: number[];
}

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    clients: { type: 'string', default: 'claude,codex' },
    claude: { type: 'string', default: 'baseline' },
    'provider-ms': { type: 'string', default: '0' },
  },
});
const RUNS = Number(values.runs);
const PROVIDER_MS = Number(values['provider-ms']);
const CLAUDE = values.claude === 'current' ? CLAUDE_CURRENT : CLAUDE_BASELINE;

function version(pkg: string): string {
  return (JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string })
    .version;
}

/** One session of `client` on a fresh olp and stand-in; its rows, starts and what diverged. */
async function session(client: Client): Promise<SessionRun> {
  const model = (
    client === 'claude' ? await startClaudeSessionModel() : await startCodexSessionModel()
  ) as SessionModel<unknown>;
  model.latencyMs = PROVIDER_MS;
  const config =
    client === 'claude' ? { claudeBin: CLAUDE } : { codexBin: REAL_CODEX, codexConfig: codexStandInConfig(model.url) };
  const t = await startTestDaemon({
    config: { ...config, timeout: 60, idleTimeout: 30, workers: true, prestart: false },
    claudeEnv: claudeStandInEnv(model.url),
    codexEnv: CODEX_STAND_IN_ENV,
  });
  const rec = await startClientRecorder(t.url);
  const dir = mkdtempSync(join(tmpdir(), 'olp-session-bench-'));
  try {
    const place = sessionPlace(dir);
    model.script = client === 'claude' ? claudeScript(place.work) : codexScript();
    const prompts = model.script.map((s) => s.prompt);
    const runs: ClientRun[] =
      client === 'claude'
        ? await runClaudeCode(CLAUDE, rec, t.token, place, prompts)
        : await runCodex(REAL_CODEX, rec, t.token, place, prompts);
    await waitFor(() => allLogged(rec.seen, t.logs), 30_000, 'olp to log every request');
    const rows = sessionRows(rec.seen, t.logs, model.calls);
    const main = new Set(rows.filter((r) => r.kind === 'main').map((r) => r.n));
    return {
      rows,
      starts: backendStarts(t.logs).length,
      clientMs: runs.reduce((n, r) => n + r.ms, 0),
      ok: runs.every((r) => r.status === 0),
      why: explainRuns(rows, explainDivergences(rec.seen, main)),
    };
  } finally {
    await rec.close();
    await t.close();
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs a command until a line of its stdout matches `done`; the ms from its start. */
function untilLine(
  bin: string,
  args: string[],
  env: Record<string, string>,
  cwd: string,
  done: RegExp,
): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const c = spawn(bin, args, { cwd, env, stdio: ['ignore', 'pipe', 'ignore'], timeout: 120_000 });
    let out = '';
    let ms: number | undefined;
    c.stdout.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      if (ms === undefined && done.test(out)) ms = performance.now() - started;
    });
    c.on('close', (code) => (ms !== undefined ? resolve(ms) : reject(new Error(`${bin} exited ${code}: ${out}`))));
  });
}

/** A direct cold run of the backend CLI against the stand-in: one model call (no tools), until its result. */
async function coldRun(client: Client): Promise<number> {
  const model = (
    client === 'claude' ? await startClaudeSessionModel() : await startCodexSessionModel()
  ) as SessionModel<unknown>;
  model.latencyMs = PROVIDER_MS;
  const dir = mkdtempSync(join(tmpdir(), 'olp-session-cold-'));
  const prompt = claudeScript(dir)[0]!.prompt;
  const base = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir };
  try {
    if (client === 'claude') {
      const args = ['-p', prompt, '--output-format', 'stream-json', '--verbose', '--tools='];
      const env = { ...base, ...claudeStandInEnv(model.url), DISABLE_AUTOUPDATER: '1', DISABLE_TELEMETRY: '1' };
      return await untilLine(
        CLAUDE,
        args,
        { ...env, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' },
        dir,
        /"type":"result"/,
      );
    }
    const config = codexStandInConfig(model.url).flatMap((c) => ['-c', c]);
    const args = ['exec', '--json', '--skip-git-repo-check', ...config, '-C', dir, prompt];
    return await untilLine(REAL_CODEX, args, { ...base, ...CODEX_STAND_IN_ENV }, dir, /"type":"turn\.completed"/);
  } finally {
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(client: Client): Promise<ClientFigures> {
  const label =
    client === 'claude'
      ? `Claude Code ${version(values.claude === 'current' ? 'claude-code-current' : '@anthropic-ai/claude-code')} → olp → the same claude`
      : `codex ${version('@openai/codex')} → olp → codex`;
  const figures: ClientFigures = { client, label, sessions: [], coldMs: [] };
  for (let r = 0; r < RUNS; r++) {
    figures.sessions.push(await session(client));
    figures.coldMs.push(await coldRun(client));
  }
  return figures;
}

// --- printing --------------------------------------------------------------------------------

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** `median (min-max)`, the median alone when they all agree. */
function spread(xs: number[]): string {
  if (xs.length === 0) return '-';
  const [mid, lo, hi] = [median(xs), Math.min(...xs), Math.max(...xs)].map((x) => x.toFixed(0));
  return lo === hi ? mid! : `${mid} (${lo}-${hi})`;
}

/** A request's place in its session, the same in every run: turn, kind and its order among those. */
function keyed(rows: readonly SessionRow[]): Map<string, SessionRow> {
  const count = new Map<string, number>();
  return new Map(
    rows.map((r) => {
      const base = `${r.turn}.${r.kind}`;
      const k = (count.get(base) ?? 0) + 1;
      count.set(base, k);
      return [`${base}.${k}`, r];
    }),
  );
}

function printClient(f: ClientFigures): void {
  console.log(`  ${f.label}`);
  const runs = f.sessions.map((s) => keyed(s.rows));
  const rows = [...(runs[0] ?? new Map<string, SessionRow>())].map(([key, first]) => {
    const same = runs.map((m) => m.get(key)).filter((r): r is SessionRow => r !== undefined);
    return { first, same, modes: same.map((r) => r.run + (r.rotation !== '-' ? `(${r.rotation})` : '')).join(' ') };
  });
  const width = Math.max(20, ...rows.map((r) => r.modes.length));
  console.log(
    `    req  turn kind        step    ${'run modes (each run)'.padEnd(width)} wall ms           model ms   olp added ms`,
  );
  for (const { first, same, modes } of rows) {
    const cells = [
      `#${first.n}`.padEnd(4),
      String(first.turn).padEnd(4),
      first.kind.padEnd(11),
      first.step.padEnd(7),
      modes.padEnd(width),
      spread(same.map((r) => r.wallMs)).padEnd(17),
      spread(same.map((r) => r.modelMs)).padEnd(10),
      spread(same.map((r) => r.addedMs)),
    ];
    console.log(`    ${cells.join(' ')}`);
  }
  const sessions = f.sessions;
  console.log(`    backend CLI starts per session: ${spread(sessions.map((s) => s.starts))}`);
  console.log(`    client wall time per session (3 turns): ${spread(sessions.map((s) => s.clientMs))} ms`);
  console.log(`    direct cold ${f.client} run (one model call, to its result): ${spread(f.coldMs)} ms`);
  if (sessions.some((s) => !s.ok)) console.log('    a client turn exited non-zero in some run');
  const why = new Map<string, string>();
  for (const s of sessions) {
    // What differed is news only for a request olp did not go on with on a live CLI.
    const continued = new Set(s.rows.filter((r) => r.run === 'warm' || r.run === 'parked').map((r) => r.n));
    for (const [n, w] of s.why) if (!continued.has(n) && !why.has(w)) why.set(w, `#${n}`);
  }
  for (const [w, n] of why) console.log(`    not continued: ${n}: ${w}`);
}

const clients = values.clients.split(',').filter((c): c is Client => c === 'claude' || c === 'codex');
const figures: ClientFigures[] = [];
for (const client of clients) figures.push(await measure(client));
console.log(
  `agent sessions through olp (real clients and CLIs, loopback stand-ins, provider ${PROVIDER_MS} ms): medians (min-max) of ${RUNS} runs; load average ${loadavg()[0]!.toFixed(2)}`,
);
for (const f of figures) printClient(f);
const round = (_: string, v: unknown) =>
  v instanceof Map ? Object.fromEntries(v) : typeof v === 'number' ? Math.round(v * 10) / 10 : v;
console.log(JSON.stringify({ agentSessions: figures }, round));

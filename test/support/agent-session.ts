// A coding agent's session through a real listening olp: the real Claude Code or codex as the
// client (three user turns in one project dir: `claude -p`, then `claude --continue -p` twice;
// `codex exec`, then `codex exec resume --last` twice), a recording pass-through between it and olp
// (each request's body, olp's request id, its times), and each request read against olp's log: how
// olp ran it (its `request` line's run mode, session plan and rotation reason), the backend CLIs
// it started, and the scripted model's share of its time (test/support/session-model.ts).
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { join } from 'node:path';
import { listenLoopback } from './listen.js';
import type { ModelCall } from './session-model.js';

/** One request the client sent olp, as the pass-through saw it. */
export interface ClientRequest {
  /** 1-based, in arrival order. */
  n: number;
  /** The client process (user turn, 1-based) that sent it. */
  turn: number;
  method: string;
  url: string;
  body: unknown;
  /** olp's `x-request-id` for it. */
  requestId: string;
  status: number;
  /** The answer as olp sent it (SSE text for a stream). */
  answer: string;
  startedAt: number;
  endedAt: number;
}

export interface ClientRecorder {
  url: string;
  seen: ClientRequest[];
  /** The user turn now running (set by the driver). */
  turn: number;
  close(): Promise<void>;
}

/** A loopback pass-through to olp that records each request and its answer's times, streaming both ways. */
export async function startClientRecorder(target: string): Promise<ClientRecorder> {
  const to = new URL(target);
  const rec: ClientRecorder = { url: '', seen: [], turn: 0, close: async () => {} };
  const server = createServer((req, res) => {
    const x: ClientRequest = {
      n: rec.seen.length + 1,
      turn: rec.turn,
      method: req.method ?? '',
      url: req.url ?? '',
      body: null,
      requestId: '',
      status: 0,
      answer: '',
      startedAt: performance.now(),
      endedAt: 0,
    };
    rec.seen.push(x);
    let sent = '';
    const up = request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
      (r) => {
        x.status = r.statusCode ?? 0;
        x.requestId = String(r.headers['x-request-id'] ?? '');
        res.writeHead(x.status, r.headers);
        r.on('data', (d: Buffer) => {
          x.answer += d.toString('utf8');
          res.write(d);
        });
        r.on('end', () => {
          x.endedAt = performance.now();
          res.end();
        });
      },
    );
    up.on('error', () => res.destroy());
    req.on('data', (d: Buffer) => {
      sent += d.toString('utf8');
      up.write(d);
    });
    req.on('end', () => {
      try {
        x.body = sent ? JSON.parse(sent) : null;
      } catch {
        x.body = sent;
      }
      up.end();
    });
  });
  const { url, close } = await listenLoopback(server);
  rec.url = url;
  rec.close = close;
  return rec;
}

// --- driving the clients ------------------------------------------------------------------------

export interface ClientRun {
  status: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function run(bin: string, args: string[], cwd: string, env: Record<string, string>): Promise<ClientRun> {
  const started = performance.now();
  return new Promise((resolve) => {
    const c = spawn(bin, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    c.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    c.on('close', (status) => resolve({ status, stdout, stderr, ms: performance.now() - started }));
  });
}

export interface SessionPlace {
  /** The client's HOME (and CODEX_HOME under it) and the project dir, both made here. */
  home: string;
  work: string;
}

/** Makes the session's home and project dirs under `dir`. */
export function sessionPlace(dir: string): SessionPlace {
  const place = { home: join(dir, 'home'), work: join(dir, 'work') };
  mkdirSync(join(place.home, 'tmp'), { recursive: true });
  mkdirSync(place.work, { recursive: true });
  return place;
}

/**
 * Claude Code's turns, one process each, with ANTHROPIC_BASE_URL the recorder (to olp) and olp's key;
 * its non-essential traffic left on (as a user has it: the session-title request, the probes).
 */
export async function runClaudeCode(
  bin: string,
  rec: ClientRecorder,
  token: string,
  place: SessionPlace,
  prompts: readonly string[],
): Promise<ClientRun[]> {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: place.home,
    TMPDIR: join(place.home, 'tmp'),
    ANTHROPIC_BASE_URL: rec.url,
    ANTHROPIC_API_KEY: token,
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_MAX_RETRIES: '0',
  };
  const runs: ClientRun[] = [];
  for (const [i, prompt] of prompts.entries()) {
    rec.turn = i + 1;
    const args = [...(i > 0 ? ['--continue'] : []), '--permission-mode', 'acceptEdits', '-p', prompt];
    runs.push(await run(bin, args, place.work, env));
  }
  return runs;
}

/** codex's turns, with a model provider for olp (through the recorder): `exec`, then `exec resume --last`. */
export async function runCodex(
  bin: string,
  rec: ClientRecorder,
  token: string,
  place: SessionPlace,
  prompts: readonly string[],
  model = 'gpt-5.5',
): Promise<ClientRun[]> {
  const codexHome = join(place.home, '.codex');
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(
    join(codexHome, 'config.toml'),
    [
      `model = "${model}"`,
      'model_provider = "olp"',
      '',
      '[model_providers.olp]',
      'name = "olp"',
      `base_url = "${rec.url}/v1"`,
      'env_key = "OLP_KEY"',
      'wire_api = "responses"',
      'supports_websockets = false',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
    ].join('\n'),
  );
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: place.home, CODEX_HOME: codexHome, OLP_KEY: token };
  const runs: ClientRun[] = [];
  for (const [i, prompt] of prompts.entries()) {
    rec.turn = i + 1;
    const base = ['exec', '--skip-git-repo-check', '-s', 'workspace-write', '-C', place.work];
    runs.push(await run(bin, [...base, ...(i > 0 ? ['resume', '--last'] : []), prompt], place.work, env));
  }
  return runs;
}

// --- reading the session against olp's log --------------------------------------------------------

/** What olp logs when it starts a backend CLI: a turn's own process, a live worker, a spare. */
export const START_EVENTS = ['spawned', 'worker_starting', 'spare_started'];

type Log = Record<string, unknown>;

/** One client request of the session and how olp served it. */
export interface SessionRow {
  n: number;
  turn: number;
  /** main: the agent's conversation (tools offered); background: anything else the client asked (a title). */
  kind: 'main' | 'background';
  /** For main requests: a user prompt, or the results of the calls the model made (a tool step). */
  step: 'prompt' | 'tool' | '-';
  requestId: string;
  status: number;
  /** olp's run mode (`cold`, `warm`, `parked`, `prestarted`, `resumed`) and session plan, from its `request` line. */
  run: string;
  session: string;
  rotation: string;
  /** Backend CLIs olp started for it (START_EVENTS lines of its request id). */
  starts: number;
  /** The pids of every process its log lines name. */
  pids: number[];
  /** Its run's CLI was kept as a live worker of a session slot (olp's `worker_started`). */
  kept: boolean;
  /** olp's live-CLI log lines since the previous request ended, up to this one's end (`worker_retired pid 7 superseded`). */
  meanwhile: string[];
  /** The client's wall time through olp, the model's share of it, and the rest: olp's and its CLI's. */
  wallMs: number;
  modelMs: number;
  addedMs: number;
}

type Message = { role?: string; type?: string; content?: unknown };

/** Whether a request is the agent's main conversation, and whether it carries tool results. */
function classify(x: ClientRequest): { kind: SessionRow['kind']; step: SessionRow['step'] } | undefined {
  const path = x.url.split('?')[0];
  if (x.method !== 'POST' || (path !== '/v1/messages' && path !== '/v1/responses')) return undefined;
  const body = (x.body ?? {}) as { tools?: unknown[]; messages?: Message[]; input?: Message[] };
  if (!body.tools || body.tools.length === 0) return { kind: 'background', step: '-' };
  if (path === '/v1/responses') {
    const last = (body.input ?? []).at(-1);
    return { kind: 'main', step: last?.type?.endsWith('_output') ? 'tool' : 'prompt' };
  }
  const last = (body.messages ?? []).filter((m) => m.role === 'user').at(-1);
  const blocks = Array.isArray(last?.content) ? (last.content as { type?: string }[]) : [];
  return { kind: 'main', step: blocks.some((b) => b.type === 'tool_result') ? 'tool' : 'prompt' };
}

/** What olp logs of its live CLIs' lives: started, kept, written to, parked, retired. */
const LIFECYCLE = new Set([
  ...START_EVENTS,
  'worker_started',
  'worker_turn',
  'worker_retired',
  'worker_fallback',
  'live_start_failed',
  'turn_parked',
  'parked_turn_retired',
  'parked_turn_lost',
  'parked_turn_expired',
  'resume_refused',
]);

/** The live-CLI lines of `logs[from..to)`, short. */
function lifecycle(logs: readonly Log[], from: number, to: number): string[] {
  return logs
    .slice(from, to)
    .filter((l) => LIFECYCLE.has(String(l.event)))
    .map((l) => [l.event, l.pid !== undefined ? `pid ${String(l.pid)}` : '', l.reason ?? ''].filter(Boolean).join(' '));
}

/** The session's conversation requests, each read against olp's log and the model's calls. */
export function sessionRows(
  seen: readonly ClientRequest[],
  logs: readonly Log[],
  model: readonly ModelCall[],
): SessionRow[] {
  let ended = 0;
  return seen.flatMap((x) => {
    const c = classify(x);
    if (!c) return [];
    const mine = logs.filter((l) => l.requestId === x.requestId);
    const line = mine.find((l) => l.event === 'request');
    const at = line ? logs.indexOf(line) : logs.length;
    const meanwhile = lifecycle(logs, ended, at + 1);
    ended = at + 1;
    const modelMs = model
      .filter((m) => m.kind === c.kind && m.at >= x.startedAt && m.at <= x.endedAt)
      .reduce((s, m) => s + m.ms, 0);
    const wallMs = x.endedAt - x.startedAt;
    return [
      {
        n: x.n,
        turn: x.turn,
        ...c,
        requestId: x.requestId,
        status: x.status,
        run: String(line?.run ?? '?'),
        session: String(line?.session ?? '-'),
        rotation: String(line?.rotation ?? '-'),
        starts: mine.filter((l) => START_EVENTS.includes(String(l.event))).length,
        pids: [...new Set(mine.filter((l) => typeof l.pid === 'number').map((l) => l.pid as number))],
        kept: mine.some((l) => l.event === 'worker_started'),
        meanwhile,
        wallMs,
        modelMs,
        addedMs: wallMs - modelMs,
      },
    ];
  });
}

/** Whether olp has logged the end of every recorded conversation request (its `request` line). */
export function allLogged(seen: readonly ClientRequest[], logs: readonly Log[]): boolean {
  const done = new Set(logs.filter((l) => l.event === 'request').map((l) => l.requestId));
  return seen.every((x) => !classify(x) || (x.endedAt > 0 && done.has(x.requestId)));
}

/** Every backend CLI start olp logged. */
export function backendStarts(logs: readonly Log[]): Log[] {
  return logs.filter((l) => START_EVENTS.includes(String(l.event)));
}

/**
 * Why each main request after the session's first that did not run on a live CLI (warm or parked)
 * ran otherwise: what in it differed from the conversation olp kept (`divergences`, see
 * session-diff.ts), or, when nothing did, olp's live-CLI log lines around it.
 */
export function explainRuns(
  rows: readonly SessionRow[],
  divergences: ReadonlyMap<number, string>,
): Map<number, string> {
  const why = new Map(divergences);
  for (const r of rows.filter((x) => x.kind === 'main').slice(1))
    if (r.run !== 'warm' && r.run !== 'parked' && !why.has(r.n))
      why.set(r.n, `the conversation goes on as olp kept it; olp's log: ${r.meanwhile.join(', ') || 'nothing'}`);
  return why;
}

/**
 * One line per row: what a reader of a failed assertion needs to see; with `why` (see
 * session-diff.ts), what in a request differed from the conversation olp kept, under its line.
 */
export function describeRows(rows: readonly SessionRow[], why?: ReadonlyMap<number, string>): string {
  return rows
    .map(
      (r) =>
        `#${r.n} turn ${r.turn} ${r.kind}/${r.step} ${r.status} run=${r.run} session=${r.session}` +
        `${r.rotation !== '-' ? ` rotation=${r.rotation}` : ''} starts=${r.starts}${r.kept ? ' kept' : ''} ${Math.round(r.wallMs)} ms` +
        (why?.has(r.n) ? `\n    why: ${why.get(r.n)}` : ''),
    )
    .join('\n');
}

import type { BackendEvent, EventParser, Turn } from '../backends/types.js';
import type { Logger } from '../log/index.js';
import type { RunningProcess } from '../process/index.js';
import type { BridgeSession, ParkedTurn, ToolBridge, ToolSpec } from '../tools/index.js';
import { toChildEnv, type Workspace } from '../workspace/index.js';
import { follow, readTurn, toOutcome, type RunOutcome, type TurnDeps, type TurnInput } from './index.js';

export interface ToolTurnDeps {
  bridge: ToolBridge;
  /** How long a turn may wait, parked, for the client's tool results. */
  parkTtlMs: number;
}

/** A parked tool-call turn: the CLI mid-turn, blocked on its MCP calls to olp's bridge. */
export interface ToolParkedTurn extends ParkedTurn {
  /**
   * Goes on with the client's results (by tool call id): the bridge answers the CLI's calls and
   * the rest of the turn streams from the same process. Undefined when the CLI is gone (the
   * caller runs a fresh turn instead): nothing was yielded then.
   */
  resume(results: ReadonlyMap<string, string>, signal: AbortSignal, log: Logger): AsyncGenerator<BackendEvent, RunOutcome | undefined>;
}

interface Live {
  deps: TurnDeps & { tools: ToolTurnDeps };
  backend: TurnInput['backend'];
  keyId: string;
  model: string;
  proc: RunningProcess;
  lines: AsyncIterator<string>;
  parser: EventParser;
  ws: Workspace;
  session: BridgeSession;
  life: AbortController;
  gone: boolean;
  retired?: Promise<void>;
  /** Lines read since the turn last went on with the client's results. */
  read: number;
  /** A read of the CLI's next line still pending from `settle`, taken by the next read. */
  next?: Promise<IteratorResult<string>> | undefined;
}

/**
 * A turn that offers the client's functions through olp's MCP bridge. The CLI runs the model;
 * when the model's message ends in calls of those functions, the calls have streamed out as
 * events and the turn returns `finishReason: 'tool_calls'` with a parked turn: the process stays,
 * blocked on its MCP calls, until the client's next request brings the results (`resume`), the
 * parked turn expires, or the daemon stops. It runs without a session (the history goes in whole).
 */
export async function* runToolTurn(deps: TurnDeps & { tools: ToolTurnDeps }, input: TurnInput & { tools: readonly ToolSpec[] }): AsyncGenerator<BackendEvent, RunOutcome> {
  const { backend, log } = input;
  const session = deps.tools.bridge.open(input.tools);
  const turn: Turn = {
    ...input.turn,
    session: { mode: 'ephemeral' },
    live: false,
    // The CLI's own MCP timeout sits above the parked turn's.
    tools: { specs: input.tools, url: session.url, endpoint: session.endpoint, token: session.token, timeoutMs: deps.tools.parkTtlMs + 60_000 },
  };
  const ws = deps.workspaces.create({ keyId: input.keyId, requestId: input.requestId, links: deps.replay ? [] : backend.links(turn), ...(backend.homeDirs ? { dirs: backend.homeDirs } : {}) });
  const life = new AbortController();
  let state: Live | undefined;
  let room: (() => void) | undefined;
  try {
    room = await deps.cap?.acquire(input.signal);
    const prepared = backend.prepare(turn, ws);
    for (const f of prepared.files) ws.writeFile(f.name, f.content);
    const env = toChildEnv(deps.hostEnv, backend.envPolicy(turn, ws), ws.home);
    const call = { backend: backend.id, model: turn.cliModel, prompt: [prepared.invocation.stdin, ...prepared.files.filter((f) => f.name !== 'mcp.json').map((f) => f.content)].join('\u0000') };
    // The process may wait, parked, several times as long as one turn: each step has its own bound.
    const proc = deps.supervisor.run({ ...prepared.invocation, env, cwd: ws.cwd }, { ...deps.limits, timeoutMs: deps.limits.timeoutMs + 24 * 3600_000 }, life.signal, log, call);
    room?.();
    log.debug({ event: 'spawned', pid: proc.pid, backend: backend.id, model: turn.cliModel, tools: input.tools.length }, 'spawned');
    state = { deps, backend, keyId: input.keyId, model: turn.cliModel, proc, lines: proc.lines[Symbol.asyncIterator](), parser: backend.createParser(), ws, session, life, gone: false, read: 0 };
    const live = state;
    void proc.exit.then(() => {
      live.gone = true;
    });
    return yield* step(state, input.signal, log, 'cold');
  } finally {
    room?.();
    if (!state) {
      ws.remove();
      session.close();
    }
  }
}

/** Reads the turn up to its end or its next tool step; parks at a tool step, cleans up otherwise. */
async function* step(s: Live, signal: AbortSignal, log: Logger, run: RunOutcome['run']): AsyncGenerator<BackendEvent, RunOutcome> {
  const unfollow = follow(signal, s.life);
  const totalTimer = setTimeout(() => s.life.abort('timeout'), s.deps.limits.timeoutMs);
  let parked = false;
  try {
    s.proc.expect();
    // A read `settle` left pending comes first.
    const lines: AsyncIterator<string> = {
      next: () => {
        const pending = s.next;
        s.next = undefined;
        return pending ?? s.lines.next();
      },
    };
    const retrying = yield* readTurn(lines, s.parser, s.proc, s.deps.limits, s.life, log, () => s.read++);
    if (s.parser.toolStep?.open) yield* settle(s);
    const tools = s.parser.toolStep;
    // The CLI died right after it asked (before olp could park it): the client still gets the
    // calls, and its results go to a fresh turn.
    if (tools && s.gone) return { ok: true, finishReason: 'tool_calls', usage: tools.usage, run };
    if (tools) {
      if (!tools.open) s.session.expect(tools.calls);
      s.proc.hold();
      parked = true;
      log.debug({ event: 'turn_parked', pid: s.proc.pid, calls: tools.calls.length }, 'waiting for the client’s tool results');
      return { ok: true, finishReason: 'tool_calls', usage: tools.usage, run, parked: toParked(s, tools.calls.map((c) => c.id)) };
    }
    await s.lines.return?.(undefined);
    const exit = await s.proc.exit;
    return { ...toOutcome(s.backend, s.parser, exit, s.deps.limits, retrying), run };
  } finally {
    clearTimeout(totalTimer);
    unfollow();
    if (!parked) await retire(s);
  }
}

/** How long the CLI must stay quiet, every call made, before an open step is taken as whole. */
const SETTLE_MS = 60;
/** How long an open step waits for the CLI to make the calls it reported. */
const SETTLE_MAX_MS = 5_000;

/**
 * Reads on while an open tool step may still grow: more calls of the same model message. Each
 * call is expected at the bridge as it is read (the CLI may already be waiting on it); the step
 * ends when all have been asked for and no line came for SETTLE_MS, or the turn ended anyway.
 */
async function* settle(s: Live): AsyncGenerator<BackendEvent, void> {
  const deadline = performance.now() + SETTLE_MAX_MS;
  let expected = 0;
  for (;;) {
    const calls = s.parser.toolStep?.calls ?? [];
    if (calls.length > expected) {
      s.session.expect(calls.slice(expected), { exact: true });
      expected = calls.length;
    }
    if (!s.parser.toolStep || s.parser.complete) return;
    const asked = s.session.unasked === 0;
    const wait = asked ? SETTLE_MS : Math.min(SETTLE_MS, deadline - performance.now());
    if (wait <= 0) return;
    s.next ??= s.lines.next();
    let timer: NodeJS.Timeout | undefined;
    const step = await Promise.race([s.next, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), wait)))]);
    clearTimeout(timer);
    if (!step) {
      if (asked) return;
      continue;
    }
    s.next = undefined;
    if (step.done) return;
    s.proc.progress();
    for (const ev of s.parser.push(step.value)) yield ev;
  }
}

function retire(s: Live): Promise<void> {
  s.retired ??= (async () => {
    s.life.abort('done');
    await s.lines.return?.(undefined);
    await s.proc.exit;
    s.session.close();
    s.ws.removeLater().catch(() => undefined);
  })();
  return s.retired;
}

function toParked(s: Live, callIds: string[]): ToolParkedTurn {
  return {
    keyId: s.keyId,
    model: s.model,
    callIds,
    retire: () => retire(s),
    async *resume(results, signal, log) {
      if (s.gone || s.retired) {
        await retire(s);
        return undefined;
      }
      s.parser.continueAfterTools?.();
      s.session.provide(results);
      // A CLI that died while parked may not have been seen to go yet: if the turn fails before
      // it says anything, it is treated as gone (the caller runs a fresh turn).
      s.read = 0;
      const gen = step(s, signal, log, 'parked');
      try {
        for (;;) {
          const next = await gen.next();
          if (next.done) {
            // Not a line since the results went in, and the CLI is gone: it had died parked.
            if (!next.value.ok && s.read === 0 && s.gone) {
              log.info({ event: 'parked_turn_lost', pid: s.proc.pid, code: next.value.error.code }, 'the parked CLI ended without going on; running the turn fresh');
              return undefined;
            }
            return next.value;
          }
          yield next.value;
        }
      } finally {
        await gen.return(undefined as never);
      }
    },
  };
}

import type { Backend, BackendEvent, EventParser } from '../backends/index.js';
import type { Logger } from '../log/index.js';
import type { RunningProcess } from '../process/index.js';
import type { BridgeSession } from '../tools/index.js';
import type { Workspace } from '../workspace/index.js';
import { readTurn, toOutcome } from './read.js';
import type { RunDeps, RunOutcome, ToolParkedTurn } from './types.js';
import { follow, stopProcess } from './stop.js';

/** A tool-call turn's CLI, from its spawn to its retirement (it may park several times). */
export interface ToolLive {
  deps: RunDeps;
  backend: Backend;
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

/** Makes the parked turn a tool step ends at (see parked.ts). */
export type Park = (s: ToolLive, callIds: string[]) => ToolParkedTurn;

/** Reads the turn up to its end or its next tool step; parks at a tool step, cleans up otherwise. */
export async function* step(
  s: ToolLive,
  signal: AbortSignal,
  log: Logger,
  run: RunOutcome['run'],
  park: Park,
): AsyncGenerator<BackendEvent, RunOutcome> {
  const unfollow = follow(signal, s.life);
  const totalTimer = setTimeout(() => stopProcess(s.life, 'timeout'), s.deps.limits.timeoutMs);
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
    const retrying = yield* readTurn(lines, s.parser, s.proc, s.deps, s.life, log, () => s.read++);
    if (s.parser.toolStep?.open) yield* settle(s);
    const tools = s.parser.toolStep;
    // The CLI died right after it asked (before olp could park it): the client still gets the
    // calls, and its results go to a fresh turn.
    if (tools && s.gone) return { ok: true, finishReason: 'tool_calls', usage: tools.usage, run };
    if (tools) {
      if (!tools.open) s.session.expect(tools.calls);
      s.proc.hold();
      parked = true;
      log.debug(
        { event: 'turn_parked', pid: s.proc.pid, calls: tools.calls.length },
        'waiting for the client’s tool results',
      );
      return {
        ok: true,
        finishReason: 'tool_calls',
        usage: tools.usage,
        run,
        parked: park(
          s,
          tools.calls.map((c) => c.id),
        ),
      };
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
async function* settle(s: ToolLive): AsyncGenerator<BackendEvent, void> {
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
    const step = await Promise.race([
      s.next,
      new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), wait))),
    ]);
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

/** Stops the tool turn's CLI and cleans up after it, once. */
export function retire(s: ToolLive): Promise<void> {
  s.retired ??= (async () => {
    stopProcess(s.life, 'done');
    await s.lines.return?.(undefined);
    await s.proc.exit;
    s.session.close();
    s.ws.removeLater().catch(() => undefined);
  })();
  return s.retired;
}

import type { Backend, BackendEvent, EventParser } from '../backends/index.js';
import type { Logger } from '../log/index.js';
import type { RunningProcess } from '../process/index.js';
import type { BridgeSession } from '../tools/index.js';
import type { RetireReason, Worker } from '../workers/index.js';
import type { Workspace } from '../workspace/index.js';
import { costOf, LIVE_EXIT, readTurn, toOutcome, turnUsage } from './read.js';
import type { LiveSlot, RunDeps, RunOutcome, ToolParkedTurn } from './types.js';
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
  /** The session slot the turn runs in (as the worker pool names slots), if any. */
  slotKey?: string | undefined;
  /** The slot the CLI serves when it may be kept for the conversation's later turns. */
  pooled?: LiveSlot | undefined;
  /** The slot's worker this CLI is (a warm turn's): the pool owns its process. */
  worker?: Worker | undefined;
  /** The CLI's running cost as of its last answered turn (claude reports the process's total). */
  cost: number;
  /** Work that follows the turn's final answer; `kept`: the CLI lives on as the slot's worker. */
  after?: ((outcome: RunOutcome, kept: boolean) => void) | undefined;
}

/** Makes the parked turn a tool step ends at (see parked.ts). */
export type Park = (s: ToolLive, callIds: string[]) => ToolParkedTurn;

/**
 * Reads the turn up to its end or its next tool step: parks at a tool step; at the end, a CLI of
 * a pooled slot that answered is kept as the slot's worker; any other is stopped and cleaned up.
 */
export async function* step(
  s: ToolLive,
  signal: AbortSignal,
  log: Logger,
  run: RunOutcome['run'],
  park: Park,
): AsyncGenerator<BackendEvent, RunOutcome> {
  const unfollow = follow(signal, s.life);
  const totalTimer = setTimeout(() => stopProcess(s.life, 'timeout'), s.deps.limits.timeoutMs);
  // Parked, or kept as the slot's worker: the process lives on.
  let held = false;
  if (s.worker) s.worker.parked = false;
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
    if (tools && s.gone) return { ok: true, stopReason: { type: 'tool_use' }, usage: tools.usage, run };
    if (tools) {
      if (!tools.open) s.session.expect(tools.calls);
      s.proc.hold();
      held = true;
      if (s.worker) s.worker.parked = true;
      log.debug(
        { event: 'turn_parked', pid: s.proc.pid, calls: tools.calls.length },
        'waiting for the client’s tool results',
      );
      return {
        ok: true,
        stopReason: { type: 'tool_use' },
        usage: tools.usage,
        run,
        parked: park(
          s,
          tools.calls.map((c) => c.id),
        ),
      };
    }
    if (s.parser.complete && s.pooled && !s.gone && s.next === undefined) {
      const outcome = s.parser.finish(LIVE_EXIT);
      if (outcome.ok) {
        const usage = turnUsage(outcome, s.cost);
        unfollow();
        held = keep(s, s.pooled, costOf(outcome));
        const answered: RunOutcome = { ...outcome, usage, run };
        s.after?.(answered, held);
        if (held) return answered;
      }
    }
    // A live CLI that is not kept ends once its input does.
    if (s.pooled) s.proc.endInput();
    await s.lines.return?.(undefined);
    const exit = await s.proc.exit;
    const outcome: RunOutcome = { ...toOutcome(s.backend, s.parser, exit, s.deps.limits, retrying), run };
    if (outcome.ok && !s.pooled) s.after?.(outcome, false);
    return outcome;
  } finally {
    clearTimeout(totalTimer);
    unfollow();
    if (!held) await retire(s, signal.aborted ? 'aborted' : 'failed');
  }
}

/**
 * A CLI that gave its final answer, kept as its slot's worker: a warm worker goes back to the
 * pool (which may still retire it: its turns, its age), a new one is adopted when there is room.
 */
function keep(s: ToolLive, slot: LiveSlot, total: number): boolean {
  if (s.worker) {
    slot.pool.release(s.worker, total);
    return true;
  }
  s.proc.hold();
  const run = { proc: s.proc, lines: s.lines, ws: s.ws, life: s.life, cost: total, tools: s.session };
  return slot.pool.adopt(slot.slot, s.keyId, run, slot.fit);
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

/** Stops the tool turn's CLI and cleans up after it, once (a worker's, through its pool). */
export function retire(s: ToolLive, reason: RetireReason = 'done'): Promise<void> {
  s.retired ??= s.worker
    ? s.pooled!.pool.retire(s.worker, reason)
    : (async () => {
        stopProcess(s.life, 'done');
        await s.lines.return?.(undefined);
        await s.proc.exit;
        s.session.close();
        s.ws.removeLater().catch(() => undefined);
      })();
  return s.retired;
}

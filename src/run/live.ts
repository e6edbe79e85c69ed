import type { BackendEvent } from '../backends/index.js';
import { costOf, LIVE_EXIT, readTurn, toOutcome, turnUsage } from './read.js';
import type { LivePlan, RunDeps, RunInput, RunOutcome } from './types.js';
import { interruptTurn } from './interrupt.js';
import { follow, stopProcess } from './stop.js';
import { waitToWrite } from './spawn.js';

/** A live worker that shows no sign of life this long after a write is replaced by a cold run. */
const WARM_START_MS = 2000;

/**
 * One turn written to a live CLI: a warm worker's next turn, or a spare's first (it becomes the
 * slot's worker under the session id it reports). Returns undefined, having retired the CLI,
 * when it showed no sign of life (nothing was yielded: the caller runs the plan's fall-back).
 */
export async function* runLive(
  deps: RunDeps,
  input: RunInput,
  plan: LivePlan,
): AsyncGenerator<BackendEvent, RunOutcome | undefined> {
  const { backend, log } = input;
  const { pooled, worker: w } = plan;
  const { pool } = pooled;
  const parser = backend.live?.parser?.() ?? backend.createParser();
  const unfollow = follow(input.signal, w.life);
  if (input.interrupt) input.interrupt.stop = () => interruptTurn(w.proc, parser, w.life);
  let seen = false;
  let totalTimer: NodeJS.Timeout | undefined;
  let startTimer: NodeJS.Timeout | undefined;
  let settled = false;
  let written: (() => void) | undefined;
  try {
    written = await waitToWrite(deps, backend, plan.turn, input.signal);
    w.proc.expect();
    if (!(await w.proc.write(plan.write))) {
      await pool.retire(w, 'no_answer');
      settled = true;
      return undefined;
    }
    log.debug(
      { event: 'worker_turn', pid: w.proc.pid, slot: w.slot, turn: w.turns + 1, mode: plan.mode },
      'turn written to a live CLI',
    );
    startTimer = setTimeout(() => stopProcess(w.life, 'done'), WARM_START_MS);
    totalTimer = setTimeout(() => stopProcess(w.life, 'timeout'), deps.limits.timeoutMs);
    const retrying = yield* readTurn(w.lines, parser, w.proc, deps, w.life, log, () => {
      if (!seen) clearTimeout(startTimer);
      seen = true;
    });
    if (parser.complete) {
      const outcome = parser.finish(LIVE_EXIT);
      if (outcome.ok) {
        const cost = costOf(outcome);
        const usage = turnUsage(outcome, w.cost);
        unfollow();
        if (plan.mode === 'prestarted') pool.promote(w, outcome.sessionId ?? '', pooled.fit.system, cost);
        else pool.release(w, cost);
        settled = true;
        return { ...outcome, usage, run: plan.mode };
      }
    }
    // An error result, or the process ended or was stopped mid-turn: it serves no more turns.
    const retired = pool.retire(w, input.signal.aborted ? 'aborted' : 'failed');
    const exit = await w.proc.exit;
    await retired;
    settled = true;
    if (!seen && !input.signal.aborted && exit.reason !== 'shutdown') return undefined;
    return { ...toOutcome(backend, parser, exit, deps.limits, retrying), run: plan.mode };
  } finally {
    written?.();
    if (input.interrupt) input.interrupt.stop = undefined;
    clearTimeout(startTimer);
    clearTimeout(totalTimer);
    unfollow();
    // Closed early by the consumer (client gone): the turn is cut, so is the worker.
    if (!settled) await pool.retire(w, 'aborted');
  }
}

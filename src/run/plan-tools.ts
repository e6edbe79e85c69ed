import { answersCalls } from '../sessions/index.js';
import { workerSlot } from '../workers/index.js';
import { fitOf, freshReset, STARTING_WAIT_MS, toTurn } from './plan.js';
import type { ParkedRunPlan, Pooled, RunDeps, RunInput, ToolPlan } from './types.js';

/**
 * The request's claimed parked turn, when the lease continues it: the lease resumes the slot that
 * CLI serves (or holds no slot at all). Any other claimed turn is retired. A lease that resumes a
 * session with tool results no CLI waits for any more starts the slot over with the whole
 * conversation: the results belong to a turn that no longer runs.
 */
export function planClaimed(input: RunInput, cliModel: string): ParkedRunPlan | undefined {
  const claimed = input.parked?.plan;
  if (input.parked) input.parked.plan = undefined;
  const planned = input.lease.plan;
  if (claimed) {
    const slot = planned.slot !== undefined ? workerSlot(input.keyId, input.backend.id, planned.slot) : undefined;
    const same = planned.mode === 'ephemeral' || (planned.mode === 'resumed' && claimed.turn.slot === slot);
    if (same && claimed.turn.model === cliModel) return { ...claimed, session: planned };
    void claimed.turn.retire(claimed.turn.model === cliModel ? 'superseded' : 'model_changed');
  }
  if (planned.mode === 'resumed' && answersCalls(planned.turns)) input.lease.rotate('parked_gone');
  return undefined;
}

/**
 * How a turn with the client's functions runs. With a session slot and live workers, it is the
 * conversation's CLI like any other: a continued session goes to the slot's warm worker started
 * with the same tools (their fingerprint is part of the worker's fit), else a process is spawned
 * for the slot's session (new, or resumed with only the new messages) and kept as the slot's
 * worker once it answers. Without a slot, it runs on its own with the whole conversation. Either
 * may park on the model's calls.
 */
export async function planToolTurn(deps: RunDeps, input: RunInput): Promise<ToolPlan> {
  const { backend, log } = input;
  const planned = input.lease.plan;
  const turn = toTurn(input.turn, planned);
  const tools = input.tools!;
  const base = { mode: 'tool' as const, session: planned, tools, deps: deps.tools! };
  const session = turn.session!;
  if (session.mode === 'ephemeral' || session.slot === undefined || !session.sessionId)
    return { ...base, run: 'cold', turn: { ...turn, session: { mode: 'ephemeral' }, live: false } };
  const run = session.mode === 'resumed' ? 'resumed' : 'cold';
  const pool = backend.live ? deps.workers : undefined;
  if (!pool) return { ...base, run, turn: { ...turn, live: false } };
  const slot = workerSlot(input.keyId, backend.id, session.slot);
  const fit = fitOf(turn, session.sessionId, tools);
  const pooled: Pooled = { pool, slot, fit, turn, session: planned };
  const spawned = async (): Promise<ToolPlan> => {
    // A worker still starting or retiring for this slot must be out of the session's way first.
    pool.retireSlot(slot, 'superseded');
    if (session.mode === 'fresh' && !session.forkOf)
      return { ...base, run, turn, pooled, reset: await freshReset(deps, input, pooled) };
    await pool.settled(slot);
    return { ...base, run, turn, pooled };
  };
  if (session.mode === 'resumed') {
    const worker = await pool.takeWhenUp(slot, fit, STARTING_WAIT_MS);
    if (worker?.tools) {
      const fallback = () => {
        log.info(
          { event: 'worker_fallback', slot, pid: worker.proc.pid },
          'the live worker did not answer; running the turn cold',
        );
        return spawned();
      };
      const write = backend.live!.input(turn.prompt, fit.sessionId, turn.outputSchema);
      return { ...base, run: 'warm', turn, pooled, worker, write, fallback };
    }
    if (worker) await pool.retire(worker, 'mismatch');
  }
  return spawned();
}

import { ClientAbortedError } from '../errors/index.js';
import type { BackendEvent, Turn } from '../backends/types.js';
import type { Lease } from '../sessions/index.js';
import type { Image } from '../transcript/index.js';
import { runTurn, type RunOutcome, type TurnDeps, type TurnInput } from './index.js';

/** The images of the turns being sent, if any. */
function imagesOf(turns: readonly { images?: Image[] }[]): { images?: Image[] } {
  const images = turns.flatMap((t) => t.images ?? []);
  return images.length ? { images } : {};
}

/** Pause before retrying a resume the CLI refused (reported as transient right after the previous run exits). */
const RESUME_RETRY_MS = 250;

/**
 * Runs a turn under a session lease. A resume refused with "no conversation found" before any
 * output is retried once (a fork is not), then the slot is rotated and the whole transcript
 * sent: the client never sees it. The lease learns how the turn ended (reply, failure or abort) on every path.
 */
export async function* runLeasedTurn(deps: TurnDeps, input: Omit<TurnInput, 'turn'> & { turn: Omit<Turn, 'session'>; lease: Lease }): AsyncGenerator<BackendEvent, RunOutcome> {
  const { lease } = input;
  let retried = false;
  let settled = false;
  let attempt = 0;
  let gen: AsyncGenerator<BackendEvent, RunOutcome> | undefined;
  try {
    for (;;) {
      const plan = lease.plan;
      const turn: Turn = {
        ...input.turn,
        prompt: { system: input.turn.prompt.system, text: plan.text, ...imagesOf(plan.turns) },
        session: {
          mode: plan.mode,
          ...(plan.sessionId ? { sessionId: plan.sessionId } : {}),
          ...(plan.slot !== undefined ? { slot: plan.slot } : {}),
          ...(plan.previousSessionId ? { previousSessionId: plan.previousSessionId } : {}),
          ...(plan.forkOf ? { forkOf: plan.forkOf } : {}),
        },
        // A slot's session may be continued by a live worker (when the daemon keeps them).
        live: plan.mode !== 'ephemeral',
      };
      // Each attempt gets its own workspace (the previous one may still be being removed).
      gen = runTurn(deps, { ...input, turn, requestId: attempt === 0 ? input.requestId : `${input.requestId}-r${attempt}` });
      attempt++;
      let reply = '';
      let step = await gen.next();
      while (!step.done) {
        if (step.value.type === 'text') reply += step.value.text;
        // The slot remembers the answer the CLI kept, not an attempt it gave up.
        if (step.value.type === 'abandoned' && reply.endsWith(step.value.text)) reply = reply.slice(0, reply.length - step.value.text.length);
        yield step.value;
        step = await gen.next();
      }
      const total = step.value;
      // A CLI that reports the session's running total (codex): this request's share is the difference.
      const outcome =
        total.usage && (plan.mode === 'resumed' || plan.forkOf) && plan.usageBase && input.backend.rebaseUsage ? { ...total, usage: input.backend.rebaseUsage(total.usage, plan.usageBase) } : total;
      if (!outcome.ok && reply.length === 0 && (plan.mode === 'resumed' || plan.forkOf) && outcome.error.code === 'session_not_found') {
        input.log.warn({ event: 'resume_refused', sessionId: plan.forkOf ?? plan.sessionId, retried }, 'the CLI refused to resume the session');
        // A fork's old session was read after its worker had exited: missing, it is gone.
        if (!retried && !plan.forkOf) {
          retried = true;
          await new Promise((r) => setTimeout(r, RESUME_RETRY_MS));
        } else {
          lease.rotate('resume_failed');
        }
        continue;
      }
      settled = true;
      const rawUsage = input.backend.cumulativeUsage && total.usage ? { rawUsage: total.usage.raw } : {};
      lease.commit(outcome.ok ? { ok: true, reply, ...rawUsage, ...(outcome.sessionId ? { sessionId: outcome.sessionId } : {}) } : { ok: false, aborted: false });
      return outcome;
    }
  } catch (err) {
    if (!settled) {
      settled = true;
      lease.commit({ ok: false, aborted: err instanceof ClientAbortedError });
    }
    throw err;
  } finally {
    // Closed early by the consumer: close the inner turn (kills the child) and mark the slot.
    if (gen) await gen.return(undefined as never);
    if (!settled) lease.commit({ ok: false, aborted: true });
  }
}

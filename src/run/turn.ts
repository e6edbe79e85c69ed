import type { BackendEvent, TurnOutcome } from '../backends/index.js';
import { ClientAbortedError } from '../errors/index.js';
import type { SessionPlan } from '../sessions/index.js';
import type { CallText } from '../transcript/index.js';
import { afterTurn } from './background.js';
import { runCold } from './cold.js';
import { runLive } from './live.js';
import { runParked } from './parked.js';
import { planTurn } from './plan.js';
import { planClaimed, planToolTurn } from './plan-tools.js';
import { runToolTurn } from './tool.js';
import type { ColdPlan, LivePlan, RunDeps, RunInput, RunOutcome, ToolPlan } from './types.js';

/** Pause before retrying a resume the CLI refused (reported as transient right after the previous run exits). */
const RESUME_RETRY_MS = 250;

/**
 * Runs a turn under its session lease: planned once (`planTurn`), executed by its mode's executor.
 * A resume refused with "no conversation found" before any output is retried once (a fork is
 * not), then the slot is rotated and the whole transcript sent: the client never sees it. The
 * lease learns how the turn ended (reply, failure or abort) on every path.
 */
export async function* runTurn(deps: RunDeps, input: RunInput): AsyncGenerator<BackendEvent, RunOutcome> {
  const { lease } = input;
  let retried = false;
  let settled = false;
  let attempt = 0;
  let gen: AsyncGenerator<BackendEvent, Executed> | undefined;
  try {
    for (;;) {
      // Each attempt gets its own workspace (the previous one may still be being removed).
      gen = execute(deps, { ...input, requestId: attempt === 0 ? input.requestId : `${input.requestId}-r${attempt}` });
      attempt++;
      let reply = '';
      let calls: CallText[] = [];
      // The session the CLI reports (a turn that parks on tool calls ends before it says so again).
      let reported: string | undefined;
      let step = await gen.next();
      while (!step.done) {
        const ev = step.value;
        if (ev.type === 'text') reply += ev.text;
        else if (ev.type === 'session') reported = ev.sessionId;
        else if (ev.type === 'tool_call') calls[ev.index] = { id: ev.id, name: ev.name, args: '' };
        else if (ev.type === 'tool_args' && calls[ev.index]) calls[ev.index]!.args += ev.text;
        // The slot remembers the answer the CLI kept, not an attempt it gave up.
        else if (ev.type === 'abandoned') {
          if (reply.endsWith(ev.text)) reply = reply.slice(0, reply.length - ev.text.length);
          calls = [];
        }
        yield ev;
        step = await gen.next();
      }
      const { outcome: total, session: plan } = step.value;
      // A CLI that reports the session's running total (codex): this request's share is the difference.
      const outcome =
        total.usage && (plan.mode === 'resumed' || plan.forkOf) && plan.usageBase && input.backend.rebaseUsage
          ? { ...total, usage: input.backend.rebaseUsage(total.usage, plan.usageBase) }
          : total;
      if (
        !outcome.ok &&
        reply.length === 0 &&
        (plan.mode === 'resumed' || plan.forkOf) &&
        outcome.error.code === 'session_not_found'
      ) {
        input.log.warn(
          { event: 'resume_refused', sessionId: plan.forkOf ?? plan.sessionId, retried },
          'the CLI refused to resume the session',
        );
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
      commitTurn(input, outcome, total, { reply, calls, reported }, plan.usageBase);
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

/** An attempt's outcome, and the session plan it was planned from. */
interface Executed {
  outcome: RunOutcome;
  session: SessionPlan;
}

/** One attempt: its plan, its executor, and the work off the response path that follows it on a pooled slot. */
async function* execute(deps: RunDeps, input: RunInput): AsyncGenerator<BackendEvent, Executed> {
  const claimed = planClaimed(input, input.turn.cliModel);
  if (claimed) {
    const outcome = yield* runParked(claimed, input.signal, input.log);
    if (outcome) return { outcome, session: claimed.session };
    // The CLI that waited for these results is gone: the conversation starts over, whole.
    input.lease.rotate('parked_gone');
  }
  const plan = input.tools && deps.tools ? await planToolTurn(deps, input) : await planTurn(deps, input);
  const outcome = yield* executePlan(deps, input, plan);
  // A tool turn's own CLI sees to what follows its final answer (it may park first).
  if (plan.mode !== 'tool' && plan.pooled) afterTurn(deps, input, plan.pooled, outcome);
  return { outcome, session: plan.session };
}

/** The plan's executor; a live CLI that shows no sign of life hands over to the plan's fall-back. */
async function* executePlan(
  deps: RunDeps,
  input: RunInput,
  plan: ColdPlan | LivePlan | ToolPlan,
): AsyncGenerator<BackendEvent, RunOutcome> {
  switch (plan.mode) {
    case 'tool':
      return ((yield* runToolTurn(deps, input, plan)) ?? (yield* runToolTurn(deps, input, await plan.fallback!())))!;
    case 'warm':
    case 'prestarted':
      return (yield* runLive(deps, input, plan)) ?? (yield* runCold(deps, input, await plan.fallback()));
    case 'cold':
    case 'resumed':
      return yield* runCold(deps, input, plan);
    default:
      return unplanned(plan);
  }
}

/** A plan mode without an executor is a compile error here. */
function unplanned(plan: never): never {
  throw new Error(`no executor for the run plan ${JSON.stringify(plan)}`);
}

/** What the slot keeps of a turn that ended: its reply (and calls) and session, or that it failed. */
function commitTurn(
  input: RunInput,
  outcome: TurnOutcome,
  total: TurnOutcome,
  seen: { reply: string; calls: CallText[]; reported: string | undefined },
  usageBase: SessionPlan['usageBase'],
): void {
  let { reply } = seen;
  // A turn interrupted at a stop sequence: the client has the reply up to it, and so the slot.
  if (outcome.ok && outcome.stopReason.type === 'interrupted' && input.interrupt?.kept !== undefined)
    reply = input.interrupt.kept;
  // A running total to subtract next time: this turn's, or (a turn that reported none, such as an
  // interrupted codex turn) the one before it still.
  const base = total.usage?.raw ?? usageBase;
  const rawUsage = input.backend.cumulativeUsage && base ? { rawUsage: { ...base } } : {};
  const called = outcome.ok && outcome.stopReason.type === 'tool_use' ? { calls: seen.calls.filter(Boolean) } : {};
  const sessionId = outcome.sessionId ?? seen.reported;
  input.lease.commit(
    outcome.ok
      ? { ok: true, reply, ...called, ...rawUsage, ...(sessionId ? { sessionId } : {}) }
      : { ok: false, aborted: false },
  );
}

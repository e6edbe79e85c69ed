import type { BackendEvent } from '../backends/index.js';
import type { TurnInterrupt } from '../run/index.js';
import { Forwarding } from './forwarding.js';
import type { Stage } from './progress.js';
import type { ConversationEvent } from './types.js';

/**
 * Passes a turn's events on as the conversation's, announcing the answer at its first sign. A
 * reply answered in one body is held until the turn ends, so that an attempt the CLI abandons
 * (its provider's stream broke and it asked the model again) is dropped unseen. A streamed one
 * that already carries text of such an attempt goes on only if the retried attempt says that
 * text again first (it is held back until it has, then only the rest is sent); otherwise it
 * ends with `backend_retry_mid_stream`.
 *
 * Thinking goes on only to a request that shows it (`Reasoning.shown`: Messages unless thinking
 * is off, Responses with a summary asked for, chat with `reasoning_effort`; the others never see
 * it, and for them it changes nothing). There it announces the answer as text does:
 * what the client has seen commits the turn (no fallback after it, errors in-band). It is not the
 * reply's text (`sentChars`), and an abandoned attempt's thinking is not taken back (the CLI does
 * not count it: the client keeps it, and the retry's thinking follows it, unless the retry must
 * first say again text the client has, when it is dropped).
 */
export async function* forward<R extends { ok: boolean }>(
  s: Stage,
  gen: AsyncGenerator<BackendEvent, R>,
  model: string,
  backend: string,
  stopped: (sequence: string, outcome?: R, droppedCalls?: readonly string[]) => R,
  interrupt?: TurnInterrupt,
): AsyncGenerator<ConversationEvent, R> {
  const f = new Forwarding(s, model, backend);
  let draining = false;
  let step = await gen.next();
  while (!step.done) {
    yield* f.take(step.value);
    // Streamed and stopped: a live CLI is asked to interrupt its turn (its end is read, so the
    // turn's usage stands and the CLI serves the next); any other is cut here, which stops it.
    if (f.stoppedAt !== undefined && !draining) {
      if (interrupt) interrupt.kept = f.sent;
      draining = interrupt?.stop?.() === true;
      if (!draining) return stopped(f.stoppedAt);
    }
    step = await gen.next();
  }
  if (f.stoppedAt !== undefined && draining) return stopped(f.stoppedAt, step.value);
  yield* f.end(step.value.ok);
  return f.stoppedAt !== undefined ? stopped(f.stoppedAt, step.value, f.droppedCalls) : step.value;
}

import { planScope } from '../plan/index.js';
import type { BackendEvent } from '../backends/index.js';
import type { TurnInterrupt } from '../run/index.js';
import { backendRetryMidStream } from '../errors/index.js';
import { createFenceStripper, isJsonFormat, outputSchemaOf } from '../transcript/index.js';
import type { Stage } from './progress.js';
import { createStopMatcher } from './stop-sequences.js';
import type { ConversationEvent } from './types.js';

/**
 * Passes a turn's events on as the conversation's, announcing the answer at its first sign. A
 * reply answered in one body is held until the turn ends, so that an attempt the CLI abandons
 * (its provider's stream broke and it asked the model again) is dropped unseen. A streamed one
 * that already carries text of such an attempt goes on only if the retried attempt says that
 * text again first (it is held back until it has, then only the rest is sent); otherwise it
 * ends with `backend_retry_mid_stream`.
 *
 * Thinking goes on to Messages requests only (the one format that has a place for it; the others
 * never see it, and for them it changes nothing). There it announces the answer as text does:
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
  stopped: (sequence: string, outcome?: R) => R,
  interrupt?: TurnInterrupt,
): AsyncGenerator<ConversationEvent, R> {
  const { deps, meta } = s;
  const format = s.input.responseFormat;
  // A JSON reply reaches the client without the code fence a model may wrap it in; one the
  // CLI was given another form of the schema for is made to fit the client's, whole.
  let fences = isJsonFormat(format) ? createFenceStripper() : undefined;
  const schema = outputSchemaOf(format);
  const fit = schema ? deps.backends.find((b) => b.id === backend)?.fitReply : undefined;
  let whole = '';
  const held: BackendEvent[] | undefined = meta.stream ? undefined : [];
  // Streamed: text the client has of an abandoned attempt, and what the retried one said so far.
  let owed: { text: string; said: string; events: number } | undefined;
  // Streamed reply events sent since the last tool call event (an abandoned attempt of text only?).
  let textRun = 0;
  // Streamed: some of the reply (text or a call, not thinking) reached the client.
  let answered = false;
  const thinks = meta.endpoint === 'messages';
  // The client's stop sequences: the reply ends before the first; nothing after it is sent.
  const stops = createStopMatcher(s.input.stopSequences);
  let stoppedAt: string | undefined;
  let draining = false;
  // The reply's text as sent, while a stop sequence may still cut it (what the slot keeps then).
  let sent = '';
  function* say(text: string, counted: boolean): Generator<ConversationEvent> {
    const cut = stops ? stops.push(text) : { text };
    if (stops) sent += cut.text;
    if (cut.text) yield* pass(s, { type: 'text', text: cut.text }, model, backend, counted);
    if (cut.matched !== undefined) stoppedAt = cut.matched;
  }
  function* deliver(ev: BackendEvent, counted: boolean): Generator<ConversationEvent> {
    if (stoppedAt !== undefined && ev.type !== 'plan') return;
    if (ev.type === 'text' && fences) {
      const text = fences.push(ev.text);
      if (fit) whole += text;
      else if (text) {
        answered = true;
        yield* say(text, counted);
      }
    } else if (ev.type === 'text') {
      answered = true;
      yield* say(ev.text, counted);
    } else {
      if (ev.type === 'tool_call' || ev.type === 'tool_args') answered = true;
      yield* pass(s, ev, model, backend, counted);
    }
  }
  let step = await gen.next();
  while (!step.done) {
    const ev = step.value;
    if (stoppedAt !== undefined) {
      // Cut at a stop sequence, the turn being interrupted: its end is awaited, nothing more sent.
      if (ev.type === 'plan') yield* pass(s, ev, model, backend);
    } else if (ev.type === 'thinking' && !thinks) {
      // not for this format
    } else if (ev.type === 'abandoned') {
      if (held) held.splice(cutAt(held, ev.events));
      else if (owed)
        owed = { ...owed, said: '', events: 0 }; // the retry's text was held back, never sent
      else if (!answered) {
        // Nothing reached the client yet (all of it held for the fence or the schema): start over.
        whole = '';
        if (fences) fences = createFenceStripper();
      } else if (!fences && ev.events <= textRun && ev.text !== '') {
        owed = { text: ev.text, said: '', events: 0 };
        textRun -= ev.events;
      } else throw backendRetryMidStream(backend);
    } else if (
      held &&
      (ev.type === 'text' || ev.type === 'tool_call' || ev.type === 'tool_args' || ev.type === 'thinking')
    ) {
      held.push(ev);
      yield* note(s, ev, model, backend);
    } else if (owed && ev.type === 'thinking') {
      // The retry's thinking: the client has the abandoned attempt's, and text after it.
    } else if (owed && ev.type === 'text') {
      owed.said += ev.text;
      owed.events++;
      const n = Math.min(owed.said.length, owed.text.length);
      if (owed.said.slice(0, n) !== owed.text.slice(0, n)) throw backendRetryMidStream(backend);
      if (owed.said.length >= owed.text.length) {
        const rest = owed.said.slice(owed.text.length);
        // The retried attempt's events so far: what the client has of it is what it said.
        textRun += owed.events;
        owed = undefined;
        if (rest) yield* deliver({ type: 'text', text: rest }, false);
      }
    } else if (owed && (ev.type === 'tool_call' || ev.type === 'tool_args')) {
      throw backendRetryMidStream(backend);
    } else {
      if (ev.type === 'text') textRun++;
      else if (ev.type === 'tool_call' || ev.type === 'tool_args') textRun = 0;
      yield* deliver(ev, false);
    }
    // Streamed and stopped: a live CLI is asked to interrupt its turn (its end is read, so the
    // turn's usage stands and the CLI serves the next); any other is cut here, which stops it.
    if (stoppedAt !== undefined && !draining) {
      if (interrupt) interrupt.kept = sent;
      draining = interrupt?.stop?.() === true;
      if (!draining) return stopped(stoppedAt);
    }
    step = await gen.next();
  }
  if (stoppedAt !== undefined && draining) return stopped(stoppedAt, step.value);
  // The retried answer ended short of what the client already has.
  if (owed && (step.value as { ok?: boolean } | undefined)?.ok !== false) throw backendRetryMidStream(backend);
  for (const ev of held ?? []) yield* deliver(ev, true);
  const rest = fences?.end() ?? '';
  const noted = held !== undefined;
  // (A failed turn's partial reply is not sent: its error still gets a proper status.)
  if (fit && schema && whole + rest !== '') {
    if (step.value.ok) yield* say(fit(whole + rest, schema), noted);
  } else if (rest && stoppedAt === undefined) yield* say(rest, noted);
  const tail = stops?.end() ?? '';
  if (tail) yield* pass(s, { type: 'text', text: tail }, model, backend, noted);
  return stoppedAt !== undefined ? stopped(stoppedAt, step.value) : step.value;
}

/** Where to cut a held reply so that its last `events` text and call events go (and thinking among them). */
function cutAt(held: readonly BackendEvent[], events: number): number {
  let cut = held.length;
  for (let n = events; n > 0 && cut > 0; ) if (held[--cut]!.type !== 'thinking') n--;
  return cut;
}

/** The answer's first sign announces it (headers); its text counts as sent (see `estimate`). */
function* note(
  s: Stage,
  ev: BackendEvent & { type: 'text' | 'tool_call' | 'tool_args' | 'thinking' },
  model: string,
  backend: string,
): Generator<ConversationEvent> {
  const { deps, meta, p } = s;
  if (!p.started) {
    p.started = true;
    const session = p.session ?? { mode: 'ephemeral' };
    // The login's plan as last known (this turn's report may come only after its text).
    yield {
      type: 'started',
      model,
      backend,
      session,
      headers: {
        ...p.headers,
        ...deps.plans?.headers(planScope(backend, s.principal.login)),
        'x-olp-session-mode': session.mode,
      },
      promptTokens: p.promptTokens,
    };
  }
  p.firstTokenMs ??= performance.now() - meta.started;
  if (ev.type === 'text' || ev.type === 'tool_args') p.sentChars += ev.text.length;
}

/** One event on to the client; `noted` when `note` has seen it already (a held reply's). */
function* pass(
  s: Stage,
  ev: BackendEvent,
  model: string,
  backend: string,
  noted = false,
): Generator<ConversationEvent> {
  if (ev.type === 'plan') {
    s.deps.plans?.report(planScope(backend, s.principal.login), ev.report);
    if (ev.report.overage) s.p.overage = true;
    return;
  }
  if (ev.type !== 'text' && ev.type !== 'tool_call' && ev.type !== 'tool_args' && ev.type !== 'thinking') return;
  if (!noted) yield* note(s, ev, model, backend);
  if (ev.type === 'thinking')
    yield { type: 'thinking', text: ev.text, ...(ev.signature ? { signature: ev.signature } : {}) };
  else yield ev.type === 'text' ? { type: 'text', text: ev.text } : ev;
}

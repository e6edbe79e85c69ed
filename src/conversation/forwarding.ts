import type { BackendEvent } from '../backends/index.js';
import { backendRetryMidStream } from '../errors/index.js';
import { createFenceStripper, isJsonFormat, outputSchemaOf, type FenceStripper } from '../transcript/index.js';
import { note, pass } from './deliver.js';
import type { Stage } from './progress.js';
import { createStopMatcher, type StopMatcher } from './stop-sequences.js';
import type { ConversationEvent } from './types.js';

/** What `forward` knows of one turn's events as they pass (see there). */
export class Forwarding {
  /** A JSON reply reaches the client without the code fence a model may wrap it in. */
  private fences: FenceStripper | undefined;
  private readonly schema: Record<string, unknown> | undefined;
  /** The CLI was given another form of the schema: the reply is made to fit the client's, whole. */
  private readonly fit: ((text: string, schema: Record<string, unknown>) => string) | undefined;
  private whole = '';
  /** A reply answered in one body: its events, until the turn ends. */
  private readonly held: BackendEvent[] | undefined;
  /** Streamed: text the client has of an abandoned attempt, and what the retried one said so far. */
  private owed: { text: string; said: string; events: number } | undefined;
  /** Streamed reply events sent since the last tool call event (an abandoned attempt of text only?). */
  private textRun = 0;
  /** Streamed: some of the reply (text or a call, not thinking) reached the client. */
  private answered = false;
  private readonly thinks: boolean;
  /** The client's stop sequences: the reply ends before the first; nothing after it is sent. */
  private readonly stops: StopMatcher | undefined;
  stoppedAt: string | undefined;
  /** The reply's text as sent, while a stop sequence may still cut it (what the slot keeps then). */
  sent = '';
  /** The ids of the model's calls that came after the stop sequence: the client never gets them. */
  readonly droppedCalls: string[] = [];

  constructor(
    private readonly s: Stage,
    private readonly model: string,
    private readonly backend: string,
  ) {
    const format = s.input.responseFormat;
    this.fences = isJsonFormat(format) ? createFenceStripper() : undefined;
    this.schema = outputSchemaOf(format);
    this.fit = this.schema ? s.deps.backends.find((b) => b.id === backend)?.fitReply : undefined;
    this.held = s.meta.stream ? undefined : [];
    // Thinking reaches only a client that reads it back (each format says when: `Reasoning.shown`).
    this.thinks = s.input.reasoning?.shown === true;
    this.stops = createStopMatcher(s.input.stopSequences);
  }

  /** One event of the turn. */
  *take(ev: BackendEvent): Generator<ConversationEvent> {
    const { held, owed } = this;
    if (this.stoppedAt !== undefined) {
      // Cut at a stop sequence, the turn being interrupted: its end is awaited, nothing more sent.
      if (ev.type === 'plan') yield* this.pass(ev);
      else if (ev.type === 'tool_call') this.droppedCalls.push(ev.id);
    } else if (ev.type === 'thinking' && !this.thinks) {
      // not for this format
    } else if (ev.type === 'abandoned') this.abandoned(ev);
    else if (
      held &&
      (ev.type === 'text' || ev.type === 'tool_call' || ev.type === 'tool_args' || ev.type === 'thinking')
    ) {
      held.push(ev);
      yield* note(this.s, ev, this.model, this.backend);
    } else if (owed && ev.type === 'thinking') {
      // The retry's thinking: the client has the abandoned attempt's, and text after it.
    } else if (owed && ev.type === 'text') yield* this.retold(owed, ev.text);
    else if (owed && (ev.type === 'tool_call' || ev.type === 'tool_args')) throw backendRetryMidStream(this.backend);
    else {
      if (ev.type === 'text') this.textRun++;
      else if (ev.type === 'tool_call' || ev.type === 'tool_args') this.textRun = 0;
      yield* this.deliver(ev, false);
    }
  }

  /** The CLI abandoned the attempt it was streaming: what of it can be taken back is. */
  private abandoned(ev: BackendEvent & { type: 'abandoned' }): void {
    if (this.held) this.held.splice(cutAt(this.held, ev.events));
    else if (this.owed)
      this.owed = { ...this.owed, said: '', events: 0 }; // the retry's text was held back, never sent
    else if (!this.answered) {
      // Nothing reached the client yet (all of it held for the fence or the schema): start over.
      this.whole = '';
      if (this.fences) this.fences = createFenceStripper();
    } else if (!this.fences && ev.events <= this.textRun && ev.text !== '') {
      this.owed = { text: ev.text, said: '', events: 0 };
      this.textRun -= ev.events;
    } else throw backendRetryMidStream(this.backend);
  }

  /** The retried attempt's text, held back until it has said again what the client has. */
  private *retold(owed: NonNullable<Forwarding['owed']>, text: string): Generator<ConversationEvent> {
    owed.said += text;
    owed.events++;
    const n = Math.min(owed.said.length, owed.text.length);
    if (owed.said.slice(0, n) !== owed.text.slice(0, n)) throw backendRetryMidStream(this.backend);
    if (owed.said.length < owed.text.length) return;
    const rest = owed.said.slice(owed.text.length);
    // The retried attempt's events so far: what the client has of it is what it said.
    this.textRun += owed.events;
    this.owed = undefined;
    if (rest) yield* this.deliver({ type: 'text', text: rest }, false);
  }

  /** The turn ended (`ok` whether it answered): what was held back goes on. */
  *end(ok: boolean): Generator<ConversationEvent> {
    // The retried answer ended short of what the client already has.
    if (this.owed && ok) throw backendRetryMidStream(this.backend);
    for (const ev of this.held ?? []) yield* this.deliver(ev, true);
    const rest = this.fences?.end() ?? '';
    const noted = this.held !== undefined;
    // (A failed turn's partial reply is not sent: its error still gets a proper status.)
    if (this.fit && this.schema && this.whole + rest !== '') {
      if (ok) yield* this.say(this.fit(this.whole + rest, this.schema), noted);
    } else if (rest && this.stoppedAt === undefined) yield* this.say(rest, noted);
    const tail = this.stops?.end() ?? '';
    if (tail) yield* this.pass({ type: 'text', text: tail }, noted);
  }

  private *say(text: string, counted: boolean): Generator<ConversationEvent> {
    const cut = this.stops ? this.stops.push(text) : { text };
    if (this.stops) this.sent += cut.text;
    if (cut.text) yield* this.pass({ type: 'text', text: cut.text }, counted);
    if (cut.matched !== undefined) this.stoppedAt = cut.matched;
  }

  private *deliver(ev: BackendEvent, counted: boolean): Generator<ConversationEvent> {
    if (this.stoppedAt !== undefined && ev.type !== 'plan') {
      if (ev.type === 'tool_call') this.droppedCalls.push(ev.id);
      return;
    }
    if (ev.type === 'text' && this.fences) {
      const text = this.fences.push(ev.text);
      if (this.fit) this.whole += text;
      else if (text) {
        this.answered = true;
        yield* this.say(text, counted);
      }
    } else if (ev.type === 'text') {
      this.answered = true;
      yield* this.say(ev.text, counted);
    } else {
      if (ev.type === 'tool_call' || ev.type === 'tool_args') this.answered = true;
      yield* this.pass(ev, counted);
    }
  }

  private pass(ev: BackendEvent, noted = false): Generator<ConversationEvent> {
    return pass(this.s, ev, this.model, this.backend, noted);
  }
}

/** Where to cut a held reply so that its last `events` text and call events go (and thinking among them). */
function cutAt(held: readonly BackendEvent[], events: number): number {
  let cut = held.length;
  for (let n = events; n > 0 && cut > 0; ) if (held[--cut]!.type !== 'thinking') n--;
  return cut;
}

import type { BackendEvent } from '../types.js';

/** A call of one of the client's functions, under the name the client gave it. */
export interface Call {
  id: string;
  name: string;
  arguments: string;
}

/** The top-level message streamed until its `message_delta`: what it emitted (and held), for an abandonment. */
interface Attempt {
  id: string | undefined;
  text: string;
  events: number;
  held: number;
  calls: number;
}

/**
 * A claude turn's reply as it is read: its text, the calls of the message being read, and what the
 * streaming message added to them, which the CLI's abandonment of it takes back.
 *
 * Structured output (a schema given with `initialize`): the CLI offers the model its
 * StructuredOutput tool and checks the call; the reply is the checked object from the `result`
 * line alone, and text written around it is held back (the reply only if no call came).
 */
export class ClaudeReply {
  /** Tool calls of the message being read. */
  calls: Call[] = [];
  /** Block index -> the call's place in `calls`. */
  private readonly blockCall = new Map<number, number>();
  /** The model is offered the StructuredOutput tool (the `init` line's tools). */
  structured = false;
  private readonly structuredBlocks = new Set<number>();
  private held = '';
  /** Characters of reply text emitted this turn (after any abandoned message's were taken back). */
  private emittedText = 0;
  private attempt: Attempt | undefined;

  /** A top-level message starts streaming: the one before never finished (the CLI asks again). */
  begin(id: string | undefined): BackendEvent[] {
    const gone = this.abandon();
    this.attempt = { id, text: '', events: 0, held: this.held.length, calls: this.calls.length };
    return gone;
  }

  /** The streaming message has its stop reason: nothing takes it back any more. */
  finished(): void {
    this.attempt = undefined;
  }

  /** A message arrived whole: another than the one streaming, the CLI gave that one up and asked again. */
  whole(id: string | undefined): BackendEvent[] {
    return this.attempt && id !== this.attempt.id ? this.abandon() : [];
  }

  /** Reply text (held back under structured output). */
  text(t: string): BackendEvent[] {
    if (this.structured) {
      this.held += t;
      return [];
    }
    this.emittedText += t.length;
    return [{ type: 'text', text: t }];
  }

  streamedText(t: string): BackendEvent[] {
    return this.counted(this.text(t));
  }

  /** A streamed `tool_use` block opens: the StructuredOutput call is the CLI's own, not the client's. */
  streamedCall(block: number | undefined, id: string, name: string): BackendEvent[] {
    return this.counted([this.startCall(block, id, name)]);
  }

  structuredCall(block: number): void {
    this.structuredBlocks.add(block);
  }

  /** A piece of a streamed call's arguments. */
  streamedArgs(block: number, json: string): BackendEvent[] {
    const index = this.structuredBlocks.has(block) ? undefined : this.blockCall.get(block);
    if (index === undefined) return [];
    this.calls[index]!.arguments += json;
    return this.counted([{ type: 'tool_args', index, text: json }]);
  }

  /** Without partial messages a tool call arrives whole. */
  wholeCall(id: string, name: string, input: unknown): BackendEvent[] {
    const start = this.startCall(undefined, id, name);
    const args = JSON.stringify(input ?? {});
    this.calls[start.index]!.arguments = args;
    return [start, { type: 'tool_args', index: start.index, text: args }];
  }

  /** The message ended: its block indexes mean nothing in the next. */
  messageStop(): void {
    this.structuredBlocks.clear();
  }

  /** The step's calls were answered: the next message's calls count from 0. */
  continueAfterTools(): void {
    this.calls = [];
    this.blockCall.clear();
  }

  /** The `result` line's part: the checked structured object, else the text held back, else its text if none came. */
  final(checked: unknown, result: string | undefined): BackendEvent[] {
    if (this.structured) {
      this.structured = false;
      if (checked !== undefined) return this.text(JSON.stringify(checked));
      if (this.held !== '') return this.text(this.held);
    }
    if (this.emittedText === 0 && typeof result === 'string' && result !== '') return this.text(result);
    return [];
  }

  /** A tool call block (streamed or whole): the client sees its own function name. */
  private startCall(block: number | undefined, id: string, name: string): BackendEvent & { type: 'tool_call' } {
    const index = this.calls.length;
    this.calls.push({ id, name: name.replace(/^mcp__olp__/, ''), arguments: '' });
    if (block !== undefined) this.blockCall.set(block, index);
    return { type: 'tool_call', index, id, name: this.calls[index]!.name };
  }

  /** Reply events of the streaming message count towards what its abandonment takes back. */
  private counted(events: BackendEvent[]): BackendEvent[] {
    const attempt = this.attempt;
    if (!attempt) return events;
    for (const ev of events) {
      if (ev.type === 'text') attempt.text += ev.text;
      if (ev.type === 'text' || ev.type === 'tool_call' || ev.type === 'tool_args') attempt.events++;
    }
    return events;
  }

  /** The streaming message was abandoned by the CLI: its events are void. */
  private abandon(): BackendEvent[] {
    const gone = this.attempt;
    this.attempt = undefined;
    if (!gone) return [];
    this.held = this.held.slice(0, gone.held);
    this.calls = this.calls.slice(0, gone.calls);
    this.blockCall.clear();
    this.structuredBlocks.clear();
    this.emittedText -= gone.text.length;
    return gone.events > 0 ? [{ type: 'abandoned', text: gone.text, events: gone.events }] : [];
  }
}

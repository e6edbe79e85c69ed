import type { BackendEvent, ToolStep } from '../types.js';
import type { ClaudeReply } from './reply.js';
import { rawCounts, STRUCTURED_TOOL, type StreamEvent, toToolStep } from './shapes.js';
import { jsonDeltaOf, textDeltaOf, thinkingDeltaOf, toolStartOf } from './shapes.js';

/**
 * The `stream_event` lines of the top-level messages (the API's own stream events, with partial
 * messages), one method per event type. A message is finished by its `message_delta` (the stop
 * reason); one whose stop reason is `tool_use` ends a tool step at its `message_stop`.
 */
export class ClaudeStream {
  private message: string | undefined;
  /** The message's usage: `message_start`'s counts, with `message_delta`'s output tokens. */
  private usage: Record<string, number> | undefined;
  /** Messages that streamed: their whole `assistant` lines say nothing new. */
  private readonly streamed = new Set<string>();
  stopReason: string | null | undefined;
  toolStep: ToolStep | undefined;
  /** Raw counts already reported with tool steps, left out of the turn's final usage. */
  readonly reported: Record<string, number> = {};

  constructor(private readonly reply: ClaudeReply) {}

  /** One stream event of a top-level message. */
  take(ev: StreamEvent): BackendEvent[] {
    switch (ev.type) {
      case 'message_start':
        return this.messageStart(ev);
      case 'message_delta':
        this.messageDelta(ev);
        return [];
      case 'content_block_start':
        return this.blockStart(ev);
      case 'content_block_delta':
        return this.blockDelta(ev);
      case 'message_stop':
        return this.messageStop();
      default:
        return [];
    }
  }

  /** The message `id` streamed (its whole `assistant` line repeats it). */
  has(id: string): boolean {
    return this.streamed.has(id);
  }

  /** A message starts; the one before it never finished (see `ClaudeReply.begin`). */
  private messageStart(ev: StreamEvent): BackendEvent[] {
    this.message = ev.message?.id;
    this.usage = rawCounts(ev.message?.usage);
    this.stopReason = undefined;
    return this.reply.begin(this.message);
  }

  private messageDelta(ev: StreamEvent): void {
    if (ev.delta && 'stop_reason' in ev.delta) {
      this.stopReason = ev.delta.stop_reason;
      this.reply.finished();
    }
    if (this.usage && typeof ev.usage?.output_tokens === 'number') this.usage.output_tokens = ev.usage.output_tokens;
  }

  /** A `tool_use` block opens: a call of the client's function, or the CLI's own StructuredOutput call. */
  private blockStart(ev: StreamEvent): BackendEvent[] {
    const block = toolStartOf(ev);
    if (block?.name === STRUCTURED_TOOL) {
      this.markStreamed();
      this.reply.structuredCall(ev.index ?? -1);
      return [];
    }
    if (!block?.id || !block.name) return [];
    this.markStreamed();
    return this.reply.streamedCall(ev.index, block.id, block.name);
  }

  /** A piece of text, thinking or a call's arguments. */
  private blockDelta(ev: StreamEvent): BackendEvent[] {
    const text = textDeltaOf(ev);
    if (text !== undefined) {
      this.markStreamed();
      return this.reply.streamedText(text);
    }
    const thought = thinkingDeltaOf(ev);
    if (thought) {
      this.markStreamed();
      return [thought];
    }
    const json = jsonDeltaOf(ev);
    return json === undefined ? [] : this.reply.streamedArgs(ev.index ?? -1, json);
  }

  /** The message ends; with calls and stop reason `tool_use`, the CLI now waits for their results. */
  private messageStop(): BackendEvent[] {
    this.reply.messageStop();
    if (this.stopReason !== 'tool_use' || this.reply.calls.length === 0) return [];
    const ended = toToolStep(this.reply.calls, this.usage, this.reported);
    this.toolStep = ended.step;
    return ended.events;
  }

  private markStreamed(): void {
    if (this.message) this.streamed.add(this.message);
  }
}

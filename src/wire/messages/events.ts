import type { ConversationEvent, ConversationResult } from '../../conversation/index.js';
import { toAnthropicError } from './errors.js';
import { toAnthropicToolId, toAnthropicUsage, type AnthropicMessage, type AnthropicUsage } from './shapes.js';
import { assertNever } from '../never.js';
import { toAnthropicStop } from './stop-reason.js';

/** One Anthropic stream event: its `type` is also its SSE event name. */
export type MessagesStreamEvent =
  | { type: 'message_start'; message: AnthropicMessage }
  | {
      type: 'content_block_start';
      index: number;
      content_block:
        | { type: 'text'; text: '' }
        | { type: 'thinking'; thinking: '' }
        | { type: 'tool_use'; id: string; name: string; input: object };
    }
  | {
      type: 'content_block_delta';
      index: number;
      delta:
        | { type: 'text_delta'; text: string }
        | { type: 'thinking_delta'; thinking: string }
        | { type: 'signature_delta'; signature: string }
        | { type: 'input_json_delta'; partial_json: string };
    }
  | { type: 'content_block_stop'; index: number }
  | {
      type: 'message_delta';
      delta: { stop_reason: AnthropicMessage['stop_reason']; stop_sequence: string | null };
      usage: AnthropicUsage;
    }
  | { type: 'message_stop' }
  | { type: 'error'; error: { type: string; message: string } };

/** What one step means on the wire: the headers when the stream starts here, then its events in order. */
export interface MappedMessagesEvents {
  start?: Readonly<Record<string, string>>;
  events: MessagesStreamEvent[];
}

/** Where a Messages stream is: whether `message_start` went out, and which content block is open. */
export interface MessagesStreamState {
  readonly meta: { id: string; model: string };
  announced: boolean;
  /** The index the next content block gets. */
  nextIndex: number;
  /**
   * The block taking deltas (Anthropic's blocks run one after another: start, deltas, stop): text,
   * a call (`call`), or thinking (`thinking`, until its signature ends it).
   */
  open: { index: number; call?: number; thinking?: boolean } | undefined;
  /** The content block index of each of the core's calls, by the core's call index. */
  calls: number[];
}

/** A stream that has sent nothing yet. */
export function createMessagesStreamState(meta: { id: string; model: string }): MessagesStreamState {
  return { meta, announced: false, nextIndex: 0, open: undefined, calls: [] };
}

/**
 * `message_start`, once, when a model answers: it names that model and carries olp's estimate of
 * the prompt's tokens (Claude Code's context meter reads it; the CLI's own count comes with
 * `message_delta`). The cache split is not known until then.
 */
function announce(
  s: MessagesStreamState,
  model: string,
  promptTokens: number,
  headers: Readonly<Record<string, string>>,
  out: MappedMessagesEvents,
): void {
  if (s.announced) return;
  s.announced = true;
  out.start = headers;
  out.events.push({
    type: 'message_start',
    message: {
      id: s.meta.id,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      // output_tokens 1, as Anthropic's own message_start says before the first token.
      usage: {
        input_tokens: promptTokens,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: 1,
      },
    },
  });
}

function closeBlock(s: MessagesStreamState, out: MessagesStreamEvent[]): void {
  if (!s.open) return;
  out.push({ type: 'content_block_stop', index: s.open.index });
  s.open = undefined;
}

/** The Anthropic events for one core event (pure but for `state`, which it advances). */
export function toMessagesStreamEvents(s: MessagesStreamState, ev: ConversationEvent): MappedMessagesEvents {
  const out: MappedMessagesEvents = { events: [] };
  switch (ev.type) {
    case 'started':
      announce(s, ev.model, ev.promptTokens, ev.headers, out);
      return out;
    case 'thinking': {
      if (ev.text !== '') {
        if (!s.open?.thinking) {
          closeBlock(s, out.events);
          s.open = { index: s.nextIndex++, thinking: true };
          out.events.push({
            type: 'content_block_start',
            index: s.open.index,
            content_block: { type: 'thinking', thinking: '' },
          });
        }
        out.events.push({
          type: 'content_block_delta',
          index: s.open.index,
          delta: { type: 'thinking_delta', thinking: ev.text },
        });
      }
      // The signature comes last, as Anthropic sends it: the next thinking is another block.
      if (ev.signature && s.open?.thinking) {
        out.events.push({
          type: 'content_block_delta',
          index: s.open.index,
          delta: { type: 'signature_delta', signature: ev.signature },
        });
        closeBlock(s, out.events);
      }
      return out;
    }
    case 'text': {
      if (ev.text === '') return out;
      if (!s.open || s.open.call !== undefined || s.open.thinking) {
        closeBlock(s, out.events);
        s.open = { index: s.nextIndex++ };
        out.events.push({
          type: 'content_block_start',
          index: s.open.index,
          content_block: { type: 'text', text: '' },
        });
      }
      out.events.push({
        type: 'content_block_delta',
        index: s.open.index,
        delta: { type: 'text_delta', text: ev.text },
      });
      return out;
    }
    case 'tool_call': {
      closeBlock(s, out.events);
      s.open = { index: s.nextIndex++, call: ev.index };
      s.calls[ev.index] = s.open.index;
      out.events.push({
        type: 'content_block_start',
        index: s.open.index,
        content_block: { type: 'tool_use', id: toAnthropicToolId(ev.id), name: ev.name, input: {} },
      });
      return out;
    }
    case 'tool_args': {
      // The CLIs give a call's arguments before their next block starts (claude streams its blocks
      // one after another; codex gives each call whole), so they belong to the open block. Were
      // one to come late, it still goes to its own block's index rather than being lost.
      const index = s.calls[ev.index];
      if (index === undefined || ev.text === '') return out;
      out.events.push({
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: ev.text },
      });
      return out;
    }
    default:
      return assertNever(ev);
  }
}

/**
 * The events that end a stream whose conversation has finished (not one refused before the first
 * byte, which gets a status instead): the open block's stop, `message_delta` with the stop reason
 * and the CLI's usage (Anthropic's counts there are cumulative: they replace message_start's), then
 * `message_stop`; or, for a failure, one `error` event.
 */
export function toMessagesStreamEnd(s: MessagesStreamState, r: ConversationResult): MappedMessagesEvents {
  const out: MappedMessagesEvents = { events: [] };
  if (r.error) {
    out.events.push(toAnthropicError(r.error).body);
    return out;
  }
  announce(s, r.servedModel ?? s.meta.model, r.usage?.promptTokens ?? 0, r.headers, out);
  closeBlock(s, out.events);
  out.events.push(
    {
      type: 'message_delta',
      delta: toAnthropicStop(r.stopReason, s.calls.length > 0),
      usage: toAnthropicUsage(r.usage),
    },
    { type: 'message_stop' },
  );
  return out;
}

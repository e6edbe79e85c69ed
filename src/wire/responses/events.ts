import type { ConversationEvent, ConversationResult } from '../../conversation/index.js';
import { assertNever } from '../never.js';
import {
  newFunctionCallId,
  newReasoningId,
  toFinalResponse,
  toReasoningItem,
  toOutputMessage,
  toResponse,
  type ResponseMeta,
  type ResponseObject,
  type ResponseOutputMessage,
} from './shapes.js';
import { toFunctionCallItem } from './calls.js';
import type { ToolCall } from '../chat/shapes.js';
import { closeReasoning, thinkingEvents, type StreamedReasoning } from './reasoning-events.js';

/** One Responses stream event before it is numbered: its `type` (also the SSE event name) and its fields. */
export interface ResponseStreamEvent {
  type: string;
  data: Record<string, unknown>;
}

/** What one step means on the wire: the headers when the stream starts here, then its events in order. */
export interface MappedEvents {
  start?: Readonly<Record<string, string>>;
  events: ResponseStreamEvent[];
}

/** Where a Responses stream is: what the next core event has to be mapped against. */
export interface ResponseStreamState {
  readonly meta: ResponseMeta;
  readonly messageId: string;
  /** Makes a function call item's id (random in olp; fixed in tests). */
  readonly newItemId: () => string;
  /** Makes a reasoning item's id. */
  readonly newReasoningId: () => string;
  announced: boolean;
  model: string;
  text: string;
  /** Output items in the order they start: reasoning, the message (at its first text), then function calls. */
  nextIndex: number;
  /** The thinking's reasoning items (only before the answer: thinking after it is not shown). */
  reasoning: StreamedReasoning[];
  messageIndex: number | undefined;
  messageDone: boolean;
  calls: { itemId: string; index: number; call: ToolCall }[];
}

/** A stream that has sent nothing yet. */
export function createResponseStreamState(
  meta: ResponseMeta,
  messageId: string,
  newItemId: () => string = newFunctionCallId,
  reasoningId: () => string = newReasoningId,
): ResponseStreamState {
  return {
    meta,
    messageId,
    newItemId,
    newReasoningId: reasoningId,
    reasoning: [],
    announced: false,
    model: meta.model,
    text: '',
    nextIndex: 0,
    messageIndex: undefined,
    messageDone: false,
    calls: [],
  };
}

/** Whether a call goes back as a function call (a custom, shell or apply_patch tool's does not). */
const isFunction = (s: ResponseStreamState, call: ToolCall) => {
  const type = s.meta.toolWire?.get(call.function.name)?.type;
  return type === undefined || type === 'function';
};

const at = (s: ResponseStreamState) => ({ item_id: s.messageId, output_index: s.messageIndex!, content_index: 0 });

/** `response.created` and `response.in_progress`, once, for the model that answers. */
function announce(
  s: ResponseStreamState,
  model: string,
  headers: Readonly<Record<string, string>>,
  out: MappedEvents,
): void {
  if (s.announced) return;
  s.announced = true;
  s.model = model;
  out.start = headers;
  const initial = toResponse(s.meta, 'in_progress', [], { model });
  out.events.push(
    { type: 'response.created', data: { response: initial } },
    { type: 'response.in_progress', data: { response: initial } },
  );
}

/** The message item and its text part, at the first text (or at the end of a reply with no calls). */
function openMessage(s: ResponseStreamState, out: ResponseStreamEvent[]): void {
  if (s.messageIndex !== undefined) return;
  s.messageIndex = s.nextIndex++;
  out.push({
    type: 'response.output_item.added',
    data: { output_index: s.messageIndex, item: toOutputMessage(s.messageId, '', 'in_progress') },
  });
  out.push({
    type: 'response.content_part.added',
    data: { ...at(s), part: { type: 'output_text', text: '', annotations: [] } },
  });
}

/** The message's closing events, once (a function call or the end closes it). */
function closeMessage(s: ResponseStreamState, item: ResponseOutputMessage, out: ResponseStreamEvent[]): void {
  if (s.messageIndex === undefined || s.messageDone) return;
  s.messageDone = true;
  out.push({ type: 'response.output_text.done', data: { ...at(s), text: s.text, logprobs: [] } });
  out.push({ type: 'response.content_part.done', data: { ...at(s), part: item.content[0] } });
  out.push({ type: 'response.output_item.done', data: { output_index: s.messageIndex, item } });
}

/** The Responses events for one core event (pure but for `state`, which it advances). */
export function toResponseStreamEvents(s: ResponseStreamState, ev: ConversationEvent): MappedEvents {
  const out: MappedEvents = { events: [] };
  switch (ev.type) {
    case 'started':
      announce(s, ev.model, ev.headers, out);
      return out;
    case 'text':
      closeReasoning(s.reasoning, out.events);
      openMessage(s, out.events);
      s.text += ev.text;
      out.events.push({ type: 'response.output_text.delta', data: { ...at(s), delta: ev.text, logprobs: [] } });
      return out;
    case 'tool_call': {
      closeReasoning(s.reasoning, out.events);
      closeMessage(s, toOutputMessage(s.messageId, s.text, 'completed'), out.events);
      const c = {
        itemId: s.newItemId(),
        index: s.nextIndex++,
        call: { id: ev.id, type: 'function' as const, function: { name: ev.name, arguments: '' } },
      };
      s.calls[ev.index] = c;
      const item = toFunctionCallItem(c.itemId, c.call, s.meta.toolWire);
      out.events.push({
        type: 'response.output_item.added',
        data: {
          output_index: c.index,
          item: item.type === 'custom_tool_call' ? { ...item, input: '' } : { ...item, status: 'in_progress' },
        },
      });
      return out;
    }
    case 'tool_args': {
      const c = s.calls[ev.index];
      if (!c) return out;
      c.call.function.arguments += ev.text;
      // A custom tool's input is the string inside the arguments: it is sent whole, at the end. A
      // shell or apply_patch call has no delta events at all: its item is whole at output_item.done.
      if (!isFunction(s, c.call)) return out;
      out.events.push({
        type: 'response.function_call_arguments.delta',
        data: { item_id: c.itemId, output_index: c.index, delta: ev.text },
      });
      return out;
    }
    case 'thinking':
      // Thinking comes before the answer; any that comes after it starts is not shown.
      if (s.messageIndex === undefined && s.calls.length === 0)
        thinkingEvents(
          s.reasoning,
          ev,
          () => ({ id: s.newReasoningId(), index: s.nextIndex++, text: '', done: false }),
          out.events,
        );
      return out;
    default:
      return assertNever(ev);
  }
}

/**
 * The events that end a stream whose conversation has finished (not one refused before the first
 * byte, which gets a status instead): the last is `response.completed`, `.incomplete` or `.failed`.
 */
export function toResponseStreamEnd(
  s: ResponseStreamState,
  r: ConversationResult,
): MappedEvents & { final: ResponseObject } {
  const out: MappedEvents = { events: [] };
  announce(s, r.servedModel ?? s.meta.model, r.headers, out);
  const made = s.calls.filter(Boolean);
  closeReasoning(s.reasoning, out.events);
  if (made.length === 0) openMessage(s, out.events);
  const reasoning = s.reasoning.map((t) => toReasoningItem(t.id, t.text));
  const final = toFinalResponse(s.meta, s.messageId, s.text, r, made, reasoning);
  if (r.error) {
    out.events.push({ type: 'response.failed', data: { response: final } });
    return { ...out, final };
  }
  const message = final.output.find((o): o is ResponseOutputMessage => o.type === 'message');
  if (message) closeMessage(s, message, out.events);
  for (const c of made) {
    const item = toFunctionCallItem(c.itemId, c.call, s.meta.toolWire);
    const where = { item_id: c.itemId, output_index: c.index };
    if (item.type === 'custom_tool_call')
      out.events.push(
        { type: 'response.custom_tool_call_input.delta', data: { ...where, delta: item.input } },
        { type: 'response.custom_tool_call_input.done', data: { ...where, input: item.input } },
      );
    else if (item.type === 'function_call')
      out.events.push({
        type: 'response.function_call_arguments.done',
        data: { ...where, arguments: c.call.function.arguments },
      });
    out.events.push({ type: 'response.output_item.done', data: { output_index: c.index, item } });
  }
  out.events.push({
    type: final.status === 'incomplete' ? 'response.incomplete' : 'response.completed',
    data: { response: final },
  });
  return { ...out, final };
}

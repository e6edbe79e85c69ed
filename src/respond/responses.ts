import { randomText } from '../ids/index.js';
import type { Response as HttpResponse } from 'express';
import type { Usage } from '../backends/index.js';
import type { ConversationResult } from '../conversation/index.js';
import type { ProxyError } from '../errors/index.js';
import { collectReply, setHeaders, type Events } from './index.js';
import type { ToolCall } from './shapes.js';
import { ClientTooSlowError, createSseWriter } from './sse.js';

// Responses API wire shapes, named as the openai SDK names them (tests check assignability).

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export interface ResponseOutputText {
  type: 'output_text';
  text: string;
  annotations: [];
}

export interface ResponseOutputMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  status: 'in_progress' | 'completed' | 'incomplete';
  content: ResponseOutputText[];
}

/** A call of one of the client's functions, as an output item. */
export interface ResponseFunctionToolCall {
  id: string;
  type: 'function_call';
  call_id: string;
  name: string;
  arguments: string;
  status: 'in_progress' | 'completed' | 'incomplete';
}

export type ResponseOutputItem = ResponseOutputMessage | ResponseFunctionToolCall;

export interface ResponseFunctionTool {
  type: 'function';
  name: string;
  description?: string | null;
  parameters: Record<string, unknown> | null;
  strict: boolean | null;
}

export type ResponseToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; name: string } | { type: 'allowed_tools'; mode: 'auto' | 'required'; tools: { type: 'function'; name: string }[] };

export type TextFormat = { type: 'text' } | { type: 'json_object' } | { type: 'json_schema'; name: string; schema: Record<string, unknown>; description?: string; strict?: boolean | null };

/** The request's settings a Response echoes back. */
export interface ResponseMeta {
  id: string;
  /** Seconds since the epoch. */
  createdAt: number;
  model: string;
  instructions: string | null;
  previousResponseId: string | null;
  store: boolean;
  maxOutputTokens: number | null;
  metadata: Record<string, string>;
  user?: string | undefined;
  format: TextFormat;
  temperature: number | null;
  topP: number | null;
  truncation: 'auto' | 'disabled';
  parallelToolCalls: boolean;
  /** The request's tools and tool_choice, echoed back. */
  tools: ResponseFunctionTool[];
  toolChoice: ResponseToolChoice;
  reasoningEffort: string | null;
  clientTimeoutMs: number;
  /** Silence after which the stream gets an SSE comment line (0: never). */
  keepaliveMs?: number;
}

export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: 'in_progress' | 'completed' | 'failed' | 'incomplete';
  error: { code: 'server_error' | 'rate_limit_exceeded'; message: string } | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  metadata: Record<string, string>;
  model: string;
  output: ResponseOutputItem[];
  output_text: string;
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: { effort: 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | null; summary: null };
  store: boolean;
  temperature: number | null;
  text: { format: TextFormat };
  tool_choice: ResponseToolChoice;
  tools: ResponseFunctionTool[];
  top_p: number | null;
  truncation: 'auto' | 'disabled';
  usage?: ResponseUsage;
  user?: string;
}

export function newResponseId(): string {
  return `resp_${randomText(24, 'hex')}`;
}

export function newMessageId(): string {
  return `msg_${randomText(24, 'hex')}`;
}

export function newFunctionCallId(): string {
  return `fc_${randomText(24, 'hex')}`;
}

/** The Responses usage object, with the same cache-aware counts as chat's. */
export function toResponseUsage(u: Usage | null): ResponseUsage {
  return {
    input_tokens: u?.promptTokens ?? 0,
    // Tokens written to the prompt cache: claude's cache_creation_input_tokens, codex's cache_write_input_tokens.
    input_tokens_details: { cached_tokens: u?.cachedTokens ?? 0, cache_write_tokens: u?.raw.cache_creation_input_tokens ?? u?.raw.cache_write_input_tokens ?? 0 },
    output_tokens: u?.completionTokens ?? 0,
    output_tokens_details: { reasoning_tokens: u?.reasoningTokens ?? 0 },
    total_tokens: u?.totalTokens ?? 0,
  };
}

export function toOutputMessage(id: string, text: string, status: ResponseOutputMessage['status']): ResponseOutputMessage {
  return { id, type: 'message', role: 'assistant', status, content: [{ type: 'output_text', text, annotations: [] }] };
}

/** A Response object in any state; `output` and `usage` as far as they are known. */
export function toResponse(meta: ResponseMeta, status: ResponseObject['status'], output: ResponseOutputItem[], extra: { usage?: Usage | null; error?: ProxyError; model?: string; incomplete?: boolean } = {}): ResponseObject {
  const effort = meta.reasoningEffort as ResponseObject['reasoning']['effort'];
  return {
    id: meta.id,
    object: 'response',
    created_at: meta.createdAt,
    status,
    error: extra.error ? { code: extra.error.type === 'rate_limit_error' ? 'rate_limit_exceeded' : 'server_error', message: `${extra.error.message} (${extra.error.code})` } : null,
    incomplete_details: extra.incomplete ? { reason: 'max_output_tokens' } : null,
    instructions: meta.instructions,
    max_output_tokens: meta.maxOutputTokens,
    metadata: meta.metadata,
    model: extra.model ?? meta.model,
    output,
    output_text: output.map((m) => (m.type === 'message' ? m.content.map((c) => c.text).join('') : '')).join(''),
    parallel_tool_calls: meta.parallelToolCalls,
    previous_response_id: meta.previousResponseId,
    reasoning: { effort: effort ?? null, summary: null },
    store: meta.store,
    temperature: meta.temperature,
    text: { format: meta.format },
    tool_choice: meta.toolChoice,
    tools: meta.tools,
    top_p: meta.topP,
    truncation: meta.truncation,
    ...(extra.usage !== undefined ? { usage: toResponseUsage(extra.usage) } : {}),
    ...(meta.user !== undefined ? { user: meta.user } : {}),
  };
}

/** A function call item, complete. */
export function toFunctionCallItem(id: string, call: ToolCall): ResponseFunctionToolCall {
  return { id, type: 'function_call', call_id: call.id, name: call.function.name, arguments: call.function.arguments, status: 'completed' };
}

/** The final Response of a finished conversation (what is sent, stored and retrieved). */
export function toFinalResponse(meta: ResponseMeta, messageId: string, text: string, r: ConversationResult, calls: { itemId: string; call: ToolCall }[] = []): ResponseObject {
  const incomplete = r.finishReason === 'length';
  const status = r.error ? 'failed' : incomplete ? 'incomplete' : 'completed';
  // A reply of function calls alone has no message item.
  const message = (r.error && text === '') || (calls.length > 0 && text === '') ? [] : [toOutputMessage(messageId, text, incomplete || r.error ? 'incomplete' : 'completed')];
  return toResponse(meta, status, [...message, ...calls.map((c) => toFunctionCallItem(c.itemId, c.call))], {
    usage: r.usage,
    ...(r.error ? { error: r.error } : {}),
    model: r.servedModel ?? meta.model,
    incomplete,
  });
}

/** Collects the reply into one Response; a conversation that failed throws its error unsent. */
export async function writeResponseJson(res: HttpResponse, events: Events, meta: ResponseMeta, messageId: string): Promise<ResponseObject | undefined> {
  const reply = await collectReply(res, events);
  if (!reply) return undefined;
  const body = toFinalResponse(meta, messageId, reply.text, reply.result, reply.toolCalls.map((call) => ({ itemId: newFunctionCallId(), call })));
  res.status(200).json(body);
  return body;
}

/**
 * Streams Responses events (`response.created` … `response.completed`), each with an increasing
 * `sequence_number`. Headers wait for the first text, as for chat; a failure after them is
 * `response.failed`, then the end.
 */
export async function writeResponseStream(
  res: HttpResponse,
  events: Events,
  meta: ResponseMeta,
  messageId: string,
): Promise<ResponseObject | ClientTooSlowError | undefined> {
  const sse = createSseWriter(res, meta.clientTimeoutMs, meta.keepaliveMs ?? 0);
  let slow: ClientTooSlowError | undefined;
  let seq = 0;
  let text = '';
  let model = meta.model;
  // Output items in the order they start: the message (at its first text), then function calls.
  let nextIndex = 0;
  let messageIndex: number | undefined;
  let messageDone = false;
  const calls: { itemId: string; index: number; call: ToolCall }[] = [];
  const send = (type: string, payload: Record<string, unknown>) => sse.send({ type, sequence_number: seq++, ...payload }, type);
  const at = () => ({ item_id: messageId, output_index: messageIndex!, content_index: 0 });
  let announced = false;
  const open = async (served: string, headers: Readonly<Record<string, string>>): Promise<void> => {
    if (announced) return;
    announced = true;
    model = served;
    setHeaders(res, headers);
    sse.start();
    const initial = toResponse(meta, 'in_progress', [], { model });
    await send('response.created', { response: initial });
    await send('response.in_progress', { response: initial });
  };
  const openMessage = async (): Promise<void> => {
    if (messageIndex !== undefined) return;
    messageIndex = nextIndex++;
    await send('response.output_item.added', { output_index: messageIndex, item: toOutputMessage(messageId, '', 'in_progress') });
    await send('response.content_part.added', { ...at(), part: { type: 'output_text', text: '', annotations: [] } });
  };
  const closeMessage = async (item: ResponseOutputMessage): Promise<void> => {
    if (messageIndex === undefined || messageDone) return;
    messageDone = true;
    await send('response.output_text.done', { ...at(), text, logprobs: [] });
    await send('response.content_part.done', { ...at(), part: item.content[0] });
    await send('response.output_item.done', { output_index: messageIndex, item });
  };
  try {
    let step = await events.next();
    while (!step.done) {
      const ev = step.value;
      if (ev.type === 'started') await open(ev.model, ev.headers);
      else if (ev.type === 'text') {
        await openMessage();
        text += ev.text;
        await send('response.output_text.delta', { ...at(), delta: ev.text, logprobs: [] });
      } else if (ev.type === 'tool_call') {
        await closeMessage(toOutputMessage(messageId, text, 'completed'));
        const c = { itemId: newFunctionCallId(), index: nextIndex++, call: { id: ev.id, type: 'function' as const, function: { name: ev.name, arguments: '' } } };
        calls[ev.index] = c;
        await send('response.output_item.added', { output_index: c.index, item: { ...toFunctionCallItem(c.itemId, c.call), status: 'in_progress' } });
      } else if (calls[ev.index]) {
        const c = calls[ev.index]!;
        c.call.function.arguments += ev.text;
        await send('response.function_call_arguments.delta', { item_id: c.itemId, output_index: c.index, delta: ev.text });
      }
      step = await events.next();
    }
    const r = step.value;
    if (r.outcome === 'client_aborted') return undefined;
    if (r.error && !sse.open) {
      sse.cancel();
      setHeaders(res, r.headers);
      throw r.error;
    }
    await open(r.servedModel ?? meta.model, r.headers);
    const made = calls.filter(Boolean);
    if (made.length === 0) await openMessage();
    const final = toFinalResponse(meta, messageId, text, r, made);
    if (r.error) {
      sse.end({ type: 'response.failed', sequence_number: seq++, response: final }, 'response.failed');
      return final;
    }
    const message = final.output.find((o): o is ResponseOutputMessage => o.type === 'message');
    if (message) await closeMessage(message);
    for (const c of made) {
      await send('response.function_call_arguments.done', { item_id: c.itemId, output_index: c.index, arguments: c.call.function.arguments });
      await send('response.output_item.done', { output_index: c.index, item: toFunctionCallItem(c.itemId, c.call) });
    }
    sse.end({ type: final.status === 'incomplete' ? 'response.incomplete' : 'response.completed', sequence_number: seq++, response: final }, final.status === 'incomplete' ? 'response.incomplete' : 'response.completed');
    return final;
  } catch (err) {
    // The client stopped reading: reported to the route, which stops the conversation first.
    if (err instanceof ClientTooSlowError) return (slow = err);
    sse.cancel();
    throw err;
  } finally {
    // However writing ended, the conversation is closed: its CLI, permit and lease go, its row is
    // written (a slow reader's by the route, once it has stopped it).
    if (!slow) await events.return(undefined as never);
  }
}

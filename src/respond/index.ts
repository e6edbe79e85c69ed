import type { Response } from 'express';
import type { ConversationEvent, ConversationResult } from '../conversation/index.js';
import { toErrorBody } from '../errors/index.js';
import { toChatCompletion, toChunk, toUsageChunk, type ToolCall } from './shapes.js';

export * from './shapes.js';
export { createSseWriter, ClientTooSlowError, endSlowStream, type SseWriter } from './sse.js';
import { ClientTooSlowError, createSseWriter } from './sse.js';

export type Events = AsyncGenerator<ConversationEvent, ConversationResult>;

export interface ChatMeta {
  id: string;
  created: number;
  /** The model asked for; the one that served replaces it once known. */
  model: string;
  includeUsage: boolean;
  /** How long a client may leave a full socket unread. */
  clientTimeoutMs: number;
  /** Silence after which the stream gets an SSE comment line (0: never). */
  keepaliveMs?: number;
}

/** Sets the conversation's headers (rate limits, session mode) on a response that has not started. */
export function setHeaders(res: Response, headers: Readonly<Record<string, string>>): void {
  if (res.headersSent) return;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
}

/**
 * The whole reply of a conversation that is answered in one body, with its result; a failed
 * conversation throws its error (headers set, body unsent); undefined when the client left.
 */
export async function collectReply(res: Response, events: Events): Promise<{ text: string; toolCalls: ToolCall[]; result: ConversationResult } | undefined> {
  const parts: string[] = [];
  const toolCalls: ToolCall[] = [];
  let step = await events.next();
  while (!step.done) {
    const ev = step.value;
    if (ev.type === 'text') parts.push(ev.text);
    else if (ev.type === 'tool_call') toolCalls[ev.index] = { id: ev.id, type: 'function', function: { name: ev.name, arguments: '' } };
    else if (ev.type === 'tool_args' && toolCalls[ev.index]) toolCalls[ev.index]!.function.arguments += ev.text;
    step = await events.next();
  }
  const result = step.value;
  setHeaders(res, result.headers);
  if (result.error) throw result.error;
  return result.outcome === 'client_aborted' ? undefined : { text: parts.join(''), toolCalls: toolCalls.filter(Boolean), result };
}

/** Collects the whole reply and sends one `chat.completion`; a failed conversation throws its error unsent. */
export async function writeChatJson(res: Response, events: Events, meta: ChatMeta): Promise<void> {
  const reply = await collectReply(res, events);
  if (!reply) return;
  const r = reply.result;
  res.status(200).json(toChatCompletion({ ...meta, model: r.servedModel ?? meta.model }, reply.text, r.finishReason, r.usage, reply.toolCalls));
}

/**
 * Streams `chat.completion.chunk`s as text arrives. Headers wait for the first text so that a CLI
 * failing before it says anything still gets a proper status and error envelope; after that an
 * error is one in-band `data: {"error":…}` event and the stream ends.
 */
export async function writeChatStream(
  res: Response,
  events: Events,
  meta: ChatMeta,
): Promise<ClientTooSlowError | undefined> {
  const sse = createSseWriter(res, meta.clientTimeoutMs, meta.keepaliveMs ?? 0);
  let slow: ClientTooSlowError | undefined;
  let m = meta;
  let announced = false;
  const open = async (model: string, headers: Readonly<Record<string, string>>): Promise<void> => {
    if (announced) return;
    announced = true;
    m = { ...meta, model };
    setHeaders(res, headers);
    sse.start();
    await sse.send(toChunk(m, { role: 'assistant', content: '' }));
  };
  try {
    let step = await events.next();
    while (!step.done) {
      const ev = step.value;
      if (ev.type === 'started') await open(ev.model, ev.headers);
      else if (ev.type === 'text') await sse.send(toChunk(m, { content: ev.text }));
      else if (ev.type === 'tool_call') await sse.send(toChunk(m, { tool_calls: [{ index: ev.index, id: ev.id, type: 'function', function: { name: ev.name, arguments: '' } }] }));
      else await sse.send(toChunk(m, { tool_calls: [{ index: ev.index, function: { arguments: ev.text } }] }));
      step = await events.next();
    }
    const r = step.value;
    if (r.outcome === 'client_aborted') return;
    if (r.error) {
      if (!sse.open) {
        sse.cancel();
        setHeaders(res, r.headers);
        throw r.error;
      }
      sse.end(toErrorBody(r.error));
      return;
    }
    await open(r.servedModel ?? meta.model, r.headers);
    await sse.send(toChunk(m, {}, r.finishReason));
    if (meta.includeUsage) await sse.send(toUsageChunk(m, r.usage));
    sse.end('[DONE]');
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
export * from './responses.js';

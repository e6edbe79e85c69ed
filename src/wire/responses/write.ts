import type { Response as HttpResponse } from 'express';
import { collectReply, setHeaders, type Events } from '../reply.js';
import { createResponseStreamState, toResponseStreamEnd, toResponseStreamEvents, type MappedEvents } from './events.js';
import {
  newFunctionCallId,
  newReasoningId,
  toFinalResponse,
  toReasoningItem,
  type ResponseMeta,
  type ResponseObject,
} from './shapes.js';
import { createSseWriter, streamReply, type ClientTooSlowError, type SseWriter } from '../sse.js';

export * from './shapes.js';
export * from './events.js';

/** Collects the reply into one Response; a conversation that failed throws its error unsent. */
export async function writeResponseJson(
  res: HttpResponse,
  events: Events,
  meta: ResponseMeta,
  messageId: string,
): Promise<ResponseObject | undefined> {
  const reply = await collectReply(res, events);
  if (!reply) return undefined;
  const body = toFinalResponse(
    meta,
    messageId,
    reply.text,
    reply.result,
    reply.toolCalls.map((call) => ({ itemId: newFunctionCallId(), call })),
    reply.thinking.map((t) => toReasoningItem(newReasoningId(), t.thinking)),
  );
  res.status(200).json(body);
  return body;
}

/**
 * Streams Responses events (`response.created` … `response.completed`), each with an increasing
 * `sequence_number`. Headers wait for the first text, as for chat; a failure after them is
 * `response.failed`, then the end. What to send is the mapper's (response-events.ts); this pumps it.
 */
export async function writeResponseStream(
  res: HttpResponse,
  events: Events,
  meta: ResponseMeta,
  messageId: string,
): Promise<ResponseObject | ClientTooSlowError | undefined> {
  const sse = createSseWriter(res, meta.clientTimeoutMs, meta.keepaliveMs ?? 0);
  const state = createResponseStreamState(meta, messageId);
  let seq = 0;
  const numbered = (e: MappedEvents['events'][number]) => ({ type: e.type, sequence_number: seq++, ...e.data });
  return streamReply(sse, events, async () => {
    let step = await events.next();
    while (!step.done) {
      await pump(res, sse, toResponseStreamEvents(state, step.value), numbered);
      step = await events.next();
    }
    const r = step.value;
    if (r.outcome === 'client_aborted') return undefined;
    if (r.error && !sse.open) {
      sse.cancel();
      setHeaders(res, r.headers);
      throw r.error;
    }
    const end = toResponseStreamEnd(state, r);
    const last = end.events.pop()!;
    await pump(res, sse, end, numbered);
    sse.end(numbered(last), last.type);
    return end.final;
  });
}

/** Starts the stream when the mapper says so (headers first), then sends its events in order. */
async function pump(
  res: HttpResponse,
  sse: SseWriter,
  mapped: MappedEvents,
  numbered: (e: MappedEvents['events'][number]) => Record<string, unknown>,
): Promise<void> {
  if (mapped.start) {
    setHeaders(res, mapped.start);
    sse.start();
  }
  for (const e of mapped.events) await sse.send(numbered(e), e.type);
}

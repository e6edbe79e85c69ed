import type { Response } from 'express';
import type { ProxyError } from '../../errors/index.js';
import { toAnthropicError } from './errors.js';
import {
  createMessagesStreamState,
  toMessagesStreamEnd,
  toMessagesStreamEvents,
  type MappedMessagesEvents,
} from './events.js';
import { toAnthropicMessage } from './shapes.js';
import { collectReply, setHeaders, type Events } from '../reply.js';
import { createSseWriter, endSlowStream, streamReply, type ClientTooSlowError, type SseWriter } from '../sse.js';

export * from './shapes.js';
export * from './errors.js';
export * from './events.js';

export interface MessagesMeta {
  id: string;
  /** The model asked for; the one that served replaces it once known. */
  model: string;
  /** How long a client may leave a full socket unread. */
  clientTimeoutMs: number;
  /** olp's `--sse-keepalive` in ms (0: unset); pings come at least every MESSAGES_PING_MS whatever it says. */
  keepaliveMs: number;
}

/**
 * The longest silence on a Messages stream before a `ping`. Claude Code (2.1.197) aborts a stream
 * whose bytes stop for its byte watchdog's time (180 s by default; CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS
 * may lower it to no less than 10 s) and turns bytes without events into 10 s heartbeats of its
 * own; a ping every 5 s stays inside the smallest of those with one to spare. (Its other watchdog,
 * 5 minutes without an event other than a ping, no ping holds off; olp's idle timeout, 180 s by
 * default, and queue timeout, 60 s, end a silence before it.) Pings are part of Anthropic's
 * protocol, so unlike the OpenAI formats' comment lines they are always on.
 */
export const MESSAGES_PING_MS = 5000;

// `{"type": "ping"}` as Anthropic writes it.
const PING = 'event: ping\ndata: {"type": "ping"}\n\n';

/** Anthropic's `request-id` header (its SDK reads that one), the same as olp's `x-request-id`. */
function setRequestId(res: Response): void {
  const id = res.getHeader('x-request-id');
  if (id !== undefined && !res.hasHeader('request-id') && !res.headersSent) res.setHeader('request-id', String(id));
}

/** Collects the whole reply and sends one Message; a failed conversation throws its error unsent. */
export async function writeMessagesJson(res: Response, events: Events, meta: MessagesMeta): Promise<void> {
  setRequestId(res);
  const reply = await collectReply(res, events);
  if (!reply) return;
  const r = reply.result;
  res.status(200).json(
    toAnthropicMessage(
      { id: meta.id, model: r.servedModel ?? meta.model },
      reply.text,
      reply.toolCalls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
      r.stopReason,
      r.usage,
      reply.thinking,
    ),
  );
}

/**
 * Streams Anthropic's events: `message_start` when a model answers (it names the model and the
 * prompt's estimate, which olp knows only then), content blocks as text and calls arrive, then
 * `message_delta` and `message_stop`. Headers wait for `message_start` so that a request refused
 * early (a full queue, a spent plan, a CLI not logged in) still gets its status and retry headers;
 * but a silence of MESSAGES_PING_MS (a queue, a CLI starting, a long think) starts the stream with
 * `ping`s, before `message_start` if it comes first: the SDK's stream parser skips pings wherever
 * they are (0.91 `Stream.fromSSEResponse`), and so does Claude Code's loop (2.1.197), whose own
 * heartbeat makes pings without a message_start anyway. A failure after the first byte is one
 * in-band `event: error`, then the end.
 */
export async function writeMessagesStream(
  res: Response,
  events: Events,
  meta: MessagesMeta,
): Promise<ClientTooSlowError | undefined> {
  const pingMs = meta.keepaliveMs > 0 ? Math.min(meta.keepaliveMs, MESSAGES_PING_MS) : MESSAGES_PING_MS;
  setRequestId(res);
  const sse = createSseWriter(res, meta.clientTimeoutMs, pingMs, PING);
  const state = createMessagesStreamState({ id: meta.id, model: meta.model });
  return streamReply(sse, events, async () => {
    let step = await events.next();
    while (!step.done) {
      await pump(res, sse, toMessagesStreamEvents(state, step.value));
      step = await events.next();
    }
    const r = step.value;
    if (r.outcome === 'client_aborted') return;
    if (r.error && !sse.open) {
      sse.cancel();
      setHeaders(res, r.headers);
      throw r.error;
    }
    const end = toMessagesStreamEnd(state, r);
    const last = end.events.pop()!;
    await pump(res, sse, end);
    sse.end(last, last.type);
  });
}

/** Starts the stream when the mapper says so (headers first), then sends its events in order. */
async function pump(res: Response, sse: SseWriter, mapped: MappedMessagesEvents): Promise<void> {
  if (mapped.start) {
    setHeaders(res, mapped.start);
    sse.start();
  }
  for (const e of mapped.events) await sse.send(e, e.type);
}

/** Ends a slow reader's Messages stream once its run is stopped: Anthropic's `event: error`, then the socket. */
export function endSlowMessagesStream(res: Response, error: ProxyError): void {
  endSlowStream(res, error, { payload: toAnthropicError(error).body, event: 'error' });
}

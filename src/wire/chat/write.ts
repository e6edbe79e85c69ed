import type { Response } from 'express';
import { toErrorBody } from '../../errors/index.js';
import { createChatStreamState, toChatStreamEnd, toChatStreamEvents, type MappedChunks } from './events.js';
import { collectReply, setHeaders, type Events } from '../reply.js';
import { toChatCompletion } from './shapes.js';
import { toChatFinishReason } from './stop-reason.js';
import { createSseWriter, streamReply, type ClientTooSlowError, type SseWriter } from '../sse.js';

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

/** Collects the whole reply and sends one `chat.completion`; a failed conversation throws its error unsent. */
export async function writeChatJson(res: Response, events: Events, meta: ChatMeta): Promise<void> {
  const reply = await collectReply(res, events);
  if (!reply) return;
  const r = reply.result;
  res
    .status(200)
    .json(
      toChatCompletion(
        { ...meta, model: r.servedModel ?? meta.model },
        reply.text,
        toChatFinishReason(r.stopReason),
        r.usage,
        reply.toolCalls,
        reply.thinking.map((t) => t.thinking).join('\n\n'),
      ),
    );
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
  const state = createChatStreamState(meta);
  return streamReply(sse, events, async () => {
    let step = await events.next();
    while (!step.done) {
      await sendChunks(res, sse, toChatStreamEvents(state, step.value));
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
    await sendChunks(res, sse, toChatStreamEnd(state, r));
    sse.end('[DONE]');
  });
}

/** Starts the stream when the mapper says so (headers first), then sends its chunks in order. */
async function sendChunks(res: Response, sse: SseWriter, mapped: MappedChunks): Promise<void> {
  if (mapped.start) {
    setHeaders(res, mapped.start);
    sse.start();
  }
  for (const chunk of mapped.chunks) await sse.send(chunk);
}

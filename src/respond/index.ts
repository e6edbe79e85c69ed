import type { Response } from 'express';
import type { BackendEvent, TurnOutcome, Usage } from '../backends/types.js';
import { toErrorBody, type ProxyError } from '../errors/index.js';
import { toChatCompletion, toChunk, toUsageChunk } from './shapes.js';

export * from './shapes.js';

export interface ResponseMeta {
  id: string;
  created: number;
  model: string;
  /** Called just before the status line goes out (last chance to set headers). */
  onHead?: () => void;
}

/** Response metadata that may change until the first byte: a fallback sets the model that served. */
export interface StreamMeta extends ResponseMeta {
  includeUsage: boolean;
  /** How long a client may leave a full socket unread before the reply is stopped. */
  clientTimeoutMs?: number;
  /** Characters of reply text written to the client so far (what an aborted request is charged for). */
  sent?: { chars: number };
}

/** The client stopped reading for longer than it may: the stream gets an in-band error and ends. */
export class ClientTooSlowError extends Error {
  constructor(readonly seconds: number) {
    super('the client stopped reading');
    this.name = 'ClientTooSlowError';
  }
}

/** What the caller needs afterwards for its log line and accounting. */
export interface Delivered {
  outcome: TurnOutcome;
  /** ms from the start of the turn to the first text, when there was any. */
  firstTokenMs: number | null;
  /** True once bytes of a 200 response went out (errors are then sent in-band). */
  streamed: boolean;
}

type Events = AsyncGenerator<BackendEvent, TurnOutcome>;

/** Collects the whole reply and sends one `chat.completion`; on failure throws the ProxyError unsent. */
export async function respondJson(res: Response, events: Events, meta: ResponseMeta): Promise<Delivered> {
  const started = performance.now();
  let firstTokenMs: number | null = null;
  const parts: string[] = [];
  let step = await events.next();
  while (!step.done) {
    if (step.value.type === 'text') {
      firstTokenMs ??= performance.now() - started;
      parts.push(step.value.text);
    }
    step = await events.next();
  }
  const outcome = step.value;
  if (!outcome.ok) throw withOutcome(outcome.error, outcome);
  meta.onHead?.();
  res.status(200).json(toChatCompletion(meta, parts.join(''), outcome.finishReason, outcome.usage));
  return { outcome, firstTokenMs, streamed: false };
}

/**
 * Streams `chat.completion.chunk`s as text arrives. Headers wait for the first text so that a CLI
 * failing before it says anything still gets a proper status and error envelope; after that an
 * error is one in-band `data: {"error":…}` event and the stream ends.
 */
export async function respondStream(res: Response, events: Events, meta: StreamMeta): Promise<Delivered> {
  const started = performance.now();
  let firstTokenMs: number | null = null;
  let open = false;
  const clientTimeoutMs = meta.clientTimeoutMs ?? 0;

  const send = async (payload: unknown): Promise<void> => {
    if (res.writableEnded || res.destroyed) return;
    if (!res.write(`data: ${JSON.stringify(payload)}\n\n`)) {
      // The client is not reading: wait for it, but not forever (the CLI is held back meanwhile).
      const drained = await new Promise<boolean>((resolve) => {
        const done = (ok: boolean) => () => {
          clearTimeout(timer);
          res.off('drain', onDrain);
          res.off('close', onDrain);
          resolve(ok);
        };
        const onDrain = done(true);
        const timer = clientTimeoutMs > 0 ? setTimeout(done(false), clientTimeoutMs) : undefined;
        res.on('drain', onDrain);
        res.on('close', onDrain);
      });
      if (!drained) throw new ClientTooSlowError(Math.round(clientTimeoutMs / 1000));
    }
  };
  const start = async (): Promise<void> => {
    if (open) return;
    open = true;
    meta.onHead?.();
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('Connection', 'keep-alive');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    await send(toChunk(meta, { role: 'assistant', content: '' }));
  };

  let step = await events.next();
  while (!step.done) {
    if (step.value.type === 'text') {
      firstTokenMs ??= performance.now() - started;
      await start();
      if (meta.sent) meta.sent.chars += step.value.text.length;
      await send(toChunk(meta, { content: step.value.text }));
    }
    step = await events.next();
  }
  const outcome = step.value;
  if (!outcome.ok) {
    if (!open) throw withOutcome(outcome.error, outcome);
    await send(toErrorBody(outcome.error));
    res.end();
    return { outcome, firstTokenMs, streamed: true };
  }
  await start();
  await send(toChunk(meta, {}, outcome.finishReason));
  if (meta.includeUsage) await send(toUsageChunk(meta, outcome.usage));
  res.end('data: [DONE]\n\n');
  return { outcome, firstTokenMs, streamed: true };
}

/** A failed turn's error, carrying the outcome (usage reported before failing) for the log line. */
export interface FailedTurnError extends ProxyError {
  outcome?: { usage: Usage | null; sessionId?: string };
}

function withOutcome(error: ProxyError, outcome: TurnOutcome): FailedTurnError {
  return Object.assign(error, { outcome: { usage: outcome.usage, ...(outcome.sessionId ? { sessionId: outcome.sessionId } : {}) } });
}

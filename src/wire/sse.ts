import type { Response } from 'express';
import { toErrorBody, type ProxyError } from '../errors/index.js';

/**
 * The client stopped reading for longer than it may. `send` throws it; a stream's writer returns
 * it as its result (it does not stop the run): the route, which owns the run's stop, stops it and
 * then ends the stream with `endSlowStream`.
 */
export class ClientTooSlowError extends Error {
  constructor(readonly seconds: number) {
    super('the client stopped reading');
    this.name = 'ClientTooSlowError';
  }
}

export interface SseWriter {
  readonly open: boolean;
  /** Sends the status line and SSE headers. */
  start(): void;
  /** One `data:` event (optionally with an `event:` name); waits while the client is slow, up to the bound. */
  send(payload: unknown, event?: string): Promise<void>;
  /** A last event (`[DONE]` as is, anything else as JSON), then the end of the response. */
  end(last?: unknown, event?: string): void;
  /** Stops the keepalive (the answer is about to be an error status instead of a stream). */
  cancel(): void;
}

function frame(payload: unknown, event?: string): string {
  const data = payload === '[DONE]' ? '[DONE]' : JSON.stringify(payload);
  return event ? `event: ${event}\ndata: ${data}\n\n` : `data: ${data}\n\n`;
}

/** The keepalive of the OpenAI formats: an SSE comment line, which every SSE parser skips. */
const COMMENT_KEEPALIVE = ': keepalive\n\n';

/**
 * Server-sent events on an express response, with backpressure bounded by `clientTimeoutMs`.
 * With `keepaliveMs`, `keepaliveMs` of silence (queueing, retries, long thinking) sends
 * `keepalive` (an SSE comment line unless the format has an event of its own for it, as
 * Anthropic's `ping`), which proxies and front ends that cut idle streams take as traffic; the
 * first one starts the stream if nothing had.
 */
export function createSseWriter(
  res: Response,
  clientTimeoutMs: number,
  keepaliveMs = 0,
  keepalive = COMMENT_KEEPALIVE,
): SseWriter {
  let open = false;
  let timer: NodeJS.Timeout | undefined;
  const quiet = (): void => {
    if (keepaliveMs <= 0) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (res.writableEnded || res.destroyed) return;
      start();
      res.write(keepalive);
      quiet();
    }, keepaliveMs);
    timer.unref();
  };
  const start = (): void => {
    if (open) return;
    open = true;
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('Connection', 'keep-alive');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
  };
  if (keepaliveMs > 0) {
    quiet();
    res.once('close', () => clearTimeout(timer));
  }
  return {
    get open() {
      return open;
    },
    start,
    async send(payload, event) {
      if (res.writableEnded || res.destroyed) return;
      quiet();
      if (res.write(frame(payload, event))) return;
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
    },
    cancel() {
      clearTimeout(timer);
      keepaliveMs = 0;
    },
    end(last, event) {
      clearTimeout(timer);
      if (res.writableEnded || res.destroyed) return;
      res.end(last === undefined ? undefined : frame(last, event));
    },
  };
}

/**
 * Ends a slow reader's stream once its run is stopped: the error in-band (as the format frames it:
 * `last`), the socket closed soon after.
 */
export function endSlowStream(
  res: Response,
  error: ProxyError,
  last: { payload: unknown; event?: string } = { payload: toErrorBody(error) },
): void {
  // What fits still reaches the client; a socket that stays full is closed soon after.
  if (!res.writableEnded) res.end(frame(last.payload, last.event));
  setTimeout(() => res.destroy(), 5000).unref();
}

/**
 * Runs one streamed reply's writing. A client too slow to read is handed back (the route stops the
 * run first, then ends the stream); any other failure cancels the stream and is thrown. However
 * writing ended, the conversation is closed: its CLI, permit and lease go, its row is written (a
 * slow reader's by the route, once it has stopped it).
 */
export async function streamReply<T>(
  sse: SseWriter,
  events: { return(value: never): Promise<unknown> },
  write: () => Promise<T>,
): Promise<Exclude<T, void> | ClientTooSlowError | undefined> {
  let slow: ClientTooSlowError | undefined;
  try {
    return (await write()) as Exclude<T, void> | undefined;
  } catch (err) {
    if (err instanceof ClientTooSlowError) return (slow = err);
    sse.cancel();
    throw err;
  } finally {
    if (!slow) await events.return(undefined as never);
  }
}

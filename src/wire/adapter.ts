import type { IncomingHttpHeaders } from 'node:http';
import type { Response } from 'express';
import type { Principal } from '../auth/index.js';
import type { ConversationInput, Endpoint } from '../conversation/index.js';
import type { ProxyError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import type { ModelRegistry } from '../models/index.js';
import type { Events } from './reply.js';
import type { ClientTooSlowError } from './sse.js';

/** What every wire adapter reads: the model table (a reply's cap) and the stream's timings. */
export interface WireDeps {
  /** The model table: a request's reply cap is checked against its model's (`outputCap`). */
  registry: ModelRegistry;
  /** How long a client may leave a streamed reply unread. */
  clientTimeoutMs: number;
  /** Silence after which a stream gets an SSE comment (0: never). */
  keepaliveMs?: number;
}

/** Who asks (and the request's headers), and the response the adapter may set headers on. */
export interface Asker {
  principal: Principal;
  log: Logger;
  res: Response;
  headers: IncomingHttpHeaders;
}

/** A request as its wire adapter read it: the core's input, whether it streams, and the adapter's own. */
export interface Accepted<W> {
  input: ConversationInput;
  stream: boolean;
  wire: W;
}

/**
 * One wire format on the conversation core: how its body becomes the core's input, how the
 * core's events are written back, and how a stream olp stops for a slow reader ends. The route
 * around it (`createConversationRoute`, src/http) is the same for every format.
 */
export interface WireAdapter<W> {
  readonly endpoint: Endpoint;
  /**
   * The body as the core's input (run inside the conversation's `accept`: a body it refuses ends
   * there with its ledger row, and the error it throws is what the client gets).
   */
  accept(body: unknown, who: Asker): Accepted<W>;
  /** Writes the reply; returns the client too slow to read a stream, if it was. */
  write(
    res: Response,
    events: Events,
    accepted: Accepted<W>,
    principal: Principal,
  ): Promise<ClientTooSlowError | undefined>;
  /** Ends a stream olp stopped for its slow reader, with the error in this format's words. */
  endSlow(res: Response, error: ProxyError): void;
}

/** An adapter's `write` from its format's two writers: a stream's (which may find a slow reader) and one body's. */
export function streamOrBody<W>(
  stream: (res: Response, events: Events, wire: W) => Promise<ClientTooSlowError | undefined>,
  body: (res: Response, events: Events, wire: W) => Promise<void>,
): WireAdapter<W>['write'] {
  return async (res, events, a) => {
    if (a.stream) return stream(res, events, a.wire);
    await body(res, events, a.wire);
    return undefined;
  };
}

/** Names the request's tool types that were not offered to the model (hosted tools olp cannot run). */
export const DROPPED_HEADER = 'x-olp-tools-dropped';

/** Tools olp cannot run for the client are not offered: said once, where the client can see it. */
export function reportDropped(who: Asker, dropped: readonly string[]): void {
  if (dropped.length === 0) return;
  who.res.setHeader(DROPPED_HEADER, dropped.join(', '));
  who.log.info(
    { event: 'tools_dropped', types: dropped },
    `tool types olp does not offer the model: ${dropped.join(', ')}`,
  );
}

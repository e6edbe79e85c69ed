import type { Request, Response } from 'express';
import type { Principal } from '../auth/index.js';
import type { Conversation, ConversationInput, Endpoint, RequestMeta } from '../conversation/index.js';
import { shuttingDown, type ProxyError } from '../errors/index.js';
import type { ModelRegistry } from '../models/index.js';
import type { ClientTooSlowError, Events } from '../respond/index.js';
import { clientTooSlow, createRunStop, type RunStop } from '../run/index.js';
import { ctx } from './context.js';
import type { Lifecycle } from './lifecycle.js';

/** Opens one request's conversation: the core behind the wire adapters (a scripted one in tests). */
export type OpenConversation = (principal: Principal, meta: RequestMeta) => Conversation;

/** What every conversation route needs. */
export interface EndpointDeps {
  open: OpenConversation;
  lifecycle: Lifecycle;
  /** The model table: a request's reply cap is checked against its model's (`outputCap`). */
  registry: ModelRegistry;
  /** How long a client may leave a streamed reply unread. */
  clientTimeoutMs: number;
  /** Silence after which a stream gets an SSE comment (0: never). */
  keepaliveMs?: number;
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
 * around it (`createConversationRoute`) is the same for every format.
 */
export interface WireAdapter<W> {
  readonly endpoint: Endpoint;
  /**
   * The body as the core's input (run inside the conversation's `accept`: a body it refuses ends
   * there with its ledger row, and the error it throws is what the client gets).
   */
  accept(body: unknown, principal: Principal, res: Response): Accepted<W>;
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

/**
 * The lifecycle of every conversation request, written once: refuse while draining, open the
 * conversation (its ledger row follows whatever happens), parse through the adapter, run under
 * the request's stop, write, stop a slow reader, and let the server's drain know it ended.
 */
export function createConversationRoute<W>(deps: EndpointDeps, adapter: WireAdapter<W>) {
  return async (req: Request, res: Response): Promise<void> => {
    if (deps.lifecycle.draining) throw shuttingDown();
    const c = ctx(res);
    const done = c.hold();
    const principal = c.principal!;
    const conv = deps.open(principal, {
      requestId: c.requestId,
      endpoint: adapter.endpoint,
      stream: (req.body as { stream?: unknown } | null)?.stream === true,
      log: c.log,
      startedAt: c.startedAt,
      started: c.started,
    });
    c.conversation = conv;
    try {
      const accepted = conv.accept(() => adapter.accept(req.body, principal, res));
      const stop = disconnectSignal(res);
      const events = conv.run(accepted.input, stop.signal);
      const slow = await adapter.write(res, events, accepted, principal);
      if (slow) await stopSlowReader(res, stop, events, slow, adapter.endSlow);
    } finally {
      done();
    }
  };
}

/** The request's run stop: the client's disconnect stops it; so does olp, for a client too slow to read. */
export function disconnectSignal(res: Response): RunStop {
  const stop = createRunStop();
  res.on('close', () => {
    if (!res.writableFinished) stop.stop({ type: 'client_disconnect' });
  });
  return stop;
}

/**
 * A streamed reply the client stopped reading (its writer said so): the route stops the run with
 * `client_read_timeout`, lets the conversation close (its row carries that error), then ends the stream.
 */
async function stopSlowReader(
  res: Response,
  stop: RunStop,
  events: AsyncGenerator<unknown, unknown>,
  slow: ClientTooSlowError,
  end: (res: Response, error: ProxyError) => void,
): Promise<void> {
  const reason = clientTooSlow(slow.seconds);
  stop.stop(reason);
  await events.return(undefined);
  if (reason.type === 'client_read_timeout') end(res, reason.error);
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

import type { Request, Response } from 'express';
import type { Principal } from '../auth/index.js';
import type { Conversation, RequestMeta } from '../conversation/index.js';
import { shuttingDown, type ProxyError } from '../errors/index.js';
import type { ClientTooSlowError, WireAdapter, WireDeps } from '../wire/index.js';
import { clientTooSlow, createRunStop, type RunStop } from '../run/index.js';
import { ctx } from './context.js';
import type { Lifecycle } from './lifecycle.js';

/** Opens one request's conversation: the core behind the wire adapters (a scripted one in tests). */
export type OpenConversation = (principal: Principal, meta: RequestMeta) => Conversation;

/** What every conversation route needs: the core, the server's in-flight count, and the adapters'. */
export interface EndpointDeps extends WireDeps {
  open: OpenConversation;
  lifecycle: Lifecycle;
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
      // Read off the request only for the refusal that names it, not on every request.
      pageUrl: () => pageUrlOf(req),
    });
    c.conversation = conv;
    try {
      const accepted = conv.accept(() =>
        adapter.accept(req.body, { principal, log: c.log, res, headers: req.headers }),
      );
      const stop = disconnectSignal(res);
      const events = conv.run(accepted.input, stop.signal);
      const slow = await adapter.write(res, events, accepted, principal);
      if (slow) await stopSlowReader(res, stop, events, slow, adapter.endSlow);
    } finally {
      done();
    }
  };
}

/** The usage page as the client reached olp: `http(s)://HOST/olp` (the Host header, when it is a plain one). */
export function pageUrlOf(req: Request): string {
  const host = req.headers.host;
  if (!host || !/^[A-Za-z0-9.:[\]-]{1,255}$/.test(host)) return '/olp';
  const forwarded = req.headers['x-forwarded-proto'];
  const proto = forwarded === 'https' || (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  return `${proto}://${host}/olp`;
}

/** The request's run stop: the client's disconnect stops it; so does olp, for a client too slow to read. */
function disconnectSignal(res: Response): RunStop {
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

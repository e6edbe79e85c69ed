import type { Request, Response } from 'express';
import type { Principal } from '../auth/index.js';
import type { Conversation, RequestMeta } from '../conversation/index.js';
import { shuttingDown, type ProxyError } from '../errors/index.js';
import {
  endSlowStream,
  newCompletionId,
  writeChatJson,
  writeChatStream,
  type ClientTooSlowError,
} from '../respond/index.js';
import { clientTooSlow, createRunStop, type RunStop } from '../run/index.js';
import { parseToolRequest } from '../tools/index.js';
import type { ModelRegistry } from '../models/index.js';
import { checkOutputTokens, parseChatRequest, toCoreMessages } from '../validate/index.js';
import { ctx } from './context.js';
import type { Lifecycle } from './lifecycle.js';

/** Opens one request's conversation: the core behind the wire adapters (a scripted one in tests). */
export type OpenConversation = (principal: Principal, meta: RequestMeta) => Conversation;

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
export async function stopSlowReader(
  res: Response,
  stop: RunStop,
  events: AsyncGenerator<unknown, unknown>,
  slow: ClientTooSlowError,
  end: (res: Response, error: ProxyError) => void = endSlowStream,
): Promise<void> {
  const reason = clientTooSlow(slow.seconds);
  stop.stop(reason);
  await events.return(undefined);
  if (reason.type === 'client_read_timeout') end(res, reason.error);
}

/** POST /v1/chat/completions: parse → run → write. */
export function createChatRoute(deps: EndpointDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    if (deps.lifecycle.draining) throw shuttingDown();
    const c = ctx(res);
    const done = c.hold();
    const stream = (req.body as { stream?: unknown } | null)?.stream === true;
    const conv = deps.open(c.principal!, {
      requestId: c.requestId,
      endpoint: 'chat.completions',
      stream,
      log: c.log,
      startedAt: c.startedAt,
      started: c.started,
    });
    c.conversation = conv;
    try {
      const { request, tools } = conv.accept(() => {
        const request = parseChatRequest(req.body);
        const cap = deps.registry.outputCap(request.model);
        checkOutputTokens(request.max_tokens, 'max_tokens', request.model, cap);
        checkOutputTokens(request.max_completion_tokens, 'max_completion_tokens', request.model, cap);
        return { request, tools: parseToolRequest(req.body as Parameters<typeof parseToolRequest>[0]) };
      });
      const stop = disconnectSignal(res);
      const input = {
        model: request.model,
        messages: toCoreMessages(request.messages),
        responseFormat: request.response_format,
        maxOutputTokens: request.max_completion_tokens ?? request.max_tokens ?? undefined,
        tools,
        stopSequences: typeof request.stop === 'string' ? [request.stop] : (request.stop ?? undefined),
      };
      const meta = {
        id: newCompletionId(),
        created: Math.floor(Date.now() / 1000),
        model: request.model,
        includeUsage: request.stream_options?.include_usage === true,
        clientTimeoutMs: deps.clientTimeoutMs,
        keepaliveMs: deps.keepaliveMs ?? 0,
      };
      const events = conv.run(input, stop.signal);
      if (!stream) await writeChatJson(res, events, meta);
      else {
        const slow = await writeChatStream(res, events, meta);
        if (slow) await stopSlowReader(res, stop, events, slow);
      }
    } finally {
      done();
    }
  };
}

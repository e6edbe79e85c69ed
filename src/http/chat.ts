import type { Request, Response } from 'express';
import type { Principal } from '../auth/index.js';
import type { Conversation, RequestMeta } from '../conversation/index.js';
import { shuttingDown } from '../errors/index.js';
import { newCompletionId, writeChatJson, writeChatStream } from '../respond/index.js';
import { parseToolRequest } from '../tools/index.js';
import { parseChatRequest } from '../validate/index.js';
import { ctx } from './context.js';
import type { Lifecycle } from './lifecycle.js';

/** Opens one request's conversation: the core behind the wire adapters (a scripted one in tests). */
export type OpenConversation = (principal: Principal, meta: RequestMeta) => Conversation;

export interface EndpointDeps {
  open: OpenConversation;
  lifecycle: Lifecycle;
  /** How long a client may leave a streamed reply unread. */
  clientTimeoutMs: number;
  /** Silence after which a stream gets an SSE comment (0: never). */
  keepaliveMs?: number;
}

/** The client's disconnect, as a signal the conversation stops on (olp may also stop it itself). */
export function disconnectSignal(res: Response): AbortController {
  const stop = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) stop.abort('client_disconnect');
  });
  return stop;
}

/** POST /v1/chat/completions: parse → run → write. */
export function createChatRoute(deps: EndpointDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    if (deps.lifecycle.draining) throw shuttingDown();
    const c = ctx(res);
    const done = c.hold();
    const stream = (req.body as { stream?: unknown } | null)?.stream === true;
    const conv = deps.open(c.principal!, { requestId: c.requestId, endpoint: 'chat.completions', stream, log: c.log, startedAt: c.startedAt, started: c.started });
    c.conversation = conv;
    try {
      let request;
      let tools;
      try {
        request = parseChatRequest(req.body);
        tools = parseToolRequest(req.body as Parameters<typeof parseToolRequest>[0]);
      } catch (err) {
        throw conv.reject(err).error;
      }
      const stop = disconnectSignal(res);
      const input = { model: request.model, messages: request.messages, responseFormat: request.response_format, maxOutputTokens: request.max_completion_tokens ?? request.max_tokens ?? undefined, tools };
      const meta = { id: newCompletionId(), created: Math.floor(Date.now() / 1000), model: request.model, includeUsage: request.stream_options?.include_usage === true, clientTimeoutMs: deps.clientTimeoutMs, keepaliveMs: deps.keepaliveMs ?? 0 };
      const events = conv.run(input, stop.signal);
      await (stream ? writeChatStream(res, events, meta, stop) : writeChatJson(res, events, meta));
    } finally {
      done();
    }
  };
}

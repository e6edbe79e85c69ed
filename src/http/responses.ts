import type { Request, Response } from 'express';
import { shuttingDown } from '../errors/index.js';
import { parseToolRequest } from '../tools/index.js';
import {
  ClientTooSlowError,
  newMessageId,
  newResponseId,
  writeResponseJson,
  writeResponseStream,
  type ResponseMeta,
} from '../respond/index.js';
import type { Store } from '../store/index.js';
import {
  checkOutputTokens,
  parseResponsesRequest,
  toChatTools,
  type ParsedResponsesRequest,
} from '../validate/index.js';
import { disconnectSignal, stopSlowReader, type EndpointDeps } from './chat.js';
import { ctx } from './context.js';
import { resolveReferences, toMessages } from './responses-input.js';

export { MAX_ITEM_REFERENCES } from './responses-input.js';
export { createStoredResponseRoutes } from './stored-responses.js';

/** Names the request's tool types that were not offered to the model (hosted tools olp cannot run). */
export const DROPPED_HEADER = 'x-olp-tools-dropped';

/** Tools olp cannot run for the client are not offered: said once, where the client can see it. */
export function reportDropped(res: Response, dropped: readonly string[]): void {
  if (dropped.length === 0) return;
  res.setHeader(DROPPED_HEADER, dropped.join(', '));
  ctx(res).log.info(
    { event: 'tools_dropped', types: dropped },
    `tool types olp does not offer the model: ${dropped.join(', ')}`,
  );
}

/** The request's settings, echoed back in its Response. */
function toMeta(p: ParsedResponsesRequest, id: string, clientTimeoutMs: number): ResponseMeta {
  const b = p.body;
  return {
    id,
    createdAt: Math.floor(Date.now() / 1000),
    model: b.model,
    instructions: b.instructions ?? null,
    previousResponseId: b.previous_response_id ?? null,
    store: b.store !== false,
    maxOutputTokens: b.max_output_tokens ?? null,
    metadata: b.metadata ?? {},
    user: b.user,
    format: b.text?.format ?? { type: 'text' },
    temperature: b.temperature ?? null,
    topP: b.top_p ?? null,
    truncation: b.truncation ?? 'disabled',
    parallelToolCalls: b.parallel_tool_calls ?? true,
    tools: (b.tools ?? []).map((t) => {
      const f = t as {
        type?: string;
        name?: string;
        description?: string;
        parameters?: Record<string, unknown>;
        strict?: boolean;
      };
      // Another type (custom, namespace, a hosted tool) is echoed as it was sent.
      if (f.type !== 'function') return t as ResponseMeta['tools'][number];
      return {
        type: 'function' as const,
        name: String(f.name),
        description: f.description ?? null,
        parameters: f.parameters ?? null,
        strict: f.strict ?? null,
      };
    }),
    toolChoice: (b.tool_choice ?? 'auto') as ResponseMeta['toolChoice'],
    reasoningEffort: b.reasoning?.effort ?? null,
    clientTimeoutMs,
  };
}

/** POST /v1/responses: parse → run → write, then store the response unless `store: false`. */
export function createResponsesRoute(deps: EndpointDeps & { store: Store; bodyLimit: number }) {
  return async (req: Request, res: Response): Promise<void> => {
    if (deps.lifecycle.draining) throw shuttingDown();
    const c = ctx(res);
    const done = c.hold();
    const stream = (req.body as { stream?: unknown } | null)?.stream === true;
    const principal = c.principal!;
    const conv = deps.open(principal, {
      requestId: c.requestId,
      endpoint: 'responses',
      stream,
      log: c.log,
      startedAt: c.startedAt,
      started: c.started,
    });
    c.conversation = conv;
    try {
      const { parsed, messages, tools, offered } = conv.accept(() => {
        const parsed = parseResponsesRequest(resolveReferences(deps.store, principal.keyId, req.body, deps.bodyLimit));
        const { model, max_output_tokens: max } = parsed.body;
        checkOutputTokens(max, 'max_output_tokens', model, deps.registry.outputCap(model));
        const offered = toChatTools(parsed.body);
        return {
          parsed,
          messages: toMessages(deps.store, principal.keyId, parsed),
          tools: parseToolRequest(offered.chat),
          offered,
        };
      });
      const b = parsed.body;
      reportDropped(res, offered.dropped);
      const meta = {
        ...toMeta(parsed, newResponseId(), deps.clientTimeoutMs),
        toolWire: offered.wire,
        keepaliveMs: deps.keepaliveMs ?? 0,
      };
      const messageId = newMessageId();
      const format = b.text?.format;
      const responseFormat =
        !format || format.type !== 'json_schema'
          ? format
          : {
              type: 'json_schema' as const,
              json_schema: {
                name: format.name,
                schema: format.schema,
                ...(format.description ? { description: format.description } : {}),
              },
            };
      const stop = disconnectSignal(res);
      const events = conv.run(
        { model: b.model, messages, responseFormat, maxOutputTokens: b.max_output_tokens ?? undefined, tools },
        stop.signal,
      );
      const sent = await (stream
        ? writeResponseStream(res, events, meta, messageId)
        : writeResponseJson(res, events, meta, messageId));
      if (sent instanceof ClientTooSlowError) return await stopSlowReader(res, stop, events, sent);
      if (sent && meta.store) {
        deps.store.responses.save({
          id: meta.id,
          keyId: principal.keyId,
          createdAt: Date.now(),
          previousResponseId: meta.previousResponseId,
          items: parsed.items,
          messages: parsed.messages,
          outputText: sent.output_text,
          body: sent as unknown as Record<string, unknown>,
        });
      }
    } finally {
      done();
    }
  };
}

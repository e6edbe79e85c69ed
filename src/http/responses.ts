import type { Request, Response } from 'express';
import { invalidRequest, responseNotFound, shuttingDown } from '../errors/index.js';
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
  checkCallOutputs,
  describeType,
  parseResponsesRequest,
  toChatTools,
  type ChatMessage,
  type ParsedResponsesRequest,
} from '../validate/index.js';
import { disconnectSignal, stopSlowReader, type EndpointDeps } from './chat.js';
import { ctx } from './context.js';

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
      const f = t as { name?: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
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

/**
 * The whole conversation for this request: the stored chain behind `previous_response_id` (its
 * inputs and replies), then this input. The session pool resumes the CLI session that saw that
 * history, so only the new input reaches the CLI; if the session is gone it runs fresh.
 */
function toMessages(store: Store, keyId: string, p: ParsedResponsesRequest): ChatMessage[] {
  const system: ChatMessage[] = p.body.instructions ? [{ role: 'system', content: p.body.instructions }] : [];
  const previous = p.body.previous_response_id;
  if (!previous) {
    checkCallOutputs(p.items, new Set());
    return [...system, ...p.messages];
  }
  // A response belongs to the key that made it: any other key is told it does not exist.
  const chain = store.responses.chain(keyId, previous);
  if (chain.length === 0) throw responseNotFound(previous, 'previous_response_id');
  const history = chain.flatMap((r) => [...(r.messages as ChatMessage[]), ...toAssistant(r.outputText, r.toolCalls)]);
  checkCallOutputs(
    p.items,
    new Set(history.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : []))),
  );
  return [...system, ...history, ...p.messages];
}

/** A stored reply as the assistant message it was: its text, and its function calls. */
function toAssistant(
  text: string,
  calls: readonly { callId: string; name: string; arguments: string }[],
): ChatMessage[] {
  if (!text && calls.length === 0) return [];
  if (calls.length === 0) return [{ role: 'assistant', content: text }];
  return [
    {
      role: 'assistant',
      content: text || null,
      tool_calls: calls.map((c) => ({
        id: c.callId,
        type: 'function',
        function: { name: c.name, arguments: c.arguments },
      })),
    } as ChatMessage,
  ];
}

/** The most `item_reference` items one request may carry (a conversation of thousands of turns). */
export const MAX_ITEM_REFERENCES = 10_000;

/**
 * `item_reference` input items (the Vercel AI SDK sends them for earlier output when it stores
 * responses) replaced by the items they name, from this key's stored responses: one indexed
 * look-up for all of them. What they expand to is bounded like a body (`--body-limit`), so a
 * short request cannot make olp handle more than a long one could.
 */
function resolveReferences(store: Store, keyId: string, body: unknown, limitBytes: number): unknown {
  const input = (body as { input?: unknown } | null)?.input;
  if (!Array.isArray(input)) return body;
  const ids: string[] = [];
  input.forEach((entry, i) => {
    const ref = entry as { type?: unknown; id?: unknown } | null;
    if (ref?.type !== 'item_reference') return;
    if (typeof ref.id !== 'string')
      throw invalidRequest(
        `Invalid type for 'input.${i}.id': expected a string, but got ${describeType(ref.id)} instead.`,
        `input.${i}.id`,
      );
    ids.push(ref.id);
  });
  if (ids.length === 0) return body;
  if (ids.length > MAX_ITEM_REFERENCES) {
    throw invalidRequest(
      `Invalid value for 'input': at most ${MAX_ITEM_REFERENCES} items of type 'item_reference' per request, got ${ids.length}.`,
      'input',
    );
  }
  const found = store.responses.items(keyId, ids);
  let bytes = 0;
  const resolved = input.map((entry, i) => {
    const ref = entry as { type?: unknown; id?: unknown } | null;
    if (ref?.type !== 'item_reference') return entry;
    const hit = found.get(ref.id as string);
    if (!hit) throw invalidRequest(`Item with id '${String(ref.id).slice(0, 80)}' not found.`, `input.${i}.id`);
    bytes += hit.bytes;
    if (bytes > limitBytes)
      throw invalidRequest(
        `Invalid value for 'input': the items it references add up to more than ${limitBytes} bytes (olp's --body-limit).`,
        'input',
      );
    if (hit.item.type === 'message') return { type: 'message', role: 'assistant', content: hit.item.content };
    return hit.item;
  });
  return { ...(body as Record<string, unknown>), input: resolved };
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
      let parsed: ParsedResponsesRequest;
      let messages: ChatMessage[];
      let tools;
      try {
        parsed = parseResponsesRequest(resolveReferences(deps.store, principal.keyId, req.body, deps.bodyLimit));
        messages = toMessages(deps.store, principal.keyId, parsed);
        tools = parseToolRequest(toChatTools(parsed.body));
      } catch (err) {
        throw conv.reject(err).error;
      }
      const b = parsed.body;
      const meta = { ...toMeta(parsed, newResponseId(), deps.clientTimeoutMs), keepaliveMs: deps.keepaliveMs ?? 0 };
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

/** GET, DELETE /v1/responses/{id} and GET /v1/responses/{id}/input_items, for the key that made it. */
export function createStoredResponseRoutes(store: Store) {
  const find = (req: Request, res: Response) => {
    const id = String(req.params.id);
    const r = store.responses.get(ctx(res).principal!.keyId, id);
    if (!r) throw responseNotFound(id, null);
    return r;
  };
  return {
    get(req: Request, res: Response): void {
      res.json(find(req, res).body);
    },
    remove(req: Request, res: Response): void {
      const r = find(req, res);
      store.responses.delete(r.keyId, r.id);
      res.json({ id: r.id, object: 'response', deleted: true });
    },
    inputItems(req: Request, res: Response): void {
      const r = find(req, res);
      const data = (r.items as Record<string, unknown>[]).map((item, i) => ({
        id: `msg_${r.id.slice(5, 37)}${String(i).padStart(4, '0')}`,
        ...item,
        status: 'completed',
      }));
      const ordered = req.query.order === 'asc' ? data : data.reverse();
      res.json({
        object: 'list',
        data: ordered,
        first_id: ordered[0]?.id ?? null,
        last_id: ordered.at(-1)?.id ?? null,
        has_more: false,
      });
    },
  };
}

import type { Reasoning } from '../../core/index.js';
import { toolRequest } from '../../tools/index.js';
import { requestKind } from './kind.js';
import type { Store } from '../../store/index.js';
import { reportDropped, type WireAdapter, type WireDeps } from '../adapter.js';
import { checkOutputTokens } from '../output-tokens.js';
import { ClientTooSlowError, endSlowStream } from '../sse.js';
import { resolveReferences, toMessages } from './input.js';

export { MAX_ITEM_REFERENCES } from './input.js';
import { parseResponsesRequest, toToolOffer, type ParsedResponsesRequest } from './request.js';
import { newMessageId, newResponseId } from './shapes.js';
import type { ResponseMeta } from './shapes.js';
import { writeResponseJson, writeResponseStream } from './write.js';

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
    reasoningSummary: summaryOf(p),
    clientTimeoutMs,
  };
}

/** The reasoning summary the request asks for (`summary`, or its older name `generate_summary`); null for none. */
function summaryOf(p: ParsedResponsesRequest): 'auto' | 'concise' | 'detailed' | null {
  const summary = p.body.reasoning?.summary ?? p.body.reasoning?.generate_summary;
  return summary && summary !== 'none' ? summary : null;
}

/**
 * `reasoning` as the core's reasoning: its effort, and the thinking shown (as `reasoning` output
 * items with a summary) when the request asks for a summary, as OpenAI sends one only then.
 */
export function toResponsesReasoning(p: ParsedResponsesRequest): Reasoning | undefined {
  const effort = p.body.reasoning?.effort ?? undefined;
  const shown = summaryOf(p) !== null;
  return effort || shown ? { ...(effort ? { effort } : {}), shown } : undefined;
}

/** What a Responses request carries from its parse to its writer (and its stored copy). */
interface ResponsesWire {
  meta: ResponseMeta;
  messageId: string;
  parsed: ParsedResponsesRequest;
}

/** A Responses `text.format` as the core's response format (a schema in chat's shape). */
type TextFormat = NonNullable<ParsedResponsesRequest['body']['text']>['format'];

function toResponseFormat(format: TextFormat | undefined) {
  if (format?.type !== 'json_schema') return format;
  return {
    type: 'json_schema' as const,
    json_schema: {
      name: format.name,
      schema: format.schema,
      ...(format.description ? { description: format.description } : {}),
    },
  };
}

/** The Responses API as a wire adapter: input items in, Responses events or one Response out, then stored. */
export function responsesAdapter(deps: ResponsesWireDeps): WireAdapter<ResponsesWire> {
  return {
    endpoint: 'responses',
    accept(body, who) {
      const { principal } = who;
      const parsed = parseResponsesRequest(resolveReferences(deps.store, principal.keyId, body, deps.bodyLimit));
      const b = parsed.body;
      checkOutputTokens(b.max_output_tokens, 'max_output_tokens', b.model, deps.registry.outputCap(b.model));
      const offered = toToolOffer(b);
      const input = {
        model: b.model,
        messages: toMessages(deps.store, principal.keyId, parsed),
        responseFormat: toResponseFormat(b.text?.format),
        maxOutputTokens: b.max_output_tokens ?? undefined,
        tools: toolRequest(offered.offer),
        kind: requestKind(who.headers),
        reasoning: toResponsesReasoning(parsed),
      };
      reportDropped(who, offered.dropped);
      const meta = {
        ...toMeta(parsed, newResponseId(), deps.clientTimeoutMs),
        toolWire: offered.wire,
        keepaliveMs: deps.keepaliveMs ?? 0,
      };
      return { input, stream: b.stream === true, wire: { meta, messageId: newMessageId(), parsed } };
    },
    async write(res, events, a, principal) {
      const { meta, messageId, parsed } = a.wire;
      const sent = await (a.stream
        ? writeResponseStream(res, events, meta, messageId)
        : writeResponseJson(res, events, meta, messageId));
      if (sent instanceof ClientTooSlowError) return sent;
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
      return undefined;
    },
    endSlow: endSlowStream,
  };
}

/** What the Responses adapter reads beyond any adapter's: the store its responses are kept in. */
export type ResponsesWireDeps = WireDeps & { store: Store; bodyLimit: number };

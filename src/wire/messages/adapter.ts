import type { IncomingHttpHeaders } from 'node:http';
import type { ConversationInput } from '../../conversation/index.js';
import { modelAllowed } from '../../admit/index.js';
import { toolRequest } from '../../tools/index.js';
import { reportDropped, streamOrBody, type WireAdapter, type WireDeps } from '../adapter.js';
import { checkOutputTokens } from '../output-tokens.js';
import { newMessageId } from '../responses/shapes.js';
import { requestKind } from './kind.js';
import { toMessagesReasoning } from './reasoning.js';
import { parseMessagesRequest } from './request.js';
import { endSlowMessagesStream, writeMessagesJson, writeMessagesStream, type MessagesMeta } from './write.js';

/** What the Messages adapter reads beyond any adapter's: the model map. */
export interface MessagesWireDeps extends WireDeps {
  /** Anthropic model ids (globs) → the model that serves them on /v1/messages (`anthropicModels`). */
  anthropicModels?: Readonly<Record<string, string>> | undefined;
}

/** The model a Messages request runs on: the first `anthropicModels` glob its id matches, else the id itself. */
export function mapModel(model: string, map: Readonly<Record<string, string>> = {}): string {
  for (const [pattern, target] of Object.entries(map)) if (modelAllowed([pattern], model)) return target;
  return model;
}

/** A Messages body as the core's input, with the tool types left out of it. */
export function toMessagesInput(
  deps: MessagesWireDeps,
  body: unknown,
  headers: IncomingHttpHeaders = {},
): { input: ConversationInput; dropped: string[]; stream: boolean } {
  const parsed = parseMessagesRequest(body);
  const model = mapModel(parsed.body.model, deps.anthropicModels);
  checkOutputTokens(parsed.body.max_tokens, 'max_tokens', model, deps.registry.outputCap(model));
  return {
    input: {
      model,
      messages: parsed.messages,
      responseFormat: parsed.responseFormat,
      // Honoured as chat's max_tokens is: claude's output cap; codex has no setting for it.
      maxOutputTokens: parsed.body.max_tokens,
      tools: toolRequest(parsed.tools),
      stopSequences: parsed.body.stop_sequences,
      kind: requestKind(headers, parsed.body),
      reasoning: toMessagesReasoning(parsed.body),
    },
    dropped: parsed.dropped,
    stream: parsed.body.stream === true,
  };
}

/** Anthropic Messages as a wire adapter: blocks in, Anthropic's events or one Message out. */
export function messagesAdapter(deps: MessagesWireDeps): WireAdapter<MessagesMeta> {
  return {
    endpoint: 'messages',
    accept(body, who) {
      const { input, dropped, stream } = toMessagesInput(deps, body, who.headers);
      reportDropped(who, dropped);
      const wire: MessagesMeta = {
        id: newMessageId(),
        model: String((body as { model: string }).model),
        clientTimeoutMs: deps.clientTimeoutMs,
        keepaliveMs: deps.keepaliveMs ?? 0,
      };
      return { input, stream, wire };
    },
    write: streamOrBody(writeMessagesStream, writeMessagesJson),
    endSlow: endSlowMessagesStream,
  };
}

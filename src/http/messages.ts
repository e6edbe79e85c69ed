import type { Request, Response } from 'express';
import type { Principal } from '../auth/index.js';
import type { ConversationInput } from '../conversation/index.js';
import { modelAllowed, type Admission } from '../admit/index.js';
import {
  endSlowMessagesStream,
  newMessageId,
  writeMessagesJson,
  writeMessagesStream,
  type MessagesMeta,
} from '../respond/index.js';
import { parseToolRequest } from '../tools/index.js';
import { checkOutputTokens, parseMessagesRequest } from '../validate/index.js';
import { createConversationRoute, streamOrBody, type EndpointDeps, type WireAdapter } from './conversation-route.js';
import { ctx } from './context.js';
import { reportDropped } from './responses.js';

/** What the Messages routes need beyond any endpoint's: the model map, and the core's token estimate. */
export interface MessagesDeps extends EndpointDeps {
  admission: Admission;
  /** Anthropic model ids (globs) → the model that serves them on /v1/messages (`anthropicModels`). */
  anthropicModels?: Readonly<Record<string, string>> | undefined;
  /** olp's estimate of a request's prompt tokens, without running it (count_tokens). */
  countTokens?: ((principal: Principal, input: ConversationInput) => number) | undefined;
}

/** The model a Messages request runs on: the first `anthropicModels` glob its id matches, else the id itself. */
export function mapModel(model: string, map: Readonly<Record<string, string>> = {}): string {
  for (const [pattern, target] of Object.entries(map)) if (modelAllowed([pattern], model)) return target;
  return model;
}

/** A Messages body as the core's input, with the tool types left out of it. */
function toInput(deps: MessagesDeps, body: unknown): { input: ConversationInput; dropped: string[]; stream: boolean } {
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
      tools: parseToolRequest(parsed.chatTools),
      stopSequences: parsed.body.stop_sequences,
    },
    dropped: parsed.dropped,
    stream: parsed.body.stream === true,
  };
}

/** Anthropic Messages as a wire adapter: blocks in, Anthropic's events or one Message out. */
export function messagesAdapter(deps: MessagesDeps): WireAdapter<MessagesMeta> {
  return {
    endpoint: 'messages',
    accept(body, _principal, res) {
      const { input, dropped, stream } = toInput(deps, body);
      reportDropped(res, dropped);
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

/**
 * POST /v1/messages (Anthropic's Messages API; `?beta=true` too). Claude Code's
 * `x-claude-code-session-id` is not used yet: the session pool finds a conversation's slot by its
 * history, which serves it as well while one conversation runs at a time.
 */
export function createMessagesRoute(deps: MessagesDeps) {
  return createConversationRoute(deps, messagesAdapter(deps));
}

/**
 * POST /v1/messages/count_tokens: olp's own estimate of the prompt (the conversation as it would
 * be sent, and the tools), answered at once: no CLI is started, no ledger row written. Claude Code
 * asks it often (to size its context), so it must be cheap.
 */
export function createCountTokensRoute(deps: MessagesDeps) {
  return (req: Request, res: Response): void => {
    const principal = ctx(res).principal!;
    // count_tokens takes max_tokens as optional; the conversion needs one.
    const body = req.body as Record<string, unknown> | null;
    const withMax = body && typeof body === 'object' && !Array.isArray(body) ? { max_tokens: 1, ...body } : body;
    const { input } = toInput(deps, withMax);
    deps.admission.checkModel(principal, input.model);
    const tokens = deps.countTokens?.(principal, input) ?? 0;
    res.json({ input_tokens: tokens });
  };
}

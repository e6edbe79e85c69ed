import type { Request, Response } from 'express';
import type { Admission } from '../admit/index.js';
import type { Principal } from '../auth/index.js';
import type { ConversationInput } from '../conversation/index.js';
import type { Store } from '../store/index.js';
import {
  chatAdapter,
  messagesAdapter,
  responsesAdapter,
  toMessagesInput,
  type MessagesWireDeps,
} from '../wire/index.js';
import { ctx } from './context.js';
import { createConversationRoute, type EndpointDeps } from './conversation-route.js';

/** What the Messages routes need beyond any endpoint's: the model map, and the core's token estimate. */
export interface MessagesDeps extends EndpointDeps, MessagesWireDeps {
  admission: Admission;
  /** olp's estimate of a request's prompt tokens, without running it (count_tokens). */
  countTokens?: ((principal: Principal, input: ConversationInput) => number) | undefined;
}

/** POST /v1/chat/completions. */
export function createChatRoute(deps: EndpointDeps) {
  return createConversationRoute(deps, chatAdapter(deps));
}

/** POST /v1/responses: the response is stored unless `store: false`. */
export function createResponsesRoute(deps: EndpointDeps & { store: Store; bodyLimit: number }) {
  return createConversationRoute(deps, responsesAdapter(deps));
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
    const { input } = toMessagesInput(deps, withMax);
    deps.admission.checkModel(principal, input.model);
    const tokens = deps.countTokens?.(principal, input) ?? 0;
    res.json({ input_tokens: tokens });
  };
}

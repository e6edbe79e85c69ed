import type { Reasoning } from '../../core/index.js';
import { streamOrBody, type WireAdapter, type WireDeps } from '../adapter.js';
import { checkOutputTokens } from '../output-tokens.js';
import { endSlowStream } from '../sse.js';
import { toCoreMessages } from './messages.js';
import { parseChatRequest, type ChatRequest } from './request.js';
import { newCompletionId } from './shapes.js';
import { type ChatTools, parseChatTools } from './tools.js';
import { writeChatJson, writeChatStream, type ChatMeta } from './write.js';

/**
 * `reasoning_effort` as the core's reasoning. A client that sends it reads the thinking back
 * (`reasoning_content`, as the chat APIs of reasoning models put it), unless it asked for none.
 */
export function toChatReasoning(effort: ChatRequest['reasoning_effort']): Reasoning | undefined {
  return effort ? { effort, shown: effort !== 'none' } : undefined;
}

/** Chat Completions as a wire adapter: the request's messages and settings in, chunks or one body out. */
export function chatAdapter(deps: WireDeps): WireAdapter<ChatMeta> {
  return {
    endpoint: 'chat.completions',
    accept(body) {
      const request = parseChatRequest(body);
      const cap = deps.registry.outputCap(request.model);
      checkOutputTokens(request.max_tokens, 'max_tokens', request.model, cap);
      checkOutputTokens(request.max_completion_tokens, 'max_completion_tokens', request.model, cap);
      const tools = parseChatTools(body as ChatTools);
      const input = {
        model: request.model,
        messages: toCoreMessages(request.messages),
        responseFormat: request.response_format,
        maxOutputTokens: request.max_completion_tokens ?? request.max_tokens ?? undefined,
        tools,
        stopSequences: typeof request.stop === 'string' ? [request.stop] : (request.stop ?? undefined),
        reasoning: toChatReasoning(request.reasoning_effort),
      };
      const wire: ChatMeta = {
        id: newCompletionId(),
        created: Math.floor(Date.now() / 1000),
        model: request.model,
        includeUsage: request.stream_options?.include_usage === true,
        clientTimeoutMs: deps.clientTimeoutMs,
        keepaliveMs: deps.keepaliveMs ?? 0,
      };
      return { input, stream: request.stream === true, wire };
    },
    write: streamOrBody(writeChatStream, writeChatJson),
    endSlow: endSlowStream,
  };
}

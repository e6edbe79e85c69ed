import { randomText } from '../../ids/index.js';
import type { Usage } from '../../backends/index.js';
import type { ChatFinishReason } from './stop-reason.js';

// Wire shapes, named as the openai SDK names them (tests check them with `satisfies`).

export interface CompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  completion_tokens_details: { reasoning_tokens: number };
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: [
    {
      index: 0;
      message: {
        role: 'assistant';
        content: string | null;
        refusal: null;
        tool_calls?: ToolCall[];
        /** The model's thinking, when the request sent `reasoning_effort` (not in OpenAI's own shape). */
        reasoning_content?: string;
      };
      finish_reason: ChatFinishReason;
      logprobs: null;
    },
  ];
  usage: CompletionUsage;
  system_fingerprint: null;
}

/** A call of one of the client's functions, as `message.tool_calls[]` carries it. */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A streamed piece of a tool call: the first carries id, type and name; later ones arguments. */
export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function: { name?: string; arguments: string };
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: {
    index: 0;
    delta: { role?: 'assistant'; content?: string; reasoning_content?: string; tool_calls?: ToolCallDelta[] };
    finish_reason: ChatFinishReason | null;
    logprobs: null;
  }[];
  system_fingerprint: null;
  usage?: CompletionUsage | null;
}

export function newCompletionId(): string {
  return `chatcmpl-${randomText(18, 'base64url')}`;
}

/** OpenAI's usage object from a backend's normalised counts (zeros when the CLI reported none). */
export function toCompletionUsage(u: Usage | null): CompletionUsage {
  return {
    prompt_tokens: u?.promptTokens ?? 0,
    completion_tokens: u?.completionTokens ?? 0,
    total_tokens: u?.totalTokens ?? 0,
    prompt_tokens_details: { cached_tokens: u?.cachedTokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: u?.reasoningTokens ?? 0 },
  };
}

export function toChatCompletion(
  meta: { id: string; created: number; model: string },
  content: string,
  finishReason: ChatFinishReason,
  usage: Usage | null,
  toolCalls: ToolCall[] = [],
  thinking = '',
): ChatCompletion {
  // A message of tool calls alone has `content: null`, as OpenAI sends it.
  const reasoning = thinking ? { reasoning_content: thinking } : {};
  const message = toolCalls.length
    ? { role: 'assistant' as const, content: content || null, refusal: null, tool_calls: toolCalls, ...reasoning }
    : { role: 'assistant' as const, content, refusal: null, ...reasoning };
  return {
    id: meta.id,
    object: 'chat.completion' as const,
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, message, finish_reason: finishReason, logprobs: null }],
    usage: toCompletionUsage(usage),
    system_fingerprint: null,
  };
}

/** A streaming chunk; with include_usage every chunk carries `usage: null` except the last. */
export function toChunk(
  meta: { id: string; created: number; model: string; includeUsage: boolean },
  delta: ChatCompletionChunk['choices'][number]['delta'],
  finishReason: ChatFinishReason | null = null,
): ChatCompletionChunk {
  return {
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    system_fingerprint: null,
    ...(meta.includeUsage ? { usage: null } : {}),
  };
}

export function toUsageChunk(
  meta: { id: string; created: number; model: string },
  usage: Usage | null,
): ChatCompletionChunk {
  return {
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    choices: [],
    system_fingerprint: null,
    usage: toCompletionUsage(usage),
  };
}
